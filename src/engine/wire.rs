//! What differs from one engine protocol to the next: one [`Wire`] per protocol, listed in
//! `engine::PROTOCOLS` (adding one is an entry there and its own file).

use super::EngineError;
use crate::protocol::GenerateRequest;
use crate::protocol::GenerateResponse;

/// One engine protocol.
pub trait Wire: Send + Sync + std::fmt::Debug {
    /// Its `--engine-protocol` name.
    fn name(&self) -> &'static str;
    /// The path a generate request is POSTed to.
    fn generate_path(&self) -> &'static str;
    /// The body that asks the engine to stream `g` under the engine's own `model` name.
    /// Stop strings are left out: llm-render applies them to the text it derenders.
    fn generate_body(&self, g: GenerateRequest, model: &str) -> Result<Vec<u8>, EngineError>;
    /// The id the engine knows request `request_id` by (what an abort names).
    fn engine_id(&self, request_id: &str) -> String;
    /// The path and body that abort the request the engine knows as `engine_id`.
    fn abort(&self, engine_id: &str) -> (&'static str, Vec<u8>);
    /// The path whose 200 means the engine is ready to serve.
    fn health_path(&self) -> &'static str;
    /// Whether the engine answers `sampling_params.prompt_logprobs` (a request that asks
    /// for them is refused otherwise, not answered without them).
    fn prompt_logprobs(&self) -> bool {
        false
    }
    /// The path that lists the engine's models in OpenAI's shape (`{"data": [{"id",
    /// "max_model_len"?}]}`): vLLM's and SGLang's `GET /v1/models`.
    fn models_path(&self) -> &'static str {
        "/v1/models"
    }
    /// One streamed event in vLLM's `GenerateStreamResponse` form (new IDs per choice);
    /// `seen` carries what the protocol needs from one event of a request to the next.
    fn event(&self, data: &[u8], seen: &mut Seen) -> Result<GenerateResponse, EngineError>;
}

/// What a protocol remembers between the events of one request.
#[derive(Debug, Default)]
pub struct Seen {
    /// IDs received so far per choice (SGLang may send each choice's IDs so far, not the
    /// new ones).
    pub ids: Vec<usize>,
    /// Whether the engine sends every ID so far (`Some(true)`) or the new ones, once an
    /// event has told.
    pub cumulative: Option<bool>,
}

/// An error event (`{"error": {"message", "code", …}}`) as the error it reports, or else
/// an event that could not be read.
pub(super) fn error_event(data: &[u8], why: impl std::fmt::Display) -> EngineError {
    let value: Option<serde_json::Value> = serde_json::from_slice(data).ok();
    match value.as_ref().and_then(|v| v.get("error")) {
        Some(err) => EngineError::Status {
            status: err
                .get("code")
                .and_then(serde_json::Value::as_u64)
                .filter(|c| (400..600).contains(c))
                .map_or(500, |c| c as u16),
            message: err
                .get("message")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("engine error")
                .to_string(),
            body: value.clone(),
        },
        None => {
            let head = String::from_utf8_lossy(&data[..data.len().min(200)]).into_owned();
            EngineError::BadEvent(format!("{why}: {head}"))
        }
    }
}
