//! vLLM 0.33's `beam` parser on a chat render (`BeamParser._constrain_request`, run by the
//! render's `adjust_request` after the prompt is tokenized): every chat request, with or
//! without tools, gets the structural tag vLLM derives from the checkpoint's
//! `response_template` (`llm_render_parsers::BeamTemplate::constrain`) as its
//! `sampling_params.structured_outputs`, replacing the request's own constraint; or vLLM's
//! 400. A Responses request gets the same (vLLM sets `_parser_structured_outputs`, which its
//! `to_sampling_params` reads before `text.format`).

use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::{ChatRequest, SamplingParams};
use crate::render::parse_context::{effective_kwargs, tool_choice};
use crate::render::RenderOptions;
use llm_render_parsers::{BeamRequest, ParserSettings};
use serde_json::Value;

/// Applies `beam`'s constraint to `sampling` for a chat request rendered to `prompt`.
/// Returns whether the tag covers the output from its first token (vLLM's
/// `_grammar_from_parser`, which makes the render's `reasoning_ended` true).
pub fn constrain(
    opts: &RenderOptions,
    model: &Model,
    req: &ChatRequest,
    prompt: &[u32],
    sampling: &mut SamplingParams,
) -> Result<bool, RequestError> {
    let Some((reasoning_parser, tool_parser)) = super::super::parse_context::runs_beam(opts, model)
    else {
        return Ok(false);
    };
    // The startup check (`ParserArgs::check_model`) makes this absent only for a model
    // loaded without it.
    let Some(template) = model.beam_template.as_deref() else {
        return Err(RequestError::invalid(
            "model",
            "The beam parser requires `response_template` metadata in the tokenizer configuration",
        ));
    };
    let text = model
        .decode(prompt, false)
        .map_err(RequestError::Tokenizer)?;
    // The parser's constructor reads `enable_thinking` off the effective template kwargs
    // (`bool(kwargs.get("enable_thinking", True))`).
    let settings = ParserSettings::new(effective_kwargs(opts, req));
    let requires_reasoning =
        settings.get("enable_thinking").is_none() || settings.truthy("enable_thinking");
    let choice = tool_choice(req);
    let r = BeamRequest {
        tools: req.tools.as_deref().unwrap_or_default(),
        tool_choice: &choice,
        parallel_tool_calls: req.parallel_tool_calls,
        output: sampling.structured_outputs.as_ref(),
        requires_reasoning,
        include_reasoning: req.include_reasoning.unwrap_or(true),
        prompt: &text,
        reasoning_parser,
        tool_parser,
    };
    match template.constrain(&r) {
        Ok(None) => Ok(false),
        Ok(Some(tag)) => {
            sampling.structured_outputs = Some(super::params(
                "structural_tag",
                Value::String(tag.structural_tag),
            ));
            Ok(tag.message_start)
        }
        Err(refusal) => Err(RequestError::invalid(refusal.param, refusal.message)),
    }
}
