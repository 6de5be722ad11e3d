//! Images: data URL → bytes → decoded RGB (limits checked before allocating) → the model's
//! processor (resize, normalize, patchify) → pixel values, grid and placeholder count, plus
//! vLLM's content hash of the original bytes.
//!
//! Implemented: `data:` URLs, `file:` URLs below an allowed folder, JPEG/PNG/WebP/GIF decode as vLLM's `ImageMediaIO` does (EXIF
//! transpose, transparency pasted on white), and the Qwen2-VL/Qwen2.5-VL/Qwen3-VL processor
//! read from `preprocessor_config.json`; the Gemma 3 and LLaVA-1.5 (CLIP) processors
//! (`square.rs`, processor level: not yet wired into chat render).

mod decode;
mod fetch;
mod mm_hash;
mod normalize;
mod patchify;
mod qwen_vl;
pub mod resample;
mod square;
mod stream_store;

pub use decode::{decode, dimensions, DecodeLimits, Decoded};
pub use fetch::{is_internal, FetchPolicy, Fetcher};
pub use mm_hash::{mm_hash_image_bytes, HashAlgo};
pub use qwen_vl::{smart_resize, Plan, ProcessedImage, QwenVlProcessor, Tensors};
pub use square::{SquareImage, SquareKind, SquareProcessor};

use thiserror::Error;

/// What the byte-permute kernels (`vpermb`: resample along rows, patch split) need: AVX-512
/// F, BW and VBMI (Intel Ice Lake and later, AMD Zen 4 and later).
#[cfg(target_arch = "x86_64")]
pub(crate) fn has_avx512_vbmi() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
}

/// Why an image was refused. Every variant is a client error (400).
#[derive(Debug, Error, PartialEq)]
pub enum MediaError {
    #[error("image URL scheme not supported: {0} (use data:, http(s): or file:)")]
    Scheme(String),
    #[error(
        "http(s) image URLs are refused: the server was started without --allowed-media-domains"
    )]
    HttpDisabled,
    #[error(
        "file: image URLs are refused: the server was started without --allowed-local-media-path"
    )]
    FileDisabled,
    #[error("file URL refused: {0}")]
    LocalPath(String),
    #[error("cannot fetch image: {0}")]
    Fetch(String),
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
    #[error("the image would be resized to {width}x{height} = {pixels} pixels, more than the limit of {limit} (--max-image-pixels)")]
    ResizedTooLarge {
        width: u32,
        height: u32,
        pixels: u64,
        limit: u64,
    },
    #[error("the request's image tensors (kwargs_data, and mm_tensors when a float output_dtype is asked for) would take {bytes} bytes, more than the limit of {limit} (--max-mm-tensor-bytes); leave mm_processor_kwargs.output_dtype unset (kwargs_data still carries the pixels), send mm_payload \"none\" when only hashes and placeholders are needed, or send fewer or smaller images")]
    TensorsTooLarge { bytes: u64, limit: u64 },
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

/// Where image URLs may point besides `data:`.
#[derive(Debug, Clone, Default)]
pub struct UrlPolicy {
    /// `file://` URLs are served only from below this folder (canonicalized at start-up,
    /// symlinks resolved before the check); `None` refuses them.
    pub allowed_local_media_path: Option<std::path::PathBuf>,
    /// Largest file read through a `file://` URL.
    pub max_file_bytes: u64,
}

/// Loads an image URL into bytes: `data:[<mime>];base64,<payload>` (vLLM decodes with
/// `pybase64.b64decode(validate=True)`: strict alphabet, padding required), or `file://`
/// below `--allowed-local-media-path`. Other schemes are refused.
pub fn load_url(url: &str, policy: &UrlPolicy) -> Result<Vec<u8>, MediaError> {
    use base64::Engine;
    if let Some(path) = url.strip_prefix("file://") {
        return load_file(path, policy);
    }
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

/// Reads a `file://` path after checking, on the canonical path (`..` and symlinks
/// resolved), that it lies inside the allowed folder.
fn load_file(path: &str, policy: &UrlPolicy) -> Result<Vec<u8>, MediaError> {
    let Some(root) = &policy.allowed_local_media_path else {
        return Err(MediaError::FileDisabled);
    };
    let refused =
        || MediaError::LocalPath("the file is not inside --allowed-local-media-path".into());
    let canonical = std::fs::canonicalize(path).map_err(|_| refused())?;
    if !canonical.starts_with(root) || !canonical.is_file() {
        return Err(refused());
    }
    let len = std::fs::metadata(&canonical)
        .map(|m| m.len())
        .map_err(|_| refused())?;
    if len > policy.max_file_bytes {
        return Err(MediaError::LocalPath(format!(
            "the file is {len} bytes, more than {}",
            policy.max_file_bytes
        )));
    }
    std::fs::read(&canonical).map_err(|_| refused())
}
