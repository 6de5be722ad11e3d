//! What a reasoning format is: its tags and rules ([`TagSpec`], [`TagVariant`]), and what a
//! rendered prompt says about it ([`TagSpec::prompt_ends_reasoning`]). The machine that reads
//! output by it is the parent module's [`TagReasoningParser`](super::TagReasoningParser).

use serde::{Deserialize, Serialize};

/// The tags of one reasoning format. `Default`: empty tags and every rule off, so a family
/// names only what it sets (`..TagSpec::default()`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagSpec {
    pub start: String,
    pub end: String,
    /// The output starts inside reasoning (the template wrote the start tag).
    pub starts_in_reasoning: bool,
    /// A marker that ends reasoning without being consumed (it starts the content).
    #[serde(default)]
    pub implicit_end: Option<String>,
    /// Tokens that start or end a turn (Qwen3's `<|im_start|>`, `<|im_end|>`): for
    /// [`TagSpec::prompt_ends_reasoning`], the scan back through the prompt stops at them, as
    /// vLLM's parser-engine parsers do. Empty: vLLM's basic rule.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turn_boundaries: Vec<String>,
    /// vLLM's parser-engine `wait_for_reasoning`, where it is not `starts_in_reasoning`: a
    /// prompt whose scan stops at a turn boundary reads as still before reasoning (Gemma 4
    /// with `enable_thinking`: the output starts in content, and the model opens its channel
    /// itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for_reasoning: Option<bool>,
    /// Whitespace at the end of the reasoning is dropped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trim_reasoning_end: bool,
    /// Only the leading start tag and the first end tag are read; any other tag is text
    /// (a start tag inside reasoning stays reasoning, an end tag after it stays content), as
    /// vLLM's k2_horizon reads them. Otherwise, with `starts_in_reasoning`, both are dropped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub literal_tags: bool,
    /// A marker dropped from the content wherever it appears (Hunyuan-A13B's `\n</answer>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_drop: Option<String>,
    /// With `starts_in_reasoning`, a start tag at the very beginning stays reasoning text
    /// instead of being dropped (vLLM's step3).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_leading_start: bool,
    /// More markers that end reasoning as `implicit_end` does (Cohere Command 4's response
    /// and action channels).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_implicit_ends: Vec<String>,
    /// A family's own rules.
    #[serde(default, skip_serializing_if = "TagVariant::is_plain")]
    pub variant: TagVariant,
    /// Markers dropped wherever they are, before the tags are looked for (MiniCPM-V's
    /// `<|im_end|>` and reserved tokens).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
    /// The output starts in content, and a start tag anywhere in it opens reasoning (an
    /// end tag in content is dropped, a start tag inside reasoning too): vLLM's parser
    /// engines whose grammar has a content-to-reasoning transition, run with thinking off
    /// (deepseek_v4, minicpmv).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub opens_anywhere: bool,
    /// Reasoning is split off and then dropped, not sent (vLLM's minicpmv with thinking
    /// off: a stray `<think>…</think>` is neither content nor reasoning).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reasoning_dropped: bool,
    /// At `finish()`, when no content was sent, the reasoning is sent again as the content
    /// (vLLM's nemotron_v3 and granite_thinking_parser under `force_nonempty_content`, whose
    /// stream promotes the reasoning it sent to content at the end).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repeat_reasoning_if_no_content: bool,
}

/// Rules of one family beyond the tag pair.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TagVariant {
    /// The rules above.
    #[default]
    Plain,
    /// Gemma 4's channel, as vLLM's gemma4 parser engine (`vllm/parser/gemma4.py`) reads
    /// `<|channel>thought\n…<channel|>`: the start tag opens reasoning anywhere in the
    /// content (content before and after is joined), a start tag inside reasoning and an end
    /// tag in content are dropped, a leading `thought\n` of the reasoning is dropped (and a
    /// reasoning of just `thought`), and output that begins with `thought\n` is reasoning
    /// without a start tag (vLLM injects the tag).
    Gemma4,
    /// MiniMax-M3's `<mm:think>…</mm:think>`, as vLLM's `MiniMaxM3ReasoningParser` reads it
    /// (without `thinking_mode: "enabled"`): an end tag at the very start is dropped, the
    /// first start tag anywhere opens reasoning (content before and after is joined), and
    /// after that one block every tag is text.
    MinimaxM3,
    /// Muse Spark's channel messages ([`crate::muse`]): the bodies of reasoning messages
    /// (`self`, bare `<|message|>`) are reasoning, those to the user or `commentary` content;
    /// a message to a tool that holds ATEM markup is passed on as content whole (header,
    /// body, end marker), for the tool parser, other messages are dropped; text outside
    /// messages is content.
    Muse,
    /// Muse Glimmer's: as `Muse`, with only `self` reasoning, a bare `<|message|>` content,
    /// and `commentary` and `developer` messages passed on as tool messages.
    MuseGlimmer,
    /// Inkling's typed blocks ([`crate::inkling`]): thinking blocks are reasoning, text
    /// blocks content, call blocks passed on with their markers for the tool parser.
    Inkling,
    /// Granite 4.2 thinking, as vLLM's `granite_thinking_parser` (`vllm/parser/
    /// granite_thinking.py`) reads it: the rules above, and the content's leading newlines
    /// are dropped (its template writes `\n</think>\n`).
    GraniteThinking,
    /// Granite thinking with thinking off: [`TagVariant::Identity`], the content's leading
    /// newlines still dropped (vLLM's one-shot strips them after its qwen3 identity).
    GraniteThinkingOff,
    /// MiniMax-M2's `minimax_m2_append_think`, as vLLM's `MiniMaxM2AppendThinkReasoningParser`
    /// writes it: nothing is reasoning; the content is the output with the start tag (which
    /// the template wrote) in front of it, so a client gets `<think>…</think>answer` back
    /// whole.
    AppendThink,
    /// Granite 3.2/3.3, as vLLM's `GraniteReasoningParser` reads its phrases: the start and
    /// end tags each have a second spelling with `Here's` for `Here is` (`Here's my thought
    /// process:`, `Here's my response:`); either spelling of either phrase counts.
    Granite,
    /// vLLM's `IdentityReasoningParser`, which deepseek_v3 and hy_v3 run unless the request
    /// turns thinking on: nothing is reasoning, the output is all content, and a prompt
    /// always reads as having ended reasoning. The tags are empty.
    Identity,
    /// PLaMo 3, as vLLM's plamo3 parser engine reads its markers: the rules above, and a
    /// start marker in the content opens reasoning again; a marker cut off at the end of
    /// the reasoning is dropped (not one in the content).
    Plamo3,
}

impl TagVariant {
    pub(super) fn is_plain(&self) -> bool {
        *self == TagVariant::Plain
    }

    /// All content, no tags read.
    pub(super) fn is_identity(&self) -> bool {
        matches!(self, TagVariant::Identity | TagVariant::GraniteThinkingOff)
    }

    /// The content's leading newlines are dropped.
    pub(super) fn drops_leading_newlines(&self) -> bool {
        matches!(
            self,
            TagVariant::GraniteThinking | TagVariant::GraniteThinkingOff
        )
    }
}

impl TagSpec {
    /// vLLM's `is_reasoning_end` on a rendered prompt: whether generation starts after
    /// reasoning. `id` gives a tag's token ID (tags that are not one token never match).
    ///
    /// * Basic rule (`reasoning/basic_parsers.py`, no turn boundaries): the last start or end
    ///   tag in the prompt decides; neither is `false` (`true` with `opens_anywhere`: a
    ///   parser engine run with thinking off does not wait for reasoning).
    /// * Parser-engine rule (`parser/engine/parser_engine.py`, with turn boundaries or a
    ///   `wait_for_reasoning` set): back from the end, an end tag (or the implicit end
    ///   marker) is `true`, a start tag `false`; a turn boundary stops the scan, and then
    ///   reasoning has ended unless the parser waits for it (`wait_for_reasoning`, by default
    ///   `starts_in_reasoning`).
    ///
    /// The request's thinking switch is already in the spec: each family's entry builds it
    /// from the request's settings, as vLLM's constructor reads them.
    pub fn prompt_ends_reasoning(&self, prompt: &[u32], id: impl Fn(&str) -> Option<u32>) -> bool {
        if self.variant.is_identity() {
            return true;
        }
        let start = id(&self.start);
        let end = id(&self.end);
        if self.turn_boundaries.is_empty() && self.wait_for_reasoning.is_none() {
            for &t in prompt.iter().rev() {
                if Some(t) == start {
                    return false;
                }
                if Some(t) == end {
                    return true;
                }
            }
            return self.opens_anywhere;
        }
        let implicit = self.implicit_end.as_deref().and_then(&id);
        let bounds: Vec<u32> = self.turn_boundaries.iter().filter_map(|b| id(b)).collect();
        for &t in prompt.iter().rev() {
            if Some(t) == end || (implicit.is_some() && Some(t) == implicit) {
                return true;
            }
            if Some(t) == start {
                return false;
            }
            if bounds.contains(&t) {
                break;
            }
        }
        !self.wait_for_reasoning.unwrap_or(self.starts_in_reasoning)
    }
}
