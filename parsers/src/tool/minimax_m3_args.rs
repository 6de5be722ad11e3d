//! The arguments of a MiniMax-M3 `<invoke>`: parameters as nested elements, each tag behind
//! the namespace marker `]<]minimax[>[`, read into JSON as vLLM 0.32/0.33's minimax_m3
//! parser (`vllm/parser/minimax_m3.py`) reads them:
//!
//! ```text
//! ]<]minimax[>[<user_id>42]<]minimax[>[</user_id>
//! ]<]minimax[>[<items>]<]minimax[>[<item>]<]minimax[>[<sku>a]<]minimax[>[</sku>]<]minimax[>[</item>]<]minimax[>[</items>
//! ```
//!
//! * An element holding elements is an object, or a list when its schema is an array (the
//!   children's names are then ignored); its other text, if any is not whitespace, goes
//!   under `$text` (`$$text` if a child has that name, ...). A name written twice collects
//!   its values into a list.
//! * A text value is typed by its schema as the XML families type values ([`coerce`]); with
//!   no schema it stays a string. An empty element whose schema is a container (and not a
//!   string) is `[]` or `{}`.
//! * Parameters are read up to the first malformed or unterminated element; the ones before
//!   it are kept.

use super::coerce::{coerce, Types};
use crate::pyjson::dumps_str;
use crate::pystr::py_space;
use serde_json::Value;

/// The marker in front of every MiniMax-M3 tag.
const NAMESPACE: &str = "]<]minimax[>[";
/// Elements deeper than this are malformed (vLLM's `MAX_ELEMENT_DEPTH`).
const MAX_DEPTH: usize = 128;
const MIXED_TEXT: &str = "$text";

/// An element's value: its text, or its named children in order.
enum Elem {
    Text(String),
    Children(Vec<(String, Elem)>),
}

/// A converted value, written as JSON.
enum Json {
    /// JSON text as [`coerce`] writes it.
    Raw(String),
    Str(String),
    List(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

/// The element whose opening tag (marker included) starts at `pos`: its name, value and the
/// offset after its closing tag; `None` when malformed or unterminated.
fn element(text: &str, pos: usize, depth: usize) -> Option<(String, Elem, usize)> {
    if depth > MAX_DEPTH {
        return None;
    }
    let name_start = pos + NAMESPACE.len() + 1;
    let name_end = name_start + text.get(name_start..)?.find('>')?;
    let name = &text[name_start..name_end];
    if name.is_empty() || name.starts_with('/') || name.trim_matches(py_space).is_empty() {
        return None;
    }
    let close = format!("{NAMESPACE}</{name}>");
    let open = format!("{NAMESPACE}<");
    let mut pos = name_end + 1;
    let mut body = String::new();
    let mut children = Vec::new();
    loop {
        let marker = pos + text[pos..].find(NAMESPACE)?;
        body.push_str(&text[pos..marker]);
        if text[marker..].starts_with(&close) {
            pos = marker + close.len();
            break;
        }
        if !text[marker..].starts_with(&open) {
            return None;
        }
        let (child, value, next) = element(text, marker, depth + 1)?;
        children.push((child, value));
        pos = next;
    }
    if children.is_empty() {
        return Some((name.to_string(), Elem::Text(body), pos));
    }
    if !body.trim_matches(py_space).is_empty() {
        let mut field = MIXED_TEXT.to_string();
        while children.iter().any(|(n, _)| *n == field) {
            field.insert(0, '$');
        }
        children.push((field, Elem::Text(body)));
    }
    Some((name.to_string(), Elem::Children(children), pos))
}

/// The parameter elements of an invoke's body, up to the first malformed one.
fn params(raw: &str) -> Vec<(String, Elem)> {
    let open = format!("{NAMESPACE}<");
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        pos += raw[pos..].len() - raw[pos..].trim_start_matches(py_space).len();
        if !raw[pos..].starts_with(&open) {
            return out;
        }
        let Some((name, value, next)) = element(raw, pos, 1) else {
            return out;
        };
        out.push((name, value));
        pos = next;
    }
}

/// The first `array` or `object` alternative of a schema (vLLM's `_container_schema`).
fn container(schema: &Value) -> Option<(&'static str, &Value)> {
    let types = schema.get("type");
    for kind in ["array", "object"] {
        let named = match types {
            Some(Value::String(t)) => t == kind,
            Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(kind)),
            _ => false,
        };
        if named {
            return Some((kind, schema));
        }
    }
    if types.is_none_or(Value::is_null) {
        if schema.get("items").is_some() {
            return Some(("array", schema));
        }
        if schema.get("properties").is_some() || schema.get("additionalProperties").is_some() {
            return Some(("object", schema));
        }
    }
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|f| schema.get(*f).and_then(Value::as_array))
        .flatten()
        .filter(|c| c.is_object())
        .find_map(container)
}

fn convert(value: &Elem, schema: Option<&Value>) -> Json {
    let schema = schema.filter(|s| s.is_object());
    let kind = schema.and_then(container);
    match value {
        Elem::Text(text) => {
            let Some(schema) = schema else {
                return Json::Str(text.clone());
            };
            let types = Types::from_schema(schema);
            if let Some((kind, _)) = kind {
                if !types.contains(Types::STRING) && text.trim_matches(py_space).is_empty() {
                    return if kind == "array" {
                        Json::List(Vec::new())
                    } else {
                        Json::Obj(Vec::new())
                    };
                }
            }
            Json::Raw(coerce(text, types))
        }
        Elem::Children(children) => match kind {
            Some(("array", s)) => {
                let items = s.get("items");
                Json::List(children.iter().map(|(_, c)| convert(c, items)).collect())
            }
            Some((_, s)) => object(children, Some(s)),
            None => object(children, None),
        },
    }
}

/// Named elements as an object, typed by an object schema; a repeated name collects into a
/// list.
fn object(elements: &[(String, Elem)], schema: Option<&Value>) -> Json {
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let additional = schema.and_then(|s| s.get("additionalProperties"));
    collect(elements, |name| {
        props.and_then(|p| p.get(name)).or(additional)
    })
}

fn collect<'s>(elements: &[(String, Elem)], schema: impl Fn(&str) -> Option<&'s Value>) -> Json {
    let mut out: Vec<(String, Json)> = Vec::new();
    let mut repeated: Vec<&str> = Vec::new();
    for (name, element) in elements {
        let value = convert(element, schema(name));
        match out.iter_mut().find(|(n, _)| n == name) {
            None => out.push((name.clone(), value)),
            Some((_, slot)) => {
                if repeated.contains(&name.as_str()) {
                    if let Json::List(items) = slot {
                        items.push(value);
                    }
                } else {
                    let first = std::mem::replace(slot, Json::List(Vec::new()));
                    *slot = Json::List(vec![first, value]);
                    repeated.push(name);
                }
            }
        }
    }
    Json::Obj(out)
}

fn write(out: &mut String, v: &Json) {
    match v {
        Json::Raw(text) => out.push_str(text),
        Json::Str(s) => out.push_str(&dumps_str(s)),
        Json::List(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                write(out, item);
            }
            out.push(']');
        }
        Json::Obj(fields) => {
            out.push('{');
            for (n, (k, item)) in fields.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                out.push_str(&dumps_str(k));
                out.push_str(": ");
                write(out, item);
            }
            out.push('}');
        }
    }
}

/// An invoke's body as its arguments JSON; `schema` gives a parameter's schema (`None`:
/// undeclared).
pub(super) fn arguments<'s>(raw: &str, schema: impl Fn(&str) -> Option<&'s Value>) -> String {
    let mut out = String::new();
    write(&mut out, &collect(&params(raw), schema));
    out
}
