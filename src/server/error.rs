//! Errors in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`, with the
//! HTTP status in `code` as vLLM writes it.

use crate::error::RequestError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub param: Option<String>,
    /// The error's `type` where it is not the status's usual one.
    pub kind: Option<&'static str>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            param: None,
            kind: None,
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

impl From<RequestError> for ApiError {
    fn from(e: RequestError) -> Self {
        let status = match &e {
            RequestError::ModelNotFound(_) => StatusCode::NOT_FOUND,
            RequestError::Tokenizer(_) | RequestError::Internal(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
            // nginx's "client closed request"; only the metrics see it.
            RequestError::Cancelled => {
                StatusCode::from_u16(499).unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
            }
            RequestError::InvalidRequest { .. }
            | RequestError::Unsupported { .. }
            | RequestError::Template(_)
            | RequestError::TemplateFuel
            | RequestError::PromptTooLong { .. } => StatusCode::BAD_REQUEST,
        };
        ApiError {
            status,
            param: e.param().map(str::to_string),
            kind: matches!(e, RequestError::Unsupported { .. }).then_some("invalid_request_error"),
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
                "type": self.kind.unwrap_or_else(|| self.type_name()),
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
