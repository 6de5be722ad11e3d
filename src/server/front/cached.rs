//! The prompt tokens the engine found in its prefix cache, in the front door's usage, as
//! vLLM's own servers report them. The engine says how many in its last usage
//! (`usage.prompt_tokens_details.cached_tokens`, when vLLM runs with
//! `--enable-prompt-tokens-details`; the front door asks a vLLM engine's stream for its
//! usage for this), and each API carries the count its own way:
//!
//! * chat and completions: `usage.prompt_tokens_details: {"cached_tokens": N}` (vLLM's
//!   `UsageInfo`), on the whole answer and on a stream's last usage chunk;
//! * Messages: `usage.cache_read_input_tokens: N`, and `input_tokens` less N (Anthropic
//!   counts cached input apart; vLLM's `_build_anthropic_usage`), on the whole message and
//!   the stream's `message_delta`;
//! * Responses: `usage.input_tokens_details.cached_tokens: N`, on the whole response and
//!   the stream's last event.
//!
//! SGLang reports the count on every event (`meta_info.cached_tokens`, each sample its
//! own; the largest is taken), and the front door reads it there. SGLang's own OpenAI
//! server writes it only with `--enable-cache-report`; here it is always written, as
//! OpenAI's API always writes `prompt_tokens_details`.
//!
//! vLLM's derender has no such count (it counts tokens itself), so the derender routes do
//! not add one; nor does an engine that reports none.

use super::Shape;
use crate::derender::GenerateResponse;
use serde_json::{json, Value};

/// Keeps in `seen` the largest count of cached prompt tokens the engine has reported so
/// far, adding `event`'s ([`of_event`]; each SGLang sample reports its own).
pub(super) fn note(seen: &mut Option<u64>, event: &GenerateResponse) {
    if let Some(n) = of_event(event) {
        *seen = (*seen).max(Some(n));
    }
}

/// The cached prompt tokens an engine event reports: in its usage (vLLM), or beside it
/// (SGLang's `meta_info.cached_tokens`, on every event).
fn of_event(event: &GenerateResponse) -> Option<u64> {
    event.cached_tokens.or_else(|| {
        event
            .usage
            .as_ref()?
            .pointer("/prompt_tokens_details/cached_tokens")
            .and_then(Value::as_u64)
    })
}

/// Adds `n` cached tokens to the usage of a whole answer in `shape`.
pub(super) fn add_to_answer(shape: &Shape, out: &mut Value, n: u64) {
    match shape {
        Shape::Chat | Shape::Completion => add_openai(&mut out["usage"], n),
        Shape::Messages => add_anthropic(&mut out["usage"], n),
        Shape::Responses(_) => add_responses(&mut out["usage"], n),
    }
}

/// Adds `n` cached tokens to the stream events of a Messages or Responses answer that
/// carry the final usage (`message_delta`, `response.completed` / `response.incomplete`).
pub(super) fn add_to_events(events: &mut [Value], n: u64) {
    for e in events {
        match e["type"].as_str() {
            Some("message_delta") => add_anthropic(&mut e["usage"], n),
            Some("response.completed" | "response.incomplete") => {
                add_responses(&mut e["response"]["usage"], n)
            }
            _ => {}
        }
    }
}

/// OpenAI's chat and completions usage.
pub(super) fn add_openai(usage: &mut Value, n: u64) {
    if usage.is_object() {
        usage["prompt_tokens_details"] = json!({"cached_tokens": n});
    }
}

fn add_anthropic(usage: &mut Value, n: u64) {
    let Some(u) = usage.as_object_mut() else {
        return;
    };
    let input = u.get("input_tokens").and_then(Value::as_u64).unwrap_or(0);
    u.insert("input_tokens".into(), json!(input.saturating_sub(n)));
    u.insert("cache_read_input_tokens".into(), json!(n));
}

fn add_responses(usage: &mut Value, n: u64) {
    if usage["input_tokens_details"].is_object() {
        usage["input_tokens_details"]["cached_tokens"] = json!(n);
    }
}
