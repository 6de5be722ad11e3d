//! Errors a request can cause. Each maps to one HTTP status in `server::error`; none panics.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum RenderError {
    /// Malformed or contradictory input; `param` names the offending field (`messages[2].role`).
    #[error("{message}")]
    InvalidRequest {
        message: String,
        param: Option<String>,
    },
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

impl RenderError {
    pub fn invalid(param: impl Into<String>, message: impl Into<String>) -> Self {
        RenderError::InvalidRequest {
            message: message.into(),
            param: Some(param.into()),
        }
    }

    pub fn param(&self) -> Option<&str> {
        match self {
            RenderError::InvalidRequest { param, .. } => param.as_deref(),
            RenderError::ModelNotFound(_) => Some("model"),
            RenderError::PromptTooLong { .. } => Some("messages"),
            _ => None,
        }
    }

    /// Converts a minijinja error raised while rendering into a request error.
    pub fn from_template(err: minijinja::Error) -> Self {
        use crate::render::template_env::RAISED_PREFIX;
        if err.kind() == minijinja::ErrorKind::OutOfFuel {
            return RenderError::TemplateFuel;
        }
        let detail = err.detail().unwrap_or_default();
        if let Some(pos) = detail.find(RAISED_PREFIX) {
            return RenderError::Template(detail[pos..].to_string());
        }
        let mut msg = format!("TemplateError: {}", err.kind());
        if !detail.is_empty() {
            msg.push_str(": ");
            msg.push_str(detail);
        }
        if let Some(line) = err.line() {
            msg.push_str(&format!(" (chat template line {line})"));
        }
        RenderError::Template(msg)
    }
}

impl From<crate::hashing::HashError> for RenderError {
    fn from(e: crate::hashing::HashError) -> Self {
        RenderError::invalid(e.param(), e.to_string())
    }
}
