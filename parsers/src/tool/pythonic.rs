//! Tool calls as a Python list of calls, the format of Llama 3.2/4 and other "pythonic"
//! models (vLLM's `pythonic` parser): `[get_weather(city="Paris", days=3), get_time()]`,
//! optionally between `<|python_start|>` and `<|python_end|>`.
//!
//! The output is a call list only if it starts (after whitespace) with `[` and a name
//! followed by `(`; otherwise it is content. Keyword arguments are Python literals
//! (strings, numbers, `True`/`False`/`None` or JSON's `true`/`false`/`null`, lists, tuples,
//! dicts), converted to a JSON
//! object serialized as Python's `json.dumps` writes it. Each call is sent when its closing
//! parenthesis arrives. Text after the list is dropped, as vLLM's stream drops it (its
//! non-stream path keeps the whole output as content when text follows the list). If the
//! first call's arguments are not keyword arguments of literals, the whole output is content,
//! as in vLLM's non-stream path (`ast.parse` of the list fails); a later call is sent with
//! `{}`, the calls before it having been streamed already.

use super::{Parsed, Scan, ToolParser};
use crate::pyjson::dumps;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

const START: &str = "<|python_start|>";
const END: &str = "<|python_end|>";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    /// Nothing but whitespace yet.
    Start,
    /// Inside the list, between calls.
    List,
    /// Reading a call's name.
    Name,
    /// Inside a call's parentheses.
    Args,
    /// After the list's `]`: an optional `<|python_end|>`, then the tail.
    AfterList,
    /// After a call list: dropped, as vLLM's stream drops it.
    Tail,
    Content,
}

/// The pythonic state machine; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PythonicParser {
    mode: Mode,
    buf: String,
    /// Text before the first call is named (content again if it is not a call list).
    pending: String,
    /// The name or argument text being read.
    token: String,
    /// The first call's name, held until its arguments parse: if they do not, the whole
    /// output is content, as in vLLM's non-stream path (`ast.parse` fails on the list).
    #[serde(default)]
    first_name: String,
    calls: usize,
    /// Bracket depth and string state inside the arguments.
    depth: u32,
    quote: Option<char>,
    escaped: bool,
}

impl Default for PythonicParser {
    fn default() -> Self {
        PythonicParser {
            mode: Mode::Start,
            buf: String::new(),
            pending: String::new(),
            token: String::new(),
            first_name: String::new(),
            calls: 0,
            depth: 0,
            quote: None,
            escaped: false,
        }
    }
}

impl PythonicParser {
    pub fn new() -> Self {
        Self::default()
    }

    fn malformed(&mut self, out: &mut Parsed) {
        out.content.push_str(&self.pending);
        self.pending.clear();
        self.mode = Mode::Content;
    }
}

impl Scan for PythonicParser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            let Some(c) = rest.chars().next() else { break };
            match self.mode {
                Mode::Start => {
                    if c.is_whitespace() {
                        self.pending.push(c);
                        i += c.len_utf8();
                    } else if rest.starts_with(START) {
                        self.pending.push_str(START);
                        i += START.len();
                    } else if !at_end && START.starts_with(rest) {
                        return i;
                    } else if c == '[' {
                        self.pending.push(c);
                        i += 1;
                        self.mode = Mode::List;
                    } else {
                        self.malformed(out);
                    }
                }
                Mode::List => {
                    if c.is_whitespace() || c == ',' {
                        if !self.pending.is_empty() {
                            self.pending.push(c);
                        }
                        i += c.len_utf8();
                    } else if c == ']' && self.calls > 0 {
                        i += 1;
                        self.mode = Mode::AfterList;
                    } else if c.is_alphabetic() || c == '_' {
                        self.token.clear();
                        self.mode = Mode::Name;
                    } else if self.calls == 0 {
                        self.malformed(out);
                    } else {
                        self.mode = Mode::Content;
                    }
                }
                Mode::Name => {
                    if c.is_alphanumeric() || c == '_' || c == '.' {
                        self.token.push(c);
                        if self.calls == 0 {
                            self.pending.push(c);
                        }
                        i += c.len_utf8();
                        if self.token.len() > 256 {
                            self.malformed(out);
                        }
                    } else if c == '(' {
                        i += 1;
                        self.calls += 1;
                        let name = std::mem::take(&mut self.token);
                        if self.calls == 1 {
                            self.pending.push('(');
                            self.first_name = name;
                        } else {
                            out.start_call(self.calls - 1, name, None);
                        }
                        self.depth = 0;
                        self.quote = None;
                        self.escaped = false;
                        self.mode = Mode::Args;
                    } else if self.calls == 0 {
                        self.malformed(out);
                    } else {
                        // Not a call: the rest is content.
                        out.content.push_str(&self.token);
                        self.token.clear();
                        self.mode = Mode::Content;
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
                                let args = std::mem::take(&mut self.token);
                                let kwargs = parse_kwargs(&args, false);
                                if !self.first_name.is_empty() {
                                    if kwargs.is_none() {
                                        self.pending.push_str(&args);
                                        self.pending.push(')');
                                        self.malformed(out);
                                        continue;
                                    }
                                    self.pending.clear();
                                    out.start_call(0, std::mem::take(&mut self.first_name), None);
                                }
                                let json = kwargs
                                    .map_or_else(|| "{}".to_string(), |m| dumps(&Value::Object(m)));
                                out.args(self.calls - 1, &json);
                                self.mode = Mode::List;
                                continue;
                            }
                            ')' | ']' | '}' => self.depth = self.depth.saturating_sub(1),
                            _ => {}
                        }
                    }
                    self.token.push(c);
                }
                Mode::AfterList => {
                    let trimmed = rest.trim_start();
                    if trimmed.starts_with(END) {
                        i += rest.len() - trimmed.len() + END.len();
                        self.mode = Mode::Tail;
                    } else if !at_end && (trimmed.is_empty() || END.starts_with(trimmed)) {
                        return i;
                    } else {
                        self.mode = Mode::Tail;
                    }
                }
                Mode::Tail => return text.len(),
                Mode::Content => {
                    out.content.push_str(rest);
                    return text.len();
                }
            }
        }
        i
    }
}

impl ToolParser for PythonicParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        if self.mode == Mode::Args && !self.first_name.is_empty() {
            // Cut off inside the first call: not a call list (vLLM's `ast.parse` fails).
            let args = std::mem::take(&mut self.token);
            self.pending.push_str(&args);
            self.first_name.clear();
            self.malformed(out);
        }
        if self.mode == Mode::Args {
            // Cut off inside a later call: send what parses of it.
            let args = std::mem::take(&mut self.token);
            let json = parse_kwargs(&args, false)
                .map_or_else(|| "{}".into(), |m| dumps(&Value::Object(m)));
            out.args(self.calls - 1, &json);
        }
        out.content.push_str(&self.pending);
        self.pending.clear();
        self.buf.clear();
        self.mode = Mode::Content;
    }
}

/// `a=1, b="x"` → `{"a": 1, "b": "x"}`; `None` if it is not keyword arguments of literals.
/// `zero_padded`: decimal integers may have leading zeros (`07` is 7), as vLLM's lfm2
/// rewrites them before Python reads the call.
pub(crate) fn parse_kwargs(text: &str, zero_padded: bool) -> Option<Map<String, Value>> {
    let mut p = Lit {
        s: text.as_bytes(),
        i: 0,
        src: text,
        zero_padded,
    };
    let mut map = Map::new();
    loop {
        p.ws();
        if p.i >= p.s.len() {
            return Some(map);
        }
        let start = p.i;
        while p.i < p.s.len() && (p.s[p.i].is_ascii_alphanumeric() || p.s[p.i] == b'_') {
            p.i += 1;
        }
        let key = text.get(start..p.i)?.to_string();
        p.ws();
        if key.is_empty() || !p.eat(b'=') {
            return None;
        }
        let v = p.value()?;
        map.insert(key, v);
        p.ws();
        if p.i < p.s.len() && !p.eat(b',') {
            return None;
        }
    }
}

/// A small Python literal reader (the subset tool calls use).
struct Lit<'a> {
    s: &'a [u8],
    i: usize,
    src: &'a str,
    zero_padded: bool,
}

impl Lit<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.s.get(self.i) == Some(&b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Value> {
        self.ws();
        match *self.s.get(self.i)? {
            b'"' | b'\'' => self.string().map(Value::String),
            b'[' | b'(' => {
                let close = if self.s[self.i] == b'[' { b']' } else { b')' };
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.ws();
                    if self.eat(close) {
                        return Some(Value::Array(items));
                    }
                    items.push(self.value()?);
                    self.ws();
                    if !self.eat(b',') {
                        self.ws();
                        return self.eat(close).then_some(Value::Array(items));
                    }
                }
            }
            b'{' => {
                self.i += 1;
                let mut map = Map::new();
                loop {
                    self.ws();
                    if self.eat(b'}') {
                        return Some(Value::Object(map));
                    }
                    let first = self.value()?;
                    self.ws();
                    if map.is_empty() && matches!(self.s.get(self.i), Some(b',' | b'}')) {
                        // A set (`{'a', 'b'}`): a list in JSON, in the order written, as
                        // vLLM reads it.
                        return self.set_rest(first);
                    }
                    let k = match first {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    self.ws();
                    if !self.eat(b':') {
                        return None;
                    }
                    let v = self.value()?;
                    map.insert(k, v);
                    self.ws();
                    if !self.eat(b',') {
                        self.ws();
                        return self.eat(b'}').then_some(Value::Object(map));
                    }
                }
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len()
                    && (self.s[self.i].is_ascii_alphanumeric()
                        || matches!(self.s[self.i], b'.' | b'-' | b'+' | b'_'))
                {
                    self.i += 1;
                }
                let word = self.src.get(start..self.i)?;
                // JSON's spellings too, as vLLM's `get_parameter_value` reads them.
                match word {
                    "True" | "true" => Some(Value::Bool(true)),
                    "False" | "false" => Some(Value::Bool(false)),
                    "None" | "null" => Some(Value::Null),
                    _ if self.zero_padded => number(&unpad(word)),
                    _ => number(word),
                }
            }
        }
    }

    /// The rest of a set literal whose first item is read.
    fn set_rest(&mut self, first: Value) -> Option<Value> {
        let mut items = vec![first];
        loop {
            self.ws();
            if self.eat(b'}') {
                return Some(Value::Array(items));
            }
            if !self.eat(b',') {
                return None;
            }
            self.ws();
            if self.eat(b'}') {
                return Some(Value::Array(items));
            }
            items.push(self.value()?);
        }
    }

    fn string(&mut self) -> Option<String> {
        let q = self.s[self.i];
        self.i += 1;
        let mut out = String::new();
        let mut run_start = self.i;
        while self.i < self.s.len() {
            let b = self.s[self.i];
            if b == q {
                out.push_str(self.src.get(run_start..self.i)?);
                self.i += 1;
                return Some(out);
            }
            if b == b'\\' {
                out.push_str(self.src.get(run_start..self.i)?);
                let e = *self.s.get(self.i + 1)?;
                self.i += 2;
                match e {
                    b'n' => out.push('\n'),
                    b't' => out.push('\t'),
                    b'r' => out.push('\r'),
                    b'0' => out.push('\0'),
                    b'u' => {
                        let hex = self.src.get(self.i..self.i + 4)?;
                        out.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
                        self.i += 4;
                    }
                    b'\\' | b'\'' | b'"' => out.push(e as char),
                    b'\n' => {}
                    // Unknown escapes stay as written, as in Python.
                    _ => {
                        out.push('\\');
                        self.i -= 1;
                    }
                }
                run_start = self.i;
                continue;
            }
            self.i += 1;
        }
        None
    }
}

/// A Python number literal with at most one sign, as `ast.literal_eval` reads it, or `None`
/// where Python raises (vLLM then keeps the output as content). Integers are decimal without
/// leading zeros (`0_0` is allowed, `007` is not), or `0x`/`0o`/`0b`; a `_` may stand only
/// between two digits (or after a radix prefix); floats are `1.`, `.5`, `1.5e-3` and so on.
/// Integers beyond `u64` become floats (Python keeps them exact), and complex literals
/// (`1j`) are refused: `json.dumps` cannot write them.
fn number(word: &str) -> Option<Value> {
    let (negative, body) = match word.as_bytes().first()? {
        b'-' => (true, &word[1..]),
        b'+' => (false, &word[1..]),
        _ => (false, word),
    };
    let int = |digits: &str, radix: u32| -> Option<Value> {
        let n = u64::from_str_radix(digits, radix).ok();
        Some(match (n, negative) {
            (Some(n), false) => Value::from(n),
            (Some(n), true) if n <= i64::MAX as u64 + 1 => Value::from((n as i64).wrapping_neg()),
            // Beyond 64 bits: a float, as serde_json's `Value` cannot hold the exact integer.
            _ => {
                let f: f64 = digits.parse().ok()?;
                serde_json::Number::from_f64(if negative { -f } else { f })?.into()
            }
        })
    };
    let b = body.as_bytes();
    let radix = match b {
        [b'0', b'x' | b'X', ..] => 16,
        [b'0', b'o' | b'O', ..] => 8,
        [b'0', b'b' | b'B', ..] => 2,
        _ => 10,
    };
    if radix != 10 {
        let digits = separated(&body[2..], true, |c| (c as char).is_digit(radix))?;
        return int(&digits, radix);
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (mantissa, None),
    };
    let whole = if whole.is_empty() && fraction.is_some() {
        String::new()
    } else {
        separated(whole, false, |c| c.is_ascii_digit())?
    };
    if fraction.is_none() && exponent.is_none() {
        // A decimal integer: no leading zeros unless it is all zeros.
        if whole.starts_with('0') && whole.bytes().any(|c| c != b'0') {
            return None;
        }
        return int(&whole, 10);
    }
    let fraction = match fraction {
        Some("") | None => String::new(),
        Some(f) => separated(f, false, |c| c.is_ascii_digit())?,
    };
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut text = format!("{whole}.{fraction}");
    if let Some(e) = exponent {
        let (sign, digits) = match e.as_bytes().first()? {
            b'+' | b'-' => (&e[..1], &e[1..]),
            _ => ("", e),
        };
        text = format!(
            "{text}e{sign}{}",
            separated(digits, false, |c| c.is_ascii_digit())?
        );
    }
    let f: f64 = text.parse().ok()?;
    serde_json::Number::from_f64(if negative { -f } else { f }).map(Value::Number)
}

/// A decimal integer written with leading zeros (`07`, `-0_7`) without them, as vLLM's
/// `normalize_leading_zero_ints` rewrites it; any other word as it is.
fn unpad(word: &str) -> String {
    let (sign, body) = match word.as_bytes().first() {
        Some(b'-' | b'+') => word.split_at(1),
        _ => ("", word),
    };
    let digits = body.replace('_', "");
    let padded = body.starts_with('0')
        && body.bytes().all(|c| c.is_ascii_digit() || c == b'_')
        && digits.bytes().any(|c| c != b'0');
    if padded {
        format!("{sign}{}", digits.trim_start_matches('0'))
    } else {
        word.to_string()
    }
}

/// `s` without its `_` separators, if it is one or more digits with each `_` between two of
/// them (or, with `after_prefix`, also before the first, as in `0x_ff`).
fn separated(s: &str, after_prefix: bool, is_digit: impl Fn(u8) -> bool) -> Option<String> {
    let b = s.as_bytes();
    let ok = !b.is_empty()
        && b.iter().enumerate().all(|(i, &c)| {
            if c == b'_' {
                (i > 0 && is_digit(b[i - 1]) || i == 0 && after_prefix)
                    && b.get(i + 1).is_some_and(|&n| is_digit(n))
            } else {
                is_digit(c)
            }
        });
    ok.then(|| s.replace('_', ""))
}

#[cfg(test)]
mod tests {
    use super::{number, parse_kwargs};

    /// Sets are lists (vLLM's `get_parameter_value`); zero-padded integers read only where
    /// asked (lfm2), and never inside strings, floats or radix literals.
    #[test]
    fn sets_and_zero_padded_integers() {
        let read = |text: &str, padded: bool| {
            parse_kwargs(text, padded).map(|m| crate::pyjson::dumps(&serde_json::Value::Object(m)))
        };
        assert_eq!(
            read("t={'a', 'b',}, d={'k': {1}}, e={}", false).as_deref(),
            Some(r#"{"t": ["a", "b"], "d": {"k": [1]}, "e": {}}"#)
        );
        assert_eq!(read("m=07", false), None);
        assert_eq!(
            read("m=07, n=-0_5, z=00, f=07.5, x=0x1f, s='07'", true).as_deref(),
            Some(r#"{"m": 7, "n": -5, "z": 0, "f": 7.5, "x": 31, "s": "07"}"#)
        );
    }

    /// Expectations from Python's `json.dumps(ast.literal_eval(word))` (3.11).
    #[test]
    fn numbers_read_as_python_literals() {
        for (word, want) in [
            ("1_000", Some("1000")),
            ("0_0", Some("0")),
            ("-0b101", Some("-5")),
            ("0x1F", Some("31")),
            ("0x_1f", Some("31")),
            ("0o17", Some("15")),
            ("+5", Some("5")),
            ("5.", Some("5.0")),
            (".5", Some("0.5")),
            ("1_0.2_5e1_0", Some("102500000000.0")),
            ("007.5", Some("7.5")),
            ("0e5", Some("0.0")),
            ("00E0", Some("0.0")),
            ("1e-5", Some("1e-05")),
            ("-9223372036854775808", Some("-9223372036854775808")),
            ("18446744073709551615", Some("18446744073709551615")),
            ("1__0", None),
            ("1_", None),
            ("_1", None),
            ("007", None),
            ("0x", None),
            ("0xg", None),
            ("0b2", None),
            ("1j", None),
            (".", None),
            ("1e", None),
            ("1e_5", None),
            ("inf", None),
            ("nan", None),
            ("--5", None),
            ("1.5.2", None),
        ] {
            let got = number(word).map(|v| crate::pyjson::dumps(&v));
            assert_eq!(got.as_deref(), want, "{word}");
        }
    }
}
