//! Streaming in any chunking gives the one-shot result, for every reasoning format.

mod common;
use common::chunkings;
use llm_render_parsers::{reasoning_parser, ReasoningParser, Split};

fn run(name: &str, chunks: &[&str]) -> Split {
    let mut p = reasoning_parser(name).unwrap_or_else(|| panic!("{name}"));
    let mut out = Split::default();
    for c in chunks {
        p.push(c, &mut out);
    }
    p.finish(&mut out);
    out
}

fn one_shot(name: &str, text: &str) -> Split {
    run(name, &[text])
}

const CASES: &[(&str, &str, &str, &str)] = &[
    // (parser, output, reasoning, content)
    (
        "qwen3",
        "<think>\nadd 2 and 2\n</think>\n\nIt is 4.",
        "\nadd 2 and 2\n",
        "\n\nIt is 4.",
    ),
    ("qwen3", "  <think>x</think>y", "x", "y"),
    // vLLM 0.33's qwen3: thinking on means the output starts in reasoning; a `<think>` inside
    // reasoning and a `</think>` after it are dropped.
    (
        "qwen3",
        "No start tag, <think> mid-text is dropped.</think>Then content.</think>",
        "No start tag,  mid-text is dropped.",
        "Then content.",
    ),
    // ... and `<tool_call>` ends reasoning too, staying for the tool parser.
    (
        "qwen3",
        "I need the tool.\n<tool_call>\n{\"name\": \"f\"}\n</tool_call>",
        "I need the tool.\n",
        "<tool_call>\n{\"name\": \"f\"}\n</tool_call>",
    ),
    (
        "qwen3",
        "<think>never closed, trunc",
        "never closed, trunc",
        "",
    ),
    ("qwen3", "<think>a</thi", "a</thi", ""),
    ("qwen3", "<thi", "<thi", ""),
    (
        "deepseek_r1",
        "step 1… ✓ 日本</think>answer <think> kept",
        "step 1… ✓ 日本",
        "answer <think> kept",
    ),
    (
        "deepseek_r1",
        "<think>dup start</think>ok",
        "dup start",
        "ok",
    ),
    ("mistral", "[THINK]why[/THINK]because", "why", "because"),
    ("tags:<r>,</r>", "<r>🤖</r>🧪", "🤖", "🧪"),
];

#[test]
fn one_shot_results() {
    for (name, text, reasoning, content) in CASES {
        let got = one_shot(name, text);
        assert_eq!(
            (got.reasoning.as_str(), got.content.as_str()),
            (*reasoning, *content),
            "{name}: {text:?}"
        );
    }
}

#[test]
fn every_chunking_equals_one_shot() {
    for (name, text, _, _) in CASES {
        let want = one_shot(name, text);
        for chunks in chunkings(text) {
            assert_eq!(run(name, &chunks), want, "{name}: {chunks:?}");
        }
    }
}

#[test]
fn random_outputs_and_chunkings() {
    let pieces = [
        "<think>", "</think>", "<thi", "nk>", "a", " ", "\n", "é", "🤖", "</", "think", ">", "x y",
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..2000 {
        let n = (next() % 12) as usize;
        let text: String = (0..n)
            .map(|_| pieces[(next() % pieces.len() as u64) as usize])
            .collect();
        for name in ["qwen3", "deepseek_r1"] {
            let want = one_shot(name, &text);
            let mut chunks = Vec::new();
            let mut rest = text.as_str();
            while !rest.is_empty() {
                let mut cut = ((next() % 6) as usize + 1).min(rest.len());
                while !rest.is_char_boundary(cut) {
                    cut += 1;
                }
                chunks.push(&rest[..cut]);
                rest = &rest[cut..];
            }
            assert_eq!(run(name, &chunks), want, "{name}: {chunks:?}");
        }
    }
}

mod fuzz {
    use super::run;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5_000))]

        /// Tags, partial tags and any Unicode scalar, in random chunks: never a panic, and
        /// the same split as one shot.
        #[test]
        fn any_output_splits_like_one_shot(
            name in prop::sample::select(&["deepseek_r1", "qwen3", "mistral"][..]),
            pieces in prop::collection::vec(prop_oneof![
                prop::sample::select(&[
                    "<think>", "</think>", "<thi", "</th", "[THINK]", "[/THINK]", "[/TH",
                    "<tool_call>", "<tool", "\n", " ", "\u{3000}", "é", "🤖",
                ][..]).prop_map(str::to_string),
                any::<char>().prop_map(String::from),
            ], 0..20),
            size in 1usize..6,
        ) {
            let text: String = pieces.concat();
            let whole = run(name, &[&text]);
            let chars: Vec<(usize, char)> = text.char_indices().collect();
            let mut chunks = Vec::new();
            for group in chars.chunks(size) {
                let start = group[0].0;
                let end = group.last().map_or(start, |(i, c)| i + c.len_utf8());
                chunks.push(&text[start..end]);
            }
            let streamed = run(name, &chunks);
            prop_assert_eq!(format!("{streamed:?}"), format!("{whole:?}"), "{:?}", text);
        }
    }
}

/// nemotron_v3's and granite_thinking_parser's `force_nonempty_content: true`: no content by
/// `finish()`, the reasoning is sent again as the content, in any chunking; the state holds
/// the reasoning only until content appears.
#[test]
fn force_nonempty_content_repeats_reasoning_in_any_chunking() {
    use llm_render_parsers::{reasoning_parser_with, ParserSettings};
    let kwargs = serde_json::json!({"force_nonempty_content": true});
    let settings = ParserSettings::new(kwargs.as_object().unwrap().clone());
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "nemotron_v3",
            "Still thinking 🤔 about",
            "Still thinking 🤔 about",
            "Still thinking 🤔 about",
        ),
        (
            "nemotron_v3",
            "<think>only thoughts  \n</think>",
            "only thoughts",
            "only thoughts",
        ),
        (
            "nemotron_v3",
            "<think>r</think>\n\nIt is mild.",
            "r",
            "\n\nIt is mild.",
        ),
        ("granite_thinking_parser", "<think>r</think>\n\n", "r", "r"),
        ("granite_thinking_parser", "<think>r</think>\nA", "r", "A"),
    ];
    for &(name, text, reasoning, content) in cases {
        for chunks in chunkings(text) {
            let mut p = reasoning_parser_with(name, &settings).unwrap();
            let mut out = Split::default();
            for c in &chunks {
                p.push(c, &mut out);
            }
            p.finish(&mut out);
            assert_eq!(
                (out.reasoning.as_str(), out.content.as_str()),
                (reasoning, content),
                "{name} {chunks:?}"
            );
        }
    }
    // Content seen: the held reasoning is dropped from the state.
    let mut p = reasoning_parser_with("nemotron_v3", &settings).unwrap();
    let mut out = Split::default();
    p.push("<think>a long thought</think>", &mut out);
    assert!(serde_json::to_string(&p)
        .unwrap()
        .contains("a long thought"));
    p.push("Answer", &mut out);
    assert!(!serde_json::to_string(&p)
        .unwrap()
        .contains("a long thought"));
}
