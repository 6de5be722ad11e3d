//! Derender over HTTP, streaming and not, on outputs tokenized with the fixture tokenizers:
//! a stream fed one token per request (carrying the state) gives exactly the one-shot
//! message; forged, truncated and cross-model states are refused with a 400.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{client, golden_registry, start_server};
use llm_render::derender::{DerenderConfig, StateCodec};
use llm_render::server::ServerConfig;
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};

fn server() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let config = ServerConfig {
            derender: DerenderConfig {
                states: Arc::new(StateCodec::new(Some("test key"), 64)),
                ..Default::default()
            },
            ..Default::default()
        };
        start_server(golden_registry(), config)
    })
}

fn encode(model: &str, text: &str) -> Vec<u32> {
    let reg = golden_registry();
    let m = reg.get(Some(model)).unwrap();
    m.tokenizer.encode(text, false).unwrap().get_ids().to_vec()
}

fn post(path: &str, body: &Value) -> (u16, Value) {
    let r = client()
        .post(format!("{}{path}", server()))
        .json(body)
        .send()
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().unwrap())
}

fn weather_tools() -> Value {
    json!([{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}])
}

/// A stream's deltas folded into a message (content, reasoning, calls as (id, name, args)).
#[derive(Debug, Default, PartialEq)]
struct Folded {
    content: String,
    reasoning: String,
    calls: Vec<(String, String, String)>,
    finish: Option<String>,
}

fn fold(chunks: &[Value]) -> Folded {
    let mut f = Folded::default();
    for c in chunks {
        let choice = &c["choices"][0];
        let d = &choice["delta"];
        f.content += d["content"].as_str().unwrap_or("");
        f.reasoning += d["reasoning_content"].as_str().unwrap_or("");
        for t in d["tool_calls"].as_array().into_iter().flatten() {
            let i = t["index"].as_u64().unwrap() as usize;
            if f.calls.len() <= i {
                f.calls.resize(i + 1, Default::default());
            }
            if let Some(id) = t["id"].as_str() {
                f.calls[i].0 = id.into();
                f.calls[i].1 = t["function"]["name"].as_str().unwrap().into();
            }
            f.calls[i].2 += t["function"]["arguments"].as_str().unwrap();
        }
        if let Some(r) = choice["finish_reason"].as_str() {
            f.finish = Some(r.into());
        }
    }
    f
}

fn message(body: &Value) -> Folded {
    let m = &body["choices"][0]["message"];
    Folded {
        content: m["content"].as_str().unwrap_or("").into(),
        reasoning: m["reasoning_content"].as_str().unwrap_or("").into(),
        calls: m["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["id"].as_str().unwrap().into(),
                    t["function"]["name"].as_str().unwrap().into(),
                    t["function"]["arguments"].as_str().unwrap().into(),
                )
            })
            .collect(),
        finish: body["choices"][0]["finish_reason"].as_str().map(Into::into),
    }
}

/// Streams `ids` `per` tokens at a time; returns the chunks and the final state.
/// Streams `ids` `per` at a time; the engine's last chunk carries its usage, as vLLM's does
/// with `stream_options.include_usage`.
fn stream(model: &str, chat: &Value, ids: &[u32], per: usize) -> (Vec<Value>, Value) {
    let mut state = Value::Null;
    let mut chunks = Vec::new();
    let pieces: Vec<&[u32]> = ids.chunks(per.max(1)).collect();
    for (i, piece) in pieces.iter().enumerate() {
        let last = i + 1 == pieces.len();
        let req = json!({"stream": true, "model": model, "stream_state": state,
            "generate_chunk": {"request_id": "chatcmpl-test", "choices": [{"index": 0, "token_ids": piece,
                "finish_reason": if last { json!("stop") } else { Value::Null }}],
                "usage": if last { json!({"prompt_tokens": 3, "completion_tokens": ids.len()}) } else { Value::Null }},
            "prompt_token_ids": [1, 2, 3], "chat_request": chat});
        let (status, body) = post("/v1/chat/completions/derender", &req);
        assert_eq!(status, 200, "{body}");
        state = body["stream_state"].clone();
        chunks.push(body["chunk"].clone());
    }
    (chunks, state)
}

fn one_shot(model: &str, chat: &Value, ids: &[u32]) -> Value {
    let req = json!({"stream": false, "model": model, "prompt_token_ids": [1, 2, 3],
        "generate_response": {"request_id": "chatcmpl-test", "choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}]},
        "chat_request": chat});
    let (status, body) = post("/v1/chat/completions/derender", &req);
    assert_eq!(status, 200, "{body}");
    body
}

/// (model, output text, expected content, reasoning, [(name, arguments)])
type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

const CASES: &[Case] = &[
    (
        "qwen3",
        "<think>\nThe user wants Paris weather. 日本 🤖\n</think>\n\nChecking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich \\\"Z\\\"\"}}\n</tool_call><|im_end|>",
        "\n\nChecking.\n",
        "\nThe user wants Paris weather. 日本 🤖\n",
        &[("get_weather", "{\"city\": \"Paris\", \"days\": 3}"), ("get_weather", "{\"city\": \"Zürich \\\"Z\\\"\"}")],
    ),
    (
        "qwen3",
        "<think>\nno tool needed\n</think>\n\nIt is sunny.<|im_end|>",
        "\n\nIt is sunny.",
        "\nno tool needed\n",
        &[],
    ),
    (
        "llama3_1",
        "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}<|eot_id|>",
        "",
        "",
        &[("get_weather", "{\"city\": \"Paris\"}")],
    ),
    (
        "deepseek_v3",
        "Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>",
        "Let me check.",
        "",
        &[("get_weather", "{\"city\": \"Paris\"}")],
    ),
];

#[test]
fn streamed_one_token_at_a_time_equals_one_shot_for_each_family() {
    for (model, text, content, reasoning, calls) in CASES {
        let chat = json!({"messages": [{"role": "user", "content": "weather?"}], "tools": weather_tools(),
            "stream_options": {"include_usage": true}});
        let ids = encode(model, text);
        let whole = message(&one_shot(model, &chat, &ids));
        assert_eq!(whole.content, *content, "{model}: {text}");
        assert_eq!(whole.reasoning, *reasoning, "{model}");
        let got: Vec<(&str, &str)> = whole
            .calls
            .iter()
            .map(|c| (c.1.as_str(), c.2.as_str()))
            .collect();
        assert_eq!(&got, calls, "{model}");
        let want_finish = if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        assert_eq!(whole.finish.as_deref(), Some(want_finish));
        for per in [1, 3, ids.len()] {
            let (chunks, _) = stream(model, &chat, &ids, per);
            assert_eq!(fold(&chunks), whole, "{model}, {per} per chunk");
            assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
            let last = chunks.last().unwrap();
            assert_eq!(last["usage"]["completion_tokens"], ids.len());
            assert_eq!(last["usage"]["prompt_tokens"], 3);
        }
    }
}

#[test]
fn stream_state_stays_small_and_later_chunks_may_omit_the_prompt() {
    let text = "<think>\n".to_string() + &"reasoning step. ".repeat(300) + "</think>\n\nDone.";
    let ids = encode("qwen3", &text);
    let chat = json!({"messages": [{"role": "user", "content": "x"}]});
    let mut state = Value::Null;
    let mut max_len = 0;
    for (i, id) in ids.iter().enumerate() {
        // Only the first chunk carries the prompt and the messages.
        let (prompt, chat) = if i == 0 {
            (json!([1, 2]), chat.clone())
        } else {
            (Value::Null, json!({}))
        };
        let req = json!({"stream": true, "model": "qwen3", "stream_state": state,
            "generate_chunk": {"choices": [{"index": 0, "token_ids": [id]}]},
            "prompt_token_ids": prompt, "chat_request": chat});
        let (status, body) = post("/v1/chat/completions/derender", &req);
        assert_eq!(status, 200, "{body}");
        state = body["stream_state"].clone();
        max_len = max_len.max(state.to_string().len());
    }
    // The signed state (~0.8 KB here) and vLLM's fields beside it (~0.3 KB).
    assert!(max_len < 1536, "state grew to {max_len} bytes");
}

#[test]
fn forged_truncated_and_foreign_states_are_refused() {
    let chat = json!({"messages": [{"role": "user", "content": "x"}]});
    let ids = encode("qwen3", "Hello there, how are you?");
    let (_, state) = stream("qwen3", &chat, &ids[..3], 1);
    // The stream above finished; start an unfinished one to continue.
    let req = |state: Value, model: &str| {
        json!({"stream": true, "model": model, "stream_state": state,
            "generate_chunk": {"choices": [{"index": 0, "token_ids": [ids[0]]}]}, "chat_request": chat})
    };
    let (status, body) = post("/v1/chat/completions/derender", &req(Value::Null, "qwen3"));
    assert_eq!(status, 200);
    let live = body["stream_state"]["llm_render_state"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, _) = post("/v1/chat/completions/derender", &req(json!(live), "qwen3"));
    assert_eq!(status, 200);

    let mut tampered = live.clone().into_bytes();
    let mid = tampered.len() / 2;
    tampered[mid] = if tampered[mid] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    for (bad, what) in [
        (json!(tampered), "signature"),
        (json!(&live[..live.len() - 5]), "invalid stream_state"),
        (json!("garbage"), "invalid stream_state"),
        (json!("a.b.c"), "invalid stream_state"),
        (json!(""), "invalid stream_state"),
        (json!(42), "must be an object"),
        (json!({"llm_render_state": tampered}), "signature"),
        (json!({"llm_render_state": 7}), "must be a string"),
    ] {
        let (status, body) = post("/v1/chat/completions/derender", &req(bad.clone(), "qwen3"));
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(what),
            "{body}"
        );
    }
    // Replayed into another model.
    let (status, body) = post(
        "/v1/chat/completions/derender",
        &req(json!(live), "llama3_1"),
    );
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("belongs to model"));
    // A finished stream cannot continue.
    let (status, body) = post("/v1/chat/completions/derender", &req(json!(state), "qwen3"));
    assert_eq!(status, 400, "{body}");
    // A state signed with another key.
    let decoded = StateCodec::new(Some("test key"), 0)
        .decode(&live, "qwen3")
        .unwrap();
    let foreign = StateCodec::new(Some("another key"), 0)
        .encode(&decoded)
        .unwrap();
    let (status, body) = post(
        "/v1/chat/completions/derender",
        &req(json!(foreign), "qwen3"),
    );
    assert_eq!(status, 400, "{body}");
}

#[test]
fn completions_derender_streams_and_applies_stops() {
    let ids = encode("qwen3", "one two three STOP four");
    let creq = json!({"prompt": "count", "stop": ["STOP"]});
    let req = json!({"stream": false, "model": "qwen3",
        "generate_response": {"choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}]},
        "completion_request": creq});
    let (status, body) = post("/v1/completions/derender", &req);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["object"], "text_completion");
    assert_eq!(body["choices"][0]["text"], "one two three ");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");

    let mut state = Value::Null;
    let mut text = String::new();
    let mut finish = Value::Null;
    for id in &ids {
        let req = json!({"stream": true, "model": "qwen3", "stream_state": state,
            "generate_chunk": {"choices": [{"index": 0, "token_ids": [id]}]}, "completion_request": creq});
        let (status, body) = post("/v1/completions/derender", &req);
        if status == 400 {
            // The stop string ended the stream; later chunks are refused.
            assert!(body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("already finished"));
            break;
        }
        assert_eq!(status, 200, "{body}");
        text += body["chunk"]["choices"][0]["text"].as_str().unwrap();
        if !body["chunk"]["choices"][0]["finish_reason"].is_null() {
            finish = body["chunk"]["choices"][0]["finish_reason"].clone();
        }
        state = body["stream_state"].clone();
    }
    assert_eq!(text, "one two three ");
    assert_eq!(finish, "stop");
}

/// vLLM's `include_reasoning: false`: the reasoning is parsed out of the content but not
/// returned, streamed or not, and neither are the logprobs that would spell it
/// (`test_stream_parsed_include_reasoning_false`).
#[test]
fn include_reasoning_false_hides_the_reasoning() {
    let ids = encode(
        "qwen3",
        "<think>\nreasoning here\n</think>\n\nThe answer is 5.",
    );
    let chat = json!({"messages": [{"role": "user", "content": "x"}], "include_reasoning": false});
    let whole = message(&one_shot("qwen3", &chat, &ids));
    assert_eq!(whole.reasoning, "");
    assert_eq!(whole.content, "\n\nThe answer is 5.");
    let (chunks, _) = stream("qwen3", &chat, &ids, 1);
    let folded = fold(&chunks);
    assert_eq!(folded.reasoning, "");
    assert_eq!(folded.content, whole.content);
    let lp: Vec<Value> = ids
        .iter()
        .map(|id| json!({"token_id": id, "logprob": -0.5}))
        .collect();
    let req = json!({"stream": false, "model": "qwen3", "chat_request": chat,
        "generate_response": {"choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop",
            "logprobs": {"content": lp}}]}});
    let (status, body) = post("/v1/chat/completions/derender", &req);
    assert_eq!(status, 200, "{body}");
    assert!(body["choices"][0]["logprobs"].is_null(), "{body}");
}

/// A stream's prompt, output so far and new IDs fit the model's context, as vLLM bounds them
/// (`test_oversized_output_token_ids_rejected`).
#[test]
fn a_stream_is_bounded_by_max_model_len() {
    let chat = json!({"messages": [{"role": "user", "content": "x"}]});
    let many = vec![9707u32; 40_960];
    let req = json!({"stream": true, "model": "qwen3", "chat_request": chat, "prompt_token_ids": [1, 2],
        "generate_chunk": {"choices": [{"index": 0, "token_ids": many}]}});
    let (status, body) = post("/v1/chat/completions/derender", &req);
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("max_model_len"));
}
