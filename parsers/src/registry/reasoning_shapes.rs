//! The tag shapes and per-request switches the reasoning table's entries share (vLLM's
//! parser engines, its identity parser, the families' thinking switches).

use super::settings::truthy;
use super::ParserSettings;
use crate::{TagReasoningParser, TagSpec, TagVariant};

pub(super) fn tags(start: &str, end: &str, starts_in_reasoning: bool) -> TagReasoningParser {
    TagReasoningParser::new(TagSpec {
        start: start.into(),
        end: end.into(),
        starts_in_reasoning,
        ..TagSpec::default()
    })
}

/// vLLM's identity parser: all content, the prompt always past reasoning.
pub(super) fn identity() -> TagReasoningParser {
    TagReasoningParser::new(TagSpec {
        variant: TagVariant::Identity,
        ..TagSpec::default()
    })
}

/// vLLM's qwen3 parser engine with one family's tags: output starts in reasoning (thinking
/// on), a start tag inside it is dropped, `implicit_end` also ends it, and the prompt scan
/// stops at the turn boundaries.
pub(super) fn engine_tags(
    start: &str,
    end: &str,
    implicit_end: &str,
    turn_boundaries: &[&str],
    trim_reasoning_end: bool,
) -> TagReasoningParser {
    TagReasoningParser::new(engine_spec(
        start,
        end,
        implicit_end,
        turn_boundaries,
        trim_reasoning_end,
    ))
}

/// [`engine_tags`]'s spec, for a family that sets more of it.
pub(super) fn engine_spec(
    start: &str,
    end: &str,
    implicit_end: &str,
    turn_boundaries: &[&str],
    trim_reasoning_end: bool,
) -> TagSpec {
    TagSpec {
        start: start.into(),
        end: end.into(),
        starts_in_reasoning: true,
        implicit_end: Some(implicit_end.into()),
        turn_boundaries: turn_boundaries.iter().map(|b| b.to_string()).collect(),
        trim_reasoning_end,
        ..TagSpec::default()
    }
}

/// Muse's channel messages, cut by their own machine. The tags are what the render and the
/// reasoning-token count read: no single token spells them, so a prompt never reads as
/// having ended reasoning (vLLM's Muse parsers say it has only once a tool channel opened)
/// and no reasoning tokens are counted.
pub(super) fn muse_tags(variant: TagVariant) -> TagReasoningParser {
    TagReasoningParser::new(TagSpec {
        start: "to=self<|message|>".into(),
        end: "to=user<|message|>".into(),
        variant,
        ..TagSpec::default()
    })
}

/// deepseek_v3's switch (and poolside_v1's): `thinking` or `enable_thinking` truthy in the
/// request's kwargs.
pub(super) fn thinking_asked(s: &ParserSettings) -> bool {
    s.truthy("thinking") || s.truthy("enable_thinking")
}

/// vLLM's qwen3 engine's switch (and its subclasses', plamo3's, minicpmv's):
/// `chat_kwargs.get("enable_thinking", True)`, on unless set and falsy.
pub(super) fn enable_thinking(s: &ParserSettings) -> bool {
    s.chat_template_kwargs
        .get("enable_thinking")
        .is_none_or(truthy)
}

/// vLLM's nemotron_v3 (and granite_thinking_parser) `_should_force_content` under thinking
/// on: the request's `force_nonempty_content` is `True` itself (`is True`: not just truthy).
pub(super) fn force_nonempty_content(s: &ParserSettings) -> bool {
    s.get("force_nonempty_content") == Some(&serde_json::Value::Bool(true))
}

/// vLLM's GLM-4.7 engine's switch (glm47, glm45, ling3, kimi_k2): on unless `thinking` or
/// `enable_thinking` is set; then on if either is truthy.
pub(super) fn glm_thinking(s: &ParserSettings) -> bool {
    match (s.get("thinking"), s.get("enable_thinking")) {
        (None, None) => true,
        (t, e) => t.is_some_and(truthy) || e.is_some_and(truthy),
    }
}

/// vLLM's DeepSeek-V4 engine's switch (deepseek_v4, deepseek_v41): on unless `thinking` or
/// `enable_thinking` is a key (then on if either is truthy), and off with
/// `reasoning_effort: "none"` either way.
pub(super) fn deepseek_v4_thinking(s: &ParserSettings) -> bool {
    let k = &s.chat_template_kwargs;
    let asked = if k.contains_key("thinking") || k.contains_key("enable_thinking") {
        s.truthy("thinking") || s.truthy("enable_thinking")
    } else {
        true
    };
    asked && s.str("reasoning_effort") != Some("none")
}

/// The DeepSeek-V4 engine with thinking off: output starts in content, and a start tag
/// anywhere opens reasoning (its grammar's content-to-reasoning transition).
pub(super) fn deepseek_v4_tags(implicit_end: &str, s: &ParserSettings) -> TagReasoningParser {
    if deepseek_v4_thinking(s) {
        return engine_tags("<think>", "</think>", implicit_end, &[], true);
    }
    TagReasoningParser::new(TagSpec {
        start: "<think>".into(),
        end: "</think>".into(),
        implicit_end: Some(implicit_end.into()),
        trim_reasoning_end: true,
        opens_anywhere: true,
        ..TagSpec::default()
    })
}

/// GLM-4.7's engine (glm47, glm45, ling3), the identity with thinking off.
pub(super) fn glm_tags(s: &ParserSettings) -> TagReasoningParser {
    if !glm_thinking(s) {
        return identity();
    }
    engine_tags("<think>", "</think>", "<tool_call>", &GLM_TURNS, true)
}

/// vLLM's glm47 and glm45 (`Glm47MoeParser.__init__`, 0.32 and 0.33): for GLM-5.3's
/// template, which has no thinking switch (an always-on `Reasoning Effort:` header, so its
/// prompt always opens `<think>`), a request's `thinking` or `enable_thinking` of `false`
/// (Python's `is False`: the literal only) is ignored and reasoning stays on, where
/// turning it off would leak the reasoning into the content; else [`glm_tags`].
pub(super) fn glm47_tags(s: &ParserSettings) -> TagReasoningParser {
    let off = |k: &str| s.chat_template_kwargs.get(k) == Some(&serde_json::Value::Bool(false));
    let always_thinks = s.chat_template.as_deref().is_some_and(glm53_always_thinks);
    if always_thinks && (off("thinking") || off("enable_thinking")) {
        return glm_tags(&ParserSettings::default());
    }
    glm_tags(s)
}

/// vLLM's `_glm53_always_thinks`: GLM-4.x's prompt and tool-call markers and the
/// `Reasoning Effort:` header, without an `enable_thinking` switch.
fn glm53_always_thinks(template: &str) -> bool {
    [
        "[gMASK]<sop>",
        "Reasoning Effort:",
        "<tool_call>",
        "<arg_key>",
        "<arg_value>",
    ]
    .iter()
    .all(|m| template.contains(m))
        && !template.contains("enable_thinking")
}

/// vLLM's `CHATML_TURN_BOUNDARIES`, where its scan of the prompt stops.
pub(super) const CHATML: [&str; 2] = ["<|im_start|>", "<|im_end|>"];
/// GLM's turn tokens.
pub(super) const GLM_TURNS: [&str; 4] =
    ["<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"];

/// vLLM's qwen3 parser (`vllm/parser/qwen3.py`), which mimo runs unchanged: with thinking
/// on, output starts in reasoning and `<tool_call>` also ends it; thinking off
/// (`enable_thinking` set and falsy), the identity.
pub(super) fn qwen3_engine(s: &ParserSettings) -> Option<TagReasoningParser> {
    if !enable_thinking(s) {
        return Some(identity());
    }
    Some(engine_tags(
        "<think>",
        "</think>",
        "<tool_call>",
        &CHATML,
        false,
    ))
}
