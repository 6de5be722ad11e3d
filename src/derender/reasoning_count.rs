//! Reasoning tokens as vLLM 0.33 counts them (`count_reasoning_tokens` of the reasoning parser
//! in force, `llm_render_parsers::reasoning_counter`): the front door's chat answers report
//! them as `usage.completion_tokens_details.reasoning_tokens` (vLLM's chat serving sends it
//! whenever a reasoning parser is configured), and the Responses derender as
//! `usage.output_tokens_details.reasoning_tokens`.
//!
//! Under `hf` and `beam` the count is the template's (`ChoiceState::count_template_reasoning`,
//! carried in the choice's parser); every other family counts by token IDs, a running count
//! per choice ([`ReasoningCounter`]), gpt-oss's by its Harmony messages.

use super::request::{new_choice, reasoning_settings, DerenderConfig, Kind};
use super::session::ChoiceState;
use crate::model::Model;
use llm_render_parsers::{
    harmony_counter, is_response_template, reasoning_counter, ReasoningCounter, Vocab,
};
use serde_json::{Map, Value};

/// The model's tokenizer, as a count reads it.
pub(super) struct ModelVocab<'a>(pub &'a Model);

impl Vocab for ModelVocab<'_> {
    fn id(&self, token: &str) -> Option<u32> {
        self.0.tokenizer.token_to_id(token)
    }
    fn encode(&self, text: &str) -> Vec<u32> {
        self.0.encode(text, false).unwrap_or_default()
    }
    fn decode(&self, ids: &[u32]) -> String {
        self.0.decode(ids, false).unwrap_or_default()
    }
}

/// Each token's text as vLLM's `hf` counter decodes it: alone, special tokens kept (`_decode`
/// of one ID).
pub(super) fn token_texts(model: &Model, ids: &[u32]) -> Vec<String> {
    ids.iter()
        .map(|&id| model.decode(&[id], false).unwrap_or_default())
        .collect()
}

/// How a request's reasoning tokens are counted.
#[derive(Debug, Clone)]
pub(super) enum Counting {
    /// By the template, in the choice's own parser (`hf`, `beam`).
    Template,
    /// By token IDs: a fresh counter for each choice.
    Ids(ReasoningCounter),
}

/// How a chat request's reasoning tokens are counted, or `None` where vLLM sends no count: no
/// reasoning parser in force, or one whose count is not made here (our own `tags:` pairs).
pub(super) fn counting(
    cfg: &DerenderConfig,
    model: &Model,
    kind: Kind,
    req: &Map<String, Value>,
) -> Option<Counting> {
    if kind != Kind::Chat {
        return None;
    }
    cfg.parser_names(model).0?;
    // A Harmony model is read by vLLM's Harmony parser whatever the flags name, and counted
    // by it (`HarmonyParser.count_reasoning_tokens`).
    if model.harmony.is_some() {
        return Some(Counting::Ids(harmony_counter(&ModelVocab(model))));
    }
    if is_response_template(&cfg.reasoning_parser) {
        return Some(Counting::Template);
    }
    let name = match cfg.reasoning_parser.as_str() {
        "auto" => model.name.as_str(),
        name => name,
    };
    let settings = reasoning_settings(cfg, model, req);
    reasoning_counter(name, &settings, &ModelVocab(model)).map(Counting::Ids)
}

/// The running count of each choice of one stream.
#[derive(Debug, Clone)]
pub struct ReasoningTally {
    how: Counting,
    /// Per choice index: its counter (by IDs) and its count so far.
    choices: Vec<(u32, Option<ReasoningCounter>, usize)>,
}

impl ReasoningTally {
    pub(super) fn new(how: Counting) -> Self {
        ReasoningTally {
            how,
            choices: Vec::new(),
        }
    }

    /// Reads choice `choice`'s next IDs (those the derender took); gives its count so far.
    pub(super) fn feed(&mut self, model: &Model, choice: &mut ChoiceState, ids: &[u32]) -> usize {
        let at = match self.choices.iter().position(|c| c.0 == choice.index) {
            Some(at) => at,
            None => {
                let counter = match &self.how {
                    Counting::Ids(c) => Some(c.clone()),
                    Counting::Template => None,
                };
                self.choices.push((choice.index, counter, 0));
                self.choices.len() - 1
            }
        };
        let entry = &mut self.choices[at];
        entry.2 = match entry.1.as_mut() {
            Some(counter) => counter.feed(ids, &ModelVocab(model)),
            None => choice
                .count_template_reasoning(&token_texts(model, ids))
                .unwrap_or(0),
        };
        entry.2
    }

    /// Choice `index`'s count so far.
    pub fn choice(&self, index: u32) -> usize {
        self.choices
            .iter()
            .find(|c| c.0 == index)
            .map_or(0, |c| c.2)
    }

    /// The sum over the choices, as vLLM's stream reports it in its last usage.
    pub fn total(&self) -> usize {
        self.choices.iter().map(|c| c.2).sum()
    }
}

/// A whole answer's count, summed over its choices (vLLM's `chat_completion_full_generator`:
/// a fresh parser per choice, each counting its token IDs); `None` where vLLM sends none.
pub(super) fn whole(
    cfg: &DerenderConfig,
    model: &Model,
    req: &Map<String, Value>,
    prompt: &[u32],
    choices: &[(u32, Vec<u32>)],
) -> Option<usize> {
    let how = counting(cfg, model, Kind::Chat, req)?;
    let mut total = 0;
    for (index, ids) in choices {
        total += match &how {
            Counting::Ids(c) => c.clone().feed(ids, &ModelVocab(model)),
            Counting::Template => new_choice(cfg, model, Kind::Chat, req, *index, Some(prompt))
                .ok()
                .and_then(|mut c| c.count_template_reasoning(&token_texts(model, ids)))
                .unwrap_or(0),
        };
    }
    Some(total)
}
