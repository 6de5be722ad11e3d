//! vLLM 0.33's reasoning-token count (`count_reasoning_tokens`, what its chat server reports
//! as `usage.completion_tokens_details.reasoning_tokens` and its Responses server as
//! `output_tokens_details.reasoning_tokens`), per reasoning parser: [`reasoning_counter`]
//! builds a [`ReasoningCounter`] for one output, fed the generated token IDs chunk by chunk
//! and giving the count of all IDs so far, as vLLM's count of `generated_token_ids` gives it.
//!
//! Each family's rule is the one its vLLM class (or the unified parser vLLM's chat serving
//! composes for it) runs, over the family's markers resolved in the model's vocabulary
//! ([`Vocab`]): a marker that is not one token there never matches an ID, as vLLM's
//! `vocab.get` finds none. `hf` and `beam` count by the template
//! (`ResponseTemplateParser::count_reasoning_tokens`), not here.

use super::{reasoning_parser_for_model, ParserSettings};
use crate::TagVariant;
use serde::{Deserialize, Serialize};

/// What a count reads of the model's tokenizer.
pub trait Vocab {
    /// The ID of one vocabulary token (vLLM's `vocab.get`).
    fn id(&self, token: &str) -> Option<u32>;
    /// The IDs a text encodes to, no special tokens added (vLLM's `tokenizer.encode`).
    fn encode(&self, text: &str) -> Vec<u32>;
    /// The text of some IDs, special tokens kept (vLLM's `tokenizer.decode`).
    fn decode(&self, ids: &[u32]) -> String;
}

/// The rule of one family, its markers resolved to IDs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum CountRule {
    /// The base `ReasoningParser`'s: nothing is counted.
    Zero,
    /// `BaseThinkingReasoningParser`'s (and `CohereCommandParser`'s): the tokens strictly
    /// inside start/end tokens, by a depth counter (a stray end token is skipped).
    Depth {
        start: Option<u32>,
        end: Option<u32>,
    },
    /// vLLM's parser engines: the tokens read while in reasoning, markers not counted. The
    /// output starts in reasoning with `starts_in_reasoning`; a start token opens it, an
    /// end token or an implicit end closes it.
    Engine {
        start: Option<u32>,
        end: Option<u32>,
        implicit_ends: Vec<u32>,
        starts_in_reasoning: bool,
    },
    /// step3's: every token before the first end token (all of them without one); hy_v4's
    /// the same, a leading start token (`leading`) not counted.
    UntilEnd {
        leading: Option<u32>,
        end: Option<u32>,
    },
    /// kimi_k3's, over its multi-token markers: output starts in reasoning, the think opener
    /// (re)opens it, the closer ends it, and the response opener ends it while no opener has
    /// been seen.
    KimiK3 {
        open: Vec<u32>,
        close: Vec<u32>,
        response: Vec<u32>,
    },
    /// minimax_m3's: a depth counter over its (possibly multi-token) markers, starting at 1
    /// with `thinking_mode: enabled`.
    SequenceDepth {
        start: Vec<u32>,
        end: Vec<u32>,
        initial: u32,
    },
    /// muse's: the body tokens of messages whose header names no recipient or `self`.
    Muse {
        message: Option<u32>,
        boundaries: Vec<u32>,
    },
    /// inkling's: the tokens after `<|content_thinking|>` until an end marker.
    Inkling {
        thinking: Option<u32>,
        ends: Vec<u32>,
    },
    /// gpt-oss's (`HarmonyParser.count_reasoning_tokens`): openai-harmony's streamable
    /// parser read token by token; the non-special tokens of a message whose header makes it
    /// reasoning ([`crate::harmony::header_is_reasoning`]). A header runs to `<|message|>`
    /// (the first one's role known), a message to one of `ends`; between messages only
    /// `<|start|>` is read (the parser refuses the rest). IDs from `first_special` on are
    /// special.
    Harmony {
        start: Option<u32>,
        message: Option<u32>,
        ends: Vec<u32>,
        first_special: u32,
    },
}

/// The most header IDs a Harmony count holds (a header past it is not read, as one that does
/// not parse is not); muse's count keeps the last of its IDs up to this many.
const HARMONY_HEADER_MAX: usize = 256;

/// The Harmony count's states (its `depth`).
const HARMONY_BETWEEN: u32 = 0;
const HARMONY_REASONING: u32 = 1;
const HARMONY_OTHER: u32 = 2;
const HARMONY_HEADER: u32 = 3;
const HARMONY_BROKEN: u32 = 4;

/// gpt-oss's count ([`CountRule::Harmony`]), its markers resolved in `vocab`; special
/// tokens are o200k_harmony's, every ID from 199,998 on.
pub fn harmony_counter(vocab: &dyn Vocab) -> ReasoningCounter {
    ReasoningCounter::new(CountRule::Harmony {
        start: vocab.id("<|start|>"),
        message: vocab.id("<|message|>"),
        ends: ["<|end|>", "<|call|>", "<|return|>"]
            .iter()
            .filter_map(|m| vocab.id(m))
            .collect(),
        first_special: 199_998,
    })
}

/// vLLM's count for one output under the reasoning parser `name` (a registry name, or a
/// model name as `auto` reads one), with the request's settings as the family's constructor
/// reads them. `None` where the count is not by token IDs here: `hf` and `beam` (by the
/// template), gpt-oss's Harmony, `tags:` pairs, unknown names.
pub fn reasoning_counter(
    name: &str,
    settings: &ParserSettings,
    vocab: &dyn Vocab,
) -> Option<ReasoningCounter> {
    let entry = reasoning_parser_for_model(name)?;
    let spec = (entry.make)(settings).map(|p| p.spec().clone());
    let identity = spec.as_ref().is_none_or(|s| {
        matches!(
            s.variant,
            TagVariant::Identity | TagVariant::GraniteThinkingOff
        )
    });
    let id = |t: &str| vocab.id(t);
    let depth = |start: &str, end: &str| CountRule::Depth {
        start: id(start),
        end: id(end),
    };
    let rule = match entry.name {
        "granite" | "hunyuan_a13b" | "olmo3" | "minimax_m2_append_think" | "muse_glimmer" => {
            CountRule::Zero
        }
        "deepseek_r1" | "step5" | "ernie45" => depth("<think>", "</think>"),
        // The identity unless thinking is asked for (holo2: unless it is turned off).
        "deepseek_v3" | "poolside_v1" | "holo2" if identity => CountRule::Zero,
        "deepseek_v3" | "poolside_v1" | "holo2" | "k2_horizon" => {
            let s = spec?;
            depth(&s.start, &s.end)
        }
        // hy_v3 counts by its thinking tags whether or not its identity parses the output.
        "hy_v3" => {
            let suffix = settings.token_suffix.as_deref().unwrap_or_default();
            depth(&format!("<think{suffix}>"), &format!("</think{suffix}>"))
        }
        "cohere_command3" | "cohere_command4" => depth("<|START_THINKING|>", "<|END_THINKING|>"),
        "step3" => CountRule::UntilEnd {
            leading: None,
            end: id("</think>"),
        },
        "hy_v4" if identity => CountRule::Zero,
        "hy_v4" => {
            let s = spec?;
            CountRule::UntilEnd {
                leading: id(&s.start),
                end: id(&s.end),
            }
        }
        "kimi_k3" if identity => CountRule::Zero,
        "kimi_k3" => CountRule::KimiK3 {
            open: vocab.encode("<|open|>think<|sep|>"),
            close: vocab.encode("<|close|>think<|sep|>"),
            response: vocab.encode("<|open|>response<|sep|>"),
        },
        "minimax_m3" => CountRule::SequenceDepth {
            start: vocab.encode("<mm:think>"),
            end: vocab.encode("</mm:think>"),
            initial: u32::from(settings.str("thinking_mode") == Some("enabled")),
        },
        "muse" | "musespark1x" => CountRule::Muse {
            message: id("<|message|>"),
            boundaries: ["<|eom|>", "<|eot|>", "<|start|>"]
                .iter()
                .filter_map(|m| id(m))
                .collect(),
        },
        "inkling" => CountRule::Inkling {
            thinking: id("<|content_thinking|>"),
            ends: ["<|end_message|>", "<|content_model_end_sampling|>"]
                .iter()
                .filter_map(|m| id(m))
                .collect(),
        },
        _ if identity => CountRule::Zero,
        // The parser engines.
        _ => {
            let s = spec?;
            if s.variant == TagVariant::Muse || s.variant == TagVariant::MuseGlimmer {
                return None;
            }
            let ends = s.implicit_end.iter().chain(&s.more_implicit_ends);
            CountRule::Engine {
                start: id(&s.start),
                end: id(&s.end),
                implicit_ends: ends.filter_map(|m| id(m)).collect(),
                starts_in_reasoning: s.starts_in_reasoning,
            }
        }
    };
    Some(ReasoningCounter::new(rule))
}

/// One output's running count: [`ReasoningCounter::feed`] the generated IDs as they come; each
/// call gives the count over all IDs so far. Its state is a few numbers, and for the rules
/// over multi-token markers the last few IDs (muse: the current message header's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningCounter {
    rule: CountRule,
    /// Reasoning tokens among the IDs read.
    count: usize,
    /// The depth (`Depth`, `SequenceDepth`), or 1 while in reasoning (the other rules).
    depth: u32,
    /// IDs read so far (`UntilEnd`: where the first one was).
    read: usize,
    /// The rule has stopped counting (`UntilEnd`: the end token was read).
    done: bool,
    /// kimi_k3: a think opener was read.
    seen_open: bool,
    /// IDs not yet read, kept until the longest marker could be matched at the first one
    /// (the rules over multi-token markers); muse: the header since the last marker.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pending: Vec<u32>,
}

impl ReasoningCounter {
    pub fn new(rule: CountRule) -> Self {
        let depth = match &rule {
            CountRule::Engine {
                starts_in_reasoning,
                ..
            } => u32::from(*starts_in_reasoning),
            CountRule::KimiK3 { .. } => 1,
            CountRule::SequenceDepth { initial, .. } => *initial,
            CountRule::Harmony { .. } => HARMONY_HEADER,
            _ => 0,
        };
        ReasoningCounter {
            rule,
            count: 0,
            depth,
            read: 0,
            done: false,
            seen_open: false,
            pending: Vec::new(),
        }
    }

    /// The rule in force.
    pub fn rule(&self) -> &CountRule {
        &self.rule
    }

    /// Reads the next generated IDs; gives the count over every ID read so far. `vocab` is
    /// read only by muse's rule (it decodes each message header).
    pub fn feed(&mut self, ids: &[u32], vocab: &dyn Vocab) -> usize {
        match &self.rule {
            CountRule::Zero => 0,
            CountRule::Depth { start, end } => {
                for &t in ids {
                    if Some(t) == *start {
                        self.depth += 1;
                    } else if Some(t) == *end {
                        self.depth = self.depth.saturating_sub(1);
                    } else if self.depth > 0 {
                        self.count += 1;
                    }
                }
                self.count
            }
            CountRule::Engine {
                start,
                end,
                implicit_ends,
                ..
            } => {
                for &t in ids {
                    if Some(t) == *start {
                        self.depth = 1;
                    } else if Some(t) == *end || implicit_ends.contains(&t) {
                        self.depth = 0;
                    } else if self.depth > 0 {
                        self.count += 1;
                    }
                }
                self.count
            }
            CountRule::UntilEnd { leading, end } => {
                for &t in ids {
                    let leading = self.read == 0 && Some(t) == *leading;
                    self.read += 1;
                    if self.done || leading {
                        continue;
                    }
                    if Some(t) == *end {
                        self.done = true;
                    } else {
                        self.count += 1;
                    }
                }
                self.count
            }
            CountRule::Inkling { thinking, ends } => {
                for &t in ids {
                    if Some(t) == *thinking {
                        self.depth = 1;
                    } else if ends.contains(&t) {
                        self.depth = 0;
                    } else if self.depth > 0 {
                        self.count += 1;
                    }
                }
                self.count
            }
            CountRule::Muse {
                message,
                boundaries,
            } => {
                for &t in ids {
                    if Some(t) == *message {
                        let header = vocab.decode(&self.pending);
                        self.depth = u32::from(matches!(recipient(&header), None | Some("self")));
                        self.pending.clear();
                    } else if boundaries.contains(&t) {
                        self.depth = 0;
                        self.pending.clear();
                    } else {
                        // A header's recipient is read off its end (vLLM's `to=…\s*$`):
                        // the last IDs are all it needs, and a long message body is not
                        // carried in the stream state.
                        if self.pending.len() >= HARMONY_HEADER_MAX {
                            self.pending.drain(..HARMONY_HEADER_MAX / 2);
                        }
                        self.pending.push(t);
                        if self.depth > 0 {
                            self.count += 1;
                        }
                    }
                }
                self.count
            }
            CountRule::Harmony {
                start,
                message,
                ends,
                first_special,
            } => {
                for &t in ids {
                    match self.depth {
                        HARMONY_BETWEEN if Some(t) == *start => {
                            self.depth = HARMONY_HEADER;
                            // A header after `<|start|>` names its role.
                            self.seen_open = true;
                            self.pending.clear();
                        }
                        HARMONY_HEADER if Some(t) == *message => {
                            let header = vocab.decode(&self.pending);
                            self.pending.clear();
                            self.depth =
                                match crate::harmony::header_is_reasoning(&header, !self.seen_open)
                                {
                                    Some(true) => HARMONY_REASONING,
                                    Some(false) => HARMONY_OTHER,
                                    None => HARMONY_BROKEN,
                                };
                        }
                        HARMONY_HEADER if self.pending.len() < HARMONY_HEADER_MAX => {
                            self.pending.push(t)
                        }
                        HARMONY_HEADER => self.depth = HARMONY_BROKEN,
                        HARMONY_REASONING | HARMONY_OTHER if ends.contains(&t) => {
                            self.depth = HARMONY_BETWEEN
                        }
                        HARMONY_REASONING if t < *first_special => self.count += 1,
                        _ => {}
                    }
                }
                self.count
            }
            CountRule::KimiK3 { .. } | CountRule::SequenceDepth { .. } => {
                self.pending.extend_from_slice(ids);
                let longest = self.longest_marker();
                while self.pending.len() >= longest.max(1) {
                    let used = self.step_sequence();
                    self.pending.drain(..used);
                }
                // What vLLM counts if the output ended here: the IDs held, read to the end.
                let mut rest = self.clone();
                while !rest.pending.is_empty() {
                    let used = rest.step_sequence();
                    rest.pending.drain(..used);
                }
                rest.count
            }
        }
    }

    fn longest_marker(&self) -> usize {
        match &self.rule {
            CountRule::KimiK3 {
                open,
                close,
                response,
            } => open.len().max(close.len()).max(response.len()),
            CountRule::SequenceDepth { start, end, .. } => start.len().max(end.len()),
            _ => 1,
        }
    }

    /// Reads the marker or token at the head of `pending` (matched against the IDs held,
    /// which reach the longest marker but at the end); gives how many IDs it read.
    fn step_sequence(&mut self) -> usize {
        let at = |m: &[u32]| !m.is_empty() && self.pending.starts_with(m);
        match &self.rule {
            CountRule::KimiK3 {
                open,
                close,
                response,
            } => {
                let head = self.pending[0];
                let heads = [open, close, response];
                if heads.iter().any(|m| m.first() == Some(&head)) {
                    if at(open) {
                        self.depth = 1;
                        self.seen_open = true;
                        return open.len();
                    }
                    if at(close) {
                        self.depth = 0;
                        return close.len();
                    }
                    if !self.seen_open && at(response) {
                        self.depth = 0;
                        return response.len();
                    }
                }
            }
            CountRule::SequenceDepth { start, end, .. } => {
                if at(start) {
                    self.depth += 1;
                    return start.len();
                }
                if at(end) {
                    self.depth = self.depth.saturating_sub(1);
                    return end.len();
                }
            }
            _ => {}
        }
        if self.depth > 0 {
            self.count += 1;
        }
        1
    }
}

/// muse's recipient of a message header (vLLM's `to=(?P<recipient>[^\s<]+)\s*$`, searched):
/// the leftmost `to=` followed by a run without whitespace or `<` that only whitespace
/// follows.
fn recipient(header: &str) -> Option<&str> {
    let trimmed = header.trim_end();
    header.match_indices("to=").find_map(|(i, _)| {
        let rest = trimmed.get(i + 3..)?;
        let ok = !rest.is_empty() && !rest.contains(|c: char| c.is_whitespace() || c == '<');
        ok.then_some(rest)
    })
}
