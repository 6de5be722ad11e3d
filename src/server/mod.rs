//! The HTTP tier: routing, limits, metrics and graceful shutdown.
//!
//! What a request passes through, outermost first (`dispatch.rs`): metrics and a debug log
//! line (every route) → for the work routes, one guard that answers 503 at once when
//! `--max-concurrency` requests are in flight → the body, up to `--max-body-bytes` (413),
//! within the request timeout (408) → the handler (`routes.rs`), within what is left of it
//! (504). Small bodies render inline on
//! the worker that serves the connection; large ones (images, long prompts) on the blocking
//! pool, so no request stalls a worker for long (`routes::offload`).
//!
//! Two ways to run it: [`serve_per_core`] (the default; one single-threaded runtime per
//! worker, see `transport/runtime.rs` for why) and [`serve_work_stealing`] on a tokio multi-thread
//! runtime; both serve each connection the same way, and both stop the same way: readiness
//! off, a drain delay, then every queued and open connection answered
//! (`transport/shutdown.rs`).

mod access;
mod dispatch;
mod error;
mod front;
mod metrics;
pub mod otel;
mod routes;
mod transport;

pub use dispatch::respond;
pub use error::ApiError;
pub use metrics::Metrics;
pub use transport::listener::{bind, BindError, Bound};
pub use transport::memory;
pub use transport::{serve_per_core, serve_per_core_until, serve_work_stealing};

use crate::model::ModelRegistry;
use crate::render::RenderOptions;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use transport::Deadlines;

/// Limits and switches of one server process (see `llm-render serve --help`).
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    /// A connection whose next request head has not fully arrived this long
    /// after it was awaited is closed, so idle keep-alive connections and slow-header clients
    /// do not hold a worker's sockets forever. `None`: never.
    pub header_read_timeout: Option<Duration>,
    pub max_concurrency: usize,
    /// Bodies up to this size render inline on the async worker; larger ones on the
    /// blocking pool (see `routes::offload`).
    pub inline_max_bytes: usize,
    /// Offloaded renders (large bodies: images, long prompts) that run at once; more wait
    /// for a slot (within the request timeout). CPU-bound work beyond the core count only
    /// adds memory: a 1080p image render holds ~200 MB while it runs.
    pub max_blocking_renders: usize,
    pub render: RenderOptions,
    pub derender: crate::derender::DerenderConfig,
    /// `--engine`: the engine the front door (`/v1/chat/completions`, `/v1/completions`)
    /// sends rendered requests to; `None`: no front door.
    pub engine: Option<Arc<crate::engine::Engine>>,
    /// `--access-log`: one INFO line per request on the `llm_render::access` target.
    pub access_log: bool,
    /// `--otlp-traces-endpoint`: a span per work request, exported over OTLP (`otel.rs`).
    pub traces: Option<Arc<otel::Traces>>,
    /// After a stop signal, how long the server goes on accepting and serving (with
    /// `/health` answering 503) before it closes the listener (`transport/shutdown.rs`).
    pub drain_delay: Duration,
    /// The bound of the whole shutdown, from the signal: connections still open then are
    /// cut.
    pub drain_timeout: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_body_bytes: 32 * 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            header_read_timeout: Some(Duration::from_secs(30)),
            max_concurrency: 512,
            inline_max_bytes: 64 * 1024,
            max_blocking_renders: available_cores(),
            render: RenderOptions::default(),
            derender: Default::default(),
            engine: None,
            access_log: false,
            traces: None,
            drain_delay: Duration::from_secs(5),
            drain_timeout: Duration::from_secs(25),
        }
    }
}

impl ServerConfig {
    /// The engine's stall timeout (how long a stream may wait on either side), or the
    /// request timeout without an engine.
    pub(crate) fn engine_stall(&self) -> Duration {
        self.engine
            .as_ref()
            .map_or(self.request_timeout, |e| e.config.stall_timeout)
    }
}

/// The cores this process may use: the default for `--workers` and
/// [`ServerConfig::max_blocking_renders`].
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Shared, read-only state of the server.
pub struct AppState {
    pub models: ModelRegistry,
    pub config: ServerConfig,
    pub metrics: Metrics,
    /// The clock of the request and header-read timeouts.
    pub(crate) deadlines: Arc<Deadlines>,
    permits: Arc<Semaphore>,
    /// Slots for offloaded renders (`max_blocking_renders`).
    pub(crate) blocking_permits: Arc<Semaphore>,
    /// Set at the stop signal: `/health` answers 503 and responses close their connection.
    draining: AtomicBool,
}

impl AppState {
    pub fn new(models: ModelRegistry, config: ServerConfig) -> Result<Arc<Self>, StateError> {
        let permits = Arc::new(Semaphore::new(config.max_concurrency.max(1)));
        let blocking_permits = Arc::new(Semaphore::new(config.max_blocking_renders.max(1)));
        let shortest = config
            .header_read_timeout
            .map_or(config.request_timeout, |h| h.min(config.request_timeout));
        let model_names: Vec<&str> = models.models().iter().map(|m| m.name.as_str()).collect();
        let routes: Vec<&str> = dispatch::ROUTES.iter().map(|r| r.path).collect();
        let metrics = Metrics::new(&routes, &model_names).map_err(StateError::Metrics)?;
        Ok(Arc::new(AppState {
            models,
            metrics,
            deadlines: Deadlines::start(shortest).map_err(StateError::Thread)?,
            config,
            permits,
            blocking_permits,
            draining: AtomicBool::new(false),
        }))
    }

    /// Whether a stop signal has come (the server drains, and is not ready).
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Turns the server not ready: `/health` answers 503 from now on, and every response
    /// closes its connection.
    pub(crate) fn start_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }
}

/// Why the server state could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Not `#[from]`: a source would repeat the message in anyhow's `{:#}` chain.
    #[error("metrics: {0}")]
    Metrics(prometheus::Error),
    #[error("cannot start the timeout thread: {0}")]
    Thread(std::io::Error),
}
