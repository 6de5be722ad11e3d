//! Exact tokenization, fast: `fastokens` where it agrees with `tokenizers`, with a segment
//! cache, and `tokenizers` (the reference, what transformers runs) everywhere else.
//!
//! At load the fast encoder must reproduce the reference IDs on a built-in sample that
//! mixes English, code, CJK, emoji, RTL text, whitespace and digit runs, random Unicode and
//! every added token of the vocabulary; if it cannot load the tokenizer or disagrees once,
//! the model falls back to `tokenizers` and the reason is logged and kept for `/v1/models`.
//!
//! The segment cache (fastokens') keys the IDs of the text between added tokens by content:
//! templates write added tokens around every message, so turn N of a chat re-tokenizes only
//! what turn N-1 did not already have. Its budget is `--segment-cache-mb`.
//!
//! In front of both, the prompt cache (`super::prompt_cache`) reuses the IDs of a recent
//! prompt that the new one extends, so the re-sent history is not even scanned. Its budget
//! is `--prompt-cache-mb`. The text it does encode after a reused prefix is new, so it skips
//! the segment cache (`super::added_split`) where the added tokens' rules allow.

use super::added_split::AddedSplit;
use super::prompt_cache::{AddedTokenRules, PromptCache, PromptCacheStats};
use fastokens::SegmentCacheStats;
use std::sync::Arc;
use tokenizers::Tokenizer;

/// Which encoder a model uses, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    Fast,
    /// The reference, with the reason the fast path is off.
    Reference(String),
}

/// A model's encoder: the reference tokenizer plus, when proven equal, the fast one.
pub struct Encoder {
    fast: Option<fastokens::Tokenizer>,
    backend: Backend,
    /// For encodes without added special tokens (chat prompts); `None` when off or when the
    /// tokenizer's rules rule it out.
    prompt_cache: Option<PromptCache>,
    /// For the text after a prefix the prompt cache reused: added tokens split here, the
    /// rest encoded past fastokens' segment cache. `None` without the fast encoder, or when
    /// the added tokens' rules need `tokenizers`' own split.
    added_split: Option<AddedSplit>,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("backend", &self.backend)
            .field("prompt_cache", &self.prompt_cache)
            .finish()
    }
}

/// Deterministic xorshift for the load-time sample (no need for a crate: only its
/// determinism matters, not its quality).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const SAMPLE_PIECES: &[&str] = &[
    "The quick brown fox jumps over the lazy dog. ",
    "fn main() {\n    let x: Vec<u8> = vec![1, 2, 3];\n    println!(\"{x:?}\");\n}\n",
    "def f(a, b=2):\n\treturn a ** b  # comment\n",
    "日本語のテキストと漢字、カタカナ。中文文本，标点符号！한국어 문장입니다. ",
    "Emoji 🤖🧪 ZWJ 👩‍💻 👨‍👩‍👧 skin 👍🏽 flags 🇨🇭🇯🇵 ",
    "مرحبا بالعالم שלום עולם ",
    "Ünïcödé — “quotes” ‘single’ … ½ № 𝔘𝔫𝔦 e\u{301} ",
    "          \n\n\n\t\t\t   \r\n  ",
    "1234567890 3.14159 -42 1e10 0x1F 2026-11-29 ",
    "Don't won't I'm you're it's we've they'll ",
    "<html><body class=\"x\">&amp;</body></html>",
    "\u{0}\u{1f}\u{7f}\u{a0}\u{2028}\u{feff}",
];

/// The load-time sample: fixed pieces, every added token, and random Unicode, shuffled.
pub fn check_sample(added: &[String], seed: u64) -> String {
    let mut rng = XorShift(seed | 1);
    let mut out = String::new();
    for round in 0..24 {
        for piece in SAMPLE_PIECES {
            out.push_str(piece);
            if rng.below(3) == 0 && !added.is_empty() {
                out.push_str(&added[rng.below(added.len())]);
            }
        }
        for _ in 0..64 {
            let c = match rng.below(4) {
                0 => char::from_u32(rng.below(0x80) as u32),
                1 => char::from_u32(0x80 + rng.below(0x780) as u32),
                2 => char::from_u32(0x800 + rng.below(0xF800) as u32),
                _ => char::from_u32(0x10000 + rng.below(0x100000) as u32),
            };
            out.extend(c);
        }
        if round == 0 {
            for a in added {
                out.push_str(a);
                out.push(' ');
            }
        }
    }
    out
}

/// fastokens' encoder for `tokenizer.json`, not yet proven (see [`Encoder::new`]).
pub fn build_fast(tokenizer_json: &[u8]) -> Result<fastokens::Tokenizer, String> {
    let value: serde_json::Value =
        serde_json::from_slice(tokenizer_json).map_err(|e| e.to_string())?;
    fastokens::Tokenizer::from_json(value).map_err(|e| format!("fastokens cannot load it: {e}"))
}

impl Encoder {
    /// The encoder for `reference`: the fast one where it proves equal to `reference` on a
    /// built-in sample, else `reference` itself, with the reason in [`Encoder::backend`].
    ///
    /// `fast` is [`build_fast`]'s result, which a loader may run on another thread while it
    /// parses `reference` (the two are most of a model's load time).
    pub fn new(
        reference: &Tokenizer,
        fast: Result<fastokens::Tokenizer, String>,
        opts: &EncoderOptions,
    ) -> Encoder {
        let (fast, backend) = match fast
            .and_then(|fast| Self::prove_fast(reference, fast, opts.segment_cache_bytes))
        {
            Ok(fast) => (Some(fast), Backend::Fast),
            Err(reason) => (None, Backend::Reference(reason)),
        };
        let prompt_cache = prompt_cache(reference, opts.prompt_cache_bytes);
        // Only the prompt cache's reuse path uses it.
        let added_split = (fast.is_some() && prompt_cache.is_some())
            .then(|| {
                AddedSplit::new(reference)
                    .map_err(|reason| tracing::debug!("added tokens split by fastokens: {reason}"))
                    .ok()
            })
            .flatten();
        Encoder {
            fast,
            backend,
            prompt_cache,
            added_split,
        }
    }

    /// The reference encoder only (with the prompt cache, which is exact for it too).
    pub fn reference_only(reference: &Tokenizer, reason: &str, opts: &EncoderOptions) -> Encoder {
        Encoder {
            fast: None,
            backend: Backend::Reference(reason.into()),
            prompt_cache: prompt_cache(reference, opts.prompt_cache_bytes),
            added_split: None,
        }
    }

    /// `fast` once it encodes the load-time sample as `reference` does.
    fn prove_fast(
        reference: &Tokenizer,
        mut fast: fastokens::Tokenizer,
        cache_bytes: usize,
    ) -> Result<fastokens::Tokenizer, String> {
        let added: Vec<String> = reference
            .get_added_tokens_decoder()
            .into_values()
            .map(|t| t.content)
            .collect();
        let sample = check_sample(&added, 0x5eed);
        for add_special in [false, true] {
            let want = reference
                .encode_fast(sample.as_str(), add_special)
                .map_err(|e| e.to_string())?;
            let got = fast
                .encode_with_special_tokens(&sample, add_special)
                .map_err(|e| e.to_string())?;
            if got != want.get_ids() {
                let at = got
                    .iter()
                    .zip(want.get_ids())
                    .take_while(|(a, b)| a == b)
                    .count();
                return Err(format!(
                    "fastokens disagrees with tokenizers on the load-time sample (add_special_tokens={add_special}) at token {at}"
                ));
            }
        }
        if cache_bytes > 0 {
            fast.enable_segment_cache(cache_bytes);
        }
        Ok(fast)
    }

    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Encodes `text`; added tokens in it are matched (`split_special_tokens=False`).
    pub fn encode(
        &self,
        reference: &Tokenizer,
        text: &str,
        add_special_tokens: bool,
    ) -> Result<Vec<u32>, String> {
        self.encode_keeping(reference, text, None, add_special_tokens)
            .map(Arc::unwrap_or_clone)
    }

    /// [`Encoder::encode`] of a prompt the caller holds shared, without special tokens: the
    /// prompt cache keeps `prompt` itself rather than a copy, and the IDs it returns.
    pub fn encode_shared(
        &self,
        reference: &Tokenizer,
        prompt: &Arc<String>,
    ) -> Result<Arc<Vec<u32>>, String> {
        self.encode_keeping(reference, prompt, Some(prompt), false)
    }

    fn encode_keeping(
        &self,
        reference: &Tokenizer,
        text: &str,
        shared: Option<&Arc<String>>,
        add_special_tokens: bool,
    ) -> Result<Arc<Vec<u32>>, String> {
        match &self.prompt_cache {
            Some(cache) if !add_special_tokens => {
                cache.encode(text, shared, |piece, after_reuse, out| {
                    if let (Some(fast), Some(split), Some(added)) =
                        (&self.fast, &self.added_split, after_reuse)
                    {
                        if split.encode_into(fast, piece, added, out)? {
                            return Ok(());
                        }
                        // Not what the split expects (never, as built): the plain way.
                    }
                    let ids = self.encode_uncached(reference, piece, false)?;
                    if out.is_empty() {
                        *out = ids;
                    } else {
                        out.extend_from_slice(&ids);
                    }
                    Ok(())
                })
            }
            _ => self
                .encode_uncached(reference, text, add_special_tokens)
                .map(Arc::new),
        }
    }

    fn encode_uncached(
        &self,
        reference: &Tokenizer,
        text: &str,
        add_special_tokens: bool,
    ) -> Result<Vec<u32>, String> {
        match &self.fast {
            Some(fast) => fast
                .encode_with_special_tokens(text, add_special_tokens)
                .map_err(|e| e.to_string()),
            None => reference
                .encode_fast(text, add_special_tokens)
                .map(|e| e.get_ids().to_vec())
                .map_err(|e| e.to_string()),
        }
    }

    pub fn cache_stats(&self) -> Option<SegmentCacheStats> {
        self.fast.as_ref().and_then(|f| f.segment_cache_stats())
    }

    /// Whether the text after a reused prefix is split at added tokens here (see
    /// [`AddedSplit`]) rather than by fastokens.
    pub fn splits_added_tokens(&self) -> bool {
        self.added_split.is_some()
    }

    pub fn prompt_cache_stats(&self) -> Option<PromptCacheStats> {
        self.prompt_cache.as_ref().map(PromptCache::stats)
    }
}

/// Budgets of an encoder's caches, in bytes; 0 turns a cache off.
#[derive(Debug, Clone, Copy)]
pub struct EncoderOptions {
    pub segment_cache_bytes: usize,
    pub prompt_cache_bytes: usize,
}

/// The prompt cache for `reference`'s added tokens, when its rules allow one (logged if not).
fn prompt_cache(reference: &Tokenizer, max_bytes: usize) -> Option<PromptCache> {
    if max_bytes == 0 {
        return None;
    }
    if reference.get_truncation().is_some() || reference.get_padding().is_some() {
        tracing::info!("prompt cache off: tokenizer.json sets truncation or padding");
        return None;
    }
    let added: Vec<AddedTokenRules> = reference
        .get_added_tokens_decoder()
        .into_values()
        .map(|t| AddedTokenRules {
            content: t.content,
            single_word: t.single_word,
            lstrip: t.lstrip,
            rstrip: t.rstrip,
            normalized: t.normalized,
        })
        .collect();
    PromptCache::new(&added, reference.get_encode_special_tokens(), max_bytes)
        .map_err(|reason| tracing::info!("prompt cache off: {reason}"))
        .ok()
}
