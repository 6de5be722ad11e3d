//! The structural tags of `tool_choice` (`mod.rs`): xgrammar's format objects as vLLM dumps
//! them (`tag`, `triggered_tags`, `tags_with_separator`, …), and the tag of each family:
//! vLLM's own hermes-style and GLM-4.7 tags, xgrammar's builtin templates for the rest.

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
