//! Reasoning parsers by vLLM's `--reasoning-parser` names, and by model-name pattern.

use crate::{ReasoningParser, TagReasoningParser, TagSpec};

/// The names `reasoning_parser` accepts.
pub fn reasoning_parser_names() -> &'static [&'static str] {
    &["deepseek_r1", "qwen3", "mistral"]
}

fn tags(start: &str, end: &str, starts_in_reasoning: bool) -> Box<dyn ReasoningParser> {
    Box::new(TagReasoningParser::new(TagSpec {
        start: start.into(),
        end: end.into(),
        starts_in_reasoning,
    }))
}

/// A parser by name (`deepseek_r1`, `qwen3`, `mistral`, or `tags:<start>,<end>`), or by a
/// model name containing one of the families; `None` for unknown names.
pub fn reasoning_parser(name: &str) -> Option<Box<dyn ReasoningParser>> {
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
        // Thinking on: Qwen3 opens <think> itself. Thinking off: the template wrote an empty
        // block into the prompt and the output is content; the same machine covers both
        // (output that does not start with <think> is content).
        return Some(tags("<think>", "</think>", false));
    }
    if lower == "mistral" || lower.contains("magistral") {
        return Some(tags("[THINK]", "[/THINK]", false));
    }
    None
}
