//! Cohere Command A (`cohere_command3`, `cohere_command4`) tool calls and response channel,
//! checked against vLLM's unified `CohereCommandParser` (`vllm/parser/cohere_command.py`,
//! which runs the `cohere_melody` filter; the registered tool and reasoning classes are empty
//! shims). After the reasoning parser has taken `<|START_THINKING|>…<|END_THINKING|>`, the
//! rest reads:
//!
//! ```text
//! <|START_RESPONSE|>It is <co>mild</co: 0:[1]> today.<|END_RESPONSE|>
//! <|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}]<|END_ACTION|>
//! ```
//!
//! As vLLM reads it:
//! * the response channel is content, its markers dropped (command4 also reads
//!   `<|START_TEXT|>…<|END_TEXT|>` so; command3 keeps those as text); citation markup is
//!   dropped and the cited text kept (`<co>mild</co: 0:[1]>` → `mild`);
//! * whitespace outside the channels is dropped; other text outside them is content;
//! * the action is a JSON array of `{"tool_call_id", "tool_name", "parameters"}`, read
//!   whole at `<|END_ACTION|>`; the model's `tool_call_id` is the call's id; a tool the request
//!   does not declare is kept.
//!
//! Where we differ (listed in the case files): a call's arguments are the `parameters` object
//! as written again by Python's `json.dumps` (`{}` included, where vLLM sends `""`), a
//! `parameters` string holding an object is unwrapped, and a call whose element is not valid
//! JSON, or an action left open, is dropped, the good calls before it kept (vLLM sends the
//! broken text as arguments).

use super::{Parsed, Scan, ToolParser};
use crate::pyjson::dumps;
use crate::pystr::py_space;
use serde::{Deserialize, Serialize};
use serde_json::Value;

const RESPONSE: (&str, &str) = ("<|START_RESPONSE|>", "<|END_RESPONSE|>");
const TEXT: (&str, &str) = ("<|START_TEXT|>", "<|END_TEXT|>");
const ACTION: (&str, &str) = ("<|START_ACTION|>", "<|END_ACTION|>");
const CITE_OPEN: &str = "<co>";
const CITE_CLOSE: &str = "</co:";
/// Longest citation close (`</co: 0:[1,2],1:[3,4]>`) read as markup; longer is text.
const MAX_CITE: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    Outside,
    Response,
    Action,
}

/// The state machine for Cohere Command's channels; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CohereParser {
    /// Command 4: `<|START_TEXT|>` is a response channel too.
    text_channel: bool,
    mode: Mode,
    buf: String,
    /// The action's text.
    action: String,
    /// Whitespace outside the channels, held until other text follows.
    pending: String,
    calls: usize,
}

/// The calls of an action's JSON array, element by element: the good ones up to the first
/// element that is not valid JSON.
fn parse_action(text: &str) -> Vec<(Option<String>, String, String)> {
    let mut out = Vec::new();
    let Some(mut rest) = text.trim_start_matches(py_space).strip_prefix('[') else {
        return out;
    };
    loop {
        rest = rest.trim_start_matches(py_space);
        let mut items = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        let Some(Ok(item)) = items.next() else {
            break;
        };
        rest = &rest[items.byte_offset()..];
        if let Some(call) = call_of(&item) {
            out.push(call);
        }
        rest = rest.trim_start_matches(py_space);
        match rest.strip_prefix(',') {
            Some(r) => rest = r,
            None => break,
        }
    }
    out
}

/// One element's (id, name, arguments).
fn call_of(item: &Value) -> Option<(Option<String>, String, String)> {
    let name = item.get("tool_name")?.as_str()?;
    if name.is_empty() {
        return None;
    }
    let id = match item.get("tool_call_id") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let args = match item.get("parameters") {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => v,
            _ => return None,
        },
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return None,
    };
    Some((id, name.to_string(), dumps(&args)))
}

impl CohereParser {
    /// `text_channel`: Command 4's `<|START_TEXT|>` channel is read (Command 3 keeps it).
    pub fn new(text_channel: bool) -> Self {
        CohereParser {
            text_channel,
            mode: Mode::Outside,
            buf: String::new(),
            action: String::new(),
            pending: String::new(),
            calls: 0,
        }
    }

    fn markers(&self) -> Vec<&'static str> {
        let mut m = vec![CITE_OPEN, CITE_CLOSE];
        match self.mode {
            Mode::Outside => {
                m.extend([RESPONSE.0, ACTION.0]);
                if self.text_channel {
                    m.push(TEXT.0);
                }
            }
            Mode::Response => {
                m.push(RESPONSE.1);
                if self.text_channel {
                    m.push(TEXT.1);
                }
            }
            Mode::Action => return vec![ACTION.1],
        }
        m
    }

    /// Text of the current channel: content (whitespace outside the channels held).
    fn text(&mut self, text: &str, out: &mut Parsed) {
        if self.mode == Mode::Response {
            out.content.push_str(text);
            return;
        }
        let body = text.trim_end_matches(py_space);
        if !body.trim_start_matches(py_space).is_empty() {
            out.content.push_str(&std::mem::take(&mut self.pending));
            out.content.push_str(body);
            self.pending.push_str(&text[body.len()..]);
        } else {
            self.pending.push_str(text);
        }
    }
}

impl Scan for CohereParser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let mut used = 0;
        loop {
            let rest = &text[used..];
            let markers = self.markers();
            let found = markers
                .iter()
                .filter_map(|m| rest.find(m).map(|at| (at, *m)))
                .min_by_key(|(at, m)| (*at, usize::MAX - m.len()));
            let Some((at, m)) = found else {
                let keep = if at_end {
                    0
                } else {
                    markers
                        .iter()
                        .map(|m| crate::partial_suffix(rest, m))
                        .max()
                        .unwrap_or(0)
                };
                let take = &rest[..rest.len() - keep];
                if self.mode == Mode::Action {
                    // An action left open is dropped.
                    self.action.push_str(take);
                } else {
                    self.text(take, out);
                }
                return text.len() - keep;
            };
            if self.mode == Mode::Action {
                self.action.push_str(&rest[..at]);
                for (id, name, args) in parse_action(&std::mem::take(&mut self.action)) {
                    out.start_call(self.calls, name, id);
                    out.args(self.calls, &args);
                    self.calls += 1;
                }
                self.mode = Mode::Outside;
                used += at + m.len();
                continue;
            }
            self.text(&rest[..at], out);
            let mut len = m.len();
            if m == CITE_CLOSE {
                // `</co: 0:[1]>`: markup up to its `>`.
                let tail = &rest[at + m.len()..];
                match tail.find('>') {
                    Some(gt) if gt <= MAX_CITE => len += gt + 1,
                    None if !at_end && tail.len() <= MAX_CITE => return used + at,
                    _ => {
                        self.text(m, out);
                        used += at + len;
                        continue;
                    }
                }
            } else if m == RESPONSE.0 || m == TEXT.0 {
                self.pending.clear();
                self.mode = Mode::Response;
            } else if m == RESPONSE.1 || m == TEXT.1 {
                self.mode = Mode::Outside;
            } else if m == ACTION.0 {
                self.pending.clear();
                self.mode = Mode::Action;
            }
            used += at + len;
        }
    }
}

impl ToolParser for CohereParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        self.action.clear();
        // Whitespace outside the channels is dropped.
        self.pending.clear();
    }
}
