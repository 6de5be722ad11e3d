//! Anthropic content blocks → chat messages (see the module above for the rules).

use super::{bad, BILLING_HEADER, BLOCK_TYPES};
use crate::error::RequestError;
use serde_json::{json, Map, Value};

/// The top-level `system`: a string as it is, or its text blocks joined with `""`.
pub(super) fn system_text(system: Option<&Value>) -> Result<String, RequestError> {
    match system {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(blocks @ Value::Array(list)) => {
            check_blocks(blocks, "system", false)?;
            Ok(list
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .filter(|t| !t.is_empty() && !t.starts_with(BILLING_HEADER))
                .collect())
        }
        Some(_) => Err(bad(
            "system",
            "system must be a string or a list of content blocks",
        )),
    }
}

/// A `role: "system"` message's text (billing headers dropped).
pub(super) fn inline_system_text(content: &Value) -> String {
    match content {
        Value::String(s) if s.starts_with(BILLING_HEADER) => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(list) => list
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .filter(|t| !t.is_empty() && !t.starts_with(BILLING_HEADER))
            .collect(),
        _ => String::new(),
    }
}

/// vLLM's block validators: a known `type`, tool changes only in system messages and with
/// their `tool`.
pub(super) fn check_blocks(
    content: &Value,
    at: &str,
    system_message: bool,
) -> Result<(), RequestError> {
    let Value::Array(blocks) = content else {
        return Ok(());
    };
    for (j, b) in blocks.iter().enumerate() {
        let at = format!("{at}[{j}]");
        let ty = b.get("type").and_then(Value::as_str).unwrap_or_default();
        if !BLOCK_TYPES.contains(&ty) {
            return Err(bad(
                format!("{at}.type"),
                format!("Input should be one of {BLOCK_TYPES:?}, got {ty:?}"),
            ));
        }
        if matches!(ty, "tool_addition" | "tool_removal") {
            if !system_message {
                return Err(bad(
                    at,
                    format!("{ty} blocks are only allowed in messages with role \"system\""),
                ));
            }
            let tool = b
                .get("tool")
                .filter(|t| t.is_object())
                .ok_or_else(|| bad(&at, format!("tool is required for {ty} blocks")))?;
            let kind = tool.get("type").and_then(Value::as_str);
            if ty == "tool_removal" && kind != Some("tool_reference") {
                return Err(bad(at, "tool_removal only accepts a tool_reference"));
            }
        }
    }
    Ok(())
}

/// An image block's URL: `url` sources as they are, the rest as a base64 `data:` URL.
pub(super) fn image_url(block: &Value) -> Value {
    let source = block.get("source");
    let get = |k: &str| {
        source
            .and_then(|s| s.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let url = if get("type") == "url" {
        get("url").to_string()
    } else {
        let media = Some(get("media_type"))
            .filter(|m| !m.is_empty())
            .unwrap_or("image/jpeg");
        format!("data:{media};base64,{}", get("data"))
    };
    json!({"type": "image_url", "image_url": {"url": url}})
}

/// One user or assistant message, appended to `chat` (tool results first).
pub(super) fn convert_message(role: &str, content: &Value, chat: &mut Vec<Value>) {
    let blocks = match content {
        Value::String(s) => {
            chat.push(json!({"role": role, "content": s}));
            return;
        }
        Value::Array(b) => b,
        _ => return,
    };
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    let mut reasoning: Option<String> = None;
    for b in blocks {
        let text = |k: &str| b.get(k).and_then(Value::as_str);
        match text("type").unwrap_or_default() {
            "text" => {
                if let Some(t) = text("text").filter(|t| !t.is_empty()) {
                    parts.push(json!({"type": "text", "text": t}));
                }
            }
            "image" if b.get("source").is_some() => parts.push(image_url(b)),
            "thinking" => {
                if let Some(t) = text("thinking") {
                    reasoning.get_or_insert_with(String::new).push_str(t);
                }
            }
            "tool_use" => {
                let id = text("id")
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("call_{}", crate::protocol::unix_now()));
                let input = b
                    .get("input")
                    .filter(|v| v.is_object())
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                calls.push(json!({"id": id, "type": "function", "function": {
                    "name": text("name").unwrap_or_default(),
                    "arguments": llm_render_parsers::pyjson::dumps(&input)}}));
            }
            "tool_result" if role == "user" => tool_result(b, chat),
            "tool_result" => {
                let shown = match b.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => py_repr(v),
                    None => "None".into(),
                };
                parts.push(json!({"type": "text", "text": format!("Tool result: {shown}")}));
            }
            _ => {}
        }
    }
    let mut msg = Map::new();
    msg.insert("role".into(), Value::String(role.into()));
    if let Some(r) = reasoning {
        msg.insert("reasoning".into(), Value::String(r));
    }
    if !calls.is_empty() {
        msg.insert("tool_calls".into(), Value::Array(calls));
    }
    match parts.len() {
        0 => {}
        1 if parts[0]["type"] == "text" => {
            msg.insert("content".into(), parts[0]["text"].clone());
        }
        _ => {
            msg.insert("content".into(), Value::Array(parts));
        }
    }
    if role == "assistant" || msg.contains_key("content") {
        chat.push(Value::Object(msg));
    }
}

/// A user message's `tool_result`: a `tool` message, then its images as a user message, then
/// its tool references as a second `tool` message.
fn tool_result(b: &Value, chat: &mut Vec<Value>) {
    let id = b
        .get("tool_use_id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (text, images, refs) = match b.get("content") {
        Some(Value::String(s)) => (s.clone(), Vec::new(), Vec::new()),
        Some(Value::Array(items)) => {
            let ty = |i: &Value| i.get("type").and_then(Value::as_str).map(str::to_string);
            let texts: Vec<&str> = items
                .iter()
                .filter(|i| ty(i).as_deref() == Some("text"))
                .map(|i| i.get("text").and_then(Value::as_str).unwrap_or_default())
                .collect();
            let images: Vec<Value> = items
                .iter()
                .filter(|i| ty(i).as_deref() == Some("image"))
                .map(image_url)
                .collect();
            let refs: Vec<Value> = items
                .iter()
                .filter(|i| ty(i).as_deref() == Some("tool_reference"))
                .map(|i| {
                    let name = i
                        .get("tool_name")
                        .or_else(|| i.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    json!({"type": "tool_reference", "name": name})
                })
                .collect();
            (texts.join("\n"), images, refs)
        }
        _ => (String::new(), Vec::new(), Vec::new()),
    };
    chat.push(json!({"role": "tool", "tool_call_id": id, "content": text}));
    if !images.is_empty() {
        chat.push(json!({"role": "user", "content": images}));
    }
    if !refs.is_empty() {
        chat.push(json!({"role": "tool", "tool_call_id": id, "content": refs}));
    }
}

/// Python's `str()` of a JSON value inside a container (`repr`): what vLLM's f-string makes
/// of a non-string `tool_result` content in an assistant message.
fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(f)) => llm_render_parsers::pyjson::py_float_repr(f),
            _ => n.to_string(),
        },
        Value::String(s) => {
            let quote = if s.contains('\'') && !s.contains('"') {
                '"'
            } else {
                '\''
            };
            let mut out = String::with_capacity(s.len() + 2);
            out.push(quote);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                        out.push_str(&format!("\\x{:02x}", c as u32))
                    }
                    c => out.push(c),
                }
            }
            out.push(quote);
            out
        }
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(py_repr).collect();
            format!("[{}]", inner.join(", "))
        }
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", py_repr(&Value::String(k.clone())), py_repr(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}
