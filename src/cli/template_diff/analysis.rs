//! The token arithmetic behind `template-diff`: longest common prefixes, the first
//! divergence, and what a prefix cache (engine blocks) and a router's index (its own, maybe
//! larger, blocks fed by KV events) would reuse.

use serde::Serialize;

pub use crate::render::common_prefix;

/// Where two sequences first differ.
#[derive(Debug, Clone, Serialize)]
pub struct Divergence {
    /// Token index of the first difference.
    pub position: usize,
    /// The token each side has there (`null` where that side ended).
    pub left_token: Option<u32>,
    pub right_token: Option<u32>,
    /// Decoded text around the divergence on each side (a few tokens either way).
    pub left_text: String,
    pub right_text: String,
    /// Index of the turn-2 (or compared) message the divergence falls in; `null` when it
    /// falls in the generation prompt or the template could not say.
    pub message_index: Option<usize>,
    pub message_role: Option<String>,
}

/// Prefix-cache reuse of a new prompt against tokens an engine holds.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Reuse {
    pub cached_tokens: usize,
    pub uncached_tokens: usize,
}

/// vLLM reuses only whole blocks whose every token matches: `floor(lcp / B) * B`.
pub fn engine_reuse(common_prefix: usize, prompt_len: usize, block_size: usize) -> Reuse {
    let cached = (common_prefix / block_size) * block_size;
    let cached = cached.min(prompt_len);
    Reuse {
        cached_tokens: cached,
        uncached_tokens: prompt_len - cached,
    }
}

/// What a router's index with blocks of `index_block` tokens knows the decode pod holds.
///
/// The engine (blocks of `engine_block` tokens) emits one KV event for the full blocks of
/// the turn-1 prompt at prefill, then one event per engine block completed while decoding.
/// An index whose blocks are larger re-chunks each event's tokens into its own blocks and
/// drops the remainder, so a decode-time event shorter than its block is lost entirely.
pub fn index_visible_tokens(
    turn1_prompt: usize,
    held: usize,
    engine_block: usize,
    index_block: usize,
) -> usize {
    let prefill = (turn1_prompt / engine_block) * engine_block;
    let mut visible = (prefill / index_block) * index_block;
    if visible < prefill {
        // The chain breaks at the first dropped tail: later events cannot extend it.
        return visible;
    }
    // Decode-time events, one engine block each.
    let held_full = (held / engine_block) * engine_block;
    let mut pos = prefill;
    while pos + engine_block <= held_full {
        if engine_block >= index_block && visible == pos {
            visible += (engine_block / index_block) * index_block;
            if !engine_block.is_multiple_of(index_block) {
                break;
            }
        } else {
            break;
        }
        pos += engine_block;
    }
    visible
}

/// The index's reuse of a new prompt: index blocks fully inside both the common prefix and
/// what the index has seen.
pub fn index_reuse(
    common_prefix: usize,
    prompt_len: usize,
    visible: usize,
    index_block: usize,
) -> Reuse {
    let cached = ((common_prefix.min(visible)) / index_block) * index_block;
    Reuse {
        cached_tokens: cached,
        uncached_tokens: prompt_len - cached,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_arithmetic() {
        assert_eq!(common_prefix(&[1, 2, 3], &[1, 2, 4]), 2);
        assert_eq!(
            engine_reuse(37, 50, 16),
            Reuse {
                cached_tokens: 32,
                uncached_tokens: 18
            }
        );
        // 300-token prompt, 128-token reply: prefill event holds 288 tokens, the index (64)
        // keeps 256 of them and drops every 16-token decode event.
        assert_eq!(index_visible_tokens(300, 428, 16, 64), 256);
        // Same block size: every decode block is visible.
        assert_eq!(index_visible_tokens(300, 428, 16, 16), 416);
        assert_eq!(
            index_reuse(420, 450, 256, 64),
            Reuse {
                cached_tokens: 256,
                uncached_tokens: 194
            }
        );
    }
}
