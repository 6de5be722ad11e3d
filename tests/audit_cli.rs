//! `llm-render audit` end to end: hop sizes against the render goldens (token counts, image
//! grids) and the fixtures' `config.json`, a snapshot without one, and bad input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::fixtures;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn golden(file: &str, id: &str) -> Value {
    let path = fixtures().join("goldens").join(file);
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|g| g["id"] == id)
        .unwrap()
}

fn request_file(name: &str, request: &Value) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("llm-render-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, request.to_string()).unwrap();
    p
}

/// Runs `audit --json` with `args`; returns (exit code, output JSON or null, stderr).
fn audit(args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_llm-render"))
        .arg("audit")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), json, err)
}

fn bytes(a: &Value, hop: &str) -> Value {
    a["hops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["hop"] == hop)
        .unwrap_or_else(|| panic!("no hop {hop} in {a}"))["bytes"]
        .clone()
}

fn model_flag(name: &str) -> String {
    format!("{name}={}", fixtures().join("models").join(name).display())
}

#[test]
fn text_hops_follow_the_golden_and_config() {
    let g = golden("render/qwen3.jsonl", "qwen3/long_9k");
    let file = request_file("long_9k.json", &g["request"]);
    let (code, a, err) = audit(&[file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let tokens = g["expected_token_ids"].as_array().unwrap().len() as u64;
    assert_eq!(a["tokens"], tokens);
    let sent = std::fs::metadata(&file).unwrap().len();
    assert_eq!(bytes(&a, "request JSON"), sent);
    let prompt = g["expected_prompt"].as_str().unwrap().len() as u64;
    assert_eq!(bytes(&a, "prompt text"), prompt);
    assert_eq!(bytes(&a, "token IDs"), 4 * tokens);
    // Qwen3-0.6B: hidden 1024, 28 layers, 8 KV heads of 128, bfloat16; blocks of 16.
    assert_eq!(bytes(&a, "embeddings into the LLM"), tokens * 1024 * 2);
    let blocks = tokens.div_ceil(16);
    assert_eq!(bytes(&a, "KV cache"), blocks * 16 * 28 * 2 * 8 * 128 * 2);
    // Other dtypes and block sizes.
    let (_, a, _) = audit(&[
        "--kv-cache-dtype",
        "fp8",
        "--block-size",
        "32",
        file.to_str().unwrap(),
    ]);
    assert_eq!(
        bytes(&a, "KV cache"),
        tokens.div_ceil(32) * 32 * 28 * 2 * 8 * 128
    );
    assert_eq!(bytes(&a, "embeddings into the LLM"), tokens * 1024 * 2);
    // `auto`, as in vLLM, is the default: the config's bfloat16.
    let (code, a, err) = audit(&[
        "--dtype",
        "auto",
        "--kv-cache-dtype",
        "auto",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(bytes(&a, "KV cache"), blocks * 16 * 28 * 2 * 8 * 128 * 2);
}

#[test]
fn image_hops_follow_the_golden_grids() {
    let g = golden(
        "render_mm/qwen2_5_vl_images.jsonl",
        "qwen2_5_vl/vl_two_images_one_message",
    );
    let file = request_file("two_images.json", &g["request"]);
    let model = model_flag("qwen2_5_vl");
    let (code, a, err) = audit(&["--model", &model, file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let tokens = g["expected_token_ids"].as_array().unwrap().len() as u64;
    assert_eq!(a["tokens"], tokens);
    let grids = g["expected_grid_thw"].as_array().unwrap();
    let image_tokens = g["expected_num_image_tokens"].as_array().unwrap();
    assert_eq!(grids.len(), 2);
    for (i, (grid, n)) in grids.iter().zip(image_tokens).enumerate() {
        let patches: u64 = grid
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .product();
        let hop = |h: &str| bytes(&a, &format!("image {} {h}", i + 1));
        // One row of 3 × 2 × 14 × 14 values per 14×14 patch.
        assert_eq!(hop("patches, uint8"), patches * 1176);
        assert_eq!(hop("patches, float32"), patches * 1176 * 4);
        // Resized to the grid: 14 pixels per patch side.
        let [_, h, w] = [0, 1, 2].map(|k| grid[k].as_u64().unwrap());
        assert_eq!(hop("resized pixels"), h * 14 * w * 14 * 3);
        // The vision encoder's output: one hidden-size vector per placeholder token.
        assert_eq!(hop("vision embeddings"), n.as_u64().unwrap() * 1536 * 2);
    }
    assert_eq!(bytes(&a, "embeddings into the LLM"), tokens * 1536 * 2);
}

#[test]
fn a_snapshot_without_config_reports_unknown_sizes() {
    let g = golden("render/llama3_1.jsonl", "llama3_1/single_user");
    let file = request_file("llama.json", &g["request"]);
    let model = model_flag("llama3_1");
    let (code, a, err) = audit(&["--model", &model, file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(bytes(&a, "KV cache"), Value::Null);
    assert_eq!(bytes(&a, "embeddings into the LLM"), Value::Null);
    assert!(bytes(&a, "token IDs").as_u64().unwrap() > 0);
}

#[test]
fn bad_input_is_a_clear_error() {
    let not_json = request_file("bad.json", &Value::String("{".into()));
    let (code, _, err) = audit(&[not_json.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("must be a JSON object, got a string"), "{err}");
    let wrong = request_file("wrong.json", &serde_json::json!({"messages": "x"}));
    let (code, _, err) = audit(&[wrong.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("messages"), "{err}");
    let remote = serde_json::json!({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]});
    let file = request_file("remote.json", &remote);
    let model = model_flag("qwen2_5_vl");
    let (code, _, err) = audit(&["--model", &model, file.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("does not fetch"), "{err}");
    let g = golden(
        "render_mm/qwen2_5_vl_images.jsonl",
        "qwen2_5_vl/vl_two_images_one_message",
    );
    let two = request_file("two.json", &g["request"]);
    let (code, _, err) = audit(&[
        "--model",
        &model,
        "--max-images-per-request",
        "1",
        two.to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("the limit is 1"), "{err}");
    let (code, _, err) = audit(&["--block-size", "0", not_json.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("block-size"), "{err}");
    for flag in ["--dtype", "--kv-cache-dtype"] {
        let (code, _, err) = audit(&[flag, "bfloat61", not_json.to_str().unwrap()]);
        assert_ne!(code, 0);
        assert!(err.contains("unknown dtype \"bfloat61\""), "{err}");
    }
}
