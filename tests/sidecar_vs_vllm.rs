//! The sidecar's front door against vLLM's own OpenAI server (`echo`, `prompt_logprobs`,
//! the sampling settings a Response echoes, Messages usage):
//! `fixtures/goldens/front/coupled.json` holds, per request, what vLLM 0.32's engine
//! answered on its generate route for our render of it (replayed here by the scripted
//! engine) and what the same engine's `/v1/completions`, `/v1/chat/completions`,
//! `/v1/responses` or `/v1/messages` answered (`scripts/front_vs_vllm.py --record`: the
//! keys it compares; the completions' generated tokens keep only the alternatives the
//! generate route carries). Our answer must equal vLLM's but for ids, clocks and the fields
//! only we add.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::engine::Script;
use common::sidecar::*;
use serde_json::{json, Value};

const VOLATILE: [&str; 5] = [
    "id",
    "created",
    "system_fingerprint",
    "service_tier",
    "model",
];

/// The answer without what differs by construction, and without nulls (vLLM writes its
/// absent fields as null).
fn strip(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, x)| !VOLATILE.contains(&k.as_str()) && !x.is_null())
                .map(|(k, x)| (k.clone(), strip(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

/// Every field of vLLM's answer in ours, equal (ours may add fields: `reasoning`, …).
fn contains(theirs: &Value, ours: &Value, at: &str) {
    match (theirs, ours) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, x) in a {
                let y = b
                    .get(k)
                    .unwrap_or_else(|| panic!("{at}.{k}: vLLM {x}, ours absent"));
                contains(x, y, &format!("{at}.{k}"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{at}: lengths");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                contains(x, y, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(theirs, ours, "{at}"),
    }
}

/// The value at a dotted path (`output.0.content.0.logprobs`), null when absent.
fn pick(v: &Value, path: &str) -> Value {
    let mut at = v;
    for part in path.split('.') {
        let next = match (at, part.parse::<usize>()) {
            (Value::Array(a), Ok(i)) => a.get(i),
            (Value::Object(m), _) => m.get(part),
            _ => None,
        };
        match next {
            Some(n) => at = n,
            None => return Value::Null,
        }
    }
    at.clone()
}

fn cases() -> Vec<Value> {
    let path = common::fixtures().join("goldens/front/coupled.json");
    let golden: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    golden["cases"].as_array().unwrap().clone()
}

#[test]
fn echo_and_prompt_logprobs_equal_vllms_own_server() {
    let (engine, base) = setup(Script::default());
    let cases = cases();
    assert_eq!(cases.len(), 14);
    for (i, case) in cases.iter().enumerate() {
        let name = case["name"].as_str().unwrap();
        engine.script.lock().unwrap().whole = Some(case["engine"].clone());
        let mut body = case["request"].clone();
        body["model"] = json!("qwen3");
        let (status, _, text) = post(
            &base,
            &format!("/v1/{}", case["route"].as_str().unwrap()),
            &body,
        );
        assert_eq!(status, 200, "{name}: {text}");
        let ours: Value = serde_json::from_str(&text).unwrap();
        // vLLM's answer holds the keys the script compared, some as dotted paths
        // (`output.0.content.0.logprobs`): ours is read at the same places.
        let theirs = strip(&case["vllm"]);
        let view: serde_json::Map<String, Value> = theirs
            .as_object()
            .unwrap()
            .keys()
            .map(|k| (k.clone(), pick(&ours, k)))
            .collect();
        contains(&theirs, &strip(&Value::Object(view)), name);
        // Only the whole answer carries the prompt's logprobs: such a request is not streamed
        // from the engine.
        let sent = engine.generates()[i].clone();
        let wants = !sent["sampling_params"]["prompt_logprobs"].is_null();
        assert_eq!(sent["stream"], json!(!wants), "{name}");
        assert_eq!(
            sent["sampling_params"]["output_kind"],
            json!(if wants { 2 } else { 1 })
        );
    }
}

#[test]
fn a_streamed_echo_is_refused_naming_the_field() {
    let (_, base) = setup(Script::default());
    for (path, body) in [
        (
            "/v1/completions",
            json!({"model": "qwen3", "prompt": "Hi", "echo": true, "stream": true}),
        ),
        (
            "/v1/chat/completions",
            chat(json!({"echo": true, "stream": true})),
        ),
    ] {
        let (status, _, text) = post(&base, path, &body);
        assert_eq!(status, 400, "{text}");
        let err: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(err["error"]["param"], "echo", "{text}");
    }
}

#[test]
fn sglang_refuses_prompt_logprobs_it_cannot_return() {
    let (engine, base) = setup_with(Script::default(), "sglang", "none");
    for (body, param) in [
        (
            json!({"model": "qwen3", "prompt": "Hi", "echo": true, "logprobs": 1}),
            "echo",
        ),
        (
            json!({"model": "qwen3", "prompt": "Hi", "prompt_logprobs": 1}),
            "prompt_logprobs",
        ),
    ] {
        let (status, _, text) = post(&base, "/v1/completions", &body);
        assert_eq!(status, 400, "{text}");
        let err: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(err["error"]["param"], param, "{text}");
    }
    assert!(engine.generates().is_empty());
}
