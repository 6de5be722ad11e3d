//! gpt-oss (Harmony) chat renders against vLLM 0.32's own render path
//! (`scripts/gen_harmony_render_goldens.py`): the real server on loopback renders each
//! golden request for the gpt-oss fixture, which has no config and no chat template (it is
//! recognised by its Harmony tokens), and every token ID must equal vLLM's; where vLLM
//! refuses the request, a 400 names the same field. Each golden also holds upstream
//! openai-harmony 0.0.8's tokens for the same messages: they must equal vLLM's except in
//! the one header vLLM's fork orders differently (a tool result's ` to=assistant`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use llm_render::model::{LoadOptions, Model, ModelRegistry};
use llm_render::server::ServerConfig;
use serde_json::Value;

fn goldens() -> Vec<Value> {
    jsonl("goldens/render_harmony/chat.jsonl")
}

fn server(start_date: &str) -> String {
    // A name no parser pattern matches: gpt-oss is recognised by its vocabulary.
    let mut model = Model::load_dir(
        "oss",
        &fixtures().join("models/gpt_oss"),
        &LoadOptions::default(),
    )
    .unwrap();
    model
        .harmony
        .as_mut()
        .expect("recognised as Harmony")
        .start_date = Some(start_date.into());
    start_server(
        ModelRegistry::new(vec![model]).unwrap(),
        ServerConfig::default(),
    )
}

#[test]
fn renders_equal_vllm() {
    let goldens = goldens();
    assert!(goldens.len() >= 30, "{} goldens", goldens.len());
    let url = format!("{}/v1/chat/completions/render", server("2026-01-15"));
    let client = client();
    let mut failures = Vec::new();
    for g in &goldens {
        assert_eq!(g["start_date"], "2026-01-15");
        let id = g["id"].as_str().unwrap();
        let mut req = g["request"].clone();
        req["model"] = "oss".into();
        let resp = client.post(&url).json(&req).send().unwrap();
        let status = resp.status().as_u16();
        let body: Value = resp.json().unwrap();
        if let Some(param) = g.get("error_param") {
            if status != 400
                || !body["error"]["param"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with(param.as_str().unwrap())
            {
                failures.push(format!("{id}: want a 400 on {param}, got {status} {body}"));
            }
            continue;
        }
        if status != 200 {
            failures.push(format!("{id}: {status} {body}"));
            continue;
        }
        if body["token_ids"] != g["token_ids"] {
            failures.push(format!(
                "{id}:\n  want {}\n  got  {}",
                g["token_ids"], body["token_ids"]
            ));
        }
        if body["reasoning_ended"] != true || body["reasoning_parser_kwargs"].is_null() {
            failures.push(format!(
                "{id}: gpt-oss's reasoning has always ended, as vLLM says"
            ));
        }
        // vLLM's gpt-oss parsers do not touch it (they read IDs): left out at its default.
        if body["sampling_params"].get("skip_special_tokens").is_some() {
            failures.push(format!("{id}: skip_special_tokens should stay true"));
        }
        if body["token_offsets"] != Value::Null {
            failures.push(format!("{id}: token_offsets should be null, as vLLM's"));
        }
    }
    // `auto` gives it gpt-oss's tool parser, so a forced tool choice renders.
    let req = serde_json::json!({"model": "oss", "messages": [{"role": "user", "content": "hi"}],
        "tool_choice": "required", "tools": goldens[6]["request"]["tools"]});
    let resp = client.post(&url).json(&req).send().unwrap();
    assert_eq!(resp.status().as_u16(), 200, "{}", resp.text().unwrap());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Upstream openai-harmony differs from vLLM only in a tool result's header.
#[test]
fn upstream_differs_only_in_tool_result_headers() {
    let mut same = 0;
    for g in goldens().iter().filter(|g| g.get("token_ids").is_some()) {
        let ours = &g["token_ids"];
        let upstream = &g["openai_harmony_0_0_8"];
        if ours == upstream {
            same += 1;
            continue;
        }
        let has_tool_result = g["request"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "tool");
        assert!(
            has_tool_result,
            "{}: differs without a tool result",
            g["id"]
        );
        assert_eq!(
            ours.as_array().unwrap().len(),
            upstream.as_array().unwrap().len(),
            "{}: the reordered header has the same tokens",
            g["id"]
        );
    }
    assert!(
        same >= 20,
        "only {same} renders equal upstream openai-harmony's"
    );
}

/// A folder is Harmony by `config.json` (`model_type: gpt_oss`) or, without a config, by
/// its vocabulary; a config naming another type wins over the vocabulary.
#[test]
fn harmony_is_recognised_by_config_or_vocabulary() {
    let dir = std::env::temp_dir().join(format!("harmony-detect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["tokenizer.json.gz", "tokenizer_config.json"] {
        std::fs::copy(fixtures().join("models/gpt_oss").join(f), dir.join(f)).unwrap();
    }
    let load = || Model::load_dir("m", &dir, &LoadOptions::default()).unwrap();
    assert_eq!(
        load().harmony.unwrap().detected_by,
        "Harmony tokens in the vocabulary"
    );
    std::fs::write(dir.join("config.json"), r#"{"model_type": "gpt_oss"}"#).unwrap();
    assert_eq!(
        load().harmony.unwrap().detected_by,
        "config.json model_type gpt_oss"
    );
    std::fs::write(dir.join("config.json"), r#"{"model_type": "llama"}"#).unwrap();
    assert!(load().harmony.is_none());
    std::fs::remove_dir_all(&dir).unwrap();
    let qwen = Model::load_dir(
        "q",
        &fixtures().join("models/qwen3"),
        &LoadOptions::default(),
    );
    assert!(qwen.unwrap().harmony.is_none());
}
