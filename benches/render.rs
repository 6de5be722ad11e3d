//! Criterion benches, in process, on the Qwen3 fixture:
//! * `encode_long_9k/*`: the 10,140-token `qwen3/long_9k` prompt text through the fast
//!   encoder (no cache) and through `tokenizers`, as bytes/s;
//! * `render_long_9k_cold`: template + tokenize + `GenerateRequest`, segment cache off;
//! * `render_long_9k_warm`: the same with the segment cache holding the conversation;
//! * `render_tools_defined`: the short tools request, cache off.
//! * `render_turn20_*`: turn 20 of a chat, its history in the segment cache (`warm`) or not
//!   (`cold`), and with the template interpreted by minijinja instead of rendered natively;
//!   `render_turn20_deepseek_v3_*`, `render_turn20_llama3_1_*` the same on DeepSeek-V3's and
//!   Llama 3.1's templates.
//! * `render_turns_interleaved/*`, `turn_request_interleaved`: turns 2..19 of 12 chats
//!   taken in turns; the first is template + tokenize, the second a whole request from its
//!   body bytes to its response bytes (parse, render, JSON), less HTTP and the kernel.
//! * `decode_long_9k/*`: the long_9k render's token IDs back to text, through the model's
//!   byte table and through `tokenizers`;
//! * `token_ids_json/*`: the long_9k render's token IDs as a JSON array, serde_json vs the
//!   table writer in `protocol::fast_json`.
//!
//! Run: `cargo bench --bench render`. Side by side with peers: benches/*.py.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// The server's allocator, so in-process figures match what the server pays.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use llm_render::model::{LoadOptions, Model};
use llm_render::protocol::ChatRequest;
use llm_render::render::{render_chat, render_chat_prompt, RenderOptions};
use std::path::PathBuf;

fn golden_request(id: &str) -> Option<ChatRequest> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/goldens/render/qwen3.jsonl");
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|g| g["id"] == id)
        .and_then(|g| serde_json::from_value(g["request"].clone()).ok())
}

/// Chat requests for turns 1..=n of one conversation (~500 tokens a turn).
fn conversation(n: usize) -> Vec<ChatRequest> {
    conversation_seeded(n, 17)
}

/// [`conversation`] with its own words and system prompt for each `seed`.
fn conversation_seeded(n: usize, seed: u64) -> Vec<ChatRequest> {
    conversation_bodies(n, seed)
        .iter()
        .filter_map(|b| llm_render::protocol::parse_json(b).ok())
        .collect()
}

/// The request bodies of [`conversation_seeded`], as a client sends them.
fn conversation_bodies(n: usize, mut seed: u64) -> Vec<Vec<u8>> {
    let vocab = [
        "the", "model", "cache", "token", "prefill", "decode", "router", "latency", "block", "GPU",
    ];
    let tag = format!("Conversation {seed}. ");
    let mut words = |k: usize| {
        (0..k)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                vocab[(seed >> 33) as usize % vocab.len()]
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut messages = vec![serde_json::json!({"role": "system", "content": tag + &words(200)})];
    let mut out = Vec::new();
    for _ in 0..n {
        messages.push(serde_json::json!({"role": "user", "content": words(220)}));
        if let Ok(body) = serde_json::to_vec(&serde_json::json!({ "messages": messages })) {
            out.push(body);
        }
        messages.push(serde_json::json!({"role": "assistant", "content": words(150)}));
    }
    out
}

fn load(cache_bytes: usize) -> Option<Model> {
    load_model("qwen3", cache_bytes)
}

/// `cache_bytes` 0 means cold: neither the segment cache nor the prompt cache.
fn load_model(name: &str, cache_bytes: usize) -> Option<Model> {
    load_model_with(name, cache_bytes, cache_bytes)
}

fn load_model_with(
    name: &str,
    segment_cache_bytes: usize,
    prompt_cache_bytes: usize,
) -> Option<Model> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/models")
        .join(name);
    let opts = LoadOptions {
        segment_cache_bytes,
        prompt_cache_bytes,
        ..LoadOptions::default()
    };
    Model::load_dir(name, &dir, &opts).ok()
}

fn bench(c: &mut Criterion) {
    // And its allocator setting: freed memory kept for reuse (`--memory-release-ms -1`), so
    // the caches' allocations do not page-fault here where the server's do not.
    llm_render::server::memory::set_release_delay(-1);
    let (Some(cold), Some(warm)) = (load(0), load(256 << 20)) else {
        eprintln!("cannot load fixtures/models/qwen3");
        return;
    };
    let (Some(long), Some(tools)) = (
        golden_request("qwen3/long_9k"),
        golden_request("qwen3/tools_defined"),
    ) else {
        eprintln!("goldens missing");
        return;
    };
    let opts = RenderOptions::default();

    let Ok(prompt) = render_chat_prompt(&cold, &long, &opts, None) else {
        return;
    };
    let text = prompt.prompt;
    let mut g = c.benchmark_group("encode_long_9k");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("fastokens", |b| {
        b.iter(|| cold.encode(&text, false).map(|v| v.len()).unwrap_or(0))
    });
    g.bench_function("tokenizers", |b| {
        b.iter(|| {
            cold.tokenizer
                .encode_fast(text.as_str(), false)
                .map(|e| e.len())
                .unwrap_or(0)
        })
    });
    g.finish();

    let render = |m: &Model, req: &ChatRequest| {
        render_chat(m, req, &opts, None)
            .map(|(g, _)| g.token_ids.len())
            .unwrap_or(0)
    };
    c.bench_function("render_long_9k_cold", |b| b.iter(|| render(&cold, &long)));
    c.bench_function("render_long_9k_warm", |b| b.iter(|| render(&warm, &long)));
    // Unique at its start, as the cold case of benches/render_vs_vllm_rs.py: the caches
    // are on but cannot help, so this is what they cost when they miss.
    let segments_only = load_model_with("qwen3", 256 << 20, 0);
    let mut nonce = 0u64;
    let mut g = c.benchmark_group("render_long_9k_unique");
    for (name, model) in [
        ("segment_cache", segments_only.as_ref()),
        ("prompt_cache", Some(&warm)),
    ] {
        let Some(model) = model else { continue };
        g.bench_function(name, |b| {
            b.iter_batched(
                || {
                    nonce += 1;
                    let mut req = long.clone();
                    if let Some(m) = req.messages.first_mut() {
                        let text = m
                            .get("content")
                            .and_then(|c| c.as_str())
                            .unwrap_or_default();
                        let unique = format!("Request {nonce}. {text}");
                        m.insert("content", unique.into());
                    }
                    req
                },
                |req| render(model, &req),
                criterion::BatchSize::SmallInput,
            )
        });
    }
    g.finish();
    c.bench_function("render_tools_defined", |b| b.iter(|| render(&cold, &tools)));

    // Turn 20 of a conversation whose turns 1..19 were rendered before: the history's
    // segments come from the cache, only the new user message is tokenized.
    let conv = conversation(20);
    for turn in &conv[..19] {
        render(&warm, turn);
    }
    let last = &conv[19];
    c.bench_function("render_turn20_warm", |b| b.iter(|| render(&warm, last)));
    c.bench_function("render_turn20_cold", |b| b.iter(|| render(&cold, last)));
    // The same turn with Qwen3's template interpreted by minijinja instead of rendered by
    // `template::native`: what the native path saves.
    let jinja = RenderOptions {
        native_templates: false,
        ..RenderOptions::default()
    };
    c.bench_function("render_turn20_warm_minijinja", |b| {
        b.iter(|| {
            render_chat(&warm, last, &jinja, None)
                .map(|(g, _)| g.token_ids.len())
                .unwrap_or(0)
        })
    });
    // The same chat on DeepSeek-V3's and Llama 3.1's templates, native and interpreted.
    for family in ["deepseek_v3", "llama3_1"] {
        let Some(model) = load_model(family, 256 << 20) else {
            continue;
        };
        for turn in &conv[..19] {
            render(&model, turn);
        }
        for (engine, o) in [("", &opts), ("_minijinja", &jinja)] {
            c.bench_function(&format!("render_turn20_{family}_warm{engine}"), |b| {
                b.iter(|| {
                    render_chat(&model, last, o, None)
                        .map(|(g, _)| g.token_ids.len())
                        .unwrap_or(0)
                })
            });
        }
    }

    // Turns 2..19 of 12 conversations taken in turns, as a server sees them: each
    // conversation's state has gone cold in the CPU caches by its next turn. Fresh
    // conversations every iteration, so every turn extends the one before it.
    let mut g = c.benchmark_group("render_turns_interleaved");
    for (name, model) in [
        ("segment_cache", segments_only.as_ref()),
        ("prompt_cache", Some(&warm)),
    ] {
        let Some(model) = model else { continue };
        let mut next_seed = 1000u64;
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                interleaved_turns(iters, &mut next_seed, conversation_seeded, |req| {
                    render(model, req);
                })
            })
        });
    }
    g.finish();

    // The same turns from request body to response bytes: what a server does per turn,
    // less HTTP and the kernel.
    let mut next_seed = 5000u64;
    c.bench_function("turn_request_interleaved", |b| {
        b.iter_custom(|iters| {
            interleaved_turns(iters, &mut next_seed, conversation_bodies, |body| {
                respond(&warm, body);
            })
        })
    });

    let ids = render_chat(&warm, &long, &opts, None)
        .map(|(g, _)| g.token_ids)
        .unwrap_or_default();
    let mut g = c.benchmark_group("decode_long_9k");
    g.throughput(Throughput::Elements(ids.len() as u64));
    g.bench_function("table", |b| {
        b.iter(|| warm.decode(&ids, false).map(|t| t.len()).unwrap_or(0))
    });
    g.bench_function("tokenizers", |b| {
        b.iter(|| {
            warm.tokenizer
                .decode(&ids, false)
                .map(|t| t.len())
                .unwrap_or(0)
        })
    });
    g.finish();

    let mut g = c.benchmark_group("token_ids_json");
    g.throughput(Throughput::Elements(ids.len() as u64));
    g.bench_function("serde_json", |b| {
        b.iter(|| serde_json::to_vec(&ids).map(|v| v.len()).unwrap_or(0))
    });
    g.bench_function("fast_json", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(ids.len() * 7 + 2);
            llm_render::protocol::fast_json::write_u32_array(&mut out, &ids);
            out.len()
        })
    });
    g.finish();
}

/// Body → `GenerateRequest` JSON, as the render route does it; returns the response size.
/// Time for `iters` turns, timed as turns 2..19 of 12 conversations taken in turns (each
/// conversation's state has gone cold in the CPU caches by its next turn), with fresh
/// conversations (`conversation(19, seed)`) every round so every turn extends the one before
/// it; turn 1 of each is run untimed first.
fn interleaved_turns<T>(
    iters: u64,
    next_seed: &mut u64,
    conversation: impl Fn(usize, u64) -> Vec<T>,
    mut run: impl FnMut(&T),
) -> std::time::Duration {
    let mut total = std::time::Duration::ZERO;
    let mut done = 0u64;
    while done < iters {
        let convs: Vec<Vec<T>> = (0..12)
            .map(|_| {
                *next_seed += 1;
                conversation(19, *next_seed)
            })
            .collect();
        convs.iter().for_each(|c| run(&c[0]));
        let t = std::time::Instant::now();
        for turn in 1..19 {
            for c in &convs {
                run(&c[turn]);
            }
        }
        total += t.elapsed();
        done += 18 * 12;
    }
    total.mul_f64(iters as f64 / done as f64)
}

fn respond(model: &Model, body: &[u8]) -> usize {
    let Ok(req) = llm_render::protocol::parse_json::<ChatRequest>(body) else {
        return 0;
    };
    let Ok((out, _)) = render_chat(model, &req, &RenderOptions::default(), None) else {
        return 0;
    };
    let mut json = llm_render::protocol::fast_json::JsonChunks::default();
    if out.into_json(&mut json).is_err() {
        return 0;
    }
    json.finish().iter().map(|b| b.len()).sum()
}

criterion_group!(benches, bench);
criterion_main!(benches);
