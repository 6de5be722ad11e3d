//! Qwen3's chat template in Rust: the `chat_template` of Qwen3-0.6B … Qwen3-32B's
//! `tokenizer_config.json` (fixtures/models/qwen3), statement for statement.
//!
//! What the template does, and what this file mirrors:
//! * with tools: a system block listing each tool as `tojson`, after the first message's
//!   content when that message is a system message; without tools: the system message alone;
//! * `last_query_index`: the last user message that is not a `<tool_response>` wrapper;
//! * assistant messages after it show their reasoning in `<think>` (the last one always);
//!   reasoning is `reasoning_content`, or else what a `</think>` in the content splits off;
//! * tool calls as `<tool_call>` JSON lines; runs of tool results in one user turn;
//! * the generation prompt, with an empty think block when `enable_thinking` is `false`.
//!
//! Inputs outside that shape answer `None` and render through minijinja (see the parent).

use super::{read_messages, Msg, NativeInput, Role};
use crate::template::pyjson::{write_json, write_json_map};
use serde_json::Value;

/// Names the template binds or calls: a request kwarg with one of these names would shadow
/// it in minijinja's context, so such requests take the general path.
const TEMPLATE_NAMES: [&str; 9] = [
    "namespace",
    "ns",
    "message",
    "index",
    "content",
    "reasoning_content",
    "tool_call",
    "tool",
    "loop",
];

const TOOLS_HEADER: &str = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>";
const TOOLS_FOOTER: &str = "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n";

pub(super) fn render(input: &NativeInput<'_>) -> Option<String> {
    if input.kwargs_shadow(&TEMPLATE_NAMES) {
        return None;
    }
    let tools = input.tools.unwrap_or_default();
    let msgs = read_messages(input.messages)?;
    let first = msgs.first()?;
    let size: usize = msgs.iter().map(|m| m.content.len() + 32).sum();
    let mut out = String::with_capacity(size + 64);

    let first_system = first.role == Role::System;
    if !tools.is_empty() {
        out.push_str("<|im_start|>system\n");
        if first_system {
            out.push_str(&first.content);
            out.push_str("\n\n");
        }
        out.push_str(TOOLS_HEADER);
        for tool in tools {
            out.push('\n');
            write_json_map(&mut out, tool);
        }
        out.push_str(TOOLS_FOOTER);
    } else if first_system {
        push_block(&mut out, "system", &first.content);
    }

    let last = msgs.len() - 1;
    let last_query_index = msgs
        .iter()
        .rposition(|m| {
            m.role == Role::User
                && !(m.content.starts_with("<tool_response>")
                    && m.content.ends_with("</tool_response>"))
        })
        .unwrap_or(last);

    for (i, m) in msgs.iter().enumerate() {
        match m.role {
            Role::User => push_block(&mut out, "user", &m.content),
            Role::System if i > 0 => push_block(&mut out, "system", &m.content),
            Role::System => {}
            Role::Assistant => assistant(&mut out, m, i > last_query_index, i == last)?,
            Role::Tool => {
                if i == 0 || msgs[i - 1].role != Role::Tool {
                    out.push_str("<|im_start|>user");
                }
                out.push_str("\n<tool_response>\n");
                out.push_str(&m.content);
                out.push_str("\n</tool_response>");
                if i == last || msgs[i + 1].role != Role::Tool {
                    out.push_str("<|im_end|>\n");
                }
            }
        }
    }
    if input.add_generation_prompt {
        out.push_str("<|im_start|>assistant\n");
        if input.kwargs.get("enable_thinking") == Some(&Value::Bool(false)) {
            out.push_str("<think>\n\n</think>\n\n");
        }
    }
    Some(out)
}

/// `'<|im_start|>' + role + '\n' + content + '<|im_end|>' + '\n'`
fn push_block(out: &mut String, role: &str, content: &str) {
    out.push_str("<|im_start|>");
    out.push_str(role);
    out.push('\n');
    out.push_str(content);
    out.push_str("<|im_end|>\n");
}

/// The template's assistant branch, tool calls included.
fn assistant(out: &mut String, m: &Msg<'_>, after_query: bool, last: bool) -> Option<()> {
    let (content, reasoning): (&str, &str) = match m.reasoning {
        Some(r) => (&m.content, r),
        None if m.content.contains("</think>") => {
            // content.split('</think>')[-1].lstrip('\n'), and
            // content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n')
            let after = m.content.split("</think>").last().unwrap_or_default();
            let before = m.content.split("</think>").next().unwrap_or_default();
            let thought = before
                .trim_end_matches('\n')
                .split("<think>")
                .last()
                .unwrap_or_default();
            (
                after.trim_start_matches('\n'),
                thought.trim_start_matches('\n'),
            )
        }
        None => (&m.content, ""),
    };
    out.push_str("<|im_start|>assistant");
    if after_query && (last || !reasoning.is_empty()) {
        out.push_str("\n<think>\n");
        out.push_str(reasoning.trim_matches('\n'));
        out.push_str("\n</think>\n\n");
        out.push_str(content.trim_start_matches('\n'));
    } else {
        out.push('\n');
        out.push_str(content);
    }
    if let Some(calls) = &m.tool_calls {
        for (j, call) in calls.iter().enumerate() {
            if j > 0 || !content.is_empty() {
                out.push('\n');
            }
            let function = match call.get("function") {
                Some(Value::Object(f)) if !f.is_empty() => f,
                _ => return None,
            };
            out.push_str("<tool_call>\n{\"name\": \"");
            out.push_str(function.get("name")?.as_str()?);
            out.push_str("\", \"arguments\": ");
            match function.get("arguments")? {
                Value::String(s) => out.push_str(s),
                other => write_json(out, other),
            }
            out.push_str("}\n</tool_call>");
        }
    }
    out.push_str("<|im_end|>\n");
    Some(())
}
