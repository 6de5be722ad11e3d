//! Hunyuan v4 (`hy_v4`) tool calls, checked against vLLM 0.33's `HYV4ToolParser`
//! (`vllm/tool_parsers/hy_v4_tool_parser.py`). The wire format:
//!
//! ```text
//! text<tool_calls><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>3</arg_value></tool_call><tool_call>now</tool_call></tool_calls>
//! ```
//!
//! A call is only read inside the `<tool_calls>` block; its name runs from `<tool_call>` to
//! the first `<arg_key>` or `</tool_call>` (trimmed), keys are trimmed, values are kept as
//! written and typed by the parameter's schema as vLLM's hy_v4 types them (see
//! [`super::hy_types`]). Values of parameters that can only be strings stream as they come;
//! others are sent when their `</arg_value>` arrives. Arguments are written as Python's
//! `json.dumps` writes them. Content before the block is kept as written; text between calls
//! is dropped, as vLLM drops it.
//!
//! Hunyuan v3 (`hy_v3`, vLLM's `HYV3ToolParser`) writes the same, with `<tool_sep>` after
//! the name and newlines between the tags, which are dropped:
//!
//! ```text
//! <tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\n</tool_calls>
//! ```
//!
//! Its values are typed as hy_v4's; a call whose name does not end at `<tool_sep>` is no
//! call, as vLLM's hy_v3 regex requires it.
//!
//! Where we differ from vLLM (listed in `docs/fidelity.md`): vLLM's one-shot path is strict,
//! so any malformed call makes the whole output content, with no calls; its stream is
//! lenient. Ours reads call by call: a call without a name is dropped (its block is content
//! if no call of it is good), and the good calls around it are kept; a call or block left
//! open is closed where the next marker or the output's end finds it; whitespace between
//! `</arg_key>` and `<arg_value>` is allowed. Text after `</tool_calls>`, which vLLM drops, is
//! kept as content.

use super::hy_types::{hy_value, HyTypes};
use super::xml::{first_of, held};
use super::{Parsed, Scan, ToolParser, ToolSchemas, MAX_NAME};
use crate::pyjson::dumps_str;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The structural tags, with the checkpoint's suffix (vLLM's `token_suffix`, e.g.
/// `:6124c78e`: `<tool_call:6124c78e>`; empty for unsuffixed tokens). Serialized as the
/// suffix alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HyTags {
    suffix: String,
    block_start: String,
    block_end: String,
    call_start: String,
    call_end: String,
    tool_sep: String,
    key_start: String,
    key_end: String,
    value_start: String,
    value_end: String,
}

impl HyTags {
    pub fn new(suffix: &str) -> HyTags {
        let open = |name: &str| format!("<{name}{suffix}>");
        let close = |name: &str| format!("</{name}{suffix}>");
        HyTags {
            suffix: suffix.to_string(),
            block_start: open("tool_calls"),
            block_end: close("tool_calls"),
            call_start: open("tool_call"),
            call_end: close("tool_call"),
            tool_sep: open("tool_sep"),
            key_start: open("arg_key"),
            key_end: close("arg_key"),
            value_start: open("arg_value"),
            value_end: close("arg_value"),
        }
    }

    fn is_plain(tags: &Arc<HyTags>) -> bool {
        tags.suffix.is_empty()
    }

    fn plain() -> Arc<HyTags> {
        Arc::new(HyTags::new(""))
    }
}

/// The tags in a stream state: their suffix.
mod tags_serde {
    use super::HyTags;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::sync::Arc;

    pub fn serialize<S: Serializer>(tags: &Arc<HyTags>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&tags.suffix)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<HyTags>, D::Error> {
        let suffix = String::deserialize(d)?;
        Ok(Arc::new(HyTags::new(&suffix)))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    Content,
    /// Inside `<tool_calls>`, between calls.
    Block,
    /// After `<tool_call>`: the name.
    Name,
    /// A call without a good name, skipped up to its `</tool_call>`.
    Skip,
    /// In a call, between arguments.
    Args,
    Key,
    /// After `</arg_key>`, before `<arg_value>`.
    BeforeValue,
    Value,
}

/// The state machine for hy_v4's format; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HyV4Parser {
    mode: Mode,
    buf: String,
    /// The block's text while none of its calls has started: content if none does.
    pending: String,
    /// Calls started in the current block.
    block_calls: usize,
    calls: usize,
    /// Arguments written in the current call.
    params: usize,
    /// The name, key or value being read.
    token: String,
    name: String,
    key: String,
    /// The value being read streams (its parameter can only be a string).
    streams: bool,
    /// hy_v3's layout: the name ends at `<tool_sep>`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    sep: bool,
    /// The checkpoint's tags.
    #[serde(
        default = "HyTags::plain",
        skip_serializing_if = "HyTags::is_plain",
        with = "tags_serde"
    )]
    tags: Arc<HyTags>,
    #[serde(skip)]
    schemas: Arc<ToolSchemas>,
}

/// What one step did: consumed some text and goes on, or consumed some and waits for more.
enum Step {
    Go(usize),
    Wait(usize),
}

impl HyV4Parser {
    pub fn new(schemas: Arc<ToolSchemas>) -> Self {
        HyV4Parser {
            mode: Mode::Content,
            buf: String::new(),
            pending: String::new(),
            block_calls: 0,
            calls: 0,
            params: 0,
            token: String::new(),
            name: String::new(),
            key: String::new(),
            streams: false,
            sep: false,
            tags: HyTags::plain(),
            schemas,
        }
    }

    /// hy_v3's parser: each name ends at `<tool_sep>`.
    pub fn hy_v3(schemas: Arc<ToolSchemas>) -> Self {
        HyV4Parser {
            sep: true,
            ..HyV4Parser::new(schemas)
        }
    }

    /// With the checkpoint's suffixed tags.
    pub fn with_suffix(mut self, suffix: &str) -> Self {
        self.tags = Arc::new(HyTags::new(suffix));
        self
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        self.schemas = schemas;
    }

    fn index(&self) -> usize {
        self.calls.saturating_sub(1)
    }

    /// Block text: held while no call of the block has started, dropped after.
    fn block_text(&mut self, text: &str) {
        if self.block_calls == 0 {
            self.pending.push_str(text);
        }
    }

    /// The block ended: with no call started, its text was content after all.
    fn end_block(&mut self, out: &mut Parsed) {
        out.content.push_str(&std::mem::take(&mut self.pending));
        self.block_calls = 0;
        self.mode = Mode::Content;
    }

    fn types(&self) -> HyTypes {
        HyTypes::of(self.schemas.param_schema(&self.name, &self.key))
    }

    /// Writes the key being read into the arguments: `{"k": ` or `, "k": `.
    fn write_key(&mut self, out: &mut Parsed) {
        let sep = if self.params == 0 { "{" } else { ", " };
        out.args(self.index(), &format!("{sep}{}: ", dumps_str(&self.key)));
        self.params += 1;
    }

    fn close_args(&mut self, out: &mut Parsed) {
        out.args(self.index(), if self.params == 0 { "{}" } else { "}" });
    }

    /// Sends what is held of a streamed string value.
    fn stream_value(&mut self, out: &mut Parsed) {
        let escaped = dumps_str(&std::mem::take(&mut self.token));
        out.args(self.index(), &escaped[1..escaped.len() - 1]);
    }

    /// The value ended (its closing tag, a marker that ends the call, or the output's end).
    fn end_value(&mut self, out: &mut Parsed) {
        if self.streams {
            self.stream_value(out);
            out.args(self.index(), "\"");
        } else {
            let value = std::mem::take(&mut self.token);
            let json = hy_value(&value, self.types());
            out.args(self.index(), &json);
        }
    }

    fn step_content(&mut self, rest: &str, at_end: bool, out: &mut Parsed) -> Step {
        let t = self.tags.clone();
        let Some(at) = rest.find(t.block_start.as_str()) else {
            let n = if at_end {
                rest.len()
            } else {
                rest.len() - crate::partial_suffix(rest, t.block_start.as_str())
            };
            out.content.push_str(&rest[..n]);
            return Step::Wait(n);
        };
        out.content.push_str(&rest[..at]);
        self.pending.push_str(t.block_start.as_str());
        self.block_calls = 0;
        self.mode = Mode::Block;
        Step::Go(at + t.block_start.as_str().len())
    }

    fn step_block(&mut self, rest: &str, at_end: bool, out: &mut Parsed) -> Step {
        let t = self.tags.clone();
        let markers = [t.call_start.as_str(), t.block_end.as_str()];
        let Some((at, m)) = first_of(rest, &markers) else {
            let n = rest.len() - if at_end { 0 } else { held(rest, &markers) };
            self.block_text(&rest[..n]);
            return Step::Wait(n);
        };
        self.block_text(&rest[..at + m.len()]);
        if m == t.block_end.as_str() {
            self.end_block(out);
        } else {
            self.token.clear();
            self.mode = Mode::Name;
        }
        Step::Go(at + m.len())
    }

    /// The name, up to `<arg_key>` or `</tool_call>` (hy_v3: up to `<tool_sep>`, which is
    /// consumed); then the call starts, unless the name is empty, too long or has whitespace
    /// or `<` in it.
    fn step_name(&mut self, rest: &str, at_end: bool, out: &mut Parsed) -> Step {
        let t = self.tags.clone();
        let ends = if self.sep {
            [t.tool_sep.as_str(), t.call_end.as_str()]
        } else {
            [t.key_start.as_str(), t.call_end.as_str()]
        };
        let found = first_of(rest, &ends);
        let keep = if at_end { 0 } else { held(rest, &ends) };
        let avail = found.map_or(rest.len() - keep, |f| f.0);
        let bad = |c: char| c == '<';
        if let Some(cut) = super::name_cut(self.token.len(), &rest[..avail], MAX_NAME, bad) {
            self.block_text(&rest[..cut]);
            self.mode = Mode::Skip;
            return Step::Go(cut);
        }
        self.token.push_str(&rest[..avail]);
        if found.is_none() {
            self.block_text(&rest[..avail]);
            return Step::Wait(avail);
        }
        let name = self.token.trim().to_string();
        let unseparated = self.sep && found.is_some_and(|f| f.1 != t.tool_sep.as_str());
        if name.is_empty() || name.contains(char::is_whitespace) || unseparated {
            self.block_text(&rest[..avail]);
            self.mode = Mode::Skip;
            return Step::Go(avail);
        }
        self.calls += 1;
        self.block_calls += 1;
        self.params = 0;
        self.pending.clear();
        out.start_call(self.index(), name.clone(), None);
        self.name = name;
        self.mode = Mode::Args;
        Step::Go(if self.sep {
            avail + t.tool_sep.as_str().len()
        } else {
            avail
        })
    }

    /// A call being skipped, up to its end (or the block's end, or the next call).
    fn step_skip(&mut self, rest: &str, at_end: bool) -> Step {
        let t = self.tags.clone();
        let markers = [
            t.call_end.as_str(),
            t.call_start.as_str(),
            t.block_end.as_str(),
        ];
        match first_of(rest, &markers) {
            Some((at, m)) if m == t.call_end.as_str() => {
                self.block_text(&rest[..at + m.len()]);
                self.mode = Mode::Block;
                Step::Go(at + m.len())
            }
            Some((at, _)) => {
                self.block_text(&rest[..at]);
                self.mode = Mode::Block;
                Step::Go(at)
            }
            None => {
                let n = rest.len() - if at_end { 0 } else { held(rest, &markers) };
                self.block_text(&rest[..n]);
                Step::Wait(n)
            }
        }
    }

    /// Between arguments: the next key, or the call's end. Other text is dropped.
    fn step_args(&mut self, rest: &str, at_end: bool, out: &mut Parsed) -> Step {
        let t = self.tags.clone();
        let markers = [
            t.key_start.as_str(),
            t.call_end.as_str(),
            t.call_start.as_str(),
            t.block_end.as_str(),
        ];
        let Some((at, m)) = first_of(rest, &markers) else {
            return Step::Wait(rest.len() - if at_end { 0 } else { held(rest, &markers) });
        };
        if m == t.key_start.as_str() {
            self.token.clear();
            self.mode = Mode::Key;
            return Step::Go(at + m.len());
        }
        self.close_args(out);
        self.mode = Mode::Block;
        // `</tool_call>` is consumed; a call or block end that comes first (this call's end
        // left out) is read next.
        Step::Go(if m == t.call_end.as_str() {
            at + m.len()
        } else {
            at
        })
    }

    /// A key, up to `</arg_key>`; a call marker first ends the call without it.
    fn step_key(&mut self, rest: &str, at_end: bool) -> Step {
        let t = self.tags.clone();
        let markers = [
            t.key_end.as_str(),
            t.call_end.as_str(),
            t.call_start.as_str(),
            t.block_end.as_str(),
        ];
        let Some((at, m)) = first_of(rest, &markers) else {
            let n = rest.len() - if at_end { 0 } else { held(rest, &markers) };
            self.token.push_str(&rest[..n]);
            return Step::Wait(n);
        };
        if m != t.key_end.as_str() {
            self.mode = Mode::Args;
            return Step::Go(at);
        }
        self.token.push_str(&rest[..at]);
        self.key = std::mem::take(&mut self.token).trim().to_string();
        self.mode = Mode::BeforeValue;
        Step::Go(at + m.len())
    }

    /// Up to `<arg_value>`; a key with no value is dropped.
    fn step_before_value(&mut self, rest: &str, at_end: bool, out: &mut Parsed) -> Step {
        let t = self.tags.clone();
        let markers = [
            t.value_start.as_str(),
            t.key_start.as_str(),
            t.call_end.as_str(),
            t.call_start.as_str(),
            t.block_end.as_str(),
        ];
        let Some((at, m)) = first_of(rest, &markers) else {
            return Step::Wait(rest.len() - if at_end { 0 } else { held(rest, &markers) });
        };
        if m != t.value_start.as_str() {
            self.mode = Mode::Args;
            return Step::Go(at);
        }
        self.write_key(out);
        self.streams = self.types().only_string();
        if self.streams {
            out.args(self.index(), "\"");
        }
        self.token.clear();
        self.mode = Mode::Value;
        Step::Go(at + m.len())
    }

    /// A value, up to `</arg_value>` (or a marker that ends the call).
    fn step_value(&mut self, rest: &str, at_end: bool, out: &mut Parsed) -> Step {
        let t = self.tags.clone();
        let markers = [
            t.value_end.as_str(),
            t.call_end.as_str(),
            t.block_end.as_str(),
        ];
        let found = first_of(rest, &markers);
        let take = match found {
            Some((at, _)) => at,
            None if at_end => rest.len(),
            None => rest.len() - held(rest, &markers),
        };
        self.token.push_str(&rest[..take]);
        let Some((_, m)) = found else {
            if self.streams {
                self.stream_value(out);
            }
            return Step::Wait(take);
        };
        self.end_value(out);
        self.mode = Mode::Args;
        Step::Go(if m == t.value_end.as_str() {
            take + m.len()
        } else {
            take
        })
    }
}

impl Scan for HyV4Parser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            let step = match self.mode {
                Mode::Content => self.step_content(rest, at_end, out),
                Mode::Block => self.step_block(rest, at_end, out),
                Mode::Name => self.step_name(rest, at_end, out),
                Mode::Skip => self.step_skip(rest, at_end),
                Mode::Args => self.step_args(rest, at_end, out),
                Mode::Key => self.step_key(rest, at_end),
                Mode::BeforeValue => self.step_before_value(rest, at_end, out),
                Mode::Value => self.step_value(rest, at_end, out),
            };
            match step {
                Step::Go(n) => i += n,
                Step::Wait(n) => return i + n,
            }
        }
        i
    }
}

impl ToolParser for HyV4Parser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        // A call cut off is closed; a block with no call started is content.
        if self.mode == Mode::Value {
            self.end_value(out);
        }
        if matches!(
            self.mode,
            Mode::Args | Mode::Key | Mode::BeforeValue | Mode::Value
        ) {
            self.close_args(out);
        }
        if self.mode != Mode::Content {
            self.end_block(out);
        }
        self.buf.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> (String, Vec<(String, String)>) {
        let tools = [
            json!({"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string"}, "days": {"type": "integer"}}}}}),
        ];
        let mut p = HyV4Parser::new(Arc::new(ToolSchemas::from_tools(&tools)));
        let mut out = Parsed::default();
        p.push(text, &mut out);
        p.finish(&mut out);
        let calls = out.tool_calls();
        (
            out.content,
            calls.into_iter().map(|c| (c.name, c.arguments)).collect(),
        )
    }

    #[test]
    fn calls_in_the_block_typed_by_schema() {
        let (content, calls) = parse(
            "Sure.<tool_calls><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>3</arg_value></tool_call><tool_call>now</tool_call></tool_calls>",
        );
        assert_eq!(content, "Sure.");
        assert_eq!(
            calls,
            [
                (
                    "get_weather".into(),
                    r#"{"city": "Paris", "days": 3}"#.into()
                ),
                ("now".into(), "{}".into())
            ]
        );
    }

    #[test]
    fn a_block_without_a_good_call_is_content() {
        let text = "<tool_calls><tool_call></tool_call></tool_calls>";
        assert_eq!(parse(text), (text.to_string(), vec![]));
        let text = "<tool_call>now</tool_call>";
        assert_eq!(parse(text), (text.to_string(), vec![]));
    }
}
