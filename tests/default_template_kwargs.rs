//! `--default-chat-template-kwargs` (vLLM's flag): template kwargs every chat request gets
//! unless it sets the key itself, reaching the template, the reasoning parser of the render
//! (`reasoning_ended`, `reasoning_parser_kwargs`) and of the derender. Includes vLLM's
//! `tests/entrypoints/scale_out/render/test_render_reasoning.py::
//! test_reasoning_parser_checks_prompt_and_forwards_template_kwargs` (`trr_`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use llm_render::server::ServerConfig;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// A Qwen3 server with the qwen3 reasoning parser and these defaults.
fn server(defaults: Value) -> String {
    let defaults: Arc<Map<String, Value>> = Arc::new(defaults.as_object().cloned().unwrap());
    let mut config = ServerConfig::default();
    config.render.reasoning_parser = "qwen3".into();
    config.render.default_chat_template_kwargs = defaults.clone();
    config.derender.reasoning_parser = "qwen3".into();
    config.derender.default_chat_template_kwargs = defaults;
    common::start_server(common::qwen3_only(), config)
}

fn render(base: &str, extra: Value) -> Value {
    let mut body = json!({"model": "qwen3", "messages": [{"role": "user", "content": "Hi"}]});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    common::post_ok(&format!("{base}/v1/chat/completions/render"), &body)
}

#[test]
fn trr_test_reasoning_parser_checks_prompt_and_forwards_template_kwargs() {
    let base = server(json!({"enable_thinking": true}));
    let out = render(
        &base,
        json!({"include_reasoning": true, "chat_template_kwargs": {"enable_thinking": false}}),
    );
    let kwargs = &out["reasoning_parser_kwargs"]["chat_template_kwargs"];
    assert_eq!(kwargs["enable_thinking"], false, "{out}");
    // The prompt was checked: thinking off, Qwen3's template closed the think block.
    assert_eq!(out["reasoning_ended"], true);
}

/// A default applies where the request is silent, as if the request had sent it: the same
/// tokens, `reasoning_ended` and parser kwargs; the request's own key, or its
/// `reasoning_effort`, wins.
#[test]
fn a_default_applies_where_the_request_is_silent() {
    let base = server(json!({"enable_thinking": false}));
    let plain = server(json!({}));
    let silent = render(&base, json!({}));
    let explicit = render(
        &plain,
        json!({"chat_template_kwargs": {"enable_thinking": false}}),
    );
    assert_eq!(silent["token_ids"], explicit["token_ids"]);
    assert_eq!(silent["reasoning_ended"], true);
    assert_eq!(
        silent["reasoning_parser_kwargs"],
        explicit["reasoning_parser_kwargs"]
    );
    let thinking = render(&plain, json!({}));
    assert_ne!(silent["token_ids"], thinking["token_ids"]);
    assert_eq!(thinking["reasoning_ended"], false);
    for request in [
        json!({"chat_template_kwargs": {"enable_thinking": true}}),
        json!({"reasoning_effort": "high"}),
    ] {
        let out = render(&base, request.clone());
        assert_eq!(out["token_ids"], thinking["token_ids"], "{request}");
        assert_eq!(out["reasoning_ended"], false, "{request}");
    }
    // `/tokenize` renders with the same defaults.
    let tokenize = common::post_ok(
        &format!("{base}/tokenize"),
        &json!({"model": "qwen3", "messages": [{"role": "user", "content": "Hi"}],
                "add_generation_prompt": true}),
    );
    assert_eq!(tokenize["tokens"], silent["token_ids"]);
}

/// The derender's reasoning parser is built with the defaults under the request's kwargs,
/// as vLLM's derender merges them: thinking off by default reads the output as content.
#[test]
fn the_derender_parses_with_the_defaults() {
    let model = common::qwen3_only().get(Some("qwen3")).unwrap();
    let ids = model.encode("<think>plan</think>answer", false).unwrap();
    let derender = |base: &str, chat: Value| {
        let body = json!({"model": "qwen3", "chat_request": chat,
            "generate_response": {"choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}]}});
        common::post_ok(&format!("{base}/v1/chat/completions/derender"), &body)["choices"][0]
            ["message"]
            .clone()
    };
    let messages = json!([{"role": "user", "content": "Hi"}]);
    let off = server(json!({"enable_thinking": false}));
    let msg = derender(&off, json!({"model": "qwen3", "messages": messages}));
    assert_eq!(msg["content"], "<think>plan</think>answer", "{msg}");
    let on = json!({"model": "qwen3", "messages": messages,
                    "chat_template_kwargs": {"enable_thinking": true}});
    let msg = derender(&off, on);
    assert_eq!(msg["reasoning"], "plan", "{msg}");
    assert_eq!(msg["content"], "answer", "{msg}");
}
