//! The sidecar's front door (`serve --engine URL`) end to end: a real llm-render server on
//! loopback in front of a scripted engine (`common/engine.rs`) in the recorded vLLM shapes
//! and SGLang's: chat, completions, Messages and Responses, streamed and not, `n = 2`,
//! usage, stop strings and the abort they send, tool calls, reasoning, logprobs,
//! `return_token_ids`, `kv_transfer_params`. Failures: `sidecar_failures.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::engine::{choice, events, interleaved, Script};
use common::sidecar::*;
use llm_render::server::ServerConfig;
use serde_json::{json, Value};
use std::time::Duration;

#[test]
fn chat_streams_the_engine_output_as_openai_chunks() {
    let (engine, base) = setup(Script {
        events: events(&ids(TEXT), 3, "length"),
        ..Script::default()
    });
    let (status, headers, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stream": true})),
    );
    assert_eq!(status, 200, "{body}");
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let chunks = sse(&body);
    assert_eq!(chunks.last().unwrap(), "[DONE]");
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(chunks[0]["object"], "chat.completion.chunk");
    assert_eq!(chunks[0]["model"], "qwen3");
    assert!(chunks[0]["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert_eq!(streamed_text(&chunks, 0, "content"), TEXT);
    assert_eq!(finish_of(&chunks, 0), "length");
    assert!(chunks
        .iter()
        .all(|c| c.get("usage").is_none_or(Value::is_null)));
    // The engine got the render's request, under its own model name, streamed, without the
    // stop strings (applied here).
    let sent = &engine.generates()[0];
    let render = post(&base, "/v1/chat/completions/render", &chat(json!({})));
    let rendered: Value = serde_json::from_str(&render.2).unwrap();
    assert_eq!(sent["token_ids"], rendered["token_ids"]);
    assert_eq!(sent["model"], "tiny-qwen3");
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["sampling_params"]["max_tokens"], 32);
    assert_eq!(sent["sampling_params"]["output_kind"], 1);
}

#[test]
fn a_whole_chat_answer_is_the_one_shot_derender_of_the_events() {
    let (_engine, base) = setup(Script {
        events: events(&ids(TEXT), 4, "stop"),
        ..Script::default()
    });
    let (status, _, body) = post(&base, "/v1/chat/completions", &chat(json!({})));
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["choices"][0]["message"]["content"], TEXT);
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    let n = ids(TEXT).len() as u64;
    assert_eq!(v["usage"]["completion_tokens"], n);
    assert!(v["usage"]["prompt_tokens"].as_u64().unwrap() > 3);
}

#[test]
fn two_choices_interleaved_stream_and_whole() {
    let (a, b) = (ids("alpha beta gamma"), ids("one two three four"));
    let evs = interleaved(&a, &b);
    let (_engine, base) = setup(Script {
        events: evs,
        ..Script::default()
    });
    let req = chat(json!({"n": 2, "stream": true,
        "stream_options": {"include_usage": true, "continuous_usage_stats": true}}));
    let (status, _, body) = post(&base, "/v1/chat/completions", &req);
    assert_eq!(status, 200, "{body}");
    let chunks = sse(&body);
    assert_eq!(streamed_text(&chunks, 0, "content"), "alpha beta gamma");
    assert_eq!(streamed_text(&chunks, 1, "content"), "one two three four");
    assert_eq!(finish_of(&chunks, 0), "stop");
    assert_eq!(finish_of(&chunks, 1), "length");
    // continuous usage on every chunk, then a usage-only chunk before [DONE].
    let last = &chunks[chunks.len() - 2];
    assert_eq!(last["choices"], json!([]));
    let total = (a.len() + b.len()) as u64;
    assert_eq!(last["usage"]["completion_tokens"], total);
    assert!(chunks[..chunks.len() - 2]
        .iter()
        .all(|c| c["usage"]["prompt_tokens"].as_u64().is_some()));
    // Each chunk's continuous usage is its own choice's, as vLLM's (`num_output_tokens` of
    // that choice's processor): choice 1's last chunk counts its own tokens only.
    for (index, n) in [(0, a.len()), (1, b.len())] {
        let own = chunks[..chunks.len() - 2]
            .iter()
            .filter(|c| c["choices"][0]["index"] == index)
            .map(|c| c["usage"]["completion_tokens"].as_u64().unwrap())
            .max();
        assert_eq!(own, Some(n as u64), "choice {index}");
    }

    let (status, _, body) = post(&base, "/v1/chat/completions", &chat(json!({"n": 2})));
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "alpha beta gamma");
    assert_eq!(v["choices"][1]["message"]["content"], "one two three four");
    assert_eq!(v["usage"]["completion_tokens"], total);
}

#[test]
fn a_stop_string_ends_the_answer_and_aborts_the_engine() {
    let text = "Hello there. STOP and then a great deal more text that should never be read";
    for stream in [true, false] {
        let (engine, base) = setup(Script {
            events: events(&ids(text), 2, "length"),
            gap: Duration::from_millis(5),
            ..Script::default()
        });
        let req = chat(json!({"stream": stream, "stop": ["STOP"]}));
        let (status, _, body) = post(&base, "/v1/chat/completions", &req);
        assert_eq!(status, 200, "{body}");
        let (content, finish, stop_reason) = if stream {
            let chunks = sse(&body);
            let reason = chunks
                .iter()
                .map(|c| c["choices"][0]["stop_reason"].clone())
                .find(|r| !r.is_null())
                .unwrap_or(Value::Null);
            (
                streamed_text(&chunks, 0, "content"),
                finish_of(&chunks, 0),
                reason,
            )
        } else {
            let v: Value = serde_json::from_str(&body).unwrap();
            let c = &v["choices"][0];
            (
                c["message"]["content"].as_str().unwrap().to_string(),
                c["finish_reason"].clone(),
                c["stop_reason"].clone(),
            )
        };
        assert_eq!(content, "Hello there. ", "stream: {stream}");
        assert_eq!(finish, "stop");
        assert_eq!(stop_reason, "STOP");
        let id = engine.generates()[0]["request_id"]
            .as_str()
            .unwrap()
            .to_string();
        wait_aborts(&engine, 1);
        let aborts = engine.aborts();
        assert_eq!(aborts.len(), 1, "stream: {stream}");
        assert_eq!(
            aborts[0].0,
            json!({"request_ids": [format!("generate-tokens-{id}")]})
        );
        assert_eq!(engine.generates()[0]["sampling_params"]["stop"], json!([]));
    }
}

#[test]
fn a_hermes_tool_call_becomes_tool_calls() {
    let text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    let tools = json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
    let (_engine, base) = setup(Script {
        events: events(&ids(text), 3, "stop"),
        ..Script::default()
    });
    let (status, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"tools": tools})),
    );
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let call = &v["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "get_weather");
    let args: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"city": "Paris"}));
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");

    let req = chat(json!({"tools": tools, "stream": true}));
    let (_, _, body) = post(&base, "/v1/chat/completions", &req);
    let chunks = sse(&body);
    let (name, args) = streamed_call(&chunks);
    assert_eq!(name, "get_weather");
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap(),
        json!({"city": "Paris"})
    );
    assert_eq!(finish_of(&chunks, 0), "tool_calls");
}

#[test]
fn reasoning_is_split_from_content() {
    let text = "<think>Let me think.</think>The answer is 4.";
    let (_engine, base) = setup_with(
        Script {
            events: events(&ids(text), 2, "stop"),
            ..Script::default()
        },
        "vllm",
        "qwen3",
    );
    let (_, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stream": true})),
    );
    let chunks = sse(&body);
    assert_eq!(
        streamed_text(&chunks, 0, "reasoning_content"),
        "Let me think."
    );
    assert_eq!(streamed_text(&chunks, 0, "content"), "The answer is 4.");
}

/// vLLM 0.33's chat serving reports `usage.completion_tokens_details.reasoning_tokens` whenever
/// a reasoning parser is in force (its parser's `count_reasoning_tokens`): the whole answer's
/// summed over its choices, the stream's last usage summed, and each chunk's, under
/// `continuous_usage_stats`, its choice's count so far. Without a reasoning parser: absent.
#[test]
fn reasoning_tokens_are_counted_in_usage() {
    let thought = "Let me think.";
    let a = ids(&format!("<think>{thought}</think>The answer is 4."));
    // qwen3's output starts in reasoning: a choice that never closes it is all reasoning.
    let b = ids("No tags, still thinking");
    let (ra, rb) = (ids(thought).len() as u64, b.len() as u64);
    assert!(ra > 0 && rb > 0);
    let evs = interleaved(&a, &b);
    let script = || Script {
        events: evs.clone(),
        ..Script::default()
    };
    let details = |u: &Value| u["completion_tokens_details"]["reasoning_tokens"].as_u64();
    let (_engine, base) = setup_with(script(), "vllm", "qwen3");

    // n = 2, streamed, with continuous usage: each chunk carries its choice's count so far.
    let req = chat(json!({"n": 2, "stream": true,
        "stream_options": {"include_usage": true, "continuous_usage_stats": true}}));
    let (status, _, body) = post(&base, "/v1/chat/completions", &req);
    assert_eq!(status, 200, "{body}");
    let chunks = sse(&body);
    let last = &chunks[chunks.len() - 2];
    assert_eq!(last["choices"], json!([]));
    assert_eq!(details(&last["usage"]), Some(ra + rb), "{last}");
    for index in [0, 1] {
        let counts: Vec<u64> = chunks[..chunks.len() - 2]
            .iter()
            .filter(|c| c["choices"][0]["index"] == index)
            .map(|c| details(&c["usage"]).unwrap())
            .collect();
        assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
        let want = if index == 0 { ra } else { rb };
        assert_eq!(counts.last(), Some(&want), "choice {index}: {counts:?}");
    }

    // One choice, streamed with the last usage only: the same count as the whole answer's.
    let (_one, one) = setup_with(
        Script {
            events: events(&a, 2, "stop"),
            ..Script::default()
        },
        "vllm",
        "qwen3",
    );
    let req = chat(json!({"stream": true, "stream_options": {"include_usage": true}}));
    let (_, _, body) = post(&one, "/v1/chat/completions", &req);
    let chunks = sse(&body);
    let last = &chunks[chunks.len() - 2];
    assert_eq!(details(&last["usage"]), Some(ra), "{last}");
    assert!(chunks[..chunks.len() - 2]
        .iter()
        .all(|c| c.get("usage").is_none_or(Value::is_null)));
    let (_, _, body) = post(&one, "/v1/chat/completions", &chat(json!({})));
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(details(&v["usage"]), Some(ra), "{v}");

    // n = 2 whole: summed over the choices.
    let (status, _, body) = post(&base, "/v1/chat/completions", &chat(json!({"n": 2})));
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["choices"][0]["message"]["reasoning_content"], thought);
    assert_eq!(details(&v["usage"]), Some(ra + rb), "{v}");

    // No reasoning parser: no details, streamed or whole.
    let (_engine, base) = setup_with(script(), "vllm", "none");
    let req = chat(json!({"n": 2, "stream": true,
        "stream_options": {"include_usage": true, "continuous_usage_stats": true}}));
    let (_, _, body) = post(&base, "/v1/chat/completions", &req);
    let chunks = sse(&body);
    assert!(chunks
        .iter()
        .all(|c| c["usage"].get("completion_tokens_details").is_none()));
    let (_, _, body) = post(&base, "/v1/chat/completions", &chat(json!({"n": 2})));
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(v["usage"].get("completion_tokens_details").is_none(), "{v}");
    assert!(v["usage"]["completion_tokens"].as_u64().is_some());
}

#[test]
fn completions_stream_and_whole_with_logprobs_and_token_ids() {
    let out = ids(" a b c d");
    let mut evs = Vec::new();
    for (i, t) in out.iter().enumerate() {
        let f = (i + 1 == out.len()).then_some("length");
        let mut c = choice(0, &[*t], f);
        c["logprobs"] = json!({"content": [{"token_id": t, "logprob": -0.5, "rank": 1,
            "top_logprobs": [{"token_id": t, "logprob": -0.5, "rank": 1}]}]});
        evs.push(json!([c]));
    }
    let (engine, base) = setup(Script {
        events: evs,
        ..Script::default()
    });
    let req = json!({"model": "qwen3", "prompt": "Count:", "max_tokens": 8, "logprobs": 1,
                     "return_token_ids": true});
    let (status, _, body) = post(&base, "/v1/completions", &req);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["object"], "text_completion");
    assert_eq!(v["choices"][0]["text"], " a b c d");
    assert_eq!(
        v["choices"][0]["logprobs"]["tokens"]
            .as_array()
            .unwrap()
            .len(),
        out.len()
    );
    assert_eq!(v["choices"][0]["token_ids"], json!(out));
    assert_eq!(v["prompt_token_ids"], engine.generates()[0]["token_ids"]);

    let mut req = req;
    req["stream"] = true.into();
    let (_, _, body) = post(&base, "/v1/completions", &req);
    let chunks = sse(&body);
    assert_eq!(streamed_text(&chunks, 0, "text"), " a b c d");
    assert_eq!(
        chunks[0]["prompt_token_ids"],
        engine.generates()[0]["token_ids"]
    );
    assert_eq!(chunks[0]["object"], "text_completion");
}

#[test]
fn kv_transfer_params_pass_both_ways() {
    let (engine, base) = setup(Script {
        events: events(&ids("ok"), 4, "length"),
        ..Script::default()
    });
    let kv = json!({"do_remote_decode": true, "remote_host": "10.0.0.1"});
    let (status, _, _) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"kv_transfer_params": kv})),
    );
    assert_eq!(status, 200);
    assert_eq!(engine.generates()[0]["kv_transfer_params"], kv);
}

#[test]
fn sglang_cumulative_output_ids_stream_and_abort_by_rid() {
    let text = "Hello there. STOP and then more text";
    let (engine, base) = setup_with(
        Script {
            events: events(&ids(text), 2, "length"),
            sglang: true,
            ..Script::default()
        },
        "sglang",
        "none",
    );
    let (status, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stream": true, "stream_options": {"include_usage": true}})),
    );
    assert_eq!(status, 200, "{body}");
    let events = sse(&body);
    assert_eq!(streamed_text(&events, 0, "content"), text);
    // SGLang's `meta_info.cached_tokens`, as vLLM's server reports cached prompt tokens.
    let usage = events.iter().rev().find_map(|e| e.get("usage")).unwrap();
    assert_eq!(
        usage["prompt_tokens_details"]["cached_tokens"], 2,
        "{usage}"
    );
    let sent = &engine.generates()[0];
    assert!(sent["input_ids"].is_array());
    assert_eq!(sent["sampling_params"]["max_new_tokens"], 32);
    let (_, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"stop": "STOP"})),
    );
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "Hello there. ");
    assert_eq!(v["usage"]["prompt_tokens_details"]["cached_tokens"], 2);
    wait_aborts(&engine, 1);
    let rid = engine.generates()[1]["rid"].clone();
    assert_eq!(engine.aborts()[0].0, json!({"rid": rid}));
}

#[test]
fn sglang_two_choices_by_index_and_its_sampling_names() {
    let (a, b) = (ids("red green blue"), ids("cat dog"));
    let evs = interleaved(&a, &b);
    let (engine, base) = setup_with(
        Script {
            events: evs,
            sglang: true,
            ..Script::default()
        },
        "sglang",
        "none",
    );
    let req = chat(json!({"n": 2, "seed": 5, "min_tokens": 1, "logprobs": true,
                          "top_logprobs": 2, "stream": true}));
    let (status, _, body) = post(&base, "/v1/chat/completions", &req);
    assert_eq!(status, 200, "{body}");
    let chunks = sse(&body);
    assert_eq!(streamed_text(&chunks, 0, "content"), "red green blue");
    assert_eq!(streamed_text(&chunks, 1, "content"), "cat dog");
    assert_eq!(finish_of(&chunks, 1), "length");
    let sent = &engine.generates()[0];
    let sp = &sent["sampling_params"];
    assert_eq!(sp["n"], 2);
    assert_eq!(sp["sampling_seed"], 5);
    assert_eq!(sp["min_new_tokens"], 1);
    assert_eq!(sent["return_logprob"], true);
    assert_eq!(sent["top_logprobs_num"], 2);
    assert!(sp.get("stop").is_none(), "stop strings stay here");

    let mut req = req;
    req["stream"] = false.into();
    let (status, _, body) = post(&base, "/v1/chat/completions", &req);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "red green blue");
    assert_eq!(v["choices"][1]["message"]["content"], "cat dog");
}

#[test]
fn without_an_engine_the_front_door_is_a_clear_404() {
    let base = common::start_server(registry(), ServerConfig::default());
    let (status, _, body) = post(&base, "/v1/chat/completions", &chat(json!({})));
    assert_eq!(status, 404);
    assert!(body.contains("--engine"), "{body}");
}

#[test]
fn under_min_tokens_a_stop_string_counts_only_after_them() {
    let head = "One STOP two";
    let text = format!("{head} STOP three and more");
    let (_engine, base) = setup(Script {
        events: events(&ids(&text), 3, "length"),
        ..Script::default()
    });
    let min = ids(head).len();
    let req = chat(json!({"stop": ["STOP"], "min_tokens": min}));
    let (status, _, body) = post(&base, "/v1/chat/completions", &req);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "One STOP two ");
    assert_eq!(v["choices"][0]["stop_reason"], "STOP");
}

#[test]
fn a_bad_request_is_refused_before_the_engine() {
    let (engine, base) = setup(Script::default());
    let cases = [
        (
            "/v1/chat/completions",
            json!({"model": "qwen3"}),
            "messages",
        ),
        (
            "/v1/completions",
            json!({"model": "qwen3", "prompt": ["a", "b"]}),
            "prompt",
        ),
        (
            "/v1/completions",
            json!({"model": "qwen3", "prompt": "a", "echo": "yes"}),
            "echo",
        ),
        (
            "/v1/messages",
            json!({"model": "qwen3", "max_tokens": 8, "messages": "hi"}),
            "messages",
        ),
        (
            "/v1/responses",
            json!({"model": "qwen3", "input": 5}),
            "input",
        ),
    ];
    for (path, req, param) in cases {
        let (status, _, body) = post(&base, path, &req);
        assert_eq!(status, 400, "{path}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        let got = v["error"]["param"].as_str().unwrap_or("");
        assert!(got.starts_with(param), "{path}: {body}");
    }
    assert!(engine.generates().is_empty());
}

/// A Messages or Responses stream's `event:` / `data:` pairs.
fn named_events(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let mut lines = e.lines();
            let kind = lines
                .next()
                .unwrap()
                .strip_prefix("event: ")
                .unwrap()
                .to_string();
            let data = lines.next().unwrap().strip_prefix("data: ").unwrap();
            (kind, serde_json::from_str(data).unwrap())
        })
        .collect()
}

#[test]
fn messages_front_door_streams_anthropic_events_and_answers_a_message() {
    let text = "Hello there. STOP never seen";
    let (engine, base) = setup(Script {
        events: events(&ids(text), 2, "length"),
        ..Script::default()
    });
    let req = json!({"model": "qwen3", "max_tokens": 32, "stop_sequences": ["STOP"],
                     "messages": [{"role": "user", "content": "Hi"}]});
    let (status, _, body) = post(&base, "/v1/messages", &req);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["type"], "message");
    assert_eq!(v["content"][0]["text"], "Hello there. ");
    assert_eq!(v["stop_reason"], "stop_sequence");
    assert_eq!(v["stop_sequence"], "STOP");
    assert_eq!(wait_aborts(&engine, 1), 1);

    let mut req = req;
    req["stream"] = true.into();
    let (status, headers, body) = post(&base, "/v1/messages", &req);
    assert_eq!(status, 200, "{body}");
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let evs = named_events(&body);
    assert_eq!(evs[0].0, "message_start");
    assert_eq!(evs.last().unwrap().0, "message_stop");
    let streamed: String = evs
        .iter()
        .filter(|(k, _)| k == "content_block_delta")
        .map(|(_, d)| d["delta"]["text"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(streamed, "Hello there. ");
    assert!(!body.contains("[DONE]"));
}

#[test]
fn responses_front_door_streams_response_events_and_answers_a_response() {
    let (_engine, base) = setup(Script {
        events: events(&ids(TEXT), 3, "stop"),
        ..Script::default()
    });
    let req = json!({"model": "qwen3", "input": "Hi", "max_output_tokens": 32});
    let (status, _, body) = post(&base, "/v1/responses", &req);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["object"], "response");
    assert_eq!(v["status"], "completed");
    assert_eq!(v["output"][0]["content"][0]["text"], TEXT);

    let mut req = req;
    req["stream"] = true.into();
    let (status, _, body) = post(&base, "/v1/responses", &req);
    assert_eq!(status, 200, "{body}");
    let evs = named_events(&body);
    assert_eq!(evs[0].0, "response.created");
    assert_eq!(evs.last().unwrap().0, "response.completed");
    let streamed: String = evs
        .iter()
        .filter(|(k, _)| k == "response.output_text.delta")
        .map(|(_, d)| d["delta"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(streamed, TEXT);
}

/// Turn 2 through the front door on turn 1's exact tokens: the client passes back the
/// `prompt_token_ids` and `token_ids` that `return_token_ids` gave it as `continue_from`,
/// and the engine gets a prompt that starts with them (**ext**, `docs/api.md`).
#[test]
fn continue_from_sends_the_engine_turn_one_exactly() {
    // One token per character: IDs the text alone would not give back.
    let sampled: Vec<u32> = TEXT.chars().flat_map(|c| ids(&c.to_string())).collect();
    let (engine, base) = setup(Script {
        events: events(&sampled, 5, "length"),
        ..Script::default()
    });
    let (status, _, body) = post(
        &base,
        "/v1/chat/completions",
        &chat(json!({"return_token_ids": true})),
    );
    assert_eq!(status, 200, "{body}");
    let turn1: Value = serde_json::from_str(&body).unwrap();
    let reply = turn1["choices"][0]["message"]["content"].clone();
    assert_eq!(reply, TEXT);
    let messages = json!([
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "Again?"},
    ]);
    let from = json!({"prompt_token_ids": turn1["prompt_token_ids"],
                      "output_token_ids": turn1["choices"][0]["token_ids"]});
    let mut held: Vec<Value> = turn1["prompt_token_ids"].as_array().unwrap().clone();
    held.extend(
        turn1["choices"][0]["token_ids"]
            .as_array()
            .unwrap()
            .iter()
            .cloned(),
    );
    held.push(json!(ids("<|im_end|>")[0]));
    for stream in [false, true] {
        let (status, _, body) = post(
            &base,
            "/v1/chat/completions",
            &chat(json!({"messages": messages, "continue_from": from, "stream": stream})),
        );
        assert_eq!(status, 200, "{body}");
        let continuation = if stream {
            sse(&body)[0]["continuation"].clone()
        } else {
            serde_json::from_str::<Value>(&body).unwrap()["continuation"].clone()
        };
        assert_eq!(continuation["applied"], true, "{body}");
        assert_eq!(continuation["end_of_turn_added"], true);
        let sent = engine.generates().last().unwrap()["token_ids"].clone();
        assert_eq!(sent.as_array().unwrap()[..held.len()], held[..]);
    }
}

/// The front door sends the engine the pixels whatever render-only payload choice the
/// request makes (`skip_pixel_values`, `mm_payload`, `return_mm_kwargs`), as vLLM's own
/// chat route ignores them: the engine cannot generate from source bytes or hashes alone.
#[test]
fn the_engine_always_gets_the_pixels() {
    use common::vision::{data_url, image_request, VL_NAME};
    let m = llm_render::model::Model::load_dir(
        VL_NAME,
        &common::fixtures().join("models/qwen2_5_vl"),
        &Default::default(),
    )
    .unwrap();
    let models = llm_render::model::ModelRegistry::new(vec![m]).unwrap();
    let script = Script {
        events: events(&[9707], 1, "stop"),
        ..Script::default()
    };
    let (engine, base) = setup_models(models, script, "vllm", "none", |_| {});
    let png = std::fs::read(common::image_goldens().join("tiny_14x14.png")).unwrap();
    let mut body = image_request(&[data_url("image/png", &png)]);
    body["max_tokens"] = 4.into();
    for (key, value) in [
        ("skip_pixel_values", json!(true)),
        ("mm_payload", json!("none")),
        ("return_mm_kwargs", json!(false)),
    ] {
        let mut req = body.clone();
        req[key] = value;
        let (status, _, text) = post(&base, "/v1/chat/completions", &req);
        assert_eq!(status, 200, "{key}: {text}");
        let sent = engine.generates().pop().unwrap();
        let features = &sent["features"];
        assert!(features["kwargs_data"]["image"][0].is_string(), "{key}");
        assert!(features.get("raw_images").is_none(), "{key}");
    }
}

/// The engine gets the output budget the client asked for, 16 included (#50): vLLM's render
/// leaves a `max_tokens` of 16 out (its struct default), and vLLM's generate route reads an
/// absent one as "up to the context". For 16, 17 and unset, through each API, the render
/// route writes the budget and the front door sends it to vLLM (`max_tokens`) and SGLang
/// (`max_new_tokens`).
#[test]
fn the_engine_gets_the_budget_the_client_asked_for() {
    let hi = json!([{"role": "user", "content": "Hi"}]);
    let apis = [
        (
            "/v1/chat/completions",
            "max_tokens",
            json!({"messages": hi}),
        ),
        (
            "/v1/chat/completions",
            "max_completion_tokens",
            json!({"messages": hi}),
        ),
        ("/v1/completions", "max_tokens", json!({"prompt": "Hi"})),
        ("/v1/messages", "max_tokens", json!({"messages": hi})),
        ("/v1/responses", "max_output_tokens", json!({"input": "Hi"})),
    ];
    for proto in ["vllm", "sglang"] {
        let (engine, base) = setup_with(
            Script {
                events: events(&ids("Hello"), 1, "length"),
                sglang: proto == "sglang",
                ..Script::default()
            },
            proto,
            "none",
        );
        for (path, field, body) in &apis {
            for asked in [Some(16), Some(17), None] {
                let mut body = body.clone();
                body["model"] = "qwen3".into();
                if let Some(n) = asked {
                    body[*field] = n.into();
                }
                let case = format!("{proto} {path} {field}={asked:?}");
                let (status, _, out) = post(&base, &format!("{path}/render"), &body);
                let (front, _, answer) = post(&base, path, &body);
                if *path == "/v1/messages" && asked.is_none() {
                    // Anthropic's `max_tokens` is required, as in vLLM's model.
                    assert_eq!((status, front), (400, 400), "{case}: {out} {answer}");
                    assert!(out.contains("max_tokens"), "{case}: {out}");
                    continue;
                }
                assert_eq!((status, front), (200, 200), "{case}: {out} {answer}");
                let out: Value = serde_json::from_str(&out).unwrap();
                let rendered = if out.is_array() { &out[0] } else { &out };
                let rendered = &rendered["sampling_params"]["max_tokens"];
                let sent = engine.generates().last().unwrap().clone();
                let sent = match proto {
                    "vllm" => &sent["sampling_params"]["max_tokens"],
                    _ => &sent["sampling_params"]["max_new_tokens"],
                }
                .clone();
                let want = match (asked, *path) {
                    (Some(n), _) => n,
                    // Completions default to 16, as vLLM's `CompletionRequest`.
                    (None, "/v1/completions") => 16,
                    // The room left in the context.
                    (None, _) => rendered.as_u64().unwrap(),
                };
                assert!(want >= 16, "{case}: {rendered}");
                assert_eq!(rendered, &json!(want), "{case}: render");
                assert_eq!(sent, json!(want), "{case}: sent to the engine");
            }
        }
    }
}

/// gpt-oss: the front door counts reasoning as vLLM 0.33's `HarmonyParser` does (the
/// `analysis` message's tokens; the golden `analysis_then_final` of
/// `fixtures/goldens/derender/harmony_counts.jsonl`: 12), whole and streamed.
#[test]
fn a_harmony_answer_counts_its_analysis_tokens() {
    let models = common::load_models(&["gpt_oss"], &Default::default());
    let model = models.get(Some("gpt_oss")).unwrap();
    let out = model
        .encode(
            "<|channel|>analysis<|message|>The user wants the capital of France. That is \
             Paris.<|end|><|start|>assistant<|channel|>final<|message|>Paris.<|return|>",
            false,
        )
        .unwrap();
    assert_eq!(out.len(), 24);
    let (_engine, base) = setup_models(
        models,
        Script {
            events: events(&out, 3, "stop"),
            ..Script::default()
        },
        "vllm",
        "auto",
        |_| {},
    );
    let req = json!({"model": "gpt_oss", "max_tokens": 64,
                     "messages": [{"role": "user", "content": "Capital of France?"}]});
    let (status, _, body) = post(&base, "/v1/chat/completions", &req);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "Paris.", "{v}");
    assert_eq!(
        v["usage"]["completion_tokens_details"]["reasoning_tokens"], 12,
        "{v}"
    );
    let mut req = req;
    req["stream"] = true.into();
    req["stream_options"] = json!({"include_usage": true});
    let (_, _, body) = post(&base, "/v1/chat/completions", &req);
    let chunks = sse(&body);
    let usage = &chunks[chunks.len() - 2]["usage"];
    assert_eq!(
        usage["completion_tokens_details"]["reasoning_tokens"], 12,
        "{usage}"
    );
}
