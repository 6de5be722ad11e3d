//! The conversion against what vLLM 0.33's own converter makes of the same requests
//! (`AnthropicServingMessages.to_chat_completion_request`, run on these inputs).
#![allow(clippy::unwrap_used)]

use super::{to_chat, MessagesSettings};
use serde_json::{json, Value};

const KEEP: MessagesSettings = MessagesSettings {
    merge_inline_system: false,
    disabled_effort: "none",
};
const MERGE: MessagesSettings = MessagesSettings {
    merge_inline_system: true,
    disabled_effort: "low",
};

fn convert(body: Value, s: &MessagesSettings) -> Value {
    Value::Object(to_chat(&body, s).unwrap())
}

fn error(body: Value) -> (String, Option<String>) {
    let e = to_chat(&body, &KEEP).unwrap_err();
    (e.to_string(), e.param().map(str::to_string))
}

fn example() -> Value {
    json!({"model": "m", "max_tokens": 4096, "stream": true, "stop_sequences": ["END"],
        "temperature": 0.2, "top_p": 0.9, "top_k": 40,
        "system": [{"type": "text", "text": "x-anthropic-billing-header: cch=abc"},
                   {"type": "text", "text": "You are A."}, {"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Look"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}},
                {"type": "image", "source": {"type": "url", "url": "https://x/y.jpg"}}]},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "s"},
                {"type": "redacted_thinking", "data": "zzz"}, {"type": "text", "text": "Calling"},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "text", "text": "after"},
                {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": [
                    {"type": "text", "text": "15C"}, {"type": "text", "text": "sunny"},
                    {"type": "image", "source": {"type": "base64", "data": "AAA"}},
                    {"type": "tool_reference", "tool_name": "search"}]}]},
            {"role": "system", "content": "Reminder: be nice"},
            {"role": "user", "content": "thanks"}],
        "tools": [{"name": "get_weather", "description": "w", "input_schema": {"properties": {"city": {"type": "string"}}}}],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
        "thinking": {"type": "enabled", "budget_tokens": 1024}, "output_config": {"effort": "high"},
        "metadata": {"user_id": "u"}})
}

#[test]
fn vllms_worked_example() {
    let chat = convert(example(), &KEEP);
    assert_eq!(
        chat["messages"],
        json!([
            {"role": "system", "content": "You are A.Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}},
                {"type": "image_url", "image_url": {"url": "https://x/y.jpg"}}]},
            {"role": "assistant", "reasoning": "hmm", "tool_calls": [{"id": "toolu_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}], "content": "Calling"},
            {"role": "tool", "tool_call_id": "toolu_1", "content": "15C\nsunny"},
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAA"}}]},
            {"role": "tool", "tool_call_id": "toolu_1", "content": [{"type": "tool_reference", "name": "search"}]},
            {"role": "user", "content": "after"},
            {"role": "system", "content": "Reminder: be nice"},
            {"role": "user", "content": "thanks"}])
    );
    assert_eq!(
        chat["tools"],
        json!([{"type": "function", "function": {"name": "get_weather", "description": "w",
            "parameters": {"properties": {"city": {"type": "string"}}, "type": "object"}}}])
    );
    assert_eq!(chat["tool_choice"], "required");
    assert_eq!(chat["parallel_tool_calls"], false);
    assert_eq!(chat["reasoning_effort"], "high");
    assert_eq!(chat["thinking_token_budget"], 1024);
    assert_eq!(chat["stop"], json!(["END"]));
    assert_eq!(chat["max_tokens"], 4096);
    assert_eq!(chat["max_completion_tokens"], 4096);
    assert_eq!(
        chat["stream_options"],
        json!({"include_usage": true, "continuous_usage_stats": true})
    );
    assert!(chat.get("metadata").is_none());

    let merged = convert(example(), &MERGE);
    assert_eq!(
        merged["messages"][0],
        json!({"role": "system", "content": "You are A.Be brief.Reminder: be nice"})
    );
    assert!(!merged["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .any(|m| m["role"] == "system"));
}

#[test]
fn empty_and_result_only_messages() {
    let chat = convert(
        json!({"model": "m", "max_tokens": 8, "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "r1"},
                                         {"type": "tool_result", "tool_use_id": "b"}]},
            {"role": "assistant", "content": []},
            {"role": "user", "content": []},
            {"role": "user", "content": ""},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": ""}, {"type": "tool_use", "name": "f"}]}]}),
        &KEEP,
    );
    let m = chat["messages"].as_array().unwrap();
    assert_eq!(
        m[0],
        json!({"role": "tool", "tool_call_id": "a", "content": "r1"})
    );
    assert_eq!(
        m[1],
        json!({"role": "tool", "tool_call_id": "b", "content": ""})
    );
    assert_eq!(m[2], json!({"role": "assistant"}));
    assert_eq!(m[3], json!({"role": "user", "content": ""}));
    assert_eq!(m[4]["reasoning"], "");
    assert_eq!(m[4]["tool_calls"][0]["function"]["arguments"], "{}");
    assert!(m[4]["tool_calls"][0]["id"]
        .as_str()
        .unwrap()
        .starts_with("call_"));
    assert_eq!(m.len(), 5);
}

#[test]
fn tool_choice_tools_and_thinking() {
    let base = |extra: Value| {
        let mut b = json!({"model": "m", "max_tokens": 2048, "messages": [{"role": "user", "content": "x"}]});
        for (k, v) in extra.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    };
    let tool = json!([{"name": "f", "input_schema": {"type": "object"}}]);
    let chat = convert(base(json!({"tools": tool})), &KEEP);
    assert_eq!(chat["tool_choice"], "auto");
    let chat = convert(base(json!({})), &KEEP);
    assert!(chat.get("tool_choice").is_none());
    let chat = convert(
        base(json!({"tools": tool, "tool_choice": {"type": "tool", "name": "f"}})),
        &KEEP,
    );
    assert_eq!(
        chat["tool_choice"],
        json!({"type": "function", "function": {"name": "f"}})
    );
    let chat = convert(base(json!({"thinking": {"type": "disabled"}})), &MERGE);
    assert_eq!(chat["reasoning_effort"], "low");
    let chat = convert(
        base(json!({"thinking": {"type": "disabled"}, "output_config": {"effort": "high"}})),
        &KEEP,
    );
    assert_eq!(chat["reasoning_effort"], "none", "disabled wins");
    let chat = convert(base(json!({"thinking": {"type": "adaptive"}})), &KEEP);
    assert!(chat.get("reasoning_effort").is_none());
    let chat = convert(
        base(
            json!({"output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}}}),
        ),
        &KEEP,
    );
    assert_eq!(
        chat["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "json_schema", "schema": {"type": "object"}}})
    );
    // Tool changes in system messages.
    let chat = convert(
        base(
            json!({"tools": [{"name": "old", "input_schema": {}}, {"name": "lazy", "input_schema": {}, "defer_loading": true}],
            "messages": [
                {"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "tool_definition",
                    "definition": {"name": "new", "input_schema": {}}}}]},
                {"role": "system", "content": [{"type": "tool_removal", "tool": {"type": "tool_reference", "name": "old"}}]},
                {"role": "user", "content": "x"}]}),
        ),
        &KEEP,
    );
    let names: Vec<&str> = chat["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["lazy", "new"]);
    assert_eq!(chat["messages"].as_array().unwrap().len(), 1);
}

#[test]
fn vllms_validators() {
    let ok =
        json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]});
    let with = |k: &str, v: Value| {
        let mut b = ok.clone();
        b[k] = v;
        b
    };
    for (body, needle, param) in [
        (
            with("max_tokens", json!(0)),
            "max_tokens must be positive",
            "max_tokens",
        ),
        (
            with("max_tokens", json!(1.5)),
            "valid integer",
            "max_tokens",
        ),
        (with("model", json!("")), "Model is required", "model"),
        (
            with("thinking", json!({"type": "enabled", "budget_tokens": 512})),
            "1024",
            "thinking.budget_tokens",
        ),
        (
            with(
                "thinking",
                json!({"type": "enabled", "budget_tokens": 2048}),
            ),
            "less than max_tokens",
            "thinking",
        ),
        (
            with("stop_sequences", json!(["a", "b", "c", "d", "e"])),
            "at most 4",
            "stop_sequences",
        ),
        (
            with("stop_sequences", json!("a")),
            "list of strings",
            "stop_sequences",
        ),
        (
            with("tool_choice", json!({"type": "tool"})),
            "name is required",
            "tool_choice.name",
        ),
        (
            with("tool_choice", json!({"type": "sometimes"})),
            "Input should be",
            "tool_choice.type",
        ),
        (
            with(
                "messages",
                json!([{"role": "user", "content": [{"type": "document"}]}]),
            ),
            "Input should be one of",
            "messages[0].content[0].type",
        ),
        (
            with("messages", json!([{"role": "tool", "content": "x"}])),
            "role must be",
            "messages[0].role",
        ),
        (
            with(
                "messages",
                json!([{"role": "user", "content": [{"type": "tool_addition",
                "tool": {"type": "tool_reference", "name": "f"}}]}]),
            ),
            "only allowed in messages with role \"system\"",
            "messages[0].content[0]",
        ),
        (
            with("tools", json!([{"name": "f"}])),
            "Field required",
            "tools[0].input_schema",
        ),
    ] {
        let (msg, got) = error(body.clone());
        assert!(msg.contains(needle), "{body}: {msg}");
        assert_eq!(got.as_deref(), Some(param), "{body}: {msg}");
    }
    // Lax integers, unknown fields, and a budget allowed past max_tokens on remote decode.
    let chat = convert(with("max_tokens", json!("10")), &KEEP);
    assert_eq!(chat["max_tokens"], 10);
    let mut b = with(
        "thinking",
        json!({"type": "enabled", "budget_tokens": 2048}),
    );
    b["kv_transfer_params"] = json!({"do_remote_decode": true});
    b["service_tier"] = json!("auto");
    let chat = convert(b, &KEEP);
    assert_eq!(chat["thinking_token_budget"], 2048);
    assert!(chat.get("service_tier").is_none());
    // An undeclared tool referenced by a tool change.
    let mut b = ok.clone();
    b["messages"] = json!([{"role": "system", "content": [{"type": "tool_addition",
        "tool": {"type": "tool_reference", "name": "ghost"}}]}, {"role": "user", "content": "x"}]);
    let (msg, _) = error(b);
    assert!(msg.contains("not declared in tools"), "{msg}");
}

#[test]
fn assistant_side_tool_results_read_as_python_str() {
    let chat = convert(
        json!({"model": "m", "max_tokens": 8, "messages": [{"role": "assistant", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "it's"}]}]}]}),
        &KEEP,
    );
    assert_eq!(
        chat["messages"][0]["content"],
        "Tool result: [{'type': 'text', 'text': \"it's\"}]"
    );
}
