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
//! Where the added tokens are comes from the prompt cache's own scan of that text (its
//! automaton holds the same contents, leftmost-longest), so nothing scans it twice.
//!
//! It only exists when the split is exactly `find_matches`' for every input: every added
//! token is `normalized: false` (no second, normalized pass) with none of `lstrip`, `rstrip`
//! or `single_word` (which move or veto a match), no two share a content, and
//! `encode_special_tokens` is off. `tests/prompt_cache.rs` compares the result with the
//! reference on random prompts for every fixture tokenizer.

use std::collections::HashMap;
use tokenizers::Tokenizer;

/// See the module documentation.
pub struct AddedSplit {
    /// Each added token's ID by its content.
    ids: HashMap<String, u32>,
}

impl AddedSplit {
    /// The splitter for `reference`'s added tokens, or why their rules need `tokenizers`' own.
    pub fn new(reference: &Tokenizer) -> Result<AddedSplit, String> {
        if reference.get_encode_special_tokens() {
            return Err("the tokenizer splits special tokens (encode_special_tokens)".into());
        }
        let mut ids = HashMap::new();
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
            if ids.contains_key(&t.content) {
                return Err(format!(
                    "two added tokens share the content {:?}",
                    t.content
                ));
            }
            ids.insert(t.content, id);
        }
        if ids.is_empty() {
            return Err("no added tokens".into());
        }
        Ok(AddedSplit { ids })
    }

    /// Appends the IDs of `text` (encoded without added special tokens) to `out`, given
    /// where its added tokens are (`added`: byte ranges in order, as `find_matches` finds
    /// them), and returns true. Returns false, with `out` as it was, when a range is not an
    /// added token, which a correct caller never gives.
    pub fn encode_into(
        &self,
        fast: &fastokens::Tokenizer,
        text: &str,
        added: &[(usize, usize)],
        out: &mut Vec<u32>,
    ) -> Result<bool, String> {
        let len = out.len();
        let mut start = 0;
        for &(from, to) in added {
            let Some(&id) = text.get(from..to).and_then(|t| self.ids.get(t)) else {
                out.truncate(len);
                return Ok(false);
            };
            if start < from {
                out.extend(Self::plain(fast, &text[start..from])?);
            }
            out.push(id);
            start = to;
        }
        if start < text.len() {
            out.extend(Self::plain(fast, &text[start..])?);
        }
        Ok(true)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_the_ranges_given_or_leaves_the_output_alone() {
        let path = format!(
            "{}/fixtures/models/qwen3/tokenizer.json.gz",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut json = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()),
            &mut json,
        )
        .unwrap();
        let reference = Tokenizer::from_bytes(&json).unwrap();
        let fast = fastokens::Tokenizer::from_json(serde_json::from_slice(&json).unwrap()).unwrap();
        let split = AddedSplit::new(&reference).unwrap();

        let text = "hi<|im_end|>\n<|im_start|>assistant\n<think>x</think>";
        let added: Vec<(usize, usize)> = ["<|im_end|>", "<|im_start|>", "<think>", "</think>"]
            .iter()
            .map(|t| text.find(t).map(|at| (at, at + t.len())).unwrap())
            .collect();
        let mut out = vec![7];
        assert!(split.encode_into(&fast, text, &added, &mut out).unwrap());
        let want = reference.encode(text, false).unwrap();
        assert_eq!(out[1..], *want.get_ids());

        // A range that is no added token: nothing appended.
        let mut out = vec![7];
        assert!(!split
            .encode_into(&fast, text, &[(2, 12), (0, 2)], &mut out)
            .unwrap());
        assert_eq!(out, [7]);
    }
}
