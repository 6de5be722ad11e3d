//! One choice's derender pipeline, shared by streaming and one-shot derender:
//! token IDs → incremental detokenizer → stop strings → reasoning parser → tool parser (or,
//! for a Harmony model, the Harmony parser, which reads both).
//!
//! Everything a choice needs between chunks is in [`ChoiceState`], which is small and
//! serializable: the detokenizer window, the held text of the stop-string matcher and of the
//! parsers, and counters. One-shot derender is one [`ChoiceState::advance`] with every ID and
//! `last = true`, so streaming and non-streaming cannot disagree.

use super::{DetokState, IncrementalDetokenizer, StopStrings};
use crate::error::RequestError;
use crate::model::Model;
use llm_render_parsers::{
    AnyToolParser, HarmonyParser, Parsed, ReasoningParser, ResponseTemplateParser, Split,
    TagReasoningParser, ToolCallDelta, ToolParser, ToolSchemas,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Per-request settings fixed at the first chunk (they travel in the stream state).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Options {
    pub skip_special_tokens: bool,
    /// `stop_token_ids`, plus the model's EOS ids unless `ignore_eos`.
    pub stop_token_ids: Vec<u32>,
    /// The tokenizer's EOS unless `ignore_eos`: ending on it reports `stop_reason: null`.
    #[serde(default)]
    pub primary_eos: Option<u32>,
    /// `include_stop_str_in_output`: a final stop token is decoded with the rest.
    #[serde(default)]
    pub keep_stop_token: bool,
    /// The request's `include_reasoning: false`: reasoning is parsed out of the content but
    /// not returned, nor the logprobs that would spell it (vLLM's `hide_metadata`).
    #[serde(default)]
    pub hide_reasoning: bool,
    /// The request names one tool (`tool_choice: {"type": "function", …}`): a choice with
    /// calls still finishes `stop`, as OpenAI reports it (vLLM's `resolve_finish_reason`).
    #[serde(default)]
    pub named_tool: bool,
}

/// How the engine ended a choice (on its last chunk).
#[derive(Debug, Clone, Copy)]
pub struct EngineEnd<'a> {
    /// `finish_reason` (`stop` when a whole response leaves it out).
    pub finish: &'a str,
    /// The engine's `stop_reason`, as it reported it.
    pub stop_reason: Option<&'a serde_json::Value>,
}

impl Options {
    /// vLLM 0.33's `_drop_stop_token`: the output's final ID is the token that stopped it
    /// only when the engine finished with `stop`, and then only if it is the reported
    /// `stop_reason` (when that is an ID) or, with none reported, the primary EOS
    /// (`stop_reason` null), a request stop token or another EOS id (`stop_reason` its ID).
    /// A stop token anywhere else, or at the end of a `length` output, is text as any other
    /// ID. Returns the `stop_reason` to report when `last` is that token.
    fn final_stop(&self, last: u32, end: EngineEnd<'_>) -> Option<Option<serde_json::Value>> {
        if end.finish != "stop" {
            return None;
        }
        match end.stop_reason {
            None | Some(serde_json::Value::Null) => {
                if self.primary_eos == Some(last) {
                    Some(None)
                } else {
                    self.stop_token_ids
                        .contains(&last)
                        .then(|| Some(last.into()))
                }
            }
            Some(r) => (r.as_u64() == Some(u64::from(last))).then(|| Some(r.clone())),
        }
    }
}

/// What one step produced for a choice.
#[derive(Debug, Default)]
pub struct Delta {
    pub content: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCallDelta>,
    /// Set on the step that ends the choice.
    pub finish_reason: Option<String>,
    /// vLLM's `stop_reason` on that step: the stop string that ended the output, or a stop
    /// token ID of the request's own (`null` for the model's EOS tokens and other ends).
    pub stop_reason: Option<serde_json::Value>,
}

/// vLLM's bound on `prev_tokens` (its field validator), and so on a detokenizer window.
pub(super) const MAX_PREV_TOKENS: usize = 1024;
/// vLLM's bound on `logprob_context_token_ids`.
pub(super) const MAX_LOGPROB_CONTEXT: usize = 4;

/// The most tool calls one choice makes: far beyond any real output, and a bound on the
/// call-id list a stream state carries.
const MAX_TOOL_CALLS: usize = 1 << 14;

/// One choice between chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChoiceState {
    pub index: u32,
    detok: DetokState,
    stops: StopStrings,
    #[serde(default)]
    reasoning: Option<TagReasoningParser>,
    #[serde(default)]
    tools: Option<AnyToolParser>,
    /// For a Harmony model (gpt-oss), in place of both: vLLM runs its reasoning and tool
    /// parser as one there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    harmony: Option<HarmonyParser>,
    /// Under `--reasoning-parser hf` / `--tool-call-parser hf`, in place of both: vLLM's
    /// `ResponseTemplateParser` reads reasoning, content and calls by the model's
    /// `response_template` with one machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    template: Option<ResponseTemplateParser>,
    /// Tool calls started so far.
    pub tool_calls: usize,
    /// Completion tokens the engine sent for this choice (usage).
    pub tokens: usize,
    /// Whether the role delta was sent.
    pub role_sent: bool,
    pub done: bool,
    /// The last sampled IDs of the logprobs so far (a split character's context, see
    /// `derender::logprobs`), and the text offset the next completion logprob starts at.
    #[serde(default)]
    pub logprob_context: Vec<u32>,
    #[serde(default)]
    pub logprob_offset: usize,
    /// `--derender-replay-state`: every chunk this choice read, for vLLM's replay fields
    /// (`output_token_ids`, `output_chunk_lens`); only kept where parsers or stop strings
    /// hold text, since that is all the replay is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Replay>,
}

/// The chunks a choice has read, as vLLM's replay fields carry them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Replay {
    pub ids: Vec<u32>,
    pub lens: Vec<usize>,
}

impl ChoiceState {
    pub fn new(
        index: u32,
        stops: StopStrings,
        reasoning: Option<TagReasoningParser>,
        tools: Option<AnyToolParser>,
    ) -> Self {
        ChoiceState {
            index,
            detok: DetokState::default(),
            stops,
            reasoning,
            tools,
            harmony: None,
            template: None,
            tool_calls: 0,
            tokens: 0,
            role_sent: false,
            done: false,
            logprob_context: Vec::new(),
            logprob_offset: 0,
            replay: None,
        }
    }

    /// A choice of a Harmony model, read by the Harmony parser (made without the other two).
    pub fn with_harmony(mut self, parser: HarmonyParser) -> Self {
        self.harmony = Some(parser);
        self
    }

    /// A choice read by the `hf` parser (made without the other two).
    pub fn with_template(mut self, parser: ResponseTemplateParser) -> Self {
        self.template = Some(parser);
        self
    }

    /// What a state resumed from a client must hold to (checked by `StreamState::check`
    /// after its signature): the detokenizer has read no more than its window, which is no
    /// longer than vLLM lets `prev_tokens` be, and the counters stay within what one output
    /// reaches. A signed state only fails this if it was made by a holder of the key; the
    /// fuzz target `state` found each of these turned into a panic or an allocation of
    /// terabytes.
    pub(super) fn check(&self) -> Result<(), &'static str> {
        if self.detok.window.len() > MAX_PREV_TOKENS || self.detok.read > self.detok.window.len() {
            return Err("detokenizer window out of bounds");
        }
        if self.tool_calls > MAX_TOOL_CALLS {
            return Err("too many tool calls");
        }
        if self.logprob_context.len() > MAX_LOGPROB_CONTEXT {
            return Err("logprob context too long");
        }
        Ok(())
    }

    /// Under the `hf` parser (and `beam`'s), vLLM 0.33's `count_reasoning_tokens`: reads the
    /// next generated tokens (`texts`, each decoded alone with its special tokens) and gives
    /// the output's reasoning token count so far; `None` for a choice the `hf` parser does not
    /// read (its count is by the reasoning tags, `reasoning_spec`).
    pub fn count_template_reasoning(&mut self, texts: &[String]) -> Option<usize> {
        self.template
            .as_mut()
            .map(|t| t.count_reasoning_tokens(texts))
    }

    /// The reasoning tags this choice splits by, if it parses reasoning.
    pub fn reasoning_spec(&self) -> Option<&llm_render_parsers::TagSpec> {
        self.reasoning.as_ref().map(TagReasoningParser::spec)
    }

    /// Whether this choice holds state beyond the detokenizer window between chunks (a
    /// parser's mode and unfinished text, or text held for a stop string): what vLLM's
    /// window fields cannot carry.
    pub fn holds_text(&self) -> bool {
        self.reasoning.is_some()
            || self.tools.is_some()
            || self.harmony.is_some()
            || self.template.is_some()
            || self.stops.is_active()
    }

    /// The detokenizer window.
    pub fn detok(&self) -> &DetokState {
        &self.detok
    }

    /// Resumes the detokenizer from a carried window.
    pub fn resume_detok(&mut self, detok: DetokState) {
        self.detok = detok;
    }

    /// Gives a choice restored from a stream state its request's tool schemas, built by
    /// `schemas` only when its parser types values by them.
    pub fn set_schemas(&mut self, schemas: impl FnOnce() -> Arc<ToolSchemas>) {
        if let Some(t) = self.tools.as_mut().filter(|t| t.uses_schemas()) {
            t.set_schemas(schemas());
        } else if let Some(t) = self.template.as_mut() {
            // The `hf` parser coerces a call's arguments by the request's tool schemas.
            t.set_schemas(schemas());
        }
    }

    /// Feeds the next IDs; `end` is how the engine ended the choice when this is its last
    /// chunk. The token that stopped the output is left out (`Options::final_stop`); a
    /// stop string ends the choice early, and IDs after it are not read.
    pub fn advance(
        &mut self,
        model: &Model,
        opts: &Options,
        ids: &[u32],
        end: Option<EngineEnd<'_>>,
    ) -> Result<Delta, RequestError> {
        let mut delta = Delta::default();
        let whole = self.tokens == 0;
        // Usage counts every ID the engine sent, as vLLM's derender does.
        self.tokens = self.tokens.saturating_add(ids.len());
        if self.done {
            return Ok(delta);
        }
        let mut detok = IncrementalDetokenizer::resume(
            model,
            opts.skip_special_tokens,
            std::mem::take(&mut self.detok),
        );
        if let Some(end) = end.filter(|_| whole) {
            // The whole output in one step (one-shot, or a one-chunk stream): the stop
            // strings are the ones the engine's end allows.
            match (end.finish, end.stop_reason) {
                ("stop", None | Some(serde_json::Value::Null)) => {}
                ("stop", Some(serde_json::Value::String(s))) => {
                    self.stops.replace_stops(vec![s.clone()])
                }
                _ => self.stops.replace_stops(Vec::new()),
            }
        }
        let mut text = String::new();
        let stopped_by_id = match (ids.last(), end) {
            (Some(&last), Some(end)) => opts.final_stop(last, end),
            _ => None,
        };
        for (i, id) in ids.iter().enumerate() {
            if i + 1 == ids.len() && stopped_by_id.is_some() && !opts.keep_stop_token {
                break;
            }
            let piece = detok.push(*id).map_err(RequestError::Tokenizer)?;
            text.push_str(&self.stops.push(&piece));
            if self.stops.stopped() {
                break;
            }
        }
        let ending = self.stops.stopped() || end.is_some();
        if ending && !self.stops.stopped() {
            let rest = detok.finish().map_err(RequestError::Tokenizer)?;
            text.push_str(&self.stops.push(&rest));
            if !self.stops.stopped() {
                text.push_str(&self.stops.finish());
            }
        }
        self.detok = detok.state().clone();

        let (reasoning, parsed) = self.parse(text, ending);
        if !opts.hide_reasoning {
            delta.reasoning = reasoning;
        }
        // Calls are numbered in order: a delta names a call already started or the next
        // one. A parser resumed from a forged state could number one anywhere, and the
        // call-id list (`stream::wire`) is as long as the highest number.
        for d in &parsed.calls {
            if d.index > self.tool_calls || d.index >= MAX_TOOL_CALLS {
                return Err(RequestError::invalid(
                    "stream_state",
                    "invalid stream_state: a tool call out of order",
                ));
            }
            self.tool_calls = self.tool_calls.max(d.index + 1);
        }
        delta.content = parsed.content;
        delta.tool_calls = parsed.calls;
        if ending {
            self.done = true;
            let reason = if self.stops.stopped() {
                "stop"
            } else {
                end.map_or("stop", |e| e.finish)
            };
            // A stop string overrides a stop token, as in vLLM; else the token's, else what
            // the engine reported.
            delta.stop_reason = match (self.stops.matched(), stopped_by_id) {
                (Some(s), _) => Some(s.into()),
                (None, Some(reason)) => reason,
                (None, None) => end
                    .and_then(|e| e.stop_reason)
                    .filter(|r| !r.is_null())
                    .cloned(),
            };
            // vLLM's `resolve_finish_reason`: `tool_calls` only when the output ended on its
            // own (a `length` cut stays visible) and no single tool was forced.
            delta.finish_reason = Some(
                if self.tool_calls > 0 && reason == "stop" && !opts.named_tool {
                    "tool_calls".into()
                } else {
                    reason.into()
                },
            );
        }
        Ok(delta)
    }

    /// The parsers over the next text: its reasoning, and its content and calls.
    fn parse(&mut self, text: String, ending: bool) -> (String, Parsed) {
        let mut parsed = Parsed::default();
        if let Some(h) = self.harmony.as_mut() {
            let mut reasoning = String::new();
            h.push(&text, &mut reasoning, &mut parsed);
            if ending {
                h.finish(&mut reasoning, &mut parsed);
            }
            return (reasoning, parsed);
        }
        if let Some(t) = self.template.as_mut() {
            let mut reasoning = String::new();
            t.push(&text, &mut reasoning, &mut parsed);
            if ending {
                t.finish(&mut reasoning, &mut parsed);
            }
            return (reasoning, parsed);
        }
        let mut split = Split::default();
        match self.reasoning.as_mut() {
            Some(r) => {
                r.push(&text, &mut split);
                if ending {
                    r.finish(&mut split);
                }
            }
            None => split.content = text,
        }
        match self.tools.as_mut() {
            Some(t) => {
                t.push(&split.content, &mut parsed);
                if ending {
                    t.finish(&mut parsed);
                }
            }
            None => parsed.content = split.content,
        }
        (split.reasoning, parsed)
    }
}
