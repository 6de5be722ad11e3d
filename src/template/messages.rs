//! Chat messages → the `messages` a chat template sees, built as vLLM and transformers build
//! them (docs/api.md, "Template inputs"):
//!
//! 1. vLLM (`vllm/entrypoints/chat_utils.py`): for templates that read content as a string,
//!    text parts are joined with `"\n"` and a null content becomes `""` (`[]` for templates
//!    that iterate parts); an assistant's `tool_calls[].function.arguments` given as a JSON
//!    string is parsed into an object, and an empty or missing one becomes `{}`.
//! 2. transformers `apply_chat_template` (`_normalize_chat_messages`): keys whose value is
//!    `null` are dropped, so templates see them as undefined.
//! 3. transformers `_alias_reasoning_fields`: the first non-null of `reasoning_content`,
//!    `thinking`, `reasoning` is passed as `reasoning_content` (and as `thinking`, placed first).

use crate::error::RequestError;
use crate::protocol::{Field, Message};
use serde_json::{Map, Value};

/// How a template reads `message.content` (vLLM's "chat template content format").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentFormat {
    /// The template concatenates `message.content` as a string: text parts are joined with
    /// `"\n"` and a null content becomes `""`.
    String,
    /// The template iterates content parts (`{"type": "text", ...}`): parts are passed as
    /// given and a null content becomes `[]`.
    OpenAi,
}

impl ContentFormat {
    /// Detects the format from the template source, with the same rule the render goldens
    /// were generated with (`reference/gen_render_goldens.py::template_reads_string_content`):
    /// a template that indexes a part's `type` or loops over `message['content']` reads parts.
    pub fn detect(source: &str) -> ContentFormat {
        const PART_MARKERS: [&str; 6] = [
            "content['type']",
            "content[\"type\"]",
            "content.type",
            "item['type']",
            "for content in message['content']",
            "message.content is not string",
        ];
        if PART_MARKERS.iter().any(|m| source.contains(m)) {
            ContentFormat::OpenAi
        } else {
            ContentFormat::String
        }
    }
}

/// The names a message's reasoning may arrive under, in transformers' priority order.
pub(crate) const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

/// Converts request messages into template messages, collecting their images in order.
pub fn to_template_messages(
    messages: &[Message],
    format: ContentFormat,
    images: &mut Vec<ImageRef>,
) -> Result<Vec<Value>, RequestError> {
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| convert_message(i, m, format, images).map(Value::Object))
        .collect()
}

fn convert_message(
    i: usize,
    msg: &Message,
    format: ContentFormat,
    images: &mut Vec<ImageRef>,
) -> Result<Map<String, Value>, RequestError> {
    let role = match msg.get("role") {
        Some(Field::Str(r)) => r.as_str(),
        Some(_) => {
            return Err(RequestError::invalid(
                format!("messages[{i}].role"),
                format!("messages[{i}].role must be a string"),
            ))
        }
        None => {
            return Err(RequestError::invalid(
                format!("messages[{i}].role"),
                format!("messages[{i}] has no role"),
            ))
        }
    };
    let mut out = Map::with_capacity(msg.len() + 2);
    for (key, value) in msg.iter() {
        let value = match (key, value) {
            // What `convert_content` makes of a string, without building the `Value` twice.
            ("content", Field::Str(s)) => Value::String(s.to_string()),
            ("content", Field::Json(v)) => convert_content(i, v, format, images)?,
            ("tool_calls", Field::Json(v)) if role == "assistant" => convert_tool_calls(i, v)?,
            ("tool_calls", v) if role == "assistant" => convert_tool_calls(i, &v.to_value())?,
            (_, v) => v.to_value(),
        };
        // transformers drops null-valued keys so templates see them as undefined.
        if !value.is_null() {
            out.insert(key.to_owned(), value);
        }
    }
    // vLLM reads a missing content as null (`message.get("content")`): `""` or `[]`.
    if msg.get("content").is_none() {
        out.insert(
            "content".into(),
            convert_content(i, &Value::Null, format, images)?,
        );
    }
    Ok(alias_reasoning(out))
}

/// An image a message refers to, in prompt order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    pub url: String,
    /// Where it came from, for error messages (`messages[1].content[0]`).
    pub param: String,
}

/// The URL of an `image_url` part: `{"image_url": {"url": ...}}` or `{"image_url": "..."}`.
pub(crate) fn image_url(part: &Value) -> Option<&str> {
    match part.get("image_url") {
        Some(Value::String(u)) => Some(u),
        Some(Value::Object(o)) => o.get("url").and_then(Value::as_str),
        _ => None,
    }
}

pub(crate) fn convert_content(
    i: usize,
    content: &Value,
    format: ContentFormat,
    images: &mut Vec<ImageRef>,
) -> Result<Value, RequestError> {
    let param = || format!("messages[{i}].content");
    match content {
        Value::Null => Ok(match format {
            ContentFormat::String => Value::String(String::new()),
            ContentFormat::OpenAi => Value::Array(Vec::new()),
        }),
        Value::String(_) => Ok(content.clone()),
        Value::Array(parts) => {
            let mut out = Vec::with_capacity(parts.len());
            let mut texts: Vec<&str> = Vec::new();
            for (j, part) in parts.iter().enumerate() {
                let at = format!("messages[{i}].content[{j}]");
                match part.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let text = part.get("text").and_then(Value::as_str).ok_or_else(|| {
                            RequestError::invalid(format!("{at}.text"), format!("{at} is a text part without a string `text`"))
                        })?;
                        texts.push(text);
                        out.push(part.clone());
                    }
                    Some("image_url") => {
                        let url = image_url(part).ok_or_else(|| {
                            RequestError::invalid(format!("{at}.image_url"), format!("{at} is an image_url part without a url"))
                        })?;
                        if format == ContentFormat::String {
                            return Err(RequestError::invalid(
                                at,
                                "this model's chat template reads message content as a string and has no place for images",
                            ));
                        }
                        images.push(ImageRef { url: url.to_string(), param: at });
                        // vLLM hands the template `{"type": "image"}`, never the URL.
                        out.push(serde_json::json!({"type": "image"}));
                    }
                    Some(other) => {
                        return Err(RequestError::invalid(
                            format!("{at}.type"),
                            format!("unsupported content part type {other:?} (supported: \"text\", \"image_url\")"),
                        ))
                    }
                    None => return Err(RequestError::invalid(at.clone(), format!("{at} must be an object with a `type`"))),
                }
            }
            Ok(match format {
                ContentFormat::OpenAi => Value::Array(out),
                ContentFormat::String => Value::String(texts.join("\n")),
            })
        }
        _ => Err(RequestError::invalid(
            param(),
            format!("{} must be a string, a list of parts or null", param()),
        )),
    }
}

pub(crate) fn convert_tool_calls(i: usize, calls: &Value) -> Result<Value, RequestError> {
    let Value::Array(list) = calls else {
        return Ok(calls.clone());
    };
    let mut out = Vec::with_capacity(list.len());
    for (j, call) in list.iter().enumerate() {
        let mut call = call.clone();
        if let Some(Value::Object(function)) = call.get_mut("function") {
            let parsed = match function.get("arguments") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(Value::String(s)) if s.is_empty() => Value::Object(Map::new()),
                Some(Value::String(s)) => serde_json::from_str(s).map_err(|e| {
                    let param = format!("messages[{i}].tool_calls[{j}].function.arguments");
                    RequestError::invalid(param.clone(), format!("{param} is not valid JSON: {e}"))
                })?,
                Some(other) => other.clone(),
            };
            function.insert("arguments".into(), parsed);
        }
        out.push(call);
    }
    Ok(Value::Array(out))
}

/// A message's reasoning as templates see it in `reasoning_content`: the first non-null of
/// [`REASONING_FIELDS`].
fn reasoning(msg: &Map<String, Value>) -> Option<&Value> {
    REASONING_FIELDS
        .iter()
        .find_map(|k| msg.get(*k).filter(|v| !v.is_null()))
}

/// transformers: `{"thinking": r, **message, "reasoning_content": r}` when any reasoning field
/// is set. Map insertion keeps an existing key's position, as a Python dict does.
fn alias_reasoning(msg: Map<String, Value>) -> Map<String, Value> {
    let Some(reasoning) = reasoning(&msg).cloned() else {
        return msg;
    };
    let mut out = Map::with_capacity(msg.len() + 2);
    out.insert("thinking".into(), reasoning.clone());
    for (k, v) in msg {
        out.insert(k, v);
    }
    out.insert("reasoning_content".into(), reasoning);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msgs(v: Value) -> Vec<Message> {
        serde_json::from_value(v).unwrap_or_default()
    }

    #[test]
    fn joins_parts_and_parses_arguments() -> Result<(), RequestError> {
        let m = msgs(json!([
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "f", "arguments": "{\"x\": 1}"}}, {"function": {"name": "g", "arguments": ""}}]},
            {"role": "assistant", "content": "ok", "reasoning": "r"}
        ]));
        let out = to_template_messages(&m, ContentFormat::String, &mut Vec::new())?;
        assert_eq!(out[0]["content"], json!("a\nb"));
        assert_eq!(out[1]["content"], json!(""));
        assert_eq!(
            out[1]["tool_calls"][0]["function"]["arguments"],
            json!({"x": 1})
        );
        assert_eq!(out[1]["tool_calls"][1]["function"]["arguments"], json!({}));
        let keys: Vec<&String> = out[2]
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                "thinking",
                "role",
                "content",
                "reasoning",
                "reasoning_content"
            ]
        );
        let out = to_template_messages(&m, ContentFormat::OpenAi, &mut Vec::new())?;
        assert_eq!(out[1]["content"], json!([]));
        Ok(())
    }

    #[test]
    fn rejects_bad_shapes_with_param() {
        for (v, param) in [
            (json!([{"content": "x"}]), "messages[0].role"),
            (
                json!([{"role": "user", "content": 5}]),
                "messages[0].content",
            ),
            (
                json!([{"role": "user", "content": [{"type": "audio"}]}]),
                "messages[0].content[0].type",
            ),
            (
                json!([{"role": "assistant", "tool_calls": [{"function": {"arguments": "{"}}]}]),
                "messages[0].tool_calls[0].function.arguments",
            ),
        ] {
            let err = to_template_messages(&msgs(v), ContentFormat::String, &mut Vec::new()).err();
            assert_eq!(err.as_ref().and_then(|e| e.param()), Some(param));
        }
    }
}
