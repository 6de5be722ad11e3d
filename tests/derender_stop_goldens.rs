//! How an output ends, against vLLM 0.33's own derender: the stop token dropped only when it
//! ends an output that finished with `stop` (and is the reported `stop_reason`, or with none
//! reported a stop token), `stop_reason` null for the tokenizer's EOS and the ID for other
//! stop tokens, stop strings only as the engine's end allows, usage counting every ID, and
//! `metrics` re-validated as `PerRequestMetrics`.
//!
//! `fixtures/goldens/derender_stop.jsonl.gz` holds the requests and vLLM's answers, made by
//! `scripts/stop_tokens_vs_vllm.py --write` against `vllm launch render` (qwen3 fixture), once
//! with vLLM's qwen3/hermes parsers and once with none. Each line is posted here the same
//! way (one-shot chat and completion; a chat stream one token per chunk, the state carried)
//! and summarized as the script summarizes it; a refusal is compared by its status (vLLM's
//! `param` names the rejected leaf, `metrics.queue_time_ms`; ours names `metrics` and the
//! message the leaf).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{derender_server, post_json, qwen3_only};
use serde_json::{json, Value};

/// The answer to `requests` in the script's summary form.
fn send(base: &str, kind: &str, requests: &[Value]) -> Value {
    let route = if kind == "completion" {
        "/v1/completions/derender"
    } else {
        "/v1/chat/completions/derender"
    };
    let url = format!("{base}{route}");
    if kind != "stream" {
        let (status, resp) = post_json(&url, &requests[0]);
        if status != 200 {
            return json!({"status": status});
        }
        let c = &resp["choices"][0];
        let text = if kind == "chat" {
            &c["message"]["content"]
        } else {
            &c["text"]
        };
        return json!({"text": text, "finish": c["finish_reason"], "stop_reason": c["stop_reason"],
            "completion_tokens": resp["usage"]["completion_tokens"], "metrics": resp["metrics"]});
    }
    let (mut state, mut text) = (Value::Null, String::new());
    let (mut finish, mut reason) = (Value::Null, Value::Null);
    for body in requests {
        let mut body = body.clone();
        body["stream_state"] = state;
        let (status, resp) = post_json(&url, &body);
        if status != 200 {
            return json!({"status": status});
        }
        state = resp["stream_state"].clone();
        for ch in resp["chunk"]["choices"].as_array().unwrap() {
            text.push_str(ch["delta"]["content"].as_str().unwrap_or(""));
            if !ch["finish_reason"].is_null() {
                finish = ch["finish_reason"].clone();
                reason = ch["stop_reason"].clone();
            }
        }
    }
    json!({"text": text, "finish": finish, "stop_reason": reason})
}

#[test]
fn derender_ends_outputs_as_vllm_does() {
    let parsers = derender_server(qwen3_only(), "hermes", "qwen3");
    let plain = derender_server(qwen3_only(), "none", "none");
    let lines = common::gz_jsonl("goldens/derender_stop.jsonl.gz");
    assert!(lines.len() > 100, "{} lines", lines.len());
    let mut failures = Vec::new();
    for line in &lines {
        let key = line["key"].as_str().unwrap();
        let setup = key.split('/').next().unwrap();
        let kind = key.rsplit('/').next().unwrap();
        let base = if setup == "parsers" { &parsers } else { &plain };
        let got = send(base, kind, line["requests"].as_array().unwrap());
        let want = &line["vllm"];
        let same = &got == want;
        if !same {
            failures.push(format!("{key}\n  ours: {got}\n  vllm: {want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
