//! Whole-output derender: engine output → `chat.completion` / `text_completion` (streams are
//! `stream.rs`), and the pieces both share (call ids, logprobs, bounds).
//!
//! Both modes run the same [`ChoiceState::advance`]: one-shot feeds every ID with the
//! engine's finish reason; a stream feeds each chunk's new IDs and carries the state.
//!
//! Response details, following vLLM and OpenAI:
//! * `message.reasoning_content` (also as `reasoning`) holds the reasoning; `content` is
//!   null when the output is only tool calls.
//! * `tool_calls[]` are `{"id", "type": "function", "function": {"name", "arguments"}}`; a
//!   stream sends `id`, `type` and `name` on a call's first delta, then argument fragments.
//!   Ids are `call_` + 24 hex digits derived from the response id and the call's position,
//!   so every replica names a call alike.
//! * `finish_reason` is `stop` after a stop string, else the engine's; `stop` becomes
//!   `tool_calls` when calls were parsed, unless the request named its tool (vLLM's
//!   `resolve_finish_reason`). Which final ID is the stop token, and `stop_reason`: see
//!   `session::Options::final_stop`.
//! * `usage` is always in a non-stream response; a stream's last chunk carries it when the
//!   request sets `stream_options.include_usage`.

use super::logprobs;
use super::request::{
    new_choice, options, DerenderConfig, DerenderRequest, GenerateResponse, GeneratedChoice, Kind,
};
use super::session::{ChoiceState, Delta, EngineEnd};
use super::DetokState;
use crate::error::RequestError;
use crate::model::Model;
use serde_json::{json, Map, Value};

/// A tool call's id: stable across chunks and replicas.
pub(super) fn call_id(response_id: &str, choice: u32, call: usize) -> String {
    let h = blake3::hash(format!("{response_id}/{choice}/{call}").as_bytes());
    format!("call_{}", &h.to_hex()[..24])
}

pub(super) fn usage(prompt: usize, completion: usize) -> Value {
    json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion})
}

/// vLLM's bound on sequences in one request (`VLLM_MAX_N_SEQUENCES`): engine responses,
/// and choices in one response.
const MAX_SEQUENCES: usize = 16384;

/// vLLM's bounds on a whole response, checked before anything is decoded: the number of
/// responses and of choices, and each choice's IDs: present, non-empty, within the context
/// and the vocabulary.
pub(super) fn check_bounds(
    model: &Model,
    field: &str,
    responses: &[GenerateResponse],
    max_logprobs: Option<usize>,
) -> Result<(), RequestError> {
    if responses.len() > MAX_SEQUENCES {
        return Err(RequestError::invalid(
            field,
            format!(
                "generate_responses count ({}) exceeds server maximum ({MAX_SEQUENCES})",
                responses.len()
            ),
        ));
    }
    for (ri, r) in responses.iter().enumerate() {
        let at = if field == "generate_responses" {
            format!("generate_responses[{ri}]")
        } else {
            field.to_string()
        };
        if r.choices.len() > MAX_SEQUENCES {
            return Err(RequestError::invalid(
                format!("{at}.choices"),
                format!(
                    "choices count ({}) exceeds server maximum ({MAX_SEQUENCES})",
                    r.choices.len()
                ),
            ));
        }
        for (ci, c) in r.choices.iter().enumerate() {
            if c.ids().is_empty() {
                return Err(RequestError::invalid(
                    format!("{at}.choices[{ci}].token_ids"),
                    format!("choice {} has empty or null token_ids", c.index),
                ));
            }
            if let Some(max) = model.max_model_len.filter(|m| c.ids().len() as u64 > *m) {
                return Err(RequestError::invalid(
                    format!("{at}.choices[{ci}].token_ids"),
                    format!(
                        "token_ids length ({}) in choice {} exceeds max_model_len ({max})",
                        c.ids().len(),
                        c.index
                    ),
                ));
            }
            if let Some(lp) = &c.logprobs {
                let at = format!("{at}.choices[{ci}].logprobs");
                logprobs::check_bounds(lp, &at, c.index, model.max_model_len, max_logprobs)?;
            }
        }
    }
    Ok(())
}

/// vLLM's id prefix for a response of `kind`.
pub(super) fn id_prefix(kind: Kind) -> &'static str {
    match kind {
        Kind::Chat => "chatcmpl",
        Kind::Completion => "cmpl",
    }
}

/// The whole output at once: a `chat.completion`, or a `text_completion` whose choices are
/// those of every response in order, numbered 0.. across them (as vLLM numbers them).
/// Passed through as vLLM does: chat's `prompt_logprobs`, `kv_transfer_params` and
/// `metrics`; a completion's `kv_transfer_params` when every response has the same, and
/// its `metrics` when there is one response.
pub(super) fn one_shot(
    model: &Model,
    req: &DerenderRequest,
    cfg: &DerenderConfig,
    kind: Kind,
    responses: &[GenerateResponse],
) -> Result<Value, RequestError> {
    let original = req.original(kind);
    let opts = options(cfg, model, kind, original);
    let first = &responses[0];
    let id = first
        .request_id
        .clone()
        .unwrap_or_else(|| crate::protocol::request_id(id_prefix(kind)));
    let mut choices = Vec::new();
    let (mut prompt, mut completion) = (0, 0);
    for (ri, r) in responses.iter().enumerate() {
        prompt += req.prompt_count(ri, r);
        for c in &r.choices {
            let index = match kind {
                Kind::Chat => c.index,
                Kind::Completion => choices.len() as u32,
            };
            let mut st = new_choice(cfg, model, kind, original, index, req.prompt_ids(ri, r))?;
            if let Some(prompt) = req.prompt_ids(ri, r) {
                st.resume_detok(DetokState::seeded(model, prompt, opts.skip_special_tokens));
            }
            let end = EngineEnd {
                finish: c.finish_reason.as_deref().unwrap_or("stop"),
                stop_reason: c.stop_reason.as_ref(),
            };
            let delta = st.advance(model, &opts, c.ids(), Some(end))?;
            completion += st.tokens;
            let lp = if opts.hide_reasoning {
                Value::Null
            } else {
                choice_logprobs(model, kind, original, &mut st, c, "logprobs")?
            };
            choices.push(whole_choice(kind, &id, &st, delta, lp));
        }
    }
    let mut out = json!({
        "id": id,
        "object": if kind == Kind::Chat { "chat.completion" } else { "text_completion" },
        "created": crate::protocol::unix_now(),
        "model": model.name,
        "choices": choices,
        "usage": usage(prompt, completion),
    });
    let (kv, metrics) = match kind {
        Kind::Chat => {
            out["prompt_logprobs"] = first.prompt_logprobs.clone().unwrap_or(Value::Null);
            (first.kv_transfer_params.clone(), first.metrics.clone())
        }
        Kind::Completion => {
            let same = responses
                .iter()
                .all(|r| r.kv_transfer_params == first.kv_transfer_params);
            let one = responses.len() == 1;
            (
                first.kv_transfer_params.clone().filter(|_| same),
                first.metrics.clone().filter(|_| one),
            )
        }
    };
    out["kv_transfer_params"] = kv.unwrap_or(Value::Null);
    out["metrics"] = metrics.unwrap_or(Value::Null);
    Ok(out)
}

/// A choice's logprobs in the response's form (`null` when the engine sent none): chat's
/// cut to the request's `top_logprobs`, or completions' lists. The choice carries the
/// context and offset from one chunk to the next.
pub(super) fn choice_logprobs(
    model: &Model,
    kind: Kind,
    original: &Map<String, Value>,
    st: &mut ChoiceState,
    c: &GeneratedChoice,
    at: &str,
) -> Result<Value, RequestError> {
    let Some(lp) = c.logprobs.as_ref().filter(|l| !l.is_null()) else {
        return Ok(Value::Null);
    };
    let top = match kind {
        Kind::Chat => original
            .get("top_logprobs")
            .and_then(Value::as_u64)
            .map(|n| n as usize),
        Kind::Completion => completion_top_limit(original),
    };
    let chat = logprobs::resolve(model, lp, at, &mut st.logprob_context, top)?;
    Ok(match kind {
        Kind::Chat => chat,
        Kind::Completion => logprobs::completion_form(&chat, &mut st.logprob_offset),
    })
}

/// How many candidates a completion's logprobs keep per position: one more than the
/// request's `logprobs`, as `/v1/completions` returns them (vLLM's
/// `completion_top_logprobs_limit`); all of them for `logprobs: -1`, with
/// `logprob_token_ids`, or without `logprobs`.
fn completion_top_limit(original: &Map<String, Value>) -> Option<usize> {
    let asks_ids = original
        .get("logprob_token_ids")
        .is_some_and(|v| !v.is_null() && v != &Value::Array(Vec::new()));
    match original.get("logprobs").and_then(Value::as_i64) {
        Some(n) if n >= 0 && !asks_ids => Some(n as usize + 1),
        _ => None,
    }
}

/// A non-stream choice.
fn whole_choice(kind: Kind, id: &str, st: &ChoiceState, d: Delta, logprobs: Value) -> Value {
    let finish = d.finish_reason.unwrap_or_else(|| "stop".into());
    if kind == Kind::Completion {
        return json!({"index": st.index, "text": d.content, "logprobs": logprobs, "finish_reason": finish, "stop_reason": d.stop_reason});
    }
    let calls: Vec<Value> = llm_render_parsers::Parsed {
        content: String::new(),
        calls: d.tool_calls,
    }
    .tool_calls()
    .iter()
    .enumerate()
    .map(|(i, c)| {
        json!({
            "id": c.id.clone().unwrap_or_else(|| call_id(id, st.index, i)),
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments},
        })
    })
    .collect();
    let reasoning = if d.reasoning.is_empty() {
        Value::Null
    } else {
        Value::String(d.reasoning)
    };
    let content = if d.content.is_empty() && !calls.is_empty() {
        Value::Null
    } else {
        Value::String(d.content)
    };
    json!({
        "index": st.index,
        "message": {
            "role": "assistant",
            "content": content,
            "reasoning_content": reasoning,
            "reasoning": reasoning,
            "tool_calls": calls,
        },
        "logprobs": logprobs,
        "finish_reason": finish,
        "stop_reason": d.stop_reason,
    })
}
