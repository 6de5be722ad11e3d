//! Reasoning split by a start/end tag pair: `<think>…</think>` (DeepSeek-R1, Qwen3),
//! `[THINK]…[/THINK]` (Mistral), or any configured pair.
//!
//! * Text before the start tag is content; the first start tag opens reasoning (only
//!   leading whitespace may precede it, as vLLM's parsers require: elsewhere the tag is
//!   plain content).
//! * `starts_in_reasoning`: the template already wrote the start tag (DeepSeek-R1's
//!   templates, Qwen3 with thinking on), so output begins inside reasoning and a start tag
//!   that does appear is dropped.
//! * Reasoning never closed stays reasoning at `finish()` (vLLM's behaviour for a
//!   truncated answer); the end tag is dropped and what follows is content.
//! * `trim_reasoning_end`: whitespace at the end of the reasoning is dropped (held while
//!   streaming until more reasoning follows), as vLLM's step3p5 engine strips it.
//! * `implicit_end`: a marker that also ends reasoning and is kept as content (vLLM 0.33's
//!   Qwen3 parser treats `<tool_call>` so: a call made without closing `</think>` is still
//!   a call).

use crate::{partial_suffix, Split};
use serde::{Deserialize, Serialize};

/// A reasoning parser: fed generated text, appends deltas to a [`Split`].
pub trait ReasoningParser: Send {
    fn push(&mut self, text: &str, out: &mut Split);
    fn finish(&mut self, out: &mut Split);
}

/// The tags of one reasoning format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
}

impl TagSpec {
    /// vLLM's `is_reasoning_end` on a rendered prompt: whether generation starts after
    /// reasoning. `id` gives a tag's token ID (tags that are not one token never match).
    ///
    /// * Basic rule (`reasoning/basic_parsers.py`, no turn boundaries): the last start or end
    ///   tag in the prompt decides; neither is `false`.
    /// * Parser-engine rule (`parser/engine/parser_engine.py`, with turn boundaries): back
    ///   from the end, an end tag (or the implicit end marker) is `true`, a start tag
    ///   `false`; a turn boundary stops the scan, and then reasoning has ended unless the
    ///   output starts in it (`thinking` on and `starts_in_reasoning`).
    pub fn prompt_ends_reasoning(
        &self,
        prompt: &[u32],
        thinking: bool,
        id: impl Fn(&str) -> Option<u32>,
    ) -> bool {
        let start = id(&self.start);
        let end = id(&self.end);
        if self.turn_boundaries.is_empty() {
            for &t in prompt.iter().rev() {
                if Some(t) == start {
                    return false;
                }
                if Some(t) == end {
                    return true;
                }
            }
            return false;
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
        !(thinking && self.starts_in_reasoning)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    /// Before any reasoning: leading whitespace may still precede a start tag.
    Start,
    Reasoning,
    Content,
}

/// The tag-pair state machine.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TagReasoningParser {
    spec: TagSpec,
    mode: Mode,
    /// Text not yet emitted: a possible partial tag, or leading whitespace in `Start`.
    held: String,
    /// With `starts_in_reasoning`: a start tag at the very beginning (after whitespace) is
    /// a repeat of the template's and is dropped; only until anything else is seen.
    may_drop_start: bool,
}

impl TagReasoningParser {
    /// The tags this parser splits by.
    pub fn spec(&self) -> &TagSpec {
        &self.spec
    }

    pub fn new(spec: TagSpec) -> Self {
        let mode = if spec.starts_in_reasoning {
            Mode::Reasoning
        } else {
            Mode::Start
        };
        let may_drop_start = spec.starts_in_reasoning && !spec.keep_leading_start;
        TagReasoningParser {
            spec,
            mode,
            held: String::new(),
            may_drop_start,
        }
    }

    /// The markers that end reasoning and start the content: `implicit_end` and
    /// `more_implicit_ends`.
    fn implicit_ends(&self) -> impl Iterator<Item = &str> {
        let more = self.spec.more_implicit_ends.iter().map(String::as_str);
        self.spec.implicit_end.as_deref().into_iter().chain(more)
    }

    /// The markers dropped from content: the end tag after reasoning has ended (formats
    /// that start in reasoning, unless `literal_tags`), and `content_drop`.
    fn drops_in_content(&self) -> impl Iterator<Item = &str> {
        let end = (self.spec.starts_in_reasoning && !self.spec.literal_tags)
            .then_some(self.spec.end.as_str());
        end.into_iter().chain(self.spec.content_drop.as_deref())
    }

    /// The last reasoning text before reasoning ends.
    fn reasoning_end<'a>(&self, text: &'a str) -> &'a str {
        if self.spec.trim_reasoning_end {
            text.trim_end()
        } else {
            text
        }
    }

    fn step(&mut self, out: &mut Split) {
        loop {
            match self.mode {
                Mode::Start => {
                    let trimmed = self.held.trim_start();
                    if let Some(rest) = trimmed.strip_prefix(self.spec.start.as_str()) {
                        self.held = rest.to_string();
                        self.mode = Mode::Reasoning;
                        continue;
                    }
                    if !trimmed.is_empty() && !self.spec.start.starts_with(trimmed) {
                        // Not a start tag: everything so far is content.
                        self.mode = Mode::Content;
                        continue;
                    }
                    return;
                }
                Mode::Reasoning => {
                    if self.may_drop_start {
                        let trimmed = self.held.trim_start();
                        if let Some(rest) = trimmed.strip_prefix(self.spec.start.as_str()) {
                            self.held = rest.to_string();
                            self.may_drop_start = false;
                        } else if trimmed.is_empty() || self.spec.start.starts_with(trimmed) {
                            return; // still undecided: hold it all
                        } else {
                            self.may_drop_start = false;
                        }
                    }
                    let end = self.held.find(self.spec.end.as_str());
                    let implicit = self.implicit_ends().filter_map(|m| self.held.find(m)).min();
                    // For formats that start in reasoning (qwen3, deepseek_r1), a start tag
                    // inside reasoning is dropped, as vLLM 0.33 drops it (the qwen3 engine's
                    // REASONING + THINK_START; deepseek_r1's stream).
                    let drops_tags = self.spec.starts_in_reasoning && !self.spec.literal_tags;
                    let start_at = drops_tags
                        .then(|| self.held.find(self.spec.start.as_str()))
                        .flatten();
                    if let Some(s) = start_at {
                        if end.is_none_or(|e| s < e) && implicit.is_none_or(|i| s < i) {
                            out.reasoning.push_str(&self.held[..s]);
                            self.held.drain(..s + self.spec.start.len());
                            continue;
                        }
                    }
                    match (end, implicit) {
                        (Some(e), i) if i.is_none_or(|i| e <= i) => {
                            out.reasoning.push_str(self.reasoning_end(&self.held[..e]));
                            self.held = self.held[e + self.spec.end.len()..].to_string();
                            self.mode = Mode::Content;
                            continue;
                        }
                        (_, Some(i)) => {
                            out.reasoning.push_str(self.reasoning_end(&self.held[..i]));
                            self.held.drain(..i);
                            self.mode = Mode::Content;
                            continue;
                        }
                        _ => {}
                    }
                    let start_keep = if drops_tags {
                        partial_suffix(&self.held, &self.spec.start)
                    } else {
                        0
                    };
                    let keep = partial_suffix(&self.held, &self.spec.end)
                        .max(start_keep)
                        .max(
                            self.implicit_ends()
                                .map(|m| partial_suffix(&self.held, m))
                                .max()
                                .unwrap_or(0),
                        );
                    let mut emit = self.held.len() - keep;
                    if self.spec.trim_reasoning_end {
                        // Trailing whitespace waits: it is dropped if reasoning ends next.
                        emit = self.held[..emit].trim_end().len();
                    }
                    out.reasoning.push_str(&self.held[..emit]);
                    self.held.drain(..emit);
                    return;
                }
                Mode::Content if self.drops_in_content().next().is_some() => {
                    // An end tag after reasoning has ended is dropped, as vLLM 0.33's qwen3
                    // engine drops it ("absorb duplicate </think>") and its deepseek_r1
                    // stream; so is the spec's `content_drop` marker.
                    loop {
                        let first = self
                            .drops_in_content()
                            .filter_map(|m| self.held.find(m).map(|at| (at, m.len())))
                            .min();
                        let Some((at, len)) = first else {
                            break;
                        };
                        out.content.push_str(&self.held[..at]);
                        self.held.drain(..at + len);
                    }
                    let keep = self
                        .drops_in_content()
                        .map(|m| partial_suffix(&self.held, m))
                        .max()
                        .unwrap_or(0);
                    let emit = self.held.len() - keep;
                    out.content.push_str(&self.held[..emit]);
                    self.held.drain(..emit);
                    return;
                }
                Mode::Content => {
                    out.content.push_str(&self.held);
                    self.held.clear();
                    return;
                }
            }
        }
    }
}

impl ReasoningParser for TagReasoningParser {
    fn push(&mut self, text: &str, out: &mut Split) {
        self.held.push_str(text);
        self.step(out);
    }

    fn finish(&mut self, out: &mut Split) {
        match self.mode {
            Mode::Start | Mode::Content => out.content.push_str(&self.held),
            // Unclosed reasoning stays reasoning; a partial end tag is just text.
            Mode::Reasoning => out.reasoning.push_str(self.reasoning_end(&self.held)),
        }
        self.held.clear();
    }
}
