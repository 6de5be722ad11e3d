//! `tool_choice` → `sampling_params.structured_outputs` and `skip_special_tokens` against
//! vLLM 0.33's own render server (goldens from `scripts/gen_tool_choice_goldens.py`), for the
//! tool parsers whose constraint we reproduce: hermes (a structural tag) and pythonic (a JSON
//! schema), over every `tool_choice`, `parallel_tool_calls: false` and `response_format`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{fixtures, golden_registry, post_json, start_server};
use llm_render::render::RenderOptions;
use llm_render::server::ServerConfig;
use serde_json::Value;

fn server(parser: &str) -> String {
    let config = ServerConfig {
        render: RenderOptions {
            reasoning_parser: "none".into(),
            tool_call_parser: parser.into(),
            ..Default::default()
        },
        ..Default::default()
    };
    start_server(golden_registry(), config)
}

/// Not reproduced: `auto` with a strict tool and the request's own `response_format`, where
/// vLLM joins its tag and the format in an `OrFormat`; we keep the request's constraint.
fn known_difference(golden: &Value) -> bool {
    let req = &golden["request"];
    let auto = req.get("tool_choice").is_none_or(|c| c == "auto");
    let strict = req["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["function"]["strict"] == true);
    golden["parser"] == "hermes" && auto && strict && req.get("response_format").is_some()
}

#[test]
fn structured_outputs_for_tool_choice_equal_vllms() {
    let text =
        std::fs::read_to_string(fixtures().join("goldens/tool_choice/structured_outputs.jsonl"))
            .unwrap();
    let goldens: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(goldens.len(), 96);
    let (hermes, pythonic) = (server("hermes"), server("pythonic"));
    let mut failures = Vec::new();
    let mut skipped = 0;
    for g in &goldens {
        let base = if g["parser"] == "hermes" {
            &hermes
        } else {
            &pythonic
        };
        let (status, out) = post_json(&format!("{base}/v1/chat/completions/render"), &g["request"]);
        if known_difference(g) {
            skipped += 1;
            continue;
        }
        let sp = &out["sampling_params"];
        let got = (
            status,
            sp["structured_outputs"].clone(),
            sp["skip_special_tokens"].clone(),
        );
        let want = (
            g["status"].as_u64().unwrap() as u16,
            g["structured_outputs"].clone(),
            g["skip_special_tokens"].clone(),
        );
        if got != want {
            failures.push(format!(
                "{} {}\n  want {want:?}\n  got  {got:?}",
                g["parser"], g["request"]
            ));
        }
    }
    assert_eq!(
        skipped, 4,
        "the known differences are the OrFormat cases only"
    );
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        goldens.len(),
        failures.join("\n")
    );
}
