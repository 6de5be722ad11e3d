//! Typing a parameter value that the model wrote as text (the XML tool formats) by the
//! types its schema declares, as vLLM 0.33 does (`coerce_to_schema_type` and
//! `extract_types_from_schema` in `vllm/tool_parsers/utils.py`), and writing the result as
//! `json.dumps(v, ensure_ascii=False)` would.
//!
//! The types are tried in a fixed order, and the first that accepts the text wins:
//! - `null`: the text is `null` in any case;
//! - `integer`: Python's `int(text)`, exact at any size;
//! - `number`: `int(text)`, else a finite `float(text)`, written as an integer when it has
//!   no fraction (`1e20` → `100000000000000000000`);
//! - `boolean`: `true`/`1` or `false`/`0`, in any case, trimmed;
//! - `object`, `array`: the text parsed as JSON (any JSON value, if finite);
//! - `string`: the text itself.
//!
//! With none accepted, the text parsed as JSON if it is, else the text as a string.

use crate::pyjson::{dumps, dumps_str, py_float_repr};
use crate::pystr::{ascii_digits, py_space};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The JSON Schema types a parameter declares, after vLLM's aliases (`int` → `integer`,
/// `float` → `number`, `dict` → `object`, ...).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Types(u8);

impl Types {
    pub const NULL: Types = Types(1);
    pub const INTEGER: Types = Types(2);
    pub const NUMBER: Types = Types(4);
    pub const BOOLEAN: Types = Types(8);
    pub const OBJECT: Types = Types(16);
    pub const ARRAY: Types = Types(32);
    pub const STRING: Types = Types(64);
    /// A type name none of the above stands for (`any`): only the JSON fallback applies.
    const OTHER: Types = Types(128);

    /// The order vLLM tries them in.
    const PRIORITY: [Types; 7] = [
        Types::NULL,
        Types::INTEGER,
        Types::NUMBER,
        Types::BOOLEAN,
        Types::OBJECT,
        Types::ARRAY,
        Types::STRING,
    ];

    pub fn contains(self, t: Types) -> bool {
        self.0 & t.0 == t.0
    }

    fn insert(&mut self, t: Types) {
        self.0 |= t.0;
    }

    /// A type name as written in a schema, normalized (trimmed, lower-cased, aliased).
    fn from_name(name: &str) -> Types {
        match name.trim().to_lowercase().as_str() {
            "null" => Types::NULL,
            "integer" | "int" | "int32" | "int64" | "uint" | "uint32" | "uint64" | "long"
            | "short" | "unsigned" => Types::INTEGER,
            "number" | "float" | "float32" | "float64" | "double" => Types::NUMBER,
            "boolean" | "bool" => Types::BOOLEAN,
            "object" | "dict" => Types::OBJECT,
            "array" | "arr" | "list" | "sequence" => Types::ARRAY,
            "string" | "str" | "text" | "varchar" | "char" | "enum" => Types::STRING,
            _ => Types::OTHER,
        }
    }

    /// The types of a parameter's schema: its `type` (a name or a list of names), the types
    /// of its `enum` values, and those of its `anyOf`/`oneOf`/`allOf` choices; `string` when
    /// none is found (or the schema is not an object).
    pub fn from_schema(schema: &Value) -> Types {
        let Some(obj) = schema.as_object() else {
            return Types::STRING;
        };
        let mut types = Types::default();
        match obj.get("type") {
            Some(Value::String(t)) => types.insert(Types::from_name(t)),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .for_each(|t| types.insert(Types::from_name(t))),
            _ => {}
        }
        if let Some(Value::Array(values)) = obj.get("enum") {
            for v in values {
                types.insert(match v {
                    Value::Null => Types::NULL,
                    Value::Bool(_) => Types::BOOLEAN,
                    Value::Number(n) if n.is_f64() => Types::NUMBER,
                    Value::Number(_) => Types::INTEGER,
                    Value::String(_) => Types::STRING,
                    Value::Array(_) => Types::ARRAY,
                    Value::Object(_) => Types::OBJECT,
                });
            }
        }
        for choice in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(choices)) = obj.get(choice) {
                choices
                    .iter()
                    .for_each(|c| types.insert(Types::from_schema(c)));
            }
        }
        if types == Types::default() {
            Types::STRING
        } else {
            types
        }
    }
}

/// The JSON text of `text` typed by `types` (see the module documentation).
pub(crate) fn coerce(text: &str, types: Types) -> String {
    for t in Types::PRIORITY.into_iter().filter(|&t| types.contains(t)) {
        let found = match t {
            Types::NULL => (text.to_lowercase() == "null").then(|| "null".to_string()),
            Types::INTEGER => py_int(text),
            Types::NUMBER => py_int(text).or_else(|| {
                let f = py_float(text).filter(|f| f.is_finite())?;
                Some(if f.fract() == 0.0 {
                    integral_digits(f)
                } else {
                    py_float_repr(f)
                })
            }),
            // `value.lower().strip()`: Python's whitespace.
            Types::BOOLEAN => match text.to_lowercase().trim_matches(py_space) {
                "true" | "1" => Some("true".into()),
                "false" | "0" => Some("false".into()),
                _ => None,
            },
            Types::OBJECT | Types::ARRAY => json_roundtrip(text),
            _ => Some(dumps_str(text)),
        };
        if let Some(json) = found {
            return json;
        }
    }
    json_roundtrip(text).unwrap_or_else(|| dumps_str(text))
}

/// `text` read as JSON, else as a Python literal (`ast.literal_eval`), else kept as a string:
/// how vLLM's poolside_v1 and minicpm5 parsers read a value that is not a declared string.
pub(crate) fn loose(text: &str) -> String {
    json_roundtrip(text)
        .or_else(|| super::hy_types::literal(text))
        .unwrap_or_else(|| dumps_str(text))
}

/// Python's `json.dumps(json.loads(text), ensure_ascii=False)`, or `None` where `json.loads`
/// fails or gives a non-finite number (serde_json rejects the `NaN`/`Infinity` that Python
/// accepts and vLLM then refuses, so the outcome is the same).
///
/// Python reads every integer literal as an `int`, however long; serde_json turns one past
/// 64 bits into a float. Such literals are read as marked strings instead (a NUL and the
/// digits, which no literal can spell) and written back as they were.
pub(crate) fn json_roundtrip(text: &str) -> Option<String> {
    let (v, marks) = loads_exact(text)?;
    if !marks {
        return Some(dumps(&v));
    }
    let mut out = String::with_capacity(text.len());
    crate::pyjson::write_json_with(&mut out, &v, &marked);
    Some(out)
}

/// Python's `json.loads(text)`, with each integer literal past 64 bits read as a marked
/// string (see [`json_roundtrip`]); the flag says whether any was (then every marked string
/// in the value is one), or `None` where `json.loads` fails.
pub(crate) fn loads_exact(text: &str) -> Option<(Value, bool)> {
    let (big, zeros) = big_integers(text);
    if big.is_empty() {
        if !zeros.is_empty() {
            // Python's integer `-0` is `0`; serde_json reads it as the float `-0.0`.
            serde_json::from_str::<serde::de::IgnoredAny>(text).ok()?;
            let mut fixed = text.to_string();
            for &at in zeros.iter().rev() {
                fixed.remove(at);
            }
            return serde_json::from_str::<Value>(&fixed)
                .ok()
                .map(|v| (v, false));
        }
        return serde_json::from_str::<Value>(text).ok().map(|v| (v, false));
    }
    // Marking needs valid JSON: checked on the text as given (integer literals are only
    // scanned here, so a long one is no error).
    serde_json::from_str::<serde::de::IgnoredAny>(text).ok()?;
    // Python refuses to convert integers of more than 4,300 digits (`sys.int_info`).
    if big
        .iter()
        .any(|&(from, to)| text[from..to].trim_start_matches('-').len() > 4300)
    {
        return None;
    }
    let mut with_markers = String::with_capacity(text.len() + big.len() * 8);
    let mut at = 0;
    let mut zeros = zeros.into_iter().peekable();
    for &(from, to) in &big {
        while let Some(z) = zeros.next_if(|&z| z < from) {
            with_markers.push_str(&text[at..z]);
            at = z + 1;
        }
        with_markers.push_str(&text[at..from]);
        with_markers.push_str("\"\\u0000");
        with_markers.push_str(&text[from..to]);
        with_markers.push('"');
        at = to;
    }
    for z in zeros {
        with_markers.push_str(&text[at..z]);
        at = z + 1;
    }
    with_markers.push_str(&text[at..]);
    let v: Value = serde_json::from_str(&with_markers).ok()?;
    // Valid JSON keeps its keys in strings, so each literal was a value and became one
    // marked string; a string spelled like a marker (`"\u00001"`) would add one more.
    if count_marked(&v) != big.len() {
        return serde_json::from_str::<Value>(text).ok().map(|v| (v, false));
    }
    Some((v, true))
}

/// The integer literal a marked string stands for.
pub(crate) fn marked(s: &str) -> Option<&str> {
    let digits = s.strip_prefix('\0')?;
    let unsigned = digits.strip_prefix('-').unwrap_or(digits);
    (!unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
}

pub(crate) fn count_marked(v: &Value) -> usize {
    match v {
        Value::String(s) => usize::from(marked(s).is_some()),
        Value::Array(items) => items.iter().map(count_marked).sum(),
        Value::Object(map) => map.values().map(count_marked).sum(),
        _ => 0,
    }
}

/// Byte ranges of the integer literals in `text` that do not fit 64 bits, and the offsets of
/// the signs of its `-0` integer literals, if it is valid JSON (otherwise some runs of digits
/// and signs outside strings).
fn big_integers(text: &str) -> (Vec<(usize, usize)>, Vec<usize>) {
    let b = text.as_bytes();
    let mut found = Vec::new();
    let mut zeros = Vec::new();
    let (mut i, mut in_string, mut escaped) = (0, false, false);
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
        } else if c == b'"' {
            in_string = true;
            i += 1;
        } else if c == b'-' || c.is_ascii_digit() {
            let start = i;
            while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                i += 1;
            }
            let literal = &text[start..i];
            let integral = !literal.contains(['.', 'e', 'E']);
            if integral && literal == "-0" {
                zeros.push(start);
            } else if integral && literal.parse::<i64>().is_err() && literal.parse::<u64>().is_err()
            {
                found.push((start, i));
            }
        } else {
            i += 1;
        }
    }
    (found, zeros)
}

/// `s` without Python's digit separators, or `None` if one is misplaced: `int()` and
/// `float()` accept a `_` only between two ASCII digits (`1_000`, not `1__0` or `_1`).
fn without_separators(s: &str) -> Option<std::borrow::Cow<'_, str>> {
    if !s.contains('_') {
        return Some(s.into());
    }
    let b = s.as_bytes();
    let valid = b.iter().enumerate().all(|(i, &c)| {
        c != b'_'
            || (i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit))
    });
    valid.then(|| s.replace('_', "").into())
}

/// Python's `int(text)` as decimal digits, or `None` where it raises: surrounding
/// whitespace, an optional sign, decimal digits of any script.
pub(crate) fn py_int(text: &str) -> Option<String> {
    let s = ascii_digits(text.trim());
    let s = without_separators(&s)?;
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, &s[..]),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = digits.trim_start_matches('0');
    Some(match (digits.is_empty(), negative) {
        (true, _) => "0".into(),
        (false, true) => format!("-{digits}"),
        (false, false) => digits.into(),
    })
}

/// Python's `float(text)`: Rust's parser, which reads the same forms (`1e5`, `.5`, `5.`,
/// `inf`, `nan`), once digits are ASCII and Python's digit separators are removed.
pub(crate) fn py_float(text: &str) -> Option<f64> {
    without_separators(&ascii_digits(text.trim()))?.parse().ok()
}

/// Python's `int(f)` of a finite float without fraction, in full: `1e20` →
/// `100000000000000000000`.
pub(crate) fn integral_digits(f: f64) -> String {
    if f.abs() < 9.0e18 {
        return format!("{}", f as i64);
    }
    // f = mantissa × 2^exp with exp > 0 here; double a base-10^9 number exp times.
    let bits = f.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let mantissa = (bits & ((1 << 52) - 1)) | (1 << 52);
    let mut limbs: Vec<u64> = vec![mantissa % 1_000_000_000, mantissa / 1_000_000_000];
    for _ in 0..exp {
        let mut carry = 0;
        for limb in &mut limbs {
            let v = *limb * 2 + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    while limbs.len() > 1 && limbs.last() == Some(&0) {
        limbs.pop();
    }
    let mut out = String::from(if f < 0.0 { "-" } else { "" });
    for (i, limb) in limbs.iter().rev().enumerate() {
        if i == 0 {
            out.push_str(&limb.to_string());
        } else {
            out.push_str(&format!("{limb:09}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn types(schema: Value) -> Types {
        Types::from_schema(&schema)
    }

    #[test]
    fn schema_types_as_vllm_reads_them() {
        assert_eq!(types(json!({"type": "Integer"})), Types::INTEGER);
        assert_eq!(types(json!({})), Types::STRING);
        assert_eq!(types(json!(true)), Types::STRING);
        let t = types(json!({"type": ["double", "null"]}));
        assert!(t.contains(Types::NUMBER) && t.contains(Types::NULL));
        let t = types(json!({"enum": [1, 2.5, "a", null]}));
        for want in [Types::INTEGER, Types::NUMBER, Types::STRING, Types::NULL] {
            assert!(t.contains(want));
        }
        let t = types(json!({"anyOf": [{"type": "boolean"}, {"type": "list"}]}));
        assert!(t.contains(Types::BOOLEAN) && t.contains(Types::ARRAY));
        // An unknown name is a type: no `string` default.
        assert!(!types(json!({"type": "any"})).contains(Types::STRING));
    }

    /// Python's `int(-1.5e300)`: the exact value of that double.
    const MINUS_1_5E300: &str = "-1500000000000000078757140382806630373056702871662238732373781173267703686983362293679557062620671796065556665749325817265413784853040645863467188277180060474272580801389863705606745350692182135089053429852456199917621678558451461320111979114170213741868888183230085264257173504208294580298189100810240";

    /// Expected values from Python 3.11 running vLLM 0.33's `coerce_to_schema_type`, then
    /// `json.dumps(v, ensure_ascii=False)`.
    #[test]
    fn values_as_vllm_types_them() {
        let (i, n, b, s, o) = (
            Types::INTEGER,
            Types::NUMBER,
            Types::BOOLEAN,
            Types::STRING,
            Types::OBJECT,
        );
        let null_or_int = Types(Types::NULL.0 | Types::INTEGER.0);
        for (text, ty, want) in [
            ("3", i, "3"),
            (" -007 ", i, "-7"),
            ("1_000", i, "1000"),
            ("1__0", i, "\"1__0\""),
            ("12345678901234567890123", i, "12345678901234567890123"),
            ("3.0", i, "3.0"),
            ("x", i, "\"x\""),
            ("2.5", n, "2.5"),
            ("0.00001", n, "1e-05"),
            ("1.5e-7", n, "1.5e-07"),
            ("1e16", n, "10000000000000000"),
            ("1e20", n, "100000000000000000000"),
            ("-1.5e300", n, MINUS_1_5E300),
            ("NaN", n, "\"NaN\""),
            ("nan", o, "\"nan\""),
            ("1e1_0", n, "10000000000"),
            ("-0.0", n, "0"),
            ("inf", n, "\"inf\""),
            ("nan", n, "\"nan\""),
            ("1_0.5", n, "10.5"),
            ("yes", b, "\"yes\""),
            (" TRUE ", b, "true"),
            ("0", b, "false"),
            ("null", s, "\"null\""),
            ("NULL", null_or_int, "null"),
            ("null", i, "null"),
            (
                "{\"eps\": 1.5e-7, \"big\": 1e16}",
                o,
                "{\"eps\": 1.5e-07, \"big\": 1e+16}",
            ),
            ("[1, 2.0]", o, "[1, 2.0]"),
            ("[1e999]", o, "\"[1e999]\""),
            ("Paris", s, "\"Paris\""),
            ("３", i, "3"),
            (" ３ ", i, "3"),
            ("１_０", i, "10"),
            ("𝟗", i, "9"),
            ("٣.٥", n, "3.5"),
            ("１e２", n, "100"),
            ("\u{1c}5", i, "\"\\u001c5\""),
            ("\u{1c}true\u{1f}", b, "true"),
        ] {
            assert_eq!(coerce(text, ty), want, "{text:?} as {ty:?}");
        }
    }

    #[test]
    fn json_values_keep_integers_past_64_bits_as_python_reads_them() {
        let o = Types::OBJECT;
        // Python: json.dumps(json.loads(t), ensure_ascii=False)
        for (text, want) in [
            (r#"{"a":1,"b":[2.5,-3]}"#, r#"{"a": 1, "b": [2.5, -3]}"#),
            (
                r#"{"id": 12345678901234567890123, "n": [-98765432109876543210, 18446744073709551615, 1e2]}"#,
                r#"{"id": 12345678901234567890123, "n": [-98765432109876543210, 18446744073709551615, 100.0]}"#,
            ),
            // A literal beyond f64's range is still an int to Python.
            (
                &format!("[{}]", "9".repeat(400)),
                &format!("[{}]", "9".repeat(400)),
            ),
            // Duplicate keys: the first place, the last value.
            (
                r#"{"k": 1, "j": 2, "k": 123456789012345678901234}"#,
                r#"{"k": 123456789012345678901234, "j": 2}"#,
            ),
            // Strings that look like numbers stay strings.
            (
                r#"{"s": "12345678901234567890123", "n": 12345678901234567890123}"#,
                r#"{"s": "12345678901234567890123", "n": 12345678901234567890123}"#,
            ),
            // A string spelled like the marker stays a string; the long literal beside it
            // then becomes a float, as before (serde_json's reading).
            (
                r#"{"m": "\u000012345678901234567890123", "n": 12345678901234567890123}"#,
                r#"{"m": "\u000012345678901234567890123", "n": 1.2345678901234568e+22}"#,
            ),
        ] {
            assert_eq!(coerce(text, o), want, "{text}");
        }
        // Python refuses ints of more than 4,300 digits: not JSON then, so a string.
        let huge = format!("[{}]", "1".repeat(4301));
        assert_eq!(coerce(&huge, o), dumps_str(&huge));
        // Invalid JSON stays invalid: a long literal as a key, or with a leading zero.
        for bad in [
            r#"{12345678901234567890123: 1}"#,
            r#"[012345678901234567890123]"#,
        ] {
            assert_eq!(coerce(bad, o), dumps_str(bad), "{bad}");
        }
    }

    #[test]
    fn integral_floats_in_full() {
        assert_eq!(integral_digits(1e20), "100000000000000000000");
        assert_eq!(integral_digits(-9.5e18), "-9500000000000000000");
        assert_eq!(integral_digits(2f64.powi(70)), "1180591620717411303424");
        assert_eq!(integral_digits(f64::MAX).len(), 309);
        assert!(integral_digits(f64::MAX).starts_with("17976931348623157"));
    }
}
