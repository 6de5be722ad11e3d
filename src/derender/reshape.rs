//! `/v1/messages/derender` and `/v1/responses/derender` **(ext)**: the chat derender (the
//! same session, parsers and signed state), its output reshaped into Anthropic Messages
//! (`messages.rs`) or OpenAI Responses (`responses/`).
//!
//! Request: as chat derender's (docs/api.md), with the original request as
//! `messages_request` or `responses_request` in place of `chat_request`; the server converts
//! it to the chat request it rendered as (`render::anthropic` / `render::responses`), so
//! tools, stop sequences and thinking settings are read the same way as on render.
//! One-shot answers a Messages `message` or a `response` object; a stream chunk answers
//! `{"events": [{"type": …}, …], "stream_state": {…}}`, the events in order (an SSE writer
//! sends each as `event: <type>` / `data: <json>`). One choice per request (`n` = 1), as both
//! APIs have. A stream's state is only taken back by the route that issued it, and only in
//! its signed form.

use super::messages::{self, MessagesStream};
use super::reasoning_count::{counting, token_texts, Counting, ModelVocab};
use super::request::{
    new_choice, options, DerenderConfig, DerenderRequest, GenerateResponse, Kind,
};
use super::responses::{self, Counts, Echo, Head, ResponsesStream};
use super::state::{ApiStream, StreamState};
use super::stream::{advance, wire};
use crate::error::RequestError;
use crate::model::Model;
use llm_render_parsers::{is_response_template, ReasoningCounter};
use serde_json::{json, Map, Value};

/// The shape a chat derender is reshaped into.
#[derive(Debug, Clone, Copy)]
pub enum Api<'a> {
    Messages,
    /// With the Responses request, whose settings the response echoes.
    Responses(&'a Map<String, Value>),
}

impl Api<'_> {
    fn name(&self) -> &'static str {
        match self {
            Api::Messages => "messages",
            Api::Responses(_) => "responses",
        }
    }
}

/// A one-shot output's reasoning tokens under `--reasoning-parser hf` (or `beam`): vLLM 0.33's
/// `ResponseTemplateParser.count_reasoning_tokens` of its token IDs, read by a fresh parser
/// of the request's prompt, as vLLM's Responses serving counts its whole output.
fn template_reasoning(
    model: &Model,
    req: &DerenderRequest,
    cfg: &DerenderConfig,
    ids: &[u32],
) -> Result<usize, RequestError> {
    let original = req.original(Kind::Chat);
    if options(cfg, model, Kind::Chat, original).hide_reasoning {
        return Ok(0);
    }
    let prompt = req
        .generate_response
        .as_ref()
        .and_then(|r| req.prompt_ids(0, r));
    let mut choice = new_choice(cfg, model, Kind::Chat, original, 0, prompt)?;
    Ok(choice
        .count_template_reasoning(&token_texts(model, ids))
        .unwrap_or(0))
}

/// A fresh count by token IDs of the reasoning parser in force for a chat request (vLLM's
/// `count_reasoning_tokens`), where one counts by IDs.
pub(super) fn ids_counter(
    cfg: &DerenderConfig,
    model: &Model,
    req: &Map<String, Value>,
) -> Option<ReasoningCounter> {
    match counting(cfg, model, Kind::Chat, req)? {
        Counting::Ids(c) => Some(c),
        Counting::Template => None,
    }
}

/// A Responses id: the request's `request_id`, else the engine's when it is one, else
/// `resp_` and the engine's id.
fn response_id(chat_id: &str, req: &Map<String, Value>) -> String {
    if let Some(id) = req.get("request_id").and_then(Value::as_str) {
        return id.to_string();
    }
    if chat_id.starts_with("resp_") {
        return chat_id.to_string();
    }
    format!(
        "resp_{}",
        chat_id.strip_prefix("chatcmpl-").unwrap_or(chat_id)
    )
}

fn one_choice(field: &str, n: usize, api: Api) -> Result<(), RequestError> {
    if n > 1 {
        return Err(RequestError::invalid(
            format!("{field}.choices"),
            format!(
                "{} derender takes one choice (got {n}): the API has no `n`",
                api.name()
            ),
        ));
    }
    Ok(())
}

/// Derenders a Messages or Responses request (`req.chat_request` is its chat form).
pub fn derender_as(
    model: &Model,
    req: &DerenderRequest,
    cfg: &DerenderConfig,
    api: Api,
) -> Result<Value, RequestError> {
    if !req.stream {
        let one = req.generate_response.as_ref();
        one_choice("generate_response", one.map_or(0, |r| r.choices.len()), api)?;
        let chat = super::route::derender(model, req, cfg, Kind::Chat)?;
        return match api {
            Api::Messages => messages::message(&chat),
            Api::Responses(original) => {
                let prompt = chat["usage"]["prompt_tokens"].as_u64().unwrap_or(0);
                let output = chat["usage"]["completion_tokens"].as_u64().unwrap_or(0);
                let ids = one
                    .and_then(|r| r.choices.first())
                    .map_or(&[][..], |c| c.ids());
                let hidden = chat["choices"][0]["message"]["reasoning"].is_null();
                let reasoning = if is_response_template(&cfg.reasoning_parser) {
                    template_reasoning(model, req, cfg, ids)?
                } else if hidden {
                    0
                } else {
                    ids_counter(cfg, model, req.original(Kind::Chat))
                        .map_or(0, |mut c| c.feed(ids, &ModelVocab(model)))
                };
                let room = model.max_model_len.map(|m| m.saturating_sub(prompt));
                let echo = Echo::new(original, room, &model.generation);
                let id = response_id(chat["id"].as_str().unwrap_or_default(), original);
                let head = Head {
                    id: &id,
                    created: chat["created"].as_u64().unwrap_or(0),
                    model: &model.name,
                    echo: &echo,
                    kv_transfer_params: chat["kv_transfer_params"].clone(),
                };
                let counts = Counts {
                    input: prompt as usize,
                    output: output as usize,
                    reasoning,
                };
                Ok(responses::response(&chat, &head, counts))
            }
        };
    }
    let output = req.chunk()?;
    one_choice("generate_chunk", output.choices.len(), api)?;
    req.check_prompts(1, model.max_model_len)?;
    let (mut state, chunk) = advance(model, req, cfg, Kind::Chat, output, Some(api.name()))?;
    let events = events(model, api, &mut state, output, &chunk, || {
        ids_counter(cfg, model, req.original(Kind::Chat))
    });
    Ok(json!({"events": events, "stream_state": wire(model, cfg, &state)?}))
}

/// The Messages or Responses events one chat chunk of a stream becomes, with the API's own
/// fields kept in `state.api`: what the derender routes send back per chunk and the
/// sidecar's `/v1/messages` and `/v1/responses` streams send (`live.rs`).
pub(super) fn events(
    model: &Model,
    api: Api,
    state: &mut StreamState,
    output: &GenerateResponse,
    chunk: &Value,
    counter: impl FnOnce() -> Option<ReasoningCounter>,
) -> Vec<Value> {
    let prompt = state.prompt_tokens;
    let completion = state.choices.first().map_or(0, |c| c.tokens);
    match api {
        Api::Messages => {
            let slot = state
                .api
                .get_or_insert_with(|| ApiStream::Messages(MessagesStream::default()));
            match slot {
                ApiStream::Messages(m) => m.events(chunk, prompt, completion),
                ApiStream::Responses(_) => Vec::new(),
            }
        }
        Api::Responses(original) => {
            let slot = state.api.get_or_insert_with(|| {
                let room = model.max_model_len.map(|m| m.saturating_sub(prompt as u64));
                let mut s = ResponsesStream::new(
                    response_id(&state.id, original),
                    state.created,
                    Echo::new(original, room, &model.generation),
                );
                s.counter = counter();
                ApiStream::Responses(Box::new(s))
            });
            match slot {
                ApiStream::Responses(r) => {
                    let ids = output.choices.first().map_or(&[][..], |c| c.ids());
                    let hidden = state.opts.hide_reasoning;
                    // Under `hf`, vLLM 0.33's count by the template, carried in the parser.
                    let template = match state.choices.first_mut() {
                        Some(c) if !state.opts.hide_reasoning => {
                            c.count_template_reasoning(&token_texts(model, ids))
                        }
                        _ => None,
                    };
                    if let Some(n) = template {
                        r.reasoning_tokens = n;
                    } else if let Some(c) = r.counter.as_mut().filter(|_| !hidden) {
                        r.reasoning_tokens = c.feed(ids, &ModelVocab(model));
                    }
                    let kv = output.kv_transfer_params.clone().unwrap_or(Value::Null);
                    let counts = Counts {
                        input: prompt,
                        output: completion,
                        reasoning: r.reasoning_tokens,
                    };
                    r.events(chunk, &model.name, &kv, counts)
                }
                ApiStream::Messages(_) => Vec::new(),
            }
        }
    }
}
