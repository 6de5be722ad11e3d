//! Responses input items → chat messages (vLLM's `construct_chat_messages_with_tool_call`).
//!
//! Items are read in order. `function_call` (and `custom_tool_call`), `reasoning` and
//! assistant `message` items merge into an immediately preceding assistant message when its
//! slot is free (any number of tool calls; one reasoning; one content), else start one.
//! `function_call_output` becomes a `tool` message; user, system and developer messages pass
//! through with their parts in chat's form (`input_text`/`output_text` → `text`,
//! `input_image` → `image_url`). Only an assistant message's first part is read, as vLLM
//! reads it. Other item types (`web_search_call`, `item_reference`, …) are a 400.

use super::bad;
use crate::error::RequestError;
use serde_json::{json, Map, Value};

fn text_of(v: Option<&Value>) -> Option<&str> {
    v.and_then(|v| v.get("text")).and_then(Value::as_str)
}

/// Appends the chat messages of `items`.
pub(super) fn to_messages(items: &[Value], out: &mut Vec<Value>) -> Result<(), RequestError> {
    for (i, item) in items.iter().enumerate() {
        let at = format!("input[{i}]");
        let ty = item.get("type").and_then(Value::as_str);
        let role = item.get("role").and_then(Value::as_str);
        match (ty, role) {
            (Some("function_call" | "custom_tool_call"), _) => {
                let call = tool_call(item, &at)?;
                if let Some(prev) = last_assistant(out) {
                    if let Some(calls) = prev
                        .entry("tool_calls")
                        .or_insert_with(|| Value::Array(Vec::new()))
                        .as_array_mut()
                    {
                        calls.push(call);
                    }
                } else {
                    out.push(json!({"role": "assistant", "tool_calls": [call]}));
                }
            }
            (Some("reasoning"), _) => {
                if item.get("summary").is_none() {
                    return Err(bad(
                        format!("{at}.summary"),
                        format!("{at}.summary: Field required"),
                    ));
                }
                if item
                    .get("encrypted_content")
                    .and_then(Value::as_str)
                    .is_some_and(|e| !e.is_empty())
                {
                    return Err(bad("input", "Encrypted content is not supported."));
                }
                let first = |k: &str| {
                    item.get(k)
                        .and_then(Value::as_array)
                        .and_then(|a| a.first())
                };
                let text = text_of(first("content"))
                    .or_else(|| text_of(first("summary")))
                    .unwrap_or_default();
                match last_assistant(out).filter(|m| !m.contains_key("reasoning")) {
                    Some(prev) => {
                        prev.insert("reasoning".into(), json!(text));
                    }
                    None => out.push(json!({"role": "assistant", "reasoning": text})),
                }
            }
            (Some("function_call_output" | "custom_tool_call_output"), _) => {
                let id = item.get("call_id").and_then(Value::as_str).ok_or_else(|| {
                    bad(
                        format!("{at}.call_id"),
                        format!("{at}.call_id: Field required"),
                    )
                })?;
                let output = match item.get("output") {
                    Some(Value::Array(parts)) => Value::Array(chat_parts(parts, &at)?),
                    Some(v) => v.clone(),
                    None => {
                        return Err(bad(
                            format!("{at}.output"),
                            format!("{at}.output: Field required"),
                        ))
                    }
                };
                out.push(json!({"role": "tool", "content": output, "tool_call_id": id}));
            }
            (Some("message") | None, Some("assistant")) => {
                let text = assistant_text(item, ty.is_some(), &at)?;
                match last_assistant(out).filter(|m| !m.contains_key("content")) {
                    Some(prev) => {
                        prev.insert("content".into(), json!(text));
                    }
                    None => out.push(json!({"role": "assistant", "content": text})),
                }
            }
            (Some("message") | None, Some(r @ ("user" | "system" | "developer"))) => {
                let content = match item.get("content") {
                    Some(Value::Array(parts)) => Value::Array(chat_parts(parts, &at)?),
                    Some(Value::String(s)) => Value::String(s.clone()),
                    _ => {
                        return Err(bad(
                            format!("{at}.content"),
                            "content must be a string or a list of parts",
                        ))
                    }
                };
                out.push(json!({"role": r, "content": content}));
            }
            (other, _) => {
                return Err(bad(
                    "input",
                    format!("Unsupported input item type: {}", other.unwrap_or("(none)")),
                ))
            }
        }
    }
    Ok(())
}

/// The previous message, when it is the assistant's.
fn last_assistant(out: &mut [Value]) -> Option<&mut Map<String, Value>> {
    out.last_mut()
        .and_then(Value::as_object_mut)
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
}

/// A `function_call` / `custom_tool_call` item as a chat tool call.
fn tool_call(item: &Value, at: &str) -> Result<Value, RequestError> {
    let field = |k: &str| {
        item.get(k)
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("{at}.{k}"), format!("{at}.{k}: Field required")))
    };
    let id = field("call_id")?;
    let mut name = field("name")?.to_string();
    if let Some(ns) = item.get("namespace").and_then(Value::as_str) {
        name = format!("{ns}__{name}");
    }
    let arguments = if item["type"] == "custom_tool_call" {
        let input = item.get("input").cloned().unwrap_or(json!(""));
        llm_render_parsers::pyjson::dumps(&json!({"input": input}))
    } else {
        field("arguments")?.to_string()
    };
    Ok(json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}))
}

/// An assistant message's text: a string, or its first part's (vLLM reads only that one).
fn assistant_text(item: &Value, typed: bool, at: &str) -> Result<String, RequestError> {
    match item.get("content") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let first = parts.first().ok_or_else(|| {
                bad(
                    format!("{at}.content"),
                    "an assistant message needs a content part",
                )
            })?;
            let ty = first.get("type").and_then(Value::as_str);
            if ty == Some("output_text") && !typed {
                return Err(bad(
                    format!("{at}.type"),
                    "an assistant message with output_text parts needs \"type\": \"message\"",
                ));
            }
            match (ty, text_of(Some(first))) {
                (Some("refusal"), _) => Err(bad(
                    format!("{at}.content[0]"),
                    "a refusal part cannot be rendered as assistant content",
                )),
                (_, Some(t)) => Ok(t.to_string()),
                _ => Err(bad(format!("{at}.content[0].text"), "Field required")),
            }
        }
        _ => Err(bad(
            format!("{at}.content"),
            "content must be a string or a list of parts",
        )),
    }
}

/// Responses content parts in chat's form.
fn chat_parts(parts: &[Value], at: &str) -> Result<Vec<Value>, RequestError> {
    parts
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let ty = p.get("type").and_then(Value::as_str).unwrap_or_default();
            match ty {
                "input_text" | "output_text" | "text" => {
                    Ok(json!({"type": "text", "text": text_of(Some(p)).unwrap_or_default()}))
                }
                "input_image" => {
                    let url = p.get("image_url").and_then(Value::as_str).ok_or_else(|| {
                        bad(
                            format!("{at}.content[{j}].image_url"),
                            "input_image needs an image_url (file_id is not supported)",
                        )
                    })?;
                    Ok(json!({"type": "image_url", "image_url": {"url": url}}))
                }
                other => Err(bad(
                    "type",
                    format!(
                        "Unsupported chat content part type: '{other}'. Supported types: \
                         'input_text', 'output_text', 'input_image'"
                    ),
                )),
            }
        })
        .collect()
}

/// Whether the last item is an unfinished message or reasoning (its status `in_progress` or
/// `incomplete`): then the template continues it instead of opening a new turn.
pub(super) fn continues_final(items: &[Value]) -> bool {
    items.last().is_some_and(|last| {
        let ty = last
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        let status = last.get("status").and_then(Value::as_str);
        matches!(ty, "message" | "reasoning")
            && matches!(status, Some("in_progress" | "incomplete"))
    })
}
