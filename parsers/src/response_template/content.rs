//! A closed tool region's value, as vLLM computes it: its content parser
//! (`vllm/parser/chat_parsing/content_parsers.py`: `text`, `json` with its dialect knobs,
//! `kv-lines`), its `transform`, then the arguments typed by the request's tool schemas
//! (`ResponseParser._coerce_tool_calls`). `None`: the region is malformed (vLLM's
//! `region_malformed`: the call is dropped).

use super::template::{placeholder, word, Field, JsonArgs, Kind};
use crate::pystr::{ascii_digits, py_space};
use crate::ToolSchemas;
use serde_json::{Map, Number, Value};

/// Python's `str.strip()`.
fn strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

fn text(s: &str, on: bool) -> &str {
    if on {
        strip(s)
    } else {
        s
    }
}

pub(crate) fn parse(kind: &Kind, body: &str) -> Option<Value> {
    match kind {
        Kind::Text { strip } => Some(Value::String(text(body, *strip).to_string())),
        Kind::Json(args) => json(body, args),
        Kind::KvLines {
            line_sep,
            kv_sep,
            strip,
            value,
        } => {
            let mut out = Map::new();
            for line in body.split(line_sep.as_str()) {
                let line = text(line, *strip);
                let Some((k, v)) = line.split_once(kv_sep.as_str()) else {
                    continue;
                };
                let (k, v) = (text(k, *strip), text(v, *strip));
                let v = match value {
                    None => Value::String(v.to_string()),
                    Some(kind) => parse(kind, v)?,
                };
                out.insert(k.to_string(), v);
            }
            Some(Value::Object(out))
        }
    }
}

/// Python's `json.loads` as far as serde_json reads the same documents.
fn loads(s: &str) -> Option<Value> {
    serde_json::from_str(s).ok()
}

/// vLLM's `_json`: strings between custom delimiters lifted out, bare keys quoted, then JSON.
fn json(body: &str, args: &JsonArgs) -> Option<Value> {
    const OPEN: char = '\u{1}';
    const CLOSE: char = '\u{2}';
    if !args.string_delims.is_empty() && body.contains([OPEN, CLOSE]) {
        return None;
    }
    let mut working = body.to_string();
    let mut captured: Vec<String> = Vec::new();
    for (o, c) in &args.string_delims {
        let mut out = String::with_capacity(working.len());
        let mut rest = working.as_str();
        while let Some(i) = rest.find(o.as_str()) {
            let after = &rest[i + o.len()..];
            let Some(j) = after.find(c.as_str()) else {
                break;
            };
            out.push_str(&rest[..i]);
            out.push(OPEN);
            out.push_str(&captured.len().to_string());
            out.push(CLOSE);
            captured.push(after[..j].to_string());
            rest = &after[j + c.len()..];
        }
        out.push_str(rest);
        working = out;
    }
    if args.unquoted_keys {
        working = quote_keys(&working);
    }
    for (i, s) in captured.iter().enumerate() {
        let mark = format!("{OPEN}{i}{CLOSE}");
        working = working.replace(&mark, &crate::pyjson::dumps_str(s));
    }
    match loads(&working) {
        Some(v) => Some(v),
        None if args.allow_non_json => Some(Value::String(text(body, args.strip).to_string())),
        None => None,
    }
}

/// `re.sub(r"(?<=[{,])(\w+):", r'"\1":', s)`.
fn quote_keys(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut prev: Option<char> = None;
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if matches!(prev, Some('{' | ',')) {
            let run: usize = rest
                .chars()
                .take_while(|&c| word(c))
                .map(char::len_utf8)
                .sum();
            if run > 0 && rest[run..].starts_with(':') {
                out.push('"');
                out.push_str(&rest[..run]);
                out.push_str("\":");
                prev = Some(':');
                i += run + 1;
                continue;
            }
        }
        let c = rest.chars().next().unwrap_or_default();
        out.push(c);
        prev = Some(c);
        i += c.len_utf8();
    }
    out
}

/// vLLM's `process_field` then `_coerce_tool_calls`.
pub(crate) fn value(
    field: &Field,
    body: &str,
    captures: &[(String, String)],
    schemas: &ToolSchemas,
) -> Option<Value> {
    let parsed = parse(&field.kind, body)?;
    let mut v = match &field.transform {
        None => parsed,
        Some(t) if field.transform_each => {
            let Value::Array(items) = parsed else {
                return None;
            };
            let mut out = Vec::new();
            for item in items {
                let Value::Object(item) = item else {
                    return None;
                };
                let mut scope = scope_of(captures);
                scope.extend(item);
                out.push(apply(t, &scope)?);
            }
            Value::Array(out)
        }
        Some(t) => {
            let mut scope = scope_of(captures);
            scope.insert("content".into(), parsed);
            apply(t, &scope)?
        }
    };
    if !schemas.is_empty() {
        coerce_calls(&mut v, schemas);
    }
    Some(v)
}

fn scope_of(captures: &[(String, String)]) -> Map<String, Value> {
    captures
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect()
}

/// vLLM's `_apply_transform`; `None` where it raises.
fn apply(t: &Value, scope: &Map<String, Value>) -> Option<Value> {
    match t {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                out.insert(k.clone(), apply(v, scope)?);
            }
            Some(Value::Object(out))
        }
        Value::Array(a) => a
            .iter()
            .map(|v| apply(v, scope))
            .collect::<Option<_>>()
            .map(Value::Array),
        Value::String(s) => match placeholder(s) {
            None => Some(t.clone()),
            Some(path) => {
                let mut keys = path.split('.');
                let mut v = scope.get(keys.next()?)?;
                for key in keys {
                    v = v.as_object()?.get(key)?;
                }
                Some(v.clone())
            }
        },
        _ => Some(t.clone()),
    }
}

/// `_coerce_tool_calls`: string arguments typed by the called tool's parameter schemas.
fn coerce_calls(v: &mut Value, schemas: &ToolSchemas) {
    if let Value::Array(items) = v {
        items.iter_mut().for_each(|i| coerce_calls(i, schemas));
        return;
    }
    let Some(function) = v.get_mut("function").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(name) = function
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return;
    };
    let Some(Value::Object(arguments)) = function.get_mut("arguments") else {
        return;
    };
    if schemas.params(&name).is_empty() {
        return;
    }
    for (key, argument) in arguments.iter_mut() {
        let Some(schema) = schemas.param_schema(&name, key) else {
            continue;
        };
        let types = schema_types(schema);
        if types.is_empty() {
            continue;
        }
        match argument {
            Value::String(raw) => *argument = coerce(raw, &types),
            Value::Array(items) if !types.iter().any(|t| t == "array") => {
                for item in items.iter_mut() {
                    if let Value::String(raw) = item {
                        *item = coerce(raw, &types);
                    }
                }
            }
            _ => {}
        }
    }
}

/// vLLM's `_schema_types`.
fn schema_types(schema: &Value) -> Vec<String> {
    let Some(schema) = schema.as_object() else {
        return Vec::new();
    };
    let mut types: Vec<String> = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => types.push(t.clone()),
        Some(Value::Array(list)) => {
            types.extend(list.iter().filter_map(Value::as_str).map(str::to_string))
        }
        _ => {}
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(choices)) = schema.get(union) {
            for c in choices {
                types.extend(schema_types(c));
            }
        }
    }
    let nullable = schema.get("nullable").is_some_and(crate::registry::truthy);
    if nullable && !types.iter().any(|t| t == "null") {
        types.push("null".into());
    }
    types
}

/// vLLM 0.32's `_coerce`: the first type the text reads as, else the text.
fn coerce(raw: &str, types: &[String]) -> Value {
    for t in types {
        let got = match t.as_str() {
            "integer" => py_int(raw).map(Value::Number),
            "number" => py_number(raw),
            "boolean" => match strip(raw).to_lowercase().as_str() {
                "true" | "1" => Some(Value::Bool(true)),
                "false" | "0" => Some(Value::Bool(false)),
                _ => None,
            },
            "null" => matches!(strip(raw), "null" | "None").then_some(Value::Null),
            "object" => loads(raw).filter(Value::is_object),
            "array" => loads(raw).filter(Value::is_array),
            _ => None,
        };
        if let Some(v) = got {
            return v;
        }
    }
    Value::String(raw.to_string())
}

/// Python's numeric literal body: digits with single `_` between them, any script's digits
/// read as ASCII; `None` where Python's `int()`/`float()` refuse the underscores.
fn py_digits(s: &str) -> Option<String> {
    let s = ascii_digits(s);
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let digit = |j: Option<&u8>| j.is_some_and(u8::is_ascii_digit);
            if !digit(i.checked_sub(1).and_then(|j| b.get(j))) || !digit(b.get(i + 1)) {
                return None;
            }
        }
    }
    Some(s.replace('_', ""))
}

/// Python's `int(s)` (base 10), where the value fits 64 bits.
fn py_int(raw: &str) -> Option<Number> {
    let s = py_digits(raw.trim())?;
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s.as_str()),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if neg {
        format!("-{digits}").parse::<i64>().ok().map(Number::from)
    } else {
        digits.parse::<u64>().ok().map(Number::from)
    }
}

/// `float(raw)`, kept an integer where the text has no `.` and the value is whole.
fn py_number(raw: &str) -> Option<Value> {
    let s = py_digits(raw.trim())?;
    let body = s.trim_start_matches(['+', '-']);
    let lower = body.to_ascii_lowercase();
    let named = ["inf", "infinity", "nan"].contains(&lower.as_str());
    let numeric = !body.is_empty()
        && body
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'));
    if named || !numeric || s.len() - body.len() > 1 {
        return None;
    }
    let f: f64 = s.parse().ok()?;
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 && !raw.contains('.') {
        // Exact: a whole f64 below 2^63 converts without loss.
        if f.abs() < 9.223_372_036_854_775e18 {
            return Some(Value::Number(Number::from(f as i64)));
        }
        return None;
    }
    Number::from_f64(f).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_dialect_of_gemma4() {
        let args = JsonArgs {
            unquoted_keys: true,
            string_delims: vec![("<|\"|>".into(), "<|\"|>".into())],
            allow_non_json: false,
            strip: true,
        };
        let v = json(
            r#"{hour:7,label:<|"|>a, b:c<|"|>,n:{inner:<|"|>x<|"|>}}"#,
            &args,
        );
        assert_eq!(
            v,
            Some(json!({"hour": 7, "label": "a, b:c", "n": {"inner": "x"}}))
        );
        assert_eq!(json("{a:1", &args), None);
        assert_eq!(
            quote_keys("{a:1,b_2:{c:3}, d:4}"),
            r#"{"a":1,"b_2":{"c":3}, d:4}"#
        );
    }

    #[test]
    fn coercion_is_pythons() {
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(coerce(" 1_000 ", &t(&["integer"])), json!(1000));
        assert_eq!(coerce("3.0", &t(&["integer"])), json!("3.0"));
        assert_eq!(coerce("1e3", &t(&["number"])), json!(1000));
        assert_eq!(coerce("2.50", &t(&["number"])), json!(2.5));
        assert_eq!(coerce("nan", &t(&["number"])), json!("nan"));
        assert_eq!(coerce("True", &t(&["boolean"])), json!(true));
        assert_eq!(coerce("None", &t(&["string", "null"])), json!(null));
        assert_eq!(coerce("5", &t(&["string", "integer"])), json!(5));
        assert_eq!(coerce("[1]", &t(&["object", "array"])), json!([1]));
    }
}
