//! vLLM 0.33's per-block extra keys (`kv_cache_utils.generate_block_hash_extra_keys`):
//! `lora_keys + mm_keys + cache_salt_keys`, or `None` when all are empty.
//! * LoRA: `("lora", lora_name, lora_path)` on every block;
//! * mm: `("mm", identifier, offset - block_start)` for every item overlapping the block,
//!   walked with vLLM's carried item index (`_gen_mm_extra_hash_keys`), so offsets go
//!   negative in later blocks and one block can hold two items;
//! * cache salt: `("cache_salt", salt)` on block 0 only.

/// One multimodal item's placeholder range and identity (its mm hash).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct MmItem {
    pub identifier: String,
    pub offset: usize,
    pub length: usize,
}

/// One tagged extra key of a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtraKey {
    Lora { name: String, path: Option<String> },
    Mm { identifier: String, offset: i64 },
    CacheSalt(String),
}

/// Request-level inputs to the extra keys.
#[derive(Debug, Clone, Default)]
pub struct ExtraInputs<'a> {
    pub lora: Option<(&'a str, Option<&'a str>)>,
    pub cache_salt: Option<&'a str>,
    /// Sorted by offset, as vLLM assumes.
    pub mm: &'a [MmItem],
}

/// The mm keys of block `[start, end)`, continuing from item `start_idx`; returns the keys
/// and the index the next block starts from.
pub fn mm_keys(
    mm: &[MmItem],
    start: usize,
    end: usize,
    start_idx: usize,
) -> (Vec<ExtraKey>, usize) {
    let mut keys = Vec::new();
    let Some(last) = mm.last() else {
        return (keys, start_idx);
    };
    if last.offset + last.length < start {
        return (keys, start_idx);
    }
    let mut idx = start_idx;
    while idx < mm.len() {
        let item = &mm[idx];
        if end > item.offset {
            if start > item.offset + item.length {
                idx += 1;
                continue;
            }
            keys.push(ExtraKey::Mm {
                identifier: item.identifier.clone(),
                offset: item.offset as i64 - start as i64,
            });
            if end >= item.offset + item.length {
                idx += 1;
            } else {
                break;
            }
        } else {
            break;
        }
    }
    (keys, idx)
}

/// Walks the blocks of a sequence, producing each full block's extra keys.
pub struct BlockExtraKeys<'a> {
    inputs: ExtraInputs<'a>,
    mm_idx: usize,
}

impl<'a> BlockExtraKeys<'a> {
    pub fn new(inputs: ExtraInputs<'a>) -> Self {
        BlockExtraKeys { inputs, mm_idx: 0 }
    }

    /// The keys of block `[start, end)`; blocks must be visited in order.
    pub fn block(&mut self, start: usize, end: usize) -> Option<Vec<ExtraKey>> {
        let mut keys = Vec::new();
        if let Some((name, path)) = self.inputs.lora {
            keys.push(ExtraKey::Lora {
                name: name.to_string(),
                path: path.map(str::to_string),
            });
        }
        let (mm, next) = mm_keys(self.inputs.mm, start, end, self.mm_idx);
        self.mm_idx = next;
        keys.extend(mm);
        if start == 0 {
            if let Some(salt) = self.inputs.cache_salt {
                keys.push(ExtraKey::CacheSalt(salt.to_string()));
            }
        }
        (!keys.is_empty()).then_some(keys)
    }
}
