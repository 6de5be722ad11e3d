//! Tool-call parsing against vLLM 0.33's own derender (`fixtures/goldens/derender/
//! tool_parsers.jsonl`, made by `scripts/gen_tool_parser_goldens.py` with vLLM's render
//! server): the same token IDs, non-stream and streamed one token per request.
//!
//! vLLM's streamed and non-stream results agree on most cases; llm-render (one code path for
//! both) must then equal them exactly. Where vLLM's two paths disagree with each other, the
//! case is listed in [`VLLM_DISAGREES`] with the side llm-render takes and why.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{derender_server, fixtures, golden_registry, post_ok};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Which side llm-render matches where vLLM's stream and non-stream results differ.
enum Side {
    Stream,
    NonStream,
    /// Neither vLLM path is right; llm-render's result is given as (content, name, arguments).
    Own(&'static str, &'static str, &'static str),
}

/// (parser, case id, side, why)
const VLLM_DISAGREES: &[(&str, &str, Side, &str)] = &[
    (
        "hermes",
        "escaped",
        Side::Own(
            "",
            "write_file",
            r#"{"path": "/tmp/a.txt", "content": "say \"hi\"\n\tand </tool_call> too"}"#,
        ),
        "a `</tool_call>` inside a JSON string: vLLM's non-stream regex stops there and keeps \
         the whole output as content; its stream cuts the arguments short",
    ),
    (
        "hermes",
        "malformed",
        Side::NonStream,
        "a call that is not JSON stays content; vLLM's stream drops the text",
    ),
    (
        "hermes",
        "compact_json",
        Side::Stream,
        "arguments as the model wrote them; vLLM's non-stream re-serializes with json.dumps spacing",
    ),
    (
        "qwen3_coder",
        "typed",
        Side::Stream,
        "content before the call keeps its trailing newline; vLLM's non-stream strips it",
    ),
    (
        "hermes",
        "think_then_call",
        Side::Stream,
        "the blank line between `</think>` and the call is content, as vLLM streams it; its \
         non-stream drops the whitespace-only content",
    ),
    (
        "llama3_json",
        "arguments_key",
        Side::NonStream,
        "`arguments` given as `{}`; vLLM's stream loses them (empty string)",
    ),
    (
        "pythonic",
        "misplaced_separator",
        Side::NonStream,
        "`1__0` is not a Python literal, so the list stays content; vLLM's stream drops the text",
    ),
    (
        "pythonic",
        "leading_zero",
        Side::NonStream,
        "`007` is not a Python literal, so the list stays content; vLLM's stream drops the text",
    ),
    (
        "qwen3_coder",
        "repeated_parameter",
        Side::Own(
            "",
            "get_weather",
            r#"{"city": "Oslo", "days": 2, "city": "Bergen"}"#,
        ),
        "a parameter given twice: vLLM's non-stream keeps the last value in the first place, \
         its stream stops after the first value; ours streams both, which JSON readers take \
         as the last value, as the non-stream result has it",
    ),
];

fn server(parser: &str, reasoning: &str) -> String {
    derender_server(golden_registry(), parser, reasoning)
}

fn post(base: &str, body: &Value) -> Value {
    post_ok(&format!("{base}/v1/chat/completions/derender"), body)
}

/// `{"content", "reasoning", "calls": [{"name", "arguments"}]}`, the golden's shape.
fn result(content: &str, reasoning: &str, calls: Vec<(String, String)>) -> Value {
    let calls: Vec<Value> = calls
        .into_iter()
        .map(|(n, a)| json!({"name": n, "arguments": a}))
        .collect();
    json!({"content": content, "reasoning": reasoning, "calls": calls})
}

/// llm-render's (non-stream, streamed one token per request) results for a case.
fn derender(base: &str, case: &Value) -> (Value, Value) {
    let model = case["model"].as_str().unwrap();
    let chat = json!({"model": model, "messages": [{"role": "user", "content": "go"}], "tools": case["tools"]});
    let ids: Vec<u64> = case["token_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let prompt = &case["prompt_token_ids"];
    let out = post(
        base,
        &json!({"model": model, "stream": false, "prompt_token_ids": prompt, "chat_request": chat,
                "generate_response": {"choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}]}}),
    );
    let msg = &out["choices"][0]["message"];
    let calls = msg["tool_calls"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let f = &c["function"];
                    (
                        f["name"].as_str().unwrap().to_string(),
                        f["arguments"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let one_shot = result(
        msg["content"].as_str().unwrap_or(""),
        msg["reasoning_content"].as_str().unwrap_or(""),
        calls,
    );

    let (mut state, mut content, mut reasoning) = (Value::Null, String::new(), String::new());
    let mut calls = Vec::<(String, String)>::new();
    for (i, id) in ids.iter().enumerate() {
        let finish = if i + 1 == ids.len() {
            json!("stop")
        } else {
            Value::Null
        };
        let out = post(
            base,
            &json!({"model": model, "stream": true, "stream_state": state, "prompt_token_ids": prompt,
                    "chat_request": chat, "generate_chunk": {"choices": [{"index": 0, "token_ids": [id], "finish_reason": finish}]}}),
        );
        state = out["stream_state"].clone();
        for ch in out["chunk"]["choices"].as_array().unwrap() {
            let d = &ch["delta"];
            content.push_str(d["content"].as_str().unwrap_or(""));
            reasoning.push_str(d["reasoning_content"].as_str().unwrap_or(""));
            for tc in d["tool_calls"].as_array().into_iter().flatten() {
                let i = tc["index"].as_u64().unwrap() as usize;
                while calls.len() <= i {
                    calls.push(Default::default());
                }
                calls[i]
                    .0
                    .push_str(tc["function"]["name"].as_str().unwrap_or(""));
                calls[i]
                    .1
                    .push_str(tc["function"]["arguments"].as_str().unwrap_or(""));
            }
        }
    }
    (one_shot, result(&content, &reasoning, calls))
}

#[test]
fn tool_parsers_match_vllm() {
    let text =
        std::fs::read_to_string(fixtures().join("goldens/derender/tool_parsers.jsonl")).unwrap();
    let cases: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut servers: HashMap<String, String> = HashMap::new();
    let (mut agreed, mut listed) = (0, 0);
    for case in &cases {
        let parser = case["parser"].as_str().unwrap();
        let id = case["id"].as_str().unwrap();
        let reasoning = case["reasoning_parser"].as_str().unwrap();
        let base = servers
            .entry(format!("{parser}+{reasoning}"))
            .or_insert_with(|| server(parser, reasoning));
        let (one_shot, streamed) = derender(base, case);
        assert_eq!(
            one_shot, streamed,
            "{parser}/{id}: one-shot and stream differ"
        );
        let (vs, vn) = (&case["stream"], &case["nonstream"]);
        if vs == vn {
            assert_eq!(&one_shot, vs, "{parser}/{id}: differs from vLLM");
            agreed += 1;
            continue;
        }
        let Some((_, _, side, _)) = VLLM_DISAGREES
            .iter()
            .find(|(p, c, _, _)| *p == parser && *c == id)
        else {
            panic!("{parser}/{id}: vLLM's stream {vs} and non-stream {vn} differ; list the case");
        };
        let want = match side {
            Side::Stream => vs.clone(),
            Side::NonStream => vn.clone(),
            Side::Own(content, name, args) => {
                result(content, "", vec![(name.to_string(), args.to_string())])
            }
        };
        assert_eq!(one_shot, want, "{parser}/{id}");
        listed += 1;
    }
    assert_eq!(agreed + listed, cases.len());
    assert!(agreed >= 17, "{agreed} cases where vLLM agrees with itself");
    assert_eq!(listed, VLLM_DISAGREES.len());
}
