//! Fast JSON output for render responses: token-ID arrays (the bulk of every text render)
//! and large strings (the base64 tensors of image renders).
//!
//! A 10k-token render answers with ~60 KB of decimal integers. Through serde_json each ID
//! costs a bounds-checked write of its digits plus one of its comma (itoa + `Vec` growth):
//! measured at ~20% of a warm turn-20 render's server CPU. Here every ID below 2^18 (all
//! vocabularies we serve; larger IDs take the itoa path) is one 8-byte copy from a table of
//! pre-formatted `digits,` strings, into a buffer sized up front. Output is byte-identical
//! to `serde_json::to_writer(&ids)` (tested below).

use std::sync::OnceLock;

/// IDs below this have their text in the table (2^18 entries × 8 bytes = 2 MiB).
const TABLE_IDS: usize = 1 << 18;

/// Entry `i`: the ASCII digits of `i` and a comma in the low bytes, the count of those
/// bytes (≤ 7) in the top byte.
fn table() -> &'static [u64] {
    static TABLE: OnceLock<Vec<u64>> = OnceLock::new();
    TABLE.get_or_init(|| (0..TABLE_IDS as u32).map(pack).collect())
}

/// `digits,` of an ID below 10^6 packed little-endian, with its length in the top byte.
fn pack(id: u32) -> u64 {
    let mut buf = itoa::Buffer::new();
    let s = buf.format(id).as_bytes();
    let mut bytes = [0u8; 8];
    let n = s.len().min(6);
    bytes[..n].copy_from_slice(&s[..n]);
    bytes[n] = b',';
    bytes[7] = n as u8 + 1;
    u64::from_le_bytes(bytes)
}

/// Builds the table now rather than on the first response (a few ms, once per process).
pub fn warm() {
    let _ = table();
}

/// Appends `ids` as a JSON array (`[1,2,3]`, no spaces, as serde_json writes it).
pub fn write_u32_array(out: &mut Vec<u8>, ids: &[u32]) {
    let bits = or_all(ids);
    match <&[u64; TABLE_IDS]>::try_from(table()) {
        Ok(table) if (bits as usize) < TABLE_IDS => {
            // In range by the check above; the mask lets the compiler drop the bounds check.
            write_packed(out, ids, |id| table[id as usize & (TABLE_IDS - 1)]);
        }
        _ => write_large(out, ids),
    }
}

/// The OR of all `ids`: below 2^k, every ID is. Eight lanes at a time, which the compiler
/// turns into vector ORs on baseline x86-64; a plain `fold` stayed one ID per instruction, and
/// a `max` (no packed unsigned max before SSE4.1) or an early-exit `any` too, which cost a
/// quarter of `write_u32_array`'s time in a server profile.
fn or_all(ids: &[u32]) -> u32 {
    let mut lanes = [0u32; 8];
    let mut chunks = ids.chunks_exact(8);
    for chunk in &mut chunks {
        for (lane, id) in lanes.iter_mut().zip(chunk) {
            *lane |= id;
        }
    }
    lanes
        .iter()
        .chain(chunks.remainder())
        .fold(0, |a, &b| a | b)
}

/// [`write_u32_array`] for IDs beyond the table (vocabularies over 2^18 tokens).
fn write_large(out: &mut Vec<u8>, ids: &[u32]) {
    if ids.iter().any(|&id| id >= 1_000_000) {
        // An ID of 7+ digits (no vocabulary has one): the plain path.
        out.push(b'[');
        for (i, id) in ids.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(itoa::Buffer::new().format(*id).as_bytes());
        }
        out.push(b']');
        return;
    }
    let table = table();
    write_packed(out, ids, |id| {
        table.get(id as usize).copied().unwrap_or_else(|| pack(id))
    });
}

/// Writes `[`, each ID's packed `digits,` (see [`pack`]) and `]`, for IDs below 10^6.
fn write_packed(out: &mut Vec<u8>, ids: &[u32], packed: impl Fn(u32) -> u64) {
    out.push(b'[');
    if ids.is_empty() {
        out.push(b']');
        return;
    }
    let start = out.len();
    // Every ID is at most 6 digits + comma, written as one 8-byte store; the slack byte of
    // each store is overwritten by the next one or cut by the truncate below.
    out.resize(start + ids.len() * 7 + 1, 0);
    let buf = &mut out[start..];
    let dst = buf.as_mut_ptr();
    let mut pos = 0;
    for &id in ids {
        let v = packed(id);
        // SAFETY: `pos` grows by at most 7 per ID (the length byte is masked), so before the
        // i-th of n IDs `pos + 8 <= 7 * i + 8 <= 7 * n + 1 == buf.len()`. The unchecked store
        // takes a fifth off this loop (`token_ids_json/fast_json`: 8.1 → 6.4 µs for 10,140
        // IDs); the bounds check of `buf[pos..pos + 8]` was two compares and branches per ID.
        unsafe { std::ptr::write_unaligned(dst.add(pos).cast::<u64>(), v.to_le()) };
        pos += ((v >> 56) & 7) as usize;
    }
    debug_assert!(pos < buf.len());
    // `pos` is past the last comma: replace it with the closing bracket.
    out.truncate(start + pos);
    if let Some(last) = out.last_mut() {
        *last = b']';
    }
}

/// Strings at least this long are checked for characters that need escaping in one
/// vectorizable pass and, when none do (base64 always), copied as they are. serde_json
/// escapes byte by byte: ~20% of an image render's server CPU for its ~84 MB of base64.
const LARGE_STRING: usize = 1024;

fn needs_escape(s: &str) -> bool {
    s.as_bytes().chunks(64).any(|chunk| {
        chunk
            .iter()
            .fold(false, |m, &b| m | (b < 0x20) | (b == b'"') | (b == b'\\'))
    })
}

/// Appends `s` as a JSON string, byte for byte what `serde_json::to_writer` writes.
fn write_str(out: &mut Vec<u8>, s: &str) -> serde_json::Result<()> {
    if s.len() >= LARGE_STRING && !needs_escape(s) {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
        Ok(())
    } else {
        serde_json::to_writer(out, s)
    }
}

/// JSON output as a list of buffers: a large string taken from an owned value becomes its
/// own buffer instead of being copied into one contiguous output. An image response's
/// base64 tensors are tens of MB; copying them into the body cost a fresh allocation of
/// that size (page faults) and a memmove per request.
#[derive(Debug, Default)]
pub struct JsonChunks {
    done: Vec<bytes::Bytes>,
    /// The buffer being written.
    pub cur: Vec<u8>,
}

/// Strings at least this long are moved into their own buffer by [`write_value_owned`].
const OWNED_STRING: usize = 64 * 1024;

impl JsonChunks {
    pub fn with_capacity(n: usize) -> JsonChunks {
        JsonChunks {
            done: Vec::new(),
            cur: Vec::with_capacity(n),
        }
    }

    fn push_owned(&mut self, b: Vec<u8>) {
        if !self.cur.is_empty() {
            self.done.push(std::mem::take(&mut self.cur).into());
        }
        self.done.push(b.into());
    }

    /// The buffers in order (empty ones left out).
    pub fn finish(mut self) -> Vec<bytes::Bytes> {
        if !self.cur.is_empty() {
            self.done.push(self.cur.into());
        }
        self.done
    }
}

/// Appends `v` as compact JSON, byte for byte what `serde_json::to_writer` writes; large
/// strings that need no escaping are moved into `out` as their own buffers rather than
/// copied.
pub fn write_value_owned(out: &mut JsonChunks, v: serde_json::Value) -> serde_json::Result<()> {
    use serde_json::Value;
    match v {
        Value::String(s) if s.len() >= OWNED_STRING && !needs_escape(&s) => {
            out.cur.push(b'"');
            out.push_owned(s.into_bytes());
            out.cur.push(b'"');
        }
        Value::String(s) => write_str(&mut out.cur, &s)?,
        Value::Array(items) => {
            out.cur.push(b'[');
            for (i, item) in items.into_iter().enumerate() {
                if i > 0 {
                    out.cur.push(b',');
                }
                write_value_owned(out, item)?;
            }
            out.cur.push(b']');
        }
        Value::Object(map) => {
            out.cur.push(b'{');
            for (i, (k, item)) in map.into_iter().enumerate() {
                if i > 0 {
                    out.cur.push(b',');
                }
                serde_json::to_writer(&mut out.cur, &k)?;
                out.cur.push(b':');
                write_value_owned(out, item)?;
            }
            out.cur.push(b'}');
        }
        other => serde_json::to_writer(&mut out.cur, &other)?,
    }
    Ok(())
}

/// Bytes `v` takes as JSON, near enough to allocate once (strings dominate).
pub fn size_hint(v: &serde_json::Value) -> usize {
    use serde_json::Value;
    match v {
        Value::String(s) => s.len() + 2,
        Value::Array(items) => 2 + items.iter().map(|i| size_hint(i) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, i)| k.len() + 4 + size_hint(i))
                .sum::<usize>()
        }
        _ => 24,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_equal_serde_json() {
        let long_b64 = "QUJD".repeat(1000);
        let long_escaped = format!("{}\"quote\"\n\u{1}", "x".repeat(2000));
        let v = serde_json::json!({
            "a": [1, -2.5, null, true, "short \" escaped"],
            "mm": {"image": [long_b64, long_escaped, ""]},
            "nested": {"é": {"k": [{}, []]}},
        });
        let mut out = JsonChunks::default();
        assert!(write_value_owned(&mut out, v.clone()).is_ok());
        let want = serde_json::to_vec(&v).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&out.finish().concat()),
            String::from_utf8_lossy(&want)
        );
        assert!(size_hint(&v) >= want.len() * 9 / 10);
        let huge =
            serde_json::json!({"data": ["QUJD".repeat(40_000), "x\"".repeat(40_000)], "n": 1});
        let mut chunks = JsonChunks::default();
        assert!(write_value_owned(&mut chunks, huge.clone()).is_ok());
        let parts = chunks.finish();
        assert_eq!(parts.len(), 3); // `{"data":["`, the moved string, the rest
        assert_eq!(
            parts.concat(),
            serde_json::to_vec(&huge).unwrap_or_default()
        );
    }

    fn check(ids: &[u32]) {
        let mut out = b"x".to_vec();
        write_u32_array(&mut out, ids);
        let want = serde_json::to_vec(ids).unwrap_or_default();
        assert_eq!(
            std::str::from_utf8(&out[1..]),
            std::str::from_utf8(&want),
            "{ids:?}"
        );
    }

    #[test]
    fn equals_serde_json() {
        check(&[]);
        check(&[0]);
        check(&[9, 10, 99, 100, 999_999]);
        check(&[262_143, 262_144, 999_999, 151_643, 1]);
        check(&[1_000_000]);
        check(&[5, u32::MAX, 7]);
        let all: Vec<u32> = (0..300_000).collect();
        check(&all);
        let mut x = 12345u32;
        let random: Vec<u32> = (0..10_000)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                x % 1_000_000
            })
            .collect();
        check(&random);
        // Short arrays of every length mixing the table's range, 6-digit IDs past it and
        // 7+ digit IDs: each path, and the unchecked stores at the ends of the buffer.
        for n in 0..200 {
            for range in [10, 262_144, 1_000_000, u32::MAX] {
                let ids: Vec<u32> = (0..n)
                    .map(|_| {
                        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                        x % range
                    })
                    .collect();
                check(&ids);
            }
        }
    }
}
