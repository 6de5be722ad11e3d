//! Gemma's tool calls: Gemma 4 (`gemma4`, checked against vLLM 0.32's gemma4 engine tool
//! parser, `vllm/parser/gemma4.py`) and FunctionGemma (`functiongemma`, vLLM's
//! `FunctionGemmaToolParser`). The wire formats:
//!
//! ```text
//! text<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|><|tool_call>call:now{}<tool_call|>
//! text<start_function_call>call:get_weather{city:<escape>Paris<escape>,days:<escape>3<escape>}<end_function_call>
//! ```
//!
//! A call runs from its start marker to its end marker (or the output's end, where vLLM
//! keeps a call cut off). After the start marker come `call:` (Gemma 4 also takes a bare
//! `:`), the name, and the arguments in braces (Gemma 4 also takes parentheses, or no
//! arguments at all: `call:now<tool_call|>`); [`args`] reads them. A call is held until it
//! ends and sent whole, name and arguments in one delta.
//!
//! Content is the text around the calls as vLLM's parser engine streams it
//! ([`EngineContent`]): whitespace before the first call is dropped; the text before a call
//! keeps its trailing space and the text after the calls is kept (vLLM's one-shot paths strip
//! the one and drop the other: they differ from its streams, and ours follows the stream).
//! Gemma 4 drops a stray `<tool_call|>` in content, as vLLM's engine does.
//!
//! Where we differ from vLLM (listed in the case files): a call without `call:`, without a
//! name or with a name that is not one (vLLM sends `<|"|>Lima<|"|>}` as a name for
//! `<|tool_call>get_weather{city:<|"|>Lima<|"|>}`) is content, verbatim; so is FunctionGemma's
//! call whose name is not followed by `{`, and a call cut off by the output's end in its name
//! (vLLM sends `get_wea` for `<|tool_call>call:get_wea`).

mod args;

use super::engine_content::EngineContent;
use super::{Parsed, Scan, ToolParser, ToolSchemas, MAX_NAME};
use crate::partial_suffix;
use crate::pystr::py_space;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Which Gemma format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GemmaFamily {
    Gemma4,
    FunctionGemma,
}

impl GemmaFamily {
    fn start(self) -> &'static str {
        match self {
            GemmaFamily::Gemma4 => "<|tool_call>",
            GemmaFamily::FunctionGemma => "<start_function_call>",
        }
    }

    fn end(self) -> &'static str {
        match self {
            GemmaFamily::Gemma4 => "<tool_call|>",
            GemmaFamily::FunctionGemma => "<end_function_call>",
        }
    }
}

/// The state machine for both formats; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GemmaParser {
    family: GemmaFamily,
    buf: String,
    /// Inside a call: its text after the start marker, so far.
    in_call: bool,
    call: String,
    calls: usize,
    content: EngineContent,
    #[serde(skip)]
    schemas: Arc<ToolSchemas>,
}

impl GemmaParser {
    pub fn new(family: GemmaFamily, schemas: Arc<ToolSchemas>) -> Self {
        GemmaParser {
            family,
            buf: String::new(),
            in_call: false,
            call: String::new(),
            calls: 0,
            content: EngineContent::default(),
            schemas,
        }
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        self.schemas = schemas;
    }

    fn text(&mut self, text: &str, out: &mut Parsed) {
        self.content.push(text, self.calls > 0, out);
    }

    /// The name and the arguments of a call's text (after the start marker); `None` when it
    /// is not a call (`closed`: its end marker came; a name cut off by the output's end is
    /// not known to be whole).
    fn read_call(&self, call: &str, closed: bool) -> Option<(String, String)> {
        match self.family {
            GemmaFamily::Gemma4 => {
                let rest = call
                    .strip_prefix("call:")
                    .or_else(|| call.strip_prefix(':'))?;
                let (name, body) = match rest.find(['{', '(']) {
                    Some(at) => (&rest[..at], Some(&rest[at + 1..])),
                    None if closed => (rest, None),
                    None => return None,
                };
                let name = name.trim_matches(py_space);
                let bad = |c: char| py_space(c) || "<>{}()[],:\"'".contains(c);
                if name.is_empty() || name.len() > MAX_NAME || name.contains(bad) {
                    return None;
                }
                let args = body.map_or_else(
                    || "{}".to_string(),
                    |b| args::gemma4_args(b, name, &self.schemas),
                );
                Some((name.to_string(), args))
            }
            GemmaFamily::FunctionGemma => {
                let rest = call.strip_prefix("call:")?;
                let at = rest.find('{')?;
                let name = &rest[..at];
                let word = |c: char| c.is_alphanumeric() || c == '_';
                if name.is_empty() || name.len() > MAX_NAME || !name.chars().all(word) {
                    return None;
                }
                let body = &rest[at + 1..];
                let body = body.strip_suffix('}').unwrap_or(body);
                Some((name.to_string(), args::functiongemma_args(body)))
            }
        }
    }

    /// A call's text ended (its end marker, `closed`, or the output's end).
    fn end_call(&mut self, closed: bool, out: &mut Parsed) {
        self.in_call = false;
        let call = std::mem::take(&mut self.call);
        match self.read_call(&call, closed) {
            Some((name, args)) => {
                self.content.call_started();
                out.start_call(self.calls, name, None);
                out.args(self.calls, &args);
                self.calls += 1;
            }
            None => {
                let end = if closed { self.family.end() } else { "" };
                let text = format!("{}{call}{end}", self.family.start());
                self.text(&text, out);
            }
        }
    }
}

impl Scan for GemmaParser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let (start, end) = (self.family.start(), self.family.end());
        let mut used = 0;
        loop {
            let rest = &text[used..];
            if self.in_call {
                match rest.find(end) {
                    Some(at) => {
                        self.call.push_str(&rest[..at]);
                        used += at + end.len();
                        self.end_call(true, out);
                        continue;
                    }
                    None => {
                        let n = if at_end {
                            rest.len()
                        } else {
                            rest.len() - partial_suffix(rest, end)
                        };
                        self.call.push_str(&rest[..n]);
                        used += n;
                        if at_end {
                            self.end_call(false, out);
                        }
                        return used;
                    }
                }
            }
            // Gemma 4's engine drops an end marker met in content.
            let stray = (self.family == GemmaFamily::Gemma4).then_some(end);
            let found = [Some(start), stray]
                .into_iter()
                .flatten()
                .filter_map(|m| rest.find(m).map(|at| (at, m)))
                .min_by_key(|&(at, _)| at);
            match found {
                Some((at, m)) => {
                    self.text(&rest[..at], out);
                    used += at + m.len();
                    self.in_call = m == start;
                }
                None => {
                    let keep = if at_end {
                        0
                    } else {
                        partial_suffix(rest, start)
                            .max(stray.map_or(0, |e| partial_suffix(rest, e)))
                    };
                    self.text(&rest[..rest.len() - keep], out);
                    return used + rest.len() - keep;
                }
            }
        }
    }
}

impl ToolParser for GemmaParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        self.content.finish(self.calls > 0, out);
    }
}
