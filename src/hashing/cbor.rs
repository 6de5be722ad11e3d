//! Canonical CBOR (RFC 8949 §4.2.1 shortest heads) for the few shapes block hashing encodes:
//! vLLM's `cbor2.dumps((parent, tuple(tokens), extra_keys), canonical=True)` and llm-d's
//! fxamacker `CanonicalEncOptions()` payloads. Written out because these payloads are tiny
//! and their bytes must match exactly: arrays, uints, negative ints, byte and text strings,
//! null, and single-key maps (no map ordering is ever needed).

/// An append-only canonical CBOR writer.
#[derive(Default)]
pub struct Cbor {
    pub out: Vec<u8>,
}

impl Cbor {
    fn head(&mut self, major: u8, v: u64) {
        let m = major << 5;
        if v < 24 {
            self.out.push(m | v as u8);
        } else if v <= 0xff {
            self.out.extend_from_slice(&[m | 24, v as u8]);
        } else if v <= 0xffff {
            self.out.push(m | 25);
            self.out.extend_from_slice(&(v as u16).to_be_bytes());
        } else if v <= 0xffff_ffff {
            self.out.push(m | 26);
            self.out.extend_from_slice(&(v as u32).to_be_bytes());
        } else {
            self.out.push(m | 27);
            self.out.extend_from_slice(&v.to_be_bytes());
        }
    }

    pub fn uint(&mut self, v: u64) {
        self.head(0, v);
    }

    pub fn int(&mut self, v: i64) {
        if v >= 0 {
            self.head(0, v as u64);
        } else {
            self.head(1, (-1 - v) as u64);
        }
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.head(2, b.len() as u64);
        self.out.extend_from_slice(b);
    }

    pub fn text(&mut self, s: &str) {
        self.head(3, s.len() as u64);
        self.out.extend_from_slice(s.as_bytes());
    }

    pub fn array(&mut self, len: usize) {
        self.head(4, len as u64);
    }

    pub fn map(&mut self, len: usize) {
        self.head(5, len as u64);
    }

    pub fn null(&mut self) {
        self.out.push(0xf6);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_heads() {
        let mut c = Cbor::default();
        c.uint(23);
        c.uint(24);
        c.uint(256);
        c.uint(151644);
        c.int(-11);
        c.int(-59);
        c.text("42");
        assert_eq!(
            c.out,
            [
                0x17, 0x18, 24, 0x19, 1, 0, 0x1a, 0, 2, 0x50, 0x5c, 0x2a, 0x38, 0x3a, 0x62, b'4',
                b'2'
            ]
        );
    }
}
