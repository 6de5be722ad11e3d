//! `llm-render derender [FILE|-]`: what `POST /v1/chat/completions/derender` returns, without
//! HTTP (non-streaming requests).

use super::ModelArgs;
use crate::derender::{derender_chat, DerenderRequest};
use crate::error::RenderError;
use crate::protocol::parse_json;
use crate::server::ApiError;
use clap::Args;

#[derive(Debug, Args)]
pub struct DerenderArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Request file; `-` or nothing reads standard input.
    pub file: Option<String>,
}

pub fn run(args: DerenderArgs) -> anyhow::Result<i32> {
    let models = args.model.load()?;
    let input = super::read_input(args.file.as_deref())?;
    let result = parse_json::<DerenderRequest>(&input).and_then(|req| {
        let model = models.get(req.model.as_deref())?;
        derender_chat(&model, &req, &args.model.reasoning_parser)
    });
    let (value, code) = match result {
        Ok(v) => (v, 0),
        Err(e) => (ApiError::from(e as RenderError).body(), 1),
    };
    println!("{value}");
    Ok(code)
}
