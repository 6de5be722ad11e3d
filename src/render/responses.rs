//! `POST /v1/responses/render`: an OpenAI Responses request → the chat request vLLM makes of
//! it (`protocol::responses`) → the chat render, with the request's own `request_id`. For a
//! Harmony model (gpt-oss) the prompt comes from the body's items instead, as vLLM's
//! `OnlineRenderer._render_responses_with_harmony` builds it
//! (`template::harmony::responses`); the rest of the `GenerateRequest` from the chat request.

use super::RenderOptions;
use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::responses::to_chat;
use crate::protocol::ChatRequest;
use serde_json::Value;

/// The chat request for a Responses body, validated as vLLM's `ResponsesRequest`.
pub fn responses_to_chat(
    model: &Model,
    body: &Value,
    _opts: &RenderOptions,
) -> Result<ChatRequest, RequestError> {
    let chat = to_chat(body)?;
    let mut req = ChatRequest::from_converted(&chat, crate::protocol::ConvertedFrom::Responses)?;
    keep_for_harmony(model, body, &mut req);
    Ok(req)
}

/// For a Harmony model, keeps the body: its items make the prompt.
pub fn keep_for_harmony(model: &Model, body: &Value, req: &mut ChatRequest) {
    if model.harmony.is_some() {
        req.harmony_responses = Some(std::sync::Arc::new(body.clone()));
    }
}
