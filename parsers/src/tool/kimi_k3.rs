//! Kimi K3 (`kimi_k3`) tool calls, checked against vLLM's `KimiK3ToolParser`
//! (`vllm/tool_parsers/kimi_k3_tool_parser.py`, the same in 0.32 and 0.33). K3 writes "XTML"
//! channels out of three special tokens, `<|open|>`, `<|close|>` and `<|sep|>`:
//!
//! ```text
//! <|open|>response<|sep|>Let me check.<|close|>response<|sep|>
//! <|open|>tools<|sep|>
//!   <|open|>call tool="get_weather" index="1"<|sep|>
//!     <|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>
//!     <|open|>argument key="days" type="integer"<|sep|>3<|close|>argument<|sep|>
//!   <|close|>call<|sep|>
//! <|close|>tools<|sep|>
//! ```
//!
//! As vLLM reads it:
//! * the `response` channel is unwrapped into content (its opener may have been written by
//!   the template as the generation prefix, so the output may start inside it); text after
//!   `<|close|>response<|sep|>` and before the tools channel is dropped, and so is the end of
//!   turn `<|close|>message<|sep|>`;
//! * inside `<|open|>tools<|sep|>`, each `call` is sent whole when its `<|close|>call<|sep|>`
//!   arrives; its name is the `tool` attribute (a call without one is dropped; a name the
//!   request does not declare is kept, as vLLM keeps it);
//! * an argument of `type="string"` is its raw text; any other type is read as JSON, and
//!   kept as the raw text where that fails; there is no schema typing. Attribute values are
//!   unescaped (`&quot;` then `&amp;`). Arguments are written as Python's `json.dumps`;
//! * whitespace inside a marker (`<|open|> tools <|sep|>`) is tolerated;
//! * a call left open at the end is dropped, and text after the tools channel is dropped.
//!
//! Where vLLM's two paths disagree, ours is one of them (listed in the case file): the end
//! of turn is dropped (vLLM's stream leaks it), and text between the response channel and
//! the tools channel is dropped (as vLLM's stream and its one-shot of a wrapped response).

use super::{Parsed, Scan, ToolParser};
use crate::pyjson::{dumps_pairs, dumps_str};
use crate::tool::coerce::json_roundtrip;
use serde::{Deserialize, Serialize};

const OPEN: &str = "<|open|>";
const CLOSE: &str = "<|close|>";
const SEP: &str = "<|sep|>";
/// Longest text between `<|open|>`/`<|close|>` and `<|sep|>` read as one marker (a call's
/// attributes); anything longer is text.
const MAX_TAG: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    /// Content: the response channel, or text outside any channel.
    Content,
    /// After `<|close|>response<|sep|>`: text dropped until the tools channel.
    AfterResponse,
    /// Inside `<|open|>tools<|sep|>`, between calls.
    Tools,
    /// Inside a call: its body up to `<|close|>call<|sep|>`.
    Call,
    /// After `<|close|>tools<|sep|>`: everything dropped.
    Done,
}

/// The state machine for Kimi K3's channels; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KimiK3Parser {
    mode: Mode,
    buf: String,
    calls: usize,
    /// The current call's attributes and body.
    attrs: String,
    body: String,
}

/// A marker `<|open|>inner<|sep|>` or `<|close|>inner<|sep|>` found in the text.
struct Tag<'a> {
    at: usize,
    len: usize,
    close: bool,
    inner: &'a str,
}

/// What the text holds next.
enum Next<'a> {
    /// No marker starts before this offset (a partial one may follow).
    Text(usize),
    /// A marker starts at this offset but is not complete yet.
    Undecided(usize),
    Tag(Tag<'a>),
}

fn first_marker(rest: &str, from: usize) -> Option<(usize, bool)> {
    let o = rest[from..].find(OPEN).map(|i| (i + from, false));
    let c = rest[from..].find(CLOSE).map(|i| (i + from, true));
    match (o, c) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// The next marker in `rest`; `<|open|>` or `<|close|>` without a `<|sep|>` within
/// [`MAX_TAG`] bytes is text.
fn next_tag(rest: &str, at_end: bool) -> Next<'_> {
    let mut from = 0;
    while let Some((at, close)) = first_marker(rest, from) {
        let lead = if close { CLOSE.len() } else { OPEN.len() };
        let after = &rest[at + lead..];
        match after.find(SEP) {
            Some(s) if s <= MAX_TAG => {
                return Next::Tag(Tag {
                    at,
                    len: lead + s + SEP.len(),
                    close,
                    inner: &after[..s],
                })
            }
            // A `<|sep|>` that starts within the limit may still be arriving.
            None if !at_end && after.len() < MAX_TAG + SEP.len() => return Next::Undecided(at),
            _ => from = at + lead,
        }
    }
    let hold = if at_end {
        0
    } else {
        crate::partial_suffix(rest, OPEN).max(crate::partial_suffix(rest, CLOSE))
    };
    Next::Text(rest.len() - hold)
}

/// The marker's word, with vLLM's tolerance of whitespace around it (`\s*word\s*`).
fn is(tag: &Tag, close: bool, word: &str) -> bool {
    tag.close == close && tag.inner.trim() == word
}

/// An element opener with attributes (`<|open|>call tool="f"<|sep|>`): its attribute text.
fn opener<'a>(tag: &Tag<'a>, word: &str) -> Option<&'a str> {
    if tag.close {
        return None;
    }
    let rest = tag.inner.trim_start().strip_prefix(word)?;
    rest.starts_with(char::is_whitespace).then_some(rest)
}

/// `key="value"` pairs, values unescaped as vLLM unescapes them (`&quot;`, then `&amp;`).
fn attrs(text: &str) -> Vec<(String, String)> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(eq) = text[from..].find("=\"").map(|i| i + from) {
        let key_start = text[..eq]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| word(c))
            .last()
            .map(|(i, _)| i);
        let value_start = eq + 2;
        let Some(len) = text[value_start..].find('"') else {
            break;
        };
        if let Some(k) = key_start.filter(|&k| k >= from) {
            let value = &text[value_start..value_start + len];
            let value = value.replace("&quot;", "\"").replace("&amp;", "&");
            out.push((text[k..eq].to_string(), value));
            from = value_start + len + 1;
        } else {
            from = eq + 1;
        }
    }
    out
}

fn attr<'a>(list: &'a [(String, String)], key: &str) -> Option<&'a str> {
    // Python's dict of the pairs: the last of a repeated key wins.
    list.iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A call's arguments object, from the `argument` elements of its body.
fn arguments(body: &str) -> String {
    let mut args: Vec<(String, String)> = Vec::new();
    let mut rest = body;
    while let Next::Tag(tag) = next_tag(rest, true) {
        let after = &rest[tag.at + tag.len..];
        let Some(attr_text) = opener(&tag, "argument") else {
            rest = &rest[tag.at + 1..];
            continue;
        };
        // The value runs to the first `<|close|>argument<|sep|>`.
        let mut scan = after;
        let mut value_end = None;
        while let Next::Tag(end) = next_tag(scan, true) {
            if is(&end, true, "argument") {
                value_end = Some((after.len() - scan.len() + end.at, end.len));
                break;
            }
            scan = &scan[end.at + 1..];
        }
        let Some((end, end_len)) = value_end else {
            break;
        };
        let list = attrs(attr_text);
        let key = attr(&list, "key").unwrap_or_default().to_string();
        let raw = &after[..end];
        let json = match attr(&list, "type").unwrap_or("string") {
            "string" => dumps_str(raw),
            _ => json_roundtrip(raw).unwrap_or_else(|| dumps_str(raw)),
        };
        match args.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = json,
            None => args.push((key, json)),
        }
        rest = &after[end + end_len..];
    }
    dumps_pairs(&args)
}

impl Default for KimiK3Parser {
    fn default() -> Self {
        Self::new()
    }
}

impl KimiK3Parser {
    pub fn new() -> Self {
        KimiK3Parser {
            mode: Mode::Content,
            buf: String::new(),
            calls: 0,
            attrs: String::new(),
            body: String::new(),
        }
    }

    /// The call closed: sent whole, unless it names no tool.
    fn end_call(&mut self, out: &mut Parsed) {
        let list = attrs(&std::mem::take(&mut self.attrs));
        let body = std::mem::take(&mut self.body);
        if let Some(name) = attr(&list, "tool").filter(|n| !n.is_empty()) {
            out.start_call(self.calls, name.to_string(), None);
            out.args(self.calls, &arguments(&body));
            self.calls += 1;
        }
        self.mode = Mode::Tools;
    }

    /// A call's body up to its `<|close|>call<|sep|>`; returns the bytes consumed and
    /// whether to go on.
    fn step_call(&mut self, rest: &str, at_end: bool, out: &mut Parsed) -> (usize, bool) {
        let mut from = 0;
        loop {
            let Some(c) = rest[from..].find(CLOSE).map(|i| i + from) else {
                let n = rest.len()
                    - if at_end {
                        0
                    } else {
                        crate::partial_suffix(rest, CLOSE)
                    };
                self.body.push_str(&rest[..n]);
                return (n, false);
            };
            match next_tag(&rest[c..], at_end) {
                Next::Tag(tag) if tag.at == 0 && is(&tag, true, "call") => {
                    self.body.push_str(&rest[..c]);
                    self.end_call(out);
                    return (c + tag.len, true);
                }
                Next::Undecided(0) => {
                    self.body.push_str(&rest[..c]);
                    return (c, false);
                }
                _ => from = c + CLOSE.len(),
            }
        }
    }
}

impl Scan for KimiK3Parser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let mut used = 0;
        loop {
            let rest = &text[used..];
            if self.mode == Mode::Call {
                let (n, go) = self.step_call(rest, at_end, out);
                used += n;
                if go {
                    continue;
                }
                return used;
            }
            let keep = matches!(self.mode, Mode::Content);
            match next_tag(rest, at_end) {
                Next::Text(n) => {
                    if keep {
                        out.content.push_str(&rest[..n]);
                    }
                    return used + n;
                }
                Next::Undecided(at) => {
                    if keep {
                        out.content.push_str(&rest[..at]);
                    }
                    return used + at;
                }
                Next::Tag(tag) => {
                    if keep {
                        out.content.push_str(&rest[..tag.at]);
                    }
                    let whole = &rest[tag.at..tag.at + tag.len];
                    match self.mode {
                        Mode::Content | Mode::AfterResponse => {
                            if is(&tag, false, "tools") {
                                self.mode = Mode::Tools;
                            } else if is(&tag, true, "response") {
                                self.mode = Mode::AfterResponse;
                            } else if is(&tag, false, "response") || is(&tag, true, "message") {
                                // Dropped.
                            } else if keep {
                                out.content.push_str(whole);
                            }
                        }
                        Mode::Tools => {
                            if let Some(a) = opener(&tag, "call") {
                                self.attrs = a.to_string();
                                self.body.clear();
                                self.mode = Mode::Call;
                            } else if is(&tag, true, "tools") {
                                self.mode = Mode::Done;
                            }
                        }
                        Mode::Call | Mode::Done => {}
                    }
                    used += tag.at + tag.len;
                }
            }
        }
    }
}

impl ToolParser for KimiK3Parser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        // A call left open is dropped, as vLLM drops it.
        self.attrs.clear();
        self.body.clear();
    }
}
