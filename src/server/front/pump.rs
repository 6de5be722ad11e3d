//! A stream to the client (`stream: true`): `data: <chunk>\n\n` events as OpenAI sends
//! them, then `data: [DONE]`.
//!
//! One task per stream reads the engine, derenders each event in memory and hands the
//! chunk to the client's connection through an [`Outbox`] of at most [`CHANNEL_EVENTS`]
//! chunks and [`CHANNEL_BYTES`] bytes: a client that reads slowly fills it, and the task
//! stops reading the engine (whose own socket buffer then fills) instead of buffering; one
//! that reads nothing for the stall timeout is given up and the engine aborted. A client
//! that goes away closes the channel; the task sees it at once, even while the engine is
//! silent, and aborts the engine request.
//!
//! As vLLM's `/v1/chat/completions` stream: the role delta on each choice's first chunk;
//! with `stream_options.include_usage` a last chunk with `"choices": []` and the usage, and
//! with `continuous_usage_stats` the usage so far on every chunk; a failure after the first
//! byte becomes a `data: {"error": {…}}` event before `[DONE]`. Messages and Responses
//! streams are `event: <type>` / `data: <json>` pairs as those APIs send them, ending with
//! their own last event (`message_stop`, `response.completed`).

use super::{error_body, Flow};
use crate::derender::GenerateResponse;
use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

/// Chunks waiting for the client's connection, at most.
pub const CHANNEL_EVENTS: usize = 16;
/// Bytes of chunks waiting for the client's connection, at most (a larger chunk waits
/// alone): an engine event can carry thousands of tokens with their logprobs when the
/// engine has caught up with a slow reader.
pub const CHANNEL_BYTES: usize = 1 << 20;

pub(super) fn respond(f: Flow, first: GenerateResponse) -> Response {
    let (tx, rx) = mpsc::channel(CHANNEL_EVENTS);
    let out = Outbox {
        tx,
        bytes: Arc::new(Semaphore::new(CHANNEL_BYTES)),
        limit: f.st.config.engine_stall(),
    };
    tokio::spawn(pump(f, first, out));
    (
        [
            (header::CONTENT_TYPE, "text/event-stream; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::new(ChannelBody(rx)),
    )
        .into_response()
}

/// Keeps `front_streams_in_flight` right however the task ends.
struct InFlight(prometheus::IntGauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// A chunk on its way to the client, holding its share of [`CHANNEL_BYTES`] until the
/// connection takes it.
type Held = (Bytes, OwnedSemaphorePermit);

/// The task's end of the way to the client's connection.
struct Outbox {
    tx: mpsc::Sender<Held>,
    bytes: Arc<Semaphore>,
    /// How long a chunk may wait for room: a client that reads nothing for the stall
    /// timeout must not hold an engine request.
    limit: Duration,
}

impl Outbox {
    /// Hands a frame to the client's connection; false when the client is gone or has not
    /// made room for `limit`.
    async fn send(&self, frame: Bytes) -> bool {
        let want = frame.len().clamp(1, CHANNEL_BYTES) as u32;
        let handed = async {
            let permit = self.bytes.clone().acquire_many_owned(want).await.ok()?;
            self.tx.send((frame, permit)).await.ok()
        };
        matches!(tokio::time::timeout(self.limit, handed).await, Ok(Some(())))
    }

    /// Resolves when the client's connection has gone.
    async fn closed(&self) {
        self.tx.closed().await
    }
}

async fn pump(mut f: Flow, first: GenerateResponse, tx: Outbox) {
    let front = f.st.metrics.front.clone();
    front.streams_in_flight.inc();
    let _in_flight = InFlight(front.streams_in_flight.clone());
    let route = f.route();
    let ttft = super::metrics::FrontMetrics::series(&front.ttft, route);
    let itl = super::metrics::FrontMetrics::series(&front.itl, route);
    let options = f.live.setting("stream_options").cloned();
    let flag = |k: &str| {
        options
            .as_ref()
            .and_then(|o| o.get(k))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    let (include_usage, continuous) = (flag("include_usage"), flag("continuous_usage_stats"));
    let returns_ids = f.live.setting("return_token_ids") == Some(&Value::Bool(true));
    let mut ended = Vec::new();
    let mut last_sent: Option<Instant> = None;
    let mut failed = false;
    // The engine ended every choice: its `[DONE]` is read after the client has had its
    // own, so the engine connection can be reused.
    let mut drain_done = false;
    // The prompt tokens the engine found cached, from its events or its last usage event
    // (`cached.rs`), and whether reading that met the engine's `[DONE]` instead.
    let mut cached_tokens: Option<u64> = None;
    let mut engine_done = false;
    let mut echo = f.echo.take().map(super::echo::EchoStream::new);
    // The engine's prompt logprobs (an echo with logprobs is asked of the engine whole).
    let mut prompt_logprobs: Option<Value> = None;
    let mut next = Some(first);
    loop {
        let read = match next.take() {
            Some(mut e) => {
                if returns_ids {
                    e.prompt_token_ids = Some(f.live.prompt_ids().to_vec());
                }
                Ok(Some(e))
            }
            None => tokio::select! {
                biased;
                _ = tx.closed() => {
                    f.guard.fire("client_gone");
                    return;
                }
                r = f.events.next() => r,
            },
        };
        let event = match read {
            Ok(Some(e)) => e,
            Ok(None) => {
                f.guard.disarm();
                break;
            }
            Err(e) => {
                front.engine_errors.with_label_values(&[e.kind()]).inc();
                tracing::warn!(id = f.live.id(), "engine stream failed: {e}");
                f.guard.fire("error");
                failed = true;
                let _ = tx.send(error_frame(&f.shape, &error_body(&e))).await;
                break;
            }
        };
        Flow::note_engine_ends(&mut ended, &event);
        if prompt_logprobs.is_none() {
            prompt_logprobs.clone_from(&event.prompt_logprobs);
        }
        super::cached::note(&mut cached_tokens, &event);
        if ended.len() as u32 >= f.n {
            // The engine's usage event follows its last output at once: read it before the
            // answer's last events, which carry what only it knows.
            match tokio::time::timeout(Duration::from_millis(200), f.events.next()).await {
                Ok(Ok(Some(e))) => super::cached::note(&mut cached_tokens, &e),
                Ok(Ok(None)) => engine_done = true,
                _ => {}
            }
        }
        let frames = match f.shape.api() {
            None => f
                .live
                .push(&f.model, &f.st.config.derender, event)
                .and_then(|mut chunk| {
                    let has_choices = chunk
                        .get("choices")
                        .and_then(Value::as_array)
                        .is_some_and(|c| !c.is_empty());
                    if !has_choices {
                        return Ok(Vec::new());
                    }
                    if let Some(echo) = &mut echo {
                        echo.apply(
                            &f.model,
                            &mut chunk,
                            f.live.prompt_ids(),
                            prompt_logprobs.as_ref(),
                        )?;
                    }
                    if continuous {
                        // vLLM's chunk carries its one choice's counts so far (its
                        // processor's `num_output_tokens` and reasoning count).
                        let one = match chunk["choices"].as_array().map(Vec::as_slice) {
                            Some([one]) => one["index"].as_u64().map(|i| i as u32),
                            _ => None,
                        };
                        chunk["usage"] = usage(&f.live, one);
                        let reasoning = match one {
                            Some(i) => f.live.reasoning_tokens_of(i),
                            None => f.live.reasoning_tokens(),
                        };
                        add_reasoning(&mut chunk["usage"], reasoning);
                    }
                    if let Some(c) = f.continuation.take() {
                        chunk["continuation"] = serde_json::json!(c);
                    }
                    Ok(vec![sse(&chunk)])
                }),
            Some(api) => f
                .live
                .push_as(&f.model, &f.st.config.derender, event, api)
                .map(|mut events| {
                    if let Some(n) = cached_tokens {
                        super::cached::add_to_events(&mut events, n);
                    }
                    events.iter().map(named_sse).collect()
                }),
        };
        let frames = match frames {
            Ok(frames) => frames,
            Err(e) => {
                tracing::warn!(id = f.live.id(), "derender of an engine event failed: {e}");
                f.guard.fire("error");
                failed = true;
                let body = crate::server::ApiError::from(e).body();
                let _ = tx.send(error_frame(&f.shape, &body)).await;
                break;
            }
        };
        let sent_any = !frames.is_empty();
        for frame in frames {
            if !tx.send(frame).await {
                f.guard.fire("client_gone");
                return;
            }
        }
        if sent_any {
            let now = Instant::now();
            match last_sent {
                None => ttft.observe(f.start.elapsed().as_secs_f64()),
                Some(t) => itl.observe(now.duration_since(t).as_secs_f64()),
            }
            last_sent = Some(now);
        }
        if ended.len() as u32 >= f.n {
            f.guard.disarm();
            drain_done = true;
            break;
        }
        if f.live.finished(f.n) {
            f.guard.fire("stop_string");
            break;
        }
    }
    front
        .completion_tokens
        .inc_by(f.live.completion_tokens() as u64);
    if f.shape.api().is_some() {
        // Messages and Responses streams end with their own last event, not `[DONE]`.
        super::metrics::FrontMetrics::series(&front.e2e, route)
            .observe(f.start.elapsed().as_secs_f64());
        drop(tx);
        if drain_done && !engine_done {
            let _ = f.events.next().await;
        }
        return;
    }
    if include_usage && !failed {
        let object = if f.shape.kind() == crate::derender::Kind::Chat {
            "chat.completion.chunk"
        } else {
            "text_completion"
        };
        let mut usage = usage(&f.live, None);
        if let Some(n) = cached_tokens {
            super::cached::add_openai(&mut usage, n);
        }
        add_reasoning(&mut usage, f.live.reasoning_tokens());
        let last = json!({
            "id": f.live.id(), "object": object, "created": f.live.created(),
            "model": f.model.name, "choices": [], "usage": usage,
        });
        if !tx.send(sse(&last)).await {
            return;
        }
    }
    if tx.send(Bytes::from_static(b"data: [DONE]\n\n")).await {
        super::metrics::FrontMetrics::series(&front.e2e, route)
            .observe(f.start.elapsed().as_secs_f64());
    }
    drop(tx);
    if drain_done && !engine_done {
        let _ = f.events.next().await;
    }
}

/// The usage so far: the prompt, and the completion tokens derendered (up to each choice's
/// end, so a stop string's cut counts as the client sees it).
/// The usage so far: of choice `one` (a `continuous_usage_stats` chunk of one choice), else
/// of every choice.
fn usage(live: &crate::derender::LiveStream, one: Option<u32>) -> Value {
    let prompt = live.prompt_tokens();
    let completion = match one {
        // vLLM's `processor.num_output_tokens` of that choice.
        Some(i) => live.choice_tokens(i).unwrap_or(0),
        None => live.completion_tokens(),
    };
    json!({"prompt_tokens": prompt, "completion_tokens": completion,
           "total_tokens": prompt + completion})
}

/// vLLM's chat usage under a reasoning parser: `completion_tokens_details.reasoning_tokens`.
fn add_reasoning(usage: &mut Value, reasoning: Option<usize>) {
    if let Some(n) = reasoning {
        usage["completion_tokens_details"] = json!({"reasoning_tokens": n});
    }
}

/// A Messages or Responses event: `event: <type>` and its data, as both APIs stream them.
fn named_sse(v: &Value) -> Bytes {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("message");
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\n");
    out.extend_from_slice(&sse(v));
    Bytes::from(out)
}

/// A failure after the client's first byte, in the stream's API: an OpenAI `{"error"}`
/// data event, Anthropic's `error` event, or Responses' `error` event.
fn error_frame(shape: &super::Shape, body: &Value) -> Bytes {
    let message = body
        .pointer("/error/message")
        .cloned()
        .unwrap_or(Value::Null);
    match shape {
        super::Shape::Messages => named_sse(&json!({"type": "error",
            "error": {"type": "api_error", "message": message}})),
        super::Shape::Responses(_) => named_sse(&json!({"type": "error",
            "code": body.pointer("/error/code").cloned().unwrap_or(Value::Null),
            "message": message, "param": null})),
        _ => sse(body),
    }
}

fn sse(v: &Value) -> Bytes {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"data: ");
    // Writing a `Value` into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut out, v);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The response body: the chunks the task sends, until it drops its end. A chunk's share
/// of the byte budget is released as the connection takes it.
struct ChannelBody(mpsc::Receiver<Held>);

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|b| b.map(|(b, _held)| Ok(http_body::Frame::data(b))))
    }
}
