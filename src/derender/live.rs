//! The sidecar's derender of one engine stream (`server/front/`): the same per-chunk step
//! the streaming derender routes run (`stream.rs`), with the stream's state held in memory
//! for the stream's life instead of signed and carried by the client between chunks.
//!
//! A non-stream answer is the one-shot derender (`respond.rs`) of the choices' collected
//! IDs ([`LiveStream::into_whole`]); where the request has stop strings, the live stream
//! also reads each event, to tell when every choice has ended so the engine can be aborted
//! early.

use super::reasoning_count::{self, ReasoningTally};
use super::request::{DerenderConfig, DerenderRequest, GenerateResponse, Kind, PromptTokenIds};
use super::reshape::Api;
use super::state::StreamState;
use crate::error::RequestError;
use crate::model::Model;
use serde_json::{Map, Value};

/// One stream's derender, in memory.
pub struct LiveStream {
    req: DerenderRequest,
    kind: Kind,
    state: StreamState,
    /// vLLM's reasoning-token count of each choice, where a chat answer carries one.
    reasoning: Option<ReasoningTally>,
}

impl LiveStream {
    /// A stream of response `id` for `original` (the chat or completion request as the
    /// client sent it) whose prompt was `prompt_ids`.
    pub fn new(
        model: &Model,
        cfg: &DerenderConfig,
        kind: Kind,
        id: String,
        original: Map<String, Value>,
        prompt_ids: Vec<u32>,
    ) -> Self {
        let req = request(kind, original, prompt_ids, true);
        let first = GenerateResponse::named(id);
        let state = super::stream::new_state(model, &req, cfg, kind, &first);
        let reasoning = reasoning_count::counting(cfg, model, kind, req.original(kind))
            .map(ReasoningTally::new);
        LiveStream {
            req,
            kind,
            state,
            reasoning,
        }
    }

    /// The chunk one engine event becomes (`chat.completion.chunk` or `text_completion`).
    /// Choices that have already ended are left out of `event` (their engine output after a
    /// stop string is not read).
    pub fn push(
        &mut self,
        model: &Model,
        cfg: &DerenderConfig,
        event: GenerateResponse,
    ) -> Result<Value, RequestError> {
        self.step(model, cfg, event, true)
    }

    /// [`LiveStream::push`]; with `count`, each choice's reasoning tokens are counted over the
    /// IDs the derender took of it (up to a stop string, as its completion tokens).
    fn step(
        &mut self,
        model: &Model,
        cfg: &DerenderConfig,
        mut event: GenerateResponse,
        count: bool,
    ) -> Result<Value, RequestError> {
        let state = &self.state;
        event
            .choices
            .retain(|c| !state.choices.iter().any(|s| s.index == c.index && s.done));
        let before: Vec<(u32, usize)> = match (&self.reasoning, count) {
            (Some(_), true) => event
                .choices
                .iter()
                .map(|c| (c.index, self.choice_tokens(c.index).unwrap_or(0)))
                .collect(),
            _ => Vec::new(),
        };
        let chunk = super::stream::step(
            model,
            &self.req,
            cfg,
            self.kind,
            &mut self.state,
            &event,
            false,
        )?;
        if let Some(tally) = self.reasoning.as_mut() {
            for (c, (index, was)) in event.choices.iter().zip(before) {
                let Some(choice) = self.state.choices.iter_mut().find(|s| s.index == index) else {
                    continue;
                };
                let taken = choice.tokens.saturating_sub(was).min(c.ids().len());
                tally.feed(model, choice, &c.ids()[..taken]);
            }
        }
        Ok(chunk)
    }

    /// vLLM's reasoning-token count of choice `index` so far, where a chat answer carries one
    /// (a reasoning parser in force): what `continuous_usage_stats` reports on its chunks.
    pub fn reasoning_tokens_of(&self, index: u32) -> Option<usize> {
        self.reasoning.as_ref().map(|t| t.choice(index))
    }

    /// The count over every choice so far, as the stream's last usage reports it.
    pub fn reasoning_tokens(&self) -> Option<usize> {
        self.reasoning.as_ref().map(ReasoningTally::total)
    }

    /// A whole answer's count over its choices' IDs (each cut where its output ended), as
    /// vLLM's one-shot chat answer reports it; `None` where it reports none.
    pub fn whole_reasoning_tokens(
        &self,
        model: &Model,
        cfg: &DerenderConfig,
        choices: &[(u32, Vec<u32>)],
    ) -> Option<usize> {
        self.reasoning.as_ref()?;
        let req = self.req.original(self.kind);
        reasoning_count::whole(cfg, model, req, self.prompt_ids(), choices)
    }

    /// The Messages or Responses events one engine event becomes (`reshape.rs`), for a chat
    /// stream of a request that came in that API's shape.
    pub fn push_as(
        &mut self,
        model: &Model,
        cfg: &DerenderConfig,
        event: GenerateResponse,
        api: Api,
    ) -> Result<Vec<Value>, RequestError> {
        if event.choices.len() > 1 {
            return Err(RequestError::invalid(
                "n",
                "the Messages and Responses APIs have one choice",
            ));
        }
        let kv = event.kv_transfer_params.clone();
        let ids: Vec<u32> = event
            .choices
            .first()
            .filter(|c| !self.choice_done(c.index))
            .map(|c| c.ids().to_vec())
            .unwrap_or_default();
        let chunk = self.step(model, cfg, event, false)?;
        // What the reshaper reads of the event: its IDs (reasoning tokens) and
        // `kv_transfer_params`.
        let mut seen = GenerateResponse::named(self.state.id.clone());
        seen.kv_transfer_params = kv;
        seen.choices.push(crate::protocol::GeneratedChoice {
            index: 0,
            token_ids: Some(ids),
            finish_reason: None,
            stop_reason: None,
            logprobs: None,
        });
        Ok(super::reshape::events(
            model,
            api,
            &mut self.state,
            &seen,
            &chunk,
            || super::reshape::ids_counter(cfg, model, self.req.original(self.kind)),
        ))
    }

    /// Whether each of the request's `n` choices has ended.
    pub fn finished(&self, n: u32) -> bool {
        self.state.choices.len() as u32 >= n && self.state.choices.iter().all(|c| c.done)
    }

    /// Whether choice `index` has ended.
    pub fn choice_done(&self, index: u32) -> bool {
        self.state
            .choices
            .iter()
            .any(|c| c.index == index && c.done)
    }

    /// Completion tokens the engine sent so far over every choice.
    pub fn completion_tokens(&self) -> usize {
        self.state.choices.iter().map(|c| c.tokens).sum()
    }

    /// The prompt's token count.
    pub fn prompt_tokens(&self) -> usize {
        self.state.prompt_tokens
    }

    /// The prompt's IDs.
    pub fn prompt_ids(&self) -> &[u32] {
        match &self.req.prompt_token_ids {
            Some(PromptTokenIds::One(ids)) => ids,
            _ => &[],
        }
    }

    /// Completion tokens read of choice `index`.
    pub fn choice_tokens(&self, index: u32) -> Option<usize> {
        self.state
            .choices
            .iter()
            .find(|c| c.index == index)
            .map(|c| c.tokens)
    }

    /// A setting of the request, as the client sent it.
    pub fn setting(&self, key: &str) -> Option<&Value> {
        self.req
            .original(self.kind)
            .get(key)
            .filter(|v| !v.is_null())
    }

    /// Whether the request has stop strings (which only the derender can find).
    pub fn has_stop_strings(&self) -> bool {
        match self.setting("stop") {
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Array(a)) => !a.is_empty(),
            _ => false,
        }
    }

    /// The stream's response id.
    pub fn id(&self) -> &str {
        &self.state.id
    }

    /// Its `created` time.
    pub fn created(&self) -> u64 {
        self.state.created
    }

    /// The one-shot derender of the whole engine output, as `/v1/chat/completions/derender`
    /// (or the completions route) answers it for this request.
    pub fn into_whole(
        mut self,
        model: &Model,
        cfg: &DerenderConfig,
        output: GenerateResponse,
    ) -> Result<Value, RequestError> {
        self.req.stream = false;
        self.req.generate_response = Some(output);
        super::derender(model, &self.req, cfg, self.kind)
    }

    /// [`LiveStream::into_whole`] in the Messages or Responses shape, as
    /// `/v1/messages/derender` (or `/v1/responses/derender`) answers it.
    pub fn into_whole_as(
        mut self,
        model: &Model,
        cfg: &DerenderConfig,
        output: GenerateResponse,
        api: Api,
    ) -> Result<Value, RequestError> {
        self.req.stream = false;
        self.req.generate_response = Some(output);
        super::derender_as(model, &self.req, cfg, api)
    }
}

fn request(
    kind: Kind,
    original: Map<String, Value>,
    prompt_ids: Vec<u32>,
    stream: bool,
) -> DerenderRequest {
    let (chat_request, completion_request) = match kind {
        Kind::Chat => (Some(original), None),
        Kind::Completion => (None, Some(original)),
    };
    DerenderRequest {
        model: None,
        stream,
        generate_response: None,
        generate_responses: None,
        generate_chunk: None,
        stream_state: None,
        prompt_tokens: None,
        prompt_token_ids: Some(PromptTokenIds::One(prompt_ids)),
        chat_request,
        completion_request,
        messages_request: None,
        responses_request: None,
    }
}
