//! The error a request can cause, whichever stage it fails in (parse, template, tokenize,
//! images, render, derender, hashing). Each maps to one HTTP status and OpenAI's error shape in
//! `server::error`; none panics. The stages' own errors (`TemplateLoadError`, `MediaError`,
//! `HashError`, `LoadError`, …) convert into it where a request meets them.
//!
//! A leaf: it imports nothing of the crate, so every stage may use it.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum RequestError {
    /// Malformed or contradictory input; `param` names the offending field (`messages[2].role`).
    #[error("{message}")]
    InvalidRequest {
        message: String,
        param: Option<String>,
    },
    /// What a stateless render tier cannot do (`previous_response_id`): a 400 whose type is
    /// OpenAI's `invalid_request_error`, as vLLM answers it.
    #[error("{message}")]
    Unsupported { message: String, param: String },
    #[error("The model `{0}` does not exist.")]
    ModelNotFound(String),
    /// The chat template rejected the input: its own `raise_exception`, or a type error while
    /// rendering (Jinja2 raises `TemplateError`/`TypeError` for the same inputs).
    #[error("{0}")]
    Template(String),
    #[error("chat template exceeded its instruction budget (--template-fuel)")]
    TemplateFuel,
    #[error(
        "This model's maximum context length is {max_model_len} tokens. However, your request has \
         {prompt_tokens} input tokens. Please reduce the length of the input messages."
    )]
    PromptTooLong {
        prompt_tokens: usize,
        max_model_len: u64,
    },
    /// The tokenizer failed on a valid string: a server-side fault.
    #[error("tokenizer error: {0}")]
    Tokenizer(String),
    /// A server-side fault that no input should cause.
    #[error("internal error: {0}")]
    Internal(String),
    /// The request went away (client gone, timeout) while it rendered on the blocking pool
    /// (see `render::cancel`); nobody reads this error.
    #[error("the request was cancelled")]
    Cancelled,
}

impl RequestError {
    pub fn invalid(param: impl Into<String>, message: impl Into<String>) -> Self {
        RequestError::InvalidRequest {
            message: message.into(),
            param: Some(param.into()),
        }
    }

    /// The error of a request nested in another under `field`: its `param` prefixed
    /// (`messages_request.tools[0].name`).
    pub fn nested_in(self, field: &str) -> Self {
        match self {
            RequestError::InvalidRequest { message, param } => RequestError::InvalidRequest {
                message,
                param: Some(param.map_or_else(|| field.to_string(), |p| format!("{field}.{p}"))),
            },
            RequestError::Unsupported { message, param } => RequestError::Unsupported {
                message,
                param: format!("{field}.{param}"),
            },
            other => other,
        }
    }

    pub fn param(&self) -> Option<&str> {
        match self {
            RequestError::InvalidRequest { param, .. } => param.as_deref(),
            RequestError::Unsupported { param, .. } => Some(param),
            RequestError::ModelNotFound(_) => Some("model"),
            RequestError::PromptTooLong { .. } => Some("messages"),
            _ => None,
        }
    }
}
