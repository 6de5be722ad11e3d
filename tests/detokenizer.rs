//! The incremental detokenizer against `tokenizers`' decode of whole sequences: for every
//! prefix of the render goldens' IDs and of random ID sequences, the text emitted so far is a
//! prefix of `decode(prefix)`, and after `finish` it equals `decode(all)`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use llm_render::derender::{DetokState, IncrementalDetokenizer};
use llm_render::model::{LoadOptions, Model};

fn check(m: &Model, ids: &[u32], skip: bool, every_prefix: bool) {
    let mut d = IncrementalDetokenizer::new(m, skip);
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
            &m,
            false,
            serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap(),
        );
        out.push_str(&d.push(*id).unwrap());
        state = d.state().clone();
    }
    out.push_str(
        &IncrementalDetokenizer::resume(&m, false, state)
            .finish()
            .unwrap(),
    );
    assert_eq!(out, text);
}

/// `Model::decode` (a table of each ID's bytes where the decoder is byte-level) equals
/// `tokenizers`' decode on random sequences of any IDs: added and special tokens, byte tokens
/// that split UTF-8 sequences, IDs past the vocabulary; for every fixture tokenizer, those
/// that fall back to `tokenizers` included.
#[test]
fn model_decode_equals_tokenizers_decode() {
    for (name, table) in [
        ("qwen3", true),
        ("llama3_1", true),
        ("deepseek_v3", true),
        ("qwen2_5_vl", true),
        ("wordlevel", false),
    ] {
        let m = Model::load_dir(
            name,
            &fixtures().join("models").join(name),
            &LoadOptions::default(),
        )
        .unwrap();
        assert_eq!(
            m.decoder.off_reason().is_none(),
            table,
            "{name}: {:?}",
            m.decoder.off_reason()
        );
        let vocab = m.tokenizer.get_vocab_size(true) as u32;
        let mut added: Vec<u32> = m.tokenizer.get_added_tokens_decoder().into_keys().collect();
        added.sort_unstable();
        let mut rng = Rng(0x5eed ^ u64::from(vocab));
        for _ in 0..2000 {
            let n = rng.below(48);
            let ids: Vec<u32> = (0..n)
                .map(|_| match rng.below(8) {
                    0 if !added.is_empty() => added[rng.below(added.len())],
                    1 => rng.below(256) as u32, // byte tokens are low IDs in these vocabularies
                    2 => vocab + rng.below(100) as u32,
                    _ => rng.below(vocab as usize) as u32,
                })
                .collect();
            for id in &ids {
                assert_eq!(
                    m.has_token(*id),
                    m.tokenizer.id_to_token(*id).is_some(),
                    "{name}: {id}"
                );
            }
            for skip in [false, true] {
                assert_eq!(
                    m.decode(&ids, skip).unwrap(),
                    m.tokenizer.decode(&ids, skip).unwrap(),
                    "{name}: {ids:?} skip_special_tokens={skip}"
                );
            }
        }
    }
}
