//! OpenTelemetry traces of the work routes, as vLLM's render server exports them
//! (`--otlp-traces-endpoint`; vLLM's `vllm/tracing/otel.py`, tested by
//! `tests/entrypoints/scale_out/render/test_render_tracing.py`):
//!
//! * one span per request of a work route (render, tokenize, derender, the front door),
//!   named as vLLM names its handler (`render_chat_completion`, `render_completion`,
//!   `tokenize`, … : [`super::dispatch::ROUTES`]), of kind server, with the route, the
//!   method, the status code and, once the body is read, the model;
//! * the caller's W3C trace context (`traceparent`, `tracestate`) is the span's parent, so
//!   the span joins the caller's trace; without one the span starts a trace;
//! * the front door (`serve --engine`) sends the engine its span's `traceparent`, so the
//!   engine's spans (vLLM reads trace headers on `/inference/v1/generate`) join it too;
//! * export: batched (the SDK's batch processor: every 5 s or 512 spans, `OTEL_BSP_*`
//!   read as the SDK documents), over OTLP/gRPC by default or OTLP/HTTP protobuf with
//!   `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf`, as vLLM's `get_span_exporter`
//!   chooses. A gRPC endpoint without a scheme (`localhost:4317`, as vLLM's tests give it)
//!   is read as `http://`; an HTTP endpoint is the full URL (`http://host:4318/v1/traces`).
//!   Spans the collector cannot take are dropped, with a warning at most once a minute;
//!   requests never wait on the export.
//!
//! Off by default; off, a request pays one `Option` check.

use axum::http::HeaderMap;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceState, Tracer as _};
use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;

/// Why tracing could not start (a startup error: the flag's value or the exporter).
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    #[error(
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL={0:?} is not supported: use grpc (the default) or \
         http/protobuf"
    )]
    Protocol(String),
    #[error("--otlp-traces-endpoint {endpoint:?}: {message}")]
    Exporter { endpoint: String, message: String },
    #[error("cannot start the trace exporter's thread: {0}")]
    Thread(std::io::Error),
}

/// The process's tracer and its exporter, kept until [`Traces::shutdown`].
pub struct Traces {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    /// Drives the exporter's connections (tonic's and hyper's), whatever runtime the
    /// server runs on (`serve_per_core` has one single-threaded runtime per worker).
    runtime: std::sync::Mutex<Option<tokio::runtime::Runtime>>,
}

impl std::fmt::Debug for Traces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Traces")
    }
}

impl Traces {
    /// Starts exporting to `endpoint`; `protocol` is `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`
    /// (`grpc` when unset).
    pub fn start(endpoint: &str, protocol: Option<&str>) -> Result<Traces, OtelError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("otlp-export")
            .enable_all()
            .build()
            .map_err(OtelError::Thread)?;
        let _entered = runtime.enter();
        let bad = |e: opentelemetry_otlp::ExporterBuildError| OtelError::Exporter {
            endpoint: endpoint.to_string(),
            message: e.to_string(),
        };
        let exporter = match protocol.unwrap_or("grpc") {
            "grpc" => {
                let url = if endpoint.contains("://") {
                    endpoint.to_string()
                } else {
                    format!("http://{endpoint}")
                };
                SpanExporter::builder()
                    .with_tonic()
                    .with_endpoint(url)
                    .build()
                    .map_err(bad)?
            }
            "http/protobuf" => SpanExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .with_endpoint(endpoint)
                .build()
                .map_err(bad)?,
            other => return Err(OtelError::Protocol(other.to_string())),
        };
        let mut resource = Resource::builder()
            .with_attribute(KeyValue::new("process.pid", i64::from(std::process::id())));
        if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name("llm-render");
        }
        let exporter = OnRuntime {
            inner: std::sync::Arc::new(exporter),
            runtime: runtime.handle().clone(),
            warned: std::sync::Mutex::new(None),
        };
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build();
        let tracer = provider.tracer("llm-render");
        drop(_entered);
        Ok(Traces {
            provider,
            tracer,
            runtime: std::sync::Mutex::new(Some(runtime)),
        })
    }

    /// A server span named `name` for a request to `route`, child of the request's trace
    /// context when its headers carry one.
    pub fn start_span(&self, name: &'static str, route: &'static str, headers: &HeaderMap) -> Span {
        let parent = TraceContextPropagator::new().extract(&Headers(headers));
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes([
                KeyValue::new("http.request.method", "POST"),
                KeyValue::new("http.route", route),
            ])
            .start_with_context(&self.tracer, &parent);
        Span(span)
    }

    /// Exports what is batched now, waiting for the collector (tests; the server exports
    /// on the batch processor's schedule).
    pub fn flush(&self) {
        if let Err(e) = self.provider.force_flush() {
            tracing::warn!("trace export: {e}");
        }
    }

    /// Exports what is still batched and stops the exporter (at the server's exit).
    pub fn shutdown(&self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!("trace export at shutdown: {e}");
        }
        self.stop_runtime();
    }

    fn stop_runtime(&self) {
        let rt = match self.runtime.lock() {
            Ok(mut rt) => rt.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(rt) = rt {
            // Not `drop`, which blocks and panics when called from async code.
            rt.shutdown_background();
        }
    }
}

impl Drop for Traces {
    fn drop(&mut self) {
        self.stop_runtime();
    }
}

/// An exporter whose exports run on the tracer's own runtime. The SDK's batch processor
/// drives an export from its own thread, outside any tokio runtime, and the HTTP client
/// (hyper's, through `opentelemetry-http`) needs one for its timers and sockets.
#[derive(Debug)]
struct OnRuntime {
    inner: std::sync::Arc<SpanExporter>,
    runtime: tokio::runtime::Handle,
    /// When a failed export was last logged.
    warned: std::sync::Mutex<Option<std::time::Instant>>,
}

impl OnRuntime {
    /// Logs a failed export (the spans are dropped), at most once a minute.
    fn warn(&self, spans: usize, e: &opentelemetry_sdk::error::OTelSdkError) {
        let Ok(mut last) = self.warned.lock() else {
            return;
        };
        if last.is_none_or(|t| t.elapsed() >= std::time::Duration::from_secs(60)) {
            *last = Some(std::time::Instant::now());
            tracing::warn!(
                spans,
                "trace export failed, spans dropped (logged once a minute): {e}"
            );
        }
    }
}

impl opentelemetry_sdk::trace::SpanExporter for OnRuntime {
    async fn export(
        &self,
        batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        let inner = self.inner.clone();
        let n = batch.len();
        let done = match self
            .runtime
            .spawn(async move { inner.export(batch).await })
            .await
        {
            Ok(r) => r,
            Err(e) => Err(opentelemetry_sdk::error::OTelSdkError::InternalFailure(
                e.to_string(),
            )),
        };
        if let Err(e) = &done {
            self.warn(n, e);
        }
        done
    }

    fn shutdown_with_timeout(
        &self,
        timeout: std::time::Duration,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        if let Some(inner) = std::sync::Arc::get_mut(&mut self.inner) {
            inner.set_resource(resource);
        }
    }
}

/// One request's span; ended by [`Span::answered`] (or when dropped).
pub struct Span(opentelemetry_sdk::trace::Span);

impl Span {
    /// The `traceparent` (and `tracestate`) that make a downstream request this span's
    /// child (W3C Trace Context, version 00).
    pub fn traceparent(&self) -> (String, Option<String>) {
        let cx = self.0.span_context();
        let parent = format!(
            "00-{}-{}-{:02x}",
            cx.trace_id(),
            cx.span_id(),
            cx.trace_flags().to_u8()
        );
        let state = cx.trace_state();
        let state = (*state != TraceState::NONE).then(|| state.header());
        (parent, state)
    }

    /// The model the request names, once its body is read.
    pub fn model(&mut self, model: &str) {
        self.0
            .set_attribute(KeyValue::new("gen_ai.request.model", model.to_string()));
    }

    /// Ends the span with the response's status: an error for a 5xx, as OpenTelemetry's
    /// HTTP conventions have a server span (a 4xx is the client's).
    pub fn answered(mut self, status: u16) {
        self.0.set_attribute(KeyValue::new(
            "http.response.status_code",
            i64::from(status),
        ));
        if status >= 500 {
            self.0.set_status(Status::error(format!("HTTP {status}")));
        }
        self.0.end();
    }
}

/// A request's headers as the propagator reads them.
struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

tokio::task_local! {
    /// The `traceparent` and `tracestate` of the request being served, for the engine
    /// request the front door makes on its behalf.
    static DOWNSTREAM: (String, Option<String>);
}

/// Runs `fut` with `span`'s trace context as the one [`downstream`] gives.
pub async fn with_downstream<F: std::future::Future>(span: Option<&Span>, fut: F) -> F::Output {
    match span {
        Some(s) => DOWNSTREAM.scope(s.traceparent(), fut).await,
        None => fut.await,
    }
}

/// The trace headers an outgoing request of the current request carries, if traced.
pub fn downstream() -> Option<(String, Option<String>)> {
    DOWNSTREAM.try_with(Clone::clone).ok()
}
