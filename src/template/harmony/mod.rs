//! gpt-oss's prompt format, Harmony: a chat request → the pieces of the prompt, as vLLM 0.32
//! renders it for a gpt-oss model (`OnlineRenderer._make_request_with_harmony`).
//!
//! gpt-oss ignores the chat template: vLLM builds Harmony messages
//! (`entrypoints/openai/parser/harmony_utils.py`) and renders them with oss-harmony 0.0.11:
//! * a system message: the model identity, knowledge cutoff 2024-06, the date
//!   (`VLLM_SYSTEM_START_DATE`, else today), `Reasoning: low|medium|high` (medium unless the
//!   request says) and the valid channels;
//! * a developer message when the first message is `system`/`developer` (`# Instructions`)
//!   or the request has tools (`# Tools`, a `namespace functions` of TypeScript-like types,
//!   see [`typescript`]);
//! * the conversation: user text; an assistant's `reasoning` on the `analysis` channel, its
//!   content on `final` (`commentary` beside tool calls), each call on `commentary` to
//!   `functions.NAME` with content type `json`, ending in `<|call|>`; a tool result from
//!   `functions.NAME` (named by its `tool_call_id`) to `assistant`; later system or
//!   developer messages as developer instructions;
//! * analysis before the last assistant `final` message dropped, and `<|start|>assistant`.
//!
//! Headers follow vLLM's tokens: an assistant call's as vLLM rewrites it
//! (`_use_legacy_tool_call_headers`: `assistant to=functions.f<|channel|>commentary json`),
//! a tool result's in oss-harmony's order (`functions.f<|channel|>commentary to=assistant`,
//! where upstream openai-harmony 0.0.8 writes ` to=assistant` before the channel).
//!
//! Each text piece is tokenized on its own, special-token text in it as ordinary text
//! (harmony's `encode_ordinary`), which [`Piece`] leaves to the caller.
//!
//! A Responses request's prompt is built from its items instead ([`responses`]), as vLLM's
//! Responses path builds it, with the same preamble and rendering.
//!
//! Not reproduced: `VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS=1` (instructions in the system
//! message) and vLLM's `--exclude-tools-when-tool-choice-none`; the Responses API's builtin
//! browser, python and container tools with a tool server.

mod responses;
pub mod typescript;

use crate::error::RequestError;
use crate::protocol::{Field, Message};
use serde_json::{Map, Value};

const IDENTITY: &str = "You are ChatGPT, a large language model trained by OpenAI.";
const KNOWLEDGE_CUTOFF: &str = "2024-06";
const CHANNELS: &str =
    "# Valid channels: analysis, commentary, final. Channel must be included for every message.";
const FUNCTIONS_CHANNEL: &str =
    "Calls to these tools must go to the commentary channel: 'functions'.";

/// Harmony's formatting tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Start,
    End,
    Message,
    Channel,
    Call,
}

impl Special {
    /// Every formatting token a prompt uses, as its vocabulary spells it, in declaration
    /// order (`s as usize` indexes it).
    pub const ALL: [(Special, &'static str); 5] = [
        (Special::Start, "<|start|>"),
        (Special::End, "<|end|>"),
        (Special::Message, "<|message|>"),
        (Special::Channel, "<|channel|>"),
        (Special::Call, "<|call|>"),
    ];

    pub fn text(self) -> &'static str {
        Self::ALL[self as usize].1
    }
}

/// One piece of a rendered prompt: a formatting token, or text tokenized on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Special(Special),
    Text(String),
}

/// What a render needs besides the request.
pub struct HarmonyInput<'a> {
    pub messages: &'a [Message],
    pub tools: Option<&'a [Map<String, Value>]>,
    pub reasoning_effort: Option<&'a str>,
    /// `Current date:` (`YYYY-MM-DD`).
    pub start_date: &'a str,
    /// A Responses request's body: its items are converted to Harmony messages as vLLM's
    /// Responses path converts them ([`responses`]), not through `messages`.
    pub responses: Option<&'a Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    System,
    Developer,
    User,
    Assistant,
    Tool,
}

/// One Harmony message before rendering.
struct HMessage {
    role: Role,
    /// A tool result's author (`functions.NAME`).
    author: Option<String>,
    recipient: Option<String>,
    channel: Option<String>,
    content: Vec<String>,
}

impl HMessage {
    fn new(role: Role, channel: Option<&str>, text: String) -> HMessage {
        HMessage {
            role,
            author: None,
            recipient: None,
            channel: channel.map(str::to_string),
            content: vec![text],
        }
    }

    /// A developer message of instructions only (vLLM's `get_system_or_developer_message`).
    fn instructions(text: &str) -> HMessage {
        HMessage::new(Role::Developer, None, developer_text(Some(text), &[]))
    }

    /// A tool's result from `functions.NAME` (or the author given) to the assistant.
    fn tool_result(author: String, text: String) -> HMessage {
        HMessage {
            author: Some(author),
            recipient: Some("assistant".into()),
            ..HMessage::new(Role::Tool, Some("commentary"), text)
        }
    }

    /// An assistant's call of `functions.NAME` with `args`.
    fn call(name: &str, args: String) -> HMessage {
        HMessage {
            recipient: Some(format!("functions.{name}")),
            ..HMessage::new(Role::Assistant, Some("commentary"), args)
        }
    }
}

/// The prompt of a chat request for a Harmony model, as pieces.
pub fn render(input: &HarmonyInput<'_>) -> Result<Vec<Piece>, RequestError> {
    let effort = effort(input.reasoning_effort)?;
    if let Some(body) = input.responses {
        let messages = responses::messages(body, effort, input.start_date)?;
        return Ok(finish(&messages));
    }
    let (instructions, rest) = match input.messages.split_first() {
        Some((first, rest)) if matches!(role(first), Some("system" | "developer")) => {
            (flatten(first.get("content")), rest)
        }
        _ => (None, input.messages),
    };
    let tools = function_tools(input.tools)?;
    let has_tools = input.tools.is_some_and(|t| !t.is_empty());
    let mut messages = preamble(
        effort,
        input.start_date,
        instructions.as_deref(),
        tools.as_deref().unwrap_or_default(),
        has_tools,
    );
    conversation(rest, input.messages.len() - rest.len(), &mut messages)?;
    Ok(finish(&messages))
}

/// The reasoning effort of the system message: `medium` unless the request says.
fn effort(requested: Option<&str>) -> Result<&str, RequestError> {
    match requested {
        None => Ok("medium"),
        Some(e @ ("low" | "medium" | "high")) => Ok(e),
        Some("none") => Err(RequestError::invalid(
            "reasoning_effort",
            "Harmony does not support reasoning_effort='none'",
        )),
        Some(e) => Err(RequestError::invalid(
            "reasoning_effort",
            format!(
                "reasoning_effort={e:?} is not supported by Harmony. Supported values are: \
                 low, medium, high."
            ),
        )),
    }
}

/// vLLM's `build_harmony_preamble`: the system message, and a developer message when there
/// are instructions (non-empty) or `with_developer` (the request's tools).
fn preamble(
    effort: &str,
    start_date: &str,
    instructions: Option<&str>,
    tools: &[Tool<'_>],
    with_developer: bool,
) -> Vec<HMessage> {
    let system = format!(
        "{IDENTITY}\nKnowledge cutoff: {KNOWLEDGE_CUTOFF}\nCurrent date: {start_date}\n\nReasoning: {effort}\n\n{CHANNELS}{}",
        if tools.is_empty() {
            String::new()
        } else {
            format!("\n{FUNCTIONS_CHANNEL}")
        }
    );
    let mut messages = vec![HMessage::new(Role::System, None, system)];
    if instructions.is_some_and(|i| !i.is_empty()) || with_developer {
        messages.push(HMessage::new(
            Role::Developer,
            None,
            developer_text(instructions, tools),
        ));
    }
    messages
}

/// vLLM's `render_for_completion`: analysis before the last assistant `final` message
/// dropped, every message rendered, then `<|start|>assistant`.
fn finish(messages: &[HMessage]) -> Vec<Piece> {
    let mut out = Vec::new();
    let last_final = messages
        .iter()
        .rposition(|m| m.role == Role::Assistant && m.channel.as_deref() == Some("final"));
    for (i, m) in messages.iter().enumerate() {
        if last_final.is_some_and(|f| i < f) && m.channel.as_deref() == Some("analysis") {
            continue;
        }
        render_message(m, &mut out);
    }
    out.push(Piece::Special(Special::Start));
    out.push(Piece::Text("assistant".into()));
    out
}

fn role(m: &Message) -> Option<&str> {
    m.get("role").and_then(Field::as_str)
}

/// vLLM's `flatten_input_text_content`: a string as is; a list's strings and `text`s joined;
/// `None` when there is no text.
fn flatten(content: Option<&Field>) -> Option<String> {
    match content? {
        Field::Str(s) => Some(s.to_string()),
        Field::Json(Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => o.get("text").and_then(Value::as_str),
                    _ => None,
                })
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
        Field::Json(_) => None,
    }
}

/// A message's `reasoning` (vLLM renames the older `reasoning_content` to it).
fn reasoning(m: &Message) -> Option<&str> {
    m.get("reasoning")
        .or_else(|| m.get("reasoning_content"))
        .and_then(Field::as_str)
        .filter(|r| !r.is_empty())
}

/// A tool: its name, description and parameters.
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    parameters: Option<&'a Value>,
}

/// The request's function tools (vLLM skips the Responses builtins and refuses other
/// types).
fn function_tools(
    tools: Option<&[Map<String, Value>]>,
) -> Result<Option<Vec<Tool<'_>>>, RequestError> {
    let Some(tools) = tools else { return Ok(None) };
    let mut out = Vec::new();
    for (i, t) in tools.iter().enumerate() {
        match t.get("type").and_then(Value::as_str).unwrap_or("function") {
            "web_search_preview" | "code_interpreter" | "container" => continue,
            "function" => {}
            other => {
                return Err(RequestError::invalid(
                    format!("tools[{i}].type"),
                    format!("tool type {other:?} is not supported."),
                ))
            }
        }
        let f = t.get("function").and_then(Value::as_object);
        let get = |k: &str| f.and_then(|f| f.get(k));
        out.push(Tool {
            name: get("name").and_then(Value::as_str).unwrap_or_default(),
            description: get("description")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            parameters: get("parameters").filter(|p| !p.is_null()),
        });
    }
    Ok(Some(out))
}

/// The developer message: `# Instructions` and the `functions` namespace.
fn developer_text(instructions: Option<&str>, tools: &[Tool<'_>]) -> String {
    let mut sections: Vec<String> = Vec::new();
    if let Some(i) = instructions {
        sections.push("# Instructions".into());
        sections.push(i.into());
    }
    if !tools.is_empty() {
        let mut ns = vec![
            "## functions\n".to_string(),
            "namespace functions {\n".into(),
        ];
        for t in tools {
            ns.extend(t.description.lines().map(|l| format!("// {l}")));
            ns.push(match t.parameters {
                Some(p) => format!(
                    "type {} = (_: {}) => any;\n",
                    t.name,
                    typescript::schema_type(p, "")
                ),
                None => format!("type {} = () => any;\n", t.name),
            });
        }
        ns.push("} // namespace functions".into());
        sections.push(format!("# Tools\n\n{}", ns.join("\n")));
    }
    sections.join("\n\n")
}

/// vLLM's `parse_chat_inputs_to_harmony_messages`.
/// `offset`: the index of `messages[0]` in the request.
fn conversation(
    messages: &[Message],
    offset: usize,
    out: &mut Vec<HMessage>,
) -> Result<(), RequestError> {
    let mut call_names: Vec<(String, String)> = Vec::new();
    for m in messages {
        for call in tool_calls(m) {
            let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            call_names.push((id.to_string(), name.to_string()));
        }
    }
    for (i, m) in messages.iter().enumerate() {
        let at = |k: &str| format!("messages[{}].{k}", i + offset);
        let role = role(m)
            .ok_or_else(|| RequestError::invalid(at("role"), "a message needs a string `role`"))?;
        let calls = tool_calls(m);
        if role == "assistant" && !calls.is_empty() {
            if let Some(text) = flatten(m.get("content")).filter(|t| !t.is_empty()) {
                out.push(HMessage::new(Role::Assistant, Some("commentary"), text));
            }
            if let Some(r) = reasoning(m) {
                out.push(HMessage::new(Role::Assistant, Some("analysis"), r.into()));
            }
            for call in calls {
                let name = call
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let args = call
                    .pointer("/function/arguments")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                out.push(HMessage::call(name, args.into()));
            }
            continue;
        }
        if role == "tool" {
            let id = m
                .get("tool_call_id")
                .and_then(Field::as_str)
                .unwrap_or_default();
            // vLLM's dict keeps the last name an id was given.
            let name = call_names
                .iter()
                .rev()
                .find(|(i, _)| i == id)
                .map_or("", |(_, n)| n.as_str());
            out.push(HMessage::tool_result(
                format!("functions.{name}"),
                flatten(m.get("content")).unwrap_or_default(),
            ));
            continue;
        }
        if role == "assistant" {
            if let Some(r) = reasoning(m) {
                out.push(HMessage::new(Role::Assistant, Some("analysis"), r.into()));
            }
        }
        let contents = contents(m.get("content"), &at("content"))?;
        match role {
            "assistant" => {
                if contents.first().is_some_and(|t| !t.is_empty()) {
                    out.push(HMessage {
                        content: contents,
                        ..HMessage::new(Role::Assistant, Some("final"), String::new())
                    });
                }
            }
            "system" | "developer" => {
                if let Some(text) = flatten(m.get("content")) {
                    out.push(HMessage::instructions(&text));
                }
            }
            "user" => out.push(HMessage {
                content: contents,
                ..HMessage::new(Role::User, None, String::new())
            }),
            other => {
                return Err(RequestError::invalid(
                    at("role"),
                    format!("role {other:?} is not a Harmony role (system, developer, user, assistant, tool)"),
                ))
            }
        }
    }
    Ok(())
}

fn tool_calls(m: &Message) -> &[Value] {
    m.get("tool_calls")
        .and_then(Field::as_json)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// A message's content as Harmony text contents: a string is one; a list is one per part
/// (its `text`, empty for other parts).
fn contents(content: Option<&Field>, at: &str) -> Result<Vec<String>, RequestError> {
    Ok(match content {
        Some(Field::Str(s)) => vec![s.to_string()],
        None | Some(Field::Json(Value::Null)) => vec![String::new()],
        Some(Field::Json(Value::Array(parts))) => parts
            .iter()
            .enumerate()
            .map(|(j, p)| match p {
                Value::Object(o) => Ok(o
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()),
                _ => Err(RequestError::invalid(
                    format!("{at}[{j}]"),
                    "a content part must be an object",
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(Field::Json(_)) => {
            return Err(RequestError::invalid(
                at,
                "content must be a string or a list of parts",
            ))
        }
    })
}

fn render_message(m: &HMessage, out: &mut Vec<Piece>) {
    let text = |s: &str| Piece::Text(s.to_string());
    out.push(Piece::Special(Special::Start));
    let role = match m.role {
        Role::System => "system",
        Role::Developer => "developer",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => m.author.as_deref().unwrap_or_default(),
    };
    match (m.role, &m.recipient, &m.channel) {
        // An assistant's call: the header vLLM writes back (`_use_legacy_tool_call_headers`).
        (Role::Assistant, Some(to), Some(channel)) => {
            out.push(text(&format!("assistant to={to}")));
            out.push(Piece::Special(Special::Channel));
            out.push(text(&format!("{channel} json")));
        }
        _ => {
            out.push(text(role));
            if let Some(channel) = &m.channel {
                out.push(Piece::Special(Special::Channel));
                out.push(text(channel));
            }
            if let Some(to) = &m.recipient {
                out.push(text(&format!(" to={to}")));
            }
        }
    }
    out.push(Piece::Special(Special::Message));
    out.extend(m.content.iter().map(|c| text(c)));
    let calls = m.role == Role::Assistant && m.recipient.is_some();
    out.push(Piece::Special(if calls {
        Special::Call
    } else {
        Special::End
    }));
}

#[cfg(test)]
mod tests {
    use super::Special;

    #[test]
    fn specials_are_listed_in_declaration_order() {
        for (i, (s, _)) in Special::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i);
        }
    }
}
