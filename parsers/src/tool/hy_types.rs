//! Typing an `<arg_value>` of the Hunyuan v4 family by its parameter's schema, as vLLM 0.33's
//! `hy_v4` parser types it (`_parse_value` and its helpers in
//! `vllm/tool_parsers/hy_v4_tool_parser.py`), which reads schemas its own way rather than
//! through `coerce_to_schema_type` (see [`super::coerce`]):
//!
//! - the parameter's types: its `type` (a name, or a list of names), else its `anyOf`, else
//!   its `oneOf` choices' `type`s (a choice without one is `string`), else `string`; an
//!   undeclared tool or parameter is `string`. Names are aliased exactly as written (`int`,
//!   `float`, `list`, `dict`, `map`, `bool`, `binary`, `str`, ...), then by lower-cased prefix
//!   (`int*`, `uint*`, `long*`, `short*`, `unsigned*` → integer; `num*`, `float*` → number);
//!   `null` is ignored;
//! - the value, tried in order: `boolean` (`true`/`false` in any case), `integer` (Python's
//!   `int`), `number` (a float when the text has `.`, `e` or `E`, else an int), any other type
//!   (`object`, `array`, ...) as JSON, `string` as the text; failing all, the text as JSON,
//!   else as a Python literal, else as a string.

use super::coerce::{json_roundtrip, py_float, py_int};
use super::pythonic::parse_kwargs;
use crate::pyjson::{dumps, dumps_str, py_float_repr};
use serde_json::Value;

/// The types `_get_types` finds for a parameter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct HyTypes {
    boolean: bool,
    integer: bool,
    number: bool,
    string: bool,
    /// A type other than those (`object`, `array`, an unknown name).
    other: bool,
}

impl HyTypes {
    const STRING: HyTypes = HyTypes {
        boolean: false,
        integer: false,
        number: false,
        string: true,
        other: false,
    };

    /// The types of a parameter's schema; `None` (undeclared) is `string`.
    pub(crate) fn of(schema: Option<&Value>) -> HyTypes {
        let Some(obj) = schema.and_then(Value::as_object) else {
            return HyTypes::STRING;
        };
        let mut t = HyTypes::default();
        match (obj.get("type"), obj.get("anyOf"), obj.get("oneOf")) {
            (Some(Value::Array(names)), _, _) => names.iter().for_each(|n| t.add(n)),
            (Some(name), _, _) => t.add(name),
            (None, Some(Value::Array(choices)), _) | (None, None, Some(Value::Array(choices))) => {
                for c in choices {
                    match c.get("type") {
                        Some(name) => t.add(name),
                        None => t.string = true,
                    }
                }
            }
            _ => t.string = true,
        }
        t
    }

    fn add(&mut self, name: &Value) {
        let Some(name) = name.as_str() else {
            self.other = true;
            return;
        };
        let aliased = match name {
            "str" | "text" | "varchar" | "char" | "enum" => "string",
            "bool" | "binary" => "boolean",
            "int" => "integer",
            "float" | "double" => "number",
            "list" => "array",
            "dict" | "map" => "object",
            _ => {
                let lower = name.to_lowercase();
                let starts = |ps: &[&str]| ps.iter().any(|p| lower.starts_with(p));
                if starts(&["int", "uint", "long", "short", "unsigned"]) {
                    "integer"
                } else if starts(&["num", "float"]) {
                    "number"
                } else {
                    name
                }
            }
        };
        match aliased {
            "boolean" => self.boolean = true,
            "integer" => self.integer = true,
            "number" => self.number = true,
            "string" => self.string = true,
            "null" => {}
            _ => self.other = true,
        }
    }

    /// Only `string`: the value streams as it is written.
    pub(crate) fn only_string(self) -> bool {
        self == HyTypes::STRING
    }
}

/// The JSON text of an `<arg_value>` typed by `types` (see the module documentation).
pub(crate) fn hy_value(text: &str, types: HyTypes) -> String {
    if types.boolean {
        match text.to_lowercase().as_str() {
            "true" => return "true".into(),
            "false" => return "false".into(),
            _ => {}
        }
    }
    if types.integer {
        if let Some(i) = py_int(text) {
            return i;
        }
    }
    if types.number {
        let n = if text.contains(['.', 'e', 'E']) {
            // A non-finite float would be written as Python's invalid `Infinity`: not a
            // number here.
            py_float(text).filter(|f| f.is_finite()).map(py_float_repr)
        } else {
            py_int(text)
        };
        if let Some(n) = n {
            return n;
        }
    }
    if types.other {
        if let Some(json) = json_roundtrip(text) {
            return json;
        }
    }
    if types.string {
        return dumps_str(text);
    }
    json_roundtrip(text)
        .or_else(|| literal(text))
        .unwrap_or_else(|| dumps_str(text))
}

/// `ast.literal_eval(text)` as JSON, for the literals a tool call writes.
pub(crate) fn literal(text: &str) -> Option<String> {
    let kwargs = parse_kwargs(
        &format!("x={}", text.trim_start_matches([' ', '\t'])),
        false,
    )?;
    match kwargs.get("x") {
        Some(v) if kwargs.len() == 1 => Some(dumps(v)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(schema: Value) -> HyTypes {
        HyTypes::of(Some(&schema))
    }

    #[test]
    fn schema_types_as_hy_v4_reads_them() {
        assert!(HyTypes::of(None).only_string());
        assert!(t(json!({})).only_string());
        assert!(t(json!({"type": "int64"})).integer);
        assert!(t(json!({"type": "Number"})).number);
        assert!(t(json!({"type": "String"})).other);
        assert!(t(json!({"type": ["string", "null"]})).only_string());
        let u = t(json!({"anyOf": [{"type": "boolean"}, {"enum": ["a"]}]}));
        assert!(u.boolean && u.string);
        // `type` wins over `anyOf`.
        assert!(t(json!({"type": "integer", "anyOf": [{"type": "string"}]})).integer);
    }

    #[test]
    fn values_as_hy_v4_types_them() {
        let (b, i, n, s, o) = (
            t(json!({"type": "boolean"})),
            t(json!({"type": "integer"})),
            t(json!({"type": "number"})),
            HyTypes::STRING,
            t(json!({"type": "object"})),
        );
        for (text, ty, want) in [
            ("True", b, "true"),
            ("yes", b, "\"yes\""),
            ("1", b, "1"),
            ("3", i, "3"),
            ("3.0", i, "3.0"),
            ("notanint", i, "\"notanint\""),
            ("5", n, "5"),
            ("5.0", n, "5.0"),
            ("1e3", n, "1000.0"),
            ("Beijing", s, "\"Beijing\""),
            ("{\"a\": [1, 2]}", o, "{\"a\": [1, 2]}"),
            ("notjson", o, "\"notjson\""),
            ("{'a': True}", o, "{\"a\": true}"),
        ] {
            assert_eq!(hy_value(text, ty), want, "{text:?}");
        }
    }
}
