//! A chat request for a Harmony model (gpt-oss): the prompt in that format
//! (`crate::template::harmony`), each text piece tokenized on its own.

use super::{ChatRendered, Timings};
use crate::error::RequestError;
use crate::model::{Harmony, Model};
use crate::protocol::ChatRequest;
use crate::template::harmony::{render, HarmonyInput};
use crate::template::TemplateEngine;
use std::sync::Arc;
use std::time::Instant;

/// The prompt and its token IDs. vLLM ignores `chat_template`, its kwargs,
/// `add_generation_prompt` and `continue_final_message` for these models, and so does this.
pub fn render_prompt(
    model: &Model,
    harmony: &Harmony,
    req: &ChatRequest,
) -> Result<ChatRendered, RequestError> {
    let t0 = Instant::now();
    let date = harmony.date();
    let pieces = render(&HarmonyInput {
        messages: &req.messages,
        tools: req.tools.as_deref(),
        reasoning_effort: req.reasoning_effort.as_deref(),
        start_date: &date,
        responses: req.harmony_responses.as_deref(),
    })?;
    super::cancel::check()?;
    let t1 = Instant::now();
    let (prompt, ids) = harmony.encode(&pieces, &model.tokenizer, |t| model.encode(t, false))?;
    Ok(ChatRendered {
        prompt: Arc::new(prompt),
        token_ids: Arc::new(ids),
        features: None,
        timings: Timings {
            template: t1 - t0,
            tokenize: t1.elapsed(),
            template_engine: Some(TemplateEngine::Harmony),
        },
        continuation: None,
        assistant_mask: None,
    })
}
