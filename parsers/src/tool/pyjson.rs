//! JSON text the way Python's `json.dumps(value, ensure_ascii=False)` writes it (`", "` and
//! `": "` separators), which is how vLLM serializes arguments it builds itself.

use serde_json::Value;

pub(crate) fn dumps(v: &Value) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

fn write(v: &Value, out: &mut String) {
    match v {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&super::json_string(k));
                out.push_str(": ");
                write(item, out);
            }
            out.push('}');
        }
        // Python writes floats with a fractional part or exponent (`1.0`, `1e+16`); serde
        // writes `1.0` and `1e16`. Only the exponent form differs.
        Value::Number(n) if n.is_f64() => {
            let s = n.to_string();
            match s.split_once('e') {
                Some((m, e)) if !e.starts_with('-') => {
                    out.push_str(m);
                    out.push_str("e+");
                    out.push_str(e);
                }
                _ => out.push_str(&s),
            }
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Converts a value written as text to the JSON value vLLM would build from it: a number
/// for integer/number types, a boolean, an object or array parsed from JSON, `null` for
/// `null`; otherwise the text as a string.
pub(crate) fn typed(text: &str, ty: Option<&str>) -> Value {
    if text.eq_ignore_ascii_case("null") {
        return Value::Null;
    }
    let Some(ty) = ty else {
        return Value::String(text.to_string());
    };
    let string = || Value::String(text.to_string());
    if matches!(ty, "string" | "str" | "text" | "varchar" | "char" | "enum") {
        return string();
    }
    if ty.starts_with("int")
        || ty.starts_with("uint")
        || ty.starts_with("long")
        || ty.starts_with("short")
        || ty.starts_with("unsigned")
    {
        return text
            .trim()
            .parse::<i64>()
            .map_or_else(|_| string(), Value::from);
    }
    if ty.starts_with("num") || ty.starts_with("float") || ty.starts_with("double") {
        return match text.trim().parse::<f64>() {
            Ok(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            Ok(f) => serde_json::Number::from_f64(f).map_or_else(string, Value::Number),
            Err(_) => string(),
        };
    }
    if matches!(ty, "boolean" | "bool" | "binary") {
        return Value::Bool(text.trim().eq_ignore_ascii_case("true"));
    }
    serde_json::from_str(text).unwrap_or_else(|_| string())
}
