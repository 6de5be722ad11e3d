//! Muse's tool calls (`muse`, checked against vLLM 0.33's `MuseToolParser`; `muse_glimmer`,
//! against vLLM 0.32's `MuseGlimmerToolParser`): ATEM invokes in the messages addressed to a
//! tool ([`crate::muse`] cuts the messages):
//!
//! ```text
//! <|start|>assistant to=get_weather<|message|><atem:function_calls>
//! <atem:invoke name="get_weather">
//! <atem:parameter name="city">Paris</atem:parameter>
//! </atem:invoke>
//! </atem:function_calls><|eom|>
//! ```
//!
//! As vLLM reads them: an invoke is `<atem:invoke …name="f"…>` to `</atem:invoke>` (one cut
//! off is not a call), a parameter `<atem:parameter …name="k"…>v</atem:parameter>`, its value
//! read as JSON if it is JSON, else kept as a string (Muse Spark keeps a parameter declared
//! `"type": "string"` as written); a name written twice keeps its last value. A name `f.f`
//! is `f` when the request declares `f` and not `f.f`. A call is sent when its message ends.
//! Content is the bodies of the messages to the user (and Muse Spark's `commentary`);
//! reasoning (`self`; Muse Spark's bare `<|message|>` too) and Muse Spark's `developer`
//! messages are dropped.
//!
//! Where we differ from vLLM (listed in the case files): text outside messages is content
//! (after the `muse` reasoning parser, the answer arrives so); vLLM keeps it only when the
//! output has no message header at all, and then also reads invokes in it.

use super::coerce::json_roundtrip;
use super::{Parsed, ToolParser, ToolSchemas};
use crate::muse::{channel, Channel, Seg, Segmenter};
use crate::pyjson::dumps_str;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

const INVOKE: &str = "<atem:invoke";
const INVOKE_END: &str = "</atem:invoke>";
const PARAM: &str = "<atem:parameter";
const PARAM_END: &str = "</atem:parameter>";

/// The state machine; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MuseParser {
    glimmer: bool,
    seg: Segmenter,
    /// The open message's channel.
    open: Option<Channel>,
    /// The open tool message's body so far.
    body: String,
    calls: usize,
    #[serde(skip)]
    schemas: Arc<ToolSchemas>,
}

/// `name="…"` in a tag's head (`<atem:invoke` or `<atem:parameter` up to `>`): the value.
fn name_attr(head: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(at) = head[from..].find("name=\"") {
        let start = from + at;
        let word_start = head[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let value = &head[start + 6..];
        if word_start {
            let end = value.find('"')?;
            if end > 0 {
                return Some(&value[..end]);
            }
        }
        from = start + 6;
    }
    None
}

impl MuseParser {
    pub fn new(glimmer: bool, schemas: Arc<ToolSchemas>) -> Self {
        MuseParser {
            glimmer,
            seg: Segmenter::default(),
            open: None,
            body: String::new(),
            calls: 0,
            schemas,
        }
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        self.schemas = schemas;
    }

    /// The tool name vLLM sends for the name written (`_normalize_name`).
    fn tool_name(&self, written: &str) -> String {
        if self.schemas.is_empty() || self.schemas.allows(written) {
            return written.to_string();
        }
        match written.split_once('.') {
            Some((head, tail)) if head == tail && self.schemas.allows(head) => head.to_string(),
            _ => written.to_string(),
        }
    }

    /// A parameter's value as JSON.
    fn value(&self, tool: &str, key: &str, raw: &str) -> String {
        let string = !self.glimmer
            && self
                .schemas
                .param_schema(tool, key)
                .and_then(|s| s.get("type"))
                .and_then(Value::as_str)
                == Some("string");
        if string {
            return dumps_str(raw);
        }
        json_roundtrip(raw).unwrap_or_else(|| dumps_str(raw))
    }

    /// One invoke's text: its call.
    fn call(&self, invoke: &str) -> Option<(String, String)> {
        let head_end = invoke.find('>').unwrap_or(invoke.len());
        let name = self.tool_name(name_attr(&invoke[..head_end])?);
        let mut args: Vec<(String, String)> = Vec::new();
        let mut rest = invoke;
        while let Some(at) = rest.find(PARAM) {
            let after = &rest[at + PARAM.len()..];
            let Some(gt) = after.find('>') else { break };
            let Some(key) = name_attr(&after[..gt]) else {
                rest = after;
                continue;
            };
            let body = &after[gt + 1..];
            let Some(end) = body.find(PARAM_END) else {
                break;
            };
            let value = self.value(&name, key, &body[..end]);
            match args.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = value,
                None => args.push((key.to_string(), value)),
            }
            rest = &body[end + PARAM_END.len()..];
        }
        let mut json = String::from("{");
        for (n, (k, v)) in args.iter().enumerate() {
            if n > 0 {
                json.push_str(", ");
            }
            json.push_str(&dumps_str(k));
            json.push_str(": ");
            json.push_str(v);
        }
        json.push('}');
        Some((name, json))
    }

    /// A tool message ended: the calls of its complete invokes.
    fn end_tool_message(&mut self, out: &mut Parsed) {
        let body = std::mem::take(&mut self.body);
        let mut rest = body.as_str();
        while let Some(at) = rest.find(INVOKE) {
            let from = &rest[at..];
            // `<atem:invoke\b`: a word ends there.
            let bounded = from[INVOKE.len()..]
                .chars()
                .next()
                .is_some_and(|c| !(c.is_alphanumeric() || c == '_'));
            if !bounded {
                rest = &from[INVOKE.len()..];
                continue;
            }
            let Some(end) = from.find(INVOKE_END) else {
                break;
            };
            if let Some((name, args)) = self.call(&from[..end]) {
                out.start_call(self.calls, name, None);
                out.args(self.calls, &args);
                self.calls += 1;
            }
            rest = &from[end + INVOKE_END.len()..];
        }
    }

    fn segs(&mut self, text: &str, at_end: bool, out: &mut Parsed) {
        let mut seg = std::mem::take(&mut self.seg);
        let mut events: Vec<(u8, String, Option<String>)> = Vec::new();
        seg.push(text, at_end, &mut |s| match s {
            Seg::Outside(t) => events.push((0, t.to_string(), None)),
            Seg::Open(r, _) => events.push((1, String::new(), r.map(str::to_string))),
            Seg::Body(t) => events.push((2, t.to_string(), None)),
            Seg::Close(_) => events.push((3, String::new(), None)),
        });
        self.seg = seg;
        for (kind, text, recipient) in events {
            match kind {
                0 => out.content.push_str(&text),
                1 => self.open = Some(channel(self.glimmer, recipient.as_deref())),
                2 => match self.open {
                    Some(Channel::Content) => out.content.push_str(&text),
                    Some(Channel::Tool) => self.body.push_str(&text),
                    _ => {}
                },
                _ => {
                    if self.open.take() == Some(Channel::Tool) {
                        self.end_tool_message(out);
                    }
                }
            }
        }
    }
}

impl ToolParser for MuseParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.segs(text, false, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.segs("", true, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{reasoning_parser, ReasoningParser, Split};
    use serde_json::json;

    /// The reasoning parser's content, read by the tool parser (as the derender runs them),
    /// gives the calls and the answer.
    #[test]
    fn reasoning_then_tools() {
        let text = " to=self<|message|>Check.<|eom|><|start|>assistant to=get_weather<|message|>\
                    <atem:function_calls>\n<atem:invoke name=\"get_weather\">\n\
                    <atem:parameter name=\"city\">Oslo</atem:parameter>\n</atem:invoke>\n\
                    </atem:function_calls><|eom|><|start|>assistant to=user<|message|>Done.<|eot|>";
        let tools = [
            json!({"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}),
        ];
        for glimmer in [false, true] {
            let name = if glimmer { "muse_glimmer" } else { "muse" };
            let mut r = reasoning_parser(name).expect("registered");
            let mut split = Split::default();
            r.push(text, &mut split);
            r.finish(&mut split);
            assert_eq!(split.reasoning, "Check.");
            let mut t = MuseParser::new(glimmer, Arc::new(ToolSchemas::from_tools(&tools)));
            let mut out = Parsed::default();
            t.push(&split.content, &mut out);
            t.finish(&mut out);
            assert_eq!(out.content, "Done.");
            let calls = out.tool_calls();
            assert_eq!(calls.len(), 1);
            assert_eq!(calls[0].arguments, r#"{"city": "Oslo"}"#);
        }
    }
}
