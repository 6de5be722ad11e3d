//! The sidecar's front door when its engine fails, and its clients: each engine error in
//! kind, a stalled engine (before and after the first byte), a dropped connection (and the
//! retry before the first event), a client disconnect reaching the engine as an abort
//! within 100 ms, a client that stops reading holding the engine back (and given up after
//! the stall timeout), and `/health` and `/v1/models` following the engine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::engine::{events, End, Script};
use common::sidecar::*;
use llm_render::engine::{protocol, Engine as Client, EngineConfig};
use llm_render::server::ServerConfig;
use serde_json::{json, Value};
use std::io::Read;
use std::time::{Duration, Instant};

#[test]
fn engine_errors_reach_the_client_in_kind() {
    let err = json!({"error": {"message": "Token id 999999 is out of vocabulary",
        "type": "BadRequestError", "param": null, "code": 400}});
    let (_engine, base) = setup(Script {
        error: Some((400, err.clone())),
        ..Script::default()
    });
    let (status, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stream": true})),
    );
    assert_eq!(status, 400);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), err);

    // Unreachable: a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cfg = EngineConfig::new(
        &format!("http://127.0.0.1:{port}"),
        protocol("vllm").unwrap(),
    );
    let config = ServerConfig {
        engine: Some(Client::new(cfg).unwrap()),
        ..ServerConfig::default()
    };
    let base = common::start_server(registry(), config);
    let (status, headers, body) = post(&base, "/v1/chat/completions", &chat(json!({})));
    assert_eq!(status, 503, "{body}");
    assert_eq!(headers["retry-after"], "1");
    assert!(body.contains("unreachable"), "{body}");
}

#[test]
fn a_stalled_engine_is_a_504_before_the_first_byte_and_an_error_event_after() {
    let (engine, base) = setup(Script {
        events: Vec::new(),
        end: End::Stall,
        ..Script::default()
    });
    let (status, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stream": true})),
    );
    assert_eq!(status, 504, "{body}");
    assert_eq!(wait_aborts(&engine, 1), 1, "a stalled request is aborted");

    let (engine, base) = setup(Script {
        events: events(&ids(TEXT), 2, "length")[..1].to_vec(),
        end: End::Stall,
        ..Script::default()
    });
    let (status, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stream": true})),
    );
    assert_eq!(status, 200);
    let chunks = sse(&body);
    assert_eq!(chunks.last().unwrap(), "[DONE]");
    let err = &chunks[chunks.len() - 2]["error"];
    assert_eq!(err["code"], 504, "{body}");
    assert_eq!(wait_aborts(&engine, 1), 1);
}

#[test]
fn an_engine_that_drops_mid_stream_ends_with_an_error_event_and_is_retried_before() {
    let (_engine, base) = setup(Script {
        events: events(&ids(TEXT), 2, "length")[..2].to_vec(),
        end: End::Drop,
        ..Script::default()
    });
    let (status, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stream": true})),
    );
    assert_eq!(status, 200);
    let chunks = sse(&body);
    assert_eq!(chunks.last().unwrap(), "[DONE]");
    assert_eq!(chunks[chunks.len() - 2]["error"]["code"], 502, "{body}");

    // Dropped before its first event, once: sent again, and the client sees only success.
    let (engine, base) = setup(Script {
        events: events(&ids(TEXT), 3, "length"),
        fail_first: 1,
        end_first: End::Drop,
        ..Script::default()
    });
    let (status, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stream": true})),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(streamed_text(&sse(&body), 0, "content"), TEXT);
    assert_eq!(engine.generates().len(), 2);
}

#[test]
fn a_client_that_disconnects_aborts_the_engine_within_100_ms() {
    let (engine, base) = setup(Script {
        events: events(&ids(TEXT), 2, "length")[..1].to_vec(),
        end: End::Stall,
        ..Script::default()
    });
    let mut sock = raw_stream_request(&base, &chat(json!({"stream": true})));
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("data: ") {
        let n = sock.read(&mut buf).unwrap();
        assert!(n > 0);
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(metric(&base, "llm_render_front_streams_in_flight"), 1.0);
    let gone = Instant::now();
    drop(sock);
    let deadline = gone + Duration::from_millis(500);
    while engine.aborts().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let aborts = engine.aborts();
    assert_eq!(aborts.len(), 1, "no abort reached the engine");
    let took = aborts[0].1.duration_since(gone);
    assert!(took < Duration::from_millis(100), "abort took {took:?}");
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(metric(&base, "llm_render_front_streams_in_flight"), 0.0);
    // The scrape itself is the one request in flight.
    assert_eq!(metric(&base, "llm_render_requests_in_flight"), 1.0);
}

#[test]
fn health_follows_the_engine() {
    let (engine, base) = setup(Script::default());
    let health = || {
        common::client()
            .get(format!("{base}/health"))
            .send()
            .unwrap()
            .status()
            .as_u16()
    };
    std::thread::sleep(Duration::from_millis(250));
    assert_eq!(health(), 200);
    engine.script.lock().unwrap().unhealthy = true;
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(health(), 503);
    engine.script.lock().unwrap().unhealthy = false;
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(health(), 200);
}

#[test]
fn models_lists_what_the_engine_serves_under_the_served_names() {
    let (engine, base) = setup(Script::default());
    let models = || -> Value {
        common::client()
            .get(format!("{base}/v1/models"))
            .send()
            .unwrap()
            .json()
            .unwrap()
    };
    std::thread::sleep(Duration::from_millis(250));
    let list = models();
    let card = &list["data"][0];
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(card["id"], "qwen3");
    assert_eq!(card["engine_model"], "tiny-qwen3");
    // The engine's limit, smaller than the tokenizer's.
    assert_eq!(card["max_model_len"], 2048);
    // The engine now serves another model: the served one is no longer listed.
    engine.script.lock().unwrap().models = vec![("other".into(), 4096)];
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(models()["data"], json!([]));
}

#[test]
fn a_client_that_stops_reading_holds_the_engine_back_instead_of_growing_memory() {
    // 40 events of 1,000 tokens (the model's 40,960-token limit), each token with 20 top
    // logprobs: ~1 MB per event, ~40 MB in all if nothing held the engine back.
    let mut event = events(&ids(&" hello".repeat(2000)), 1000, "length")[..1].to_vec();
    let lp = |t: &Value| json!({"token_id": t, "logprob": -0.5, "rank": 1});
    for c in event[0].as_array_mut().unwrap() {
        let content: Vec<Value> = (c["token_ids"].as_array().unwrap().iter())
            .map(|t| {
                let mut e = lp(t);
                e["top_logprobs"] = (0..20).map(|_| lp(t)).collect();
                e
            })
            .collect();
        c["logprobs"] = json!({ "content": content });
    }
    let script_event_bytes = event[0].to_string().len();
    let script = Script {
        events: event,
        gap: Duration::ZERO,
        repeat: 40,
        end: End::Stall,
        ..Script::default()
    };
    // Long enough to see the engine held back before the client's write timeout (the
    // stall timeout) gives up on it.
    let stall = Duration::from_secs(4);
    let (engine, base) = setup_engine(script, "vllm", "none", |c| c.stall_timeout = stall);
    let body = chat(
        json!({"stream": true, "max_tokens": 40_000, "logprobs": true,
                           "top_logprobs": 20}),
    );
    let mut sock = raw_stream_request(&base, &body);
    // The client reads nothing: once the socket buffers and the 16-chunk channel are full,
    // the engine's stream must stop moving.
    let sent = || engine.record.lock().unwrap().sent_bytes;
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut last, mut still) = (usize::MAX, 0);
    while still < 3 {
        std::thread::sleep(Duration::from_millis(150));
        let now = sent();
        assert!(
            Instant::now() < deadline,
            "the engine never stopped: {now} bytes sent"
        );
        still = if now == last && now > 0 { still + 1 } else { 0 };
        last = now;
    }
    let whole = 40 * script_event_bytes;
    assert!(
        last < whole * 3 / 4,
        "{last} of {whole} bytes left the engine for a client that read none"
    );
    assert!(engine.aborts().is_empty());
    // Reading again releases it (once the buffers between have drained).
    let mut buf = vec![0u8; 1 << 20];
    let (mut read, resumed) = (0, Instant::now() + Duration::from_secs(30));
    while sent() <= last {
        assert!(
            Instant::now() < resumed,
            "reading {read} bytes did not resume the engine"
        );
        let n = sock.read(&mut buf).unwrap();
        assert!(n > 0, "the stream ended after {read} bytes");
        read += n;
    }
    // A client that stops reading for the stall timeout is given up: the engine is
    // aborted although the connection stays open.
    let stopped = Instant::now();
    while engine.aborts().is_empty() {
        assert!(
            stopped.elapsed() < stall * 4,
            "no abort for a client that stopped reading"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(stopped.elapsed() >= stall / 2);
    drop(sock);
}
