//! `tool_choice` → `sampling_params.structured_outputs`, as vLLM 0.33's tool parsers
//! constrain the engine when a call is required, so an engine behind this render emits
//! parseable calls.
//!
//! By the parser's [`ToolGrammar`] (the `--tool-call-parser` this server runs for the model):
//! * `JsonSchema` (pythonic and the other parsers without a `structural_tag_model`; vLLM's
//!   `adjust_request` with `get_json_schema_from_tools`): a named tool constrains to its
//!   `parameters` (`{"type": "object", "properties": {}}` when it has none); `required` to
//!   `{"type": "array", "minItems": 1, "items": {"type": "object", "anyOf": [{"properties":
//!   {"name": {"type": "string", "enum": [name]}, "parameters": …}, "required": ["name",
//!   "parameters"]}, …]}}`, with `"maxItems": 1` when `parallel_tool_calls` is false and the
//!   tools' `$defs` gathered at the top.
//! * `MistralJsonList` (mistral with a Hugging Face tokenizer, `_build_guided_schema_pre_v11`):
//!   `required` and a named tool constrain to a list of `{"name", "arguments"}`, the named one
//!   to one call; not when the request has its own `structured_outputs` or a structural-tag
//!   `response_format`.
//! * The structural tags (vLLM's `_apply_structural_tag`): `HermesTags` (hermes, longcat:
//!   vLLM's own `_hermes_style_structural_tag`), `Tags` (xgrammar's builtin templates with
//!   reasoning off: llama, qwen_3_coder, mimo, deepseek_r1, deepseek_v3_1, kimi,
//!   deepseek_v3_2, deepseek_v4, deepseek_v4_1; and vLLM's own minimax and plamo3 tags of the
//!   same shapes), `Glm47` (vLLM's own GLM-4.7 tag), `KimiK3` and `HyV4` (vLLM's own Kimi
//!   K3 XTML and HYV4 tags; HYV4's never for `auto` alone). `required` and a named tool are always constrained; `auto`
//!   only at strict level FUNCTION (glm45/glm47's default, or any parser with
//!   `parallel_tool_calls: false`) or with a `strict` tool. A strict tool's arguments follow
//!   its `parameters`, the others' are any JSON (GLM: key by key). `parallel_tool_calls:
//!   false` stops every list of calls after its first (`limit_to_single_tool_call`). With
//!   `auto` and the request's own constraint, vLLM builds `required`'s tag and joins it with
//!   the request's constraint in an `OrFormat` (reproduced for `json`, `json_object`, `regex`,
//!   `choice` and an EBNF `grammar`; a Lark `grammar` or a `structural_tag` constraint is
//!   passed on as it is). The tag
//!   is written as `json.dumps` writes pydantic's `model_dump` (ASCII-escaped, every field).
//! * `Harmony` (gpt-oss, `harmony.rs`): vLLM's Harmony parser first moves the request's own
//!   constraint into a final message (on every request, with or without tools), then builds
//!   vLLM's own Harmony tag as `_apply_structural_tag` decides for the other tags.
//!
//! A constraint replaces the request's `response_format` / `structured_outputs` (vLLM sets
//! `response_format` to None).

use crate::error::RequestError;
use crate::protocol::{ChatRequest, SamplingParams};
use llm_render_parsers::pyjson::dumps_ascii;
use llm_render_parsers::{ToolEntry, ToolGrammar};
use serde_json::{json, Map, Value};
use tags::*;

pub mod beam;
mod harmony;
mod tags;

/// vLLM's `StructuredOutputsParams` with one constraint set.
fn params(key: &str, value: Value) -> Value {
    let mut out = super::sampling::structured_outputs_default();
    out[key] = value;
    out
}

/// What the request asks for: `auto`, `required`, or the named tool.
#[derive(Clone, Copy)]
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

fn is_strict(tool: &Map<String, Value>) -> bool {
    function(tool).get("strict") == Some(&Value::Bool(true))
}

/// A tool's `parameters` when it has any (not absent or null).
fn parameters(tool: &Map<String, Value>) -> Option<&Value> {
    function(tool).get("parameters").filter(|p| !p.is_null())
}

/// A tool's `parameters`, or an empty object schema (vLLM's `_params_or_empty_object`).
fn params_or_empty(tool: &Map<String, Value>) -> Value {
    match function(tool).get("parameters") {
        Some(Value::Object(p)) if !p.is_empty() => Value::Object(p.clone()),
        _ => json!({"type": "object", "properties": {}}),
    }
}

/// Constrains `sampling` for the request's `tool_choice` under the tool parser `entry`
/// (with whether its tools' tags apply: see `parse_context::constraint_parser`).
///
/// `suffix`: the checkpoint's Hunyuan token suffix (`Model::vocab_token_suffix`), which
/// vLLM's HYV4 tag writes into its tags.
pub fn constrain(
    entry: Option<(&ToolEntry, bool)>,
    req: &ChatRequest,
    sampling: &mut SamplingParams,
    suffix: &str,
) -> Result<(), RequestError> {
    let tools = match entry {
        Some((_, true)) => req.tools.as_deref().unwrap_or_default(),
        _ => &[],
    };
    let entry = entry.map(|(e, _)| e);
    if let Some(h) = entry.and_then(|e| harmony::Harmony::of(e.grammar)) {
        harmony::constrain(&h, tools, req, sampling);
        return Ok(());
    }
    let (Some(entry), false) = (entry, tools.is_empty()) else {
        return Ok(());
    };
    let Some(choice) = choice(req) else {
        return Ok(());
    };
    let single = req.parallel_tool_calls == Some(false);
    let constraint = match entry.grammar {
        // `beam`'s constraint is the template's, on every request (`beam.rs`).
        ToolGrammar::Harmony(_) | ToolGrammar::Unconstrained | ToolGrammar::Beam => None,
        ToolGrammar::JsonSchema => {
            if has_own_structural_tag(req) {
                None
            } else {
                json_schema(tools, &choice, single)?.map(|s| params("json", s))
            }
        }
        ToolGrammar::MistralJsonList => {
            mistral_json_list(tools, &choice, req).map(|s| params("json", s))
        }
        ToolGrammar::HermesTags { .. }
        | ToolGrammar::Tags(_)
        | ToolGrammar::Glm47 { .. }
        | ToolGrammar::KimiK3
        | ToolGrammar::HyV4 => {
            let asked = sampling.structured_outputs.as_ref();
            structural_tag(entry.grammar, tools, choice, single, asked, suffix)
                .map(|t| params("structural_tag", Value::String(dumps_ascii(&t))))
        }
    };
    if let Some(c) = constraint {
        sampling.structured_outputs = Some(c);
    }
    Ok(())
}

/// The request's own `structured_outputs` (not `response_format`) sets `structural_tag`,
/// which vLLM's base `adjust_request` leaves alone.
fn has_own_structural_tag(req: &ChatRequest) -> bool {
    req.structured_outputs
        .as_ref()
        .and_then(|s| s.get("structural_tag"))
        .is_some_and(|t| !t.is_null())
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

/// vLLM's mistral parser with a Hugging Face tokenizer (`_build_guided_schema_pre_v11`):
/// `[{"name", "arguments"}]`, the named tool's once, whatever `parallel_tool_calls` says;
/// not over the request's own `structured_outputs` or a structural-tag `response_format`.
fn mistral_json_list(
    tools: &[Map<String, Value>],
    choice: &Choice,
    req: &ChatRequest,
) -> Option<Value> {
    let own = req
        .structured_outputs
        .as_ref()
        .is_some_and(|s| !s.is_null());
    let format = req
        .response_format
        .as_ref()
        .and_then(|f| f.get("type"))
        .and_then(Value::as_str);
    let overridable = matches!(format, None | Some("text" | "json_object" | "json_schema"));
    if own || !overridable {
        return None;
    }
    let shown: Vec<&Map<String, Value>> = match choice {
        Choice::Auto => return None,
        Choice::Required => tools.iter().collect(),
        Choice::Named(n) => tools.iter().filter(|t| name(t) == *n).collect(),
    };
    if shown.is_empty() {
        return None;
    }
    let any_of: Vec<Value> = shown
        .iter()
        .map(|t| {
            let arguments = match function(t).get("parameters") {
                Some(Value::Object(p)) if !p.is_empty() => Value::Object(p.clone()),
                _ => json!({"type": "object"}),
            };
            json!({"type": "object",
                "properties": {"name": {"type": "string", "enum": [name(t)]},
                    "arguments": arguments},
                "required": ["name", "arguments"]})
        })
        .collect();
    let mut schema = Map::new();
    schema.insert("type".into(), json!("array"));
    schema.insert("minItems".into(), json!(1));
    if matches!(choice, Choice::Named(_)) {
        schema.insert("maxItems".into(), json!(1));
    }
    schema.insert("items".into(), json!({"type": "object", "anyOf": any_of}));
    Some(Value::Object(schema))
}

/// vLLM's `_apply_structural_tag`: the tag for the tools, or `None` where vLLM leaves the
/// request as it is (`auto` below strict level FUNCTION without a strict tool, or with a
/// request constraint not reproduced in an `OrFormat`).
fn structural_tag(
    grammar: ToolGrammar,
    tools: &[Map<String, Value>],
    choice: Choice,
    single: bool,
    asked: Option<&Value>,
    suffix: &str,
) -> Option<Value> {
    let auto = matches!(choice, Choice::Auto);
    // ToolStrictLevel FUNCTION: the parser's default, or raised by parallel_tool_calls: false
    // (except for auto with the request's own constraint).
    let function_level = matches!(grammar, ToolGrammar::Glm47 { always: true, .. })
        || (single && !(auto && asked.is_some()));
    if auto && !function_level && !tools.iter().any(is_strict) {
        return None;
    }
    let (choice, or_with) = match (choice, asked) {
        (Choice::Auto, Some(asked)) => (Choice::Required, Some(output_format(asked)?)),
        _ => (choice, None),
    };
    // HYV4's get_structural_tag builds nothing for `auto` itself.
    if matches!((grammar, choice), (ToolGrammar::HyV4, Choice::Auto)) {
        return None;
    }
    let shown = shown_tools(tools, &choice);
    if shown.is_empty() {
        return None;
    }
    let mut format = match grammar {
        ToolGrammar::HermesTags { start, end } => hermes_tag(&shown, choice, start, end),
        ToolGrammar::Tags(tags) => builtin_tag(&tags, &shown, choice),
        ToolGrammar::Glm47 { tags, .. } => glm47_tag(&tags, &shown, choice),
        ToolGrammar::KimiK3 => kimi_k3_tag(&shown, choice),
        ToolGrammar::HyV4 => hy_v4_tag(&shown, choice, suffix),
        ToolGrammar::JsonSchema
        | ToolGrammar::MistralJsonList
        | ToolGrammar::Harmony(_)
        | ToolGrammar::Unconstrained
        | ToolGrammar::Beam => return None,
    };
    if single {
        stop_after_first(&mut format);
    }
    let format = match or_with {
        Some(other) => json!({"type": "or", "elements": [format, other]}),
        None => format,
    };
    Some(json!({"type": "structural_tag", "format": format}))
}

/// A tool as the tag builders read it, its `strict` pinned (`resolve_tool_strictness`).
struct Tool<'a> {
    name: &'a str,
    strict: bool,
    parameters: Option<&'a Value>,
}

/// The tools a tag offers: the named one, or all of them.
fn shown_tools<'a>(tools: &'a [Map<String, Value>], choice: &Choice) -> Vec<Tool<'a>> {
    tools
        .iter()
        .filter(|t| match choice {
            Choice::Named(n) => name(t) == *n,
            _ => true,
        })
        .map(|t| Tool {
            name: name(t),
            strict: is_strict(t),
            parameters: parameters(t),
        })
        .collect()
}

impl Tool<'_> {
    /// The schema of its arguments (`get_function_parameters`): any JSON unless strict.
    fn schema(&self) -> Value {
        match (self.strict, self.parameters) {
            (true, Some(p)) => p.clone(),
            _ => Value::Bool(true),
        }
    }
}

/// vLLM's `structured_outputs_to_format` for the request's constraint, joined with the tag
/// in an `OrFormat`; `None` (the request's constraint stays) for a Lark `grammar` and a
/// `structural_tag`, which vLLM rewrites further.
fn output_format(asked: &Value) -> Option<Value> {
    let set = |k: &str| asked.get(k).filter(|v| !v.is_null() && **v != json!(false));
    if set("json_object").is_some() {
        return Some(json_schema_format(json!({"type": "object"}), "json"));
    }
    if let Some(schema) = set("json") {
        let schema = match schema {
            Value::String(s) => serde_json::from_str(s).ok()?,
            other => other.clone(),
        };
        return Some(json_schema_format(schema, "json"));
    }
    if let Some(pattern) = set("regex") {
        return Some(json!({"type": "regex", "pattern": pattern}));
    }
    if let Some(Value::Array(choices)) = set("choice") {
        let elements: Vec<Value> = choices.iter().map(|c| const_string(c.clone())).collect();
        return Some(json!({"type": "or", "elements": elements}));
    }
    // An EBNF grammar as it is; a Lark one vLLM converts with xgrammar (not reproduced).
    if let Some(Value::String(grammar)) = set("grammar") {
        return is_ebnf(grammar).then(|| json!({"type": "grammar", "grammar": grammar}));
    }
    None
}

/// A grammar with a `::=` rule outside comments (vLLM's `grammar_is_likely_lark` false).
fn is_ebnf(grammar: &str) -> bool {
    grammar.split('\n').any(|line| {
        let code = match (line.find('#'), line.find("//")) {
            (Some(a), Some(b)) => &line[..a.min(b)],
            (Some(a), None) | (None, Some(a)) => &line[..a],
            (None, None) => line,
        };
        code.contains("::=")
    })
}

/// Sets `stop_after_first` on every list of calls (`limit_to_single_tool_call`).
fn stop_after_first(format: &mut Value) {
    match format {
        Value::Object(o) => {
            let lists = [
                "triggered_tags",
                "token_triggered_tags",
                "tags_with_separator",
            ];
            if o.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| lists.contains(&t))
            {
                o.insert("stop_after_first".into(), Value::Bool(true));
            }
            o.values_mut().for_each(stop_after_first);
        }
        Value::Array(a) => a.iter_mut().for_each(stop_after_first),
        _ => {}
    }
}
