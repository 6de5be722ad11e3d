//! Output parsers for llm-render: reasoning and tool-call state machines.
//!
//! Pure text state machines: no HTTP, no async runtime. Each parser is fed text as it is
//! generated (`push`) and told when the output ends (`finish`); one-shot parsing is
//! `push(all)` followed by `finish()`, so streaming and non-streaming cannot disagree
//! (a property test checks every chunking). Markers split across chunks are held back until
//! they resolve, and nothing is lost at the end of the stream.

mod grammar;
mod harmony;
mod inkling;
mod muse;
pub mod pyjson;
pub mod pystr;
mod reasoning;
mod registry;
mod response_template;
pub mod tool;

pub use grammar::{Arguments, CallGroup, CallTags, HarmonyTags, ToolGrammar};
pub use harmony::HarmonyParser;
pub use reasoning::{ReasoningParser, TagReasoningParser, TagSpec, TagVariant};
pub use registry::{
    harmony_counter, is_response_template, keeps_special_tokens, reasoning_counter,
    reasoning_parser, reasoning_parser_for_model, reasoning_parser_with, refused_settings,
    response_template_parser, tool_parser, tool_parser_for_model, tool_parser_with, AnyToolParser,
    CountRule, ParserSettings, ReasoningCounter, ReasoningEntry, ToolEntry, Vocab, BEAM,
    HARMONY_REASONING, HARMONY_TOOLS, REASONING_PARSERS, RESPONSE_TEMPLATE, TOOL_PARSERS,
};
pub use response_template::{
    check_response_template, check_response_template_for, response_template_refusal, BeamRefusal,
    BeamRequest, BeamTag, BeamTemplate, ResponseTemplate, ResponseTemplateParser,
};
pub use tool::{Parsed, ToolCall, ToolCallDelta, ToolParser, ToolSchemas};

/// Parsed output, as deltas appended by the parsers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    pub content: String,
    pub reasoning: String,
}

impl Split {
    pub fn is_empty(&self) -> bool {
        self.content.is_empty() && self.reasoning.is_empty()
    }
}

/// The longest suffix of `text` that is a proper prefix of `marker`: text that must be held
/// back because the next chunk may complete the marker. Works on char boundaries.
pub(crate) fn partial_suffix(text: &str, marker: &str) -> usize {
    let max = marker.len().saturating_sub(1).min(text.len());
    (1..=max)
        .rev()
        .find(|&n| {
            text.is_char_boundary(text.len() - n) && marker.starts_with(&text[text.len() - n..])
        })
        .unwrap_or(0)
}
