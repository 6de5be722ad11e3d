//! Inkling's typed blocks, as vLLM 0.32/0.33's inkling parser engine reads them
//! (`vllm/parser/inkling.py`); every marker is a special token:
//!
//! ```text
//! <|content_thinking|>reasoning<|end_message|><|message_model|><|content_text|>answer<|end_message|>
//! <|message_model|><|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"SF"}}<|end_message|>
//! ```
//!
//! `<|message_model|>` opens a message whose header (an optional function name) runs to the
//! block's kind: `<|content_text|>`, `<|content_invoke_tool_text|>` and
//! `<|content_tool_error|>` are visible text, `<|content_thinking|>` reasoning,
//! `<|content_invoke_tool_json|>` a call. `<|end_message|>` or
//! `<|content_model_end_sampling|>` ends any block. The header is dropped when a block kind
//! follows it, and is text when the block ends or the output does without one.
//!
//! This module holds the markers and the reasoning split ([`InklingSplit`], run by the tag
//! parser's `inkling` variant): thinking blocks are reasoning (right-stripped), text blocks
//! content, and call blocks are passed on as content with their markers, for the tool
//! parser (`tool::inkling`), as vLLM's reasoning parser passes them.

use crate::{partial_suffix, Split};
use serde::{Deserialize, Serialize};

pub(crate) const MESSAGE_MODEL: &str = "<|message_model|>";
pub(crate) const TEXT: &str = "<|content_text|>";
pub(crate) const THINKING: &str = "<|content_thinking|>";
pub(crate) const TOOL_JSON: &str = "<|content_invoke_tool_json|>";
pub(crate) const TOOL_TEXT: &str = "<|content_invoke_tool_text|>";
pub(crate) const TOOL_ERROR: &str = "<|content_tool_error|>";
pub(crate) const END_SAMPLING: &str = "<|content_model_end_sampling|>";
pub(crate) const END: &str = "<|end_message|>";

const MARKERS: [&str; 8] = [
    MESSAGE_MODEL,
    TEXT,
    THINKING,
    TOOL_JSON,
    TOOL_TEXT,
    TOOL_ERROR,
    END_SAMPLING,
    END,
];

/// The first marker in `s`: its offset and text.
pub(crate) fn next_marker(s: &str) -> Option<(usize, &'static str)> {
    MARKERS
        .iter()
        .filter_map(|m| s.find(m).map(|at| (at, *m)))
        .min_by_key(|&(at, _)| at)
}

/// How many bytes at the end of `s` may start a marker.
pub(crate) fn partial_marker(s: &str) -> usize {
    MARKERS
        .iter()
        .map(|m| partial_suffix(s, m))
        .max()
        .unwrap_or(0)
}

/// Where the reasoning split is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Block {
    /// After `<|message_model|>` (and where output starts): the header.
    #[default]
    Header,
    Text,
    Thinking,
    Tool,
}

/// The reasoning split's state; serializable between stream chunks.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct InklingSplit {
    block: Block,
    buf: String,
    /// The header's text, or a thinking block's trailing whitespace, held.
    held: String,
}

impl InklingSplit {
    fn text(&mut self, t: &str, out: &mut Split) {
        match self.block {
            Block::Header => self.held.push_str(t),
            Block::Text | Block::Tool => out.content.push_str(t),
            Block::Thinking => {
                // Trailing whitespace waits: it is dropped if the block ends next.
                self.held.push_str(t);
                let keep = self.held.trim_end().len();
                out.reasoning.push_str(&self.held[..keep]);
                self.held.drain(..keep);
            }
        }
    }

    fn marker(&mut self, m: &'static str, out: &mut Split) {
        let block = self.block;
        if block != Block::Header || m == MESSAGE_MODEL {
            self.held.clear();
        }
        self.block = match (block, m) {
            (Block::Tool, END | END_SAMPLING) => {
                out.content.push_str(m);
                Block::Text
            }
            (Block::Tool, _) => {
                // Inside a call every other marker is its text.
                out.content.push_str(m);
                Block::Tool
            }
            (_, MESSAGE_MODEL) => Block::Header,
            (Block::Thinking, THINKING) => Block::Thinking,
            (_, THINKING) => Block::Thinking,
            (_, TOOL_JSON) => {
                self.held.clear();
                out.content.push_str(m);
                Block::Tool
            }
            (Block::Header, END | END_SAMPLING) => {
                out.content.push_str(&std::mem::take(&mut self.held));
                Block::Text
            }
            (Block::Header, _) => {
                self.held.clear();
                Block::Text
            }
            _ => Block::Text,
        };
    }

    /// Reads `text` (after what is held); `at_end`: the output ended.
    pub(crate) fn push(&mut self, text: &str, at_end: bool, out: &mut Split) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.push_str(text);
        let mut rest = buf.as_str();
        while let Some((at, m)) = next_marker(rest) {
            self.text(&rest[..at], out);
            self.marker(m, out);
            rest = &rest[at + m.len()..];
        }
        let keep = if at_end { 0 } else { partial_marker(rest) };
        self.text(&rest[..rest.len() - keep], out);
        self.buf = rest[rest.len() - keep..].to_string();
        if at_end {
            let held = std::mem::take(&mut self.held);
            if self.block == Block::Header {
                out.content.push_str(&held);
            }
        }
    }
}
