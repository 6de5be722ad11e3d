//! A Qwen2.5-VL server for the multimodal tests, and image chat requests.

use super::{client, fixtures, start_server};
use serde_json::Value;

pub const VL_NAME: &str = "Qwen/Qwen2.5-VL-7B-Instruct";

/// A server on the Qwen2.5-VL fixture, served under its Hub id: vLLM hashes images with
/// the `--model` value, so serving under that name reproduces its mm hashes.
pub fn vl_server(opts: llm_render::render::RenderOptions) -> String {
    vl_server_named(VL_NAME, opts)
}

pub fn vl_server_named(name: &str, opts: llm_render::render::RenderOptions) -> String {
    use llm_render::model::{LoadOptions, Model, ModelRegistry};
    let m = Model::load_dir(
        name,
        &fixtures().join("models/qwen2_5_vl"),
        &LoadOptions::default(),
    )
    .unwrap();
    let config = llm_render::server::ServerConfig {
        render: opts,
        ..Default::default()
    };
    start_server(ModelRegistry::new(vec![m]).unwrap(), config)
}

pub fn post(base: &str, body: &Value) -> (u16, Value) {
    let resp = client()
        .post(format!("{base}/v1/chat/completions/render"))
        .json(body)
        .send()
        .unwrap();
    (resp.status().as_u16(), resp.json().unwrap())
}

pub fn data_url(mime: &str, bytes: &[u8]) -> String {
    use base64::Engine;
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

pub fn image_request(urls: &[String]) -> Value {
    let mut parts: Vec<Value> = urls
        .iter()
        .map(|u| serde_json::json!({"type": "image_url", "image_url": {"url": u}}))
        .collect();
    parts.push(serde_json::json!({"type": "text", "text": "What is this?"}));
    serde_json::json!({"model": VL_NAME, "messages": [{"role": "user", "content": parts}]})
}
