//! A Responses request for gpt-oss → Harmony messages, as vLLM 0.33 builds them
//! (`OnlineRenderer._render_responses_with_harmony`, `vllm/renderers/online_renderer.py`),
//! not through its chat conversion:
//! * the preamble (`harmony_utils.build_harmony_preamble`): `instructions`, or when it is
//!   absent (null) a leading `system`/`developer` item's text; the request's tools when one
//!   of them is not a builtin (`has_custom_tools`; `mcp` tools count as none), whatever the
//!   `tool_choice`; `reasoning.effort`;
//! * `previous_input_messages` (vLLM's `construct_harmony_previous_input_messages`), its
//!   system and developer messages left out;
//! * a string `input` as a user message; each item as `response_input_to_harmony` converts
//!   it: a message as is (an assistant's on `final`, a system or developer one as developer
//!   instructions, dropped when empty), a `reasoning` item's `content` texts joined by `\n`
//!   on `analysis` (its summary is not read; none, no message), a `function_call` as a call,
//!   a `function_call_output` as the result of the earlier call with its `call_id`.
//!
//! No tool server here: builtin tools (browser, python, container) add no namespace, as on
//! vLLM's render server started without `--tool-server`.

use super::{HMessage, Role, Tool};
use crate::error::RequestError;
use serde_json::Value;

const BUILTINS: [&str; 3] = ["web_search_preview", "code_interpreter", "container"];

fn bad(param: &str, message: impl Into<String>) -> RequestError {
    RequestError::invalid(param, message)
}

fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// The Harmony messages of a Responses body (validated as a chat conversion first).
pub(super) fn messages(
    body: &Value,
    effort: &str,
    start_date: &str,
) -> Result<Vec<HMessage>, RequestError> {
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    // vLLM's `extract_tool_types` / `has_custom_tools`: an `mcp` tool adds its label only
    // when allowlisted, and only builtin labels can be.
    let custom = tools.iter().any(|t| {
        let ty = str_of(t, "type").unwrap_or_default();
        ty != "mcp" && !BUILTINS.contains(&ty)
    });
    let function_tools = if custom {
        function_tools(tools)?
    } else {
        Vec::new()
    };
    let input = body.get("input");
    let items = input.and_then(Value::as_array).map(Vec::as_slice);
    let (instructions, items) = match (body.get("instructions"), items) {
        (Some(Value::String(s)), _) => (Some(s.clone()), items),
        (_, Some(items)) => peel_instructions(items),
        _ => (None, items),
    };
    let mut out = super::preamble(
        effort,
        start_date,
        instructions.as_deref(),
        &function_tools,
        custom,
    );
    let previous = body
        .get("previous_input_messages")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for m in previous {
        out.extend(
            previous_message(m)?
                .into_iter()
                .filter(|m| !matches!(m.role, Role::System | Role::Developer)),
        );
    }
    match (input, items) {
        (Some(Value::String(s)), _) => {
            if !s.is_empty() || previous.is_empty() {
                out.push(HMessage::new(Role::User, None, s.clone()));
            }
        }
        (_, Some(items)) => {
            for (i, item) in items.iter().enumerate() {
                if let Some(m) = item_message(item, &items[..i])? {
                    out.push(m);
                }
            }
        }
        _ => {
            return Err(bad(
                "input",
                "input must be a string or a list of input items",
            ))
        }
    }
    Ok(out)
}

/// vLLM's `get_developer_message` over Responses tools: function tools listed, builtins
/// skipped, any other type refused.
fn function_tools(tools: &[Value]) -> Result<Vec<Tool<'_>>, RequestError> {
    let mut out = Vec::new();
    for t in tools {
        match str_of(t, "type").unwrap_or_default() {
            "function" => out.push(Tool {
                name: str_of(t, "name").unwrap_or_default(),
                description: str_of(t, "description").unwrap_or_default(),
                parameters: t.get("parameters").filter(|p| !p.is_null()),
            }),
            ty if BUILTINS.contains(&ty) => {}
            ty => return Err(bad("tools", format!("tool type {ty:?} is not supported."))),
        }
    }
    Ok(out)
}

/// vLLM's `extract_instructions_from_messages`: a leading system or developer item's text.
fn peel_instructions(items: &[Value]) -> (Option<String>, Option<&[Value]>) {
    match items.split_first() {
        Some((first, rest)) if matches!(str_of(first, "role"), Some("system" | "developer")) => {
            (flatten(first.get("content")), Some(rest))
        }
        _ => (None, Some(items)),
    }
}

/// vLLM's `flatten_input_text_content`: a string as is; a list's strings and `text`s joined;
/// `None` when there is no text.
fn flatten(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    other => str_of(other, "text"),
                })
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
        _ => None,
    }
}

/// Each content part's `text` (empty for parts without one), or the string.
fn contents(content: Option<&Value>, param: &str) -> Result<Vec<String>, RequestError> {
    match content {
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(parts)) => Ok(parts
            .iter()
            .map(|p| str_of(p, "text").unwrap_or_default().to_string())
            .collect()),
        _ => Err(bad(param, "content must be a string or a list of parts")),
    }
}

fn message_role(role: &str) -> Result<Role, RequestError> {
    Ok(match role {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => Role::System,
        "developer" => Role::Developer,
        "tool" => Role::Tool,
        other => return Err(bad("input", format!("{other:?} is not a valid Role"))),
    })
}

/// vLLM's `response_input_to_harmony`; `None` for what it skips. `before`: the items before
/// this one, where a `function_call_output` finds its call (the last with its id).
fn item_message(item: &Value, before: &[Value]) -> Result<Option<HMessage>, RequestError> {
    let ty = str_of(item, "type").unwrap_or("message");
    match ty {
        "message" => {
            let role = str_of(item, "role").ok_or_else(|| bad("input", "role: Field required"))?;
            if matches!(role, "system" | "developer") {
                let text = flatten(item.get("content")).filter(|t| !t.is_empty());
                return Ok(text.map(|t| HMessage::instructions(&t)));
            }
            let role = message_role(role)?;
            let channel = (role == Role::Assistant).then_some("final");
            Ok(Some(HMessage {
                content: contents(item.get("content"), "input")?,
                ..HMessage::new(role, channel, String::new())
            }))
        }
        "function_call_output" => {
            let id = str_of(item, "call_id").unwrap_or_default();
            let call = before.iter().rev().find(|i| {
                str_of(i, "type") == Some("function_call") && str_of(i, "call_id") == Some(id)
            });
            let Some(call) = call else {
                return Err(bad("input", format!("No call message found for {id}")));
            };
            let name = str_of(call, "name").unwrap_or_default();
            let output = match item.get("output") {
                Some(Value::String(s)) => s.clone(),
                _ => {
                    return Err(bad(
                        "input",
                        "a function_call_output's output must be a string for gpt-oss",
                    ))
                }
            };
            Ok(Some(HMessage::tool_result(
                format!("functions.{name}"),
                output,
            )))
        }
        "reasoning" => {
            let texts: Vec<&str> = item
                .get("content")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .map(|c| str_of(c, "text").unwrap_or_default())
                .collect();
            Ok((!texts.is_empty())
                .then(|| HMessage::new(Role::Assistant, Some("analysis"), texts.join("\n"))))
        }
        "function_call" => Ok(Some(HMessage::call(
            str_of(item, "name").unwrap_or_default(),
            str_of(item, "arguments").unwrap_or_default().to_string(),
        ))),
        other => Err(bad("input", format!("Unknown input type: {other}"))),
    }
}

/// vLLM's `response_previous_input_to_harmony`: a chat-format message (`role`) or a
/// Harmony-format one (`author`).
fn previous_message(m: &Value) -> Result<Vec<HMessage>, RequestError> {
    let param = "previous_input_messages";
    if let Some(author) = m.get("author").filter(|a| a.is_object()) {
        let role = message_role(str_of(author, "role").unwrap_or_default())?;
        let mut msg = HMessage {
            content: match m.get("content") {
                Some(Value::Array(parts)) => parts
                    .iter()
                    .map(|p| str_of(p, "text").unwrap_or_default().to_string())
                    .collect(),
                Some(Value::String(s)) => vec![s.clone()],
                _ => vec![String::new()],
            },
            ..HMessage::new(
                role,
                str_of(m, "channel").filter(|c| !c.is_empty()),
                String::new(),
            )
        };
        msg.author = str_of(author, "name")
            .filter(|n| !n.is_empty())
            .map(str::to_string);
        msg.recipient = str_of(m, "recipient")
            .filter(|r| !r.is_empty())
            .map(str::to_string);
        if role == Role::Tool && msg.author.is_none() || role != Role::Tool && msg.author.is_some()
        {
            return Err(bad(
                param,
                "a named author is supported on tool messages only",
            ));
        }
        if msg.recipient.is_some() && role == Role::Assistant {
            // vLLM renders such a call with its own content type; only `json` is ours.
            if str_of(m, "content_type") != Some("json") || msg.channel.is_none() {
                return Err(bad(
                    param,
                    "an assistant call needs a channel and content_type json",
                ));
            }
        }
        return Ok(vec![msg]);
    }
    let role = str_of(m, "role").ok_or_else(|| bad(param, "Message has no 'role' key"))?;
    let calls = m
        .get("tool_calls")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty());
    if let (Some(calls), "assistant") = (calls, role) {
        return Ok(calls
            .iter()
            .map(|c| {
                let f = c.get("function").unwrap_or(&Value::Null);
                HMessage::call(
                    str_of(f, "name").unwrap_or_default(),
                    str_of(f, "arguments").unwrap_or_default().to_string(),
                )
            })
            .collect());
    }
    match role {
        "tool" => {
            let name = str_of(m, "name").unwrap_or_default();
            let author = if name.is_empty() || name.starts_with("functions.") {
                name.to_string()
            } else {
                format!("functions.{name}")
            };
            let text = flatten(m.get("content")).unwrap_or_default();
            Ok(vec![HMessage::tool_result(author, text)])
        }
        // Left out by the caller.
        "system" | "developer" => Ok(Vec::new()),
        _ => Ok(vec![HMessage {
            content: contents(m.get("content"), param)?,
            ..HMessage::new(message_role(role)?, None, String::new())
        }]),
    }
}
