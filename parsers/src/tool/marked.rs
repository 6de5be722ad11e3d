//! Tool calls between markers, with JSON arguments: one state machine for six families,
//! each described by data ([`Spec`]).
//!
//! | family | wire format |
//! |---|---|
//! | `hermes` (Qwen 2.5/3, Hermes) | `<tool_call>\n{"name": "f", "arguments": {..}}\n</tool_call>`, anywhere in the text |
//! | `llama3_json` | `<\|python_tag\|>{"name": "f", "parameters": {..}}`, or the same object as the first thing in the output; several joined by `;` |
//! | `mistral` | `[TOOL_CALLS][{"name": "f", "arguments": {..}}, ..]` (v0.3) or `[TOOL_CALLS]f[ARGS]{..}` (v11+), repeated per call |
//! | `deepseek_v3` | `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{..}\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>` |
//! | `deepseek_v31` | `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{..}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>` |
//! | `kimi_k2` | `<\|tool_calls_section_begin\|><\|tool_call_begin\|>functions.f:0<\|tool_call_argument_begin\|>{..}<\|tool_call_end\|>…<\|tool_calls_section_end\|>` |
//!
//! These are the formats vLLM's parsers of the same names read (`vllm/entrypoints/openai/
//! tool_parsers/`); `parameters` is accepted wherever `arguments` is. Text outside calls is
//! content, kept in order; whitespace between calls is dropped.

use super::json_scan::{Step, ValueScan};
use super::{Parsed, Scan, ToolParser};
use serde::{Deserialize, Serialize};

/// The families this machine reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkedFamily {
    Hermes,
    Llama3Json,
    Mistral,
    DeepseekV3,
    DeepseekV31,
    KimiK2,
}

/// How a call's name is written.
#[derive(Debug, Clone, Copy)]
enum Body {
    /// A JSON object `{"name": .., "arguments"|"parameters": ..}`.
    Object,
    /// `<prefix>name<sep>` then the arguments value.
    Named {
        prefix: &'static str,
        sep: &'static str,
    },
}

/// One family's markers.
#[derive(Debug, Clone, Copy)]
struct Spec {
    /// Markers around the block of calls, where the family has them.
    section: Option<(&'static str, &'static str)>,
    call_start: &'static str,
    call_end: Option<&'static str>,
    body: Body,
}

const DS_SEP: &str = "<｜tool▁sep｜>";

impl MarkedFamily {
    fn spec(self) -> Spec {
        match self {
            MarkedFamily::Hermes => Spec {
                section: None,
                call_start: "<tool_call>",
                call_end: Some("</tool_call>"),
                body: Body::Object,
            },
            MarkedFamily::Llama3Json => Spec {
                section: None,
                call_start: "<|python_tag|>",
                call_end: None,
                body: Body::Object,
            },
            // The body style (array, object or name) is chosen per call: see `begin_body`.
            MarkedFamily::Mistral => Spec {
                section: None,
                call_start: "[TOOL_CALLS]",
                call_end: None,
                body: Body::Named {
                    prefix: "",
                    sep: "[ARGS]",
                },
            },
            MarkedFamily::DeepseekV3 => Spec {
                section: Some(("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")),
                call_start: "<｜tool▁call▁begin｜>",
                call_end: Some("<｜tool▁call▁end｜>"),
                body: Body::Named {
                    prefix: "function<｜tool▁sep｜>",
                    sep: "\n```json\n",
                },
            },
            MarkedFamily::DeepseekV31 => Spec {
                section: Some(("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")),
                call_start: "<｜tool▁call▁begin｜>",
                call_end: Some("<｜tool▁call▁end｜>"),
                body: Body::Named {
                    prefix: "",
                    sep: DS_SEP,
                },
            },
            MarkedFamily::KimiK2 => Spec {
                section: Some(("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>")),
                call_start: "<|tool_call_begin|>",
                call_end: Some("<|tool_call_end|>"),
                body: Body::Named {
                    prefix: "",
                    sep: "<|tool_call_argument_begin|>",
                },
            },
        }
    }
}

/// Where a JSON call object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum ObjPhase {
    Open,
    Key,
    KeyString,
    Colon,
    Value,
    Name,
    Args,
    Skip,
    After,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    /// Ordinary text. `at_start`: only whitespace so far (llama3_json's bare JSON).
    Content {
        at_start: bool,
    },
    /// Inside a section, between calls.
    Section,
    /// Just after mistral's `[TOOL_CALLS]`: array, object or name follows.
    MistralBody,
    /// Inside mistral's `[..]` array, between call objects.
    MistralArray,
    Object(ObjPhase),
    Name,
    Args,
    /// The call's value is done: drop text up to the call's end marker.
    AfterCall,
    /// Between calls of a family without sections: whitespace (and llama3_json's `;`) is
    /// dropped before another call or at the end, and is content before other text.
    Between,
}

/// The state machine for the [`MarkedFamily`] formats; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MarkedParser {
    family: MarkedFamily,
    mode: Mode,
    /// Text received and not yet processed (a partial marker, at most).
    buf: String,
    /// Text consumed since a call began and before its name was known: content again if the
    /// call turns out malformed.
    pending: String,
    /// The current JSON value (arguments, or a key/name string being read).
    scan: ValueScan,
    /// A key or name being read, raw.
    token: String,
    /// The current object member's key.
    key: String,
    /// Arguments read before the name (object bodies may list them first).
    early_args: String,
    /// Calls started so far; the current call is `calls - 1`.
    calls: usize,
    /// Whether the current call is streamed (its name is known).
    committed: bool,
    /// Whether the current call has emitted any arguments text.
    args_sent: bool,
    /// Whether the mistral call being read sits in a `[..]` array.
    in_array: bool,
}

/// Longest name accepted; anything longer is not a call.
const MAX_NAME: usize = 256;

enum Mark {
    Yes,
    Partial,
    No,
}

fn mark(rest: &str, marker: &str, at_end: bool) -> Mark {
    if rest.starts_with(marker) {
        Mark::Yes
    } else if !at_end && !rest.is_empty() && marker.starts_with(rest) {
        Mark::Partial
    } else {
        Mark::No
    }
}

impl MarkedParser {
    pub fn new(family: MarkedFamily) -> Self {
        MarkedParser {
            family,
            mode: Mode::Content { at_start: true },
            buf: String::new(),
            pending: String::new(),
            scan: ValueScan::default(),
            token: String::new(),
            key: String::new(),
            early_args: String::new(),
            calls: 0,
            committed: false,
            args_sent: false,
            in_array: false,
        }
    }

    fn spec(&self) -> Spec {
        self.family.spec()
    }

    fn index(&self) -> usize {
        self.calls.saturating_sub(1)
    }

    /// A call begins: what was consumed for it so far is `pending`.
    fn begin_call(&mut self) {
        self.committed = false;
        self.args_sent = false;
        self.token.clear();
        self.key.clear();
        self.early_args.clear();
        self.scan = ValueScan::default();
    }

    /// The call's name is known: stream it, then any arguments read before it.
    fn commit(&mut self, name: String, id: Option<String>, out: &mut Parsed) {
        self.calls += 1;
        self.committed = true;
        self.pending.clear();
        out.start_call(self.index(), name, id);
        if !self.early_args.is_empty() {
            let early = std::mem::take(&mut self.early_args);
            out.args(self.index(), &early);
            self.args_sent = true;
        }
    }

    fn send_args(&mut self, text: &str, out: &mut Parsed) {
        if text.is_empty() {
            return;
        }
        if self.committed {
            out.args(self.index(), text);
            self.args_sent = true;
        } else {
            self.early_args.push_str(text);
        }
    }

    /// The current call is complete: a call without arguments gets `{}`.
    fn end_call(&mut self, out: &mut Parsed) {
        if self.committed && !self.args_sent {
            out.args(self.index(), "{}");
        }
        self.committed = false;
        self.args_sent = false;
    }

    /// Not a call after all: what was consumed for it is content, and so is what follows.
    fn malformed(&mut self, out: &mut Parsed) {
        out.content.push_str(&self.pending);
        self.pending.clear();
        if !self.early_args.is_empty() {
            self.early_args.clear();
        }
        self.committed = false;
        self.in_array = false;
        self.mode = Mode::Content { at_start: false };
    }

    /// Where to go once a call's end marker is consumed: back into the section, or between
    /// calls.
    fn after_call_mode(&self) -> Mode {
        if self.spec().section.is_some() {
            Mode::Section
        } else {
            Mode::Between
        }
    }
}

impl Scan for MarkedParser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    /// Consumes as much of `text` as can be decided; returns the bytes consumed.
    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let spec = self.spec();
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            let Some(c) = rest.chars().next() else { break };
            match self.mode {
                Mode::Content { at_start } => {
                    if at_start && self.family == MarkedFamily::Llama3Json {
                        if c.is_whitespace() {
                            self.pending.push(c);
                            i += c.len_utf8();
                            continue;
                        }
                        if c == '{' {
                            self.begin_call();
                            self.mode = Mode::Object(ObjPhase::Open);
                            continue;
                        }
                    }
                    if at_start {
                        out.content.push_str(&self.pending);
                        self.pending.clear();
                        self.mode = Mode::Content { at_start: false };
                    }
                    let opener = spec.section.map_or(spec.call_start, |s| s.0);
                    match rest.find(opener) {
                        Some(at) => {
                            out.content.push_str(&rest[..at]);
                            self.pending.push_str(opener);
                            i += at + opener.len();
                            self.begin_call();
                            self.mode = match (spec.section, self.family) {
                                (Some(_), _) => Mode::Section,
                                (None, MarkedFamily::Mistral) => Mode::MistralBody,
                                (None, _) => match spec.body {
                                    Body::Object => Mode::Object(ObjPhase::Open),
                                    Body::Named { .. } => Mode::Name,
                                },
                            };
                        }
                        None => {
                            let keep = if at_end {
                                0
                            } else {
                                crate::partial_suffix(rest, opener)
                            };
                            out.content.push_str(&rest[..rest.len() - keep]);
                            i += rest.len() - keep;
                            return i;
                        }
                    }
                }
                Mode::Section => {
                    let Some((_, section_end)) = spec.section else {
                        self.mode = Mode::Content { at_start: false };
                        continue;
                    };
                    if c.is_whitespace() {
                        if !self.pending.is_empty() {
                            self.pending.push(c);
                        }
                        i += c.len_utf8();
                        continue;
                    }
                    match (
                        mark(rest, spec.call_start, at_end),
                        mark(rest, section_end, at_end),
                    ) {
                        (Mark::Yes, _) => {
                            self.pending.push_str(spec.call_start);
                            i += spec.call_start.len();
                            self.begin_call();
                            self.mode = Mode::Name;
                        }
                        (_, Mark::Yes) => {
                            i += section_end.len();
                            if !self.pending.is_empty() {
                                // A section with no call in it: keep it as content.
                                self.pending.push_str(section_end);
                                out.content.push_str(&self.pending);
                                self.pending.clear();
                            }
                            self.mode = Mode::Content { at_start: false };
                        }
                        (Mark::Partial, _) | (_, Mark::Partial) => return i,
                        (Mark::No, Mark::No) => self.malformed(out),
                    }
                }
                Mode::MistralBody => {
                    if c.is_whitespace() {
                        self.pending.push(c);
                        i += c.len_utf8();
                        continue;
                    }
                    match c {
                        '[' => {
                            self.pending.push(c);
                            i += 1;
                            self.in_array = true;
                            self.mode = Mode::MistralArray;
                        }
                        '{' => {
                            self.in_array = false;
                            self.mode = Mode::Object(ObjPhase::Open);
                        }
                        _ => {
                            self.in_array = false;
                            self.mode = Mode::Name;
                        }
                    }
                }
                // `pending` is non-empty exactly until the array's first call is named.
                Mode::MistralArray => match c {
                    c if c.is_whitespace() || c == ',' => {
                        if !self.pending.is_empty() {
                            self.pending.push(c);
                        }
                        i += 1;
                    }
                    '{' => {
                        self.begin_call();
                        self.mode = Mode::Object(ObjPhase::Open);
                    }
                    ']' => {
                        i += 1;
                        self.in_array = false;
                        if self.pending.is_empty() {
                            self.mode = Mode::AfterCall;
                        } else {
                            self.pending.push(c);
                            self.malformed(out);
                        }
                    }
                    _ => {
                        self.in_array = false;
                        if self.pending.is_empty() {
                            self.mode = Mode::Content { at_start: false };
                        } else {
                            self.malformed(out);
                        }
                    }
                },
                Mode::Name => {
                    let Body::Named { prefix, sep } = spec.body else {
                        self.malformed(out);
                        continue;
                    };
                    let found = rest.find(sep);
                    let avail = found.unwrap_or(rest.len() - crate::partial_suffix(rest, sep));
                    let limit = MAX_NAME + prefix.len();
                    if let Some(cut) =
                        super::name_cut(self.token.len(), &rest[..avail], limit, |c| c == '\n')
                    {
                        self.pending.push_str(&rest[..cut]);
                        i += cut;
                        self.malformed(out);
                        continue;
                    }
                    let Some(at) = found else {
                        self.token.push_str(&rest[..avail]);
                        self.pending.push_str(&rest[..avail]);
                        i += avail;
                        if at_end {
                            self.malformed(out);
                            continue;
                        }
                        return i;
                    };
                    self.token.push_str(&rest[..at]);
                    self.pending.push_str(&rest[..at + sep.len()]);
                    i += at + sep.len();
                    let raw = std::mem::take(&mut self.token);
                    let raw = raw.trim();
                    let raw = raw.strip_prefix(prefix).unwrap_or(raw);
                    let (name, id) = self.call_name(raw);
                    if name.is_empty()
                        || name.len() > MAX_NAME
                        || name.contains(|c: char| c.is_whitespace() || c == '<' || c == '>')
                    {
                        self.malformed(out);
                        continue;
                    }
                    self.commit(name, id, out);
                    self.scan = ValueScan::default();
                    self.mode = Mode::Args;
                }
                Mode::Args => {
                    if let Some(end) = spec.call_end.filter(|_| !self.scan.in_string()) {
                        match mark(rest, end, at_end) {
                            Mark::Yes => {
                                i += end.len();
                                self.end_call(out);
                                self.mode = self.after_call_mode();
                                continue;
                            }
                            Mark::Partial => return i,
                            Mark::No => {}
                        }
                    }
                    if !self.scan.started() && c.is_whitespace() {
                        i += c.len_utf8();
                        continue;
                    }
                    // Stream a run of characters up to the value's end or a possible marker.
                    let mut j = i;
                    let mut ended = false;
                    for (k, ch) in rest.char_indices() {
                        if k > 0
                            && !self.scan.in_string()
                            && spec.call_end.is_some_and(|e| e.starts_with(ch))
                        {
                            break;
                        }
                        match self.scan.step(ch) {
                            Step::More => j = i + k + ch.len_utf8(),
                            Step::Last => {
                                j = i + k + ch.len_utf8();
                                ended = true;
                                break;
                            }
                            Step::EndedBefore => {
                                ended = true;
                                break;
                            }
                            Step::Invalid => {
                                // Not JSON: the call keeps what it has; skip to its end.
                                ended = true;
                                break;
                            }
                        }
                    }
                    let run = &text[i..j];
                    self.send_args(run, out);
                    i = j;
                    if ended {
                        self.end_call(out);
                        self.mode = Mode::AfterCall;
                    } else if j == text.len() {
                        if at_end {
                            self.end_call(out);
                        }
                        return i;
                    }
                }
                Mode::Object(phase) => {
                    if let Some(end) = spec.call_end.filter(|_| !self.scan.in_string()) {
                        match mark(rest, end, at_end) {
                            Mark::Yes => {
                                if self.committed {
                                    i += end.len();
                                    self.end_call(out);
                                    self.mode = self.after_call_mode();
                                } else {
                                    self.malformed(out);
                                }
                                continue;
                            }
                            Mark::Partial => return i,
                            Mark::No => {}
                        }
                    }
                    // A consumed character belongs to the call; before the name it is also
                    // recorded, to become content if the call turns out malformed.
                    let was_committed = self.committed;
                    if self.object_char(phase, c, out) {
                        if !was_committed && !self.committed {
                            self.pending.push(c);
                        }
                        i += c.len_utf8();
                    }
                }
                Mode::AfterCall => match spec.call_end {
                    Some(end) => match rest.find(end) {
                        Some(at) => {
                            i += at + end.len();
                            self.mode = self.after_call_mode();
                        }
                        None => {
                            let keep = if at_end {
                                0
                            } else {
                                crate::partial_suffix(rest, end)
                            };
                            i += rest.len() - keep;
                            return i;
                        }
                    },
                    None if self.in_array => self.mode = Mode::MistralArray,
                    None => self.mode = Mode::Between,
                },
                Mode::Between => {
                    {
                        if c.is_whitespace()
                            || (c == ';' && self.family == MarkedFamily::Llama3Json)
                        {
                            // Held, not dropped, until what follows is known: whitespace at
                            // the very end is dropped, before text it is content.
                            let ws_end = rest
                                .find(|ch: char| !(ch.is_whitespace() || ch == ';'))
                                .unwrap_or(rest.len());
                            if ws_end == rest.len() && !at_end {
                                return i;
                            }
                            if ws_end == rest.len() {
                                return text.len();
                            }
                            let next = &rest[ws_end..];
                            if !at_end && spec.call_start.starts_with(next) {
                                return i; // a partial marker: wait for it
                            }
                            let is_next_call = next.starts_with(spec.call_start)
                                || (self.family == MarkedFamily::Llama3Json
                                    && next.starts_with('{'));
                            if is_next_call {
                                i += ws_end;
                            } else {
                                self.mode = Mode::Content { at_start: false };
                            }
                            continue;
                        }
                        if self.family == MarkedFamily::Llama3Json && c == '{' {
                            self.begin_call();
                            self.mode = Mode::Object(ObjPhase::Open);
                            continue;
                        }
                        self.mode = Mode::Content { at_start: false };
                    }
                }
            }
        }
        i
    }
}

impl MarkedParser {
    /// Kimi K2 writes `functions.NAME:IDX` and uses it as the call id.
    fn call_name(&self, raw: &str) -> (String, Option<String>) {
        if self.family == MarkedFamily::KimiK2 {
            let base = raw.split_once('.').map_or(raw, |(_, r)| r);
            let name = base.rsplit_once(':').map_or(base, |(n, _)| n);
            return (name.to_string(), Some(raw.to_string()));
        }
        (raw.to_string(), None)
    }

    /// One character of a JSON call object; returns whether it was consumed (a scalar's
    /// delimiter is not).
    fn object_char(&mut self, phase: ObjPhase, c: char, out: &mut Parsed) -> bool {
        let ws = c.is_whitespace();
        match phase {
            ObjPhase::Open => match c {
                _ if ws => true,
                '{' => {
                    self.mode = Mode::Object(ObjPhase::Key);
                    true
                }
                _ => {
                    self.malformed(out);
                    false
                }
            },
            ObjPhase::Key => match c {
                _ if ws => true,
                '"' => {
                    self.scan = ValueScan::default();
                    self.scan.step(c);
                    self.token.clear();
                    self.token.push(c);
                    self.mode = Mode::Object(ObjPhase::KeyString);
                    true
                }
                '}' => self.close_object(out),
                _ => {
                    self.broken_object(out);
                    false
                }
            },
            ObjPhase::KeyString => {
                self.token.push(c);
                if self.scan.step(c) == Step::Last {
                    self.key = serde_json::from_str(&self.token).unwrap_or_default();
                    self.scan = ValueScan::default();
                    self.mode = Mode::Object(ObjPhase::Colon);
                }
                true
            }
            ObjPhase::Colon => match c {
                _ if ws => true,
                ':' => {
                    self.mode = Mode::Object(ObjPhase::Value);
                    true
                }
                _ => {
                    self.broken_object(out);
                    false
                }
            },
            ObjPhase::Value => {
                if ws {
                    return true;
                }
                self.scan = ValueScan::default();
                let next = match self.key.as_str() {
                    "name" if c == '"' && !self.committed => {
                        self.token.clear();
                        ObjPhase::Name
                    }
                    "arguments" | "parameters" => ObjPhase::Args,
                    _ => ObjPhase::Skip,
                };
                if self.scan.step(c) == Step::Invalid {
                    self.broken_object(out);
                    return false;
                }
                self.mode = Mode::Object(next);
                match next {
                    ObjPhase::Name => self.token.push(c),
                    ObjPhase::Args => {
                        let mut b = [0u8; 4];
                        self.send_args(c.encode_utf8(&mut b), out);
                    }
                    _ => {}
                }
                true
            }
            ObjPhase::Name => {
                self.token.push(c);
                if self.scan.step(c) == Step::Last {
                    let name: String = serde_json::from_str(&self.token).unwrap_or_default();
                    if name.is_empty() || name.len() > MAX_NAME {
                        self.token.pop();
                        self.malformed(out);
                        return false;
                    }
                    self.commit(name, None, out);
                    self.mode = Mode::Object(ObjPhase::After);
                }
                true
            }
            ObjPhase::Args | ObjPhase::Skip => match self.scan.step(c) {
                Step::More | Step::Last => {
                    if phase == ObjPhase::Args {
                        let mut b = [0u8; 4];
                        self.send_args(c.encode_utf8(&mut b), out);
                    }
                    if self.scan.done() {
                        self.mode = Mode::Object(ObjPhase::After);
                    }
                    true
                }
                Step::EndedBefore | Step::Invalid => {
                    self.mode = Mode::Object(ObjPhase::After);
                    false
                }
            },
            ObjPhase::After => match c {
                _ if ws => true,
                ',' => {
                    self.mode = Mode::Object(ObjPhase::Key);
                    true
                }
                '}' => self.close_object(out),
                _ => {
                    self.broken_object(out);
                    false
                }
            },
        }
    }

    /// The object's closing brace: returns whether it was consumed as part of a call (an
    /// object without a name is not a call, and its brace is content like the rest).
    fn close_object(&mut self, out: &mut Parsed) -> bool {
        if !self.committed {
            self.malformed(out);
            return false;
        }
        self.end_call(out);
        self.mode = Mode::AfterCall;
        true
    }

    /// Unexpected text inside a call object: before the name, not a call; after it, the call
    /// stands and the rest up to its end is dropped (or, without an end marker, is content).
    fn broken_object(&mut self, out: &mut Parsed) {
        if !self.committed {
            self.malformed(out);
            return;
        }
        self.end_call(out);
        self.mode = if self.spec().call_end.is_some() {
            Mode::AfterCall
        } else {
            self.in_array = false;
            Mode::Content { at_start: false }
        };
    }
}

impl ToolParser for MarkedParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        if self.committed {
            self.end_call(out);
        }
        // An unfinished call header is content.
        out.content.push_str(&self.pending);
        self.pending.clear();
        self.buf.clear();
    }
}
