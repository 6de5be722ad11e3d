//! `stream_state` as vLLM's `DerenderStreamState` object (docs/api.md, "Streaming derender
//! state"): a client that passes it back verbatim and one typed with vLLM's model (which drops
//! `llm_render_state`) both get the one-shot answer, or a 400 that says why; vLLM's field
//! validators hold; the signed state wins over the fields beside it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{assert_error, golden_registry, post_json, start_server};
use llm_render::derender::{DerenderConfig, StateCodec};
use llm_render::server::ServerConfig;
use serde_json::{json, Map, Value};
use std::sync::{Arc, OnceLock};

/// vLLM's `DerenderStreamState` fields: what a pydantic client keeps.
const VLLM_FIELDS: &[&str] = &[
    "prev_tokens",
    "prefix_offset",
    "read_offset",
    "role_sent",
    "logprob_context_token_ids",
    "logprob_text_offset",
    "output_token_ids",
    "output_chunk_lens",
    "tools_streamed",
    "last_tool_call_ids",
];

fn server(replay: bool) -> &'static str {
    static PLAIN: OnceLock<String> = OnceLock::new();
    static REPLAY: OnceLock<String> = OnceLock::new();
    let cell = if replay { &REPLAY } else { &PLAIN };
    cell.get_or_init(|| {
        let config = ServerConfig {
            derender: DerenderConfig {
                states: Arc::new(StateCodec::new(Some("test key"), 64)),
                replay_state: replay,
                ..Default::default()
            },
            ..Default::default()
        };
        start_server(golden_registry(), config)
    })
}

fn encode(text: &str) -> Vec<u32> {
    let reg = golden_registry();
    let m = reg.get(Some("qwen3")).unwrap();
    m.tokenizer.encode(text, false).unwrap().get_ids().to_vec()
}

/// How the client carries the state between calls.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Client {
    Verbatim,
    /// Keeps vLLM's fields only, as `DerenderStreamState.model_validate` does.
    VllmTyped,
}

fn carry(state: &Value, client: Client) -> Value {
    match client {
        Client::Verbatim => state.clone(),
        Client::VllmTyped => {
            let obj = state.as_object().unwrap();
            let kept: Map<String, Value> = obj
                .iter()
                .filter(|(k, _)| VLLM_FIELDS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            assert_eq!(kept.len(), VLLM_FIELDS.len(), "every vLLM field is present");
            Value::Object(kept)
        }
    }
}

/// A stream folded: (text, reasoning, tool names, finish).
type Folded = (String, String, Vec<String>, String);

/// Streams `ids` one per call on `route`; returns (folded text, folded reasoning, tool
/// names, finish) or the first error.
fn stream(
    url: &str,
    route: &str,
    original: (&str, &Value),
    ids: &[u32],
    client: Client,
) -> Result<Folded, (u16, Value)> {
    let mut state = Value::Null;
    let (mut text, mut reasoning, mut names, mut finish) =
        (String::new(), String::new(), Vec::new(), String::new());
    for (i, id) in ids.iter().enumerate() {
        let last = i + 1 == ids.len();
        let mut req = json!({"stream": true, "model": "qwen3", "stream_state": state,
            "generate_chunk": {"request_id": "cmpl-state-test", "choices": [{"index": 0, "token_ids": [id],
                "finish_reason": if last { json!("stop") } else { Value::Null }}]},
            "prompt_token_ids": [1, 2, 3]});
        req[original.0] = original.1.clone();
        let (status, body) = post_json(&format!("{url}{route}"), &req);
        if status != 200 {
            return Err((status, body));
        }
        let c = &body["chunk"]["choices"][0];
        text += c["text"]
            .as_str()
            .or(c["delta"]["content"].as_str())
            .unwrap_or("");
        reasoning += c["delta"]["reasoning_content"].as_str().unwrap_or("");
        for t in c["delta"]["tool_calls"].as_array().into_iter().flatten() {
            if let Some(n) = t["function"]["name"].as_str() {
                names.push(n.to_string());
            }
        }
        if let Some(f) = c["finish_reason"].as_str() {
            finish = f.into();
        }
        state = carry(&body["stream_state"], client);
    }
    Ok((text, reasoning, names, finish))
}

const MIXED: &str = "Café ☕ naïve 日本語 🤖🦀 done";

#[test]
fn the_state_is_vllms_object_with_the_signed_state_beside() {
    let ids = encode(MIXED);
    let req = json!({"stream": true, "model": "qwen3", "stream_state": null,
        "generate_chunk": {"choices": [{"index": 0, "token_ids": &ids[..2]}]},
        "completion_request": {"prompt": "x"}});
    let (status, body) = post_json(&format!("{}/v1/completions/derender", server(false)), &req);
    assert_eq!(status, 200, "{body}");
    let state = body["stream_state"].as_object().unwrap();
    for f in VLLM_FIELDS {
        assert!(state.contains_key(*f), "{f} missing: {state:?}");
    }
    assert!(state["llm_render_state"].is_string());
    assert_eq!(state["role_sent"], true);
    assert_eq!(state["prefix_offset"], 0);
    assert!(state["prev_tokens"].as_array().unwrap().len() <= 5);
}

#[test]
fn plain_streams_resume_from_vllms_fields_alone() {
    let ids = encode(MIXED);
    let completion = json!({"prompt": "x"});
    for client in [Client::Verbatim, Client::VllmTyped] {
        let got = stream(
            server(false),
            "/v1/completions/derender",
            ("completion_request", &completion),
            &ids,
            client,
        )
        .unwrap();
        assert_eq!(got.0, MIXED, "{client:?}");
        assert_eq!(got.3, "stop");
    }
}

#[test]
fn parsed_streams_need_the_signed_state_or_the_replay_fields() {
    let text = "<think>\nweather first\n</think>\n\nChecking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}}\n</tool_call>";
    let ids = encode(text);
    let tools = json!([{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
        "properties": {"city": {"type": "string"}}}}}]);
    let chat = json!({"messages": [{"role": "user", "content": "weather?"}], "tools": tools});
    let route = "/v1/chat/completions/derender";
    let want = (
        "\n\nChecking.\n".to_string(),
        "\nweather first\n".to_string(),
        vec!["get_weather".to_string()],
        "tool_calls".to_string(),
    );
    for (replay, client) in [
        (false, Client::Verbatim),
        (true, Client::Verbatim),
        (true, Client::VllmTyped),
    ] {
        let got = stream(server(replay), route, ("chat_request", &chat), &ids, client);
        assert_eq!(got.unwrap(), want, "replay {replay}, {client:?}");
    }
    // Without the replay fields, the parsers' state cannot be rebuilt: a 400 naming the way
    // out, never a silently reset stream.
    let err = stream(
        server(false),
        route,
        ("chat_request", &chat),
        &ids,
        Client::VllmTyped,
    )
    .unwrap_err();
    assert_error(&err, 400, "--derender-replay-state", Some("stream_state"));
    // Stop strings hold text too.
    let completion = json!({"prompt": "x", "stop": ["STOP"]});
    let err = stream(
        server(false),
        "/v1/completions/derender",
        ("completion_request", &completion),
        &encode("one two STOP three"),
        Client::VllmTyped,
    )
    .unwrap_err();
    assert_error(&err, 400, "llm_render_state", Some("stream_state"));
    let got = stream(
        server(true),
        "/v1/completions/derender",
        ("completion_request", &completion),
        &encode("one two STOP three"),
        Client::VllmTyped,
    );
    // The stop string ends the choice; the chunk after it is refused as over.
    assert_error(
        &got.unwrap_err(),
        400,
        "already finished",
        Some("generate_chunk"),
    );
}

#[test]
fn vllms_field_validators_hold() {
    let url = format!("{}/v1/completions/derender", server(false));
    let call = |state: Value| {
        post_json(
            &url,
            &json!({"stream": true, "model": "qwen3", "stream_state": state,
                "generate_chunk": {"choices": [{"index": 0, "token_ids": [9707]}]},
                "completion_request": {"prompt": "x"}}),
        )
    };
    let many: Vec<String> = vec!["a".into(); 1025];
    for (state, needle, param) in [
        (
            json!({"prev_tokens": many}),
            "exceeds maximum (1024)",
            "stream_state.prev_tokens",
        ),
        (
            json!({"output_token_ids": [1, 2], "output_chunk_lens": [1]}),
            "must sum to",
            "stream_state.output_chunk_lens",
        ),
        (
            json!({"output_token_ids": [1], "output_chunk_lens": [1, 0]}),
            "> 0",
            "stream_state.output_chunk_lens",
        ),
        (
            // Lengths whose sum wraps around a 64-bit integer to the IDs' count.
            json!({"output_token_ids": [1], "output_chunk_lens": [u64::MAX, 2u64]}),
            "must sum to",
            "stream_state.output_chunk_lens",
        ),
        (
            json!({"logprob_context_token_ids": [1, 2, 3, 4, 5]}),
            "at most 4",
            "stream_state.logprob_context_token_ids",
        ),
        (
            json!({"prefix_offset": -1}),
            "invalid stream_state",
            "stream_state",
        ),
        (
            json!({"read_offset": -1}),
            "invalid stream_state",
            "stream_state",
        ),
        (
            json!({"prev_tokens": ["a"], "read_offset": 2}),
            "read_offset",
            "stream_state.read_offset",
        ),
        (
            json!({"prev_tokens": ["no-such-token-xyz"], "read_offset": 1}),
            "not a token",
            "stream_state.prev_tokens[0]",
        ),
    ] {
        assert_error(&call(state.clone()), 400, needle, Some(param));
    }
    // At vLLM's cap, `prev_tokens` is accepted (`test_prev_tokens_at_cap_accepted`).
    let at_cap: Vec<String> = vec!["a".into(); 1024];
    let got = call(json!({"prev_tokens": at_cap, "prefix_offset": 0, "read_offset": 0}));
    assert_eq!(got.0, 200, "{:?}", got.1);
    // Unknown fields are ignored, as pydantic's default.
    let (status, body) = call(json!({"role_sent": true, "something_else": 1}));
    assert_eq!(status, 200, "{body}");
    assert!(body["chunk"]["choices"][0]["text"].is_string());
}

#[test]
fn the_signed_state_wins_over_the_fields_beside_it() {
    let ids = encode("Hello there, friend");
    let url = format!("{}/v1/completions/derender", server(false));
    let chunk = |state: Value, id: u32| {
        post_json(
            &url,
            &json!({"stream": true, "model": "qwen3", "stream_state": state,
                "generate_chunk": {"choices": [{"index": 0, "token_ids": [id]}]},
                "completion_request": {"prompt": "x"}}),
        )
    };
    let (_, first) = chunk(Value::Null, ids[0]);
    let mut state = first["stream_state"].clone();
    let (_, honest) = chunk(state.clone(), ids[1]);
    state["prev_tokens"] = json!(["garbage"]);
    state["read_offset"] = json!(0);
    state["role_sent"] = json!(false);
    let (status, edited) = chunk(state, ids[1]);
    assert_eq!(status, 200, "{edited}");
    assert_eq!(edited["chunk"]["choices"], honest["chunk"]["choices"]);
}

#[test]
fn a_vllm_form_state_is_one_sequences() {
    let url = format!("{}/v1/completions/derender", server(false));
    let (status, body) = post_json(
        &url,
        &json!({"stream": true, "model": "qwen3", "stream_state": {"role_sent": true},
            "generate_chunk": {"choices": [{"index": 0, "token_ids": [9707]}, {"index": 1, "token_ids": [9707]}]},
            "completion_request": {"prompt": "x"}}),
    );
    assert_error(
        &(status, body),
        400,
        "one sequence",
        Some("generate_chunk.choices"),
    );
    // The chat parsers are chosen from chat_request again: without it, vLLM's form is refused.
    let (status, body) = post_json(
        &format!("{}/v1/chat/completions/derender", server(false)),
        &json!({"stream": true, "model": "qwen3", "stream_state": {"role_sent": true},
            "generate_chunk": {"choices": [{"index": 0, "token_ids": [9707]}]}}),
    );
    assert_error(
        &(status, body),
        400,
        "chat_request is required",
        Some("chat_request"),
    );
}
