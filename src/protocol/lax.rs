//! pydantic's lax booleans, as vLLM's request models read them: checked by `validate.rs`,
//! and settled to real booleans while a body is parsed (`requests.rs`, `sampling.rs`), so the
//! template, the engine and our own readers see what vLLM's model dump has.

use serde_json::{Map, Value};

/// pydantic's lax `bool` (python mode, as vLLM's FastAPI models validate a parsed body):
/// `true`/`false`, `0`/`1` (integers or floats), and the strings `0 1 f t n y no on off yes
/// true false`, case-insensitive, unstripped. `Some(None)` for null; `None` where pydantic
/// raises "Input should be a valid boolean". Checked against pydantic 2 in vLLM 0.33's
/// environment (`fixtures/goldens/validation.jsonl` has the request-level cases).
pub(crate) fn lax_bool(v: &Value) -> Option<Option<bool>> {
    match v {
        Value::Null => Some(None),
        Value::Bool(b) => Some(Some(*b)),
        Value::Number(n) => match n.as_f64() {
            Some(0.0) => Some(Some(false)),
            Some(1.0) => Some(Some(true)),
            _ => None,
        },
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "0" | "off" | "f" | "false" | "n" | "no" => Some(Some(false)),
            "1" | "on" | "t" | "true" | "y" | "yes" => Some(Some(true)),
            _ => None,
        },
        _ => None,
    }
}

/// `field` of `obj` as the boolean pydantic hands on ([`lax_bool`]: `"yes"` → `true`), so
/// the template, the engine and our readers see what vLLM's model dump has. A value
/// pydantic refuses is left as it is, for validation to refuse with a 400 naming it.
fn settle_lax_bool(obj: &mut Map<String, Value>, field: &str) {
    if let Some(v) = obj.get_mut(field) {
        if let Some(b) = lax_bool(v) {
            *v = b.map_or(Value::Null, Value::Bool);
        }
    }
}

/// `stream_options`, its flags settled as pydantic reads them ([`settle_lax_bool`]).
pub(crate) fn lax_stream_options<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Value>, D::Error> {
    let mut v: Option<Value> = serde::Deserialize::deserialize(d)?;
    if let Some(Value::Object(o)) = &mut v {
        settle_lax_bool(o, "include_usage");
        settle_lax_bool(o, "continuous_usage_stats");
    }
    Ok(v)
}

/// `tools`, each `function.strict` settled as pydantic reads it ([`settle_lax_bool`]).
pub(crate) fn lax_tools<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<Map<String, Value>>>, D::Error> {
    let mut v: Option<Vec<Map<String, Value>>> = serde::Deserialize::deserialize(d)?;
    for tool in v.iter_mut().flatten() {
        if let Some(Value::Object(f)) = tool.get_mut("function") {
            settle_lax_bool(f, "strict");
        }
    }
    Ok(v)
}
