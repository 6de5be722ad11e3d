//! The engine output's `metrics`, read as vLLM's derender reads it: validated into
//! `PerRequestMetrics` (`vllm/entrypoints/generate/base/protocol.py`) and written back whole.
//!
//! Wire format, as vLLM 0.33 answers it:
//! `{"time_to_first_token_ms": 12.0, "generation_time_ms": null, "queue_time_ms": null,
//!   "mean_itl_ms": null, "tokens_per_second": null, "speculative_decoding": null, …extras}`
//! — every declared field present (null when absent), numbers as floats, then any other keys
//! as sent (`extra="allow"`). `speculative_decoding`, when set, needs all seven of its
//! counters. Values go through pydantic's lax coercion: `12`, `12.0`, `"12"` and `true` are
//! all read as numbers; a fractional value where an integer is declared is refused. A float
//! that is not finite (`"inf"`, `"nan"`) is written as `null`, as pydantic's JSON writes it.

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

const TIMINGS: [&str; 5] = [
    "time_to_first_token_ms",
    "generation_time_ms",
    "queue_time_ms",
    "mean_itl_ms",
    "tokens_per_second",
];

const SPEC_FLOATS: [&str; 2] = ["mean_acceptance_length", "draft_acceptance_rate"];
const SPEC_INTS: [&str; 4] = [
    "num_spec_steps",
    "num_accepted_draft_tokens",
    "num_draft_tokens",
    "num_spec_tokens",
];
const SPEC_LISTS: [&str; 2] = ["per_step_accepted", "per_step_drafted"];

/// `deserialize_with` for `metrics`: `None` for null or absent, else the normalized object.
/// The error names the field below `metrics` (the caller's path names the rest).
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => normalize(&v).map(Some).map_err(serde::de::Error::custom),
    }
}

/// `metrics` as vLLM writes it back, or why vLLM refuses it.
pub fn normalize(v: &Value) -> Result<Value, String> {
    let m = object(v, "metrics")?;
    let mut out = Map::new();
    for key in TIMINGS {
        out.insert(key.into(), opt_float(m.get(key), key)?);
    }
    let spec = match m.get("speculative_decoding") {
        None | Some(Value::Null) => Value::Null,
        Some(s) => speculative(s)?,
    };
    out.insert("speculative_decoding".into(), spec);
    extras(m, &mut out);
    Ok(Value::Object(out))
}

fn speculative(v: &Value) -> Result<Value, String> {
    let m = object(v, "speculative_decoding")?;
    let mut out = Map::new();
    let path = |k: &str| format!("speculative_decoding.{k}");
    for key in SPEC_FLOATS {
        let v = m.get(key).ok_or_else(|| required(&path(key)))?;
        out.insert(key.into(), float(v, &path(key))?);
    }
    let hist = m
        .get("acceptance_histogram")
        .ok_or_else(|| required(&path("acceptance_histogram")))?;
    out.insert(
        "acceptance_histogram".into(),
        int_list(hist, &path("acceptance_histogram"))?,
    );
    for key in SPEC_INTS {
        let v = m.get(key).ok_or_else(|| required(&path(key)))?;
        out.insert(key.into(), int(v, &path(key))?);
    }
    for key in SPEC_LISTS {
        let v = match m.get(key) {
            None | Some(Value::Null) => Value::Null,
            Some(v) => int_list(v, &path(key))?,
        };
        out.insert(key.into(), v);
    }
    extras(m, &mut out);
    Ok(Value::Object(out))
}

/// The keys `out` does not declare, after the declared ones, as pydantic dumps extras.
fn extras(m: &Map<String, Value>, out: &mut Map<String, Value>) {
    for (k, v) in m {
        if !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
}

fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, String> {
    v.as_object()
        .ok_or_else(|| format!("{path}: Input should be a valid dictionary"))
}

fn required(path: &str) -> String {
    format!("{path}: Field required")
}

fn opt_float(v: Option<&Value>, path: &str) -> Result<Value, String> {
    match v {
        None | Some(Value::Null) => Ok(Value::Null),
        Some(v) => float(v, path),
    }
}

/// pydantic's lax `float`: a number, a bool or a numeric string (`"1_000"`, `" 12 "`).
fn float(v: &Value, path: &str) -> Result<Value, String> {
    let f = match v {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::String(s) => numeric_text(s).and_then(|t| t.parse::<f64>().ok()),
        _ => None,
    }
    .ok_or_else(|| format!("{path}: Input should be a valid number"))?;
    Ok(serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number))
}

/// pydantic's lax `int`: an integer, a float without a fraction, a bool, or an integer
/// string (`"3"`, `"3.0"`).
fn int(v: &Value, path: &str) -> Result<Value, String> {
    let fractional = || format!("{path}: Input should be a valid integer, got a fractional number");
    let n = match v {
        Value::Number(n) => match n.as_i64() {
            Some(i) => Some(i),
            None => match n.as_f64() {
                Some(f) if f.fract() != 0.0 => return Err(fractional()),
                Some(f) if f.abs() < 9.2e18 => Some(f as i64),
                _ => None,
            },
        },
        Value::Bool(b) => Some(i64::from(*b)),
        Value::String(s) => numeric_text(s).and_then(|t| {
            t.parse::<i64>().ok().or_else(|| {
                let (whole, frac) = t.split_once('.')?;
                frac.bytes()
                    .all(|b| b == b'0')
                    .then(|| whole.parse().ok())?
            })
        }),
        _ => None,
    }
    .ok_or_else(|| format!("{path}: Input should be a valid integer"))?;
    Ok(Value::from(n))
}

fn int_list(v: &Value, path: &str) -> Result<Value, String> {
    let items = v
        .as_array()
        .ok_or_else(|| format!("{path}: Input should be a valid list"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, x)| int(x, &format!("{path}.{i}")))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// A numeric string trimmed, with digit-group underscores removed; `None` when empty.
fn numeric_text(s: &str) -> Option<String> {
    let t: String = s.trim().chars().filter(|&c| c != '_').collect();
    (!t.is_empty()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declared_fields_come_first_then_extras() {
        let out = normalize(&json!({"x": 1, "queue_time_ms": 3})).unwrap();
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            r#"{"time_to_first_token_ms":null,"generation_time_ms":null,"queue_time_ms":3.0,"mean_itl_ms":null,"tokens_per_second":null,"speculative_decoding":null,"x":1}"#
        );
    }

    #[test]
    fn lax_values_as_pydantic_reads_them() {
        let out = normalize(
            &json!({"time_to_first_token_ms": "12.5", "mean_itl_ms": true,
            "tokens_per_second": "inf"}),
        )
        .unwrap();
        assert_eq!(out["time_to_first_token_ms"], json!(12.5));
        assert_eq!(out["mean_itl_ms"], json!(1.0));
        assert_eq!(out["tokens_per_second"], Value::Null);
        let spec = json!({"speculative_decoding": {"mean_acceptance_length": 1,
            "draft_acceptance_rate": 0.5, "acceptance_histogram": [1, "2"], "num_spec_steps": 3.0,
            "num_accepted_draft_tokens": "1", "num_draft_tokens": 2, "num_spec_tokens": 2,
            "extra": 5}});
        let out = normalize(&spec).unwrap();
        assert_eq!(
            serde_json::to_string(&out["speculative_decoding"]).unwrap(),
            r#"{"mean_acceptance_length":1.0,"draft_acceptance_rate":0.5,"acceptance_histogram":[1,2],"num_spec_steps":3,"num_accepted_draft_tokens":1,"num_draft_tokens":2,"num_spec_tokens":2,"per_step_accepted":null,"per_step_drafted":null,"extra":5}"#
        );
    }

    #[test]
    fn what_vllm_refuses() {
        for (bad, field) in [
            (json!([]), "metrics"),
            (json!("x"), "metrics"),
            (json!({"queue_time_ms": "soon"}), "queue_time_ms"),
            (json!({"queue_time_ms": []}), "queue_time_ms"),
            (
                json!({"speculative_decoding": {"mean_acceptance_length": 1}}),
                "speculative_decoding.draft_acceptance_rate",
            ),
            (
                json!({"speculative_decoding": {"mean_acceptance_length": 1,
                "draft_acceptance_rate": 0.5, "acceptance_histogram": [], "num_spec_steps": 3.5,
                "num_accepted_draft_tokens": 1, "num_draft_tokens": 2, "num_spec_tokens": 1}}),
                "speculative_decoding.num_spec_steps",
            ),
        ] {
            let e = normalize(&bad).unwrap_err();
            assert!(e.starts_with(field), "{bad}: {e}");
        }
    }
}
