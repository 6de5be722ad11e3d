//! vLLM 0.33's reasoning-token counts, replayed: for every case of
//! `fixtures/goldens/derender/reasoning_counts.jsonl.gz` (made by
//! `scripts/gen_reasoning_count_goldens.py`: vLLM's chat-serving parser for each reasoning
//! parser in our registry, its `count_reasoning_tokens` one shot, after a stream, and after
//! each streamed token), [`reasoning_counter`] gives vLLM's count: fed the IDs whole, one at a
//! time (each count so far as `continuous_usage_stats` reports it), and in uneven chunks.

mod common;

use llm_render_parsers::{reasoning_counter, ParserSettings, Vocab};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

fn goldens() -> Vec<Value> {
    common::gz_goldens("derender/reasoning_counts.jsonl.gz")
}

/// A case's vocabulary: its markers' IDs, the encodings the generator wrote, and the text of
/// its output's tokens (byte-level BPE, as the fixtures are).
struct CaseVocab {
    ids: HashMap<String, u32>,
    encoded: HashMap<String, Vec<u32>>,
    tokens: HashMap<u32, String>,
}

impl Vocab for CaseVocab {
    fn id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }
    fn encode(&self, text: &str) -> Vec<u32> {
        match self.encoded.get(text) {
            Some(ids) => ids.clone(),
            None => panic!("no encoding of {text:?} in the golden"),
        }
    }
    fn decode(&self, ids: &[u32]) -> String {
        let unicode = byte_decoder();
        let mut bytes = Vec::new();
        for id in ids {
            let token = &self.tokens[id];
            if self.ids.values().any(|m| m == id) {
                bytes.extend_from_slice(token.as_bytes());
                continue;
            }
            for c in token.chars() {
                match unicode.get(&c) {
                    Some(&b) => bytes.push(b),
                    None => bytes.extend_from_slice(c.to_string().as_bytes()),
                }
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// GPT-2's byte-level alphabet, inverted: each byte's stand-in character to the byte.
fn byte_decoder() -> HashMap<char, u8> {
    let mut printable: Vec<u32> = (u32::from('!')..=u32::from('~')).collect();
    printable.extend(0xA1..=0xAC);
    printable.extend(0xAE..=0xFF);
    let mut map = HashMap::new();
    let mut extra = 0;
    for b in 0u32..256 {
        let c = if printable.contains(&b) {
            b
        } else {
            extra += 1;
            255 + extra
        };
        if let (Some(c), Ok(b)) = (char::from_u32(c), u8::try_from(b)) {
            map.insert(c, b);
        }
    }
    map
}

fn ids_of(v: &Value) -> Vec<u32> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_u64())
                .map(|x| x as u32)
                .collect()
        })
        .unwrap_or_default()
}

/// The cases where our count is not vLLM's, and why: vLLM's parser engines lex a marker that is
/// not one token from the decoded text, and count a token by where its text starts (none for
/// a marker's tokens, none while a possible marker is held back); ours reads markers by token
/// ID only. Every family whose markers are single tokens is exact.
const DIFFERING: &[(&str, &str)] = &[
    // The DSML tool-calls marker is several tokens: vLLM's text lexer ends reasoning there.
    ("deepseek_v4", "tool_start_ends_reasoning"),
    ("deepseek_v41", "tool_start_ends_reasoning"),
    // Gemma 4's channel read from text: a leading `thought\n` opens reasoning without a
    // start tag, and an end tag with no channel open splits vLLM's one-shot from its stream.
    ("gemma4", "invalid_simple"),
    ("gemma4", "thought_without_start"),
    // MiniCPM-V's dropped markers (`<reserved_12>`, `<|im_end|>`) are lexed from text and not
    // counted; with thinking off vLLM's stream counts 0 where its one-shot counts the span.
    ("minicpmv", "reserved_dropped"),
    ("minicpmv", "vllm_reserved_in_thinking"),
    ("minicpmv", "vllm_im_end_in_reasoning"),
    ("minicpmv", "think_then_answer_thinking_off"),
    ("minicpmv", "text_before_start_thinking_off"),
    ("minicpmv", "empty_answer_thinking_off"),
    ("minicpmv", "im_end_dropped_thinking_off"),
    ("minicpmv", "reserved_dropped_thinking_off"),
    ("minicpmv", "other_reserved_kept_thinking_off"),
    ("minicpmv", "vllm_reserved_in_thinking_thinking_off"),
    ("minicpmv", "vllm_standard_tags_thinking_off"),
    // PLaMo 3's markers are several tokens each (`<|plamo:begin_` `think` `:plamo|>`).
    ("plamo3", "think_then_answer"),
    ("plamo3", "content_then_tools"),
    ("plamo3", "tool_block_ends_reasoning"),
    ("plamo3", "partial_end_think"),
    ("plamo3", "plain_content_eot"),
    ("plamo3", "literal_marker_start"),
    ("plamo3", "second_think_block"),
    ("plamo3", "start_inside_reasoning"),
    ("plamo3", "two_ends"),
    ("plamo3", "unicode"),
    ("plamo3", "never_closed"),
    ("plamo3", "partial_marker_in_content"),
    ("plamo3", "partial_tool_marker_in_reasoning"),
    ("plamo3", "partial_think_start_in_content"),
];

#[test]
fn counts_equal_vllm() {
    let cases = goldens();
    assert!(cases.len() > 500, "{} cases", cases.len());
    let mut wrong = Vec::new();
    let mut checked = 0;
    for case in &cases {
        let (parser, id) = (case["parser"].as_str(), case["id"].as_str());
        let label = format!("{} {}", case["parser"], case["id"]);
        let known = DIFFERING
            .iter()
            .any(|&(p, i)| Some(p) == parser && Some(i) == id);
        assert!(case.get("error").is_none(), "{label}: vLLM raised");
        let ids = ids_of(&case["ids"]);
        let tokens: Vec<String> = case["tokens"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|t| t.as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default();
        let mut marker_ids = HashMap::new();
        for (k, v) in case["marker_ids"].as_object().into_iter().flatten() {
            marker_ids.insert(k.clone(), v.as_u64().unwrap_or(0) as u32);
        }
        let encoded = case["encoded"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), ids_of(v)))
            .collect();
        let vocab = CaseVocab {
            ids: marker_ids,
            encoded,
            tokens: ids.iter().copied().zip(tokens).collect(),
        };
        let kwargs = case["parser_kwargs"]["chat_template_kwargs"].as_object();
        let suffix = |k: &str| case[k].as_str().map(Arc::from);
        let settings = ParserSettings::new(kwargs.cloned().unwrap_or_default())
            .with_chat_template(case["chat_template"].as_str().map(Arc::from))
            .with_token_suffixes(suffix("token_suffix"), suffix("vocab_token_suffix"));
        let name = case["parser"].as_str().unwrap_or("");
        let Some(counter) = reasoning_counter(name, &settings, &vocab) else {
            panic!("{label}: no counter");
        };
        let want = case["nonstream"].as_u64().unwrap_or(u64::MAX) as usize;
        let stream = case["stream"].as_u64().unwrap_or(u64::MAX) as usize;
        let continuous: Vec<usize> = case["continuous"]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_u64().unwrap_or(0) as usize).collect())
            .unwrap_or_default();
        checked += 1;
        let whole = counter.clone().feed(&ids, &vocab);
        let mut one = counter.clone();
        let steps: Vec<usize> = ids.iter().map(|&t| one.feed(&[t], &vocab)).collect();
        let mut chunked = counter.clone();
        let mut last = 0;
        for chunk in ids.chunks(3) {
            last = chunked.feed(chunk, &vocab);
        }
        let differs = whole != want
            || stream != want
            || last != want
            || (continuous.len() == steps.len() && continuous != steps);
        if known {
            if !differs {
                wrong.push(format!("{label}: listed as differing, but equal"));
            }
            continue;
        }
        if whole != want || stream != want || last != want {
            wrong.push(format!(
                "{label}: ours {whole} (chunked {last}), vLLM one-shot {want}, stream {stream}; {:?}",
                case["text"].as_str().unwrap_or("")
            ));
        } else if continuous.len() == steps.len() && continuous != steps {
            wrong.push(format!(
                "{label}: per token ours {steps:?}, vLLM {continuous:?}; {:?}",
                case["text"].as_str().unwrap_or("")
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {checked}:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(checked - DIFFERING.len() > 590, "{checked} cases");
}

/// A Harmony golden's vocabulary: the structural tokens' IDs and each output ID's text.
struct HarmonyVocab {
    markers: HashMap<String, u32>,
    texts: HashMap<u32, String>,
}

impl Vocab for HarmonyVocab {
    fn id(&self, token: &str) -> Option<u32> {
        self.markers.get(token).copied()
    }
    fn encode(&self, text: &str) -> Vec<u32> {
        panic!("the Harmony count encodes nothing ({text:?})")
    }
    fn decode(&self, ids: &[u32]) -> String {
        ids.iter().map(|id| self.texts[id].as_str()).collect()
    }
}

/// gpt-oss: vLLM 0.33's `HarmonyParser.count_reasoning_tokens`
/// (`fixtures/goldens/derender/harmony_counts.jsonl`, `scripts/gen_harmony_count_goldens.py`):
/// the whole output's count, and the count after each token, fed one ID at a time and in
/// chunks of 3.
#[test]
fn harmony_counts_are_vllms() {
    let path = format!(
        "{}/../fixtures/goldens/derender/harmony_counts.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let Ok(text) = std::fs::read_to_string(&path) else {
        panic!("missing {path}");
    };
    let mut checked = 0;
    for line in text.lines() {
        let g: Value = serde_json::from_str(line).unwrap_or(Value::Null);
        let ids: Vec<u32> = serde_json::from_value(g["ids"].clone()).unwrap_or_default();
        let texts: Vec<String> = serde_json::from_value(g["texts"].clone()).unwrap_or_default();
        let vocab = HarmonyVocab {
            markers: serde_json::from_value(g["markers"].clone()).unwrap_or_default(),
            texts: ids.iter().copied().zip(texts).collect(),
        };
        let id = &g["id"];
        let whole = llm_render_parsers::harmony_counter(&vocab).feed(&ids, &vocab);
        assert_eq!(
            whole,
            g["count"].as_u64().unwrap_or(u64::MAX) as usize,
            "{id}: whole"
        );
        let mut one = llm_render_parsers::harmony_counter(&vocab);
        let so_far: Vec<usize> = ids.iter().map(|t| one.feed(&[*t], &vocab)).collect();
        let want: Vec<usize> = serde_json::from_value(g["continuous"].clone()).unwrap_or_default();
        assert_eq!(so_far, want, "{id}: token by token");
        let mut three = llm_render_parsers::harmony_counter(&vocab);
        let last = ids
            .chunks(3)
            .map(|c| three.feed(c, &vocab))
            .last()
            .unwrap_or(0);
        assert_eq!(last, whole, "{id}: chunks of 3");
        checked += 1;
    }
    assert!(checked >= 25, "{checked}");
}
