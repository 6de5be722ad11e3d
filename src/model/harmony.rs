//! Whether a model speaks Harmony (gpt-oss), and what rendering in it needs of the
//! vocabulary.
//!
//! A folder is a Harmony model when `config.json` says `model_type: gpt_oss` (vLLM's test,
//! `hf_config.model_type == "gpt_oss"`) or, without a config, when its vocabulary has every
//! Harmony formatting token (`<|start|>`, `<|channel|>`, `<|message|>`, `<|end|>`,
//! `<|call|>`, `<|return|>`, `<|constrain|>`): some snapshots ship only the tokenizer.

use crate::error::RequestError;
use crate::template::harmony::{Piece, Special};
use std::sync::OnceLock;
use tokenizers::Tokenizer;

/// Formatting tokens a vocabulary must have for its model to count as Harmony without a
/// `config.json` saying so.
const MARKERS: [&str; 7] = [
    "<|start|>",
    "<|channel|>",
    "<|message|>",
    "<|end|>",
    "<|call|>",
    "<|return|>",
    "<|constrain|>",
];

/// A Harmony model's formatting-token IDs and its date setting.
pub struct Harmony {
    /// By [`Special`], in its order.
    ids: [u32; 5],
    /// How it was recognised (`/v1/models`).
    pub detected_by: &'static str,
    /// `VLLM_SYSTEM_START_DATE` at load time: the `Current date:` of every prompt. Unset,
    /// each render writes today's local date, as vLLM does.
    pub start_date: Option<String>,
    /// The tokenizer with special-token matching off, for text that spells one
    /// (`encode_ordinary`); built on first need.
    ordinary: OnceLock<Tokenizer>,
}

impl std::fmt::Debug for Harmony {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harmony").field("ids", &self.ids).finish()
    }
}

impl Harmony {
    /// The Harmony setup of a model, if it is one (see the module doc). `model_type` is
    /// `config.json`'s, when there is one.
    pub fn detect(model_type: Option<&str>, tokenizer: &Tokenizer) -> Option<Harmony> {
        let declared = model_type == Some("gpt_oss");
        let has_all = MARKERS.iter().all(|m| tokenizer.token_to_id(m).is_some());
        if !(declared || model_type.is_none() && has_all) {
            return None;
        }
        let mut ids = [0; 5];
        for (slot, (_, text)) in ids.iter_mut().zip(Special::ALL) {
            let Some(id) = tokenizer.token_to_id(text) else {
                tracing::warn!("config.json says gpt_oss, but the vocabulary has no {text}: rendering with the chat template");
                return None;
            };
            *slot = id;
        }
        Some(Harmony {
            ids,
            detected_by: if declared {
                "config.json model_type gpt_oss"
            } else {
                "Harmony tokens in the vocabulary"
            },
            start_date: std::env::var("VLLM_SYSTEM_START_DATE")
                .ok()
                .filter(|d| !d.is_empty()),
            ordinary: OnceLock::new(),
        })
    }

    /// The date a prompt rendered now carries.
    pub fn date(&self) -> String {
        match &self.start_date {
            Some(d) => d.clone(),
            None => chrono::Local::now().format("%Y-%m-%d").to_string(),
        }
    }

    /// The prompt's token IDs and its text: each text piece encoded on its own, any
    /// special-token text in it as ordinary text. `encode` is the model's encoder (added
    /// tokens matched), used for pieces without `<|`, where the two agree.
    pub fn encode(
        &self,
        pieces: &[Piece],
        tokenizer: &Tokenizer,
        encode: impl Fn(&str) -> Result<Vec<u32>, RequestError>,
    ) -> Result<(String, Vec<u32>), RequestError> {
        let mut text = String::new();
        let mut ids = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Special(s) => {
                    ids.push(self.ids[*s as usize]);
                    text.push_str(s.text());
                }
                Piece::Text(t) if t.is_empty() => {}
                Piece::Text(t) if !t.contains("<|") => {
                    ids.extend(encode(t)?);
                    text.push_str(t);
                }
                Piece::Text(t) => {
                    let ordinary = self.ordinary.get_or_init(|| {
                        let mut tok = tokenizer.clone();
                        tok.set_encode_special_tokens(true);
                        tok
                    });
                    let enc = ordinary
                        .encode(t.as_str(), false)
                        .map_err(|e| RequestError::Tokenizer(e.to_string()))?;
                    ids.extend_from_slice(enc.get_ids());
                    text.push_str(t);
                }
            }
        }
        Ok((text, ids))
    }
}
