//! Generated token IDs → text → content, reasoning and tool calls.
//!
//! * `detok.rs`: the incremental detokenizer (UTF-8 safe; equal to `decode` at every split).
//! * `stop.rs`: stop strings, held back across chunks.
//! * `logprobs.rs`: the engine's logprobs (token IDs) → OpenAI's (token text and bytes).
//! * `session.rs`: one choice's pipeline and its resumable state.
//! * `state.rs`: the signed stream state carried by the client, and its cache.
//! * `vllm_state.rs`: `stream_state` on the wire (vLLM's object around the signed state).
//! * `request.rs`, `route.rs`, `respond.rs` / `stream.rs`: the derender routes' request, their
//!   entry, and their whole-output and streamed responses.
//! * `live.rs`: the sidecar's derender of an engine stream, its state in memory.
//! * `reasoning_count.rs`: reasoning tokens as vLLM counts them (usage details).
//! * `reshape.rs` with `messages.rs` / `responses/` **(ext)**: the Messages and Responses
//!   derender routes, the chat derender's output in those APIs' shapes.

mod detok;
mod live;
mod logprobs;
mod messages;
mod reasoning_count;
mod request;
mod reshape;
mod respond;
mod responses;
mod route;
mod session;
mod state;
mod stop;
mod stream;
mod vllm_state;

pub use detok::{DetokState, IncrementalDetokenizer};
pub use live::LiveStream;
pub use reasoning_count::ReasoningTally;
pub use request::{DerenderConfig, DerenderRequest, GenerateResponse, GeneratedChoice, Kind};
pub use reshape::{derender_as, Api};
pub use route::{check_named_parser_rule, derender};
pub use session::{ChoiceState, Delta, Options};
pub use state::{ApiStream, StateCodec, StreamState};
pub use stop::StopStrings;
