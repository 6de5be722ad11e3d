//! Anthropic tools, `tool_choice` and the system messages' tool changes → chat tools.

use super::bad;
use crate::error::RequestError;
use crate::protocol::chat_tool::chat_function_tool;
use serde_json::{json, Map, Value};

/// `tools` (with the system messages' `tool_addition` / `tool_removal`) and `tool_choice`.
pub(super) fn tools(
    req: &Map<String, Value>,
    out: &mut Map<String, Value>,
) -> Result<(), RequestError> {
    let mut parallel = true;
    let mut choice = Value::Null;
    if let Some(tc) = req.get("tool_choice").filter(|v| !v.is_null()) {
        let ty = tc.get("type").and_then(Value::as_str);
        choice = match ty {
            Some("auto") => json!("auto"),
            Some("any") => json!("required"),
            Some("none") => json!("none"),
            Some("tool") => {
                let name = tc
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| {
                        bad(
                            "tool_choice.name",
                            "tool_choice.name is required when type is 'tool'",
                        )
                    })?;
                json!({"type": "function", "function": {"name": name}})
            }
            _ => {
                return Err(bad(
                    "tool_choice.type",
                    "Input should be 'auto', 'any', 'tool' or 'none'",
                ))
            }
        };
        parallel = tc.get("disable_parallel_tool_use").and_then(Value::as_bool) != Some(true);
    }
    let declared = match req.get("tools") {
        None | Some(Value::Null) => None,
        Some(Value::Array(list)) => Some(
            list.iter()
                .enumerate()
                .map(|(i, t)| function_tool(t, &format!("tools[{i}]")))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(_) => return Err(bad("tools", "tools must be a list")),
    };
    let resolved = resolve_tool_changes(req, declared)?;
    if let Some(list) = resolved {
        if choice.is_null() {
            choice = json!("auto");
        }
        if !list.is_empty() {
            out.insert("tools".into(), Value::Array(list));
        }
    }
    if !choice.is_null() && out.contains_key("tools") {
        out.insert("tool_choice".into(), choice);
    } else if choice != json!("auto") && !choice.is_null() {
        // A choice that needs tools, without them: the chat validators answer it.
        out.insert("tool_choice".into(), choice);
    }
    if !parallel {
        out.insert("parallel_tool_calls".into(), Value::Bool(false));
    }
    Ok(())
}

/// An Anthropic tool as a chat function tool.
fn function_tool(t: &Value, at: &str) -> Result<Value, RequestError> {
    let name = t
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("{at}.name"), format!("{at}.name: Field required")))?;
    let mut schema = t
        .get("input_schema")
        .and_then(Value::as_object)
        .cloned()
        .ok_or_else(|| {
            bad(
                format!("{at}.input_schema"),
                format!("{at}.input_schema: Field required"),
            )
        })?;
    if !schema.contains_key("type") {
        schema.insert("type".into(), json!("object"));
    }
    Ok(chat_function_tool(name, Value::Object(schema), t))
}

/// The system messages' `tool_addition` / `tool_removal` blocks, in order, over the declared
/// tools (vLLM's `_resolve_tools`).
fn resolve_tool_changes(
    req: &Map<String, Value>,
    declared: Option<Vec<Value>>,
) -> Result<Option<Vec<Value>>, RequestError> {
    let changes: Vec<&Value> = req
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten()
        .filter(|b| {
            matches!(
                b.get("type").and_then(Value::as_str),
                Some("tool_addition" | "tool_removal")
            )
        })
        .collect();
    if changes.is_empty() {
        return Ok(declared);
    }
    let name_of = |t: &Value| {
        t["function"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let mut tools: Vec<(String, Value, bool)> = declared
        .unwrap_or_default()
        .into_iter()
        .map(|t| (name_of(&t), t, false))
        .collect();
    for (i, b) in changes.iter().enumerate() {
        let ty = b["type"].as_str().unwrap_or_default();
        let tool = &b["tool"];
        let at = format!("tool change {i}");
        if tool["type"] == "tool_definition" {
            let def = function_tool(&tool["definition"], &at)?;
            let name = name_of(&def);
            match tools.iter_mut().find(|(n, _, _)| *n == name) {
                Some(slot) => *slot = (name, def, false),
                None => tools.push((name, def, false)),
            }
            continue;
        }
        let name = tool["name"].as_str().unwrap_or_default();
        let slot = tools
            .iter_mut()
            .find(|(n, _, _)| n == name)
            .ok_or_else(|| RequestError::InvalidRequest {
                message: format!("{ty} references tool '{name}', which is not declared in tools"),
                param: None,
            })?;
        if ty == "tool_removal" {
            slot.2 = true;
        } else {
            slot.2 = false;
            if let Some(f) = slot.1.get_mut("function").and_then(Value::as_object_mut) {
                f.remove("defer_loading");
            }
        }
    }
    Ok(Some(
        tools
            .into_iter()
            .filter(|(_, _, removed)| !removed)
            .map(|(_, t, _)| t)
            .collect(),
    ))
}
