//! Requests → vLLM's `GenerateRequest`: the chat template's prompt (`crate::template`), its
//! token IDs (`crate::tokenize`), sampling parameters and image features.
//!
//! * `chat.rs`: `/v1/chat/completions/render`;
//! * `completion.rs`: `/v1/completions/render`;
//! * `bridge.rs`: `continue_from`, turn N on the exact tokens of turn N−1;
//! * `harmony.rs`: chats for gpt-oss, in its Harmony format rather than a template;
//! * `anthropic.rs` / `responses.rs`: `/v1/messages/render` and `/v1/responses/render`, as the
//!   chat requests vLLM makes of them;
//! * `sampling.rs`: vLLM's `SamplingParams` from the request and the model's defaults;
//! * `truncate.rs`: `truncate_prompt_tokens`;
//! * `multimodal/`: images in chats → placeholders, hashes, `kwargs_data` and tensors;
//! * `cancel.rs`: stopping a render whose request went away;
//! * `options.rs`: the server-wide switches.

pub mod anthropic;
mod bridge;
pub mod cancel;
pub mod chat;
pub mod completion;
mod harmony;
pub mod multimodal;
mod options;
mod parse_context;
pub mod responses;
pub mod sampling;
mod tool_choice;
mod truncate;

pub use bridge::common_prefix;
pub use chat::{generate_request, render_chat, render_chat_prompt, ChatRendered};
pub use completion::render_completion;
pub use multimodal::{fetch_request_media, FetchedMedia, TensorDtype};
pub use options::RenderOptions;
pub use truncate::{check_output_budget, truncate_prompt};

use crate::template::TemplateEngine;
use std::time::Duration;

/// Where a render's time went, for the metrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timings {
    pub template: Duration,
    pub tokenize: Duration,
    /// What rendered the chat template; `None` for renders without one (completions).
    pub template_engine: Option<TemplateEngine>,
}
