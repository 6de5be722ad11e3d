//! Wire types: OpenAI requests with vLLM's extras in, vLLM's `GenerateRequest` out.
//! Field names follow vLLM 0.33 (`vllm/entrypoints/openai/protocol.py`, `SamplingParams`)
//! so routers and trainers written against vLLM's render tier work unchanged.

pub mod anthropic;
mod chat_tool;
pub mod fast_json;
mod generate;
mod ids;
mod lax;
mod message;
mod metrics;
mod requests;
pub mod responses;
mod sampling;
mod text;
mod validate;

pub use generate::{
    Continuation, ContinuationDivergence, GenerateRequest, GenerateResponse, GeneratedChoice,
    ModelCard, ModelList,
};
pub use ids::{request_id, unix_now};
pub use message::{Field, Message};
pub use requests::{
    parse_json, parse_json_shared, ChatRequest, CompletionRequest, ContinueFrom, ConvertedFrom,
    DetokenizeRequest, DetokenizeResponse, TokenizeRequest, TokenizeResponse,
};
pub use sampling::{Reset, SamplingFields, SamplingParams, StopSpec};
pub use text::Text;
