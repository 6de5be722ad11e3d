//! Errors in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`, with the
//! HTTP status in `code` as vLLM writes it.

use crate::error::RenderError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub param: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            param: None,
        }
    }

    /// vLLM's error type names (`BadRequestError`, `NotFoundError`, …).
    fn type_name(&self) -> &'static str {
        match self.status {
            StatusCode::BAD_REQUEST => "BadRequestError",
            StatusCode::NOT_FOUND => "NotFoundError",
            StatusCode::METHOD_NOT_ALLOWED => "MethodNotAllowedError",
            StatusCode::PAYLOAD_TOO_LARGE => "RequestTooLargeError",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "UnsupportedMediaTypeError",
            StatusCode::SERVICE_UNAVAILABLE => "ServiceUnavailableError",
            StatusCode::GATEWAY_TIMEOUT => "TimeoutError",
            s if s.is_client_error() => "BadRequestError",
            _ => "InternalServerError",
        }
    }
}

impl From<RenderError> for ApiError {
    fn from(e: RenderError) -> Self {
        let status = match &e {
            RenderError::ModelNotFound(_) => StatusCode::NOT_FOUND,
            RenderError::Tokenizer(_) | RenderError::Internal(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
            // nginx's "client closed request"; only the metrics see it.
            RenderError::Cancelled => {
                StatusCode::from_u16(499).unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
            }
            RenderError::InvalidRequest { .. }
            | RenderError::Template(_)
            | RenderError::TemplateFuel
            | RenderError::PromptTooLong { .. } => StatusCode::BAD_REQUEST,
        };
        ApiError {
            status,
            param: e.param().map(str::to_string),
            message: e.to_string(),
        }
    }
}

impl ApiError {
    /// The JSON body: `{"error": {"message", "type", "param", "code"}}`.
    pub fn body(&self) -> serde_json::Value {
        json!({
            "error": {
                "message": self.message,
                "type": self.type_name(),
                "param": self.param,
                "code": self.status.as_u16(),
            }
        })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, axum::Json(self.body())).into_response()
    }
}
