//! The derender of a `tool_choice` the render constrained with a JSON schema (parsers without
//! a structural tag): a named tool's arguments are the whole output, `required`'s calls a
//! `[{"name", "parameters"}]` list. Goldens from vLLM's own composed parser
//! (`scripts/gen_forced_tool_choice_goldens.py` → `fixtures/goldens/derender/
//! forced_tool_choice.jsonl`), replayed over loopback one shot and streamed three tokens per
//! request. Where vLLM's one-shot rejects a `required` list whose calls its stream has already
//! sent (`KEPT`), ours keeps them both ways, as its stream does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{derender_server, fixtures, post_ok, qwen3_only};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Qwen3, loaded once for every server of this test.
fn registry() -> llm_render::model::ModelRegistry {
    static REG: std::sync::OnceLock<llm_render::model::ModelRegistry> = std::sync::OnceLock::new();
    REG.get_or_init(qwen3_only).clone()
}

fn server<'a>(
    cache: &'a mut HashMap<(String, String), String>,
    tools: &str,
    reasoning: &str,
) -> &'a str {
    cache
        .entry((tools.to_string(), reasoning.to_string()))
        .or_insert_with(|| derender_server(registry(), tools, reasoning))
}

fn post(base: &str, body: &Value) -> Value {
    post_ok(&format!("{base}/v1/chat/completions/derender"), body)
}

/// (content, reasoning, [(name, arguments)]) of a message or of folded stream deltas.
type Message = (String, String, Vec<(String, String)>);

fn one_shot(base: &str, chat: &Value, ids: &[u32]) -> Message {
    let body = post(
        base,
        &json!({"stream": false, "model": "qwen3", "prompt_token_ids": [1, 2, 3],
            "generate_response": {"request_id": "chatcmpl-t", "choices": [
                {"index": 0, "token_ids": ids, "finish_reason": "stop"}]},
            "chat_request": chat}),
    );
    let m = &body["choices"][0]["message"];
    let calls = m["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let f = &t["function"];
            (
                f["name"].as_str().unwrap().into(),
                f["arguments"].as_str().unwrap().into(),
            )
        })
        .collect();
    (
        m["content"].as_str().unwrap_or("").into(),
        m["reasoning_content"].as_str().unwrap_or("").into(),
        calls,
    )
}

fn streamed(base: &str, chat: &Value, ids: &[u32]) -> Message {
    let (mut content, mut reasoning, mut calls) = (String::new(), String::new(), Vec::new());
    let mut state = Value::Null;
    let pieces: Vec<&[u32]> = ids.chunks(3).collect();
    for (i, piece) in pieces.iter().enumerate() {
        let last = i + 1 == pieces.len();
        let body = post(
            base,
            &json!({"stream": true, "model": "qwen3", "stream_state": state,
                "generate_chunk": {"request_id": "chatcmpl-t", "choices": [{"index": 0,
                    "token_ids": piece, "finish_reason": if last { json!("stop") } else { Value::Null }}]},
                "prompt_token_ids": [1, 2, 3], "chat_request": chat}),
        );
        state = body["stream_state"].clone();
        for c in body["chunk"]["choices"].as_array().into_iter().flatten() {
            let d = &c["delta"];
            content += d["content"].as_str().unwrap_or("");
            reasoning += d["reasoning_content"].as_str().unwrap_or("");
            for t in d["tool_calls"].as_array().into_iter().flatten() {
                let i = t["index"].as_u64().unwrap() as usize;
                if calls.len() <= i {
                    calls.resize(i + 1, (String::new(), String::new()));
                }
                if let Some(n) = t["function"]["name"].as_str() {
                    calls[i].0 = n.into();
                }
                calls[i].1 += t["function"]["arguments"].as_str().unwrap_or("");
            }
        }
    }
    (content, reasoning, calls)
}

/// Lists vLLM's one-shot makes no call, and what its stream (and ours, both ways) sends:
/// the calls before the fault, cut-off arguments as far as they go.
const KEPT: &[(&str, &str, &str)] = &[
    ("required/bad_entry", "now", "{}"),
    ("required/cut_off", "get_weather", r#"{"city": "Par"#),
];

#[test]
fn forced_calls_read_as_vllm_reads_them() {
    let model = registry().get(Some("qwen3")).unwrap();
    let text =
        std::fs::read_to_string(fixtures().join("goldens/derender/forced_tool_choice.jsonl"))
            .unwrap();
    let tools = json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}},
    ]);
    let mut cache = HashMap::new();
    let mut cases = 0;
    for line in text.lines() {
        let g: Value = serde_json::from_str(line).unwrap();
        let parser = g["parser"].as_str().unwrap();
        let reasoning = g["reasoning_parser"].as_str().unwrap_or("none");
        let base = server(&mut cache, parser, reasoning).to_string();
        let chat = json!({"model": "qwen3", "messages": [{"role": "user", "content": "hi"}],
            "tools": tools, "tool_choice": g["tool_choice"]});
        let ids = model.encode(g["text"].as_str().unwrap(), false).unwrap();
        let want: Message = (
            g["content"].as_str().unwrap_or("").into(),
            g["reasoning"].as_str().unwrap_or("").into(),
            g["calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    (
                        c["name"].as_str().unwrap().into(),
                        c["arguments"].as_str().unwrap().into(),
                    )
                })
                .collect(),
        );
        let want = match KEPT.iter().find(|(k, ..)| g["id"] == *k) {
            Some((_, name, args)) => {
                assert!(want.2.is_empty(), "{}", g["id"]);
                (want.0, want.1, vec![(name.to_string(), args.to_string())])
            }
            None => want,
        };
        let id = format!("{parser}+{reasoning} {}", g["id"]);
        cases += 1;
        if ids.is_empty() {
            // No output at all: the derender routes refuse empty token_ids, as vLLM's.
            continue;
        }
        assert_eq!(one_shot(&base, &chat, &ids), want, "{id} one shot");
        assert_eq!(streamed(&base, &chat, &ids), want, "{id} streamed");
    }
    assert_eq!(cases, 252);
}
