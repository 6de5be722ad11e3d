//! `llm-render derender [--completion] [FILE|-]`: what `POST /v1/chat/completions/derender`
//! (or `/v1/completions/derender`) returns, without HTTP.

use super::{ModelArgs, ParserArgs};
use crate::derender::{derender, DerenderRequest, Kind};
use crate::error::RequestError;
use crate::protocol::parse_json;
use crate::server::ApiError;
use clap::Args;

#[derive(Debug, Args)]
pub struct DerenderArgs {
    /// Derender a text completion (`completion_request`) instead of a chat completion.
    #[arg(long)]
    pub completion: bool,
    /// Request file; `-` or nothing reads standard input.
    pub file: Option<String>,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub parsers: ParserArgs,
}

pub fn run(args: DerenderArgs) -> anyhow::Result<i32> {
    args.parsers.check()?;
    let models = args.model.load()?;
    for m in models.models() {
        args.parsers.check_model(m)?;
    }
    let cfg = crate::derender::DerenderConfig {
        default_chat_template_kwargs: args.model.default_kwargs(),
        ..args.parsers.derender_config()
    };
    let kind = if args.completion {
        Kind::Completion
    } else {
        Kind::Chat
    };
    let input = super::read_input(args.file.as_deref())?;
    let result = parse_json::<DerenderRequest>(&input).and_then(|req| {
        let model = models.get(req.model.as_deref())?;
        derender(&model, &req, &cfg, kind)
    });
    let (value, code) = match result {
        Ok(v) => (v, 0),
        Err(e) => (ApiError::from(e as RequestError).body(), 1),
    };
    println!("{value}");
    Ok(code)
}
