//! The derender routes' entry: a whole output (`respond.rs`) or one stream chunk
//! (`stream.rs`), after the checks both share.

use super::request::{DerenderConfig, DerenderRequest, Kind};
use super::respond::{check_bounds, check_ids, one_shot};
use crate::error::RequestError;
use crate::model::Model;
use serde_json::Value;

/// Derenders a request, streaming or not.
pub fn derender(
    model: &Model,
    req: &DerenderRequest,
    cfg: &DerenderConfig,
    kind: Kind,
) -> Result<Value, RequestError> {
    if kind == Kind::Chat {
        let field = req.original_field();
        super::request::check_reasoning_settings(cfg, model, req.original(kind), field)?;
    }
    if req.stream {
        let chunk = req.chunk()?;
        for (ci, c) in chunk.choices.iter().enumerate() {
            check_ids(model, "generate_chunk", ci, c.ids())?;
        }
        req.check_prompts(1, model.max_model_len)?;
        return super::stream::stream_chunk(model, req, cfg, kind, chunk);
    }
    if req.stream_state.is_some() {
        return Err(RequestError::invalid(
            "stream_state",
            "stream_state needs stream: true",
        ));
    }
    let (field, responses) = req.responses(kind)?;
    check_bounds(model, field, responses, cfg.max_logprobs)?;
    req.check_prompts(responses.len(), model.max_model_len)?;
    one_shot(model, req, cfg, kind, responses)
}

/// vLLM's rules for `/v1/chat/completions/derender` where a parser is configured
/// (`scale_out/derender/serving.py`): here, a parser set by name. Under `auto` the parsers
/// run with the request's defaults instead. The Messages and Responses derender routes
/// (ours) take their own request in place of `chat_request`.
pub fn check_named_parser_rule(
    req: &DerenderRequest,
    cfg: &DerenderConfig,
) -> Result<(), RequestError> {
    if !cfg.names_a_parser() {
        return Ok(());
    }
    if req.chat_request.is_none() {
        return Err(RequestError::invalid(
            "chat_request",
            "chat_request is required when a tool or reasoning parser is configured \
             because plain detokenization would leak raw parser markup into content.",
        ));
    }
    if req.stream && req.prompt_token_ids.is_none() {
        return Err(RequestError::invalid(
            "prompt_token_ids",
            "prompt_token_ids is required when a tool or reasoning parser is configured. \
             Without it parse_delta cannot tell whether the prompt left reasoning open \
             (e.g. a chat template that pre-opens <think>) and would misclassify \
             reasoning content as plain content.",
        ));
    }
    Ok(())
}
