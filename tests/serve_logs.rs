//! What operators read off a running `serve`: logs without colour codes off a terminal,
//! JSON logs with the fields at the top level, the access log, the build-info metric, and
//! liveness beside readiness.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::process::{exchange, ServeProcess};
use serde_json::Value;
use std::time::Duration;

const RENDER: &str = r#"{"model":"qwen3","prompt":"Hello"}"#;

#[test]
fn text_logs_off_a_terminal_have_no_colour_codes() {
    let server = ServeProcess::start(&[], &[]);
    let log = server.log();
    assert!(log.iter().any(|l| l.contains("loaded model")), "{log:?}");
    assert!(log.iter().all(|l| !l.contains('\u{1b}')), "{log:?}");
}

/// `--log-format json --access-log`: every line one JSON object, the event's fields at the
/// top level; the access line has the request's method, path, model, status, duration and
/// sizes.
#[test]
fn json_logs_and_the_access_log() {
    let server = ServeProcess::start(&["--log-format", "json", "--access-log"], &[]);
    let (status, _) = exchange(&server.addr, "POST", "/v1/completions/render", RENDER).unwrap();
    assert_eq!(status, 200);
    let (status, _) = exchange(&server.addr, "GET", "/nope", "").unwrap();
    assert_eq!(status, 404);
    server
        .wait_for_log(r#""path":"/nope""#, Duration::from_secs(10))
        .expect("the 404's access line");
    let lines: Vec<Value> = server
        .log()
        .iter()
        .map(|l| {
            assert!(!l.contains('\u{1b}'), "{l}");
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))
        })
        .collect();
    let listening = lines
        .iter()
        .find(|l| {
            l["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("listening on"))
        })
        .expect("listening line");
    assert_eq!(listening["level"], "INFO");
    assert!(listening["workers"].as_u64().is_some(), "{listening}");
    assert_eq!(listening["version"], env!("CARGO_PKG_VERSION"));
    let access: Vec<&Value> = lines
        .iter()
        .filter(|l| l["target"] == "llm_render::access")
        .collect();
    assert_eq!(access.len(), 2, "{access:?}");
    let render = access[0];
    assert_eq!(render["method"], "POST", "{render}");
    assert_eq!(render["path"], "/v1/completions/render");
    assert_eq!(render["model"], "qwen3", "{render}");
    assert_eq!(render["status"], 200);
    assert_eq!(render["bytes_in"], RENDER.len());
    assert!(render["bytes_out"].as_u64().unwrap() > 100, "{render}");
    assert!(render["duration_ms"].as_f64().unwrap() > 0.0, "{render}");
    assert_eq!(access[1]["status"], 404);
    assert_eq!(access[1]["method"], "GET");
    assert_eq!(access[1]["model"], "-", "no body, no model");
}

#[test]
fn the_access_log_is_off_by_default() {
    let server = ServeProcess::start(&[], &[]);
    let (status, _) = exchange(&server.addr, "POST", "/v1/completions/render", RENDER).unwrap();
    assert_eq!(status, 200);
    let (status, _) = exchange(&server.addr, "GET", "/metrics", "").unwrap();
    assert_eq!(status, 200);
    assert!(
        server
            .log()
            .iter()
            .all(|l| !l.contains("llm_render::access")),
        "{:?}",
        server.log()
    );
}

#[test]
fn build_info_liveness_and_readiness() {
    let server = ServeProcess::start(&[], &[]);
    let (status, metrics) = exchange(&server.addr, "GET", "/metrics", "").unwrap();
    assert_eq!(status, 200);
    let line = metrics
        .lines()
        .find(|l| l.starts_with("llm_render_build_info{"))
        .unwrap_or_else(|| panic!("no build_info in {metrics}"));
    assert!(
        line.contains(&format!("version=\"{}\"", env!("CARGO_PKG_VERSION")))
            && line.contains("git_sha=\"")
            && line.ends_with("} 1"),
        "{line}"
    );
    let (status, live) = exchange(&server.addr, "GET", "/live", "").unwrap();
    assert_eq!(status, 200);
    let body: Value = serde_json::from_str(live.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body, serde_json::json!({"status": "ok"}));
    assert_eq!(exchange(&server.addr, "HEAD", "/live", "").unwrap().0, 200);
    assert_eq!(exchange(&server.addr, "GET", "/health", "").unwrap().0, 200);
    assert_eq!(exchange(&server.addr, "POST", "/live", "").unwrap().0, 405);
}
