//! The sidecar's front door (`serve --engine URL`) end to end: a real llm-render server on
//! loopback in front of a scripted engine (`common/engine.rs`) in the recorded vLLM shapes
//! and SGLang's: chat and completions, streamed and not, `n = 2`, usage, stop strings and
//! the abort they send, tool calls, logprobs, `return_token_ids`, `kv_transfer_params`,
//! each engine failure, and a client disconnect reaching the engine as an abort.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::engine::{choice, events, End, Engine, Script};
use llm_render::engine::{protocol, Engine as Client, EngineConfig};
use llm_render::model::Model;
use llm_render::server::ServerConfig;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Qwen3, loaded once for every server and encoding of this binary.
fn registry() -> llm_render::model::ModelRegistry {
    static REG: std::sync::OnceLock<llm_render::model::ModelRegistry> = std::sync::OnceLock::new();
    REG.get_or_init(common::qwen3_only).clone()
}

fn model() -> Arc<Model> {
    registry().get(Some("qwen3")).unwrap()
}

fn ids(text: &str) -> Vec<u32> {
    model().encode(text, false).unwrap()
}

/// A scripted engine and an llm-render in front of it (no reasoning parser unless asked).
fn setup_with(script: Script, proto: &str, reasoning: &str) -> (Engine, String) {
    let engine = Engine::start(script);
    let mut cfg = EngineConfig::new(&engine.url, protocol(proto).unwrap());
    cfg.model = Some("tiny-qwen3".into());
    cfg.stall_timeout = Duration::from_millis(800);
    cfg.health_interval = Duration::from_millis(100);
    let client = Client::new(cfg).unwrap();
    client.watch_health().unwrap();
    let mut config = ServerConfig {
        engine: Some(client),
        ..ServerConfig::default()
    };
    config.derender.reasoning_parser = reasoning.into();
    let base = common::start_server(registry(), config);
    (engine, base)
}

fn setup(script: Script) -> (Engine, String) {
    setup_with(script, "vllm", "none")
}

fn chat(extra: Value) -> Value {
    let mut body = json!({"model": "qwen3", "messages": [{"role": "user", "content": "Hi"}],
                          "max_tokens": 32});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

fn post(base: &str, path: &str, body: &Value) -> (u16, reqwest::header::HeaderMap, String) {
    let resp = common::client()
        .post(format!("{base}{path}"))
        .json(body)
        .send()
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.text().unwrap())
}

/// A stream's `data:` events, parsed (`[DONE]` as a string).
fn sse(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap_or_else(|_| Value::String(d.to_string())))
        .collect()
}

/// The text of choice `index` over a stream's chunks (chat deltas or completion text).
fn streamed_text(chunks: &[Value], index: u64, field: &str) -> String {
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

fn finish_of(chunks: &[Value], index: u64) -> Value {
    chunks
        .iter()
        .flat_map(|c| c["choices"].as_array().cloned().unwrap_or_default())
        .filter(|ch| ch["index"].as_u64() == Some(index))
        .map(|ch| ch["finish_reason"].clone())
        .find(|f| !f.is_null())
        .unwrap_or(Value::Null)
}

const TEXT: &str = "The quick brown fox jumps over the lazy dog, twice.";

#[test]
fn chat_streams_the_engine_output_as_openai_chunks() {
    let (engine, base) = setup(Script {
        events: events(&ids(TEXT), 3, "length"),
        ..Script::default()
    });
    let (status, headers, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stream": true})),
    );
    assert_eq!(status, 200, "{body}");
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let chunks = sse(&body);
    assert_eq!(chunks.last().unwrap(), "[DONE]");
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(chunks[0]["object"], "chat.completion.chunk");
    assert_eq!(chunks[0]["model"], "qwen3");
    assert!(chunks[0]["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert_eq!(streamed_text(&chunks, 0, "content"), TEXT);
    assert_eq!(finish_of(&chunks, 0), "length");
    assert!(chunks
        .iter()
        .all(|c| c.get("usage").is_none_or(Value::is_null)));
    // The engine got the render's request, under its own model name, streamed, without the
    // stop strings (applied here).
    let sent = &engine.generates()[0];
    let render = post(&base, "/v1/chat/completions/render", &chat(json!({})));
    let rendered: Value = serde_json::from_str(&render.2).unwrap();
    assert_eq!(sent["token_ids"], rendered["token_ids"]);
    assert_eq!(sent["model"], "tiny-qwen3");
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["sampling_params"]["max_tokens"], 32);
    assert_eq!(sent["sampling_params"]["output_kind"], 1);
}

#[test]
fn a_whole_chat_answer_is_the_one_shot_derender_of_the_events() {
    let (_engine, base) = setup(Script {
        events: events(&ids(TEXT), 4, "stop"),
        ..Script::default()
    });
    let (status, _, body) = post(&base, "/v1/chat/completions", &chat(json!({})));
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["choices"][0]["message"]["content"], TEXT);
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    let n = ids(TEXT).len() as u64;
    assert_eq!(v["usage"]["completion_tokens"], n);
    assert!(v["usage"]["prompt_tokens"].as_u64().unwrap() > 3);
}

#[test]
fn two_choices_interleaved_stream_and_whole() {
    let (a, b) = (ids("alpha beta gamma"), ids("one two three four"));
    let mut evs = Vec::new();
    for i in 0..a.len().max(b.len()) {
        if let Some(t) = a.get(i) {
            let f = (i + 1 == a.len()).then_some("stop");
            evs.push(json!([choice(0, &[*t], f)]));
        }
        if let Some(t) = b.get(i) {
            let f = (i + 1 == b.len()).then_some("length");
            evs.push(json!([choice(1, &[*t], f)]));
        }
    }
    let (_engine, base) = setup(Script {
        events: evs,
        ..Script::default()
    });
    let req = chat(json!({"n": 2, "stream": true,
        "stream_options": {"include_usage": true, "continuous_usage_stats": true}}));
    let (status, _, body) = post(&base, "/v1/chat/completions", &req);
    assert_eq!(status, 200, "{body}");
    let chunks = sse(&body);
    assert_eq!(streamed_text(&chunks, 0, "content"), "alpha beta gamma");
    assert_eq!(streamed_text(&chunks, 1, "content"), "one two three four");
    assert_eq!(finish_of(&chunks, 0), "stop");
    assert_eq!(finish_of(&chunks, 1), "length");
    // continuous usage on every chunk, then a usage-only chunk before [DONE].
    let last = &chunks[chunks.len() - 2];
    assert_eq!(last["choices"], json!([]));
    let total = (a.len() + b.len()) as u64;
    assert_eq!(last["usage"]["completion_tokens"], total);
    assert!(chunks[..chunks.len() - 2]
        .iter()
        .all(|c| c["usage"]["prompt_tokens"].as_u64().is_some()));

    let (status, _, body) = post(&base, "/v1/chat/completions", &chat(json!({"n": 2})));
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "alpha beta gamma");
    assert_eq!(v["choices"][1]["message"]["content"], "one two three four");
    assert_eq!(v["usage"]["completion_tokens"], total);
}

#[test]
fn a_stop_string_ends_the_answer_and_aborts_the_engine() {
    let text = "Hello there. STOP and then a great deal more text that should never be read";
    for stream in [true, false] {
        let (engine, base) = setup(Script {
            events: events(&ids(text), 2, "length"),
            gap: Duration::from_millis(5),
            ..Script::default()
        });
        let req = chat(json!({"stream": stream, "stop": ["STOP"]}));
        let (status, _, body) = post(&base, "/v1/chat/completions", &req);
        assert_eq!(status, 200, "{body}");
        let (content, finish, stop_reason) = if stream {
            let chunks = sse(&body);
            let reason = chunks
                .iter()
                .map(|c| c["choices"][0]["stop_reason"].clone())
                .find(|r| !r.is_null())
                .unwrap_or(Value::Null);
            (
                streamed_text(&chunks, 0, "content"),
                finish_of(&chunks, 0),
                reason,
            )
        } else {
            let v: Value = serde_json::from_str(&body).unwrap();
            let c = &v["choices"][0];
            (
                c["message"]["content"].as_str().unwrap().to_string(),
                c["finish_reason"].clone(),
                c["stop_reason"].clone(),
            )
        };
        assert_eq!(content, "Hello there. ", "stream: {stream}");
        assert_eq!(finish, "stop");
        assert_eq!(stop_reason, "STOP");
        let id = engine.generates()[0]["request_id"]
            .as_str()
            .unwrap()
            .to_string();
        wait_aborts(&engine, 1);
        let aborts = engine.aborts();
        assert_eq!(aborts.len(), 1, "stream: {stream}");
        assert_eq!(
            aborts[0].0,
            json!({"request_ids": [format!("generate-tokens-{id}")]})
        );
        assert_eq!(engine.generates()[0]["sampling_params"]["stop"], json!([]));
    }
}

#[test]
fn a_hermes_tool_call_becomes_tool_calls() {
    let text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    let tools = json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
    let (_engine, base) = setup(Script {
        events: events(&ids(text), 3, "stop"),
        ..Script::default()
    });
    let (status, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"tools": tools})),
    );
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let call = &v["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "get_weather");
    let args: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"city": "Paris"}));
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");

    let req = chat(json!({"tools": tools, "stream": true}));
    let (_, _, body) = post(&base, "/v1/chat/completions", &req);
    let chunks = sse(&body);
    let mut name = String::new();
    let mut args = String::new();
    for c in &chunks {
        for call in c["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            name.push_str(call["function"]["name"].as_str().unwrap_or(""));
            args.push_str(call["function"]["arguments"].as_str().unwrap_or(""));
        }
    }
    assert_eq!(name, "get_weather");
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap(),
        json!({"city": "Paris"})
    );
    assert_eq!(finish_of(&chunks, 0), "tool_calls");
}

#[test]
fn reasoning_is_split_from_content() {
    let text = "<think>Let me think.</think>The answer is 4.";
    let (_engine, base) = setup_with(
        Script {
            events: events(&ids(text), 2, "stop"),
            ..Script::default()
        },
        "vllm",
        "qwen3",
    );
    let (_, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stream": true})),
    );
    let chunks = sse(&body);
    assert_eq!(
        streamed_text(&chunks, 0, "reasoning_content"),
        "Let me think."
    );
    assert_eq!(streamed_text(&chunks, 0, "content"), "The answer is 4.");
}

#[test]
fn completions_stream_and_whole_with_logprobs_and_token_ids() {
    let out = ids(" a b c d");
    let mut evs = Vec::new();
    for (i, t) in out.iter().enumerate() {
        let f = (i + 1 == out.len()).then_some("length");
        let mut c = choice(0, &[*t], f);
        c["logprobs"] = json!({"content": [{"token_id": t, "logprob": -0.5, "rank": 1,
            "top_logprobs": [{"token_id": t, "logprob": -0.5, "rank": 1}]}]});
        evs.push(json!([c]));
    }
    let (engine, base) = setup(Script {
        events: evs,
        ..Script::default()
    });
    let req = json!({"model": "qwen3", "prompt": "Count:", "max_tokens": 8, "logprobs": 1,
                     "return_token_ids": true});
    let (status, _, body) = post(&base, "/v1/completions", &req);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["object"], "text_completion");
    assert_eq!(v["choices"][0]["text"], " a b c d");
    assert_eq!(
        v["choices"][0]["logprobs"]["tokens"]
            .as_array()
            .unwrap()
            .len(),
        out.len()
    );
    assert_eq!(v["choices"][0]["token_ids"], json!(out));
    assert_eq!(v["prompt_token_ids"], engine.generates()[0]["token_ids"]);

    let mut req = req;
    req["stream"] = true.into();
    let (_, _, body) = post(&base, "/v1/completions", &req);
    let chunks = sse(&body);
    assert_eq!(streamed_text(&chunks, 0, "text"), " a b c d");
    assert_eq!(
        chunks[0]["prompt_token_ids"],
        engine.generates()[0]["token_ids"]
    );
    assert_eq!(chunks[0]["object"], "text_completion");
}

#[test]
fn kv_transfer_params_pass_both_ways() {
    let (engine, base) = setup(Script {
        events: events(&ids("ok"), 4, "length"),
        ..Script::default()
    });
    let kv = json!({"do_remote_decode": true, "remote_host": "10.0.0.1"});
    let (status, _, _) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"kv_transfer_params": kv})),
    );
    assert_eq!(status, 200);
    assert_eq!(engine.generates()[0]["kv_transfer_params"], kv);
}

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

/// The aborts the engine has had, once there are `n` (or after 2 s).
fn wait_aborts(engine: &Engine, n: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(2);
    while engine.aborts().len() < n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    engine.aborts().len()
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

/// Reads the server's `/metrics` value of `name` (no labels).
fn metric(base: &str, name: &str) -> f64 {
    let text = common::client()
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

#[test]
fn a_client_that_disconnects_aborts_the_engine_within_100_ms() {
    let (engine, base) = setup(Script {
        events: events(&ids(TEXT), 2, "length")[..1].to_vec(),
        end: End::Stall,
        ..Script::default()
    });
    let addr = base.trim_start_matches("http://").to_string();
    let body = chat(json!({"stream": true})).to_string();
    let mut sock = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        sock,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
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
fn sglang_cumulative_output_ids_stream_and_abort_by_rid() {
    let text = "Hello there. STOP and then more text";
    let (engine, base) = setup_with(
        Script {
            events: events(&ids(text), 2, "length"),
            sglang: true,
            ..Script::default()
        },
        "sglang",
        "none",
    );
    let (status, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stream": true})),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(streamed_text(&sse(&body), 0, "content"), text);
    let sent = &engine.generates()[0];
    assert!(sent["input_ids"].is_array());
    assert_eq!(sent["sampling_params"]["max_new_tokens"], 32);
    let (_, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stop": "STOP"})),
    );
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "Hello there. ");
    wait_aborts(&engine, 1);
    let rid = engine.generates()[1]["rid"].clone();
    assert_eq!(engine.aborts()[0].0, json!({"rid": rid}));
}

#[test]
fn without_an_engine_the_front_door_is_a_clear_404() {
    let base = common::start_server(registry(), ServerConfig::default());
    let (status, _, body) = post(&base, "/v1/chat/completions", &chat(json!({})));
    assert_eq!(status, 404);
    assert!(body.contains("--engine"), "{body}");
}

#[test]
fn a_bad_request_is_refused_before_the_engine() {
    let (engine, base) = setup(Script::default());
    let (status, _, body) = post(&base, "/v1/chat/completions", &json!({"model": "qwen3"}));
    assert_eq!(status, 400, "{body}");
    assert!(engine.generates().is_empty());
}
