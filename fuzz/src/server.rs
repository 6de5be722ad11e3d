//! The in-process server the HTTP targets post to: `llm-render serve`'s own flags and
//! defaults (`llm_render::cli::serve_in_process`), on the fixture models, answered through
//! `llm_render::server::respond` on a single-threaded runtime, without sockets.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use llm_render::model::ModelRegistry;
use llm_render::server::{respond, AppState, ServerConfig};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// The repository's `fixtures/`.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// A server on Qwen3 (hermes tools, qwen3 reasoning), gpt-oss (Harmony) and Qwen2.5-VL
/// (images), trusting request templates so the template engine is reachable, with a fixed
/// stream-state key and no state cache; every other flag at serve's default.
pub struct Server {
    rt: tokio::runtime::Runtime,
    pub state: Arc<AppState>,
}

/// The fixture models and serve's configuration, loaded once. The harnesses call this
/// before AFL++'s fork server starts, so each forked child has them without loading them
/// again; nothing here starts a thread (a forked child would not have it).
///
/// Panics when the fixtures do not load: that is the harness's setup, not a finding.
#[allow(clippy::expect_used)]
pub fn prepare() -> &'static (ModelRegistry, ServerConfig) {
    static PARTS: OnceLock<(ModelRegistry, ServerConfig)> = OnceLock::new();
    PARTS.get_or_init(|| {
        let models = fixtures().join("models");
        let model = |name: &str, dir: &str| format!("{name}={}", models.join(dir).display());
        let flags = [
            "--model".to_string(),
            model("qwen3", "qwen3"),
            "--model".into(),
            model("gpt-oss", "gpt_oss"),
            "--model".into(),
            model("qwen2_5_vl", "qwen2_5_vl"),
            "--trust-request-chat-template".into(),
            "--derender-state-key".into(),
            "fuzz".into(),
            // Every state is decoded from its payload, none taken from the issuing cache.
            "--derender-state-cache".into(),
            "0".into(),
        ];
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        llm_render::cli::serve_in_process(&flags).expect("fixture models load")
    })
}

/// The one server of this process, started on first use (in a forked child: after the
/// fork, with its own timeout thread and runtime).
#[allow(clippy::expect_used)]
pub fn get() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let (models, config) = prepare().clone();
        let state = AppState::new(models, config).expect("server state");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        Server { rt, state }
    })
}

/// A finding: what the server answered that it must not.
fn finding(path: &str, status: u16, body: &[u8], why: &str) -> ! {
    panic!(
        "{path} answered {status}: {why}: {}",
        String::from_utf8_lossy(&body[..body.len().min(2000)])
    )
}

impl Server {
    /// POSTs `body` to `path` and returns the status and the whole answer. A 500 or 502, a
    /// body that does not arrive, or an error that is not OpenAI's error object (`error`
    /// with a string `message` and a `type`) is a finding.
    pub fn post(&self, path: &str, body: Vec<u8>) -> (u16, Bytes) {
        let req = http::Request::post(path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)));
        let Ok(req) = req else {
            panic!("{path}: not a request path")
        };
        let (status, bytes) = self.rt.block_on(async {
            let resp = respond(&self.state, req).await;
            let status = resp.status().as_u16();
            match resp.into_body().collect().await {
                Ok(collected) => (status, collected.to_bytes()),
                Err(e) => finding(path, status, e.to_string().as_bytes(), "body failed"),
            }
        });
        if matches!(status, 500 | 502) {
            finding(path, status, &bytes, "a server error on client input");
        }
        if status >= 400 {
            let err: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let e = &err["error"];
            if !(e["message"].is_string() && e["type"].is_string()) {
                finding(path, status, &bytes, "not OpenAI's error shape");
            }
        }
        (status, bytes)
    }

    /// [`Server::post`] of a JSON value; the answer parsed (`Null` when it is not JSON).
    pub fn post_json(&self, path: &str, body: &Value) -> (u16, Value) {
        let (status, bytes) = self.post(path, body.to_string().into_bytes());
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }
}
