//! Jinja2's type tests and number filters where minijinja's differ.
//!
//! - `iterable` is true for what Python's `iter()` accepts: strings, lists, dicts and
//!   undefined, never `none`. minijinja said true for `none`, so `{% if tools is iterable %}`
//!   took the wrong branch when `tools` was `None`.
//! - `sequence` is true for what has `len()` and `[]`: strings and dicts too.
//! - `int(value, default=0, base=10)` and `float(value, default=0.0)` parse text as Python's
//!   `int()`/`float()` do and return the default where Python raises `ValueError` or
//!   `TypeError` (`jinja2/filters.py::do_int`, `do_float`); minijinja raised.

use super::py_space;
use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Error, ErrorKind};

/// Jinja2's `iterable` test: what has a length and an index, plus lazy sequences (`range`).
pub(super) fn is_iterable(v: &Value) -> bool {
    is_sequence(v) || v.kind() == ValueKind::Iterable
}

/// Jinja2's `sequence` test: strings, lists and dicts (and undefined, which has a length).
pub(super) fn is_sequence(v: &Value) -> bool {
    matches!(
        v.kind(),
        ValueKind::String
            | ValueKind::Bytes
            | ValueKind::Seq
            | ValueKind::Map
            | ValueKind::Undefined
    )
}

fn undefined() -> Error {
    Error::new(ErrorKind::UndefinedError, "value is undefined")
}

/// Jinja2's `int(value, default=0, base=10)`: `int(value)` (with `base` for text), else
/// `int(float(value))`, else `default`. An infinite float value raises, as Python's
/// `OverflowError` does (text reading as infinity gives the default: Jinja2 catches it there);
/// integers beyond i128 take the float path, and floats beyond 2**127 raise (Python would
/// give the exact big integer).
pub(super) fn py_int(value: &Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let [default, base] = super::filter_args("int", ["default", "base"], &args, &kwargs)?;
    let default = default.unwrap_or(Value::from(0));
    let base = match base {
        None => 10,
        Some(b) => b
            .as_i64()
            .filter(|b| *b == 0 || (2..=36).contains(b))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidOperation,
                    "int() base must be >= 2 and <= 36, or 0",
                )
            })? as u32,
    };
    let truncate = |f: f64, from_text: bool| -> Result<Value, Error> {
        if f.is_nan() || (from_text && f.is_infinite()) {
            Ok(default.clone())
        } else if f.is_infinite() {
            Err(Error::new(
                ErrorKind::InvalidOperation,
                "cannot convert float infinity to integer",
            ))
        } else if f.abs() >= 2f64.powi(127) {
            // Python gives the exact big integer; template values stop at i128.
            Err(Error::new(
                ErrorKind::InvalidOperation,
                "int() of a float beyond 2**127 is not supported",
            ))
        } else {
            Ok(Value::from(f.trunc() as i128))
        }
    };
    match value.kind() {
        ValueKind::Undefined => Err(undefined()),
        ValueKind::Bool => Ok(Value::from(i64::from(value.is_true()))),
        ValueKind::Number if value.is_integer() => Ok(value.clone()),
        ValueKind::Number => truncate(f64::try_from(value.clone()).unwrap_or(f64::NAN), false),
        ValueKind::String => {
            let s = value.as_str().unwrap_or_default();
            match parse_int(s, base) {
                Some(i) => Ok(Value::from(i)),
                None => match parse_float(s) {
                    Some(f) => truncate(f, true),
                    None => Ok(default),
                },
            }
        }
        _ => Ok(default),
    }
}

/// Jinja2's `float(value, default=0.0)`.
pub(super) fn py_float(value: &Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let [default] = super::filter_args("float", ["default"], &args, &kwargs)?;
    let default = default.unwrap_or(Value::from(0.0));
    match value.kind() {
        ValueKind::Undefined => Err(undefined()),
        ValueKind::Bool => Ok(Value::from(if value.is_true() { 1.0 } else { 0.0 })),
        ValueKind::Number => Ok(Value::from(
            f64::try_from(value.clone()).unwrap_or(f64::NAN),
        )),
        ValueKind::String => Ok(parse_float(value.as_str().unwrap_or_default())
            .map(Value::from)
            .unwrap_or(default)),
        _ => Ok(default),
    }
}

/// The whitespace Python's `int()` and `float()` strip from text: C's `isspace` in ASCII
/// (so not U+001C–U+001F, unlike `str.strip()`), and Unicode whitespace beyond ASCII.
fn number_space(c: char) -> bool {
    if c.is_ascii() {
        matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
    } else {
        py_space(c)
    }
}

/// Digits with PEP 515 underscores (one at a time, between digits) without them, or `None`.
fn strip_underscores(digits: &str, is_digit: impl Fn(char) -> bool) -> Option<String> {
    let mut out = String::with_capacity(digits.len());
    let mut prev_digit = false;
    let mut chars = digits.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '_' {
            let next_digit = chars.peek().is_some_and(|&n| is_digit(n));
            if !prev_digit || !next_digit {
                return None;
            }
            prev_digit = false;
        } else {
            out.push(c);
            prev_digit = is_digit(c);
        }
    }
    Some(out)
}

/// Python's `int(text, base)` for ASCII digits: surrounding whitespace ([`number_space`]), a sign, a `0x`/`0o`/
/// `0b` prefix matching `base` (or chosen by it when `base` is 0) and PEP 515 underscores.
fn parse_int(text: &str, base: u32) -> Option<i128> {
    let t = text.trim_matches(number_space);
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let prefix_base = match t.get(..2).map(str::to_ascii_lowercase).as_deref() {
        Some("0x") => Some(16),
        Some("0o") => Some(8),
        Some("0b") => Some(2),
        _ => None,
    };
    let (base, body) = match (base, prefix_base) {
        (0, Some(p)) => (p, &t[2..]),
        (b, Some(p)) if b == p => (b, &t[2..]),
        (0, None) => {
            // Base 0 reads decimal without leading zeros ("010" is an error, "00" is not).
            let digits = t.trim_start_matches('0').trim_start_matches('_');
            if t.starts_with('0') && !digits.is_empty() {
                return None;
            }
            (10, t)
        }
        (b, _) => (b, t),
    };
    // After a prefix, one underscore may come first ("0x_1f").
    let body = match (
        prefix_base.is_some() && body.len() < t.len(),
        body.strip_prefix('_'),
    ) {
        (true, Some(rest)) => rest,
        _ => body,
    };
    let is_digit = |c: char| c.is_ascii_alphanumeric() && c.is_digit(base);
    if body.is_empty() || !body.chars().all(|c| c == '_' || is_digit(c)) {
        return None;
    }
    let digits = strip_underscores(body, is_digit)?;
    let magnitude = i128::from_str_radix(&digits, base).ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

/// Python's `float(text)` for ASCII: surrounding whitespace ([`number_space`]), `inf`/`infinity`/`nan` in any
/// case with a sign, and PEP 515 underscores between digits.
fn parse_float(text: &str) -> Option<f64> {
    let t = text.trim_matches(number_space);
    let unsigned = t.trim_start_matches(['+', '-']);
    if t.len() - unsigned.len() > 1 {
        return None;
    }
    let negative = t.starts_with('-');
    let special = match unsigned.to_ascii_lowercase().as_str() {
        "inf" | "infinity" => Some(f64::INFINITY),
        "nan" => Some(f64::NAN),
        _ => None,
    };
    if let Some(f) = special {
        return Some(if negative { -f } else { f });
    }
    if !unsigned
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-' | '_'))
    {
        return None;
    }
    let cleaned = strip_underscores(t, |c| c.is_ascii_digit())?;
    cleaned.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::super::tests::render;
    use minijinja::Error;

    /// Jinja2 3.1 (Python 3.11) output for the same templates.
    #[test]
    fn numbers_and_type_tests_as_jinja2() -> Result<(), Error> {
        let ctx = serde_json::json!({"d": {"a": 1}, "l": [1], "n": null});
        for (src, want) in [
            (
                "{{ 'abc' is sequence }}{{ d is sequence }}{{ l is sequence }}{{ 1 is sequence }}{{ n is sequence }}{{ u is sequence }}",
                "TrueTrueTrueFalseFalseTrue",
            ),
            (
                "{{ 'abc' is iterable }}{{ d is iterable }}{{ l is iterable }}{{ 1 is iterable }}{{ n is iterable }}{{ u is iterable }}",
                "TrueTrueTrueFalseFalseTrue",
            ),
            (
                "{{ 'a' | int }}|{{ ' 12 ' | int }}|{{ '1_000' | int }}|{{ '0x1A' | int(base=16) }}|{{ '3.9' | int }}|{{ '1e3' | int }}|{{ n | int }}|{{ true | int }}|{{ 2.9 | int }}|{{ -2.9 | int }}|{{ 'x' | int(7) }}",
                "0|12|1000|26|3|1000|0|1|2|-2|7",
            ),
            (
                "{{ '-0' | int }}{{ '+5' | int }}{{ '0b11' | int(base=2) }}{{ '0b11' | int }}{{ '11' | int(base=2) }}{{ '1__0' | int }}{{ '_1' | int }}|{{ '.5' | float }}{{ '5.' | float }}{{ '1e5' | int }}",
                "0530300|0.55.0100000",
            ),
            (
                "{{ 'a' | float }}|{{ ' 1.5 ' | float }}|{{ '1_0.5' | float }}|{{ 'inf' | float }}|{{ '-Infinity' | float }}|{{ 'nan' | float }}|{{ n | float }}|{{ true | float }}|{{ 3 | float }}|{{ 'x' | float(2.5) }}|{{ '1e400' | float }}",
                "0.0|1.5|10.5|inf|-inf|nan|0.0|1.0|3.0|2.5|inf",
            ),
        ] {
            assert_eq!(render(src, ctx.clone())?, want, "{src}");
        }
        assert_eq!(render("{{ 'inf' | int }}", ctx.clone())?, "0");
        assert!(render("{{ u | int }}", ctx.clone()).is_err());
        assert!(render("{{ (1e308 * 10) | int }}", ctx).is_err());
        Ok(())
    }
}
