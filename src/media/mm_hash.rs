//! vLLM 0.33's multimodal content hash for an image sent as a URL
//! (`MultiModalHasher.hash_kwargs(model_id=..., image=MediaWithBytes)`), which hashes the
//! original file bytes, not the pixels:
//!
//! ```text
//! stream = key("image") 0x03 key("image") <value> key("model_id") 0x03 key(<model id>)
//! value  = 0x03 bytes(file)                                   when the mode was not converted
//!        | 0x02 u64(2) key("io_config") 0x02 u64(2)
//!              key("image_mode") 0x03 bytes("RGB")
//!              key("rgba_background_color") 0x01 u64(3) (0x03 bytes(i64le(255))) x3
//!          key("data") 0x03 bytes(file)                       when it was
//! key(s) = bytes(s) = u64le(len) || s
//! ```
//! digested with blake3 (vLLM's default `mm_hasher_algorithm`) or sha256
//! (shared/goldens/images/mm_hashes.jsonl has `digest_input_hex` for both shapes).
//!
//! Per-request processor kwargs (`min_pixels`, `max_pixels`; vLLM's `hash_factors`) come
//! between the image and the model id, keys sorted as `hash_kwargs` sorts them:
//!
//! ```text
//! key("mm_processor_kwargs") 0x02 u64(n) (key(name) 0x03 bytes(i64le(value)))*n
//! ```
//! with the names in the request's order (a Python dict's order), checked against vLLM's
//! own server in fixtures/goldens/render_mm/kwargs_data.jsonl.

use sha2::Digest;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashAlgo {
    Blake3,
    Sha256,
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u64).to_le_bytes());
    out.extend_from_slice(b);
}

/// The exact stream vLLM digests; `kwargs` are the request's processor kwargs, in order.
pub fn digest_input(
    file: &[u8],
    converted: bool,
    model_id: &str,
    kwargs: &[(String, i64)],
) -> Vec<u8> {
    let mut s = Vec::with_capacity(file.len() + 256);
    bytes(&mut s, b"image");
    s.push(0x03);
    bytes(&mut s, b"image");
    if converted {
        s.push(0x02);
        s.extend_from_slice(&2u64.to_le_bytes());
        bytes(&mut s, b"io_config");
        s.push(0x02);
        s.extend_from_slice(&2u64.to_le_bytes());
        bytes(&mut s, b"image_mode");
        s.push(0x03);
        bytes(&mut s, b"RGB");
        bytes(&mut s, b"rgba_background_color");
        s.push(0x01);
        s.extend_from_slice(&3u64.to_le_bytes());
        for _ in 0..3 {
            s.push(0x03);
            bytes(&mut s, &255i64.to_le_bytes());
        }
        bytes(&mut s, b"data");
    }
    s.push(0x03);
    bytes(&mut s, file);
    if !kwargs.is_empty() {
        bytes(&mut s, b"mm_processor_kwargs");
        s.push(0x02);
        s.extend_from_slice(&(kwargs.len() as u64).to_le_bytes());
        for (name, value) in kwargs {
            bytes(&mut s, name.as_bytes());
            s.push(0x03);
            bytes(&mut s, &value.to_le_bytes());
        }
    }
    bytes(&mut s, b"model_id");
    s.push(0x03);
    bytes(&mut s, model_id.as_bytes());
    s
}

/// The hex mm hash of an image file as vLLM computes it for `model_id` (the `--model` value)
/// and the request's processor `kwargs`.
pub fn mm_hash_image_bytes(
    file: &[u8],
    converted: bool,
    model_id: &str,
    kwargs: &[(String, i64)],
    algo: HashAlgo,
) -> String {
    let input = digest_input(file, converted, model_id, kwargs);
    let digest: Vec<u8> = match algo {
        HashAlgo::Blake3 => blake3::hash(&input).as_bytes().to_vec(),
        HashAlgo::Sha256 => sha2::Sha256::digest(&input).to_vec(),
    };
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
