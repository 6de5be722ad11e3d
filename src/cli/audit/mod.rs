//! `llm-render audit [INPUT…]`: what chat requests become in bytes at each stage and on each
//! link between processes, for capacity planning.
//!
//! One request prints its stages and links (`request.rs`); a traffic sample (a JSON-lines
//! file, several files, a directory) renders each request once and prints per link the p50 /
//! p99 / max bytes, how many requests exceed the link's limit, and with `--rate` / `--link`
//! the bandwidth and KV transfer time (`report.rs`).
//!
//! Exit code, as `diff`'s: 0 when every request rendered and no link was over its limit,
//! 1 when some link was, 2 when a request could not be audited (or the command could not run).

mod input;
mod links;
mod report;
mod request;
mod units;

use super::ModelArgs;
use crate::model::Architecture;
use anyhow::{bail, Context};
use clap::Args;
use links::{LimitFlag, Limits};
use request::Assumptions;

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Print JSON instead of tables.
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
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    pub block_size: u64,
    /// Tokens per block of a router's prefix index (llm-d's `blockSizeTokens`): reports how
    /// many engine blocks its full blocks cover.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub index_block_size: Option<u64>,
    /// A `config.json` whose shapes (hidden size, layers, KV heads, dtype) size embeddings
    /// and KV instead of the model folder's: plan for a model whose weights are not here.
    #[arg(long, value_name = "CONFIG_JSON")]
    pub config: Option<String>,
    /// A link's message limit, LINK=SIZE (repeatable, applied in order): LINK one of
    /// client-render, render-engine, render-encoder, encoder-prefill, prefill-decode or
    /// `all`; SIZE like 4MiB, 16MB, 1048576 or `none`. Default: 4MiB (gRPC's default) on
    /// render-engine and render-encoder.
    #[arg(long = "limit", value_name = "LINK=SIZE", value_parser = links::parse_limit)]
    pub limits: Vec<LimitFlag>,
    /// Requests per second: turns each link's bytes into bandwidth (Gb/s).
    #[arg(long, value_parser = positive)]
    pub rate: Option<f64>,
    /// Speed of the prefill → decode link in Gb/s: the KV transfer time of each prompt.
    #[arg(long, value_name = "GBPS", value_parser = positive)]
    pub link: Option<f64>,
    /// Read every input as JSON lines (one request per line); `.jsonl` files always are.
    #[arg(long)]
    pub jsonl: bool,
    /// Chat requests (what `/v1/chat/completions/render` takes, or OpenAI Batch API lines,
    /// whose `body` is read): files, `.jsonl` files, directories of both (not their
    /// subdirectories); `-` or nothing reads standard input. A `.jsonl` file, a directory or
    /// several inputs are reported as a sample. With one model loaded, every request uses it whatever its
    /// `model` says.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// A dtype flag's value, refused unless its element size is known: a typo would otherwise
/// print every size it feeds as unknown. `auto`, as in vLLM, means the default.
fn known_dtype(name: &str) -> Result<String, String> {
    match crate::model::dtype_bytes(name) {
        Some(_) => Ok(name.to_string()),
        None if name == "auto" => Ok(name.to_string()),
        None => Err(format!(
            "unknown dtype {name:?}; one of auto, float32, bfloat16, float16, fp8 (also \
             float, fp32, bf16, fp16, half, fp8_e4m3, fp8_e5m2, float8_e4m3fn, float8_e5m2)"
        )),
    }
}

fn positive(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{text:?} is not a positive number")),
    }
}

/// `--config`'s architecture.
fn config_arch(path: &str) -> anyhow::Result<Architecture> {
    let text = std::fs::read(path).map_err(|e| anyhow::anyhow!("--config {path}: {e}"))?;
    let json: serde_json::Value =
        serde_json::from_slice(&text).with_context(|| format!("--config {path}"))?;
    match Architecture::from_config(&json) {
        Some(a) => Ok(a),
        None => bail!(
            "--config {path}: no hidden_size, num_hidden_layers or num_attention_heads (nor \
             under text_config)"
        ),
    }
}

fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
}

/// What the report needs beyond the audits.
pub struct Settings {
    pub limits: Limits,
    pub rate: Option<f64>,
    pub link_gbps: Option<f64>,
}

pub fn run(args: AuditArgs) -> anyhow::Result<i32> {
    let assume = Assumptions {
        config: match args.config.as_deref() {
            Some(path) => Some((config_arch(path)?, file_name(path))),
            None => None,
        },
        dtype: args.dtype.clone(),
        kv_cache_dtype: args.kv_cache_dtype.clone(),
        block_size: args.block_size,
        index_block_size: args.index_block_size,
    };
    if let Some(ib) = args.index_block_size {
        if !ib.is_multiple_of(args.block_size) {
            eprintln!(
                "llm-render audit: index blocks of {ib} tokens are not a multiple of engine \
                 blocks of {}: the index column counts the engine blocks its full blocks \
                 cover whole",
                args.block_size
            );
        }
    }
    let settings = Settings {
        limits: Limits::new(&args.limits),
        rate: args.rate,
        link_gbps: args.link,
    };
    let inputs = input::collect(&args.inputs, args.jsonl)?;
    let requests = inputs.requests;
    let models = args.model.load()?;
    let opts = args.model.render_options();
    if let (false, [only]) = (inputs.sample, requests.as_slice()) {
        let audit =
            input::audit_one(&models, &opts, &assume, only).with_context(|| only.label.clone())?;
        let (text, over) = report::single(&audit, &settings, &assume, args.json)?;
        print!("{text}");
        return Ok(i32::from(over));
    }
    let progress = indicatif::ProgressBar::new(requests.len() as u64);
    let mut audits = Vec::with_capacity(requests.len());
    let mut errors = Vec::new();
    for request in &requests {
        match input::audit_one(&models, &opts, &assume, request) {
            Ok(a) => audits.push(a),
            Err(e) => {
                let message = format!("{}: {e:#}", request.label);
                progress.suspend(|| eprintln!("llm-render audit: {message}"));
                errors.push(message);
            }
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    let loaded: Vec<String> = models.models().iter().map(|m| m.name.clone()).collect();
    let sample = report::Sample::new(&audits, errors, &loaded, &settings, &assume);
    let (text, over) = sample.print(args.json)?;
    print!("{text}");
    Ok(if !sample.errors.is_empty() {
        2
    } else {
        i32::from(over)
    })
}
