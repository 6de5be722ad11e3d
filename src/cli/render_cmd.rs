//! `llm-render render [--completion] [--jsonl] [FILE|-]`: the render routes without HTTP.
//! Prints exactly the JSON the HTTP route returns; a failed request prints the route's
//! error JSON and makes the exit code 1.

use super::ModelArgs;
use crate::error::RequestError;
use crate::model::ModelRegistry;
use crate::protocol::{parse_json, ChatRequest, CompletionRequest};
use crate::render::{render_chat, render_completion, RenderOptions};
use crate::server::ApiError;
use clap::Args;
use std::io::Write;

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Treat the input as a completion request (/v1/completions/render).
    #[arg(long)]
    pub completion: bool,
    /// The input holds one request per line; one output line per request.
    #[arg(long)]
    pub jsonl: bool,
    /// Request file; `-` or nothing reads standard input.
    pub file: Option<String>,
    #[command(flatten)]
    pub model: ModelArgs,
}

fn render_one(
    models: &ModelRegistry,
    opts: &RenderOptions,
    completion: bool,
    body: &[u8],
) -> Result<serde_json::Value, RequestError> {
    if completion {
        let req: CompletionRequest = parse_json(body)?;
        let model = models.get(req.model.as_deref())?;
        Ok(serde_json::to_value(render_completion(&model, &req)?.0).unwrap_or_default())
    } else {
        let req: ChatRequest = parse_json(body)?;
        let model = models.get(req.model.as_deref())?;
        Ok(serde_json::to_value(render_chat(&model, &req, opts, None)?.0).unwrap_or_default())
    }
}

/// The error body the HTTP route would send.
fn error_json(e: RequestError) -> serde_json::Value {
    ApiError::from(e).body()
}

pub fn run(args: RenderArgs) -> anyhow::Result<i32> {
    let models = args.model.load()?;
    let opts = args.model.render_options();
    let input = super::read_input(args.file.as_deref())?;
    let bodies: Vec<&[u8]> = if args.jsonl {
        input
            .split(|b| *b == b'\n')
            .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
            .collect()
    } else {
        vec![&input]
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut failed = 0;
    for body in bodies {
        let value = match render_one(&models, &opts, args.completion, body) {
            Ok(v) => v,
            Err(e) => {
                failed += 1;
                error_json(e)
            }
        };
        serde_json::to_writer(&mut out, &value)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(if failed > 0 { 1 } else { 0 })
}
