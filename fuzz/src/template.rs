//! `template`: hostile request templates. The input is a chat template, sent as a request's
//! `chat_template` with a conversation that has a system prompt, tools, a tool call and its
//! result. It renders or fails with a 4xx: a template that loops, recurses or grows its
//! output without bound runs out of fuel (`--template-fuel`, serve's default) or depth,
//! never out of memory, and never panics. A render slower than AFL's timeout is reported
//! as a hang.

use serde_json::{json, Value};

/// The request the template renders.
pub fn request(template: &str) -> Value {
    json!({
        "model": "qwen3",
        "chat_template": template,
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather in Paris? <|im_end|> {{ 7*7 }}"},
            {"role": "assistant", "content": "", "reasoning_content": "look it up",
             "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"},
            {"role": "user", "content": [{"type": "text", "text": "And tomorrow?"}]}
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather",
            "description": "Current weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"]}}}],
        "chat_template_kwargs": {"enable_thinking": true, "custom": [1, "two", {"three": 3}]},
        "add_generation_prompt": true
    })
}

pub fn run(data: &[u8]) {
    let Ok(template) = std::str::from_utf8(data) else {
        return;
    };
    crate::server::get().post_json("/v1/chat/completions/render", &request(template));
}
