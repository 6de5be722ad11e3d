//! `tool_choice` → `sampling_params.structured_outputs`, as vLLM 0.33's tool parsers
//! constrain the engine when a call is required, so an engine behind this render emits
//! parseable calls.
//!
//! By the parser's [`ToolGrammar`] (the `--tool-call-parser` this server runs for the model):
//! * `JsonSchema` (pythonic; vLLM's `adjust_request` with `get_json_schema_from_tools`): a
//!   named tool constrains to its `parameters` (`{"type": "object", "properties": {}}` when
//!   it has none); `required` to `{"type": "array", "minItems": 1, "items": {"type":
//!   "object", "anyOf": [{"properties": {"name": {"type": "string", "enum": [name]},
//!   "parameters": …}, "required": ["name", "parameters"]}, …]}}`, with `"maxItems": 1` when
//!   `parallel_tool_calls` is false and the tools' `$defs` gathered at the top.
//! * `HermesTags` (vLLM's `_apply_structural_tag` with the hermes tag): an xgrammar
//!   structural tag over `<tool_call>\n{"name": "f", "arguments": ` … `}\n</tool_call>` and
//!   its one-line form, for every tool (the named one only): `tags_with_separator` with
//!   `at_least_one` for `required` and a named tool (which also stops after the first call);
//!   for `auto`, a `triggered_tags` on `<tool_call>`, but only when a tool is `strict` or
//!   `parallel_tool_calls` is false. Arguments are any JSON, or a strict tool's
//!   `parameters`. `parallel_tool_calls: false` stops every list after its first call. The
//!   tag is written as `json.dumps` writes it (ASCII-escaped).
//! * `NotYet`: the family's own tag is not reproduced; the request's constraint stays.
//!
//! Either way the constraint replaces the request's `response_format` / `structured_outputs`
//! (vLLM sets `response_format` to None), except for `auto`, where vLLM combines a request
//! constraint with the tag (`OrFormat`); that case is left as the request has it.

use crate::error::RequestError;
use crate::protocol::{ChatRequest, SamplingParams};
use llm_render_parsers::pyjson::dumps_ascii;
use llm_render_parsers::{ToolEntry, ToolGrammar};
use serde_json::{json, Map, Value};

/// vLLM's `StructuredOutputsParams` with one constraint set.
fn params(key: &str, value: Value) -> Value {
    let mut out = super::sampling::structured_outputs_default();
    out[key] = value;
    out
}

/// What the request asks for: `auto`, `required`, or the named tool.
enum Choice<'a> {
    Auto,
    Required,
    Named(&'a str),
}

fn choice(req: &ChatRequest) -> Option<Choice<'_>> {
    match &req.tool_choice {
        None => Some(Choice::Auto),
        Some(Value::String(s)) if s == "auto" => Some(Choice::Auto),
        Some(Value::String(s)) if s == "required" => Some(Choice::Required),
        Some(Value::Object(o)) => o
            .get("function")
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .map(Choice::Named),
        _ => None,
    }
}

fn function(tool: &Map<String, Value>) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    tool.get("function")
        .and_then(Value::as_object)
        .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

fn name(tool: &Map<String, Value>) -> &str {
    function(tool)
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A tool's `parameters`, or an empty object schema (vLLM's `_params_or_empty_object`).
fn params_or_empty(tool: &Map<String, Value>) -> Value {
    match function(tool).get("parameters") {
        Some(Value::Object(p)) if !p.is_empty() => Value::Object(p.clone()),
        _ => json!({"type": "object", "properties": {}}),
    }
}

/// Constrains `sampling` for the request's `tool_choice` under the tool parser `entry`.
pub fn constrain(
    entry: Option<&ToolEntry>,
    req: &ChatRequest,
    sampling: &mut SamplingParams,
) -> Result<(), RequestError> {
    let tools = req.tools.as_deref().unwrap_or_default();
    let (Some(entry), false) = (entry, tools.is_empty()) else {
        return Ok(());
    };
    let Some(choice) = choice(req) else {
        return Ok(());
    };
    let single = req.parallel_tool_calls == Some(false);
    let constraint = match entry.grammar {
        ToolGrammar::NotYet => None,
        ToolGrammar::JsonSchema => json_schema(tools, &choice, single)?.map(|s| params("json", s)),
        ToolGrammar::HermesTags => {
            let asked = sampling.structured_outputs.is_some();
            hermes_tag(tools, &choice, single, asked)
                .map(|t| params("structural_tag", Value::String(dumps_ascii(&t))))
        }
    };
    if let Some(c) = constraint {
        sampling.structured_outputs = Some(c);
    }
    Ok(())
}

/// vLLM's `get_json_schema_from_tools` (only `required` and named constrain).
fn json_schema(
    tools: &[Map<String, Value>],
    choice: &Choice,
    single: bool,
) -> Result<Option<Value>, RequestError> {
    match choice {
        Choice::Auto => Ok(None),
        Choice::Named(n) => Ok(tools.iter().find(|t| name(t) == *n).map(params_or_empty)),
        Choice::Required => {
            let mut defs = Map::new();
            let mut any_of = Vec::new();
            for tool in tools {
                let mut parameters = params_or_empty(tool);
                if let Some(d) = parameters.as_object_mut().and_then(|p| p.remove("$defs")) {
                    let Value::Object(d) = d else {
                        return Err(RequestError::invalid(
                            "tools",
                            format!(
                                "`$defs` in the parameters of tool '{}' must be an object",
                                name(tool)
                            ),
                        ));
                    };
                    for (k, v) in d {
                        if defs.get(&k).is_some_and(|old| old != &v) {
                            return Err(RequestError::invalid(
                                "tools",
                                format!(
                                    "Tool definition '{k}' has multiple schemas, which is not \
                                     supported."
                                ),
                            ));
                        }
                        defs.insert(k, v);
                    }
                }
                any_of.push(json!({
                    "properties": {"name": {"type": "string", "enum": [name(tool)]},
                        "parameters": parameters},
                    "required": ["name", "parameters"],
                }));
            }
            let mut schema = json!({"type": "array", "minItems": 1,
                "items": {"type": "object", "anyOf": any_of}});
            if single {
                schema["maxItems"] = json!(1);
            }
            if !defs.is_empty() {
                schema["$defs"] = Value::Object(defs);
            }
            Ok(Some(schema))
        }
    }
}

/// vLLM's hermes structural tag (`_hermes_style_structural_tag`), or `None` where vLLM
/// builds none (`auto` without strict tools or `parallel_tool_calls: false`) or combines
/// it with the request's own constraint (`auto` with one: not reproduced).
fn hermes_tag(
    tools: &[Map<String, Value>],
    choice: &Choice,
    single: bool,
    asked: bool,
) -> Option<Value> {
    let strict = |t: &Map<String, Value>| function(t).get("strict") == Some(&Value::Bool(true));
    // For `auto`, a tag only at ToolStrictLevel FUNCTION (raised so by parallel_tool_calls:
    // false) or with a strict tool; with the request's own constraint vLLM builds an
    // OrFormat, not reproduced.
    if matches!(choice, Choice::Auto) && (asked || (!single && !tools.iter().any(strict))) {
        return None;
    }
    let shown: Vec<&Map<String, Value>> = match choice {
        Choice::Named(n) => tools.iter().filter(|t| name(t) == *n).collect(),
        _ => tools.iter().collect(),
    };
    let mut tags = Vec::new();
    for tool in shown {
        let schema = if strict(tool) {
            match function(tool).get("parameters") {
                Some(p) if !p.is_null() => p.clone(),
                _ => Value::Bool(true),
            }
        } else {
            Value::Bool(true)
        };
        for (begin, end) in [
            ("<tool_call>\n{\"name\": \"", "}\n</tool_call>"),
            ("<tool_call>{\"name\": \"", "}</tool_call>"),
        ] {
            tags.push(json!({
                "type": "tag",
                "begin": format!("{begin}{}\", \"arguments\": ", name(tool)),
                "content": {"type": "json_schema", "json_schema": schema, "style": "json",
                    "any_order": false, "max_whitespace_cnt": null, "excludes": []},
                "end": end,
            }));
        }
    }
    let format = match choice {
        Choice::Auto => json!({"type": "triggered_tags", "triggers": ["<tool_call>"],
            "tags": tags, "at_least_one": false, "stop_after_first": single, "excludes": []}),
        Choice::Named(_) => json!({"type": "tags_with_separator", "tags": tags,
            "separator": "", "at_least_one": true, "stop_after_first": true}),
        Choice::Required => json!({"type": "tags_with_separator", "tags": tags,
            "separator": "", "at_least_one": true, "stop_after_first": single}),
    };
    Some(json!({"type": "structural_tag", "format": format}))
}
