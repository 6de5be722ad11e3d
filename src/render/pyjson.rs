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

/// `json.dumps(v)` with the default options (what `tojson` writes), straight from a JSON
/// value: the bytes [`dumps`] writes for `v` converted into a template value (tested below),
/// without building that value. Converting a request's tools for `dumps` was ~5% of a small
/// tools render's server CPU.
pub fn write_json(out: &mut String, v: &serde_json::Value) {
    use serde_json::Value as J;
    match v {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Number(n) => {
            // As minijinja converts them: integers stay integers, the rest are floats.
            if let Some(i) = n.as_i64() {
                let _ = write!(out, "{i}");
            } else if let Some(u) = n.as_u64() {
                let _ = write!(out, "{u}");
            } else if let Some(f) = n.as_f64() {
                out.push_str(&py_float_repr(f));
            }
        }
        J::String(s) => write_str(out, s, false),
        J::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(out, item);
            }
            out.push(']');
        }
        J::Object(map) => write_json_map(out, map),
    }
}

/// [`write_json`] of an object.
pub fn write_json_map(out: &mut String, map: &serde_json::Map<String, serde_json::Value>) {
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_str(out, k, false);
        out.push_str(": ");
        write_json(out, v);
    }
    out.push('}');
}

/// Python's `repr(float)` as `json.dumps` writes it (`float.__repr__`, shortest round-trip).
pub fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "1.5e-7", "-1e16".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exp) {
        let point = exp + 1; // position of the decimal point within `digits`
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point as usize >= digits.len() {
            format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
        } else {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        };
        format!("{sign}{body}")
    } else {
        let m = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        format!(
            "{sign}{m}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    }
}

/// Writes a JSON string literal the way Python's `json` encoder does.
pub fn write_str(out: &mut String, s: &str, ensure_ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if ensure_ascii && (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
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
    fn float_repr_matches_python() {
        for (f, want) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1.5e-7, "1.5e-07"),
            (123456.789, "123456.789"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (1e15, "1000000000000000.0"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
        ] {
            assert_eq!(py_float_repr(f), want, "{f}");
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
