//! The engine's logprobs → OpenAI's, as vLLM's derender resolves them.
//!
//! In: a choice's `logprobs` from `/inference/v1/generate`, `{"content": [entry, ..]}` with
//! entries in either of vLLM's wire forms:
//! * `{"token_id": 1234, "logprob": -0.5, "rank": 1, "top_logprobs": [{"token_id", "logprob",
//!   "rank"}, ..]}` (integer IDs, vLLM's current form);
//! * `{"token": "token_id:1234", "logprob": -0.5, "bytes": null, "top_logprobs": [{"token",
//!   "logprob", "bytes"}, ..]}` (placeholders, the older form; a token that is not a
//!   placeholder is kept as given, with `bytes: null`).
//!
//! Out, chat: `{"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token",
//! "logprob", "bytes"}]}]}`; completions: `{"tokens", "token_logprobs", "top_logprobs":
//! [{token: logprob} | null], "text_offset"}` with offsets in Unicode code points, as Python
//! counts them.
//!
//! A token's text is its decoding alone; one that ends in U+FFFD (a UTF-8 sequence split
//! across byte tokens) is decoded again with up to the 4 preceding sampled tokens as context,
//! and keeps what it adds past their complete text, or `""` when the sequence is still
//! unfinished (vLLM's `_correct_decoded_token`). `bytes` are the text's UTF-8. `top_logprobs`
//! are cut to the request's `top_logprobs` (chat); `rank` is dropped.

use crate::error::RequestError;
use crate::model::Model;
use serde_json::{json, Map, Value};

/// Preceding sampled tokens a split character may need: UTF-8 is at most 4 bytes.
pub const CONTEXT: usize = 4;

const REPLACEMENT: char = '\u{FFFD}';

/// One candidate of an entry: its ID when known (integer form or a placeholder), its
/// logprob, and a token text given as is.
struct Candidate {
    id: Option<u32>,
    logprob: Value,
    given: Option<String>,
}

fn candidate(v: &Value, at: &str) -> Result<Candidate, RequestError> {
    let bad = |what: &str| RequestError::invalid(at, format!("{at}: {what}"));
    let obj = v.as_object().ok_or_else(|| bad("must be an object"))?;
    let logprob = obj.get("logprob").cloned().unwrap_or(json!(-9999.0));
    if let Some(id) = obj.get("token_id") {
        let id = id
            .as_u64()
            .and_then(|i| u32::try_from(i).ok())
            .ok_or_else(|| bad("token_id must be a non-negative integer"))?;
        return Ok(Candidate {
            id: Some(id),
            logprob,
            given: None,
        });
    }
    let token = obj
        .get("token")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("needs `token_id` or `token`"))?;
    match token.strip_prefix("token_id:").map(str::parse::<u32>) {
        Some(Ok(id)) => Ok(Candidate {
            id: Some(id),
            logprob,
            given: None,
        }),
        _ => Ok(Candidate {
            id: None,
            logprob,
            given: Some(token.to_string()),
        }),
    }
}

fn decode(model: &Model, ids: &[u32]) -> Result<String, RequestError> {
    model.decode(ids, false).map_err(RequestError::Tokenizer)
}

/// vLLM's `_correct_decoded_token`: the text `id` adds after up to [`CONTEXT`] preceding
/// sampled tokens, or `""` while its character is still unfinished.
fn corrected(model: &Model, id: u32, context: &[u32]) -> Result<String, RequestError> {
    for n in 1..=context.len().min(CONTEXT) {
        let ctx = &context[context.len() - n..];
        let mut with = ctx.to_vec();
        with.push(id);
        let full = decode(model, &with)?;
        if full.ends_with(REPLACEMENT) {
            continue;
        }
        // Context tokens that are themselves part of the unfinished character belong to it.
        let mut clean_end = ctx.len();
        for j in (0..ctx.len()).rev() {
            if decode(model, &ctx[j..=j])?.ends_with(REPLACEMENT) {
                clean_end = j;
            } else {
                break;
            }
        }
        let prefix = decode(model, &ctx[..clean_end])?;
        if let Some(rest) = full.strip_prefix(prefix.as_str()) {
            return Ok(rest.to_string());
        }
        let common: usize = prefix
            .chars()
            .zip(full.chars())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a.len_utf8())
            .sum();
        return Ok(full[common..].to_string());
    }
    Ok(String::new())
}

/// A candidate's `{"token", "logprob", "bytes"}`.
fn resolved(model: &Model, c: &Candidate, context: &[u32]) -> Result<Value, RequestError> {
    let Some(id) = c.id else {
        return Ok(json!({"token": c.given, "logprob": c.logprob, "bytes": null}));
    };
    if !model.has_token(id) {
        return Ok(json!({"token": "", "logprob": c.logprob, "bytes": null}));
    }
    let mut text = decode(model, &[id])?;
    if text.ends_with(REPLACEMENT) {
        text = corrected(model, id, context)?;
    }
    let bytes: Vec<u8> = text.as_bytes().to_vec();
    Ok(json!({"token": text, "logprob": c.logprob, "bytes": bytes}))
}

/// Resolves a choice's `logprobs` into the chat form. `context` holds the last sampled IDs
/// before this chunk and is updated; `top` cuts each entry's `top_logprobs`.
pub fn resolve(
    model: &Model,
    logprobs: &Value,
    at: &str,
    context: &mut Vec<u32>,
    top: Option<usize>,
) -> Result<Value, RequestError> {
    let Some(content) = logprobs.get("content").filter(|c| !c.is_null()) else {
        return Ok(json!({"content": null}));
    };
    let entries = content
        .as_array()
        .ok_or_else(|| RequestError::invalid(at, format!("{at}.content must be a list")))?;
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let at = format!("{at}.content[{i}]");
        let sampled = candidate(e, &at)?;
        let mut entry = resolved(model, &sampled, context)?;
        let tops = e.get("top_logprobs").and_then(Value::as_array);
        let mut top_out = Vec::new();
        for (k, t) in tops.into_iter().flatten().enumerate() {
            if top.is_some_and(|n| k >= n) {
                break;
            }
            let c = candidate(t, &format!("{at}.top_logprobs[{k}]"))?;
            top_out.push(resolved(model, &c, context)?);
        }
        entry["top_logprobs"] = Value::Array(top_out);
        out.push(entry);
        if let Some(id) = sampled.id {
            context.push(id);
            if context.len() > CONTEXT {
                context.remove(0);
            }
        }
    }
    Ok(json!({"content": out}))
}

/// The chat form as completions' parallel lists; `offset` is the text offset the first
/// token starts at, advanced past the last (code points, as Python's `len`).
pub fn completion_form(chat: &Value, offset: &mut usize) -> Value {
    let Some(content) = chat["content"].as_array() else {
        return json!({"text_offset": [], "token_logprobs": [], "tokens": [], "top_logprobs": []});
    };
    let (mut tokens, mut token_logprobs, mut tops, mut offsets) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for e in content {
        offsets.push(*offset);
        let token = e["token"].as_str().unwrap_or_default();
        *offset += token.chars().count();
        tokens.push(e["token"].clone());
        token_logprobs.push(e["logprob"].clone());
        let top = e["top_logprobs"].as_array().filter(|t| !t.is_empty());
        tops.push(top.map_or(Value::Null, |t| {
            let map: Map<String, Value> = t
                .iter()
                .map(|c| {
                    (
                        c["token"].as_str().unwrap_or_default().to_string(),
                        c["logprob"].clone(),
                    )
                })
                .collect();
            Value::Object(map)
        }));
    }
    json!({"text_offset": offsets, "token_logprobs": token_logprobs, "tokens": tokens, "top_logprobs": tops})
}

/// vLLM's bounds on a choice's logprobs: no more entries than `max_model_len`, no entry with
/// more than `max_logprobs` alternatives (`None`: unbounded).
pub fn check_bounds(
    logprobs: &Value,
    at: &str,
    index: u32,
    max_model_len: Option<u64>,
    max_logprobs: Option<usize>,
) -> Result<(), RequestError> {
    let Some(content) = logprobs.get("content").and_then(Value::as_array) else {
        return Ok(());
    };
    if let Some(max) = max_model_len.filter(|m| content.len() as u64 > *m) {
        return Err(RequestError::invalid(
            format!("{at}.content"),
            format!(
                "logprobs.content length ({}) in choice {index} exceeds max_model_len ({max})",
                content.len()
            ),
        ));
    }
    if let Some(max) = max_logprobs {
        for (i, e) in content.iter().enumerate() {
            let n = e
                .get("top_logprobs")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            if n > max {
                return Err(RequestError::invalid(
                    format!("{at}.content[{i}].top_logprobs"),
                    format!(
                        "top_logprobs count ({n}) in choice {index} exceeds max_logprobs ({max})"
                    ),
                ));
            }
        }
    }
    Ok(())
}
