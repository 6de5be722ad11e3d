//! Writes the seed corpora of the fuzz targets into `fuzz/seeds/<target>/` from the
//! repository's fixtures: golden requests and a request for every route (`request`), the
//! states real streams return (`state`), every parser golden's text (`parsers`), the
//! fixture models' chat templates and a few hostile ones (`template`), and the small fixture
//! images (`image`). Run it after the fixtures change: `cargo run -p llm-render-fuzz --bin
//! fuzz-seeds`; the seeds are committed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use llm_render_fuzz::server::{fixtures, get};
use llm_render_fuzz::{parsers, request, state};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn out_dir(target: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(target);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes each input once, named by its index and a short label.
fn write_all(target: &str, inputs: Vec<(String, Vec<u8>)>) {
    let dir = out_dir(target);
    let mut seen = BTreeSet::new();
    let mut n = 0;
    for (label, bytes) in inputs {
        if !seen.insert(bytes.clone()) {
            continue;
        }
        let label: String = label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(40)
            .collect();
        std::fs::write(dir.join(format!("{n:04}_{label}")), bytes).unwrap();
        n += 1;
    }
    println!("{target}: {n} seeds");
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn tiny_png() -> String {
    let png = std::fs::read(fixtures().join("goldens/images/tiny_14x14.png")).unwrap();
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    )
}

fn request_seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut add = |route: &str, label: &str, body: &Value| {
        out.push((
            format!("{}_{label}", route.trim_start_matches("/v1/")),
            request::input(route, body.to_string().as_bytes()).unwrap(),
        ));
    };
    // Golden chat requests, every fifth, as Qwen3's.
    let goldens = fixtures().join("goldens/render/qwen3.jsonl");
    for (i, g) in jsonl(&goldens)
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 5 == 0)
    {
        let mut req = g["request"].clone();
        req["model"] = json!("qwen3");
        add("/v1/chat/completions/render", &format!("golden{i}"), &req);
    }
    let tools = json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]);
    let chat = json!({"model": "qwen3", "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"}],
        "tools": tools, "tool_choice": "auto", "max_tokens": 16, "temperature": 0.5,
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}},
        "logprobs": true, "top_logprobs": 2, "stop": ["END"], "n": 1, "seed": 7,
        "chat_template_kwargs": {"enable_thinking": false}, "return_token_offsets": true});
    add("/v1/chat/completions/render", "tools", &chat);
    add(
        "/v1/chat/completions/render",
        "harmony",
        &json!({"model": "gpt-oss", "messages": [{"role": "developer", "content": "Be kind."},
            {"role": "user", "content": "hi"}], "tools": tools, "reasoning_effort": "high"}),
    );
    add(
        "/v1/chat/completions/render",
        "image",
        &json!({"model": "qwen2_5_vl", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": tiny_png()}}, {"type": "text", "text": "What?"}]}]}),
    );
    add(
        "/v1/chat/completions/render",
        "continue",
        &json!({"model": "qwen3", "messages": [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Hel"}], "continue_final_message": true,
            "add_generation_prompt": false}),
    );
    add(
        "/v1/messages/render",
        "tools",
        &json!({"model": "qwen3", "max_tokens": 32, "system": [{"type": "text", "text": "Be brief."}],
            "messages": [{"role": "user", "content": "Weather?"},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                    {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]}],
            "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "auto"}, "thinking": {"type": "enabled", "budget_tokens": 1024}}),
    );
    add(
        "/v1/responses/render",
        "items",
        &json!({"model": "qwen3", "instructions": "Be brief.", "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
            {"type": "function_call_output", "call_id": "c1", "output": "sunny"}],
            "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}],
            "max_output_tokens": 20, "reasoning": {"effort": "low"}}),
    );
    add(
        "/v1/completions/render",
        "prompts",
        &json!({"model": "qwen3", "prompt": ["Once upon", "a time"], "max_tokens": 5, "echo": true,
            "logit_bias": {"11": 5}}),
    );
    add(
        "/v1/completions/render",
        "ids",
        &json!({"model": "qwen3", "prompt": [[1, 2, 3], [151643]], "stop_token_ids": [151645]}),
    );
    add(
        "/tokenize",
        "prompt",
        &json!({"model": "qwen3", "prompt": "Hello 世界 <|im_end|>", "return_token_strs": true}),
    );
    add(
        "/tokenize",
        "messages",
        &json!({"model": "qwen3", "messages": [{"role": "user", "content": "hi"}], "add_generation_prompt": true}),
    );
    add(
        "/detokenize",
        "ids",
        &json!({"model": "qwen3", "tokens": [9707, 220, 99489, 151645]}),
    );
    add(
        "/v1/block_hashes",
        "ids",
        &json!({"model": "qwen3", "token_ids": (0..40).collect::<Vec<u32>>(), "block_size": 16,
            "hash_algo": "sha256_cbor"}),
    );
    let choice =
        |ids: &[u32], finish: Value| json!({"index": 0, "token_ids": ids, "finish_reason": finish});
    let thinking: Vec<u32> = vec![
        151667, 198, 9707, 198, 151668, 271, 151657, 198, 4913, 606, 788, 330, 455, 69364, 497,
        330, 16370, 788, 5212, 8926, 788, 330, 59604, 9207, 532, 151658, 151645,
    ];
    add(
        "/v1/chat/completions/derender",
        "oneshot",
        &json!({"model": "qwen3", "generate_response": {"request_id": "r", "choices": [choice(&thinking, json!("stop"))]},
            "chat_request": {"messages": [{"role": "user", "content": "Weather?"}], "tools": tools},
            "prompt_token_ids": [1, 2, 3]}),
    );
    add(
        "/v1/chat/completions/derender",
        "stream_fields",
        &json!({"model": "qwen3", "stream": true, "stream_state": {"prev_tokens": ["Hello"],
                "prefix_offset": 0, "read_offset": 1, "role_sent": true, "previous_text": "Hello",
                "reasoning_ended": true, "tool_call_ids": [], "prev_tool_call_arr": []},
            "generate_chunk": {"choices": [choice(&thinking[..8], Value::Null)]},
            "chat_request": {"messages": [{"role": "user", "content": "Weather?"}]}}),
    );
    add(
        "/v1/completions/derender",
        "responses",
        &json!({"model": "qwen3", "generate_responses": [{"choices": [choice(&[9707, 11, 1879], json!("length"))]}],
            "prompt_token_ids": [[1, 2]], "completion_request": {"prompt": "x", "logprobs": 1}}),
    );
    add(
        "/v1/messages/derender",
        "oneshot",
        &json!({"model": "qwen3", "generate_response": {"choices": [choice(&thinking, json!("stop"))]},
            "messages_request": {"max_tokens": 64, "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}]}}),
    );
    add(
        "/v1/responses/derender",
        "stream",
        &json!({"model": "qwen3", "stream": true, "stream_state": null,
            "generate_chunk": {"choices": [choice(&thinking[..5], Value::Null)]},
            "responses_request": {"tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]}}),
    );
    out
}

/// The payloads of the signed states real streams return, a few per stream.
fn state_seeds() -> Vec<(String, Vec<u8>)> {
    let server = get();
    let mut out = Vec::new();
    let tok = |model: &str, text: &str| -> Vec<u32> {
        let (_, v) = server.post_json(
            "/tokenize",
            &json!({"model": model, "prompt": text, "add_special_tokens": false}),
        );
        serde_json::from_value(v["tokens"].clone()).unwrap()
    };
    let qwen = tok("qwen3", "<think>\nhm\n</think>\n\nSure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par");
    let harmony = tok("gpt-oss", "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>Hi the");
    let streams = [
        (
            "chat",
            "/v1/chat/completions/derender",
            "chat_request",
            "qwen3",
            &qwen,
        ),
        (
            "completion",
            "/v1/completions/derender",
            "completion_request",
            "qwen3",
            &qwen,
        ),
        (
            "messages",
            "/v1/messages/derender",
            "messages_request",
            "qwen3",
            &qwen,
        ),
        (
            "responses",
            "/v1/responses/derender",
            "responses_request",
            "qwen3",
            &qwen,
        ),
        (
            "harmony",
            "/v1/chat/completions/derender",
            "chat_request",
            "gpt-oss",
            &harmony,
        ),
    ];
    for (label, route, field, model, ids) in streams {
        let original = state::original(field);
        let mut state = Value::Null;
        for (i, id) in ids.iter().enumerate() {
            let mut body = json!({"model": model, "stream": true, "stream_state": state,
                "generate_chunk": {"choices": [{"index": 0, "token_ids": [id]}]}, "prompt_token_ids": [1, 2]});
            body[field] = original.clone();
            let (status, v) = server.post_json(route, &body);
            assert_eq!(status, 200, "{label}: {v}");
            state = v["stream_state"].clone();
            if i % 4 == 3 || i + 1 == ids.len() {
                let token = state["llm_render_state"].as_str().unwrap();
                let payload = token.split('.').nth(1).unwrap();
                out.push((
                    format!("{label}{i}"),
                    URL_SAFE_NO_PAD.decode(payload).unwrap(),
                ));
            }
        }
    }
    out
}

fn parser_seeds() -> Vec<(String, Vec<u8>)> {
    let dir = fixtures().join("goldens/derender");
    let mut out = Vec::new();
    for file in [
        "parser_families.jsonl",
        "tool_parsers_direct.jsonl",
        "tool_parsers.jsonl",
    ] {
        for g in jsonl(&dir.join(file)) {
            let (Some(text), Some(parser)) = (g["text"].as_str(), g["parser"].as_str()) else {
                continue;
            };
            let kind = g["kind"].as_str().unwrap_or("tool");
            let name = if kind == "template" {
                match parsers::hf_name(&g["response_template"]) {
                    Some(name) => name,
                    None => continue,
                }
            } else {
                format!("{kind}:{parser}")
            };
            out.push((name.clone(), parsers::input(&name, text)));
            if let Some(index) = name.strip_prefix("hf:") {
                // vLLM's `beam`: the same parser, and its grammar on the text as the prompt.
                let beam = format!("beam:{index}");
                out.push((beam.clone(), parsers::input(&beam, text)));
            }
        }
    }
    for g in jsonl(&dir.join("harmony.jsonl")) {
        if let Some(text) = g["text"].as_str() {
            out.push(("harmony".into(), parsers::input("harmony", text)));
        }
    }
    for g in jsonl(&dir.join("forced_stream.jsonl")) {
        if let Some(text) = g["text"].as_str() {
            let which = if g["tool_choice"] == "required" {
                "forced:required"
            } else {
                "forced:named"
            };
            out.push((which.into(), parsers::input(which, text)));
        }
    }
    out
}

fn template_seeds() -> Vec<(String, Vec<u8>)> {
    let models = fixtures().join("models");
    let mut out = Vec::new();
    for m in ["qwen3", "deepseek_v3", "features", "qwen2_5_vl", "llama3_1"] {
        let cfg: Value = std::fs::read(models.join(m).join("tokenizer_config.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        if let Some(t) = cfg["chat_template"].as_str() {
            out.push((m.to_string(), t.as_bytes().to_vec()));
        }
        if let Ok(t) = std::fs::read(models.join(m).join("chat_template.jinja")) {
            out.push((m.to_string(), t));
        }
    }
    let hostile = [
        ("doubling", "{% set s = namespace(v='x') %}{% for i in range(64) %}{% set s.v = s.v ~ s.v %}{% endfor %}{{ s.v }}"),
        ("repeat", "{{ 'x' * 1000000000 }}"),
        ("nested_loops", "{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}"),
        ("recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"),
        ("raise", "{{ raise_exception('no') }}"),
        ("messages", "{% for m in messages %}{{ m.role }}: {{ m.content | tojson }}{% if m.tool_calls %}{{ m.tool_calls | tojson(indent=2) }}{% endif %}\n{% endfor %}{% if tools %}{{ tools | tojson }}{% endif %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"),
        ("strftime", "{{ strftime_now('%Y-%m-%d') }}{{ messages[0].content.split(' ') | join('|') }}{{ (messages | last).content[0].text | upper }}"),
    ];
    for (label, t) in hostile {
        out.push((label.to_string(), t.as_bytes().to_vec()));
    }
    out
}

fn image_seeds() -> Vec<(String, Vec<u8>)> {
    let dir = fixtures().join("goldens/images");
    let mut out = Vec::new();
    for name in [
        "tiny_14x14.png",
        "palette_trns_96x64.png",
        "palette_300x200.png",
        "exif_orient6_640x360.jpg",
        "gray_256x192.png",
        "progressive_800x600.jpg",
    ] {
        out.push((name.to_string(), std::fs::read(dir.join(name)).unwrap()));
    }
    out
}

fn main() {
    write_all("request", request_seeds());
    write_all("state", state_seeds());
    write_all("parsers", parser_seeds());
    write_all("template", template_seeds());
    write_all("image", image_seeds());
}
