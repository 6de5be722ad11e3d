//! Prometheus metrics (`GET /metrics`, text format 0.0.4). Names are prefixed `llm_render_`.

use crate::template::TemplateEngine;
use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};
use std::time::Duration;

/// Latency buckets from 50 µs to 10 s: renders of short prompts take well under a millisecond.
const BUCKETS: &[f64] = &[
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
];

/// The series every answered request of one route touches, looked up once: `with_label_values`
/// hashes its labels and takes a read lock on each call, six times per render.
struct RouteSeries {
    route: &'static str,
    ok: IntCounter,
    latency: Histogram,
}

/// The series every render of one model touches, looked up once.
struct ModelSeries {
    model: String,
    tokens: IntCounter,
    template: Histogram,
    tokenize: Histogram,
    native: IntCounter,
    minijinja: IntCounter,
    harmony: IntCounter,
}

pub struct Metrics {
    registry: Registry,
    /// The sidecar front door's series (`front/metrics.rs`).
    pub front: std::sync::Arc<super::front::metrics::FrontMetrics>,
    routes: Vec<RouteSeries>,
    models: Vec<ModelSeries>,
    pub requests: IntCounterVec,
    pub errors: IntCounterVec,
    pub latency: HistogramVec,
    pub in_flight: IntGauge,
    pub prompt_tokens: IntCounterVec,
    pub template_seconds: HistogramVec,
    /// Chat template renders by model and engine (`native`, `minijinja`).
    pub template_renders: IntCounterVec,
    pub tokenize_seconds: HistogramVec,
    /// Segment cache counters by model and kind (`hits`, `misses`, `hit_bytes`, `miss_bytes`),
    /// read from the encoders at scrape time.
    pub segment_cache: IntCounterVec,
    /// Segment cache size by model and kind (`entries`, `bytes`, `max_bytes`).
    pub segment_cache_size: IntGaugeVec,
    /// Prompt cache counters by model and kind (`hits`, `misses`, `hit_bytes`).
    pub prompt_cache: IntCounterVec,
    /// Prompt cache size by model and kind (`entries`, `bytes`, `max_bytes`).
    pub prompt_cache_size: IntGaugeVec,
    /// Renders with `continue_from`, by model and result (`applied`, `refused`).
    pub continuations: IntCounterVec,
    /// Prompt tokens taken verbatim from the previous turn by bridged renders.
    pub bridged_tokens: IntCounterVec,
}

impl Metrics {
    /// The registry, with the series of `routes` (status 200) and of `models` made up front.
    pub fn new(routes: &[&'static str], models: &[&str]) -> Result<Self, prometheus::Error> {
        let registry = Registry::new_custom(Some("llm_render".into()), None)?;
        let requests = IntCounterVec::new(
            Opts::new("requests_total", "HTTP requests by route and status"),
            &["route", "status"],
        )?;
        let errors = IntCounterVec::new(
            Opts::new(
                "errors_total",
                "HTTP responses with status >= 400, by route and status",
            ),
            &["route", "status"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new("request_duration_seconds", "Request latency by route")
                .buckets(BUCKETS.to_vec()),
            &["route"],
        )?;
        let in_flight = IntGauge::new("requests_in_flight", "Requests being served")?;
        let prompt_tokens = IntCounterVec::new(
            Opts::new("prompt_tokens_total", "Prompt tokens rendered"),
            &["model"],
        )?;
        let template_seconds = HistogramVec::new(
            HistogramOpts::new("template_render_seconds", "Chat template render time")
                .buckets(BUCKETS.to_vec()),
            &["model"],
        )?;
        let template_renders = IntCounterVec::new(
            Opts::new(
                "template_renders_total",
                "Chat template renders by engine: native (a Rust rendering of the exact template) or minijinja",
            ),
            &["model", "engine"],
        )?;
        let tokenize_seconds = HistogramVec::new(
            HistogramOpts::new("tokenize_seconds", "Tokenization time").buckets(BUCKETS.to_vec()),
            &["model"],
        )?;
        let segment_cache = IntCounterVec::new(
            Opts::new(
                "segment_cache_total",
                "Fast-encoder segment cache: hits, misses, hit_bytes, miss_bytes",
            ),
            &["model", "kind"],
        )?;
        let segment_cache_size = IntGaugeVec::new(
            Opts::new(
                "segment_cache_size",
                "Fast-encoder segment cache: entries, bytes, max_bytes",
            ),
            &["model", "kind"],
        )?;
        let prompt_cache = IntCounterVec::new(
            Opts::new(
                "prompt_cache_total",
                "Prompt prefix cache: hits, misses, hit_bytes (prompt bytes whose IDs were copied)",
            ),
            &["model", "kind"],
        )?;
        let prompt_cache_size = IntGaugeVec::new(
            Opts::new(
                "prompt_cache_size",
                "Prompt prefix cache: entries, bytes, max_bytes",
            ),
            &["model", "kind"],
        )?;
        let continuations = IntCounterVec::new(
            Opts::new(
                "continuations_total",
                "Chat renders with continue_from: applied (bridged onto the previous turn's tokens) or refused (rendered plainly)",
            ),
            &["model", "result"],
        )?;
        let bridged_tokens = IntCounterVec::new(
            Opts::new(
                "bridged_tokens_total",
                "Prompt tokens taken verbatim from the previous turn (prompt, output, end-of-turn marker) by bridged renders",
            ),
            &["model"],
        )?;
        // `llm_render_build_info{version, git_sha} 1`: which build a series came from.
        let build_info = IntGaugeVec::new(
            Opts::new(
                "build_info",
                "The running build: its version and git commit (build.rs), always 1",
            ),
            &["version", "git_sha"],
        )?;
        build_info
            .with_label_values(&[env!("CARGO_PKG_VERSION"), env!("LLM_RENDER_GIT_SHA")])
            .set(1);
        registry.register(Box::new(build_info))?;
        registry.register(Box::new(continuations.clone()))?;
        registry.register(Box::new(bridged_tokens.clone()))?;
        registry.register(Box::new(prompt_cache.clone()))?;
        registry.register(Box::new(prompt_cache_size.clone()))?;
        registry.register(Box::new(segment_cache.clone()))?;
        registry.register(Box::new(segment_cache_size.clone()))?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(errors.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(in_flight.clone()))?;
        registry.register(Box::new(prompt_tokens.clone()))?;
        registry.register(Box::new(template_seconds.clone()))?;
        registry.register(Box::new(template_renders.clone()))?;
        registry.register(Box::new(tokenize_seconds.clone()))?;
        let routes = routes
            .iter()
            .map(|&route| RouteSeries {
                route,
                ok: requests.with_label_values(&[route, "200"]),
                latency: latency.with_label_values(&[route]),
            })
            .collect();
        let front = std::sync::Arc::new(super::front::metrics::FrontMetrics::new(&registry)?);
        let mut metrics = Metrics {
            registry,
            front,
            routes,
            models: Vec::new(),
            requests,
            errors,
            latency,
            in_flight,
            prompt_tokens,
            template_seconds,
            template_renders,
            tokenize_seconds,
            segment_cache,
            segment_cache_size,
            prompt_cache,
            prompt_cache_size,
            continuations,
            bridged_tokens,
        };
        metrics.models = models.iter().map(|m| metrics.model_series(m)).collect();
        Ok(metrics)
    }

    /// The series one model's renders touch.
    fn model_series(&self, model: &str) -> ModelSeries {
        ModelSeries {
            model: model.to_string(),
            tokens: self.prompt_tokens.with_label_values(&[model]),
            template: self.template_seconds.with_label_values(&[model]),
            tokenize: self.tokenize_seconds.with_label_values(&[model]),
            native: self.engine_series(model, TemplateEngine::Native),
            minijinja: self.engine_series(model, TemplateEngine::Minijinja),
            harmony: self.engine_series(model, TemplateEngine::Harmony),
        }
    }

    fn engine_series(&self, model: &str, engine: TemplateEngine) -> IntCounter {
        self.template_renders
            .with_label_values(&[model, engine.as_str()])
    }

    /// Records one finished HTTP request.
    pub fn observe_request(&self, route: &str, status: u16, elapsed: Duration) {
        if status == 200 {
            if let Some(r) = self.routes.iter().find(|r| r.route == route) {
                r.ok.inc();
                r.latency.observe(elapsed.as_secs_f64());
                return;
            }
        }
        let mut digits = itoa::Buffer::new();
        let label = digits.format(status);
        self.requests.with_label_values(&[route, label]).inc();
        if status >= 400 {
            self.errors.with_label_values(&[route, label]).inc();
        }
        self.latency
            .with_label_values(&[route])
            .observe(elapsed.as_secs_f64());
    }

    /// Records one render's token count and stage times.
    pub fn observe_render(&self, model: &str, tokens: usize, timings: crate::render::Timings) {
        // Every served model's series are made up front; another name is looked up here.
        let made;
        let m = match self.models.iter().find(|m| m.model == model) {
            Some(m) => m,
            None => {
                made = self.model_series(model);
                &made
            }
        };
        m.tokens.inc_by(tokens as u64);
        m.template.observe(timings.template.as_secs_f64());
        m.tokenize.observe(timings.tokenize.as_secs_f64());
        match timings.template_engine {
            Some(TemplateEngine::Native) => m.native.inc(),
            Some(TemplateEngine::Minijinja) => m.minijinja.inc(),
            Some(TemplateEngine::Harmony) => m.harmony.inc(),
            None => {}
        }
    }

    /// Records what a render did with `continue_from`.
    pub fn observe_continuation(&self, model: &str, c: &crate::protocol::Continuation) {
        let result = if c.applied { "applied" } else { "refused" };
        self.continuations.with_label_values(&[model, result]).inc();
        self.bridged_tokens
            .with_label_values(&[model])
            .inc_by(c.bridged_tokens as u64);
    }

    /// Copies each model's cache statistics into the registry (called per scrape).
    pub fn observe_caches(&self, models: &[std::sync::Arc<crate::model::Model>]) {
        for m in models {
            let name = m.name.as_str();
            if let Some(st) = m.encoder.prompt_cache_stats() {
                mirror(
                    (&self.prompt_cache, &self.prompt_cache_size),
                    name,
                    &[
                        ("hits", st.hits),
                        ("misses", st.misses),
                        ("hit_bytes", st.hit_bytes),
                    ],
                    &[
                        ("entries", st.entries),
                        ("bytes", st.bytes),
                        ("max_bytes", st.max_bytes),
                    ],
                );
            }
            if let Some(st) = m.encoder.cache_stats() {
                mirror(
                    (&self.segment_cache, &self.segment_cache_size),
                    name,
                    &[
                        ("hits", st.hits),
                        ("misses", st.misses),
                        ("hit_bytes", st.hit_bytes),
                        ("miss_bytes", st.miss_bytes),
                    ],
                    &[
                        ("entries", st.entries as u64),
                        ("bytes", st.bytes as u64),
                        ("max_bytes", st.max_bytes as u64),
                    ],
                );
            }
        }
    }

    pub fn render_text(&self) -> String {
        let mut buf = Vec::new();
        // Encoding into a Vec cannot fail for well-formed metric families.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    }
}

/// Sets a cache's counters to the running totals its owner keeps (`totals`), and its gauges
/// to its current sizes, labelled by model and kind.
fn mirror(
    (counters, gauges): (&IntCounterVec, &IntGaugeVec),
    model: &str,
    totals: &[(&str, u64)],
    sizes: &[(&str, u64)],
) {
    for &(kind, v) in totals {
        let c = counters.with_label_values(&[model, kind]);
        c.reset();
        c.inc_by(v);
    }
    for &(kind, v) in sizes {
        gauges
            .with_label_values(&[model, kind])
            .set(i64::try_from(v).unwrap_or(i64::MAX));
    }
}
