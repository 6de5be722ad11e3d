//! Derender on a Metaspace (SentencePiece-style) vocabulary, as Llama 2, Mistral and Gemma
//! have: decoded alone, an output's first token loses its leading space; vLLM primes its
//! detokenizer with the prompt's last tokens, and so do the derender routes when the request
//! carries `prompt_token_ids`. Goldens from vLLM's own functions
//! (`scripts/gen_metaspace_detok_goldens.py` → `fixtures/goldens/derender/
//! metaspace_detok.jsonl`, on `fixtures/models/metaspace`), chat and completions, one shot
//! and streamed one token per request with the prompt on the first chunk only; and two
//! byte-level cases (Qwen3) whose prompt ends inside a character, where vLLM's length-based
//! slicing drops the character the output completes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{derender_server, fixtures, load_models, post_ok};
use llm_render::model::LoadOptions;
use serde_json::{json, Value};

fn post(base: &str, path: &str, body: &Value) -> Value {
    post_ok(&format!("{base}{path}"), body)
}

fn response(ids: &[u32]) -> Value {
    json!({"request_id": "r", "choices": [{"index": 0, "token_ids": ids, "finish_reason": "length"}]})
}

#[test]
fn the_first_token_keeps_its_leading_space_as_in_vllm() {
    let servers: Vec<(&str, String)> = ["metaspace", "qwen3"]
        .into_iter()
        .map(|m| {
            (
                m,
                derender_server(load_models(&[m], &LoadOptions::default()), "none", "none"),
            )
        })
        .collect();
    let text =
        std::fs::read_to_string(fixtures().join("goldens/derender/metaspace_detok.jsonl")).unwrap();
    let mut cases = 0;
    for line in text.lines() {
        let g: Value = serde_json::from_str(line).unwrap();
        let name = g["model"].as_str().unwrap();
        let base = &servers.iter().find(|(m, _)| *m == name).unwrap().1;
        let (prompt, output) = (&g["prompt_token_ids"], &g["output_token_ids"]);
        let skip = g["skip_special_tokens"].as_bool().unwrap();
        let ids: Vec<u32> = serde_json::from_value(output.clone()).unwrap();
        let chat = json!({"model": name, "messages": [{"role": "user", "content": "x"}],
                          "skip_special_tokens": skip});
        let completion = json!({"model": name, "prompt": "x", "skip_special_tokens": skip});
        for (seeded, want) in [(true, &g["text"]), (false, &g["unseeded_text"])] {
            let prompt = if seeded { prompt.clone() } else { Value::Null };
            let whole = post(
                base,
                "/v1/chat/completions/derender",
                &json!({"model": name,
                "prompt_token_ids": prompt, "generate_response": response(&ids), "chat_request": chat}),
            );
            assert_eq!(whole["choices"][0]["message"]["content"], *want, "{line}");
            let whole = post(
                base,
                "/v1/completions/derender",
                &json!({"model": name,
                "prompt_token_ids": [prompt], "generate_responses": [response(&ids)],
                "completion_request": completion}),
            );
            assert_eq!(whole["choices"][0]["text"], *want, "{line}");
            // Streamed: the prompt comes with the first chunk only; the state carries it.
            let (mut state, mut streamed) = (Value::Null, String::new());
            for (i, id) in ids.iter().enumerate() {
                let mut body = json!({"stream": true, "model": name, "stream_state": state,
                    "generate_chunk": {"request_id": "r", "choices": [{"index": 0, "token_ids": [id],
                        "finish_reason": if i + 1 == ids.len() { json!("length") } else { Value::Null }}]},
                    "chat_request": chat});
                if i == 0 {
                    body["prompt_token_ids"] = prompt.clone();
                }
                let out = post(base, "/v1/chat/completions/derender", &body);
                state = out["stream_state"].clone();
                for c in out["chunk"]["choices"].as_array().into_iter().flatten() {
                    streamed += c["delta"]["content"].as_str().unwrap_or("");
                }
            }
            assert_eq!(streamed, want.as_str().unwrap(), "{line} streamed");
        }
        cases += 1;
    }
    assert_eq!(cases, 16);
}
