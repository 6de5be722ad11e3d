//! How `serve` is configured: every flag as an environment variable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use clap::CommandFactory;
use common::process::{command, exchange, ServeProcess};
use std::path::PathBuf;

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
