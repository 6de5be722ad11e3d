//! Token IDs → text, exactly as `tokenizers`' `Tokenizer::decode` gives it.
//!
//! For a byte-level BPE vocabulary (the tokenizer's decoder is `ByteLevel`: Qwen, Llama 3,
//! DeepSeek-V3, gpt-oss), `decode` looks up each ID's token (added tokens first), drops the
//! special ones when asked, maps each token's characters back to bytes through GPT-2's
//! byte-to-character table (a token with a character outside it keeps its UTF-8 bytes), and
//! reads the concatenation as UTF-8, lossily (`ByteLevel::decode_chain`). It allocates a
//! `String` per token: 610 µs for the long_9k prompt's 10,140 IDs, in process.
//!
//! Here every ID's bytes are computed once at load into one table, and a decode is a copy of
//! table slices and one UTF-8 check: 25 µs for the same IDs
//! (`cargo bench --bench render -- decode_long_9k`). The table is used only when the decoder is `ByteLevel`
//! and the table's output equals `decode` on a sample of ID sequences (random IDs, byte
//! tokens that split UTF-8 sequences, added tokens, both `skip_special_tokens` values);
//! otherwise `tokenizers` decodes, and the reason is logged.

use tokenizers::{DecoderWrapper, Tokenizer};

/// How a model decodes; see the module documentation.
#[derive(Debug)]
pub struct TextDecoder {
    table: Option<ByteTable>,
    /// Why the table is off, when it is.
    reason: Option<String>,
}

/// Every ID's bytes, and which IDs `decode` leaves out.
#[derive(Debug)]
struct ByteTable {
    bytes: Vec<u8>,
    /// ID `i`'s bytes are `bytes[ends[i - 1]..ends[i]]` (from 0 for ID 0).
    ends: Vec<u32>,
    flags: Vec<u8>,
}

/// The ID has no token (a gap in the vocabulary): `decode` skips it.
const MISSING: u8 = 1;
/// Its token is a special added token: skipped with `skip_special_tokens`.
const SPECIAL: u8 = 2;

impl TextDecoder {
    /// The table for `reference` when it is exact for it (checked here), else none.
    pub fn new(reference: &Tokenizer) -> TextDecoder {
        let checked = ByteTable::build(reference).and_then(|table| {
            check(&table, reference)?;
            Ok(table)
        });
        match checked {
            Ok(table) => TextDecoder {
                table: Some(table),
                reason: None,
            },
            Err(reason) => TextDecoder {
                table: None,
                reason: Some(reason),
            },
        }
    }

    /// Why decoding goes through `tokenizers`, or `None` when the table is used.
    pub fn off_reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// Whether `id` has a token (`reference.id_to_token(id).is_some()`), without building
    /// the token's string when the table is on.
    pub fn has_token(&self, reference: &Tokenizer, id: u32) -> bool {
        match &self.table {
            Some(table) => table
                .flags
                .get(id as usize)
                .is_some_and(|f| f & MISSING == 0),
            None => reference.id_to_token(id).is_some(),
        }
    }

    /// `reference.decode(ids, skip_special_tokens)`.
    pub fn decode(
        &self,
        reference: &Tokenizer,
        ids: &[u32],
        skip_special_tokens: bool,
    ) -> Result<String, String> {
        match &self.table {
            Some(table) => Ok(table.decode(ids, skip_special_tokens)),
            None => reference
                .decode(ids, skip_special_tokens)
                .map_err(|e| e.to_string()),
        }
    }
}

impl ByteTable {
    fn build(reference: &Tokenizer) -> Result<ByteTable, String> {
        if !matches!(reference.get_decoder(), Some(DecoderWrapper::ByteLevel(_))) {
            return Err("the tokenizer's decoder is not ByteLevel".into());
        }
        let to_byte = char_to_byte();
        let special: std::collections::HashSet<String> = reference
            .get_added_tokens_decoder()
            .into_values()
            .filter(|t| t.special)
            .map(|t| t.content)
            .collect();
        // Past the largest ID of the model's or the added tokens, `decode` skips an ID like a
        // gap. (The vocabulary's size is not enough: its IDs may have gaps.)
        let ids = reference
            .get_vocab(true)
            .into_values()
            .map(|id| id as usize + 1)
            .max()
            .unwrap_or(0);
        let mut table = ByteTable {
            bytes: Vec::new(),
            ends: Vec::with_capacity(ids),
            flags: Vec::with_capacity(ids),
        };
        for id in 0..ids as u32 {
            let mut flags = 0;
            match reference.id_to_token(id) {
                None => flags |= MISSING,
                Some(token) => {
                    if special.contains(&token) {
                        flags |= SPECIAL;
                    }
                    let mapped: Option<Vec<u8>> = token.chars().map(&to_byte).collect();
                    match mapped {
                        Some(bytes) => table.bytes.extend_from_slice(&bytes),
                        None => table.bytes.extend_from_slice(token.as_bytes()),
                    }
                }
            }
            let end = u32::try_from(table.bytes.len())
                .map_err(|_| "the vocabulary's text is over 4 GiB".to_string())?;
            table.ends.push(end);
            table.flags.push(flags);
        }
        Ok(table)
    }

    fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> String {
        let skip = if skip_special_tokens {
            MISSING | SPECIAL
        } else {
            MISSING
        };
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            let i = id as usize;
            let Some(&flags) = self.flags.get(i) else {
                continue;
            };
            if flags & skip != 0 {
                continue;
            }
            let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
            out.extend_from_slice(&self.bytes[start..self.ends[i] as usize]);
        }
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

/// GPT-2's `bytes_to_unicode`, reversed: the byte a character stands for in a byte-level
/// token. Printable Latin-1 bytes stand for themselves; the other 68 are shifted to U+0100
/// and up, in byte order.
fn char_to_byte() -> impl Fn(char) -> Option<u8> {
    let mut map = [0u8; 324];
    let mut known = [false; 324];
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let mut shifted = 256usize;
    for b in 0..=255u8 {
        let c = if printable(b) {
            usize::from(b)
        } else {
            shifted += 1;
            shifted - 1
        };
        map[c] = b;
        known[c] = true;
    }
    move |c: char| {
        let i = c as usize;
        (i < map.len() && known[i]).then(|| map[i])
    }
}

/// Compares the table with `decode` on a seeded sample; the first difference is the error.
fn check(table: &ByteTable, reference: &Tokenizer) -> Result<(), String> {
    let n = table.flags.len() as u32;
    let added: Vec<u32> = {
        let mut ids: Vec<u32> = reference.get_added_tokens_decoder().into_keys().collect();
        ids.sort_unstable();
        ids
    };
    // Tokens of one raw byte (the 256 byte-level characters), to split UTF-8 sequences.
    let bytes: Vec<u32> = (0..n)
        .filter(|&id| {
            let i = id as usize;
            let start = if i == 0 {
                0
            } else {
                table.ends[i - 1] as usize
            };
            table.ends[i] as usize - start == 1
        })
        .collect();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |below: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % below.max(1) as u64) as usize
    };
    let mut samples: Vec<Vec<u32>> = vec![Vec::new(), added.clone(), (0..n.min(512)).collect()];
    for _ in 0..300 {
        let len = 1 + next(40);
        let sample = (0..len)
            .map(|_| match next(4) {
                0 if !added.is_empty() => added[next(added.len())],
                1 if !bytes.is_empty() => bytes[next(bytes.len())],
                // Now and then an ID past the vocabulary, which `decode` skips.
                2 if next(8) == 0 => n + next(1000) as u32,
                _ => next(n as usize) as u32,
            })
            .collect();
        samples.push(sample);
    }
    for ids in &samples {
        for skip in [false, true] {
            let want = reference.decode(ids, skip).map_err(|e| e.to_string())?;
            let got = table.decode(ids, skip);
            if got != want {
                return Err(format!(
                    "the byte table decodes {ids:?} (skip_special_tokens={skip}) as {got:?}, \
                     tokenizers as {want:?}"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A byte-level vocabulary with gaps in its IDs (its size, 3, is not its largest ID + 1)
    /// and an added special token in one of them: the table covers every ID and equals
    /// `decode`.
    #[test]
    fn a_vocabulary_with_gaps() {
        let json = r#"{
            "version": "1.0",
            "added_tokens": [{"id": 5, "content": "<s>", "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": false, "special": true}],
            "normalizer": null,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,
                "trim_offsets": true, "use_regex": true},
            "post_processor": null,
            "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true,
                "use_regex": true},
            "model": {"type": "BPE", "dropout": null, "unk_token": null,
                "continuing_subword_prefix": null, "end_of_word_suffix": null,
                "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                "vocab": {"a": 0, "Ġb": 4, "Ã©": 6}, "merges": []}
        }"#;
        let tok: Tokenizer = json.parse().unwrap_or_else(|e| panic!("{e}"));
        let d = TextDecoder::new(&tok);
        assert_eq!(d.off_reason(), None);
        for id in 0..12 {
            assert_eq!(d.has_token(&tok, id), tok.id_to_token(id).is_some(), "{id}");
        }
        for ids in [vec![0, 4, 6, 5, 2, 11], vec![5, 6, 6], vec![]] {
            for skip in [false, true] {
                assert_eq!(
                    d.decode(&tok, &ids, skip).ok(),
                    tok.decode(&ids, skip).ok(),
                    "{ids:?} {skip}"
                );
            }
        }
        assert_eq!(
            d.decode(&tok, &[0, 4, 6, 9], true).ok().as_deref(),
            Some("a bé")
        );
    }

    #[test]
    fn byte_map_is_gpt2s() {
        let to_byte = char_to_byte();
        assert_eq!(to_byte('!'), Some(b'!'));
        assert_eq!(to_byte('Ġ'), Some(b' ')); // U+0120
        assert_eq!(to_byte('Ċ'), Some(b'\n')); // U+010A
        assert_eq!(to_byte('Ā'), Some(0)); // U+0100
        assert_eq!(to_byte('ÿ'), Some(0xFF));
        assert_eq!(to_byte('\u{AD}'), None); // soft hyphen: shifted, so not itself
        assert_eq!(to_byte('日'), None);
        let all: std::collections::HashSet<u8> = (0..400u32)
            .filter_map(char::from_u32)
            .filter_map(&to_byte)
            .collect();
        assert_eq!(all.len(), 256);
    }
}
