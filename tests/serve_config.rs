//! How `serve` is configured and how it fails to start: every flag as an environment
//! variable, `--model` as a Hugging Face Hub id from the local cache, errors that say what
//! is wrong once with the right exit code, and the warnings a model's gaps get.
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
        "[env: LLM_RENDER_DRAIN_DELAY_SECS=]",
        "[env: LLM_RENDER_ACCESS_LOG=]",
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
            ("LLM_RENDER_ACCESS_LOG", "1"),
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
            .wait_for_log("llm_render::access", std::time::Duration::from_secs(10))
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

/// `serve ARGS` that fails to start: its exit code and standard error.
fn serve_fails(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let out = command(&[&["serve"][..], args].concat(), env)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_model_that_is_not_there_says_so_and_exits_1() {
    let cache = hub_cache(true);
    let hub = cache.join("hub");
    let hub_env = [("HF_HUB_CACHE", hub.to_str().unwrap())];
    let (code, err) = serve_fails(&["--port", "0", "--model", "org/missing"], &hub_env);
    assert_eq!(code, Some(1), "{err}");
    for needle in [
        "org/missing does not exist as a folder",
        "not in the Hugging Face cache",
        hub.to_str().unwrap(),
        "huggingface-cli download org/missing",
    ] {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
    let (code, err) = serve_fails(&["--port", "0", "--model", "/no/such/model"], &hub_env);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("/no/such/model does not exist"), "{err}");
    // A file: said once, not "Not a directory (os error 20): Not a directory (os error 20)".
    let file = fixture("qwen3").join("config.json");
    let (code, err) = serve_fails(&["--port", "0", "--model", file.to_str().unwrap()], &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("is not a folder"), "{err}");
    let _ = std::fs::remove_dir_all(&cache);
}

/// The port is bound before anything loads: in use, it is the error (not the missing
/// model), named with its address and the OS's reason, once.
#[test]
fn a_port_in_use_fails_before_the_models_load() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let (code, err) = serve_fails(
        &[
            "--host",
            "127.0.0.1",
            "--port",
            &port,
            "--model",
            "/no/such/model",
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{err}"
    );
    assert!(!err.contains("does not exist"), "loaded first: {err}");
    assert_eq!(err.matches("in use").count(), 1, "{err}");
}

#[test]
fn bad_drain_flags_are_usage_errors() {
    for (args, flag) in [
        (&["--drain-delay-secs", "30"][..], "--drain-delay-secs"),
        (&["--drain-timeout-secs=-1"][..], "--drain-timeout-secs"),
    ] {
        let (code, err) = serve_fails(&[&["--port", "0"][..], args].concat(), &[]);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

/// A model without a chat template, and one without EOS ids: a warning line each, naming
/// the model.
#[test]
fn a_models_gaps_are_warned_of_at_startup() {
    let spec = |name: &str| format!("{name}={}", fixture(name).display());
    let (metaspace, wordlevel) = (spec("metaspace"), spec("wordlevel"));
    let server = ServeProcess::start(&["--model", &metaspace, "--model", &wordlevel], &[]);
    let log = server.log();
    let warned = |needle: &str, model: &str| {
        log.iter()
            .filter(|l| l.contains("WARN") && l.contains(needle))
            .any(|l| l.contains(&format!("model={model}")))
    };
    assert!(warned("no chat template", "metaspace"), "{log:#?}");
    assert!(!warned("no chat template", "wordlevel"), "{log:#?}");
    assert!(warned("no EOS token ids", "wordlevel"), "{log:#?}");
    assert!(!warned("no EOS token ids", "metaspace"), "{log:#?}");
}
