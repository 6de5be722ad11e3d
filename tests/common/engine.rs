//! A scripted token-in/token-out engine on loopback, in the shapes a real vLLM engine
//! answers (`../shared/engines/vllm-recorded/`: several IDs per event, `n = 2` choices in
//! their own events, abort by `generate-tokens-<id>`, OpenAI-shaped errors) and SGLang's
//! documented `/generate` (cumulative `output_ids`, `meta_info`). Each test starts its own,
//! sets its [`Script`], and reads what the engine was sent in its [`Record`].
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How a stream ends after its events.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum End {
    /// `data: [DONE]`.
    Done,
    /// Nothing more, the connection held open.
    Stall,
    /// The connection closed without `[DONE]`.
    Drop,
}

/// What the engine answers to each generate request.
#[derive(Debug, Clone)]
pub struct Script {
    /// Each event's `choices` (vLLM's form); the engine adds `request_id` and the rest.
    pub events: Vec<Value>,
    /// Time between two events.
    pub gap: Duration,
    pub end: End,
    /// Answer with this status and body instead.
    pub error: Option<(u16, Value)>,
    /// The first this many requests end as `end_first` right away (no events).
    pub fail_first: usize,
    pub end_first: End,
    /// Speak SGLang's `/generate` (cumulative `output_ids`) instead of vLLM's.
    pub sglang: bool,
    /// `/health` answers 503.
    pub unhealthy: bool,
    /// What `GET /v1/models` lists: (id, max_model_len).
    pub models: Vec<(String, u64)>,
    /// The events are sent this many times over.
    pub repeat: usize,
    /// A recorded whole answer (vLLM's `GenerateTokensResponse`): sent as it is to a
    /// request with `stream: false`, and as one event of its choices to a stream (then its
    /// usage, when the request asks for it).
    pub whole: Option<Value>,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            events: Vec::new(),
            gap: Duration::from_millis(2),
            end: End::Done,
            error: None,
            fail_first: 0,
            end_first: End::Drop,
            sglang: false,
            unhealthy: false,
            models: vec![("tiny-qwen3".into(), 2048)],
            repeat: 1,
            whole: None,
        }
    }
}

/// What the engine was sent.
#[derive(Debug, Default)]
pub struct Record {
    pub generates: Vec<Value>,
    /// Each generate request's `traceparent` header.
    pub traceparents: Vec<Option<String>>,
    /// Abort bodies, with when they arrived.
    pub aborts: Vec<(Value, Instant)>,
    /// When a stream's client (llm-render) stopped reading: its channel closed.
    pub gone: Vec<Instant>,
    /// Bytes of events the engine's streams have handed to the connection so far.
    pub sent_bytes: usize,
}

#[derive(Clone)]
pub struct Engine {
    pub url: String,
    pub script: Arc<Mutex<Script>>,
    pub record: Arc<Mutex<Record>>,
}

impl Engine {
    pub fn start(script: Script) -> Engine {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let engine = Engine {
            url,
            script: Arc::new(Mutex::new(script)),
            record: Arc::new(Mutex::new(Record::default())),
        };
        let state = engine.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let app = axum::Router::new()
                    .route("/inference/v1/generate", post(generate))
                    .route("/generate", post(generate))
                    .route("/inference/v1/abort_requests", post(abort))
                    .route("/abort_request", post(abort))
                    .route("/health", get(health))
                    .route("/v1/models", get(models))
                    .with_state(state);
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        engine
    }

    pub fn generates(&self) -> Vec<Value> {
        self.record.lock().unwrap().generates.clone()
    }

    pub fn aborts(&self) -> Vec<(Value, Instant)> {
        self.record.lock().unwrap().aborts.clone()
    }
}

async fn health(State(e): State<Engine>) -> StatusCode {
    if e.script.lock().unwrap().unhealthy {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    }
}

/// vLLM's card shape (`vllm-recorded`'s engine serves `--max-model-len 2048`).
async fn models(State(e): State<Engine>) -> axum::Json<Value> {
    let data: Vec<Value> = (e.script.lock().unwrap().models.iter())
        .map(|(id, len)| {
            json!({"id": id, "object": "model", "created": 0, "owned_by": "vllm",
                   "root": "/models/tiny-qwen3", "parent": null, "max_model_len": len})
        })
        .collect();
    axum::Json(json!({"object": "list", "data": data}))
}

async fn abort(State(e): State<Engine>, body: Bytes) -> StatusCode {
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    e.record.lock().unwrap().aborts.push((v, Instant::now()));
    StatusCode::OK
}

async fn generate(
    State(e): State<Engine>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let req: Value = serde_json::from_slice(&body).unwrap();
    let attempt = {
        let mut r = e.record.lock().unwrap();
        let traceparent = headers.get("traceparent").and_then(|v| v.to_str().ok());
        r.traceparents.push(traceparent.map(str::to_string));
        r.generates.push(req.clone());
        r.generates.len()
    };
    let script = e.script.lock().unwrap().clone();
    if let Some((status, body)) = script.error {
        return (StatusCode::from_u16(status).unwrap(), axum::Json(body)).into_response();
    }
    if let Some(mut whole) = script.whole.clone() {
        whole["request_id"] = json!(format!(
            "generate-tokens-{}",
            req["request_id"].as_str().unwrap_or("x")
        ));
        if req["stream"] == json!(false) {
            return axum::Json(whole).into_response();
        }
        let event = json!({"request_id": whole["request_id"], "usage": null,
                           "output_mode": "tokens", "choices": whole["choices"]});
        let mut body = format!("data: {event}\n\n");
        if req["stream_options"]["include_usage"] == json!(true) {
            let usage = json!({"request_id": whole["request_id"], "usage": whole["usage"],
                               "output_mode": "tokens", "choices": []});
            body.push_str(&format!("data: {usage}\n\n"));
        }
        body.push_str("data: [DONE]\n\n");
        return ([("content-type", "text/event-stream; charset=utf-8")], body).into_response();
    }
    let (events, end) = if attempt <= script.fail_first {
        (Vec::new(), script.end_first)
    } else {
        (script.events.clone(), script.end)
    };
    let id = match script.sglang {
        false => format!(
            "generate-tokens-{}",
            req["request_id"].as_str().unwrap_or("x")
        ),
        true => req["rid"].as_str().unwrap_or("x").to_string(),
    };
    let (tx, rx) = mpsc::channel::<Bytes>(4);
    let record = e.record.clone();
    tokio::spawn(async move {
        let mut so_far: Vec<Vec<Value>> = Vec::new();
        let times = script.repeat.max(1);
        for choices in events.iter().cycle().take(events.len() * times) {
            tokio::time::sleep(script.gap).await;
            let data = if script.sglang {
                sglang_event(&id, choices, &mut so_far)
            } else {
                vec![
                    json!({"request_id": id, "usage": null, "output_mode": "tokens",
                            "choices": choices}),
                ]
            };
            for d in data {
                let bytes = Bytes::from(format!("data: {d}\n\n"));
                let len = bytes.len();
                if tx.send(bytes).await.is_err() {
                    record.lock().unwrap().gone.push(Instant::now());
                    return;
                }
                record.lock().unwrap().sent_bytes += len;
            }
        }
        match end {
            End::Done => {
                let _ = tx.send(Bytes::from_static(b"data: [DONE]\n\n")).await;
            }
            End::Drop => {}
            End::Stall => {
                tx.closed().await;
                record.lock().unwrap().gone.push(Instant::now());
            }
        }
    });
    (
        [("content-type", "text/event-stream; charset=utf-8")],
        Body::new(ChannelBody(rx)),
    )
        .into_response()
}

/// SGLang's events for vLLM-form `choices`: one per choice, `output_ids` cumulative, 2 of
/// the prompt's tokens found cached.
fn sglang_event(id: &str, choices: &Value, so_far: &mut Vec<Vec<Value>>) -> Vec<Value> {
    let mut out = Vec::new();
    for c in choices.as_array().unwrap() {
        let i = c["index"].as_u64().unwrap_or(0) as usize;
        if so_far.len() <= i {
            so_far.resize(i + 1, Vec::new());
        }
        so_far[i].extend(c["token_ids"].as_array().unwrap().iter().cloned());
        let finish = match c["finish_reason"].as_str() {
            Some(t) => json!({"type": t}),
            None => Value::Null,
        };
        out.push(json!({"text": "", "output_ids": so_far[i], "index": i,
            "meta_info": {"id": id, "finish_reason": finish, "prompt_tokens": 3,
                          "completion_tokens": so_far[i].len(), "cached_tokens": 2}}));
    }
    out
}

/// vLLM's stream choice: `ids` (and `finish`) for choice `index`.
pub fn choice(index: u32, ids: &[u32], finish: Option<&str>) -> Value {
    json!({"index": index, "finish_reason": finish, "stop_reason": null,
           "token_ids": ids, "logprobs": null})
}

/// Two choices' events, one ID each in turn (choice 0, then 1), as vLLM's engine sends
/// `n = 2`: choice 0 ends with `stop`, choice 1 with `length`.
pub fn interleaved(a: &[u32], b: &[u32]) -> Vec<Value> {
    let mut evs = Vec::new();
    for i in 0..a.len().max(b.len()) {
        for (index, ids, finish) in [(0, a, "stop"), (1, b, "length")] {
            if let Some(t) = ids.get(i) {
                let f = (i + 1 == ids.len()).then_some(finish);
                evs.push(json!([choice(index, &[*t], f)]));
            }
        }
    }
    evs
}

/// Events of `per` IDs each for one choice, the last finishing with `finish`.
pub fn events(ids: &[u32], per: usize, finish: &str) -> Vec<Value> {
    let chunks: Vec<&[u32]> = ids.chunks(per.max(1)).collect();
    chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let f = (i + 1 == chunks.len()).then_some(finish);
            json!([choice(0, c, f)])
        })
        .collect()
}

struct ChannelBody(mpsc::Receiver<Bytes>);

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|b| b.map(|b| Ok(http_body::Frame::data(b))))
    }
}
