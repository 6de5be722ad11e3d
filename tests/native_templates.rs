//! Native template renderings (Qwen3, DeepSeek-V3, Llama 3.1) write exactly minijinja's bytes: random
//! conversations shaped like real chats (think blocks, tool calls and results, reasoning
//! fields, tools, kwargs) rendered both ways must give the same prompt, or both the same error. The render goldens
//! cover the native path too (`golden_render.rs` renders over HTTP with it on, and through the
//! CLI with it off).
#![allow(clippy::unwrap_used)]
mod common;
use llm_render::protocol::ChatRequest;
use llm_render::render::{render_chat_prompt, RenderOptions};
use llm_render::template::TemplateEngine;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Text made of the pieces Qwen3's template looks for, plain text, and newline runs.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("<think>".to_string()),
            Just("</think>".to_string()),
            Just("<tool_response>".to_string()),
            Just("</tool_response>".to_string()),
            Just("<|im_end|>".to_string()),
            Just("<|eot_id|>".to_string()),
            Just("\n".to_string()),
            Just("\n\n".to_string()),
            Just(" ".to_string()),
            "[a-zA-Z0-9 .,{}\"]{1,12}",
            "[é日本🤖\u{3000}\t]{1,4}",
        ],
        0..8,
    )
    .prop_map(|parts| parts.concat())
}

fn content() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => text().prop_map(Value::from),
        1 => Just(Value::Null),
        1 => prop::collection::vec(text(), 1..3)
            .prop_map(|t| Value::Array(t.into_iter().map(|t| json!({"type": "text", "text": t})).collect())),
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i32>().prop_map(Value::from),
        prop::sample::select(&[0.5, 1e16, 1.5e-7, 2.0, -0.0][..]).prop_map(Value::from),
        text().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
    ]
}

fn json_object() -> impl Strategy<Value = Value> {
    prop::collection::vec(("[a-z_]{1,6}", json_leaf()), 0..4)
        .prop_map(|kv| Value::Object(kv.into_iter().collect()))
}

fn arguments() -> impl Strategy<Value = Value> {
    prop_oneof![
        json_object().prop_map(|o| Value::String(o.to_string())),
        json_object(),
        Just(Value::String(String::new())),
        Just(Value::String("\"just a string\"".into())),
        Just(Value::String("[1, 2.50, {\"k\": null}]".into())),
        Just(Value::Null),
    ]
}

fn tool_call() -> impl Strategy<Value = Value> {
    // Names with whitespace around them: Llama 3.1's template trims them.
    let name = prop_oneof![4 => "[a-z_]{1,8}", 1 => "[ \n]?[a-z_]{1,8}[ \n\t]?"];
    (name, arguments()).prop_map(|(name, args)| {
        json!({"id": "call_1", "type": "function", "function": {"name": name, "arguments": args}})
    })
}

fn message() -> impl Strategy<Value = Value> {
    let role = prop::sample::select(
        &[
            "system",
            "user",
            "user",
            "assistant",
            "assistant",
            "tool",
            "ipython",
        ][..],
    );
    let reasoning_key = prop::sample::select(&["reasoning_content", "thinking", "reasoning"][..]);
    (
        role,
        content(),
        prop::option::of((
            reasoning_key,
            prop_oneof![text().prop_map(Value::from), Just(Value::Null)],
        )),
        prop::option::of(prop::collection::vec(tool_call(), 0..3)),
    )
        .prop_map(|(role, content, reasoning, calls)| {
            let mut m = json!({"role": role, "content": content});
            if let Some((k, v)) = reasoning {
                m[k] = v;
            }
            if let Some(calls) = calls {
                m["tool_calls"] = Value::Array(calls);
            }
            m
        })
}

fn tool() -> impl Strategy<Value = Value> {
    ("[a-z_]{1,8}", text(), json_object()).prop_map(|(name, desc, props)| {
        json!({"type": "function", "function": {"name": name, "description": desc,
               "parameters": {"type": "object", "properties": props}}})
    })
}

fn kwargs() -> impl Strategy<Value = Value> {
    (
        prop::option::of(prop_oneof![
            Just(json!(true)),
            Just(json!(false)),
            Just(json!(null)),
            Just(json!(0))
        ]),
        prop::option::of(prop::sample::select(
            &[
                "date_string",
                "custom",
                "namespace",
                "content",
                "bos_token",
                "custom_tools",
                "tools_in_user_message",
            ][..],
        )),
    )
        .prop_map(|(thinking, extra)| {
            let mut k = json!({});
            if let Some(t) = thinking {
                k["enable_thinking"] = t;
            }
            if let Some(e) = extra {
                k[e] = json!("x");
            }
            k
        })
}

static NATIVE: AtomicUsize = AtomicUsize::new(0);
static CASES: AtomicUsize = AtomicUsize::new(0);

/// The fixture models whose templates have a native rendering.
const NATIVE_MODELS: [&str; 3] = ["qwen3", "deepseek_v3", "llama3_1"];

fn render(
    model: &str,
    req: &ChatRequest,
    native: bool,
) -> Result<(String, Vec<u32>, bool), String> {
    let reg = common::golden_registry();
    let model = reg.get(Some(model)).unwrap();
    let opts = RenderOptions {
        native_templates: native,
        ..RenderOptions::default()
    };
    render_chat_prompt(&model, req, &opts, None)
        .map(|r| {
            (
                r.prompt.to_string(),
                r.token_ids.to_vec(),
                r.timings.template_engine == Some(TemplateEngine::Native),
            )
        })
        .map_err(|e| e.to_string())
}

proptest! {
    // More cases: NATIVE_TEMPLATE_CASES=200000 cargo test --release --test native_templates
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("NATIVE_TEMPLATE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(3_000)
    ))]
    #[test]
    fn native_equals_minijinja(
        model in prop::sample::select(&NATIVE_MODELS[..]),
        messages in prop::collection::vec(message(), 1..7),
        tools in prop::option::of(prop::collection::vec(tool(), 0..3)),
        kwargs in prop::option::of(kwargs()),
        add_generation_prompt in any::<bool>(),
    ) {
        let mut body = json!({"messages": messages, "add_generation_prompt": add_generation_prompt});
        if let Some(t) = tools { body["tools"] = Value::Array(t); }
        if let Some(k) = kwargs { body["chat_template_kwargs"] = k; }
        let req: ChatRequest = serde_json::from_value(body.clone()).unwrap();
        let fast = render(model, &req, true);
        let reference = render(model, &req, false);
        CASES.fetch_add(1, Ordering::Relaxed);
        if let Ok((_, _, true)) = fast {
            NATIVE.fetch_add(1, Ordering::Relaxed);
        }
        prop_assert_eq!(
            fast.map(|r| (r.0, r.1)),
            reference.map(|r| (r.0, r.1)),
            "{} request {}", model, body
        );
    }
}

/// The property above is only worth something if most cases take the native path.
#[test]
fn most_generated_cases_render_natively() {
    let reg = common::golden_registry();
    for name in NATIVE_MODELS {
        let model = reg.get(Some(name)).unwrap();
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let strategy = (prop::collection::vec(message(), 1..7), any::<bool>());
        let (mut native, total) = (0, 500);
        for _ in 0..total {
            let (messages, agp) = strategy.new_tree(&mut runner).unwrap().current();
            let req: ChatRequest =
                serde_json::from_value(json!({"messages": messages, "add_generation_prompt": agp}))
                    .unwrap();
            if let Ok(r) = render_chat_prompt(&model, &req, &RenderOptions::default(), None) {
                native += usize::from(r.timings.template_engine == Some(TemplateEngine::Native));
            }
        }
        assert!(
            native * 2 > total,
            "{name}: only {native} of {total} rendered natively"
        );
    }
}

#[test]
fn other_templates_and_request_templates_use_minijinja() {
    let reg = common::golden_registry();
    let req: ChatRequest =
        serde_json::from_value(json!({"messages": [{"role": "user", "content": "hi"}]})).unwrap();
    for name in common::GOLDEN_MODELS {
        let model = reg.get(Some(name)).unwrap();
        let r = render_chat_prompt(&model, &req, &RenderOptions::default(), None).unwrap();
        assert_eq!(
            r.timings.template_engine,
            Some(if NATIVE_MODELS.contains(&name) {
                TemplateEngine::Native
            } else {
                TemplateEngine::Minijinja
            }),
            "{name}"
        );
    }
    let model = reg.get(Some("qwen3")).unwrap();
    let mut edited = req.clone();
    edited.chat_template = Some("{{ messages[0].content }}".into());
    let opts = RenderOptions {
        trust_request_chat_template: true,
        ..RenderOptions::default()
    };
    let r = render_chat_prompt(&model, &edited, &opts, None).unwrap();
    assert_eq!(r.timings.template_engine, Some(TemplateEngine::Minijinja));
    assert_eq!(r.prompt.as_str(), "hi");
}
