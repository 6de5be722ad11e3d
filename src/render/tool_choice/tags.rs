//! The structural tags of `tool_choice` (`mod.rs`): xgrammar's format objects as vLLM dumps
//! them (`tag`, `triggered_tags`, `tags_with_separator`, …), and the tag of each family:
//! vLLM's own hermes-style, GLM-4.7, Kimi K3 and HYV4 tags, xgrammar's builtin templates for
//! the rest.

use super::{Choice, Tool};
use llm_render_parsers::pyjson::dumps_ascii;
use llm_render_parsers::{Arguments, CallGroup, CallTags};
use serde_json::{json, Map, Value};

pub(super) fn json_schema_format(schema: Value, style: &str) -> Value {
    json!({"type": "json_schema", "json_schema": schema, "style": style, "any_order": false,
        "max_whitespace_cnt": null, "excludes": []})
}

pub(super) fn const_string(value: impl Into<Value>) -> Value {
    json!({"type": "const_string", "value": value.into()})
}

/// A tag; `end` one string or a list of them (any ends it).
pub(super) fn tag(begin: String, content: Value, end: impl Into<Value>) -> Value {
    json!({"type": "tag", "begin": begin, "content": content, "end": end.into()})
}

pub(super) fn any_text(excludes: &[&str]) -> Value {
    json!({"type": "any_text", "excludes": excludes, "max_tokens": null, "max_chars": null})
}

pub(super) fn triggered(
    trigger: &str,
    tags: Vec<Value>,
    at_least_one: bool,
    excludes: &[&str],
) -> Value {
    json!({"type": "triggered_tags", "triggers": [trigger], "tags": tags,
        "at_least_one": at_least_one, "stop_after_first": false, "excludes": excludes})
}

pub(super) fn with_separator(tags: Vec<Value>, separator: &str, stop_after_first: bool) -> Value {
    json!({"type": "tags_with_separator", "tags": tags, "separator": separator,
        "at_least_one": true, "stop_after_first": stop_after_first})
}

pub(super) fn sequence(elements: Vec<Value>) -> Value {
    json!({"type": "sequence", "elements": elements})
}

/// vLLM's `_hermes_style_structural_tag`: each call with newlines inside its tags and
/// without.
pub(super) fn hermes_tag(tools: &[Tool], choice: Choice, start: &str, end: &str) -> Value {
    let mut tags = Vec::new();
    for tool in tools {
        for (open, close) in [
            (format!("{start}\n{{\"name\": \""), format!("}}\n{end}")),
            (format!("{start}{{\"name\": \""), format!("}}{end}")),
        ] {
            tags.push(tag(
                format!("{open}{}\", \"arguments\": ", tool.name),
                json_schema_format(tool.schema(), "json"),
                close,
            ));
        }
    }
    match choice {
        Choice::Auto => triggered(start, tags, false, &[]),
        Choice::Named(_) => with_separator(tags, "", true),
        Choice::Required => with_separator(tags, "", false),
    }
}

/// One call of an xgrammar template; `outer` wraps it in a section (a named tool's call in
/// DeepSeek's).
pub(super) fn call_tag(tags: &CallTags, tool: &Tool, outer: (&str, &str)) -> Value {
    let schema = tool.schema();
    let content = match tags.arguments {
        Arguments::Json => json_schema_format(schema, "json"),
        Arguments::QwenXml => json_schema_format(schema, "qwen_xml"),
        Arguments::GlmXml => json_schema_format(schema, "glm_xml"),
        Arguments::Xml(style) => json_schema_format(schema, style),
        Arguments::IndexedJson { marker } => sequence(vec![
            json!({"type": "regex", "pattern": "\\d+"}),
            const_string(marker),
            json_schema_format(schema, "json"),
        ]),
    };
    tag(
        format!("{}{}{}{}", outer.0, tags.begin, tool.name, tags.after_name),
        content,
        format!("{}{}", tags.end, outer.1),
    )
}

/// An xgrammar builtin template with reasoning off and `parallel_tool_calls` left true (or
/// one of vLLM's own tags of the same shapes: minimax, plamo3).
pub(super) fn builtin_tag(tags: &CallTags, tools: &[Tool], choice: Choice) -> Value {
    let calls = || tools.iter().map(|t| call_tag(tags, t, ("", ""))).collect();
    // A named tool: the one tool shown.
    let named = |outer| {
        tools
            .first()
            .map_or(Value::Null, |t| call_tag(tags, t, outer))
    };
    match tags.group {
        CallGroup::Triggered { trigger } => match choice {
            Choice::Named(_) => named(("", "")),
            _ => triggered(
                trigger,
                calls(),
                matches!(choice, Choice::Required),
                tags.excludes,
            ),
        },
        CallGroup::Section {
            begin,
            end,
            separator,
            as_tag,
        } => {
            let inner = || with_separator(calls(), separator, false);
            match choice {
                Choice::Auto => triggered(
                    begin,
                    vec![tag(begin.into(), inner(), end)],
                    false,
                    tags.excludes,
                ),
                Choice::Named(_) if as_tag => named((begin, end)),
                Choice::Named(_) => sequence(vec![
                    const_string(begin),
                    named(("", "")),
                    const_string(end),
                ]),
                Choice::Required if as_tag => tag(begin.into(), inner(), end),
                Choice::Required => sequence(vec![const_string(begin), inner(), const_string(end)]),
            }
        }
        // DeepSeek's DSML (`get_deepseek_v3_2_structural_tag`) and vLLM's MiniMax tag
        // (`get_minimax_structural_tag`).
        CallGroup::Block {
            trigger,
            lead,
            begin,
            end,
            named_in_list,
        } => {
            let inner = match choice {
                Choice::Auto => {
                    let block = tag(begin.into(), with_separator(calls(), "", false), end);
                    return triggered(trigger, vec![block], false, tags.excludes);
                }
                Choice::Named(_) if named_in_list => with_separator(calls(), "", true),
                Choice::Named(_) => named(("", "")),
                Choice::Required => with_separator(calls(), "", false),
            };
            sequence(vec![
                const_string(format!("{lead}{begin}")),
                inner,
                const_string(end),
            ])
        }
        // vLLM's PLaMo 3 tag (`get_plamo3_structural_tag`).
        CallGroup::Wrapped { begin, ends } => {
            let named = matches!(choice, Choice::Named(_));
            let block = tag(
                begin.into(),
                with_separator(calls(), "", named),
                ends.to_vec(),
            );
            match choice {
                Choice::Auto => triggered(begin, vec![block], false, tags.excludes),
                _ => block,
            }
        }
    }
}

/// Text GLM-4.7's values (and reasoning) may not hold.
pub(super) const GLM_VALUE_EXCLUDES: [&str; 8] = [
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
];

/// vLLM's own GLM-4.7 tag (`get_glm_4_7_structural_tag`): xgrammar's template when every
/// tool is strict; else strict tools by their schema and the others key by key
/// (`_glm_4_7_tool_tag`), `tags_with_separator` for `required` and a named tool.
pub(super) fn glm47_tag(tags: &CallTags, tools: &[Tool], choice: Choice) -> Value {
    if tools.iter().all(|t| t.strict) {
        return builtin_tag(tags, tools, choice);
    }
    let calls = tools
        .iter()
        .map(|t| {
            let content = if t.strict {
                json_schema_format(t.schema(), "glm_xml")
            } else {
                glm47_loose_content(t.parameters)
            };
            tag(format!("{}{}", tags.begin, t.name), content, tags.end)
        })
        .collect();
    match (tags.group, choice) {
        (CallGroup::Triggered { trigger }, Choice::Auto) => {
            triggered(trigger, calls, false, tags.excludes)
        }
        _ => with_separator(calls, "", matches!(choice, Choice::Named(_))),
    }
}

/// A non-strict GLM-4.7 call's arguments: any of its plain object schema's keys, each with
/// its value's basic type, any number of times; any JSON in GLM's XML otherwise.
pub(super) fn glm47_loose_content(parameters: Option<&Value>) -> Value {
    let Some(properties) = glm47_plain_properties(parameters) else {
        return json_schema_format(Value::Bool(true), "glm_xml");
    };
    let mut pairs: Vec<Value> = properties
        .iter()
        .map(|(key, prop)| {
            sequence(vec![
                const_string(format!("<arg_key>{key}</arg_key><arg_value>")),
                glm47_value(prop),
                const_string("</arg_value>"),
            ])
        })
        .collect();
    let content = if pairs.len() == 1 {
        pairs.remove(0)
    } else {
        json!({"type": "or", "elements": pairs})
    };
    json!({"type": "star", "content": content})
}

/// `properties` of a plain object schema (`_glm_4_7_plain_properties`).
pub(super) fn glm47_plain_properties(parameters: Option<&Value>) -> Option<&Map<String, Value>> {
    let params = parameters?.as_object()?;
    let properties = params.get("properties")?.as_object()?;
    let combined = ["$ref", "allOf", "anyOf", "oneOf", "patternProperties"];
    if properties.is_empty()
        || params.get("additionalProperties") == Some(&Value::Bool(true))
        || combined.iter().any(|k| params.contains_key(*k))
    {
        return None;
    }
    Some(properties)
}

/// One value's format (`_glm_4_7_value_format`): its enum's values, its JSON type, or text.
pub(super) fn glm47_value(prop: &Value) -> Value {
    let text = || any_text(&GLM_VALUE_EXCLUDES);
    let one_or = |mut formats: Vec<Value>| {
        if formats.len() == 1 {
            formats.remove(0)
        } else {
            json!({"type": "or", "elements": formats})
        }
    };
    if let Some(values) = prop.get("enum") {
        let values = values.as_array().map(Vec::as_slice).unwrap_or_default();
        return one_or(
            values
                .iter()
                .map(|v| match v {
                    Value::String(s) => const_string(s.as_str()),
                    other => const_string(dumps_ascii(other)),
                })
                .collect(),
        );
    }
    match prop.get("type") {
        Some(Value::Array(types)) => {
            let mut formats: Vec<Value> = types
                .iter()
                .filter(|t| t.as_str() != Some("string"))
                .map(|t| glm47_value(&json!({ "type": t })))
                .collect();
            if types.iter().any(|t| t.as_str() == Some("string")) {
                formats.push(text());
            }
            one_or(formats)
        }
        None | Some(Value::Null) => text(),
        Some(Value::String(s)) if s == "string" => text(),
        Some(t) => json_schema_format(json!({ "type": t }), "json"),
    }
}

fn regex(pattern: &str) -> Value {
    json!({"type": "regex", "pattern": pattern})
}

fn optional(content: Value) -> Value {
    json!({"type": "optional", "content": content})
}

fn star(content: Value) -> Value {
    json!({"type": "star", "content": content})
}

/// One format, or an `or` of several.
fn one_or(mut formats: Vec<Value>) -> Value {
    if formats.len() == 1 {
        formats.remove(0)
    } else {
        json!({"type": "or", "elements": formats})
    }
}

/// Kimi K3's XTML markers (`_K3_OPEN`, `_K3_CLOSE`, `_K3_SEP`).
const K3_OPEN: &str = "<|open|>";
const K3_CLOSE: &str = "<|close|>";
const K3_SEP: &str = "<|sep|>";

/// An XTML attribute value (`_k3_escape_attr`: `&`, then `"`).
fn k3_attr(value: &str) -> String {
    value.replace('&', "&amp;").replace('"', "&quot;")
}

/// An `argument` tag with any key and type and a raw value (`_k3_permissive_argument_tag`).
fn k3_any_argument() -> Value {
    tag(
        format!("{K3_OPEN}argument "),
        sequence(vec![regex("[^<]*<\\|sep\\|>"), any_text(&[K3_CLOSE])]),
        format!("{K3_CLOSE}argument{K3_SEP}"),
    )
}

/// An integer as Python's `isinstance(v, int)` sees it (a bool is one).
fn py_int(value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::Bool(b) => Some(i64::from(*b)),
        v => v.as_i64(),
    }
}

/// A string value's length bound as a regex (`_k3_bounded_string_regex`).
fn k3_bounded_string(prop: &Map<String, Value>) -> Option<Value> {
    let max = py_int(prop.get("maxLength")).filter(|m| (0..=4096).contains(m))?;
    let min = match prop.get("minLength") {
        None => 0,
        v => py_int(v).filter(|m| (0..=max).contains(m)).unwrap_or(0),
    };
    Some(regex(&format!("(?:[^<]|<[^|]){{{min},{max}}}")))
}

/// The `argument` tag of property `key` (`_k3_argument_tag`); `None` for a type it does not
/// know (a union, none).
fn k3_argument(key: &str, prop: &Value, defs: &[(&str, &Value)]) -> Option<Value> {
    let empty = Map::new();
    let prop = prop.as_object().unwrap_or(&empty);
    let kind = match prop.get("type").and_then(Value::as_str)? {
        "integer" => "number",
        t @ ("string" | "number" | "boolean" | "null" | "object" | "array") => t,
        _ => return None,
    };
    let content = if kind == "string" {
        let values = match prop.get("enum") {
            None | Some(Value::Null) => match prop.get("const") {
                Some(c @ Value::String(_)) => Some(vec![c.clone()]),
                _ => None,
            },
            Some(v) => v.as_array().cloned(),
        };
        let values = values.filter(|v| {
            !v.is_empty()
                && v.len() <= 256
                && v.iter()
                    .all(|s| s.as_str().is_some_and(|s| !s.contains("<|")))
        });
        match values {
            Some(values) => one_or(values.into_iter().map(const_string).collect()),
            None => k3_bounded_string(prop).unwrap_or_else(|| any_text(&[K3_CLOSE])),
        }
    } else {
        let mut embedded = prop.clone();
        for (k, v) in defs {
            embedded.entry(*k).or_insert_with(|| (*v).clone());
        }
        json_schema_format(Value::Object(embedded), "json")
    };
    Some(tag(
        format!(
            "{K3_OPEN}argument key=\"{}\" type=\"{kind}\"{K3_SEP}",
            k3_attr(key)
        ),
        content,
        format!("{K3_CLOSE}argument{K3_SEP}"),
    ))
}

/// A call's `argument` tags (`_k3_arguments_block`): at least one when its schema requires
/// properties, any number otherwise, any argument for a schema without properties.
fn k3_arguments(schema: &Value) -> Value {
    let Some(properties) = schema
        .get("properties")
        .and_then(Value::as_object)
        .filter(|p| !p.is_empty())
    else {
        return star(k3_any_argument());
    };
    let defs: Vec<(&str, &Value)> = ["$defs", "definitions"]
        .into_iter()
        .filter_map(|k| schema.get(k).filter(|d| d.is_object()).map(|d| (k, d)))
        .collect();
    let inner = one_or(
        properties
            .iter()
            .map(|(k, p)| k3_argument(k, p, &defs).unwrap_or_else(k3_any_argument))
            .collect(),
    );
    match schema.get("required") {
        Some(Value::Array(r)) if !r.is_empty() => json!({"type": "plus", "content": inner}),
        _ => star(inner),
    }
}

/// vLLM's own Kimi K3 tag (`get_kimi_k3_structural_tag`): the response channel, the tools
/// channel (optional for `auto`), the message's close.
pub(super) fn kimi_k3_tag(tools: &[Tool], choice: Choice) -> Value {
    let calls = tools
        .iter()
        .map(|t| {
            tag(
                format!("{K3_OPEN}call tool=\"{}\" index=\"", k3_attr(t.name)),
                sequence(vec![
                    regex("[0-9]+"),
                    const_string(format!("\"{K3_SEP}")),
                    k3_arguments(&t.schema()),
                ]),
                format!("{K3_CLOSE}call{K3_SEP}"),
            )
        })
        .collect();
    let channel = tag(
        format!("{K3_OPEN}tools{K3_SEP}"),
        with_separator(calls, "", false),
        format!("{K3_CLOSE}tools{K3_SEP}"),
    );
    let channel = match choice {
        Choice::Auto => optional(channel),
        _ => channel,
    };
    sequence(vec![
        optional(const_string(format!("{K3_OPEN}response{K3_SEP}"))),
        tag(
            String::new(),
            any_text(&[K3_OPEN, K3_CLOSE, "<|end_of_msg|>"]),
            format!("{K3_CLOSE}response{K3_SEP}"),
        ),
        channel,
        optional(const_string(format!("{K3_CLOSE}message{K3_SEP}"))),
    ])
}

/// vLLM's own HYV4 tag for `required` and a named tool (`get_hy_v4_structural_tag`,
/// reasoning off): every tool's keys from its `parameters`, strict or not. `suffix`: the
/// checkpoint's token suffix, in every tag (`<tool_call:6124c78e>`), or empty.
pub(super) fn hy_v4_tag(tools: &[Tool], choice: Choice, suffix: &str) -> Value {
    let open = |name: &str| format!("<{name}{suffix}>");
    let close = |name: &str| format!("</{name}{suffix}>");
    let pair = |key: &Value| {
        sequence(vec![
            const_string(open("arg_key")),
            const_string(key.clone()),
            const_string(close("arg_key")),
            const_string(open("arg_value")),
            any_text(&[]),
            const_string(close("arg_value")),
        ])
    };
    let calls = tools
        .iter()
        .map(|t| {
            let empty = Map::new();
            let params = t.parameters.and_then(Value::as_object).unwrap_or(&empty);
            let properties = params
                .get("properties")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            let required: &[Value] = match params.get("required") {
                Some(Value::Array(r)) => r,
                _ => &[],
            };
            let is_required = |k: &str| required.iter().any(|r| r.as_str() == Some(k));
            // Required keys as `properties` orders them, then those it lacks.
            let mut elements: Vec<Value> = properties
                .keys()
                .filter(|k| is_required(k))
                .map(|k| pair(&Value::String(k.clone())))
                .collect();
            elements.extend(
                required
                    .iter()
                    .filter(|r| !r.as_str().is_some_and(|r| properties.contains_key(r)))
                    .map(pair),
            );
            let optional: Vec<Value> = properties
                .keys()
                .filter(|k| !is_required(k))
                .map(|k| pair(&Value::String(k.clone())))
                .collect();
            if !optional.is_empty() {
                elements.push(star(one_or(optional)));
            }
            let content = if elements.is_empty() {
                any_text(&[])
            } else {
                sequence(elements)
            };
            tag(
                format!("{}{}", open("tool_call"), t.name),
                content,
                close("tool_call"),
            )
        })
        .collect();
    sequence(vec![
        const_string(open("tool_calls")),
        with_separator(calls, "", matches!(choice, Choice::Named(_))),
        const_string(close("tool_calls")),
    ])
}

#[cfg(test)]
mod tests {
    use super::super::{Choice, Tool};
    use super::hy_v4_tag;
    use serde_json::json;

    /// vLLM's `get_hy_v4_structural_tag(token_suffix=…)` writes the suffix into each of its
    /// tags and changes nothing else.
    #[test]
    fn a_hy_v4_tag_carries_the_checkpoints_suffix() {
        let params = json!({"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"]});
        let tools = [Tool {
            name: "get_weather",
            strict: false,
            parameters: Some(&params),
        }];
        let plain = hy_v4_tag(&tools, Choice::Required, "").to_string();
        let suffixed = hy_v4_tag(&tools, Choice::Required, ":6124c78e").to_string();
        let mut want = plain.clone();
        for tag in ["tool_calls", "tool_call", "arg_key", "arg_value"] {
            want = want
                .replace(&format!("<{tag}>"), &format!("<{tag}:6124c78e>"))
                .replace(&format!("</{tag}>"), &format!("</{tag}:6124c78e>"));
        }
        assert_ne!(plain, suffixed);
        assert_eq!(suffixed, want);
    }
}
