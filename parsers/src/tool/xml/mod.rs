//! Tool calls written as XML-like parameters, converted to a JSON arguments object.
//!
//! | family | wire format |
//! |---|---|
//! | `qwen3_coder` | `<tool_call>\n<function=f>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>` |
//! | `mimo` (MiMo-V2) | qwen3_coder's, values kept with their newlines |
//! | `seed_oss` (Seed-OSS) | qwen3_coder's, between `<seed:tool_call>` and `</seed:tool_call>` |
//! | `glm45` (GLM-4.5/4.6) | `<tool_call>f\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>` |
//! | `poolside_v1` (Laguna) | glm45's, names unchecked, values read as vLLM's poolside_v1 reads them |
//! | `deepseek_v32`, `deepseek_v4`, `deepseek_v41` (DSML) | `<｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>` (V4: `<｜DSML｜tool_calls>`; V4.1: a space after each `｜DSML｜`, `<｜DSML｜ calls>`), values read by their `string` attribute (see `dsml.rs`) |
//! | `minimax_m2` (MiniMax-M2) | `<minimax:tool_call>\n<invoke name="f">\n<parameter name="city">Paris</parameter>\n</invoke>\n<invoke name="g">…</invoke>\n</minimax:tool_call>`, names quoted with `"`, `'` or not at all, values verbatim |
//!
//! Values are typed by the types their parameter declares in the request's tools, as vLLM
//! 0.33's `qwen3_coder` and `glm45` parsers type them (see [`super::coerce`]); undeclared
//! parameters stay strings. glm45 and minimax_m2 drop a call to a tool the request does not
//! declare, as vLLM's do. qwen3_coder drops one newline after the opening tag and one
//! before the closing tag. The arguments are serialized as Python's `json.dumps` writes them
//! (`{"city": "Paris", "days": 3}`), so the streamed string equals vLLM's. qwen3_coder's
//! values of parameters that can only be strings stream character by character; other values
//! are emitted when their closing tag arrives.

mod dsml;
mod spec;

use spec::Spec;
pub use spec::XmlFamily;

use super::coerce::{coerce, Types};
use super::engine_content::EngineContent;
use super::{Parsed, Scan, ToolParser, ToolSchemas, MAX_NAME};
use crate::pyjson::dumps_str;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    Content,
    /// After `<tool_call>`: whitespace, then `<function=` (qwen3_coder).
    Open,
    Name,
    /// Between parameters.
    Params,
    Key,
    /// Between a key and its `<arg_value>` (glm45).
    BeforeValue,
    Value,
    /// After `</function>` (or a glm45 call to an undeclared tool), up to `</tool_call>`.
    AfterFunc,
    /// After a call: whitespace is dropped before another call or at the end, and is
    /// content before other text.
    Between,
}

/// The state machine for [`XmlFamily`] formats; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct XmlParser {
    family: XmlFamily,
    mode: Mode,
    buf: String,
    /// The call's text before its name is known (content again if it is not a call).
    pending: String,
    /// The name, key or value being read.
    token: String,
    name: String,
    key: String,
    calls: usize,
    params: usize,
    /// A streamed string value: whether the leading newline was dealt with, and whether its
    /// opening quote was sent.
    lead_done: bool,
    opened: bool,
    /// Content as vLLM's parser engine streams it.
    #[serde(default)]
    content: EngineContent,
    /// The call being read was opened by a bare `<function=` (no `call_start`).
    #[serde(default)]
    bare: bool,
    /// DSML: the value being read has `string="true"`.
    #[serde(default)]
    raw_string: bool,
    /// DSML: the value being read is a wrapper (`arguments`/`input`) that may be unwrapped.
    #[serde(default)]
    wrapping: bool,
    /// DSML: a wrapper read, as (key, JSON value), not yet written: the call's arguments if
    /// nothing follows it.
    #[serde(default)]
    wrapper: Option<(String, String)>,
    #[serde(skip)]
    schemas: std::sync::Arc<ToolSchemas>,
}

/// A name or key without the quotes around it, for the families that quote them.
fn unquote<'t>(spec: &Spec, text: &'t str) -> &'t str {
    if !spec.quoted_names {
        return text;
    }
    let text = text.strip_prefix(['"', '\'']).unwrap_or(text);
    text.strip_suffix(['"', '\'']).unwrap_or(text)
}

/// What opens a call in content: `call_start`, and `func_open` where it opens one alone.
fn call_openers(spec: &Spec) -> Vec<&'static str> {
    let mut v = spec.call_starts.to_vec();
    v.extend(spec.func_open.filter(|_| spec.bare_function));
    v
}

/// The first of `markers` in `text`, as (offset, marker).
pub(super) fn first_of<'m>(text: &str, markers: &[&'m str]) -> Option<(usize, &'m str)> {
    markers
        .iter()
        .filter_map(|m| text.find(m).map(|at| (at, *m)))
        .min_by_key(|(at, m)| (*at, usize::MAX - m.len()))
}

/// How many trailing bytes of `text` may start one of `markers`.
pub(super) fn held(text: &str, markers: &[&str]) -> usize {
    markers
        .iter()
        .map(|m| crate::partial_suffix(text, m))
        .max()
        .unwrap_or(0)
}

impl XmlParser {
    pub fn new(family: XmlFamily, schemas: std::sync::Arc<ToolSchemas>) -> Self {
        XmlParser {
            family,
            mode: Mode::Content,
            buf: String::new(),
            pending: String::new(),
            token: String::new(),
            name: String::new(),
            key: String::new(),
            calls: 0,
            params: 0,
            lead_done: false,
            opened: false,
            content: EngineContent::default(),
            bare: false,
            raw_string: false,
            wrapping: false,
            wrapper: None,
            schemas,
        }
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: std::sync::Arc<ToolSchemas>) {
        self.schemas = schemas;
    }

    fn index(&self) -> usize {
        self.calls.saturating_sub(1)
    }

    fn malformed(&mut self, out: &mut Parsed) {
        let pending = std::mem::take(&mut self.pending);
        self.push_content(&pending, out);
        self.mode = Mode::Content;
    }

    /// Appends content as vLLM's parser engine streams it (see [`EngineContent`]).
    fn push_content(&mut self, text: &str, out: &mut Parsed) {
        if self.family.spec().keeps_content_ws {
            out.content.push_str(text);
        } else {
            self.content.push(text, self.calls > 0, out);
        }
    }

    /// The declared types of the parameter being read; an undeclared one is a string (vLLM
    /// types only the parameters the schema names).
    fn param_types(&self) -> Types {
        self.schemas
            .param_types(&self.name, &self.key)
            .unwrap_or(Types::STRING)
    }

    fn streams_string(&self) -> bool {
        let spec = self.family.spec();
        spec.streams_strings
            && self.param_types() == Types::STRING
            && (!spec.dsml || (self.raw_string && !self.wrapping))
    }

    fn close_args(&mut self, out: &mut Parsed) {
        if let Some((key, json)) = self.wrapper.take() {
            let schemas = &self.schemas;
            let types = |k: &str| schemas.param_types(&self.name, k);
            let args = dsml::unwrap(&json, &types)
                .unwrap_or_else(|| format!("{{{}: {json}}}", dumps_str(&key)));
            out.args(self.index(), &args);
            return;
        }
        out.args(self.index(), if self.params == 0 { "{}" } else { "}" });
    }

    /// A DSML wrapper followed by another parameter is an argument like any other.
    fn flush_wrapper(&mut self, out: &mut Parsed) {
        if let Some((key, json)) = self.wrapper.take() {
            out.args(self.index(), &format!("{{{}: {json}", dumps_str(&key)));
            self.params = 1;
        }
    }

    /// Streams what can be sent of a string value held in `token`; `last`: its closing tag
    /// has arrived.
    fn stream_string(&mut self, last: bool, out: &mut Parsed) {
        let spec = self.family.spec();
        if !self.lead_done {
            if self.token.is_empty() && !last {
                return;
            }
            if spec.trim_newline && self.token.starts_with('\n') {
                self.token.remove(0);
            }
            self.lead_done = true;
        }
        if last && spec.trim_newline && self.token.ends_with('\n') {
            self.token.pop();
        }
        if !self.opened {
            out.args(self.index(), "\"");
            self.opened = true;
        }
        // A trailing newline may be the one dropped before the closing tag.
        let keep = usize::from(!last && spec.trim_newline && self.token.ends_with('\n'));
        let send = self.token.len() - keep;
        let escaped = dumps_str(&self.token[..send]);
        out.args(self.index(), &escaped[1..escaped.len() - 1]);
        self.token.drain(..send);
        if last {
            out.args(self.index(), "\"");
        }
    }

    /// poolside_v1's reading of a value (see [`Spec::loose_values`]).
    fn loose_value(&self, value: &str) -> String {
        let schema = self.schemas.param_schema(&self.name, &self.key);
        if schema.and_then(|s| s.get("type")).and_then(|t| t.as_str()) == Some("string") {
            return dumps_str(value);
        }
        super::coerce::loose(value.trim_matches(crate::pystr::py_space))
    }

    /// The value's closing tag arrived (or the output ended): send the rest of it.
    fn end_value(&mut self, out: &mut Parsed) {
        if self.streams_string() {
            self.stream_string(true, out);
            return;
        }
        if self.family.spec().dsml {
            let text = std::mem::take(&mut self.token);
            if std::mem::take(&mut self.wrapping) {
                let json = dsml::value(&text, self.raw_string, None);
                self.wrapper = Some((self.key.clone(), json));
                return;
            }
            let declared = self.schemas.param_types(&self.name, &self.key);
            out.args(self.index(), &dsml::value(&text, self.raw_string, declared));
            return;
        }
        let mut value = std::mem::take(&mut self.token);
        if self.family.spec().loose_values {
            out.args(self.index(), &self.loose_value(&value));
            return;
        }
        if self.family.spec().trim_newline {
            if value.starts_with('\n') {
                value.remove(0);
            }
            if value.ends_with('\n') {
                value.pop();
            }
        }
        out.args(self.index(), &coerce(&value, self.param_types()));
    }
}

/// What one step of [`Scan::run`] did with the text at hand: consumed some of it and goes
/// on, or consumed some and waits for more text (the rest may start a marker).
enum Step {
    Go(usize),
    Wait(usize),
}

/// How much of `rest` may be consumed while waiting for `marker`: all of it but what may
/// start the marker, unless the output has ended.
fn before_partial(rest: &str, marker: &str, at_end: bool) -> usize {
    let keep = if at_end {
        0
    } else {
        crate::partial_suffix(rest, marker)
    };
    rest.len() - keep
}

impl XmlParser {
    /// Content, up to the next call's opening tag.
    fn step_content(&mut self, spec: &Spec, rest: &str, at_end: bool, out: &mut Parsed) -> Step {
        let openers = call_openers(spec);
        let Some((at, m)) = first_of(rest, &openers) else {
            let n = rest.len() - if at_end { 0 } else { held(rest, &openers) };
            self.push_content(&rest[..n], out);
            return Step::Wait(n);
        };
        self.push_content(&rest[..at], out);
        self.pending.push_str(m);
        self.token.clear();
        self.bare = !spec.call_starts.contains(&m);
        self.mode = if self.bare || spec.func_open.is_none() {
            Mode::Name
        } else {
            Mode::Open
        };
        Step::Go(at + m.len())
    }

    /// After `<tool_call>`: whitespace, then qwen3_coder's `<function=`.
    fn step_open(&mut self, spec: &Spec, rest: &str, at_end: bool, out: &mut Parsed) -> Step {
        let trimmed = rest.trim_start();
        let ws = rest.len() - trimmed.len();
        self.pending.push_str(&rest[..ws]);
        let open = spec.func_open.unwrap_or_default();
        if trimmed.starts_with(open) {
            self.pending.push_str(open);
            self.mode = Mode::Name;
            return Step::Go(ws + open.len());
        }
        if (trimmed.is_empty() || open.starts_with(trimmed)) && !at_end {
            return Step::Wait(ws);
        }
        self.malformed(out);
        Step::Go(ws)
    }

    /// The function's name, up to what ends it; then the call starts (or, for glm45, a call
    /// to an undeclared tool is skipped).
    fn step_name(&mut self, spec: &Spec, rest: &str, at_end: bool, out: &mut Parsed) -> Step {
        if self.family == XmlFamily::Glm45 && self.token.is_empty() {
            // vLLM's glm45 engine strips the name it reads after `<tool_call>`: whitespace
            // before it is skipped (kept in `pending`, content again if no call follows).
            let ws = rest.len() - rest.trim_start().len();
            if ws > 0 {
                self.pending.push_str(&rest[..ws]);
                return Step::Go(ws);
            }
        }
        let found = first_of(rest, spec.name_ends);
        let avail = found.map_or(rest.len() - held(rest, spec.name_ends), |f| f.0);
        if let Some(cut) = super::name_cut(self.token.len(), &rest[..avail], MAX_NAME, |c| c == '<')
        {
            self.pending.push_str(&rest[..cut]);
            self.malformed(out);
            return Step::Go(cut);
        }
        let Some((at, end)) = found else {
            self.token.push_str(&rest[..avail]);
            self.pending.push_str(&rest[..avail]);
            if at_end {
                self.malformed(out);
                return Step::Go(avail);
            }
            return Step::Wait(avail);
        };
        self.token.push_str(&rest[..at]);
        self.pending.push_str(&rest[..at]);
        let name = unquote(spec, self.token.trim()).to_string();
        if name.is_empty()
            || name.len() > MAX_NAME
            || name.contains(|c: char| (c.is_whitespace() && !spec.spaced_names) || c == '<')
        {
            self.malformed(out);
            return Step::Go(at);
        }
        // The end of the name is consumed unless it starts what follows.
        let used = if end == ">" || end == "\n" {
            at + end.len()
        } else {
            at
        };
        if self.family.spec().drops_undeclared && !self.schemas.allows(&name) {
            // vLLM's glm45 (`validate_tool_names`) drops a call to a tool the request does
            // not declare, text and all, in both of its paths.
            self.pending.clear();
            self.token.clear();
            self.mode = Mode::AfterFunc;
            return Step::Go(used);
        }
        self.calls += 1;
        self.params = 0;
        self.wrapper = None;
        self.wrapping = false;
        self.pending.clear();
        self.content.call_started();
        self.token.clear();
        out.start_call(self.index(), name.clone(), None);
        self.name = name;
        self.mode = Mode::Params;
        Step::Go(used)
    }

    /// Between parameters: the next key, or the end of the function or call. Other text is
    /// not part of the call and is dropped.
    fn step_params(&mut self, spec: &Spec, rest: &str, at_end: bool, out: &mut Parsed) -> Step {
        let mut markers = vec![spec.key_open, spec.call_end];
        markers.extend(spec.func_close);
        let Some((at, m)) = first_of(rest, &markers) else {
            let keep = if at_end { 0 } else { held(rest, &markers) };
            return Step::Wait(rest.len() - keep);
        };
        if m == spec.key_open {
            self.token.clear();
            self.mode = Mode::Key;
        } else {
            self.close_args(out);
            self.mode = if m == spec.call_end || std::mem::take(&mut self.bare) {
                Mode::Between
            } else {
                Mode::AfterFunc
            };
        }
        Step::Go(at + m.len())
    }

    /// A parameter's name; once closed, its key is written into the arguments.
    fn step_key(&mut self, spec: &Spec, rest: &str, at_end: bool, out: &mut Parsed) -> Step {
        let Some(at) = rest.find(spec.key_close) else {
            let n = before_partial(rest, spec.key_close, at_end);
            self.token.push_str(&rest[..n]);
            return Step::Wait(n);
        };
        self.token.push_str(&rest[..at]);
        if spec.dsml {
            // A head vLLM's pattern does not read is taken leniently: its text is the key.
            let (key, raw) =
                dsml::head(&self.token).unwrap_or_else(|| (self.token.trim().to_string(), false));
            self.key = key;
            self.raw_string = raw;
        } else {
            self.key = unquote(spec, self.token.trim()).to_string();
        }
        self.token.clear();
        self.lead_done = false;
        self.opened = false;
        let next = if spec.value_open.is_some() {
            Mode::BeforeValue
        } else {
            Mode::Value
        };
        if spec.dsml
            && self.params == 0
            && self.wrapper.is_none()
            && (self.key == "arguments" || self.key == "input")
            && self.schemas.declares_params(&self.name)
            && self.schemas.param_types(&self.name, &self.key).is_none()
        {
            self.wrapping = true;
            self.mode = next;
            return Step::Go(at + spec.key_close.len());
        }
        self.flush_wrapper(out);
        let sep = if self.params == 0 { "{" } else { ", " };
        out.args(self.index(), &format!("{sep}{}: ", dumps_str(&self.key)));
        self.params += 1;
        self.mode = next;
        Step::Go(at + spec.key_close.len())
    }

    /// Between a key and glm45's `<arg_value>`.
    fn step_before_value(&mut self, spec: &Spec, rest: &str, at_end: bool) -> Step {
        let open = spec.value_open.unwrap_or_default();
        match rest.find(open) {
            Some(at) => {
                self.mode = Mode::Value;
                Step::Go(at + open.len())
            }
            None => Step::Wait(before_partial(rest, open, at_end)),
        }
    }

    /// A parameter's value, up to its closing tag (or, when that is missing, the end of the
    /// function or call); string values stream as they come.
    fn step_value(&mut self, spec: &Spec, rest: &str, at_end: bool, out: &mut Parsed) -> Step {
        // A missing closing tag: the value also ends where the next parameter, the function
        // or the call begins or ends (as vLLM's qwen3_coder engine reads
        // `<parameter=a>\n1\n<parameter=b>…`).
        let mut ends = vec![spec.value_close, spec.key_open];
        ends.extend(spec.func_close);
        ends.push(spec.call_end);
        let found = first_of(rest, &ends);
        let take = match found {
            Some((at, _)) => at,
            None if at_end => rest.len(),
            None => rest.len() - held(rest, &ends),
        };
        self.token.push_str(&rest[..take]);
        let Some((_, m)) = found else {
            if self.streams_string() {
                self.stream_string(false, out);
            }
            return Step::Wait(take);
        };
        self.end_value(out);
        self.mode = Mode::Params;
        Step::Go(if m == spec.value_close {
            take + m.len()
        } else {
            take
        })
    }

    /// After a call: whitespace before another call or at the end is dropped; before other
    /// text it is content.
    fn step_between(&mut self, spec: &Spec, rest: &str, at_end: bool) -> Step {
        let ws = rest.len() - rest.trim_start().len();
        let next = &rest[ws..];
        if next.is_empty() {
            return Step::Wait(if at_end { rest.len() } else { 0 });
        }
        let openers = call_openers(spec);
        let opens = openers.iter().any(|m| next.starts_with(m));
        if !opens && !at_end && openers.iter().any(|m| m.starts_with(next)) {
            return Step::Wait(0);
        }
        self.mode = Mode::Content;
        Step::Go(if opens { ws } else { 0 })
    }

    /// After `</function>` (or a skipped call), up to `</tool_call>`.
    /// A call that opens first (its `</tool_call>` was left out) is read as the next call.
    fn step_after_func(&mut self, spec: &Spec, rest: &str, at_end: bool) -> Step {
        let mut markers = call_openers(spec);
        markers.push(spec.call_end);
        match first_of(rest, &markers) {
            Some((at, m)) if m == spec.call_end => {
                self.mode = Mode::Between;
                Step::Go(at + m.len())
            }
            // A section's next call.
            Some((at, m)) if spec.section && Some(m) == spec.func_open => {
                self.pending.clear();
                self.pending.push_str(m);
                self.token.clear();
                self.mode = Mode::Name;
                Step::Go(at + m.len())
            }
            Some((at, _)) => {
                self.mode = Mode::Content;
                Step::Go(at)
            }
            None => Step::Wait(rest.len() - if at_end { 0 } else { held(rest, &markers) }),
        }
    }
}

impl Scan for XmlParser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let spec = self.family.spec();
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            let step = match self.mode {
                Mode::Content => self.step_content(&spec, rest, at_end, out),
                Mode::Open => self.step_open(&spec, rest, at_end, out),
                Mode::Name => self.step_name(&spec, rest, at_end, out),
                Mode::Params => self.step_params(&spec, rest, at_end, out),
                Mode::Key => self.step_key(&spec, rest, at_end, out),
                Mode::BeforeValue => self.step_before_value(&spec, rest, at_end),
                Mode::Value => self.step_value(&spec, rest, at_end, out),
                Mode::Between => self.step_between(&spec, rest, at_end),
                Mode::AfterFunc => self.step_after_func(&spec, rest, at_end),
            };
            match step {
                Step::Go(n) => i += n,
                Step::Wait(n) => return i + n,
            }
        }
        i
    }
}

impl ToolParser for XmlParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        if self.family == XmlFamily::Glm45 && self.mode == Mode::Name && self.token.is_empty() {
            // A `<tool_call>` at the very end, nothing but whitespace after it: vLLM's glm45
            // engine ends a call with no name there and drops it, opener and all.
            self.pending.clear();
        }
        // A call cut off inside its parameters is closed; an unfinished header is content.
        match self.mode {
            Mode::Value => self.end_value(out),
            Mode::BeforeValue => out.args(self.index(), "null"),
            _ => {}
        }
        if matches!(
            self.mode,
            Mode::Params | Mode::Key | Mode::BeforeValue | Mode::Value
        ) {
            self.close_args(out);
        }
        let pending = std::mem::take(&mut self.pending);
        self.push_content(&pending, out);
        self.content.finish(self.calls > 0, out);
        self.buf.clear();
        self.mode = Mode::Content;
        self.bare = false;
    }
}
