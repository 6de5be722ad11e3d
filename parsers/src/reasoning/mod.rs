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
//! * `variant`: a family's own rules ([`TagVariant`]).
//! * `dropped`: markers removed wherever they are, before anything else reads the text.

use crate::{partial_suffix, Split};
use serde::{Deserialize, Serialize};

mod spec;
pub use spec::{TagSpec, TagVariant};

/// A reasoning parser: fed generated text, appends deltas to a [`Split`].
pub trait ReasoningParser: Send {
    fn push(&mut self, text: &str, out: &mut Split);
    fn finish(&mut self, out: &mut Split);
}

/// What Gemma 4 writes at the start of its reasoning, dropped by vLLM.
const THOUGHT_PREFIX: &str = "thought\n";

/// Granite's second spelling of a phrase tag: `Here's` for a leading `Here is`.
fn granite_spellings(tag: &str) -> [String; 2] {
    let short = match tag.strip_prefix("Here is") {
        Some(rest) => format!("Here's{rest}"),
        None => tag.to_string(),
    };
    [tag.to_string(), short]
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
    /// Muse's and Inkling's own machines.
    #[serde(default)]
    muse: crate::muse::MuseSplit,
    #[serde(default)]
    inkling: crate::inkling::InklingSplit,
    /// Text not yet past the `dropped` markers: a possible partial marker.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    undropped: String,
    /// Gemma 4: the leading `thought\n` of the reasoning has been looked for; MiniMax-M3: the
    /// leading end tag; Granite thinking: the content's leading newlines.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    prefix_done: bool,
    /// With `repeat_reasoning_if_no_content`: the reasoning sent so far, to send again as
    /// the content at `finish()`. Held only while no content has been sent: dropped (`None`)
    /// as soon as any content is, so a stream's state stays small once its answer starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unanswered: Option<String>,
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
        let spec_repeat = spec.repeat_reasoning_if_no_content;
        TagReasoningParser {
            spec,
            mode,
            held: String::new(),
            may_drop_start,
            undropped: String::new(),
            muse: Default::default(),
            inkling: Default::default(),
            prefix_done: false,
            unanswered: spec_repeat.then(String::new),
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
        let end = ((self.spec.starts_in_reasoning && !self.spec.literal_tags)
            || self.spec.opens_anywhere)
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
                Mode::Start if self.spec.variant == TagVariant::Gemma4 => {
                    // Output that begins with `thought\n` is reasoning (vLLM injects the
                    // start tag in front of it).
                    if self.held.starts_with(THOUGHT_PREFIX) {
                        self.mode = Mode::Reasoning;
                    } else if THOUGHT_PREFIX.starts_with(self.held.as_str()) {
                        return;
                    } else {
                        self.mode = Mode::Content;
                    }
                }
                Mode::Start if self.spec.variant.is_identity() || self.spec.opens_anywhere => {
                    self.mode = Mode::Content;
                }
                Mode::Start if self.spec.variant == TagVariant::AppendThink => {
                    out.content.push_str(&self.spec.start);
                    self.mode = Mode::Content;
                }
                Mode::Start if self.spec.variant == TagVariant::Granite => {
                    if !self.granite_start() {
                        return;
                    }
                }
                Mode::Reasoning if self.spec.variant == TagVariant::Granite => {
                    if !self.granite_reasoning(out) {
                        return;
                    }
                }
                Mode::Start if self.spec.variant == TagVariant::MinimaxM3 => {
                    if !self.minimax_m3_start(out) {
                        return;
                    }
                }
                Mode::Content if self.spec.variant == TagVariant::Gemma4 => {
                    if !self.gemma4_content(out) {
                        return;
                    }
                }
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
                    if self.spec.variant == TagVariant::Gemma4
                        && !self.prefix_done
                        && !self.gemma4_prefix()
                    {
                        return;
                    }
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
                    let drops_tags = (self.spec.starts_in_reasoning
                        || self.spec.opens_anywhere
                        || self.spec.variant == TagVariant::Gemma4)
                        && !self.spec.literal_tags;
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
                    // PLaMo 3 (and `opens_anywhere`): a start tag in the content opens
                    // reasoning (again).
                    let reopen = (self.spec.variant == TagVariant::Plamo3
                        || self.spec.opens_anywhere)
                        .then_some(self.spec.start.as_str());
                    loop {
                        let first = self
                            .drops_in_content()
                            .chain(reopen)
                            .filter_map(|m| self.held.find(m).map(|at| (at, m)))
                            .min_by_key(|&(at, _)| at);
                        let Some((at, m)) = first else {
                            break;
                        };
                        let (len, opens) = (m.len(), Some(m) == reopen);
                        out.content.push_str(&self.held[..at]);
                        self.held.drain(..at + len);
                        if opens {
                            self.mode = Mode::Reasoning;
                            break;
                        }
                    }
                    if self.mode == Mode::Reasoning {
                        continue;
                    }
                    let keep = self
                        .drops_in_content()
                        .chain(reopen)
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

    /// Gemma 4, in reasoning, before its first text: drops a leading `thought\n`, or a
    /// reasoning that is just `thought`. `false` while undecided (the text so far may still
    /// become `thought\n`); a block that ends with no text decides nothing.
    fn gemma4_prefix(&mut self) -> bool {
        let markers = [
            Some(self.spec.end.as_str()),
            Some(self.spec.start.as_str()),
            self.spec.implicit_end.as_deref(),
        ];
        let at = markers
            .iter()
            .flatten()
            .filter_map(|m| self.held.find(m))
            .min();
        // With no marker yet, a marker's first part at the end is not text either.
        let keep = markers
            .iter()
            .flatten()
            .map(|m| partial_suffix(&self.held, m))
            .max()
            .unwrap_or(0);
        let text = &self.held[..at.unwrap_or(self.held.len() - keep)];
        if text.starts_with(THOUGHT_PREFIX) {
            self.held.drain(..THOUGHT_PREFIX.len());
        } else if at.is_some() && text == THOUGHT_PREFIX.trim_end() {
            self.held.drain(..text.len());
        } else if text.is_empty() || (at.is_none() && THOUGHT_PREFIX.starts_with(text)) {
            return at.is_some();
        }
        self.prefix_done = true;
        true
    }

    /// MiniMax-M3 before its reasoning block: drops an end tag at the very start, then sends
    /// content up to the first start tag. `false` when all that can be sent is sent.
    fn minimax_m3_start(&mut self, out: &mut Split) -> bool {
        let (start, end) = (self.spec.start.as_str(), self.spec.end.as_str());
        if !self.prefix_done {
            if let Some(rest) = self.held.strip_prefix(end) {
                self.held = rest.to_string();
            } else if end.starts_with(self.held.as_str()) {
                return false;
            }
            self.prefix_done = true;
        }
        if let Some(at) = self.held.find(start) {
            out.content.push_str(&self.held[..at]);
            self.held.drain(..at + start.len());
            self.mode = Mode::Reasoning;
            return true;
        }
        let emit = self.held.len() - partial_suffix(&self.held, start);
        out.content.push_str(&self.held[..emit]);
        self.held.drain(..emit);
        false
    }

    /// Granite before its reasoning: either spelling of the start phrase opens it, only at
    /// the very start of the output (as vLLM's stream reads it: not even whitespace before
    /// it); anything else makes the output content. `false` while undecided.
    fn granite_start(&mut self) -> bool {
        let starts = granite_spellings(&self.spec.start);
        let held = self.held.as_str();
        if let Some(rest) = starts.iter().find_map(|s| held.strip_prefix(s.as_str())) {
            self.held = rest.to_string();
            self.mode = Mode::Reasoning;
            return true;
        }
        if starts.iter().any(|s| s.starts_with(held)) {
            return false;
        }
        self.mode = Mode::Content;
        true
    }

    /// Granite in reasoning: the first end phrase, in either spelling, ends it. `false` when
    /// all that can be sent is sent.
    fn granite_reasoning(&mut self, out: &mut Split) -> bool {
        let ends = granite_spellings(&self.spec.end);
        let found = ends
            .iter()
            .filter_map(|e| self.held.find(e.as_str()).map(|at| (at, e.len())))
            .min();
        if let Some((at, len)) = found {
            out.reasoning.push_str(&self.held[..at]);
            self.held.drain(..at + len);
            self.mode = Mode::Content;
            return true;
        }
        let keep = ends
            .iter()
            .map(|e| partial_suffix(&self.held, e))
            .max()
            .unwrap_or(0);
        let emit = self.held.len() - keep;
        out.reasoning.push_str(&self.held[..emit]);
        self.held.drain(..emit);
        false
    }

    /// Gemma 4 content: a start tag opens reasoning, an end tag is dropped. `false` when
    /// all that can be sent is sent.
    fn gemma4_content(&mut self, out: &mut Split) -> bool {
        let (start, end) = (self.spec.start.as_str(), self.spec.end.as_str());
        let found = [start, end]
            .into_iter()
            .filter_map(|m| self.held.find(m).map(|at| (at, m)))
            .min_by_key(|&(at, _)| at);
        if let Some((at, m)) = found {
            out.content.push_str(&self.held[..at]);
            self.held.drain(..at + m.len());
            if m == start {
                self.mode = Mode::Reasoning;
            }
            return true;
        }
        let keep = partial_suffix(&self.held, start).max(partial_suffix(&self.held, end));
        let emit = self.held.len() - keep;
        out.content.push_str(&self.held[..emit]);
        self.held.drain(..emit);
        false
    }

    /// `text` without the `dropped` markers; a marker's first part at its end is held.
    fn drop_markers(&mut self, text: &str, at_end: bool) -> String {
        if self.spec.dropped.is_empty() {
            return text.to_string();
        }
        let mut rest = std::mem::take(&mut self.undropped);
        rest.push_str(text);
        let mut out = String::with_capacity(rest.len());
        loop {
            let found = self
                .spec
                .dropped
                .iter()
                .filter_map(|m| rest.find(m.as_str()).map(|at| (at, m.len())))
                .min_by_key(|&(at, len)| (at, usize::MAX - len));
            match found {
                Some((at, len)) => {
                    out.push_str(&rest[..at]);
                    rest.drain(..at + len);
                }
                None => break,
            }
        }
        let keep = if at_end {
            0
        } else {
            self.spec
                .dropped
                .iter()
                .map(|m| partial_suffix(&rest, m))
                .max()
                .unwrap_or(0)
        };
        out.push_str(&rest[..rest.len() - keep]);
        self.undropped = rest[rest.len() - keep..].to_string();
        out
    }
}

impl TagReasoningParser {
    /// The families read by a machine of their own: Muse's messages, Inkling's blocks.
    fn own_machine(&mut self, text: &str, at_end: bool, out: &mut Split) -> bool {
        match self.spec.variant {
            TagVariant::Muse => self.muse.push(text, at_end, false, out),
            TagVariant::MuseGlimmer => self.muse.push(text, at_end, true, out),
            TagVariant::Inkling => self.inkling.push(text, at_end, out),
            _ => return false,
        }
        true
    }
}

impl TagReasoningParser {
    /// `reasoning_dropped`: the reasoning sent from `from` on is taken back.
    fn drop_reasoning(&self, out: &mut Split, from: usize) {
        if self.spec.reasoning_dropped {
            out.reasoning.truncate(from);
        }
    }

    /// Granite thinking: drops the newlines at the start of the content, in the content sent
    /// from `from` on; once other content is sent, nothing more is dropped.
    fn drop_leading_newlines(&mut self, out: &mut Split, from: usize) {
        if !self.spec.variant.drops_leading_newlines() || self.prefix_done {
            return;
        }
        let Some(sent) = out.content.get(from..) else {
            return;
        };
        let kept = sent.trim_start_matches('\n');
        if !kept.is_empty() {
            self.prefix_done = true;
        }
        let dropped = sent.len() - kept.len();
        out.content.drain(from..from + dropped);
    }
}

impl TagReasoningParser {
    /// `repeat_reasoning_if_no_content`: notes what one step sent (reasoning from
    /// `reasoning_from` on, content from `content_from` on); any content ends the holding.
    fn note_unanswered(&mut self, out: &Split, reasoning_from: usize, content_from: usize) {
        if out.content.len() > content_from {
            self.unanswered = None;
        } else if let Some(kept) = &mut self.unanswered {
            kept.push_str(out.reasoning.get(reasoning_from..).unwrap_or_default());
        }
    }
}

impl ReasoningParser for TagReasoningParser {
    fn push(&mut self, text: &str, out: &mut Split) {
        let (reasoning_sent, content_sent) = (out.reasoning.len(), out.content.len());
        self.push_step(text, out);
        self.note_unanswered(out, reasoning_sent, content_sent);
    }

    fn finish(&mut self, out: &mut Split) {
        let (reasoning_sent, content_sent) = (out.reasoning.len(), out.content.len());
        self.finish_step(out);
        self.note_unanswered(out, reasoning_sent, content_sent);
        if let Some(kept) = self.unanswered.take() {
            out.content.push_str(&kept);
        }
    }
}

impl TagReasoningParser {
    fn push_step(&mut self, text: &str, out: &mut Split) {
        let sent = out.reasoning.len();
        if !self.own_machine(text, false, out) {
            let text = self.drop_markers(text, false);
            self.held.push_str(&text);
            let from = out.content.len();
            self.step(out);
            self.drop_leading_newlines(out, from);
        }
        self.drop_reasoning(out, sent);
    }

    fn finish_step(&mut self, out: &mut Split) {
        let sent = out.reasoning.len();
        if !self.own_machine("", true, out) {
            let from = out.content.len();
            self.finish_tags(out);
            self.drop_leading_newlines(out, from);
        }
        self.drop_reasoning(out, sent);
    }
}

impl TagReasoningParser {
    fn finish_tags(&mut self, out: &mut Split) {
        let rest = self.drop_markers("", true);
        if !rest.is_empty() {
            self.held.push_str(&rest);
            self.step(out);
        }
        if self.spec.variant == TagVariant::AppendThink && self.mode == Mode::Start {
            // No output at all: the start tag alone, as vLLM's one-shot.
            self.step(out);
        }
        if self.spec.variant == TagVariant::Gemma4
            && self.mode == Mode::Reasoning
            && !self.prefix_done
            && self.held == THOUGHT_PREFIX.trim_end()
        {
            self.held.clear();
        }
        if self.spec.variant == TagVariant::Plamo3 && self.mode == Mode::Reasoning {
            // A marker cut off at the end of the reasoning is dropped, as vLLM's plamo3
            // strips an unfinished marker.
            let held = self.held.as_str();
            let markers = [self.spec.start.as_str(), self.spec.end.as_str()];
            let cut_off = !held.is_empty()
                && markers
                    .into_iter()
                    .chain(self.implicit_ends())
                    .any(|m| m.len() > held.len() && m.starts_with(held));
            if cut_off {
                self.held.clear();
            }
        }
        match self.mode {
            Mode::Start | Mode::Content => out.content.push_str(&self.held),
            // Unclosed reasoning stays reasoning; a partial end tag is just text.
            Mode::Reasoning => out.reasoning.push_str(self.reasoning_end(&self.held)),
        }
        self.held.clear();
    }
}
