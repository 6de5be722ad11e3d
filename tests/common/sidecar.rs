//! Helpers of the sidecar tests (`tests/sidecar*.rs`): a scripted engine with an
//! llm-render in front of it, and readers of what the front door answers.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use super::engine::{Engine, Script};
use llm_render::engine::{protocol, Engine as Client, EngineConfig};
use llm_render::model::Model;
use llm_render::server::ServerConfig;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Qwen3, loaded once for every server and encoding of this binary.
pub fn registry() -> llm_render::model::ModelRegistry {
    static REG: std::sync::OnceLock<llm_render::model::ModelRegistry> = std::sync::OnceLock::new();
    REG.get_or_init(super::qwen3_only).clone()
}

pub fn model() -> Arc<Model> {
    registry().get(Some("qwen3")).unwrap()
}

pub fn ids(text: &str) -> Vec<u32> {
    model().encode(text, false).unwrap()
}

/// A scripted engine and an llm-render in front of it (no reasoning parser unless asked).
pub fn setup_with(script: Script, proto: &str, reasoning: &str) -> (Engine, String) {
    setup_engine(script, proto, reasoning, |_| {})
}

/// [`setup_with`], with the engine settings changed by `tune`.
pub fn setup_engine(
    script: Script,
    proto: &str,
    reasoning: &str,
    tune: impl FnOnce(&mut EngineConfig),
) -> (Engine, String) {
    setup_models(registry(), script, proto, reasoning, tune)
}

/// [`setup_engine`] in front of `models`.
pub fn setup_models(
    models: llm_render::model::ModelRegistry,
    script: Script,
    proto: &str,
    reasoning: &str,
    tune: impl FnOnce(&mut EngineConfig),
) -> (Engine, String) {
    let engine = Engine::start(script);
    let mut cfg = EngineConfig::new(&engine.url, protocol(proto).unwrap());
    cfg.model = Some("tiny-qwen3".into());
    cfg.stall_timeout = Duration::from_millis(800);
    cfg.health_interval = Duration::from_millis(100);
    tune(&mut cfg);
    let client = Client::new(cfg).unwrap();
    client.watch_health().unwrap();
    let mut config = ServerConfig {
        engine: Some(client),
        ..ServerConfig::default()
    };
    config.derender.reasoning_parser = reasoning.into();
    let base = super::start_server(models, config);
    (engine, base)
}

pub fn setup(script: Script) -> (Engine, String) {
    setup_with(script, "vllm", "none")
}

pub fn chat(extra: Value) -> Value {
    let mut body = json!({"model": "qwen3", "messages": [{"role": "user", "content": "Hi"}],
                          "max_tokens": 32});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

pub fn post(base: &str, path: &str, body: &Value) -> (u16, reqwest::header::HeaderMap, String) {
    let resp = super::client()
        .post(format!("{base}{path}"))
        .json(body)
        .send()
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.text().unwrap())
}

/// A stream's `data:` events, parsed (`[DONE]` as a string).
pub fn sse(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap_or_else(|_| Value::String(d.to_string())))
        .collect()
}

/// The text of choice `index` over a stream's chunks (chat deltas or completion text).
pub fn streamed_text(chunks: &[Value], index: u64, field: &str) -> String {
    let mut out = String::new();
    for c in chunks {
        for ch in c["choices"].as_array().into_iter().flatten() {
            if ch["index"].as_u64() == Some(index) {
                let v = if field == "text" {
                    &ch["text"]
                } else {
                    &ch["delta"][field]
                };
                out.push_str(v.as_str().unwrap_or(""));
            }
        }
    }
    out
}

pub fn finish_of(chunks: &[Value], index: u64) -> Value {
    chunks
        .iter()
        .flat_map(|c| c["choices"].as_array().cloned().unwrap_or_default())
        .filter(|ch| ch["index"].as_u64() == Some(index))
        .map(|ch| ch["finish_reason"].clone())
        .find(|f| !f.is_null())
        .unwrap_or(Value::Null)
}

pub const TEXT: &str = "The quick brown fox jumps over the lazy dog, twice.";

/// The aborts the engine has had, once there are `n` (or after 2 s).
pub fn wait_aborts(engine: &Engine, n: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(2);
    while engine.aborts().len() < n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    engine.aborts().len()
}

/// Reads the server's `/metrics` value of `name` (no labels).
pub fn metric(base: &str, name: &str) -> f64 {
    let text = super::client()
        .get(format!("{base}/metrics"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or(f64::NAN)
}

/// A streamed chat request written by hand on its own connection, for tests that control
/// when (and whether) the client reads.
pub fn raw_stream_request(base: &str, body: &Value) -> std::net::TcpStream {
    use std::io::Write;
    let addr = base.trim_start_matches("http://");
    let body = body.to_string();
    let mut sock = std::net::TcpStream::connect(addr).unwrap();
    write!(
        sock,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    sock
}

/// The names and the arguments of a stream's tool-call deltas, each concatenated (choice 0).
pub fn streamed_call(chunks: &[Value]) -> (String, String) {
    let (mut name, mut args) = (String::new(), String::new());
    for c in chunks {
        let calls = c["choices"][0]["delta"]["tool_calls"].as_array();
        for call in calls.into_iter().flatten() {
            name.push_str(call["function"]["name"].as_str().unwrap_or(""));
            args.push_str(call["function"]["arguments"].as_str().unwrap_or(""));
        }
    }
    (name, args)
}
