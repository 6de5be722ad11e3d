//! Python's `json.dumps(v, ensure_ascii=False)`, byte for byte, for JSON values.
//!
//! Python's default separators are `", "` and `": "`; floats print as `repr(float)`
//! (`1e+16`, `1.5e-07`, `1000000000000000.0`, `2.0`), integers in full; with
//! `ensure_ascii=False` only `"`, `\\` and control characters below U+0020 are escaped.
//! vLLM serializes the tool-call arguments it builds this way, and Hugging Face templates'
//! `tojson` is the same call, so the renderer uses these writers too.

use serde_json::Value;
use std::fmt::Write;

/// `json.dumps(v, ensure_ascii=False)`.
pub fn dumps(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v);
    out
}

/// `json.dumps(v)` with Python's default `ensure_ascii=True`: every character outside
/// printable ASCII escaped as `\uXXXX` (vLLM's structural tags are written so).
pub fn dumps_ascii(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v, &|_| None, true);
    out
}

/// `json.dumps(s, ensure_ascii=False)` of a string.
pub fn dumps_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_str(&mut out, s, false);
    out
}

/// A dict of keys and already-dumped values as `json.dumps` writes it (`{"k": v, "k2": v2}`,
/// its default separators): the arguments the XML-like families build from typed parameters.
pub fn dumps_pairs(pairs: &[(String, String)]) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_str(&mut out, k, false);
        out.push_str(": ");
        out.push_str(v);
    }
    out.push('}');
    out
}

/// Appends `json.dumps(v, ensure_ascii=False)` of a JSON value: integers as integers,
/// other numbers as Python floats (`repr`).
pub fn write_json(out: &mut String, v: &serde_json::Value) {
    write_json_with(out, v, &|_| None);
}

/// [`write_json`], except that a string for which `raw` gives a text is written as that
/// text, unquoted (how `parsers::tool::coerce` writes back integers past 64 bits).
pub fn write_json_with<F>(out: &mut String, v: &serde_json::Value, raw: &F)
where
    F: Fn(&str) -> Option<&str>,
{
    write_value(out, v, raw, false);
}

fn write_value<F>(out: &mut String, v: &serde_json::Value, raw: &F, ascii: bool)
where
    F: Fn(&str) -> Option<&str>,
{
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
        J::String(s) => match raw(s) {
            Some(text) => out.push_str(text),
            None => write_str(out, s, ascii),
        },
        J::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item, raw, ascii);
            }
            out.push(']');
        }
        J::Object(map) => write_map(out, map, raw, ascii),
    }
}

/// [`write_json`] of an object.
pub fn write_json_map(out: &mut String, map: &serde_json::Map<String, serde_json::Value>) {
    write_json_map_with(out, map, &|_| None);
}

fn write_json_map_with<F>(
    out: &mut String,
    map: &serde_json::Map<String, serde_json::Value>,
    raw: &F,
) where
    F: Fn(&str) -> Option<&str>,
{
    write_map(out, map, raw, false);
}

fn write_map<F>(
    out: &mut String,
    map: &serde_json::Map<String, serde_json::Value>,
    raw: &F,
    ascii: bool,
) where
    F: Fn(&str) -> Option<&str>,
{
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_str(out, k, ascii);
        out.push_str(": ");
        write_value(out, v, raw, ascii);
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
        write_str_char(out, c, ensure_ascii);
    }
    out.push('"');
}

/// Writes one character of a JSON string literal as Python's `json` encoder escapes it
/// (for a string written a piece at a time, as a stream reads it).
pub fn write_str_char(out: &mut String, c: char, ensure_ascii: bool) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn json_values_like_python() {
        let v = serde_json::json!({"a": [1, 2.0, "é\n\"", null, true], "b": {}, "c": [],
            "f": [1e16, 1.5e-7, 0.00001, -2.5e-10, 1e15, 18446744073709551615u64, -3]});
        assert_eq!(
            dumps(&v),
            r#"{"a": [1, 2.0, "é\n\"", null, true], "b": {}, "c": [], "f": [1e+16, 1.5e-07, 1e-05, -2.5e-10, 1000000000000000.0, 18446744073709551615, -3]}"#
        );
        assert_eq!(
            dumps_str("tab\t \u{1f} \u{7f} 日"),
            "\"tab\\t \\u001f \u{7f} 日\""
        );
        let mut ascii = String::new();
        write_str(&mut ascii, "é🤖", true);
        assert_eq!(ascii, "\"\\u00e9\\ud83e\\udd16\"");
    }
}
