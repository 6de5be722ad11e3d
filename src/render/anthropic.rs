//! `POST /v1/messages/render`: an Anthropic Messages request → the chat request vLLM makes of
//! it (`protocol::anthropic`) → the chat render. Its `GenerateRequest` is a chat render's.
//!
//! Two facts of the model's template steer the conversion, probed once per model as vLLM
//! probes them at startup (`anthropic/serving.py`):
//! * whether it refuses a `system` message after the first (a [system, user, system, user]
//!   conversation fails to render, with or without tools): then inline system messages join
//!   the leading one. For gpt-oss vLLM asks the chat template, not Harmony: without one,
//!   they join;
//! * what `thinking: {"type": "disabled"}` becomes: `reasoning_effort: "none"`, unless the
//!   template renders `none` like a thinking effort (or fails on it), where it is `low`.

use super::chat::{render_chat_prompt, render_template};
use super::RenderOptions;
use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::anthropic::{to_chat, MessagesSettings};
use crate::protocol::ChatRequest;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The chat request for a Messages body, validated as vLLM's `AnthropicMessagesRequest`.
pub fn messages_to_chat(
    model: &Model,
    body: &Value,
    opts: &RenderOptions,
) -> Result<ChatRequest, RequestError> {
    let chat = messages_to_chat_map(model, body, opts)?;
    ChatRequest::from_converted(&chat, crate::protocol::ConvertedFrom::Messages)
}

/// The chat request a Messages body converts to, as JSON (what derender reads).
pub fn messages_to_chat_map(
    model: &Model,
    body: &Value,
    opts: &RenderOptions,
) -> Result<serde_json::Map<String, Value>, RequestError> {
    to_chat(body, &settings(model, opts))
}

/// The model's probed settings (cached per model and chat template).
fn settings(model: &Model, opts: &RenderOptions) -> MessagesSettings {
    static CACHE: OnceLock<Mutex<HashMap<String, MessagesSettings>>> = OnceLock::new();
    // The template is part of the key: what is probed is the template, and servers in one
    // process (tests, a reload) may serve one model name with different templates.
    let mut template = blake3::Hasher::new();
    for source in model.templates.sources() {
        template.update(source.as_bytes()).update(b"\0");
    }
    let key = format!(
        "{}\0{}\0{}",
        model.name,
        model.source,
        template.finalize().to_hex()
    );
    let cache = CACHE.get_or_init(Default::default);
    if let Some(s) = cache.lock().ok().and_then(|c| c.get(&key).copied()) {
        return s;
    }
    let s = MessagesSettings {
        merge_inline_system: refuses_inline_system(model, opts),
        disabled_effort: disabled_effort(model, opts),
    };
    if let Ok(mut c) = cache.lock() {
        c.insert(key, s);
    }
    s
}

/// The prompt IDs of a probe chat, or `None` when it does not render.
fn probe(model: &Model, opts: &RenderOptions, chat: Value) -> Option<Vec<u32>> {
    let req: ChatRequest = serde_json::from_value(chat).ok()?;
    render_chat_prompt(model, &req, opts, None)
        .ok()
        .map(|r| r.token_ids.to_vec())
}

fn refuses_inline_system(model: &Model, opts: &RenderOptions) -> bool {
    // For gpt-oss too, vLLM probes the chat template, not Harmony
    // (`_should_merge_inline_system`), and merges when there is none.
    let harmony = model.harmony.is_some();
    if harmony && model.templates.is_empty() {
        return true;
    }
    let messages = json!([
        {"role": "system", "content": "t"}, {"role": "user", "content": "t"},
        {"role": "system", "content": "t"}, {"role": "user", "content": "t"}]);
    [Value::Null, json!([])].into_iter().any(|tools| {
        let chat = json!({"messages": messages, "tools": tools, "add_generation_prompt": false});
        if harmony {
            return serde_json::from_value::<ChatRequest>(chat).map_or(true, |req| {
                let t0 = std::time::Instant::now();
                render_template(model, &req, opts, None, t0).is_err()
            });
        }
        probe(model, opts, chat).is_none()
    })
}

fn disabled_effort(model: &Model, opts: &RenderOptions) -> &'static str {
    let render = |effort: &str| {
        probe(
            model,
            opts,
            json!({"messages": [{"role": "user", "content": "Hi"}], "reasoning_effort": effort}),
        )
    };
    let Some(none) = render("none") else {
        return "low";
    };
    let ignored = ["low", "medium", "high", "xhigh", "max"]
        .iter()
        .any(|e| render(e).as_ref() == Some(&none));
    if ignored {
        "low"
    } else {
        "none"
    }
}
