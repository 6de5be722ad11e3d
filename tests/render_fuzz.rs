//! Bad input never panics the chat render: random JSON shaped like chat requests (messages,
//! tools and template kwargs of any structure, strings with markers and multi-byte
//! whitespace) through every golden model. Each one renders or is a clean error, and the same
//! one whether or not a native template rendering is used. Bodies are parsed as the server
//! parses them (strings sliced from the body), which must read as a plain parse. The same
//! requests through gpt-oss's Harmony render, which has no template.
#![allow(clippy::unwrap_used)]
mod common;
use proptest::prelude::*;
use serde_json::{json, Value};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z<>|{}\\[\\] \u{3000}é🤖\n_]{0,12}".prop_map(Value::from),
        // Long enough to be kept as a slice of the body, escapes included (which are not).
        "[a-z<>|{}\\[\\] \u{3000}é🤖\n_\"\\\\]{30,60}".prop_map(Value::from),
        prop::sample::select(
            &[
                "user",
                "assistant",
                "system",
                "tool",
                "text",
                "image_url",
                "function",
                "content",
                "role",
                "tool_calls",
                "name",
                "arguments",
                "type",
                "reasoning_content",
                "<|im_start|>",
                "<think>",
                "</think>",
                "<tool_call>",
                "{}",
                "{\"a\":1}"
            ][..]
        )
        .prop_map(Value::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(
                        &[
                            "role",
                            "content",
                            "tool_calls",
                            "function",
                            "name",
                            "arguments",
                            "type",
                            "text",
                            "image_url",
                            "url",
                            "id",
                            "reasoning_content",
                            "thinking",
                            "tool_call_id",
                            "parameters",
                            "properties"
                        ][..]
                    ),
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(
                kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
            )),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]
    #[test]
    fn chat_render_never_panics(messages in prop::collection::vec(value(), 0..5), tools in prop::option::of(value()), kwargs in prop::option::of(value()), model in 0usize..4) {
        let reg = common::golden_registry();
        let name = common::GOLDEN_MODELS[model];
        let m = reg.get(Some(name)).unwrap();
        let mut body = json!({"messages": messages});
        if let Some(t) = tools { body["tools"] = t; }
        if let Some(k) = kwargs { body["chat_template_kwargs"] = k; }
        let bytes = serde_json::to_vec(&body).unwrap();
        // The server's parse (strings sliced from the body) reads as the plain one.
        let shared = llm_render::protocol::parse_json_shared::<llm_render::protocol::ChatRequest>(&bytes::Bytes::from(bytes.clone()));
        let plain = llm_render::protocol::parse_json::<llm_render::protocol::ChatRequest>(&bytes);
        prop_assert_eq!(
            shared.as_ref().map(|r| serde_json::to_value(&r.messages).unwrap()).map_err(|e| e.to_string()),
            plain.as_ref().map(|r| serde_json::to_value(&r.messages).unwrap()).map_err(|e| e.to_string())
        );
        if let Ok(req) = shared {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| llm_render::render::render_chat(&m, &req, &Default::default(), None)));
            prop_assert!(r.is_ok(), "panic on {}", body);
            // Where a native template exists, it must agree with minijinja on any input:
            // the same token IDs, or the same error.
            let jinja = llm_render::render::RenderOptions { native_templates: false, ..Default::default() };
            let ids = |o: &llm_render::render::RenderOptions| {
                llm_render::render::render_chat_prompt(&m, &req, o, None).map(|r| r.token_ids).map_err(|e| e.to_string())
            };
            prop_assert_eq!(ids(&Default::default()), ids(&jinja), "on {}", body);
        }
    }
}

fn gpt_oss() -> std::sync::Arc<llm_render::model::Model> {
    static M: std::sync::OnceLock<std::sync::Arc<llm_render::model::Model>> =
        std::sync::OnceLock::new();
    M.get_or_init(|| {
        let dir = common::fixtures().join("models/gpt_oss");
        std::sync::Arc::new(
            llm_render::model::Model::load_dir("gpt-oss", &dir, &Default::default()).unwrap(),
        )
    })
    .clone()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]
    /// The Harmony render (gpt-oss) on the same random requests: a render or a clean error.
    #[test]
    fn harmony_render_never_panics(
        messages in prop::collection::vec(value(), 0..5),
        tools in prop::option::of(value()),
        effort in prop::option::of(prop::sample::select(&["low", "high", "none", "minimal", "x"][..])),
    ) {
        let mut body = json!({"messages": messages});
        if let Some(t) = tools { body["tools"] = t; }
        if let Some(e) = effort { body["reasoning_effort"] = e.into(); }
        let bytes = serde_json::to_vec(&body).unwrap();
        if let Ok(req) = llm_render::protocol::parse_json::<llm_render::protocol::ChatRequest>(&bytes) {
            let m = gpt_oss();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                llm_render::render::render_chat(&m, &req, &Default::default(), None)
            }));
            prop_assert!(r.is_ok(), "panic on {}", body);
        }
    }
}
