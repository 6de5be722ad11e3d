//! `llm-render audit [FILE|-]`: the bytes one chat request becomes at each hop from the
//! client to the KV cache, for capacity planning:
//!
//! request JSON → prompt text → token IDs (and the render response) → for each image: its
//! encoded bytes, decoded pixels, resized pixels, patches (uint8 as vLLM ships them, float32 as
//! transformers' `pixel_values`) and the vision encoder's output → embeddings into the LLM →
//! KV cache (whole blocks, as vLLM allocates them).
//!
//! Token counts and image sizes come from the same render and image planning the server
//! runs. Embedding and KV sizes come from `config.json` (`model::Architecture`); a snapshot
//! without one reports them as unknown. Remote (`http(s)`) images are not fetched here.

use super::ModelArgs;
use crate::media;
use crate::model::{dtype_bytes, Model};
use crate::protocol::fast_json::JsonChunks;
use crate::protocol::{parse_json, ChatRequest, Field};
use crate::render::multimodal::ImageKwargs;
use crate::render::{generate_request, render_chat_prompt, RenderOptions};
use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Element type of the embeddings and KV cache (`bfloat16`, `float16`, `float32`, `fp8`);
    /// default (or `auto`): the model's `torch_dtype`.
    #[arg(long, value_parser = known_dtype)]
    pub dtype: Option<String>,
    /// Element type of the KV cache alone, as vLLM's `--kv-cache-dtype`; default (or `auto`):
    /// `--dtype`.
    #[arg(long, value_parser = known_dtype)]
    pub kv_cache_dtype: Option<String>,
    /// Tokens per KV-cache block (vLLM's `--block-size`).
    #[arg(long, default_value_t = 16)]
    pub block_size: u64,
    /// Chat request file (what `/v1/chat/completions/render` takes); `-` or nothing reads
    /// standard input.
    pub file: Option<String>,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// A dtype flag's value, refused unless its element size is known: a typo would otherwise
/// print every size it feeds as unknown. `auto`, as in vLLM, means the default.
fn known_dtype(name: &str) -> Result<String, String> {
    match dtype_bytes(name) {
        Some(_) => Ok(name.to_string()),
        None if name == "auto" => Ok(name.to_string()),
        None => Err(format!(
            "unknown dtype {name:?}; one of auto, float32, bfloat16, float16, fp8 (also \
             float, fp32, bf16, fp16, half, fp8_e4m3, fp8_e5m2, float8_e4m3fn, float8_e5m2)"
        )),
    }
}

/// One hop: what the request is at that point, and its size.
#[derive(Debug, Serialize)]
pub struct Hop {
    pub hop: String,
    /// `None` where the size is unknown (no `config.json`, an unknown dtype).
    pub bytes: Option<u64>,
    pub detail: String,
}

#[derive(Debug, Serialize)]
pub struct Audit {
    pub model: String,
    pub tokens: usize,
    pub hops: Vec<Hop>,
}

pub fn run(args: AuditArgs) -> anyhow::Result<i32> {
    if args.block_size == 0 {
        bail!("--block-size must be at least 1");
    }
    let models = args.model.load()?;
    let opts = args.model.render_options();
    let body = super::read_input(args.file.as_deref())?;
    let req: ChatRequest = parse_json(&body)?;
    let model = models.get(req.model.as_deref())?;
    let audit = audit(&model, &req, body.len(), &opts, &args)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&audit)?);
    } else {
        print!("{}", table(&audit));
    }
    Ok(0)
}

/// The hops of `req` (`body_len` bytes as sent) on `model`.
pub fn audit(
    model: &Model,
    req: &ChatRequest,
    body_len: usize,
    opts: &RenderOptions,
    args: &AuditArgs,
) -> anyhow::Result<Audit> {
    let mut hops = vec![Hop {
        hop: "request JSON".into(),
        bytes: Some(body_len as u64),
        detail: match req.messages.len() {
            1 => "1 message".into(),
            n => format!("{n} messages"),
        },
    }];
    let arch = model.architecture.as_ref();
    let given = |d: &Option<String>| d.clone().filter(|d| d != "auto");
    let dtype = given(&args.dtype).or_else(|| arch.and_then(|a| a.dtype.clone()));
    let kv_dtype = given(&args.kv_cache_dtype).or_else(|| dtype.clone());
    let width = |d: &Option<String>| d.as_deref().and_then(dtype_bytes);
    let (elem, kv_elem) = (width(&dtype), width(&kv_dtype));
    let dtype_name = |d: &Option<String>| d.clone().unwrap_or_else(|| "unknown dtype".into());
    // Images first: a remote one is refused with audit's own message, before the render's.
    let images = image_hops(model, req, opts, arch.map(|a| a.hidden_size), elem)?;
    let rendered = render_chat_prompt(model, req, opts, None)?;
    hops.push(Hop {
        hop: "prompt text".into(),
        bytes: Some(rendered.prompt.len() as u64),
        detail: "the chat template's output".into(),
    });
    let out = generate_request(model, req, opts, rendered)?;
    let tokens = out.token_ids.len();
    hops.push(Hop {
        hop: "token IDs".into(),
        bytes: Some(4 * tokens as u64),
        detail: format!("{} tokens as int32", group(tokens as u64)),
    });
    let mut json = JsonChunks::default();
    out.into_json(&mut json)?;
    let response: usize = json.finish().iter().map(|b| b.len()).sum();
    hops.push(Hop {
        hop: "render response".into(),
        bytes: Some(response as u64),
        detail: "what /v1/chat/completions/render returns".into(),
    });
    hops.extend(images);

    let no_config = "unknown: config.json gives no hidden_size or layer count".to_string();
    hops.push(match arch {
        Some(a) => Hop {
            hop: "embeddings into the LLM".into(),
            bytes: elem.map(|e| tokens as u64 * a.hidden_size * e),
            detail: format!(
                "{} tokens × {} × {}",
                group(tokens as u64),
                a.hidden_size,
                dtype_name(&dtype)
            ),
        },
        None => Hop {
            hop: "embeddings into the LLM".into(),
            bytes: None,
            detail: no_config.clone(),
        },
    });
    hops.push(match arch {
        Some(a) => {
            let blocks = (tokens as u64).div_ceil(args.block_size);
            let per_token = a.kv_elements_per_token();
            let layout = match a.kv {
                crate::model::KvLayout::Heads { kv_heads, head_dim } => {
                    format!("{} layers × 2 × {kv_heads} KV heads × {head_dim}", a.layers)
                }
                crate::model::KvLayout::Latent {
                    kv_lora_rank,
                    rope_dim,
                } => format!(
                    "{} layers × ({kv_lora_rank} latent + {rope_dim} rope)",
                    a.layers
                ),
            };
            Hop {
                hop: "KV cache".into(),
                bytes: kv_elem.map(|e| blocks * args.block_size * per_token * e),
                detail: format!(
                    "{} blocks of {} tokens × {layout} × {}",
                    group(blocks),
                    args.block_size,
                    dtype_name(&kv_dtype)
                ),
            }
        }
        None => Hop {
            hop: "KV cache".into(),
            bytes: None,
            detail: no_config,
        },
    });
    Ok(Audit {
        model: model.name.clone(),
        tokens,
        hops,
    })
}

/// Each image part's hops, in request order, sized as the server's image path sizes them.
fn image_hops(
    model: &Model,
    req: &ChatRequest,
    opts: &RenderOptions,
    hidden_size: Option<u64>,
    elem: Option<u64>,
) -> anyhow::Result<Vec<Hop>> {
    let mut hops = Vec::new();
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
        return Ok(hops);
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
    for (n, (param, url)) in urls.into_iter().enumerate() {
        let n = n + 1;
        if url.starts_with("http://") || url.starts_with("https://") {
            bail!("{param}: audit does not fetch http(s) images; pass a data: URL");
        }
        let bytes = media::load_url(url, &opts.url_policy).with_context(|| param.clone())?;
        // The size from the header: the render below decodes every image anyway.
        let (w, h) =
            media::dimensions(&bytes, &opts.decode_limits).with_context(|| param.clone())?;
        let plan = processor.plan(h, w).with_context(|| param.clone())?;
        let (rows, cols) = processor.shape(&plan);
        let (rh, rw) = plan.resized_hw;
        let patches = (rows * cols) as u64;
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
        let tokens = plan.num_tokens as u64;
        push(
            "vision embeddings",
            hidden_size.zip(elem).map(|(d, e)| tokens * d * e),
            format!("{} placeholder tokens", group(tokens)),
        );
    }
    Ok(hops)
}

/// The audit as an aligned table.
fn table(a: &Audit) -> String {
    let rows: Vec<(String, String, &str)> = a
        .hops
        .iter()
        .map(|h| {
            let size = h.bytes.map_or_else(|| "?".into(), human);
            (h.hop.clone(), size, h.detail.as_str())
        })
        .collect();
    let w0 = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let w1 = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    let mut out = format!("{}: {} tokens\n", a.model, group(a.tokens as u64));
    for (hop, size, detail) in rows {
        out.push_str(&format!("{hop:<w0$}  {size:>w1$}  {detail}\n"));
    }
    out
}

/// Bytes with a binary unit: `812 B`, `37.4 KiB`, `1.2 MiB`.
fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// `1234567` as `1,234,567`.
fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_grouping() {
        assert_eq!(human(812), "812 B");
        assert_eq!(human(38_297), "37.4 KiB");
        assert_eq!(human(3 << 30), "3.0 GiB");
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1_234_567), "1,234,567");
    }
}
