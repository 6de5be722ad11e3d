//! vLLM's own derender API tests, as cases against our server on loopback. Each test is
//! named after the vLLM test it transcribes, from
//! `tests/entrypoints/scale_out/derender/test_derender.py` (`tdd_…`) and
//! `test_derender_stop.py` (`tds_…`) in vllm-project/vllm. vLLM runs them on a tiny Llama
//! with no output parser; here the model is the Qwen3 fixture on a server started with
//! `--reasoning-parser none --tool-call-parser none`, and the assertions are vLLM's. The tests of those
//! files we do not pass yet, and why, are listed in `docs/api.md` ("Known differences").
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{client, derender_server, golden_registry, start_server};
use llm_render::derender::DerenderConfig;
use llm_render::server::ServerConfig;
use serde_json::{json, Value};
use std::sync::OnceLock;

/// The golden models served without output parsers, as vLLM's test server runs.
fn server() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| derender_server(golden_registry(), "none", "none"))
}

fn post(path: &str, body: &Value) -> (u16, Value) {
    let r = client()
        .post(format!("{}{path}", server()))
        .json(body)
        .send()
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().unwrap_or(Value::Null))
}

fn post_raw(path: &str, body: &str) -> u16 {
    client()
        .post(format!("{}{path}", server()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .unwrap()
        .status()
        .as_u16()
}

const CHAT: &str = "/v1/chat/completions/derender";
const COMPLETION: &str = "/v1/completions/derender";

/// Token IDs of `text` in the Qwen3 fixture.
fn ids(text: &str) -> Vec<u32> {
    let (code, out) = post(
        "/tokenize",
        &json!({"model": "qwen3", "prompt": text, "add_special_tokens": false}),
    );
    assert_eq!(code, 200, "{out}");
    serde_json::from_value(out["tokens"].clone()).unwrap()
}

/// vLLM's `_make_generate_response`.
fn generate_response(token_ids: Value) -> Value {
    json!({"request_id": "chatcmpl-test-id", "choices": [{"index": 0, "token_ids": token_ids, "finish_reason": "stop"}]})
}

fn chat(extra: Value) -> Value {
    let mut body = json!({"model": "qwen3", "generate_response": generate_response(json!(ids("Hello there")))});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

fn error_message(out: &Value) -> String {
    out["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn tdd_test_derender_chat_roundtrip() {
    let (code, out) = post(CHAT, &chat(json!({})));
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["object"], "chat.completion");
    assert_eq!(out["choices"].as_array().unwrap().len(), 1);
    let message = &out["choices"][0]["message"];
    assert_eq!(message["role"], "assistant");
    assert!(!message["content"].as_str().unwrap().is_empty());
    assert_eq!(
        out["id"], "chatcmpl-test-id",
        "the engine's request id, verbatim"
    );
}

#[test]
fn tdd_test_derender_chat_usage() {
    let body = chat(
        json!({"prompt_tokens": 10, "generate_response": generate_response(json!([9707, 1879, 0]))}),
    );
    let (code, out) = post(CHAT, &body);
    assert_eq!(code, 200, "{out}");
    assert_eq!(
        out["usage"],
        json!({"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13})
    );
}

#[test]
fn tdd_test_derender_chat_usage_default() {
    let (_, out) = post(CHAT, &chat(json!({})));
    assert_eq!(out["usage"]["prompt_tokens"], 0);
}

#[test]
fn tdd_test_derender_chat_prompt_logprobs_passthrough() {
    let mut body = chat(json!({}));
    body["generate_response"]["prompt_logprobs"] = json!([null, null]);
    let (_, out) = post(CHAT, &body);
    assert_eq!(out["prompt_logprobs"], json!([null, null]));
}

#[test]
fn tdd_test_derender_chat_kv_transfer_params_passthrough() {
    let mut body = chat(json!({}));
    body["generate_response"]["kv_transfer_params"] = json!({"key": "value"});
    let (_, out) = post(CHAT, &body);
    assert_eq!(out["kv_transfer_params"], json!({"key": "value"}));
}

#[test]
fn tdd_test_derender_chat_empty_token_ids() {
    let (code, out) = post(
        CHAT,
        &chat(json!({"generate_response": generate_response(json!([]))})),
    );
    assert_eq!(code, 400, "{out}");
    assert_eq!(
        out["error"]["param"],
        "generate_response.choices[0].token_ids"
    );
}

#[test]
fn tdd_test_derender_chat_null_token_ids() {
    let (code, out) = post(
        CHAT,
        &chat(json!({"generate_response": generate_response(Value::Null)})),
    );
    assert_eq!(code, 400, "{out}");
}

#[test]
fn tdd_test_derender_chat_unknown_model() {
    let (code, _) = post(CHAT, &chat(json!({"model": "does-not-exist"})));
    assert_eq!(code, 404);
}

#[test]
fn tdd_test_derender_chat_oversized_prompt_token_ids_rejected() {
    let body = chat(json!({"prompt_token_ids": vec![42; 1_000_000]}));
    let (code, out) = post(CHAT, &body);
    assert_eq!(code, 400, "{out}");
    assert!(error_message(&out).contains("max_model_len"), "{out}");
}

#[test]
fn tdd_test_derender_chat_bounded_payload_succeeds() {
    let (code, out) = post(
        CHAT,
        &chat(json!({"generate_response": generate_response(json!([9707, 11, 1879, 0, 13]))})),
    );
    assert_eq!(code, 200, "{out}");
    assert!(out["choices"][0]["message"]["content"].is_string());
}

#[test]
fn tdd_test_derender_chat_oversized_token_ids_rejected() {
    let body = chat(json!({"generate_response": generate_response(json!(vec![42; 1_000_000]))}));
    let (code, out) = post(CHAT, &body);
    assert_eq!(code, 400, "{out}");
    assert!(error_message(&out).contains("max_model_len"), "{out}");
}

#[test]
fn tdd_test_derender_chat_too_many_choices_rejected() {
    let choices: Vec<Value> = (0..20_000)
        .map(|i| json!({"index": i, "token_ids": [42], "finish_reason": "stop"}))
        .collect();
    let body = chat(json!({"generate_response": {"request_id": "x", "choices": choices}}));
    let (code, out) = post(CHAT, &body);
    assert_eq!(code, 400, "{out}");
    assert!(error_message(&out).contains("choices count"), "{out}");
}

#[test]
fn tdd_test_derender_chat_negative_token_ids_rejected() {
    let (code, _) = post(
        CHAT,
        &chat(json!({"generate_response": generate_response(json!([-1, 42, 100]))})),
    );
    assert_eq!(code, 400);
}

#[test]
fn tdd_test_derender_completion_roundtrip() {
    let body = json!({"model": "qwen3", "generate_responses": [
        generate_response(json!(ids("One answer"))), generate_response(json!(ids("Another")))
    ]});
    let (code, out) = post(COMPLETION, &body);
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["object"], "text_completion");
    let choices = out["choices"].as_array().unwrap();
    assert_eq!(choices.len(), 2);
    for (i, c) in choices.iter().enumerate() {
        assert_eq!(c["index"], i, "numbered across the responses");
        assert!(!c["text"].as_str().unwrap().is_empty());
    }
}

#[test]
fn tdd_test_derender_completion_usage_aggregation() {
    let body = json!({"model": "qwen3", "prompt_tokens": [5, 10], "generate_responses": [
        generate_response(json!([9707, 1879, 0])), generate_response(json!([9707, 1879, 0, 13]))
    ]});
    let (code, out) = post(COMPLETION, &body);
    assert_eq!(code, 200, "{out}");
    assert_eq!(
        out["usage"],
        json!({"prompt_tokens": 15, "completion_tokens": 7, "total_tokens": 22})
    );
}

#[test]
fn tdd_test_derender_completion_prompt_tokens_length_mismatch() {
    let body = json!({"model": "qwen3", "prompt_tokens": [5, 10], "generate_responses": [generate_response(json!([42]))]});
    let (code, out) = post(COMPLETION, &body);
    assert_eq!(code, 400, "{out}");
    assert_eq!(out["error"]["param"], "prompt_tokens");
}

#[test]
fn tdd_test_derender_completion_prompt_token_ids_length_mismatch() {
    let body = json!({"model": "qwen3", "prompt_token_ids": [[1, 2], [3, 4]], "generate_responses": [generate_response(json!([42]))]});
    let (code, out) = post(COMPLETION, &body);
    assert_eq!(code, 400, "{out}");
    assert_eq!(out["error"]["param"], "prompt_token_ids");
}

#[test]
fn tdd_test_derender_completion_oversized_prompt_token_ids_rejected() {
    let body = json!({"model": "qwen3", "prompt_token_ids": [vec![42; 1_000_000]], "generate_responses": [generate_response(json!([42]))]});
    let (code, out) = post(COMPLETION, &body);
    assert_eq!(code, 400, "{out}");
    assert!(error_message(&out).contains("max_model_len"), "{out}");
}

#[test]
fn tdd_test_derender_completion_empty_generate_responses() {
    let (code, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "generate_responses": []}),
    );
    assert_eq!(code, 400, "{out}");
}

#[test]
fn tdd_test_derender_completion_kv_transfer_params_passthrough() {
    let mut r = generate_response(json!([42]));
    r["kv_transfer_params"] = json!({"node": "abc"});
    let (_, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "generate_responses": [r]}),
    );
    assert_eq!(out["kv_transfer_params"], json!({"node": "abc"}));
}

#[test]
fn tdd_test_derender_completion_too_many_generate_responses_rejected() {
    let responses: Vec<Value> = (0..20_000)
        .map(|_| generate_response(json!([42])))
        .collect();
    let (code, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "generate_responses": responses}),
    );
    assert_eq!(code, 400, "{out}");
    assert!(
        error_message(&out).contains("generate_responses count"),
        "{out}"
    );
}

#[test]
fn tdd_test_derender_completion_oversized_token_ids_rejected() {
    let body = json!({"model": "qwen3", "generate_responses": [generate_response(json!(vec![42; 1_000_000]))]});
    let (code, out) = post(COMPLETION, &body);
    assert_eq!(code, 400, "{out}");
    assert!(error_message(&out).contains("max_model_len"), "{out}");
}

/// vLLM's `test_streaming_derender_invalid_body_returns_400` and
/// `..._non_object_body_returns_400` (test_derender_stream.py).
#[test]
fn tdd_stream_test_streaming_derender_invalid_and_non_object_bodies_return_400() {
    assert_eq!(post(CHAT, &json!({"stream": true})).0, 400);
    assert_eq!(post(COMPLETION, &json!({"stream": true})).0, 400);
    assert_eq!(post_raw(CHAT, "[1,2,3]"), 400);
    assert_eq!(post_raw(COMPLETION, "[1,2,3]"), 400);
}

/// "one two three" and its stop settings, as `test_derender_stop.py` builds them.
fn stop_case(kind: &str, request: Value) -> Value {
    let text_ids = ids("one two three");
    let (path, req_field, resp) = match kind {
        "chat" => (CHAT, "chat_request", "generate_response"),
        _ => (COMPLETION, "completion_request", "generate_response"),
    };
    let body =
        json!({"model": "qwen3", resp: generate_response(json!(text_ids)), req_field: request});
    let (code, out) = post(path, &body);
    assert_eq!(code, 200, "{out}");
    out["choices"][0].clone()
}

#[test]
fn tds_test_chat_stop_string_is_left_out_of_the_text() {
    let c = stop_case("chat", json!({"messages": [], "stop": ["three"]}));
    assert_eq!(c["message"]["content"], "one two ");
    assert_eq!(c["stop_reason"], "three");
}

#[test]
fn tds_test_chat_keeps_the_stop_string_when_asked() {
    let c = stop_case(
        "chat",
        json!({"messages": [], "stop": ["three"], "include_stop_str_in_output": true}),
    );
    assert_eq!(c["message"]["content"], "one two three");
    assert_eq!(c["stop_reason"], "three");
}

#[test]
fn tds_test_chat_stop_token_is_left_out_of_the_text() {
    let last = *ids("one two three").last().unwrap();
    let c = stop_case("chat", json!({"messages": [], "stop_token_ids": [last]}));
    assert_eq!(c["message"]["content"], "one two");
    assert_eq!(c["stop_reason"], last, "the stop token ID, as an integer");
}

#[test]
fn tds_test_completion_stop_string_is_left_out_of_the_text() {
    let c = stop_case("completion", json!({"prompt": "", "stop": ["two"]}));
    assert_eq!(c["text"], "one ");
    assert_eq!(c["stop_reason"], "two");
}

/// vLLM's placeholder logprobs for `ids`: each sampled token with one alternative.
fn placeholder_logprobs(ids: &[u32]) -> Value {
    let content: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({"token": format!("token_id:{id}"), "logprob": -1.0, "bytes": null,
                   "top_logprobs": [{"token": format!("token_id:{}", id + 1), "logprob": -2.0, "bytes": null}]})
        })
        .collect();
    json!({"content": content})
}

fn with_logprobs(token_ids: &[u32], logprobs: Value) -> Value {
    json!({"request_id": "chatcmpl-test-id", "choices": [{"index": 0, "token_ids": token_ids, "finish_reason": "stop", "logprobs": logprobs}]})
}

#[test]
fn tdd_test_derender_chat_logprobs_bytes_and_top_logprobs() {
    // test_derender_chat_logprobs, ..._logprobs_bytes, ..._top_logprobs.
    let hello = ids("Hello");
    let body = json!({"model": "qwen3", "generate_response": with_logprobs(&hello, placeholder_logprobs(&hello))});
    let (code, out) = post(CHAT, &body);
    assert_eq!(code, 200, "{out}");
    let entry = &out["choices"][0]["logprobs"]["content"][0];
    let token = entry["token"].as_str().unwrap();
    assert!(!token.starts_with("token_id:"), "{entry}");
    assert_eq!(token, "Hello");
    let bytes: Vec<u8> = serde_json::from_value(entry["bytes"].clone()).unwrap();
    assert_eq!(bytes, b"Hello");
    let top = entry["top_logprobs"].as_array().unwrap();
    assert_eq!(top.len(), 1);
    assert!(!top[0]["token"].as_str().unwrap().starts_with("token_id:"));
}

#[test]
fn tdd_test_derender_completion_logprobs() {
    let hello = ids("Hello");
    let body = json!({"model": "qwen3", "generate_responses": [with_logprobs(&hello, placeholder_logprobs(&hello))]});
    let (code, out) = post(COMPLETION, &body);
    assert_eq!(code, 200, "{out}");
    let lp = &out["choices"][0]["logprobs"];
    assert_eq!(lp["tokens"], json!(["Hello"]));
    assert!(lp["token_logprobs"][0].is_f64());
    assert_eq!(lp["text_offset"], json!([0]));
}

/// `test_logprobs_endpoint_parity.py`: completions derender cuts each position's candidates
/// to the request's `logprobs` + 1, as `/v1/completions` does; `-1`, `logprob_token_ids` or
/// no `logprobs` keep them all.
#[test]
fn tlep_completion_logprobs_cut_to_the_request_count() {
    let hello = ids("Hello");
    let four: Vec<Value> = (1..=4)
        .map(|k| json!({"token": format!("token_id:{}", hello[0] + k), "logprob": -(k as f64), "bytes": null}))
        .collect();
    let lp = json!({"content": [{"token": format!("token_id:{}", hello[0]), "logprob": -0.5,
        "bytes": null, "top_logprobs": four}]});
    for (request, kept) in [
        (json!({"prompt": "", "logprobs": 1}), 2),
        (json!({"prompt": "", "logprobs": 0}), 1),
        (json!({"prompt": "", "logprobs": -1}), 4),
        (
            json!({"prompt": "", "logprobs": 1, "logprob_token_ids": [5]}),
            4,
        ),
        (json!({"prompt": ""}), 4),
    ] {
        let body = json!({"model": "qwen3", "completion_request": request,
            "generate_responses": [with_logprobs(&hello, lp.clone())]});
        let (code, out) = post(COMPLETION, &body);
        assert_eq!(code, 200, "{out}");
        let top = out["choices"][0]["logprobs"]["top_logprobs"][0]
            .as_object()
            .unwrap();
        assert_eq!(top.len(), kept, "{request}");
    }
}

#[test]
fn tdd_test_derender_chat_oversized_logprobs_rejected() {
    let entries: Vec<Value> = (0..1_000_000)
        .map(|_| json!({"token": "x", "logprob": -1.0}))
        .collect();
    let body = json!({"model": "qwen3", "generate_response": with_logprobs(&[42], json!({"content": entries}))});
    let (code, out) = post(CHAT, &body);
    assert_eq!(code, 400, "{out}");
    assert!(
        error_message(&out).contains("logprobs.content length"),
        "{out}"
    );
}

#[test]
fn tdd_test_derender_chat_oversized_top_logprobs_rejected() {
    let tops: Vec<Value> = (0..25)
        .map(|i| json!({"token": format!("token_id:{i}"), "logprob": -1.0}))
        .collect();
    let lp = json!({"content": [{"token": "token_id:42", "logprob": -1.0, "top_logprobs": tops}]});
    let body = json!({"model": "qwen3", "generate_response": with_logprobs(&[42], lp)});
    let (code, out) = post(CHAT, &body);
    assert_eq!(code, 400, "{out}");
    let msg = error_message(&out);
    assert!(
        msg.contains("top_logprobs count") && msg.contains("max_logprobs"),
        "{out}"
    );
}

/// The two byte tokens of "é" in the Qwen3 fixture: byte-level BPE writes byte 0xC3 as 'Ã'
/// and 0xA9 as '©'.
fn split_e() -> (u32, u32) {
    let model = llm_render::model::Model::load_dir(
        "qwen3",
        &common::fixtures().join("models/qwen3"),
        &Default::default(),
    )
    .unwrap();
    let id = |t: &str| model.tokenizer.token_to_id(t).unwrap();
    (id("Ã"), id("©"))
}

/// vLLM's `test_generate_logprobs_conversion.py` (integer IDs): order kept, bytes of the
/// text, and a character split across two byte tokens: the first half is `""` with no
/// bytes, the second the whole character, completed from the first as context.
#[test]
fn tglc_integer_logprobs_and_a_character_split_across_byte_tokens() {
    let (first, second) = split_e();
    let ok = ids("ok")[0];
    let lp = json!({"content": [
        {"token_id": ok, "logprob": -0.5, "rank": 1, "top_logprobs": [
            {"token_id": ok, "logprob": -0.5, "rank": 1}, {"token_id": first, "logprob": -3.0, "rank": 2}]},
        {"token_id": first, "logprob": -0.1, "rank": 1, "top_logprobs": []},
        {"token_id": second, "logprob": -0.2, "rank": 1, "top_logprobs": []}
    ]});
    let body =
        json!({"model": "qwen3", "generate_response": with_logprobs(&[ok, first, second], lp)});
    let (code, out) = post(CHAT, &body);
    assert_eq!(code, 200, "{out}");
    let content = &out["choices"][0]["logprobs"]["content"];
    assert_eq!(content[0]["token"], "ok");
    assert_eq!(content[0]["bytes"], json!(b"ok".to_vec()));
    assert_eq!(content[0]["top_logprobs"][0]["token"], "ok");
    assert_eq!(content[0]["top_logprobs"][1]["logprob"], -3.0);
    assert_eq!(content[1]["token"], "");
    assert_eq!(content[1]["bytes"], json!([]));
    assert_eq!(content[2]["token"], "é");
    assert_eq!(content[2]["bytes"], json!("é".as_bytes().to_vec()));
    assert_eq!(out["choices"][0]["message"]["content"], "oké");
}

/// Logprobs streamed one entry per chunk resolve as in one shot: the split character's
/// context travels in the stream state.
#[test]
fn streamed_logprobs_carry_their_context_across_chunks() {
    let (first, second) = split_e();
    let mut state = Value::Null;
    let mut tokens = Vec::new();
    for (i, id) in [first, second].into_iter().enumerate() {
        let lp = json!({"content": [{"token_id": id, "logprob": -0.1, "top_logprobs": []}]});
        let finish = if i == 1 { json!("stop") } else { Value::Null };
        let body = json!({"model": "qwen3", "stream": true, "stream_state": state,
            "generate_chunk": {"request_id": "cmpl-s", "choices": [{"index": 0, "token_ids": [id], "finish_reason": finish, "logprobs": lp}]}});
        let (code, out) = post(COMPLETION, &body);
        assert_eq!(code, 200, "{out}");
        state = out["stream_state"].clone();
        let lp = &out["chunk"]["choices"][0]["logprobs"];
        tokens.push(lp["tokens"][0].clone());
        assert_eq!(lp["text_offset"], json!([0]), "{lp}");
    }
    assert_eq!(tokens, [json!(""), json!("é")]);
}

/// `test_finish_reason_stop_for_named_tool_choice`, and vLLM's `resolve_finish_reason`
/// around it: a forced named tool reports `stop` with its call; `auto` reports `tool_calls`;
/// a `length` cut stays `length` even with a call.
#[test]
fn tfr_test_finish_reason_stop_for_named_tool_choice() {
    let call = ids("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>");
    let tools = json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
    let named = json!({"type": "function", "function": {"name": "get_weather"}});
    for (choice, engine, want) in [
        (named.clone(), "stop", "stop"),
        (json!("auto"), "stop", "tool_calls"),
        (json!("auto"), "length", "length"),
        (named, "length", "length"),
    ] {
        let body = json!({"model": "qwen3",
            "chat_request": {"messages": [{"role": "user", "content": "Weather?"}], "tools": tools,
                "tool_choice": choice, "chat_template_kwargs": {"enable_thinking": false}},
            "generate_response": {"choices": [{"index": 0, "token_ids": call, "finish_reason": engine}]}});
        // With the hermes parser (the golden server's `auto` for Qwen3).
        let url = format!("{}{CHAT}", common::golden_server());
        let (code, out) = common::post_json(&url, &body);
        assert_eq!(code, 200, "{out}");
        let c = &out["choices"][0];
        assert_eq!(
            c["message"]["tool_calls"][0]["function"]["name"], "get_weather",
            "{out}"
        );
        assert_eq!(c["finish_reason"], want, "{choice} {engine}");
    }
}

/// vLLM's rule where a parser is configured (`serving.py` `derender_chat_response` /
/// `derender_chat_stream_response`): a chat derender needs `chat_request`, a stream chunk
/// `prompt_token_ids`. Here a parser set by name (`--reasoning-parser qwen3`) brings the
/// rule; under `auto` the parsers run with the request's defaults instead.
#[test]
fn v_a_named_parser_needs_chat_request_and_a_stream_its_prompt() {
    let config = ServerConfig {
        derender: DerenderConfig {
            reasoning_parser: "qwen3".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let base = start_server(golden_registry(), config);
    let send = |body: Value| {
        let r = client()
            .post(format!("{base}{CHAT}"))
            .json(&body)
            .send()
            .unwrap();
        (r.status().as_u16(), r.json::<Value>().unwrap())
    };
    let out = generate_response(json!(ids("Hello")));
    let request = json!({"model": "qwen3", "messages": [{"role": "user", "content": "Hi"}]});
    let (code, body) = send(json!({"model": "qwen3", "generate_response": out}));
    assert_eq!(
        (code, &body["error"]["param"]),
        (400, &json!("chat_request")),
        "{body}"
    );
    assert!(error_message(&body).contains("plain detokenization would leak raw parser markup"));
    let (code, body) = send(
        json!({"model": "qwen3", "stream": true, "generate_chunk": out,
                                   "chat_request": request}),
    );
    assert_eq!(
        (code, &body["error"]["param"]),
        (400, &json!("prompt_token_ids")),
        "{body}"
    );
    let (code, body) = send(json!({"model": "qwen3", "generate_response": out,
                                   "chat_request": request}));
    assert_eq!(code, 200, "{body}");
    // Without a named parser (this file's shared server runs none), a bare request is fine.
    let (code, _) = post(CHAT, &json!({"model": "qwen3", "generate_response": out}));
    assert_eq!(code, 200);
}

/// vLLM builds a reasoning parser per request from the request's effective template kwargs
/// (`_resolve_chat_template_kwargs`): deepseek_v3's is deepseek_r1's when they set
/// `thinking` or `enable_thinking` (which a `reasoning_effort` other than `none` sets), else
/// the identity. The derender reads the switch off `chat_request`, the render's
/// `reasoning_ended` off the request it renders.
#[test]
fn v_deepseek_v3_thinks_when_the_request_asks() {
    let config = ServerConfig {
        derender: DerenderConfig {
            reasoning_parser: "deepseek_v3".into(),
            tool_call_parser: "none".into(),
            ..Default::default()
        },
        render: llm_render::render::RenderOptions {
            reasoning_parser: "deepseek_v3".into(),
            tool_call_parser: "none".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let base = start_server(golden_registry(), config);
    let send = |path: &str, body: Value| {
        let r = client()
            .post(format!("{base}{path}"))
            .json(&body)
            .send()
            .unwrap();
        let code = r.status().as_u16();
        let body = r.json::<Value>().unwrap();
        assert_eq!(code, 200, "{body}");
        body
    };
    let out = generate_response(json!(ids("<think>plan</think>answer")));
    let messages = json!([{"role": "user", "content": "Hi"}]);
    for (extra, thinks) in [
        (json!({}), false),
        (json!({"chat_template_kwargs": {"thinking": true}}), true),
        (
            json!({"chat_template_kwargs": {"enable_thinking": true}}),
            true,
        ),
        (json!({"reasoning_effort": "high"}), true),
        (json!({"chat_template_kwargs": {"thinking": false}}), false),
    ] {
        let mut request = json!({"model": "qwen3", "messages": messages});
        for (k, v) in extra.as_object().unwrap() {
            request[k] = v.clone();
        }
        let body = send(
            CHAT,
            json!({"model": "qwen3", "generate_response": out, "chat_request": request}),
        );
        let message = &body["choices"][0]["message"];
        let (reasoning, content) = if thinks {
            (json!("plan"), json!("answer"))
        } else {
            (Value::Null, json!("<think>plan</think>answer"))
        };
        assert_eq!(message["reasoning"], reasoning, "{extra}: {body}");
        assert_eq!(message["content"], content, "{extra}: {body}");
        // The render: the identity says a prompt has always ended reasoning; deepseek_r1's
        // scan finds no end tag in this prompt.
        let rendered = send("/v1/chat/completions/render", request);
        assert_eq!(rendered["reasoning_ended"], !thinks, "{extra}: {rendered}");
    }
}

/// Turning thinking off is each family's own, as each vLLM constructor reads the request's
/// effective kwargs: qwen3's parser is then all content; minimax_m3's does not read
/// `enable_thinking` and still splits its block; hy_v3's reads only `reasoning_effort`, and
/// `none` is not its `no_think`, so it thinks. There is no server-wide "thinking off, no
/// parser" rule.
#[test]
fn v_thinking_off_is_each_familys_own() {
    let server = |parser: &str| {
        let config = ServerConfig {
            derender: DerenderConfig {
                reasoning_parser: parser.into(),
                tool_call_parser: "none".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        start_server(golden_registry(), config)
    };
    let messages = json!([{"role": "user", "content": "Hi"}]);
    let off = json!({"enable_thinking": false});
    for (parser, text, extra, want) in [
        (
            "qwen3",
            "plan</think>answer",
            json!({"chat_template_kwargs": off}),
            (Value::Null, json!("plan</think>answer")),
        ),
        (
            "qwen3",
            "plan</think>answer",
            json!({"reasoning_effort": "none"}),
            (Value::Null, json!("plan</think>answer")),
        ),
        (
            "minimax_m3",
            "<mm:think>plan</mm:think>answer",
            json!({"chat_template_kwargs": off}),
            (json!("plan"), json!("answer")),
        ),
        (
            "hy_v3",
            "plan</think>answer",
            json!({"reasoning_effort": "none"}),
            (json!("plan"), json!("answer")),
        ),
    ] {
        let base = server(parser);
        let mut request = json!({"model": "qwen3", "messages": messages});
        for (k, v) in extra.as_object().unwrap() {
            request[k] = v.clone();
        }
        let body = json!({"model": "qwen3", "generate_response": generate_response(json!(ids(text))),
            "chat_request": request});
        let r = client()
            .post(format!("{base}{CHAT}"))
            .json(&body)
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let out = r.json::<Value>().unwrap();
        let message = &out["choices"][0]["message"];
        assert_eq!(message["reasoning"], want.0, "{parser} {extra}: {out}");
        assert_eq!(message["content"], want.1, "{parser} {extra}: {out}");
    }
}

#[test]
fn tdd_test_derender_chat_model_omitted_resolves_served_name() {
    // vLLM's test server serves one model; so does this one.
    let base = derender_server(common::qwen3_only(), "none", "none");
    let body = json!({"generate_response": {"request_id": "chatcmpl-test-id",
        "choices": [{"index": 0, "token_ids": ids("Hello there, friend")[..3], "finish_reason": "stop",
        "logprobs": null}], "prompt_logprobs": null, "kv_transfer_params": null, "metrics": null}});
    let out = common::post_ok(&format!("{base}{CHAT}"), &body);
    assert_eq!(out["model"], "qwen3");
}

#[test]
fn tdd_test_derender_chat_metrics_passthrough() {
    let spec = json!({"mean_acceptance_length": 2.0, "draft_acceptance_rate": 0.5,
        "acceptance_histogram": [0, 1], "num_spec_steps": 1, "num_accepted_draft_tokens": 1,
        "num_draft_tokens": 2, "num_spec_tokens": 1});
    let mut gr = generate_response(json!(ids("Hello there")));
    gr["metrics"] = json!({"speculative_decoding": spec});
    let (code, out) = post(CHAT, &chat(json!({"generate_response": gr})));
    assert_eq!(code, 200, "{out}");
    let metrics = out["metrics"].as_object().unwrap();
    let mut keys: Vec<&str> = metrics.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "generation_time_ms",
            "mean_itl_ms",
            "queue_time_ms",
            "speculative_decoding",
            "time_to_first_token_ms",
            "tokens_per_second"
        ]
    );
    for (k, v) in metrics {
        if k != "speculative_decoding" {
            assert!(v.is_null(), "{k}: {v}");
        }
    }
    let mut want = spec.clone();
    want["per_step_accepted"] = Value::Null;
    want["per_step_drafted"] = Value::Null;
    assert_eq!(metrics["speculative_decoding"], want);
}

#[test]
fn tdd_stream_test_streaming_usage_chunk() {
    let token_ids = ids("Hello there, how are you today?");
    let token_ids = &token_ids[..6];
    let first = json!({"stream": true, "model": "qwen3", "generate_chunk": {"request_id": "usage-test",
        "choices": [{"index": 0, "token_ids": token_ids, "finish_reason": "stop"}]},
        "stream_state": null});
    let (code, out) = post(COMPLETION, &first);
    assert_eq!(code, 200, "{out}");
    let usage = json!({"stream": true, "model": "qwen3", "generate_chunk": {"request_id": "usage-test",
        "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 6, "total_tokens": 16}},
        "stream_state": out["stream_state"], "prompt_tokens": 10});
    let (code, out) = post(COMPLETION, &usage);
    assert_eq!(code, 200, "{out}");
    let chunk = &out["chunk"];
    assert_eq!(chunk["choices"], json!([]), "{out}");
    assert_eq!(chunk["usage"]["prompt_tokens"], 10);
    assert_eq!(chunk["usage"]["completion_tokens"], 6);
}

/// **(ext)** `TestServingDerenderStreamValidation.test_too_many_choices_rejected` holds vLLM's
/// stream to one sequence ("at most one choice"); ours streams `n` choices through one
/// signed state, so the same chunk is answered, each choice on its own (listed in
/// `docs/api.md`, "Known differences").
#[test]
fn ext_stream_chunk_with_several_choices_is_answered() {
    let body = json!({"stream": true, "model": "qwen3", "generate_chunk": {"request_id": "t",
        "choices": [{"index": 0, "token_ids": [1]}, {"index": 1, "token_ids": [1]}]}});
    let (code, out) = post(COMPLETION, &body);
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["chunk"]["choices"].as_array().unwrap().len(), 2);
}
