//! gpt-oss (Harmony) derender over HTTP with the gpt-oss fixture (no config, recognised by
//! its Harmony tokens, so `auto` runs the Harmony parser): every output of
//! `fixtures/goldens/derender/harmony.jsonl`, as vLLM's token IDs, derendered one shot gives
//! vLLM 0.32's `HarmonyParser` result (reasoning and tool parser both on), and streamed one
//! token per request, carrying the state, gives the same message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{client, fixtures, start_server};
use llm_render::derender::{DerenderConfig, StateCodec};
use llm_render::model::{LoadOptions, Model, ModelRegistry};
use llm_render::server::ServerConfig;
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};

fn server() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let model = Model::load_dir(
            "gpt-oss",
            &fixtures().join("models/gpt_oss"),
            &LoadOptions::default(),
        )
        .unwrap();
        let config = ServerConfig {
            derender: DerenderConfig {
                states: Arc::new(StateCodec::new(Some("test key"), 64)),
                ..Default::default()
            },
            ..Default::default()
        };
        start_server(ModelRegistry::new(vec![model]).unwrap(), config)
    })
}

fn post(body: &Value) -> Value {
    let r = client()
        .post(format!("{}/v1/chat/completions/derender", server()))
        .json(body)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    r.json().unwrap()
}

/// The request the goldens were made with: two tools, `tool_choice: auto`; `ignore_eos` so
/// that every ID is read (the goldens run past `<|return|>`, which ends a real output).
fn chat() -> Value {
    let f = |name: &str, params: Value| json!({"type": "function", "function": {"name": name, "parameters": params}});
    json!({"messages": [{"role": "user", "content": "hi"}], "tool_choice": "auto", "ignore_eos": true,
        "tools": [f("get_weather", json!({"type": "object", "properties": {"city": {"type": "string"}}})),
                  f("get_time", json!({"type": "object", "properties": {}}))]})
}

fn goldens() -> Vec<Value> {
    let text = std::fs::read_to_string(fixtures().join("goldens/derender/harmony.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (reasoning, content, [(name, arguments)]), empty strings for none.
type Folded = (String, String, Vec<(String, String)>);

fn from_message(body: &Value) -> Folded {
    let m = &body["choices"][0]["message"];
    let calls = m["tool_calls"].as_array().into_iter().flatten();
    (
        m["reasoning_content"].as_str().unwrap_or("").into(),
        m["content"].as_str().unwrap_or("").into(),
        calls
            .map(|t| {
                let f = &t["function"];
                (
                    f["name"].as_str().unwrap().into(),
                    f["arguments"].as_str().unwrap().into(),
                )
            })
            .collect(),
    )
}

fn from_golden(g: &Value) -> Folded {
    let text = |k: &str| g[k].as_str().unwrap_or("").to_string();
    let calls = g["calls"].as_array().unwrap().iter();
    (
        text("reasoning"),
        text("content"),
        calls
            .map(|c| {
                (
                    c["name"].as_str().unwrap().into(),
                    c["arguments"].as_str().unwrap().into(),
                )
            })
            .collect(),
    )
}

fn streamed(ids: &[u32]) -> Folded {
    let mut state = Value::Null;
    let mut out: Folded = Default::default();
    for (i, id) in ids.iter().enumerate() {
        let last = i + 1 == ids.len();
        let body = post(
            &json!({"stream": true, "model": "gpt-oss", "stream_state": state,
            "generate_chunk": {"request_id": "chatcmpl-h", "choices": [{"index": 0, "token_ids": [id],
                "finish_reason": if last { json!("stop") } else { Value::Null }}]},
            "prompt_token_ids": [1, 2, 3], "chat_request": chat()}),
        );
        state = body["stream_state"].clone();
        let d = &body["chunk"]["choices"][0]["delta"];
        out.0 += d["reasoning_content"].as_str().unwrap_or("");
        out.1 += d["content"].as_str().unwrap_or("");
        for t in d["tool_calls"].as_array().into_iter().flatten() {
            let i = t["index"].as_u64().unwrap() as usize;
            if out.2.len() <= i {
                out.2.resize(i + 1, Default::default());
            }
            if let Some(name) = t["function"]["name"].as_str() {
                out.2[i].0 = name.into();
            }
            out.2[i].1 += t["function"]["arguments"].as_str().unwrap_or("");
        }
    }
    out
}

#[test]
fn derender_equals_vllm_one_shot_and_streams_the_same() {
    let mut failures = Vec::new();
    let cases = goldens();
    for g in cases
        .iter()
        .filter(|g| !g["token_ids"].as_array().unwrap().is_empty())
    {
        let id = g["id"].as_str().unwrap();
        let ids: Vec<u32> = serde_json::from_value(g["token_ids"].clone()).unwrap();
        let body = post(
            &json!({"stream": false, "model": "gpt-oss", "prompt_token_ids": [1, 2, 3],
            "generate_response": {"request_id": "chatcmpl-h", "choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}]},
            "chat_request": chat()}),
        );
        let got = from_message(&body);
        let want = from_golden(&g["nonstream"]["both"]);
        if got != want {
            failures.push(format!("{id}: want {want:?}\n  got {got:?}"));
            continue;
        }
        let finish = body["choices"][0]["finish_reason"].as_str().unwrap();
        assert_eq!(
            finish,
            if want.2.is_empty() {
                "stop"
            } else {
                "tool_calls"
            },
            "{id}"
        );
        assert_eq!(streamed(&ids), got, "{id}: streamed");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn models_say_the_harmony_parsers_and_why() {
    let body: Value = client()
        .get(format!("{}/v1/models", server()))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let card = &body["data"][0];
    assert_eq!(card["native_template"], "harmony");
    assert_eq!(card["reasoning_parser"], "openai_gptoss");
    assert_eq!(card["tool_call_parser"], "openai");
    assert_eq!(
        card["parsers_chosen_by"],
        "gpt-oss: Harmony tokens in the vocabulary"
    );
}
