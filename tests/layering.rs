//! The crate's modules follow a request's path (see `src/lib.rs` and `docs/layout.md`), and
//! each imports only from the layers before it, so there is no import circle between them.
//! This reads every non-test source line under `src/` and checks the `crate::…` paths it
//! names against the allowed edges below. A new edge is a decision: add it here, with the
//! layer it belongs to.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each top-level module and the modules it may import (besides itself).
const ALLOWED: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("thread_scope", &[]),
    ("hashing", &["error"]),
    ("protocol", &["error", "hashing", "thread_scope"]),
    ("tokenize", &[]),
    ("template", &["error", "protocol"]),
    ("media", &[]),
    ("model", &["error", "media", "template", "tokenize"]),
    (
        "render",
        &[
            "error",
            "hashing",
            "media",
            "model",
            "protocol",
            "template",
            "thread_scope",
            "tokenize",
        ],
    ),
    // The sidecar's engine client: speaks the render's `GenerateRequest` and the engine's
    // `GenerateResponse`, nothing of text.
    ("engine", &["protocol"]),
    ("derender", &["error", "model", "protocol"]),
    (
        "server",
        &[
            "derender", "engine", "error", "hashing", "media", "model", "protocol", "render",
            "template", "tokenize",
        ],
    ),
    (
        "cli",
        &[
            "derender", "engine", "error", "hashing", "media", "model", "protocol", "render",
            "server", "template", "tokenize",
        ],
    ),
];

/// The top-level module a file under `src/` belongs to (`None` for `lib.rs` and `main.rs`).
fn module_of(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

/// The modules named by `crate::<module>` in the code of `source`, before its tests.
fn imports(source: &str) -> BTreeSet<String> {
    let code = source.split("#[cfg(test)]").next().unwrap_or_default();
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn modules_import_only_the_layers_before_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 50,
        "found only {} files under src/",
        files.len()
    );
    let mut wrong = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap_or(&file).to_path_buf();
        let Some(module) = module_of(&rel) else {
            continue;
        };
        let Some(may) = allowed.get(module.as_str()) else {
            wrong.push(format!(
                "{}: module `{module}` is not in ALLOWED",
                rel.display()
            ));
            continue;
        };
        let source = std::fs::read_to_string(&file).unwrap_or_default();
        for used in imports(&source) {
            if used != module && !may.contains(&used.as_str()) {
                wrong.push(format!(
                    "{}: `{module}` imports `crate::{used}`",
                    rel.display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layering:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_allowed_edges_have_no_circle() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    // Depth-first search for a back edge.
    fn visit<'a>(
        m: &'a str,
        allowed: &BTreeMap<&'a str, &'a [&'a str]>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<String> {
        if let Some(at) = path.iter().position(|p| *p == m) {
            return Some(format!("{} → {m}", path[at..].join(" → ")));
        }
        if !done.insert(m) {
            return None;
        }
        path.push(m);
        for next in allowed.get(m).copied().unwrap_or_default() {
            if let Some(circle) = visit(next, allowed, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for m in allowed.keys() {
        let circle = visit(m, &allowed, &mut Vec::new(), &mut done);
        assert_eq!(circle, None, "import circle");
    }
}

/// The code of `source` before its tests, without comments.
fn code_of(source: &str) -> String {
    let code = source.split("#[cfg(test)]").next().unwrap_or_default();
    code.lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path segments that follow `prefix` at `rest`: one name, or each item of a
/// `{…}` group.
fn first_segments(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident(rest)];
    };
    let (mut depth, mut items, mut start) = (0usize, Vec::new(), 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(ident(&group[start..i]));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(ident(&group[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// The sub-modules of its own top-level module that a file at `module` (its path, e.g.
/// `["template", "native", "qwen3"]`) names through `crate::`, `super::` or `self::` paths.
fn sibling_units(module: &[String], code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let (mut path, mut after) = if !starts_word {
            (None, rest)
        } else if let Some(r) = rest.strip_prefix("crate::") {
            (Some(Vec::new()), r)
        } else if let Some(r) = rest.strip_prefix("self::") {
            (Some(module.to_vec()), r)
        } else if rest.starts_with("super::") {
            (Some(module.to_vec()), rest)
        } else {
            (None, rest)
        };
        if let Some(p) = path.as_mut() {
            while let Some(r) = after.strip_prefix("super::") {
                p.pop();
                after = r;
            }
            for seg in first_segments(after) {
                let mut full = p.clone();
                full.push(seg);
                // Another sub-module of the same top-level module (not its root's items).
                if full.len() >= 2
                    && full[0] == module[0]
                    && module.len() >= 2
                    && full[1] != module[1]
                {
                    out.insert(full[1].clone());
                }
            }
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    out
}

#[test]
fn sub_modules_have_no_import_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // (top, sub) → the subs of the same top it names.
    let mut edges: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap_or(&file);
        let mut module: Vec<String> = rel
            .iter()
            .filter_map(|c| c.to_str())
            .map(|c| c.strip_suffix(".rs").unwrap_or(c).to_string())
            .collect();
        if module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        if module.len() < 2 {
            continue; // a top-level module's root re-exports its children
        }
        let source = std::fs::read_to_string(&file).unwrap_or_default();
        let units = sibling_units(&module, &code_of(&source));
        edges
            .entry((module[0].clone(), module[1].clone()))
            .or_default()
            .extend(units);
    }
    for ((top, sub), _) in edges.iter() {
        // Is `sub` reachable from itself?
        let mut seen = BTreeSet::new();
        let mut stack: Vec<(String, Vec<String>)> = edges
            .get(&(top.clone(), sub.clone()))
            .into_iter()
            .flatten()
            .map(|n| (n.clone(), vec![sub.clone(), n.clone()]))
            .collect();
        while let Some((at, path)) = stack.pop() {
            assert!(at != *sub, "import circle in `{top}`: {}", path.join(" → "));
            if !seen.insert(at.clone()) {
                continue;
            }
            for next in edges.get(&(top.clone(), at.clone())).into_iter().flatten() {
                let mut p = path.clone();
                p.push(next.clone());
                stack.push((next.clone(), p));
            }
        }
    }
}
