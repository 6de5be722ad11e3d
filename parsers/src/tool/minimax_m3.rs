//! MiniMax-M3 (`minimax_m3`) tool calls, checked against vLLM 0.32's minimax_m3 engine
//! parser (`vllm/parser/minimax_m3.py`). Every tag is behind the namespace marker
//! `]<]minimax[>[` (an ordinary added token, written `NS` here):
//!
//! ```text
//! text NS<tool_call>
//! NS<invoke name="create_order">NS<user_id>42NS</user_id>NS<items>NS<item>…NS</item>NS</items>NS</invoke>
//! NS</tool_call>
//! ```
//!
//! Calls are read inside the `NS<tool_call>` block: each `NS<invoke name="f">` (the name in
//! double, single or no quotes, up to `>`) to its `NS</invoke>`, or to the output's end,
//! where vLLM keeps a call cut off. A call is held until it ends and sent whole; its
//! parameters are read as [`super::minimax_m3_args`] describes. Content before the block is
//! content as vLLM's parser engine streams it ([`EngineContent`]); text between calls is
//! dropped, as vLLM drops it.
//!
//! Where we differ from vLLM (listed in the case file): text after the block is kept as
//! content, where vLLM drops everything after `NS</tool_call>`; a block with no call in it
//! is content, verbatim, where vLLM drops it; an invoke without a name, or with a name cut
//! off by the output's end, is not a call (vLLM sends `get_wea` for `NS<invoke
//! name="get_wea`).

use super::engine_content::EngineContent;
use super::minimax_m3_args::arguments;
use super::xml::{first_of, held};
use super::{Parsed, Scan, ToolParser, ToolSchemas, MAX_NAME};
use crate::partial_suffix;
use crate::pystr::py_space;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

const BLOCK_START: &str = "]<]minimax[>[<tool_call>";
const BLOCK_END: &str = "]<]minimax[>[</tool_call>";
const INVOKE_DQ: &str = "]<]minimax[>[<invoke name=\"";
const INVOKE_SQ: &str = "]<]minimax[>[<invoke name='";
const INVOKE: &str = "]<]minimax[>[<invoke name=";
const INVOKE_END: &str = "]<]minimax[>[</invoke>";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    Content,
    /// Inside the block, between calls.
    Block,
    /// After `NS<invoke name=`: the name, up to `>`.
    Name,
    /// The invoke's body, up to `NS</invoke>`.
    Args,
}

/// The state machine for MiniMax-M3's format; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MinimaxM3Parser {
    mode: Mode,
    buf: String,
    /// The block's text while none of its calls has been sent: content if none is.
    pending: String,
    block_calls: usize,
    calls: usize,
    /// The name being read, then the call's name (`None`: not a call, skipped).
    name: Option<String>,
    token: String,
    content: EngineContent,
    #[serde(skip)]
    schemas: Arc<ToolSchemas>,
}

impl MinimaxM3Parser {
    pub fn new(schemas: Arc<ToolSchemas>) -> Self {
        MinimaxM3Parser {
            mode: Mode::Content,
            buf: String::new(),
            pending: String::new(),
            block_calls: 0,
            calls: 0,
            name: None,
            token: String::new(),
            content: EngineContent::default(),
            schemas,
        }
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        self.schemas = schemas;
    }

    fn block_text(&mut self, text: &str) {
        if self.block_calls == 0 {
            self.pending.push_str(text);
        }
    }

    /// The block ended (its end marker, or the output's end): with no call sent, its text
    /// was content after all.
    fn end_block(&mut self, out: &mut Parsed) {
        let pending = std::mem::take(&mut self.pending);
        if self.block_calls == 0 {
            self.content.push(&pending, self.calls > 0, out);
        }
        self.block_calls = 0;
        self.mode = Mode::Content;
    }

    /// The name read: the text up to `>` without the quote before it, trimmed.
    fn take_name(&mut self) -> Option<String> {
        let raw = std::mem::take(&mut self.token);
        let raw = raw
            .strip_suffix(['"', '\''])
            .unwrap_or(&raw)
            .trim_matches(py_space);
        let bad = |c: char| py_space(c) || "<>\"'[]".contains(c);
        (!raw.is_empty() && raw.len() <= MAX_NAME && !raw.contains(bad)).then(|| raw.to_string())
    }

    /// The invoke ended: its call is sent.
    fn end_call(&mut self, out: &mut Parsed) {
        let body = std::mem::take(&mut self.token);
        let Some(name) = self.name.take() else {
            return;
        };
        let schemas = &self.schemas;
        let typed = schemas.declares_params(&name);
        let args = arguments(&body, |k| {
            typed.then(|| schemas.param_schema(&name, k)).flatten()
        });
        self.content.call_started();
        out.start_call(self.calls, name, None);
        out.args(self.calls, &args);
        self.calls += 1;
        self.block_calls += 1;
        self.pending.clear();
    }

    /// One step over `rest`: the bytes consumed, and whether to go on.
    fn step(&mut self, rest: &str, at_end: bool, out: &mut Parsed) -> (usize, bool) {
        match self.mode {
            Mode::Content => {
                let Some(at) = rest.find(BLOCK_START) else {
                    let n = rest.len()
                        - if at_end {
                            0
                        } else {
                            partial_suffix(rest, BLOCK_START)
                        };
                    self.content.push(&rest[..n], self.calls > 0, out);
                    return (n, false);
                };
                self.content.push(&rest[..at], self.calls > 0, out);
                self.pending.push_str(BLOCK_START);
                self.mode = Mode::Block;
                (at + BLOCK_START.len(), true)
            }
            Mode::Block => {
                let markers = [INVOKE_DQ, INVOKE_SQ, INVOKE, BLOCK_END];
                let Some((at, m)) = first_of(rest, &markers) else {
                    let n = rest.len() - if at_end { 0 } else { held(rest, &markers) };
                    self.block_text(&rest[..n]);
                    return (n, false);
                };
                // `NS<invoke name=` is a prefix of the quoted forms: wait for the quote.
                if m == INVOKE && !at_end && rest.len() == at + m.len() {
                    self.block_text(&rest[..at]);
                    return (at, false);
                }
                self.block_text(&rest[..at + m.len()]);
                if m == BLOCK_END {
                    self.end_block(out);
                } else {
                    self.mode = Mode::Name;
                }
                (at + m.len(), true)
            }
            Mode::Name => match rest.find('>') {
                Some(at) => {
                    self.token.push_str(&rest[..at]);
                    self.block_text(&rest[..=at]);
                    self.name = self.take_name();
                    self.mode = Mode::Args;
                    (at + 1, true)
                }
                None => {
                    self.token.push_str(rest);
                    self.block_text(rest);
                    (rest.len(), false)
                }
            },
            Mode::Args => match rest.find(INVOKE_END) {
                Some(at) => {
                    self.token.push_str(&rest[..at]);
                    self.block_text(&rest[..at + INVOKE_END.len()]);
                    self.end_call(out);
                    self.mode = Mode::Block;
                    (at + INVOKE_END.len(), true)
                }
                None => {
                    let n = rest.len()
                        - if at_end {
                            0
                        } else {
                            partial_suffix(rest, INVOKE_END)
                        };
                    self.token.push_str(&rest[..n]);
                    self.block_text(&rest[..n]);
                    (n, false)
                }
            },
        }
    }
}

impl Scan for MinimaxM3Parser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let mut used = 0;
        loop {
            let (n, go) = self.step(&text[used..], at_end, out);
            used += n;
            if !go {
                return used;
            }
        }
    }
}

impl ToolParser for MinimaxM3Parser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        match self.mode {
            Mode::Content => {}
            // A call cut off in its body is kept, as vLLM keeps it; one cut off in its
            // name is not.
            Mode::Args => {
                self.end_call(out);
                self.end_block(out);
            }
            Mode::Block | Mode::Name => {
                self.token.clear();
                self.end_block(out);
            }
        }
        self.content.finish(self.calls > 0, out);
    }
}
