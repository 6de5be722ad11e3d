//! One chat request's audit: the bytes it becomes at each stage from the client to the KV
//! cache, and at each link between processes ([`Link`]).
//!
//! Stages: request JSON → prompt text → token IDs (and the render response) → for each image:
//! its encoded bytes, decoded pixels, resized pixels, patches (uint8 as vLLM ships them,
//! float32 as transformers' `pixel_values`), the vision encoder's output and the KV of its
//! placeholder tokens → embeddings into the LLM → KV cache (whole blocks, as vLLM allocates
//! them).
//!
//! Token counts and image sizes come from the same render and image planning the server
//! runs. Embedding and KV sizes come from `config.json` (`model::Architecture`, or the one
//! `--config` names); without one they are unknown. Remote (`http(s)`) images are not fetched.

use super::links::Link;
use super::units::group;
use crate::media;
use crate::model::{dtype_bytes, Architecture, KvLayout, Model};
use crate::protocol::fast_json::JsonChunks;
use crate::protocol::{ChatRequest, Field};
use crate::render::multimodal::ImageKwargs;
use crate::render::{generate_request, render_chat_prompt, RenderOptions};
use anyhow::{bail, Context};
use serde::Serialize;
use serde_json::Value;

/// What the sizes assume beyond the request: the model's shapes and the engine's settings.
#[derive(Debug, Clone)]
pub struct Assumptions {
    /// `--config`'s architecture, over the model's own, and the file's name.
    pub config: Option<(Architecture, String)>,
    /// `--dtype` and `--kv-cache-dtype`; `None` (or `auto`): the config's.
    pub dtype: Option<String>,
    pub kv_cache_dtype: Option<String>,
    pub block_size: u64,
    pub index_block_size: Option<u64>,
}

/// One stage: what the request is at that point, and its size.
#[derive(Debug, Clone, Serialize)]
pub struct Hop {
    pub hop: String,
    /// `None` where the size is unknown (no `config.json`, an unknown dtype).
    pub bytes: Option<u64>,
    pub detail: String,
}

/// The prompt's KV blocks at the engine's block size, and what a router index sees of them.
#[derive(Debug, Clone, Serialize)]
pub struct Blocks {
    pub block_size: u64,
    /// Blocks allocated (the last one may be partial).
    pub blocks: u64,
    /// Full blocks: the ones vLLM hashes for its prefix cache.
    pub full_blocks: u64,
    pub index_block_size: Option<u64>,
    /// Engine blocks covered by the index's full blocks (an index hashes whole blocks only).
    pub index_visible_blocks: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Audit {
    pub model: String,
    pub tokens: usize,
    pub images: usize,
    pub hops: Vec<Hop>,
    /// Bytes on each link, in `Link::ALL` order; `None` where unknown.
    pub links: [Option<u64>; 5],
    pub blocks: Blocks,
}

impl Audit {
    pub fn link(&self, link: Link) -> Option<u64> {
        self.links[link as usize]
    }

    /// Whether this request crosses `link` at all.
    pub fn crosses(&self, link: Link) -> bool {
        link.always() || self.images > 0
    }
}

/// The stages and links of `req` (`body_len` bytes as sent) on `model`.
pub fn audit(
    model: &Model,
    req: &ChatRequest,
    body_len: usize,
    opts: &RenderOptions,
    assume: &Assumptions,
) -> anyhow::Result<Audit> {
    let mut hops = vec![Hop {
        hop: "request JSON".into(),
        bytes: Some(body_len as u64),
        detail: match req.messages.len() {
            1 => "1 message".into(),
            n => format!("{n} messages"),
        },
    }];
    let arch = assume
        .config
        .as_ref()
        .map(|(a, _)| a)
        .or(model.architecture.as_ref());
    let given = |d: &Option<String>| d.clone().filter(|d| d != "auto");
    let dtype = given(&assume.dtype).or_else(|| arch.and_then(|a| a.dtype.clone()));
    let kv_dtype = given(&assume.kv_cache_dtype).or_else(|| dtype.clone());
    let width = |d: &Option<String>| d.as_deref().and_then(dtype_bytes);
    let sizes = Sizes {
        arch,
        elem: width(&dtype),
        kv_elem: width(&kv_dtype),
    };
    let dtype_name = |d: &Option<String>| d.clone().unwrap_or_else(|| "unknown dtype".into());
    // Images first: a remote one is refused with audit's own message, before the render's.
    let images = image_hops(model, req, opts, &sizes)?;
    let rendered = render_chat_prompt(model, req, opts, None)?;
    hops.push(Hop {
        hop: "prompt text".into(),
        bytes: Some(rendered.prompt.len() as u64),
        detail: "the chat template's output".into(),
    });
    let out = generate_request(model, req, opts, rendered)?;
    let tokens = out.token_ids.len() as u64;
    hops.push(Hop {
        hop: "token IDs".into(),
        bytes: Some(4 * tokens),
        detail: format!("{} tokens as int32", group(tokens)),
    });
    let mut json = JsonChunks::default();
    out.into_json(&mut json)?;
    let response: usize = json.finish().iter().map(|b| b.len()).sum();
    hops.push(Hop {
        hop: "render response".into(),
        bytes: Some(response as u64),
        detail: "what /v1/chat/completions/render returns".into(),
    });
    let image_count = images.len();
    let float_patches: u64 = images.iter().map(|i| i.float_patches).sum();
    let vision = images
        .iter()
        .try_fold(0u64, |sum, i| sum.checked_add(i.embeddings?));
    hops.extend(images.into_iter().flat_map(|i| i.hops));

    let no_config = "unknown: config.json gives no hidden_size or layer count".to_string();
    hops.push(Hop {
        hop: "embeddings into the LLM".into(),
        bytes: sizes.embeddings(tokens),
        detail: match arch {
            Some(a) => format!(
                "{} tokens × {} × {}",
                group(tokens),
                a.hidden_size,
                dtype_name(&dtype)
            ),
            None => no_config.clone(),
        },
    });
    let bs = assume.block_size;
    let blocks = Blocks {
        block_size: bs,
        blocks: tokens.div_ceil(bs),
        full_blocks: tokens / bs,
        index_block_size: assume.index_block_size,
        index_visible_blocks: assume.index_block_size.map(|ib| tokens / ib * ib / bs),
    };
    let kv = sizes.kv(blocks.blocks * bs);
    hops.push(Hop {
        hop: "KV cache".into(),
        bytes: kv,
        detail: match arch {
            Some(a) => format!(
                "{} blocks of {bs} tokens × {} × {}",
                group(blocks.blocks),
                layout(a),
                dtype_name(&kv_dtype)
            ),
            None => no_config,
        },
    });
    let links = Link::ALL.map(|link| match link {
        Link::ClientRender => Some(body_len as u64),
        Link::RenderEngine => Some(response as u64),
        Link::RenderEncoder => Some(float_patches),
        Link::EncoderPrefill => vision,
        Link::PrefillDecode => kv,
    });
    Ok(Audit {
        model: model.name.clone(),
        tokens: tokens as usize,
        images: image_count,
        hops,
        links,
        blocks,
    })
}

/// Element sizes and shapes, for embedding and KV bytes.
struct Sizes<'a> {
    arch: Option<&'a Architecture>,
    elem: Option<u64>,
    kv_elem: Option<u64>,
}

impl Sizes<'_> {
    /// One hidden-size vector per token.
    fn embeddings(&self, tokens: u64) -> Option<u64> {
        tokens
            .checked_mul(self.arch?.hidden_size)?
            .checked_mul(self.elem?)
    }

    /// The KV of `tokens` tokens over all layers.
    fn kv(&self, tokens: u64) -> Option<u64> {
        tokens
            .checked_mul(self.arch?.kv_elements_per_token()?)?
            .checked_mul(self.kv_elem?)
    }
}

/// `28 layers × 2 × 4 KV heads × 128`, or MLA's latent + rope.
fn layout(a: &Architecture) -> String {
    match a.kv {
        KvLayout::Heads { kv_heads, head_dim } => {
            format!("{} layers × 2 × {kv_heads} KV heads × {head_dim}", a.layers)
        }
        KvLayout::Latent {
            kv_lora_rank,
            rope_dim,
        } => format!(
            "{} layers × ({kv_lora_rank} latent + {rope_dim} rope)",
            a.layers
        ),
    }
}

/// One image's stages, and the sizes its links carry.
struct ImageAudit {
    hops: Vec<Hop>,
    float_patches: u64,
    embeddings: Option<u64>,
}

/// Each image part's stages, in request order, sized as the server's image path sizes them.
fn image_hops(
    model: &Model,
    req: &ChatRequest,
    opts: &RenderOptions,
    sizes: &Sizes,
) -> anyhow::Result<Vec<ImageAudit>> {
    let urls: Vec<(String, &str)> = req
        .messages
        .iter()
        .enumerate()
        .filter_map(|(i, m)| match m.get("content") {
            Some(Field::Json(Value::Array(parts))) => Some((i, parts)),
            _ => None,
        })
        .flat_map(|(i, parts)| {
            parts.iter().enumerate().filter_map(move |(j, part)| {
                crate::template::messages::image_url(part)
                    .map(|u| (format!("messages[{i}].content[{j}]"), u))
            })
        })
        .collect();
    if urls.is_empty() {
        return Ok(Vec::new());
    }
    if urls.len() > opts.max_images_per_request {
        bail!(
            "the request has {} images; the limit is {} (--max-images-per-request)",
            urls.len(),
            opts.max_images_per_request
        );
    }
    let Some(processor) = &model.image_processor else {
        bail!(
            "the request has images and {} has no image processor",
            model.name
        );
    };
    let kw = ImageKwargs::parse(req.mm_processor_kwargs.as_ref(), opts)?;
    let mut processor = processor.clone();
    processor.min_pixels = kw.min_pixels.unwrap_or(processor.min_pixels);
    processor.max_pixels = kw.max_pixels.unwrap_or(processor.max_pixels);
    let mut images = Vec::with_capacity(urls.len());
    for (n, (param, url)) in urls.into_iter().enumerate() {
        let n = n + 1;
        if url.starts_with("http://") || url.starts_with("https://") {
            bail!("{param}: audit does not fetch http(s) images; pass a data: URL");
        }
        let bytes = media::load_url(url, &opts.url_policy).with_context(|| param.clone())?;
        // The size from the header: the render decodes every image anyway.
        let (w, h) =
            media::dimensions(&bytes, &opts.decode_limits).with_context(|| param.clone())?;
        let plan = processor.plan(h, w).with_context(|| param.clone())?;
        let (rows, cols) = processor.shape(&plan);
        let (rh, rw) = plan.resized_hw;
        let patches = (rows * cols) as u64;
        let tokens = plan.num_tokens as u64;
        let embeddings = sizes.embeddings(tokens);
        let mut hops = Vec::with_capacity(7);
        let mut push = |hop: &str, bytes: Option<u64>, detail: String| {
            hops.push(Hop {
                hop: format!("image {n} {hop}"),
                bytes,
                detail,
            })
        };
        push("encoded", Some(bytes.len() as u64), param.clone());
        push(
            "pixels",
            Some(u64::from(w) * u64::from(h) * 3),
            format!("{w}×{h} RGB"),
        );
        push(
            "resized pixels",
            Some(u64::from(rw) * u64::from(rh) * 3),
            format!("{rw}×{rh} RGB"),
        );
        push(
            "patches, uint8",
            Some(patches),
            format!(
                "{} × {cols}: each frame {} times, as vLLM ships them (kwargs_data)",
                group(rows as u64),
                processor.temporal_patch_size
            ),
        );
        push(
            "patches, float32",
            Some(4 * patches),
            "transformers' pixel_values (mm_tensors, on request)".into(),
        );
        push(
            "vision embeddings",
            embeddings,
            format!("{} placeholder tokens", group(tokens)),
        );
        push(
            "KV",
            sizes.kv(tokens),
            format!("the KV of its {} placeholder tokens", group(tokens)),
        );
        images.push(ImageAudit {
            hops,
            float_patches: 4 * patches,
            embeddings,
        });
    }
    Ok(images)
}
