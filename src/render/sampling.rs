//! Request sampling fields + the model's `generation_config.json` → vLLM `SamplingParams`.
//!
//! Precedence is vLLM's: a request value, else the generation-config default
//! (`ModelConfig.get_diff_sampling_param`), else `SamplingParams`' own default. Validation
//! mirrors `SamplingParams._verify_args`, so a request vLLM would reject is a 400 here.

use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::{Reset, SamplingFields, SamplingParams, StopSpec};

/// vLLM's `_SAMPLING_EPS`: below it, temperature means greedy decoding.
const SAMPLING_EPS: f64 = 1e-5;

/// vLLM's `VLLM_MAX_N_SEQUENCES` default: the most sequences one request may ask for.
const MAX_N: usize = 16384;

/// The message is built only on failure: formatting floats on every request for checks that
/// pass cost ~1 µs, a twentieth of a small render.
fn check(ok: bool, param: &str, message: impl FnOnce() -> String) -> Result<(), RequestError> {
    if ok {
        Ok(())
    } else {
        Err(RequestError::invalid(param, message()))
    }
}

/// Builds `SamplingParams` for a prompt of `prompt_len` tokens. `chat` selects how
/// `logprobs` is read (chat: bool + `top_logprobs`; completions: an int).
pub fn build_sampling_params(
    model: &Model,
    f: &SamplingFields,
    prompt_len: usize,
    chat: bool,
) -> Result<SamplingParams, RequestError> {
    let g = &model.generation;
    let max_tokens = max_tokens(model, f, prompt_len)?;
    let stop = match &f.stop {
        None => Vec::new(),
        Some(StopSpec::One(s)) => vec![s.clone()],
        Some(StopSpec::Many(v)) => v.clone(),
    };
    let logprobs = logprobs(f, chat)?;
    // vLLM's `to_sampling_params`: an echoed prompt comes with its logprobs, as many as the
    // output's (completions' `logprobs`, chat's `top_logprobs`).
    let prompt_logprobs = match f.prompt_logprobs {
        None if f.echo && chat => Some(f.top_logprobs.unwrap_or(0)),
        None if f.echo => logprobs,
        n => n,
    };
    let mut p = SamplingParams {
        n: f.n.unwrap_or(1),
        presence_penalty: f.presence_penalty.unwrap_or(0.0),
        frequency_penalty: f.frequency_penalty.unwrap_or(0.0),
        repetition_penalty: f.repetition_penalty.or(g.repetition_penalty).unwrap_or(1.0),
        temperature: f.temperature.or(g.temperature).unwrap_or(1.0),
        top_p: Reset::new(f.top_p.or(g.top_p).unwrap_or(1.0)),
        top_k: f.top_k.or(g.top_k).unwrap_or(0),
        min_p: Reset::new(f.min_p.or(g.min_p).unwrap_or(0.0)),
        seed: f.seed,
        stop,
        stop_token_ids: stop_token_ids(f),
        ignore_eos: f.ignore_eos.unwrap_or(false),
        max_tokens,
        min_tokens: f.min_tokens.unwrap_or(0),
        logprobs,
        prompt_logprobs,
        skip_special_tokens: f.skip_special_tokens.unwrap_or(true),
        spaces_between_special_tokens: f.spaces_between_special_tokens.unwrap_or(true),
        include_stop_str_in_output: f.include_stop_str_in_output.unwrap_or(false),
        structured_outputs: structured_outputs(f)?,
        thinking_token_budget: f.thinking_token_budget,
        logit_bias: logit_bias(f)?,
        allowed_token_ids: f.allowed_token_ids.clone(),
        bad_words: f.bad_words.clone().unwrap_or_default(),
        extra_args: f.vllm_xargs.clone().filter(|x| !x.is_empty()),
        output_kind: if f.stream { 1 } else { 2 },
        skip_clone: true,
        skip_reading_prefix_cache: prompt_logprobs.is_some(),
        output_text_buffer_length: None,
    };
    if !p.include_stop_str_in_output {
        p.output_text_buffer_length = p
            .stop
            .iter()
            .map(|s| s.chars().count())
            .max()
            .map(|n| n.saturating_sub(1))
            .filter(|n| *n > 0);
    }
    verify(&p, f.max_completion_tokens.or(f.max_tokens))?;
    if p.temperature < SAMPLING_EPS {
        // vLLM: greedy sampling ignores the truncation knobs.
        p.top_p = Reset::to_default(1.0);
        p.top_k = 0;
        p.min_p = Reset::to_default(0.0);
    }
    Ok(p)
}

/// The constraint kinds of vLLM's `StructuredOutputsParams`, of which exactly one is set.
const CONSTRAINTS: [&str; 6] = [
    "json",
    "regex",
    "choice",
    "grammar",
    "json_object",
    "structural_tag",
];

/// vLLM's `StructuredOutputsParams` with nothing set, every field in its order.
pub(super) fn structured_outputs_default() -> serde_json::Value {
    serde_json::json!({
        "json": null, "regex": null, "choice": null, "grammar": null, "json_object": null,
        "disable_any_whitespace": false, "disable_additional_properties": false,
        "whitespace_pattern": null, "structural_tag": null,
        "_backend": null, "_backend_was_auto": false,
    })
}

/// `sampling_params.structured_outputs` as vLLM's `structured_outputs_from_response_format`
/// builds it: the request's `structured_outputs`, with `response_format` laid over it
/// (`json_object` → `json_object: true`, `json_schema` → `json: <schema>`, `structural_tag`
/// → the format as a JSON string, written as Python's `json.dumps` writes it), then held to
/// exactly one constraint. Written with every field of vLLM's dataclass, its private
/// `_backend` ones included, as vLLM's render writes them.
fn structured_outputs(f: &SamplingFields) -> Result<Option<serde_json::Value>, RequestError> {
    use serde_json::{json, Value};
    let base = f.structured_outputs.as_ref().filter(|v| !v.is_null());
    let format = f.response_format.as_ref().filter(|v| !v.is_null());
    let overlay = match format.and_then(|r| r.get("type")).and_then(Value::as_str) {
        Some("json_object") => Some(("json_object", json!(true))),
        Some("json_schema") => Some((
            "json",
            format
                .and_then(|r| r.get("json_schema"))
                .and_then(|s| s.get("schema"))
                .cloned()
                .unwrap_or(Value::Null),
        )),
        Some("structural_tag") => {
            let mut text = String::new();
            if let Some(r) = format {
                llm_render_parsers::pyjson::write_json(&mut text, r);
            }
            Some(("structural_tag", Value::String(text)))
        }
        _ => None,
    };
    if base.is_none() && overlay.is_none() {
        return Ok(None);
    }
    let mut out = structured_outputs_default();
    if let Some(base) = base {
        let Some(obj) = base.as_object() else {
            return Err(RequestError::invalid(
                "structured_outputs",
                "structured_outputs must be an object",
            ));
        };
        for (k, v) in obj {
            if out.get(k).is_none() || k.starts_with('_') {
                return Err(RequestError::invalid(
                    format!("structured_outputs.{k}"),
                    format!("structured_outputs has no field `{k}`"),
                ));
            }
            out[k] = v.clone();
        }
    }
    if let Some((k, v)) = overlay {
        out[k] = v;
    }
    let set = CONSTRAINTS
        .iter()
        .filter(|k| !out[**k].is_null() && out[**k] != json!(false))
        .count();
    if set != 1 {
        let message = if set == 0 {
            "You must use one kind of structured outputs constraint but none are specified"
        } else {
            "You can only use one kind of structured outputs constraint but multiple are specified"
        };
        return Err(RequestError::invalid("structured_outputs", message));
    }
    Ok(Some(out))
}

/// vLLM's `get_max_tokens`: the smallest of the room left in the context, the request's
/// and the generation-config default. A prompt that fills the context is refused.
fn max_tokens(
    model: &Model,
    f: &SamplingFields,
    prompt_len: usize,
) -> Result<Option<u64>, RequestError> {
    if let Some(max) = model.max_model_len {
        if prompt_len as u64 >= max {
            return Err(RequestError::PromptTooLong {
                prompt_tokens: prompt_len,
                max_model_len: max,
            });
        }
    }
    let room = model.max_model_len.map(|m| m - prompt_len as u64);
    let requested = f.max_completion_tokens.or(f.max_tokens);
    Ok([room, requested, model.generation.max_new_tokens]
        .into_iter()
        .flatten()
        .min())
}

/// `logprobs` as vLLM reads it: chat requests send a boolean and `top_logprobs`,
/// completions the number itself.
fn logprobs(f: &SamplingFields, chat: bool) -> Result<Option<i64>, RequestError> {
    match &f.logprobs {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Bool(b)) if chat => Ok(b.then_some(f.top_logprobs.unwrap_or(0))),
        // pydantic's lax `int`: a float without a fraction is that integer.
        Some(v) if !chat => match v.as_i64().or_else(|| {
            v.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                .map(|f| f as i64)
        }) {
            Some(n) if n >= -1 => Ok(Some(n)),
            Some(_) => Err(RequestError::invalid(
                "logprobs",
                "`logprobs` must be a positive value or -1.",
            )),
            None => Err(RequestError::invalid(
                "logprobs",
                "`logprobs` must be an integer.",
            )),
        },
        Some(_) => Err(RequestError::invalid(
            "logprobs",
            "logprobs must be a boolean",
        )),
    }
}

/// The model's EOS ids from `generation_config.json` plus the request's own, without
/// duplicates (docs/api.md, "GenerateRequest").
/// The request's own stop tokens, as vLLM's render writes them: the model's EOS ids are
/// added by the engine (`update_from_generation_config`), not here.
fn stop_token_ids(f: &SamplingFields) -> Vec<u32> {
    f.stop_token_ids.clone().unwrap_or_default()
}

/// `logit_bias`: token IDs (as strings) → biases, written as floats; a key that is not an
/// integer, or a value that is not a number, is a 400.
fn logit_bias(
    f: &SamplingFields,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>, RequestError> {
    let Some(bias) = f.logit_bias.as_ref() else {
        return Ok(None);
    };
    let mut out = serde_json::Map::with_capacity(bias.len());
    for (k, v) in bias {
        if k.trim().parse::<i64>().is_err() {
            return Err(RequestError::invalid(
                "logit_bias",
                format!("logit_bias keys must be token IDs, got {k:?}"),
            ));
        }
        let x = v.as_f64().ok_or_else(|| {
            RequestError::invalid(
                format!("logit_bias.{k}"),
                format!("logit_bias values must be numbers, got {v}"),
            )
        })?;
        out.insert(k.clone(), serde_json::json!(x));
    }
    Ok(Some(out))
}

/// vLLM's `SamplingParams._verify_args`: what it refuses is a 400 naming the field.
/// `requested` is the request's own `max_tokens` (or `max_completion_tokens`).
fn verify(p: &SamplingParams, requested: Option<u64>) -> Result<(), RequestError> {
    check(p.n >= 1, "n", || {
        format!("n must be at least 1, got {}", p.n)
    })?;
    check(p.n as usize <= MAX_N, "n", || {
        format!(
            "n must be at most {MAX_N}, got {}. To increase this limit, set the \
             VLLM_MAX_N_SEQUENCES environment variable.",
            p.n
        )
    })?;
    for (name, v) in [
        ("presence_penalty", p.presence_penalty),
        ("frequency_penalty", p.frequency_penalty),
    ] {
        check((-2.0..=2.0).contains(&v), name, || {
            format!("{name} must be in [-2, 2], got {v}")
        })?;
    }
    check(
        p.repetition_penalty > 0.0 && p.repetition_penalty.is_finite(),
        "repetition_penalty",
        || {
            format!(
                "repetition_penalty must be greater than zero, got {}",
                p.repetition_penalty
            )
        },
    )?;
    check(
        p.temperature >= 0.0 && p.temperature.is_finite(),
        "temperature",
        || format!("temperature must be non-negative, got {}", p.temperature),
    )?;
    check(p.temperature <= 2.0, "temperature", || {
        format!("temperature must be in [0, 2], got {}.", p.temperature)
    })?;
    check(p.temperature >= SAMPLING_EPS || p.n == 1, "n", || {
        format!("n must be 1 when using greedy sampling, got {}.", p.n)
    })?;
    check(p.top_p.value > 0.0 && p.top_p.value <= 1.0, "top_p", || {
        format!("top_p must be in (0, 1], got {}", p.top_p.value)
    })?;
    check(p.top_k >= -1, "top_k", || {
        format!(
            "top_k must be -1 (disable), 0 (disable) or at least 1, got {}",
            p.top_k
        )
    })?;
    check((0.0..=1.0).contains(&p.min_p.value), "min_p", || {
        format!("min_p must be in [0, 1], got {}", p.min_p.value)
    })?;
    if let Some(max) = requested {
        check(max >= 1, "max_tokens", || {
            format!("max_tokens must be at least 1, got {max}")
        })?;
    }
    if let Some(max) = p.max_tokens {
        check(p.min_tokens <= max, "min_tokens", || {
            format!(
                "min_tokens must be less than or equal to max_tokens={max}, got {}",
                p.min_tokens
            )
        })?;
    }
    check(!p.stop.iter().any(String::is_empty), "stop", || {
        "stop cannot contain an empty string".into()
    })
}
