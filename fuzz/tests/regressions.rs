//! Every fuzz input kept in the repository, replayed through its target: the seeds
//! (`fuzz/seeds/`), the corpus a campaign left after `afl-cmin` (`fuzz/corpus/`) and the
//! reproducer of every crash or hang found (`fuzz/regressions/`, named for what it found).
//! A target panics on a finding, so this test fails on any of them coming back.

use std::path::PathBuf;

fn files(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(kind)
        .join(target);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.retain(|p| p.is_file() && !p.ends_with("README.md"));
    out.sort();
    out
}

#[test]
fn every_kept_input_passes_its_target() {
    for (target, run) in llm_render_fuzz::TARGETS {
        let mut n = 0;
        for kind in ["seeds", "corpus", "regressions"] {
            for path in files(kind, target) {
                let Ok(bytes) = std::fs::read(&path) else {
                    panic!("{} unreadable", path.display())
                };
                let start = std::time::Instant::now();
                let result = std::panic::catch_unwind(|| run(&bytes));
                let took = start.elapsed();
                if took.as_millis() >= 500 {
                    println!("{target}: {} took {took:.1?}", path.display());
                }
                if let Err(e) = result {
                    let why = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    panic!("{target}: {} fails: {why}", path.display());
                }
                n += 1;
            }
        }
        assert!(n > 0, "{target}: no seeds (run the fuzz-seeds binary)");
        println!("{target}: {n} inputs");
    }
}
