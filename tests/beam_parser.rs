//! `--reasoning-parser beam` / `--tool-call-parser beam` end to end, on a server on loopback:
//! the qwen3 fixture with a Beam-style `response_template` of the beam goldens
//! (`fixtures/goldens/beam_tags.jsonl.gz`, `beam_json`: an answer with its own opener, calls
//! named by their opener with JSON arguments) in a copy of its `tokenizer_config.json`. The
//! render puts vLLM's structural tag in `sampling_params.structured_outputs` (byte-equal to
//! the golden vLLM made for the same prompt and tools), refuses what vLLM refuses, and the
//! derender reads output as `hf` does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{assert_error, fixtures, gz_jsonl, post_json, start_server};
use llm_render::cli::ParserArgs;
use llm_render::derender::DerenderConfig;
use llm_render::model::{LoadOptions, Model, ModelRegistry};
use llm_render::render::RenderOptions;
use llm_render::server::ServerConfig;
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

/// The qwen3 fixture with the template in its `tokenizer_config.json`.
fn load(name: &str, template: &Value) -> Model {
    let src = fixtures().join("models/qwen3");
    let dir = std::env::temp_dir().join(format!("llm-render-beam-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    let path = dir.join("tokenizer_config.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["response_template"] = template.clone();
    std::fs::write(&path, config.to_string()).unwrap();
    let model = Model::load_dir(name, &dir, &LoadOptions::default()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    model
}

fn parser_args(reasoning: &str, tools: &str) -> ParserArgs {
    ParserArgs {
        reasoning_parser: reasoning.into(),
        tool_call_parser: tools.into(),
        derender_state_key: None,
        derender_state_cache: 0,
        max_logprobs: 20,
        derender_replay_state: false,
    }
}

/// A server with `--reasoning-parser beam --tool-call-parser beam`, as `serve` configures one.
fn server() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let args = parser_args("beam", "beam");
        args.check().unwrap();
        let loaded = load("qwen3", template());
        args.check_model(&loaded).unwrap();
        let (reasoning_parser, tool_call_parser) = args.settings();
        let config = ServerConfig {
            render: RenderOptions {
                reasoning_parser,
                tool_call_parser,
                ..Default::default()
            },
            derender: DerenderConfig {
                ..args.derender_config()
            },
            ..Default::default()
        };
        start_server(ModelRegistry::new(vec![loaded]).unwrap(), config)
    })
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
