//! K2 Horizon (`k2_horizon`) tool calls, checked against vLLM's `K2HorizonToolParser`
//! (`vllm/tool_parsers/k2_horizon_tool_parser.py`, the same in 0.32 and 0.33). The wire
//! format (its default `tool_call_format`, `xml`) is glm45's with `<ifm|…>` markers, the
//! calls of one turn in one group:
//!
//! ```text
//! Before <ifm|tool_calls><ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Paris</ifm|arg_value></ifm|tool_call>
//! <ifm|tool_call>now</ifm|tool_call></ifm|tool_calls> after.
//! ```
//!
//! As vLLM reads it, in both of its paths:
//! * the first group is read whole at its `</ifm|tool_calls>`: either every call of it is
//!   good and all are sent, or the group's text stays content, as written. A group fails on
//!   text between its calls, a name that is empty, has whitespace or is not a declared tool
//!   (when the request declares tools), text or stray argument markers between arguments, an
//!   empty or repeated key, or an `<ifm|arg_type>` (the `xml_typed` format's tag);
//! * values are typed by the parameter's schema as vLLM's `coerce_to_schema_type` types
//!   them, trimmed unless the schema allows a string; arguments are written as Python's
//!   `json.dumps`;
//! * a group left open at the end, and everything after the first group, is content;
//!   content that is only whitespace is dropped (held while streaming until other text
//!   comes).
//!
//! Not read: the `json` and `xml_typed` formats, which vLLM picks by the request's
//! `chat_template_kwargs.tool_call_format`.

use super::coerce::{coerce, Types};
use super::{Parsed, Scan, ToolParser, ToolSchemas};
use crate::pyjson::dumps_pairs;
use crate::pystr::py_space;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

const GROUP_START: &str = "<ifm|tool_calls>";
const GROUP_END: &str = "</ifm|tool_calls>";
const CALL_START: &str = "<ifm|tool_call>";
const CALL_END: &str = "</ifm|tool_call>";
const KEY_START: &str = "<ifm|arg_key>";
const KEY_END: &str = "</ifm|arg_key>";
const TYPE_START: &str = "<ifm|arg_type>";
const TYPE_END: &str = "</ifm|arg_type>";
const VALUE_START: &str = "<ifm|arg_value>";
const VALUE_END: &str = "</ifm|arg_value>";
const ARG_MARKERS: [&str; 6] = [
    KEY_START,
    KEY_END,
    TYPE_START,
    TYPE_END,
    VALUE_START,
    VALUE_END,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    /// Before the first group.
    Content,
    /// Inside the first group, up to its end.
    Group,
    /// After the first group: everything is content.
    After,
}

/// The state machine for K2 Horizon's groups; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct K2HorizonParser {
    mode: Mode,
    buf: String,
    /// The group's text, from its opener.
    group: String,
    /// Content held while all of it is whitespace.
    pending: String,
    /// Content other than whitespace has been sent.
    content_seen: bool,
    #[serde(skip)]
    schemas: Arc<ToolSchemas>,
}

fn blank(s: &str) -> bool {
    s.chars().all(py_space)
}

/// One call's name and arguments JSON, or `None` where vLLM fails the group.
fn parse_call(body: &str, schemas: &ToolSchemas) -> Option<(String, String)> {
    let name_ok = |n: &str| !n.is_empty() && !n.chars().any(py_space) && schemas.allows(n);
    let Some(first) = body.find(KEY_START) else {
        if ARG_MARKERS.iter().any(|m| body.contains(m)) {
            return None;
        }
        let name = body.trim_matches(py_space);
        return name_ok(name).then(|| (name.to_string(), "{}".to_string()));
    };
    let name = body[..first].trim_matches(py_space);
    if !name_ok(name) {
        return None;
    }
    let mut args: Vec<(String, String)> = Vec::new();
    let mut rest = &body[first..];
    loop {
        rest = rest.trim_start_matches(py_space);
        if rest.is_empty() {
            break;
        }
        let after_key = rest.strip_prefix(KEY_START)?;
        let key_end = after_key.find(KEY_END)?;
        let key = after_key[..key_end].trim_matches(py_space);
        let after = after_key[key_end + KEY_END.len()..].trim_start_matches(py_space);
        // The `xml` format has no type tags.
        let after_value = after.strip_prefix(VALUE_START)?;
        let value_end = after_value.find(VALUE_END)?;
        if key.is_empty() || args.iter().any(|(k, _)| k == key) {
            return None;
        }
        let value = &after_value[..value_end];
        let types = schemas.param_types(name, key).unwrap_or(Types::STRING);
        let raw = if types.contains(Types::STRING) {
            value
        } else {
            value.trim_matches(py_space)
        };
        args.push((key.to_string(), coerce(raw, types)));
        rest = &after_value[value_end + VALUE_END.len()..];
    }
    Some((name.to_string(), dumps_pairs(&args)))
}

/// A closed group's calls, or `None` where vLLM makes the group content.
fn parse_group(body: &str, schemas: &ToolSchemas) -> Option<Vec<(String, String)>> {
    let mut calls = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find(CALL_START) {
        let inner = &rest[start + CALL_START.len()..];
        let Some(end) = inner.find(CALL_END) else {
            break;
        };
        if !blank(&rest[..start]) {
            return None;
        }
        calls.push(parse_call(&inner[..end], schemas)?);
        rest = &inner[end + CALL_END.len()..];
    }
    (!calls.is_empty() && blank(rest)).then_some(calls)
}

impl K2HorizonParser {
    pub fn new(schemas: Arc<ToolSchemas>) -> Self {
        K2HorizonParser {
            mode: Mode::Content,
            buf: String::new(),
            group: String::new(),
            pending: String::new(),
            content_seen: false,
            schemas,
        }
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        self.schemas = schemas;
    }

    /// Content, held while it is all whitespace.
    fn content(&mut self, text: &str, out: &mut Parsed) {
        if self.content_seen {
            out.content.push_str(text);
            return;
        }
        self.pending.push_str(text);
        if !blank(&self.pending) {
            self.content_seen = true;
            out.content.push_str(&std::mem::take(&mut self.pending));
        }
    }
}

impl Scan for K2HorizonParser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let mut used = 0;
        loop {
            let rest = &text[used..];
            match self.mode {
                Mode::After => {
                    self.content(rest, out);
                    return text.len();
                }
                Mode::Content => {
                    let Some(at) = rest.find(GROUP_START) else {
                        let keep = if at_end {
                            0
                        } else {
                            crate::partial_suffix(rest, GROUP_START)
                        };
                        self.content(&rest[..rest.len() - keep], out);
                        return text.len() - keep;
                    };
                    self.content(&rest[..at], out);
                    self.group.push_str(GROUP_START);
                    self.mode = Mode::Group;
                    used += at + GROUP_START.len();
                }
                Mode::Group => {
                    let Some(at) = rest.find(GROUP_END) else {
                        let keep = if at_end {
                            0
                        } else {
                            crate::partial_suffix(rest, GROUP_END)
                        };
                        self.group.push_str(&rest[..rest.len() - keep]);
                        if at_end {
                            let group = std::mem::take(&mut self.group);
                            self.content(&group, out);
                        }
                        return text.len() - keep;
                    };
                    let group = std::mem::take(&mut self.group);
                    let body = &group[GROUP_START.len()..];
                    match parse_group(&format!("{body}{}", &rest[..at]), &self.schemas) {
                        Some(calls) => {
                            for (i, (name, args)) in calls.into_iter().enumerate() {
                                out.start_call(i, name, None);
                                out.args(i, &args);
                            }
                        }
                        None => {
                            let whole = format!("{group}{}{GROUP_END}", &rest[..at]);
                            self.content(&whole, out);
                        }
                    }
                    self.mode = Mode::After;
                    used += at + GROUP_END.len();
                }
            }
        }
    }
}

impl ToolParser for K2HorizonParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        // Content that was only whitespace is dropped, as vLLM drops it.
        self.pending.clear();
    }
}
