//! Command line: `serve`, `render`, `derender`, `hash`, `template-diff` and `audit`. Every
//! subcommand takes `--model [NAME=]PATH` (repeatable) or uses the embedded default model.

mod audit_cmd;
mod derender_cmd;
mod hash_cmd;
mod render_cmd;
pub mod template_diff;

use crate::model::{LoadOptions, ModelRegistry};
use crate::render::RenderOptions;
use crate::server::{self, AppState, ServerConfig};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(
    name = "llm-render",
    version,
    about = "CPU render tier for LLM serving: chat template + tokenization, HF-exact"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API (api.md) on the given models, or on the embedded default (qwen3).
    Serve(ServeArgs),
    /// Render one request (or a JSON-lines batch) and print what the HTTP route returns.
    Render(render_cmd::RenderArgs),
    /// Turn generated token IDs into a chat.completion (what the derender route returns).
    Derender(derender_cmd::DerenderArgs),
    /// Print prefix-cache block hashes (vLLM or llm-d) for token IDs or a rendered request.
    Hash(hash_cmd::HashArgs),
    /// Does turn 2 reuse turn 1's prefix cache? Or: do two templates render alike?
    TemplateDiff(template_diff::TemplateDiffArgs),
    /// The bytes a chat request becomes at each hop: JSON, prompt, token IDs, image pixels and
    /// patches, embeddings, KV cache.
    Audit(audit_cmd::AuditArgs),
}

/// Model and template options shared by every subcommand.
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// A Hugging Face snapshot folder, optionally named: NAME=PATH. Repeatable. Without it,
    /// the embedded Qwen3 tokenizer and template are served as `qwen3`.
    #[arg(long = "model", value_name = "[NAME=]PATH")]
    pub models: Vec<String>,
    /// Template instruction budget per render (minijinja fuel); 0 disables the bound.
    #[arg(long, default_value_t = 50_000_000, env = "LLM_RENDER_TEMPLATE_FUEL")]
    pub template_fuel: u64,
    /// Override the context length read from config.json; longer prompts get a 400.
    #[arg(long)]
    pub max_model_len: Option<u64>,
    /// Always tokenize with `tokenizers`, never with the fast encoder.
    #[arg(long)]
    pub no_fast_tokenizer: bool,
    /// Always render chat templates with minijinja, never with the Rust renderings of known
    /// templates (Qwen3's, DeepSeek-V3's), which write the same bytes several times faster.
    #[arg(long)]
    pub no_native_templates: bool,
    /// Budget of the fast encoder's segment cache (MiB); 0 turns it off.
    #[arg(long, default_value_t = 256, env = "LLM_RENDER_SEGMENT_CACHE_MB")]
    pub segment_cache_mb: usize,
    /// Budget of the prompt cache (MiB): recent prompts and their IDs, so the next turn of a
    /// chat copies the IDs of the history it re-sends; 0 turns it off.
    #[arg(long, default_value_t = 64, env = "LLM_RENDER_PROMPT_CACHE_MB")]
    pub prompt_cache_mb: usize,
    /// Images one request may carry; more get a 400.
    #[arg(long, default_value_t = 16)]
    pub max_images_per_request: usize,
    /// Largest image tensors of one request, in bytes before base64: the uint8 `kwargs_data`
    /// plus `mm_tensors` (a 1080p photo is ~13 MB of uint8 and ~50 MB of float32); larger
    /// requests get a 400 that suggests `output_dtype: "none"` or fewer images.
    #[arg(long, default_value_t = 512 << 20)]
    pub max_mm_tensor_bytes: u64,
    /// Largest image accepted, in pixels (Pillow's bomb guard by default); checked from the
    /// header before decoding.
    #[arg(long, default_value_t = 89_478_485)]
    pub max_image_pixels: u64,
    /// Largest image side accepted, in pixels.
    #[arg(long, default_value_t = 32_768)]
    pub max_image_side: u32,
    /// Hosts `http(s)` image URLs may name, exactly (repeatable or comma-separated); every
    /// redirect is checked too. Empty: http(s) images are refused.
    #[arg(long, value_delimiter = ',')]
    pub allowed_media_domains: Vec<String>,
    /// Let allowed hosts resolve to loopback/private/link-local addresses (an internal image
    /// store). Off: such addresses are refused after DNS resolution.
    #[arg(long)]
    pub allow_private_media_hosts: bool,
    /// Time limit for fetching one image.
    #[arg(long, default_value_t = 10.0)]
    pub media_fetch_timeout_secs: f64,
    /// Largest image fetched over http(s), in bytes.
    #[arg(long, default_value_t = 20 * 1024 * 1024)]
    pub max_media_bytes: u64,
    /// Element type of `mm_tensors`, or `none` to send only vLLM's `kwargs_data` (requests
    /// may override with `mm_processor_kwargs.output_dtype`).
    #[arg(long, value_enum, default_value_t = crate::render::TensorDtype::Float32)]
    pub mm_tensor_dtype: crate::render::TensorDtype,
    /// Reasoning parser for derender: deepseek_r1, qwen3, mistral, auto (by model name) or none.
    #[arg(long, default_value = "auto")]
    pub reasoning_parser: String,
    /// Tool-call parser for derender (vLLM names: hermes, llama3_json, mistral, deepseek_v3,
    /// deepseek_v31, qwen3_coder, pythonic, kimi_k2, glm45), auto (by model name) or none.
    /// Applies to requests that declare tools.
    #[arg(long, default_value = "auto")]
    pub tool_call_parser: String,
    /// Secret that signs streaming derender states. Replicas with the same secret accept
    /// each other's states; unset, each process draws a random one.
    #[arg(long, env = "LLM_RENDER_STATE_KEY", hide_env_values = true)]
    pub derender_state_key: Option<String>,
    /// Stream states kept in memory for the fast path (0: none).
    #[arg(long, default_value_t = 16384)]
    pub derender_state_cache: usize,
    /// Serve `file://` image URLs from below this folder (resolved, symlinks included).
    #[arg(long)]
    pub allowed_local_media_path: Option<std::path::PathBuf>,
    /// Accept `chat_template` in requests (compiled per request). Only for trusted clients.
    #[arg(long)]
    pub trust_request_chat_template: bool,
    /// Accept image processor settings in requests (`mm_processor_kwargs.min_pixels` and
    /// `max_pixels`), as vLLM's flag of the same name: they change how much work an image
    /// costs, so only for trusted clients.
    #[arg(long)]
    pub trust_request_mm_kwargs: bool,
    /// Image processor bounds for every request, as vLLM's flag: a JSON object with
    /// `min_pixels` and/or `max_pixels` (e.g. '{"max_pixels": 1003520}' caps an image at
    /// 1,280 tokens). A request's own (with --trust-request-mm-kwargs) win.
    #[arg(long, value_parser = parse_processor_bounds)]
    pub mm_processor_kwargs: Option<crate::render::multimodal::Bounds>,
}

fn parse_processor_bounds(s: &str) -> Result<crate::render::multimodal::Bounds, String> {
    crate::render::multimodal::Bounds::parse_flag(s)
}

impl ModelArgs {
    /// Refuses unknown parser names at startup.
    pub fn check_parsers(&self) -> anyhow::Result<()> {
        let rp = self.reasoning_parser.as_str();
        if !matches!(rp, "auto" | "none") && llm_render_parsers::reasoning_parser(rp).is_none() {
            anyhow::bail!(
                "--reasoning-parser {rp:?}: expected auto, none or one of {:?}",
                llm_render_parsers::reasoning_parser_names()
            );
        }
        let tp = self.tool_call_parser.as_str();
        if !matches!(tp, "auto" | "none") && !llm_render_parsers::tool_parser_names().contains(&tp)
        {
            anyhow::bail!(
                "--tool-call-parser {tp:?}: expected auto, none or one of {:?}",
                llm_render_parsers::tool_parser_names()
            );
        }
        Ok(())
    }

    pub fn derender_config(&self) -> crate::derender::DerenderConfig {
        crate::derender::DerenderConfig {
            reasoning_parser: self.reasoning_parser.clone(),
            tool_call_parser: self.tool_call_parser.clone(),
            states: std::sync::Arc::new(crate::derender::StateCodec::new(
                self.derender_state_key.as_deref(),
                self.derender_state_cache,
            )),
        }
    }

    fn fuel(&self) -> Option<u64> {
        (self.template_fuel > 0).then_some(self.template_fuel)
    }

    pub fn load(&self) -> anyhow::Result<ModelRegistry> {
        Ok(ModelRegistry::load(&self.models, &self.load_options())?)
    }

    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            template_fuel: self.fuel(),
            max_model_len: self.max_model_len,
            fast_tokenizer: !self.no_fast_tokenizer,
            segment_cache_bytes: self.segment_cache_mb * 1024 * 1024,
            prompt_cache_bytes: self.prompt_cache_mb * 1024 * 1024,
        }
    }

    /// The http(s) image fetcher, when `--allowed-media-domains` names any host.
    fn fetcher(&self) -> Option<crate::media::Fetcher> {
        if self.allowed_media_domains.is_empty() {
            return None;
        }
        let policy = crate::media::FetchPolicy {
            allowed_domains: self
                .allowed_media_domains
                .iter()
                .map(|d| d.trim().to_ascii_lowercase())
                .collect(),
            allow_private: self.allow_private_media_hosts,
            timeout: std::time::Duration::from_secs_f64(
                self.media_fetch_timeout_secs.clamp(0.1, 600.0),
            ),
            max_bytes: self.max_media_bytes,
        };
        match crate::media::Fetcher::new(policy) {
            Ok(f) => Some(f),
            Err(e) => {
                tracing::error!("cannot build the image fetcher ({e}); http(s) images are refused");
                None
            }
        }
    }

    pub fn render_options(&self) -> RenderOptions {
        RenderOptions {
            trust_request_chat_template: self.trust_request_chat_template,
            trust_request_mm_kwargs: self.trust_request_mm_kwargs,
            processor_bounds: self.mm_processor_kwargs.unwrap_or_default(),
            template_fuel: self.fuel(),
            native_templates: !self.no_native_templates,
            max_images_per_request: self.max_images_per_request,
            max_mm_tensor_bytes: self.max_mm_tensor_bytes,
            decode_limits: crate::media::DecodeLimits {
                max_pixels: self.max_image_pixels,
                max_side: self.max_image_side,
            },
            url_policy: crate::media::UrlPolicy {
                // Canonicalized once here; a folder that does not exist allows nothing.
                allowed_local_media_path: self
                    .allowed_local_media_path
                    .as_ref()
                    .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.join("\0missing"))),
                max_file_bytes: 64 << 20,
            },
            fetcher: self.fetcher(),
            tensor_dtype: self.mm_tensor_dtype,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long, default_value = "127.0.0.1", env = "LLM_RENDER_HOST")]
    pub host: String,
    #[arg(long, default_value_t = 8000, env = "LLM_RENDER_PORT")]
    pub port: u16,
    /// Largest accepted request body; larger bodies get a 413.
    #[arg(long, default_value_t = 32 * 1024 * 1024)]
    pub max_body_bytes: usize,
    /// Per-request time limit; slower requests get a 504.
    #[arg(long, default_value_t = 30.0)]
    pub request_timeout_secs: f64,
    /// Closes a connection whose next request head has not fully arrived this long after
    /// the server began to wait for it: idle keep-alive connections and slow-header clients
    /// (0: never).
    #[arg(long, default_value_t = 30.0)]
    pub header_read_timeout_secs: f64,
    /// Requests served at once; more get an immediate 503.
    #[arg(long, default_value_t = 512)]
    pub max_concurrency: usize,
    /// Bodies up to this size render inline on the async worker; larger ones (and
    /// request-supplied templates) on the blocking pool.
    #[arg(long, default_value_t = 64 * 1024)]
    pub inline_max_bytes: usize,
    /// Offloaded renders (large bodies: images, long prompts) run at once; more wait for a
    /// slot within the request timeout. Default: the number of cores.
    #[arg(long)]
    pub max_blocking_renders: Option<usize>,
    /// How requests are scheduled on cores. `per-core`: one single-threaded runtime per
    /// worker, each connection served by one worker (least open connections first); no
    /// cross-core wakeups, ~15% less CPU per request. `work-stealing`: tokio's multi-thread
    /// runtime, which balances requests instead of connections.
    #[arg(long, value_enum, default_value_t = RuntimeKind::PerCore)]
    pub runtime: RuntimeKind,
    /// Milliseconds that memory the server frees is kept for reuse before it is returned to
    /// the OS; -1: kept for good. Returning it after 1 s (the allocator's default) measured
    /// 12-15% more CPU per chat turn, from page faults.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub memory_release_ms: i64,
    /// Worker threads serving connections. Default: the cores this process may use.
    #[arg(long)]
    pub workers: Option<usize>,
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RuntimeKind {
    PerCore,
    WorkStealing,
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
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

/// Runs the CLI; returns the process exit code.
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Serve(args) => serve(args).map(|_| 0),
        Command::Render(args) => render_cmd::run(args),
        Command::Hash(args) => hash_cmd::run(args),
        Command::Derender(args) => derender_cmd::run(args),
        Command::TemplateDiff(args) => template_diff::run(args),
        Command::Audit(args) => audit_cmd::run(args),
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    init_logging(args.log_format);
    if !(args.header_read_timeout_secs >= 0.0 && args.header_read_timeout_secs.is_finite()) {
        anyhow::bail!("--header-read-timeout-secs must be a number of seconds, 0 or more");
    }
    if args.memory_release_ms < -1 {
        anyhow::bail!("--memory-release-ms must be -1 (never) or a number of milliseconds");
    }
    if !(args.request_timeout_secs > 0.0 && args.request_timeout_secs.is_finite()) {
        anyhow::bail!("--request-timeout-secs must be a positive number");
    }
    if let Some(dir) = &args.model.allowed_local_media_path {
        if !dir.is_dir() {
            anyhow::bail!("--allowed-local-media-path {}: not a folder", dir.display());
        }
    }
    args.model.check_parsers()?;
    let loading = std::time::Instant::now();
    let models = args.model.load()?;
    let load_ms = loading.elapsed().as_millis() as u64;
    for m in models.models() {
        tracing::info!(model = %m.name, source = %m.source, templates = ?m.templates, max_model_len = ?m.max_model_len, tokenizer = ?m.encoder.backend(), load_ms, "loaded model");
        if let crate::tokenize::Backend::Reference(reason) = m.encoder.backend() {
            tracing::warn!(model = %m.name, "fast tokenizer off, using tokenizers: {reason}");
        }
        if let Some(reason) = m.decoder.off_reason() {
            tracing::info!(model = %m.name, "decoding through tokenizers: {reason}");
        }
    }
    let config = ServerConfig {
        max_body_bytes: args.max_body_bytes,
        request_timeout: Duration::try_from_secs_f64(args.request_timeout_secs)
            .map_err(|e| anyhow::anyhow!("--request-timeout-secs: {e}"))?,
        header_read_timeout: (args.header_read_timeout_secs > 0.0)
            .then(|| Duration::try_from_secs_f64(args.header_read_timeout_secs))
            .transpose()
            .map_err(|e| anyhow::anyhow!("--header-read-timeout-secs: {e}"))?,
        max_concurrency: args.max_concurrency,
        inline_max_bytes: args.inline_max_bytes,
        max_blocking_renders: args
            .max_blocking_renders
            .unwrap_or_else(crate::server::available_cores),
        render: args.model.render_options(),
        derender: args.model.derender_config(),
    };
    let state = AppState::new(models, config)?;
    crate::protocol::fast_json::warm();
    crate::server::memory::set_release_delay(args.memory_release_ms);
    let workers = match args.workers {
        Some(0) => anyhow::bail!("--workers must be at least 1"),
        Some(n) => n,
        None => crate::server::available_cores(),
    };
    let addr = format!("{}:{}", args.host, args.port);
    let listener = std::net::TcpListener::bind(&addr)
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    tracing::info!(runtime = ?args.runtime, workers, "listening on http://{}", listener.local_addr()?);
    match args.runtime {
        RuntimeKind::PerCore => server::serve_per_core(listener, state, workers)?,
        RuntimeKind::WorkStealing => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_all()
                .build()?;
            rt.block_on(async move {
                listener.set_nonblocking(true)?;
                let listener = tokio::net::TcpListener::from_std(listener)?;
                server::serve_work_stealing(listener, state).await
            })?;
        }
    }
    tracing::info!("stopped");
    Ok(())
}
