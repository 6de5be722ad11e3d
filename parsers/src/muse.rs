//! Muse's channel messages (Muse Spark `muse`, Muse Glimmer `muse_glimmer`), cut into
//! messages as vLLM's Muse parsers cut them (`vllm/tool_parsers/muse_tool_parser.py`
//! `_iter_messages`):
//!
//! ```text
//!  to=self<|message|>reasoning<|eom|><|start|>assistant to=get_weather<|message|><atem:function_calls>…<|eom|><|start|>assistant to=user<|message|>answer<|eot|>
//! ```
//!
//! A message's header ends at `<|message|>`: before it, optionally `<|start|>`, whitespace and
//! `assistant`, then spaces, then optionally `to=RECIPIENT` (letters, digits, `_.-`); a bare
//! `<|message|>` has no recipient. Its body runs to `<|eom|>` or `<|eot|>`, or to the next
//! header or `<|start|>`, or to the output's end. Text outside messages is passed on as such.
//! Streaming holds back whatever may still turn out to be a marker or the start of a header,
//! so every chunking cuts the same messages.

use crate::partial_suffix;
use crate::pystr::py_space;
use serde::{Deserialize, Serialize};

const MESSAGE: &str = "<|message|>";
const START: &str = "<|start|>";
const ENDS: [&str; 2] = ["<|eom|>", "<|eot|>"];

/// What the segmenter finds, in order.
pub(crate) enum Seg<'a> {
    /// Text outside any message.
    Outside(&'a str),
    /// A message starts: its recipient and its header as written (up to `<|message|>`).
    Open(Option<&'a str>, &'a str),
    /// Text of the open message's body.
    Body(&'a str),
    /// The open message ends: its end marker, or `""` where the next header, a `<|start|>`
    /// or the output's end cut it.
    Close(&'a str),
}

/// Which channels a recipient's messages are, by profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Channel {
    Reasoning,
    Content,
    Tool,
    Dropped,
}

/// vLLM's two profiles: Muse Spark (`muse`) and its Glimmer compatibility (`muse_glimmer`).
pub(crate) fn channel(glimmer: bool, recipient: Option<&str>) -> Channel {
    match (glimmer, recipient) {
        (false, None | Some("self")) => Channel::Reasoning,
        (false, Some("user" | "commentary")) => Channel::Content,
        (false, Some("developer")) => Channel::Dropped,
        (true, Some("self")) => Channel::Reasoning,
        (true, None | Some("user")) => Channel::Content,
        _ => Channel::Tool,
    }
}

fn recipient_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

fn horizontal_space(c: char) -> bool {
    c != '\n' && py_space(c)
}

/// The header's part of the text before a `<|message|>`: the length of its longest suffix
/// of the form `(<|start|>\s*assistant)?[^\S\n]*(to=RECIPIENT)?`.
fn header_len(s: &str) -> usize {
    let mut j = s.len();
    let run = s.len() - s.trim_end_matches(recipient_char).len();
    if run > 0 && s[..s.len() - run].ends_with("to=") {
        j -= run + 3;
    }
    j = s[..j].trim_end_matches(horizontal_space).len();
    if let Some(before) = s[..j].strip_suffix("assistant") {
        if let Some(k) = before.trim_end_matches(py_space).strip_suffix(START) {
            j = k.len();
        }
    }
    s.len() - j
}

/// Whether all of `s` is `[^\S\n]*` then `t`, `to` or `to=` and recipient characters.
fn to_prefix(s: &str) -> bool {
    let s = s.trim_start_matches(horizontal_space);
    s.is_empty()
        || "to".starts_with(s)
        || s.strip_prefix("to=")
            .is_some_and(|r| r.chars().all(recipient_char))
}

/// How much of the end of `s` may still become part of a header: the longest suffix that a
/// header may start with.
fn header_tail(s: &str) -> usize {
    let mut best = partial_suffix(s, START);
    if let Some(k) = s.rfind(START) {
        let rest = s[k + START.len()..].trim_start_matches(py_space);
        let fits =
            "assistant".starts_with(rest) || rest.strip_prefix("assistant").is_some_and(to_prefix);
        if fits {
            best = best.max(s.len() - k);
        }
    }
    // The longest suffix of the `[^\S\n]*(t|to|to=…)` form.
    let run = s.len() - s.trim_end_matches(recipient_char).len();
    let core = if s[..s.len() - run].ends_with("to=") {
        run + 3
    } else if s.ends_with("to") {
        2
    } else {
        usize::from(s.ends_with('t'))
    };
    let before = &s[..s.len() - core];
    let tail = core + before.len() - before.trim_end_matches(horizontal_space).len();
    best.max(tail)
}

/// How much of the end of `s` to hold: the start of one of `markers`, and before it what may
/// still be part of a header.
fn held(s: &str, markers: &[&str]) -> usize {
    let partial = markers
        .iter()
        .map(|m| partial_suffix(s, m))
        .max()
        .unwrap_or(0);
    partial + header_tail(&s[..s.len() - partial])
}

/// The message cutter; serializable between stream chunks.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Segmenter {
    buf: String,
    in_body: bool,
    /// An `<|eot|>` has ended the turn: text outside messages after it is dropped, as vLLM
    /// drops it.
    #[serde(default)]
    turn_ended: bool,
}

impl Segmenter {
    /// Cuts `text` (after what is held); `at_end`: the output ended.
    pub(crate) fn push(&mut self, text: &str, at_end: bool, sink: &mut dyn FnMut(Seg<'_>)) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.push_str(text);
        let mut pos = 0;
        loop {
            let rest = &buf[pos..];
            if self.in_body {
                let found = ENDS
                    .iter()
                    .chain([&START, &MESSAGE])
                    .filter_map(|m| rest.find(*m).map(|at| (at, *m)))
                    .min_by_key(|&(at, _)| at);
                match found {
                    Some((at, MESSAGE)) => {
                        let head = header_len(&rest[..at]);
                        sink(Seg::Body(&rest[..at - head]));
                        sink(Seg::Close(""));
                        self.in_body = false;
                        pos += at - head;
                    }
                    Some((at, START)) => {
                        sink(Seg::Body(&rest[..at]));
                        sink(Seg::Close(""));
                        self.in_body = false;
                        pos += at;
                    }
                    Some((at, end)) => {
                        sink(Seg::Body(&rest[..at]));
                        sink(Seg::Close(end));
                        self.turn_ended |= end == ENDS[1];
                        self.in_body = false;
                        pos += at + end.len();
                    }
                    None => {
                        let keep = if at_end {
                            0
                        } else {
                            held(rest, &[ENDS[0], ENDS[1], START, MESSAGE])
                        };
                        sink(Seg::Body(&rest[..rest.len() - keep]));
                        if at_end {
                            sink(Seg::Close(""));
                            self.in_body = false;
                        }
                        pos += rest.len() - keep;
                        break;
                    }
                }
            } else {
                match rest.find(MESSAGE) {
                    Some(at) => {
                        let head = header_len(&rest[..at]);
                        if !self.turn_ended {
                            sink(Seg::Outside(&rest[..at - head]));
                        }
                        let header = &rest[at - head..at];
                        let run = header.len() - header.trim_end_matches(recipient_char).len();
                        let name = &header[header.len() - run..];
                        let to = header[..header.len() - run].ends_with("to=") && run > 0;
                        sink(Seg::Open(to.then_some(name), header));
                        self.in_body = true;
                        pos += at + MESSAGE.len();
                    }
                    None => {
                        let keep = held(rest, &[START, MESSAGE]);
                        let (send, tail) = rest.split_at(rest.len() - keep);
                        if !self.turn_ended {
                            sink(Seg::Outside(send));
                            // A header cut off by the output's end is dropped, as vLLM never
                            // shows one; other held text is text.
                            if at_end && !tail.contains(START) {
                                sink(Seg::Outside(tail));
                            }
                        }
                        pos += if at_end { rest.len() } else { send.len() };
                        break;
                    }
                }
            }
        }
        buf.drain(..pos);
        self.buf = buf;
    }
}

/// The reasoning split of Muse's messages (the tag parser's `muse` variants): reasoning
/// bodies are reasoning, answers content, and a message to a tool that holds ATEM markup is
/// passed on whole (header, body, end marker) as content, for the tool parser; other
/// messages are dropped, text outside messages is content.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct MuseSplit {
    seg: Segmenter,
    open: Option<Channel>,
    /// The open tool message, held whole.
    tool: String,
}

impl MuseSplit {
    pub(crate) fn push(&mut self, text: &str, at_end: bool, glimmer: bool, out: &mut crate::Split) {
        let mut seg = std::mem::take(&mut self.seg);
        let mut open = self.open;
        let tool = &mut self.tool;
        seg.push(text, at_end, &mut |s| match s {
            Seg::Outside(t) => out.content.push_str(t),
            Seg::Open(recipient, header) => {
                let ch = channel(glimmer, recipient);
                if ch == Channel::Tool {
                    tool.push_str(header);
                    tool.push_str(MESSAGE);
                }
                open = Some(ch);
            }
            Seg::Body(t) => match open {
                Some(Channel::Reasoning) => out.reasoning.push_str(t),
                Some(Channel::Content) => out.content.push_str(t),
                Some(Channel::Tool) => tool.push_str(t),
                _ => {}
            },
            Seg::Close(end) => {
                if open.take() == Some(Channel::Tool) {
                    let message = std::mem::take(tool);
                    if message.contains("<atem:function_calls>") || message.contains("<atem:invoke")
                    {
                        out.content.push_str(&message);
                        // A message cut by the next one is closed for the tool parser.
                        out.content.push_str(if end.is_empty() && !at_end {
                            ENDS[0]
                        } else {
                            end
                        });
                    }
                }
            }
        });
        self.seg = seg;
        self.open = open;
    }
}
