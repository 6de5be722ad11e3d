//! Python `json.dumps`, byte for byte, over minijinja values.
//!
//! Hugging Face chat templates call `tojson`, which transformers defines as
//! `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`
//! (`transformers/utils/chat_template_utils.py`). The text it produces is tokenized, so every
//! byte matters: Python's default separators are `", "` and `": "` (`","` between items when
//! `indent` is set), floats print as `repr(float)` (`1e+16`, `1.5e-07`, `2.0`), non-finite
//! floats as `NaN`/`Infinity`, and with `ensure_ascii=False` only `"`, `\` and control
//! characters below U+0020 are escaped. minijinja's own `tojson` escapes HTML characters and
//! uses JSON's compact separators, so it cannot be used for fidelity.

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind};
use std::fmt::Write;

pub use llm_render_parsers::pyjson::{py_float_repr, write_json, write_json_map, write_str};

/// Options of Python's `json.dumps` that chat templates pass through `tojson`.
#[derive(Debug, Clone)]
pub struct DumpOptions {
    pub ensure_ascii: bool,
    /// The string written once per nesting level; `None` means a single line.
    pub indent: Option<String>,
    pub item_separator: String,
    pub key_separator: String,
    pub sort_keys: bool,
}

impl Default for DumpOptions {
    fn default() -> Self {
        DumpOptions {
            ensure_ascii: false,
            indent: None,
            item_separator: ", ".into(),
            key_separator: ": ".into(),
            sort_keys: false,
        }
    }
}

/// Serializes `value` as `json.dumps` would.
pub fn dumps(value: &Value, opts: &DumpOptions) -> Result<String, Error> {
    let mut out = String::new();
    write_value(&mut out, value, opts, 0)?;
    Ok(out)
}

/// Containers nested deeper than this are refused (Python raises `RecursionError` near 1,000
/// levels, or `ValueError: Circular reference detected` for a value that holds itself; here
/// one bound covers both and stays within a worker's stack). The printing of values
/// (`env/py_print.rs`) walks under the same bound, as the patched minijinja's does
/// (`vendor/minijinja/src/value/fmt_guard.rs`); a value from a request is at most serde_json's
/// 128 levels deep.
pub(crate) const MAX_DEPTH: usize = 256;
/// Output past this is refused: a list doubled by reference (`[v, v]` forty times) would
/// otherwise write 2^40 items. The printing of values writes `...` past as many bytes of
/// strings.
pub(crate) const MAX_BYTES: usize = 64 << 20;

fn not_serializable(value: &Value) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("Object of type {} is not JSON serializable", value.kind()),
    )
}

fn write_value(
    out: &mut String,
    value: &Value,
    opts: &DumpOptions,
    level: usize,
) -> Result<(), Error> {
    match value.kind() {
        ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => write_number(out, value),
        ValueKind::String => write_str(out, value.as_str().unwrap_or_default(), opts.ensure_ascii),
        ValueKind::Seq | ValueKind::Iterable | ValueKind::Map
            if level >= MAX_DEPTH || out.len() > MAX_BYTES =>
        {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "tojson: the value is nested deeper than {MAX_DEPTH} levels, holds itself, \
                     or makes more than {} MiB of JSON",
                    MAX_BYTES >> 20
                ),
            ));
        }
        ValueKind::Seq | ValueKind::Iterable => {
            let items: Vec<Value> = value.try_iter()?.collect();
            write_container(out, opts, level, '[', ']', &items, |out, item, level| {
                write_value(out, item, opts, level)
            })?;
        }
        ValueKind::Map => {
            let mut pairs = Vec::new();
            for key in value.try_iter()? {
                let item = value.get_item(&key)?;
                pairs.push((key_string(&key)?, item));
            }
            if opts.sort_keys {
                // Python sorts str keys by code point; UTF-8 byte order is the same order.
                pairs.sort_by(|a, b| a.0.cmp(&b.0));
            }
            write_container(out, opts, level, '{', '}', &pairs, |out, (k, v), level| {
                write_str(out, k, opts.ensure_ascii);
                out.push_str(&opts.key_separator);
                write_value(out, v, opts, level)
            })?;
        }
        _ => return Err(not_serializable(value)),
    }
    Ok(())
}

/// Writes `[a, b]` / `{...}` with Python's indentation rules: an empty container is always
/// `[]`/`{}`, otherwise each item goes on its own line when `indent` is set.
fn write_container<T>(
    out: &mut String,
    opts: &DumpOptions,
    level: usize,
    open: char,
    close: char,
    items: &[T],
    mut write_item: impl FnMut(&mut String, &T, usize) -> Result<(), Error>,
) -> Result<(), Error> {
    out.push(open);
    if items.is_empty() {
        out.push(close);
        return Ok(());
    }
    let newline = |out: &mut String, level: usize| {
        if let Some(indent) = &opts.indent {
            out.push('\n');
            for _ in 0..level {
                out.push_str(indent);
            }
        }
    };
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(&opts.item_separator);
        }
        newline(out, level + 1);
        write_item(out, item, level + 1)?;
    }
    newline(out, level);
    out.push(close);
    Ok(())
}

/// Python converts non-string keys: `True` → `"true"`, `None` → `"null"`, numbers via repr.
fn key_string(key: &Value) -> Result<String, Error> {
    Ok(match key.kind() {
        ValueKind::String => key.as_str().unwrap_or_default().to_string(),
        ValueKind::Bool => (if key.is_true() { "true" } else { "false" }).to_string(),
        ValueKind::None => "null".to_string(),
        ValueKind::Number => {
            let mut s = String::new();
            write_number(&mut s, key);
            s
        }
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "keys must be str, int, float, bool or None, not {}",
                    key.kind()
                ),
            ))
        }
    })
}

fn write_number(out: &mut String, value: &Value) {
    if value.is_integer() {
        // i64, u64 and 128-bit integers print as Python ints.
        let _ = write!(out, "{value}");
        return;
    }
    match f64::try_from(value.clone()) {
        Ok(f) => out.push_str(&py_float_repr(f)),
        Err(_) => out.push_str(&value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct writer and `dumps` of the converted template value agree.
    #[test]
    fn write_json_equals_dumps_of_the_template_value() {
        let cases = serde_json::json!([
            null, true, false, 0, -1, 42, i64::MIN, u64::MAX, 9_007_199_254_740_993u64,
            0.0, -0.0, 1.0, 2.5, 0.1, 1e16, 1.5e-7, 1e-5, 123456789.125, f64::MAX, 5e-324,
            "", "plain", "quote \" backslash \\ nl \n tab \t ctl \u{1} del \u{7f}",
            "ünï 日本 🤖 \u{2028} \u{a0}", [], {}, [[], {}, [1, [2, [3]]]],
            {"type": "function", "function": {"name": "f", "parameters": {"type": "object",
              "properties": {"x": {"type": "number", "minimum": -1.5, "enum": [1, 2.0, "3"]}},
              "required": ["x"]}}, "z": null, "a": [true, {"k": {}}]}
        ]);
        let serde_json::Value::Array(items) = &cases else {
            unreachable!()
        };
        for v in items.iter().chain([&cases]) {
            let mut direct = String::new();
            write_json(&mut direct, v);
            let template = Value::from(minijinja::value::Serde(v));
            assert_eq!(
                direct,
                dumps(&template, &DumpOptions::default()).unwrap(),
                "{v}"
            );
        }
    }

    #[test]
    fn dumps_like_python() {
        let v = Value::from(minijinja::value::Serde(
            serde_json::json!({"a": [1, 2.0, "é\n\"", null, true], "b": {}, "c": []}),
        ));
        assert_eq!(
            dumps(&v, &DumpOptions::default()).unwrap_or_default(),
            r#"{"a": [1, 2.0, "é\n\"", null, true], "b": {}, "c": []}"#
        );
        let opts = DumpOptions {
            indent: Some("  ".into()),
            item_separator: ",".into(),
            ensure_ascii: true,
            ..DumpOptions::default()
        };
        assert_eq!(
            dumps(&v, &opts).unwrap_or_default(),
            "{\n  \"a\": [\n    1,\n    2.0,\n    \"\\u00e9\\n\\\"\",\n    null,\n    true\n  ],\n  \"b\": {},\n  \"c\": []\n}"
        );
    }
}
