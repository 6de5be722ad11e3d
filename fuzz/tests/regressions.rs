//! Every fuzz input kept in the repository, replayed through its target: the seeds
//! (`fuzz/seeds/`), the corpus the last campaign left after `afl-cmin`
//! (`fuzz/corpus/<target>.gz`, packed by `scripts/fuzz_corpus.py`) and the reproducer of
//! every crash or hang found (`fuzz/regressions/`, named for what it found). A target
//! panics on a finding, so this test fails on any of them coming back.

use std::io::Read;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The inputs of `fuzz/corpus/<target>.gz`: each a 4-byte little-endian length, then its
/// bytes.
fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let path = root().join("corpus").join(format!("{target}.gz"));
    let Ok(file) = std::fs::File::open(&path) else {
        return Vec::new();
    };
    let mut blob = Vec::new();
    if let Err(e) = flate2::read::GzDecoder::new(file).read_to_end(&mut blob) {
        panic!("{}: {e}", path.display());
    }
    let mut out = Vec::new();
    let mut rest = blob.as_slice();
    while let Some((len, tail)) = rest.split_first_chunk::<4>() {
        let len = u32::from_le_bytes(*len) as usize;
        let Some((input, tail)) = tail.split_at_checked(len) else {
            panic!("{}: truncated", path.display())
        };
        out.push((format!("{}#{}", path.display(), out.len()), input.to_vec()));
        rest = tail;
    }
    out
}

fn files(kind: &str, target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = root().join(kind).join(target);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.retain(|p| p.is_file() && !p.ends_with("README.md"));
    out.sort();
    out.into_iter()
        .map(|p| match std::fs::read(&p) {
            Ok(bytes) => (p.display().to_string(), bytes),
            Err(e) => panic!("{}: {e}", p.display()),
        })
        .collect()
}

#[test]
fn every_kept_input_passes_its_target() {
    for (target, run) in llm_render_fuzz::TARGETS {
        let mut n = 0;
        let inputs = files("seeds", target)
            .into_iter()
            .chain(corpus(target))
            .chain(files("regressions", target));
        for (name, bytes) in inputs {
            let start = std::time::Instant::now();
            let result = std::panic::catch_unwind(|| run(&bytes));
            let took = start.elapsed();
            if took.as_millis() >= 500 {
                println!("{target}: {name} took {took:.1?}");
            }
            if let Err(e) = result {
                let why = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!("{target}: {name} fails: {why}");
            }
            n += 1;
        }
        assert!(n > 0, "{target}: no seeds (run the fuzz-seeds binary)");
        println!("{target}: {n} inputs");
    }
}
