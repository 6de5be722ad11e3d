//! Render goldens (transformers `apply_chat_template` + `encode(add_special_tokens=False)`)
//! through the real HTTP server on loopback and through the CLI: every token ID equal, every
//! case where transformers raised answered with a 400. Over HTTP, Qwen3 renders through its
//! native template (`template::native`); through the CLI, everything renders with minijinja.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use std::io::Write;
use std::process::{Command, Stdio};

fn with_model(g: &Golden) -> serde_json::Value {
    let mut req = g.request.clone();
    req["model"] = serde_json::Value::String(g.model.clone());
    req
}

/// Goldens whose request vLLM 0.33's request validators refuse before any template runs
/// (transformers, which made the goldens, renders them): the render routes answer 400
/// naming the field, as vLLM does. The template's own behaviour for them stays covered
/// below the validation (`tests/native_templates.rs` renders `tools: []` both ways).
const REFUSED_BY_VLLM: [(&str, &str); 1] = [
    // `check_tool_usage`: "`tools` must not be an empty array."
    ("features/f_tools_empty_list", "tools"),
];

fn refused_by_vllm(id: &str) -> Option<&'static str> {
    REFUSED_BY_VLLM
        .iter()
        .find(|(g, _)| *g == id)
        .map(|(_, p)| *p)
}

#[test]
fn goldens_over_http() {
    let url = format!("{}/v1/chat/completions/render", golden_server());
    let client = client();
    let goldens = goldens();
    assert!(
        goldens.len() >= 54 + 20,
        "expected the dev goldens plus at least 20 extra, got {}",
        goldens.len()
    );
    let mut failures = Vec::new();
    for g in &goldens {
        let resp = client
            .post(&url)
            .json(&with_model(g))
            .send()
            .expect("request");
        let status = resp.status().as_u16();
        let body: serde_json::Value = resp.json().expect("json body");
        if let Some(param) = refused_by_vllm(&g.id) {
            if status != 400 || body["error"]["param"] != param {
                failures.push(format!(
                    "{}: want vLLM's 400 on {param}, got {status} {body}",
                    g.id
                ));
            }
            continue;
        }
        match (&g.expected_token_ids, &g.expected_error) {
            (Some(ids), _) => {
                let got: Option<Vec<u32>> = serde_json::from_value(body["token_ids"].clone()).ok();
                if status != 200 || got.as_ref() != Some(ids) {
                    failures.push(format!(
                        "{}: status {status}, body {}",
                        g.id,
                        &body.to_string()[..body.to_string().len().min(300)]
                    ));
                }
            }
            (None, Some(err)) => {
                // The template's own message must reach the client.
                let msg = body["error"]["message"].as_str().unwrap_or_default();
                let want = err.split_once(": ").map(|x| x.1).unwrap_or(err);
                if status != 400 || body["error"]["code"] != 400 || !msg.contains(want) {
                    failures.push(format!(
                        "{}: want 400 with {want:?}, got {status} {body}",
                        g.id
                    ));
                }
            }
            (None, None) => failures.push(format!("{}: golden has no expectation", g.id)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} goldens failed:\n{}",
        failures.len(),
        goldens.len(),
        failures.join("\n")
    );
}

#[test]
fn goldens_through_cli() {
    let goldens = goldens();
    for model in GOLDEN_MODELS {
        let cases: Vec<&Golden> = goldens.iter().filter(|g| g.model == model).collect();
        assert!(!cases.is_empty());
        let mut input = Vec::new();
        for g in &cases {
            serde_json::to_writer(&mut input, &g.request).unwrap();
            input.push(b'\n');
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_llm-render"))
            // The server test renders natively where it can; this one never does.
            .args(["render", "--jsonl", "--no-native-templates", "--model"])
            .arg(format!(
                "{model}={}",
                fixtures().join("models").join(model).display()
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn llm-render");
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let out = child.wait_with_output().unwrap();
        let any_error = cases
            .iter()
            .any(|g| g.expected_error.is_some() || refused_by_vllm(&g.id).is_some());
        assert_eq!(
            out.status.code(),
            Some(if any_error { 1 } else { 0 }),
            "{model}: exit code"
        );
        let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            lines.len(),
            cases.len(),
            "{model}: one output line per request"
        );
        for (g, got) in cases.iter().zip(&lines) {
            if let Some(param) = refused_by_vllm(&g.id) {
                assert_eq!(got["error"]["param"], param, "{}: {got}", g.id);
                continue;
            }
            match &g.expected_token_ids {
                Some(ids) => assert_eq!(
                    &serde_json::from_value::<Vec<u32>>(got["token_ids"].clone()).unwrap(),
                    ids,
                    "{}",
                    g.id
                ),
                None => assert_eq!(got["error"]["code"], 400, "{}: {got}", g.id),
            }
        }
    }
}
