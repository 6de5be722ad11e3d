//! Helpers shared by the parser tests: run a parser over chunks, and cut text into chunks.
#![allow(dead_code)]

use llm_render_parsers::{
    is_response_template, reasoning_parser_with, tool_parser_with, Parsed, ParserSettings,
    ReasoningParser, ResponseTemplate, Split, ToolCall, ToolParser, ToolSchemas,
};
use serde_json::{json, Value};
use std::sync::Arc;

/// The tool schemas the typed (XML) formats are tested with.
pub fn schemas() -> Arc<ToolSchemas> {
    let tools = [
        json!({"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {
                "city": {"type": "string"}, "days": {"type": "integer"},
                "metric": {"type": "boolean"}, "ratio": {"type": "number"},
                "opts": {"type": "object"}, "tags": {"type": "array"}}}}}),
        json!({"type": "function", "function": {"name": "write_file", "parameters": {
            "type": "object", "properties": {
                "path": {"type": "string"}, "content": {"type": "string"}}}}}),
        json!({"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}}),
    ];
    Arc::new(ToolSchemas::from_tools(&tools))
}

/// The `response_template` metadata Gemma 4's instruction checkpoints ship (as vLLM's
/// `tests/parser/test_response_template.py` has it).
pub fn gemma4_template() -> Value {
    json!({
        "defaults": {"role": "assistant"},
        "fields": {
            "content": {"close": ["<turn|>", "<|tool_response>", "<eos>"], "content": "text"},
            "thinking": {"close": "<channel|>", "content": "text", "open": "<|channel>thought\n"},
            "tool_calls": {
                "close": "<tool_call|>", "content": "json",
                "content_args": {"string_delims": [["<|\"|>", "<|\"|>"]], "unquoted_keys": true},
                "open_pattern": "<\\|tool_call>call:(?P<name>\\w+)", "repeats": true,
                "transform": {"function": {"arguments": "{content}", "name": "{name}"}, "type": "function"}
            }
        },
        "start_anchor": ["<|turn>model\n", "<tool_response|>"]
    })
}

/// The settings a family's tool parser is built with here: `hf` (and `beam`, the same parser)
/// gets Gemma 4's template and a prompt ending in its start anchor; the others none.
pub fn settings_for(name: &str) -> ParserSettings {
    if !is_response_template(name) {
        return ParserSettings::default();
    }
    let template = ResponseTemplate::from_json(&gemma4_template())
        .unwrap_or_else(|e| panic!("Gemma 4's template: {e}"));
    ParserSettings {
        response_template: Some(Arc::new(template)),
        prompt: "<|turn>user\nhi<turn|>\n<|turn>model\n".into(),
        ..Default::default()
    }
}

/// Content and folded calls after feeding `chunks` then finishing.
pub fn run(name: &str, chunks: &[&str]) -> (String, Vec<ToolCall>, Parsed) {
    let mut p = tool_parser_with(name, schemas(), &settings_for(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .unwrap_or_else(|| panic!("{name}"));
    let mut out = Parsed::default();
    for c in chunks {
        p.push(c, &mut out);
    }
    p.finish(&mut out);
    (out.content.clone(), out.tool_calls(), out)
}

pub fn one_shot(name: &str, text: &str) -> (String, Vec<ToolCall>) {
    let (c, t, _) = run(name, &[text]);
    (c, t)
}

/// Char-boundary offsets of `text`.
pub fn bounds(text: &str) -> Vec<usize> {
    (0..=text.len())
        .filter(|i| text.is_char_boundary(*i))
        .collect()
}

/// Every two-piece split, one-char pieces, and fixed sizes 2, 3, 5, 7, 13.
pub fn chunkings(text: &str) -> Vec<Vec<&str>> {
    let b = bounds(text);
    let mut out: Vec<Vec<&str>> = b.iter().map(|&i| vec![&text[..i], &text[i..]]).collect();
    out.push(b.windows(2).map(|w| &text[w[0]..w[1]]).collect());
    for size in [2, 3, 5, 7, 13] {
        let mut v = Vec::new();
        let mut i = 0;
        while i + 1 < b.len() {
            let j = (i + size).min(b.len() - 1);
            v.push(&text[b[i]..b[j]]);
            i = j;
        }
        out.push(v);
    }
    out
}

/// A tool parser's result over `chunks`, as the goldens write it: `{"content", "calls":
/// [{"name", "arguments"}]}`.
pub fn tools_json(parser: &str, schemas: &Arc<ToolSchemas>, chunks: &[&str]) -> Value {
    tools_json_with(parser, schemas, &ParserSettings::default(), chunks)
}

/// [`tools_json`] with the model's settings (its Hunyuan token suffixes).
pub fn tools_json_with(
    parser: &str,
    schemas: &Arc<ToolSchemas>,
    settings: &ParserSettings,
    chunks: &[&str],
) -> Value {
    let Some(mut p) = tool_parser_with(parser, schemas.clone(), settings)
        .ok()
        .flatten()
    else {
        panic!("no tool parser {parser}");
    };
    let mut out = Parsed::default();
    for c in chunks {
        p.push(c, &mut out);
    }
    p.finish(&mut out);
    let calls: Vec<Value> = out
        .tool_calls()
        .into_iter()
        .map(|c| json!({"name": c.name, "arguments": c.arguments}))
        .collect();
    json!({"content": out.content, "calls": calls})
}

/// A reasoning parser's result over `chunks`, built for a request with `settings`:
/// `{"content", "reasoning"}`.
pub fn reasoning_json(parser: &str, settings: &ParserSettings, chunks: &[&str]) -> Value {
    let Some(mut p) = reasoning_parser_with(parser, settings) else {
        panic!("no reasoning parser {parser}");
    };
    let mut out = Split::default();
    for c in chunks {
        p.push(c, &mut out);
    }
    p.finish(&mut out);
    json!({"content": out.content, "reasoning": out.reasoning})
}

/// The JSON lines of `fixtures/goldens/derender/<file>`.
pub fn golden_lines(file: &str) -> Vec<Value> {
    let path = format!(
        "{}/../fixtures/goldens/derender/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Cuts `text` at char boundaries into pieces of random sizes from `sizes` (cycled).
pub fn cut<'a>(text: &'a str, sizes: &[usize]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut k = 0;
    while i < text.len() {
        let mut j = (i + sizes[k % sizes.len()].max(1)).min(text.len());
        while !text.is_char_boundary(j) {
            j += 1;
        }
        out.push(&text[i..j]);
        i = j;
        k += 1;
    }
    out
}

/// A gzipped JSON-lines golden file under `fixtures/goldens/` (`beam_tags.jsonl.gz`), one
/// value a line.
pub fn gz_goldens(rel: &str) -> Vec<Value> {
    use std::io::Read;
    let path = format!("{}/../fixtures/goldens/{rel}", env!("CARGO_MANIFEST_DIR"));
    let Ok(file) = std::fs::File::open(&path) else {
        panic!("missing {path}");
    };
    let mut text = String::new();
    if flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .is_err()
    {
        panic!("unreadable {path}");
    }
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or(Value::Null))
        .collect()
}
