//! The sidecar's front door for gpt-oss: a real llm-render server with the gpt-oss fixture in
//! front of a scripted engine. The engine is sent the Harmony prompt (the same IDs
//! `/v1/chat/completions/render` gives), and its Harmony output comes back as reasoning and
//! tool calls, one shot and streamed, through the same derender session as the derender
//! routes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::engine::{events, Engine, Script};
use common::sidecar::{finish_of, post, sse, streamed_call, streamed_text};
use llm_render::engine::{protocol, Engine as Client, EngineConfig};
use llm_render::model::{LoadOptions, Model, ModelRegistry};
use llm_render::server::ServerConfig;
use serde_json::{json, Value};
use std::time::Duration;

fn setup(output: &str) -> (Engine, String, Vec<u32>) {
    let mut model = Model::load_dir(
        "gpt-oss",
        &common::fixtures().join("models/gpt_oss"),
        &LoadOptions::default(),
    )
    .unwrap();
    model.harmony.as_mut().unwrap().start_date = Some("2026-01-15".into());
    let ids = model.encode(output, false).unwrap();
    let engine = Engine::start(Script {
        events: events(&ids, 3, "stop"),
        models: vec![("tiny-gpt-oss".into(), 4096)],
        ..Script::default()
    });
    let mut cfg = EngineConfig::new(&engine.url, protocol("vllm").unwrap());
    cfg.model = Some("tiny-gpt-oss".into());
    cfg.stall_timeout = Duration::from_millis(800);
    cfg.health_interval = Duration::from_millis(100);
    let client = Client::new(cfg).unwrap();
    client.watch_health().unwrap();
    let config = ServerConfig {
        engine: Some(client),
        ..ServerConfig::default()
    };
    let base = common::start_server(ModelRegistry::new(vec![model]).unwrap(), config);
    (engine, base, ids)
}

const OUTPUT: &str = "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant\
    <|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";

fn request(stream: bool) -> Value {
    json!({"model": "gpt-oss", "stream": stream, "max_tokens": 64,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]})
}

#[test]
fn gpt_oss_front_door_renders_harmony_and_reads_its_channels() {
    let (engine, base, _) = setup(OUTPUT);
    let (status, _, body) = post(&base, "/v1/chat/completions", &request(false));
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let m = &v["choices"][0]["message"];
    assert_eq!(m["reasoning_content"], "Need the weather.", "{v}");
    assert_eq!(m["tool_calls"][0]["function"]["name"], "get_weather");
    assert_eq!(
        m["tool_calls"][0]["function"]["arguments"],
        "{\"city\": \"Paris\"}"
    );
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");

    // The engine got the Harmony prompt, as the render route writes it.
    let (_, _, rendered) = post(&base, "/v1/chat/completions/render", &request(false));
    let rendered: Value = serde_json::from_str(&rendered).unwrap();
    let sent = &engine.generates()[0];
    assert_eq!(sent["token_ids"], rendered["token_ids"]);
    let prompt = sent["token_ids"].as_array().unwrap();
    assert_eq!(prompt[prompt.len() - 2..], [json!(200006), json!(173781)]); // <|start|>assistant

    let (status, _, body) = post(&base, "/v1/chat/completions", &request(true));
    assert_eq!(status, 200, "{body}");
    let chunks = sse(&body);
    assert_eq!(
        streamed_text(&chunks, 0, "reasoning_content"),
        "Need the weather."
    );
    assert_eq!(streamed_text(&chunks, 0, "content"), "");
    let (name, args) = streamed_call(&chunks);
    assert_eq!(name, "get_weather");
    assert_eq!(args, "{\"city\": \"Paris\"}");
    assert_eq!(finish_of(&chunks, 0), "tool_calls");
}
