//! vLLM's render API tests and request validators, as cases against our server on
//! loopback. `tr_…` tests transcribe `tests/entrypoints/scale_out/render/test_render.py`
//! (vllm-project/vllm) under their names; `v_…` tests hold us to a validator of vLLM
//! 0.33's `ChatCompletionRequest` / `CompletionRequest` / `SamplingParams` (named after it),
//! with vLLM's message and the field as `param`. vLLM runs its tests on a tiny Llama; here the
//! model is the Qwen3 fixture. The file's Messages and Responses tests are in
//! `tests/messages_responses_render.rs`. The assistant-mask tests come from vLLM's main branch
//! (0.33 has no such field); `tests/assistant_mask_goldens.rs` checks the masks themselves
//! against transformers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{client, golden_server};
use serde_json::{json, Value};

fn post(path: &str, body: &Value) -> (u16, Value) {
    let r = client()
        .post(format!("{}{path}", golden_server()))
        .json(body)
        .send()
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().unwrap_or(Value::Null))
}

const CHAT: &str = "/v1/chat/completions/render";
const COMPLETION: &str = "/v1/completions/render";

fn chat(extra: Value) -> Value {
    let mut body = json!({"model": "qwen3", "messages": [{"role": "user", "content": "Hello"}]});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

/// A 400 whose `param` is `param` and whose message contains `needle`.
fn refused(got: (u16, Value), param: Option<&str>, needle: &str) {
    let (code, out) = got;
    assert_eq!(code, 400, "{out}");
    assert_eq!(out["error"]["param"], json!(param), "{out}");
    let msg = out["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains(needle), "{msg:?} lacks {needle:?}");
}

#[test]
fn tr_test_completion_render_basic() {
    let (code, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "prompt": "Hello world"}),
    );
    assert_eq!(code, 200, "{out}");
    let first = &out.as_array().unwrap()[0];
    assert!(!first["token_ids"].as_array().unwrap().is_empty());
    assert!(first["sampling_params"].is_object());
    assert_eq!(first["model"], "qwen3");
    assert!(first["request_id"].as_str().unwrap().starts_with("cmpl-"));
}

#[test]
fn tr_test_chat_completion_render_basic() {
    let (code, out) = post(CHAT, &chat(json!({})));
    assert_eq!(code, 200, "{out}");
    assert!(out["token_ids"]
        .as_array()
        .unwrap()
        .iter()
        .all(Value::is_u64));
    assert!(out["request_id"].as_str().unwrap().starts_with("chatcmpl-"));
}

#[test]
fn tr_test_completion_render_multiple_prompts() {
    let (code, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "prompt": ["Hello world", "Goodbye world"]}),
    );
    assert_eq!(code, 200, "{out}");
    let list = out.as_array().unwrap();
    assert_eq!(list.len(), 2);
    for g in list {
        for key in ["token_ids", "sampling_params", "model", "request_id"] {
            assert!(g.get(key).is_some(), "{key}: {g}");
        }
        assert!(g["request_id"].as_str().unwrap().starts_with("cmpl-"));
    }
}

#[test]
fn tr_test_chat_completion_render_multi_turn() {
    let body = json!({"model": "qwen3", "messages": [
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "How are you?"}]});
    let (code, out) = post(CHAT, &body);
    assert_eq!(code, 200, "{out}");
    assert!(!out["token_ids"].as_array().unwrap().is_empty());
}

#[test]
fn tr_test_chat_completion_render_with_stream_true() {
    let options = json!({"include_usage": true, "continuous_usage_stats": true});
    let (code, out) = post(
        CHAT,
        &chat(json!({"stream": true, "stream_options": options})),
    );
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["stream"], true);
    assert_eq!(out["stream_options"], options);
}

#[test]
fn tr_test_render_error_invalid_model() {
    // test_completion_render_error_invalid_model, test_chat_completion_render_error_invalid_model
    let (code, out) = post(
        COMPLETION,
        &json!({"model": "invalid-model-name", "prompt": "x"}),
    );
    assert_eq!(code, 404);
    assert!(out.get("error").is_some());
    let (code, out) = post(CHAT, &chat(json!({"model": "invalid-model-name"})));
    assert_eq!(code, 404);
    assert!(out.get("error").is_some());
}

#[test]
fn tr_test_chat_completion_render_with_sampling_params() {
    let body = chat(json!({"temperature": 0.123, "top_p": 0.456, "frequency_penalty": 1.1}));
    let (code, out) = post(CHAT, &body);
    assert_eq!(code, 200, "{out}");
    let sp = &out["sampling_params"];
    assert_eq!(sp["temperature"], 0.123);
    assert_eq!(sp["top_p"], 0.456);
    assert_eq!(sp["frequency_penalty"], 1.1);
    assert!(sp.get("_all_stop_token_ids").is_none());
}

#[test]
fn v_a_request_without_messages_names_the_field() {
    refused(
        post(CHAT, &json!({"model": "qwen3"})),
        Some("messages"),
        "messages",
    );
}

#[test]
fn v_check_cache_salt_support() {
    for bad in ["", "a/b", "a@b"] {
        refused(
            post(CHAT, &chat(json!({"cache_salt": bad}))),
            Some("cache_salt"),
            "cache_salt",
        );
    }
    refused(
        post(
            COMPLETION,
            &json!({"model": "qwen3", "prompt": "x", "cache_salt": "x".repeat(129)}),
        ),
        Some("cache_salt"),
        "at most 128 characters",
    );
    assert_eq!(post(CHAT, &chat(json!({"cache_salt": "tenant-7"}))).0, 200);
}

#[test]
fn v_validate_response_format() {
    refused(
        post(
            CHAT,
            &chat(json!({"response_format": {"type": "json_schema"}})),
        ),
        Some("response_format"),
        "the 'json_schema' field must be provided",
    );
    refused(
        post(CHAT, &chat(json!({"response_format": {"type": "yaml"}}))),
        Some("response_format.type"),
        "response_format.type",
    );
}

#[test]
fn v_validate_stream_options() {
    refused(
        post(
            CHAT,
            &chat(json!({"stream_options": {"include_usage": true}})),
        ),
        Some("stream_options"),
        "Stream options can only be defined when `stream=True`.",
    );
    refused(
        post(
            COMPLETION,
            &json!({"model": "qwen3", "prompt": "x", "stream_options": {"include_usage": true}}),
        ),
        Some("stream_options"),
        "stream=True",
    );
}

#[test]
fn v_check_logprobs() {
    refused(
        post(CHAT, &chat(json!({"top_logprobs": 3}))),
        Some("top_logprobs"),
        "`logprobs` must be set to true",
    );
    refused(
        post(CHAT, &chat(json!({"stream": true, "prompt_logprobs": 1}))),
        Some("prompt_logprobs"),
        "not available when `stream=True`",
    );
    assert_eq!(
        post(CHAT, &chat(json!({"logprobs": true, "top_logprobs": 3}))).0,
        200
    );
    // -1 is "all": passed on for the engine to bound by its --max-logprobs (vLLM 0.33's
    // render server answers these the same).
    let (code, out) = post(CHAT, &chat(json!({"logprobs": true, "top_logprobs": -1})));
    assert_eq!(
        (code, &out["sampling_params"]["logprobs"]),
        (200, &json!(-1))
    );
    let (code, out) = post(CHAT, &chat(json!({"prompt_logprobs": -1})));
    assert_eq!(
        (code, &out["sampling_params"]["prompt_logprobs"]),
        (200, &json!(-1))
    );
    let (code, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "prompt": "one", "logprobs": -1}),
    );
    assert_eq!(
        (code, &out[0]["sampling_params"]["logprobs"]),
        (200, &json!(-1))
    );
    for (body, param) in [
        (
            chat(json!({"logprobs": true, "top_logprobs": -2})),
            "top_logprobs",
        ),
        (chat(json!({"prompt_logprobs": -2})), "prompt_logprobs"),
        (
            json!({"model": "qwen3", "prompt": "one", "logprobs": -2}),
            "logprobs",
        ),
    ] {
        let path = if body.get("prompt").is_some() {
            COMPLETION
        } else {
            CHAT
        };
        refused(
            post(path, &body),
            Some(param),
            "must be a positive value or -1",
        );
    }
    refused(
        post(CHAT, &chat(json!({"stream": true, "prompt_logprobs": -1}))),
        Some("prompt_logprobs"),
        "not available when `stream=True`",
    );
    refused(
        post(CHAT, &chat(json!({"stream": true, "prompt_logprobs": -2}))),
        Some("prompt_logprobs"),
        "must be a positive value or -1",
    );
    // pydantic's lax int: 2.0 is 2.
    let (code, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "prompt": "one", "logprobs": 2.0}),
    );
    assert_eq!(
        (code, &out[0]["sampling_params"]["logprobs"]),
        (200, &json!(2))
    );
}

#[test]
fn v_check_structured_outputs_count() {
    refused(
        post(
            CHAT,
            &chat(json!({"structured_outputs": {"regex": "a+", "choice": ["a", "b"]}})),
        ),
        None,
        "only use one kind of constraints",
    );
}

fn weather() -> Value {
    json!([{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}])
}

#[test]
fn v_check_tool_usage() {
    refused(
        post(CHAT, &chat(json!({"tools": []}))),
        Some("tools"),
        "must not be an empty array",
    );
    refused(
        post(CHAT, &chat(json!({"tool_choice": "auto"}))),
        Some("tool_choice"),
        "When using `tool_choice`, `tools` must be set.",
    );
    refused(
        post(
            CHAT,
            &chat(json!({"tools": weather(), "tool_choice": "sometimes"})),
        ),
        Some("tool_choice"),
        "Invalid value for `tool_choice`",
    );
    refused(
        post(
            CHAT,
            &chat(
                json!({"tools": weather(), "tool_choice": {"type": "function", "function": {"name": "nope"}}}),
            ),
        ),
        Some("tool_choice"),
        "does not match any of the specified `tools`",
    );
    refused(
        post(
            CHAT,
            &chat(json!({"tools": weather(), "tool_choice": {"type": "function", "function": {}}})),
        ),
        Some("tool_choice.function.name"),
        "Expected field `name`",
    );
    refused(
        post(
            CHAT,
            &chat(json!({"tools": [{"type": "function", "function": {"parameters": {}}}]})),
        ),
        Some("tools[0].function.name"),
        "tools[0].function.name",
    );
    let named = json!({"tools": weather(), "tool_choice": {"type": "function", "function": {"name": "get_weather"}}});
    assert_eq!(post(CHAT, &chat(named)).0, 200);
}

#[test]
fn v_transfer_params_are_objects() {
    refused(
        post(CHAT, &chat(json!({"kv_transfer_params": "remote"}))),
        Some("kv_transfer_params"),
        "valid dictionary",
    );
}

#[test]
fn v_render_refuses_beam_search_and_suffix() {
    refused(
        post(CHAT, &chat(json!({"use_beam_search": true}))),
        Some("use_beam_search"),
        "Beam search is not supported by the render endpoint",
    );
    refused(
        post(
            COMPLETION,
            &json!({"model": "qwen3", "prompt": "x", "suffix": "y"}),
        ),
        Some("suffix"),
        "suffix is not currently supported",
    );
}

#[test]
fn v_sampling_params_verify_args() {
    refused(
        post(CHAT, &chat(json!({"temperature": 2.5}))),
        Some("temperature"),
        "temperature must be in [0, 2], got 2.5.",
    );
    refused(
        post(CHAT, &chat(json!({"n": 20000}))),
        Some("n"),
        "n must be at most 16384",
    );
    refused(
        post(CHAT, &chat(json!({"n": 2, "temperature": 0}))),
        Some("n"),
        "n must be 1 when using greedy sampling, got 2.",
    );
}

#[test]
fn v_structured_outputs_from_response_format() {
    let (code, out) = post(
        CHAT,
        &chat(json!({"response_format": {"type": "json_object"}})),
    );
    assert_eq!(code, 200, "{out}");
    let so = &out["sampling_params"]["structured_outputs"];
    assert_eq!(so["json_object"], true, "{so}");
    assert_eq!(so["json"], Value::Null);
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
    let rf = json!({"type": "json_schema", "json_schema": {"name": "x", "schema": schema}});
    let (code, out) = post(CHAT, &chat(json!({"response_format": rf})));
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["sampling_params"]["structured_outputs"]["json"], schema);
    let (code, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "prompt": "x", "structured_outputs": {"regex": "[0-9]+"}}),
    );
    assert_eq!(code, 200, "{out}");
    assert_eq!(
        out[0]["sampling_params"]["structured_outputs"]["regex"],
        "[0-9]+"
    );
    // Plain requests constrain nothing and carry no key.
    let (_, out) = post(CHAT, &chat(json!({})));
    assert!(out["sampling_params"].get("structured_outputs").is_none());
    refused(
        post(
            CHAT,
            &chat(
                json!({"response_format": {"type": "json_object"}, "structured_outputs": {"regex": "a"}}),
            ),
        ),
        Some("structured_outputs"),
        "only use one kind of structured outputs constraint",
    );
}

/// `sampling_params` as vLLM 0.33's render server writes them for the same requests
/// (`scripts/sampling_params_vs_vllm.py` compares the whole corpus against the server): the
/// request's stop tokens only (the engine adds EOS), `output_kind`, `skip_clone`, the
/// token-level constraints and `extra_args`, and the private fields of
/// `structured_outputs`.
#[test]
fn v_sampling_params_as_vllms_render_writes_them() {
    let (code, out) = post(CHAT, &chat(json!({})));
    assert_eq!(code, 200, "{out}");
    let sp = &out["sampling_params"];
    assert_eq!(sp["stop_token_ids"], json!([]));
    assert_eq!(sp["output_kind"], 2);
    assert_eq!(sp["skip_clone"], true);
    assert_eq!(sp["bad_words"], json!([]));
    // vLLM 0.33 writes it (`__post_init__` sets a bool where the field's default is None),
    // and leaves out what equals its default: `n`, `seed`, `min_tokens: 0`, ...
    assert_eq!(sp["skip_reading_prefix_cache"], false);
    for absent in [
        "n",
        "seed",
        "ignore_eos",
        "min_tokens",
        "logprobs",
        "prompt_logprobs",
    ] {
        assert!(sp.get(absent).is_none(), "{absent}: {sp}");
    }
    assert_eq!(sp["presence_penalty"], 0.0);
    let (_, out) = post(
        CHAT,
        &chat(json!({"stream": true, "logit_bias": {"5": 10},
            "allowed_token_ids": [1, 2, 3], "bad_words": ["foo"], "vllm_xargs": {"k": 1},
            "stop_token_ids": [1, 2], "structured_outputs": {"regex": "a+"}})),
    );
    let sp = &out["sampling_params"];
    assert_eq!(sp["output_kind"], 1);
    assert_eq!(sp["logit_bias"], json!({"5": 10.0}));
    assert_eq!(sp["allowed_token_ids"], json!([1, 2, 3]));
    assert_eq!(sp["bad_words"], json!(["foo"]));
    assert_eq!(sp["extra_args"], json!({"k": 1}));
    assert_eq!(sp["stop_token_ids"], json!([1, 2]));
    assert_eq!(sp["structured_outputs"]["_backend"], Value::Null);
    assert_eq!(sp["structured_outputs"]["_backend_was_auto"], false);
    let (_, out) = post(CHAT, &chat(json!({"prompt_logprobs": 1})));
    assert_eq!(out["sampling_params"]["skip_reading_prefix_cache"], true);
    refused(
        post(CHAT, &chat(json!({"logit_bias": {"x": 1}}))),
        Some("logit_bias"),
        "token IDs",
    );
}

/// `echo` asks the engine for the prompt's logprobs, as `CompletionRequest` /
/// `ChatCompletionRequest.to_sampling_params` do (values as vLLM 0.33's render server wrote
/// them, `scripts/sampling_params_vs_vllm.py`); a completion echoed with `max_tokens: 0`
/// runs one step.
#[test]
fn v_echo_to_sampling_params() {
    let completion = |extra: Value| {
        let mut body = json!({"model": "qwen3", "prompt": "Hello"});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (code, out) = post(COMPLETION, &body);
        assert_eq!(code, 200, "{out}");
        out[0]["sampling_params"].clone()
    };
    let sp = completion(json!({"echo": true, "logprobs": 2}));
    assert_eq!(sp["prompt_logprobs"], 2);
    assert_eq!(sp["skip_reading_prefix_cache"], true);
    let sp = completion(json!({"echo": true, "max_tokens": 0, "logprobs": 1}));
    assert_eq!(sp["max_tokens"], 1);
    assert_eq!(sp["prompt_logprobs"], 1);
    let sp = completion(json!({"echo": true, "logprobs": 2, "prompt_logprobs": 4}));
    assert_eq!(sp["prompt_logprobs"], 4);
    assert_eq!(
        completion(json!({"echo": true}))["prompt_logprobs"],
        Value::Null
    );
    refused(
        post(
            COMPLETION,
            &json!({"model": "qwen3", "prompt": "Hello", "max_tokens": 0}),
        ),
        Some("max_tokens"),
        "at least 1",
    );
    let (_, out) = post(CHAT, &chat(json!({"echo": true})));
    assert_eq!(out["sampling_params"]["prompt_logprobs"], 0);
    let (_, out) = post(
        CHAT,
        &chat(json!({"echo": true, "logprobs": true, "top_logprobs": 3})),
    );
    assert_eq!(out["sampling_params"]["prompt_logprobs"], 3);
}

/// `truncate_prompt_tokens` keeps the prompt's last N tokens, as vLLM's render server kept
/// them for these requests (IDs from that run); -1 is the context, past it a 400.
#[test]
fn v_truncate_prompt_tokens() {
    let (_, out) = post(CHAT, &chat(json!({"truncate_prompt_tokens": 5})));
    assert_eq!(out["token_ids"], json!([151645, 198, 151644, 77091, 198]));
    assert_eq!(out["sampling_params"]["max_tokens"], 40955);
    let (_, out) = post(CHAT, &chat(json!({"truncate_prompt_tokens": -1})));
    assert_eq!(out["token_ids"].as_array().unwrap().len(), 9);
    let (_, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "prompt": "one two three four five six seven",
            "truncate_prompt_tokens": 3}),
    );
    assert_eq!(out[0]["token_ids"], json!([4236, 4743, 8094]));
    // vLLM's CompletionRequest: max_tokens defaults to 16, `SamplingParams`' own default,
    // which vLLM's render leaves out; written here, since vLLM's generate route reads an
    // absent one as "up to the context" (docs/api.md, the deliberate difference).
    assert_eq!(out[0]["sampling_params"]["max_tokens"], 16);
    refused(
        post(CHAT, &chat(json!({"truncate_prompt_tokens": 50000}))),
        Some("truncate_prompt_tokens"),
        "cannot be greater than max_model_len = 40960",
    );
    refused(
        post(CHAT, &chat(json!({"truncate_prompt_tokens": -2}))),
        Some("truncate_prompt_tokens"),
        "greater than or equal to -1",
    );
    refused(
        post(
            CHAT,
            &chat(json!({"truncate_prompt_tokens": 5, "truncation_side": "middle"})),
        ),
        Some("truncation_side"),
        "'left' or 'right'",
    );
}

/// Character offsets of each token in `text`, checked as vLLM's tests check them.
fn offsets_fit(out: &Value, text_len: Option<usize>) {
    let ids = out["token_ids"].as_array().unwrap();
    let offsets = out["token_offsets"].as_array().expect("token_offsets");
    assert_eq!(offsets.len(), ids.len());
    for o in offsets {
        let (s, e) = (o[0].as_u64().unwrap(), o[1].as_u64().unwrap());
        assert!(s <= e, "{o}");
        if let Some(n) = text_len {
            assert!(e as usize <= n, "{o}");
        }
    }
}

#[test]
fn tr_test_completion_render_emits_token_offsets() {
    let prompt = "Hello, world.";
    let (code, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "prompt": prompt, "return_token_offsets": true}),
    );
    assert_eq!(code, 200, "{out}");
    offsets_fit(&out[0], Some(prompt.chars().count()));
    assert_eq!(out[0]["token_offsets"][0], json!([0, 5]), "Hello");
}

#[test]
fn tr_test_completion_render_default_no_token_offsets() {
    let (_, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "prompt": "Hello, world."}),
    );
    assert!(
        out[0].get("token_offsets").is_some_and(Value::is_null),
        "{out}"
    );
}

#[test]
fn tr_test_chat_render_emits_token_offsets() {
    let (code, out) = post(CHAT, &chat(json!({"return_token_offsets": true})));
    assert_eq!(code, 200, "{out}");
    offsets_fit(&out, None);
}

#[test]
fn tr_test_chat_render_default_no_token_offsets() {
    let (_, out) = post(CHAT, &chat(json!({})));
    assert!(
        out.get("token_offsets").is_some_and(Value::is_null),
        "{out}"
    );
}

#[test]
fn tr_test_completion_render_truncated_token_offsets() {
    let prompt = "The quick brown fox jumps over the lazy dog.";
    let (code, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "prompt": prompt, "return_token_offsets": true,
            "truncate_prompt_tokens": 4, "truncation_side": "left"}),
    );
    assert_eq!(code, 200, "{out}");
    let first = &out[0];
    assert_eq!(first["token_ids"].as_array().unwrap().len(), 4);
    offsets_fit(first, Some(prompt.len()));
    let offsets = first["token_offsets"].as_array().unwrap();
    assert_eq!(offsets[3][1], prompt.len());
    assert!(offsets[0][0].as_u64().unwrap() > 0);
}

#[test]
fn tr_test_completion_render_multiple_prompts_token_offsets() {
    let prompts = ["Hello, world.", "Goodbye, world."];
    let (_, out) = post(
        COMPLETION,
        &json!({"model": "qwen3", "prompt": prompts, "return_token_offsets": true}),
    );
    let list = out.as_array().unwrap();
    assert_eq!(list.len(), 2);
    for (item, p) in list.iter().zip(prompts) {
        offsets_fit(item, Some(p.len()));
    }
}

/// A server that takes request templates, as vLLM's test server for the mask tests does.
fn post_trusted(path: &str, body: &Value) -> (u16, Value) {
    common::post_json(
        &format!("{}{path}", common::trusted_template_server()),
        body,
    )
}

/// vLLM's `_TEMPLATE_WITH_GENERATION`.
const TEMPLATE_WITH_GENERATION: &str = "{% for m in messages %}{% if m['role'] == 'user' %}User: \
    {{ m['content'] }}\n{% elif m['role'] == 'assistant' %}{% generation %}Assistant: \
    {{ m['content'] }}\n{% endgeneration %}{% endif %}{% endfor %}";

#[test]
fn tr_test_chat_completion_render_assistant_tokens_mask_default() {
    let (code, out) = post(
        CHAT,
        &json!({"model": "qwen3", "messages": [{"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi!"}, {"role": "user", "content": "How are you?"}]}),
    );
    assert_eq!(code, 200, "{out}");
    assert!(out.get("assistant_tokens_mask").is_none_or(Value::is_null));
}

#[test]
fn tr_test_chat_completion_render_assistant_tokens_mask_false() {
    let (code, out) = post(CHAT, &chat(json!({"return_assistant_tokens_mask": false})));
    assert_eq!(code, 200, "{out}");
    assert!(out.get("assistant_tokens_mask").is_none_or(Value::is_null));
}

#[test]
fn tr_test_chat_render_assistant_tokens_mask_null_without_gen_tags() {
    let (code, out) = post(
        CHAT,
        &json!({"model": "qwen3", "messages": [{"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi!"}], "return_assistant_tokens_mask": true}),
    );
    assert_eq!(code, 200, "{out}");
    assert!(out.get("assistant_tokens_mask").is_none_or(Value::is_null));
}

#[test]
fn tr_test_chat_completion_render_assistant_tokens_mask_with_generation_tags() {
    let (code, data) = post_trusted(
        CHAT,
        &json!({"model": "qwen3", "messages": [{"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi!"}, {"role": "user", "content": "Bye"}],
            "chat_template": TEMPLATE_WITH_GENERATION, "return_assistant_tokens_mask": true}),
    );
    assert_eq!(code, 200, "{data}");
    let mask: Vec<u64> = serde_json::from_value(data["assistant_tokens_mask"].clone()).unwrap();
    let ids: Vec<u64> = serde_json::from_value(data["token_ids"].clone()).unwrap();
    assert_eq!(mask.len(), ids.len());
    assert!(mask.iter().all(|m| *m <= 1));
    assert!(mask.iter().sum::<u64>() > 0);
    let pick = |want: u64| -> Vec<u64> {
        ids.iter()
            .zip(&mask)
            .filter(|(_, m)| **m == want)
            .map(|(t, _)| *t)
            .collect()
    };
    let (_, masked) = post("/detokenize", &json!({"model": "qwen3", "tokens": pick(1)}));
    assert!(
        masked["prompt"].as_str().unwrap().contains("Hi!"),
        "{masked}"
    );
    let (_, rest) = post("/detokenize", &json!({"model": "qwen3", "tokens": pick(0)}));
    let rest = rest["prompt"].as_str().unwrap();
    assert!(!rest.contains("Hi!") && rest.contains("Bye"), "{rest:?}");
}

#[test]
fn tr_test_chat_render_assistant_tokens_mask_follows_truncation() {
    let body = json!({"model": "qwen3", "messages": [
        {"role": "user", "content": "Hello hello hello hello hello hello"},
        {"role": "assistant", "content": "Hi!"}, {"role": "user", "content": "Bye"}],
        "chat_template": TEMPLATE_WITH_GENERATION, "return_assistant_tokens_mask": true});
    let (code, full) = post_trusted(CHAT, &body);
    assert_eq!(code, 200, "{full}");
    let ids = full["token_ids"].as_array().unwrap().clone();
    let mask = full["assistant_tokens_mask"].as_array().unwrap().clone();
    assert!(mask.contains(&json!(1)));
    let keep = ids.len() - 4;
    assert_ne!(mask[mask.len() - keep..], mask[..keep]);
    let mut cut = body.clone();
    cut["truncate_prompt_tokens"] = json!(keep);
    cut["truncation_side"] = json!("left");
    let (code, data) = post_trusted(CHAT, &cut);
    assert_eq!(code, 200, "{data}");
    assert_eq!(data["token_ids"], json!(ids[ids.len() - keep..]));
    assert_eq!(
        data["assistant_tokens_mask"],
        json!(mask[mask.len() - keep..])
    );
}

/// The fields of vLLM's `GenerateRequest`, in its order.
#[test]
fn v_generate_request_fields_in_vllms_order() {
    let (_, out) = post(
        CHAT,
        &chat(json!({"return_token_ids": true, "ec_transfer_params": {"a": 1}})),
    );
    let keys: Vec<&str> = out
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "request_id",
            "token_ids",
            "token_offsets",
            "features",
            "content_parts",
            "sampling_params",
            "model",
            "reasoning_ended",
            "reasoning_parser_kwargs",
            "return_token_ids",
            "output_mode",
            "parse_context",
            "stream",
            "stream_options",
            "cache_salt",
            "priority",
            "kv_transfer_params",
            "ec_transfer_params"
        ]
    );
    assert_eq!(out["output_mode"], "tokens");
    assert_eq!(out["return_token_ids"], true);
    assert_eq!(out["ec_transfer_params"], json!({"a": 1}));
    refused(
        post(CHAT, &chat(json!({"ec_transfer_params": 3}))),
        Some("ec_transfer_params"),
        "",
    );
}

/// vLLM's render refuses a prompt that renders to nothing ("No token_ids rendered",
/// `serving.py`): a chat template that writes nothing, an empty completion prompt. vLLM
/// sends no `param`; ours names the field.
#[test]
fn v_no_token_ids_rendered() {
    let body = json!({"model": "qwen3", "chat_template": "{{ '' }}",
                      "messages": [{"role": "user", "content": "hi"}]});
    let (code, out) = post_trusted("/v1/chat/completions/render", &body);
    refused((code, out), Some("messages"), "No token_ids rendered");
    let body = json!({"model": "qwen3", "prompt": ""});
    refused(
        post("/v1/completions/render", &body),
        Some("prompt"),
        "No token_ids rendered",
    );
}

/// Request shapes vLLM 0.33's models refuse or take, recorded from vLLM's own render server
/// (`scripts/gen_validation_goldens.py` → `fixtures/goldens/validation.jsonl`): a message
/// `name` that is not a string, tool calls with a non-string `arguments` (an object too) or a
/// missing or non-string `function.name`, pydantic's lax booleans for `tools[].function.strict`
/// and `stream_options.include_usage`, malformed `tools` on `/tokenize`. Each is answered with
/// vLLM's status; each refusal names a field in `param` (vLLM's own `param` names the first
/// member of a union that failed, as `body.messages.0.ChatCompletionDeveloperMessageParam.role`).
#[test]
fn v_request_shapes_as_vllms_models_judge_them() {
    let goldens = common::jsonl("goldens/validation.jsonl");
    assert!(goldens.len() >= 80, "{}", goldens.len());
    let mut wrong = Vec::new();
    for g in &goldens {
        let (code, out) = post(g["path"].as_str().unwrap(), &g["body"]);
        let want = g["status"].as_u64().unwrap() as u16;
        let param = out["error"]["param"].as_str().unwrap_or_default();
        if code != want || (want == 400 && param.is_empty()) {
            wrong.push(format!(
                "{}: vLLM {want} ({}), ours {code} {out}",
                g["id"], g["param"]
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // A flag pydantic reads as a bool is written on as the bool (the template sees `true`).
    let (code, out) = post(
        CHAT,
        &chat(json!({"stream": true, "stream_options": {"include_usage": "yes"}})),
    );
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["stream_options"]["include_usage"], true, "{out}");
    // Named as a client can act on it.
    let (code, out) = post(
        CHAT,
        &json!({"model": "qwen3", "messages": [{"role": "user", "content": "Hi", "name": 5}]}),
    );
    assert_eq!(code, 400);
    assert_eq!(out["error"]["param"], "messages[0].name", "{out}");
    // `/v1/block_hashes` (ours) needs the token IDs it hashes.
    let (code, out) = post("/v1/block_hashes", &json!({"block_size": 16}));
    assert_eq!(code, 400, "{out}");
    assert_eq!(out["error"]["param"], "token_ids", "{out}");
    let (code, out) = post("/v1/block_hashes", &json!({"token_ids": []}));
    assert_eq!((code, &out["num_full_blocks"]), (200, &json!(0)), "{out}");
}
