//! The Llama 3.1 JSON tool-calling template in Rust: vLLM's
//! `examples/tool_chat_template_llama3.1_json.jinja` (fixtures/models/llama3_1), statement
//! for statement.
//!
//! What the template does, and what this file mirrors:
//! * `bos_token`, then a system block: `Environment: ipython` when the request has `tools`,
//!   `Cutting Knowledge Date: December 2023`, `Today Date: ` with `date_string` (a request
//!   kwarg, else today as `strftime_now("%d %b %Y")`), and the first message's trimmed content
//!   when that message is a system message (with tools and no system message, a fixed
//!   tool-calling system prompt);
//! * with tools, the next message becomes a user block listing each tool as
//!   `tojson(indent=4)` before its trimmed text (`tools_in_user_message`, the default);
//! * every other message in a header block with its role (any role) and trimmed content (the
//!   trimmed text parts, concatenated, for content given as parts);
//! * a message with a `tool_calls` key: `No tool calls found.` for an empty list, else an
//!   assistant block holding `{"name": …, "parameters": …}` (more than one call raises);
//! * `tool` and `ipython` messages in an `ipython` block holding `{"output": content}` as JSON;
//! * the generation prompt.
//!
//! Kwargs the template reads and shapes it would raise on answer `None` and render through
//! minijinja (see the parent).

use super::NativeInput;
use crate::protocol::{Field, Message};
use crate::template::env::{py_space, strftime_now};
use crate::template::messages::convert_tool_calls;
use crate::template::pyjson::{dumps, write_json, write_str, DumpOptions};
use serde_json::Value;
use std::borrow::Cow;

/// Names the template binds or reads besides `messages`, `add_generation_prompt` and
/// `date_string` (read here): a request kwarg with one of these names would shadow or set
/// them, so such requests take the general path.
const TEMPLATE_NAMES: [&str; 13] = [
    "custom_tools",
    "tools_in_user_message",
    "strftime_now",
    "tools",
    "system_message",
    "first_user_message",
    "message",
    "content",
    "tool_call",
    "t",
    "bos_token",
    "raise_exception",
    "loop",
];

const EOT: &str = "<|eot_id|>";

const TOOLS_SYSTEM: &str = "You are a helpful assistant with tool calling capabilities. Only reply with a tool call if the function exists in the library provided by the user. If it doesn't exist, just reply directly in natural language. When you receive a tool call response, use the output to format an answer to the original user question.";
const TOOLS_USER: &str = "Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}. Do not use variables.\n\n";

pub(super) fn render(input: &NativeInput<'_>) -> Option<String> {
    if input.kwargs_shadow(&TEMPLATE_NAMES) {
        return None;
    }
    let date = match input.kwargs.get("date_string") {
        None => Cow::Owned(strftime_now("%d %b %Y").ok()?),
        Some(Value::String(s)) => Cow::Borrowed(s.as_str()),
        Some(_) => return None,
    };
    let mut messages = input.messages;
    let size: usize = messages.iter().map(text_size).sum();
    let mut out = String::with_capacity(size + 160);

    out.push_str(input.bos_token.unwrap_or_default());
    out.push_str("<|start_header_id|>system<|end_header_id|>\n\n");
    if input.tools.is_some() {
        out.push_str("Environment: ipython\n");
    }
    out.push_str("Cutting Knowledge Date: December 2023\n");
    out.push_str("Today Date: ");
    out.push_str(&date);
    out.push_str("\n\n");
    if let Some(first) = messages.first() {
        if role(first)? == "system" {
            // The template reads a string, or the first part's text.
            match first.get("content") {
                Some(Field::Str(s)) => out.push_str(trim(s)),
                _ => return None,
            }
            messages = &messages[1..];
        } else if input.tools.is_some() {
            out.push_str(TOOLS_SYSTEM);
        }
    }
    out.push_str(EOT);

    if let Some(tools) = input.tools {
        // The first message left, whatever its role, carries the tools.
        let (first, rest) = messages.split_first()?;
        header(&mut out, "user");
        out.push_str(TOOLS_USER);
        let indent = DumpOptions {
            indent: Some("    ".into()),
            item_separator: ",".into(),
            ..DumpOptions::default()
        };
        for tool in tools {
            // The same conversion and printer as the template's `tojson(indent=4)`.
            let value = minijinja::Value::from(minijinja::value::Serde(tool));
            out.push_str(&dumps(&value, &indent).ok()?);
            out.push_str("\n\n");
        }
        match first.get("content")? {
            Field::Str(s) => out.push_str(trim(s)),
            // An empty part list after `template::messages`: no text.
            Field::Json(Value::Null) => {}
            // Text parts, trimmed, joined with newlines (other parts are left out).
            Field::Json(Value::Array(parts)) => {
                let mut texts = Vec::with_capacity(parts.len());
                for part in parts {
                    if part.get("type").and_then(Value::as_str) == Some("text") {
                        texts.push(trim(part.get("text")?.as_str()?));
                    } else {
                        return None;
                    }
                }
                out.push_str(&texts.join("\n"));
            }
            _ => return None,
        }
        out.push_str(EOT);
        messages = rest;
    }

    for (i, m) in messages.iter().enumerate() {
        let i = i + input.messages.len() - messages.len();
        let role = role(m)?;
        let calls = match m.get("tool_calls") {
            None => None,
            Some(c) if c.is_null() => None,
            // A string: `convert_tool_calls` refuses it, and the template would fail on it.
            Some(c) => Some(c.as_json()?),
        };
        let tool_result = role == "tool" || role == "ipython";
        match calls {
            None if !tool_result => {
                header(&mut out, role);
                push_text(&mut out, m.get("content"), |out, text| {
                    out.push_str(trim(text));
                })?;
                out.push_str(EOT);
            }
            Some(calls) => {
                // `template::messages` parses an assistant's arguments; others go as sent.
                let calls = if role == "assistant" {
                    Cow::Owned(convert_tool_calls(i, calls).ok()?)
                } else {
                    Cow::Borrowed(calls)
                };
                match calls.as_array()?.as_slice() {
                    [] => out.push_str("No tool calls found."),
                    [call] => {
                        let function = call.get("function")?;
                        let name = function.get("name")?.as_str()?;
                        let arguments = function.get("arguments")?;
                        header(&mut out, "assistant");
                        out.push_str("{\"name\": \"");
                        out.push_str(trim(name));
                        out.push_str("\", \"parameters\": ");
                        write_json(&mut out, arguments);
                        out.push('}');
                        out.push_str(EOT);
                    }
                    // The template raises; minijinja reports it.
                    _ => return None,
                }
            }
            None => {
                header(&mut out, "ipython");
                push_text(&mut out, m.get("content"), |out, text| {
                    out.push_str("{\"output\": ");
                    write_str(out, text, false);
                    out.push('}');
                })?;
                out.push_str(EOT);
            }
        }
    }
    if input.add_generation_prompt {
        header(&mut out, "assistant");
    }
    Some(out)
}

fn role(m: &Message) -> Option<&str> {
    m.get("role")?.as_str()
}

fn header(out: &mut String, role: &str) {
    out.push_str("<|start_header_id|>");
    out.push_str(role);
    out.push_str("<|end_header_id|>\n\n");
}

/// Python's `str.strip()`, as the environment's `trim` filter.
fn trim(s: &str) -> &str {
    s.trim_matches(py_space)
}

/// Writes a message's content as the template loops over it: a string once; for parts, each
/// `text` part in order; for a null content (an empty part list after `template::messages`),
/// nothing. `None` for a part of another type, and for shapes the template would fail on:
/// those render through minijinja.
fn push_text(
    out: &mut String,
    content: Option<&Field>,
    mut write: impl FnMut(&mut String, &str),
) -> Option<()> {
    match content? {
        Field::Str(s) => write(out, s),
        Field::Json(Value::Null) => {}
        Field::Json(Value::Array(parts)) => {
            for part in parts {
                match part.get("type")?.as_str()? {
                    "text" => write(out, part.get("text")?.as_str()?),
                    _ => return None,
                }
            }
        }
        _ => return None,
    }
    Some(())
}

/// Bytes a message adds to the prompt, near enough to allocate once.
fn text_size(m: &Message) -> usize {
    match m.get("content") {
        Some(Field::Str(s)) => s.len() + 48,
        _ => 64,
    }
}
