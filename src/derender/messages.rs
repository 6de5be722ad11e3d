//! Messages derender **(ext)**: the chat derender's output in Anthropic's Messages shape, as
//! vLLM's `/v1/messages` front door converts its chat result (vLLM 0.33,
//! `entrypoints/anthropic/serving.py`, `messages_full_converter` and
//! `message_stream_converter`). No peer has a Messages derender; the shapes are that
//! converter's, so a Messages client behind a token engine sees what vLLM's server sends.
//!
//! Whole output: `{"id", "type": "message", "role": "assistant", "content": [blocks],
//! "model", "stop_reason", "stop_sequence"?, "usage": {"input_tokens", "output_tokens"}}`
//! (null fields left out, as vLLM's `exclude_none`). Blocks in order: `thinking` (with a
//! random `signature`), `text`, one `tool_use` per call (`input` is the parsed arguments
//! object); a single empty `text` block when there is nothing else.
//!
//! Stream: Anthropic's events, each `{"type": …}`: `message_start` on the first chunk, then
//! `content_block_start` / `content_block_delta` (`thinking_delta`, `text_delta`,
//! `input_json_delta`, and a `signature_delta` before a thinking block closes) /
//! `content_block_stop`, one block open at a time with indices 0, 1, … in order; on the
//! finish, `message_delta` (`stop_reason`, `stop_sequence`, usage) and `message_stop`. Text
//! that arrives while a tool block is open is held and sent as one text block once that
//! block closes (vLLM's `pending_content`). The few fields this needs between chunks are
//! [`MessagesStream`], carried in the signed stream state.
//!
//! `stop_reason`, from the chat choice: `length` → `max_tokens`; a matched stop string →
//! `stop_sequence` (and `stop_sequence` is that string); tool calls → `tool_use`; `stop` →
//! `end_turn`; anything else → null.

use crate::error::RequestError;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// Anthropic's `stop_reason` (and `stop_sequence`) for a chat choice's `finish_reason` and
/// vLLM `stop_reason`, given whether tool calls were made (vLLM's
/// `_to_anthropic_stop_reason`).
fn stop_reason(finish: &str, stop: &Value, tool_used: bool) -> (Value, Value) {
    let reason = match finish {
        "length" => "max_tokens",
        "stop" | "tool_calls" if tool_used => "tool_use",
        "stop" | "tool_calls" if stop.is_string() => {
            return ("stop_sequence".into(), stop.clone());
        }
        "tool_calls" => "tool_use",
        "stop" => "end_turn",
        _ => return (Value::Null, Value::Null),
    };
    (reason.into(), Value::Null)
}

fn usage(prompt: usize, completion: usize) -> Value {
    json!({"input_tokens": prompt, "output_tokens": completion})
}

/// A thinking block's signature: vLLM's is a random uuid4 in hex (there is no signing key
/// to verify it against).
fn signature() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// A tool call's `input`: its arguments parsed, which must be a JSON object (vLLM fails the
/// request otherwise).
fn tool_input(arguments: &str, call: usize) -> Result<Value, RequestError> {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(RequestError::invalid(
            "generate_response",
            format!(
                "tool call {call}: its arguments are not a JSON object, so they cannot be a \
                 Messages tool_use input: {arguments}"
            ),
        )),
    }
}

fn text_of(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or_default()
}

/// A whole `chat.completion` (one choice) as a Messages response.
pub fn message(chat: &Value) -> Result<Value, RequestError> {
    let choice = &chat["choices"][0];
    let msg = &choice["message"];
    let mut content = Vec::new();
    let reasoning = text_of(msg.get("reasoning"));
    if !reasoning.is_empty() {
        content.push(json!({"type": "thinking", "thinking": reasoning, "signature": signature()}));
    }
    let text = text_of(msg.get("content"));
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    let calls = msg["tool_calls"].as_array().map_or(&[][..], Vec::as_slice);
    for (i, call) in calls.iter().enumerate() {
        let f = &call["function"];
        content.push(json!({
            "type": "tool_use",
            "id": call["id"],
            "name": f["name"],
            "input": tool_input(text_of(f.get("arguments")), i)?,
        }));
    }
    if content.is_empty() {
        content.push(json!({"type": "text", "text": ""}));
    }
    let finish = text_of(choice.get("finish_reason"));
    let (reason, sequence) = stop_reason(finish, &choice["stop_reason"], !calls.is_empty());
    let mut out = Map::new();
    out.insert("id".into(), chat["id"].clone());
    out.insert("type".into(), "message".into());
    out.insert("role".into(), "assistant".into());
    out.insert("content".into(), Value::Array(content));
    out.insert("model".into(), chat["model"].clone());
    if !reason.is_null() {
        out.insert("stop_reason".into(), reason);
    }
    if !sequence.is_null() {
        out.insert("stop_sequence".into(), sequence);
    }
    let count = |k: &str| chat["usage"][k].as_u64().unwrap_or(0) as usize;
    out.insert(
        "usage".into(),
        usage(count("prompt_tokens"), count("completion_tokens")),
    );
    for key in ["kv_transfer_params", "ec_transfer_params"] {
        if let Some(v) = chat.get(key).filter(|v| !v.is_null()) {
            out.insert(key.into(), v.clone());
        }
    }
    Ok(Value::Object(out))
}

/// The kind of the open content block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Block {
    Thinking,
    Text,
    ToolUse,
}

/// A Messages stream between chunks: which block is open, its index, the open tool call's
/// id, and text held while a tool block is open.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessagesStream {
    started: bool,
    open: Option<Block>,
    index: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_id: Option<String>,
    tool_used: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pending: String,
}

impl MessagesStream {
    fn start(&mut self, out: &mut Vec<Value>, block: Value, kind: Block) {
        out.push(
            json!({"type": "content_block_start", "content_block": block, "index": self.index}),
        );
        self.open = Some(kind);
    }

    fn delta(&self, out: &mut Vec<Value>, delta: Value) {
        out.push(json!({"type": "content_block_delta", "delta": delta, "index": self.index}));
    }

    fn stop(&mut self, out: &mut Vec<Value>) {
        out.push(json!({"type": "content_block_stop", "index": self.index}));
        self.index += 1;
        self.open = None;
    }

    /// Closes the open block (a thinking block gets its signature first), then sends the
    /// text held while a tool block was open as a block of its own.
    fn flush(&mut self, out: &mut Vec<Value>) {
        if let Some(open) = self.open {
            if open == Block::Thinking {
                self.delta(
                    out,
                    json!({"type": "signature_delta", "signature": signature()}),
                );
            }
            self.stop(out);
            self.tool_id = None;
        }
        if !self.pending.is_empty() {
            let text = std::mem::take(&mut self.pending);
            self.start(out, json!({"type": "text", "text": ""}), Block::Text);
            self.delta(out, json!({"type": "text_delta", "text": text}));
            self.stop(out);
        }
    }

    /// The events for one `chat.completion.chunk`; `prompt` and `completion` are the token
    /// counts so far, for `message_start` and `message_delta`.
    pub fn events(&mut self, chunk: &Value, prompt: usize, completion: usize) -> Vec<Value> {
        let mut out = Vec::new();
        if !self.started {
            self.started = true;
            out.push(json!({"type": "message_start", "message": {
                "id": chunk["id"], "type": "message", "role": "assistant", "content": [],
                "model": chunk["model"], "stop_reason": null, "stop_sequence": null,
                "usage": usage(prompt, 0),
            }}));
        }
        let Some(choice) = chunk["choices"].as_array().and_then(|c| c.first()) else {
            return out;
        };
        let delta = &choice["delta"];
        let reasoning = text_of(delta.get("reasoning"));
        if !reasoning.is_empty() {
            if self.open != Some(Block::Thinking) {
                self.flush(&mut out);
                self.start(
                    &mut out,
                    json!({"type": "thinking", "thinking": ""}),
                    Block::Thinking,
                );
            }
            self.delta(
                &mut out,
                json!({"type": "thinking_delta", "thinking": reasoning}),
            );
        }
        let text = text_of(delta.get("content"));
        if !text.is_empty() {
            match self.open {
                Some(Block::ToolUse) => self.pending.push_str(text),
                Some(Block::Text) => {}
                _ => {
                    self.flush(&mut out);
                    self.start(&mut out, json!({"type": "text", "text": ""}), Block::Text);
                }
            }
            if self.open == Some(Block::Text) {
                self.delta(&mut out, json!({"type": "text_delta", "text": text}));
            }
        }
        for call in delta["tool_calls"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
        {
            let f = &call["function"];
            if let (Some(id), Some(name)) = (call["id"].as_str(), f["name"].as_str()) {
                if self.tool_id.as_deref() != Some(id) {
                    self.flush(&mut out);
                    self.start(
                        &mut out,
                        json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                        Block::ToolUse,
                    );
                    self.tool_id = Some(id.to_string());
                    self.tool_used = true;
                }
            }
            let args = text_of(f.get("arguments"));
            if self.open == Some(Block::ToolUse) && !args.is_empty() {
                self.delta(
                    &mut out,
                    json!({"type": "input_json_delta", "partial_json": args}),
                );
            }
        }
        if let Some(finish) = choice["finish_reason"].as_str() {
            self.flush(&mut out);
            let (reason, sequence) = stop_reason(finish, &choice["stop_reason"], self.tool_used);
            out.push(json!({"type": "message_delta",
                "delta": {"stop_reason": reason, "stop_sequence": sequence},
                "usage": usage(prompt, completion)}));
            out.push(json!({"type": "message_stop"}));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn chunk(delta: Value, finish: Value) -> Value {
        json!({"id": "chatcmpl-1", "model": "m", "choices": [
            {"index": 0, "delta": delta, "finish_reason": finish, "stop_reason": null}]})
    }

    fn types(events: &[Value]) -> Vec<String> {
        events
            .iter()
            .map(|e| {
                let t = e["type"].as_str().unwrap();
                match e["delta"]["type"].as_str() {
                    Some(d) => format!("{t}:{d}@{}", e["index"]),
                    None if e.get("index").is_some() => format!("{t}@{}", e["index"]),
                    None => t.to_string(),
                }
            })
            .collect()
    }

    #[test]
    fn blocks_open_in_order_and_held_text_follows_the_tool_block() {
        let mut s = MessagesStream::default();
        let mut all = Vec::new();
        all.extend(s.events(
            &chunk(json!({"role": "assistant", "content": ""}), Value::Null),
            5,
            0,
        ));
        all.extend(s.events(&chunk(json!({"reasoning": "hm"}), Value::Null), 5, 1));
        all.extend(s.events(&chunk(json!({"content": "Hi"}), Value::Null), 5, 2));
        all.extend(s.events(
            &chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                "function": {"name": "f", "arguments": "{\"a\""}}]}),
                Value::Null,
            ),
            5,
            3,
        ));
        all.extend(s.events(&chunk(json!({"content": "x"}), Value::Null), 5, 4));
        all.extend(s.events(
            &chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}),
                json!("tool_calls"),
            ),
            5,
            5,
        ));
        assert_eq!(
            types(&all),
            [
                "message_start",
                "content_block_start@0",
                "content_block_delta:thinking_delta@0",
                "content_block_delta:signature_delta@0",
                "content_block_stop@0",
                "content_block_start@1",
                "content_block_delta:text_delta@1",
                "content_block_stop@1",
                "content_block_start@2",
                "content_block_delta:input_json_delta@2",
                "content_block_delta:input_json_delta@2",
                "content_block_stop@2",
                "content_block_start@3",
                "content_block_delta:text_delta@3",
                "content_block_stop@3",
                "message_delta",
                "message_stop",
            ]
        );
        let last = &all[all.len() - 2];
        assert_eq!(last["delta"]["stop_reason"], "tool_use");
        assert_eq!(
            last["usage"],
            json!({"input_tokens": 5, "output_tokens": 5})
        );
    }

    #[test]
    fn stop_reasons_follow_vllm() {
        let s = |f: &str, stop: Value, tools: bool| stop_reason(f, &stop, tools);
        assert_eq!(s("length", Value::Null, false).0, "max_tokens");
        assert_eq!(
            s("stop", json!("END"), false),
            (json!("stop_sequence"), json!("END"))
        );
        assert_eq!(s("stop", json!(42), false).0, "end_turn");
        assert_eq!(s("stop", Value::Null, true).0, "tool_use");
        assert_eq!(s("tool_calls", Value::Null, false).0, "tool_use");
        assert_eq!(s("abort", Value::Null, false).0, Value::Null);
    }

    #[test]
    fn whole_message_blocks_and_bad_arguments() {
        let chat = |calls: Value| {
            json!({"id": "chatcmpl-1", "model": "m", "usage": {"prompt_tokens": 3, "completion_tokens": 4},
              "choices": [{"index": 0, "message": {"content": null, "reasoning": null, "tool_calls": calls},
                "finish_reason": "tool_calls", "stop_reason": null}]})
        };
        let ok = message(&chat(
            json!([{"id": "call_1", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]),
        ))
        .unwrap();
        assert_eq!(
            ok["content"],
            json!([{"type": "tool_use", "id": "call_1", "name": "f", "input": {"a": 1}}])
        );
        assert_eq!(ok["stop_reason"], "tool_use");
        assert!(ok.get("stop_sequence").is_none());
        assert_eq!(ok["usage"], json!({"input_tokens": 3, "output_tokens": 4}));
        let empty = message(&chat(json!([]))).unwrap();
        assert_eq!(empty["content"], json!([{"type": "text", "text": ""}]));
        let bad = message(&chat(
            json!([{"id": "c", "function": {"name": "f", "arguments": "[1]"}}]),
        ));
        assert!(bad.is_err());
    }
}
