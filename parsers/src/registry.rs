//! Parsers by vLLM's `--reasoning-parser` / `--tool-call-parser` names, and by model-name
//! pattern (for `auto`).

use crate::tool::{
    MarkedFamily, MarkedParser, Parsed, PythonicParser, ToolParser, ToolSchemas, XmlFamily,
    XmlParser,
};
use crate::{TagReasoningParser, TagSpec};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The names `reasoning_parser` accepts.
pub fn reasoning_parser_names() -> &'static [&'static str] {
    &["deepseek_r1", "qwen3", "mistral"]
}

fn tags(start: &str, end: &str, starts_in_reasoning: bool) -> TagReasoningParser {
    TagReasoningParser::new(TagSpec {
        start: start.into(),
        end: end.into(),
        starts_in_reasoning,
        implicit_end: None,
    })
}

/// A parser by name (`deepseek_r1`, `qwen3`, `mistral`, or `tags:<start>,<end>`), or by a
/// model name containing one of the families; `None` for unknown names.
pub fn reasoning_parser(name: &str) -> Option<TagReasoningParser> {
    let lower = name.to_ascii_lowercase();
    if let Some(pair) = name.strip_prefix("tags:") {
        let (start, end) = pair.split_once(',')?;
        return Some(tags(start, end, false));
    }
    if lower == "deepseek_r1" || lower.contains("deepseek-r1") {
        // R1's templates end the generation prompt with "<think>\n".
        return Some(tags("<think>", "</think>", true));
    }
    if lower == "qwen3" || lower.contains("qwen3") {
        // As vLLM 0.33's qwen3 parser (`vllm/parser/qwen3.py`): with thinking on, output
        // starts in reasoning (Qwen3-2507 thinking templates write `<think>` into the prompt;
        // a `<think>` the model writes itself is dropped), and `<tool_call>` also ends it.
        // Thinking off (`enable_thinking: false`) turns the parser off per request.
        return Some(TagReasoningParser::new(TagSpec {
            start: "<think>".into(),
            end: "</think>".into(),
            starts_in_reasoning: true,
            implicit_end: Some("<tool_call>".into()),
        }));
    }
    if lower == "mistral" || lower.contains("magistral") {
        return Some(tags("[THINK]", "[/THINK]", false));
    }
    None
}

/// The names `tool_parser` accepts (vLLM's `--tool-call-parser` names).
pub fn tool_parser_names() -> &'static [&'static str] {
    &[
        "hermes",
        "llama3_json",
        "mistral",
        "deepseek_v3",
        "deepseek_v31",
        "qwen3_coder",
        "pythonic",
        "kimi_k2",
        "glm45",
    ]
}

/// Any tool parser, as one serializable type (the stream state carries it).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnyToolParser {
    Marked(MarkedParser),
    Xml(XmlParser),
    Pythonic(PythonicParser),
}

impl AnyToolParser {
    /// Whether the parser types values by the request's tool schemas (the XML families).
    pub fn uses_schemas(&self) -> bool {
        matches!(self, AnyToolParser::Xml(_))
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        if let AnyToolParser::Xml(p) = self {
            p.set_schemas(schemas);
        }
    }
}

impl ToolParser for AnyToolParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        match self {
            AnyToolParser::Marked(p) => p.push(text, out),
            AnyToolParser::Xml(p) => p.push(text, out),
            AnyToolParser::Pythonic(p) => p.push(text, out),
        }
    }

    fn finish(&mut self, out: &mut Parsed) {
        match self {
            AnyToolParser::Marked(p) => p.finish(out),
            AnyToolParser::Xml(p) => p.finish(out),
            AnyToolParser::Pythonic(p) => p.finish(out),
        }
    }
}

/// The vLLM parser name for a model name, for `auto`; `None` when no family matches.
pub fn tool_parser_for_model(model: &str) -> Option<&'static str> {
    let m = model.to_ascii_lowercase();
    let has = |s: &str| m.contains(s);
    Some(if has("qwen3-coder") || has("qwen3_coder") {
        "qwen3_coder"
    } else if has("qwen") || has("hermes") {
        "hermes"
    } else if has("llama-4") || has("llama4") {
        "pythonic"
    } else if has("llama-3") || has("llama3") {
        "llama3_json"
    } else if has("mistral") || has("magistral") || has("devstral") {
        "mistral"
    } else if has("deepseek-v3.1") || has("deepseek-v3.2") {
        "deepseek_v31"
    } else if has("deepseek") {
        "deepseek_v3"
    } else if has("kimi-k2") || has("kimi_k2") {
        "kimi_k2"
    } else if has("glm-4.5") || has("glm-4.6") || has("glm45") {
        "glm45"
    } else {
        return None;
    })
}

/// A tool parser by vLLM name; `None` for unknown names.
pub fn tool_parser(name: &str, schemas: Arc<ToolSchemas>) -> Option<AnyToolParser> {
    let marked = |f| Some(AnyToolParser::Marked(MarkedParser::new(f)));
    match name {
        "hermes" => marked(MarkedFamily::Hermes),
        "llama3_json" => marked(MarkedFamily::Llama3Json),
        "mistral" => marked(MarkedFamily::Mistral),
        "deepseek_v3" => marked(MarkedFamily::DeepseekV3),
        "deepseek_v31" => marked(MarkedFamily::DeepseekV31),
        "kimi_k2" => marked(MarkedFamily::KimiK2),
        "qwen3_coder" => Some(AnyToolParser::Xml(XmlParser::new(
            XmlFamily::Qwen3Coder,
            schemas,
        ))),
        "glm45" => Some(AnyToolParser::Xml(XmlParser::new(
            XmlFamily::Glm45,
            schemas,
        ))),
        "pythonic" => Some(AnyToolParser::Pythonic(PythonicParser::new())),
        _ => None,
    }
}
