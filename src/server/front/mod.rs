//! The sidecar's OpenAI front door (`serve --engine URL`): `POST /v1/chat/completions`,
//! `POST /v1/completions`, and Anthropic's `POST /v1/messages` and OpenAI's `POST
//! /v1/responses` (stateless) as the chat request they convert to, streamed (SSE) or not,
//! in one hop: render →
//! the engine's token API (`engine/`) → derender in memory (`derender::LiveStream`) →
//! client.
//!
//! * `mod.rs`: the request's render and the engine request, with retries before the
//!   client has had a byte (engine unreachable → 503 with `Retry-After`, an engine error
//!   status → the same status and error, stalled → 504).
//! * `pump.rs`: a stream to the client, a bounded channel between the engine's events and
//!   the client's socket (a slow client slows the engine read).
//! * `collect.rs`: a whole answer, the one-shot derender of the collected IDs.
//! * `metrics.rs`: time to first token, inter-token latency, end-to-end latency, engine
//!   errors, aborts, streams in flight.
//!
//! The engine is aborted (`generate-tokens-<id>` for vLLM) when a stop string ends every
//! choice, when the client goes away (a dropped handler or a closed stream), and after a
//! failed event; the engine stops generating at once instead of at its next write.

mod cached;
mod collect;
mod echo;
pub mod metrics;
mod pump;

use super::routes::converted_for_model;
use super::{ApiError, AppState};
use crate::derender::{Api, GenerateResponse, Kind, LiveStream};
use crate::engine::{Engine, EngineError, EngineStream};
use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::{
    parse_json, parse_json_shared, ChatRequest, CompletionRequest, ConvertedFrom,
};
use crate::render;
use axum::body::Bytes;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::OwnedSemaphorePermit;

/// The API a front-door request came in, and is answered, in.
#[derive(Debug, Clone)]
pub(super) enum Shape {
    Chat,
    Completion,
    /// Anthropic Messages: rendered and derendered as the chat request it converts to,
    /// answered as a `message` or its events.
    Messages,
    /// OpenAI Responses (stateless), with the request whose settings the response echoes.
    Responses(Map<String, Value>),
}

impl Shape {
    /// The derender kind: completions, or chat for every chat-based API.
    fn kind(&self) -> Kind {
        match self {
            Shape::Completion => Kind::Completion,
            _ => Kind::Chat,
        }
    }

    /// The reshaping of the chat derender, for Messages and Responses.
    fn api(&self) -> Option<Api<'_>> {
        match self {
            Shape::Messages => Some(Api::Messages),
            Shape::Responses(original) => Some(Api::Responses(original)),
            Shape::Chat | Shape::Completion => None,
        }
    }

    /// Its route, as the metrics label it.
    fn route(&self) -> &'static str {
        match self {
            Shape::Chat => "/v1/chat/completions",
            Shape::Completion => "/v1/completions",
            Shape::Messages => "/v1/messages",
            Shape::Responses(_) => "/v1/responses",
        }
    }
}

/// A rendered request, ready for the engine.
struct Prepared {
    model: Arc<Model>,
    shape: Shape,
    generate: crate::protocol::GenerateRequest,
    /// The request as the client sent it, less its conversation: the derender's settings.
    original: Map<String, Value>,
    /// What `echo: true` puts before each choice.
    echo: Option<echo::Echo>,
}

pub async fn chat_completions(
    st: Arc<AppState>,
    bytes: Bytes,
    permit: OwnedSemaphorePermit,
) -> Response {
    serve(st, bytes, permit, Route::Chat).await
}

pub async fn completions(
    st: Arc<AppState>,
    bytes: Bytes,
    permit: OwnedSemaphorePermit,
) -> Response {
    serve(st, bytes, permit, Route::Completion).await
}

pub async fn messages(st: Arc<AppState>, bytes: Bytes, permit: OwnedSemaphorePermit) -> Response {
    serve(st, bytes, permit, Route::Messages).await
}

pub async fn responses(st: Arc<AppState>, bytes: Bytes, permit: OwnedSemaphorePermit) -> Response {
    serve(st, bytes, permit, Route::Responses).await
}

/// Which front-door route a request came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Chat,
    Completion,
    Messages,
    Responses,
}

async fn serve(
    st: Arc<AppState>,
    bytes: Bytes,
    permit: OwnedSemaphorePermit,
    route: Route,
) -> Response {
    let start = Instant::now();
    match prepare(&st, bytes, route).await {
        Ok(p) => run(st, p, permit, start).await,
        Err(e) => e.into_response(),
    }
}

/// The chat request a Messages or Responses body converts to, as JSON (what the derender
/// reads) and as the render reads it.
fn converted(
    st: &AppState,
    model: &Model,
    body: &Value,
    route: Route,
) -> Result<(Map<String, Value>, ChatRequest), RequestError> {
    let (map, from) = match route {
        Route::Messages => (
            render::anthropic::messages_to_chat_map(model, body, &st.config.render)?,
            ConvertedFrom::Messages,
        ),
        _ => (
            crate::protocol::responses::to_chat(body)?,
            ConvertedFrom::Responses,
        ),
    };
    let mut req = ChatRequest::from_converted(&map, from)?;
    if from == ConvertedFrom::Responses {
        render::responses::keep_for_harmony(model, body, &mut req);
    }
    Ok((map, req))
}

/// Renders the request as its render route does (http images fetched first), within the
/// request timeout.
async fn prepare(st: &Arc<AppState>, bytes: Bytes, route: Route) -> Result<Prepared, ApiError> {
    if st.config.engine.is_none() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "no engine behind this server: start it with `serve --engine URL` to serve \
             /v1/chat/completions, /v1/completions, /v1/messages and /v1/responses",
        ));
    }
    let media = if route != Route::Completion
        && st.config.render.fetcher.is_some()
        && bytes.windows(4).any(|w| w == b"http")
    {
        let req: ChatRequest = match route {
            Route::Chat => parse_json(&bytes)?,
            _ => {
                let body: Value = parse_json(&bytes)?;
                let (_, (_, req)) =
                    converted_for_model(st, &body, |m| converted(st, m, &body, route))?;
                req
            }
        };
        render::fetch_request_media(&req, &st.config.render).await?
    } else {
        render::FetchedMedia::default()
    };
    let work = super::routes::cpu_work(st, bytes, move |st, bytes| {
        if route == Route::Completion {
            let mut original: Map<String, Value> = parse_json(&bytes)?;
            let req: CompletionRequest = parse_json(&bytes)?;
            let model = st.models.get(req.model.as_deref())?;
            let (mut gs, timings) = render::render_completion(&model, &req)?;
            if gs.len() != 1 {
                return Err(RequestError::invalid(
                    "prompt",
                    format!(
                        "the front door serves one prompt per request (got {}): send each \
                         prompt in its own request",
                        gs.len()
                    ),
                ));
            }
            let g = gs.remove(0);
            let echo = echo::Echo::completion(
                &model,
                &original,
                original.get("prompt").and_then(Value::as_str),
                &g,
            )?;
            st.metrics
                .observe_render(&model.name, g.token_ids.len(), timings);
            original.remove("prompt");
            return Ok(Prepared {
                model,
                shape: Shape::Completion,
                generate: g,
                original,
                echo,
            });
        }
        let (model, mut original, mut req, shape) = match route {
            Route::Chat => {
                let original: Map<String, Value> = parse_json(&bytes)?;
                let req: ChatRequest = parse_json_shared(&bytes)?;
                let model = st.models.get(req.model.as_deref())?;
                (model, original, req, Shape::Chat)
            }
            _ => {
                let body: Value = parse_json(&bytes)?;
                let (model, (map, req)) =
                    converted_for_model(st, &body, |m| converted(st, m, &body, route))?;
                let shape = match (route, body) {
                    (Route::Messages, _) => Shape::Messages,
                    (_, Value::Object(mut o)) => {
                        o.remove("input");
                        Shape::Responses(o)
                    }
                    _ => Shape::Responses(Map::new()),
                };
                (model, map, req, shape)
            }
        };
        // The engine needs the pixels: the render-only payload choices (`mm_payload`,
        // `return_mm_kwargs`, `skip_pixel_values`) are ignored here, as vLLM's own
        // chat route ignores them.
        req.skip_pixel_values = false;
        req.mm_payload = None;
        req.return_mm_kwargs = None;
        let echo = match shape {
            Shape::Chat => echo::Echo::chat(&original)?,
            _ => None,
        };
        let (g, timings) = render::render_chat(&model, &req, &st.config.render, Some(&media))?;
        st.metrics
            .observe_render(&model.name, g.token_ids.len(), timings);
        if let Some(c) = &g.continuation {
            st.metrics.observe_continuation(&model.name, c);
        }
        original.remove("messages");
        Ok(Prepared {
            model,
            shape,
            generate: g,
            original,
            echo,
        })
    });
    match st.deadlines.timeout(st.config.request_timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "the render took longer than the server's request timeout",
        )),
    }
}

/// Aborts the engine request when dropped while armed: a handler dropped by hyper (the
/// client went away), a stream that ended early, a failed event.
pub(super) struct AbortOnDrop {
    engine: Arc<Engine>,
    engine_id: String,
    armed: bool,
    metrics: Arc<metrics::FrontMetrics>,
    /// The `reason` label of the abort, if it fires.
    reason: &'static str,
}

impl AbortOnDrop {
    fn new(st: &AppState, engine: &Arc<Engine>, engine_id: String) -> Self {
        AbortOnDrop {
            engine: engine.clone(),
            engine_id,
            armed: true,
            metrics: st.metrics.front.clone(),
            reason: "client_gone",
        }
    }

    /// The engine ended the request itself: nothing to abort.
    fn disarm(&mut self) {
        self.armed = false;
    }

    /// Aborts now, counted under `reason`.
    fn fire(&mut self, reason: &'static str) {
        self.reason = reason;
        self.send();
    }

    fn send(&mut self) {
        if !std::mem::take(&mut self.armed) {
            return;
        }
        self.metrics.aborts.with_label_values(&[self.reason]).inc();
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(id = %self.engine_id, "no runtime to abort the engine request on");
            return;
        };
        let engine = self.engine.clone();
        let id = self.engine_id.clone();
        rt.spawn(async move {
            if let Err(e) = engine.abort(&id).await {
                tracing::warn!(id = %id, "engine abort failed: {e}");
            }
        });
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.send();
    }
}

/// Sends the request to the engine, waits for its first event (again, up to
/// `--engine-retries` times, when the engine cannot be reached or drops the request before
/// it), then answers the client with a stream or a whole response.
async fn run(
    st: Arc<AppState>,
    p: Prepared,
    permit: OwnedSemaphorePermit,
    start: Instant,
) -> Response {
    let Some(engine) = st.config.engine.clone() else {
        return ApiError::new(StatusCode::NOT_FOUND, "no engine").into_response();
    };
    let Prepared {
        model,
        shape,
        generate,
        original,
        echo,
    } = p;
    let kind = shape.kind();
    let id = generate.request_id.clone();
    let prompt_ids: Vec<u32> = generate.token_ids.as_ref().clone();
    let continuation = generate.continuation.clone();
    let n = generate.sampling_params.n.max(1);
    let stream = generate.stream;
    let wire = engine.wire();
    // A streamed echo that shows the prompt's logprobs is asked of the engine whole (only
    // its whole answer carries them) and streamed from here (`echo.rs`).
    let engine_whole = stream && echo.as_ref().is_some_and(echo::Echo::needs_prompt_logprobs);
    if generate.sampling_params.prompt_logprobs.is_some()
        && (!stream || engine_whole)
        && !wire.prompt_logprobs()
    {
        let param = if echo.is_some() {
            "echo"
        } else {
            "prompt_logprobs"
        };
        return ApiError::from(RequestError::invalid(
            param,
            format!(
                "the engine's protocol ({}) returns no prompt logprobs, which `{param}` asks for",
                wire.name()
            ),
        ))
        .into_response();
    }
    let trace = super::otel::downstream();
    let mut attempt = 0;
    let (events, first, guard) = loop {
        // Each attempt has an engine id of its own (the response keeps the render's): a late
        // abort of one attempt, or another client's request with the same `request_id`,
        // never reaches another request.
        let mut g = generate.clone();
        g.request_id = format!("{id}-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        if engine_whole {
            g.stream = false;
        }
        let mut guard = AbortOnDrop::new(&st, &engine, wire.engine_id(&g.request_id));
        let body = match wire.generate_body(g, engine.model(&model.name)) {
            Ok(b) => b,
            Err(e) => return engine_error(&st, e).into_response(),
        };
        let err = match engine.generate(body, trace.as_ref()).await {
            Ok(mut events) => match events.next().await {
                Ok(Some(first)) => break (events, first, guard),
                // The engine finished the request without an event: not sent again.
                Ok(None) => EngineError::BadEvent("the stream ended before its first event".into()),
                Err(e) => e,
            },
            Err(e) => e,
        };
        if matches!(
            err,
            EngineError::Unreachable { .. } | EngineError::Status { .. }
        ) {
            // The engine never started it.
            guard.disarm();
        } else {
            guard.fire("error");
        }
        if err.retryable() && attempt < engine.config.retries {
            attempt += 1;
            st.metrics.front.retries.inc();
            tracing::info!(%id, attempt, "retrying the engine request: {err}");
            tokio::time::sleep(Duration::from_millis(50 * u64::from(attempt))).await;
            continue;
        }
        return engine_error(&st, err).into_response();
    };
    let live = LiveStream::new(&model, &st.config.derender, kind, id, original, prompt_ids);
    let flow = Flow {
        st,
        model,
        shape,
        events,
        live,
        guard,
        n,
        start,
        continuation,
        echo,
        _permit: permit,
    };
    if stream {
        pump::respond(flow, first)
    } else {
        collect::respond(flow, first).await
    }
}

/// One engine request and its derender, from its first event on.
pub(super) struct Flow {
    st: Arc<AppState>,
    model: Arc<Model>,
    shape: Shape,
    events: EngineStream,
    live: LiveStream,
    guard: AbortOnDrop,
    n: u32,
    start: Instant,
    /// What the render's bridge did with `continue_from` (**ext**), for the chat answer:
    /// on the whole response, or on the first chunk of a stream.
    continuation: Option<crate::protocol::Continuation>,
    /// What `echo: true` puts before each choice (a whole answer's, or each choice's
    /// first chunk).
    echo: Option<echo::Echo>,
    /// The request's `--max-concurrency` slot, held until the answer is complete.
    _permit: OwnedSemaphorePermit,
}

impl Flow {
    /// Its route, as the metrics label it.
    fn route(&self) -> &'static str {
        self.shape.route()
    }

    /// Counts what the engine ended in `event`; true when every choice has ended on the
    /// engine's side.
    fn note_engine_ends(ended: &mut Vec<u32>, event: &GenerateResponse) {
        for c in &event.choices {
            if c.finish_reason.is_some() && !ended.contains(&c.index) {
                ended.push(c.index);
            }
        }
    }
}

/// The client's answer to an engine failure before its first byte: the engine's own status
/// and error for an error status, 503 with `Retry-After` when it is unreachable, 504 when
/// it stalls, 502 otherwise.
fn engine_error(st: &AppState, e: EngineError) -> Response {
    st.metrics
        .front
        .engine_errors
        .with_label_values(&[e.kind()])
        .inc();
    tracing::warn!("engine: {e}");
    match e {
        EngineError::Status {
            status,
            body: Some(body),
            ..
        } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
            (status, axum::Json(body)).into_response()
        }
        EngineError::Status {
            status, message, ..
        } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
            ApiError::new(status, message).into_response()
        }
        EngineError::Unreachable { .. } => {
            // The engine's address stays in the log, not in the client's answer.
            let mut resp = ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the engine is unreachable; retry later",
            )
            .into_response();
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            resp
        }
        EngineError::Stalled(_) => {
            ApiError::new(StatusCode::GATEWAY_TIMEOUT, e.to_string()).into_response()
        }
        EngineError::Dropped(_) | EngineError::BadEvent(_) => {
            ApiError::new(StatusCode::BAD_GATEWAY, e.to_string()).into_response()
        }
    }
}

/// The OpenAI-shaped error body of a failure after the client's first byte.
fn error_body(e: &EngineError) -> Value {
    let status = match e {
        EngineError::Status { status, .. } => *status,
        EngineError::Stalled(_) => 504,
        _ => 502,
    };
    let err = ApiError::new(
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
        e.to_string(),
    );
    err.body()
}
