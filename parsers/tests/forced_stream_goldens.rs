//! A forced `tool_choice` (named or `required`, read from a JSON-schema parser's output)
//! streamed against vLLM 0.33's own chat stream (`scripts/gen_forced_stream_goldens.py` →
//! `fixtures/goldens/derender/forced_stream.jsonl`): the same text deltas, one token each,
//! fed to `ForcedCallParser`. The calls fold to vLLM's one-shot answer, except where vLLM's
//! one-shot rejects a list whose calls its stream had already sent (we keep them, as its
//! stream does); delta by delta, ours are vLLM's stream deltas except where listed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::golden_lines;
use llm_render_parsers::tool::ForcedCallParser;
use llm_render_parsers::{Parsed, ToolParser};
use serde_json::{json, Value};

/// vLLM's one-shot makes these no call; its stream has sent the calls before the fault, and
/// so do we (their arguments as `json.dumps` writes them, where its stream sends raw text).
const STREAM_FOLD: &[&str] = &[
    "required/invalid_bad_entry",
    "required/invalid_cut_off",
    "required/invalid_trailing",
];

/// Where our deltas are not vLLM's stream deltas, and why.
const OTHER_DELTAS: &[(&str, &str)] = &[
    (
        "named/spaced",
        "leading whitespace waits for the first other character",
    ),
    (
        "named/whitespace_only",
        "no call for a blank output, as the one-shot",
    ),
    (
        "required/one_call",
        "a number is sent whole, at the character after it",
    ),
    ("required/two_calls", "a number is sent whole"),
    ("required/nested", "a number is sent whole"),
    ("required/escaped", "a number is sent whole"),
    ("required/compact", "json.dumps separators"),
    ("required/numbers", "numbers as Python prints them"),
    (
        "required/unicode_escapes",
        "escapes decoded, as json.dumps writes them",
    ),
    ("required/spaced", "whitespace as json.dumps writes it"),
    (
        "required/null_parameters",
        "a null is sent at the character after it",
    ),
    (
        "required/no_parameters",
        "sent with null, as the one-shot (vLLM's stream never sends it)",
    ),
    (
        "required/invalid_parameters_type",
        "not an object: no call, as the one-shot",
    ),
];

fn step_json(calls: &[llm_render_parsers::ToolCallDelta]) -> Value {
    Value::Array(
        calls
            .iter()
            .map(|d| match &d.name {
                Some(n) => json!({"index": d.index, "name": n, "arguments": d.arguments}),
                None => json!({"index": d.index, "arguments": d.arguments}),
            })
            .collect(),
    )
}

fn parser(g: &Value) -> ForcedCallParser {
    match g["tool_choice"].as_str() {
        Some("required") => ForcedCallParser::required(),
        _ => ForcedCallParser::named(g["tool_choice"]["function"]["name"].as_str().unwrap()),
    }
}

fn folded(out: &Parsed) -> Value {
    Value::Array(
        out.tool_calls()
            .into_iter()
            .map(|c| json!({"name": c.name, "arguments": c.arguments}))
            .collect(),
    )
}

#[test]
fn forced_calls_stream_as_vllm_streams_them() {
    let lines = golden_lines("forced_stream.jsonl");
    assert_eq!(lines.len(), 28);
    let (mut same, mut other) = (0, 0);
    for g in &lines {
        let id = g["id"].as_str().unwrap();
        let deltas: Vec<&str> = g["deltas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap())
            .collect();
        // Ours, one token at a time: the deltas of each step (the end's on the last).
        let mut p = parser(g);
        let mut out = Parsed::default();
        let mut steps = Vec::new();
        for (i, d) in deltas.iter().enumerate() {
            // A fresh `Parsed` per step, as the server sends each chunk's.
            let mut step = Parsed::default();
            p.push(d, &mut step);
            if i + 1 == deltas.len() {
                p.finish(&mut step);
            }
            steps.push(step_json(&step.calls));
            out.content += &step.content;
            out.calls.extend(step.calls);
        }
        if deltas.is_empty() {
            p.finish(&mut out);
        }
        // One shot.
        let mut one = Parsed::default();
        let mut p1 = parser(g);
        p1.push(g["text"].as_str().unwrap(), &mut one);
        p1.finish(&mut one);
        assert_eq!(folded(&out), folded(&one), "{id}: streamed vs one shot");
        assert_eq!(out.content, "", "{id}");
        let want = if STREAM_FOLD.contains(&id) {
            &g["stream_calls"]
        } else {
            &g["calls"]
        };
        assert_eq!(&folded(&out), want, "{id}: calls");
        let vllm = g["stream"].as_array().unwrap();
        match OTHER_DELTAS.iter().find(|(o, _)| *o == id) {
            None => {
                assert_eq!(&steps, vllm, "{id}: deltas");
                same += 1;
            }
            Some((_, why)) => {
                assert_ne!(
                    &steps, vllm,
                    "{id} now streams as vLLM: drop it from OTHER_DELTAS ({why})"
                );
                other += 1;
            }
        }
    }
    assert_eq!((same, other), (15, 13));
}
