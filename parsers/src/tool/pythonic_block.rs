//! Python calls in a block between two markers, anywhere in the text (`BlockFamily`):
//!
//! | family | wire format |
//! |---|---|
//! | `lfm2` (LiquidAI LFM2/LFM2.5) | `<\|tool_call_start\|>[get_weather(city='Paris'), now()]<\|tool_call_end\|>` |
//! | `olmo3` (OLMo 3) | `<function_calls>get_weather(city='Paris')\nnow()</function_calls>`, one call a line (or `, `) |
//!
//! Text before and after the block is content, as written (vLLM's streams; their one-shot
//! paths strip it, or drop it). Only the first block holds calls: what follows it is
//! content, as vLLM reads it, except lfm2's echo of the block (text starting with `[` or
//! `<`, up to another `<|tool_call_end|>`), which vLLM drops. Arguments are read as the
//! pythonic families read them (`pythonic.rs`), and lfm2's also as vLLM's lfm2 rewrites
//! them: zero-padded integers (`07`), and a string holding unescaped quotes of its own kind
//! where exactly one reading of them parses (`command='sed -n '1,9p' f.py'`). Each call is
//! sent whole when its `)` arrives, if its arguments read; a call that does not read, or is
//! cut off, is dropped and the calls around it stay. A block that is not calls is content.

use super::pythonic::parse_kwargs;
use super::{Parsed, Scan, ToolParser, MAX_NAME};
use crate::pyjson::dumps;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The families this machine reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockFamily {
    Lfm2,
    Olmo3,
}

impl BlockFamily {
    fn markers(self) -> (&'static str, &'static str) {
        match self {
            BlockFamily::Lfm2 => ("<|tool_call_start|>", "<|tool_call_end|>"),
            BlockFamily::Olmo3 => ("<function_calls>", "</function_calls>"),
        }
    }

    /// Whether the calls are a `[..]` list (lfm2), or one a line (olmo3). lfm2 is also the
    /// family that reads arguments leniently and whose echo of the block is dropped.
    fn bracketed(self) -> bool {
        self == BlockFamily::Lfm2
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    /// Before the block: content, watching for its start marker.
    Before,
    /// Just after the start marker: whitespace, then `[`.
    Open,
    /// Inside the list, between calls.
    List,
    /// A call's name.
    Name,
    /// Inside a call's parentheses.
    Args,
    /// After an element that is not a call: the rest of the block is dropped.
    Skip,
    /// After the list's `]`: whitespace, then the end marker.
    AfterList,
    /// After the block: content, except an echo of the block.
    Trailing,
    /// Text that may echo the block: held until another end marker drops it.
    Echo,
    /// Content to the end.
    Text,
}

/// The block state machine; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PythonicBlockParser {
    family: BlockFamily,
    mode: Mode,
    buf: String,
    /// The block's text until its first call is read: content if the block is not a list of
    /// calls. After the block: whitespace, or a possible echo, not yet known to be content.
    pending: String,
    /// The name or argument text being read.
    token: String,
    name: String,
    calls: usize,
    /// Whether a call has been read whole (sent or dropped): the block is a list of calls.
    listed: bool,
    depth: u32,
    quote: Option<char>,
    escaped: bool,
}

impl PythonicBlockParser {
    pub fn new(family: BlockFamily) -> Self {
        PythonicBlockParser {
            family,
            mode: Mode::Before,
            buf: String::new(),
            pending: String::new(),
            token: String::new(),
            name: String::new(),
            calls: 0,
            listed: false,
            depth: 0,
            quote: None,
            escaped: false,
        }
    }

    /// Not a list of calls: before any call was read, the block is content (and so is the
    /// rest); after one, the rest of the block is dropped.
    fn not_a_call(&mut self, out: &mut Parsed) {
        if self.listed {
            self.mode = Mode::Skip;
        } else {
            out.content.push_str(&std::mem::take(&mut self.pending));
            self.mode = Mode::Text;
        }
    }

    fn record(&mut self, text: &str) {
        if !self.listed {
            self.pending.push_str(text);
        }
    }

    /// A call's `)`: sent if its arguments read.
    fn end_call(&mut self, out: &mut Parsed) {
        let args = std::mem::take(&mut self.token);
        let name = std::mem::take(&mut self.name);
        self.listed = true;
        self.pending.clear();
        let lenient = self.family == BlockFamily::Lfm2;
        let kwargs = parse_kwargs(&args, lenient).or_else(|| requoted(&args).filter(|_| lenient));
        if let Some(kwargs) = kwargs {
            out.start_call(self.calls, name, None);
            out.args(self.calls, &dumps(&Value::Object(kwargs)));
            self.calls += 1;
        }
        self.mode = Mode::List;
    }
}

impl PythonicBlockParser {
    /// After the block's end marker: lfm2 watches for its echo, olmo3's rest is content.
    fn after_block(&self) -> Mode {
        if self.family.bracketed() {
            Mode::Trailing
        } else {
            Mode::Text
        }
    }
}

/// Whether `rest` starts with `marker` (`Some(true)`), cannot (`Some(false)`), or may once
/// more text comes (`None`).
fn mark_at(rest: &str, marker: &str, at_end: bool) -> Option<bool> {
    if rest.starts_with(marker) {
        Some(true)
    } else if !at_end && marker.starts_with(rest) {
        None
    } else {
        Some(false)
    }
}

/// Where a marker may begin at the end of `rest`, if it is not known yet.
fn partial(rest: &str, marker: &str, at_end: bool) -> usize {
    if at_end {
        0
    } else {
        crate::partial_suffix(rest, marker)
    }
}

impl Scan for PythonicBlockParser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let (start, end) = self.family.markers();
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            let Some(c) = rest.chars().next() else { break };
            match self.mode {
                Mode::Before => match rest.find(start) {
                    Some(at) => {
                        out.content.push_str(&rest[..at]);
                        self.pending.push_str(start);
                        i += at + start.len();
                        self.mode = if self.family.bracketed() {
                            Mode::Open
                        } else {
                            Mode::List
                        };
                    }
                    None => {
                        let keep = partial(rest, start, at_end);
                        out.content.push_str(&rest[..rest.len() - keep]);
                        return i + rest.len() - keep;
                    }
                },
                Mode::Open if c.is_whitespace() => {
                    self.pending.push(c);
                    i += c.len_utf8();
                }
                Mode::Open if c == '[' => {
                    self.pending.push(c);
                    i += 1;
                    self.mode = Mode::List;
                }
                Mode::Open => self.not_a_call(out),
                Mode::List if !self.family.bracketed() && c == '<' => {
                    // olmo3's list ends at the end marker.
                    match mark_at(rest, end, at_end) {
                        Some(true) if self.listed => {
                            i += end.len();
                            self.mode = Mode::Text;
                        }
                        None => return i,
                        _ => self.not_a_call(out),
                    }
                }
                Mode::List => {
                    if c.is_whitespace() || c == ',' {
                        self.record(rest.get(..c.len_utf8()).unwrap_or_default());
                        i += c.len_utf8();
                    } else if c == ']' && self.listed && self.family.bracketed() {
                        i += 1;
                        self.mode = Mode::AfterList;
                    } else if c.is_alphabetic() || c == '_' {
                        self.token.clear();
                        self.mode = Mode::Name;
                    } else {
                        self.not_a_call(out);
                    }
                }
                Mode::Name => {
                    if c.is_alphanumeric() || c == '_' || c == '.' {
                        self.token.push(c);
                        self.record(rest.get(..c.len_utf8()).unwrap_or_default());
                        i += c.len_utf8();
                        if self.token.len() > MAX_NAME {
                            self.not_a_call(out);
                        }
                    } else if c == '(' {
                        self.record("(");
                        i += 1;
                        self.name = std::mem::take(&mut self.token);
                        self.depth = 0;
                        self.quote = None;
                        self.escaped = false;
                        self.mode = Mode::Args;
                    } else {
                        self.not_a_call(out);
                    }
                }
                Mode::Args => {
                    i += c.len_utf8();
                    if let Some(q) = self.quote {
                        if self.escaped {
                            self.escaped = false;
                        } else if c == '\\' {
                            self.escaped = true;
                        } else if c == q {
                            self.quote = None;
                        }
                    } else {
                        match c {
                            '"' | '\'' => self.quote = Some(c),
                            '(' | '[' | '{' => self.depth += 1,
                            ')' if self.depth == 0 => {
                                self.end_call(out);
                                continue;
                            }
                            ')' | ']' | '}' => self.depth = self.depth.saturating_sub(1),
                            _ => {}
                        }
                    }
                    self.token.push(c);
                    self.record(&text[i - c.len_utf8()..i]);
                }
                Mode::Skip => match rest.find(end) {
                    Some(at) => {
                        i += at + end.len();
                        self.mode = self.after_block();
                    }
                    None => return i + rest.len() - partial(rest, end, at_end),
                },
                Mode::AfterList => {
                    let trimmed = rest.trim_start();
                    if trimmed.starts_with(end) {
                        i += rest.len() - trimmed.len() + end.len();
                        self.mode = Mode::Trailing;
                    } else if !at_end && (trimmed.is_empty() || end.starts_with(trimmed)) {
                        return i;
                    } else {
                        self.mode = Mode::Trailing;
                    }
                }
                Mode::Trailing => {
                    // Whitespace is held until what follows shows whether it is an echo.
                    let trimmed = rest.trim_start();
                    let ws = rest.len() - trimmed.len();
                    self.pending.push_str(&rest[..ws]);
                    i += ws;
                    match trimmed.chars().next() {
                        None => return i,
                        Some('[' | '<') => self.mode = Mode::Echo,
                        Some(_) => {
                            out.content.push_str(&std::mem::take(&mut self.pending));
                            self.mode = Mode::Text;
                        }
                    }
                }
                Mode::Echo => match rest.find(end) {
                    Some(at) => {
                        // The model's echo of the block, capped by another end marker.
                        self.pending.clear();
                        i += at + end.len();
                        self.mode = Mode::Trailing;
                    }
                    None => {
                        let keep = partial(rest, end, at_end);
                        self.pending.push_str(&rest[..rest.len() - keep]);
                        return i + rest.len() - keep;
                    }
                },
                Mode::Text => {
                    out.content.push_str(rest);
                    return text.len();
                }
            }
        }
        i
    }
}

impl ToolParser for PythonicBlockParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        match self.mode {
            // A call cut off is dropped; an unfinished block that has no call is content.
            Mode::Name | Mode::Args if self.listed => {}
            Mode::Name | Mode::Args => self.pending.clear(),
            Mode::Open | Mode::List if !self.listed => self.not_a_call(out),
            // olmo3's block may end with the output.
            Mode::List => self.mode = Mode::Text,
            _ => {}
        }
        // Held whitespace, or an echo never capped: content, as written.
        if !matches!(self.mode, Mode::Name | Mode::Args | Mode::Skip) {
            out.content.push_str(&self.pending);
        }
        self.pending.clear();
        self.buf.clear();
        self.mode = Mode::Text;
    }
}

/// Arguments whose first string holds unescaped quotes of its own kind (`c='sed -n '1,9p'
/// f'`), read with the interior quotes escaped where exactly one choice of closing quote
/// makes them parse, as vLLM's lfm2 recovers them; `None` if none or several do.
fn requoted(args: &str) -> Option<Map<String, Value>> {
    // The call's `)` follows the arguments: a quote before it may close a string.
    let text = format!("{args})");
    let b = text.as_bytes();
    let closes = |pos: usize| {
        let next = text[pos + 1..].trim_start().bytes().next();
        matches!(next, Some(b',' | b')' | b']' | b'}' | b':'))
    };
    let escaped = |pos: usize| b[..pos].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1;
    let mut i = 0;
    while i < b.len() {
        let q = b[i];
        if q != b'\'' && q != b'"' {
            i += 1;
            continue;
        }
        let quotes: Vec<usize> = (i + 1..b.len())
            .filter(|&j| b[j] == q && !escaped(j))
            .collect();
        let &first = quotes.first()?;
        if closes(first) {
            i = first + 1;
            continue;
        }
        let mut found = None;
        for &close in quotes.iter().filter(|&&j| closes(j)) {
            let mut candidate = String::from(&text[..=i]);
            for j in i + 1..close {
                if b[j] == q && !escaped(j) {
                    candidate.push('\\');
                }
                if text.is_char_boundary(j) {
                    let ch = text[j..].chars().next().unwrap_or_default();
                    candidate.push(ch);
                }
            }
            candidate.push_str(&text[close..text.len() - 1]);
            if let Some(kwargs) = parse_kwargs(&candidate, true) {
                if found.is_some() {
                    return None;
                }
                found = Some(kwargs);
            }
        }
        return found;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::requoted;

    fn read(args: &str) -> Option<String> {
        requoted(args).map(|m| crate::pyjson::dumps(&serde_json::Value::Object(m)))
    }

    #[test]
    fn nested_quotes_read_where_one_reading_parses() {
        assert_eq!(
            read("c='sed -n '1,9p' f.py'").as_deref(),
            Some(r#"{"c": "sed -n '1,9p' f.py"}"#)
        );
        assert_eq!(
            read("a='x', b='y'z'").as_deref(),
            Some(r#"{"a": "x", "b": "y'z"}"#)
        );
        // Two closing quotes would both parse: ambiguous, not read.
        assert_eq!(read("a='x'y', b='z'"), None);
        assert_eq!(read("a='x' y"), None);
    }
}
