//! The incremental detokenizer against `tokenizers`' decode of whole sequences: for every
//! prefix of the render goldens' IDs and of random ID sequences, the text emitted so far is a
//! prefix of `decode(prefix)`, and after `finish` it equals `decode(all)`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use llm_render::derender::{DetokState, IncrementalDetokenizer};
use llm_render::model::{LoadOptions, Model};

fn check(m: &Model, ids: &[u32], skip: bool, every_prefix: bool) {
    let mut d = IncrementalDetokenizer::new(&m.tokenizer, skip);
    let mut text = String::new();
    for (k, id) in ids.iter().enumerate() {
        text.push_str(&d.push(*id).unwrap());
        if every_prefix {
            let want = m.tokenizer.decode(&ids[..=k], skip).unwrap();
            assert!(
                want.starts_with(&text),
                "{}: after {k} tokens {text:?} is not a prefix of {want:?}",
                m.name
            );
            assert!(
                d.state().window.len() <= 16,
                "window grew to {}",
                d.state().window.len()
            );
        }
    }
    text.push_str(&d.finish().unwrap());
    assert_eq!(text, m.tokenizer.decode(ids, skip).unwrap(), "{}", m.name);
}

#[test]
fn equals_decode_on_golden_ids() {
    for name in ["qwen3", "llama3_1", "deepseek_v3"] {
        let m = Model::load_dir(
            name,
            &fixtures().join("models").join(name),
            &LoadOptions::default(),
        )
        .unwrap();
        for g in goldens().iter().filter(|g| g.model == name) {
            if let Some(ids) = &g.expected_token_ids {
                // Every prefix on the shorter ones; the long ones once whole.
                check(&m, ids, false, ids.len() < 2000);
                check(&m, ids, true, false);
            }
        }
    }
}

#[test]
fn equals_decode_on_random_ids() {
    let m = Model::load_dir(
        "qwen3",
        &fixtures().join("models/qwen3"),
        &LoadOptions::default(),
    )
    .unwrap();
    let vocab = m.tokenizer.get_vocab_size(true) as u64;
    let mut seed = 42u64;
    for _ in 0..200 {
        let n = 1 + (seed % 60) as usize;
        let ids: Vec<u32> = (0..n)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((seed >> 33) % vocab) as u32
            })
            .filter(|id| m.has_token(*id))
            .collect();
        check(&m, &ids, false, true);
        check(&m, &ids, true, true);
    }
}

#[test]
fn state_resumes_across_instances() {
    // A stream carried by the client: each chunk resumes from the serialized state.
    let m = Model::load_dir(
        "qwen3",
        &fixtures().join("models/qwen3"),
        &LoadOptions::default(),
    )
    .unwrap();
    let text = "Unicode: 日本語 🤖🧪 é — and ascii.";
    let ids = m.encode(text, false).unwrap();
    let mut state = DetokState::default();
    let mut out = String::new();
    for id in &ids {
        let mut d = IncrementalDetokenizer::resume(
            &m.tokenizer,
            false,
            serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap(),
        );
        out.push_str(&d.push(*id).unwrap());
        state = d.state().clone();
    }
    out.push_str(
        &IncrementalDetokenizer::resume(&m.tokenizer, false, state)
            .finish()
            .unwrap(),
    );
    assert_eq!(out, text);
}
