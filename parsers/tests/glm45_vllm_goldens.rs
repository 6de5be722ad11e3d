//! The glm45 parser against vLLM 0.33's own (`Glm47MoeModelToolParser`, what
//! `--tool-call-parser glm45` selects), called in process on GLM-format outputs
//! (`scripts/gen_glm45_goldens.py`; there is no GLM tokenizer among the fixtures, so the
//! comparison is at the text level, where these parsers work). Each case is parsed one shot
//! and in every chunking; where vLLM's non-stream and stream results agree, ours must equal
//! them, and the cases where they differ are listed with the side we take.

mod common;
use common::chunkings;
use llm_render_parsers::{tool_parser, Parsed, ToolParser, ToolSchemas};
use serde_json::{json, Value};
use std::sync::Arc;

/// (case id, our result as (content, [(name, arguments)]), why)
const VLLM_DISAGREES: &[(&str, &str, &[(&str, &str)], &str)] = &[
    (
        "typed",
        "I'll check.\n",
        &[(
            "get_weather",
            r#"{"city": "Paris", "days": 3, "metric": true, "ratio": 2.5}"#,
        )],
        "content before a call keeps its trailing newline, as vLLM streams it; its non-stream strips it",
    ),
    (
        "text_after",
        "\nDone.",
        &[("now", "{}")],
        "text after the last call is content as written; vLLM's stream drops the newline, its \
         non-stream the whole text",
    ),
    (
        "repeated_key",
        "",
        &[("get_weather", r#"{"city": "A", "city": "B"}"#)],
        "a key given twice: vLLM's non-stream keeps the last value, its stream stops inside \
         the first; ours streams both, which JSON readers take as the last value",
    ),
    (
        "unclosed",
        "",
        &[("get_weather", r#"{"city": "Par"}"#)],
        "output cut off inside a value: vLLM's stream leaves the string open, its non-stream \
         drops the value; ours closes what was streamed",
    ),
];

fn result(content: &str, calls: &[(String, String)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(n, a)| json!({"name": n, "arguments": a}))
        .collect();
    json!({"content": content, "calls": calls})
}

fn parse(schemas: &Arc<ToolSchemas>, chunks: &[&str]) -> Value {
    let Some(mut p) = tool_parser("glm45", schemas.clone()) else {
        panic!("no glm45 parser");
    };
    let mut out = Parsed::default();
    for c in chunks {
        p.push(c, &mut out);
    }
    p.finish(&mut out);
    let calls: Vec<(String, String)> = out
        .tool_calls()
        .into_iter()
        .map(|c| (c.name, c.arguments))
        .collect();
    result(&out.content, &calls)
}

#[test]
fn glm45_matches_vllm() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/goldens/derender/glm45.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let cases: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(cases.len() >= 15, "{path}: {} cases", cases.len());
    let (mut agreed, mut listed) = (0, 0);
    for case in &cases {
        let id = case["id"].as_str().unwrap_or_default();
        let tools: Vec<Value> = case["tools"].as_array().cloned().unwrap_or_default();
        let schemas = Arc::new(ToolSchemas::from_tools(&tools));
        let output = case["text"].as_str().unwrap_or_default();
        let ours = parse(&schemas, &[output]);
        for chunks in chunkings(output) {
            assert_eq!(parse(&schemas, &chunks), ours, "{id}: chunked {chunks:?}");
        }
        let (vs, vn) = (&case["stream"], &case["nonstream"]);
        if vs == vn {
            assert_eq!(&ours, vn, "{id}: differs from vLLM");
            agreed += 1;
            continue;
        }
        let Some((_, content, calls, _)) = VLLM_DISAGREES.iter().find(|(c, ..)| *c == id) else {
            panic!("{id}: vLLM's stream {vs} and non-stream {vn} differ; list the case");
        };
        let calls: Vec<(String, String)> = calls
            .iter()
            .map(|(n, a)| (n.to_string(), a.to_string()))
            .collect();
        assert_eq!(ours, result(content, &calls), "{id}");
        listed += 1;
    }
    assert_eq!(listed, VLLM_DISAGREES.len());
    assert!(agreed >= 11, "{agreed} cases where vLLM agrees with itself");
}
