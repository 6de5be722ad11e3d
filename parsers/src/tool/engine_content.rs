//! Content around tool calls as vLLM 0.33's parser engine streams it
//! (`vllm/parser/engine/parser_engine.py`, `drop_whitespace_only_content_before_tools`, on by
//! default; qwen3_coder, glm45 and kimi_k2 run on the engine): until content has had a
//! non-whitespace character, whitespace is held and sent with the text that follows it, and
//! dropped once a call has started. So `"\n\n<tool_call>…"` has no content, and text after a
//! call loses its leading newline. At the end, held whitespace is content only if no call was
//! made. (The engine decides per token; this decides per character, which agrees wherever the
//! whitespace is a token of its own, as newlines around markers are.)

use super::Parsed;
use crate::pystr::py_space;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct EngineContent {
    /// Content has had a non-whitespace character.
    text_seen: bool,
    /// Whitespace-only content held until it is known whether a call follows.
    held_ws: String,
}

impl EngineContent {
    /// Appends `text` as content; `calls`: whether a call has started.
    pub(crate) fn push(&mut self, text: &str, calls: bool, out: &mut Parsed) {
        if self.text_seen {
            out.content.push_str(text);
            return;
        }
        let rest = text.trim_start_matches(py_space);
        if !calls {
            self.held_ws.push_str(&text[..text.len() - rest.len()]);
        }
        if !rest.is_empty() {
            out.content.push_str(&std::mem::take(&mut self.held_ws));
            out.content.push_str(rest);
            self.text_seen = true;
        }
    }

    /// A call started: held whitespace is dropped.
    pub(crate) fn call_started(&mut self) {
        self.held_ws.clear();
    }

    /// The output ended: held whitespace is content if no call was made.
    pub(crate) fn finish(&mut self, calls: bool, out: &mut Parsed) {
        let held = std::mem::take(&mut self.held_ws);
        if !calls {
            out.content.push_str(&held);
        }
    }
}
