//! Inkling's tool calls (`inkling`, checked against vLLM 0.32's inkling engine parser,
//! `vllm/parser/inkling.py`; the blocks are described in [`crate::inkling`]):
//!
//! ```text
//! <|message_model|><|content_text|>Let me check.<|end_message|><|message_model|><|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"SF"}}<|end_message|>
//! ```
//!
//! A call block holds one JSON object: its `name`, and its `args` member, sent as written
//! (a JSON string there is unwrapped; no `args` is `{}`). The block is held until it ends and
//! sent whole, only if the object is valid JSON and its arguments are. Content is the text
//! of text, tool-text and tool-error blocks (and text before any block), as vLLM's parser
//! engine streams it ([`EngineContent`]); thinking blocks and message headers are dropped.
//!
//! Where we differ from vLLM (listed in the case file): a call block whose JSON is broken or
//! cut off is dropped; vLLM sends its text as the arguments.

use super::engine_content::EngineContent;
use super::{Parsed, ToolParser};
use crate::inkling::{
    next_marker, partial_marker, END, END_SAMPLING, MESSAGE_MODEL, THINKING, TOOL_JSON,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Block {
    Text,
    Header,
    Thinking,
    Tool,
}

/// The state machine; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InklingParser {
    block: Block,
    buf: String,
    /// The header's text, or the call block's JSON, so far.
    held: String,
    calls: usize,
    content: EngineContent,
}

impl Default for InklingParser {
    fn default() -> Self {
        Self::new()
    }
}

/// The span of the top-level member `key` of the JSON object `text` (known valid).
fn member_span<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let b = text.as_bytes();
    let mut i = text.find('{')? + 1;
    let ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    loop {
        ws(&mut i);
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let k_start = i;
        i = string_end(b, i)?;
        let name: String = serde_json::from_str(&text[k_start..i]).ok()?;
        ws(&mut i);
        i += 1; // ':'
        ws(&mut i);
        let v_start = i;
        let mut depth = 0usize;
        while i < b.len() {
            match b[i] {
                b'"' => {
                    i = string_end(b, i)?;
                    if depth == 0 {
                        break;
                    }
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => break,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                b',' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        let value = text[v_start..i].trim_end();
        if name == key {
            return Some(value);
        }
        ws(&mut i);
        if b.get(i) != Some(&b',') {
            return None;
        }
        i += 1;
    }
}

/// From a `"` at `i`, the offset just past its closing quote.
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

impl InklingParser {
    pub fn new() -> Self {
        InklingParser {
            block: Block::Text,
            buf: String::new(),
            held: String::new(),
            calls: 0,
            content: EngineContent::default(),
        }
    }

    /// A call block's JSON: its name and arguments, if both are good.
    fn call(payload: &str) -> Option<(String, String)> {
        let Value::Object(obj) = serde_json::from_str::<Value>(payload).ok()? else {
            return None;
        };
        let name = obj.get("name")?.as_str()?.trim().to_string();
        if name.is_empty() {
            return None;
        }
        let args = match obj.get("args") {
            None => "{}".to_string(),
            Some(Value::String(s)) => {
                serde_json::from_str::<Value>(s).ok()?;
                s.clone()
            }
            Some(_) => member_span(payload, "args")?.to_string(),
        };
        Some((name, args))
    }

    fn text(&mut self, t: &str, out: &mut Parsed) {
        match self.block {
            Block::Text => self.content.push(t, self.calls > 0, out),
            Block::Header | Block::Tool => self.held.push_str(t),
            Block::Thinking => {}
        }
    }

    fn end_call(&mut self, out: &mut Parsed) {
        let payload = std::mem::take(&mut self.held);
        if let Some((name, args)) = Self::call(payload.trim()) {
            self.content.call_started();
            out.start_call(self.calls, name, None);
            out.args(self.calls, &args);
            self.calls += 1;
        }
    }

    fn marker(&mut self, m: &'static str, out: &mut Parsed) {
        self.block = match (self.block, m) {
            (Block::Tool, END | END_SAMPLING) => {
                self.end_call(out);
                Block::Text
            }
            (Block::Tool, _) => {
                self.held.push_str(m);
                Block::Tool
            }
            (Block::Header, END | END_SAMPLING) => {
                let header = std::mem::take(&mut self.held);
                self.content.push(&header, self.calls > 0, out);
                Block::Text
            }
            (_, MESSAGE_MODEL) => {
                self.held.clear();
                Block::Header
            }
            (_, THINKING) => Block::Thinking,
            (_, TOOL_JSON) => {
                self.held.clear();
                Block::Tool
            }
            _ => {
                self.held.clear();
                Block::Text
            }
        };
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.push_str(text);
        let mut rest = buf.as_str();
        while let Some((at, m)) = next_marker(rest) {
            self.text(&rest[..at], out);
            self.marker(m, out);
            rest = &rest[at + m.len()..];
        }
        let keep = if at_end { 0 } else { partial_marker(rest) };
        self.text(&rest[..rest.len() - keep], out);
        self.buf = rest[rest.len() - keep..].to_string();
        if at_end {
            match self.block {
                Block::Tool => self.end_call(out),
                Block::Header => {
                    let header = std::mem::take(&mut self.held);
                    self.content.push(&header, self.calls > 0, out);
                }
                _ => {}
            }
            self.content.finish(self.calls > 0, out);
        }
    }
}

impl ToolParser for InklingParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.run(text, false, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.run("", true, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{reasoning_parser, ReasoningParser, Split};

    /// The reasoning parser's content, read by the tool parser (as the derender runs them).
    #[test]
    fn reasoning_then_tools() {
        let text = "<|content_thinking|>hm <|end_message|><|message_model|><|content_text|>Let me \
                    check.<|end_message|><|message_model|>get_weather<|content_invoke_tool_json|>\
                    {\"name\":\"get_weather\",\"args\":{\"city\":\"SF\"}}<|end_message|>";
        let mut r = reasoning_parser("inkling").expect("registered");
        let mut split = Split::default();
        r.push(text, &mut split);
        r.finish(&mut split);
        assert_eq!(split.reasoning, "hm");
        let mut t = InklingParser::new();
        let mut out = Parsed::default();
        t.push(&split.content, &mut out);
        t.finish(&mut out);
        assert_eq!(out.content, "Let me check.");
        let calls = out.tool_calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].arguments, r#"{"city":"SF"}"#);
    }
}
