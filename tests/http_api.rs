//! End-to-end tests of the HTTP API on loopback: every route, and every class of bad input
//! answered with the right status and an OpenAI-shaped error naming the problem.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use llm_render::model::LoadOptions;
use llm_render::render::RenderOptions;
use llm_render::server::ServerConfig;
use serde_json::{json, Value};

#[test]
fn render_response_has_vllm_shape_and_generation_defaults() {
    let (status, body) = post_json(
        &chat_url(golden_server()),
        &json!({
            "model": "qwen3", "messages": [{"role": "user", "content": "Hi there!"}],
            "max_tokens": 7, "stop": "END", "seed": 3, "cache_salt": "s", "priority": 2
        }),
    );
    assert_eq!(status, 200, "{body}");
    assert!(body["request_id"]
        .as_str()
        .unwrap()
        .starts_with("chatcmpl-"));
    assert_eq!(
        body["token_ids"],
        json!([151644, 872, 198, 13048, 1052, 0, 151645, 198, 151644, 77091, 198])
    );
    assert_eq!(body["model"], "qwen3");
    assert_eq!(body["features"], Value::Null);
    assert_eq!(body["cache_salt"], "s");
    assert_eq!(body["priority"], 2);
    let sp = &body["sampling_params"];
    // generation_config.json: temperature 0.6, top_p 0.95, top_k 20; its EOS ids are the
    // engine's to add, as vLLM's render leaves them out.
    assert_eq!(sp["temperature"], 0.6);
    assert_eq!(sp["top_p"], 0.95);
    assert_eq!(sp["top_k"], 20);
    assert_eq!(sp["stop_token_ids"], json!([]));
    assert_eq!(sp["max_tokens"], 7);
    assert_eq!(sp["stop"], json!(["END"]));
    assert_eq!(sp["seed"], 3);
    // Qwen3's reasoning parser (`auto`) keeps special tokens, as vLLM's adjust_request does.
    assert_eq!(sp["skip_special_tokens"], false);
}

#[test]
fn completion_render_tokenize_and_detokenize() {
    let base = golden_server();
    // Completions add special tokens: Llama's post-processor writes BOS.
    let (status, body) = post_json(
        &format!("{base}/v1/completions/render"),
        &json!({"model": "llama3_1", "prompt": ["Hello", "World"]}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body.as_array().unwrap().len(), 2);
    assert_eq!(body[0]["token_ids"][0], 128000);
    let (status, body) = post_json(
        &format!("{base}/v1/completions/render"),
        &json!({"model": "qwen3", "prompt": [[1, 2, 3]]}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body[0]["token_ids"], json!([1, 2, 3]));

    let (status, tok) = post_json(
        &format!("{base}/tokenize"),
        &json!({"model": "qwen3", "prompt": "Hi there!", "return_token_strs": true}),
    );
    assert_eq!(status, 200, "{tok}");
    assert_eq!(tok["tokens"], json!([13048, 1052, 0]));
    assert_eq!(tok["count"], 3);
    assert_eq!(tok["max_model_len"], 40960);
    let (status, chat) = post_json(&format!("{base}/tokenize"), &hello("qwen3"));
    assert_eq!(status, 200, "{chat}");
    assert_eq!(chat["count"], 11);
    let (status, detok) = post_json(
        &format!("{base}/detokenize"),
        &json!({"model": "qwen3", "tokens": [151644, 13048, 1052, 0]}),
    );
    assert_eq!(status, 200, "{detok}");
    assert_eq!(detok["prompt"], "<|im_start|>Hi there!");
}

#[test]
fn health_models_and_metrics() {
    let base = golden_server();
    assert_eq!(
        client()
            .get(format!("{base}/health"))
            .send()
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    let models: Value = client()
        .get(format!("{base}/v1/models"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let ids: Vec<&str> = models["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, GOLDEN_MODELS);
    assert!(models["data"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["tokenizer_backend"] == "fastokens"));
    let native: Vec<&serde_json::Value> = models["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["native_template"])
        .collect();
    assert_eq!(
        native,
        [
            &json!("qwen3"),
            &json!("llama3_1"),
            &json!("deepseek_v3"),
            &json!(null)
        ]
    );
    // `auto` parsers, resolved by model name from the parsers' table.
    let parsers: Vec<(&serde_json::Value, &serde_json::Value)> = models["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (&m["reasoning_parser"], &m["tool_call_parser"]))
        .collect();
    assert_eq!(
        parsers[0],
        (&json!("qwen3"), &json!("hermes")),
        "{parsers:?}"
    );
    assert_eq!(
        models["data"][0]["parsers_chosen_by"],
        "qwen3: the model name contains \"qwen3\"; hermes: the model name contains \"qwen\""
    );
    assert_eq!(
        parsers[1],
        (&json!(null), &json!("llama3_json")),
        "{parsers:?}"
    );
    // A model named as a parser gets it: deepseek_v3's reasoning parser is vLLM's for the
    // hybrid DeepSeek-V3.1 family (content unless the request turns thinking on).
    assert_eq!(
        parsers[2],
        (&json!("deepseek_v3"), &json!("deepseek_v3")),
        "{parsers:?}"
    );
    post_json(&chat_url(base), &hello("qwen3"));
    post_json(&chat_url(base), &hello("nope"));
    let text = client()
        .get(format!("{base}/metrics"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    for needle in [
        "llm_render_requests_total{route=\"/v1/chat/completions/render\",status=\"200\"}",
        "llm_render_errors_total{route=\"/v1/chat/completions/render\",status=\"404\"}",
        "llm_render_request_duration_seconds_bucket",
        "llm_render_prompt_tokens_total{model=\"qwen3\"}",
        "llm_render_template_render_seconds_bucket",
        "llm_render_template_renders_total{engine=\"native\",model=\"qwen3\"}",
        "llm_render_tokenize_seconds_bucket",
        "llm_render_requests_in_flight",
        "llm_render_segment_cache_total{kind=\"misses\",model=\"qwen3\"}",
        "llm_render_segment_cache_size{kind=\"max_bytes\",model=\"qwen3\"}",
        "llm_render_prompt_cache_total{kind=\"misses\",model=\"qwen3\"}",
        "llm_render_prompt_cache_size{kind=\"max_bytes\",model=\"qwen3\"}",
    ] {
        assert!(text.contains(needle), "metrics lack {needle}");
    }
}

#[test]
fn malformed_json_and_wrong_types_are_400_naming_the_field() {
    let url = chat_url(golden_server());
    assert_error(
        &post_body(&url, "{\"messages\": [}"),
        400,
        "invalid JSON",
        None,
    );
    assert_error(&post_body(&url, ""), 400, "invalid JSON", None);
    // Invalid UTF-8 inside a string: serde_json's own error, at the string.
    let mut bytes = br#"{"model": "qwen3", "messages": [{"role": "user", "content": "a"#.to_vec();
    bytes.extend_from_slice(b"\xff\xfe\"}]}");
    assert_error(
        &post_body(&url, bytes),
        400,
        "invalid unicode code point",
        None,
    );
    assert_error(
        &post_json(&url, &json!({"model": "qwen3", "messages": "hi"})),
        400,
        "messages",
        Some("messages"),
    );
    assert_error(
        &post_json(&url, &json!({"model": "qwen3"})),
        400,
        "messages",
        None,
    );
    let mut req = hello("qwen3");
    req["temperature"] = json!("hot");
    assert_error(
        &post_json(&url, &req),
        400,
        "temperature",
        Some("temperature"),
    );
    req["temperature"] = json!(-1.0);
    assert_error(
        &post_json(&url, &req),
        400,
        "temperature",
        Some("temperature"),
    );
    let bad_role = json!({"model": "qwen3", "messages": [{"content": "x"}]});
    assert_error(
        &post_json(&url, &bad_role),
        400,
        "role",
        Some("messages[0].role"),
    );
    let bad_args = json!({"model": "qwen3", "messages": [{"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{not json"}}]}]});
    assert_error(
        &post_json(&url, &bad_args),
        400,
        "not valid JSON",
        Some("messages[1].tool_calls[0].function.arguments"),
    );
    let both = json!({"model": "qwen3", "messages": [{"role": "user", "content": "x"}], "continue_final_message": true});
    assert_error(
        &post_json(&url, &both),
        400,
        "not compatible",
        Some("continue_final_message"),
    );
    let empty = json!({"model": "qwen3", "messages": []});
    assert_error(
        &post_json(&url, &empty),
        400,
        "at least one message",
        Some("messages"),
    );
    let untrusted = json!({"model": "qwen3", "messages": [{"role": "user", "content": "x"}], "chat_template": "{{ 1 }}"});
    assert_error(
        &post_json(&url, &untrusted),
        400,
        "--trust-request-chat-template",
        Some("chat_template"),
    );
}

#[test]
fn unknown_model_route_and_method() {
    let base = golden_server();
    assert_error(
        &post_json(&chat_url(base), &hello("gpt-9")),
        404,
        "gpt-9",
        Some("model"),
    );
    // Several models are served, so the name is required.
    let mut no_model = hello("x");
    no_model.as_object_mut().unwrap().remove("model");
    assert_error(
        &post_json(&chat_url(base), &no_model),
        400,
        "model",
        Some("model"),
    );
    assert_error(
        &post_json(&format!("{base}/v1/nope"), &json!({})),
        404,
        "no such route",
        None,
    );
    let resp = client().get(chat_url(base)).send().unwrap();
    assert_eq!(resp.status().as_u16(), 405);
}

#[test]
fn wrong_methods_are_405_with_allow_and_head_is_get_without_a_body() {
    let base = golden_server();
    for (method, path, allow) in [
        (reqwest::Method::GET, "/v1/chat/completions/render", "POST"),
        (reqwest::Method::PUT, "/tokenize", "POST"),
        (reqwest::Method::POST, "/health", "GET,HEAD"),
        (reqwest::Method::DELETE, "/v1/models", "GET,HEAD"),
    ] {
        let resp = client()
            .request(method.clone(), format!("{base}{path}"))
            .send()
            .unwrap();
        assert_eq!(resp.status().as_u16(), 405, "{method} {path}");
        assert_eq!(resp.headers()["allow"], allow, "{method} {path}");
        let body: Value = resp.json().unwrap();
        assert_error(&(405, body), 405, "method not allowed", None);
    }
    let resp = client().head(format!("{base}/v1/models")).send().unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.bytes().unwrap().len(), 0);
}

#[test]
fn template_raise_exception_is_400_with_its_message() {
    let req = json!({"model": "llama3_1", "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]});
    assert_error(
        &post_json(&chat_url(golden_server()), &req),
        400,
        "This model only supports single tool-calls at once!",
        None,
    );
    // A type error inside the template: `.strip()` on a number (Jinja2 raises too).
    let req = json!({"model": "features", "messages": [{"role": "user", "content": "x"},
        {"role": "assistant", "content": "a", "reasoning_content": 5}, {"role": "user", "content": "y"}]});
    assert_error(
        &post_json(&chat_url(golden_server()), &req),
        400,
        "TemplateError",
        None,
    );
}

#[test]
fn out_of_range_token_ids_are_400() {
    let base = golden_server();
    let got = post_json(
        &format!("{base}/v1/completions/render"),
        &json!({"model": "qwen3", "prompt": [5, 999999999]}),
    );
    assert_error(&got, 400, "999999999", Some("prompt"));
    let got = post_json(
        &format!("{base}/v1/completions/render"),
        &json!({"model": "qwen3", "prompt": [5, -1]}),
    );
    assert_error(&got, 400, "token IDs", Some("prompt"));
    // An ID without a token decodes to nothing, as vLLM's `/detokenize` decodes it.
    let got = post_json(
        &format!("{base}/detokenize"),
        &json!({"model": "qwen3", "tokens": [9707, 151711, 4294967295u32]}),
    );
    assert_eq!(got, (200, json!({"prompt": "Hello"})));
}

#[test]
fn fuel_exhaustion_and_prompt_length_are_400() {
    let config = ServerConfig {
        render: RenderOptions {
            trust_request_chat_template: true,
            template_fuel: Some(100_000),
            ..RenderOptions::default()
        },
        ..ServerConfig::default()
    };
    let models = load_models(
        &["qwen3"],
        &LoadOptions {
            template_fuel: Some(100_000),
            max_model_len: Some(16),
            ..LoadOptions::default()
        },
    );
    let base = start_server(models, config);
    let mut req = hello("qwen3");
    req["chat_template"] = json!(slow_template(1000));
    assert_error(&post_json(&chat_url(&base), &req), 400, "budget", None);
    req["chat_template"] = json!("{% for m in messages %}{{ m.content }}{% endfor %}");
    let (status, body) = post_json(&chat_url(&base), &req);
    assert_eq!(status, 200, "{body}");
    let long =
        json!({"model": "qwen3", "messages": [{"role": "user", "content": "word ".repeat(50)}]});
    assert_error(
        &post_json(&chat_url(&base), &long),
        400,
        "maximum context length is 16 tokens",
        None,
    );
}

/// A list that doubles itself (`+`, `chain`, `sum`, an unsized iterable, empty leaves)
/// stays lazy in minijinja until 32 levels deep, then was copied or flattened with no fuel
/// charged: 2^33 items, memory until the process was killed (or, with empty leaves, a walk
/// of 2^33 of them). With the patched minijinja (vendor/minijinja) it runs out of serve's
/// default fuel and is a 400, quickly.
#[test]
fn self_doubling_lists_run_out_of_fuel() {
    let fuel = Some(llm_render::model::DEFAULT_TEMPLATE_FUEL);
    let config = ServerConfig {
        render: RenderOptions {
            trust_request_chat_template: true,
            template_fuel: fuel,
            ..RenderOptions::default()
        },
        ..ServerConfig::default()
    };
    let models = load_models(
        &["qwen3"],
        &LoadOptions {
            template_fuel: fuel,
            ..LoadOptions::default()
        },
    );
    let base = start_server(models, config);
    for (start, doubled, read) in [
        ("[1]", "l.v + l.v", "l.v | length"),
        ("[1]", "l.v | chain(l.v)", "l.v | length"),
        ("[1] | select", "l.v + l.v", "l.v | list | length"),
        ("[1]", "[l.v, l.v] | sum(start=[])", "l.v | length"),
        // Empty leaves: no item to charge while walking 2^33 of them.
        ("[]", "l.v + l.v", "l.v | list | length"),
    ] {
        let mut req = hello("qwen3");
        req["chat_template"] = json!(format!(
            "{{% set l = namespace(v={start}) %}}{{% for i in range(64) %}}\
             {{% set l.v = {doubled} %}}{{% endfor %}}{{{{ {read} }}}}"
        ));
        assert_error(&post_json(&chat_url(&base), &req), 400, "budget", None);
    }
}

#[test]
fn chat_derender_splits_reasoning_and_counts_usage() {
    let base = golden_server();
    let m = golden_registry().get(Some("qwen3")).unwrap();
    let ids = m
        .encode(
            "<think>\n17*20=340\n</think>\n\nIt is 391.<|im_end|>",
            false,
        )
        .unwrap();
    let url = format!("{base}/v1/chat/completions/derender");
    let req = json!({"model": "qwen3", "stream": false, "prompt_token_ids": [1, 2, 3],
        "generate_response": {"choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}]},
        "chat_request": {"messages": [{"role": "user", "content": "17 x 23?"}]}});
    let (status, body) = post_json(&url, &req);
    assert_eq!(status, 200, "{body}");
    let msg = &body["choices"][0]["message"];
    assert_eq!(msg["reasoning_content"], "\n17*20=340\n");
    assert_eq!(msg["reasoning"], "\n17*20=340\n");
    assert_eq!(msg["content"], "\n\nIt is 391.");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert_eq!(body["usage"]["completion_tokens"], ids.len());
    assert_eq!(body["usage"]["prompt_tokens"], 3);
    assert_eq!(body["object"], "chat.completion");

    // An ID past the tokenizer's vocabulary (a model's padded embedding rows, which an engine
    // can sample) decodes to nothing and counts as a token, as vLLM's derender has it.
    let mut padded = req.clone();
    padded["generate_response"]["choices"][0]["token_ids"] = json!([9707, 151711, 999999999]);
    let (status, body) = post_json(&url, &padded);
    assert_eq!(status, 200, "{body}");
    // (Qwen3's parser reads an output without `</think>` as reasoning.)
    assert_eq!(body["choices"][0]["message"]["reasoning"], "Hello");
    assert_eq!(body["usage"]["completion_tokens"], 3);
    let mut streaming = req.clone();
    streaming["stream"] = json!(true);
    assert_error(
        &post_json(&url, &streaming),
        400,
        "`generate_chunk` is required",
        Some("generate_chunk"),
    );
    assert_error(&post_body(&url, "{"), 400, "invalid JSON", None);
}

#[test]
fn chat_derender_applies_stop_strings_and_stop_ids() {
    let base = golden_server();
    let m = golden_registry().get(Some("qwen3")).unwrap();
    let ids = m
        .encode("First line.\nSTOP here\nmore<|im_end|>ignored", false)
        .unwrap();
    let url = format!("{base}/v1/chat/completions/derender");
    // Thinking off, so the text is content (with it on, Qwen3 output starts in reasoning).
    let derender = |mut chat: Value, ids: &[u32], finish: &str| {
        chat["chat_template_kwargs"] = json!({"enable_thinking": false});
        let req = json!({"model": "qwen3", "generate_response": {"choices": [{"index": 0, "token_ids": ids, "finish_reason": finish}]},
            "chat_request": chat});
        post_json(&url, &req)
    };
    let (_, body) = derender(json!({"stop": ["STOP"]}), &ids, "stop");
    assert_eq!(body["choices"][0]["message"]["content"], "First line.\n");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert_eq!(body["choices"][0]["stop_reason"], "STOP");
    // Every ID the engine sent counts, as in vLLM.
    assert_eq!(body["usage"]["completion_tokens"], ids.len());
    let (_, body) = derender(
        json!({"stop": "STOP", "include_stop_str_in_output": true}),
        &ids,
        "stop",
    );
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "First line.\nSTOP"
    );
    // An output the engine cut with `length` is not cut again at a stop string (vLLM's
    // `_decode_output`); a stop token inside it is text, kept by the parsers' decoding.
    let whole = "First line.\nSTOP here\nmore<|im_end|>ignored";
    let (_, body) = derender(json!({"stop": ["STOP"]}), &ids, "length");
    assert_eq!(body["choices"][0]["message"]["content"], whole);
    assert_eq!(body["choices"][0]["finish_reason"], "length");
    // The stop token the output ends on is left out when the engine finished with `stop`:
    // `<|im_end|>` is the tokenizer's EOS (stop_reason null); the other EOS reports its ID.
    let ended = m
        .encode("First line.\nSTOP here\nmore<|im_end|>", false)
        .unwrap();
    let (_, body) = derender(json!({}), &ended, "stop");
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "First line.\nSTOP here\nmore"
    );
    assert_eq!(body["choices"][0]["stop_reason"], Value::Null);
    let mut other_eos = ended[..ended.len() - 1].to_vec();
    other_eos.push(151643);
    let (_, body) = derender(json!({}), &other_eos, "stop");
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "First line.\nSTOP here\nmore"
    );
    assert_eq!(body["choices"][0]["stop_reason"], 151643);
    // Kept when the engine finished with `length` on it.
    let (_, body) = derender(json!({}), &ended, "length");
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "First line.\nSTOP here\nmore<|im_end|>"
    );
}
