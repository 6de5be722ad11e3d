//! `--reasoning-parser beam` / `--tool-call-parser beam` end to end, on a server on loopback:
//! the qwen3 fixture with a Beam-style `response_template` of the beam goldens
//! (`fixtures/goldens/beam_tags.jsonl.gz`, `beam_json`: an answer with its own opener, calls
//! named by their opener with JSON arguments) in a copy of its `tokenizer_config.json`. The
//! render puts vLLM's structural tag in `sampling_params.structured_outputs` (byte-equal to
//! the golden vLLM made for the same prompt and tools), refuses what vLLM refuses, and the
//! derender reads output as `hf` does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::response_template::{load, parser_args};
use common::{assert_error, gz_jsonl, post_json};
use llm_render::model::Model;
use serde_json::{json, Value};
use std::sync::OnceLock;

const ANCHOR: &str = "<|im_start|>assistant\n";

fn goldens() -> &'static [Value] {
    static G: OnceLock<Vec<Value>> = OnceLock::new();
    G.get_or_init(|| gz_jsonl("goldens/beam_tags.jsonl.gz"))
}

/// The golden case `id` (vLLM's tag or refusal for a prompt ending at the anchor).
fn golden(id: &str) -> &'static Value {
    goldens()
        .iter()
        .find(|g| g["id"] == id)
        .unwrap_or_else(|| panic!("no golden {id}"))
}

fn template() -> &'static Value {
    &goldens()
        .iter()
        .find(|g| g["template"] == "beam_json" && g.get("spec").is_some())
        .expect("beam_json")["spec"]
}

/// A server with `--reasoning-parser beam --tool-call-parser beam`, as `serve` configures one.
fn server() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| common::response_template::server("beam", load("qwen3", template()), |_| {}))
}

/// The chat request of a golden case, for the server's model.
fn chat(case: &Value) -> Value {
    let mut req = case["request"].clone();
    req["model"] = json!("qwen3");
    req
}

fn render(req: &Value) -> (u16, Value) {
    post_json(&format!("{}/v1/chat/completions/render", server()), req)
}

/// vLLM's tag for the golden `id`, given the rendered prompt ends at the anchor.
fn tag_of(out: &Value) -> &Value {
    &out["sampling_params"]["structured_outputs"]["structural_tag"]
}

#[test]
fn render_gives_vllms_tag() {
    for id in [
        "beam_json/both/one/absent/none/None/start",
        "beam_json/both/none/absent/none/None/start",
        "beam_json/both/several/required/none/None/start",
        "beam_json/both/strict_mixed/named/none/None/start",
        "beam_json/both/strict_one/single/none/None/start",
        "beam_json/both/one/none/json_schema/None/start",
        "beam_json/both/one/absent/json_object/None/start",
    ] {
        let case = golden(id);
        let (status, out) = render(&chat(case));
        assert_eq!(status, 200, "{id}: {out}");
        let text = out["prompt"].as_str().unwrap_or_default().to_string();
        let prompt: Vec<u32> = serde_json::from_value(out["token_ids"].clone()).unwrap();
        let decoded = server_model().decode(&prompt, false).unwrap();
        assert!(decoded.ends_with(ANCHOR), "{id}: {text}");
        assert_eq!(tag_of(&out), &case["tag"], "{id}");
        let so = &out["sampling_params"]["structured_outputs"];
        assert_eq!(
            so["json"],
            Value::Null,
            "{id}: the request's constraint is replaced"
        );
        // From the message start the tag covers the reasoning (`_grammar_from_parser`).
        assert_eq!(out["reasoning_ended"], true, "{id}");
        assert_eq!(out["sampling_params"]["skip_special_tokens"], false);
        assert_eq!(
            out["sampling_params"]["spaces_between_special_tokens"],
            false
        );
    }
}

fn server_model() -> &'static Model {
    static M: OnceLock<Model> = OnceLock::new();
    M.get_or_init(|| load("qwen3-local", template()))
}

#[test]
fn render_refuses_as_vllm() {
    for id in [
        "beam_json/both/bad_name/absent/none/None/start",
        "beam_json/both/strict_bad_name/required/none/None/start",
    ] {
        let case = golden(id);
        let got = render(&chat(case));
        assert_error(
            &got,
            400,
            case["error"].as_str().unwrap(),
            case["param"].as_str(),
        );
    }
    // A schema whose XGrammar verdict llm-render does not know: refused, not guessed.
    let case = golden("beam_json/both/xg_unknown/absent/none/None/start");
    let got = render(&chat(case));
    assert_error(&got, 400, "llm-render cannot tell", Some("tools"));
}

#[test]
fn thinking_off_closes_reasoning_in_the_prompt() {
    // Qwen3's template writes an empty <think></think>: not the message start, reasoning over.
    let case = golden("beam_json/both/one/absent/none/None/start");
    let mut req = chat(case);
    req["chat_template_kwargs"] = json!({"enable_thinking": false});
    let (status, out) = render(&req);
    assert_eq!(status, 200, "{out}");
    let tag = tag_of(&out).as_str().unwrap();
    assert!(tag.starts_with("{\"type\": \"structural_tag\""), "{tag}");
    assert_ne!(tag_of(&out), &case["tag"]);
    assert_eq!(out["reasoning_ended"], true);
}

#[test]
fn responses_render_gets_the_same_tag() {
    let case = golden("beam_json/both/one/absent/none/None/start");
    let f = &case["request"]["tools"][0]["function"];
    let req = json!({"model": "qwen3", "input": "hi", "tools": [{"type": "function",
        "name": f["name"], "description": f["description"], "parameters": f["parameters"]}]});
    let (status, out) = post_json(&format!("{}/v1/responses/render", server()), &req);
    assert_eq!(status, 200, "{out}");
    assert_eq!(tag_of(&out), &case["tag"], "{out}");
}

#[test]
fn derender_parses_as_hf() {
    let case = golden("beam_json/both/one/absent/none/None/start");
    let (_, out) = render(&chat(case));
    let prompt: Vec<u32> = serde_json::from_value(out["token_ids"].clone()).unwrap();
    let text = "<think>sunny?</think><tool_call>get_weather{\"city\": \"Paris\"}</tool_call>";
    let ids = server_model().encode(text, false).unwrap();
    let (status, body) = post_json(
        &format!("{}/v1/chat/completions/derender", server()),
        &json!({"stream": false, "model": "qwen3", "prompt_token_ids": prompt,
            "generate_response": {"request_id": "chatcmpl-beam", "choices": [
                {"index": 0, "token_ids": ids, "finish_reason": "stop"}]},
            "chat_request": chat(case)}),
    );
    assert_eq!(status, 200, "{body}");
    let m = &body["choices"][0]["message"];
    assert_eq!(m["reasoning_content"], "sunny?", "{body}");
    let call = &m["tool_calls"][0]["function"];
    assert_eq!(call["name"], "get_weather", "{body}");
    assert_eq!(call["arguments"], "{\"city\": \"Paris\"}", "{body}");
}

#[test]
fn startup_pairs_beam_as_vllm() {
    assert!(parser_args("beam", "hf").check().is_err());
    assert!(parser_args("beam", "hermes").check().is_err());
    parser_args("beam", "none")
        .check_model(server_model())
        .unwrap();
    let mut no_tools = template().clone();
    no_tools["fields"]
        .as_object_mut()
        .unwrap()
        .remove("tool_calls");
    let m = load("notools", &no_tools);
    let err = parser_args("none", "beam").check_model(&m).unwrap_err();
    assert!(
        err.to_string().contains(
            "--tool-call-parser beam requires a response_template with a tool_calls field"
        ),
        "{err}"
    );
}
