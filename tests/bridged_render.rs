//! `continue_from` (bridged multi-turn render, `src/render/bridge.rs`) over loopback on
//! Qwen3 (thinking on and off), Llama 3.1 and DeepSeek-V3: turn 2 starts with turn 1's
//! prompt and the IDs the engine sampled, even where the template drops the reply's
//! reasoning or the sampled IDs do not survive a text round trip; a previous turn that
//! does not fit the conversation gets the plain render with `applied: false`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{assert_error, golden_registry, golden_server, post_json};
use serde_json::{json, Value};

fn render(body: &Value) -> Value {
    let (status, out) = post_json(
        &format!("{}/v1/chat/completions/render", golden_server()),
        body,
    );
    assert_eq!(status, 200, "{out}");
    out
}

fn ids_of(out: &Value) -> Vec<u32> {
    out["token_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect()
}

/// `text` as a sampler might have produced it: one token per character (special tokens
/// kept whole), so that `encode(decode(ids)) != ids`.
fn sampled(model: &str, text: &str) -> Vec<u32> {
    let model = golden_registry().get(Some(model)).unwrap();
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let special = ["<think>", "</think>"]
            .into_iter()
            .find(|t| rest.starts_with(t) && model.tokenizer.token_to_id(t).is_some());
        let piece = special.unwrap_or(&rest[..c.len_utf8()]);
        out.extend(model.encode(piece, false).unwrap());
        rest = &rest[piece.len()..];
    }
    let whole = model.encode(text, false).unwrap();
    assert_ne!(
        out, whole,
        "the sampled IDs must not be the text's own tokenization"
    );
    out
}

fn eos(model: &str) -> u32 {
    golden_registry().get(Some(model)).unwrap().eos_token_ids[0]
}

struct Turn {
    model: &'static str,
    kwargs: Value,
    reply_text: &'static str,
    reply: Value,
}

/// Turn 1's messages, and turn 2's with `reply` and a follow-up.
fn conversation(reply: &Value) -> (Value, Value) {
    let turn1 = json!([
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is the capital of France?"},
    ]);
    let mut turn2 = turn1.clone();
    turn2.as_array_mut().unwrap().push(reply.clone());
    turn2
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": "And of Spain?"}));
    (turn1, turn2)
}

/// Renders turn 1, "samples" the reply, and renders turn 2 plain and bridged.
fn run(t: &Turn, with_stop: bool) -> (Vec<u32>, Vec<u32>, Vec<u32>, Value) {
    let (turn1, turn2) = conversation(&t.reply);
    let body = |messages: &Value| json!({"model": t.model, "messages": messages, "chat_template_kwargs": t.kwargs});
    let prompt1 = ids_of(&render(&body(&turn1)));
    let mut output = sampled(t.model, t.reply_text);
    if with_stop {
        output.push(eos(t.model));
    }
    let plain = ids_of(&render(&body(&turn2)));
    let mut bridged_body = body(&turn2);
    bridged_body["continue_from"] =
        json!({"prompt_token_ids": prompt1, "output_token_ids": output});
    let out = render(&bridged_body);
    (prompt1, output, plain, out)
}

fn check_bridged(t: &Turn, cause: &str) {
    for with_stop in [true, false] {
        let (prompt1, output, plain, out) = run(t, with_stop);
        let c = &out["continuation"];
        assert_eq!(c["applied"], true, "{}: {out}", t.model);
        let bridged = ids_of(&out);
        let mut held = prompt1.clone();
        held.extend(&output);
        if !with_stop {
            held.push(eos(t.model));
        }
        assert_eq!(&bridged[..held.len()], &held[..], "{}: prefix", t.model);
        assert_eq!(c["bridged_tokens"], held.len());
        assert_eq!(c["end_of_turn_added"], !with_stop);
        assert_eq!(c["plain_prompt_tokens"], plain.len());
        assert!(
            !plain.starts_with(&held),
            "{}: plain render reuses the reply",
            t.model
        );
        // What follows the reply is the template's own rendering of the new turn.
        let tail = &bridged[held.len()..];
        assert!(
            plain.ends_with(tail) && !tail.is_empty(),
            "{}: tail",
            t.model
        );
        assert_eq!(c["template_divergence"]["cause"], cause, "{}: {c}", t.model);
        assert_eq!(
            c["template_divergence"]["position"],
            llm_render::render::common_prefix(&bridged, &plain)
        );
    }
}

fn qwen3_thinking() -> Turn {
    Turn {
        model: "qwen3",
        kwargs: json!({}),
        reply_text: "<think>\nThe user asks for a capital.\n</think>\n\nParis.",
        reply: json!({"role": "assistant", "content": "Paris.",
                      "reasoning_content": "The user asks for a capital."}),
    }
}

#[test]
fn qwen3_thinking_keeps_the_reasoning_the_template_drops() {
    check_bridged(&qwen3_thinking(), "reasoning_dropped");
}

#[test]
fn qwen3_thinking_off_keeps_the_empty_think_block() {
    check_bridged(
        &Turn {
            model: "qwen3",
            kwargs: json!({"enable_thinking": false}),
            reply_text: "Paris, of course.",
            reply: json!({"role": "assistant", "content": "Paris, of course."}),
        },
        "reasoning_dropped",
    );
}

#[test]
fn llama3_1_keeps_ids_that_do_not_round_trip() {
    check_bridged(
        &Turn {
            model: "llama3_1",
            kwargs: json!({}),
            reply_text: "The capital of France is Paris.",
            reply: json!({"role": "assistant", "content": "The capital of France is Paris."}),
        },
        "retokenized",
    );
}

#[test]
fn deepseek_v3_keeps_ids_that_do_not_round_trip() {
    check_bridged(
        &Turn {
            model: "deepseek_v3",
            kwargs: json!({}),
            reply_text: "Paris is the capital.",
            reply: json!({"role": "assistant", "content": "Paris is the capital."}),
        },
        "retokenized",
    );
}

#[test]
fn a_third_turn_bridges_onto_a_bridged_second() {
    let t = qwen3_thinking();
    let (_, _, _, out2) = run(&t, true);
    let prompt2 = ids_of(&out2);
    let output2 = sampled("qwen3", "<think>\nAgain a capital.\n</think>\n\nMadrid.");
    let (_, mut turn3) = conversation(&t.reply);
    let turn3_list = turn3.as_array_mut().unwrap();
    turn3_list.push(json!({"role": "assistant", "content": "Madrid.",
                           "reasoning_content": "Again a capital."}));
    turn3_list.push(json!({"role": "user", "content": "Thanks."}));
    let out3 = render(&json!({
        "model": "qwen3", "messages": turn3,
        "continue_from": {"prompt_token_ids": prompt2, "output_token_ids": output2},
    }));
    assert_eq!(out3["continuation"]["applied"], true, "{out3}");
    let mut held = prompt2;
    held.extend(&output2);
    held.push(eos("qwen3"));
    assert!(ids_of(&out3).starts_with(&held));
}

/// A previous turn that is not this conversation's: the plain render, and why.
fn refused_bridge(messages: Value, prompt: Vec<u32>, output: Vec<u32>, needle: &str) {
    let plain = ids_of(&render(&json!({"model": "qwen3", "messages": messages})));
    let out = render(&json!({
        "model": "qwen3", "messages": messages,
        "continue_from": {"prompt_token_ids": prompt, "output_token_ids": output},
    }));
    let c = &out["continuation"];
    assert_eq!(c["applied"], false, "{out}");
    assert!(
        c["reason"].as_str().unwrap().contains(needle),
        "{needle:?} not in {c}"
    );
    assert_eq!(ids_of(&out), plain, "a refused bridge renders plainly");
}

#[test]
fn a_mismatching_history_gets_the_plain_render() {
    let t = qwen3_thinking();
    let (prompt1, output, _, _) = run(&t, true);
    let (_, turn2) = conversation(&t.reply);
    // Another conversation's previous prompt.
    let other = ids_of(&render(&json!({"model": "qwen3", "messages": [
        {"role": "user", "content": "Something else entirely"}]})));
    refused_bridge(turn2.clone(), other, output.clone(), "turns");
    // An edited user message before the reply.
    let mut edited = turn2.clone();
    edited[1]["content"] = json!("What is the capital of Italy?");
    refused_bridge(edited, prompt1.clone(), output.clone(), "differs");
    // An edited reply: the output no longer spells it.
    let mut edited = turn2.clone();
    edited[2]["content"] = json!("Lyon.");
    refused_bridge(edited, prompt1.clone(), output, "do not spell messages[2]");
    // No assistant message at all.
    refused_bridge(
        json!([{"role": "user", "content": "Hi"}]),
        prompt1,
        vec![],
        "no assistant message",
    );
}

#[test]
fn block_hashes_are_of_the_bridged_prompt() {
    let t = qwen3_thinking();
    let (prompt1, output, _, _) = run(&t, true);
    let (_, turn2) = conversation(&t.reply);
    let out = render(&json!({
        "model": "qwen3", "messages": turn2,
        "continue_from": {"prompt_token_ids": prompt1, "output_token_ids": output},
        "return_block_hashes": {"block_size": 16, "algorithm": "sha256_cbor", "seed": "0"},
    }));
    let (status, hashes) = post_json(
        &format!("{}/v1/block_hashes", golden_server()),
        &json!({"token_ids": out["token_ids"], "block_size": 16,
                "algorithm": "sha256_cbor", "seed": "0"}),
    );
    assert_eq!(status, 200, "{hashes}");
    assert_eq!(out["block_hashes"], hashes["block_hashes"], "{out}");
}

#[test]
fn bad_continue_from_is_a_400_naming_the_field() {
    let base = golden_server();
    let url = format!("{base}/v1/chat/completions/render");
    let (_, turn2) = conversation(&qwen3_thinking().reply);
    let with = |from: Value, extra: Value| {
        let mut body = json!({"model": "qwen3", "messages": turn2, "continue_from": from});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        post_json(&url, &body)
    };
    let ok = json!({"prompt_token_ids": [1, 2], "output_token_ids": [3]});
    assert_error(
        &with(
            json!({"prompt_token_ids": [], "output_token_ids": [1]}),
            json!({}),
        ),
        400,
        "previous turn's prompt",
        Some("continue_from.prompt_token_ids"),
    );
    assert_error(
        &with(
            json!({"prompt_token_ids": [1], "output_token_ids": [1, 999999999]}),
            json!({}),
        ),
        400,
        "out of the vocabulary",
        Some("continue_from.output_token_ids[1]"),
    );
    assert_error(
        &with(json!({"prompt_token_ids": [1]}), json!({})),
        400,
        "output_token_ids",
        Some("continue_from.output_token_ids"),
    );
    assert_error(
        &with(json!("abc"), json!({})),
        400,
        "",
        Some("continue_from"),
    );
    assert_error(
        &with(ok.clone(), json!({"return_token_offsets": true})),
        400,
        "cannot be used with continue_from",
        Some("return_token_offsets"),
    );
    assert_error(
        &with(ok, json!({"truncate_prompt_tokens": 10})),
        400,
        "cannot be used with continue_from",
        Some("truncate_prompt_tokens"),
    );
}

#[test]
fn metrics_count_applied_and_refused_bridges() {
    let t = qwen3_thinking();
    let (prompt1, output, _, _) = run(&t, true);
    refused_bridge(
        json!([{"role": "user", "content": "Hi"}]),
        prompt1,
        output,
        "no assistant",
    );
    let text = common::client()
        .get(format!("{}/metrics", golden_server()))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let value = |series: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(series))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    let applied = r#"llm_render_continuations_total{model="qwen3",result="applied"}"#;
    let refused = r#"llm_render_continuations_total{model="qwen3",result="refused"}"#;
    assert!(value(applied) >= 1.0 && value(refused) >= 1.0, "{text}");
    assert!(value(r#"llm_render_bridged_tokens_total{model="qwen3"}"#) >= 1.0);
}

/// DeepSeek writes its end-of-turn marker only after replies, so a turn holds the system
/// prompt and the user message too: an edited system prompt in a bridged history, or a
/// system message added after the reply (which DeepSeek's template moves to the top), is
/// refused rather than carried on.
#[test]
fn deepseek_history_edits_and_moved_system_messages_are_refused() {
    let render_ds = |messages: &Value, from: Option<(&[u32], &[u32])>| {
        let mut body = json!({"model": "deepseek_v3", "messages": messages});
        if let Some((p, o)) = from {
            body["continue_from"] = json!({"prompt_token_ids": p, "output_token_ids": o});
        }
        render(&body)
    };
    let sys = json!({"role": "system", "content": "You are terse."});
    let q1 = json!({"role": "user", "content": "Capital of France?"});
    let a1 = json!({"role": "assistant", "content": "Paris is the capital."});
    let q2 = json!({"role": "user", "content": "And of Spain?"});
    let a2 = json!({"role": "assistant", "content": "Madrid."});
    let q3 = json!({"role": "user", "content": "Thanks."});
    let p1 = ids_of(&render_ds(&json!([sys, q1]), None));
    let o1 = sampled("deepseek_v3", "Paris is the capital.");
    let turn2 = render_ds(&json!([sys, q1, a1, q2]), Some((&p1, &o1)));
    assert_eq!(turn2["continuation"]["applied"], true, "{turn2}");
    let p2 = ids_of(&turn2);
    let o2 = sampled("deepseek_v3", "Madrid.");
    // Turn 3 on the bridged turn 2: accepted as sent, refused with the system prompt edited.
    let ok = render_ds(&json!([sys, q1, a1, q2, a2, q3]), Some((&p2, &o2)));
    assert_eq!(ok["continuation"]["applied"], true, "{ok}");
    let edited = json!({"role": "system", "content": "You are verbose."});
    let out = render_ds(&json!([edited, q1, a1, q2, a2, q3]), Some((&p2, &o2)));
    assert_eq!(out["continuation"]["applied"], false, "{out}");
    // A system message after the reply: the template renders the history otherwise.
    let late = json!({"role": "system", "content": "Answer in French."});
    let out = render_ds(
        &json!([q1, a1, late, q2]),
        Some((&ids_of(&render_ds(&json!([q1]), None)), &o1)),
    );
    assert_eq!(out["continuation"]["applied"], false, "{out}");
    assert!(
        out["continuation"]["reason"]
            .as_str()
            .unwrap()
            .contains("differently"),
        "{out}"
    );
}
