//! Added-token splitting done here, for text that no cache can help with.
//!
//! `tokenizers` encodes a text by first splitting it at added tokens
//! (`AddedVocabulary::find_matches`: a leftmost-longest automaton over the contents of the
//! added tokens with `normalized: false`), then encoding each piece between them on its own.
//! fastokens does the same, and with its segment cache on it also hashes each piece, looks
//! it up and stores it. For the text a chat turn adds after the prefix the prompt cache
//! reused, that lookup always misses and the store only fills the cache (~3% of a turn's
//! server CPU); [`AddedSplit`] splits such text itself and encodes the pieces with
//! fastokens' `encode_ordinary`, which matches no added tokens and skips the segment cache.
//!
//! It only exists when the split is exactly `find_matches`' for every input: every added
//! token is `normalized: false` (no second, normalized pass) with none of `lstrip`, `rstrip`
//! or `single_word` (which move or veto a match), no two share a content, and
//! `encode_special_tokens` is off. `tests/prompt_cache.rs` compares the result with the
//! reference on random prompts for every fixture tokenizer.

use aho_corasick::{AhoCorasick, MatchKind};
use std::collections::HashSet;
use tokenizers::Tokenizer;

/// See the module documentation.
pub struct AddedSplit {
    automaton: AhoCorasick,
    /// By automaton pattern: the token's ID.
    ids: Vec<u32>,
}

impl AddedSplit {
    /// The splitter for `reference`'s added tokens, or why their rules need `tokenizers`' own.
    pub fn new(reference: &Tokenizer) -> Result<AddedSplit, String> {
        if reference.get_encode_special_tokens() {
            return Err("the tokenizer splits special tokens (encode_special_tokens)".into());
        }
        let mut patterns = Vec::new();
        let mut ids = Vec::new();
        let mut seen = HashSet::new();
        let mut decoder: Vec<_> = reference.get_added_tokens_decoder().into_iter().collect();
        decoder.sort_by_key(|(id, _)| *id);
        for (id, t) in decoder {
            if t.normalized || t.lstrip || t.rstrip || t.single_word {
                return Err(format!(
                    "added token {:?} has a rule that moves or vetoes its matches",
                    t.content
                ));
            }
            if t.content.is_empty() {
                continue;
            }
            if !seen.insert(t.content.clone()) {
                return Err(format!(
                    "two added tokens share the content {:?}",
                    t.content
                ));
            }
            patterns.push(t.content);
            ids.push(id);
        }
        if patterns.is_empty() {
            return Err("no added tokens".into());
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .map_err(|e| e.to_string())?;
        Ok(AddedSplit { automaton, ids })
    }

    /// Appends the IDs of `text` (encoded without added special tokens) to `out`.
    pub fn encode_into(
        &self,
        fast: &fastokens::Tokenizer,
        text: &str,
        out: &mut Vec<u32>,
    ) -> Result<(), String> {
        let mut start = 0;
        for m in self.automaton.find_iter(text) {
            if start < m.start() {
                out.extend(Self::plain(fast, &text[start..m.start()])?);
            }
            out.push(self.ids[m.pattern().as_usize()]);
            start = m.end();
        }
        if start < text.len() {
            out.extend(Self::plain(fast, &text[start..])?);
        }
        Ok(())
    }

    fn plain(fast: &fastokens::Tokenizer, text: &str) -> Result<Vec<u32>, String> {
        fast.encode_ordinary(text).map_err(|e| e.to_string())
    }
}

impl std::fmt::Debug for AddedSplit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddedSplit")
            .field("tokens", &self.ids.len())
            .finish()
    }
}
