//! A whole answer (`stream: false`): the engine's events collected per choice, then the
//! one-shot derender of them, as `/v1/chat/completions/derender` answers it. Where the
//! request has stop strings, each event also goes through the live stream, so that the
//! engine is aborted as soon as every choice has met one.

use super::{engine_error, Flow};
use crate::derender::{GenerateResponse, GeneratedChoice};
use crate::server::ApiError;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::time::Duration;

pub(super) async fn respond(mut f: Flow, first: GenerateResponse) -> Response {
    let route = f.route();
    super::metrics::FrontMetrics::series(&f.st.metrics.front.ttft, route)
        .observe(f.start.elapsed().as_secs_f64());
    let watch = f.live.has_stop_strings();
    let mut whole = GenerateResponse::named(f.live.id().to_string());
    let mut ended = Vec::new();
    // What the engine found in its prefix cache, from its last usage or its events
    // (`cached.rs`).
    let mut cached_tokens: Option<u64> = None;
    let mut next = Some(first);
    loop {
        let event = match next.take() {
            Some(e) => e,
            None => match f.events.next().await {
                Ok(Some(e)) => e,
                Ok(None) => {
                    f.guard.disarm();
                    break;
                }
                Err(e) => {
                    f.guard.fire("error");
                    return engine_error(&f.st, e);
                }
            },
        };
        Flow::note_engine_ends(&mut ended, &event);
        super::cached::note(&mut cached_tokens, &event);
        if watch {
            if let Err(e) = f.live.push(&f.model, &f.st.config.derender, event.clone()) {
                f.guard.fire("error");
                return ApiError::from(e).into_response();
            }
        }
        merge(&mut whole, event);
        if ended.len() as u32 >= f.n {
            f.guard.disarm();
            // The engine's usage event (when asked for) and `[DONE]` are next: read them
            // (briefly), for the usage and so the connection can be reused.
            let rest = async {
                while let Ok(Some(e)) = f.events.next().await {
                    super::cached::note(&mut cached_tokens, &e);
                }
            };
            let _ = tokio::time::timeout(Duration::from_millis(200), rest).await;
            break;
        }
        if watch && f.live.finished(f.n) {
            f.guard.fire("stop_string");
            break;
        }
    }
    let prompt_ids = f.live.prompt_ids().to_vec();
    let returns_ids = f.live.setting("return_token_ids") == Some(&Value::Bool(true));
    let ids: Vec<(u32, Vec<u32>)> = whole
        .choices
        .iter()
        .map(|c| {
            // Cut where the live stream ended the choice (a stop string), when it ran.
            let keep = f.live.choice_tokens(c.index).unwrap_or(c.ids().len());
            (c.index, c.ids()[..keep.min(c.ids().len())].to_vec())
        })
        .collect();
    // vLLM's chat serving reports reasoning tokens whenever a reasoning parser is in force.
    let reasoning = match f.shape.api() {
        None => f
            .live
            .whole_reasoning_tokens(&f.model, &f.st.config.derender, &ids),
        Some(_) => None,
    };
    let Flow {
        st,
        model,
        live,
        shape,
        continuation,
        echo,
        ..
    } = f;
    let prompt_logprobs = whole.prompt_logprobs.clone();
    let answer = match shape.api() {
        None => live.into_whole(&model, &st.config.derender, whole),
        Some(api) => live.into_whole_as(&model, &st.config.derender, whole, api),
    };
    let mut out = match answer {
        Ok(out) => out,
        Err(e) => return ApiError::from(e).into_response(),
    };
    if let Some(n) = cached_tokens {
        super::cached::add_to_answer(&shape, &mut out, n);
    }
    if let (Some(n), Some(usage)) = (reasoning, out.get_mut("usage")) {
        usage["completion_tokens_details"] = serde_json::json!({"reasoning_tokens": n});
    }
    if let Some(echo) = &echo {
        if let Err(e) = echo.apply(&model, &mut out, &prompt_ids, prompt_logprobs.as_ref()) {
            return ApiError::from(e).into_response();
        }
    }
    if let (Some(lp), super::Shape::Completion) = (&prompt_logprobs, &shape) {
        // vLLM's completion choices each carry the prompt's logprobs (chat's answer has
        // them once, from the derender).
        if let Some(choices) = out.get_mut("choices").and_then(Value::as_array_mut) {
            for c in choices {
                c["prompt_logprobs"] = lp.clone();
            }
        }
    }
    if returns_ids && shape.api().is_none() {
        // vLLM's `return_token_ids`: the prompt's IDs and each choice's, for RL and routers.
        out["prompt_token_ids"] = serde_json::json!(prompt_ids);
        if let Some(choices) = out.get_mut("choices").and_then(Value::as_array_mut) {
            for c in choices {
                let index = c.get("index").and_then(Value::as_u64).unwrap_or(0) as u32;
                if let Some((_, ids)) = ids.iter().find(|(i, _)| *i == index) {
                    c["token_ids"] = serde_json::json!(ids);
                }
            }
        }
    }
    if let Some(c) = continuation.filter(|_| shape.api().is_none()) {
        out["continuation"] = serde_json::json!(c);
    }
    if let Some(tokens) = out
        .pointer("/usage/completion_tokens")
        .and_then(Value::as_u64)
    {
        st.metrics.front.completion_tokens.inc_by(tokens);
    }
    axum::Json(out).into_response()
}

/// Adds one event to the whole output: each choice's IDs and logprobs appended, its
/// finish reason kept; the pass-through fields the engine sent last.
fn merge(whole: &mut GenerateResponse, event: GenerateResponse) {
    for c in event.choices {
        let at = match whole.choices.iter().position(|w| w.index == c.index) {
            Some(at) => at,
            None => {
                whole.choices.push(GeneratedChoice {
                    index: c.index,
                    token_ids: Some(Vec::new()),
                    finish_reason: None,
                    stop_reason: None,
                    logprobs: None,
                });
                whole.choices.len() - 1
            }
        };
        let w = &mut whole.choices[at];
        if let Some(ids) = c.token_ids {
            w.token_ids.get_or_insert_with(Vec::new).extend(ids);
        }
        if c.finish_reason.is_some() {
            w.finish_reason = c.finish_reason;
            w.stop_reason = c.stop_reason;
        }
        if let Some(lp) = c.logprobs.filter(|l| !l.is_null()) {
            append_logprobs(&mut w.logprobs, lp);
        }
    }
    whole.choices.sort_by_key(|c| c.index);
    if event.kv_transfer_params.is_some() {
        whole.kv_transfer_params = event.kv_transfer_params;
    }
    if event.metrics.is_some() {
        whole.metrics = event.metrics;
    }
    if whole.prompt_logprobs.is_none() {
        whole.prompt_logprobs = event.prompt_logprobs;
    }
}

/// `{"content": [..]}` entries appended to those so far.
fn append_logprobs(into: &mut Option<Value>, lp: Value) {
    let new = match lp {
        Value::Object(mut m) => match m.remove("content") {
            Some(Value::Array(a)) => a,
            _ => return,
        },
        _ => return,
    };
    let so_far = into.get_or_insert_with(|| serde_json::json!({"content": []}));
    if let Some(a) = so_far.get_mut("content").and_then(Value::as_array_mut) {
        a.extend(new);
    }
}
