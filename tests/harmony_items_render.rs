//! gpt-oss (Harmony) `/v1/responses/render` and `/v1/messages/render` against vLLM 0.33's
//! own render server (`scripts/gen_harmony_items_goldens.py`): vLLM builds a Responses
//! prompt from the input items themselves (`_render_responses_with_harmony`) and a Messages
//! one through its chat conversion (inline system messages merged as the chat template
//! says: none, or a `--chat-template` refusing or taking them). The real server on loopback
//! renders each golden request for the gpt-oss fixture; the status, `token_ids` and every other field of the
//! `GenerateRequest` must equal vLLM's (a random `request_id` only by its prefix;
//! `sampling_params` with the keys at vLLM's defaults left out on both sides, as vLLM's
//! serializer leaves them out); a refusal must name the same field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use llm_render::model::{LoadOptions, Model, ModelRegistry};
use llm_render::server::ServerConfig;
use serde_json::Value;

fn goldens() -> Vec<Value> {
    jsonl("goldens/render_harmony/items.jsonl")
}

/// The server for the gpt-oss fixture, with `chat_template` as its `--chat-template`.
fn server(start_date: &str, chat_template: Option<&str>) -> String {
    let mut model = Model::load_dir(
        "gpt-oss",
        &fixtures().join("models/gpt_oss"),
        &LoadOptions::default(),
    )
    .unwrap();
    model
        .harmony
        .as_mut()
        .expect("recognised as Harmony")
        .start_date = Some(start_date.into());
    // vLLM served it with a gpt-oss-20b config.json (`max_position_embeddings`).
    model.max_model_len = Some(131072);
    if let Some(t) = chat_template {
        model.replace_chat_template(t.into(), None).unwrap();
    }
    start_server(
        ModelRegistry::new(vec![model]).unwrap(),
        ServerConfig::default(),
    )
}

/// The fields of ours that differ from vLLM's response.
fn differences(want: &Value, got: &Value, req: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let (w, g) = (want.as_object().unwrap(), got.as_object().unwrap());
    for key in w.keys().chain(g.keys().filter(|k| !w.contains_key(*k))) {
        let (wv, gv) = (
            w.get(key).unwrap_or(&Value::Null),
            g.get(key).unwrap_or(&Value::Null),
        );
        let same = match key.as_str() {
            "request_id" if req.get("request_id").is_none() => {
                let prefix = |v: &Value| {
                    v.as_str()
                        .unwrap_or("")
                        .split(['_', '-'])
                        .next()
                        .map(str::to_string)
                };
                prefix(wv) == prefix(gv)
            }
            // Keys and values: vLLM's render leaves out what is at its default, as ours does.
            "sampling_params" => wv == gv,
            _ => wv == gv,
        };
        if !same {
            out.push(format!("{key}:\n    want {wv}\n    got  {gv}"));
        }
    }
    out
}

#[test]
fn responses_and_messages_render_as_vllm() {
    let goldens = goldens();
    let responses = goldens.iter().filter(|g| g["route"] == "responses").count();
    assert!(
        responses >= 20 && goldens.len() - responses >= 8,
        "{} goldens",
        goldens.len()
    );
    let mut servers = std::collections::HashMap::new();
    let client = client();
    let mut failures = Vec::new();
    for g in &goldens {
        assert_eq!(g["start_date"], "2026-01-15");
        let id = g["id"].as_str().unwrap();
        let template = g["chat_template"].as_str();
        let base = servers
            .entry(template)
            .or_insert_with(|| server("2026-01-15", template));
        let path = match g["route"].as_str().unwrap() {
            "responses" => "/v1/responses/render",
            _ => "/v1/messages/render",
        };
        let resp = client
            .post(format!("{base}{path}"))
            .json(&g["request"])
            .send()
            .unwrap();
        let status = resp.status().as_u16();
        let body: Value = resp.json().unwrap();
        if status != g["status"] {
            failures.push(format!(
                "{id}: status {status}, vLLM {}: {body}",
                g["status"]
            ));
            continue;
        }
        if status != 200 {
            let want = g["response"]["error"]["param"].as_str().unwrap_or("");
            let got = body["error"]["param"].as_str().unwrap_or("");
            if !got.starts_with(want) {
                failures.push(format!("{id}: refused on {got:?}, vLLM on {want:?}"));
            }
            continue;
        }
        for d in differences(&g["response"], &body, &g["request"]) {
            failures.push(format!("{id}: {d}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
