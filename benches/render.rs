//! Criterion bench: chat render (template + tokenize + GenerateRequest) of the 10,140-token
//! `qwen3/long_9k` golden and the short `qwen3/tools_defined` request, in process.
//! Run: `cargo bench --bench render`. Side by side with transformers:
//! `python3 benches/render_vs_transformers.py`.

use criterion::{criterion_group, criterion_main, Criterion};
use llm_render::model::{LoadOptions, Model};
use llm_render::protocol::{ChatRequest, SamplingFields};
use llm_render::render::{render_chat, RenderOptions};
use std::path::PathBuf;

fn golden_request(id: &str) -> Option<serde_json::Value> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/goldens/render/qwen3.jsonl");
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|g| g["id"] == id)
        .map(|g| g["request"].clone())
}

fn bench(c: &mut Criterion) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/models/qwen3");
    let Ok(model) = Model::load_dir("qwen3", &dir, &LoadOptions::default()) else {
        eprintln!("cannot load fixtures/models/qwen3");
        return;
    };
    let opts = RenderOptions::default();
    for (name, id) in [
        ("render_long_9k", "qwen3/long_9k"),
        ("render_tools_defined", "qwen3/tools_defined"),
    ] {
        let Some(req) = golden_request(id) else {
            eprintln!("golden {id} missing");
            continue;
        };
        let Ok(chat) = serde_json::from_value::<ChatRequest>(req) else {
            continue;
        };
        let sampling = SamplingFields::default();
        c.bench_function(name, |b| {
            b.iter(|| {
                render_chat(&model, &chat, &sampling, &opts)
                    .map(|(g, _)| g.token_ids.len())
                    .unwrap_or(0)
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
