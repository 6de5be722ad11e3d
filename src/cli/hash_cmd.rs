//! `llm-render hash [--render] [FILE|-]`: block hashes on the command line.
//!
//! Without `--render` the input is a `POST /v1/block_hashes` body and the output its
//! response. With `--render` the input is a chat render request: it is rendered with
//! `--model` and its token IDs hashed with the request's `return_block_hashes` options
//! (vLLM's defaults when absent: sha256, block size 16, PYTHONHASHSEED unset). Flags
//! override either.

use super::ModelArgs;
use crate::error::RequestError;
use crate::hashing::{self, HashRequest};
use crate::protocol::{parse_json, ChatRequest};
use crate::render::render_chat_prompt;
use crate::server::ApiError;
use clap::Args;

#[derive(Debug, Args)]
pub struct HashArgs {
    /// The input is a chat render request; hash its rendered token IDs (otherwise it is a
    /// `/v1/block_hashes` body: `{"token_ids": [..], ...}`).
    #[arg(long)]
    pub render: bool,
    /// sha256 (vLLM's default), sha256_cbor, xxhash_cbor or llmd_fnv64a [default: the
    /// input's `algorithm`, else sha256].
    #[arg(long)]
    pub algorithm: Option<String>,
    /// Tokens per KV-cache block: only full blocks are hashed, so a prompt shorter than one
    /// block has none [default: the input's `block_size`, else 16].
    #[arg(long)]
    pub block_size: Option<usize>,
    /// vLLM's PYTHONHASHSEED, or llm-d's hash seed [default: the input's `seed`, else unset
    /// (vLLM) or "" (llm-d)].
    #[arg(long)]
    pub seed: Option<String>,
    /// hex (the digest), or u64 (the integer of vLLM's KV events and llm-d's keys)
    /// [default: the input's `format`, else hex].
    #[arg(long)]
    pub format: Option<String>,
    /// Request file; `-` or nothing reads standard input.
    pub file: Option<String>,
    #[command(flatten)]
    pub model: ModelArgs,
}

fn default_options() -> Result<HashRequest, RequestError> {
    parse_json(b"{}")
}

/// The hashes, the number of tokens hashed and the block size.
fn hash(args: &HashArgs, input: &[u8]) -> Result<(serde_json::Value, usize, usize), RequestError> {
    let mut req: HashRequest = if args.render {
        let models = args
            .model
            .load()
            .map_err(|e| RequestError::invalid("model", e.to_string()))?;
        let chat: ChatRequest = parse_json(input)?;
        let model = models.get(chat.model.as_deref())?;
        let rendered = render_chat_prompt(&model, &chat, &args.model.render_options(), None)?;
        let opts = match chat.return_block_hashes {
            Some(r) => r,
            None => default_options()?,
        };
        opts.for_rendered(
            std::sync::Arc::unwrap_or_clone(rendered.token_ids),
            chat.cache_salt.as_deref(),
            &model.name,
        )
    } else {
        parse_json(input)?
    };
    if let Some(a) = &args.algorithm {
        req.algorithm = a.clone();
    }
    if let Some(b) = args.block_size {
        req.block_size = b;
    }
    if let Some(s) = &args.seed {
        req.seed = Some(s.clone());
    }
    if let Some(f) = &args.format {
        req.format = f.clone();
    }
    let out = hashing::compute(&req)?;
    let tokens = req.token_ids.as_ref().map_or(0, Vec::len);
    Ok((
        serde_json::to_value(out).unwrap_or_default(),
        tokens,
        req.block_size,
    ))
}

pub fn run(args: HashArgs) -> anyhow::Result<i32> {
    let input = super::read_input(args.file.as_deref())?;
    let (value, code) = match hash(&args, &input) {
        Ok((v, tokens, block)) => {
            if v["num_full_blocks"] == 0 {
                // Not an error, but an empty list alone reads like one.
                eprintln!(
                    "note: {tokens} tokens make no full block of {block}: only full blocks \
                     are hashed (--block-size)"
                );
            }
            (v, 0)
        }
        Err(e) => (ApiError::from(e).body(), 1),
    };
    println!("{value}");
    Ok(code)
}
