//! `/v1/messages/render` and `/v1/responses/render` over HTTP: vLLM's own tests of the two
//! routes (`tests/entrypoints/scale_out/render/test_render.py`, as `tr_…`), each request
//! rendering to the same token IDs as the chat request vLLM converts it to, and vLLM's
//! refusals as 400s naming the field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{assert_error, golden_server, post_json};
use serde_json::{json, Value};

fn post(path: &str, body: &Value) -> (u16, Value) {
    post_json(&format!("{}{path}", golden_server()), body)
}

const MESSAGES: &str = "/v1/messages/render";
const RESPONSES: &str = "/v1/responses/render";
const CHAT: &str = "/v1/chat/completions/render";

fn ok(path: &str, body: &Value) -> Value {
    let (status, out) = post(path, body);
    assert_eq!(status, 200, "{path}: {out}");
    out
}

/// Llama 3.1's BOS, which its template writes first (vLLM's tests check for the tiny
/// Llama's BOS, 1).
const LLAMA_BOS: u64 = 128000;

#[test]
fn tr_test_messages_render_basic() {
    let out = ok(
        MESSAGES,
        &json!({"model": "llama3_1", "max_tokens": 16,
            "messages": [{"role": "user", "content": "Render this Anthropic message."}]}),
    );
    assert_eq!(out["model"], "llama3_1");
    assert!(out["sampling_params"].is_object());
    // 16 is vLLM's `SamplingParams` default, which its render leaves out; written here, as
    // vLLM's generate route reads an absent one as "up to the context" (docs/api.md).
    assert_eq!(out["sampling_params"]["max_tokens"], 16);
    assert_eq!(out["token_ids"][0], LLAMA_BOS);
    assert!(out["request_id"].as_str().unwrap().starts_with("chatcmpl-"));
}

#[test]
fn tr_test_messages_render_system_and_multi_turn() {
    let out = ok(
        MESSAGES,
        &json!({"model": "llama3_1", "max_tokens": 16, "system": "You are a helpful assistant.",
            "messages": [{"role": "user", "content": "Hello"},
                {"role": "assistant", "content": "Hi! How can I help?"},
                {"role": "user", "content": "What is 2 + 2?"}]}),
    );
    assert_eq!(out["token_ids"][0], LLAMA_BOS);
    let chat = ok(
        CHAT,
        &json!({"model": "llama3_1", "max_tokens": 16, "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi! How can I help?"},
            {"role": "user", "content": "What is 2 + 2?"}]}),
    );
    assert_eq!(out["token_ids"], chat["token_ids"]);
}

/// vLLM's test runs a template that refuses a non-leading system message, so the inline one
/// merges; the fixtures' templates accept it, so here it stays in place, as vLLM's probe
/// decides for them (`protocol::anthropic` tests the merge itself).
#[test]
fn tr_test_messages_render_merges_inline_system() {
    let inline = ok(
        MESSAGES,
        &json!({"model": "qwen3", "max_tokens": 16, "system": "You are a helpful assistant.",
            "messages": [{"role": "user", "content": "Hello"},
                {"role": "assistant", "content": "Hi! How can I help?"},
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "What is 2 + 2?"}]}),
    );
    let chat = ok(
        CHAT,
        &json!({"model": "qwen3", "max_tokens": 16, "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi! How can I help?"},
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is 2 + 2?"}]}),
    );
    assert_eq!(inline["token_ids"], chat["token_ids"]);
}

#[test]
fn tr_test_messages_render_error_invalid_model() {
    let (status, out) = post(
        MESSAGES,
        &json!({"model": "invalid-model-name", "max_tokens": 16,
            "messages": [{"role": "user", "content": "Hello"}]}),
    );
    assert_eq!(status, 404, "{out}");
    assert!(out.get("error").is_some());
}

#[test]
fn messages_with_tools_thinking_and_results_render_as_their_chat_request() {
    let weather = json!({"name": "get_weather", "description": "w",
        "input_schema": {"properties": {"city": {"type": "string"}}}});
    let messages = ok(
        MESSAGES,
        &json!({"model": "qwen3", "max_tokens": 64, "stream": true,
            "system": [{"type": "text", "text": "You are A."}, {"type": "text", "text": "Be brief."}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"},
                    {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]}],
            "tools": [weather], "thinking": {"type": "disabled"}, "stop_sequences": ["END"]}),
    );
    let chat = ok(
        CHAT,
        &json!({"model": "qwen3", "max_tokens": 64, "stop": ["END"],
            "chat_template_kwargs": {"enable_thinking": false},
            "messages": [
                {"role": "system", "content": "You are A.Be brief."},
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "reasoning": "hmm", "tool_calls": [{"id": "t1", "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
                {"role": "tool", "tool_call_id": "t1", "content": "sunny"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "description": "w",
                "parameters": {"properties": {"city": {"type": "string"}}, "type": "object"}}}]}),
    );
    assert_eq!(messages["token_ids"], chat["token_ids"]);
    assert_eq!(messages["sampling_params"]["stop"], json!(["END"]));
    assert_eq!(
        messages["stream_options"],
        json!({"include_usage": true, "continuous_usage_stats": true})
    );
    assert_eq!(messages["stream"], true);
}

#[test]
fn messages_refusals_name_the_field() {
    let base =
        json!({"model": "qwen3", "max_tokens": 16, "messages": [{"role": "user", "content": "x"}]});
    let with = |k: &str, v: Value| {
        let mut b = base.clone();
        b[k] = v;
        b
    };
    for (body, needle, param) in [
        (
            with("max_tokens", json!(0)),
            "max_tokens must be positive",
            "max_tokens",
        ),
        (
            with("thinking", json!({"type": "enabled", "budget_tokens": 100})),
            "1024",
            "thinking.budget_tokens",
        ),
        (
            with("stop_sequences", json!(["a", "b", "c", "d", "e"])),
            "at most 4",
            "stop_sequences",
        ),
        (
            with("tool_choice", json!({"type": "tool"})),
            "name is required",
            "tool_choice.name",
        ),
        (
            with(
                "messages",
                json!([{"role": "user", "content": [{"type": "document"}]}]),
            ),
            "Input should be one of",
            "messages[0].content[0].type",
        ),
        (with("cache_salt", json!("a/b")), "cache_salt", "cache_salt"),
        (
            with("temperature", json!(3.0)),
            "temperature",
            "temperature",
        ),
    ] {
        assert_error(&post(MESSAGES, &body), 400, needle, Some(param));
    }
}

#[test]
fn tr_test_responses_render_basic() {
    let out = ok(
        RESPONSES,
        &json!({"model": "qwen3", "input": "When should a Responses handler return an empty string?",
            "max_output_tokens": 7}),
    );
    assert_eq!(out["model"], "qwen3");
    assert!(out["request_id"].as_str().unwrap().starts_with("resp_"));
    assert_eq!(out["sampling_params"]["max_tokens"], 7);
    assert!(!out["token_ids"].as_array().unwrap().is_empty());
}

#[test]
fn tr_test_responses_render_includes_prior_input_items() {
    let turn = json!({"role": "user", "content": "Which color should I remember?"});
    let one = ok(RESPONSES, &json!({"model": "qwen3", "input": [turn]}));
    let three = ok(
        RESPONSES,
        &json!({"model": "qwen3", "input": [
            {"role": "user", "content": "Remember the color cobalt."},
            {"role": "assistant", "content": "I will remember cobalt."}, turn]}),
    );
    assert!(
        three["token_ids"].as_array().unwrap().len() > one["token_ids"].as_array().unwrap().len()
    );
}

#[test]
fn tr_test_responses_render_rejects_previous_response_id_over_http() {
    let (status, out) = post(
        RESPONSES,
        &json!({"model": "qwen3", "input": "Continue the previous response.",
            "previous_response_id": "resp_previous"}),
    );
    assert_eq!(status, 400, "{out}");
    assert_eq!(out["error"]["type"], "invalid_request_error");
    assert_eq!(out["error"]["param"], "previous_response_id");
}

/// `test_render_responses_returns_generate_request_without_stored_state`, over HTTP: the
/// request's id, `max_output_tokens`, stream, salt, priority and transfer params reach the
/// `GenerateRequest`.
#[test]
fn tr_test_render_responses_returns_generate_request_without_stored_state() {
    let out = ok(
        RESPONSES,
        &json!({"model": "qwen3", "input": "Test prompt", "max_output_tokens": 12, "stream": true,
            "cache_salt": "request-salt", "priority": 3, "request_id": "resp_mine",
            "kv_transfer_params": {"do_remote_prefill": true}, "ec_transfer_params": {"remote": true}}),
    );
    assert_eq!(out["request_id"], "resp_mine");
    assert_eq!(out["sampling_params"]["max_tokens"], 12);
    assert_eq!(out["stream"], true);
    assert_eq!(out["stream_options"], Value::Null);
    assert_eq!(out["cache_salt"], "request-salt");
    assert_eq!(out["priority"], 3);
    assert_eq!(
        out["kv_transfer_params"],
        json!({"do_remote_prefill": true})
    );
    assert_eq!(out["ec_transfer_params"], json!({"remote": true}));
}

#[test]
fn responses_render_as_their_chat_request() {
    let items = json!([
        {"role": "user", "content": "What's the weather?"},
        {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "need tool"}]},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}]);
    let responses = ok(
        RESPONSES,
        &json!({"model": "qwen3", "instructions": "Be brief.", "input": items,
            "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object",
                "properties": {"city": {"type": "string"}}}}, {"type": "web_search"}],
            "reasoning": {"effort": "none"}}),
    );
    let chat = ok(
        CHAT,
        &json!({"model": "qwen3", "chat_template_kwargs": {"enable_thinking": false}, "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What's the weather?"},
            {"role": "assistant", "reasoning": "need tool", "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "content": "sunny", "tool_call_id": "call_1"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "description": null,
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]}),
    );
    assert_eq!(responses["token_ids"], chat["token_ids"]);
}

#[test]
fn responses_refusals_name_the_field() {
    for (body, needle, param) in [
        (
            json!({"model": "qwen3", "input": "x", "prompt": {"id": "p"}}),
            "prompt template",
            "prompt",
        ),
        (
            json!({"model": "qwen3", "input": "x", "background": true, "store": false}),
            "background",
            "background",
        ),
        (
            json!({"model": "qwen3", "input": "x", "tool_choice": "required"}),
            "must be specified with 'tools'",
            "tool_choice",
        ),
        (
            json!({"model": "qwen3", "input": "x", "tools": [{"type": "function", "function": {"name": "f"}}]}),
            "nested shape",
            "tools[0].name",
        ),
        (
            json!({"model": "qwen3", "input": [{"type": "item_reference", "id": "x"}]}),
            "Unsupported input item type",
            "input",
        ),
        (
            json!({"model": "qwen3", "input": "x", "reasoning": {"effort": "extreme"}}),
            "reasoning_effort",
            "reasoning_effort",
        ),
        (json!({"model": "qwen3"}), "Field required", "input"),
    ] {
        assert_error(&post(RESPONSES, &body), 400, needle, Some(param));
    }
    let (status, _) = post(RESPONSES, &json!({"model": "nope", "input": "x"}));
    assert_eq!(status, 404);
}

/// Responses' `truncation: "auto"` is vLLM's `truncate_prompt_tokens: -1`: a prompt past
/// the context keeps its last `max_model_len - 1` tokens (one held back for the output), as
/// chat's `-1` does; `disabled` (the default) leaves it to the length check. Checked against
/// vLLM 0.33's render server with `--max-model-len 8` (the same IDs, `max_tokens` and 400s).
#[test]
fn v_responses_truncation_auto_keeps_the_end_of_the_prompt() {
    use llm_render::model::LoadOptions;
    let opts = LoadOptions {
        max_model_len: Some(8),
        ..Default::default()
    };
    let base = common::start_server(common::load_models(&["qwen3"], &opts), Default::default());
    let responses = format!("{base}/v1/responses/render");
    let chat = format!("{base}/v1/chat/completions/render");
    let full = {
        let big = common::start_server(common::qwen3_only(), Default::default());
        let (_, out) = post_json(
            &format!("{big}/v1/chat/completions/render"),
            &json!({"messages": [{"role": "user", "content": "Hello"}]}),
        );
        out["token_ids"].as_array().unwrap().clone()
    };
    assert_eq!(full.len(), 9);
    let (code, out) = post_json(&responses, &json!({"input": "Hello", "truncation": "auto"}));
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["token_ids"].as_array().unwrap()[..], full[2..]);
    assert_eq!(out["sampling_params"]["max_tokens"], 1);
    let (code, out) = post_json(
        &chat,
        &json!({"messages": [{"role": "user", "content": "Hello"}], "truncate_prompt_tokens": -1}),
    );
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["token_ids"].as_array().unwrap()[..], full[2..]);
    for truncation in [json!("disabled"), Value::Null] {
        let (code, _) = post_json(
            &responses,
            &json!({"input": "Hello", "truncation": truncation}),
        );
        assert_eq!(code, 400);
    }
    assert_error(
        &post_json(
            &responses,
            &json!({"input": "Hello", "truncation": "sometimes"}),
        ),
        400,
        "'auto' or 'disabled'",
        Some("truncation"),
    );
    // vLLM's TokenizeParams check comes first: no output budget past the context, named as
    // each API spells it (completions' default max_tokens is 16).
    let completions = format!("{base}/v1/completions/render");
    let hi = json!([{"role": "user", "content": "Hi"}]);
    for (url, body, param) in [
        (
            &responses,
            json!({"input": "Hi", "max_output_tokens": 9}),
            "max_output_tokens",
        ),
        (
            &chat,
            json!({"messages": hi, "max_tokens": 100}),
            "max_tokens",
        ),
        (
            &chat,
            json!({"messages": hi, "max_completion_tokens": 9}),
            "max_completion_tokens",
        ),
        (&completions, json!({"prompt": "one two"}), "max_tokens"),
    ] {
        let got = post_json(url, &body);
        assert_error(
            &got,
            400,
            "cannot be greater than max_model_len=8",
            Some(param),
        );
    }
    let (code, out) = post_json(
        &completions,
        &json!({"prompt": "one two", "max_tokens": null}),
    );
    assert_eq!(
        (code, &out[0]["sampling_params"]["max_tokens"]),
        (200, &json!(6)),
        "{out}"
    );
}

/// vLLM validates a Messages or Responses body before it looks the model up: a malformed
/// body for an unknown model is the body's 400; a valid one the model's 404.
#[test]
fn v_a_malformed_body_is_refused_before_the_unknown_model() {
    for (path, bad, good) in [
        (
            "/v1/messages/render",
            json!({"model": "nope", "messages": "bad", "max_tokens": 5}),
            json!({"model": "nope", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 5}),
        ),
        (
            "/v1/responses/render",
            json!({"model": "nope", "input": 5}),
            json!({"model": "nope", "input": "Hi"}),
        ),
    ] {
        let (code, out) = post(path, &bad);
        assert_eq!(code, 400, "{path}: {out}");
        let (code, out) = post(path, &good);
        assert_eq!(code, 404, "{path}: {out}");
    }
}
