//! Command line: `serve`, `render`, `derender`, `hash`, `template-diff`, `audit` and
//! `health`, a file each. Every subcommand but `health` takes `--model [NAME=]PATH`
//! (repeatable) or uses the embedded default model; the option groups they share are in
//! `args.rs`, shown in `--help` after each command's own options.

mod args;
mod audit;
mod derender_cmd;
mod hash_cmd;
mod health_cmd;
mod render_cmd;
mod serve_cmd;
pub mod template_diff;

pub use args::{ImageArgs, ModelArgs, ParserArgs};
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "llm-render",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("LLM_RENDER_GIT_SHA"), ")"),
    about = "CPU render tier for LLM serving: chat template + tokenization, HF-exact"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API (docs/api.md) on the given models, or on the embedded default (qwen3).
    Serve(serve_cmd::ServeArgs),
    /// Render one request (or a JSON-lines batch) and print what the HTTP route returns.
    Render(render_cmd::RenderArgs),
    /// Turn generated token IDs into a chat.completion (what the derender route returns).
    Derender(derender_cmd::DerenderArgs),
    /// Print prefix-cache block hashes (vLLM or llm-d) for token IDs or a rendered request.
    Hash(hash_cmd::HashArgs),
    /// Does turn 2 reuse turn 1's prefix cache? Or: do two templates render alike?
    TemplateDiff(template_diff::TemplateDiffArgs),
    /// The bytes chat requests become at each stage and link (JSON, prompt, token IDs, image
    /// patches, embeddings, KV cache): one request, or a traffic sample's percentiles.
    Audit(audit::AuditArgs),
    /// Ask a running server's /health; exit 0 when it answers 200 (the container's probe).
    Health(health_cmd::HealthArgs),
}

/// Reads a request file, or standard input for `None` and `-`.
fn read_input(file: Option<&str>) -> anyhow::Result<Vec<u8>> {
    use std::io::Read;
    match file {
        None | Some("-") => {
            let mut input = Vec::new();
            std::io::stdin().read_to_end(&mut input)?;
            Ok(input)
        }
        Some(path) => std::fs::read(path).map_err(|e| anyhow::anyhow!("{path}: {e}")),
    }
}

/// The models and configuration `llm-render serve <flags>` would serve, built in process:
/// its flags and defaults, its models loaded, no socket or thread (see
/// `serve_cmd::in_process`). `server::AppState::new` makes them a server state, which
/// answers requests through [`crate::server::respond`].
pub fn serve_in_process(
    flags: &[&str],
) -> anyhow::Result<(crate::model::ModelRegistry, crate::server::ServerConfig)> {
    let argv = ["llm-render", "serve"].iter().chain(flags);
    match Cli::try_parse_from(argv)?.command {
        Command::Serve(args) => serve_cmd::in_process(args),
        _ => anyhow::bail!("not a serve command line"),
    }
}

/// Runs the CLI; returns the process exit code.
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Serve(args) => serve_cmd::run(args),
        Command::Render(args) => render_cmd::run(args),
        Command::Hash(args) => hash_cmd::run(args),
        Command::Derender(args) => derender_cmd::run(args),
        Command::TemplateDiff(args) => template_diff::run(args),
        Command::Audit(args) => audit::run(args),
        Command::Health(args) => health_cmd::run(args),
    }
}
