//! The conversion against what vLLM 0.33's `construct_input_messages` and validators make of
//! the same requests.
#![allow(clippy::unwrap_used)]

use super::to_chat;
use serde_json::{json, Value};

fn convert(body: Value) -> Value {
    Value::Object(to_chat(&body).unwrap())
}

fn error(body: Value) -> (String, Option<String>) {
    let e = to_chat(&body).unwrap_err();
    (e.to_string(), e.param().map(str::to_string))
}

#[test]
fn instructions_and_string_input() {
    let chat = convert(json!({"instructions": "Be brief.", "input": "Hi"}));
    assert_eq!(
        chat["messages"],
        json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    );
    let id = chat["request_id"].as_str().unwrap();
    assert!(id.starts_with("resp_") && id.len() == 21, "{id}");
    assert!(chat.get("stream_options").is_none());
    let chat = convert(json!({"instructions": "", "input": "Hi", "request_id": "mine"}));
    assert_eq!(chat["messages"].as_array().unwrap().len(), 1);
    assert_eq!(chat["request_id"], "mine");
}

#[test]
fn items_merge_into_the_preceding_assistant_message() {
    let chat = convert(json!({"input": [
        {"role": "user", "content": "What's the weather?"},
        {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "need tool"}]},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
        {"type": "function_call", "call_id": "call_2", "name": "get_time", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {"type": "function_call_output", "call_id": "call_2", "output": "noon"}]}));
    assert_eq!(
        chat["messages"],
        json!([{"role": "user", "content": "What's the weather?"},
            {"role": "assistant", "reasoning": "need tool", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]},
            {"role": "tool", "content": "sunny", "tool_call_id": "call_1"},
            {"role": "tool", "content": "noon", "tool_call_id": "call_2"}])
    );
    let chat = convert(json!({"input": [
        {"role": "user", "content": "q"},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "sum"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}]}));
    let m = &chat["messages"][1];
    assert_eq!(m["reasoning"], "sum");
    assert_eq!(m["content"], "done");
    assert_eq!(m["tool_calls"][0]["id"], "c");
    // Only the first part of an assistant message; two assistant strings stay apart.
    let chat = convert(json!({"input": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A1"}, {"type": "output_text", "text": "A2"}]},
        {"role": "assistant", "content": "B"}]}));
    assert_eq!(
        chat["messages"],
        json!([{"role": "assistant", "content": "A1"}, {"role": "assistant", "content": "B"}])
    );
    // Parts in chat's form; system items after the instructions.
    let chat = convert(json!({"instructions": "Be brief.", "input": [
        {"role": "system", "content": "S2"},
        {"role": "user", "content": [{"type": "input_text", "text": "a"}, {"type": "input_image", "image_url": "http://x/i.png"}]}]}));
    assert_eq!(
        chat["messages"],
        json!([{"role": "system", "content": "Be brief."}, {"role": "system", "content": "S2"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "http://x/i.png"}}]}])
    );
    // Namespaced and custom calls.
    let chat = convert(json!({"input": [
        {"type": "function_call", "call_id": "a", "name": "f", "namespace": "ns", "arguments": "{}"},
        {"type": "custom_tool_call", "call_id": "b", "name": "g", "input": "raw text"}]}));
    let calls = &chat["messages"][0]["tool_calls"];
    assert_eq!(calls[0]["function"]["name"], "ns__f");
    assert_eq!(
        calls[1]["function"]["arguments"],
        "{\"input\": \"raw text\"}"
    );
}

#[test]
fn an_unfinished_last_item_is_continued() {
    let chat = convert(json!({"input": [{"role": "user", "content": "q"},
        {"type": "message", "role": "assistant", "status": "incomplete", "content": [{"type": "output_text", "text": "par"}]}]}));
    assert_eq!(chat["continue_final_message"], true);
    assert_eq!(chat["add_generation_prompt"], false);
}

#[test]
fn tools_tool_choice_and_outputs() {
    let tools = json!([
        {"type": "function", "name": "get_weather", "description": "w", "parameters": {"type": "object"}, "strict": true},
        {"type": "web_search"},
        {"type": "namespace", "name": "ns", "tools": [{"type": "function", "name": "lookup", "parameters": {}}]},
        {"type": "custom", "name": "shell", "description": "run"}]);
    let chat = convert(json!({"input": "x", "tools": tools}));
    let names: Vec<&str> = chat["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get_weather", "ns__lookup", "shell"]);
    assert_eq!(chat["tools"][0]["function"]["strict"], true);
    assert_eq!(
        chat["tools"][2]["function"]["parameters"]["required"],
        json!(["input"])
    );
    assert_eq!(chat["tool_choice"], "auto");
    let chat = convert(
        json!({"input": "x", "tools": tools, "tool_choice": {"type": "function", "name": "lookup"}}),
    );
    assert_eq!(chat["tool_choice"]["function"]["name"], "ns__lookup");
    let chat = convert(json!({"input": "x", "tool_choice": "auto"}));
    assert!(chat.get("tool_choice").is_none() && chat.get("tools").is_none());

    let chat = convert(
        json!({"input": "x", "max_output_tokens": 7, "reasoning": {"effort": "low"},
        "text": {"format": {"type": "json_schema", "name": "n", "schema": {"type": "object"}}},
        "include": ["message.output_text.logprobs"], "top_logprobs": 3, "stream": true}),
    );
    assert_eq!(chat["max_tokens"], 7);
    assert_eq!(chat["reasoning_effort"], "low");
    assert_eq!(
        chat["structured_outputs"],
        json!({"json": {"type": "object"}})
    );
    assert_eq!(chat["logprobs"], true);
    assert_eq!(chat["top_logprobs"], 3);
    assert_eq!(chat["stream"], true);
    let chat = convert(json!({"input": "x", "top_logprobs": 3}));
    assert!(chat.get("logprobs").is_none());
    let chat = convert(json!({"input": "x", "text": {"format": {"type": "json_object"}}}));
    assert_eq!(chat["structured_outputs"], json!({"json_object": true}));
}

#[test]
fn vllms_refusals() {
    for (body, needle, param) in [
        (
            json!({"input": "x", "previous_response_id": "resp_1"}),
            "not supported by the stateless render endpoint",
            "previous_response_id",
        ),
        (
            json!({"input": "x", "prompt": {"id": "p"}}),
            "prompt template",
            "prompt",
        ),
        (
            json!({"input": "x", "background": true, "store": false}),
            "background can only be used",
            "background",
        ),
        (json!({}), "Field required", "input"),
        (
            json!({"input": "x", "tool_choice": "required"}),
            "must be specified with 'tools'",
            "tool_choice",
        ),
        (
            json!({"input": "x", "tool_choice": {"type": "function", "name": "f"}}),
            "not found in 'tools'",
            "tool_choice",
        ),
        (
            json!({"input": "x", "tools": [{"type": "function", "name": "g"}], "tool_choice": {"type": "function", "name": "f"}}),
            "not found in 'tools'",
            "tool_choice",
        ),
        (
            json!({"input": "x", "tools": [{"type": "function", "function": {"name": "f"}}]}),
            "chat's nested shape",
            "tools[0].name",
        ),
        (
            json!({"input": "x", "tools": [{"type": "custom", "name": "c", "format": {"type": "grammar"}}]}),
            "grammar format",
            "tools",
        ),
        (
            json!({"input": [{"type": "web_search_call", "id": "w"}]}),
            "Unsupported input item type: web_search_call",
            "input",
        ),
        (
            json!({"input": [{"type": "reasoning", "content": []}]}),
            "Field required",
            "input[0].summary",
        ),
        (
            json!({"input": [{"type": "reasoning", "summary": [], "encrypted_content": "zz"}]}),
            "Encrypted content",
            "input",
        ),
        (
            json!({"input": [{"role": "assistant", "content": [{"type": "output_text", "text": "a"}]}]}),
            "\"type\": \"message\"",
            "input[0].type",
        ),
        (
            json!({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]}),
            "Unsupported chat content part type: 'input_file'",
            "type",
        ),
        (
            json!({"input": "x", "structured_outputs": {"json": {}}, "text": {"format": {"type": "json_object"}}}),
            "Cannot specify both",
            "structured_outputs",
        ),
        (
            json!({"input": [{"type": "function_call", "call_id": "c", "name": "f"}]}),
            "Field required",
            "input[0].arguments",
        ),
    ] {
        let (msg, got) = error(body.clone());
        assert!(msg.contains(needle), "{body}: {msg}");
        assert_eq!(got.as_deref(), Some(param), "{body}: {msg}");
    }
    // Accepted: background with store, unknown fields, store itself.
    convert(
        json!({"input": "x", "background": true, "store": true, "service_tier": "flex", "metadata": {"a": "b"}}),
    );
}
