//! `--reasoning-parser hf` / `--tool-call-parser hf` end to end, on a server on loopback:
//! the qwen3 fixture with the Qwen3 `response_template` of the hf goldens
//! (`scripts/parser_cases/hf.json`) written into a copy of its `tokenizer_config.json`. The
//! render gives vLLM's `reasoning_ended`, keeps special tokens without spaces between them and
//! refuses what `ResponseTemplateParser.adjust_request` refuses; the derender, one shot and
//! streamed through the signed state, gives the golden's vLLM 0.32 result; the startup check
//! refuses what vLLM's does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::response_template::{load, parser_args};
use common::{assert_error, fixtures, post_json};
use llm_render::derender::StateCodec;
use llm_render::model::Model;
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};

/// The goldens the derender is checked against: reasoning, content and a call typed by the
/// schema; a prompt that ends inside a call's opener (written into the prompt's IDs after
/// the rendered turn, as a prefilled reply would be).
const CASES: [&str; 2] = ["qwen3_think_content_call", "qwen3_prompt_ends_in_opener"];

/// A golden record of the hf parser: its text, tools, template, prefix and vLLM's result.
fn case(id: &str) -> Value {
    let text =
        std::fs::read_to_string(fixtures().join("goldens/derender/parser_families.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|g| g["parser"] == "hf" && g["id"] == id)
        .expect("the golden case")
}

/// The first case: its template and tools are the server's.
fn golden() -> &'static Value {
    static G: OnceLock<Value> = OnceLock::new();
    G.get_or_init(|| case(CASES[0]))
}

fn model() -> &'static Model {
    static M: OnceLock<Model> = OnceLock::new();
    M.get_or_init(|| load("qwen3", &golden()["response_template"]))
}

/// A server with `--reasoning-parser hf --tool-call-parser hf`, as `serve` configures one.
fn server() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let loaded = load("qwen3", &golden()["response_template"]);
        common::response_template::server("hf", loaded, |derender| {
            // No cache: every chunk's state is read back from its signed string.
            derender.states = Arc::new(StateCodec::new(Some("test key"), 0));
        })
    })
}

fn post(path: &str, body: &Value) -> Value {
    let (status, out) = post_json(&format!("{}{path}", server()), body);
    assert_eq!(status, 200, "{out}");
    out
}

fn chat(extra: Value) -> Value {
    let mut req = json!({"model": "qwen3", "messages": [{"role": "user", "content": "weather in Paris?"}],
        "tools": golden()["tools"]});
    for (k, v) in extra.as_object().unwrap() {
        req[k] = v.clone();
    }
    req
}

fn render(req: &Value) -> Value {
    post("/v1/chat/completions/render", req)
}

#[test]
fn startup_checks_the_template_as_vllm() {
    let g = golden();
    // Qwen3's template has both fields: either flag, or both.
    for (r, t) in [("hf", "hf"), ("hf", "none"), ("none", "hf"), ("hf", "auto")] {
        parser_args(r, t).check_model(model()).unwrap();
    }
    assert!(parser_args("hf", "hermes").check().is_err());
    // No template, or one without the field a flag needs.
    let bare = load("bare", &Value::Null);
    let err = parser_args("hf", "none").check_model(&bare).unwrap_err();
    assert!(
        err.to_string()
            .contains("requires `response_template` metadata"),
        "{err}"
    );
    parser_args("auto", "none").check_model(&bare).unwrap();
    let mut no_thinking = g["response_template"].clone();
    no_thinking["fields"]
        .as_object_mut()
        .unwrap()
        .remove("thinking");
    let m = load("nothink", &no_thinking);
    let err = parser_args("hf", "none").check_model(&m).unwrap_err();
    assert!(
        err.to_string()
            .contains("--reasoning-parser hf requires a response_template with a thinking field"),
        "{err}"
    );
    parser_args("none", "hf").check_model(&m).unwrap();
}

#[test]
fn render_keeps_special_tokens_and_reads_the_prompt() {
    let out = render(&chat(json!({})));
    let sp = &out["sampling_params"];
    assert_eq!(sp["skip_special_tokens"], false, "{sp}");
    assert_eq!(sp["spaces_between_special_tokens"], false, "{sp}");
    // Thinking on: the prompt ends at the anchor, reasoning not yet over.
    assert_eq!(out["reasoning_ended"], false);
    assert!(out["reasoning_parser_kwargs"]["chat_template_kwargs"].is_object());
    // Thinking off: Qwen3's template closes an empty <think></think> in the prompt.
    let off = render(&chat(
        json!({"chat_template_kwargs": {"enable_thinking": false}}),
    ));
    assert_eq!(off["reasoning_ended"], true);
    // Without tools too (vLLM adjusts every request).
    let plain = render(&json!({"model": "qwen3", "messages": [{"role": "user", "content": "hi"}]}));
    assert_eq!(plain["sampling_params"]["skip_special_tokens"], false);
    assert_eq!(
        plain["sampling_params"]["spaces_between_special_tokens"],
        false
    );
}

#[test]
fn render_refuses_what_no_grammar_can_hold() {
    let url = format!("{}/v1/chat/completions/render", server());
    let refused = |extra: Value, param: &str, what: &str| {
        let got = post_json(&url, &chat(extra));
        assert_error(
            &got,
            400,
            &format!("response_template parsing cannot guarantee {what}"),
            Some(param),
        );
    };
    refused(
        json!({"tool_choice": "required"}),
        "tool_choice",
        "required tool choice",
    );
    refused(
        json!({"tool_choice": {"type": "function", "function": {"name": "now"}}}),
        "tool_choice",
        "named tool choice",
    );
    refused(
        json!({"parallel_tool_calls": false}),
        "parallel_tool_calls",
        "parallel_tool_calls=False",
    );
    // `none` asks for nothing.
    render(&chat(
        json!({"tool_choice": "none", "parallel_tool_calls": false}),
    ));
}

/// (reasoning, content, [(name, arguments)]).
type Folded = (String, String, Vec<(String, String)>);

fn expected(case: &Value) -> Folded {
    let g = &case["nonstream"];
    assert_eq!(g, &case["stream"]);
    (
        g["reasoning"].as_str().unwrap().into(),
        g["content"].as_str().unwrap().into(),
        g["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().into(),
                    c["arguments"].as_str().unwrap().into(),
                )
            })
            .collect(),
    )
}

/// A golden's output as token IDs, and the prompt's: a rendered turn, which ends at the
/// template's anchor, then the golden's prefix after that anchor.
fn ids(case: &Value) -> (Vec<u32>, Vec<u32>) {
    let text = case["text"].as_str().unwrap();
    let out = model().encode(text, false).unwrap();
    let mut prompt: Vec<u32> =
        serde_json::from_value(render(&chat(json!({})))["token_ids"].clone()).unwrap();
    let anchor = "<|im_start|>assistant\n";
    let prefix = case["prefix"].as_str().unwrap_or("");
    let after = prefix.strip_prefix(anchor).unwrap_or(prefix);
    prompt.extend(model().encode(after, false).unwrap());
    (out, prompt)
}

#[test]
fn one_shot_derender_equals_vllm() {
    for id in CASES {
        let case = case(id);
        let (out, prompt) = ids(&case);
        let body = post(
            "/v1/chat/completions/derender",
            &json!({"stream": false, "model": "qwen3", "prompt_token_ids": prompt,
            "generate_response": {"request_id": "chatcmpl-hf", "choices": [
                {"index": 0, "token_ids": out, "finish_reason": "stop"}]},
            "chat_request": chat(json!({}))}),
        );
        let m = &body["choices"][0]["message"];
        let calls = m["tool_calls"].as_array().into_iter().flatten();
        let got: Folded = (
            m["reasoning_content"].as_str().unwrap_or("").into(),
            m["content"].as_str().unwrap_or("").into(),
            calls
                .map(|t| {
                    (
                        t["function"]["name"].as_str().unwrap().into(),
                        t["function"]["arguments"].as_str().unwrap().into(),
                    )
                })
                .collect(),
        );
        assert_eq!(got, expected(&case), "{id}: {body}");
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    }
}

#[test]
fn streamed_derender_through_the_signed_state_equals_vllm() {
    for (id, size) in CASES.iter().flat_map(|id| [1, 2, 5].map(|size| (id, size))) {
        let case = case(id);
        let (out, prompt) = ids(&case);
        let mut state = Value::Null;
        let mut got: Folded = Default::default();
        let chunks: Vec<&[u32]> = out.chunks(size).collect();
        for (i, chunk) in chunks.iter().enumerate() {
            let last = i + 1 == chunks.len();
            // vLLM's rule: the prompt on every chunk (a named parser runs).
            let req = json!({"stream": true, "model": "qwen3", "stream_state": state,
                "prompt_token_ids": prompt,
                "generate_chunk": {"request_id": "chatcmpl-hf", "choices": [{"index": 0,
                    "token_ids": chunk, "finish_reason": if last { json!("stop") } else { Value::Null }}]},
                "chat_request": chat(json!({}))});
            let body = post("/v1/chat/completions/derender", &req);
            state = body["stream_state"].clone();
            let d = &body["chunk"]["choices"][0]["delta"];
            got.0 += d["reasoning_content"].as_str().unwrap_or("");
            got.1 += d["content"].as_str().unwrap_or("");
            for t in d["tool_calls"].as_array().into_iter().flatten() {
                let i = t["index"].as_u64().unwrap() as usize;
                if got.2.len() <= i {
                    got.2.resize(i + 1, Default::default());
                }
                if let Some(name) = t["function"]["name"].as_str() {
                    got.2[i].0 = name.into();
                }
                got.2[i].1 += t["function"]["arguments"].as_str().unwrap_or("");
            }
        }
        assert_eq!(got, expected(&case), "{id}, chunks of {size}");
    }
}

#[test]
fn without_tools_a_call_is_content_and_thinking_still_reasoning() {
    let (out, prompt) = ids(golden());
    let req = json!({"model": "qwen3", "messages": [{"role": "user", "content": "hi"}]});
    let body = post(
        "/v1/chat/completions/derender",
        &json!({"stream": false, "model": "qwen3", "prompt_token_ids": prompt,
            "generate_response": {"choices": [{"index": 0, "token_ids": out, "finish_reason": "stop"}]},
            "chat_request": req}),
    );
    let m = &body["choices"][0]["message"];
    assert_eq!(m["reasoning_content"], "\nweather?\n", "{body}");
    let content = m["content"].as_str().unwrap();
    assert!(
        content.starts_with("\n\nLet me check.\n<tool_call>"),
        "{content}"
    );
    assert!(content.ends_with("</tool_call>"), "{content}");
    assert!(
        m["tool_calls"].as_array().is_none_or(Vec::is_empty),
        "{body}"
    );
}

/// The golden's request as a Responses request (its tools in the Responses shape).
fn responses_request() -> Value {
    let tools: Vec<Value> = golden()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            json!({"type": "function", "name": t["function"]["name"],
                "parameters": t["function"]["parameters"]})
        })
        .collect();
    json!({"model": "qwen3", "input": "weather in Paris?", "tools": tools})
}

/// vLLM 0.33's `count_reasoning_tokens` under `hf` as the Responses derender reports it
/// (`usage.output_tokens_details.reasoning_tokens`), one shot and streamed through the
/// signed state in chunks of 1, 2 and 5 tokens: the golden's count from vLLM.
#[test]
fn responses_derender_counts_reasoning_tokens_as_vllm() {
    for id in CASES {
        let case = case(id);
        let expected = case["reasoning_tokens"].as_u64().unwrap();
        let (out, prompt) = ids(&case);
        let body = post(
            "/v1/responses/derender",
            &json!({"stream": false, "model": "qwen3", "prompt_token_ids": prompt,
            "generate_response": {"request_id": "chatcmpl-hf", "choices": [
                {"index": 0, "token_ids": out, "finish_reason": "stop"}]},
            "responses_request": responses_request()}),
        );
        let details = &body["usage"]["output_tokens_details"];
        assert_eq!(details["reasoning_tokens"], expected, "{id}: {body}");
        for size in [1, 2, 5] {
            let mut state = Value::Null;
            let mut last = Value::Null;
            let chunks: Vec<&[u32]> = out.chunks(size).collect();
            for (i, chunk) in chunks.iter().enumerate() {
                let end = i + 1 == chunks.len();
                let req = json!({"stream": true, "model": "qwen3", "stream_state": state,
                    "prompt_token_ids": prompt,
                    "generate_chunk": {"request_id": "chatcmpl-hf", "choices": [{"index": 0,
                        "token_ids": chunk, "finish_reason": if end { json!("stop") } else { Value::Null }}]},
                    "responses_request": responses_request()});
                let body = post("/v1/responses/derender", &req);
                state = body["stream_state"].clone();
                if let Some(e) = body["events"].as_array().and_then(|e| e.last()) {
                    last = e.clone();
                }
            }
            assert_eq!(last["type"], "response.completed", "{id}: {last}");
            let details = &last["response"]["usage"]["output_tokens_details"];
            assert_eq!(
                details["reasoning_tokens"], expected,
                "{id}, chunks of {size}: {last}"
            );
        }
    }
}
