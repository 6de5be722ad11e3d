//! vLLM's token-in/token-out API (`vllm/entrypoints/serve/disagg/`, what
//! `../shared/engines/vllm-recorded/` holds from a real engine):
//!
//! * `POST /inference/v1/generate` takes the render's `GenerateRequest` as it is; the
//!   engine names the request `generate-tokens-<request_id>`.
//! * A stream is `data: {"request_id", "choices": [{"index", "token_ids" (new ones),
//!   "finish_reason", "stop_reason", "logprobs"}], "usage"}` events, each choice in its own
//!   events when `n > 1`, then (asked for with `stream_options.include_usage`) one event
//!   with `"choices": []` and the usage, then `data: [DONE]`. A request with `prompt_logprobs` is sent
//!   with `stream: false` (only the whole answer carries them): one JSON object of the
//!   same shape, every choice's IDs at once, plus `prompt_logprobs`.
//! * `POST /inference/v1/abort_requests` `{"request_ids": ["generate-tokens-<id>"]}` aborts
//!   (a bare id answers 200 and aborts nothing); the stream then ends `finish_reason:
//!   "abort"`.
//! * `GET /health` answers 200 once the engine serves.

use super::wire::{error_event, Seen, Wire};
use super::EngineError;
use crate::protocol::fast_json::JsonChunks;
use crate::protocol::GenerateRequest;
use crate::protocol::GenerateResponse;

#[derive(Debug)]
pub struct Vllm;

/// The prefix vLLM's generate route puts on a request's id.
const ID_PREFIX: &str = "generate-tokens-";

impl Wire for Vllm {
    fn name(&self) -> &'static str {
        "vllm"
    }

    fn generate_path(&self) -> &'static str {
        "/inference/v1/generate"
    }

    fn generate_body(&self, mut g: GenerateRequest, model: &str) -> Result<Vec<u8>, EngineError> {
        g.model = model.to_string();
        // vLLM's stream carries no `prompt_logprobs` (`GenerateStreamResponseBase` has no
        // such field): a whole answer that asks for them is asked for whole, and answered
        // with one JSON object (`GenerateTokensResponse`) read as one event. (A streamed
        // one can only ask for `prompt_logprobs: 0`; it stays streamed.)
        let whole = g.sampling_params.prompt_logprobs.is_some() && !g.stream;
        g.stream = !whole;
        // Usage is counted here, from what the client is sent (`server/front/`); the
        // engine's last usage event is asked for only for what the engine alone knows, the
        // prompt tokens it found cached (`server/front/cached.rs`).
        g.stream_options = g.stream.then(|| serde_json::json!({"include_usage": true}));
        g.block_hashes = None;
        g.continuation = None;
        // The render's answer to its client; the engine has no use for it.
        g.assistant_tokens_mask = None;
        g.sampling_params.stop.clear();
        g.sampling_params.include_stop_str_in_output = false;
        // vLLM's `RequestOutputKind.DELTA`: each event carries only the new IDs
        // (`FINAL_ONLY` for a whole answer).
        g.sampling_params.output_kind = if whole { 2 } else { 1 };
        let mut out = JsonChunks::with_capacity(g.json_size_hint());
        g.into_json(&mut out)
            .map_err(|e| EngineError::BadEvent(format!("writing the engine request: {e}")))?;
        Ok(out.finish().concat())
    }

    fn engine_id(&self, request_id: &str) -> String {
        format!("{ID_PREFIX}{request_id}")
    }

    fn abort(&self, engine_id: &str) -> (&'static str, Vec<u8>) {
        let body = serde_json::json!({ "request_ids": [engine_id] });
        (
            "/inference/v1/abort_requests",
            body.to_string().into_bytes(),
        )
    }

    fn health_path(&self) -> &'static str {
        "/health"
    }

    fn prompt_logprobs(&self) -> bool {
        true
    }

    fn event(&self, data: &[u8], _: &mut Seen) -> Result<GenerateResponse, EngineError> {
        serde_json::from_slice(data).map_err(|e| error_event(data, e))
    }
}
