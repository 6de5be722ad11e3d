use super::SamplingParams;
use serde::Serialize;
use serde_json::Value;

/// vLLM's `GenerateRequest`: what the render routes return and a token-in engine accepts.
///
/// `{"request_id": "chatcmpl-<uuid>", "token_ids": [..], "features": null, "sampling_params":
/// {..}, "model": "..", "stream": false, "stream_options": null, "cache_salt": null,
/// "priority": 0, "kv_transfer_params": null}`
#[derive(Debug, Clone, Serialize)]
pub struct GenerateRequest {
    pub request_id: String,
    pub token_ids: Vec<u32>,
    /// Multimodal features (images); `null` for text-only prompts.
    pub features: Option<Value>,
    pub sampling_params: SamplingParams,
    pub model: String,
    pub stream: bool,
    pub stream_options: Option<Value>,
    pub cache_salt: Option<String>,
    pub priority: i64,
    pub kv_transfer_params: Option<Value>,
    /// **(ext)** Present when the request asked for `return_block_hashes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_hashes: Option<Vec<Value>>,
}

/// One entry of `GET /v1/models` (OpenAI shape plus vLLM's `root` and `max_model_len`).
#[derive(Debug, Clone, Serialize)]
pub struct ModelCard {
    pub id: String,
    pub object: &'static str,
    pub created: u64,
    pub owned_by: &'static str,
    pub root: String,
    pub parent: Option<String>,
    pub max_model_len: Option<u64>,
    /// **(ext)** `fastokens` when the fast encoder proved equal at load, else `tokenizers`.
    pub tokenizer_backend: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModelList {
    pub object: &'static str,
    pub data: Vec<ModelCard>,
}
