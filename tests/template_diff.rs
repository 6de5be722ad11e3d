//! `llm-render template-diff` end to end: the published prefix-cache phenomena on the
//! fixture models, template mode, batches and bad input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::fixtures;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;

fn tmp(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("llm-render-td-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

fn model_flag(name: &str) -> String {
    format!("{name}={}", fixtures().join("models").join(name).display())
}

/// Runs template-diff with `--json` and returns (exit code, one JSON value per line).
fn run(args: &[&str]) -> (i32, Vec<Value>) {
    let out = Command::new(env!("CARGO_BIN_EXE_llm-render"))
        .arg("template-diff")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code().unwrap_or(-1), lines)
}

#[test]
fn qwen3_non_thinking_reply_is_uncached() {
    let msgs = tmp(
        "q1.json",
        r#"[{"role": "user", "content": "What is the capital of France?"}]"#,
    );
    let (code, out) = run(&[
        "--model",
        &model_flag("qwen3"),
        "--messages",
        msgs.to_str().unwrap(),
        "--reply",
        "The capital of France is Paris.",
        "--followup",
        "Thanks, makes sense.",
        "--chat-template-kwargs",
        r#"{"enable_thinking": false}"#,
    ]);
    assert_eq!(code, 0);
    let r = &out[0];
    let turn1 = r["turn1_prompt_tokens"].as_u64().unwrap();
    let d = &r["first_divergence"];
    // Turn 1 ends "<|im_start|>assistant\n<think>\n\n</think>\n\n"; turn 2 re-renders the
    // reply without the empty think block: they part right after the assistant header.
    assert_eq!(d["left_token"], 151667, "{r}");
    assert_eq!(d["position"], turn1 - 4, "{r}");
    assert_eq!(d["message_index"], 1);
    assert_eq!(d["message_role"], "assistant");
    assert!(
        r["cached_tokens"].as_u64().unwrap() < turn1,
        "none of the reply is cached: {r}"
    );
    let reply_and_after =
        r["turn2_prompt_tokens"].as_u64().unwrap() - d["position"].as_u64().unwrap();
    assert!(r["uncached_tokens"].as_u64().unwrap() >= reply_and_after);
}

#[test]
fn llama_followup_after_128_token_reply() {
    let tok = tokenizers::Tokenizer::from_bytes({
        use std::io::Read;
        let gz = std::fs::read(fixtures().join("models/llama3_1/tokenizer.json.gz")).unwrap();
        let mut b = Vec::new();
        flate2::read::GzDecoder::new(gz.as_slice())
            .read_to_end(&mut b)
            .unwrap();
        b
    })
    .unwrap();
    let text =
        "The prefix cache keys each block by a hash chained over all earlier tokens. ".repeat(12);
    let mut ids: Vec<u32> = tok.encode(text.as_str(), false).unwrap().get_ids()[..128].to_vec();
    ids.push(128009); // <|eot_id|>, sampled but never held
    let reply = tmp("reply_ids.json", &serde_json::to_string(&ids).unwrap());
    let msgs = tmp(
        "l1.json",
        r#"[{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Explain prefix caching."}]"#,
    );
    let base = [
        "--model",
        &model_flag("llama3_1"),
        "--messages",
        msgs.to_str().unwrap(),
        "--reply-ids",
        reply.to_str().unwrap(),
        "--followup",
        "Thanks, makes sense.",
        "--chat-template-kwargs",
        r#"{"date_string": "26 Jul 2024"}"#,
    ]
    .map(String::from);
    let args: Vec<&str> = base.iter().map(String::as_str).collect();
    let (code, out) = run(&args);
    assert_eq!(code, 0);
    let r = &out[0];
    let turn1 = r["turn1_prompt_tokens"].as_u64().unwrap();
    assert_eq!(r["decode_held_tokens"], turn1 + 128);
    assert_eq!(
        r["common_prefix_tokens"],
        turn1 + 128,
        "the reply round-trips: {r}"
    );
    let uncached = r["uncached_tokens"].as_u64().unwrap();
    assert!(
        (15..=30).contains(&uncached),
        "follow-up + template tokens + partial block: {r}"
    );

    let mut args64 = args.clone();
    args64.extend(["--index-block-size", "64", "--non-cached-tokens", "32"]);
    let (_, out) = run(&args64);
    let r = &out[0];
    // Decode-time events carry 16 tokens: a 64-token index drops every one of them.
    assert!(r["index_cached_tokens"].as_u64().unwrap() <= turn1, "{r}");
    assert!(
        r["index_uncached_tokens"].as_u64().unwrap()
            >= r["turn2_prompt_tokens"].as_u64().unwrap() - turn1
    );
    assert_eq!(r["decider_skips_prefill"], false);
    assert_eq!(r["cached_tokens"].as_u64().unwrap() % 16, 0);
}

#[test]
fn template_mode_and_batches() {
    let qwen3_src: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("models/qwen3/tokenizer_config.json")).unwrap(),
    )
    .unwrap();
    let changed = qwen3_src["chat_template"]
        .as_str()
        .unwrap()
        .replace("# Tools", "# Functions");
    let jinja = tmp("changed.jinja", &changed);
    let cases = tmp(
        "cases.jsonl",
        &[
            json!({"id": "plain", "messages": [{"role": "user", "content": "hi"}]}),
            json!({"id": "tools", "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}),
        ]
        .map(|v| v.to_string())
        .join("\n"),
    );
    let (code, out) = run(&[
        "--model",
        &model_flag("qwen3"),
        "--against",
        jinja.to_str().unwrap(),
        "--cases",
        cases.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0]["identical"], true);
    assert_eq!(out[1]["identical"], false);
    assert!(
        out[1]["first_divergence"]["right_text"]
            .as_str()
            .unwrap()
            .contains("Functions"),
        "{}",
        out[1]
    );
}

#[test]
fn bad_input_is_reported_not_a_crash() {
    let msgs = tmp("b1.json", r#"[{"role": "user", "content": "hi"}]"#);
    // A flag missing is named before any model loads (a nonexistent model is not reached).
    let out = Command::new(env!("CARGO_BIN_EXE_llm-render"))
        .args(["template-diff", "--model", "qwen3=/nonexistent"])
        .args([
            "--messages",
            msgs.to_str().unwrap(),
            "--reply",
            "x",
            "--json",
        ])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--followup"), "{err}");
    assert!(!err.contains("nonexistent"), "{err}");
    // An ID past the tokenizer's vocabulary (a padded embedding row) is held and decodes to
    // nothing, as the derender decodes it; a negative one is not an ID.
    let past = tmp("past_vocab_ids.json", "[9707, 151935]");
    let (code, out) = run(&[
        "--model",
        &model_flag("qwen3"),
        "--messages",
        msgs.to_str().unwrap(),
        "--reply-ids",
        past.to_str().unwrap(),
        "--followup",
        "y",
    ]);
    assert_eq!(code, 0, "{out:?}");
    assert_eq!(
        out[0]["decode_held_tokens"].as_u64(),
        Some(out[0]["turn1_prompt_tokens"].as_u64().unwrap() + 2),
        "{out:?}"
    );
    let ids = tmp("bad_ids.json", "[1, -5]");
    let bad = Command::new(env!("CARGO_BIN_EXE_llm-render"))
        .args([
            "template-diff",
            "--model",
            &model_flag("qwen3"),
            "--messages",
        ])
        .arg(&msgs)
        .arg("--reply-ids")
        .arg(&ids)
        .args(["--followup", "y", "--json"])
        .output()
        .unwrap();
    assert_ne!(bad.status.code(), Some(0));
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(said.contains("--reply-ids"), "{said}");
    let out = Command::new(env!("CARGO_BIN_EXE_llm-render"))
        .args([
            "template-diff",
            "--messages",
            "/nonexistent.json",
            "--followup",
            "x",
            "--reply",
            "y",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent.json"));
}

/// `--bridge` and `--variant`: Qwen3 without thinking reuses nothing of the reply plainly;
/// bridged, or under the prefix-stable template, every full block of turn 1 + reply.
#[test]
fn bridged_and_prefix_stable_turn_two_reuse_the_reply() {
    let msgs = tmp(
        "q2.json",
        r#"[{"role": "system", "content": "You answer in one short sentence, always."},
            {"role": "user", "content": "What is the capital of France?"}]"#,
    );
    let variant =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("templates/qwen3_keep_reasoning.jinja");
    let (code, out) = run(&[
        "--model",
        &model_flag("qwen3"),
        "--messages",
        msgs.to_str().unwrap(),
        "--reply",
        "The capital of France is Paris, on the Seine.",
        "--followup",
        "Thanks, makes sense.",
        "--chat-template-kwargs",
        r#"{"enable_thinking": false}"#,
        "--bridge",
        "--variant",
        variant.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out:?}");
    assert_eq!(out.len(), 2);
    let (original, stable) = (&out[0], &out[1]);
    assert_eq!(original["template"], "qwen3");
    assert!(stable["template"]
        .as_str()
        .unwrap()
        .ends_with("qwen3_keep_reasoning.jinja"));
    let held = original["decode_held_tokens"].as_u64().unwrap();
    let full_blocks = held / 16 * 16;
    // The original template drops the empty think block: it parts inside turn 1's prompt.
    assert!(
        original["cached_tokens"].as_u64().unwrap()
            < original["turn1_prompt_tokens"].as_u64().unwrap()
    );
    for r in [original, stable] {
        let b = &r["bridged"];
        assert_eq!(b["applied"], true, "{r}");
        assert_eq!(b["common_prefix_tokens"], held, "{r}");
        assert_eq!(b["cached_tokens"], full_blocks, "{r}");
    }
    // The prefix-stable template alone keeps the whole reply.
    assert_eq!(stable["common_prefix_tokens"], held, "{stable}");
    assert_eq!(stable["cached_tokens"], full_blocks);
}
