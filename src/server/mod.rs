//! The HTTP tier: axum router, limits, metrics and graceful shutdown.
//!
//! Layers, outermost first: metrics and a debug log line (every route) → for the work
//! routes, one guard that answers 503 at once when `--max-concurrency` requests are in
//! flight and 504 past the request timeout → a body limit (413) → the handler. Small
//! bodies render inline on the worker that serves the connection; large ones (images, long
//! prompts) on the blocking pool, so no request stalls a worker for long
//! (`routes::offload`).
//!
//! Two ways to run it: [`serve_per_core`] (the default; one single-threaded runtime per
//! worker, see `runtime.rs` for why) and [`serve_work_stealing`] on a tokio multi-thread
//! runtime; both serve each connection the same way.

mod deadlines;
mod error;
pub mod memory;
mod metrics;
mod routes;
mod runtime;

pub use error::ApiError;
pub use metrics::Metrics;
pub use runtime::{serve_per_core, serve_per_core_until, serve_work_stealing};

use crate::model::ModelRegistry;
use crate::render::RenderOptions;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use deadlines::Deadlines;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

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
        }
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
}

impl AppState {
    pub fn new(models: ModelRegistry, config: ServerConfig) -> Result<Arc<Self>, StateError> {
        let permits = Arc::new(Semaphore::new(config.max_concurrency.max(1)));
        let blocking_permits = Arc::new(Semaphore::new(config.max_blocking_renders.max(1)));
        let shortest = config
            .header_read_timeout
            .map_or(config.request_timeout, |h| h.min(config.request_timeout));
        let model_names: Vec<&str> = models.models().iter().map(|m| m.name.as_str()).collect();
        let metrics = Metrics::new(
            &[WORK_ROUTES.as_slice(), INFO_ROUTES.as_slice()].concat(),
            &model_names,
        )?;
        Ok(Arc::new(AppState {
            models,
            metrics,
            deadlines: Deadlines::start(shortest).map_err(StateError::Thread)?,
            config,
            permits,
            blocking_permits,
        }))
    }
}

/// Why the server state could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("metrics: {0}")]
    Metrics(#[from] prometheus::Error),
    #[error("cannot start the timeout thread: {0}")]
    Thread(std::io::Error),
}

/// The routes with a request body to render or parse, behind the concurrency guard.
const WORK_ROUTES: [&str; 7] = [
    "/v1/chat/completions/render",
    "/v1/completions/render",
    "/tokenize",
    "/detokenize",
    "/v1/block_hashes",
    "/v1/chat/completions/derender",
    "/v1/completions/derender",
];
/// The others.
const INFO_ROUTES: [&str; 3] = ["/health", "/v1/models", "/metrics"];

/// The request metrics' `route` label: the route `path` is served by, or `unmatched`.
///
/// Every route is a fixed path, so this is a lookup rather than axum's `MatchedPath`, which
/// costs each request an extension map and a reference count.
fn route_label(path: &str) -> &'static str {
    WORK_ROUTES
        .iter()
        .chain(&INFO_ROUTES)
        .find(|r| **r == path)
        .copied()
        .unwrap_or("unmatched")
}

/// Builds the router with every route and layer.
pub fn router(state: Arc<AppState>) -> Router {
    let [chat, completion, tokenize, detokenize, hashes, chat_derender, completion_derender] =
        WORK_ROUTES;
    let work = Router::new()
        .route(chat, post(routes::chat_render))
        .route(completion, post(routes::completion_render))
        .route(tokenize, post(routes::tokenize))
        .route(detokenize, post(routes::detokenize))
        .route(hashes, post(routes::block_hashes))
        .route(chat_derender, post(routes::chat_derender))
        .route(completion_derender, post(routes::completion_derender))
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(middleware::from_fn_with_state(state.clone(), guard));
    let [health, models, metrics] = INFO_ROUTES;
    Router::new()
        .route(health, get(routes::health))
        .route(models, get(routes::models))
        .route(metrics, get(routes::metrics))
        .merge(work)
        .fallback(routes::not_found)
        .method_not_allowed_fallback(routes::method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), track))
        .with_state(state)
}

/// Resolves on SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutdown signal received; draining in-flight requests");
}

/// Counts every request by matched route and status, tracks requests in flight, and logs
/// each at debug level.
async fn track(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let flight = InFlight::start(&state, route_label(req.uri().path()));
    let resp = next.run(req).await;
    flight.answered(resp.status().as_u16(), &method);
    resp
}

/// One request in `requests_in_flight`, from its arrival until it is answered or dropped.
/// hyper drops a request's future when its client goes away first; the request then still
/// leaves the gauge, and is counted with status 499 (nginx's "client closed request").
struct InFlight<'a> {
    state: &'a AppState,
    route: &'static str,
    start: Instant,
    answered: bool,
}

impl<'a> InFlight<'a> {
    fn start(state: &'a AppState, route: &'static str) -> Self {
        state.metrics.in_flight.inc();
        InFlight {
            state,
            route,
            start: Instant::now(),
            answered: false,
        }
    }

    /// Records the answer, and logs it at debug level.
    fn answered(mut self, status: u16, method: &axum::http::Method) {
        self.answered = true;
        let elapsed = self.start.elapsed();
        let route = self.route;
        self.state.metrics.observe_request(route, status, elapsed);
        tracing::debug!(%method, route, status, latency_us = elapsed.as_micros() as u64, "request");
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.state.metrics.in_flight.dec();
        if !self.answered {
            let elapsed = self.start.elapsed();
            self.state.metrics.observe_request(self.route, 499, elapsed);
        }
    }
}

/// For the work routes: answers 503 at once when `--max-concurrency` requests are already
/// being served, and 504 when one takes longer than `--request-timeout-secs`.
async fn guard(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let Ok(_permit) = state.permits.try_acquire() else {
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "server is at its concurrency limit ({}); retry later",
                state.config.max_concurrency
            ),
        )
        .into_response();
    };
    let limit = state.config.request_timeout;
    match state.deadlines.timeout(limit, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            format!(
                "request took longer than the server's {:.1} s limit",
                limit.as_secs_f64()
            ),
        )
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_labels_are_the_routed_paths() {
        for path in WORK_ROUTES.iter().chain(&INFO_ROUTES) {
            assert_eq!(route_label(path), *path);
        }
        for other in ["/", "/health/", "/v1/chat/completions", "/V1/models", ""] {
            assert_eq!(route_label(other), "unmatched");
        }
    }
}
