//! Streaming derender: one engine chunk → `{"chunk": <chat.completion.chunk |
//! text_completion>, "stream_state": {…}}` (state wire form in `vllm_state.rs`).
//!
//! A chunk costs O(its IDs + the held text), never a replay of the output, unless the state
//! comes back in vLLM's form alone with replay fields (see `vllm_state.rs`).
//!
//! As vLLM's `derender_chat_stream`:
//! * the role delta rides on the first chunk that has a choice;
//! * `usage` is in a chunk exactly when the engine's chunk has one (the engine sends it when
//!   the render's `stream_options.include_usage` reached it), with `prompt_tokens` from the
//!   request when given;
//! * `metrics` pass through; with `return_token_ids`, each choice carries its `token_ids`
//!   and the chunk the engine's `prompt_token_ids`.
//!
//! Beyond vLLM **(ext)**: stop strings (held across chunks), several choices in one chunk
//! (with the signed state), and chunks after the first may omit `chat_request` and
//! `prompt_token_ids`.

use super::request::{
    new_choice, options, schemas, DerenderConfig, DerenderRequest, GenerateResponse, Kind,
};
use super::respond::{call_id, choice_logprobs, id_prefix};
use super::session::{ChoiceState, Delta, EngineEnd, Replay};
use super::state::{ApiStream, StreamState, MAX_STREAM_CHOICES};
use super::vllm_state::{self, Incoming};
use super::DetokState;
use crate::error::RequestError;
use crate::model::Model;
use llm_render_parsers::ToolCallDelta;
use serde_json::{json, Map, Value};

/// One engine chunk of a stream: the chunk it becomes and the state to send back with the
/// next one. The first chunk (no `stream_state`) starts the state from the request.
pub(super) fn stream_chunk(
    model: &Model,
    req: &DerenderRequest,
    cfg: &DerenderConfig,
    kind: Kind,
    output: &GenerateResponse,
) -> Result<Value, RequestError> {
    let (state, chunk) = advance(model, req, cfg, kind, output, None)?;
    Ok(json!({"chunk": chunk, "stream_state": wire(model, cfg, &state)?}))
}

/// The state as the client carries it: vLLM's fields around the signed state.
pub(super) fn wire(
    model: &Model,
    cfg: &DerenderConfig,
    state: &StreamState,
) -> Result<Value, RequestError> {
    let signed = cfg.states.encode(state)?;
    let call_ids = match state.choices.as_slice() {
        [st] => (0..st.tool_calls)
            .map(|i| call_id(&state.id, st.index, i))
            .collect(),
        _ => Vec::new(),
    };
    Ok(vllm_state::write(state, signed, model, call_ids))
}

/// One engine chunk through the stream's choices: the `chat.completion.chunk` (or
/// `text_completion`) it becomes, and the state after it. `api` names the shape a
/// Messages or Responses stream is reshaped into (`reshape.rs`); a state is only taken
/// back by the route that issued it.
pub(super) fn advance(
    model: &Model,
    req: &DerenderRequest,
    cfg: &DerenderConfig,
    kind: Kind,
    output: &GenerateResponse,
    api: Option<&'static str>,
) -> Result<(StreamState, Value), RequestError> {
    let incoming = vllm_state::read(req.stream_state.as_ref(), &cfg.states, &model.name)?;
    let resumed = incoming.is_some();
    let mut state = match incoming {
        Some(Incoming::Signed(state)) => {
            let issued = state.api.as_ref().map(ApiStream::name);
            if issued != api {
                return Err(RequestError::invalid(
                    "stream_state",
                    format!(
                        "this stream_state belongs to a {} derender stream, not a {} one",
                        issued.unwrap_or(id_prefix(kind)),
                        api.unwrap_or(id_prefix(kind))
                    ),
                ));
            }
            state
        }
        None => new_state(model, req, cfg, kind, output),
        Some(Incoming::Fields(_)) if api.is_some() => {
            return Err(RequestError::invalid(
                "stream_state",
                format!(
                    "a {} derender stream resumes only from its signed state: pass \
                     stream_state back with its `{}` field",
                    api.unwrap_or_default(),
                    vllm_state::SIGNED_FIELD
                ),
            ))
        }
        Some(Incoming::Fields(fields)) => {
            let mut state = new_state(model, req, cfg, kind, output);
            from_vllm_fields(&mut state, fields, model, req, cfg, kind, output)?;
            state
        }
    };
    let chunk = step(model, req, cfg, kind, &mut state, output, resumed)?;
    Ok((state, chunk))
}

/// One engine chunk through a stream's choices, whoever holds the state: a derender route
/// (decoded from `stream_state`) or the sidecar (in memory, `live.rs`). `resumed`: the
/// state came from a client, so the choices it may add are bounded.
pub(super) fn step(
    model: &Model,
    req: &DerenderRequest,
    cfg: &DerenderConfig,
    kind: Kind,
    state: &mut StreamState,
    output: &GenerateResponse,
    resumed: bool,
) -> Result<Value, RequestError> {
    let original = req.original(kind);
    // Built once per chunk, and only if a choice's parser reads it.
    let mut tool_schemas = None;
    let mut out_choices = Vec::with_capacity(output.choices.len());
    for c in &output.choices {
        let pos = match state.choices.iter().position(|s| s.index == c.index) {
            Some(p) => p,
            None => {
                if resumed && state.choices.len() >= MAX_STREAM_CHOICES {
                    return Err(RequestError::invalid(
                        "generate_chunk.choices",
                        "too many choices",
                    ));
                }
                let prompt = req.prompt_ids(0, output);
                let mut st = new_choice(cfg, model, kind, original, c.index, prompt)?;
                st.resume_detok(DetokState::primed(state.prompt_tail.clone()));
                if cfg.replay_state && st.holds_text() {
                    st.replay = Some(Replay::default());
                }
                state.choices.push(st);
                state.choices.len() - 1
            }
        };
        let st = &mut state.choices[pos];
        if st.done {
            return Err(RequestError::invalid(
                "generate_chunk",
                format!(
                    "choice {} has already finished; its stream is over",
                    c.index
                ),
            ));
        }
        if let Some(max) = model.max_model_len {
            let prompt = req.prompt_ids(0, output).map_or(0, <[u32]>::len);
            let total = prompt
                .saturating_add(st.tokens)
                .saturating_add(c.ids().len());
            if total as u64 > max {
                return Err(RequestError::invalid(
                    "generate_chunk.choices",
                    format!(
                        "prompt_token_ids length ({prompt}) plus output_token_ids length ({}) plus \
                         delta ({}) exceeds max_model_len ({max}).",
                        st.tokens,
                        c.ids().len()
                    ),
                ));
            }
        }
        st.set_schemas(|| {
            tool_schemas
                .get_or_insert_with(|| schemas(original))
                .clone()
        });
        let end = c.finish_reason.as_deref().map(|finish| EngineEnd {
            finish,
            stop_reason: c.stop_reason.as_ref(),
        });
        let delta = st.advance(model, &state.opts, c.ids(), end)?;
        if let Some(r) = st.replay.as_mut().filter(|_| !c.ids().is_empty()) {
            r.ids.extend_from_slice(c.ids());
            r.lens.push(c.ids().len());
        }
        let lp = if state.opts.hide_reasoning {
            Value::Null
        } else {
            choice_logprobs(model, kind, original, st, c, "generate_chunk.logprobs")?
        };
        let mut choice = chunk_choice(kind, &state.id, st, delta, lp);
        if returns_token_ids(original) {
            choice["token_ids"] = json!(c.ids());
        }
        out_choices.push(choice);
        st.role_sent = true;
    }
    let mut chunk = json!({
        "id": state.id,
        "object": if kind == Kind::Chat { "chat.completion.chunk" } else { "text_completion" },
        "created": state.created,
        "model": model.name,
        "choices": out_choices,
    });
    if let Some(u) = output.usage.as_ref().filter(|u| !u.is_null()) {
        let count = |key: &str| u.get(key).and_then(Value::as_u64).unwrap_or(0);
        let prompt = req
            .given_prompt_count(0)
            .unwrap_or_else(|| count("prompt_tokens"));
        let completion = count("completion_tokens");
        chunk["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion});
    }
    if let Some(m) = output.metrics.as_ref() {
        chunk["metrics"] = m.clone();
    }
    if returns_token_ids(original) {
        if let Some(ids) = &output.prompt_token_ids {
            chunk["prompt_token_ids"] = json!(ids);
        }
    }
    Ok(chunk)
}

fn returns_token_ids(original: &Map<String, Value>) -> bool {
    original
        .get("return_token_ids")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// A new stream's state, from the request and its first chunk.
pub(super) fn new_state(
    model: &Model,
    req: &DerenderRequest,
    cfg: &DerenderConfig,
    kind: Kind,
    output: &GenerateResponse,
) -> StreamState {
    let opts = options(cfg, model, kind, req.original(kind));
    let prompt_tail = req
        .prompt_ids(0, output)
        .map(|p| DetokState::seeded(model, p, opts.skip_special_tokens).window)
        .unwrap_or_default();
    StreamState {
        model: model.name.clone(),
        id: output
            .request_id
            .clone()
            .unwrap_or_else(|| crate::protocol::request_id(id_prefix(kind))),
        created: crate::protocol::unix_now(),
        prompt_tokens: req.prompt_count(0, output),
        opts,
        prompt_tail,
        choices: Vec::new(),
        api: None,
    }
}

/// A stream resumed from vLLM's fields alone: its one choice rebuilt on a new state. vLLM's
/// rules for that form hold here: one choice per chunk, and `chat_request` on every chunk
/// where a parser runs (the choice's parsers are chosen from it again).
fn from_vllm_fields(
    state: &mut StreamState,
    fields: vllm_state::VllmStreamState,
    model: &Model,
    req: &DerenderRequest,
    cfg: &DerenderConfig,
    kind: Kind,
    output: &GenerateResponse,
) -> Result<(), RequestError> {
    if output.choices.len() > 1 {
        return Err(RequestError::invalid(
            "generate_chunk.choices",
            format!(
                "a stream_state in vLLM's form (without `{}`) is one sequence's: send at most \
                 one choice per chunk (got {})",
                vllm_state::SIGNED_FIELD,
                output.choices.len()
            ),
        ));
    }
    let (reasoning, tools) = cfg.parser_names(model);
    let parsed = kind == Kind::Chat && (reasoning.is_some() || tools.is_some());
    if parsed && req.chat_request.is_none() {
        return Err(RequestError::invalid(
            "chat_request",
            "chat_request is required with a stream_state in vLLM's form when a tool or \
             reasoning parser is configured",
        ));
    }
    let index = output.choices.first().map_or(0, |c| c.index);
    let prompt = req.prompt_ids(0, output);
    let fresh = new_choice(cfg, model, kind, req.original(kind), index, prompt)?;
    let st = vllm_state::resume(fields, fresh, model, &state.opts, cfg.replay_state)?;
    state.choices.push(st);
    Ok(())
}

/// A stream chunk's choice: only what this chunk adds.
fn chunk_choice(kind: Kind, id: &str, st: &ChoiceState, d: Delta, logprobs: Value) -> Value {
    if kind == Kind::Completion {
        return json!({"index": st.index, "text": d.content, "logprobs": logprobs, "finish_reason": d.finish_reason, "stop_reason": d.stop_reason});
    }
    let mut delta = Map::new();
    if !st.role_sent {
        delta.insert("role".into(), "assistant".into());
        delta.insert("content".into(), Value::String(String::new()));
    }
    if !d.content.is_empty() {
        delta.insert("content".into(), Value::String(d.content));
    }
    if !d.reasoning.is_empty() {
        delta.insert(
            "reasoning_content".into(),
            Value::String(d.reasoning.clone()),
        );
        delta.insert("reasoning".into(), Value::String(d.reasoning));
    }
    if !d.tool_calls.is_empty() {
        let calls: Vec<Value> = d
            .tool_calls
            .iter()
            .map(|t| tool_call_json(id, st.index, t))
            .collect();
        delta.insert("tool_calls".into(), Value::Array(calls));
    }
    json!({"index": st.index, "delta": delta, "logprobs": logprobs, "finish_reason": d.finish_reason, "stop_reason": d.stop_reason})
}

/// A tool call's delta: `id`, `type` and `name` on its first, argument fragments after.
fn tool_call_json(response_id: &str, choice: u32, d: &ToolCallDelta) -> Value {
    match &d.name {
        Some(name) => json!({
            "index": d.index,
            "id": d.id.clone().unwrap_or_else(|| call_id(response_id, choice, d.index)),
            "type": "function",
            "function": {"name": name, "arguments": d.arguments},
        }),
        None => json!({"index": d.index, "function": {"arguments": d.arguments}}),
    }
}
