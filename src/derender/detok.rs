//! Incremental detokenization: text deltas whose concatenation equals
//! `tokenizer.decode(all_ids)` for a byte-level BPE vocabulary.
//!
//! vLLM's algorithm (`detokenize_incrementally`): keep two offsets into the IDs; decode the
//! window `[prefix, end)` and the already-emitted part `[prefix, read)`; the difference is
//! new text, unless the window ends in U+FFFD (a UTF-8 sequence split across tokens), in
//! which case it is held until the next token completes it. Only the window is kept, so the
//! state (and each step's work) stays a few tokens long whatever the output length.

use crate::model::Model;
use serde::{Deserialize, Serialize};

/// The resumable state: the IDs from `prefix` on, and how many of them were emitted.
/// Small and independent of the output length; serializable into a stream state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetokState {
    /// IDs from the prefix offset to the end.
    pub window: Vec<u32>,
    /// How many of `window` are already reflected in emitted text.
    pub read: usize,
}

impl DetokState {
    /// The state a choice starts from after `prompt`, as vLLM primes its detokenizer
    /// (`convert_prompt_ids_to_tokens`: the prompt's last 7 IDs, special ones dropped when
    /// they are skipped, the last 5 of those as the window, all of it read), so the first
    /// output token decodes in context: a Metaspace (SentencePiece) vocabulary keeps its
    /// leading space. A byte-level vocabulary decodes the same either way.
    pub fn seeded(model: &Model, prompt: &[u32], skip_special_tokens: bool) -> Self {
        let tail = &prompt[prompt.len().saturating_sub(7)..];
        let mut window: Vec<u32> = tail
            .iter()
            .copied()
            .filter(|id| !(skip_special_tokens && model.is_special_token(*id)))
            .collect();
        window.drain(..window.len().saturating_sub(5));
        Self::primed(window)
    }

    /// A state whose whole window is already read: context for what follows, no text of its
    /// own (empty: a fresh state).
    pub fn primed(window: Vec<u32>) -> Self {
        DetokState {
            read: window.len(),
            window,
        }
    }
}

/// An incremental detokenizer over a borrowed model's decoder.
pub struct IncrementalDetokenizer<'a> {
    model: &'a Model,
    skip_special_tokens: bool,
    state: DetokState,
}

impl<'a> IncrementalDetokenizer<'a> {
    pub fn new(model: &'a Model, skip_special_tokens: bool) -> Self {
        Self::resume(model, skip_special_tokens, DetokState::default())
    }

    pub fn resume(model: &'a Model, skip_special_tokens: bool, state: DetokState) -> Self {
        IncrementalDetokenizer {
            model,
            skip_special_tokens,
            state,
        }
    }

    pub fn state(&self) -> &DetokState {
        &self.state
    }

    fn decode(&self, ids: &[u32]) -> Result<String, String> {
        self.model.decode(ids, self.skip_special_tokens)
    }

    /// Adds one generated token; returns the text it completes (possibly empty).
    pub fn push(&mut self, id: u32) -> Result<String, String> {
        self.state.window.push(id);
        let prefix_text = self.decode(&self.state.window[..self.state.read])?;
        let full = self.decode(&self.state.window)?;
        let prefix_chars = prefix_text.chars().count();
        // vLLM's rule: new text once the window decodes longer (in characters) than the
        // emitted part and does not end inside a character; the new text is what follows
        // as many characters as the emitted part has, whatever they are (a seeded prompt
        // tail that ends inside a character decodes to U+FFFD there, and to the character
        // once the output completes it: neither is output text).
        if full.chars().count() > prefix_chars && !full.ends_with('\u{fffd}') {
            let new = after_chars(&full, prefix_chars).to_string();
            // The emitted window becomes the next prefix: keep only the IDs from `read` on.
            let read = self.state.read;
            self.state.window.drain(..read);
            self.state.read = self.state.window.len();
            return Ok(new);
        }
        Ok(String::new())
    }

    /// The text still held at the end of the output (an incomplete UTF-8 sequence decodes to
    /// U+FFFD, as `decode` of the whole sequence does).
    pub fn finish(&mut self) -> Result<String, String> {
        let prefix_text = self.decode(&self.state.window[..self.state.read])?;
        let full = self.decode(&self.state.window)?;
        let rest = after_chars(&full, prefix_text.chars().count()).to_string();
        self.state.window.clear();
        self.state.read = 0;
        Ok(rest)
    }
}

/// `text` after its first `n` characters (empty when it has no more).
fn after_chars(text: &str, n: usize) -> &str {
    text.char_indices().nth(n).map_or("", |(at, _)| &text[at..])
}
