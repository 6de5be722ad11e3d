//! vLLM's `features.kwargs_data` and `features.mm_metadata`: one base64 string per image,
//! byte for byte what vLLM 0.33's render server writes for a Qwen2-VL-family model.
//!
//! vLLM encodes each `MultiModalKwargsItem` with its `MsgpackEncoder` (msgspec msgpack,
//! every tensor inline; `vllm/v1/serial_utils.py`, `scale_out/token_in_token_out/
//! mm_serde.py`) and base64s it. For one image:
//!
//! ```text
//! {"pixel_values":   {"data": ["uint8", [rows, cols], Ext(3, <rows*cols bytes>)],
//!                     "field": ["flat", {"keep_on_cpu": false, "slices": [[[0, rows, null]]], "dim": 0}]},
//!  "image_grid_thw": {"data": ["int64", [3], Ext(3, <t, h, w as little-endian i64>)],
//!                     "field": ["batched", {"keep_on_cpu": true}]}}
//! ```
//!
//! `pixel_values` are the resized image's bytes in patch layout, not yet rescaled or
//! normalized (vLLM's model does that on the GPU). `mm_metadata` holds the fields vLLM
//! keeps on the CPU: `image_grid_thw` alone. Ext type 3 is vLLM's `CUSTOM_TYPE_RAW_VIEW`.
//! Tested against `fixtures/goldens/render_mm/kwargs_data.jsonl`, made by vLLM itself
//! (`scripts/gen_kwargs_data_goldens.py`).
//!
//! A hand-written encoder rather than a msgpack crate: the structure is fixed, it needs
//! msgspec's exact choices (smallest int encodings, ext headers), and the only large part
//! is the patch bytes, base64-encoded from their slice.

use super::b64::B64Writer;
use crate::media::ProcessedImage;

/// vLLM's `CUSTOM_TYPE_RAW_VIEW`: a tensor's raw bytes.
const RAW_VIEW: i8 = 3;

/// A msgpack writer with msgspec's encodings for the types used here, base64-encoding as it
/// goes: small items gather in `buf`, a large ext payload is encoded straight from its slice.
struct Msgpack {
    buf: Vec<u8>,
    out: B64Writer,
}

impl Msgpack {
    /// A writer for about `len` bytes of msgpack.
    fn new(len: usize) -> Msgpack {
        Msgpack {
            buf: Vec::with_capacity(256),
            out: B64Writer::with_input_len(len),
        }
    }

    fn map(&mut self, n: u8) {
        debug_assert!(n < 16);
        self.buf.push(0x80 | n);
    }

    fn array(&mut self, n: u8) {
        self.array_len(n as usize);
    }

    /// An array header of any length (fixarray, array16 or array32).
    fn array_len(&mut self, n: usize) {
        if n < 16 {
            self.buf.push(0x90 | n as u8);
        } else if n <= u16::MAX as usize {
            self.buf.push(0xdc);
            self.buf.extend_from_slice(&(n as u16).to_be_bytes());
        } else {
            self.buf.push(0xdd);
            self.buf.extend_from_slice(&(n as u32).to_be_bytes());
        }
    }

    fn str(&mut self, s: &str) {
        let n = s.len();
        if n < 32 {
            self.buf.push(0xa0 | n as u8);
        } else if n <= u8::MAX as usize {
            self.buf.extend_from_slice(&[0xd9, n as u8]);
        } else if n <= u16::MAX as usize {
            self.buf.push(0xda);
            self.buf.extend_from_slice(&(n as u16).to_be_bytes());
        } else {
            self.buf.push(0xdb);
            self.buf.extend_from_slice(&(n as u32).to_be_bytes());
        }
        self.buf.extend_from_slice(s.as_bytes());
    }

    fn uint(&mut self, v: u64) {
        if v < 128 {
            self.buf.push(v as u8);
        } else if v <= u8::MAX as u64 {
            self.buf.extend_from_slice(&[0xcc, v as u8]);
        } else if v <= u16::MAX as u64 {
            self.buf.push(0xcd);
            self.buf.extend_from_slice(&(v as u16).to_be_bytes());
        } else if v <= u32::MAX as u64 {
            self.buf.push(0xce);
            self.buf.extend_from_slice(&(v as u32).to_be_bytes());
        } else {
            self.buf.push(0xcf);
            self.buf.extend_from_slice(&v.to_be_bytes());
        }
    }

    fn bool(&mut self, v: bool) {
        self.buf.push(if v { 0xc3 } else { 0xc2 });
    }

    fn nil(&mut self) {
        self.buf.push(0xc0);
    }

    fn ext(&mut self, ty: i8, data: &[u8]) {
        let n = data.len();
        match n {
            1 => self.buf.push(0xd4),
            2 => self.buf.push(0xd5),
            4 => self.buf.push(0xd6),
            8 => self.buf.push(0xd7),
            16 => self.buf.push(0xd8),
            _ if n <= u8::MAX as usize => self.buf.extend_from_slice(&[0xc7, n as u8]),
            _ if n <= u16::MAX as usize => {
                self.buf.push(0xc8);
                self.buf.extend_from_slice(&(n as u16).to_be_bytes());
            }
            _ => {
                self.buf.push(0xc9);
                self.buf.extend_from_slice(&(n as u32).to_be_bytes());
            }
        }
        self.buf.push(ty as u8);
        if data.len() > 4096 {
            self.out.write(&self.buf);
            self.buf.clear();
            self.out.write(data);
        } else {
            self.buf.extend_from_slice(data);
        }
    }

    /// `"image_grid_thw": {"data": ["int64", [3], Ext], "field": ["batched", {...}]}`.
    fn grid_thw(&mut self, grid: [u32; 3]) {
        self.str("image_grid_thw");
        self.map(2);
        self.str("data");
        self.array(3);
        self.str("int64");
        self.array(1);
        self.uint(3);
        let mut raw = [0u8; 24];
        for (chunk, v) in raw.chunks_exact_mut(8).zip(grid) {
            chunk.copy_from_slice(&(v as i64).to_le_bytes());
        }
        self.ext(RAW_VIEW, &raw);
        self.str("field");
        self.array(2);
        self.str("batched");
        self.map(1);
        self.str("keep_on_cpu");
        self.bool(true);
    }

    fn base64(mut self) -> String {
        self.out.write(&self.buf);
        self.out.finish()
    }
}

/// The image's `kwargs_data` entry (base64 msgpack). `all_rows` holds the patch-row count of
/// every image in the request, in order: vLLM's flat field is shared by the request's items,
/// so each item carries the slices of all of them (`[[[0, r0, null]], [[r0, r0 + r1, null]], ..]`).
pub fn kwargs_data(p: &ProcessedImage, all_rows: &[usize]) -> String {
    let mut w = Msgpack::new(p.patches.len() + 256);
    w.map(2);
    w.str("pixel_values");
    w.map(2);
    w.str("data");
    w.array(3);
    w.str("uint8");
    w.array(2);
    w.uint(p.rows as u64);
    w.uint(p.cols as u64);
    w.ext(RAW_VIEW, &p.patches);
    w.str("field");
    w.array(2);
    w.str("flat");
    w.map(3);
    w.str("keep_on_cpu");
    w.bool(false);
    w.str("slices");
    // Per image a tuple of one slice, `slice(start, stop, None)` as `[start, stop, step]`.
    w.array_len(all_rows.len());
    let mut start = 0u64;
    for &rows in all_rows {
        w.array(1);
        w.array(3);
        w.uint(start);
        w.uint(start + rows as u64);
        w.nil();
        start += rows as u64;
    }
    w.str("dim");
    w.uint(0);
    w.grid_thw(p.grid_thw);
    w.base64()
}

/// The image's `mm_metadata` entry (base64 msgpack of the CPU-side fields).
pub fn mm_metadata(p: &ProcessedImage) -> String {
    let mut w = Msgpack::new(96);
    w.map(1);
    w.grid_thw(p.grid_thw);
    w.base64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_matches_vllm_for_a_4x4_grid() {
        // vLLM 0.33 on tiny_14x14.png (grid 1x4x4), from the kwargs_data goldens.
        let p = ProcessedImage {
            pixel_values: vec![],
            patches: vec![],
            rows: 16,
            cols: 1176,
            grid_thw: [1, 4, 4],
            resized_hw: (56, 56),
            num_tokens: 4,
        };
        assert_eq!(
            mm_metadata(&p),
            "ga5pbWFnZV9ncmlkX3Rod4KkZGF0YZOlaW50NjSRA8cYAwEAAAAAAAAABAAAAAAAAAAEAAAAAAAAAKVmaWVsZJKnYmF0Y2hlZIGra2VlcF9vbl9jcHXD"
        );
    }
}
