//! `parsers`: model output into each output parser. The input is `tool:NAME`,
//! `reasoning:NAME`, `harmony`, `forced:required` / `forced:named` (the reader of output a
//! `tool_choice` schema forced: a `[{"name", "parameters"}]` list, or one named tool's
//! arguments) or `hf:N` (vLLM's `hf` parser, reasoning and calls, driven by the N-th
//! distinct `response_template` of the `hf` goldens, after that template's golden prompt) or
//! `beam:N` (vLLM's `beam`: the same parser, and the grammar it derives from that template
//! for the text as the prompt, for requests without tools, with tools and with `required`:
//! none may panic, and a tag must be JSON), a newline, then the text (NAME: a vLLM parser name from the registry; an unknown one, or an
//! N past the templates, is skipped). The text is parsed one-shot, one character at
//! a time and in pieces of mixed sizes: none may panic, and every chunking must give the
//! one-shot result (content, reasoning and the folded tool calls), the property the
//! parsers crate promises.

use llm_render_parsers::tool::ForcedCallParser;
use llm_render_parsers::{
    reasoning_parser, response_template_parser, tool_parser, BeamRequest, BeamTemplate,
    HarmonyParser, Parsed, ParserSettings, ReasoningParser, ResponseTemplate, Split, ToolParser,
    ToolSchemas,
};
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};

/// The `hf` goldens' distinct response templates, in the order of their first case, each
/// with that case's prompt (`hf:N` picks the N-th).
fn hf_templates() -> &'static [(Value, Arc<ResponseTemplate>, String)] {
    static T: OnceLock<Vec<(Value, Arc<ResponseTemplate>, String)>> = OnceLock::new();
    T.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/goldens/derender/parser_families.jsonl"
        );
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let mut out: Vec<(Value, Arc<ResponseTemplate>, String)> = Vec::new();
        for line in text.lines() {
            let Ok(case) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let spec = &case["response_template"];
            if case["kind"] != "template" || out.iter().any(|(s, ..)| s == spec) {
                continue;
            }
            if let Ok(t) = ResponseTemplate::from_json(spec) {
                let prompt = case["prefix"].as_str().unwrap_or_default().to_string();
                out.push((spec.clone(), Arc::new(t), prompt));
            }
        }
        out
    })
}

/// The `hf:N` name of a golden's response template (the seeds'), if it is one of them.
pub fn hf_name(spec: &Value) -> Option<String> {
    let i = hf_templates().iter().position(|(s, ..)| s == spec)?;
    Some(format!("hf:{i}"))
}

fn hf(index: &str, chunks: &[&str]) -> Option<Outcome> {
    let (_, template, prompt) = hf_templates().get(index.parse::<usize>().ok()?)?;
    let settings = ParserSettings {
        response_template: Some(template.clone()),
        prompt: prompt.clone(),
        ..Default::default()
    };
    let (reasoning, calls) = (template.has_thinking(), template.has_tool_calls());
    let mut p = response_template_parser(&settings, schemas(), reasoning, calls).ok()?;
    let (mut thinking, mut out) = (String::new(), Parsed::default());
    for c in chunks {
        p.push(c, &mut thinking, &mut out);
    }
    p.finish(&mut thinking, &mut out);
    Some(outcome(out, thinking))
}

/// `beam:N`'s grammar for the text as the prompt: each request shape's tag (or refusal), no
/// panic, and a tag that is JSON.
fn beam_grammar(index: &str, prompt: &str) {
    let Some((spec, ..)) = index
        .parse::<usize>()
        .ok()
        .and_then(|i| hf_templates().get(i))
    else {
        return;
    };
    let Ok(template) = BeamTemplate::from_json(spec) else {
        return;
    };
    let tools: Vec<serde_json::Map<String, Value>> = [json!({"type": "function", "function": {
        "name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}}}, "strict": true}})]
    .iter()
    .filter_map(|t| t.as_object().cloned())
    .collect();
    for (tools, choice) in [
        (&[][..], json!("none")),
        (&tools[..], json!("auto")),
        (&tools[..], json!("required")),
    ] {
        let r = BeamRequest {
            tools,
            tool_choice: &choice,
            parallel_tool_calls: None,
            output: None,
            requires_reasoning: true,
            include_reasoning: true,
            prompt,
            reasoning_parser: true,
            tool_parser: true,
        };
        if let Ok(Some(tag)) = template.constrain(&r) {
            assert!(
                serde_json::from_str::<Value>(&tag.structural_tag).is_ok(),
                "beam:{index}: a tag that is not JSON"
            );
        }
    }
}

/// The tools the typed (XML) families read values by: every JSON type, and a call without
/// parameters.
fn schemas() -> Arc<ToolSchemas> {
    static S: OnceLock<Arc<ToolSchemas>> = OnceLock::new();
    S.get_or_init(|| {
        let tools = [
            json!({"type": "function", "function": {"name": "get_weather", "parameters": {
                "type": "object", "properties": {
                    "city": {"type": "string"}, "days": {"type": "integer"},
                    "metric": {"type": "boolean"}, "ratio": {"type": "number"},
                    "opts": {"type": "object"}, "tags": {"type": "array"},
                    "unit": {"enum": ["c", "f"]}, "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}}}),
            json!({"type": "function", "function": {"name": "write_file", "parameters": {
                "type": "object", "properties": {
                    "path": {"type": "string"}, "content": {"type": "string"}}}}}),
            json!({"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}}),
        ];
        Arc::new(ToolSchemas::from_tools(&tools))
    })
    .clone()
}

/// The chunkings every input is parsed in: whole, one character at a time, and pieces of
/// 1, 2, 3, 5, 8 and 13 bytes (rounded up to a character), starting at a size picked by
/// the text's length.
fn chunkings(text: &str) -> Vec<Vec<&str>> {
    let chars: Vec<&str> = text
        .char_indices()
        .map(|(i, c)| &text[i..i + c.len_utf8()])
        .collect();
    const SIZES: [usize; 6] = [1, 2, 3, 5, 8, 13];
    let mut mixed = Vec::new();
    let (mut i, mut k) = (0, text.len() % SIZES.len());
    while i < text.len() {
        let mut j = (i + SIZES[k % SIZES.len()]).min(text.len());
        while !text.is_char_boundary(j) {
            j += 1;
        }
        mixed.push(&text[i..j]);
        i = j;
        k += 1;
    }
    vec![vec![text], chars, mixed]
}

/// What a parse ends with, compared across chunkings.
#[derive(Debug, PartialEq)]
struct Outcome {
    content: String,
    reasoning: String,
    calls: Vec<(String, String)>,
}

fn tools(name: &str, chunks: &[&str]) -> Option<Outcome> {
    let mut p = tool_parser(name, schemas())?;
    let mut out = Parsed::default();
    for c in chunks {
        p.push(c, &mut out);
    }
    p.finish(&mut out);
    Some(outcome(out, String::new()))
}

fn forced(which: &str, chunks: &[&str]) -> Option<Outcome> {
    let mut p = match which {
        "required" => ForcedCallParser::required(),
        "named" => ForcedCallParser::named("get_weather"),
        _ => return None,
    };
    let mut out = Parsed::default();
    for c in chunks {
        p.push(c, &mut out);
    }
    p.finish(&mut out);
    Some(outcome(out, String::new()))
}

fn reasoning(name: &str, chunks: &[&str]) -> Option<Outcome> {
    let mut p = reasoning_parser(name)?;
    let mut out = Split::default();
    for c in chunks {
        p.push(c, &mut out);
    }
    p.finish(&mut out);
    Some(Outcome {
        content: out.content,
        reasoning: out.reasoning,
        calls: Vec::new(),
    })
}

fn harmony(chunks: &[&str]) -> Outcome {
    let mut p = HarmonyParser::new(true, true);
    let (mut reasoning, mut out) = (String::new(), Parsed::default());
    for c in chunks {
        p.push(c, &mut reasoning, &mut out);
    }
    p.finish(&mut reasoning, &mut out);
    outcome(out, reasoning)
}

fn outcome(out: Parsed, reasoning: String) -> Outcome {
    let calls = out
        .tool_calls()
        .into_iter()
        .map(|c| (c.name, c.arguments))
        .collect();
    Outcome {
        content: out.content,
        reasoning,
        calls,
    }
}

/// The input for `text` through `parser` (`tool:NAME`, `reasoning:NAME`, `harmony`,
/// `forced:required`, `forced:named`, `hf:N` or `beam:N`).
pub fn input(parser: &str, text: &str) -> Vec<u8> {
    format!("{parser}\n{text}").into_bytes()
}

pub fn run(data: &[u8]) {
    let Ok(data) = std::str::from_utf8(data) else {
        return;
    };
    let Some((parser, text)) = data.split_once('\n') else {
        return;
    };
    let parse = |chunks: &[&str]| match parser.split_once(':') {
        Some(("tool", name)) => tools(name, chunks),
        Some(("reasoning", name)) => reasoning(name, chunks),
        Some(("forced", which)) => forced(which, chunks),
        Some(("hf" | "beam", index)) => hf(index, chunks),
        None if parser == "harmony" => Some(harmony(chunks)),
        _ => None,
    };
    if let Some(("beam", index)) = parser.split_once(':') {
        beam_grammar(index, text);
    }
    let mut ways = chunkings(text).into_iter();
    let Some(whole) = ways.next() else { return };
    let Some(one_shot) = parse(&whole) else {
        return;
    };
    for chunks in ways {
        let streamed = parse(&chunks);
        assert_eq!(
            streamed.as_ref(),
            Some(&one_shot),
            "{parser}: streamed in {} pieces differs from one-shot",
            chunks.len()
        );
    }
}
