//! `return_assistant_tokens_mask` (vLLM main's render field): the token IDs and
//! `assistant_tokens_mask` of every golden equal transformers' `input_ids` and
//! `assistant_masks` (`scripts/gen_assistant_mask_goldens.py`: request templates with `{%
//! generation %}` tags over the render goldens' conversations, and the features model's own
//! template), through the real server on loopback. The field's rules (absent unless asked,
//! `null` without tags, cut with the prompt, refused where transformers or a bridged prompt
//! cannot give it) are checked below; vLLM's own tests of it are in
//! `tests/vllm_contract_render.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::{json, Value};

fn render(body: &Value) -> (u16, Value) {
    post_json(&chat_url(trusted_template_server()), body)
}

#[test]
fn masks_equal_transformers() {
    let goldens = gz_jsonl("goldens/assistant_mask.jsonl.gz");
    assert!(goldens.len() >= 300, "{} goldens", goldens.len());
    let mut failures = Vec::new();
    for g in &goldens {
        let mut req = g["request"].clone();
        req["model"] = g["model"].clone();
        common::arguments_as_text(&mut req);
        let (status, body) = render(&req);
        if status != 200 {
            failures.push(format!("{}: {status} {body}", g["id"]));
            continue;
        }
        if body["token_ids"] != g["expected_token_ids"] {
            failures.push(format!("{}: token IDs differ", g["id"]));
        } else if body["assistant_tokens_mask"] != g["expected_mask"] {
            failures.push(format!(
                "{}: mask {} want {}",
                g["id"], body["assistant_tokens_mask"], g["expected_mask"]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {}:\n{}",
        failures.len(),
        goldens.len(),
        failures.join("\n")
    );
}

const TAGGED: &str =
    "{% for m in messages %}{% if m['role'] == 'user' %}User: {{ m['content'] }}\n\
    {% elif m['role'] == 'assistant' %}{% generation %}Assistant: {{ m['content'] }}\n\
    {% endgeneration %}{% endif %}{% endfor %}";

fn chat() -> Value {
    json!([{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi!"},
           {"role": "user", "content": "Bye"}])
}

#[test]
fn the_field_is_written_only_when_asked() {
    // Not asked: vLLM 0.33's shape, no such field.
    let (_, plain) =
        render(&json!({"model": "qwen3", "messages": chat(), "chat_template": TAGGED}));
    assert!(plain.get("assistant_tokens_mask").is_none(), "{plain}");
    // Asked, a template without tags: `null`, as vLLM main answers.
    let (status, body) = render(
        &json!({"model": "qwen3", "messages": chat(), "return_assistant_tokens_mask": true}),
    );
    assert_eq!(status, 200);
    assert_eq!(body["assistant_tokens_mask"], Value::Null, "{body}");
    assert!(body.get("assistant_tokens_mask").is_some());
    // Asked, with tags: one entry per token, and the tags leave the tokens unchanged.
    let (_, tagged) = render(&json!({"model": "qwen3", "messages": chat(),
        "chat_template": TAGGED, "return_assistant_tokens_mask": true}));
    assert_eq!(tagged["token_ids"], plain["token_ids"]);
    assert_eq!(
        tagged["assistant_tokens_mask"].as_array().unwrap().len(),
        tagged["token_ids"].as_array().unwrap().len()
    );
    // A model whose own template has the tags (the features fixture).
    let (status, body) = render(&json!({"model": "features", "messages": chat(),
        "return_assistant_tokens_mask": true, "add_generation_prompt": false}));
    assert_eq!(status, 200, "{body}");
    assert!(body["assistant_tokens_mask"]
        .as_array()
        .unwrap()
        .contains(&json!(1)));
}

#[test]
fn right_truncation_keeps_the_head_of_the_mask() {
    let body = json!({"model": "qwen3", "messages": chat(), "chat_template": TAGGED,
        "return_assistant_tokens_mask": true});
    let (_, full) = render(&body);
    let mask = full["assistant_tokens_mask"].as_array().unwrap().clone();
    let keep = mask.len() - 3;
    let mut cut = body.clone();
    cut["truncate_prompt_tokens"] = json!(keep);
    cut["truncation_side"] = json!("right");
    let (status, got) = render(&cut);
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["assistant_tokens_mask"], json!(mask[..keep]));
}

#[test]
fn refused_where_no_mask_can_be_given() {
    // transformers: "continue_final_message is not compatible with return_assistant_tokens_mask."
    let got = render(
        &json!({"model": "qwen3", "messages": chat(), "chat_template": TAGGED,
        "return_assistant_tokens_mask": true, "continue_final_message": true,
        "add_generation_prompt": false}),
    );
    assert_error(
        &got,
        400,
        "not compatible with return_assistant_tokens_mask",
        Some("return_assistant_tokens_mask"),
    );
    // A bridged prompt is not the template's text the mask labels.
    let got = render(&json!({"model": "qwen3", "messages": chat(),
        "return_assistant_tokens_mask": true,
        "continue_from": {"prompt_token_ids": [1, 2], "output_token_ids": [3]}}));
    assert_error(
        &got,
        400,
        "cannot be used with continue_from",
        Some("return_assistant_tokens_mask"),
    );
    // Not a boolean.
    let got = render(&json!({"model": "qwen3", "messages": chat(),
        "return_assistant_tokens_mask": "yes"}));
    assert_eq!(got.0, 400, "{:?}", got.1);
    assert_eq!(got.1["error"]["param"], "return_assistant_tokens_mask");
}
