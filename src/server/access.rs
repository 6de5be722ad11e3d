//! `--access-log`: one INFO line per request, on its own target (`llm_render::access`) so
//! it can be filtered (`RUST_LOG=info,llm_render::access=off`) or sent elsewhere. Off by
//! default: the server's own counters are in `/metrics`.
//!
//! A line is written when the response's body has been sent (or dropped: the client went
//! away), so a streamed answer's duration and bytes are the whole stream's:
//!
//! ```text
//! INFO llm_render::access: method=POST path=/v1/chat/completions/render status=200 duration_ms=0.412 bytes_in=142 bytes_out=1398
//! ```
//!
//! `bytes_in` is the request body as read (0 where it was not read: GETs, refused requests),
//! `bytes_out` the response body. A request whose client went away before the answer is
//! logged with status 499, as in the metrics.

use axum::http::Method;
use std::time::Instant;

/// One request's access-log line, written when dropped.
pub(crate) struct Entry {
    method: Method,
    path: String,
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
            start: Instant::now(),
            status: 499,
            bytes_in: 0,
            bytes_out: 0,
        })
    }

    pub(crate) fn answered(&mut self, status: u16, bytes_in: u64) {
        self.status = status;
        self.bytes_in = bytes_in;
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
            status = self.status,
            duration_ms = micros as f64 / 1000.0,
            bytes_in = self.bytes_in,
            bytes_out = self.bytes_out,
        );
    }
}
