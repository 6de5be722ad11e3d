//! The CLI's reports for people, as snapshots (`insta`): the `template-diff` and
//! `audit` examples of docs/audit.md and docs/multi-turn.md, whole, so any change to what they print shows up as a diff to review
//! (`cargo insta review`, or `INSTA_UPDATE=always` to accept). The `--json` forms and their
//! figures are checked against goldens in `tests/template_diff.rs` and `tests/audit_cli.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::fixtures;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `llm-render` with `args` from the repository root: exit code, stdout and stderr.
fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_llm-render"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// [`run`]'s stdout, asserting exit 0.
fn report(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// docs/audit.md's audit flags: the 7B's shapes over the fixture's tokenizer and processor.
const AUDIT_7B: [&str; 7] = [
    "audit",
    "--model",
    "fixtures/models/qwen2_5_vl",
    "--config",
    "fixtures/audit/qwen2_5_vl_7b_config.json",
    "--mm-processor-kwargs",
    r#"{"max_pixels": 414736}"#,
];

#[test]
fn template_diff_qwen3_non_thinking() {
    insta::assert_snapshot!(report(&[
        "template-diff",
        "--messages",
        "examples/template-diff/qwen3_turn1.json",
        "--reply",
        "The capital of France is Paris.",
        "--followup",
        "Thanks, makes sense.",
        "--chat-template-kwargs",
        r#"{"enable_thinking": false}"#,
    ]));
}

#[test]
fn template_diff_bridge_and_prefix_stable_variant() {
    insta::assert_snapshot!(report(&[
        "template-diff",
        "--messages",
        "examples/template-diff/qwen3_turn1.json",
        "--reply",
        "The capital of France is Paris.",
        "--followup",
        "Thanks, makes sense.",
        "--chat-template-kwargs",
        r#"{"enable_thinking": false}"#,
        "--bridge",
        "--variant",
        "templates/qwen3_keep_reasoning.jinja",
    ]));
}

#[test]
fn template_diff_llama_reply_ids_and_router_index() {
    insta::assert_snapshot!(report(&[
        "template-diff",
        "--model",
        "llama3_1=fixtures/models/llama3_1",
        "--messages",
        "examples/template-diff/llama_turn1.json",
        "--reply-ids",
        "examples/template-diff/llama_reply_ids.json",
        "--followup",
        "Thanks, makes sense.",
        "--chat-template-kwargs",
        r#"{"date_string": "26 Jul 2024"}"#,
        "--index-block-size",
        "64",
        "--non-cached-tokens",
        "32",
    ]));
}

#[test]
fn audit_two_images() {
    let golden =
        std::fs::read_to_string(fixtures().join("goldens/render_mm/qwen2_5_vl_images.jsonl"))
            .unwrap();
    let request = golden
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|g| g["id"] == "qwen2_5_vl/vl_two_images_one_message")
        .unwrap()["request"]
        .to_string();
    let file = std::env::temp_dir().join(format!("llm-render-report-{}.json", std::process::id()));
    std::fs::write(&file, request).unwrap();
    let out = report(&[
        "audit",
        "--model",
        "qwen2_5_vl=fixtures/models/qwen2_5_vl",
        file.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&file);
    insta::assert_snapshot!(out);
}

/// docs/audit.md's traffic-sample run (the README's command), exactly as its command prints it (exit 1: some links are
/// over the default 4 MiB limits).
#[test]
fn audit_traffic_sample() {
    let args = [
        &AUDIT_7B[..],
        &[
            "--rate",
            "50",
            "--link",
            "100",
            "fixtures/audit/sample.jsonl",
        ],
    ]
    .concat();
    let (code, out, err) = run(&args);
    assert_eq!(code, 1, "{err}");
    insta::assert_snapshot!(out);
}

/// The README's CLI examples, on the input files under `examples/` that they name, as a new
/// user runs them: each prints what its snapshot holds.
#[test]
fn readme_cli_examples() {
    insta::assert_snapshot!("render_chat", report(&["render", "examples/cli/chat.json"]));
    insta::assert_snapshot!(
        "render_completion",
        report(&["render", "--completion", "examples/cli/completion.json"])
    );
    insta::assert_snapshot!(
        "render_jsonl",
        report(&["render", "--jsonl", "examples/cli/batch.jsonl"])
    );
    // `created` is the clock's.
    let created = regex::Regex::new(r#""created":\d+"#).unwrap();
    insta::assert_snapshot!(
        "derender_chat",
        created.replace_all(
            &report(&["derender", "examples/cli/derender.json"]),
            r#""created":0"#
        )
    );
    insta::assert_snapshot!(
        "hash_block_hashes",
        report(&["hash", "examples/cli/block_hashes.json"])
    );
    insta::assert_snapshot!(
        "hash_render",
        report(&[
            "hash",
            "--render",
            "--algorithm",
            "llmd_fnv64a",
            "--format",
            "u64",
            "examples/cli/chat.json"
        ])
    );
    // A prompt shorter than one block: an empty list, and a word why.
    let (code, out, err) = run(&["hash", "--render", "examples/multi-turn/turn1.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"block_hashes\":[]"), "{out}");
    assert!(err.contains("make no full block of 16"), "{err}");
}

/// docs/audit.md's one-photo run (exit 1: its patches are over the default 4 MiB on render →
/// encoder) and docs/multi-turn.md's turn 1, on their files.
#[test]
fn docs_examples() {
    let (code, out, err) = run(&[&AUDIT_7B[..], &["examples/audit/photo.json"]].concat());
    assert_eq!(code, 1, "{err}");
    insta::assert_snapshot!("audit_photo", out);
    insta::assert_snapshot!(
        "multi_turn_turn1",
        report(&["render", "examples/multi-turn/turn1.json"])
    );
}

/// Flags are checked before a model loads: a missing one is named at once.
#[test]
fn template_diff_names_a_missing_flag_before_loading() {
    let (code, _, err) = run(&[
        "template-diff",
        "--messages",
        "examples/template-diff/qwen3_turn1.json",
        "--model",
        "qwen3=/nonexistent/model/folder",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("--reply"), "{err}");
    assert!(
        !err.contains("nonexistent"),
        "loaded the model first: {err}"
    );
}
