//! `POST /v1/messages/render`: an Anthropic Messages request, validated as vLLM's
//! `AnthropicMessagesRequest` and converted to the chat request vLLM renders for it
//! (`vllm/entrypoints/anthropic/protocol.py`, `serving.py:to_chat_completion_request`, 0.33).
//!
//! The conversion, in vLLM's order:
//! * `system` (a string, or text blocks joined with `""`; blocks starting with
//!   `x-anthropic-billing-header` dropped) becomes the first message; `role: "system"`
//!   entries of `messages` join it (after it, with `""`) when the template refuses
//!   non-leading system messages, else stay where they are.
//! * Blocks: `text` → text parts (one part collapses to a string), `image` → `image_url`
//!   (`url` sources as they are, others as a `data:` URL), `thinking` → the message's
//!   `reasoning`, `tool_use` → `tool_calls` (arguments as `json.dumps(input)`),
//!   `tool_result` in a user message → a `tool` message placed before the rest of that
//!   message (text parts joined with `"\n"`, images in a following user message);
//!   `redacted_thinking` and `tool_reference` are dropped. A user message left empty is
//!   dropped; an assistant one is kept.
//! * `tools` → function tools (`input_schema` gains `"type": "object"` when it has no type);
//!   `tool_choice` `auto`/`any`/`none`/`tool` → `auto`/`required`/`none`/the named function,
//!   `disable_parallel_tool_use` → `parallel_tool_calls: false`.
//! * `stop_sequences` → `stop`, `max_tokens` → `max_tokens`, `thinking.disabled` →
//!   `reasoning_effort` (see `render::anthropic`), `output_config.effort` →
//!   `reasoning_effort`, `output_config.format.schema` → a `json_schema` `response_format`,
//!   `stream` → `stream` with `stream_options: {include_usage, continuous_usage_stats}`.
//!
//! Unknown fields are ignored, as pydantic's default for this model. Errors are OpenAI's
//! shape (vLLM's render routes do not translate them), with `param` the field's path.

mod blocks;
#[cfg(test)]
mod tests;
mod tools;

use crate::error::RequestError;
use blocks::{check_blocks, convert_message, inline_system_text, system_text};
use serde_json::{json, Map, Value};

/// What the conversion needs to know of the model's template (`render::anthropic` probes it).
#[derive(Debug, Clone, Copy)]
pub struct MessagesSettings {
    /// The template refuses `system` after the first message: inline ones join the first.
    pub merge_inline_system: bool,
    /// `reasoning_effort` for `thinking: {"type": "disabled"}` (`none`, or `low` where the
    /// template ignores `none`).
    pub disabled_effort: &'static str,
}

/// vLLM's `VLLM_MAX_STOP_STRINGS` default.
const MAX_STOP_SEQUENCES: usize = 4;
const BILLING_HEADER: &str = "x-anthropic-billing-header";
const BLOCK_TYPES: [&str; 9] = [
    "text",
    "image",
    "tool_use",
    "tool_result",
    "tool_reference",
    "thinking",
    "redacted_thinking",
    "tool_addition",
    "tool_removal",
];
const EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

fn bad(param: impl Into<String>, message: impl Into<String>) -> RequestError {
    RequestError::invalid(param, message)
}

/// A positive integer as pydantic's lax `int` reads it: `10`, `10.0` or `"10"`.
fn lax_int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Validates `body` as vLLM's model does and converts it to a chat request.
pub fn to_chat(body: &Value, s: &MessagesSettings) -> Result<Map<String, Value>, RequestError> {
    let req = body
        .as_object()
        .ok_or_else(|| RequestError::InvalidRequest {
            message: "the request body must be a JSON object".into(),
            param: None,
        })?;
    let model = match req.get("model") {
        Some(Value::String(m)) if !m.is_empty() => m.clone(),
        Some(Value::String(_)) => return Err(bad("model", "Model is required")),
        None => return Err(bad("model", "model: Field required")),
        Some(_) => return Err(bad("model", "model: Input should be a valid string")),
    };
    let max_tokens = match req.get("max_tokens") {
        None => return Err(bad("max_tokens", "max_tokens: Field required")),
        Some(v) => lax_int(v)
            .ok_or_else(|| bad("max_tokens", "max_tokens: Input should be a valid integer"))?,
    };
    if max_tokens <= 0 {
        return Err(bad("max_tokens", "max_tokens must be positive"));
    }
    let messages = match req.get("messages") {
        Some(Value::Array(m)) => m,
        None => return Err(bad("messages", "messages: Field required")),
        Some(_) => return Err(bad("messages", "messages: Input should be a valid list")),
    };

    let mut out = Map::new();
    out.insert("model".into(), Value::String(model));
    out.insert("messages".into(), Value::Array(Vec::new()));
    let mut chat = Vec::new();
    let mut system = system_text(req.get("system"))?;
    for (i, m) in messages.iter().enumerate() {
        let at = format!("messages[{i}]");
        let role = m.get("role").and_then(Value::as_str);
        let role = match role {
            Some(r @ ("user" | "assistant" | "system")) => r,
            _ => {
                return Err(bad(
                    format!("{at}.role"),
                    "role must be one of 'user', 'assistant', 'system'",
                ))
            }
        };
        let content = m
            .get("content")
            .filter(|c| c.is_string() || c.is_array())
            .ok_or_else(|| {
                bad(
                    format!("{at}.content"),
                    "content must be a string or a list of content blocks",
                )
            })?;
        check_blocks(content, &format!("{at}.content"), role == "system")?;
        if role == "system" {
            let text = inline_system_text(content);
            if s.merge_inline_system {
                system.push_str(&text);
            } else if !text.is_empty() {
                chat.push(json!({"role": "system", "content": text}));
            }
            continue;
        }
        convert_message(role, content, &mut chat);
    }
    if !system.is_empty() {
        chat.insert(0, json!({"role": "system", "content": system}));
    }
    out.insert("messages".into(), Value::Array(chat));
    out.insert("max_tokens".into(), json!(max_tokens));
    out.insert("max_completion_tokens".into(), json!(max_tokens));

    if let Some(stops) = req.get("stop_sequences").filter(|v| !v.is_null()) {
        let list = stops
            .as_array()
            .filter(|l| l.iter().all(Value::is_string))
            .ok_or_else(|| bad("stop_sequences", "stop_sequences must be a list of strings"))?;
        if list.len() > MAX_STOP_SEQUENCES {
            return Err(bad(
                "stop_sequences",
                format!("stop_sequences should have at most {MAX_STOP_SEQUENCES} items"),
            ));
        }
        out.insert("stop".into(), stops.clone());
    }
    for key in ["temperature", "top_p"] {
        if let Some(v) = req.get(key).filter(|v| !v.is_null()) {
            if !v.is_number() {
                return Err(bad(key, format!("{key} must be a number")));
            }
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(v) = req.get("top_k").filter(|v| !v.is_null()) {
        let k = lax_int(v).ok_or_else(|| bad("top_k", "top_k must be an integer"))?;
        out.insert("top_k".into(), json!(k));
    }
    for key in [
        "cache_salt",
        "kv_transfer_params",
        "ec_transfer_params",
        "vllm_xargs",
        "chat_template_kwargs",
        "watermarking",
        "mm_payload",
        "return_mm_kwargs",
        "skip_pixel_values",
    ] {
        if let Some(v) = req.get(key).filter(|v| !v.is_null()) {
            out.insert(key.into(), v.clone());
        }
    }
    if req.get("stream").and_then(Value::as_bool) == Some(true) {
        out.insert("stream".into(), Value::Bool(true));
        out.insert(
            "stream_options".into(),
            json!({"include_usage": true, "continuous_usage_stats": true}),
        );
    }
    output_config(req.get("output_config"), &mut out)?;
    thinking(req, max_tokens, s, &mut out)?;
    tools::tools(req, &mut out)?;
    Ok(out)
}

/// `output_config`: `effort` → `reasoning_effort`; `format.schema` → `response_format`.
fn output_config(cfg: Option<&Value>, out: &mut Map<String, Value>) -> Result<(), RequestError> {
    let Some(cfg) = cfg.filter(|v| !v.is_null()) else {
        return Ok(());
    };
    let cfg = cfg
        .as_object()
        .ok_or_else(|| bad("output_config", "output_config must be an object"))?;
    match cfg.get("effort") {
        None | Some(Value::Null) => {}
        Some(Value::String(e)) if EFFORTS.contains(&e.as_str()) => {
            out.insert("reasoning_effort".into(), Value::String(e.clone()));
        }
        Some(_) => {
            return Err(bad(
                "output_config.effort",
                format!("Input should be one of {EFFORTS:?}"),
            ))
        }
    }
    if let Some(format) = cfg.get("format").filter(|v| !v.is_null()) {
        let ty = format
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("json_schema");
        if ty != "json_schema" {
            return Err(bad(
                "output_config.format.type",
                "Input should be 'json_schema'",
            ));
        }
        if let Some(schema) = format
            .get("schema")
            .or_else(|| format.get("json_schema"))
            .filter(|v| !v.is_null())
        {
            out.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": "json_schema", "schema": schema}}),
            );
        }
    }
    Ok(())
}

/// `thinking`: `enabled` (a budget of at least 1,024 below `max_tokens`) sets
/// `thinking_token_budget`; `disabled` sets `reasoning_effort`; `adaptive` nothing.
fn thinking(
    req: &Map<String, Value>,
    max_tokens: i64,
    s: &MessagesSettings,
    out: &mut Map<String, Value>,
) -> Result<(), RequestError> {
    let Some(t) = req.get("thinking").filter(|v| !v.is_null()) else {
        return Ok(());
    };
    match t.get("type").and_then(Value::as_str) {
        Some("enabled") => {
            let budget = t.get("budget_tokens").and_then(lax_int).ok_or_else(|| {
                bad(
                    "thinking.budget_tokens",
                    "thinking.budget_tokens: Field required",
                )
            })?;
            if budget < 1024 {
                return Err(bad(
                    "thinking.budget_tokens",
                    "Input should be greater than or equal to 1024",
                ));
            }
            let remote_decode = req
                .get("kv_transfer_params")
                .and_then(|k| k.get("do_remote_decode"))
                .is_some_and(|v| !v.is_null() && v != &Value::Bool(false));
            if budget >= max_tokens && !remote_decode {
                return Err(bad(
                    "thinking",
                    "thinking.budget_tokens must be less than max_tokens",
                ));
            }
            out.insert("thinking_token_budget".into(), json!(budget));
        }
        Some("disabled") => {
            out.insert(
                "reasoning_effort".into(),
                Value::String(s.disabled_effort.into()),
            );
        }
        Some("adaptive") => {}
        _ => {
            return Err(bad(
                "thinking.type",
                "Input tag should be one of 'enabled', 'disabled', 'adaptive'",
            ))
        }
    }
    Ok(())
}
