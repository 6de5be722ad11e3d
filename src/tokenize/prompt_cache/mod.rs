//! Prompt prefix cache: the token IDs of recent prompts, reused for the prefix that a new
//! prompt shares with one of them.
//!
//! Turn N of a chat re-sends turns 1..N-1, which the template renders to the same bytes, so
//! turn N's prompt starts with nearly all of turn N-1's. fastokens' segment cache already
//! skips BPE for that history, but it still scans all of it for added tokens, hashes every
//! segment and looks each one up: ~8 µs of a 10k-token turn. Here one hash lookup and one
//! `memcmp` find the earlier prompt; its IDs are copied up to a point where tokenization is
//! known to restart, and only the rest is encoded.
//!
//! # Why the reuse is exact
//!
//! `tokenizers` first splits the text at added tokens (`AddedVocabulary::find_matches`: a
//! leftmost-longest automaton over the added tokens with `normalized: false`), then encodes
//! each piece between them on its own (normalizer, the normalized added tokens,
//! pre-tokenizer, model). So the IDs of `a + b` are the IDs of `a` followed by those of `b`
//! when the end of `a` is the end of a match that no rule can move. Such a match is a *cut*;
//! its token must:
//! - have neither `rstrip` (it moves the split past the token) nor `normalized` (such
//!   tokens are matched in the second pass), nor `single_word` (whether it matches depends
//!   on the character after it);
//! - end with an ASCII character that is neither alphanumeric nor `_` when the vocabulary
//!   has `single_word` tokens, whose word-boundary check looks at the character before them;
//! - conservatively, also have no `lstrip` and not start with whitespace (an earlier
//!   `rstrip` token could reach into it). Neither moves the split at its end as far as
//!   `find_matches` reads, but no tokenizer we know needs them as cut points.
//!
//! And `encode_special_tokens` must be off (special tokens would not split at all).
//!
//! The matches that end at or before `c` depend only on the text before `c + w`, where `w` is
//! the longest added token in bytes. So a cut `c` of an earlier prompt is also a cut of any
//! prompt that shares its first `c + w` bytes, at the same ID offset. The rest of the new
//! prompt is encoded piece by piece at its own cuts (each piece starts and ends at a cut, so
//! each is exact alone), which records the new prompt's cuts for the next turn.
//!
//! `tests/prompt_cache.rs` compares this with the plain encoder on random prompt pairs built
//! to stress the boundary (partial tokens, whitespace, other models' tokens) for every
//! fixture tokenizer.

use aho_corasick::{AhoCorasick, MatchKind};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Prompts shorter than this are encoded directly: there is little to reuse.
const MIN_TEXT: usize = 4096;
/// The key covers the prompt up to its `KEY_CUTS`th cut, and at least `KEY_BYTES` bytes
/// (a chat's system prompt and first user message): the part every later turn repeats.
const KEY_CUTS: usize = 4;
const KEY_BYTES: usize = 1024;
/// Prompts kept per key: conversations that open alike (same system prompt and first
/// message) share a key.
const BUCKET: usize = 8;
/// The key scan stops here even without enough cuts, so a miss costs a bounded scan.
const KEY_MAX_BYTES: usize = 8192;
/// New cuts are recorded at most this often: every cut recorded costs one encoder call.
const MIN_PIECE: usize = 256;
/// Slots of the admission filter: a prompt is stored only when its key was seen before.
const SEEN_SLOTS: usize = 4096;

/// An added token as the cache needs it (`tokenizers::AddedToken`'s fields).
#[derive(Debug, Clone)]
pub struct AddedTokenRules {
    pub content: String,
    pub single_word: bool,
    pub lstrip: bool,
    pub rstrip: bool,
    pub normalized: bool,
}

/// A point where tokenization restarts: `byte` in the text, `ids` IDs before it.
#[derive(Debug, Clone, Copy)]
struct Cut {
    byte: u32,
    ids: u32,
}

#[derive(Debug)]
struct Entry {
    /// The caller's own prompt when it shares it ([`PromptCache::encode`]), else a copy.
    text: Arc<String>,
    /// Shared with the caller, who sends them as the response.
    ids: Arc<Vec<u32>>,
    /// Ascending.
    cuts: Box<[Cut]>,
}

impl Entry {
    fn size(&self) -> usize {
        self.text.capacity() + self.ids.capacity() * 4 + self.cuts.len() * 8 + 64
    }
}

#[derive(Default)]
struct State {
    buckets: HashMap<u64, Vec<Arc<Entry>>>,
    /// Insertion order, for eviction; entries no longer in their bucket are skipped.
    order: VecDeque<(u64, std::sync::Weak<Entry>)>,
    entries: usize,
    bytes: usize,
}

/// Running totals, for metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PromptCacheStats {
    pub hits: u64,
    pub misses: u64,
    /// Prompt bytes whose IDs were copied instead of encoded.
    pub hit_bytes: u64,
    pub entries: u64,
    pub bytes: u64,
    pub max_bytes: u64,
}

/// The start of a prompt, scanned for its key.
struct Head {
    key: u64,
    /// Cut ends found, ascending, up to `scanned`.
    cuts: Vec<usize>,
    /// Where the scan stopped: the last cut's end, or the end of the text.
    scanned: usize,
}

/// See the module documentation.
pub struct PromptCache {
    /// Every added token with `normalized: false`, leftmost-longest, as `tokenizers` has it.
    automaton: AhoCorasick,
    /// By automaton pattern: whether a match of it is a cut.
    is_cut: Vec<bool>,
    /// Bytes of the longest pattern.
    window: usize,
    max_bytes: usize,
    state: Mutex<State>,
    /// Keys seen on a miss, one per slot (a doorkeeper): a one-off prompt is not stored,
    /// which would cost copying it and its IDs; the second turn of a chat is, and the third
    /// reuses it.
    seen: Box<[AtomicU64]>,
    hits: AtomicU64,
    misses: AtomicU64,
    hit_bytes: AtomicU64,
}

impl std::fmt::Debug for PromptCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptCache")
            .field("window", &self.window)
            .field("max_bytes", &self.max_bytes)
            .finish()
    }
}

impl PromptCache {
    /// A cache for a tokenizer with these added tokens, or why there cannot be one.
    pub fn new(
        added: &[AddedTokenRules],
        encode_special_tokens: bool,
        max_bytes: usize,
    ) -> Result<PromptCache, String> {
        if encode_special_tokens {
            return Err("the tokenizer splits special tokens (encode_special_tokens)".into());
        }
        let any_single_word = added.iter().any(|t| t.single_word);
        // One pattern per distinct content; a content is a cut only if every token spelled so
        // qualifies.
        let mut patterns: Vec<&str> = Vec::new();
        let mut is_cut: Vec<bool> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for t in added
            .iter()
            .filter(|t| !t.normalized && !t.content.is_empty())
        {
            let cut = is_cut_token(t, any_single_word);
            match index.get(t.content.as_str()) {
                Some(&i) => is_cut[i] &= cut,
                None => {
                    index.insert(&t.content, patterns.len());
                    patterns.push(&t.content);
                    is_cut.push(cut);
                }
            }
        }
        if !is_cut.iter().any(|&c| c) {
            return Err("no added token marks a point where tokenization restarts".into());
        }
        let window = patterns.iter().map(|p| p.len()).max().unwrap_or(0);
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .map_err(|e| e.to_string())?;
        Ok(PromptCache {
            automaton,
            is_cut,
            window,
            max_bytes,
            state: Mutex::new(State::default()),
            seen: (0..SEEN_SLOTS).map(|_| AtomicU64::new(0)).collect(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            hit_bytes: AtomicU64::new(0),
        })
    }

    /// Encodes `text` as `encode` would in one call, reusing the IDs of a cached prompt that
    /// shares a prefix with it. `encode(piece, after_reuse, out)` appends the IDs of `piece`,
    /// encoded without adding special tokens, to `out`. `after_reuse` is set when the piece
    /// follows a reused prefix, so is text no cached prompt had there (a cache would only
    /// store it); it then holds where the added tokens are in the piece (byte ranges, in
    /// order, leftmost-longest as `tokenizers` finds them), from this cache's own scan, so
    /// the encoder need not scan the piece again.
    ///
    /// `shared`, when it is `text` itself, is kept as the entry instead of a copy: a chat
    /// turn's prompt is ~25 KB, written again into fresh memory each turn otherwise. The IDs
    /// returned are shared with the entry the same way.
    pub fn encode<E>(
        &self,
        text: &str,
        shared: Option<&Arc<String>>,
        mut encode: impl FnMut(&str, Option<&[(usize, usize)]>, &mut Vec<u32>) -> Result<(), E>,
    ) -> Result<Arc<Vec<u32>>, E> {
        let mut ids = Vec::new();
        if text.len() < MIN_TEXT || text.len() > u32::MAX as usize {
            encode(text, None, &mut ids)?;
            return Ok(Arc::new(ids));
        }
        let head = self.key(text);
        let base = self.best_match(head.key, text);
        // Where encoding starts, the cuts already known after it, and where the scan for
        // further cuts resumes (a match end: resuming there continues the same scan).
        let (mut ids, mut cuts, start, known, resume) = match &base {
            Some((entry, cut_count, _)) => {
                let cut = entry.cuts[cut_count - 1];
                self.hits.fetch_add(1, Ordering::Relaxed);
                self.hit_bytes
                    .fetch_add(u64::from(cut.byte), Ordering::Relaxed);
                // Room for the new text's IDs at up to one per 3 bytes (English runs ~4), so
                // the vector rarely grows: the entry keeps it, counted at its capacity.
                ids.reserve(cut.ids as usize + (text.len() - cut.byte as usize) / 3 + 64);
                ids.extend_from_slice(&entry.ids[..cut.ids as usize]);
                let start = cut.byte as usize;
                (
                    ids,
                    entry.cuts[..*cut_count].to_vec(),
                    start,
                    &[][..],
                    start,
                )
            }
            None => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                let slot = &self.seen[(head.key % SEEN_SLOTS as u64) as usize];
                if slot.swap(head.key, Ordering::Relaxed) != head.key {
                    encode(text, None, &mut ids)?;
                    return Ok(Arc::new(ids));
                }
                (ids, Vec::new(), 0, &head.cuts[..], head.scanned)
            }
        };
        let hit = base.is_some();
        let mut piece = start;
        for &end in known {
            if end - piece >= MIN_PIECE {
                encode(&text[piece..end], None, &mut ids)?;
                cuts.push(Cut {
                    byte: end as u32,
                    ids: ids.len() as u32,
                });
                piece = end;
            }
        }
        // The added tokens found in the current piece, relative to its start, for the encoder
        // after a hit (the scan then starts where the piece does, so this is all of them).
        let mut inside: Vec<(usize, usize)> = Vec::new();
        for m in self.automaton.find_iter(&text[resume..]) {
            let end = resume + m.end();
            if hit {
                inside.push((resume + m.start() - piece, end - piece));
            }
            if self.is_cut[m.pattern().as_usize()] && end - piece >= MIN_PIECE {
                encode(&text[piece..end], hit.then_some(&inside[..]), &mut ids)?;
                cuts.push(Cut {
                    byte: end as u32,
                    ids: ids.len() as u32,
                });
                piece = end;
                inside.clear();
            }
        }
        if piece < text.len() {
            encode(&text[piece..], hit.then_some(&inside[..]), &mut ids)?;
        }
        let ids = Arc::new(ids);
        if ids.len() <= u32::MAX as usize {
            let entry = Entry {
                text: shared
                    .filter(|s| std::ptr::eq(s.as_str(), text))
                    .cloned()
                    .unwrap_or_else(|| Arc::new(text.to_owned())),
                ids: ids.clone(),
                cuts: cuts.into_boxed_slice(),
            };
            self.insert(head.key, entry, base.map(|(e, _, shared)| (e, shared)));
        }
        Ok(ids)
    }

    pub fn stats(&self) -> PromptCacheStats {
        let st = self.lock();
        PromptCacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            hit_bytes: self.hit_bytes.load(Ordering::Relaxed),
            entries: st.entries as u64,
            bytes: st.bytes as u64,
            max_bytes: self.max_bytes as u64,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent across a panic in another thread (no user code runs
        // under the lock), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hash of the part of the prompt every later turn repeats (see [`KEY_CUTS`]).
    fn key(&self, text: &str) -> Head {
        let mut cuts = Vec::new();
        let mut limit = KEY_MAX_BYTES.min(text.len());
        while !text.is_char_boundary(limit) {
            limit -= 1;
        }
        for m in self.automaton.find_iter(text) {
            if m.end() > limit {
                // Not enough cuts early on: the key is the first `limit` bytes, and a later
                // scan resumes at the last cut found (a match end), or the start.
                let scanned = cuts.last().copied().unwrap_or(0);
                return Head {
                    key: xxhash_rust::xxh3::xxh3_64(&text.as_bytes()[..limit]),
                    cuts,
                    scanned,
                };
            }
            if self.is_cut[m.pattern().as_usize()] {
                cuts.push(m.end());
                if cuts.len() >= KEY_CUTS && m.end() >= KEY_BYTES {
                    return Head {
                        key: xxhash_rust::xxh3::xxh3_64(&text.as_bytes()[..m.end()]),
                        cuts,
                        scanned: m.end(),
                    };
                }
            }
        }
        // Scanned to the end without enough cuts: the key is still the first `limit` bytes,
        // so that the next turn, which has more text after them, finds this one.
        Head {
            key: xxhash_rust::xxh3::xxh3_64(&text.as_bytes()[..limit]),
            cuts,
            scanned: text.len(),
        }
    }

    /// The cached prompt under `key` whose cuts cover most of `text`, with how many of its
    /// cuts apply to `text` and how many bytes the two share.
    fn best_match(&self, key: u64, text: &str) -> Option<(Arc<Entry>, usize, usize)> {
        let candidates: Vec<Arc<Entry>> = self.lock().buckets.get(&key)?.clone();
        candidates
            .into_iter()
            .filter_map(|e| {
                let shared = common_prefix(e.text.as_bytes(), text.as_bytes());
                let n = e
                    .cuts
                    .partition_point(|c| c.byte as usize + self.window <= shared);
                (n > 0).then_some((e, n, shared))
            })
            .max_by_key(|(e, n, _)| e.cuts[n - 1].byte)
    }

    /// Stores `entry`; it replaces `base` (the prompt it extended, and the bytes they share)
    /// when it shares at least half of it, as the next turn of a chat does.
    fn insert(&self, key: u64, entry: Entry, base: Option<(Arc<Entry>, usize)>) {
        let size = entry.size();
        if size > self.max_bytes {
            return;
        }
        let entry = Arc::new(entry);
        let mut st = self.lock();
        let bucket = st.buckets.entry(key).or_default();
        let replaced = base
            .filter(|(b, shared)| 2 * shared >= b.text.len())
            .and_then(|(b, _)| bucket.iter().position(|e| Arc::ptr_eq(e, &b)));
        let removed = match replaced {
            Some(i) => Some(std::mem::replace(&mut bucket[i], entry.clone())),
            None => {
                let oldest = (bucket.len() >= BUCKET).then(|| bucket.remove(0));
                bucket.push(entry.clone());
                oldest
            }
        };
        st.entries += 1;
        st.bytes += size;
        if let Some(old) = removed {
            st.entries -= 1;
            st.bytes -= old.size();
        }
        st.order.push_back((key, Arc::downgrade(&entry)));
        while st.bytes > self.max_bytes {
            let Some((k, weak)) = st.order.pop_front() else {
                break;
            };
            let Some(e) = weak.upgrade() else { continue };
            remove(&mut st, k, &e);
        }
        // Drop queue slots of replaced entries once they outnumber the live ones.
        if st.order.len() > 2 * st.entries + 64 {
            st.order.retain(|(_, w)| w.strong_count() > 0);
        }
    }
}

/// Removes `e` from its bucket if it is still there.
fn remove(st: &mut State, key: u64, e: &Arc<Entry>) {
    let Some(bucket) = st.buckets.get_mut(&key) else {
        return;
    };
    if let Some(i) = bucket.iter().position(|x| Arc::ptr_eq(x, e)) {
        bucket.remove(i);
        st.entries -= 1;
        st.bytes -= e.size();
        if bucket.is_empty() {
            st.buckets.remove(&key);
        }
    }
}

fn is_cut_token(t: &AddedTokenRules, any_single_word: bool) -> bool {
    let (Some(first), Some(last)) = (t.content.chars().next(), t.content.chars().last()) else {
        return false;
    };
    !(t.single_word || t.lstrip || t.rstrip || t.normalized || first.is_whitespace())
        && (!any_single_word || (last.is_ascii() && !last.is_ascii_alphanumeric() && last != '_'))
}

/// Length of the longest common prefix: `memcmp` over 4 KiB blocks, then 64-byte blocks
/// inside the first block that differs (one call per 64 bytes would cost more than the
/// comparison), then bytes.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    for block in [4096, 64] {
        while i + block <= n && a[i..i + block] == b[i..i + block] {
            i += block;
        }
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests;
