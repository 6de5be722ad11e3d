//! `POST /v1/responses/render`: an OpenAI Responses request → the chat request vLLM makes of
//! it (`protocol::responses`) → the chat render, with the request's own `request_id`.

use super::RenderOptions;
use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::responses::to_chat;
use crate::protocol::ChatRequest;
use serde_json::Value;

/// The chat request for a Responses body, validated as vLLM's `ResponsesRequest`.
pub fn responses_to_chat(
    _model: &Model,
    body: &Value,
    _opts: &RenderOptions,
) -> Result<ChatRequest, RequestError> {
    let chat = to_chat(body)?;
    ChatRequest::from_converted(&chat, crate::protocol::ConvertedFrom::Responses)
}
