//! `reasoning_ended`, `reasoning_parser_kwargs` and `parse_context` on chat, Messages and
//! Responses renders, as vLLM 0.33's render server fills them with the qwen3 and hermes
//! parsers (each expectation below is its answer, from `scripts/parse_context_vs_vllm.py`),
//! and vLLM's refusal of a `tool_choice` when no tool parser runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{assert_error, golden_registry, golden_server, post_json, start_server};
use llm_render::render::RenderOptions;
use llm_render::server::ServerConfig;
use serde_json::{json, Value};
use std::sync::OnceLock;

fn render(base: &str, path: &str, body: Value) -> Value {
    let (status, out) = post_json(&format!("{base}{path}"), &body);
    assert_eq!(status, 200, "{out}");
    out
}

fn chat(body: Value) -> Value {
    render(golden_server(), "/v1/chat/completions/render", body)
}

fn hi() -> Value {
    json!([{"role": "user", "content": "hi"}])
}

/// vLLM's effective kwargs for a plain request (its server default first).
fn kwargs(extra: Value) -> Value {
    let mut k = json!({"cohere_format": "cmd4"});
    for (key, v) in extra.as_object().unwrap() {
        k[key] = v.clone();
    }
    k
}

#[test]
fn plain_chat_waits_for_reasoning() {
    let out = chat(json!({"model": "qwen3", "messages": hi()}));
    let k = kwargs(json!({"add_generation_prompt": true, "continue_final_message": false}));
    assert_eq!(out["reasoning_ended"], false);
    assert_eq!(
        out["reasoning_parser_kwargs"],
        json!({"chat_template_kwargs": k})
    );
    assert_eq!(
        out["parse_context"],
        json!({"tools": null, "tool_choice": "none", "parallel_tool_calls": true,
            "include_reasoning": true, "chat_template_kwargs": k, "history_tool_call_cnt": 0})
    );
}

#[test]
fn reasoning_ends_in_the_prompt_or_is_not_returned() {
    // Thinking off: Qwen3's template writes an empty <think></think>.
    let out = chat(json!({"model": "qwen3", "messages": hi(),
        "chat_template_kwargs": {"enable_thinking": false}}));
    assert_eq!(out["reasoning_ended"], true);
    assert_eq!(
        out["parse_context"]["chat_template_kwargs"],
        kwargs(
            json!({"enable_thinking": false, "add_generation_prompt": true,
            "continue_final_message": false})
        )
    );
    // reasoning_effort none: the effort and enable_thinking follow the request's kwargs.
    let out = chat(json!({"model": "qwen3", "messages": hi(), "reasoning_effort": "none"}));
    assert_eq!(out["reasoning_ended"], true);
    assert_eq!(
        out["reasoning_parser_kwargs"]["chat_template_kwargs"],
        kwargs(
            json!({"add_generation_prompt": true, "continue_final_message": false,
            "reasoning_effort": "none", "enable_thinking": false})
        )
    );
    let out = chat(json!({"model": "qwen3", "messages": hi(), "include_reasoning": false}));
    assert_eq!(out["reasoning_ended"], true);
    assert_eq!(out["parse_context"]["include_reasoning"], false);
    // A continued final message that closed its reasoning, and one that did not.
    for (content, ended) in [
        ("<think>\nx\n</think>\n\nHel", true),
        ("<think>\nstill", false),
    ] {
        let mut messages = hi();
        messages
            .as_array_mut()
            .unwrap()
            .push(json!({"role": "assistant", "content": content}));
        let out = chat(json!({"model": "qwen3", "messages": messages,
            "add_generation_prompt": false, "continue_final_message": true}));
        assert_eq!(out["reasoning_ended"], ended, "{content}");
    }
}

#[test]
fn parse_context_carries_tools_choice_and_history() {
    let tools = json!([
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "g", "description": "G", "strict": true,
            "parameters": {"type": "object"}}}]);
    let mut messages = hi();
    messages.as_array_mut().unwrap().extend([
        json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
        json!({"role": "tool", "tool_call_id": "a", "content": "1"}),
        json!({"role": "tool", "tool_call_id": "b", "content": "2"}),
    ]);
    let out = chat(
        json!({"model": "qwen3", "messages": messages, "tools": tools,
        "parallel_tool_calls": false}),
    );
    let pc = &out["parse_context"];
    assert_eq!(pc["tool_choice"], "auto");
    assert_eq!(pc["parallel_tool_calls"], false);
    assert_eq!(pc["history_tool_call_cnt"], 2);
    assert_eq!(
        pc["tools"],
        json!([
            {"type": "function", "function": {"name": "f", "description": null,
                "parameters": {"type": "object"}}},
            {"type": "function", "function": {"name": "g", "description": "G",
                "parameters": {"type": "object"}, "strict": true}}])
    );
}

#[test]
fn messages_and_responses_renders_as_vllm() {
    let base = golden_server();
    let out = render(
        base,
        "/v1/messages/render",
        json!({"model": "qwen3", "max_tokens": 8, "messages": hi()}),
    );
    assert_eq!(out["reasoning_ended"], false);
    assert_eq!(
        out["parse_context"]["tool_choice"],
        Value::Null,
        "vLLM's converter sets none"
    );
    let out = render(
        base,
        "/v1/responses/render",
        json!({"model": "qwen3", "input": "hi"}),
    );
    assert_eq!(out["reasoning_ended"], Value::Null);
    assert_eq!(out["parse_context"], Value::Null);
    assert_eq!(
        out["reasoning_parser_kwargs"]["chat_template_kwargs"],
        kwargs(json!({"add_generation_prompt": true, "continue_final_message": false}))
    );
}

/// The golden models served with no parsers (`--reasoning-parser none --tool-call-parser none`).
fn no_parsers() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let config = ServerConfig {
            render: RenderOptions {
                reasoning_parser: "none".into(),
                tool_call_parser: "none".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        start_server(golden_registry(), config)
    })
}

#[test]
fn without_parsers_the_engine_decides_and_tool_choice_is_refused() {
    let base = no_parsers();
    let path = "/v1/chat/completions/render";
    let out = render(base, path, json!({"model": "qwen3", "messages": hi()}));
    assert_eq!(out["reasoning_ended"], Value::Null);
    assert_eq!(out["reasoning_parser_kwargs"], Value::Null);
    assert!(out["parse_context"].is_object());
    let out = render(
        base,
        path,
        json!({"model": "qwen3", "messages": hi(), "include_reasoning": false}),
    );
    assert_eq!(out["reasoning_ended"], true);
    let tools =
        json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]);
    let url = format!("{base}{path}");
    for (choice, needle) in [
        (Value::Null, "\"auto\" tool choice requires"),
        (json!("required"), "tool_choice=\"required\" requires"),
        (
            json!({"type": "function", "function": {"name": "f"}}),
            "tool_choice=function \"f\"",
        ),
    ] {
        let mut body = json!({"model": "qwen3", "messages": hi(), "tools": tools});
        if !choice.is_null() {
            body["tool_choice"] = choice;
        }
        assert_error(&post_json(&url, &body), 400, needle, Some("tool_choice"));
    }
    let body = json!({"model": "qwen3", "messages": hi(), "tools": tools, "tool_choice": "none"});
    assert_eq!(post_json(&url, &body).0, 200);
}

/// vLLM's `K2HorizonReasoningParser` refuses a `reasoning_effort` other than high, medium
/// or low (`Unsupported reasoning_effort 'minimal'. Supported values: high, medium, low.`),
/// which vLLM answers with a 400: so do the render and the derender, naming the field.
#[test]
fn k2_horizon_refuses_an_effort_it_has_no_tags_for() {
    let mut config = ServerConfig {
        render: RenderOptions {
            reasoning_parser: "k2_horizon".into(),
            tool_call_parser: "none".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    config.derender.reasoning_parser = "k2_horizon".into();
    let base = start_server(golden_registry(), config);
    let url = format!("{base}/v1/chat/completions/render");
    for effort in ["high", "medium", "low"] {
        let body = json!({"model": "qwen3", "messages": hi(), "reasoning_effort": effort});
        assert_eq!(post_json(&url, &body).0, 200, "{effort}");
    }
    let needle = "Unsupported reasoning_effort 'minimal'. Supported values: high, medium, low.";
    let body = json!({"model": "qwen3", "messages": hi(), "reasoning_effort": "minimal"});
    assert_error(
        &post_json(&url, &body),
        400,
        needle,
        Some("reasoning_effort"),
    );
    let body = json!({"model": "qwen3", "messages": hi(),
                      "chat_template_kwargs": {"reasoning_effort": "minimal"}});
    assert_error(
        &post_json(&url, &body),
        400,
        needle,
        Some("chat_template_kwargs"),
    );
    let derender = json!({"model": "qwen3", "prompt_token_ids": [1, 2],
        "generate_response": {"choices": [{"index": 0, "token_ids": [9707],
                                           "finish_reason": "stop"}]},
        "chat_request": {"messages": hi(), "reasoning_effort": "minimal"}});
    assert_error(
        &post_json(&format!("{base}/v1/chat/completions/derender"), &derender),
        400,
        needle,
        Some("chat_request.reasoning_effort"),
    );
}
