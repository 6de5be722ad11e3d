//! `llm-render serve`: the HTTP API (docs/api.md) on the given models, or on the embedded
//! default.
//!
//! Every flag can also be set through the environment, `LLM_RENDER_<FLAG>` (the flag's name
//! in upper case, `-` as `_`; `--derender-state-key` is `LLM_RENDER_STATE_KEY`); a flag
//! given on the command line wins. Repeatable flags take a comma-separated list there.
//!
//! Startup, in order: flag values are checked (a bad one exits 2, as clap's own errors);
//! the address is bound (a port in use fails now, before anything loads); the models load;
//! the socket listens and the server serves. Any failure after the checks exits 1.

use super::args::{ModelArgs, ParserArgs};
use crate::render::RenderOptions;
use crate::server::{self, AppState, ServerConfig};
use clap::builder::BoolishValueParser;
use clap::{Args, ValueEnum};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1", env = "LLM_RENDER_HOST")]
    pub host: String,
    /// Port to listen on.
    #[arg(long, default_value_t = 8000, env = "LLM_RENDER_PORT")]
    pub port: u16,
    /// Largest accepted request body; larger bodies get a 413 (read on and discarded first,
    /// boundedly, so that clients that write before they read see it).
    #[arg(long, default_value_t = 32 * 1024 * 1024, env = "LLM_RENDER_MAX_BODY_BYTES")]
    pub max_body_bytes: usize,
    /// Per-request time limit: a body that has not arrived by then gets a 408, a request
    /// slower than it in all gets a 504.
    #[arg(long, default_value_t = 30.0, env = "LLM_RENDER_REQUEST_TIMEOUT_SECS")]
    pub request_timeout_secs: f64,
    /// Closes a connection whose next request head has not fully arrived this long after
    /// the server began to wait for it: idle keep-alive connections and slow-header clients
    /// (0: never).
    #[arg(
        long,
        default_value_t = 30.0,
        env = "LLM_RENDER_HEADER_READ_TIMEOUT_SECS"
    )]
    pub header_read_timeout_secs: f64,
    /// Requests served at once; more get an immediate 503.
    #[arg(long, default_value_t = 512, env = "LLM_RENDER_MAX_CONCURRENCY")]
    pub max_concurrency: usize,
    /// Bodies up to this size render inline on the async worker; larger ones (and
    /// request-supplied templates) on the blocking pool.
    #[arg(long, default_value_t = 64 * 1024, env = "LLM_RENDER_INLINE_MAX_BYTES")]
    pub inline_max_bytes: usize,
    /// Offloaded renders (large bodies: images, long prompts) run at once; more wait for a
    /// slot within the request timeout [default: the number of cores].
    #[arg(long, env = "LLM_RENDER_MAX_BLOCKING_RENDERS")]
    pub max_blocking_renders: Option<usize>,
    /// How requests are scheduled on cores. `per-core`: one single-threaded runtime per
    /// worker, each connection served by one worker (fewest open connections first), with no
    /// cross-core wakeups: less CPU per request (docs/performance.md). `work-stealing`:
    /// tokio's multi-thread runtime, which balances requests instead of connections.
    #[arg(long, value_enum, default_value_t = RuntimeKind::PerCore, env = "LLM_RENDER_RUNTIME")]
    pub runtime: RuntimeKind,
    /// Milliseconds that memory the server frees is kept for reuse before it is returned to
    /// the OS; -1: kept for good. The allocator's own 1 s costs more CPU per chat turn in
    /// page faults (docs/performance.md).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true, env = "LLM_RENDER_MEMORY_RELEASE_MS")]
    pub memory_release_ms: i64,
    /// Worker threads serving connections [default: the cores this process may use].
    #[arg(long, env = "LLM_RENDER_WORKERS")]
    pub workers: Option<usize>,
    /// Log format on stderr; the level comes from RUST_LOG (default `info`). Text is
    /// coloured only on a terminal (and without NO_COLOR); JSON is one object per line, the
    /// event's fields at the top level.
    #[arg(long, value_enum, default_value_t = LogFormat::Text, env = "LLM_RENDER_LOG_FORMAT")]
    pub log_format: LogFormat,
    /// Log one line per request (method, path, status, duration_ms, bytes_in, bytes_out) at
    /// INFO on the `llm_render::access` target.
    #[arg(long, env = "LLM_RENDER_ACCESS_LOG", value_parser = BoolishValueParser::new())]
    pub access_log: bool,
    /// Export a trace span per request of the work routes (render, tokenize, derender, the
    /// front door) to this OpenTelemetry collector, as vLLM's flag of that name: OTLP/gRPC
    /// (`host:4317`), or OTLP/HTTP (`http://host:4318/v1/traces`) with
    /// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf. A request's `traceparent` header
    /// makes its span a child of the caller's. Off by default.
    #[arg(long, env = "LLM_RENDER_OTLP_TRACES_ENDPOINT")]
    pub otlp_traces_endpoint: Option<String>,
    /// After SIGTERM or Ctrl-C, seconds the server goes on accepting and serving, with
    /// /health answering 503, so load balancers stop sending before the listener closes.
    #[arg(long, default_value_t = 5.0, env = "LLM_RENDER_DRAIN_DELAY_SECS")]
    pub drain_delay_secs: f64,
    /// Seconds from SIGTERM or Ctrl-C to the exit, at most: connections still open then are
    /// cut (the drain delay included; a second signal exits at once).
    #[arg(long, default_value_t = 25.0, env = "LLM_RENDER_DRAIN_TIMEOUT_SECS")]
    pub drain_timeout_secs: f64,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub parsers: ParserArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// The sidecar: the engine behind `/v1/chat/completions` and `/v1/completions`.
#[derive(Debug, Args)]
pub struct EngineArgs {
    /// Base URL of a token-in/token-out engine (`http://127.0.0.1:8100`). Set, the server is
    /// also the engine's OpenAI front door: `/v1/chat/completions`, `/v1/completions`,
    /// `/v1/messages` and `/v1/responses` render, generate on the engine and derender in one
    /// hop.
    #[arg(long, env = "LLM_RENDER_ENGINE")]
    pub engine: Option<String>,
    /// The engine's API: `vllm` (`/inference/v1/generate`) or `sglang` (`/generate`).
    #[arg(long, default_value = "vllm", env = "LLM_RENDER_ENGINE_PROTOCOL")]
    pub engine_protocol: String,
    /// The engine's name for the served model, where it differs from the served name
    /// [default: the served name].
    #[arg(long, env = "LLM_RENDER_ENGINE_MODEL")]
    pub engine_model: Option<String>,
    /// Connecting to the engine takes at most this long; past it the engine counts as
    /// unreachable (503 with `Retry-After`).
    #[arg(
        long,
        default_value_t = 2.0,
        env = "LLM_RENDER_ENGINE_CONNECT_TIMEOUT_SECS"
    )]
    pub engine_connect_timeout_secs: f64,
    /// An engine that sends nothing for this long fails the request: 504 before the client
    /// has had a byte, a final error event after.
    #[arg(
        long,
        default_value_t = 60.0,
        env = "LLM_RENDER_ENGINE_STALL_TIMEOUT_SECS"
    )]
    pub engine_stall_timeout_secs: f64,
    /// Attempts again, before the client has had a byte, when the engine is unreachable or
    /// drops the request before its first event.
    #[arg(long, default_value_t = 1, env = "LLM_RENDER_ENGINE_RETRIES")]
    pub engine_retries: u32,
    /// The longest event accepted from the engine.
    #[arg(long, default_value_t = 16 << 20, env = "LLM_RENDER_ENGINE_MAX_EVENT_BYTES")]
    pub engine_max_event_bytes: usize,
    /// How often the engine's readiness is probed for `/health`.
    #[arg(
        long,
        default_value_t = 2.0,
        env = "LLM_RENDER_ENGINE_HEALTH_INTERVAL_SECS"
    )]
    pub engine_health_interval_secs: f64,
}

impl EngineArgs {
    /// The engine's settings, when `--engine` is set; checks the values, starts nothing.
    fn config(&self) -> anyhow::Result<Option<crate::engine::EngineConfig>> {
        let Some(url) = &self.engine else {
            return Ok(None);
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            anyhow::bail!("--engine must be an http:// or https:// URL, not `{url}`");
        }
        let protocol = crate::engine::protocol(&self.engine_protocol).ok_or_else(|| {
            let names: Vec<_> = crate::engine::PROTOCOLS.iter().map(|p| p.name()).collect();
            anyhow::anyhow!(
                "--engine-protocol `{}` is not one of: {}",
                self.engine_protocol,
                names.join(", ")
            )
        })?;
        let secs = |v: f64, flag: &str| {
            if v > 0.0 && v.is_finite() {
                Ok(Duration::from_secs_f64(v))
            } else {
                Err(anyhow::anyhow!(
                    "{flag} must be a positive number of seconds"
                ))
            }
        };
        let mut cfg = crate::engine::EngineConfig::new(url, protocol);
        cfg.model = self.engine_model.clone();
        cfg.connect_timeout = secs(
            self.engine_connect_timeout_secs,
            "--engine-connect-timeout-secs",
        )?;
        cfg.stall_timeout = secs(
            self.engine_stall_timeout_secs,
            "--engine-stall-timeout-secs",
        )?;
        cfg.health_interval = secs(
            self.engine_health_interval_secs,
            "--engine-health-interval-secs",
        )?;
        cfg.retries = self.engine_retries;
        cfg.max_event_bytes = self.engine_max_event_bytes.max(1024);
        Ok(Some(cfg))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RuntimeKind {
    PerCore,
    WorkStealing,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// Logs on stderr: coloured text only on a terminal (without `NO_COLOR`), or JSON lines
/// with the event's fields at the top level and never a colour code.
fn init_logging(format: LogFormat) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let colour = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(colour).try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .with_ansi(false)
            .try_init(),
    };
}

/// Every flag value `serve` checks before it starts anything.
struct Checked {
    request_timeout: Duration,
    header_read_timeout: Option<Duration>,
    drain_delay: Duration,
    drain_timeout: Duration,
    workers: usize,
    engine: Option<crate::engine::EngineConfig>,
    /// `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, checked when tracing is on.
    otlp_protocol: Option<String>,
}

/// Refuses flag values that cannot work, naming the flag.
fn check(args: &ServeArgs) -> anyhow::Result<Checked> {
    let secs = |v: f64, flag: &str| {
        Duration::try_from_secs_f64(v)
            .map_err(|_| anyhow::anyhow!("{flag} must be a number of seconds, 0 or more"))
    };
    let header_read_timeout = secs(args.header_read_timeout_secs, "--header-read-timeout-secs")?;
    if args.memory_release_ms < -1 {
        anyhow::bail!("--memory-release-ms must be -1 (never) or a number of milliseconds");
    }
    let request_timeout = secs(args.request_timeout_secs, "--request-timeout-secs")?;
    if request_timeout.is_zero() {
        anyhow::bail!("--request-timeout-secs must be a positive number");
    }
    let drain_delay = secs(args.drain_delay_secs, "--drain-delay-secs")?;
    let drain_timeout = secs(args.drain_timeout_secs, "--drain-timeout-secs")?;
    if drain_delay > drain_timeout {
        anyhow::bail!(
            "--drain-delay-secs ({}) must not be longer than --drain-timeout-secs ({}), which bounds the whole shutdown",
            args.drain_delay_secs,
            args.drain_timeout_secs
        );
    }
    let workers = match args.workers {
        Some(0) => anyhow::bail!("--workers must be at least 1"),
        Some(n) => n,
        None => crate::server::available_cores(),
    };
    args.parsers.check()?;
    Ok(Checked {
        request_timeout,
        header_read_timeout: (!header_read_timeout.is_zero()).then_some(header_read_timeout),
        drain_delay,
        drain_timeout,
        workers,
        engine: args.engine.config()?,
        otlp_protocol: otlp_protocol(args)?,
    })
}

/// Runs `serve`. A bad flag value is an `Err` (exit 2, from `main`); a failure once the
/// server starts (port in use, a model that does not load) is logged and exits 1.
pub fn run(args: ServeArgs) -> anyhow::Result<i32> {
    let checked = check(&args)?;
    init_logging(args.log_format);
    match serve(args, checked) {
        Ok(()) => Ok(0),
        Err(e) => {
            tracing::error!("{e:#}");
            Ok(1)
        }
    }
}

fn serve(args: ServeArgs, mut checked: Checked) -> anyhow::Result<()> {
    // The port first: taken, it fails now rather than after the models have loaded.
    let bound = server::bind(&args.host, args.port)?;
    tracing::info!(address = %bound.local_addr(), "address bound; loading models");
    args.model.check()?;
    let loading = std::time::Instant::now();
    let models = args.model.load()?;
    for m in models.models() {
        args.parsers.check_model(m)?;
    }
    for m in models.models() {
        // Each model's own load time (loads may overlap); the total is the line below.
        let load_ms = m.load_time.as_millis() as u64;
        tracing::info!(model = %m.name, source = %m.source, templates = ?m.templates, max_model_len = ?m.max_model_len, tokenizer = ?m.encoder.backend(), load_ms, "loaded model");
        warn_of_gaps(m);
    }
    tracing::info!(
        models = models.models().len(),
        total_ms = loading.elapsed().as_millis() as u64,
        "models loaded"
    );
    let engine = match checked.engine.take() {
        Some(cfg) => {
            let engine = crate::engine::Engine::new(cfg).map_err(|e| anyhow::anyhow!(e))?;
            engine.watch_health()?;
            Some(engine)
        }
        None => None,
    };
    let traces = match &args.otlp_traces_endpoint {
        Some(endpoint) => {
            let t = server::otel::Traces::start(endpoint, checked.otlp_protocol.as_deref())?;
            let protocol = checked.otlp_protocol.as_deref().unwrap_or("grpc");
            tracing::info!(endpoint = %endpoint, protocol, "exporting trace spans over OTLP");
            Some(std::sync::Arc::new(t))
        }
        None => None,
    };
    let config = ServerConfig {
        traces: traces.clone(),
        ..server_config(&args, &checked, engine)
    };
    if let Some(e) = &config.engine {
        tracing::info!(url = %e.config.url, protocol = e.wire().name(), "front door on: /v1/chat/completions, /v1/completions, /v1/messages and /v1/responses go to the engine");
    }
    let state = AppState::new(models, config)?;
    crate::protocol::fast_json::warm();
    crate::server::memory::set_release_delay(args.memory_release_ms);
    let workers = checked.workers;
    let addr = bound.local_addr();
    let listener = bound.listen()?;
    tracing::info!(runtime = ?args.runtime, workers, version = env!("CARGO_PKG_VERSION"), git_sha = env!("LLM_RENDER_GIT_SHA"), "listening on http://{addr}");
    match args.runtime {
        RuntimeKind::PerCore => server::serve_per_core(listener, state, workers)?,
        RuntimeKind::WorkStealing => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_all()
                .build()?;
            let served = rt.block_on(async move {
                listener.set_nonblocking(true)?;
                let listener = tokio::net::TcpListener::from_std(listener)?;
                server::serve_work_stealing(listener, state).await
            });
            // Renders of requests already gone may still run on the blocking pool: they stop
            // at their next cancellation check, unwaited.
            rt.shutdown_background();
            served?;
        }
    }
    if let Some(t) = traces {
        t.shutdown();
    }
    tracing::info!("stopped");
    Ok(())
}

/// `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` when tracing is on: `grpc` or `http/protobuf`.
fn otlp_protocol(args: &ServeArgs) -> anyhow::Result<Option<String>> {
    if args.otlp_traces_endpoint.is_none() {
        return Ok(None);
    }
    match std::env::var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") {
        Err(_) => Ok(None),
        Ok(p) if p == "grpc" || p == "http/protobuf" => Ok(Some(p)),
        Ok(p) => Err(server::otel::OtelError::Protocol(p).into()),
    }
}

/// The configuration `serve` runs with, from its flags (`checked` from [`check`]).
fn server_config(
    args: &ServeArgs,
    checked: &Checked,
    engine: Option<std::sync::Arc<crate::engine::Engine>>,
) -> ServerConfig {
    ServerConfig {
        max_body_bytes: args.max_body_bytes,
        request_timeout: checked.request_timeout,
        header_read_timeout: checked.header_read_timeout,
        max_concurrency: args.max_concurrency,
        inline_max_bytes: args.inline_max_bytes,
        max_blocking_renders: args
            .max_blocking_renders
            .unwrap_or_else(crate::server::available_cores),
        render: {
            let (reasoning_parser, tool_call_parser) = args.parsers.settings();
            RenderOptions {
                reasoning_parser,
                tool_call_parser,
                ..args.model.render_options()
            }
        },
        derender: crate::derender::DerenderConfig {
            default_chat_template_kwargs: args.model.default_kwargs(),
            ..args.parsers.derender_config()
        },
        engine,
        access_log: args.access_log,
        traces: None,
        drain_delay: checked.drain_delay,
        drain_timeout: checked.drain_timeout,
    }
}

/// What `serve` would serve, built in process from the same flags (`llm-render serve …` as
/// [`crate::cli::Cli`] parses it): the models loaded and the configuration, no socket,
/// engine, logging or thread; `AppState::new` turns them into a server state. For callers
/// that answer requests through [`server::respond`] (the fuzz targets in `fuzz/`, which
/// load models before AFL++ forks and start threads after). An `--engine` flag is refused.
pub fn in_process(args: ServeArgs) -> anyhow::Result<(crate::model::ModelRegistry, ServerConfig)> {
    let checked = check(&args)?;
    if checked.engine.is_some() {
        anyhow::bail!("--engine is not served in process");
    }
    args.model.check()?;
    let models = args.model.load()?;
    for m in models.models() {
        args.parsers.check_model(m)?;
    }
    let config = server_config(&args, &checked, None);
    Ok((models, config))
}

/// Warns, one line each, of what a model lacks that requests will miss.
fn warn_of_gaps(m: &crate::model::Model) {
    if let crate::tokenize::Backend::Reference(reason) = m.encoder.backend() {
        tracing::warn!(model = %m.name, "fast tokenizer off, using tokenizers: {reason}");
    }
    if let Some(reason) = m.decoder.off_reason() {
        tracing::info!(model = %m.name, "decoding through tokenizers: {reason}");
    }
    // A Harmony model (gpt-oss) renders chats without a template.
    if m.templates.is_empty() && m.harmony.is_none() {
        tracing::warn!(model = %m.name, "no chat template: chat requests get a 400 (give one with --chat-template, or render completions)");
    }
    if m.eos_token_ids.is_empty() {
        tracing::warn!(model = %m.name, "no EOS token ids (generation_config.json's eos_token_id, tokenizer_config.json's eos_token): derender stops at no token of its own");
    }
}
