//! `state`: a hostile stream state that carries a valid signature. The input is the JSON of
//! a `StreamState` (what the signed field's payload decodes to); the target signs it with
//! the server's key, as a replica sharing the key would have, and continues the stream with
//! two chunks of real output (reasoning, text and a tool call; the second one finishing).
//! The derender must resume whatever the state says (a choice, a detokenizer window, parser
//! modes, held text, counters, a Messages or Responses stream's fields) without a panic or
//! a 500: a 200 or an OpenAI-shaped 400. An unsigned state (vLLM's fields alone) is a
//! client's plain input and is the `request` target's.

use llm_render::derender::{ApiStream, StreamState};
use serde_json::{json, Value};
use std::sync::OnceLock;

/// The text generated after the state, per model, as its token IDs.
const QWEN3_TEXT: &str = "<think>\nthe user wants weather\n</think>\n\nChecking é日🤖.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call><|im_end|>";
const HARMONY_TEXT: &str = "<|channel|>analysis<|message|>need weather<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>";

/// The token IDs of `text` in `model`'s vocabulary (`/tokenize`).
fn ids(model: &str, text: &str) -> Vec<u32> {
    let body = json!({"model": model, "prompt": text, "add_special_tokens": false});
    let (_, out) = crate::server::get().post_json("/tokenize", &body);
    out["tokens"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_u64().and_then(|n| u32::try_from(n).ok()))
                .collect()
        })
        .unwrap_or_default()
}

fn generated(model: &str) -> &'static [u32] {
    static QWEN3: OnceLock<Vec<u32>> = OnceLock::new();
    static HARMONY: OnceLock<Vec<u32>> = OnceLock::new();
    if model == "gpt-oss" {
        HARMONY.get_or_init(|| ids("gpt-oss", HARMONY_TEXT))
    } else {
        QWEN3.get_or_init(|| ids("qwen3", QWEN3_TEXT))
    }
}

/// The original request a stream on `field`'s route is sent with (`chat_request`,
/// `completion_request`, `messages_request` or `responses_request`): the user asks for the
/// weather, with one typed tool.
pub fn original(field: &str) -> Value {
    let parameters = json!({"type": "object", "properties": {"city": {"type": "string"},
        "days": {"type": "integer"}}});
    let ask = "weather in Paris?";
    let messages = json!([{"role": "user", "content": ask}]);
    match field {
        "messages_request" => json!({"max_tokens": 64, "messages": messages,
            "tools": [{"name": "get_weather", "input_schema": parameters}]}),
        "responses_request" => json!({"input": ask, "tools": [{"type": "function",
            "name": "get_weather", "parameters": parameters}]}),
        "completion_request" => json!({"prompt": ask}),
        _ => json!({"messages": messages, "tools": [{"type": "function",
            "function": {"name": "get_weather", "parameters": parameters}}]}),
    }
}

/// The route a state continues on, and the field its original request goes in.
pub fn route(state: &StreamState) -> (&'static str, &'static str) {
    match &state.api {
        Some(ApiStream::Messages(_)) => ("/v1/messages/derender", "messages_request"),
        Some(ApiStream::Responses(_)) => ("/v1/responses/derender", "responses_request"),
        None if state.id.starts_with("cmpl-") => ("/v1/completions/derender", "completion_request"),
        None => ("/v1/chat/completions/derender", "chat_request"),
    }
}

pub fn run(data: &[u8]) {
    let Ok(state) = serde_json::from_slice::<StreamState>(data) else {
        return;
    };
    let server = crate::server::get();
    let Ok(token) = server.state.config.derender.states.encode(&state) else {
        return;
    };
    let ids = generated(&state.model);
    let (route, field) = route(&state);
    let original = original(field);
    let (first, rest) = ids.split_at(ids.len() / 2);
    let mut stream_state = json!({"llm_render_state": token});
    for (chunk, finish) in [(first, Value::Null), (rest, json!("stop"))] {
        let mut body = json!({"model": state.model, "stream": true, "stream_state": stream_state,
            "generate_chunk": {"choices": [{"index": 0, "token_ids": chunk, "finish_reason": finish}]}});
        body[field] = original.clone();
        let (status, out) = server.post_json(route, &body);
        if status != 200 {
            return;
        }
        stream_state = out["stream_state"].clone();
    }
}
