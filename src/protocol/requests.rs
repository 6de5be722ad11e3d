use super::sampling::with_sampling_fields;
use crate::error::RequestError;
use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

fn yes() -> bool {
    true
}

/// Parses a JSON body into `T`. Syntax errors and type errors both become a 400 whose
/// message and `param` name the field (`messages[1].content`).
///
/// The happy path is a plain `serde_json` parse; only a body that fails is parsed again
/// with path tracking, which costs a few percent on every field of a large request.
pub fn parse_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, RequestError> {
    // One SIMD pass over the whole body, then `from_str`, which skips the check `from_slice`
    // makes on every string with the standard library's validator. Invalid UTF-8 goes
    // through `from_slice`, so its error is serde_json's own.
    let parsed = match simdutf8::basic::from_utf8(body) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(body),
    };
    match parsed {
        Ok(v) => Ok(v),
        Err(_) => Err(explain_json_error::<T>(body)),
    }
}

/// [`parse_json`] for a body the server holds as [`Bytes`]: message strings without escapes
/// become slices of it instead of copies (see `protocol::text`).
pub fn parse_json_shared<T: DeserializeOwned>(body: &Bytes) -> Result<T, RequestError> {
    super::text::parse_shared(body, parse_json)
}

/// The field-naming error for a body `T` cannot be parsed from.
fn explain_json_error<T: DeserializeOwned>(body: &[u8]) -> RequestError {
    let mut de = serde_json::Deserializer::from_slice(body);
    let err = match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Ok(_) => match de.end() {
            Ok(()) => {
                return RequestError::InvalidRequest {
                    message: "invalid JSON body".into(),
                    param: None,
                }
            }
            Err(e) => {
                return RequestError::InvalidRequest {
                    message: format!("invalid JSON body: {e}"),
                    param: None,
                }
            }
        },
        Err(e) => e,
    };
    let path = err.path().to_string();
    let inner = err.into_inner();
    // serde reads a struct from an array too, so `[1]` would be blamed on `[0]`: say what
    // the body is instead.
    if let Some(kind) = top_level_not_object(body) {
        return RequestError::InvalidRequest {
            message: format!("the request body must be a JSON object, got {kind}"),
            param: None,
        };
    }
    // A required field left out: name it (`messages`, or `x.messages` below the top).
    let text = inner.to_string();
    if let Some(field) = text
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next())
    {
        let param = if path == "." {
            field.to_string()
        } else {
            format!("{path}.{field}")
        };
        return RequestError::InvalidRequest {
            message: format!("{param}: Field required"),
            param: Some(param),
        };
    }
    if inner.is_syntax() || inner.is_eof() || path == "." {
        RequestError::InvalidRequest {
            message: format!("invalid JSON body: {inner}"),
            param: None,
        }
    } else {
        RequestError::InvalidRequest {
            message: format!("{path}: {}", in_words(&text)),
            param: Some(path),
        }
    }
}

/// What the body's top-level value is, when it parses and is not an object.
fn top_level_not_object(body: &[u8]) -> Option<&'static str> {
    match serde_json::from_slice::<Value>(body).ok()? {
        Value::Object(_) => None,
        Value::Array(_) => Some("an array"),
        Value::String(_) => Some("a string"),
        Value::Number(_) => Some("a number"),
        Value::Bool(_) => Some("a boolean"),
        Value::Null => Some("null"),
    }
}

/// serde's type error in words a client can act on: `invalid type: string "x", expected
/// u32 at line 1 column 9` → `expected a non-negative integer, got the string "x"`. The
/// Rust type names serde puts in `expected` (`u64`, `i32`, `f64`, `struct X`, `a
/// sequence`, `a map`) become JSON's; the position is dropped (`param` names the field).
fn in_words(serde_message: &str) -> String {
    let text = match serde_message.rfind(" at line ") {
        Some(at) => &serde_message[..at],
        None => serde_message,
    };
    let (got, expected) = if let Some(rest) = text.strip_prefix("invalid type: ") {
        match rest.split_once(", expected ") {
            Some((got, exp)) => (got.to_string(), exp),
            None => return text.to_string(),
        }
    } else if let Some(rest) = text.strip_prefix("invalid value: ") {
        match rest.split_once(", expected ") {
            Some((got, exp)) => (got.to_string(), exp),
            None => return text.to_string(),
        }
    } else {
        return text.to_string();
    };
    let expected = match expected.trim() {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative integer".to_string(),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a boolean" | "bool" => "true or false".to_string(),
        "a sequence" => "an array".to_string(),
        "a map" => "an object".to_string(),
        e if e.starts_with("struct ") || e.starts_with("a map ") => "an object".to_string(),
        e if e.starts_with("a borrowed string") => "a string".to_string(),
        e => e.to_string(),
    };
    // `integer `70000``, `string "x"`, `floating point `1.5``: the value as JSON shows it
    // (only the leading word is serde's; the rest is the client's value).
    let got = [
        ("floating point ", "the number "),
        ("integer ", "the integer "),
        ("string ", "the string "),
        ("boolean ", ""),
    ]
    .iter()
    .find_map(|(word, ours)| got.strip_prefix(word).map(|v| format!("{ours}{v}")))
    .unwrap_or(got);
    let got = match got.strip_suffix('`') {
        Some(v) => v.replacen('`', "", 1),
        None => got,
    };
    let got = match got.as_str() {
        "sequence" => "an array".to_string(),
        "map" => "an object".to_string(),
        "unit value" => "null".to_string(),
        _ => got,
    };
    format!("expected {expected}, got {got}")
}

impl ChatRequest {
    /// The chat request another API's body was converted to (`render::anthropic`,
    /// `render::responses`), read as a client's chat request is.
    pub fn from_converted(
        chat: &serde_json::Map<String, serde_json::Value>,
        from: ConvertedFrom,
    ) -> Result<Self, RequestError> {
        let bytes = serde_json::to_vec(chat).map_err(|e| RequestError::Internal(e.to_string()))?;
        let mut req: ChatRequest = parse_json(&bytes)?;
        req.converted_from = from;
        Ok(req)
    }
}

/// The API a chat request was converted from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ConvertedFrom {
    #[default]
    Chat,
    /// Anthropic Messages: no `tool_choice` without tools (vLLM's converter sets none).
    Messages,
    /// OpenAI Responses: no `reasoning_ended` or `parse_context` in vLLM's render.
    Responses,
}

with_sampling_fields! {
max_tokens_default = "super::sampling::no_max_tokens";
/// `POST /v1/chat/completions/render`: an OpenAI chat request plus vLLM's extras.
/// The sampling fields are appended by `with_sampling_fields!`.
    #[derive(Debug, Clone, Deserialize)]
    pub struct ChatRequest {
    #[serde(default)]
    pub model: Option<String>,
    /// Each message is kept as the client sent it (key order included) and converted for
    /// the template in `template::messages`.
    pub messages: Vec<super::Message>,
    /// Each tool's `function.strict` read as pydantic reads a `bool` at parse time.
    #[serde(default, deserialize_with = "super::lax::lax_tools")]
    pub tools: Option<Vec<Map<String, Value>>>,
    #[serde(default)]
    pub tool_choice: Option<Value>,
    #[serde(default)]
    pub documents: Option<Vec<Map<String, Value>>>,
    #[serde(default = "yes")]
    pub add_generation_prompt: bool,
    #[serde(default)]
    pub continue_final_message: bool,
    /// A per-request template; honoured only with `--trust-request-chat-template`.
    #[serde(default)]
    pub chat_template: Option<String>,
    #[serde(default)]
    pub chat_template_kwargs: Option<Map<String, Value>>,
    #[serde(default)]
    pub request_id: Option<String>,
    /// vLLM's per-request processor options. Only `output_dtype` (**ext**: `float32` or
    /// `bfloat16` for `mm_tensors`) is accepted so far; other keys are refused rather
    /// than silently ignored, since vLLM would process (and hash) differently.
    #[serde(default)]
    pub mm_processor_kwargs: Option<serde_json::Map<String, Value>>,
    /// **(ext)** Adds `block_hashes` of the rendered token IDs to the response.
    #[serde(default)]
    pub return_block_hashes: Option<crate::hashing::HashRequest>,
    /// Refused (400), as vLLM's render refuses it.
    #[serde(default)]
    pub use_beam_search: bool,
    /// OpenAI's reasoning effort: passed to the template as `reasoning_effort`, and, unless
    /// `chat_template_kwargs` sets it, `enable_thinking` = (effort != `none`), as vLLM's
    /// `build_chat_params`.
    #[serde(default)]
    pub reasoning_effort: Option<String>,
    /// vLLM's `include_reasoning` (default true): false has the engine constrain output from
    /// the first token (`reasoning_ended: true`) and derender drop the reasoning.
    #[serde(default)]
    pub include_reasoning: Option<bool>,
    /// OpenAI's `parallel_tool_calls` (default true), passed on in `parse_context`.
    #[serde(default)]
    pub parallel_tool_calls: Option<bool>,
    /// The API the request was converted from (`/v1/messages/render`,
    /// `/v1/responses/render`), where vLLM's render differs from chat's.
    #[serde(skip)]
    pub converted_from: ConvertedFrom,
    /// A Responses body converted for a Harmony model (gpt-oss): its prompt is built from
    /// the body's items, as vLLM's Responses path builds it, not from `messages`.
    #[serde(skip)]
    pub harmony_responses: Option<std::sync::Arc<Value>>,
    /// vLLM's `mm_payload`: `tensors` (default) or `none` (no `kwargs_data`/`mm_metadata`:
    /// hashes and placeholders only, not for `/generate`).
    #[serde(default)]
    pub mm_payload: Option<String>,
    /// vLLM's deprecated alias: `false` means `mm_payload: "none"` when that is not given.
    #[serde(default)]
    pub return_mm_kwargs: Option<bool>,
    /// **(ext)** The previous turn's tokens: the render starts the prompt with them instead
    /// of the template's rendering of that turn (`render::bridge`).
    #[serde(default)]
    pub continue_from: Option<ContinueFrom>,
    /// vLLM main's `return_assistant_tokens_mask`: the render answers
    /// `assistant_tokens_mask`, transformers' mask of the tokens inside the template's
    /// `{% generation %}` blocks (`null` for a template without them).
    #[serde(default)]
    pub return_assistant_tokens_mask: bool,
    /// vLLM main's `skip_pixel_values`: `features.raw_images` carries each image's source
    /// bytes (base64, positional with `mm_hashes`) in place of `kwargs_data`, `mm_metadata`
    /// and `mm_tensors`; tokens, hashes and placeholders are unchanged.
    #[serde(default)]
    pub skip_pixel_values: bool,
}
}

/// **(ext)** `continue_from`: the previous turn's prompt as it was sent to the engine and the
/// IDs the engine generated for it (with or without the final stop token).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContinueFrom {
    pub prompt_token_ids: Vec<u32>,
    pub output_token_ids: Vec<u32>,
}

impl ChatRequest {
    /// Whether the render leaves the pixels out (`mm_payload: "none"`, or
    /// `return_mm_kwargs: false` without `mm_payload`), as vLLM's alias rule reads them.
    pub fn no_mm_payload(&self) -> bool {
        match self.mm_payload.as_deref() {
            Some(p) => p == "none",
            None => self.return_mm_kwargs == Some(false),
        }
    }
}

with_sampling_fields! {
max_tokens_default = "super::sampling::sixteen_max_tokens";
/// `POST /v1/completions/render`: `prompt` is a string, a list of strings, a list of token
/// IDs, or a list of token-ID lists.
#[derive(Debug, Clone, Deserialize)]
    pub struct CompletionRequest {
    #[serde(default)]
    pub model: Option<String>,
    pub prompt: Value,
    /// vLLM's default for completions: the tokenizer's post-processor adds BOS where it does.
    #[serde(default = "yes")]
    pub add_special_tokens: bool,
    #[serde(default)]
    pub request_id: Option<String>,
    /// **(ext)** Adds `block_hashes` of each prompt's token IDs to its response.
    #[serde(default)]
    pub return_block_hashes: Option<crate::hashing::HashRequest>,
    /// Refused (400), as vLLM's render refuses it.
    #[serde(default)]
    pub suffix: Option<Value>,
}
}

/// `POST /tokenize` (vLLM): either `prompt` (completion form) or `messages` (chat form).
#[derive(Debug, Clone, Deserialize)]
pub struct TokenizeRequest {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub messages: Option<Vec<super::Message>>,
    /// Defaults: `true` for `prompt`, `false` for `messages` (the template writes BOS).
    #[serde(default)]
    pub add_special_tokens: Option<bool>,
    #[serde(default)]
    pub return_token_strs: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct TokenizeResponse {
    pub count: usize,
    pub max_model_len: Option<u64>,
    pub tokens: Vec<u32>,
    pub token_strs: Option<Vec<String>>,
}

/// `POST /detokenize` (vLLM): `{"model", "tokens": [ids]}` → `{"prompt": text}`.
#[derive(Debug, Clone, Deserialize)]
pub struct DetokenizeRequest {
    #[serde(default)]
    pub model: Option<String>,
    pub tokens: Vec<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DetokenizeResponse {
    pub prompt: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: &str) -> (String, Option<String>) {
        match parse_json::<ChatRequest>(body.as_bytes()) {
            Err(RequestError::InvalidRequest { message, param }) => (message, param),
            other => panic!("{body}: {other:?}"),
        }
    }

    #[test]
    fn type_errors_say_what_was_expected_in_words() {
        let (m, p) = refused(r#"{"model": "m", "messages": [], "max_tokens": "ten"}"#);
        assert_eq!(p.as_deref(), Some("max_tokens"));
        assert_eq!(
            m,
            r#"max_tokens: expected a non-negative integer, got the string "ten""#
        );
        let (m, _) = refused(r#"{"model": "m", "messages": [], "max_tokens": -3}"#);
        assert_eq!(
            m,
            "max_tokens: expected a non-negative integer, got the integer -3"
        );
        let (m, _) = refused(r#"{"model": "m", "messages": [], "n": 1.5}"#);
        assert!(
            m.starts_with("n: expected a non-negative integer, got the number 1.5"),
            "{m}"
        );
        for body in ["[1]", "[{\"model\": \"m\"}]", "\"hi\"", "3"] {
            let (m, p) = refused(body);
            assert!(
                m.starts_with("the request body must be a JSON object, got"),
                "{m}"
            );
            assert_eq!(p, None);
        }
        assert!(!refused(r#"{"messages": 5}"#).0.contains("line"));
        // Only serde's word is rewritten, never the client's value.
        let (m, _) = refused(r#"{"model": "m", "messages": [], "max_tokens": "integer `x`"}"#);
        assert_eq!(
            m,
            r#"max_tokens: expected a non-negative integer, got the string "integer `x`""#
        );
    }
}
