//! A function tool in chat's shape, as vLLM's `FunctionDefinition` serializer writes the
//! ones it converts from other APIs (Messages, Responses): `description` and `parameters`
//! kept even when null, `strict` and `defer_loading` only when set.

use serde_json::{json, Map, Value};

/// `{"type": "function", "function": {"name", "description", "parameters", ["strict"],
/// ["defer_loading"]}}`, with `description`, `strict` and `defer_loading` read from `from`.
pub(crate) fn chat_function_tool(name: &str, parameters: Value, from: &Value) -> Value {
    let mut function = Map::new();
    function.insert("name".into(), Value::String(name.into()));
    function.insert(
        "description".into(),
        from.get("description").cloned().unwrap_or(Value::Null),
    );
    function.insert("parameters".into(), parameters);
    for key in ["strict", "defer_loading"] {
        if let Some(v) = from.get(key).filter(|v| !v.is_null()) {
            function.insert(key.into(), v.clone());
        }
    }
    json!({"type": "function", "function": function})
}
