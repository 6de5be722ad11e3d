//! Sets `LLM_RENDER_GIT_SHA` for the build-info metric and `--version`: the commit checked
//! out (`git rev-parse`), or `LLM_RENDER_GIT_SHA` from the build's environment (a Docker
//! build without `.git`), else `unknown`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=LLM_RENDER_GIT_SHA");
    println!("cargo:rerun-if-changed=build.rs");
    let sha = match std::env::var("LLM_RENDER_GIT_SHA") {
        Ok(sha) if !sha.is_empty() => sha,
        _ => git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into()),
    };
    println!("cargo:rustc-env=LLM_RENDER_GIT_SHA={sha}");
    // A new commit moves HEAD, or the branch it names; in a worktree these live outside
    // `.git/`, so git says where.
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    for file in ["HEAD", "packed-refs"].into_iter().chain(branch.as_deref()) {
        if let Some(path) = git(&["rev-parse", "--git-path", file]) {
            if std::path::Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
}
