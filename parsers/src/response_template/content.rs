//! A closed tool region's value, as vLLM computes it: its content parser
//! (`vllm/parser/chat_parsing/content_parsers.py`: `text`, `json` with its dialect knobs,
//! `kv-lines`), its `transform`, then the arguments typed by the request's tool schemas
//! (`ResponseParser._coerce_tool_calls`). `None`: the region is malformed (vLLM's
//! `region_malformed`: the call is dropped).

use super::template::{placeholder, space, word, Field, JsonArgs, Kind};
use crate::pystr::py_space;
use crate::tool::coerce::{count_marked, integral_digits, loads_exact, marked, py_float, py_int};
use crate::ToolSchemas;
use serde_json::{Map, Number, Value};

/// A region's value. Python's integers past 64 bits are marked strings (a NUL and the digits,
/// as `tool::coerce` reads them); `exact` says the value's marked strings are such integers
/// (else a string the model wrote that looks like one, and no integer was marked).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Valued {
    pub value: Value,
    pub exact: bool,
}

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

fn parse(kind: &Kind, body: &str, exact: &mut bool) -> Option<Value> {
    match kind {
        Kind::Text { strip } => Some(Value::String(text(body, *strip).to_string())),
        Kind::Json(args) => json(body, args, exact),
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
                    Some(kind) => parse(kind, v, exact)?,
                };
                out.insert(k.to_string(), v);
            }
            Some(Value::Object(out))
        }
        Kind::XmlInline {
            open,
            mid,
            close,
            value,
            merge,
        } => {
            let mut out = Map::new();
            for (k, v) in xml_tags(body, open, mid, close) {
                let v = match value {
                    None => Value::String(v.to_string()),
                    Some(kind) => parse(kind, v, exact)?,
                };
                match out.get_mut(k) {
                    Some(Value::Array(list)) if *merge => list.push(v),
                    Some(old) if *merge => *old = Value::Array(vec![old.take(), v]),
                    _ => {
                        out.insert(k.to_string(), v);
                    }
                }
            }
            Some(Value::Object(out))
        }
    }
}

/// `re.finditer(open + r"(?P<key>\w+)" + mid + r"\s*(?P<value>.*?)\s*" + close, body,
/// re.DOTALL)`: each tag's key and value. (`mid` cannot continue the key and `close` cannot
/// start with whitespace, so the value is the text up to the first `close`, less whitespace
/// on both sides.)
fn xml_tags<'a>(body: &'a str, open: &str, mid: &str, close: &str) -> Vec<(&'a str, &'a str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = body[from..].find(open) {
        let at = from + i;
        let key_from = at + open.len();
        let key_len: usize = body[key_from..]
            .chars()
            .take_while(|&c| word(c))
            .map(char::len_utf8)
            .sum();
        let after_key = key_from + key_len;
        if key_len == 0 || !body[after_key..].starts_with(mid) {
            // No tag here: the next position.
            from = at + body[at..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let value_from = after_key + mid.len();
        let value_from = value_from
            + body[value_from..]
                .chars()
                .take_while(|&c| space(c))
                .map(char::len_utf8)
                .sum::<usize>();
        let Some(j) = body[value_from..].find(close) else {
            break;
        };
        let value = body[value_from..value_from + j].trim_end_matches(space);
        out.push((&body[key_from..after_key], value));
        from = value_from + j + close.len();
    }
    out
}

/// Python's `json.loads`, integers past 64 bits marked (`exact` set when any is).
fn loads(s: &str, exact: &mut bool) -> Option<Value> {
    let (v, marks) = loads_exact(s)?;
    *exact |= marks;
    Some(v)
}

/// vLLM's `_json`: strings between custom delimiters lifted out, bare keys quoted, then JSON.
fn json(body: &str, args: &JsonArgs, exact: &mut bool) -> Option<Value> {
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
    match loads(&working, exact) {
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
) -> Option<Valued> {
    let mut exact = false;
    let parsed = parse(&field.kind, body, &mut exact)?;
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
    // Where the model wrote a string spelled as a marker, and no integer was marked, none
    // can be marked now (coercion leaves such integers as text).
    let mut ints = Ints {
        exact,
        markable: exact || count_marked(&v) == 0,
    };
    if !schemas.is_empty() {
        coerce_calls(&mut v, schemas, &mut ints);
    }
    Some(Valued {
        value: v,
        exact: ints.exact,
    })
}

/// Whether marked strings are integers, and whether coercion may mark one.
struct Ints {
    exact: bool,
    markable: bool,
}

impl Ints {
    fn is_int(&self, v: &Value) -> bool {
        self.exact && v.as_str().and_then(marked).is_some()
    }
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
fn coerce_calls(v: &mut Value, schemas: &ToolSchemas, ints: &mut Ints) {
    if let Value::Array(items) = v {
        items
            .iter_mut()
            .for_each(|i| coerce_calls(i, schemas, ints));
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
        if ints.is_int(argument) {
            continue;
        }
        match argument {
            Value::String(raw) => *argument = coerce(raw, &types, ints),
            Value::Array(items) if !types.iter().any(|t| t == "array") => {
                for item in items.iter_mut() {
                    if ints.is_int(item) {
                        continue;
                    }
                    if let Value::String(raw) = item {
                        *item = coerce(raw, &types, ints);
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

/// vLLM 0.33's `_coerce`: the first type the text reads as, else the text. An `integer` is
/// Python's `int` of the text, or a whole number written as a float (`"3.0"`, `"1e3"`), as
/// 0.33 reads JSON Schema's integers (0.32 kept such text as written).
fn coerce(raw: &str, types: &[String], ints: &mut Ints) -> Value {
    for t in types {
        let got = match t.as_str() {
            "integer" => py_int(raw)
                .or_else(|| {
                    py_float(raw)
                        .filter(|f| f.is_finite() && f.fract() == 0.0)
                        .map(integral_digits)
                })
                .and_then(|digits| integer(&digits, ints)),
            "number" => py_float(raw).filter(|f| f.is_finite()).and_then(|f| {
                if f.fract() == 0.0 && !raw.contains('.') {
                    integer(&integral_digits(f), ints)
                } else {
                    Number::from_f64(f).map(Value::Number)
                }
            }),
            "boolean" => match strip(raw).to_lowercase().as_str() {
                "true" | "1" => Some(Value::Bool(true)),
                "false" | "0" => Some(Value::Bool(false)),
                _ => None,
            },
            "null" => matches!(strip(raw), "null" | "None").then_some(Value::Null),
            "object" | "array" => {
                let mut exact = ints.exact;
                let v = loads(raw, &mut exact).filter(|v| {
                    if t == "object" {
                        v.is_object()
                    } else {
                        v.is_array()
                    }
                });
                if v.is_some() && exact && !ints.markable {
                    // Its integers cannot be told from the model's marker-like strings.
                    None
                } else {
                    ints.exact |= v.is_some() && exact;
                    v
                }
            }
            _ => None,
        };
        if let Some(v) = got {
            return v;
        }
    }
    Value::String(raw.to_string())
}

/// Python's `int` of these decimal digits as JSON: a number within 64 bits, else a marked
/// string (`None` past Python's 4,300 digits, or where no integer may be marked).
fn integer(digits: &str, ints: &mut Ints) -> Option<Value> {
    if let Ok(i) = digits.parse::<i64>() {
        return Some(Value::Number(i.into()));
    }
    if let Ok(u) = digits.parse::<u64>() {
        return Some(Value::Number(u.into()));
    }
    if digits.trim_start_matches('-').len() > 4300 || !ints.markable {
        return None;
    }
    ints.exact = true;
    Some(Value::String(format!("\0{digits}")))
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
        let mut exact = false;
        let v = json(
            r#"{hour:7,label:<|"|>a, b:c<|"|>,n:{inner:<|"|>x<|"|>}}"#,
            &args,
            &mut exact,
        );
        assert_eq!(
            v,
            Some(json!({"hour": 7, "label": "a, b:c", "n": {"inner": "x"}}))
        );
        assert_eq!(json("{a:1", &args, &mut exact), None);
        assert!(!exact);
        assert_eq!(
            json("{n:123456789012345678901}", &args, &mut exact),
            Some(json!({"n": "\u{0}123456789012345678901"}))
        );
        assert!(exact);
        assert_eq!(
            quote_keys("{a:1,b_2:{c:3}, d:4}"),
            r#"{"a":1,"b_2":{"c":3}, d:4}"#
        );
    }

    #[test]
    fn coercion_is_pythons() {
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let coerce = |raw: &str, types: &[String]| {
            let mut ints = Ints {
                exact: false,
                markable: true,
            };
            coerce(raw, types, &mut ints)
        };
        assert_eq!(coerce(" 1_000 ", &t(&["integer"])), json!(1000));
        assert_eq!(coerce("3.0", &t(&["integer"])), json!(3));
        assert_eq!(coerce("1e3", &t(&["number"])), json!(1000));
        assert_eq!(coerce("2.50", &t(&["number"])), json!(2.5));
        assert_eq!(coerce("nan", &t(&["number"])), json!("nan"));
        assert_eq!(coerce("True", &t(&["boolean"])), json!(true));
        assert_eq!(coerce("None", &t(&["string", "null"])), json!(null));
        assert_eq!(coerce("5", &t(&["string", "integer"])), json!(5));
        assert_eq!(coerce("[1]", &t(&["object", "array"])), json!([1]));
        assert_eq!(
            coerce("1e20", &t(&["number"])),
            json!("\u{0}100000000000000000000")
        );
        assert_eq!(
            coerce("-123456789012345678901", &t(&["integer"])),
            json!("\u{0}-123456789012345678901")
        );
    }
}
