//! Prefix-cache block hashes for routers: vLLM's chain (`sha256` pickle, `sha256_cbor`,
//! `xxhash_cbor`) and llm-d's request keys (`llmd_fnv64a`), byte for byte
//! (shared/goldens/hashes pins both).
//!
//! Wire format (`POST /v1/block_hashes`, docs/api.md):
//! `{"token_ids": [..], "block_size": 16, "algorithm": "sha256", "seed": null, "format": "hex",
//!   "lora_name": null, "lora_path": null, "cache_salt": null, "model_name": null,
//!   "mm": [{"identifier", "offset", "length"}], "parent_key": null}` →
//! `{"block_hashes": [..], "num_full_blocks": n}`. `format: "u64"` gives the integer vLLM puts
//! in KV events (the digest's last 8 bytes, big-endian) and llm-d's native key.

mod cbor;
mod extra;
mod llmd;
mod pickle;
mod vllm;

pub use extra::{BlockExtraKeys, ExtraInputs, ExtraKey, MmItem};
pub use llmd::{block_keys as llmd_block_keys, root_key as llmd_root_key};
pub use vllm::{block_hashes as vllm_block_hashes, hash_to_u64, VllmAlgo};

use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum HashError {
    #[error("unknown algorithm {0:?}: expected sha256, sha256_cbor, xxhash_cbor or llmd_fnv64a")]
    UnknownAlgorithm(String),
    #[error("unknown format {0:?}: expected hex or u64")]
    UnknownFormat(String),
    #[error("xxhash_cbor needs a seed: with PYTHONHASHSEED unset vLLM seeds it with random bytes")]
    UnseededXxhash,
    #[error("block_size {0} is too large for the sha256 (pickle) algorithm")]
    BlockTooLarge(usize),
    #[error("block_size must be between 1 and {max}, got {0}", max = MAX_BLOCK_SIZE)]
    BadBlockSize(usize),
    #[error("llmd_fnv64a needs model_name (llm-d roots its chain in the model name)")]
    MissingModelName,
    #[error("token_ids: Field required (the prompt's token IDs, a JSON array)")]
    MissingTokenIds,
}

impl HashError {
    /// The request field at fault.
    pub fn param(&self) -> &'static str {
        match self {
            HashError::UnknownAlgorithm(_) => "algorithm",
            HashError::UnknownFormat(_) => "format",
            HashError::UnseededXxhash => "seed",
            HashError::BlockTooLarge(_) | HashError::BadBlockSize(_) => "block_size",
            HashError::MissingModelName => "model_name",
            HashError::MissingTokenIds => "token_ids",
        }
    }
}

/// Largest accepted block size (vLLM's largest is a few hundred tokens).
pub const MAX_BLOCK_SIZE: usize = 8192;

fn default_block_size() -> usize {
    16
}

fn default_algorithm() -> String {
    "sha256".into()
}

fn default_format() -> String {
    "hex".into()
}

/// Hashing options: the body of `POST /v1/block_hashes`, and (with `token_ids`/`mm` left
/// empty) the `return_block_hashes` option of the render routes.
#[derive(Debug, Clone, Deserialize)]
pub struct HashRequest {
    /// Required by `POST /v1/block_hashes` (an empty array hashes to no block); set from
    /// the rendered prompt for `return_block_hashes`.
    #[serde(default)]
    pub token_ids: Option<Vec<u32>>,
    #[serde(default = "default_block_size")]
    pub block_size: usize,
    /// `sha256` (vLLM's default), `sha256_cbor`, `xxhash_cbor` or `llmd_fnv64a`.
    #[serde(default = "default_algorithm")]
    pub algorithm: String,
    /// `PYTHONHASHSEED` for vLLM (`null` = unset); llm-d's hash seed (`null` = "").
    #[serde(default)]
    pub seed: Option<String>,
    /// `hex` or `u64`.
    #[serde(default = "default_format")]
    pub format: String,
    #[serde(default)]
    pub lora_name: Option<String>,
    #[serde(default)]
    pub lora_path: Option<String>,
    #[serde(default)]
    pub cache_salt: Option<String>,
    /// llm-d's chain root (the served model name, or the LoRA name for LoRA events).
    #[serde(default)]
    pub model_name: Option<String>,
    #[serde(default)]
    pub mm: Vec<MmItem>,
    /// llm-d: continue a chain from this key instead of the root.
    #[serde(default)]
    pub parent_key: Option<u64>,
}

impl HashRequest {
    /// `return_block_hashes` of a render: the hashes of [`HashRequest::for_rendered`].
    pub fn of_render(
        &self,
        token_ids: &[u32],
        cache_salt: Option<&str>,
        model_name: &str,
    ) -> Result<Vec<serde_json::Value>, HashError> {
        let req = self
            .clone()
            .for_rendered(token_ids.to_vec(), cache_salt, model_name);
        Ok(compute(&req)?.block_hashes)
    }

    /// These options applied to a rendered prompt: its token IDs, the request's
    /// `cache_salt` unless the options set one, and the served model name as llm-d's chain
    /// root unless the options name one.
    pub fn for_rendered(
        mut self,
        token_ids: Vec<u32>,
        cache_salt: Option<&str>,
        model_name: &str,
    ) -> HashRequest {
        self.token_ids = Some(token_ids);
        self.cache_salt = self.cache_salt.or_else(|| cache_salt.map(str::to_string));
        self.model_name = self.model_name.or_else(|| Some(model_name.to_string()));
        self
    }
}

/// The response of `POST /v1/block_hashes` (and the `block_hashes` of a render response).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct HashResponse {
    pub block_hashes: Vec<serde_json::Value>,
    pub num_full_blocks: usize,
}

enum Format {
    Hex,
    U64,
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Computes the block hashes a request asks for.
pub fn compute(req: &HashRequest) -> Result<HashResponse, HashError> {
    let token_ids = req.token_ids.as_deref().ok_or(HashError::MissingTokenIds)?;
    if req.block_size == 0 || req.block_size > MAX_BLOCK_SIZE {
        return Err(HashError::BadBlockSize(req.block_size));
    }
    let format = match req.format.as_str() {
        "hex" => Format::Hex,
        "u64" => Format::U64,
        other => return Err(HashError::UnknownFormat(other.into())),
    };
    let mut mm = req.mm.clone();
    mm.sort_by_key(|m| m.offset);
    let algo = match req.algorithm.as_str() {
        "sha256" => Some(VllmAlgo::Sha256),
        "sha256_cbor" => Some(VllmAlgo::Sha256Cbor),
        "xxhash_cbor" => Some(VllmAlgo::XxhashCbor),
        "llmd_fnv64a" => None,
        other => return Err(HashError::UnknownAlgorithm(other.into())),
    };
    let block_hashes: Vec<serde_json::Value> = match algo {
        Some(algo) => {
            let extra = ExtraInputs {
                lora: req
                    .lora_name
                    .as_deref()
                    .map(|n| (n, req.lora_path.as_deref())),
                cache_salt: req.cache_salt.as_deref(),
                mm: &mm,
            };
            vllm_block_hashes(algo, req.seed.as_deref(), token_ids, req.block_size, extra)?
                .into_iter()
                .map(|h| match format {
                    Format::Hex => hex(&h).into(),
                    Format::U64 => hash_to_u64(&h).into(),
                })
                .collect()
        }
        None => {
            let model = req
                .lora_name
                .as_deref()
                .or(req.model_name.as_deref())
                .ok_or(HashError::MissingModelName)?;
            let seed = req.seed.as_deref().unwrap_or("");
            llmd_block_keys(
                seed,
                model,
                req.parent_key.unwrap_or(0),
                token_ids,
                req.block_size,
                &mm,
            )
            .into_iter()
            .map(|k| match format {
                Format::Hex => format!("{k:016x}").into(),
                Format::U64 => k.into(),
            })
            .collect()
        }
    };
    Ok(HashResponse {
        num_full_blocks: block_hashes.len(),
        block_hashes,
    })
}

impl From<HashError> for crate::error::RequestError {
    fn from(e: HashError) -> Self {
        crate::error::RequestError::invalid(e.param(), e.to_string())
    }
}
