//! A tool's JSON-schema parameters as the TypeScript-like type the Harmony format shows the
//! model (`type get_weather = (_: { city: string, … }) => any;`).
//!
//! The rules are those of openai-harmony's renderer (`json_schema_to_typescript` in its
//! `src/encoding.rs`; oss-harmony 0.0.11, which vLLM 0.32 runs, renders the same), checked
//! token for token by `tests/harmony_render.rs`:
//! * `type: object` is `{`, one line per property (`key?: T,` with `?` unless `required`,
//!   preceded by `// title` + `//`, `// description` and `// Examples:` lines, followed by
//!   ` // default: …`), then `}`, nested objects indented four spaces more;
//! * `string` with a non-empty `enum` is `"a" | "b"`; `integer` and `number` are `number`;
//!   `array` is `T[]` (`Array<any>` without `items`); a list of types is joined by ` | `;
//!   `nullable: true` adds ` | null`;
//! * `oneOf` is one `\n | variant` line per variant; `anyOf`, `allOf`, `const` and schemas
//!   without a type are `any`.

use serde_json::Value;

/// The type a schema renders as, its lines indented by `indent`.
pub fn schema_type(schema: &Value, indent: &str) -> String {
    if let Some(variants) = schema.get("oneOf").and_then(Value::as_array) {
        return one_of_top(variants, indent);
    }
    if let Some(types) = schema.get("type").and_then(Value::as_array) {
        let names: Vec<&str> = types
            .iter()
            .filter_map(Value::as_str)
            .map(|t| if t == "integer" { "number" } else { t })
            .collect();
        if !names.is_empty() {
            return names.join(" | ");
        }
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => object(schema, indent),
        Some("string") => {
            let values: Vec<String> = enum_values(schema)
                .iter()
                .filter_map(Value::as_str)
                .map(|s| format!("\"{s}\""))
                .collect();
            if values.is_empty() {
                "string".into()
            } else {
                values.join(" | ")
            }
        }
        Some("number" | "integer") => "number".into(),
        Some("boolean") => "boolean".into(),
        Some("array") => match schema.get("items") {
            Some(items) => format!("{}[]", schema_type(items, indent)),
            None => "Array<any>".into(),
        },
        _ => "any".into(),
    }
}

fn enum_values(schema: &Value) -> &[Value] {
    schema
        .get("enum")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn is_enum(schema: &Value) -> bool {
    !enum_values(schema).is_empty()
}

fn description(schema: &Value) -> Option<&str> {
    schema.get("description").and_then(Value::as_str)
}

/// `T`, or `T | null` for `nullable: true` when `T` does not already say `null`.
fn with_nullable(schema: &Value, ty: String) -> String {
    if schema.get("nullable").and_then(Value::as_bool) == Some(true) && !ty.contains("null") {
        format!("{ty} | null")
    } else {
        ty
    }
}

/// How a `default` is written after `default: `. A string is quoted unless the schema is an
/// enum, where it is written bare (`quote_enum_strings`: as JSON instead, which is how a
/// top-level `oneOf` variant writes it).
fn default_text(schema: &Value, default: &Value, quote_enum_strings: bool) -> String {
    match default.as_str() {
        Some(s) if !is_enum(schema) => format!("\"{s}\""),
        Some(s) if !quote_enum_strings => s.to_string(),
        _ => default.to_string(),
    }
}

/// A schema that is a `oneOf`: each variant on its own line.
fn one_of_top(variants: &[Value], indent: &str) -> String {
    let mut out = String::new();
    for variant in variants {
        out.push_str(&format!("\n{indent} | "));
        let ty = schema_type(variant, &format!("{indent}   "));
        out.push_str(&with_nullable(variant, ty));
        let mut notes = Vec::new();
        if let Some(d) = description(variant) {
            notes.push(d.to_string());
        }
        if let Some(d) = variant.get("default") {
            notes.push(format!("default: {}", default_text(variant, d, true)));
        }
        if !notes.is_empty() {
            out.push_str(&format!(" // {}", notes.join(" ")));
        }
    }
    out
}

fn object(schema: &Value, indent: &str) -> String {
    let mut out = String::new();
    if let Some(d) = description(schema) {
        out.push_str(&format!("{indent}// {d}\n"));
    }
    out.push_str("{\n");
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (key, prop) in props {
            let mark = if required.contains(&key.as_str()) {
                ""
            } else {
                "?"
            };
            if let Some(title) = prop.get("title").and_then(Value::as_str) {
                out.push_str(&format!("{indent}// {title}\n{indent}//\n"));
            }
            let one_of = prop.get("oneOf");
            if one_of.is_none() {
                if let Some(d) = description(prop) {
                    out.push_str(&format!("{indent}// {d}\n"));
                }
            }
            if let Some(examples) = prop.get("examples").and_then(Value::as_array) {
                if !examples.is_empty() {
                    out.push_str(&format!("{indent}// Examples:\n"));
                    for ex in examples.iter().filter_map(Value::as_str) {
                        out.push_str(&format!("{indent}// - \"{ex}\"\n"));
                    }
                }
            }
            if let Some(variants) = one_of.and_then(Value::as_array) {
                one_of_property(&mut out, key, mark, prop, variants, indent);
                continue;
            }
            let ty = schema_type(prop, &format!("{indent}    "));
            out.push_str(&format!(
                "{indent}{key}{mark}: {},",
                with_nullable(prop, ty)
            ));
            if one_of.is_none() {
                if let Some(d) = prop.get("default") {
                    out.push_str(&format!(" // default: {}", default_text(prop, d, false)));
                }
            }
            out.push('\n');
        }
    }
    out.push_str(&format!("{indent}}}"));
    out
}

/// A property whose schema is a `oneOf`: its description above it (unless the first
/// variant says the same), then one ` | variant` line per variant.
fn one_of_property(
    out: &mut String,
    key: &str,
    mark: &str,
    prop: &Value,
    variants: &[Value],
    indent: &str,
) {
    let prop_desc = description(prop);
    let same_as_first = prop_desc.is_some() && variants.first().and_then(description) == prop_desc;
    let desc_above = match prop_desc {
        Some(d) if !same_as_first => {
            out.push_str(&format!("{indent}// {d}\n"));
            true
        }
        _ => false,
    };
    if let Some(d) = prop.get("default") {
        out.push_str(&format!(
            "{indent}// default: {}\n",
            default_text(prop, d, false)
        ));
    }
    out.push_str(&format!("{indent}{key}{mark}:\n"));
    for (i, variant) in variants.iter().enumerate() {
        out.push_str(&format!("{indent} | "));
        let ty = schema_type(variant, &format!("{indent}   "));
        out.push_str(&with_nullable(variant, ty));
        let mut notes = Vec::new();
        if !(i == 0 && desc_above) {
            if let Some(d) = description(variant).filter(|d| Some(*d) != prop_desc) {
                notes.push(d.to_string());
            }
        }
        if let Some(d) = variant.get("default") {
            notes.push(format!("default: {}", default_text(variant, d, false)));
        }
        if !notes.is_empty() {
            out.push_str(&format!(" // {}", notes.join(" ")));
        }
        out.push('\n');
    }
    out.push_str(&format!("{indent},\n"));
}

#[cfg(test)]
mod tests {
    use super::schema_type;
    use serde_json::json;

    #[test]
    fn object_with_required_enum_default_and_nesting() {
        let s = json!({"type": "object", "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "pax": {"type": "object", "properties": {"n": {"type": "integer"}}},
        }, "required": ["city"]});
        assert_eq!(
            schema_type(&s, ""),
            "{\n// City name\ncity: string,\nunit?: \"c\" | \"f\", // default: c\n\
             pax?: {\n    n?: number,\n    },\n}"
        );
    }

    #[test]
    fn unions_and_untyped() {
        assert_eq!(
            schema_type(&json!({"type": ["integer", "null"]}), ""),
            "number | null"
        );
        assert_eq!(
            schema_type(&json!({"anyOf": [{"type": "string"}]}), ""),
            "any"
        );
        assert_eq!(schema_type(&json!({"type": "array"}), ""), "Array<any>");
        assert_eq!(
            schema_type(
                &json!({"oneOf": [{"type": "string"}, {"type": "number", "default": 1}]}),
                ""
            ),
            "\n | string\n | number // default: 1"
        );
    }
}
