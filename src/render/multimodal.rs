//! Images in a chat render: each `image_url` part is loaded, decoded, hashed and processed;
//! the template's single `<|image_pad|>` per image is expanded to the image's token count,
//! and `features` carries what vLLM's engine needs (api.md, "GenerateRequest"):
//! `{"mm_hashes": {"image": [..]}, "mm_placeholders": {"image": [{"offset", "length"}]},
//!   "mm_tensors": {"image": [{"pixel_values": {"dtype", "shape", "data"}, "image_grid_thw"}]}}`.
//! Placeholder ranges cover the pad tokens only, as vLLM's `PlaceholderRange` does for
//! Qwen2-VL. Identical images are decoded and processed once.

use super::messages::ImageRef;
use super::RenderOptions;
use crate::error::RenderError;
use crate::media::{self, HashAlgo, MediaError, ProcessedImage};
use crate::model::Model;
use base64::Engine;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

fn media_err(param: &str, e: MediaError) -> RenderError {
    RenderError::invalid(param, format!("{param}: {e}"))
}

/// Loads and processes every image; returns the expanded token IDs and `features`.
pub fn expand_images(
    model: &Model,
    images: &[ImageRef],
    token_ids: Vec<u32>,
    opts: &RenderOptions,
) -> Result<(Vec<u32>, Option<Value>), RenderError> {
    if images.is_empty() {
        return Ok((token_ids, None));
    }
    if images.len() > opts.max_images_per_request {
        let e = MediaError::TooMany {
            count: images.len(),
            limit: opts.max_images_per_request,
        };
        return Err(media_err("messages", e));
    }
    let (Some(processor), Some(pad)) = (&model.image_processor, model.image_token_id) else {
        return Err(media_err("messages", MediaError::NoProcessor));
    };
    // Same URL, same bytes: load, decode, hash and process once.
    let mut by_url: HashMap<&str, (String, Arc<ProcessedImage>)> = HashMap::new();
    let mut items = Vec::with_capacity(images.len());
    for img in images {
        if let Some(done) = by_url.get(img.url.as_str()) {
            items.push(done.clone());
            continue;
        }
        let bytes =
            media::load_url(&img.url, &opts.url_policy).map_err(|e| media_err(&img.param, e))?;
        let decoded =
            media::decode(&bytes, &opts.decode_limits).map_err(|e| media_err(&img.param, e))?;
        let hash =
            media::mm_hash_image_bytes(&bytes, decoded.converted, &model.name, HashAlgo::Blake3);
        let processed = Arc::new(
            processor
                .process(&decoded.rgb)
                .map_err(|e| media_err(&img.param, e))?,
        );
        by_url.insert(img.url.as_str(), (hash.clone(), processed.clone()));
        items.push((hash, processed));
    }
    let found = token_ids.iter().filter(|t| **t == pad).count();
    if found != items.len() {
        return Err(media_err(
            "messages",
            MediaError::PlaceholderMismatch {
                found,
                images: items.len(),
            },
        ));
    }
    let extra: usize = items
        .iter()
        .map(|(_, p)| p.num_tokens.saturating_sub(1))
        .sum();
    let mut out = Vec::with_capacity(token_ids.len() + extra);
    let mut placeholders = Vec::with_capacity(items.len());
    let mut next = items.iter();
    for t in token_ids {
        if t == pad {
            if let Some((_, p)) = next.next() {
                placeholders.push(json!({"offset": out.len(), "length": p.num_tokens}));
                out.extend(std::iter::repeat_n(pad, p.num_tokens));
            }
        } else {
            out.push(t);
        }
    }
    let tensors: Vec<Value> = items
        .iter()
        .map(|(_, p)| {
            let bytes: Vec<u8> = p
                .pixel_values
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            json!({
                "pixel_values": {
                    "dtype": "float32",
                    "shape": [p.rows, p.cols],
                    "data": base64::engine::general_purpose::STANDARD.encode(bytes),
                },
                "image_grid_thw": p.grid_thw,
            })
        })
        .collect();
    let features = json!({
        "mm_hashes": {"image": items.iter().map(|(h, _)| h.clone()).collect::<Vec<_>>()},
        "mm_placeholders": {"image": placeholders},
        "mm_tensors": {"image": tensors},
    });
    Ok((out, Some(features)))
}
