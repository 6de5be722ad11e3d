//! vLLM's `hf` parser (`ResponseTemplateParser`) under random outputs and prompts: for each
//! template of the goldens (Gemma 4's shipped metadata, a Qwen3-style one with a regex opener
//! and xml-inline values, a gpt-oss-style one with a `.*?` opener, SmolLM3- and Cohere-style
//! literal templates, kv-lines calls), each parser pairing, any chunking, and a stream state
//! carried through JSON after every chunk (as the server carries it), the result equals the
//! one-shot result; and templates llm-render does not run are refused when loaded.

mod common;
use common::cut;
use llm_render_parsers::{
    check_response_template, response_template_parser, Parsed, ParserSettings, ResponseTemplate,
    ResponseTemplateParser, ToolSchemas,
};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::Arc;

/// The goldens' case file: its templates and its tools.
fn case_file() -> Value {
    let path = format!(
        "{}/../scripts/parser_cases/hf.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_default()
}

/// What the parser gives: reasoning, content, calls (name, arguments).
type Out = (String, String, Vec<(String, String)>);

fn parse(
    template: &ResponseTemplate,
    prompt: &str,
    pairing: u8,
    chunks: &[&str],
    carry: bool,
) -> Out {
    let tools = vec![
        json!({"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"},
            "days": {"type": "integer"}, "metric": {"type": "boolean"}}}}}),
        json!({"type": "function", "function": {"name": "now", "parameters": {}}}),
    ];
    let schemas = Arc::new(ToolSchemas::from_tools(&tools));
    let settings = ParserSettings {
        response_template: Some(Arc::new(template.clone())),
        prompt: prompt.to_string(),
        ..Default::default()
    };
    let (reasoning, calls) = match pairing {
        0 => (true, true),
        1 => (true, false),
        _ => (false, true),
    };
    let Ok(mut p) = response_template_parser(&settings, schemas.clone(), reasoning, calls) else {
        panic!("no parser");
    };
    let (mut r, mut out) = (String::new(), Parsed::default());
    for c in chunks {
        p.push(c, &mut r, &mut out);
        if carry {
            let state = serde_json::to_string(&p).unwrap_or_default();
            let Ok(mut q) = serde_json::from_str::<ResponseTemplateParser>(&state) else {
                panic!("state {state}");
            };
            q.set_schemas(schemas.clone());
            p = q;
        }
    }
    p.finish(&mut r, &mut out);
    let calls = out.tool_calls().into_iter().map(|c| (c.name, c.arguments));
    (r, out.content, calls.collect())
}

const PIECES: &[&[&str]] = &[
    // qwen3
    &[
        "<think>",
        "</think>",
        "<tool_call>",
        "</tool_call>",
        "<function=",
        "get_weather",
        "now",
        "天気",
        "-",
        ">",
        "<parameter=",
        "city",
        "days",
        "</parameter>",
        "</function>",
        "<|im_start|>assistant\n",
        "\n",
        " ",
        "Oslo",
        "3",
        "{\"a\": 1}",
        "<tool_",
        "<param",
    ],
    // gpt_oss
    &[
        "<|channel|>",
        "analysis",
        "final",
        "commentary to=functions.",
        "get_weather",
        "now",
        " <|constrain|>json",
        "<|message|>",
        "<|end|>",
        "<|call|>",
        "<|start|>assistant",
        "{\"city\": \"Oslo\"}",
        "{}",
        "{",
        " ",
        "x",
        "\n",
        ".",
    ],
    // gemma4
    &[
        "<|tool_call>",
        "call:",
        "get_weather",
        "now",
        "{",
        "}",
        "city:",
        "days:",
        "7",
        ",",
        "<|\"|>",
        "Oslo é",
        "<tool_call|>",
        "<tool_",
        "<|channel>thought\n",
        "<|channel>",
        "<channel|>",
        "<turn|>",
        "<tur",
        "<eos>",
        "<|tool_response>",
        "<tool_response|>",
        "<|turn>model\n",
        "🌧",
        "-",
        "x",
        " ",
        "\n",
    ],
    // smollm
    &[
        "<think>",
        "</think>",
        "<tool_call>",
        "</tool_call>",
        "<|im_end|>",
        "<|im_start|>assistant\n",
        "{\"name\": \"get_weather\", \"arguments\": {\"days\": \"3\"}}",
        "{\"name\": \"now\"",
        ", \"arguments\": {}}",
        "{",
        "}",
        "\"",
        "<think",
        "</tool",
        "x",
        " ",
        "\n",
        "é",
    ],
    // cohere
    &[
        "<|START_THINKING|>",
        "<|END_THINKING|>",
        "<|START_ACTION|>",
        "<|END_ACTION|>",
        "<|START_RESPONSE|>",
        "<|END_RESPONSE|>",
        "[{\"tool_name\": \"now\", \"parameters\": {}}]",
        "<|START_",
        "<|END_",
        "hi",
        " ",
        "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    ],
    // kv
    &[
        "<think>",
        "</think>",
        "<call:",
        "get_weather",
        "now",
        ">",
        "\n",
        "city: Oslo",
        "days: 3",
        "</call>",
        "<call",
        "</cal",
        ":",
        "x",
        " ",
    ],
];
const TEMPLATES: [&str; 6] = ["qwen3", "gpt_oss", "gemma4", "smollm", "cohere", "kv"];

fn templates() -> Vec<ResponseTemplate> {
    let file = case_file();
    TEMPLATES
        .iter()
        .map(|name| {
            ResponseTemplate::from_json(&file["templates"][name])
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn any_output_streams_like_one_shot(
        which in 0..TEMPLATES.len(),
        picks in prop::collection::vec(prop_oneof![
            4 => (0usize..64).prop_map(Ok),
            1 => any::<char>().prop_map(Err),
        ], 0..20),
        prompt_picks in prop::collection::vec(0usize..64, 0..4),
        pairing in 0u8..3,
        sizes in prop::collection::vec(1usize..9, 1..5),
    ) {
        let template = &templates()[which];
        let pieces = PIECES[which];
        // The template's pieces, and any character (multi-byte ones cut by the chunking).
        let text: String = picks
            .iter()
            .map(|p| match p {
                Ok(i) => pieces[i % pieces.len()].to_string(),
                Err(c) => c.to_string(),
            })
            .collect();
        let prompt: String = prompt_picks.iter().map(|&i| pieces[i % pieces.len()]).collect();
        let one = parse(template, &prompt, pairing, &[&text], false);
        prop_assert_eq!(&parse(template, &prompt, pairing, &cut(&text, &[1]), true), &one);
        prop_assert_eq!(&parse(template, &prompt, pairing, &cut(&text, &sizes), true), &one);
    }
}

#[test]
fn templates_llm_render_cannot_run_are_refused() {
    let base = case_file()["templates"]["smollm"].clone();
    let with = |path: &[&str], v: Value| {
        let mut t = base.clone();
        let mut at = &mut t;
        for key in &path[..path.len() - 1] {
            at = &mut at[*key];
        }
        at[path[path.len() - 1]] = v;
        t
    };
    let refused = [
        // ERNIE's `(?:^|<think>\s*)`, a greedy `.*`, Inkling's `[^<]*`.
        with(
            &["fields", "thinking", "open_pattern"],
            json!(r"(?:^|<think>\s*)"),
        ),
        with(
            &["fields", "tool_calls", "open_pattern"],
            json!(r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*<\|message\|>"),
        ),
        with(
            &["fields", "tool_calls", "open_pattern"],
            json!(r"(?:<\|message_model\|>)?[^<]*<\|content_invoke_tool_json\|>"),
        ),
        // A name run a regex would backtrack over.
        with(
            &["fields", "tool_calls", "open_pattern"],
            json!(r"<call>(?P<name>\w+)x"),
        ),
        // xml-inline by another tag shape; int values.
        with(&["fields", "tool_calls", "content"], json!("xml-inline")),
        with(&["fields", "tool_calls", "content"], json!("int")),
        // One closer a prefix of another.
        with(
            &["fields", "content", "close"],
            json!(["<|im_end|>", "<|im_end|>\n"]),
        ),
        // A semantic field vLLM's serving cannot route.
        with(&["fields", "answer"], json!({"open": "<a>"})),
    ];
    for t in refused {
        let mut t = t;
        // A pattern in place of the literal (vLLM refuses both).
        for field in ["tool_calls", "thinking"] {
            if let Some(f) = t["fields"][field].as_object_mut() {
                if f.contains_key("open_pattern") {
                    f.remove("open");
                }
            }
        }
        assert!(ResponseTemplate::from_json(&t).is_err(), "{t}");
        assert!(check_response_template(Some(&t), true, true).is_err());
    }
    assert!(check_response_template(Some(&base), true, true).is_ok());
}

/// `scripts/hf_differential.py`'s random streams (the file `LLM_RENDER_HF_DIFF` names): ours
/// gives vLLM's delta for every chunk.
#[test]
#[ignore = "needs a file from scripts/hf_differential.py (vLLM)"]
fn differential_against_vllm() {
    let path = std::env::var("LLM_RENDER_HF_DIFF").unwrap_or_default();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut failures = Vec::new();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    for c in &lines {
        let template = ResponseTemplate::from_json(&c["template"])
            .unwrap_or_else(|e| panic!("{}: {e}", c["name"]));
        let settings = ParserSettings {
            response_template: Some(Arc::new(template)),
            prompt: c["prefix"].as_str().unwrap_or_default().to_string(),
            ..Default::default()
        };
        let tools = c["tools"].as_array().cloned().unwrap_or_default();
        let schemas = Arc::new(ToolSchemas::from_tools(&tools));
        let (reasoning, calls) = (c["reasoning_parser"] == true, c["tool_parser"] == true);
        let Ok(mut p) = response_template_parser(&settings, schemas, reasoning, calls) else {
            panic!("no parser for {}", c["name"]);
        };
        let chunks = c["chunks"].as_array().cloned().unwrap_or_default();
        let mut ours = Vec::new();
        for (k, chunk) in chunks.iter().enumerate() {
            let (mut r, mut out) = (String::new(), Parsed::default());
            p.push(chunk.as_str().unwrap_or_default(), &mut r, &mut out);
            if k + 1 == chunks.len() {
                p.finish(&mut r, &mut out);
            }
            let calls: Vec<Value> = out
                .calls
                .iter()
                .map(|d| json!({"name": d.name, "arguments": d.arguments}))
                .collect();
            ours.push(json!({"reasoning": r, "content": out.content, "calls": calls}));
        }
        let ours = Value::Array(ours);
        if ours != c["deltas"] {
            failures.push(format!(
                "{} prefix {} chunks {}:\n  vLLM {}\n  ours {ours}",
                c["name"], c["prefix"], c["chunks"], c["deltas"]
            ));
        }
    }
    assert!(!lines.is_empty(), "no streams in {path}");
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n")
    );
}

/// A stream state is signed, but one that could not have been made here is refused when read
/// back, rather than running a machine that would panic or loop.
#[test]
fn forged_states_are_refused() {
    let template = ResponseTemplate::from_json(&case_file()["templates"]["gemma4"])
        .unwrap_or_else(|e| panic!("{e}"));
    let settings = ParserSettings {
        response_template: Some(Arc::new(template)),
        ..Default::default()
    };
    let Ok(mut p) = response_template_parser(&settings, Arc::default(), true, true) else {
        panic!("no parser");
    };
    p.push(
        "<|channel>thought\nplan<chan",
        &mut String::new(),
        &mut Parsed::default(),
    );
    let state = serde_json::to_value(&p).unwrap_or_default();
    assert!(serde_json::from_value::<ResponseTemplateParser>(state.clone()).is_ok());
    let forge = |path: &[&str], v: Value| {
        let mut s = state.clone();
        let mut at = &mut s;
        for key in path {
            at = &mut at[*key];
        }
        *at = v;
        serde_json::from_value::<ResponseTemplateParser>(s).is_err()
    };
    assert!(forge(&["regions", "current"], json!(99)));
    assert!(forge(&["regions", "prefix_left"], json!(1000)));
    // An offset inside a character.
    let mut mid_char = state.clone();
    mid_char["regions"]["buf"] = json!("é");
    mid_char["regions"]["prefix_left"] = json!(1);
    assert!(serde_json::from_value::<ResponseTemplateParser>(mid_char).is_err());
    // An empty delimiter would match without consuming text, over and over.
    assert!(forge(
        &["template", "start_anchor"],
        json!({"literals": [""]})
    ));
}
