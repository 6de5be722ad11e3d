//! `truncate_prompt_tokens` / `truncation_side`: a prompt cut to its last (or first) N
//! tokens, as vLLM's `TokenizeParams` cuts it. `-1` means `max_model_len`, less one token held
//! back for the output unless the request asks for none (`max_tokens: 0`;
//! `max_truncation_tokens`); a bound past the context, or below -1, is a 400. vLLM's side is
//! `left` (keep the end) unless the request says `right`. A Responses request's
//! `truncation: "auto"` is `-1` (`ResponsesRequest.build_tok_params`).

use crate::error::RequestError;
use crate::model::Model;

/// The part of a prompt of `len` tokens that the request's truncation keeps (all of it
/// without one, or when it is already short enough).
pub fn truncate_prompt(
    model: &Model,
    len: usize,
    truncate_prompt_tokens: Option<i64>,
    truncation_side: Option<&str>,
    max_output_tokens: Option<u64>,
) -> Result<std::ops::Range<usize>, RequestError> {
    let right = match truncation_side {
        None | Some("left") => false,
        Some("right") => true,
        Some(_) => {
            return Err(RequestError::invalid(
                "truncation_side",
                "`truncation_side` must be either 'left' or 'right'.",
            ))
        }
    };
    let Some(n) = truncate_prompt_tokens else {
        return Ok(0..len);
    };
    let keep = match n {
        -1 => match model.max_model_len {
            Some(max) if max_output_tokens == Some(0) => max,
            Some(max) => max.saturating_sub(1),
            None => return Ok(0..len),
        },
        n if n < -1 => {
            return Err(RequestError::invalid(
                "truncate_prompt_tokens",
                "truncate_prompt_tokens: Input should be greater than or equal to -1",
            ))
        }
        n => {
            let n = n as u64;
            if let Some(max) = model.max_model_len.filter(|max| n > *max) {
                return Err(RequestError::invalid(
                    "truncate_prompt_tokens",
                    format!(
                        "truncate_prompt_tokens={n} cannot be greater than max_model_len = {max}. \
                         Please request a smaller truncation size."
                    ),
                ));
            }
            n
        }
    };
    let keep = usize::try_from(keep).unwrap_or(usize::MAX).min(len);
    Ok(if right { 0..keep } else { len - keep..len })
}

/// vLLM's `TokenizeParams` check, before anything renders: the output asked for may not
/// exceed the whole context. `param` names the field as the request spells it.
pub fn check_output_budget(
    model: &Model,
    max_output_tokens: Option<u64>,
    param: &str,
) -> Result<(), RequestError> {
    match (max_output_tokens, model.max_model_len) {
        (Some(n), Some(max)) if n > max => Err(RequestError::invalid(
            param,
            format!(
                "{param}={n} cannot be greater than max_model_len={max}. Please request fewer \
                 output tokens."
            ),
        )),
        _ => Ok(()),
    }
}
