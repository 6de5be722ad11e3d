//! The HTTP client of the engine: one generate request and its event stream, aborts, and
//! the readiness probe.

use super::sse::{Event, SseSplitter};
use super::wire::{Seen, Wire};
use super::EngineError;
use crate::protocol::GenerateResponse;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `--engine*` settings.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The engine's base URL (`http://host:port`, no trailing slash).
    pub url: String,
    pub protocol: &'static dyn Wire,
    /// The engine's own name for the served model (`--engine-model`); `None`: the served
    /// name.
    pub model: Option<String>,
    pub connect_timeout: Duration,
    /// No byte from the engine for this long ends the request (504 before the client has
    /// had a byte, an error event after).
    pub stall_timeout: Duration,
    /// Further attempts when the engine cannot be reached or drops the request before its
    /// first event (so before the client has had a byte).
    pub retries: u32,
    /// The longest event accepted from the engine.
    pub max_event_bytes: usize,
    /// How often `/health` asks the engine whether it is ready.
    pub health_interval: Duration,
}

impl EngineConfig {
    /// Settings for the engine at `url` with the defaults of `serve`'s flags.
    pub fn new(url: &str, protocol: &'static dyn Wire) -> Self {
        EngineConfig {
            url: url.trim_end_matches('/').to_string(),
            protocol,
            model: None,
            connect_timeout: Duration::from_secs(2),
            stall_timeout: Duration::from_secs(60),
            retries: 1,
            max_event_bytes: 16 << 20,
            health_interval: Duration::from_secs(2),
        }
    }
}

/// The engine one server process fronts.
#[derive(Debug)]
pub struct Engine {
    pub config: EngineConfig,
    client: reqwest::Client,
    /// The last readiness probe's answer; `true` until the first probe has run.
    ready: AtomicBool,
    /// The models the engine listed at the last probe that could read them; `None` until
    /// one could.
    models: Mutex<Option<Arc<[EngineModel]>>>,
}

/// One model the engine serves, from its `GET /v1/models`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineModel {
    /// The engine's name for it (what a generate request's `model` names).
    pub id: String,
    /// vLLM's and SGLang's cards carry it.
    pub max_model_len: Option<u64>,
}

impl Engine {
    pub fn new(config: EngineConfig) -> Result<Arc<Self>, String> {
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .tcp_nodelay(true)
            .pool_idle_timeout(Duration::from_secs(30))
            // A generate request is a POST with its body: a redirect would turn it into a GET
            // without one, and a proxy from the environment is not the pod's engine.
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| format!("engine client: {e}"))?;
        Ok(Arc::new(Engine {
            config,
            client,
            ready: AtomicBool::new(true),
            models: Mutex::new(None),
        }))
    }

    pub fn wire(&self) -> &'static dyn Wire {
        self.config.protocol
    }

    /// The engine's name for the model served as `served`.
    pub fn model<'a>(&'a self, served: &'a str) -> &'a str {
        self.config.model.as_deref().unwrap_or(served)
    }

    /// Sends a generate request (the protocol's body) and waits for the response head: an
    /// event stream, or the engine's error.
    /// `trace`: the W3C `traceparent` (and `tracestate`) of the client request's span, so
    /// the engine's spans join its trace (vLLM reads them on its generate route).
    pub async fn generate(
        &self,
        body: Vec<u8>,
        trace: Option<&(String, Option<String>)>,
    ) -> Result<EngineStream, EngineError> {
        let url = format!("{}{}", self.config.url, self.wire().generate_path());
        let mut request = self
            .client
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "text/event-stream");
        if let Some((parent, state)) = trace {
            request = request.header("traceparent", parent);
            if let Some(state) = state {
                request = request.header("tracestate", state);
            }
        }
        let sent = request.body(body).send();
        let resp = match tokio::time::timeout(self.config.stall_timeout, sent).await {
            Err(_) => return Err(EngineError::Stalled(self.config.stall_timeout)),
            Ok(Err(e)) => return Err(self.transport_error(e)),
            Ok(Ok(r)) => r,
        };
        let status = resp.status();
        if !status.is_success() {
            return Err(self.status_error(resp).await);
        }
        // A request sent whole (`stream: false`) is answered with one JSON object.
        let whole = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("application/json"));
        Ok(EngineStream {
            resp,
            sse: SseSplitter::new(self.config.max_event_bytes),
            stall: self.config.stall_timeout,
            seen: Seen::default(),
            wire: self.wire(),
            whole: whole.then_some(false),
            max_bytes: self.config.max_event_bytes,
        })
    }

    /// Aborts the request the engine knows as `engine_id`.
    pub async fn abort(&self, engine_id: &str) -> Result<(), EngineError> {
        let (path, body) = self.wire().abort(engine_id);
        let url = format!("{}{path}", self.config.url);
        let sent = self
            .client
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send();
        match tokio::time::timeout(self.config.stall_timeout, sent).await {
            Err(_) => Err(EngineError::Stalled(self.config.stall_timeout)),
            Ok(Err(e)) => Err(self.transport_error(e)),
            Ok(Ok(r)) if r.status().is_success() => Ok(()),
            Ok(Ok(r)) => Err(self.status_error(r).await),
        }
    }

    /// Asks the engine whether it is ready (its health path answers 200), and remembers it;
    /// when it is, also reads its model list.
    pub async fn probe(&self) -> bool {
        let url = format!("{}{}", self.config.url, self.wire().health_path());
        let limit = self.config.health_interval.max(Duration::from_secs(1));
        let ok = matches!(
            tokio::time::timeout(limit, self.client.get(&url).send()).await,
            Ok(Ok(r)) if r.status().is_success()
        );
        if ok != self.ready.swap(ok, Ordering::Relaxed) {
            tracing::info!(ready = ok, url = %self.config.url, "engine readiness changed");
        }
        if ok {
            self.read_models(limit).await;
        }
        ok
    }

    /// Reads the engine's `GET /v1/models`; keeps the last list when it cannot.
    async fn read_models(&self, limit: Duration) {
        let url = format!("{}{}", self.config.url, self.wire().models_path());
        let body = tokio::time::timeout(limit, async {
            let r = self.client.get(&url).send().await.ok()?;
            if !r.status().is_success() {
                return None;
            }
            r.bytes().await.ok()
        })
        .await
        .ok()
        .flatten();
        let Some(list) = body.as_deref().and_then(parse_models) else {
            tracing::debug!(url = %url, "engine model list not readable");
            return;
        };
        if let Ok(mut m) = self.models.lock() {
            if m.as_deref() != Some(&list[..]) {
                tracing::info!(models = ?list.iter().map(|m| &m.id).collect::<Vec<_>>(), "engine models");
            }
            *m = Some(list.into());
        }
    }

    /// The engine's models at the last probe that could read them; `None` until one could.
    pub fn models(&self) -> Option<Arc<[EngineModel]>> {
        self.models.lock().ok()?.clone()
    }

    /// The last probe's answer.
    pub fn ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    /// Probes the engine every `health_interval`, on a thread of its own, for as long as
    /// the process runs.
    pub fn watch_health(self: &Arc<Self>) -> std::io::Result<()> {
        let engine = self.clone();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        std::thread::Builder::new()
            .name("engine-health".into())
            .spawn(move || {
                rt.block_on(async move {
                    loop {
                        engine.probe().await;
                        tokio::time::sleep(engine.config.health_interval).await;
                    }
                })
            })?;
        Ok(())
    }

    fn transport_error(&self, e: reqwest::Error) -> EngineError {
        if e.is_connect() || e.is_timeout() || e.is_request() {
            EngineError::Unreachable {
                url: self.config.url.clone(),
                why: error_chain(&e),
            }
        } else {
            EngineError::Dropped(error_chain(&e))
        }
    }

    /// An error status, with the engine's OpenAI-shaped body when it sent one (read up to
    /// 64 KiB).
    async fn status_error(&self, mut resp: reqwest::Response) -> EngineError {
        let status = resp.status().as_u16();
        let mut body = Vec::new();
        while body.len() < 64 << 10 {
            match tokio::time::timeout(self.config.stall_timeout, resp.chunk()).await {
                Ok(Ok(Some(b))) => body.extend_from_slice(&b),
                _ => break,
            }
        }
        let value: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
        let message = value
            .as_ref()
            .and_then(|v| v.pointer("/error/message").or_else(|| v.get("message")))
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(500)]).into());
        EngineError::Status {
            status,
            message,
            body: value.filter(|v| v.get("error").is_some_and(|e| e.is_object())),
        }
    }
}

/// An OpenAI model list (`{"data": [{"id": …, "max_model_len"?: …}, …]}`); `None` when
/// the body is not one.
fn parse_models(body: &[u8]) -> Option<Vec<EngineModel>> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let data = v.get("data")?.as_array()?;
    Some(
        data.iter()
            .filter_map(|card| {
                Some(EngineModel {
                    id: card.get("id")?.as_str()?.to_string(),
                    max_model_len: card
                        .get("max_model_len")
                        .and_then(serde_json::Value::as_u64),
                })
            })
            .collect(),
    )
}

/// An error and its causes, on one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

/// One generate request's events.
#[derive(Debug)]
pub struct EngineStream {
    resp: reqwest::Response,
    sse: SseSplitter,
    stall: Duration,
    seen: Seen,
    wire: &'static dyn Wire,
    /// A whole answer (a JSON body, not an event stream): `Some(true)` once it was read.
    whole: Option<bool>,
    /// The longest event (here: the whole body) accepted.
    max_bytes: usize,
}

impl EngineStream {
    /// The next event; `None` once the engine has sent `[DONE]` (or, for a whole answer,
    /// after its one event). Waits at most the stall timeout for each read.
    pub async fn next(&mut self) -> Result<Option<GenerateResponse>, EngineError> {
        match self.whole {
            Some(true) => return Ok(None),
            Some(false) => {
                self.whole = Some(true);
                return self.read_whole().await.map(Some);
            }
            None => {}
        }
        loop {
            match self.sse.next_event() {
                Err(e) => return Err(EngineError::BadEvent(e.to_string())),
                Ok(Some(Event::Done)) => return Ok(None),
                Ok(Some(Event::Data(d))) => return self.wire.event(&d, &mut self.seen).map(Some),
                Ok(None) => {}
            }
            match tokio::time::timeout(self.stall, self.resp.chunk()).await {
                Err(_) => return Err(EngineError::Stalled(self.stall)),
                Ok(Err(e)) => return Err(EngineError::Dropped(error_chain(&e))),
                Ok(Ok(None)) => {
                    return Err(EngineError::Dropped(
                        "the connection closed before `data: [DONE]`".into(),
                    ))
                }
                Ok(Ok(Some(bytes))) => self.sse.extend(&bytes),
            }
        }
    }

    /// The whole answer's body as one event.
    async fn read_whole(&mut self) -> Result<GenerateResponse, EngineError> {
        let mut body = Vec::new();
        loop {
            match tokio::time::timeout(self.stall, self.resp.chunk()).await {
                Err(_) => return Err(EngineError::Stalled(self.stall)),
                Ok(Err(e)) => return Err(EngineError::Dropped(error_chain(&e))),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(bytes))) => {
                    if body.len() + bytes.len() > self.max_bytes {
                        return Err(EngineError::BadEvent(format!(
                            "the engine's answer is over {} bytes",
                            self.max_bytes
                        )));
                    }
                    body.extend_from_slice(&bytes);
                }
            }
        }
        self.wire.event(&body, &mut self.seen)
    }
}
