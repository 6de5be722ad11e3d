//! `/v1/messages/derender` and `/v1/responses/derender` **(ext)** over HTTP: the engine's IDs
//! become an Anthropic Messages response / an OpenAI Responses object in the shapes vLLM's
//! own `/v1/messages` and `/v1/responses` servers send; a stream, split anywhere and folded
//! back the way the Anthropic and OpenAI SDKs fold events, gives the one-shot answer; and
//! the refusals name their field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{assert_error, golden_registry, golden_server, post_json};
use serde_json::{json, Map, Value};

const MESSAGES: &str = "/v1/messages/derender";
const RESPONSES: &str = "/v1/responses/derender";

fn post(path: &str, body: &Value) -> (u16, Value) {
    post_json(&format!("{}{path}", golden_server()), body)
}

fn ok(path: &str, body: &Value) -> Value {
    let (status, out) = post(path, body);
    assert_eq!(status, 200, "{path}: {out}");
    out
}

fn encode(text: &str) -> Vec<u32> {
    let reg = golden_registry();
    let m = reg.get(Some("qwen3")).unwrap();
    m.tokenizer.encode(text, false).unwrap().get_ids().to_vec()
}

const OUTPUT: &str = "<think>Paris is in France.</think>Let me check. <tool_call>\n\
    {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>";

fn messages_request() -> Value {
    json!({"model": "qwen3", "max_tokens": 200,
        "tools": [{"name": "get_weather", "description": "Weather",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        "messages": [{"role": "user", "content": "Weather in Paris?"}]})
}

fn responses_request() -> Value {
    json!({"model": "qwen3", "max_output_tokens": 200, "instructions": "Be brief.",
        "tools": [{"type": "function", "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        "input": "Weather in Paris?"})
}

/// The request field that carries the original request on `path`.
fn field(path: &str) -> &'static str {
    if path == MESSAGES {
        "messages_request"
    } else {
        "responses_request"
    }
}

fn one_shot(path: &str, original: &Value, ids: &[u32], finish: &str) -> Value {
    let mut body = json!({"model": "qwen3", "prompt_token_ids": [1, 2, 3],
        "generate_response": {"request_id": "chatcmpl-fixed",
            "choices": [{"index": 0, "token_ids": ids, "finish_reason": finish}]}});
    body[field(path)] = original.clone();
    ok(path, &body)
}

/// Every event of a stream of `ids` in chunks of `step`, the state passed back verbatim;
/// the original request rides on the first chunk only.
fn stream(path: &str, original: &Value, ids: &[u32], step: usize, finish: &str) -> Vec<Value> {
    let mut state = Value::Null;
    let mut events = Vec::new();
    let chunks: Vec<&[u32]> = ids.chunks(step).collect();
    for (i, c) in chunks.iter().enumerate() {
        let last = i + 1 == chunks.len();
        let mut body = json!({"model": "qwen3", "stream": true, "stream_state": state,
            "generate_chunk": {"request_id": "chatcmpl-fixed", "choices": [{"index": 0,
                "token_ids": c, "finish_reason": if last { json!(finish) } else { Value::Null }}]}});
        if i == 0 {
            body[field(path)] = original.clone();
            body["prompt_token_ids"] = json!([1, 2, 3]);
        }
        let out = ok(path, &body);
        events.extend(out["events"].as_array().unwrap().iter().cloned());
        state = out["stream_state"].clone();
        // A stop string ends the output early: the caller stops the engine there.
        let kind = events.last().map(|e| e["type"].clone()).unwrap_or_default();
        if ["message_stop", "response.completed", "response.incomplete"]
            .contains(&kind.as_str().unwrap_or_default())
        {
            break;
        }
    }
    events
}

/// A Messages stream folded as the Anthropic SDK folds it: blocks by index, deltas appended,
/// `partial_json` parsed at the block's stop; `message_delta` sets the stop reason and usage.
fn fold_messages(events: &[Value]) -> Value {
    assert_eq!(events[0]["type"], "message_start");
    assert_eq!(events.last().unwrap()["type"], "message_stop");
    let mut msg = events[0]["message"].clone();
    let mut blocks: Vec<Value> = Vec::new();
    let mut json_parts: Vec<String> = Vec::new();
    for e in &events[1..] {
        match e["type"].as_str().unwrap() {
            "content_block_start" => {
                assert_eq!(e["index"], blocks.len());
                blocks.push(e["content_block"].clone());
                json_parts.push(String::new());
            }
            "content_block_delta" => {
                let i = e["index"].as_u64().unwrap() as usize;
                assert_eq!(i + 1, blocks.len(), "deltas go to the open block");
                let d = &e["delta"];
                let b = &mut blocks[i];
                match d["type"].as_str().unwrap() {
                    "text_delta" => {
                        b["text"] = json!(format!(
                            "{}{}",
                            b["text"].as_str().unwrap(),
                            d["text"].as_str().unwrap()
                        ));
                    }
                    "thinking_delta" => {
                        b["thinking"] = json!(format!(
                            "{}{}",
                            b["thinking"].as_str().unwrap(),
                            d["thinking"].as_str().unwrap()
                        ));
                    }
                    "signature_delta" => b["signature"] = d["signature"].clone(),
                    "input_json_delta" => {
                        json_parts[i].push_str(d["partial_json"].as_str().unwrap())
                    }
                    other => panic!("unknown delta {other}"),
                }
            }
            "content_block_stop" => {
                let i = e["index"].as_u64().unwrap() as usize;
                if blocks[i]["type"] == "tool_use" {
                    blocks[i]["input"] = serde_json::from_str(&json_parts[i]).unwrap();
                }
            }
            "message_delta" => {
                msg["stop_reason"] = e["delta"]["stop_reason"].clone();
                msg["stop_sequence"] = e["delta"]["stop_sequence"].clone();
                msg["usage"] = e["usage"].clone();
            }
            "message_stop" => {}
            other => panic!("unknown event {other}"),
        }
    }
    msg["content"] = Value::Array(blocks);
    msg
}

/// Signatures are random (vLLM's are too): blanked before comparing.
fn without_signatures(mut msg: Value) -> Value {
    for b in msg["content"].as_array_mut().unwrap() {
        if b["type"] == "thinking" {
            assert_eq!(b["signature"].as_str().unwrap().len(), 32);
            b["signature"] = json!("");
        }
    }
    let m = msg.as_object_mut().unwrap();
    if m.get("stop_sequence") == Some(&Value::Null) {
        m.remove("stop_sequence");
    }
    msg
}

#[test]
fn messages_one_shot_has_thinking_text_and_tool_use_blocks() {
    let out = one_shot(MESSAGES, &messages_request(), &encode(OUTPUT), "stop");
    assert_eq!(out["id"], "chatcmpl-fixed");
    assert_eq!(out["type"], "message");
    assert_eq!(out["role"], "assistant");
    let c = &out["content"];
    assert_eq!(c[0]["type"], "thinking");
    assert_eq!(c[0]["thinking"], "Paris is in France.");
    assert_eq!(c[1], json!({"type": "text", "text": "Let me check. "}));
    assert_eq!(c[2]["type"], "tool_use");
    assert_eq!(c[2]["name"], "get_weather");
    assert_eq!(c[2]["input"], json!({"city": "Paris"}));
    assert!(c[2]["id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(out["stop_reason"], "tool_use");
    assert!(
        out.get("stop_sequence").is_none(),
        "null fields are left out"
    );
    let n = encode(OUTPUT).len();
    assert_eq!(out["usage"], json!({"input_tokens": 3, "output_tokens": n}));
}

#[test]
fn messages_stream_folds_to_the_one_shot_at_every_split() {
    let ids = encode(OUTPUT);
    let whole = without_signatures(one_shot(MESSAGES, &messages_request(), &ids, "stop"));
    for step in [1, 2, 3, 7, ids.len()] {
        let events = stream(MESSAGES, &messages_request(), &ids, step, "stop");
        let folded = without_signatures(fold_messages(&events));
        assert_eq!(folded, whole, "step {step}");
    }
}

#[test]
fn messages_stop_reasons() {
    let text = |t: &str| encode(t);
    let plain = messages_request();
    let out = one_shot(MESSAGES, &plain, &text("Hello there"), "length");
    assert_eq!(out["stop_reason"], "max_tokens");
    let out = one_shot(MESSAGES, &plain, &text("Hello<|im_end|>"), "stop");
    assert_eq!(out["stop_reason"], "end_turn");
    let mut with_stop = plain.clone();
    with_stop["stop_sequences"] = json!(["STOP"]);
    for events in [
        None,
        Some(stream(
            MESSAGES,
            &with_stop,
            &text("<think>a</think>Hello STOP more"),
            1,
            "length",
        )),
    ] {
        let out = match events {
            // The engine stopped at the stop string (vLLM's one-shot cuts only then).
            None => one_shot(
                MESSAGES,
                &with_stop,
                &text("<think>a</think>Hello STOP more"),
                "stop",
            ),
            Some(e) => fold_messages(&e),
        };
        assert_eq!(out["stop_reason"], "stop_sequence", "{out}");
        assert_eq!(out["stop_sequence"], "STOP");
        assert_eq!(out["content"][1]["text"], "Hello ");
    }
    // Nothing generated: one empty text block (the stream has none, as vLLM's).
    let out = one_shot(MESSAGES, &plain, &text("<|im_end|>"), "stop");
    assert_eq!(out["content"], json!([{"type": "text", "text": ""}]));
    // Thinking disabled (`enable_thinking: false`): qwen3's parser is all content, the tags
    // stay text.
    let mut off = plain.clone();
    off["thinking"] = json!({"type": "disabled"});
    let out = one_shot(MESSAGES, &off, &text("<think>x</think>y"), "stop");
    assert_eq!(
        out["content"],
        json!([{"type": "text", "text": "<think>x</think>y"}])
    );
}

/// A Responses stream folded as the OpenAI SDK folds it: items as added, deltas appended;
/// each `.done` event must repeat what the deltas built, and the last event's response
/// holds the same items.
fn fold_responses(events: &[Value]) -> Value {
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["sequence_number"], i, "{e}");
    }
    assert_eq!(events[0]["type"], "response.created");
    assert_eq!(events[1]["type"], "response.in_progress");
    let mut output: Vec<Value> = Vec::new();
    let mut text = String::new();
    for e in &events[2..events.len() - 1] {
        let kind = e["type"].as_str().unwrap();
        if kind != "response.output_item.added" {
            assert_eq!(e["output_index"], output.len() - 1, "{e}");
            assert_eq!(
                e["item_id"].as_str().or(e["item"]["id"].as_str()),
                output.last().unwrap()["id"].as_str()
            );
        }
        match kind {
            "response.output_item.added" => {
                assert_eq!(e["output_index"], output.len());
                output.push(e["item"].clone());
                text.clear();
            }
            "response.content_part.added" => {}
            "response.reasoning_text.delta"
            | "response.output_text.delta"
            | "response.function_call_arguments.delta" => {
                text.push_str(e["delta"].as_str().unwrap())
            }
            "response.reasoning_text.done" | "response.output_text.done" => {
                assert_eq!(e["text"], text)
            }
            "response.function_call_arguments.done" => assert_eq!(e["arguments"], text),
            "response.content_part.done" => assert_eq!(e["part"]["text"], text),
            "response.output_item.done" => *output.last_mut().unwrap() = e["item"].clone(),
            other => panic!("unknown event {other}"),
        }
    }
    let last = events.last().unwrap();
    assert!(matches!(
        last["type"].as_str(),
        Some("response.completed" | "response.incomplete")
    ));
    assert_eq!(last["response"]["output"], Value::Array(output));
    last["response"].clone()
}

/// The fields a stream and a one-shot share (times differ; vLLM's one-shot reasoning item
/// has a null status where the stream's is `completed`).
fn comparable(mut r: Value) -> Value {
    r["created_at"] = json!(0);
    for item in r["output"].as_array_mut().unwrap() {
        if item["type"] == "reasoning" {
            item["status"] = Value::Null;
        }
    }
    r
}

#[test]
fn responses_one_shot_items_usage_and_echo() {
    let ids = encode(OUTPUT);
    let out = one_shot(RESPONSES, &responses_request(), &ids, "stop");
    assert_eq!(out["id"], "resp_fixed");
    assert_eq!(out["object"], "response");
    assert_eq!(out["status"], "completed");
    assert_eq!(out["instructions"], "Be brief.");
    assert_eq!(out["tool_choice"], "auto");
    assert_eq!(out["max_output_tokens"], 200);
    // vLLM's `from_request` echoes the sampling parameters: the fixture's
    // generation_config.json defaults, and top_p 1.0 under greedy sampling (as vLLM's own
    // /v1/responses answered for the same model, scripts/front_vs_vllm.py).
    assert_eq!(
        (&out["temperature"], &out["top_p"]),
        (&json!(0.6), &json!(0.95))
    );
    let mut greedy = responses_request();
    greedy["temperature"] = json!(0);
    let g = one_shot(RESPONSES, &greedy, &ids, "stop");
    assert_eq!((&g["temperature"], &g["top_p"]), (&json!(0.0), &json!(1.0)));
    let o = &out["output"];
    assert_eq!(o[0]["type"], "reasoning");
    assert_eq!(
        o[0]["content"][0],
        json!({"text": "Paris is in France.", "type": "reasoning_text"})
    );
    assert!(o[0]["id"].as_str().unwrap().starts_with("rs_"));
    assert_eq!(o[1]["type"], "message");
    assert_eq!(o[1]["content"][0]["text"], "Let me check. ");
    assert!(o[1]["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(o[2]["type"], "function_call");
    assert_eq!(o[2]["name"], "get_weather");
    assert_eq!(o[2]["arguments"], "{\"city\": \"Paris\"}");
    assert!(o[2]["call_id"].as_str().unwrap().starts_with("call_"));
    let u = &out["usage"];
    assert_eq!(u["input_tokens"], 3);
    assert_eq!(u["output_tokens"], ids.len());
    assert_eq!(u["total_tokens"], ids.len() + 3);
    // The tokens between <think> and </think>.
    let reasoning = encode("Paris is in France.").len();
    assert_eq!(u["output_tokens_details"]["reasoning_tokens"], reasoning);
    let keys: Vec<&str> = out
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        &keys[..8],
        [
            "id",
            "created_at",
            "incomplete_details",
            "instructions",
            "metadata",
            "model",
            "object",
            "output"
        ]
    );
}

#[test]
fn responses_stream_folds_to_the_one_shot_at_every_split() {
    let ids = encode(OUTPUT);
    let whole = comparable(one_shot(RESPONSES, &responses_request(), &ids, "stop"));
    for step in [1, 2, 5, ids.len()] {
        let events = stream(RESPONSES, &responses_request(), &ids, step, "stop");
        assert_eq!(comparable(fold_responses(&events)), whole, "step {step}");
    }
}

#[test]
fn responses_length_is_incomplete() {
    let ids = encode("<think>a</think>Hello there");
    let out = one_shot(RESPONSES, &responses_request(), &ids, "length");
    assert_eq!(out["status"], "incomplete");
    assert_eq!(
        out["incomplete_details"],
        json!({"reason": "max_output_tokens"})
    );
    assert_eq!(out["output"][1]["status"], "incomplete", "{out}");
    let events = stream(RESPONSES, &responses_request(), &ids, 1, "length");
    assert_eq!(events.last().unwrap()["type"], "response.incomplete");
    assert_eq!(comparable(fold_responses(&events)), comparable(out));
}

#[test]
fn refusals_name_their_field() {
    let ids = encode("Hi");
    // Two choices: neither API has `n`.
    let body = json!({"model": "qwen3", "messages_request": messages_request(),
        "generate_response": {"choices": [{"index": 0, "token_ids": ids}, {"index": 1, "token_ids": ids}]}});
    assert_error(
        &post(MESSAGES, &body),
        400,
        "one choice",
        Some("generate_response.choices"),
    );
    // A malformed original request: its own validation, under its field.
    let mut bad = messages_request();
    bad["thinking"] = json!({"type": "enabled"});
    let body = json!({"model": "qwen3", "messages_request": bad,
        "generate_response": {"choices": [{"index": 0, "token_ids": ids}]}});
    assert_error(
        &post(MESSAGES, &body),
        400,
        "budget_tokens",
        Some("messages_request.thinking.budget_tokens"),
    );
    let mut bad = responses_request();
    bad["previous_response_id"] = json!("resp_1");
    let body = json!({"model": "qwen3", "responses_request": bad,
        "generate_response": {"choices": [{"index": 0, "token_ids": ids}]}});
    assert_error(
        &post(RESPONSES, &body),
        400,
        "previous_response_id",
        Some("responses_request.previous_response_id"),
    );
}

#[test]
fn a_stream_state_is_taken_back_only_by_its_route() {
    let first = |path: &str, original: Option<(&str, Value)>| {
        let mut body = json!({"model": "qwen3", "stream": true,
            "generate_chunk": {"choices": [{"index": 0, "token_ids": encode("Hi")}]}});
        if let Some((k, v)) = original {
            body[k] = v;
        }
        ok(path, &body)["stream_state"].clone()
    };
    let next = |state: &Value| {
        json!({"model": "qwen3", "stream": true, "stream_state": state,
            "generate_chunk": {"choices": [{"index": 0, "token_ids": encode(" there")}]}})
    };
    let chat = first("/v1/chat/completions/derender", None);
    let msgs = first(MESSAGES, Some(("messages_request", messages_request())));
    let resp = first(RESPONSES, Some(("responses_request", responses_request())));
    assert_error(
        &post(MESSAGES, &next(&chat)),
        400,
        "not a messages one",
        Some("stream_state"),
    );
    assert_error(
        &post(RESPONSES, &next(&msgs)),
        400,
        "messages derender stream",
        Some("stream_state"),
    );
    assert_error(
        &post("/v1/chat/completions/derender", &next(&resp)),
        400,
        "responses derender stream",
        Some("stream_state"),
    );
    // vLLM's fields alone (a typed client dropped the signed one): refused, never reset.
    let mut fields: Map<String, Value> = msgs.as_object().unwrap().clone();
    fields.remove("llm_render_state");
    assert_error(
        &post(MESSAGES, &next(&Value::Object(fields))),
        400,
        "signed state",
        Some("stream_state"),
    );
    // And its own route takes it.
    assert_eq!(post(MESSAGES, &next(&msgs)).0, 200);
}
