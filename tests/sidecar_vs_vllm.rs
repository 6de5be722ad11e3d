//! The sidecar's front door against vLLM's own OpenAI server (`echo`, `prompt_logprobs`,
//! the sampling settings and logprobs a Response carries, cached prompt tokens in each
//! API's usage, streamed and not; a streamed echo compared on its folded stream):
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

/// What differs by construction, and the tokens written to the cache, which vLLM's generate
/// route does not report (`scripts/front_vs_vllm.py`'s `VOLATILE`).
const VOLATILE: [&str; 7] = [
    "id",
    "created",
    "system_fingerprint",
    "service_tier",
    "model",
    "created_cache_tokens",
    "cache_creation_input_tokens",
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

/// A stream as `{"usage": …, "choices": […]}` (`front_vs_vllm.py`'s `folded`): the last
/// `data:` event's usage, or its `response.usage`; and its chat or completion choices
/// folded: per index, the text or content joined, the logprobs' lists joined, the last
/// finish reason.
fn folded(sse: &str) -> Value {
    let mut usage = Value::Null;
    let mut choices: std::collections::BTreeMap<u64, serde_json::Map<String, Value>> =
        Default::default();
    for line in sse.lines() {
        let Some(data) = line.strip_prefix("data: ").filter(|d| *d != "[DONE]") else {
            continue;
        };
        let e: Value = serde_json::from_str(data).unwrap();
        for u in [&e["usage"], &e["response"]["usage"]] {
            if !u.is_null() {
                usage = u.clone();
            }
        }
        for c in e["choices"].as_array().into_iter().flatten() {
            let index = c["index"].as_u64().unwrap();
            let f = choices.entry(index).or_default();
            f.insert("index".into(), json!(index));
            let (key, text) = match c.get("text") {
                Some(t) => ("text", t.as_str().unwrap_or_default()),
                None => (
                    "content",
                    c["delta"]["content"].as_str().unwrap_or_default(),
                ),
            };
            let joined = format!("{}{text}", f.get(key).and_then(Value::as_str).unwrap_or(""));
            f.insert(key.into(), json!(joined));
            if let Some(lp) = c["logprobs"].as_object() {
                let into = f.entry("logprobs").or_insert_with(|| json!({}));
                for (k, v) in lp {
                    let list = into.as_object_mut().unwrap().entry(k).or_insert(json!([]));
                    list.as_array_mut()
                        .unwrap()
                        .extend(v.as_array().into_iter().flatten().cloned());
                }
            }
            if !c["finish_reason"].is_null() {
                f.insert("finish_reason".into(), c["finish_reason"].clone());
            }
        }
    }
    let mut out = json!({ "usage": usage });
    if !choices.is_empty() {
        out["choices"] = Value::Array(choices.into_values().map(Value::Object).collect());
    }
    out
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
    assert_eq!(cases.len(), 24);
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
        let ours: Value = if body["stream"] == true {
            folded(&text)
        } else {
            serde_json::from_str(&text).unwrap()
        };
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
        // Only the whole answer carries the prompt's logprobs: a request that shows them (a
        // whole answer that asks for them, a streamed completion echo with logprobs) is
        // not streamed from the engine.
        let sent = engine.generates()[i].clone();
        let asks = !sent["sampling_params"]["prompt_logprobs"].is_null();
        let streamed_echo_shows =
            case["route"] == "completions" && body["echo"] == true && !body["logprobs"].is_null();
        let whole = asks && (body["stream"] != true || streamed_echo_shows);
        assert_eq!(sent["stream"], json!(!whole), "{name}");
        assert_eq!(
            sent["sampling_params"]["output_kind"],
            json!(if whole { 2 } else { 1 })
        );
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
            json!({"model": "qwen3", "prompt": "Hi", "echo": true, "logprobs": 1, "stream": true}),
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
