//! Chat and completion requests → prompt text → token IDs, exactly as Hugging Face
//! transformers `apply_chat_template` + `encode(add_special_tokens=False)` produce them.

mod added_split;
mod b64;
pub mod cancel;
pub mod chat;
pub mod completion;
mod kwargs_data;
pub mod messages;
pub mod mm_kwargs;
pub mod multimodal;
pub mod native;
pub mod prompt_cache;
pub mod pyjson;
pub mod sampling;
pub mod template;
pub mod template_env;
pub mod tokenize;

pub use chat::{generate_request, render_chat, render_chat_prompt, render_chat_with, ChatRendered};
pub use completion::render_completion;
pub use multimodal::{fetch_request_media, FetchedMedia};

use std::time::Duration;

/// Server-wide switches that change how requests render.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// Allow `chat_template` in the request (compiled per request; vLLM's
    /// `--trust-request-chat-template`).
    pub trust_request_chat_template: bool,
    /// Allow `mm_processor_kwargs` other than `output_dtype` (vLLM's
    /// `--trust-request-mm-kwargs`).
    pub trust_request_mm_kwargs: bool,
    /// Fuel for per-request templates; model templates carry their own from load time.
    pub template_fuel: Option<u64>,
    /// Render known templates in Rust ([`native`]); off, every render goes through minijinja.
    pub native_templates: bool,
    /// Images one request may carry.
    pub max_images_per_request: usize,
    /// Tensor bytes one request may produce before base64: its uint8 `kwargs_data` plus its
    /// `mm_tensors`.
    pub max_mm_tensor_bytes: u64,
    /// Size limits checked before an image is decoded.
    pub decode_limits: crate::media::DecodeLimits,
    /// Which image URLs besides `data:` may be loaded.
    pub url_policy: crate::media::UrlPolicy,
    /// Fetches `http(s)` image URLs (`--allowed-media-domains`); `None` refuses them.
    pub fetcher: Option<crate::media::Fetcher>,
    /// Element type of `mm_tensors` unless the request asks otherwise.
    pub tensor_dtype: TensorDtype,
    /// Server-wide image processor bounds (`--mm-processor-kwargs`), under a request's own.
    pub processor_bounds: mm_kwargs::Bounds,
}

/// Element type of the pixel tensors in responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TensorDtype {
    #[default]
    Float32,
    /// Round-to-nearest-even from float32, as `torch.Tensor.to(torch.bfloat16)`.
    Bfloat16,
    /// No `mm_tensors` at all (vLLM's `kwargs_data` carries the pixels): the image is not
    /// normalized to float, saving ~50 MB of output for a 1080p photo.
    None,
}

impl TensorDtype {
    /// Bytes per element (0 for `none`).
    pub fn width(self) -> u64 {
        match self {
            TensorDtype::Float32 => 4,
            TensorDtype::Bfloat16 => 2,
            TensorDtype::None => 0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TensorDtype::Float32 => "float32",
            TensorDtype::Bfloat16 => "bfloat16",
            TensorDtype::None => "none",
        }
    }
}

/// float32 → bfloat16 bits, rounding to nearest even; NaN stays a quiet NaN.
pub fn f32_to_bf16(v: f32) -> u16 {
    if v.is_nan() {
        return 0x7fc0;
    }
    let b = v.to_bits();
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            trust_request_chat_template: false,
            trust_request_mm_kwargs: false,
            template_fuel: None,
            native_templates: true,
            max_images_per_request: 16,
            max_mm_tensor_bytes: 512 << 20,
            decode_limits: crate::media::DecodeLimits::default(),
            url_policy: crate::media::UrlPolicy {
                allowed_local_media_path: None,
                max_file_bytes: 64 << 20,
            },
            fetcher: None,
            tensor_dtype: TensorDtype::Float32,
            processor_bounds: mm_kwargs::Bounds::default(),
        }
    }
}

/// Where a render's time went, for the metrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timings {
    pub template: Duration,
    pub tokenize: Duration,
    /// What rendered the chat template; `None` for renders without one (completions).
    pub template_engine: Option<TemplateEngine>,
}

/// What rendered a chat template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateEngine {
    /// A Rust rendering of the exact template source ([`native`]).
    Native,
    Minijinja,
}

impl TemplateEngine {
    pub fn as_str(self) -> &'static str {
        match self {
            TemplateEngine::Native => "native",
            TemplateEngine::Minijinja => "minijinja",
        }
    }
}

/// A fresh request id with vLLM's prefixes (`chatcmpl-`, `cmpl-`).
pub fn request_id(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

/// Seconds since the Unix epoch, for OpenAI's `created` fields (0 if the clock is before it).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Computes `return_block_hashes` for rendered token IDs: the request's options with its own
/// token IDs and `cache_salt`; llm-d's chain is rooted in the served model name unless given.
pub fn block_hashes_for(
    opts: Option<&crate::hashing::HashRequest>,
    token_ids: &[u32],
    cache_salt: Option<&str>,
    model_name: &str,
) -> Result<Option<Vec<serde_json::Value>>, crate::error::RenderError> {
    let Some(opts) = opts else {
        return Ok(None);
    };
    let req = opts
        .clone()
        .for_rendered(token_ids.to_vec(), cache_salt, model_name);
    Ok(Some(crate::hashing::compute(&req)?.block_hashes))
}

#[cfg(test)]
mod tests {
    use super::f32_to_bf16;

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(f32_to_bf16(1.0), 0x3f80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80); // tie, even stays
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82); // tie, odd rounds up
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8001)), 0x3f81);
        assert_eq!(f32_to_bf16(-2.5), 0xc020);
        assert_eq!(f32_to_bf16(f32::NAN), 0x7fc0);
    }
}
