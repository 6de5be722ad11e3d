//! `--access-log`: one INFO line per request, on its own target (`llm_render::access`) so
//! it can be filtered (`RUST_LOG=info,llm_render::access=off`) or sent elsewhere. Off by
//! default: the server's own counters are in `/metrics`.
//!
//! A line is written when the response's body has been sent (or dropped: the client went
//! away), so a streamed answer's duration and bytes are the whole stream's:
//!
//! ```text
//! INFO llm_render::access: method=POST path=/v1/chat/completions/render model=qwen3 status=200 duration_ms=0.412 bytes_in=142 bytes_out=1398
//! ```
//!
//! `model` is the body's top-level `model` (the one served model where a body leaves it out
//! and one is served; `-` without a body, or one that is not a JSON object), as asked for:
//! an unknown name is logged as sent, with its 404. `bytes_in` is the request body as read
//! (0 where it was not read: GETs, refused requests), `bytes_out` the response body. A
//! request whose client went away before the answer is logged with status 499, as in the
//! metrics.
//!
//! Reading `model` costs one more pass over the body (serde skipping every other field
//! without building it), taken only when the access log or tracing is on.

use super::AppState;
use axum::http::Method;
use serde::Deserialize;
use std::borrow::Cow;
use std::time::Instant;

/// What the access log (and the trace span, `otel.rs`) learns of a request's body while it
/// is dispatched.
pub(crate) struct Seen {
    /// Whether the access log or tracing is on (else [`Seen::body`] reads nothing).
    wanted: bool,
    bytes_in: u64,
    model: Option<Box<str>>,
}

impl Seen {
    pub(crate) fn new(wanted: bool) -> Self {
        Seen {
            wanted,
            bytes_in: 0,
            model: None,
        }
    }

    /// The model the body names, once read (for the request's trace span).
    pub(crate) fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The body has been read: its length, and the model it names.
    pub(crate) fn body(&mut self, state: &AppState, body: &[u8]) {
        if !self.wanted {
            return;
        }
        self.bytes_in = body.len() as u64;
        /// The one field read; serde skips the others without building them.
        #[derive(Deserialize)]
        struct Named<'a> {
            #[serde(borrow, default)]
            model: Option<Cow<'a, str>>,
        }
        self.model = match serde_json::from_slice::<Named>(body) {
            Ok(Named { model: Some(name) }) => Some(name.into()),
            Ok(Named { model: None }) => match state.models.models() {
                [only] => Some(only.name.as_str().into()),
                _ => None,
            },
            Err(_) => None,
        };
    }
}

/// One request's access-log line, written when dropped.
pub(crate) struct Entry {
    method: Method,
    path: String,
    model: Option<Box<str>>,
    start: Instant,
    status: u16,
    bytes_in: u64,
    bytes_out: u64,
}

impl Entry {
    /// A request that has just arrived (its head read), unanswered so far (499).
    pub(crate) fn start(method: &Method, path: &str) -> Box<Entry> {
        Box::new(Entry {
            method: method.clone(),
            path: path.to_string(),
            model: None,
            start: Instant::now(),
            status: 499,
            bytes_in: 0,
            bytes_out: 0,
        })
    }

    pub(crate) fn answered(&mut self, status: u16, seen: Seen) {
        self.status = status;
        self.bytes_in = seen.bytes_in;
        self.model = seen.model;
    }

    /// Counts `n` bytes of the response body as sent.
    pub(crate) fn sent(&mut self, n: usize) {
        self.bytes_out += n as u64;
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        let micros = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX);
        tracing::info!(
            target: "llm_render::access",
            method = %self.method,
            path = %self.path,
            model = self.model.as_deref().unwrap_or("-"),
            status = self.status,
            duration_ms = micros as f64 / 1000.0,
            bytes_in = self.bytes_in,
            bytes_out = self.bytes_out,
        );
    }
}
