//! The front door's metrics (`llm_render_front_*`, `llm_render_engine_*`), registered with
//! the server's others.

use prometheus::{
    Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
};

/// From 1 ms to 5 min: a first token waits for its prefill, a whole answer for its decode.
const LATENCY_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
    120.0, 300.0,
];

/// From 100 µs to 10 s between two chunks of a stream.
const ITL_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    10.0,
];

#[derive(Debug)]
pub struct FrontMetrics {
    /// Request arrival → the client's first chunk (stream) or the engine's first event.
    pub ttft: HistogramVec,
    /// Between two chunks of one stream.
    pub itl: HistogramVec,
    /// Request arrival → the answer's last byte handed to the connection.
    pub e2e: HistogramVec,
    /// Engine failures by kind (`unreachable`, `status_4xx`, `status_5xx`, `stalled`,
    /// `dropped`, `bad_event`).
    pub engine_errors: IntCounterVec,
    /// Engine requests aborted, by reason (`stop_string`, `client_gone`, `error`).
    pub aborts: IntCounterVec,
    /// Engine requests sent again before the client had a byte.
    pub retries: IntCounter,
    /// Streams being sent to clients.
    pub streams_in_flight: IntGauge,
    /// Completion tokens derendered for clients.
    pub completion_tokens: IntCounter,
}

impl FrontMetrics {
    pub fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let hist = |name: &str, help: &str, buckets: &[f64]| {
            HistogramVec::new(
                HistogramOpts::new(name, help).buckets(buckets.to_vec()),
                &["route"],
            )
        };
        let m = FrontMetrics {
            ttft: hist(
                "front_time_to_first_token_seconds",
                "Front door: request arrival to the first streamed chunk (or the engine's first event for a whole answer)",
                LATENCY_BUCKETS,
            )?,
            itl: hist(
                "front_inter_token_latency_seconds",
                "Front door: time between two chunks of a stream",
                ITL_BUCKETS,
            )?,
            e2e: hist(
                "front_request_duration_seconds",
                "Front door: request arrival to the answer's last byte",
                LATENCY_BUCKETS,
            )?,
            engine_errors: IntCounterVec::new(
                Opts::new("engine_errors_total", "Engine failures by kind"),
                &["kind"],
            )?,
            aborts: IntCounterVec::new(
                Opts::new("engine_aborts_total", "Engine requests aborted, by reason"),
                &["reason"],
            )?,
            retries: IntCounter::new(
                "engine_retries_total",
                "Engine requests sent again before the client had a byte",
            )?,
            streams_in_flight: IntGauge::new(
                "front_streams_in_flight",
                "Front door streams being sent to clients",
            )?,
            completion_tokens: IntCounter::new(
                "front_completion_tokens_total",
                "Completion tokens derendered by the front door",
            )?,
        };
        registry.register(Box::new(m.ttft.clone()))?;
        registry.register(Box::new(m.itl.clone()))?;
        registry.register(Box::new(m.e2e.clone()))?;
        registry.register(Box::new(m.engine_errors.clone()))?;
        registry.register(Box::new(m.aborts.clone()))?;
        registry.register(Box::new(m.retries.clone()))?;
        registry.register(Box::new(m.streams_in_flight.clone()))?;
        registry.register(Box::new(m.completion_tokens.clone()))?;
        for kind in [
            "unreachable",
            "status_4xx",
            "status_5xx",
            "stalled",
            "dropped",
            "bad_event",
        ] {
            m.engine_errors.with_label_values(&[kind]);
        }
        for reason in ["stop_string", "client_gone", "error"] {
            m.aborts.with_label_values(&[reason]);
        }
        Ok(m)
    }

    /// The route's series of a histogram, as one handle.
    pub fn series(h: &HistogramVec, route: &str) -> Histogram {
        h.with_label_values(&[route])
    }
}
