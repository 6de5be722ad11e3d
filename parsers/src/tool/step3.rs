//! Step-3 (`step3`) tool calls, checked against vLLM 0.32's `Step3ToolParser`
//! (`vllm/tool_parsers/step3_tool_parser.py`). The wire format:
//!
//! ```text
//! Let me check.<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather"><steptml:parameter name="city">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>
//! ```
//!
//! As vLLM's one-shot reads it, the section is read whole at `<｜tool_calls_end｜>`:
//! * each `<｜tool_call_begin｜>…<｜tool_call_end｜>` is a call; `function<｜tool_sep｜>`
//!   before the invoke is its type (another type skips the call); the name is the invoke's
//!   `name` attribute; parameters are `<steptml:parameter name="k">v</steptml:parameter>`,
//!   values stripped (a repeated key keeps the last);
//! * values are typed by the declared `type` as step3 types them: `integer` by `int()`,
//!   `number` by `float()` (always a float: `3` is `3.0`), `boolean` only `true`/`false` in
//!   any case, `null` only `null`; any other type, and an undeclared parameter or tool, stays
//!   a string (objects too). Arguments are written as Python's `json.dumps`;
//! * with a call, the content is the text before and after the section, whitespace at its
//!   two ends dropped (held while streaming); with none, or a section left open, the output
//!   is content as written. Text after the section is content, a second section included.
//!
//! Where we differ (listed in the case file): a call without the `function<｜tool_sep｜>`
//! type is read, as vLLM's stream and its own tests read it; a value holding `<` is read to
//! its closing tag, as vLLM 0.33 reads it (0.32 drops the parameter).

use super::coerce::{py_float, py_int};
use super::held_content::HeldContent;
use super::{Parsed, Scan, ToolParser, ToolSchemas};
use crate::pyjson::{dumps_pairs, dumps_str, py_float_repr};
use crate::pystr::py_space;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

const SECTION_START: &str = "<｜tool_calls_begin｜>";
const SECTION_END: &str = "<｜tool_calls_end｜>";
const CALL_START: &str = "<｜tool_call_begin｜>";
const CALL_END: &str = "<｜tool_call_end｜>";
const SEP: &str = "<｜tool_sep｜>";
const INVOKE: &str = "<steptml:invoke name=\"";
const PARAM: &str = "<steptml:parameter name=\"";
const PARAM_END: &str = "</steptml:parameter>";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    /// Before the first section.
    Content,
    /// Inside the first section, up to its end.
    Section,
    /// After the first section: everything is content.
    After,
}

/// The state machine for Step-3's section; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Step3Parser {
    mode: Mode,
    buf: String,
    /// The section's text after its opener.
    section: String,
    /// Whitespace around the calls.
    #[serde(flatten)]
    held: HeldContent,
    calls: usize,
    #[serde(skip)]
    schemas: Arc<ToolSchemas>,
}

/// A parameter value typed by its declared type, as step3's `_cast_arguments`.
fn typed(value: &str, schema: Option<&Value>) -> String {
    let ty = schema.and_then(|s| s.get("type")).and_then(Value::as_str);
    let found = match ty {
        Some("integer") => py_int(value),
        Some("number") => py_float(value).filter(|f| f.is_finite()).map(py_float_repr),
        Some("boolean") => match value.to_lowercase().as_str() {
            "true" => Some("true".into()),
            "false" => Some("false".into()),
            _ => None,
        },
        Some("null") => (value.to_lowercase() == "null").then(|| "null".into()),
        _ => None,
    };
    found.unwrap_or_else(|| dumps_str(value))
}

/// One call's name and arguments, or `None` where step3 skips it.
fn parse_call(call: &str, schemas: &ToolSchemas) -> Option<(String, String)> {
    let invoke = match call.split_once(SEP) {
        Some((kind, rest)) if kind.trim_matches(py_space) == "function" => rest,
        Some(_) => return None,
        None => call,
    };
    let name_at = invoke.find(INVOKE)? + INVOKE.len();
    let name_len = invoke[name_at..].find('"')?;
    let name = &invoke[name_at..name_at + name_len];
    let after_name = invoke[name_at + name_len..].strip_prefix("\">")?;
    if name.is_empty() {
        return None;
    }
    let mut params: Vec<(String, String)> = Vec::new();
    let mut rest = after_name;
    while let Some(at) = rest.find(PARAM) {
        let head = &rest[at + PARAM.len()..];
        let Some((key, body)) = head.split_once("\">").filter(|(k, _)| !k.contains('"')) else {
            rest = head;
            continue;
        };
        let Some(end) = body.find(PARAM_END) else {
            break;
        };
        if key.is_empty() {
            rest = &body[end + PARAM_END.len()..];
            continue;
        }
        let value = body[..end].trim_matches(py_space);
        let json = typed(value, schemas.param_schema(name, key));
        match params.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = json,
            None => params.push((key.to_string(), json)),
        }
        rest = &body[end + PARAM_END.len()..];
    }
    Some((name.to_string(), dumps_pairs(&params)))
}

/// A closed section's calls, in order.
fn parse_section(body: &str, schemas: &ToolSchemas) -> Vec<(String, String)> {
    body.split(CALL_START)
        .filter_map(|part| part.split_once(CALL_END))
        .filter_map(|(call, _)| parse_call(call, schemas))
        .collect()
}

impl Step3Parser {
    pub fn new(schemas: Arc<ToolSchemas>) -> Self {
        Step3Parser {
            mode: Mode::Content,
            buf: String::new(),
            section: String::new(),
            held: HeldContent::default(),
            calls: 0,
            schemas,
        }
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        self.schemas = schemas;
    }
}

impl Scan for Step3Parser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let mut used = 0;
        loop {
            let rest = &text[used..];
            let (marker, next) = match self.mode {
                Mode::After => {
                    self.held.content(rest, self.calls, out);
                    return text.len();
                }
                Mode::Content => (SECTION_START, Mode::Section),
                Mode::Section => (SECTION_END, Mode::After),
            };
            let Some(at) = rest.find(marker) else {
                let keep = if at_end {
                    0
                } else {
                    crate::partial_suffix(rest, marker)
                };
                let take = &rest[..rest.len() - keep];
                match self.mode {
                    Mode::Content => self.held.content(take, self.calls, out),
                    _ => self.section.push_str(take),
                }
                if at_end && self.mode == Mode::Section {
                    // Left open: the section is content as written.
                    let section = std::mem::take(&mut self.section);
                    self.held
                        .verbatim(&format!("{SECTION_START}{section}"), out);
                }
                return text.len() - keep;
            };
            if self.mode == Mode::Content {
                self.held.content(&rest[..at], self.calls, out);
            } else {
                self.section.push_str(&rest[..at]);
                let section = std::mem::take(&mut self.section);
                let calls = parse_section(&section, &self.schemas);
                if calls.is_empty() {
                    self.held
                        .verbatim(&format!("{SECTION_START}{section}{SECTION_END}"), out);
                }
                for (name, args) in calls {
                    out.start_call(self.calls, name, None);
                    out.args(self.calls, &args);
                    self.calls += 1;
                }
            }
            self.mode = next;
            used += at + marker.len();
        }
    }
}

impl ToolParser for Step3Parser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        self.held.finish(self.calls, out);
    }
}
