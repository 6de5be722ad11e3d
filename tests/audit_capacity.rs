//! `llm-render audit` for capacity planning: the published hop table reproduced from its own
//! shapes, link limits and the exit code, a traffic sample's percentiles (`--json` as a
//! snapshot), bandwidth, KV transfer time and router-index blocks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use base64::Engine;
use common::fixtures;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;

const MIB: f64 = 1024.0 * 1024.0;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("llm-render-audit-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs `audit` with the Qwen2.5-VL fixture's tokenizer and processor and `args`; returns
/// (exit code, stdout, stderr).
fn audit(args: &[&str]) -> (i32, String, String) {
    let model = format!(
        "qwen2_5_vl={}",
        fixtures().join("models/qwen2_5_vl").display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_llm-render"))
        .args(["audit", "--model", &model])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn config_7b() -> String {
    fixtures()
        .join("audit/qwen2_5_vl_7b_config.json")
        .display()
        .to_string()
}

/// A PNG data URL of a `w`×`h` image.
fn png(w: u32, h: u32) -> String {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, 90])
    });
    let mut bytes = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut bytes, image::ImageFormat::Png)
        .unwrap();
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes.into_inner())
    )
}

fn image_request(images: usize, side: u32) -> Value {
    let url = png(side, side);
    let mut parts: Vec<Value> = (0..images)
        .map(|_| json!({"type": "image_url", "image_url": {"url": url}}))
        .collect();
    parts.push(json!({"type": "text", "text": "What is in these photos?"}));
    json!({"messages": [{"role": "user", "content": parts}]})
}

fn write(name: &str, body: &str) -> PathBuf {
    let p = scratch(name);
    std::fs::write(&p, body).unwrap();
    p
}

fn hop<'a>(a: &'a Value, name: &str) -> &'a Value {
    a["hops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["hop"] == name)
        .unwrap_or_else(|| panic!("no hop {name} in {a}"))
}

fn link<'a>(a: &'a Value, key: &str) -> &'a Value {
    a["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["link"] == key)
        .unwrap_or_else(|| panic!("no link {key} in {a}"))
}

fn mib(v: &Value) -> String {
    format!("{:.2}", v.as_u64().unwrap() as f64 / MIB)
}

/// The published hop table: a photo processed to 644×644 at Qwen2.5-VL-7B sizes (hidden
/// 3584; 28 layers × 4 KV heads × 128, bf16) is 9.49 MiB of float32 patches, 529 visual
/// tokens, 3.62 MiB of embeddings and 28.93 MiB of KV for those tokens.
#[test]
fn the_published_hop_table_from_its_own_shapes() {
    let one = write("one.json", &image_request(1, 644).to_string());
    let cap = r#"{"max_pixels": 414736}"#;
    let (code, out, err) = audit(&[
        "--json",
        "--config",
        &config_7b(),
        "--mm-processor-kwargs",
        cap,
        one.to_str().unwrap(),
    ]);
    let a = json_of(&out);
    assert_eq!(hop(&a, "image 1 resized pixels")["detail"], "644×644 RGB");
    assert_eq!(mib(&hop(&a, "image 1 patches, float32")["bytes"]), "9.49");
    assert_eq!(
        hop(&a, "image 1 vision embeddings")["detail"],
        "529 placeholder tokens"
    );
    assert_eq!(mib(&hop(&a, "image 1 vision embeddings")["bytes"]), "3.62");
    assert_eq!(mib(&hop(&a, "image 1 KV")["bytes"]), "28.93");
    // Exactly: 2116 patches × 1176 × 4; 529 × 3584 × 2; 529 × 28 × 2 × 4 × 128 × 2.
    assert_eq!(
        hop(&a, "image 1 patches, float32")["bytes"],
        2116 * 1176 * 4
    );
    assert_eq!(
        hop(&a, "image 1 vision embeddings")["bytes"],
        529 * 3584 * 2
    );
    assert_eq!(hop(&a, "image 1 KV")["bytes"], 529 * 28 * 2 * 4 * 128 * 2);
    // One such photo is already over gRPC's 4 MiB on the way to an encoder.
    assert_eq!(code, 1, "{err}");
    assert_eq!(link(&a, "render-encoder")["over"], true);
    assert_eq!(link(&a, "render-engine")["over"], false);

    // Two of them: ~19 MiB of tensors; both tensor links are flagged, and the table says so.
    let two = write("two.json", &image_request(2, 644).to_string());
    let args = ["--config", &config_7b(), "--mm-processor-kwargs", cap];
    let (code, out, err) = audit(&[&args[..], &["--json", two.to_str().unwrap()]].concat());
    assert_eq!(code, 1, "{err}");
    let a = json_of(&out);
    assert_eq!(link(&a, "render-encoder")["bytes"], 2 * 2116 * 1176 * 4);
    assert_eq!(mib(&link(&a, "render-encoder")["bytes"]), "18.99");
    assert_eq!(link(&a, "render-encoder")["limit"], 4 << 20);
    assert_eq!(link(&a, "render-engine")["over"], true);
    assert_eq!(link(&a, "encoder-prefill")["bytes"], 2 * 529 * 3584 * 2);
    assert_eq!(a["over_limit"], true);
    let (code, table, _) = audit(&[&args[..], &[two.to_str().unwrap()]].concat());
    assert_eq!(code, 1);
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row in\n{table}"))
            .to_string()
    };
    assert!(row("render → encoder").contains("18.99 MiB"), "{table}");
    assert!(row("render → encoder").contains("OVER"), "{table}");
    assert!(!row("encoder → prefill").contains("OVER"), "{table}");

    // Lifting the limits makes it pass; a text-only request never crosses the encoder links.
    let lifted = [&args[..], &["--limit", "all=none", two.to_str().unwrap()]].concat();
    assert_eq!(audit(&lifted).0, 0);
    let text = write(
        "text.json",
        &json!({"messages": [{"role": "user", "content": "hi"}]}).to_string(),
    );
    let (code, out, _) = audit(&["--json", text.to_str().unwrap()]);
    assert_eq!(code, 0);
    let a = json_of(&out);
    let keys: Vec<&str> = a["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["link"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["client-render", "render-engine", "prefill-decode"]);
}

#[test]
fn rate_link_speed_and_index_blocks() {
    let one = write("rate.json", &image_request(1, 644).to_string());
    let (code, out, err) = audit(&[
        "--json",
        "--config",
        &config_7b(),
        "--mm-processor-kwargs",
        r#"{"max_pixels": 414736}"#,
        "--limit",
        "render-encoder=16MiB",
        "--rate",
        "10",
        "--link",
        "100",
        "--block-size",
        "16",
        "--index-block-size",
        "64",
        one.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let a = json_of(&out);
    let tokens = a["tokens"].as_u64().unwrap();
    let b = &a["blocks"];
    assert_eq!(b["blocks"], tokens.div_ceil(16));
    assert_eq!(b["full_blocks"], tokens / 16);
    assert_eq!(b["index_visible_blocks"], tokens / 64 * 4);
    // Bytes × 8 × rate; KV (whole blocks) × 8 over the link.
    let enc = link(&a, "render-encoder");
    let expect = enc["bytes"].as_f64().unwrap() * 8.0 * 10.0 / 1e9;
    assert!((enc["gbps"].as_f64().unwrap() - expect).abs() < 1e-9);
    let kv = link(&a, "prefill-decode");
    assert_eq!(kv["bytes"], tokens.div_ceil(16) * 16 * 28 * 2 * 4 * 128 * 2);
    let ms = kv["bytes"].as_f64().unwrap() * 8.0 / 100e9 * 1e3;
    assert!((kv["transfer_ms"].as_f64().unwrap() - ms).abs() < 1e-9);
}

fn sample() -> PathBuf {
    fixtures().join("audit/sample.jsonl")
}

fn sample_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = vec!["--mm-processor-kwargs", r#"{"max_pixels": 414736}"#];
    v.extend_from_slice(extra);
    v
}

/// The traffic sample of the README's audit command: 120 mixed requests, percentiles per link as JSON.
#[test]
fn a_traffic_sample_in_one_command() {
    let config = config_7b();
    let path = sample();
    let args = sample_args(&[
        "--json",
        "--config",
        &config,
        "--rate",
        "50",
        "--link",
        "100",
        "--index-block-size",
        "64",
        path.to_str().unwrap(),
    ]);
    let (code, out, err) = audit(&args);
    assert_eq!(code, 1, "over the default limits: {err}");
    let s = json_of(&out);
    assert_eq!(s["requests"], 120);
    assert_eq!(s["failed"], 0);
    // Every image request crosses the encoder links, and nothing else does.
    let images = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| l.contains("image_url"))
        .count();
    assert_eq!(link(&s, "render-encoder")["requests"], images);
    assert_eq!(link(&s, "client-render")["requests"], 120);
    insta::assert_snapshot!(serde_json::to_string_pretty(&s).unwrap());
}

#[test]
fn directories_batch_lines_and_failed_requests() {
    let dir = scratch("sample_dir");
    std::fs::create_dir_all(&dir).unwrap();
    let text = json!({"messages": [{"role": "user", "content": "hi"}]});
    std::fs::write(dir.join("a.json"), text.to_string()).unwrap();
    let batch = json!({"custom_id": "x", "method": "POST", "url": "/v1/chat/completions",
        "body": {"model": "anything", "messages": [{"role": "user", "content": "hi"}]}});
    std::fs::write(dir.join("b.jsonl"), format!("{batch}\n\n{text}\n")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a request").unwrap();
    let (code, out, err) = audit(&["--json", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let s = json_of(&out);
    assert_eq!(s["requests"], 3);
    // The batch line is audited as its body: the same prompt as the plain request.
    assert_eq!(s["tokens"]["p50"], s["tokens"]["max"]);

    // A bad line is a failed request, named by file and line: the rest is still reported,
    // and the exit code is 2.
    let bad = dir.join("c.jsonl");
    let embeddings = json!({"custom_id": "y", "method": "POST", "url": "/v1/embeddings",
        "body": {"input": "hi"}});
    std::fs::write(&bad, format!("{text}\n{{\n{embeddings}\n")).unwrap();
    let (code, out, err) = audit(&["--json", dir.to_str().unwrap()]);
    assert_eq!(code, 2);
    let s = json_of(&out);
    assert_eq!(s["audited"], 4);
    assert_eq!(s["failed"], 2);
    let errors = s["errors"].to_string();
    assert!(errors.contains("c.jsonl:2"), "{errors}");
    assert!(
        errors.contains("c.jsonl:3") && errors.contains("/v1/embeddings"),
        "{errors}"
    );
    assert!(err.contains("c.jsonl:2"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);

    let empty = scratch("empty_dir");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, err) = audit(&[empty.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("without .json or .jsonl"), "{err}");
}

#[test]
fn bad_flags_are_clear_errors() {
    let text = write(
        "flags.json",
        &json!({"messages": [{"role": "user", "content": "hi"}]}).to_string(),
    );
    let t = text.to_str().unwrap();
    for (args, needle) in [
        (vec!["--limit", "engine=4MiB"], "unknown link \"engine\""),
        (vec!["--limit", "render-engine=4 parsecs"], "unknown unit"),
        (vec!["--limit", "render-engine"], "LINK=SIZE"),
        (vec!["--rate", "0"], "not a positive number"),
        (vec!["--link", "fast"], "not a positive number"),
        (vec!["--index-block-size", "0"], "index-block-size"),
        (vec!["--config", "/nonexistent/config.json"], "No such file"),
    ] {
        let (code, _, err) = audit(&[&args[..], &[t]].concat());
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let no_shapes = write("no_shapes.json", r#"{"vocab_size": 10}"#);
    let (code, _, err) = audit(&["--config", no_shapes.to_str().unwrap(), t]);
    assert_eq!(code, 2);
    assert!(err.contains("no hidden_size"), "{err}");
}

/// What makes a sample: a JSON-lines file with one request is still reported as a sample,
/// its failure named by line; JSON lines in a `.json` file get a hint; shapes too large to
/// multiply are unknown sizes, not a crash.
#[test]
fn one_line_samples_hints_and_huge_shapes() {
    let text = json!({"messages": [{"role": "user", "content": "hi"}]});
    let one = write("one.JSONL", &format!("{text}\r\n"));
    let (code, out, err) = audit(&["--json", one.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json_of(&out)["audited"], 1, "{out}");

    let broken = write("broken.jsonl", "{\n");
    let (code, out, _) = audit(&["--json", broken.to_str().unwrap()]);
    assert_eq!(code, 2);
    let s = json_of(&out);
    assert_eq!(s["failed"], 1);
    assert!(s["errors"].to_string().contains("broken.jsonl:1"), "{s}");
    // Nothing audited: the header still names the loaded model.
    assert_eq!(s["models"], json!(["qwen2_5_vl"]));

    let lines = write("lines.json", &format!("{text}\n{text}\n"));
    let (code, _, err) = audit(&[lines.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("lines.json") && err.contains("pass --jsonl"),
        "{err}"
    );

    let huge = write(
        "huge_config.json",
        &json!({"hidden_size": u64::MAX, "num_hidden_layers": u64::MAX,
            "num_attention_heads": 1, "torch_dtype": "bfloat16"})
        .to_string(),
    );
    let plain = write("plain.json", &text.to_string());
    let (code, out, err) = audit(&["--config", huge.to_str().unwrap(), plain.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("KV cache") && out.contains('?'), "{out}");
}
