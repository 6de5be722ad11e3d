//! `tool_choice: "required"`'s forced output, `[{"name": "f", "parameters": {…}}, …]`, read
//! as it streams. A strict JSON lexer (what pydantic's `validate_json` accepts: `NaN` and
//! `±Infinity` included, control characters in strings and lone surrogates not) drives a
//! reader of the list's entries (pydantic's `list[FunctionDefinition]`): a call is sent once
//! its `name` string is closed and its `parameters` value has started (vLLM's
//! `extract_required_tool_call_streaming`), or at the entry's `}` with `null` arguments when
//! it has no `parameters`; its arguments then stream as `json.dumps(parameters,
//! ensure_ascii=False)` writes them (`", "` and `": "` separators, strings re-escaped,
//! numbers as Python prints them), so the deltas concatenate to vLLM's one-shot arguments.
//!
//! The first thing the list does wrong (not a list, an entry without a string `name`, a
//! `parameters` neither object nor `null`, broken JSON, a second `name` after the call was
//! sent or a second `parameters`) ends the reading: the calls already sent stay, nothing
//! more is sent.

use super::Parsed;
use crate::pyjson::{py_float_repr, write_str_char};
use serde::{Deserialize, Serialize};

/// Where the lexer is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    /// Before a value; `close` when a `]` may end the array instead (its first slot).
    #[default]
    Value,
    ValueOrClose,
    /// In an object before a key; `close` when a `}` may end it instead.
    Key,
    KeyOrClose,
    Colon,
    /// After a value: a `,` or the container's closer.
    After,
    Str {
        key: bool,
    },
    Esc {
        key: bool,
    },
    Hex {
        key: bool,
        n: u8,
        acc: u32,
    },
    /// After a high surrogate's escape: `\` (`n` 0), then `u` (`n` 1).
    Low {
        key: bool,
        n: u8,
    },
    Num(Num),
    /// `true`, `false`, `null`, `NaN`, `Infinity` or `-Infinity`, so far in `tok`.
    Lit,
    /// The list is closed: only whitespace may follow.
    End,
    /// The text is not a list pydantic accepts: nothing more is read.
    Dead,
}

/// Where a number is (JSON's grammar: `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpDigits,
}

/// What one character meant, for the reader. `lvl` is the number of containers around it
/// (not counting one it opens or closes): the list's own `[` is at 0, an entry's `{` at 1, an
/// entry's keys and values at 2.
#[derive(Debug, PartialEq)]
enum Ev {
    Open(char),
    Close(char),
    KeyStart,
    KeyEnd,
    StrStart,
    StrEnd,
    Char(char),
    Colon,
    Comma,
    Ws,
    /// A number or literal, whole.
    Scalar(String),
}

const LITERALS: [&str; 6] = ["true", "false", "null", "NaN", "Infinity", "-Infinity"];

/// A strict JSON lexer, one character at a time.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Lexer {
    mode: Mode,
    /// The open containers, `{` or `[` each.
    stack: String,
    /// The number or literal being read.
    tok: String,
    /// A high surrogate waiting for its low half.
    high: u32,
}

impl Lexer {
    fn lvl(&self) -> usize {
        self.stack.len()
    }

    fn after_value(&mut self) {
        self.mode = if self.stack.is_empty() {
            Mode::End
        } else {
            Mode::After
        };
    }

    /// Feeds `c`; appends its events (with their level) to `evs`. `Err` when the text can no
    /// longer be JSON.
    fn step(&mut self, c: char, evs: &mut Vec<(usize, Ev)>) -> Result<(), ()> {
        let lvl = self.lvl();
        let ws = matches!(c, ' ' | '\t' | '\n' | '\r');
        match self.mode {
            Mode::Dead => return Err(()),
            Mode::Str { key } => match c {
                '"' => {
                    evs.push((lvl, if key { Ev::KeyEnd } else { Ev::StrEnd }));
                    if key {
                        self.mode = Mode::Colon;
                    } else {
                        self.after_value();
                    }
                }
                '\\' => self.mode = Mode::Esc { key },
                c if (c as u32) < 0x20 => return Err(()),
                c => evs.push((lvl, Ev::Char(c))),
            },
            Mode::Esc { key } => {
                let d = match c {
                    '"' | '\\' | '/' => c,
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'u' => {
                        self.mode = Mode::Hex { key, n: 0, acc: 0 };
                        return Ok(());
                    }
                    _ => return Err(()),
                };
                evs.push((lvl, Ev::Char(d)));
                self.mode = Mode::Str { key };
            }
            Mode::Hex { key, n, acc } => {
                let acc = acc * 16 + c.to_digit(16).ok_or(())?;
                if n < 3 {
                    self.mode = Mode::Hex { key, n: n + 1, acc };
                    return Ok(());
                }
                let high = std::mem::take(&mut self.high);
                let code = match (high, acc) {
                    (0, 0xD800..=0xDBFF) => {
                        self.high = acc;
                        self.mode = Mode::Low { key, n: 0 };
                        return Ok(());
                    }
                    (0, 0xDC00..=0xDFFF) => return Err(()),
                    (0, code) => code,
                    (high, 0xDC00..=0xDFFF) => 0x10000 + ((high - 0xD800) << 10) + (acc - 0xDC00),
                    _ => return Err(()),
                };
                evs.push((lvl, Ev::Char(char::from_u32(code).ok_or(())?)));
                self.mode = Mode::Str { key };
            }
            Mode::Low { key, n } => match (n, c) {
                (0, '\\') => self.mode = Mode::Low { key, n: 1 },
                (1, 'u') => self.mode = Mode::Hex { key, n: 0, acc: 0 },
                _ => return Err(()),
            },
            Mode::Num(n) => {
                let next = match (n, c) {
                    (Num::Minus, '0') => Some(Num::Zero),
                    (Num::Minus, '1'..='9') => Some(Num::Int),
                    (Num::Minus, 'I') => {
                        self.tok.push(c);
                        self.mode = Mode::Lit;
                        return Ok(());
                    }
                    (Num::Int, '0'..='9') => Some(Num::Int),
                    (Num::Zero | Num::Int, '.') => Some(Num::Dot),
                    (Num::Dot | Num::Frac, '0'..='9') => Some(Num::Frac),
                    (Num::Zero | Num::Int | Num::Frac, 'e' | 'E') => Some(Num::Exp),
                    (Num::Exp, '+' | '-') => Some(Num::ExpSign),
                    (Num::Exp | Num::ExpSign | Num::ExpDigits, '0'..='9') => Some(Num::ExpDigits),
                    (Num::Zero | Num::Int | Num::Frac | Num::ExpDigits, _) => None,
                    _ => return Err(()),
                };
                match next {
                    Some(n) => {
                        self.tok.push(c);
                        self.mode = Mode::Num(n);
                    }
                    None => {
                        evs.push((lvl, Ev::Scalar(std::mem::take(&mut self.tok))));
                        self.after_value();
                        return self.step(c, evs);
                    }
                }
            }
            Mode::Lit => {
                if c.is_ascii_alphabetic() {
                    self.tok.push(c);
                    if !LITERALS.iter().any(|l| l.starts_with(self.tok.as_str())) {
                        return Err(());
                    }
                } else {
                    if !LITERALS.contains(&self.tok.as_str()) {
                        return Err(());
                    }
                    evs.push((lvl, Ev::Scalar(std::mem::take(&mut self.tok))));
                    self.after_value();
                    return self.step(c, evs);
                }
            }
            _ if ws => evs.push((lvl, Ev::Ws)),
            Mode::Value | Mode::ValueOrClose => match c {
                '{' | '[' => {
                    evs.push((lvl, Ev::Open(c)));
                    self.stack.push(c);
                    self.mode = if c == '{' {
                        Mode::KeyOrClose
                    } else {
                        Mode::ValueOrClose
                    };
                }
                ']' if self.mode == Mode::ValueOrClose => self.close(c, evs),
                '"' => {
                    evs.push((lvl, Ev::StrStart));
                    self.mode = Mode::Str { key: false };
                }
                '-' | '0'..='9' => {
                    self.tok.push(c);
                    self.mode = Mode::Num(match c {
                        '-' => Num::Minus,
                        '0' => Num::Zero,
                        _ => Num::Int,
                    });
                }
                't' | 'f' | 'n' | 'N' | 'I' => {
                    self.tok.push(c);
                    self.mode = Mode::Lit;
                }
                _ => return Err(()),
            },
            Mode::Key | Mode::KeyOrClose => match c {
                '"' => {
                    evs.push((lvl, Ev::KeyStart));
                    self.mode = Mode::Str { key: true };
                }
                '}' if self.mode == Mode::KeyOrClose => self.close(c, evs),
                _ => return Err(()),
            },
            Mode::Colon if c == ':' => {
                evs.push((lvl, Ev::Colon));
                self.mode = Mode::Value;
            }
            Mode::After => match (c, self.stack.ends_with('{')) {
                (',', true) => {
                    evs.push((lvl, Ev::Comma));
                    self.mode = Mode::Key;
                }
                (',', false) => {
                    evs.push((lvl, Ev::Comma));
                    self.mode = Mode::Value;
                }
                ('}', true) | (']', false) => self.close(c, evs),
                _ => return Err(()),
            },
            Mode::Colon | Mode::End => return Err(()),
        }
        Ok(())
    }

    fn close(&mut self, c: char, evs: &mut Vec<(usize, Ev)>) {
        self.stack.pop();
        evs.push((self.lvl(), Ev::Close(c)));
        self.after_value();
    }
}

/// The entry key whose value is being read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Field {
    #[default]
    Other,
    Name,
    Parameters,
    Description,
    /// `strict` or `defer_loading`: pydantic's lax `bool | None`.
    Flag,
}

/// Where the current entry's `parameters` are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Params {
    #[default]
    Absent,
    /// Its object is open; its text streams.
    Open,
    Done,
}

/// The entry being read: bounded by this one call.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Entry {
    field: Field,
    /// The key being read, or the value of a `name` or flag string.
    buf: String,
    name: Option<String>,
    params: Params,
    /// Whether a key is being read (into `buf`).
    in_key: bool,
    /// Whether the call has been sent (its name and first arguments).
    sent: bool,
    /// Python's `": "` / `", "` owes its space: written at the next whitespace or token.
    space: bool,
}

/// The reader of a `required` list: what the current call holds, never earlier calls.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct ListReader {
    lex: Lexer,
    /// The current entry's index (the number of entries before it).
    index: usize,
    entry: Entry,
    /// Arguments text not yet sent: flushed at the end of every push once the call is sent;
    /// before that (a `parameters` written before the `name`) held with the call.
    pending: String,
}

impl ListReader {
    pub(super) fn push(&mut self, text: &str, out: &mut Parsed) {
        let mut evs = Vec::new();
        for c in text.chars() {
            if self.lex.mode == Mode::Dead {
                break;
            }
            evs.clear();
            let ok = self.lex.step(c, &mut evs).is_ok();
            for (lvl, ev) in evs.drain(..) {
                if !self.event(lvl, ev, out) {
                    self.lex.mode = Mode::Dead;
                    break;
                }
            }
            if !ok {
                self.lex.mode = Mode::Dead;
            }
        }
        if self.lex.mode == Mode::Dead && !self.entry.sent {
            self.pending.clear();
        }
        self.flush(out);
    }

    /// The end of the output: a number or literal cut off inside arguments already sent is
    /// sent as written (as vLLM's stream has sent it); a call not yet sent never is.
    pub(super) fn finish(&mut self, out: &mut Parsed) {
        if matches!(self.lex.mode, Mode::Num(_) | Mode::Lit) && self.entry.params == Params::Open {
            self.write_space();
            let tok = std::mem::take(&mut self.lex.tok);
            self.pending.push_str(&tok);
        }
        self.flush(out);
        self.lex.mode = Mode::Dead;
    }

    fn flush(&mut self, out: &mut Parsed) {
        if self.entry.sent {
            out.args(self.index, &self.pending);
            self.pending.clear();
        }
    }

    fn write_space(&mut self) {
        if std::mem::take(&mut self.entry.space) {
            self.pending.push(' ');
        }
    }

    /// Sends the call once its name and the start of its arguments are known.
    fn start(&mut self, out: &mut Parsed) {
        let e = &mut self.entry;
        if e.sent || e.params == Params::Absent {
            return;
        }
        if let Some(name) = &e.name {
            out.start_call(self.index, name.clone(), None);
            e.sent = true;
            self.flush(out);
        }
    }

    /// One event; `false` when the list is not one pydantic accepts.
    fn event(&mut self, lvl: usize, ev: Ev, out: &mut Parsed) -> bool {
        match (lvl, ev) {
            (_, Ev::Ws) if lvl >= 3 && self.entry.params == Params::Open => {
                self.write_space();
                true
            }
            (_, Ev::Ws) => true,
            // The list itself.
            (0, Ev::Open('[')) => true,
            (0, Ev::Close(_)) => true,
            (0, _) => false,
            // Its entries.
            (1, Ev::Open('{')) => {
                self.entry = Entry::default();
                true
            }
            (1, Ev::Close(_)) => {
                // The entry's `}`: a call with no `parameters` is sent with `null`.
                if self.entry.name.is_none() {
                    return false;
                }
                if self.entry.params == Params::Absent {
                    self.pending = "null".into();
                    self.entry.params = Params::Done;
                    self.start(out);
                }
                self.flush(out);
                self.index += 1;
                self.entry = Entry::default();
                true
            }
            (1, Ev::Comma) => true,
            (1, _) => false,
            (2, ev) => self.entry_event(ev, out),
            (_, ev) if self.entry.params == Params::Open => {
                self.write(ev);
                true
            }
            // Inside another field's value: a container, valid only where any value is.
            _ => true,
        }
    }

    /// An event at an entry's own level: its keys and the start and end of their values.
    fn entry_event(&mut self, ev: Ev, out: &mut Parsed) -> bool {
        let e = &mut self.entry;
        match ev {
            Ev::KeyStart => {
                e.buf.clear();
                e.in_key = true;
            }
            // A key longer than any this reads (`defer_loading`) is some other key; a flag's
            // string longer than `false` is not a flag: neither is kept in full.
            Ev::Char(c) if e.in_key || e.field == Field::Flag => {
                if e.buf.len() <= 16 {
                    e.buf.push(c);
                }
            }
            Ev::Char(c) if e.field == Field::Name => e.buf.push(c),
            Ev::KeyEnd => {
                e.in_key = false;
                e.field = match e.buf.as_str() {
                    "name" if e.sent => return false,
                    "name" => Field::Name,
                    "parameters" if e.params != Params::Absent => return false,
                    "parameters" => Field::Parameters,
                    "description" => Field::Description,
                    "strict" | "defer_loading" => Field::Flag,
                    _ => Field::Other,
                };
                e.buf.clear();
            }
            Ev::Colon | Ev::Comma => {}
            Ev::StrStart => {
                if matches!(e.field, Field::Parameters) {
                    return false;
                }
            }
            Ev::StrEnd => match e.field {
                Field::Name => {
                    e.name = Some(std::mem::take(&mut e.buf));
                    self.start(out);
                }
                Field::Flag => {
                    let s = e.buf.to_ascii_lowercase();
                    let ok = [
                        "0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes",
                    ]
                    .contains(&s.as_str())
                        && e.buf.len() <= 5;
                    e.buf.clear();
                    return ok;
                }
                _ => e.buf.clear(),
            },
            Ev::Scalar(tok) => match e.field {
                Field::Name => return false,
                Field::Parameters | Field::Description if tok != "null" => return false,
                Field::Parameters => {
                    self.pending = tok;
                    self.entry.params = Params::Done;
                    self.start(out);
                }
                Field::Flag => {
                    return ["null", "true", "false"].contains(&tok.as_str())
                        || tok.parse::<f64>().is_ok_and(|f| f == 0.0 || f == 1.0);
                }
                Field::Description | Field::Other => {}
            },
            Ev::Open(c) => match e.field {
                Field::Parameters if c == '{' => {
                    e.params = Params::Open;
                    self.pending.push('{');
                    self.start(out);
                }
                Field::Other => {}
                _ => return false,
            },
            Ev::Close(c) => {
                if e.params == Params::Open && e.field == Field::Parameters {
                    e.params = Params::Done;
                    self.pending.push(c);
                }
            }
            Ev::Char(_) | Ev::Ws => {}
        }
        true
    }

    /// An event inside the `parameters` object, written as `json.dumps` writes it.
    fn write(&mut self, ev: Ev) {
        match ev {
            Ev::Colon => {
                self.pending.push(':');
                self.entry.space = true;
            }
            Ev::Comma => {
                self.pending.push(',');
                self.entry.space = true;
            }
            Ev::Close(c) => self.pending.push(c),
            Ev::Char(c) => write_str_char(&mut self.pending, c, false),
            Ev::KeyEnd | Ev::StrEnd => self.pending.push('"'),
            Ev::Open(c) => {
                self.write_space();
                self.pending.push(c);
            }
            Ev::KeyStart | Ev::StrStart => {
                self.write_space();
                self.pending.push('"');
            }
            Ev::Scalar(tok) => {
                self.write_space();
                self.pending.push_str(&number(&tok));
            }
            Ev::Ws => self.write_space(),
        }
    }
}

/// A number or literal as Python prints what pydantic read: an integer in full (`-0` is
/// `0`), any other number as `repr(float)` (`1e2` is `100.0`, `1e400` `Infinity`).
fn number(tok: &str) -> String {
    if tok.starts_with(|c: char| c.is_ascii_alphabetic()) || tok == "-Infinity" {
        return tok.to_string();
    }
    if !tok.contains(['.', 'e', 'E']) {
        return if tok == "-0" { "0".into() } else { tok.into() };
    }
    py_float_repr(tok.parse::<f64>().unwrap_or(f64::NAN))
}
