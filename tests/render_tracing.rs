//! OpenTelemetry spans (`--otlp-traces-endpoint`, `server::otel`) exported to a fake
//! collector: vLLM's `tests/entrypoints/scale_out/render/test_render_tracing.py` (main
//! branch; `tr_`) over OTLP/gRPC as vLLM's test runs it, the same over OTLP/HTTP, a request
//! without a trace context, and the front door passing its span's context to the engine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::engine::{events, Engine, Script};
use llm_render::server::otel::Traces;
use llm_render::server::ServerConfig;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// vLLM's W3C `traceparent`: a fixed trace id and parent span id, sampled.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// One exported span: its name, trace id, span id and parent span id (hex), attributes.
#[derive(Debug, Clone)]
struct Exported {
    name: String,
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    attributes: Vec<(String, String)>,
}

impl Exported {
    fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

type Spans = Arc<Mutex<Vec<Exported>>>;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn collect(spans: &Spans, req: ExportTraceServiceRequest) {
    use opentelemetry_proto::tonic::common::v1::any_value::Value as V;
    let mut out = spans.lock().unwrap();
    for rs in req.resource_spans {
        for ss in rs.scope_spans {
            for s in ss.spans {
                let attributes = s
                    .attributes
                    .iter()
                    .map(|kv| {
                        let v = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                            Some(V::StringValue(s)) => s.clone(),
                            Some(V::IntValue(i)) => i.to_string(),
                            other => format!("{other:?}"),
                        };
                        (kv.key.clone(), v)
                    })
                    .collect();
                out.push(Exported {
                    name: s.name,
                    trace_id: hex(&s.trace_id),
                    span_id: hex(&s.span_id),
                    parent_span_id: hex(&s.parent_span_id),
                    attributes,
                });
            }
        }
    }
}

/// vLLM's `FakeTraceService`: an OTLP/gRPC collector that keeps every span.
struct FakeTraceService(Spans);

#[tonic::async_trait]
impl TraceService for FakeTraceService {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        collect(&self.0, request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

/// A collector on loopback, over gRPC or (`http`) OTLP/HTTP protobuf at `/v1/traces`; its
/// address and the spans it received.
fn collector(http: bool) -> (String, Spans) {
    let spans: Spans = Arc::default();
    let kept = spans.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            if http {
                let app = axum::Router::new().route(
                    "/v1/traces",
                    axum::routing::post(move |body: axum::body::Bytes| async move {
                        use prost::Message;
                        collect(&kept, ExportTraceServiceRequest::decode(body).unwrap());
                        let done = ExportTraceServiceResponse::default().encode_to_vec();
                        ([("content-type", "application/x-protobuf")], done)
                    }),
                );
                axum::serve(listener, app).await.unwrap();
            } else {
                let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
                tonic::transport::Server::builder()
                    .add_service(TraceServiceServer::new(FakeTraceService(kept)))
                    .serve_with_incoming(incoming)
                    .await
                    .unwrap();
            }
        });
    });
    let endpoint = if http {
        format!("http://{addr}/v1/traces")
    } else {
        // As vLLM's test gives it: no scheme.
        format!("{addr}")
    };
    (endpoint, spans)
}

/// A server on Qwen3 exporting to `endpoint` (`protocol`: vLLM's
/// `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`), with `engine` behind its front door if given.
fn traced_server(
    endpoint: &str,
    protocol: Option<&str>,
    engine: Option<&Engine>,
) -> (String, Arc<Traces>) {
    let traces = Arc::new(Traces::start(endpoint, protocol).unwrap());
    let engine = engine.map(|e| {
        let wire = llm_render::engine::protocol("vllm").unwrap();
        let cfg = llm_render::engine::EngineConfig::new(&e.url, wire);
        let client = llm_render::engine::Engine::new(cfg).unwrap();
        client.watch_health().unwrap();
        client
    });
    let config = ServerConfig {
        traces: Some(traces.clone()),
        engine,
        ..ServerConfig::default()
    };
    (common::start_server(common::qwen3_only(), config), traces)
}

fn post(base: &str, path: &str, traceparent: Option<&str>, body: &Value) -> u16 {
    let mut req = common::client().post(format!("{base}{path}")).json(body);
    if let Some(tp) = traceparent {
        req = req.header("traceparent", tp);
    }
    let resp = req.send().unwrap();
    let status = resp.status().as_u16();
    let _ = resp.bytes();
    status
}

/// vLLM's `_wait_for_span`: the first span of that name, waiting up to 30 s.
fn wait_for_span(traces: &Traces, spans: &Spans, name: &str) -> Exported {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        traces.flush();
        if let Some(s) = spans.lock().unwrap().iter().find(|s| s.name == name) {
            return s.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no span named {name:?} was exported within 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// vLLM's `_assert_span_linked_to_trace`.
fn assert_linked(span: &Exported, traceparent: &str) {
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(span.trace_id, parts[1], "{span:?}");
    assert_eq!(span.parent_span_id, parts[2], "{span:?}");
}

fn chat() -> Value {
    json!({"model": "qwen3", "messages": [{"role": "user", "content": "Hello, how are you?"}]})
}

#[test]
fn tr_test_render_chat_completion_span() {
    let (endpoint, spans) = collector(false);
    let (base, traces) = traced_server(&endpoint, None, None);
    let status = post(
        &base,
        "/v1/chat/completions/render",
        Some(TRACEPARENT),
        &chat(),
    );
    assert_eq!(status, 200);
    let span = wait_for_span(&traces, &spans, "render_chat_completion");
    assert_linked(&span, TRACEPARENT);
    assert_eq!(
        span.attribute("http.route"),
        Some("/v1/chat/completions/render")
    );
    assert_eq!(span.attribute("http.response.status_code"), Some("200"));
    assert_eq!(span.attribute("gen_ai.request.model"), Some("qwen3"));
}

#[test]
fn tr_test_render_completion_span() {
    let (endpoint, spans) = collector(false);
    let (base, traces) = traced_server(&endpoint, None, None);
    let body = json!({"model": "qwen3", "prompt": "Once upon a time"});
    let status = post(&base, "/v1/completions/render", Some(TRACEPARENT), &body);
    assert_eq!(status, 200);
    let span = wait_for_span(&traces, &spans, "render_completion");
    assert_linked(&span, TRACEPARENT);
}

#[test]
fn tr_test_tokenize_span() {
    let (endpoint, spans) = collector(false);
    let (base, traces) = traced_server(&endpoint, None, None);
    let body = json!({"model": "qwen3", "prompt": "Hello world"});
    assert_eq!(post(&base, "/tokenize", Some(TRACEPARENT), &body), 200);
    let span = wait_for_span(&traces, &spans, "tokenize");
    assert_linked(&span, TRACEPARENT);
}

/// OTLP/HTTP protobuf (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf`); a request
/// without a trace context, or with a malformed one, starts a trace of its own; a refused request's span carries its
/// 4xx.
#[test]
fn http_protobuf_export_and_requests_without_a_trace_context() {
    let (endpoint, spans) = collector(true);
    let (base, traces) = traced_server(&endpoint, Some("http/protobuf"), None);
    assert_eq!(
        post(&base, "/v1/chat/completions/render", None, &chat()),
        200
    );
    let span = wait_for_span(&traces, &spans, "render_chat_completion");
    assert_eq!(span.parent_span_id, "", "a root span: {span:?}");
    assert_eq!(span.trace_id.len(), 32);
    let bad = json!({"model": "qwen3"});
    assert_eq!(post(&base, "/v1/messages/render", None, &bad), 400);
    let span = wait_for_span(&traces, &spans, "render_messages");
    assert_eq!(span.attribute("http.response.status_code"), Some("400"));
    assert!(Traces::start("x", Some("json")).is_err());
    // A malformed `traceparent` is no trace context: the request is served, its span a root.
    let garbage = "00-not-a-trace-id-01";
    assert_eq!(
        post(&base, "/tokenize", Some(garbage), &json!({"prompt": "hi"})),
        200
    );
    let span = wait_for_span(&traces, &spans, "tokenize");
    assert_eq!(span.parent_span_id, "", "a root span: {span:?}");
}

/// The front door sends the engine its span's `traceparent`: the engine's spans join the
/// caller's trace under llm-render's span.
#[test]
fn the_front_door_passes_the_trace_to_the_engine() {
    let (endpoint, spans) = collector(false);
    let ids = common::qwen3_only()
        .get(Some("qwen3"))
        .unwrap()
        .encode("Hi there", false)
        .unwrap();
    let engine = Engine::start(Script {
        events: events(&ids, 2, "stop"),
        ..Script::default()
    });
    let (base, traces) = traced_server(&endpoint, None, Some(&engine));
    let mut body = chat();
    body["max_tokens"] = 8.into();
    let status = post(&base, "/v1/chat/completions", Some(TRACEPARENT), &body);
    assert_eq!(status, 200);
    let span = wait_for_span(&traces, &spans, "create_chat_completion");
    assert_linked(&span, TRACEPARENT);
    let sent = engine.record.lock().unwrap().traceparents.clone();
    let want = format!("00-{}-{}-01", span.trace_id, span.span_id);
    assert_eq!(sent, [Some(want)]);
}
