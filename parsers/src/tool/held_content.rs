//! Content around call blocks as vLLM's step3 and dots parsers give it (their one-shot
//! `extract_tool_calls`, which strips the text around the calls): whitespace that ends the
//! content of an output with calls, or leads the content after one, is dropped. A stream
//! cannot know yet whether calls follow, so trailing whitespace is held until other text
//! follows or the output ends.

use super::Parsed;
use crate::pystr::py_space;
use serde::{Deserialize, Serialize};

/// Held whitespace and whether content other than whitespace was sent. A parser keeps one
/// (`#[serde(flatten)]`, so its stream state keeps the two fields at its top level) and
/// counts its own calls.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct HeldContent {
    /// Whitespace held: dropped if it ends the content of an output with calls, or leads it.
    pending: String,
    /// Content other than whitespace has been sent.
    content_seen: bool,
}

impl HeldContent {
    /// Content, its trailing whitespace held until other text follows; `calls`: how many
    /// calls the output has had so far.
    pub(crate) fn content(&mut self, text: &str, calls: usize, out: &mut Parsed) {
        let body = text.trim_end_matches(py_space);
        let tail = &text[body.len()..];
        if !body.is_empty() {
            // Whitespace that leads the content of an output with calls is dropped.
            if self.content_seen || calls == 0 {
                out.content.push_str(&self.pending);
                out.content.push_str(body);
            } else {
                out.content.push_str(body.trim_start_matches(py_space));
            }
            self.pending.clear();
            self.content_seen = true;
        }
        self.pending.push_str(tail);
    }

    /// Text sent as written, whatever the calls (a block that is no call), after what is held.
    pub(crate) fn verbatim(&mut self, text: &str, out: &mut Parsed) {
        out.content.push_str(&std::mem::take(&mut self.pending));
        out.content.push_str(text);
        self.content_seen |= !text.chars().all(py_space);
    }

    /// A call starts: whitespace held before it, with no content yet, leads nothing.
    pub(crate) fn call_starts(&mut self) {
        if !self.content_seen {
            self.pending.clear();
        }
    }

    /// The output ended: whitespace that ends the content of an output with calls is
    /// dropped.
    pub(crate) fn finish(&mut self, calls: usize, out: &mut Parsed) {
        let pending = std::mem::take(&mut self.pending);
        if calls == 0 {
            out.content.push_str(&pending);
        }
    }
}
