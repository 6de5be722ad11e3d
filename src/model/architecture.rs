//! What `config.json` says about the size of a model's per-token state: the width of its
//! token embeddings and what its KV cache holds per token, as vLLM sizes it.
//!
//! - Attention with KV heads (Llama, Qwen, Mistral, ...): each layer caches a key and a value
//!   per KV head, `2 × num_key_value_heads × head_dim` elements per token
//!   (`head_dim` defaults to `hidden_size / num_attention_heads`, `num_key_value_heads` to
//!   `num_attention_heads`).
//! - Multi-head latent attention (DeepSeek-V2/V3, `kv_lora_rank` set): each layer caches one
//!   compressed latent and the rotary key, `kv_lora_rank + qk_rope_head_dim` elements per
//!   token (vLLM's MLA cache layout).
//!
//! Fields are read at the top level, else in `text_config` (multimodal configs). Element size
//! comes from `torch_dtype` (or `dtype`, newer transformers), unless overridden.

use serde_json::Value;

/// Per-token state sizes of a decoder-only model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Architecture {
    pub hidden_size: u64,
    pub layers: u64,
    pub kv: KvLayout,
    /// `torch_dtype` as written, when known.
    pub dtype: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvLayout {
    Heads { kv_heads: u64, head_dim: u64 },
    Latent { kv_lora_rank: u64, rope_dim: u64 },
}

impl Architecture {
    /// The architecture `config.json` describes, or `None` when it lacks `hidden_size` or the
    /// layer count (tokenizer-only snapshots).
    pub fn from_config(config: &Value) -> Option<Architecture> {
        let field = |name: &str| {
            config
                .get(name)
                .or_else(|| config.get("text_config").and_then(|t| t.get(name)))
        };
        let int = |name: &str| field(name).and_then(Value::as_u64).filter(|&n| n > 0);
        let hidden_size = int("hidden_size")?;
        let layers = int("num_hidden_layers")?;
        let kv = match (int("kv_lora_rank"), int("qk_rope_head_dim")) {
            (Some(kv_lora_rank), Some(rope_dim)) => KvLayout::Latent {
                kv_lora_rank,
                rope_dim,
            },
            _ => {
                let heads = int("num_attention_heads")?;
                KvLayout::Heads {
                    kv_heads: int("num_key_value_heads").unwrap_or(heads),
                    head_dim: int("head_dim").unwrap_or(hidden_size / heads),
                }
            }
        };
        let dtype = field("torch_dtype")
            .or_else(|| field("dtype"))
            .and_then(Value::as_str)
            .map(str::to_string);
        Some(Architecture {
            hidden_size,
            layers,
            kv,
            dtype,
        })
    }

    /// Bytes per element of the model's dtype, when it is a known one.
    pub fn dtype_bytes(&self) -> Option<u64> {
        dtype_bytes(self.dtype.as_deref()?)
    }

    /// KV-cache elements one token takes, over all layers; `None` when a hostile or broken
    /// `config.json` makes the product overflow.
    pub fn kv_elements_per_token(&self) -> Option<u64> {
        let per_layer = match self.kv {
            KvLayout::Heads { kv_heads, head_dim } => {
                kv_heads.checked_mul(head_dim)?.checked_mul(2)
            }
            KvLayout::Latent {
                kv_lora_rank,
                rope_dim,
            } => kv_lora_rank.checked_add(rope_dim),
        }?;
        self.layers.checked_mul(per_layer)
    }
}

/// Bytes per element of a torch dtype name (`bfloat16`, `float16`, `float32`, and the fp8
/// KV-cache types vLLM accepts).
pub fn dtype_bytes(name: &str) -> Option<u64> {
    match name {
        "float32" | "fp32" | "float" => Some(4),
        "bfloat16" | "bf16" | "float16" | "fp16" | "half" => Some(2),
        "fp8" | "fp8_e4m3" | "fp8_e5m2" | "float8_e4m3fn" | "float8_e5m2" => Some(1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn heads_latent_and_text_config() {
        // Qwen3-0.6B's config.json (the fixture).
        let qwen3 = json!({"hidden_size": 1024, "num_hidden_layers": 28,
            "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
            "torch_dtype": "bfloat16"});
        let a = Architecture::from_config(&qwen3).unwrap();
        assert_eq!(a.kv_elements_per_token(), Some(28 * 2 * 8 * 128));
        assert_eq!(a.dtype_bytes(), Some(2));
        // DeepSeek-V3: MLA caches 512 + 64 per layer.
        let v3 = json!({"hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128,
            "num_key_value_heads": 128, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
            "torch_dtype": "bfloat16"});
        assert_eq!(
            Architecture::from_config(&v3)
                .unwrap()
                .kv_elements_per_token(),
            Some(61 * 576)
        );
        // No head_dim, no KV heads: hidden / heads, and every head cached.
        let plain = json!({"text_config": {"hidden_size": 4096, "num_hidden_layers": 32,
            "num_attention_heads": 32}, "dtype": "float32"});
        let a = Architecture::from_config(&plain).unwrap();
        assert_eq!(a.kv_elements_per_token(), Some(32 * 2 * 32 * 128));
        assert_eq!(a.dtype_bytes(), Some(4));
        // A tokenizer-only snapshot, and zero sizes.
        assert_eq!(Architecture::from_config(&json!({})), None);
        assert_eq!(
            Architecture::from_config(&json!({"hidden_size": 0, "num_hidden_layers": 2})),
            None
        );
        // Shapes whose product overflows give no figure rather than a panic.
        let huge = json!({"hidden_size": 1, "num_hidden_layers": u64::MAX,
            "num_attention_heads": 1, "num_key_value_heads": 1, "head_dim": 2});
        assert_eq!(
            Architecture::from_config(&huge)
                .unwrap()
                .kv_elements_per_token(),
            None
        );
    }
}
