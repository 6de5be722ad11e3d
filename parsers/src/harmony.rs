//! gpt-oss's output in the Harmony format → reasoning, content and tool calls, as vLLM 0.32's
//! `HarmonyParser` (`vllm/parser/harmony.py`) returns them one-shot.
//!
//! The output follows a prompt that ends in `<|start|>assistant`, so it opens with the rest
//! of a message header:
//!
//! ```text
//! <|channel|>analysis<|message|>Think.<|end|>
//! <|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city":"Paris"}<|call|>
//! ```
//!
//! Messages are read as openai-harmony's `StreamableParser` reads tokens (its rules, with
//! oss-harmony 0.0.11's behaviour, checked by `tests/harmony_goldens.rs` on vLLM's own
//! results):
//! * a header runs to `<|message|>`; `<|channel|>X` names the channel, the last word the
//!   recipient (`to=R`, or a lone word) or, after a recipient, the content type; the first
//!   header's role is the prompt's `assistant`, later ones name it first. A header that does
//!   not parse loses its message: text is skipped to the next `<|start|>`.
//! * content runs to `<|end|>`, `<|call|>` or `<|return|>` (or the end of the output); any
//!   other special token in it is text.
//! * an output that ends inside a header is returned as content, from the last finished
//!   message on (vLLM's `flush` recovery).
//!
//! Each assistant message is then: a call when its recipient is a function (`functions.X`,
//! or a bare name other than `assistant`, `python`, `browser`, `container`), whatever the
//! channel; reasoning on `analysis`; content on `final`, or on `commentary` without a
//! recipient (a preamble); otherwise dropped. Messages of one kind are joined by `\n`.
//! A call's arguments are re-serialized as Python's `json.dumps` writes them (", ", ": ",
//! non-ASCII escaped) unless they are not JSON or the content type is not JSON, where they
//! stay as written. Calls are sent whole when their message ends; reasoning and content as
//! they come.
//!
//! The text is the decoded output with special tokens kept: a special token's text (written
//! by the model as ordinary tokens) reads as that token here, where vLLM, which parses IDs,
//! would read it as text.
//!
//! Where vLLM's stream differs from its one-shot result (no `\n` between messages, raw
//! arguments, a non-assistant message's text streamed), this follows the one-shot result.

use crate::tool::{Parsed, ToolCallDelta};
use serde::{Deserialize, Serialize};

const START: &str = "<|start|>";
const MESSAGE: &str = "<|message|>";
const CHANNEL: &str = "<|channel|>";
const CONSTRAIN: &str = "<|constrain|>";
const STOPS: [&str; 3] = ["<|end|>", "<|call|>", "<|return|>"];
const BUILTIN_TOOLS: [&str; 3] = ["python", "browser", "container"];
const ROLES: [&str; 5] = ["user", "assistant", "system", "developer", "tool"];

/// What a message's text becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Kind {
    Reasoning,
    Content,
    Call,
    Dropped,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
enum State {
    /// Between messages: everything up to `<|start|>` is skipped.
    ExpectStart,
    /// Reading a header, which is `recovery[at..]`.
    Header(usize),
    /// Reading a message's content.
    Content {
        kind: Kind,
        /// Text of this message was sent already (a second kind-mate gets a `\n` first).
        started: bool,
        /// A call's name, whether its arguments are JSON, and the arguments so far.
        name: String,
        json: bool,
        arguments: String,
    },
}

/// The Harmony output parser of one choice (vLLM's `--reasoning-parser openai_gptoss` and
/// `--tool-call-parser openai`, which vLLM runs as one parser for gpt-oss).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HarmonyParser {
    /// A reasoning parser is on: analysis is reasoning (else it is dropped).
    reasoning: bool,
    /// A tool parser is on: calls are returned (else they are dropped).
    tools: bool,
    state: State,
    /// Text held back because the next chunk may complete a marker.
    held: String,
    /// The text read since the last finished message (the headers, and what `<|start|>`s
    /// they follow): what vLLM returns as content when the output ends inside a header.
    /// Content is not kept here, so the state stays the size of a header (an output with
    /// no header at all is held whole, as vLLM returns it only at the end).
    recovery: String,
    /// The next header's role is the prompt's `assistant` (true until a header parses).
    preset_role: bool,
    said_reasoning: bool,
    said_content: bool,
    calls: usize,
}

impl HarmonyParser {
    pub fn new(reasoning: bool, tools: bool) -> HarmonyParser {
        HarmonyParser {
            reasoning,
            tools,
            state: State::Header(0),
            held: String::new(),
            recovery: String::new(),
            preset_role: true,
            said_reasoning: false,
            said_content: false,
            calls: 0,
        }
    }

    /// Reads the next text; reasoning goes to `reasoning`, content and finished calls to
    /// `out`.
    pub fn push(&mut self, text: &str, reasoning: &mut String, out: &mut Parsed) {
        let mut text = std::mem::take(&mut self.held) + text;
        loop {
            let markers: &[&str] = match self.state {
                State::ExpectStart => &[START],
                State::Header(_) => &[MESSAGE],
                State::Content { .. } => &STOPS,
            };
            let found = markers
                .iter()
                .filter_map(|m| text.find(m).map(|at| (at, *m)))
                .min();
            match found {
                Some((at, marker)) => {
                    self.text(&text[..at], reasoning, out);
                    self.marker(marker, out);
                    text.drain(..at + marker.len());
                }
                None => {
                    let keep = markers
                        .iter()
                        .map(|m| crate::partial_suffix(&text, m))
                        .max()
                        .unwrap_or(0);
                    let cut = text.len() - keep;
                    self.text(&text[..cut], reasoning, out);
                    self.held = text[cut..].to_string();
                    return;
                }
            }
        }
    }

    /// The output ended: an open message finishes, and an unfinished header comes back as
    /// content.
    pub fn finish(&mut self, reasoning: &mut String, out: &mut Parsed) {
        let held = std::mem::take(&mut self.held);
        self.text(&held, reasoning, out);
        match std::mem::replace(&mut self.state, State::ExpectStart) {
            State::ExpectStart => {}
            State::Header(_) => {
                let text = std::mem::take(&mut self.recovery);
                if !text.is_empty() {
                    if self.said_content {
                        out.content.push('\n');
                    }
                    out.content.push_str(&text);
                    self.said_content = true;
                }
            }
            content => {
                self.state = content;
                self.end_message(out);
            }
        }
    }

    /// Text between markers.
    fn text(&mut self, text: &str, reasoning: &mut String, out: &mut Parsed) {
        if text.is_empty() {
            return;
        }
        match &mut self.state {
            State::ExpectStart => {}
            State::Header(_) => self.recovery.push_str(text),
            State::Content {
                kind,
                started,
                arguments,
                ..
            } => {
                // Not kept for recovery: a message in its content always ends as a message.
                let (sink, said) = match kind {
                    Kind::Reasoning => (reasoning, &mut self.said_reasoning),
                    Kind::Content => (&mut out.content, &mut self.said_content),
                    Kind::Call => {
                        arguments.push_str(text);
                        return;
                    }
                    Kind::Dropped => return,
                };
                if !*started {
                    if *said {
                        sink.push('\n');
                    }
                    *started = true;
                    *said = true;
                }
                sink.push_str(text);
            }
        }
    }

    fn marker(&mut self, marker: &str, out: &mut Parsed) {
        match std::mem::replace(&mut self.state, State::ExpectStart) {
            State::ExpectStart => {
                // `<|start|>`
                self.recovery.push_str(marker);
                self.state = State::Header(self.recovery.len());
            }
            State::Header(at) => match parse_header(&self.recovery[at..], self.preset_role) {
                Some(header) => {
                    self.preset_role = false;
                    self.state = self.content_state(header);
                }
                // The header is lost, and its message with it.
                None => self.state = State::ExpectStart,
            },
            content => {
                self.state = content;
                self.end_message(out);
            }
        }
    }

    fn content_state(&self, h: Header) -> State {
        let recipient = h.recipient.as_deref().and_then(normalize_recipient);
        let kind = if !h.assistant {
            Kind::Dropped
        } else if recipient.is_some_and(is_function_recipient) {
            if self.tools {
                Kind::Call
            } else {
                Kind::Dropped
            }
        } else if h.channel.as_deref() == Some("analysis") {
            if self.reasoning {
                Kind::Reasoning
            } else {
                Kind::Dropped
            }
        } else if h.channel.as_deref() == Some("final")
            || (h.channel.as_deref() == Some("commentary") && recipient.is_none())
        {
            Kind::Content
        } else {
            Kind::Dropped
        };
        let name = recipient.map_or("", |r| r.strip_prefix("functions.").unwrap_or(r));
        State::Content {
            kind,
            started: false,
            name: name.to_string(),
            json: h.content_type.as_deref().is_none_or(|t| t.contains("json")),
            arguments: String::new(),
        }
    }

    /// The current message ended (a stop token, or the end of the output).
    fn end_message(&mut self, out: &mut Parsed) {
        self.recovery.clear();
        if let State::Content {
            kind: Kind::Call,
            name,
            json,
            arguments,
            ..
        } = std::mem::replace(&mut self.state, State::ExpectStart)
        {
            let arguments = if json {
                serde_json::from_str::<serde_json::Value>(&arguments)
                    .map(|v| crate::pyjson::dumps_ascii(&v))
                    .unwrap_or(arguments)
            } else {
                arguments
            };
            out.calls.push(ToolCallDelta {
                index: self.calls,
                id: None,
                name: Some(name),
                arguments,
            });
            self.calls += 1;
        }
    }
}

/// A parsed message header.
struct Header {
    assistant: bool,
    channel: Option<String>,
    recipient: Option<String>,
    content_type: Option<String>,
}

/// openai-harmony's header rules (`parse_header_from_string`); `None` where it fails.
fn parse_header(header: &str, preset_role: bool) -> Option<Header> {
    let mut header = header.to_string();
    let mut channel = None;
    if let Some(at) = header.find(CHANNEL) {
        let after = &header[at + CHANNEL.len()..];
        let end = after
            .find(|c: char| c.is_whitespace() || c == '<')
            .unwrap_or(after.len());
        if end == 0 {
            return None;
        }
        channel = Some(after[..end].to_string());
        header = format!("{}{}", &header[..at], &after[end..]);
    }
    let mut header = header.trim().to_string();
    if header.contains(CONSTRAIN) {
        header = header
            .replace(CONSTRAIN, &format!(" {CONSTRAIN}"))
            .trim()
            .to_string();
    }
    let mut parts: Vec<&str> = header.split_ascii_whitespace().collect();
    let role = if preset_role {
        "assistant"
    } else {
        let first = *parts.first()?;
        if ROLES.contains(&first) {
            first
        } else if parts.len() > 1 || first.starts_with("to=") {
            parts.remove(0);
            "tool"
        } else {
            return None;
        }
    };
    if parts.first() == Some(&role) {
        parts.remove(0);
    }
    let mut recipient = None;
    let mut content_type = None;
    if let Some(last) = parts.pop() {
        if let Some(r) = last.strip_prefix("to=") {
            recipient = Some(r.to_string());
        } else if parts.is_empty() {
            recipient = Some(last.to_string());
        } else {
            content_type = Some(last.to_string());
            let raw = parts.pop().unwrap_or_default();
            recipient = Some(raw.strip_prefix("to=").unwrap_or(raw).to_string());
        }
    }
    if !parts.is_empty() {
        return None;
    }
    Some(Header {
        assistant: role == "assistant",
        channel,
        recipient,
        content_type,
    })
}

/// Whether a message with this header is reasoning to vLLM 0.33's Harmony count
/// (`HarmonyParser._is_reasoning_token`): on the `analysis` channel, or on `commentary` with a
/// recipient (vLLM's `_normalize_recipient` keeps an empty one, which counts). `preset_role`:
/// the output's first header, whose role the parser already knows. `None` where
/// openai-harmony fails to parse the header.
pub fn header_is_reasoning(header: &str, preset_role: bool) -> Option<bool> {
    let h = parse_header(header, preset_role)?;
    let recipient = h
        .recipient
        .as_deref()
        .and_then(|r| match r.find(CONSTRAIN) {
            Some(at) => Some(r[..at].trim_end()).filter(|r| !r.is_empty()),
            None => Some(r),
        });
    Some(match h.channel.as_deref() {
        Some("analysis") => true,
        Some("commentary") => recipient.is_some(),
        _ => false,
    })
}

/// vLLM's `_normalize_recipient`: a recipient cut at `<|constrain|>`; empty is none.
fn normalize_recipient(r: &str) -> Option<&str> {
    let r = match r.find(CONSTRAIN) {
        Some(at) => r[..at].trim_end(),
        None => r,
    };
    (!r.is_empty()).then_some(r)
}

/// vLLM's `is_function_recipient` (Chat Completions: any bare name but the builtins).
fn is_function_recipient(r: &str) -> bool {
    if r.starts_with("<|") || r == "assistant" {
        return false;
    }
    if let Some(name) = r.strip_prefix("functions.") {
        return !name.is_empty();
    }
    let first = r.split('.').next().unwrap_or(r);
    !BUILTIN_TOOLS.contains(&first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (String, Parsed) {
        let mut p = HarmonyParser::new(true, true);
        let (mut r, mut out) = (String::new(), Parsed::default());
        p.push(text, &mut r, &mut out);
        p.finish(&mut r, &mut out);
        (r, out)
    }

    #[test]
    fn analysis_then_call() {
        let (r, out) = parse(
            "<|channel|>analysis<|message|>Need it.<|end|><|start|>assistant to=functions.f\
             <|channel|>commentary <|constrain|>json<|message|>{\"a\":  \"é\"}<|call|>",
        );
        assert_eq!(r, "Need it.");
        assert_eq!(out.content, "");
        assert_eq!(out.calls[0].name.as_deref(), Some("f"));
        assert_eq!(out.calls[0].arguments, "{\"a\": \"\\u00e9\"}");
    }

    #[test]
    fn unfinished_header_is_content() {
        let (_, out) = parse("<|channel|>final<|message|>F<|end|><|start|>assistant");
        assert_eq!(out.content, "F\n<|start|>assistant");
    }
}
