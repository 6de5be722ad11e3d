//! The prompt cache (`render::prompt_cache`) gives exactly the IDs of `tokenizers`, for
//! chains of prompts that each share a prefix with the one before, cut at random places
//! next to added tokens, for every fixture tokenizer and for one whose added tokens carry
//! `lstrip`, `rstrip` and `single_word` (which must not be used as cut points).
//!
//! `PROMPT_CACHE_CASES` sets the chains per tokenizer (default 60).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{fixtures, Rng};
use llm_render::model::{LoadOptions, Model};
use std::io::Read;

const FILLER: &[&str] = &[
    "The quick brown fox jumps over the lazy dog. ",
    "fn main() { println!(\"{x:?}\"); }\n",
    "日本語のテキスト、中文文本。",
    "emoji 🤖👩‍💻 ",
    "مرحبا שלום ",
    "   \n\n\t  ",
    "1234567890 ",
    "<|im_e",
    "<|",
    "|>",
    "<｜",
    "▁",
    "\u{a0}\u{2028}",
    // Combining marks: NFC (Qwen3's normalizer) runs on each piece between added tokens.
    "e\u{301}\u{301} A\u{30a}",
    "word_",
    "x",
];

/// Text of roughly `len` bytes: filler, and added tokens (whole, and cut short).
fn text(rng: &mut Rng, added: &[String], len: usize) -> String {
    let mut out = String::new();
    while out.len() < len {
        match rng.below(6) {
            0 => out.push_str(rng.pick(added)),
            // The start or the end of an added token: next to a whole one, a longer token.
            1 | 2 => {
                let t = rng.pick(added);
                let cut = rng.below(t.len());
                let cut = (0..=cut)
                    .rev()
                    .find(|&i| t.is_char_boundary(i))
                    .unwrap_or(0);
                out.push_str(if rng.below(2) == 0 {
                    &t[..cut]
                } else {
                    &t[cut..]
                });
            }
            _ => {
                for _ in 0..1 + rng.below(12) {
                    out.push_str(FILLER[rng.below(FILLER.len())]);
                }
            }
        }
    }
    out
}

/// A char boundary of `s` at, or within 24 bytes of, the end of an added-token occurrence
/// (or anywhere, sometimes).
fn near_a_token(rng: &mut Rng, s: &str, added: &[String]) -> usize {
    let mut at = rng.below(s.len());
    if rng.below(4) != 0 {
        let t = rng.pick(added);
        let mut half = s.len() / 2;
        while !s.is_char_boundary(half) {
            half -= 1;
        }
        if let Some(i) = s[half..].find(t) {
            let end = half + i + t.len();
            at = if rng.below(2) == 0 {
                end
            } else {
                (end + rng.below(2 * 24)).saturating_sub(24).min(s.len())
            };
        }
    }
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn load(dir: &std::path::Path, name: &str) -> Model {
    Model::load_dir(name, dir, &LoadOptions::default()).expect("model loads")
}

/// Chains of prompts through the cached encoder, each checked against `tokenizers`.
fn check_chains(model: &Model, label: &str) {
    let cases: u64 = std::env::var("PROMPT_CACHE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    // In ID order: the decoder is a hash map, and its order would make the corpus (and the
    // hit count asserted below) differ from run to run.
    let mut by_id: Vec<(u32, String)> = model
        .tokenizer
        .get_added_tokens_decoder()
        .into_iter()
        .map(|(id, t)| (id, t.content))
        .filter(|(_, c)| !c.is_empty())
        .collect();
    by_id.sort_unstable();
    let added: Vec<String> = by_id.into_iter().map(|(_, c)| c).collect();
    for case in 0..cases {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (case + 1));
        let len = 4500 + rng.below(6000);
        let mut prompt = text(&mut rng, &added, len);
        for turn in 0..6 {
            let want = model.tokenizer.encode_fast(prompt.as_str(), false).unwrap();
            let got = model.encode(&prompt, false).unwrap();
            if got != want.get_ids() {
                let at = got
                    .iter()
                    .zip(want.get_ids())
                    .take_while(|(a, b)| a == b)
                    .count();
                panic!(
                    "{label} case {case} turn {turn}: IDs differ from tokenizers at token {at} \
                     (prompt of {} bytes)",
                    prompt.len()
                );
            }
            // The next turn keeps a prefix (usually most of this one) and adds new text.
            let keep = if rng.below(3) == 0 {
                prompt.len()
            } else {
                near_a_token(&mut rng, &prompt, &added)
            };
            prompt.truncate(keep);
            let len = 50 + rng.below(1500);
            prompt.push_str(&text(&mut rng, &added, len));
        }
    }
    let stats = model.encoder.prompt_cache_stats().expect("prompt cache on");
    eprintln!("{label}: {stats:?}");
    assert!(
        stats.hits > cases,
        "{label}: the chains should mostly reuse their prefix: {stats:?}"
    );
}

#[test]
fn prompt_cache_equals_tokenizers_on_fixture_tokenizers() {
    for name in ["qwen3", "llama3_1", "deepseek_v3"] {
        let model = load(&fixtures().join("models").join(name), name);
        // Qwen3's and Llama's added tokens carry no rules, so the text after a reused prefix
        // goes through `render::added_split`; DeepSeek-V3 has `normalized` ones, which need
        // fastokens' two-pass split. The chains check both paths.
        assert_eq!(
            model.encoder.splits_added_tokens(),
            name != "deepseek_v3",
            "{name}"
        );
        check_chains(&model, name);
    }
}

/// Qwen3's tokenizer with `lstrip`, `rstrip` and `single_word` on some added tokens, and
/// new added tokens that begin with a space, end in a letter or extend another: the cache
/// must split only where none of these rules can move the split (and these rules keep the
/// added-token split in fastokens).
#[test]
fn prompt_cache_equals_tokenizers_with_strip_and_single_word_tokens() {
    let src = fixtures().join("models/qwen3");
    let mut json = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(src.join("tokenizer.json.gz")).unwrap())
        .read_to_string(&mut json)
        .unwrap();
    let mut tok: serde_json::Value = serde_json::from_str(&json).unwrap();
    let added = tok["added_tokens"].as_array_mut().unwrap();
    let mut next_id = added
        .iter()
        .map(|t| t["id"].as_u64().unwrap())
        .max()
        .unwrap()
        + 1;
    for t in added.iter_mut() {
        match t["content"].as_str().unwrap() {
            "<|im_end|>" => t["rstrip"] = true.into(),
            "<|im_start|>" => t["lstrip"] = true.into(),
            "<think>" => t["single_word"] = true.into(),
            _ => {}
        }
    }
    // `<pre>fix>` extends `<pre>`: a cut after `<pre>` holds only if the text after it
    // cannot complete the longer token.
    for content in [" <sp>", "<word>x", "<|im_end|>!", "<pre>", "<pre>fix>"] {
        added.push(serde_json::json!({
            "id": next_id, "content": content, "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": false, "special": true
        }));
        next_id += 1;
    }
    let dir = std::env::temp_dir().join(format!("llm-render-prompt-cache-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), tok.to_string()).unwrap();
    for f in [
        "tokenizer_config.json",
        "config.json",
        "generation_config.json",
    ] {
        if src.join(f).exists() {
            std::fs::copy(src.join(f), dir.join(f)).unwrap();
        }
    }
    let model = load(&dir, "qwen3_flags");
    // Cases the random chains reach only by luck. The shared prefix ends right after
    // `<pre>`, and the new prompt goes on with `fix>`.
    let filler = FILLER.concat().repeat(40);
    let first = format!("{filler}<pre>{filler}");
    let second = format!("{filler}<pre>fix>{filler}");
    // And `<word>x` before the single-word `<think>`: not a cut, as the word check of
    // `<think>` looks at the `x`.
    let third = format!("{filler}<word>x<think> {filler}");
    // And the `rstrip` `<|im_end|>` before spaces: it takes them, so its end is no cut.
    let fourth = format!("{filler}<|im_end|>   after{filler}");
    for prompt in [&first, &first, &second, &third, &third, &fourth, &fourth] {
        let want = model.tokenizer.encode_fast(prompt.as_str(), false).unwrap();
        assert_eq!(model.encode(prompt, false).unwrap(), want.get_ids());
    }
    assert!(!model.encoder.splits_added_tokens());
    check_chains(&model, "qwen3 with strip flags");
    let _ = std::fs::remove_dir_all(&dir);
}
