//! The Harmony (gpt-oss) output parser against vLLM 0.32's own `HarmonyParser`, run in
//! process by `scripts/gen_harmony_derender_goldens.py` over vLLM's, openai-harmony's and
//! our own broken outputs (each case names its source), with the three parser setups vLLM
//! composes: reasoning and tool parser, tool parser only, reasoning parser only.
//!
//! Ours equals vLLM's one-shot result (`parse`) in every case, parsed one shot and in every
//! chunking. vLLM's stream differs from its own one-shot result in three ways, which ours
//! does not follow (one code path for both): it sends arguments as written where one-shot
//! re-serializes them, joins messages of one kind without the `\n` one-shot puts between
//! them, and streams the text of a non-assistant message one-shot drops. The test checks
//! that every case where vLLM's stream differs is one of those.

mod common;
use common::{chunkings, cut, golden_lines};
use llm_render_parsers::{HarmonyParser, Parsed};
use serde_json::{json, Value};

fn goldens() -> Vec<Value> {
    golden_lines("harmony.jsonl")
}

const SETUPS: [(&str, bool, bool); 3] = [
    ("both", true, true),
    ("tools", false, true),
    ("reasoning", true, false),
];

/// Our result over `chunks`, in the goldens' shape.
fn run(reasoning: bool, tools: bool, chunks: &[&str]) -> Value {
    let mut p = HarmonyParser::new(reasoning, tools);
    let (mut r, mut out) = (String::new(), Parsed::default());
    for c in chunks {
        p.push(c, &mut r, &mut out);
    }
    p.finish(&mut r, &mut out);
    let none_if_empty = |s: String| if s.is_empty() { Value::Null } else { s.into() };
    let calls: Vec<Value> = out
        .tool_calls()
        .into_iter()
        .map(|c| json!({"name": c.name, "arguments": c.arguments}))
        .collect();
    json!({"reasoning": none_if_empty(r), "content": none_if_empty(out.content), "calls": calls})
}

#[test]
fn every_case_equals_vllm_one_shot() {
    let cases = goldens();
    assert!(cases.len() >= 100, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let id = case["id"].as_str().unwrap_or_default();
        let text = case["text"].as_str().unwrap_or_default();
        for (setup, reasoning, tools) in SETUPS {
            let ours = run(reasoning, tools, &[text]);
            for chunks in chunkings(text) {
                assert_eq!(
                    run(reasoning, tools, &chunks),
                    ours,
                    "{setup} {id}: chunked {chunks:?}"
                );
            }
            let want = &case["nonstream"][setup];
            if &ours != want {
                failures.push(format!("{setup} {id}:\n  want {want}\n  got  {ours}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A result with the three stream/one-shot differences taken out: newlines dropped from
/// reasoning and content, arguments parsed where they are JSON.
fn without_stream_differences(v: &Value) -> Value {
    let text = |k: &str| v[k].as_str().map(|s| s.replace('\n', ""));
    let calls: Vec<Value> = v["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let args = c["arguments"].as_str().unwrap_or_default();
            let args = serde_json::from_str::<Value>(args).unwrap_or_else(|_| args.into());
            json!({"name": c["name"], "arguments": args})
        })
        .collect();
    json!({"reasoning": text("reasoning"), "content": text("content"), "calls": calls})
}

#[test]
fn vllm_stream_differs_only_in_the_listed_ways() {
    let mut differing = 0;
    for case in &goldens() {
        let id = case["id"].as_str().unwrap_or_default();
        let text = case["text"].as_str().unwrap_or_default();
        for (setup, _, _) in SETUPS {
            let (one_shot, stream) = (&case["nonstream"][setup], &case["stream"][setup]);
            if one_shot == stream {
                continue;
            }
            differing += 1;
            let explained = without_stream_differences(one_shot)
                == without_stream_differences(stream)
                || text.contains("<|start|>user");
            assert!(
                explained,
                "{setup} {id}: vLLM's stream {stream} vs one-shot {one_shot}"
            );
        }
    }
    assert!(
        differing > 0,
        "the goldens should show vLLM's stream differences"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// Any mix of Harmony's markers, header words, JSON and multi-byte text streams as it
    /// parses one shot, in every setup (and never panics).
    #[test]
    fn any_output_streams_like_one_shot(
        pieces in proptest::collection::vec(proptest::sample::select(&[
            "<|start|>", "assistant", "user", "<|channel|>", "analysis", "final", "commentary",
            " to=functions.f", " to=python", "to=", " <|constrain|>json", " json", "<|message|>",
            "<|end|>", "<|call|>", "<|return|>", "<|endoftext|>", "<|", "|>", "<", "{\"a\": 1}",
            "{", "\"é\"", "🤖", "\n", " ", "x", "functions.", ".",
        ][..]), 0..30),
        sizes in proptest::collection::vec(1usize..9, 1..5),
    ) {
        let text: String = pieces.concat();
        for (_, reasoning, tools) in SETUPS {
            let one = run(reasoning, tools, &[&text]);
            proptest::prop_assert_eq!(&run(reasoning, tools, &cut(&text, &[1])), &one, "{:?}", text);
            proptest::prop_assert_eq!(&run(reasoning, tools, &cut(&text, &sizes)), &one, "{:?}", text);
        }
    }
}

/// Reasoning and content stream through: the parser's state between chunks stays the size
/// of a header, however long the messages.
#[test]
fn state_does_not_grow_with_the_messages() {
    let mut p = HarmonyParser::new(true, true);
    let (mut r, mut out) = (String::new(), Parsed::default());
    p.push("<|channel|>analysis<|message|>", &mut r, &mut out);
    for _ in 0..2000 {
        p.push("thinking hard ", &mut r, &mut out);
    }
    p.push(
        "<|end|><|start|>assistant<|channel|>final<|message|>",
        &mut r,
        &mut out,
    );
    for _ in 0..2000 {
        p.push("answer ", &mut r, &mut out);
    }
    let state = serde_json::to_string(&p).unwrap();
    assert!(state.len() < 400, "{} bytes: {state}", state.len());
    assert_eq!(r.len(), 2000 * "thinking hard ".len());
}
