//! The bytes CPython's `pickle.dumps(obj, protocol=5)` writes for vLLM's block-hash inputs.
//!
//! vLLM's default `--prefix-caching-hash-algo sha256` hashes `pickle.dumps((parent_hash,
//! tuple(block_token_ids), extra_keys), protocol=pickle.HIGHEST_PROTOCOL)`
//! (`vllm/utils/hashing.py::sha256`). No pickle crate reproduces CPython's C pickler byte
//! for byte (its memo, its framing), so this writes the few opcodes those values use:
//! `PROTO 5`, one `FRAME`, `SHORT_BINBYTES`, `SHORT_BINUNICODE`/`BINUNICODE`,
//! `BININT1`/`BININT2`/`BININT`/`LONG1`, `NONE`, `EMPTY_TUPLE`/`TUPLE1..3`/`MARK…TUPLE`,
//! `MEMOIZE` after every str, bytes and non-empty tuple, and `BINGET`/`LONG_BINGET` when the
//! same Python object is pickled twice. vLLM's tag strings (`"mm"`, `"lora"`,
//! `"cache_salt"`) are interned literals, so a second `"mm"` in one block is a `BINGET`
//! (see shared/goldens/hashes: `mm/vl_two_images_one_message/bs64/sha256`).

use super::extra::ExtraKey;

/// Payloads past CPython's 64 KiB frame target would be split into several frames; vLLM's
/// blocks are far smaller, and larger ones are rejected before pickling.
pub const MAX_FRAME: usize = 64 * 1024;

/// A pickler with CPython's memo for interned strings.
struct Pickler {
    out: Vec<u8>,
    memo_len: u32,
    interned: Vec<(&'static str, u32)>,
}

impl Pickler {
    fn memoize(&mut self) {
        self.out.push(0x94);
        self.memo_len += 1;
    }

    fn int(&mut self, v: i64) {
        if (0..=0xff).contains(&v) {
            self.out.push(b'K');
            self.out.push(v as u8);
        } else if (0..=0xffff).contains(&v) {
            self.out.push(b'M');
            self.out.extend_from_slice(&(v as u16).to_le_bytes());
        } else if (i32::MIN as i64..=i32::MAX as i64).contains(&v) {
            self.out.push(b'J');
            self.out.extend_from_slice(&(v as i32).to_le_bytes());
        } else {
            // LONG1: the shortest little-endian two's complement.
            let bytes = v.to_le_bytes();
            let mut n = 8;
            while n > 1 {
                let (last, prev) = (bytes[n - 1], bytes[n - 2]);
                if (last == 0 && prev & 0x80 == 0) || (last == 0xff && prev & 0x80 != 0) {
                    n -= 1;
                } else {
                    break;
                }
            }
            self.out.push(0x8a);
            self.out.push(n as u8);
            self.out.extend_from_slice(&bytes[..n]);
        }
    }

    fn str(&mut self, s: &str) {
        let b = s.as_bytes();
        if b.len() < 256 {
            self.out.push(0x8c);
            self.out.push(b.len() as u8);
        } else {
            self.out.push(b'X');
            self.out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        }
        self.out.extend_from_slice(b);
        self.memoize();
    }

    /// An interned literal: pickled once, then fetched from the memo.
    fn literal(&mut self, s: &'static str) {
        if let Some(&(_, idx)) = self.interned.iter().find(|(k, _)| *k == s) {
            if idx < 256 {
                self.out.push(b'h');
                self.out.push(idx as u8);
            } else {
                self.out.push(b'j');
                self.out.extend_from_slice(&idx.to_le_bytes());
            }
            return;
        }
        let idx = self.memo_len;
        self.str(s);
        self.interned.push((s, idx));
    }

    fn bytes(&mut self, b: &[u8]) {
        // Parent hashes are 32 bytes; BINBYTES covers anything longer.
        if b.len() < 256 {
            self.out.push(b'C');
            self.out.push(b.len() as u8);
        } else {
            self.out.push(b'B');
            self.out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        }
        self.out.extend_from_slice(b);
        self.memoize();
    }

    /// Writes a tuple whose `n` items `items` writes.
    fn tuple(&mut self, n: usize, items: impl FnOnce(&mut Self)) {
        match n {
            0 => {
                self.out.push(b')');
                return;
            }
            1..=3 => {
                items(self);
                self.out.push([0x85, 0x86, 0x87][n - 1]);
            }
            _ => {
                self.out.push(b'(');
                items(self);
                self.out.push(b't');
            }
        }
        self.memoize();
    }

    fn none(&mut self) {
        self.out.push(b'N');
    }

    /// Wraps the body in `PROTO 5` + `FRAME` + `STOP`, as `pickle.dumps` does.
    fn finish(self) -> Vec<u8> {
        let mut body = self.out;
        body.push(b'.');
        let mut out = Vec::with_capacity(body.len() + 11);
        out.extend_from_slice(&[0x80, 5]);
        if body.len() >= 4 {
            out.push(0x95);
            out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        }
        out.extend_from_slice(&body);
        out
    }
}

fn pickler() -> Pickler {
    Pickler {
        out: Vec::with_capacity(256),
        memo_len: 0,
        interned: Vec::new(),
    }
}

/// `pickle.dumps(s, protocol=5)` of a str (vLLM's `NONE_HASH` seed).
pub fn dumps_str(s: &str) -> Vec<u8> {
    let mut p = pickler();
    p.str(s);
    p.finish()
}

/// `pickle.dumps((parent, tuple(tokens), extra_keys_or_None), protocol=5)`.
pub fn dumps_block(parent: &[u8], tokens: &[u32], extra: Option<&[ExtraKey]>) -> Vec<u8> {
    let mut p = pickler();
    p.tuple(3, |p| {
        p.bytes(parent);
        p.tuple(tokens.len(), |p| {
            tokens.iter().for_each(|t| p.int(i64::from(*t)))
        });
        match extra {
            None => p.none(),
            Some(keys) => p.tuple(keys.len(), |p| {
                for key in keys {
                    match key {
                        ExtraKey::Lora { name, path } => p.tuple(3, |p| {
                            p.literal("lora");
                            p.str(name);
                            match path {
                                Some(path) => p.str(path),
                                None => p.none(),
                            }
                        }),
                        ExtraKey::Mm { identifier, offset } => p.tuple(3, |p| {
                            p.literal("mm");
                            p.str(identifier);
                            p.int(*offset);
                        }),
                        ExtraKey::CacheSalt(salt) => p.tuple(2, |p| {
                            p.literal("cache_salt");
                            p.str(salt);
                        }),
                    }
                }
            }),
        }
    });
    p.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_matches_cpython() {
        // python3 -c "import pickle; print(pickle.dumps('42', protocol=5).hex())"
        assert_eq!(
            dumps_str("42"),
            [0x80, 5, 0x95, 6, 0, 0, 0, 0, 0, 0, 0, 0x8c, 2, b'4', b'2', 0x94, b'.']
        );
    }
}
