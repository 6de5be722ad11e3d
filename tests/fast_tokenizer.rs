//! The fast encoder (fastokens) against the reference (`tokenizers`): equal on every render
//! golden and on a generated corpus mixing English, code, CJK, emoji, RTL, whitespace and
//! digit runs, random Unicode and special-token text; equal with the segment cache on; and a
//! tokenizer it cannot handle falls back to the reference.
//!
//! CI runs a few MB per model. The full corpus (≥ 50 MB per model):
//! `LLM_RENDER_CORPUS_MB=50 cargo test --release --test fast_tokenizer -- --nocapture`
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use llm_render::model::{LoadOptions, Model};
use llm_render::tokenize::Backend;

const MODELS: [&str; 3] = ["qwen3", "llama3_1", "deepseek_v3"];

fn load(name: &str, cache_bytes: usize) -> Model {
    let opts = LoadOptions {
        segment_cache_bytes: cache_bytes,
        ..LoadOptions::default()
    };
    let m = Model::load_dir(name, &fixtures().join("models").join(name), &opts).unwrap();
    assert_eq!(
        m.encoder.backend(),
        &Backend::Fast,
        "{name}: the fast encoder must prove equal at load"
    );
    m
}

fn reference(m: &Model, text: &str, add_special: bool) -> Vec<u32> {
    m.tokenizer
        .encode_fast(text, add_special)
        .unwrap()
        .get_ids()
        .to_vec()
}

const WORDS: &[&str] = &[
    "the",
    "of",
    "cache",
    "token",
    "router",
    "latency",
    "Kubernetes",
    "prefill",
    "decode",
    "GPU",
    "isn't",
    "we'll",
    "A",
    "I'm",
];
const CODE: &[&str] = &[
    "fn main() {",
    "}",
    "    let x = vec![1, 2, 3];",
    "\tif (a && b) { return -1; }",
    "def f(*args, **kw):",
    "#include <stdio.h>",
    "SELECT * FROM t WHERE id = 42;",
    "x = {\"k\": [1.5e-3, null]}",
    "<div class='a'>&nbsp;</div>",
    "//! doc",
    "    # comment",
];
const CJK: &[&str] = &[
    "日本語",
    "漢字",
    "カタカナ",
    "ひらがな",
    "中文文本",
    "标点符号，",
    "한국어",
    "。",
    "、",
    "「引用」",
];
const EMOJI: &[&str] = &["🤖", "🧪", "👩‍💻", "👨‍👩‍👧‍👦", "👍🏽", "🇨🇭", "❤️", "🏳️‍🌈", "😀😃😄"];
const RTL: &[&str] = &[
    "مرحبا",
    "بالعالم",
    "שלום",
    "עולם",
    "\u{202e}",
    "\u{200f}",
    "سلام",
];
const SPECIAL: &[&str] = &[
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|begin_of_text|>",
    "<｜end▁of▁sentence｜>",
    "<think>",
    "</think>",
    "<tool_call>",
];

/// One pseudo-random document of about `len` bytes.
fn document(rng: &mut Rng, len: usize) -> String {
    let mut s = String::with_capacity(len + 64);
    while s.len() < len {
        match rng.below(12) {
            0..=3 => {
                s.push_str(rng.pick(WORDS));
                s.push(if rng.below(5) == 0 { ',' } else { ' ' });
            }
            4 => {
                s.push_str(rng.pick(CODE));
                s.push('\n');
            }
            5 => s.push_str(rng.pick(CJK)),
            6 => s.push_str(rng.pick(EMOJI)),
            7 => {
                s.push_str(rng.pick(RTL));
                s.push(' ');
            }
            8 => {
                let ws = [" ", "\t", "\n", "\r\n", "\u{3000}", "\u{a0}"];
                for _ in 0..rng.below(40) + 1 {
                    s.push_str(ws[rng.below(ws.len())]);
                }
            }
            9 => {
                for _ in 0..rng.below(30) + 1 {
                    s.push(char::from(b'0' + rng.below(10) as u8));
                }
                s.push(' ');
            }
            10 => {
                // random bytes read as UTF-8 (valid scalars only)
                for _ in 0..rng.below(16) + 1 {
                    if let Some(c) = char::from_u32(rng.below(0x110000) as u32) {
                        s.push(c);
                    }
                }
            }
            _ => s.push_str(rng.pick(SPECIAL)),
        }
    }
    s
}

fn corpus_mb() -> usize {
    std::env::var("LLM_RENDER_CORPUS_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2)
}

#[test]
fn equal_on_every_render_golden() {
    for name in MODELS {
        let m = load(name, 0);
        for g in goldens().iter().filter(|g| g.model == name) {
            if let Some(ids) = &g.expected_token_ids {
                let req: llm_render::protocol::ChatRequest =
                    serde_json::from_value(g.request.clone()).unwrap();
                let prompt =
                    llm_render::render::render_chat_prompt(&m, &req, &Default::default(), None)
                        .unwrap();
                assert_eq!(&m.encode(&prompt.prompt, false).unwrap(), ids, "{}", g.id);
            }
        }
    }
}

#[test]
fn equal_on_generated_corpus() {
    let target = corpus_mb() * 1024 * 1024;
    for (k, name) in MODELS.iter().enumerate() {
        let m = load(name, 0);
        let mut rng = Rng(0xC0FFEE + k as u64);
        let mut done = 0;
        let mut docs = 0;
        while done < target {
            let len = [64, 700, 4_000, 30_000][rng.below(4)];
            let doc = document(&mut rng, len);
            let add_special = rng.below(2) == 0;
            let want = reference(&m, &doc, add_special);
            let got = m.encode(&doc, add_special).unwrap();
            if got != want {
                let at = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
                panic!(
                    "{name}: document {docs} differs at token {at}: {:?}",
                    &doc[..doc.len().min(200)]
                );
            }
            done += doc.len();
            docs += 1;
        }
        eprintln!(
            "{name}: {docs} documents, {} MB equal",
            done / (1024 * 1024)
        );
    }
}

#[test]
fn segment_cache_is_exact() {
    let m = load("qwen3", 64 * 1024 * 1024);
    let mut rng = Rng(7);
    let parts: Vec<String> = (0..40).map(|_| document(&mut rng, 300)).collect();
    // Conversations that re-send earlier segments in new orders, as chat clients do.
    for turn in 0..40 {
        let mut text = String::new();
        for i in 0..=turn {
            text.push_str("<|im_start|>user\n");
            text.push_str(&parts[(i * 7 + turn) % parts.len()]);
            text.push_str("<|im_end|>\n");
        }
        assert_eq!(
            m.encode(&text, false).unwrap(),
            reference(&m, &text, false),
            "turn {turn}"
        );
    }
    let stats = m.encoder.cache_stats().unwrap();
    assert!(stats.hits > 0 && stats.misses > 0, "{stats:?}");
}

#[test]
fn unsupported_tokenizer_falls_back_to_reference() {
    let m = Model::load_dir(
        "wordlevel",
        &fixtures().join("models/wordlevel"),
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(matches!(m.encoder.backend(), Backend::Reference(r) if r.contains("fastokens")));
    assert_eq!(m.encode("hello world foo", false).unwrap(), vec![1, 2, 0]);
    let off = LoadOptions {
        fast_tokenizer: false,
        ..LoadOptions::default()
    };
    let m = Model::load_dir("qwen3", &fixtures().join("models/qwen3"), &off).unwrap();
    assert!(matches!(m.encoder.backend(), Backend::Reference(_)));
}
