//! Images: data URL → bytes → decoded RGB (limits checked before allocating) → the model's
//! processor (resize, normalize, patchify) → pixel values, grid and placeholder count, plus
//! vLLM's content hash of the original bytes.
//!
//! Implemented: `data:` URLs, JPEG/PNG/WebP/GIF decode as vLLM's `ImageMediaIO` does (EXIF
//! transpose, transparency pasted on white), and the Qwen2-VL/Qwen2.5-VL/Qwen3-VL processor
//! read from `preprocessor_config.json`. Not yet: http(s)/file URLs, Gemma 3, LLaVA.

mod decode;
mod mm_hash;
mod qwen_vl;
mod resample;

pub use decode::{decode, DecodeLimits, Decoded};
pub use mm_hash::{mm_hash_image_bytes, HashAlgo};
pub use qwen_vl::{smart_resize, Plan, ProcessedImage, QwenVlProcessor};

use thiserror::Error;

/// Why an image was refused. Every variant is a client error (400).
#[derive(Debug, Error, PartialEq)]
pub enum MediaError {
    #[error("image URL scheme not supported: {0} (only data: URLs are accepted)")]
    Scheme(String),
    #[error("invalid data URL: {0}")]
    DataUrl(String),
    #[error("invalid base64 in data URL: {0}")]
    Base64(String),
    #[error("unsupported or unrecognized image format")]
    Format,
    #[error("image is {width}x{height} = {pixels} pixels, more than the limit of {limit} (--max-image-pixels)")]
    TooManyPixels {
        width: u32,
        height: u32,
        pixels: u64,
        limit: u64,
    },
    #[error("image side {side} exceeds the limit of {limit} (--max-image-side)")]
    TooLarge { side: u32, limit: u32 },
    #[error("cannot decode image: {0}")]
    Decode(String),
    #[error("absolute aspect ratio must be smaller than 200, got {0}")]
    AspectRatio(f64),
    #[error("too many images: {count}, the limit is {limit} (--max-images-per-request)")]
    TooMany { count: usize, limit: usize },
    #[error("this model has no image processor (no supported preprocessor_config.json)")]
    NoProcessor,
    #[error("the prompt has {found} image placeholders but the request has {images} images")]
    PlaceholderMismatch { found: usize, images: usize },
}

/// Loads `data:[<mime>][;base64],<payload>` into bytes (vLLM decodes with
/// `pybase64.b64decode(validate=True)`: strict alphabet, padding required).
pub fn load_url(url: &str) -> Result<Vec<u8>, MediaError> {
    use base64::Engine;
    let Some(rest) = url.strip_prefix("data:") else {
        let scheme = url.split(':').next().unwrap_or_default();
        return Err(MediaError::Scheme(scheme.chars().take(16).collect()));
    };
    let (meta, payload) = rest
        .split_once(',')
        .ok_or_else(|| MediaError::DataUrl("no ',' before the payload".into()))?;
    if !meta.ends_with(";base64") {
        return Err(MediaError::DataUrl(
            "only base64 data URLs are supported".into(),
        ));
    }
    base64::engine::general_purpose::STANDARD
        .decode(payload)
        .map_err(|e| MediaError::Base64(e.to_string()))
}
