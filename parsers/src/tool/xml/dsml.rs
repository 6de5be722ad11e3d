//! DeepSeek's DSML parameters (deepseek_v32, deepseek_v4), as vLLM 0.33's parser engine reads
//! them (`vllm/parser/deepseek_v4.py` `_dsml_arg_converter` and `_unwrap_wrapper_args`, then
//! `ParserEngine._fix_arg_types`):
//!
//! - a parameter's head is ` name="k"`, optionally ` string="true|false"`, then `>`;
//! - with `string="true"` the value is its text; otherwise it is read as JSON, and is its
//!   text where that fails;
//! - then a declared parameter is typed by its schema: a string as the XML families type
//!   text ([`coerce`]), a number, boolean or null by its JSON text the same way (so `null`
//!   for a string parameter is `"null"`); objects and arrays are kept;
//! - a call whose only parameter is `arguments` or `input`, which its tool does not declare,
//!   holding an object (or a string of one) whose keys the tool all declares, has that
//!   object as its arguments, typed as above.

use super::super::coerce::{coerce, json_roundtrip, Types};
use crate::pyjson::dumps_str;
use serde_json::Value;

/// A parameter's head (what follows `<｜DSML｜parameter`, up to `>`): its name, and whether
/// it says `string="true"`. `None` when it is not a head vLLM's pattern reads.
pub(super) fn head(text: &str) -> Option<(String, bool)> {
    let rest = text.strip_prefix(char::is_whitespace)?.trim_start();
    let rest = rest.strip_prefix("name=\"")?;
    let (name, after) = rest.split_once('"')?;
    if name.is_empty() {
        return None;
    }
    let rest = after.trim_start();
    if rest.is_empty() {
        return Some((name.to_string(), false));
    }
    // The attribute needs whitespace before it.
    if rest.len() == after.len() {
        return None;
    }
    let attr = rest.strip_prefix("string=\"")?;
    let (value, after) = attr.split_once('"')?;
    after
        .trim()
        .is_empty()
        .then(|| (name.to_string(), value == "true"))
}

/// The JSON text of a value: `raw_string` (`string="true"`) or read as JSON, then typed by
/// `types` where the parameter is declared.
pub(super) fn value(text: &str, raw_string: bool, types: Option<Types>) -> String {
    if raw_string {
        return typed_str(text, types);
    }
    match json_roundtrip(text) {
        Some(json) => typed_json(&json, types),
        None => typed_str(text, types),
    }
}

fn typed_str(text: &str, types: Option<Types>) -> String {
    match types {
        Some(t) => coerce(text, t),
        None => dumps_str(text),
    }
}

/// A JSON value (as Python writes it) typed by `types`.
fn typed_json(json: &str, types: Option<Types>) -> String {
    let Some(t) = types else {
        return json.to_string();
    };
    match serde_json::from_str::<Value>(json) {
        Ok(Value::String(s)) => coerce(&s, t),
        Ok(Value::Object(_) | Value::Array(_)) | Err(_) => json.to_string(),
        // A scalar: typed by its JSON text.
        Ok(_) => coerce(json, t),
    }
}

/// The arguments of a call whose only parameter is a wrapper holding `json` (see the module
/// documentation); `None` when it is not unwrapped. `types` gives each declared key's types.
pub(super) fn unwrap(json: &str, types: &dyn Fn(&str) -> Option<Types>) -> Option<String> {
    let mut inner: Value = serde_json::from_str(json).ok()?;
    if let Value::String(s) = &inner {
        inner = serde_json::from_str(s).ok()?;
    }
    let Value::Object(map) = inner else {
        return None;
    };
    let mut out = String::from("{");
    for (i, (k, v)) in map.iter().enumerate() {
        let t = types(k)?;
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&dumps_str(k));
        out.push_str(": ");
        out.push_str(&typed_json(&crate::pyjson::dumps(v), Some(t)));
    }
    out.push('}');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_as_vllm_reads_them() {
        assert_eq!(head(" name=\"city\""), Some(("city".into(), false)));
        assert_eq!(
            head(" name=\"city\" string=\"true\""),
            Some(("city".into(), true))
        );
        assert_eq!(
            head(" name=\"n\" string=\"false\" "),
            Some(("n".into(), false))
        );
        assert_eq!(head("name=\"city\""), None);
        assert_eq!(head(" name=\"\""), None);
        assert_eq!(head(" name=\"a\"string=\"true\""), None);
    }

    #[test]
    fn values_typed_as_vllm_types_them() {
        let (i, s) = (Some(Types::INTEGER), Some(Types::STRING));
        assert_eq!(value("42", true, i), "42");
        assert_eq!(value("42", true, None), "\"42\"");
        assert_eq!(value("null", false, s), "\"null\"");
        assert_eq!(value("\"7\"", false, i), "7");
        assert_eq!(value("{bad", false, None), "\"{bad\"");
        assert_eq!(value("{\"a\":[1,2]}", false, s), "{\"a\": [1, 2]}");
    }
}
