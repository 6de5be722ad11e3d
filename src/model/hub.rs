//! `--model org/repo`: a Hugging Face Hub id, found offline in the local Hub cache, laid out
//! as `huggingface_hub` writes it:
//!
//! ```text
//! <cache>/models--org--repo/refs/main          the commit of `main`
//! <cache>/models--org--repo/snapshots/<commit>/ the files (links into blobs/)
//! ```
//!
//! Nothing is downloaded: `huggingface-cli download` fills the cache, this reads it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The Hub cache folder, as `huggingface_hub` picks it: `$HF_HUB_CACHE`, else
/// `$HUGGINGFACE_HUB_CACHE` (its older name), else `$HF_HOME/hub`, else
/// `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`. Empty variables
/// count as unset. `None` without any of them (no home folder).
pub fn cache_dir() -> Option<PathBuf> {
    cache_dir_from(|name| std::env::var_os(name))
}

/// [`cache_dir`] with the environment read through `var`.
fn cache_dir_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let var = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("HF_HUB_CACHE")
        .or_else(|| var("HUGGINGFACE_HUB_CACHE"))
        .or_else(|| var("HF_HOME").map(|home| home.join("hub")))
        .or_else(|| var("XDG_CACHE_HOME").map(|c| c.join("huggingface").join("hub")))
        .or_else(|| var("HOME").map(|h| h.join(".cache").join("huggingface").join("hub")))
}

/// Whether `id` can name a Hub repository: `org/repo` or `repo`, each part of letters,
/// digits, `-`, `_` and `.`, neither starting nor ending with `-` or `.`, without `--` or
/// `..`, at most 96 characters (`huggingface_hub`'s `validate_repo_id`).
pub fn is_repo_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('/').collect();
    parts.len() <= 2
        && parts.iter().all(|part| {
            !part.is_empty()
                && part.len() <= 96
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                && !part.starts_with(['-', '.'])
                && !part.ends_with(['-', '.'])
                && !part.contains("--")
                && !part.contains("..")
        })
}

/// The snapshot folder of `id` in the cache at `cache`: the one `refs/main` names, or the
/// only one there is when there is no `refs/main`. `Err`: why there is none, in words.
pub fn snapshot(cache: &Path, id: &str) -> Result<PathBuf, String> {
    let repo = cache.join(format!("models--{}", id.replace('/', "--")));
    if !repo.is_dir() {
        return Err(format!("{} has no {}", cache.display(), file_name(&repo)));
    }
    let snapshots = repo.join("snapshots");
    match std::fs::read_to_string(repo.join("refs").join("main")) {
        Ok(commit) => {
            let commit = commit.trim();
            let dir = snapshots.join(commit);
            if commit.is_empty() || !dir.is_dir() {
                return Err(format!(
                    "{}/refs/main names {commit:?}, and {} has no such snapshot",
                    repo.display(),
                    snapshots.display()
                ));
            }
            Ok(dir)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => only_snapshot(&snapshots),
        Err(e) => Err(format!("{}/refs/main: {e}", repo.display())),
    }
}

/// The one folder in `snapshots`, when there is exactly one.
fn only_snapshot(snapshots: &Path) -> Result<PathBuf, String> {
    let entries = match std::fs::read_dir(snapshots) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("{} does not exist", snapshots.display()))
        }
        Err(e) => return Err(format!("{}: {e}", snapshots.display())),
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    match dirs.len() {
        1 => Ok(dirs.remove(0)),
        0 => Err(format!(
            "no refs/main, and {} is empty",
            snapshots.display()
        )),
        n => {
            dirs.sort();
            let names: Vec<String> = dirs.iter().map(|d| file_name(d)).collect();
            Err(format!(
                "no refs/main, and {} has {n} snapshots ({}): give the folder of one",
                snapshots.display(),
                names.join(", ")
            ))
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_ids_follow_huggingface_hubs_rules() {
        for id in [
            "Qwen/Qwen3-0.6B",
            "gpt2",
            "meta-llama/Llama-3.1-8B-Instruct",
            "a_b/c.d",
        ] {
            assert!(is_repo_id(id), "{id}");
        }
        for id in [
            "",
            "/abs/path",
            "a/b/c",
            "./x",
            "x/",
            "-a/b",
            "a/b.",
            "a--b/c",
            "a/b..c",
            "a b/c",
            "org/repo=x",
            "~/models",
        ] {
            assert!(!is_repo_id(id), "{id}");
        }
    }

    #[test]
    fn the_cache_folder_follows_the_variables_in_huggingface_hubs_order() {
        fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
            move |name| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            }
        }
        let all = [
            ("HF_HUB_CACHE", "/hub"),
            ("HUGGINGFACE_HUB_CACHE", "/old"),
            ("HF_HOME", "/hf"),
            ("XDG_CACHE_HOME", "/xdg"),
            ("HOME", "/home/u"),
        ];
        let empty = [("HF_HUB_CACHE", ""), ("HF_HOME", "/hf")];
        let cases: [(&[(&str, &str)], &str); 6] = [
            (&all[..], "/hub"),
            (&all[1..], "/old"),
            (&all[2..], "/hf/hub"),
            (&all[3..], "/xdg/huggingface/hub"),
            (&all[4..], "/home/u/.cache/huggingface/hub"),
            (&empty[..], "/hf/hub"),
        ];
        for (vars, want) in cases {
            assert_eq!(cache_dir_from(env(vars)), Some(PathBuf::from(want)));
        }
        assert_eq!(cache_dir_from(env(&[])), None);
    }

    #[test]
    fn snapshots_are_found_by_refs_main_or_alone() {
        let cache = std::env::temp_dir().join(format!("llm-render-hub-{}", std::process::id()));
        let repo = cache.join("models--org--name");
        let _ = std::fs::remove_dir_all(&cache);
        std::fs::create_dir_all(repo.join("snapshots/aaa")).unwrap();
        // One snapshot, no refs/main: that one.
        assert_eq!(snapshot(&cache, "org/name"), Ok(repo.join("snapshots/aaa")));
        // Two: refs/main picks.
        std::fs::create_dir_all(repo.join("snapshots/bbb")).unwrap();
        let err = snapshot(&cache, "org/name").unwrap_err();
        assert!(err.contains("2 snapshots (aaa, bbb)"), "{err}");
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs/main"), "bbb").unwrap();
        assert_eq!(snapshot(&cache, "org/name"), Ok(repo.join("snapshots/bbb")));
        std::fs::write(repo.join("refs/main"), "ccc\n").unwrap();
        let err = snapshot(&cache, "org/name").unwrap_err();
        assert!(err.contains("names \"ccc\""), "{err}");
        let err = snapshot(&cache, "org/other").unwrap_err();
        assert!(err.contains("has no models--org--other"), "{err}");
        let _ = std::fs::remove_dir_all(&cache);
    }
}
