//! llm-d's request block keys (`llm-d-kv-cache` `pkg/kvcache/kvblock/token_processor.go`,
//! fxamacker/cbor canonical encoding, FNV-1a 64):
//! ```text
//! init  = fnv64a(utf8(hash_seed))
//! root  = fnv64a(cbor([init, null, model_name]))
//! key_i = fnv64a(cbor([key_{i-1} or root, [tokens of block i], extra_i]))
//! extra_i = null | [{"Hash": identifier}, ...]   (items overlapping block i, in start order)
//! ```
//! Unlike vLLM, llm-d's mm taint carries no offset. A non-zero `parent_key` replaces `root`.

use super::cbor::Cbor;
use super::extra::MmItem;
use std::hash::Hasher;

fn fnv64a(bytes: &[u8]) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(bytes);
    h.finish()
}

/// The chain root for a hash seed and model (or LoRA) name.
pub fn root_key(hash_seed: &str, model_name: &str) -> u64 {
    let mut c = Cbor::default();
    c.array(3);
    c.uint(fnv64a(hash_seed.as_bytes()));
    c.null();
    c.text(model_name);
    fnv64a(&c.out)
}

/// Keys of every full block; `parent_key` continues a chain (0 = start from the root).
pub fn block_keys(
    hash_seed: &str,
    model_name: &str,
    parent_key: u64,
    tokens: &[u32],
    block_size: usize,
    mm: &[MmItem],
) -> Vec<u64> {
    let mut parent = if parent_key != 0 {
        parent_key
    } else {
        root_key(hash_seed, model_name)
    };
    let mut out = Vec::with_capacity(tokens.len() / block_size.max(1));
    for (i, block) in tokens.chunks_exact(block_size).enumerate() {
        let (start, end) = (i * block_size, (i + 1) * block_size);
        let overlapping: Vec<&MmItem> = mm
            .iter()
            .filter(|m| m.offset < end && m.offset + m.length > start)
            .collect();
        let mut c = Cbor::default();
        c.array(3);
        c.uint(parent);
        c.array(block.len());
        block.iter().for_each(|t| c.uint(u64::from(*t)));
        if overlapping.is_empty() {
            c.null();
        } else {
            c.array(overlapping.len());
            for m in overlapping {
                c.map(1);
                c.text("Hash");
                c.text(&m.identifier);
            }
        }
        parent = fnv64a(&c.out);
        out.push(parent);
    }
    out
}
