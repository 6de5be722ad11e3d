//! vLLM's prefix-cache block hashes (`vllm/v1/core/kv_cache_utils.py`, 0.33):
//! `NONE_HASH = hash_fn(seed)` and, for each full block,
//! `hash = hash_fn((parent or NONE_HASH, tuple(block_tokens), extra_keys))`.
//! `seed` is `PYTHONHASHSEED`; unset means `"vllm-none-hash"` for the sha256 variants and
//! random bytes for xxhash (so unseeded xxhash is refused as not reproducible).

use super::cbor::Cbor;
use super::extra::{BlockExtraKeys, ExtraInputs, ExtraKey};
use super::pickle;
use super::HashError;
use sha2::{Digest, Sha256};

/// vLLM's `--prefix-caching-hash-algo` choices that are reproducible outside Python.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VllmAlgo {
    /// sha256 over pickle protocol 5 (vLLM's default).
    Sha256,
    /// sha256 over canonical CBOR.
    Sha256Cbor,
    /// xxh3-128 over canonical CBOR.
    XxhashCbor,
}

/// The seed vLLM uses when `PYTHONHASHSEED` is unset (sha256 variants).
pub const UNSET_SEED: &str = "vllm-none-hash";

impl VllmAlgo {
    fn digest(self, payload: &[u8]) -> Vec<u8> {
        match self {
            VllmAlgo::Sha256 | VllmAlgo::Sha256Cbor => Sha256::digest(payload).to_vec(),
            // Python's `xxh3_128_digest` is the canonical (big-endian) form.
            VllmAlgo::XxhashCbor => xxhash_rust::xxh3::xxh3_128(payload).to_be_bytes().to_vec(),
        }
    }

    /// `NONE_HASH` for a seed (`None` = `PYTHONHASHSEED` unset).
    pub fn none_hash(self, seed: Option<&str>) -> Result<Vec<u8>, HashError> {
        let seed = match (seed, self) {
            (Some(s), _) => s,
            (None, VllmAlgo::XxhashCbor) => return Err(HashError::UnseededXxhash),
            (None, _) => UNSET_SEED,
        };
        Ok(match self {
            VllmAlgo::Sha256 => self.digest(&pickle::dumps_str(seed)),
            VllmAlgo::Sha256Cbor | VllmAlgo::XxhashCbor => {
                let mut c = Cbor::default();
                c.text(seed);
                self.digest(&c.out)
            }
        })
    }

    /// The exact bytes hashed for one block.
    pub fn serialize_block(
        self,
        parent: &[u8],
        tokens: &[u32],
        extra: Option<&[ExtraKey]>,
    ) -> Vec<u8> {
        match self {
            VllmAlgo::Sha256 => pickle::dumps_block(parent, tokens, extra),
            VllmAlgo::Sha256Cbor | VllmAlgo::XxhashCbor => {
                let mut c = Cbor::default();
                c.array(3);
                c.bytes(parent);
                c.array(tokens.len());
                tokens.iter().for_each(|t| c.uint(u64::from(*t)));
                match extra {
                    None => c.null(),
                    Some(keys) => {
                        c.array(keys.len());
                        for k in keys {
                            match k {
                                ExtraKey::Lora { name, path } => {
                                    c.array(3);
                                    c.text("lora");
                                    c.text(name);
                                    match path {
                                        Some(p) => c.text(p),
                                        None => c.null(),
                                    }
                                }
                                ExtraKey::Mm { identifier, offset } => {
                                    c.array(3);
                                    c.text("mm");
                                    c.text(identifier);
                                    c.int(*offset);
                                }
                                ExtraKey::CacheSalt(s) => {
                                    c.array(2);
                                    c.text("cache_salt");
                                    c.text(s);
                                }
                            }
                        }
                    }
                }
                c.out
            }
        }
    }
}

/// The digest of every full block of `tokens`.
pub fn block_hashes(
    algo: VllmAlgo,
    seed: Option<&str>,
    tokens: &[u32],
    block_size: usize,
    extra: ExtraInputs<'_>,
) -> Result<Vec<Vec<u8>>, HashError> {
    if algo == VllmAlgo::Sha256 && block_size * 5 + 256 > pickle::MAX_FRAME {
        return Err(HashError::BlockTooLarge(block_size));
    }
    let mut parent = algo.none_hash(seed)?;
    let mut keys = BlockExtraKeys::new(extra);
    let mut out = Vec::with_capacity(tokens.len() / block_size.max(1));
    for (i, block) in tokens.chunks_exact(block_size).enumerate() {
        let start = i * block_size;
        let extra = keys.block(start, start + block_size);
        let h = algo.digest(&algo.serialize_block(&parent, block, extra.as_deref()));
        out.push(h.clone());
        parent = h;
    }
    Ok(out)
}

/// vLLM's KV-event block id: the digest's last 8 bytes read big-endian
/// (`maybe_convert_block_hash`, `VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=1`).
pub fn hash_to_u64(h: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = h.len().min(8);
    b[8 - n..].copy_from_slice(&h[h.len() - n..]);
    u64::from_be_bytes(b)
}
