//! `tool_choice` → `sampling_params.structured_outputs` and `skip_special_tokens` against
//! vLLM 0.33's own render server (goldens from `scripts/gen_tool_choice_goldens.py`), for
//! every tool parser the goldens cover, over every `tool_choice`, `parallel_tool_calls:
//! false`, `response_format` and `structured_outputs`: the JSON schemas (pythonic, mistral
//! and the others without a structural tag) and the structural tags (hermes, longcat,
//! qwen3_coder, llama3_json, deepseek_v3/v31, DeepSeek's DSML (deepseek_v32/v4/v41), kimi_k2,
//! glm45/glm47, ling3, mimo, minimax_m2, plamo3, kimi_k3, hy_v4, …) and
//! gpt-oss's Harmony tag (openai, rendered with the gpt-oss fixture; `none` is gpt-oss with
//! only its reasoning parser, where vLLM's Harmony parser still rewrites the request's own
//! constraint and no `tool_choice` is refused).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{fixtures, golden_registry, post_json, start_server};
use llm_render::model::{LoadOptions, Model, ModelRegistry};
use llm_render::render::RenderOptions;
use llm_render::server::ServerConfig;
use serde_json::Value;
use std::collections::BTreeMap;

/// The gpt-oss fixture (Harmony by its vocabulary), named as the goldens' requests name it.
fn gpt_oss() -> ModelRegistry {
    let dir = fixtures().join("models/gpt_oss");
    let model = Model::load_dir("gpt_oss", &dir, &LoadOptions::default()).unwrap();
    assert!(model.harmony.is_some(), "the gpt-oss fixture is Harmony");
    ModelRegistry::new(vec![model]).unwrap()
}

/// A server running `parser`; `none` is the gpt-oss suite with only gpt-oss's reasoning
/// parser (as vLLM was started for it), the others run no reasoning parser.
fn server(parser: &str) -> String {
    let config = ServerConfig {
        render: RenderOptions {
            reasoning_parser: if parser == "none" { "auto" } else { "none" }.into(),
            tool_call_parser: parser.into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let registry = if parser == "openai" || parser == "none" {
        gpt_oss()
    } else {
        golden_registry()
    };
    start_server(registry, config)
}

/// Goldens where we differ from vLLM by a known gap, and why (listed in docs/api.md, "Known
/// differences from vLLM"): Cohere's action grammar (cohere_command3/4 with tools), a
/// request constraint vLLM rewrites first, a Lark grammar
/// (converted to EBNF by xgrammar) or a structural tag (re-read by xgrammar's pydantic
/// models), in a tag: joined with `auto`'s tag in an `OrFormat`, or (gpt-oss) as a final
/// message's content, `sequence` [analysis message, final message]; we pass those on
/// unchanged.
fn known_difference(golden: &Value) -> Option<&'static str> {
    let req = &golden["request"];
    let tag = golden["structured_outputs"]["structural_tag"]
        .as_str()
        .and_then(|t| serde_json::from_str::<Value>(t).ok());
    let joined = tag.as_ref().is_some_and(|t| t["format"]["type"] == "or");
    let harmony_final = tag.as_ref().is_some_and(|t| {
        t["format"]["type"] == "sequence"
            && t["format"]["elements"]
                .as_array()
                .and_then(|e| e.last())
                .is_some_and(|last| last["type"] == "tag")
    });
    // vLLM's Cohere parser folds every request's tools (whatever the `tool_choice` but
    // `none`) into a tag whose grammar is xgrammar's JSON-schema converter's EBNF, printed.
    let cohere = golden["parser"]
        .as_str()
        .is_some_and(|p| p.starts_with("cohere_command"));
    if cohere && tag.is_some() {
        return Some("Cohere's action grammar (xgrammar's JSON-schema EBNF)");
    }
    if !joined && !harmony_final {
        return None;
    }
    let grammar = req["structured_outputs"]["grammar"].as_str();
    if grammar.is_some_and(|g| !g.contains("::=")) {
        return Some("an OrFormat with a Lark grammar");
    }
    if req["response_format"]["type"] == "structural_tag" {
        return Some("an OrFormat with a structural tag");
    }
    None
}

#[test]
fn structured_outputs_for_tool_choice_equal_vllms() {
    let goldens = common::gz_jsonl("goldens/tool_choice/structured_outputs.jsonl.gz");
    let mut by_parser: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for g in &goldens {
        by_parser
            .entry(g["parser"].as_str().unwrap())
            .or_default()
            .push(g);
    }
    let mut failures = Vec::new();
    let mut counts = BTreeMap::new();
    for (parser, lines) in &by_parser {
        assert!(
            *parser == "none"
                || llm_render_parsers::TOOL_PARSERS
                    .iter()
                    .any(|e| e.name == *parser),
            "no tool parser named {parser}"
        );
        let base = server(parser);
        let (mut equal, mut known) = (0, 0);
        for g in lines {
            let (status, out) =
                post_json(&format!("{base}/v1/chat/completions/render"), &g["request"]);
            if known_difference(g).is_some() {
                known += 1;
                continue;
            }
            // A refusal has no sampling_params (the goldens write the defaults).
            let sp = if status == 200 {
                out["sampling_params"].clone()
            } else {
                serde_json::json!({"skip_special_tokens": true})
            };
            let got = (
                status,
                sp["structured_outputs"].clone(),
                // Left out at its default, true, as vLLM's render leaves it out.
                sp.get("skip_special_tokens")
                    .cloned()
                    .unwrap_or(serde_json::json!(true)),
            );
            let want = (
                g["status"].as_u64().unwrap() as u16,
                g["structured_outputs"].clone(),
                g["skip_special_tokens"].clone(),
            );
            if got == want {
                equal += 1;
            } else {
                failures.push(format!(
                    "{parser} {}\n  want {want:?}\n  got  {got:?}",
                    g["request"]
                ));
            }
        }
        counts.insert(*parser, (equal, known, lines.len()));
    }
    eprintln!("per parser (equal, known differences, lines): {counts:?}");
    let known: usize = counts.values().map(|c| c.1).sum();
    assert_eq!(
        known, 172,
        "the known differences are the OrFormats and gpt-oss's final messages with a Lark \
         grammar or a structural tag (60), and Cohere's action grammar (112)"
    );
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        goldens.len(),
        failures.join("\n")
    );
}
