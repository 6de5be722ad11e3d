//! The JSON call object of the `CallForm::Object` families (`{"name": .., "arguments": ..}`)
//! and of the `CallForm::Keyed` one (`{"name": arguments}`), one character at a time: the
//! name is streamed as soon as it is read, the arguments as they arrive, and other members
//! are skipped. Arguments written as a JSON string that
//! holds a JSON object (`"arguments": "{\"a\": 1}"`, common in fine-tunes) are unwrapped
//! into the object, as vLLM's mistral and granite parsers unwrap them; such a string is
//! held until it closes.

use super::{CallForm, MarkedFamily, MarkedParser, Mode, MAX_NAME};
use crate::tool::json_scan::{Step, ValueScan};
use crate::tool::Parsed;
use serde::{Deserialize, Serialize};

/// Where a JSON call object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum ObjPhase {
    Open,
    Key,
    KeyString,
    Colon,
    Value,
    Name,
    Args,
    /// Arguments written as a JSON string, held until it closes.
    ArgsString,
    Skip,
    After,
}

impl MarkedParser {
    /// One character of a JSON call object; returns whether it was consumed (a scalar's
    /// delimiter is not).
    pub(super) fn object_char(&mut self, phase: ObjPhase, c: char, out: &mut Parsed) -> bool {
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
                if matches!(self.spec().form, CallForm::Keyed) {
                    // The first key names the call and its value is the arguments.
                    if self.committed {
                        self.key.clear();
                    } else {
                        let name = std::mem::take(&mut self.key);
                        if name.is_empty() || name.len() > MAX_NAME {
                            self.malformed(out);
                            return false;
                        }
                        self.commit(name, None);
                        self.key = "arguments".into();
                    }
                }
                let next = match self.key.as_str() {
                    "name" if c == '"' && !self.committed => {
                        self.token.clear();
                        ObjPhase::Name
                    }
                    "arguments" | "parameters" if c == '"' => {
                        self.token.clear();
                        ObjPhase::ArgsString
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
                    ObjPhase::Name | ObjPhase::ArgsString => self.token.push(c),
                    ObjPhase::Args => {
                        let mut b = [0u8; 4];
                        self.send_args(c.encode_utf8(&mut b));
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
                    self.commit(name, None);
                    self.mode = Mode::Object(ObjPhase::After);
                }
                true
            }
            ObjPhase::ArgsString => {
                self.token.push(c);
                if self.scan.step(c) == Step::Last {
                    let raw = std::mem::take(&mut self.token);
                    let inner: Option<String> = serde_json::from_str(&raw).ok();
                    let unwrapped = inner.filter(|t| {
                        serde_json::from_str::<serde_json::Value>(t).is_ok_and(|v| v.is_object())
                    });
                    match unwrapped {
                        Some(object) => self.send_args(object.trim()),
                        None => self.send_args(&raw),
                    }
                    self.mode = Mode::Object(ObjPhase::After);
                }
                true
            }
            ObjPhase::Args | ObjPhase::Skip => match self.scan.step(c) {
                Step::More | Step::Last => {
                    if phase == ObjPhase::Args {
                        let mut b = [0u8; 4];
                        self.send_args(c.encode_utf8(&mut b));
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
        let skips = matches!(self.family, MarkedFamily::Granite | MarkedFamily::Apertus);
        if !self.committed && self.in_array && skips {
            // vLLM's granite and apertus drop an element without a name and read on in the
            // array.
            self.pending.clear();
            self.mode = Mode::AfterCall;
            return true;
        }
        if !self.committed {
            self.malformed(out);
            return false;
        }
        let unreadable =
            self.args.is_empty() || serde_json::from_str::<serde_json::Value>(&self.args).is_err();
        if self.family == MarkedFamily::Llama3Json && unreadable {
            // No `arguments`/`parameters` (vLLM's llama3_json one-shot: `KeyError`), or
            // arguments that are not JSON: no call, and the text from here on is content,
            // as vLLM's one-shot keeps the whole output.
            self.raw_to_content("}", out);
            self.mode = Mode::Content { at_start: false };
            return true;
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
        if self.family == MarkedFamily::Llama3Json {
            // Not JSON: vLLM's llama3_json one-shot keeps the whole output as content, so
            // this call's text and all that follows are content.
            self.raw_to_content("", out);
            self.mode = Mode::Content { at_start: false };
            return;
        }
        self.end_call(out);
        self.mode = if self.spec().call_end.is_some() {
            // The rest of the block up to the end marker goes with the broken call (jamba's
            // marker closes the whole array).
            self.in_array = false;
            Mode::AfterCall
        } else {
            self.in_array = false;
            Mode::Content { at_start: false }
        };
    }
}
