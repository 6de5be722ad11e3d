//! `POST /v1/responses/render`: an OpenAI Responses request, validated as vLLM's
//! `ResponsesRequest` and converted to the chat request vLLM renders for it
//! (`vllm/entrypoints/openai/responses/protocol.py` and `utils.py`, 0.33).
//!
//! * Stateless: `previous_response_id` is a 400 naming it; `store` is ignored; `background`
//!   without `store` is a 400; `prompt` (templates) is a 400.
//! * `instructions` becomes the first (system) message; `input` a user message (a string) or
//!   the items' messages (`items.rs`).
//! * `tools`: function tools (`{"type": "function", "name", "description", "parameters"}`,
//!   not chat's nested shape, which is a 400), namespace tools flattened to `ns__name`, and
//!   custom tools as a one-string `input` function; every other tool type (web search, MCP,
//!   file search, …) is dropped, as vLLM drops them. `tool_choice` `auto`/`none` without
//!   tools reads as `none`; `required` or a named tool without tools is a 400.
//! * `max_output_tokens` → `max_tokens`; `reasoning.effort` → `reasoning_effort`;
//!   `text.format` → `structured_outputs` (`json_schema` → `json`, `json_object`);
//!   logprobs only with `include: ["message.output_text.logprobs"]` (`top_logprobs` of them).
//! * A last item still `in_progress`/`incomplete` continues the final message.
//! * `request_id` is kept as sent, else `resp_` and 16 hex digits; `stream_options` is not
//!   set (vLLM sets it only for chat).
//!
//! Unknown fields are ignored, as vLLM's model allows them.

mod items;
#[cfg(test)]
mod tests;

use super::chat_tool::chat_function_tool;
use crate::error::RequestError;
use serde_json::{json, Map, Value};

fn bad(param: impl Into<String>, message: impl Into<String>) -> RequestError {
    RequestError::invalid(param, message)
}

/// Sampling and option fields that mean the same in a chat request, copied as they are.
const SAME: [&str; 25] = [
    "model",
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repetition_penalty",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "stop",
    "stop_token_ids",
    "ignore_eos",
    "skip_special_tokens",
    "spaces_between_special_tokens",
    "include_stop_str_in_output",
    "cache_salt",
    "priority",
    "kv_transfer_params",
    "ec_transfer_params",
    "chat_template_kwargs",
    "mm_processor_kwargs",
    "mm_payload",
    "return_mm_kwargs",
    "skip_pixel_values",
    "vllm_xargs",
];

const LOGPROBS_INCLUDE: &str = "message.output_text.logprobs";

/// Validates `body` as vLLM's model does and converts it to a chat request.
pub fn to_chat(body: &Value) -> Result<Map<String, Value>, RequestError> {
    let req = body
        .as_object()
        .ok_or_else(|| RequestError::InvalidRequest {
            message: "the request body must be a JSON object".into(),
            param: None,
        })?;
    let set = |k: &str| req.get(k).filter(|v| !v.is_null());
    if set("previous_response_id").is_some() {
        return Err(RequestError::Unsupported {
            param: "previous_response_id".into(),
            message: "previous_response_id is not supported by the stateless render endpoint."
                .into(),
        });
    }
    if set("prompt").is_some() {
        return Err(bad("prompt", "prompt template is not supported"));
    }
    let truthy = |k: &str| set(k).is_some_and(|v| v != &Value::Bool(false));
    // `store` defaults to true; a null one is falsy, as in vLLM's check.
    let store = req
        .get("store")
        .is_none_or(|v| !v.is_null() && v != &Value::Bool(false));
    if truthy("background") && !store {
        return Err(bad(
            "background",
            "background can only be used when `store` is true",
        ));
    }

    let mut out = Map::new();
    for key in SAME {
        if let Some(v) = set(key) {
            out.insert(key.into(), v.clone());
        }
    }
    let mut messages = Vec::new();
    if let Some(instructions) = set("instructions") {
        let text = instructions
            .as_str()
            .ok_or_else(|| bad("instructions", "instructions must be a string"))?;
        if !text.is_empty() {
            messages.push(json!({"role": "system", "content": text}));
        }
    }
    let continue_final = match req.get("input") {
        Some(Value::String(s)) => {
            messages.push(json!({"role": "user", "content": s}));
            false
        }
        Some(Value::Array(list)) => {
            items::to_messages(list, &mut messages)?;
            items::continues_final(list)
        }
        None => return Err(bad("input", "input: Field required")),
        Some(_) => {
            return Err(bad(
                "input",
                "input must be a string or a list of input items",
            ))
        }
    };
    out.insert("messages".into(), Value::Array(messages));
    if continue_final {
        out.insert("add_generation_prompt".into(), Value::Bool(false));
        out.insert("continue_final_message".into(), Value::Bool(true));
    }
    if let Some(id) = set("request_id") {
        out.insert("request_id".into(), id.clone());
    } else {
        let hex = uuid::Uuid::new_v4().simple().to_string();
        out.insert("request_id".into(), json!(format!("resp_{}", &hex[..16])));
    }
    if let Some(n) = set("max_output_tokens") {
        out.insert("max_tokens".into(), n.clone());
    }
    match set("truncation").map(|t| t.as_str()) {
        None | Some(Some("disabled")) => {}
        // vLLM's `truncate_prompt_tokens=-1 if truncation != "disabled"`.
        Some(Some("auto")) => {
            out.insert("truncate_prompt_tokens".into(), json!(-1));
        }
        Some(_) => {
            return Err(RequestError::invalid(
                "truncation",
                "truncation: Input should be 'auto' or 'disabled'",
            ))
        }
    }
    if truthy("stream") {
        out.insert("stream".into(), Value::Bool(true));
    }
    if let Some(p) = set("parallel_tool_calls") {
        out.insert("parallel_tool_calls".into(), p.clone());
    }
    if let Some(effort) = set("reasoning")
        .and_then(|r| r.get("effort"))
        .filter(|e| !e.is_null())
    {
        out.insert("reasoning_effort".into(), effort.clone());
    }
    logprobs(req, &mut out)?;
    text_format(req, &mut out)?;
    tools(req, &mut out)?;
    Ok(out)
}

/// Logprobs are returned only when `include` asks for the output text's.
fn logprobs(req: &Map<String, Value>, out: &mut Map<String, Value>) -> Result<(), RequestError> {
    let include = match req.get("include") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(bad("include", "include must be a list")),
    };
    if include.iter().any(|v| v == LOGPROBS_INCLUDE) {
        let top = req
            .get("top_logprobs")
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or(json!(0));
        out.insert("logprobs".into(), Value::Bool(true));
        out.insert("top_logprobs".into(), top);
    }
    Ok(())
}

/// `text.format` → `structured_outputs` (and not with `structured_outputs` as well).
fn text_format(req: &Map<String, Value>, out: &mut Map<String, Value>) -> Result<(), RequestError> {
    let format = req
        .get("text")
        .and_then(|t| t.get("format"))
        .filter(|f| !f.is_null());
    let given = req.get("structured_outputs").filter(|v| !v.is_null());
    let Some(format) = format else {
        if let Some(so) = given {
            out.insert("structured_outputs".into(), so.clone());
        }
        return Ok(());
    };
    if given.is_some() {
        return Err(bad(
            "structured_outputs",
            "Cannot specify both structured_outputs and text.format",
        ));
    }
    match format.get("type").and_then(Value::as_str) {
        Some("json_schema") => {
            if let Some(schema) = format.get("schema").filter(|s| !s.is_null()) {
                out.insert("structured_outputs".into(), json!({"json": schema}));
            }
        }
        Some("json_object") => {
            out.insert("structured_outputs".into(), json!({"json_object": true}));
        }
        Some("text") => {}
        _ => {
            return Err(bad(
                "text.format.type",
                "text.format.type must be 'text', 'json_schema' or 'json_object'",
            ))
        }
    }
    Ok(())
}

/// A Responses function tool in chat's shape; `name` as given.
fn function_tool(t: &Value, name: String) -> Value {
    let parameters = t.get("parameters").cloned().unwrap_or(Value::Null);
    chat_function_tool(&name, parameters, t)
}

fn tool_name(t: &Value, at: &str) -> Result<String, RequestError> {
    t.get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| bad(format!("{at}.name"), format!("{at}.name: Field required")))
}

/// `tools` → chat tools (vLLM's `get_function_tools`) and `tool_choice` (`check_tool_usage`).
fn tools(req: &Map<String, Value>, out: &mut Map<String, Value>) -> Result<(), RequestError> {
    let list = match req.get("tools") {
        None => Vec::new(),
        Some(Value::Array(l)) => l.clone(),
        Some(_) => return Err(bad("tools", "tools must be a list")),
    };
    let mut chat_tools = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let at = format!("tools[{i}]");
        match t.get("type").and_then(Value::as_str) {
            Some("function") => {
                let name = tool_name(t, &at).map_err(|e| {
                    if t.get("function").is_some() {
                        bad(
                            format!("{at}.name"),
                            format!("{at}.name: Field required (Responses tools are flat: {{\"type\": \"function\", \"name\", \"parameters\"}}, not chat's nested shape)"),
                        )
                    } else {
                        e
                    }
                })?;
                chat_tools.push(function_tool(t, name));
            }
            Some("namespace") => {
                let ns = tool_name(t, &at)?;
                for (j, inner) in t
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    if inner.get("type").and_then(Value::as_str) == Some("function") {
                        let at = format!("{at}.tools[{j}]");
                        let name = format!("{ns}__{}", tool_name(inner, &at)?);
                        chat_tools.push(function_tool(inner, name));
                    }
                }
            }
            Some("custom") => {
                let name = tool_name(t, &at)?;
                let grammar = t
                    .get("format")
                    .and_then(|f| f.get("type"))
                    .and_then(Value::as_str)
                    == Some("grammar");
                if grammar {
                    return Err(bad(
                        "tools",
                        "Custom tools with a grammar format are not supported; only free-form \
                         text custom tools are accepted.",
                    ));
                }
                let shim = json!({"description": t.get("description").cloned().unwrap_or(Value::Null),
                    "parameters": {"type": "object", "properties": {"input": {"type": "string",
                        "description": "The freeform text payload for this tool."}},
                        "required": ["input"], "additionalProperties": false}});
                chat_tools.push(function_tool(&shim, name));
            }
            // Built-in tools (web search, MCP, file search, …) have no chat form: dropped.
            _ => {}
        }
    }
    let names: Vec<String> = chat_tools
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    let has_tools = !list.is_empty();
    let choice = req.get("tool_choice").filter(|v| !v.is_null());
    let not_found = |what: &str| {
        bad(
            "tool_choice",
            format!("Tool choice '{what}' not found in 'tools' parameter."),
        )
    };
    let chat_choice = match choice {
        None => (has_tools).then(|| json!("auto")),
        Some(Value::String(s)) => match s.as_str() {
            "auto" | "none" if !has_tools => Some(json!("none")),
            "required" if !has_tools => {
                return Err(bad(
                    "tool_choice",
                    "Tool choice 'required' must be specified with 'tools' parameter.",
                ))
            }
            "auto" | "none" | "required" => Some(json!(s)),
            _ => {
                return Err(bad(
                    "tool_choice",
                    "tool_choice must be 'auto', 'none' or 'required'",
                ))
            }
        },
        Some(Value::Object(o)) => match o.get("type").and_then(Value::as_str) {
            Some(ty @ ("function" | "custom")) => {
                let name = o
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty());
                let Some(name) = name.filter(|_| has_tools) else {
                    return Err(not_found(ty));
                };
                let resolved = resolve_named(name, &names)?.ok_or_else(|| not_found(name))?;
                Some(json!({"type": "function", "function": {"name": resolved}}))
            }
            // Built-in and allowed-tools choices: not checked, and nothing for a chat template.
            _ => has_tools.then(|| json!("auto")),
        },
        Some(_) => {
            return Err(bad(
                "tool_choice",
                "tool_choice must be a string or an object",
            ))
        }
    };
    if !chat_tools.is_empty() {
        out.insert("tools".into(), Value::Array(chat_tools));
        if let Some(c) = chat_choice {
            out.insert("tool_choice".into(), c);
        }
    } else if chat_choice.as_ref().is_some_and(|c| c.is_object()) {
        // Named a tool that has no chat form (a built-in one).
        return Err(not_found(
            choice
                .and_then(|c| c.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("function"),
        ));
    }
    Ok(())
}

/// A named `tool_choice`: the exact name, or a bare name found in exactly one namespace.
fn resolve_named(name: &str, names: &[String]) -> Result<Option<String>, RequestError> {
    if names.iter().any(|n| n == name) {
        return Ok(Some(name.to_string()));
    }
    let suffix = format!("__{name}");
    let in_namespaces: Vec<&String> = names.iter().filter(|n| n.ends_with(&suffix)).collect();
    match in_namespaces.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some((*one).clone())),
        many => Err(bad(
            "tool_choice",
            format!(
                "Tool choice '{name}' is ambiguous: it is defined in more than one namespace ({}). \
                 Select it by its full '<namespace>__<name>' name.",
                many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}
