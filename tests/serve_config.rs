//! How `serve` is configured: every flag as an environment variable, and `--model` as a
//! Hugging Face Hub id from the local cache.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use clap::CommandFactory;
use common::process::{command, exchange, ServeProcess};
use std::path::{Path, PathBuf};
use std::process::Output;

/// `LLM_RENDER_` and the flag's name in upper case, `-` as `_`; the one exception keeps
/// its older name.
fn env_name(flag: &str) -> String {
    match flag {
        "derender-state-key" => "LLM_RENDER_STATE_KEY".into(),
        _ => format!("LLM_RENDER_{}", flag.to_uppercase().replace('-', "_")),
    }
}

#[test]
fn every_serve_flag_has_its_environment_variable() {
    let cli = llm_render::cli::Cli::command();
    let serve = cli.find_subcommand("serve").expect("serve");
    let mut checked = 0;
    for arg in serve.get_arguments() {
        let Some(flag) = arg.get_long() else { continue };
        if matches!(flag, "help" | "version") {
            continue;
        }
        let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
        assert_eq!(env, Some(env_name(flag)), "--{flag}");
        checked += 1;
    }
    assert!(checked > 40, "{checked} flags");
}

#[test]
fn help_names_the_variables_and_hides_the_secret() {
    let out = command(
        &["serve", "--help"],
        &[
            ("LLM_RENDER_STATE_KEY", "hunter2"),
            ("LLM_RENDER_PORT", "9123"),
        ],
    )
    .output()
    .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for shown in [
        "[env: LLM_RENDER_MODEL=]",
        "[env: LLM_RENDER_NO_FAST_TOKENIZER=]",
        "[env: LLM_RENDER_PORT=9123]",
        "[env: LLM_RENDER_STATE_KEY]",
    ] {
        assert!(help.contains(shown), "{shown} not in:\n{help}");
    }
    assert!(!help.contains("hunter2"), "{help}");
}

fn fixture(name: &str) -> PathBuf {
    common::fixtures().join("models").join(name)
}

/// Flags from the environment: a list, a number, a boolean; the command line wins, and an
/// empty variable counts as unset.
#[test]
fn flags_come_from_the_environment() {
    let models = format!(
        "a={},b={}",
        fixture("qwen3").display(),
        fixture("llama3_1").display()
    );
    let server = ServeProcess::start(
        &["--max-body-bytes", "100000"],
        &[
            ("LLM_RENDER_MODEL", &models),
            ("LLM_RENDER_MAX_BODY_BYTES", "100"),
            ("LLM_RENDER_MAX_CONCURRENCY", "7"),
            ("LLM_RENDER_NO_FAST_TOKENIZER", "yes"),
            ("LLM_RENDER_ENGINE", ""),
        ],
    );
    let (status, models) = exchange(&server.addr, "GET", "/v1/models", "").unwrap();
    assert_eq!(status, 200);
    assert!(
        models.contains(r#""id":"a""#) && models.contains(r#""id":"b""#),
        "{models}"
    );
    // 100 bytes from the environment, 100000 from the command line: the command line's.
    let body = format!(r#"{{"model":"a","prompt":"{}"}}"#, "x".repeat(200));
    let (status, _) = exchange(&server.addr, "POST", "/v1/completions/render", &body).unwrap();
    assert_eq!(status, 200);
    assert!(
        server
            .wait_for_log("disabled by --no-fast-tokenizer", std::time::Duration::ZERO)
            .is_some(),
        "{:?}",
        server.log()
    );
}

/// A fake Hub cache holding the Qwen3 fixture as `org/tiny`, with `refs/main` or without.
fn hub_cache(with_ref: bool) -> PathBuf {
    let root = std::env::temp_dir().join(format!(
        "llm-render-hub-test-{}-{with_ref}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&root);
    let repo = root.join("hub").join("models--org--tiny");
    let snapshot = repo.join("snapshots").join("0123abcd");
    std::fs::create_dir_all(&snapshot).unwrap();
    for file in std::fs::read_dir(fixture("qwen3")).unwrap() {
        let file = file.unwrap().path();
        std::fs::copy(&file, snapshot.join(file.file_name().unwrap())).unwrap();
    }
    if with_ref {
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs").join("main"), "0123abcd").unwrap();
    }
    root
}

/// `llm-render render --model SPEC` of a one-message chat, run in `cwd`.
fn render(spec: &str, env: &[(&str, &str)], cwd: &Path) -> Output {
    use std::io::Write;
    let mut child = command(&["render", "--model", spec], env)
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"messages": [{"role": "user", "content": "Hi"}]}"#)
        .unwrap();
    child.wait_with_output().unwrap()
}

fn served_model(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["model"].as_str().unwrap().to_string()
}

#[test]
fn hub_ids_resolve_offline_from_the_local_cache() {
    let cache = hub_cache(true);
    let hub = cache.join("hub");
    let tmp = std::env::temp_dir();
    // $HF_HUB_CACHE, named by the id.
    let out = render("org/tiny", &[("HF_HUB_CACHE", hub.to_str().unwrap())], &tmp);
    assert_eq!(served_model(&out), "org/tiny");
    // $HF_HOME/hub, named by NAME=.
    let home = [("HF_HUB_CACHE", ""), ("HF_HOME", cache.to_str().unwrap())];
    assert_eq!(served_model(&render("q=org/tiny", &home, &tmp)), "q");
    // Without refs/main, the only snapshot.
    let no_ref = hub_cache(false);
    let hub = no_ref.join("hub");
    let out = render("org/tiny", &[("HF_HUB_CACHE", hub.to_str().unwrap())], &tmp);
    assert_eq!(served_model(&out), "org/tiny");
    // A folder of that name wins over the cache: named after the folder.
    let cwd = cache.join("cwd");
    std::fs::create_dir_all(cwd.join("org")).unwrap();
    std::fs::create_dir_all(cwd.join("org/tiny")).unwrap();
    for file in std::fs::read_dir(fixture("llama3_1")).unwrap() {
        let file = file.unwrap().path();
        std::fs::copy(&file, cwd.join("org/tiny").join(file.file_name().unwrap())).unwrap();
    }
    let hub = cache.join("hub");
    let out = render("org/tiny", &[("HF_HUB_CACHE", hub.to_str().unwrap())], &cwd);
    assert_eq!(served_model(&out), "tiny");
    let _ = std::fs::remove_dir_all(&cache);
    let _ = std::fs::remove_dir_all(&no_ref);
}
