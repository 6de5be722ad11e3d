//! Images in a chat render: each `image_url` part is loaded, decoded, hashed and processed;
//! the template's single `<|image_pad|>` per image is expanded to the image's token count,
//! and `features` carries what vLLM's engine needs (docs/api.md, "GenerateRequest"):
//! `{"mm_hashes": {"image": [..]}, "mm_placeholders": {"image": [{"offset", "length"}]},
//!   "kwargs_data": {"image": [..]}, "mm_metadata": {"image": [..]},
//!   "mm_tensors": {"image": [{"pixel_values": {"dtype", "shape", "data"}, "image_grid_thw"}]}}`.
//! `kwargs_data`/`mm_metadata` are vLLM 0.33's own encoding (see `kwargs_data.rs`);
//! `mm_tensors` (ext) are transformers' normalized `pixel_values`.
//! Placeholder ranges cover the pad tokens only, as vLLM's `PlaceholderRange` does for
//! Qwen2-VL. Identical images are decoded and processed once.

mod b64;
mod dtype;
mod kwargs_data;
mod mm_kwargs;

pub use dtype::TensorDtype;
pub use mm_kwargs::{Bounds, ImageKwargs};

use crate::error::RequestError;
use crate::media::{self, HashAlgo, MediaError, ProcessedImage, QwenVlProcessor};
use crate::model::Model;
use crate::protocol::Field;
use crate::render::RenderOptions;
use crate::template::ImageRef;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

fn media_err(param: &str, e: MediaError) -> RequestError {
    RequestError::invalid(param, format!("{param}: {e}"))
}

/// `http(s)` image bytes fetched before rendering, by URL.
pub type FetchedMedia = HashMap<String, Vec<u8>>;

fn is_http(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://")
}

/// Fetches the `http(s)` image URLs a chat request names (async, before the CPU-bound
/// render), at most `--max-images-per-request` distinct ones, concurrently.
pub async fn fetch_request_media(
    req: &crate::protocol::ChatRequest,
    opts: &RenderOptions,
) -> Result<FetchedMedia, RequestError> {
    let mut out = FetchedMedia::new();
    let Some(fetcher) = &opts.fetcher else {
        return Ok(out);
    };
    let mut urls: Vec<String> = Vec::new();
    for msg in &req.messages {
        let Some(Field::Json(Value::Array(parts))) = msg.get("content") else {
            continue;
        };
        for part in parts {
            if let Some(u) = crate::template::messages::image_url(part).filter(|u| is_http(u)) {
                if !urls.iter().any(|x| x == u) && urls.len() < opts.max_images_per_request {
                    urls.push(u.to_string());
                }
            }
        }
    }
    let mut tasks = tokio::task::JoinSet::new();
    for url in urls {
        let f = fetcher.clone();
        tasks.spawn(async move {
            let r = f.fetch(&url).await;
            (url, r)
        });
    }
    while let Some(done) = tasks.join_next().await {
        let (url, r) =
            done.map_err(|e| RequestError::Tokenizer(format!("image fetch task: {e}")))?;
        let bytes = r.map_err(|e| RequestError::invalid("messages", format!("{url}: {e}")))?;
        out.insert(url, bytes);
    }
    Ok(out)
}

/// One processed image of a request: its content hash, its processor output, and its
/// source bytes when the request asks for them (`skip_pixel_values`).
#[derive(Clone)]
struct Item {
    hash: String,
    image: Arc<ProcessedImage>,
    source: Option<Arc<Vec<u8>>>,
}

/// Loads and processes every image; returns the expanded token IDs and `features`.
pub fn expand_images(
    model: &Model,
    images: &[ImageRef],
    token_ids: Arc<Vec<u32>>,
    opts: &RenderOptions,
    fetched: Option<&FetchedMedia>,
    kw: &ImageKwargs,
) -> Result<(Arc<Vec<u32>>, Option<Value>), RequestError> {
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
    let mut processor = processor.clone();
    processor.min_pixels = kw.min_pixels.unwrap_or(processor.min_pixels);
    processor.max_pixels = kw.max_pixels.unwrap_or(processor.max_pixels);
    let items = process_images(model, &processor, images, opts, fetched, kw)?;
    let (ids, placeholders) = expand_placeholders(&token_ids, pad, &items)?;
    Ok((Arc::new(ids), Some(features(&items, placeholders, kw))))
}

/// Loads, decodes, hashes and processes each image, in prompt order; the same URL is done
/// once. Holds the request's tensors to `--max-mm-tensor-bytes` as it goes, before each
/// image is processed: each use of an image counts its uint8 `kwargs_data`, plus its
/// `mm_tensors` when asked for.
fn process_images(
    model: &Model,
    processor: &QwenVlProcessor,
    images: &[ImageRef],
    opts: &RenderOptions,
    fetched: Option<&FetchedMedia>,
    kw: &ImageKwargs,
) -> Result<Vec<Item>, RequestError> {
    let mut by_url: HashMap<&str, Item> = HashMap::new();
    let mut tensor_bytes = 0u64;
    let mut charge = |rows: usize, cols: usize, param: &str| {
        if kw.raw_images {
            // No tensor is made; the source bytes are bounded by the body and fetch limits.
            return Ok(());
        }
        tensor_bytes += (rows * cols) as u64 * (u64::from(!kw.no_payload) + kw.dtype.width());
        let (bytes, limit) = (tensor_bytes, opts.max_mm_tensor_bytes);
        if bytes > limit {
            return Err(media_err(
                param,
                MediaError::TensorsTooLarge { bytes, limit },
            ));
        }
        Ok(())
    };
    let mut items = Vec::with_capacity(images.len());
    for img in images {
        crate::render::cancel::check()?;
        if let Some(done) = by_url.get(img.url.as_str()) {
            charge(done.image.rows, done.image.cols, &img.param)?;
            items.push(done.clone());
            continue;
        }
        let planned = plan_image(processor, img, opts, fetched)?;
        let (rows, cols) = processor.shape(&planned.plan);
        charge(rows, cols, &img.param)?;
        let item = planned.process(model, processor, kw);
        by_url.insert(img.url.as_str(), item.clone());
        items.push(item);
    }
    Ok(items)
}

/// An image decoded and planned, not yet processed.
struct Planned {
    bytes: Vec<u8>,
    decoded: media::Decoded,
    plan: media::Plan,
}

/// One image's bytes (fetched before the render, or loaded here), decoded, and its resize
/// planned and held to the decode limit, before anything of the resized size is allocated
/// (the request may move the resize bounds with `min_pixels`).
fn plan_image(
    processor: &QwenVlProcessor,
    img: &ImageRef,
    opts: &RenderOptions,
    fetched: Option<&FetchedMedia>,
) -> Result<Planned, RequestError> {
    let bad = |e| media_err(&img.param, e);
    let bytes = match fetched.and_then(|f| f.get(&img.url)) {
        Some(b) => b.clone(),
        None if is_http(&img.url) => return Err(bad(MediaError::HttpDisabled)),
        None => media::load_url(&img.url, &opts.url_policy).map_err(bad)?,
    };
    let decoded = media::decode(&bytes, &opts.decode_limits).map_err(bad)?;
    let plan = processor
        .plan(decoded.rgb.height(), decoded.rgb.width())
        .map_err(bad)?;
    let (height, width) = plan.resized_hw;
    let pixels = height as u64 * width as u64;
    let limit = opts.decode_limits.max_pixels;
    if pixels > limit {
        return Err(bad(MediaError::ResizedTooLarge {
            width,
            height,
            pixels,
            limit,
        }));
    }
    Ok(Planned {
        bytes,
        decoded,
        plan,
    })
}

impl Planned {
    /// Its content hash (vLLM's, of the original bytes) and the processor's output.
    fn process(self, model: &Model, processor: &QwenVlProcessor, kw: &ImageKwargs) -> Item {
        let (hash, image) = self.process_pixels(model, processor, kw);
        let source = kw.raw_images.then(|| Arc::new(self.bytes));
        Item {
            hash,
            image,
            source,
        }
    }

    fn process_pixels(
        &self,
        model: &Model,
        processor: &QwenVlProcessor,
        kw: &ImageKwargs,
    ) -> (String, Arc<ProcessedImage>) {
        let hash = media::mm_hash_image_bytes(
            &self.bytes,
            self.decoded.converted,
            &model.name,
            &kw.hashed,
            HashAlgo::Blake3,
        );
        let tensors = match (kw.no_payload || kw.raw_images, kw.dtype) {
            (true, _) if kw.raw_images => return (hash, Arc::new(self.plan_only(processor))),
            (false, TensorDtype::None) => media::Tensors::Patches,
            (false, _) => media::Tensors::Both,
            (true, TensorDtype::None) => return (hash, Arc::new(self.plan_only(processor))),
            (true, _) => media::Tensors::PixelValues,
        };
        let processed = processor.process_planned(&self.decoded.rgb, &self.plan, tensors);
        (hash, Arc::new(processed))
    }

    /// Hashes and placeholders only: the plan has all they need, no pixel is made.
    fn plan_only(&self, processor: &QwenVlProcessor) -> ProcessedImage {
        let (rows, cols) = processor.shape(&self.plan);
        media::ProcessedImage {
            pixel_values: Vec::new(),
            patches: Vec::new(),
            rows,
            cols,
            grid_thw: self.plan.grid_thw,
            resized_hw: self.plan.resized_hw,
            num_tokens: self.plan.num_tokens,
        }
    }
}

/// Each of the template's image pads becomes its image's run of `num_tokens` pads; returns
/// the IDs and the runs as vLLM's `PlaceholderRange`s (`{"offset", "length"}`).
fn expand_placeholders(
    token_ids: &[u32],
    pad: u32,
    items: &[Item],
) -> Result<(Vec<u32>, Vec<Value>), RequestError> {
    let found = token_ids.iter().filter(|t| **t == pad).count();
    if found != items.len() {
        let e = MediaError::PlaceholderMismatch {
            found,
            images: items.len(),
        };
        return Err(media_err("messages", e));
    }
    let extra: usize = items
        .iter()
        .map(|item| item.image.num_tokens.saturating_sub(1))
        .sum();
    let mut out = Vec::with_capacity(token_ids.len() + extra);
    let mut placeholders = Vec::with_capacity(items.len());
    let mut next = items.iter();
    for &t in token_ids {
        if t == pad {
            if let Some(Item { image: p, .. }) = next.next() {
                placeholders.push(json!({"offset": out.len(), "length": p.num_tokens}));
                out.extend(std::iter::repeat_n(pad, p.num_tokens));
            }
        } else {
            out.push(t);
        }
    }
    Ok((out, placeholders))
}

/// The render's `features`: hashes, placeholders, vLLM's `kwargs_data` and `mm_metadata`
/// (`null` with `mm_payload: "none"`, as vLLM writes them), and `mm_tensors` when a float
/// dtype is asked for. With `skip_pixel_values`, vLLM main's shape instead: `kwargs_data`
/// and `mm_metadata` `null`, and `raw_images` `{"image": [base64 of each source]}`,
/// positional with `mm_hashes` (`serving.py::_extract_mm_features`). vLLM falls back to
/// `kwargs_data` when an item kept no source bytes (embeddings, audio, video); every item
/// here is an image loaded from bytes, so the fallback cannot arise.
fn features(items: &[Item], placeholders: Vec<Value>, kw: &ImageKwargs) -> Value {
    let dtype = kw.dtype;
    // The large strings (base64 tensors) are moved into the tree: `json!` would serialize
    // an interpolated `String` or `Vec` again, copying each (measured: two copies of a
    // 1080p image's 67 MB of float32 base64, ~10 ms of server CPU per request).
    let image =
        |values: Vec<Value>| Value::Object(Map::from_iter([("image".into(), values.into())]));
    let all_rows: Vec<usize> = items.iter().map(|item| item.image.rows).collect();
    let mut features = Map::new();
    let hashes = items.iter().map(|item| item.hash.clone().into()).collect();
    features.insert("mm_hashes".into(), image(hashes));
    features.insert("mm_placeholders".into(), image(placeholders));
    if kw.raw_images {
        features.insert("kwargs_data".into(), Value::Null);
        features.insert("mm_metadata".into(), Value::Null);
        let raw = items.iter().map(|item| {
            let bytes = item.source.as_deref().map_or(&[][..], |b| b.as_slice());
            let mut w = b64::B64Writer::with_input_len(bytes.len());
            w.write(bytes);
            Value::String(w.finish())
        });
        features.insert("raw_images".into(), image(raw.collect()));
        return Value::Object(features);
    }
    if kw.no_payload {
        features.insert("kwargs_data".into(), Value::Null);
        features.insert("mm_metadata".into(), Value::Null);
    } else {
        let kwargs = items
            .iter()
            .map(|item| kwargs_data::kwargs_data(&item.image, &all_rows).into());
        features.insert("kwargs_data".into(), image(kwargs.collect()));
        let metadata = items
            .iter()
            .map(|item| kwargs_data::mm_metadata(&item.image).into());
        features.insert("mm_metadata".into(), image(metadata.collect()));
    }
    if dtype != TensorDtype::None {
        let tensors = items
            .iter()
            .map(|Item { image: p, .. }| {
                let data = b64::encode_f32(&p.pixel_values, dtype);
                let mut pixel_values = Map::new();
                pixel_values.insert("dtype".into(), dtype.name().into());
                pixel_values.insert("shape".into(), json!([p.rows, p.cols]));
                pixel_values.insert("data".into(), Value::String(data));
                let mut tensor = Map::new();
                tensor.insert("pixel_values".into(), pixel_values.into());
                tensor.insert("image_grid_thw".into(), json!(p.grid_thw));
                tensor.into()
            })
            .collect();
        features.insert("mm_tensors".into(), image(tensors));
    }
    Value::Object(features)
}
