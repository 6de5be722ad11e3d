//! Shared helpers for the end-to-end tests: fixture paths, golden files, and real servers
//! on loopback (one runtime thread per server, shared by the tests of one binary).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod engine;
pub mod process;
pub mod response_template;
pub mod sidecar;
pub mod vision;

use llm_render::model::{LoadOptions, Model, ModelRegistry};
use llm_render::server::{self, AppState, ServerConfig};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::OnceLock;

pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Every model the goldens use, loaded from fixtures/models.
pub const GOLDEN_MODELS: [&str; 4] = ["qwen3", "llama3_1", "deepseek_v3", "features"];

pub fn load_models(names: &[&str], opts: &LoadOptions) -> ModelRegistry {
    let models = names
        .iter()
        .map(|n| {
            Model::load_dir(n, &fixtures().join("models").join(n), opts)
                .expect("fixture model loads")
        })
        .collect();
    ModelRegistry::new(models).expect("unique names")
}

/// The golden models, loaded once per test binary.
pub fn golden_registry() -> ModelRegistry {
    static REG: OnceLock<ModelRegistry> = OnceLock::new();
    REG.get_or_init(|| load_models(&GOLDEN_MODELS, &LoadOptions::default()))
        .clone()
}

/// One golden record: a request and either its token IDs or the error transformers raised.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Golden {
    pub id: String,
    pub model: String,
    pub request: serde_json::Value,
    pub expected_token_ids: Option<Vec<u32>>,
    pub expected_error: Option<String>,
}

/// All render goldens: the vendored dev set and our extra cases.
pub fn goldens() -> Vec<Golden> {
    let mut out = Vec::new();
    for dir in ["render", "render_extra"] {
        let mut files: Vec<_> = std::fs::read_dir(fixtures().join("goldens").join(dir))
            .expect("golden dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        for f in files {
            for line in std::fs::read_to_string(&f).expect("golden file").lines() {
                if !line.trim().is_empty() {
                    let mut g: Golden = serde_json::from_str(line).expect("golden line");
                    arguments_as_text(&mut g.request);
                    out.push(g);
                }
            }
        }
    }
    out
}

/// A transformers golden's request as a vLLM client must send it: an assistant tool call's
/// `arguments` that is a JSON object (transformers takes one) becomes its JSON text, which
/// vLLM 0.33 requires (`fixtures/goldens/validation.jsonl`: an object is a 400) and parses
/// back into the same object before the template sees it (`chat_utils`), as ours does.
pub fn arguments_as_text(request: &mut Value) {
    let messages = request.get_mut("messages").and_then(Value::as_array_mut);
    for m in messages.into_iter().flatten() {
        let calls = m.get_mut("tool_calls").and_then(Value::as_array_mut);
        for call in calls.into_iter().flatten() {
            if let Some(args) = call
                .get_mut("function")
                .and_then(|f| f.get_mut("arguments"))
            {
                if !args.is_string() && !args.is_null() {
                    *args = Value::String(args.to_string());
                }
            }
        }
    }
}

/// Starts a real server on 127.0.0.1 with `config` and returns its base URL: the runtime
/// `llm-render serve` runs (one single-threaded runtime per worker, two workers, hyper with
/// the header-read timeout), on its own thread until the test binary exits.
pub fn start_server(models: ModelRegistry, config: ServerConfig) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let state = AppState::new(models, config).unwrap();
    std::thread::spawn(move || {
        server::serve_per_core_until(listener, state, 2, std::future::pending()).unwrap();
    });
    format!("http://{addr}")
}

/// The golden models on a default-config server, shared by the tests of one binary.
pub fn golden_server() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| start_server(golden_registry(), ServerConfig::default()))
}

/// The golden models on a server that takes request templates
/// (`--trust-request-chat-template`), shared by the tests of one binary.
pub fn trusted_template_server() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let config = ServerConfig {
            render: llm_render::render::RenderOptions {
                trust_request_chat_template: true,
                ..Default::default()
            },
            ..ServerConfig::default()
        };
        start_server(golden_registry(), config)
    })
}

pub fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .unwrap()
}

/// Posts an image to the text-only Qwen3 model (whose template reads content as a string).
pub fn start_server_and_post_qwen3_image(url: &str) -> (u16, serde_json::Value) {
    let base = start_server(
        load_models(&["qwen3"], &LoadOptions::default()),
        ServerConfig::default(),
    );
    let body = serde_json::json!({"model": "qwen3", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": url}}]}]});
    let resp = client()
        .post(format!("{base}/v1/chat/completions/render"))
        .json(&body)
        .send()
        .unwrap();
    (resp.status().as_u16(), resp.json().unwrap())
}

/// The vendored image goldens folder.
pub fn image_goldens() -> PathBuf {
    fixtures().join("goldens/images")
}

/// A JSON-lines file under the image goldens folder (`../render_mm/...` reaches its sibling).
pub fn image_jsonl(name: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(image_goldens().join(name))
        .expect("image golden file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("golden line"))
        .collect()
}

/// A JSON-lines golden file under `fixtures/` (`goldens/render_harmony/chat.jsonl`).
pub fn jsonl(rel: &str) -> Vec<Value> {
    std::fs::read_to_string(fixtures().join(rel))
        .expect("golden file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("golden line"))
        .collect()
}

/// A gzipped JSON-lines golden file under `fixtures/` (`goldens/hashes/vllm.jsonl.gz`).
pub fn gz_jsonl(rel: &str) -> Vec<Value> {
    use std::io::Read;
    let gz = std::fs::read(fixtures().join(rel)).expect("golden file");
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz.as_slice())
        .read_to_string(&mut text)
        .expect("gzipped UTF-8");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("golden line"))
        .collect()
}

/// Deterministic test data (splitmix64): only reproducibility matters, not quality.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn pick<'a, T: AsRef<str>>(&mut self, xs: &'a [T]) -> &'a str {
        xs[self.below(xs.len())].as_ref()
    }
}

// Requests and error checks of the HTTP tests.

pub fn post_body(url: &str, body: impl Into<reqwest::blocking::Body>) -> (u16, Value) {
    let resp = client()
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

pub fn post_json(url: &str, body: &Value) -> (u16, Value) {
    post_body(url, body.to_string())
}

/// Asserts an OpenAI-shaped error with `status`, a message containing `needle`, and `param`.
pub fn assert_error(got: &(u16, Value), status: u16, needle: &str, param: Option<&str>) {
    let (code, body) = got;
    assert_eq!(*code, status, "{body}");
    let err = &body["error"];
    assert_eq!(err["code"], status, "{body}");
    assert!(err["type"].is_string(), "{body}");
    let msg = err["message"].as_str().unwrap_or_default();
    assert!(msg.contains(needle), "message {msg:?} lacks {needle:?}");
    if let Some(p) = param {
        assert_eq!(err["param"], p, "{body}");
    }
}

pub fn chat_url(base: &str) -> String {
    format!("{base}/v1/chat/completions/render")
}

pub fn hello(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "Hi there!"}]})
}

/// A request-supplied template that loops `n`×`n` times.
pub fn slow_template(n: u32) -> String {
    format!("{{% for i in range({n}) %}}{{% for j in range({n}) %}}{{% endfor %}}{{% endfor %}}x")
}

pub fn qwen3_only() -> ModelRegistry {
    load_models(&["qwen3"], &LoadOptions::default())
}

/// A server on `models` whose derender runs the named tool and reasoning parsers (`none`,
/// `auto` or a vLLM name), signing stream states with a fixed key.
pub fn derender_server(models: ModelRegistry, tools: &str, reasoning: &str) -> String {
    let config = ServerConfig {
        derender: llm_render::derender::DerenderConfig {
            tool_call_parser: tools.into(),
            reasoning_parser: reasoning.into(),
            states: std::sync::Arc::new(llm_render::derender::StateCodec::new(
                Some("test key"),
                64,
            )),
            ..Default::default()
        },
        ..Default::default()
    };
    start_server(models, config)
}

/// POSTs `body` to `url` and returns the JSON answer, asserting a 200.
pub fn post_ok(url: &str, body: &Value) -> Value {
    let (status, out) = post_json(url, body);
    assert_eq!(status, 200, "{out}");
    out
}
