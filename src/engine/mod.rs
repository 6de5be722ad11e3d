//! The engine behind the sidecar (`server/front/`): a token-in/token-out server that takes
//! the render's `GenerateRequest` and streams generated IDs back.
//!
//! * `wire.rs`: what differs between engines, one entry per protocol in [`PROTOCOLS`]:
//!   `vllm.rs` (vLLM's `POST /inference/v1/generate`, its `GenerateRequest` as the render
//!   builds it) and `sglang.rs` (SGLang's `POST /generate` with `input_ids`).
//! * `sse.rs`: the engine's server-sent events.
//! * `client.rs`: [`Engine`], the HTTP client: connect with retries, the stall timeout, abort,
//!   and the readiness probe `/health` reports.
//!
//! The engine is asked to stream, whatever the client asked for: a stop string found in
//! the output (stop strings are applied here, not by the engine) or a client that goes
//! away then aborts the engine request, and the client's answer is built from the same
//! events either way. The one exception is a request whose answer shows the prompt's
//! logprobs, which only vLLM's whole answer carries (`vllm.rs`): it is asked whole, and its
//! one answer read as one event.

mod client;
mod sglang;
mod sse;
mod vllm;
mod wire;

pub use client::{Engine, EngineConfig, EngineModel, EngineStream};
pub use sse::{Event, SseSplitter};
pub use wire::{Seen, Wire};

use std::time::Duration;

/// Every protocol `--engine-protocol` accepts.
pub static PROTOCOLS: &[&dyn Wire] = &[&vllm::Vllm, &sglang::Sglang];

/// The protocol named `name`.
pub fn protocol(name: &str) -> Option<&'static dyn Wire> {
    PROTOCOLS.iter().copied().find(|p| p.name() == name)
}

/// What went wrong between llm-render and its engine.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The engine could not be reached (connection refused, DNS, TLS, connect timeout).
    #[error("the engine at {url} is unreachable: {why}")]
    Unreachable { url: String, why: String },
    /// The engine answered with an error status before streaming; its OpenAI-shaped error
    /// (`{"error": {…}}`) when it sent one.
    #[error("the engine answered {status}: {message}")]
    Status {
        status: u16,
        message: String,
        body: Option<serde_json::Value>,
    },
    /// No byte from the engine for the stall timeout.
    #[error("the engine sent nothing for {:.1} s (--engine-stall-timeout-secs)", .0.as_secs_f64())]
    Stalled(Duration),
    /// The connection ended before the stream did.
    #[error("the engine's stream ended early: {0}")]
    Dropped(String),
    /// An event llm-render cannot read.
    #[error("the engine sent an event llm-render cannot read: {0}")]
    BadEvent(String),
}

impl EngineError {
    /// Its `kind` label in `llm_render_engine_errors_total`.
    pub fn kind(&self) -> &'static str {
        match self {
            EngineError::Unreachable { .. } => "unreachable",
            EngineError::Status { status, .. } if *status < 500 => "status_4xx",
            EngineError::Status { .. } => "status_5xx",
            EngineError::Stalled(_) => "stalled",
            EngineError::Dropped(_) => "dropped",
            EngineError::BadEvent(_) => "bad_event",
        }
    }

    /// Whether the request may be sent again (only ever before the client has had a byte):
    /// the engine never saw it, or lost it with its connection.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            EngineError::Unreachable { .. } | EngineError::Dropped(_)
        )
    }
}
