//! What vLLM's request models refuse, refused here with the same message and the field as
//! `param` (vLLM's `ChatCompletionRequest` / `CompletionRequest` validators: cache salt,
//! `response_format`, `stream_options`, logprobs, structured outputs, tools and
//! `tool_choice`, transfer params, beam search). Checked before anything renders.

use super::lax::lax_bool;
use super::requests::{ChatRequest, CompletionRequest};
use super::{Field, Message};
use crate::error::RequestError;
use serde_json::{Map, Value};

/// The message shapes vLLM 0.33's `ChatCompletionMessageParam` union refuses, each a 400
/// naming the field (vLLM's own `param` names the first union member's failure instead):
/// a `name` that is not a string, on any message but a `tool` one with its `tool_call_id`
/// (whose model has no `name`, so pydantic ignores it); an assistant's `tool_calls` that is
/// not an array, or a call without a string `id`, a `type`, or a `function` object with a
/// string `name` and string `arguments` (a JSON object given as `arguments` is refused too,
/// as vLLM refuses it). Recorded from vLLM 0.33: `fixtures/goldens/validation.jsonl`.
pub(crate) fn message_shapes(messages: &[Message]) -> Result<(), RequestError> {
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Field::as_str);
        // Only a `tool` message with its `tool_call_id` is read by a model without `name`.
        let tool_reply = role == Some("tool") && m.get("tool_call_id").is_some();
        if !tool_reply {
            if let Some(name) = m.get("name").filter(|n| n.as_str().is_none()) {
                let param = format!("messages[{i}].name");
                return Err(RequestError::invalid(
                    param.clone(),
                    format!(
                        "{param}: Input should be a valid string, got {}",
                        name.to_value()
                    ),
                ));
            }
        }
        if role != Some("assistant") {
            continue;
        }
        match m.get("tool_calls") {
            None | Some(Field::Json(Value::Null)) => {}
            Some(Field::Json(Value::Array(calls))) => {
                for (j, call) in calls.iter().enumerate() {
                    tool_call(&format!("messages[{i}].tool_calls[{j}]"), call)?;
                }
            }
            Some(other) => {
                let param = format!("messages[{i}].tool_calls");
                return Err(RequestError::invalid(
                    param.clone(),
                    format!(
                        "{param}: Input should be a valid list, got {}",
                        other.to_value()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// One assistant tool call, as OpenAI's `ChatCompletionMessageToolCallParam`: a function
/// call `{"id": str, "type": "function", "function": {"name": str, "arguments": str}}` (a
/// custom tool's call, `type: "custom"`, is refused, as vLLM 0.33 refuses it).
fn tool_call(at: &str, call: &Value) -> Result<(), RequestError> {
    let need = |field: &str, what: &str| {
        let param = format!("{at}.{field}");
        RequestError::invalid(param.clone(), format!("{param}: {what}"))
    };
    let Some(call) = call.as_object() else {
        return Err(RequestError::invalid(
            at,
            format!("{at}: Input should be a valid dictionary"),
        ));
    };
    if call.get("type").and_then(Value::as_str) == Some("custom") {
        // vLLM 0.33 refuses a custom tool's call in the history outright.
        return Err(need(
            "type",
            "chat completions only support assistant tool_calls of type 'function'.",
        ));
    }
    match call.get("id") {
        Some(Value::String(_)) => {}
        None => return Err(need("id", "Field required")),
        Some(_) => return Err(need("id", "Input should be a valid string")),
    }
    match call.get("type") {
        Some(Value::String(t)) if t == "function" => {}
        None => return Err(need("type", "Field required")),
        Some(_) => return Err(need("type", "Input should be 'function'")),
    }
    let function = match call.get("function") {
        Some(Value::Object(f)) => f,
        None => return Err(need("function", "Field required")),
        Some(_) => return Err(need("function", "Input should be a valid dictionary")),
    };
    for field in ["name", "arguments"] {
        match function.get(field) {
            Some(Value::String(_)) => {}
            None => return Err(need(&format!("function.{field}"), "Field required")),
            Some(v) => {
                let what = if field == "arguments" {
                    " (the arguments' JSON text)"
                } else {
                    ""
                };
                return Err(need(
                    &format!("function.{field}"),
                    &format!("Input should be a valid string{what}, got {v}"),
                ));
            }
        }
    }
    Ok(())
}

/// vLLM's `validate_cache_salt`: a non-empty string of at most 128 characters without `@`,
/// `/`, `\` or NUL.
fn cache_salt(salt: Option<&str>) -> Result<(), RequestError> {
    let Some(salt) = salt else {
        return Ok(());
    };
    if salt.is_empty() {
        return Err(RequestError::invalid(
            "cache_salt",
            "Parameter 'cache_salt' must be a non-empty string if provided.",
        ));
    }
    if salt.chars().count() > 128 || salt.contains(['@', '/', '\\', '\0']) {
        return Err(RequestError::invalid(
            "cache_salt",
            "Parameter 'cache_salt' must be at most 128 characters and must not contain '@', \
             '/', '\\\\', or NUL.",
        ));
    }
    Ok(())
}

/// `response_format`: an object whose `type` is one of OpenAI's and vLLM's, with its
/// `json_schema` when the type says so.
fn response_format(rf: Option<&Value>) -> Result<(), RequestError> {
    let Some(rf) = rf.filter(|v| !v.is_null()) else {
        return Ok(());
    };
    let Some(obj) = rf.as_object() else {
        return Err(RequestError::invalid(
            "response_format",
            "response_format must be an object",
        ));
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("text" | "json_object" | "structural_tag") => Ok(()),
        Some("json_schema") => match obj.get("json_schema") {
            Some(Value::Object(schema)) => {
                if !schema.get("name").is_some_and(Value::is_string) {
                    return Err(RequestError::invalid(
                        "response_format.json_schema.name",
                        "response_format.json_schema.name is required",
                    ));
                }
                Ok(())
            }
            _ => Err(RequestError::invalid(
                "response_format",
                "When response_format type is 'json_schema', the 'json_schema' field must be \
                 provided.",
            )),
        },
        _ => Err(RequestError::invalid(
            "response_format.type",
            "response_format.type must be one of 'text', 'json_object', 'json_schema' or \
             'structural_tag'",
        )),
    }
}

/// vLLM's `validate_stream_options`.
fn stream_options(stream: bool, options: Option<&Value>) -> Result<(), RequestError> {
    let set = match options {
        None | Some(Value::Null) => false,
        Some(Value::Object(m)) => !m.is_empty(),
        Some(Value::Bool(b)) => *b,
        Some(_) => true,
    };
    if set && !stream {
        return Err(RequestError::invalid(
            "stream_options",
            "Stream options can only be defined when `stream=True`.",
        ));
    }
    if let Some(o) = options.filter(|o| !o.is_null() && !o.is_object()) {
        return Err(RequestError::invalid(
            "stream_options",
            format!("stream_options must be an object, got {o}"),
        ));
    }
    // Parsing settled every flag pydantic reads as a bool (`lax_stream_options`): what is
    // left is what pydantic refuses.
    for flag in ["include_usage", "continuous_usage_stats"] {
        if let Some(v) = options
            .and_then(|o| o.get(flag))
            .filter(|v| !v.is_boolean() && !v.is_null())
        {
            let param = format!("stream_options.{flag}");
            return Err(RequestError::invalid(
                param.clone(),
                format!("{param}: Input should be a valid boolean, got {v}"),
            ));
        }
    }
    Ok(())
}

/// `kv_transfer_params` (and vLLM's `ec_transfer_params`): an object or null.
fn transfer_params(field: &str, v: Option<&Value>) -> Result<(), RequestError> {
    match v {
        None | Some(Value::Null) | Some(Value::Object(_)) => Ok(()),
        Some(_) => Err(RequestError::invalid(
            field,
            format!("{field}: Input should be a valid dictionary"),
        )),
    }
}

/// vLLM's `check_structured_outputs_count`: at most one of `json`, `regex` and `choice`.
fn structured_outputs_count(so: Option<&Value>, param: Option<&str>) -> Result<(), RequestError> {
    let Some(so) = so.filter(|v| !v.is_null()) else {
        return Ok(());
    };
    let Some(obj) = so.as_object() else {
        return Err(RequestError::invalid(
            "structured_outputs",
            "structured_outputs must be an object",
        ));
    };
    let kinds = ["json", "regex", "choice"]
        .iter()
        .filter(|k| obj.get(**k).is_some_and(|v| !v.is_null()))
        .count();
    if kinds > 1 {
        return Err(RequestError::InvalidRequest {
            message: "You can only use one kind of constraints for structured outputs ('json', \
                      'regex' or 'choice')."
                .into(),
            param: param.map(str::to_string),
        });
    }
    Ok(())
}

/// One tool of `tools`: `{"type": "function", "function": {"name": str, "description"?:
/// str, "parameters"?: object}}`.
fn tool(i: usize, t: &Map<String, Value>) -> Result<(), RequestError> {
    let at = |f: &str| format!("tools[{i}]{f}");
    if let Some(ty) = t.get("type") {
        if ty != "function" {
            return Err(RequestError::invalid(
                at(".type"),
                format!("{}: Input should be 'function'", at(".type")),
            ));
        }
    }
    let Some(Value::Object(function)) = t.get("function") else {
        return Err(RequestError::invalid(
            at(".function"),
            format!("{}: Field required (an object)", at(".function")),
        ));
    };
    if !function.get("name").is_some_and(Value::is_string) {
        return Err(RequestError::invalid(
            at(".function.name"),
            format!("{}: Field required (a string)", at(".function.name")),
        ));
    }
    if function
        .get("description")
        .is_some_and(|d| !d.is_string() && !d.is_null())
    {
        return Err(RequestError::invalid(
            at(".function.description"),
            format!(
                "{}: Input should be a valid string",
                at(".function.description")
            ),
        ));
    }
    if let Some(strict) = function.get("strict").filter(|v| lax_bool(v).is_none()) {
        return Err(RequestError::invalid(
            at(".function.strict"),
            format!(
                "{}: Input should be a valid boolean, got {strict}",
                at(".function.strict")
            ),
        ));
    }
    if function
        .get("parameters")
        .is_some_and(|p| !p.is_object() && !p.is_null())
    {
        return Err(RequestError::invalid(
            at(".function.parameters"),
            format!(
                "{}: Input should be a valid dictionary",
                at(".function.parameters")
            ),
        ));
    }
    Ok(())
}

/// vLLM's `check_tool_usage`: `tools` not empty, `tool_choice` only with tools, and a named
/// choice naming one of them.
fn tool_usage(
    tools: Option<&[Map<String, Value>]>,
    tool_choice: Option<&Value>,
) -> Result<(), RequestError> {
    if let Some(tools) = tools {
        if tools.is_empty() {
            return Err(RequestError::invalid(
                "tools",
                "`tools` must not be an empty array. Either provide at least one tool or omit \
                 the field entirely.",
            ));
        }
        for (i, t) in tools.iter().enumerate() {
            tool(i, t)?;
        }
    }
    let Some(choice) = tool_choice.filter(|c| !c.is_null()) else {
        return Ok(());
    };
    let Some(tools) = tools else {
        return Err(RequestError::invalid(
            "tool_choice",
            "When using `tool_choice`, `tools` must be set.",
        ));
    };
    const USAGE: &str =
        "Correct usage: `{\"type\": \"function\", \"function\": {\"name\": \"my_function\"}}`";
    match choice {
        Value::String(s) if matches!(s.as_str(), "none" | "auto" | "required") => Ok(()),
        Value::Object(obj) => {
            let function = match obj.get("function") {
                Some(Value::Object(f)) => f,
                other => {
                    let shown = other.map_or("None".to_string(), Value::to_string);
                    return Err(RequestError::invalid(
                        "tool_choice.function",
                        format!(
                            "Invalid value for `function`: `{shown}` in `tool_choice`! {USAGE}"
                        ),
                    ));
                }
            };
            let name = match function.get("name") {
                None => {
                    return Err(RequestError::invalid(
                        "tool_choice.function.name",
                        format!("Expected field `name` in `function` in `tool_choice`! {USAGE}"),
                    ))
                }
                Some(Value::String(n)) if !n.is_empty() => n,
                Some(other) => {
                    return Err(RequestError::invalid(
                        "tool_choice.function.name",
                        format!(
                            "Invalid `name` in `function`: `{other}` in `tool_choice`! {USAGE}"
                        ),
                    ))
                }
            };
            let declared = tools.iter().any(|t| {
                t.get("function")
                    .and_then(|f| f.get("name"))
                    .and_then(Value::as_str)
                    == Some(name.as_str())
            });
            if !declared {
                return Err(RequestError::invalid(
                    "tool_choice",
                    "The tool specified in `tool_choice` does not match any of the specified \
                     `tools`",
                ));
            }
            Ok(())
        }
        other => Err(RequestError::invalid(
            "tool_choice",
            format!(
                "Invalid value for `tool_choice`: {other}! Only named tools, \"none\", \"auto\" \
                 or \"required\" are supported."
            ),
        )),
    }
}

/// vLLM's `check_logprobs` for a chat request: `top_logprobs` only with `logprobs: true`,
/// no `prompt_logprobs` on a stream.
fn chat_logprobs(req: &ChatRequest) -> Result<(), RequestError> {
    let logprobs = req
        .logprobs
        .as_ref()
        .and_then(Value::as_bool)
        .unwrap_or(false);
    prompt_logprobs(req.stream, req.prompt_logprobs)?;
    if let Some(n) = req.top_logprobs {
        positive_or_all("top_logprobs", n)?;
        if n != 0 && !logprobs {
            return Err(RequestError::invalid(
                "top_logprobs",
                "when using `top_logprobs`, `logprobs` must be set to true.",
            ));
        }
    }
    Ok(())
}

/// vLLM's rule for a logprobs count: positive, 0, or -1 (all).
fn positive_or_all(param: &str, n: i64) -> Result<(), RequestError> {
    if n < -1 {
        return Err(RequestError::invalid(
            param,
            format!("`{param}` must be a positive value or -1."),
        ));
    }
    Ok(())
}

/// `prompt_logprobs`: a count or -1, and none on a stream.
fn prompt_logprobs(stream: bool, n: Option<i64>) -> Result<(), RequestError> {
    let Some(n) = n else { return Ok(()) };
    // vLLM's order: a stream is refused a count (> 0) or all (-1); anything below -1 is
    // refused as such.
    if stream && (n > 0 || n == -1) {
        return Err(RequestError::invalid(
            "prompt_logprobs",
            "`prompt_logprobs` are not available when `stream=True`.",
        ));
    }
    positive_or_all("prompt_logprobs", n)
}

/// vLLM's `ReasoningEffort` literal.
pub const REASONING_EFFORTS: [&str; 7] =
    ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

fn reasoning_effort(effort: Option<&str>) -> Result<(), RequestError> {
    match effort {
        Some(e) if !REASONING_EFFORTS.contains(&e) => Err(RequestError::invalid(
            "reasoning_effort",
            format!("reasoning_effort must be one of {REASONING_EFFORTS:?}, got {e:?}"),
        )),
        _ => Ok(()),
    }
}

impl ChatRequest {
    /// The shapes of `messages` and each of `tools` as vLLM's models check them (what
    /// `/tokenize`'s chat form checks too; an empty `tools` is refused by the chat request
    /// alone). A request converted from another API was checked by that API's model.
    pub fn validate_shapes(&self) -> Result<(), RequestError> {
        if self.converted_from != super::ConvertedFrom::Chat {
            return Ok(());
        }
        message_shapes(&self.messages)?;
        for (i, t) in self.tools.iter().flatten().enumerate() {
            tool(i, t)?;
        }
        Ok(())
    }

    /// Everything vLLM's `ChatCompletionRequest` refuses before rendering.
    pub fn validate(&self) -> Result<(), RequestError> {
        self.validate_shapes()?;
        cache_salt(self.cache_salt.as_deref())?;
        response_format(self.response_format.as_ref())?;
        stream_options(self.stream, self.stream_options.as_ref())?;
        chat_logprobs(self)?;
        structured_outputs_count(self.structured_outputs.as_ref(), None)?;
        let named_tool = self.tool_choice.as_ref().is_some_and(Value::is_object);
        let constrained = self
            .structured_outputs
            .as_ref()
            .and_then(Value::as_object)
            .is_some_and(|o| {
                ["json", "regex", "choice"]
                    .iter()
                    .any(|k| o.get(*k).is_some_and(|v| !v.is_null()))
            });
        if named_tool && constrained {
            return Err(RequestError::InvalidRequest {
                message: "You can only either use constraints for structured outputs or tools, \
                          not both."
                    .into(),
                param: None,
            });
        }
        tool_usage(self.tools.as_deref(), self.tool_choice.as_ref())?;
        transfer_params("kv_transfer_params", self.kv_transfer_params.as_ref())?;
        transfer_params("ec_transfer_params", self.ec_transfer_params.as_ref())?;
        reasoning_effort(self.reasoning_effort.as_deref())?;
        if let Some(p) = self
            .mm_payload
            .as_deref()
            .filter(|p| !matches!(*p, "tensors" | "none"))
        {
            return Err(RequestError::invalid(
                "mm_payload",
                format!("mm_payload must be 'tensors' or 'none', got {p:?}"),
            ));
        }
        if self.use_beam_search {
            return Err(RequestError::invalid(
                "use_beam_search",
                "Beam search is not supported by the render endpoint",
            ));
        }
        Ok(())
    }
}

impl CompletionRequest {
    /// Everything vLLM's `CompletionRequest` refuses before rendering.
    pub fn validate(&self) -> Result<(), RequestError> {
        cache_salt(self.cache_salt.as_deref())?;
        response_format(self.response_format.as_ref())?;
        stream_options(self.stream, self.stream_options.as_ref())?;
        prompt_logprobs(self.stream, self.prompt_logprobs)?;
        structured_outputs_count(self.structured_outputs.as_ref(), Some("structured_outputs"))?;
        transfer_params("kv_transfer_params", self.kv_transfer_params.as_ref())?;
        transfer_params("ec_transfer_params", self.ec_transfer_params.as_ref())?;
        if self.suffix.as_ref().is_some_and(|s| !s.is_null()) {
            return Err(RequestError::invalid(
                "suffix",
                "suffix is not currently supported",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_salt_as_vllm() {
        assert!(cache_salt(None).is_ok());
        assert!(cache_salt(Some("tenant-7")).is_ok());
        assert!(cache_salt(Some(&"x".repeat(128))).is_ok());
        for bad in ["", "a/b", "a@b", "a\\b", "a\0b"] {
            assert!(cache_salt(Some(bad)).is_err(), "{bad:?}");
        }
        assert!(cache_salt(Some(&"x".repeat(129))).is_err());
    }
}
