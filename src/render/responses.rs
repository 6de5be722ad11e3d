//! `POST /v1/responses/render`: an OpenAI Responses request → the chat request vLLM makes of
//! it (`protocol::responses`) → the chat render, with the request's own `request_id`.

use super::RenderOptions;
use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::responses::to_chat;
use crate::protocol::{parse_json, ChatRequest};
use serde_json::Value;

/// The chat request for a Responses body, validated as vLLM's `ResponsesRequest`.
pub fn responses_to_chat(
    _model: &Model,
    body: &Value,
    _opts: &RenderOptions,
) -> Result<ChatRequest, RequestError> {
    let chat = to_chat(body)?;
    let mut req: ChatRequest =
        parse_json(&serde_json::to_vec(&chat).map_err(|e| RequestError::Internal(e.to_string()))?)?;
    req.converted_from = crate::protocol::ConvertedFrom::Responses;
    Ok(req)
}
