//! `POST /v1/completions/render`: a prompt (text or token IDs, one or many) → one
//! `GenerateRequest` per prompt, as vLLM's completion render returns a list.

use super::sampling::build_sampling_params;
use super::Timings;
use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::{request_id, CompletionRequest, GenerateRequest};
use serde_json::Value;
use std::time::Instant;

/// One prompt of a completion request.
enum Prompt<'a> {
    Text(&'a str),
    Ids(Vec<u32>),
}

fn token_ids(v: &[Value], param: &str) -> Result<Vec<u32>, RequestError> {
    v.iter()
        .map(|x| {
            x.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    RequestError::invalid(
                        param,
                        format!("{param} must hold token IDs (non-negative integers)"),
                    )
                })
        })
        .collect()
}

/// Reads `prompt`: a string, a list of strings, a list of ints, or a list of int lists.
fn prompts(prompt: &Value) -> Result<Vec<Prompt<'_>>, RequestError> {
    let bad = || {
        RequestError::invalid(
            "prompt",
            "prompt must be a string, a list of strings, a list of token IDs or a list of token-ID lists",
        )
    };
    match prompt {
        Value::String(s) => Ok(vec![Prompt::Text(s)]),
        Value::Array(items) if items.is_empty() => {
            Err(RequestError::invalid("prompt", "prompt must not be empty"))
        }
        Value::Array(items) => match &items[0] {
            Value::String(_) => items
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    x.as_str().map(Prompt::Text).ok_or_else(|| {
                        RequestError::invalid(
                            format!("prompt[{i}]"),
                            "prompt lists must not mix strings and other values",
                        )
                    })
                })
                .collect(),
            Value::Number(_) => Ok(vec![Prompt::Ids(token_ids(items, "prompt")?)]),
            Value::Array(_) => items
                .iter()
                .enumerate()
                .map(|(i, x)| match x {
                    Value::Array(ids) if !ids.is_empty() => {
                        Ok(Prompt::Ids(token_ids(ids, &format!("prompt[{i}]"))?))
                    }
                    _ => Err(RequestError::invalid(
                        format!("prompt[{i}]"),
                        format!("prompt[{i}] must be a non-empty list of token IDs"),
                    )),
                })
                .collect(),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

/// Renders every prompt of a completion request.
pub fn render_completion(
    model: &Model,
    req: &CompletionRequest,
) -> Result<(Vec<GenerateRequest>, Timings), RequestError> {
    req.validate()?;
    super::check_output_budget(model, req.max_tokens, "max_tokens")?;
    let base_id = req.request_id.clone().unwrap_or_else(|| request_id("cmpl"));
    let list = prompts(&req.prompt)?;
    let mut sampling = req.sampling();
    if sampling.echo && sampling.max_tokens == Some(0) {
        // vLLM's `echo_without_generation` (lm-eval's loglikelihood requests): the prompt's
        // logprobs are what is wanted, and the engine runs one step to get them.
        sampling.max_tokens = Some(1);
    }
    let many = list.len() > 1;
    let mut timings = Timings::default();
    let mut out = Vec::with_capacity(list.len());
    for (i, p) in list.into_iter().enumerate() {
        let p_text = match &p {
            Prompt::Text(text) => Some(*text),
            Prompt::Ids(_) => None,
        };
        let ids = match p {
            Prompt::Text(text) => {
                let t = Instant::now();
                let ids = model.encode(text, req.add_special_tokens)?;
                timings.tokenize += t.elapsed();
                ids
            }
            Prompt::Ids(ids) => {
                if let Some(bad) = ids.iter().find(|id| !model.has_token(**id)) {
                    return Err(RequestError::invalid(
                        "prompt",
                        format!("token ID {bad} is out of range for model `{}`", model.name),
                    ));
                }
                ids
            }
        };
        if ids.is_empty() {
            return Err(RequestError::invalid(
                "prompt",
                "No token_ids rendered: the prompt renders to no tokens",
            ));
        }
        let offsets = match (&p_text, req.return_token_offsets) {
            (Some(text), true) => model.token_offsets(text, &ids, req.add_special_tokens),
            _ => None,
        };
        let keep = super::truncate_prompt(
            model,
            ids.len(),
            req.truncate_prompt_tokens,
            req.truncation_side.as_deref(),
            req.max_tokens,
        )?;
        let token_offsets = offsets.map(|o| o[keep.clone()].to_vec());
        let ids = if keep.len() == ids.len() {
            ids
        } else {
            ids[keep].to_vec()
        };
        let sampling_params = build_sampling_params(model, &sampling, ids.len(), false)?;
        let block_hashes = req
            .return_block_hashes
            .as_ref()
            .map(|h| h.of_render(&ids, req.cache_salt.as_deref(), &model.name))
            .transpose()?;
        out.push(GenerateRequest {
            request_id: if many {
                format!("{base_id}-{i}")
            } else {
                base_id.clone()
            },
            token_ids: ids.into(),
            assistant_tokens_mask: None,
            token_offsets,
            features: None,
            content_parts: None,
            sampling_params,
            model: model.name.clone(),
            reasoning_ended: None,
            reasoning_parser_kwargs: None,
            return_token_ids: req.return_token_ids,
            output_mode: "tokens",
            parse_context: None,
            stream: req.stream,
            stream_options: req.stream_options.clone(),
            cache_salt: req.cache_salt.clone(),
            priority: req.priority,
            kv_transfer_params: req.kv_transfer_params.clone(),
            ec_transfer_params: req.ec_transfer_params.clone(),
            block_hashes,
            continuation: None,
        });
    }
    Ok((out, timings))
}
