//! The JSON files of a Hugging Face snapshot that shape rendering: `tokenizer_config.json`,
//! `generation_config.json` and `config.json`. Unknown keys are ignored; malformed known keys
//! are load errors, so a bad bundle fails at start-up and never per request.

use serde::Deserialize;
use serde_json::Value;

/// A special-token entry: a plain string, or an `AddedToken` object with `content`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum TokenSpec {
    Plain(String),
    Added { content: String },
}

impl TokenSpec {
    pub fn content(&self) -> &str {
        match self {
            TokenSpec::Plain(s) => s,
            TokenSpec::Added { content } => content,
        }
    }
}

/// `chat_template` in `tokenizer_config.json`: one template, or named templates.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum TemplateSpec {
    Single(String),
    Named(Vec<NamedTemplate>),
}

#[derive(Debug, Clone, Deserialize)]
pub struct NamedTemplate {
    pub name: String,
    pub template: String,
}

/// The parts of `tokenizer_config.json` rendering uses.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TokenizerConfig {
    #[serde(default)]
    pub chat_template: Option<TemplateSpec>,
    #[serde(default)]
    pub bos_token: Option<TokenSpec>,
    #[serde(default)]
    pub eos_token: Option<TokenSpec>,
    #[serde(default)]
    pub unk_token: Option<TokenSpec>,
    #[serde(default)]
    pub sep_token: Option<TokenSpec>,
    #[serde(default)]
    pub pad_token: Option<TokenSpec>,
    #[serde(default)]
    pub cls_token: Option<TokenSpec>,
    #[serde(default)]
    pub mask_token: Option<TokenSpec>,
    /// Python writes huge sentinels here (1e30), so it is read as a float.
    #[serde(default)]
    pub model_max_length: Option<f64>,
    /// The checkpoint's `response_template` metadata, which vLLM's `hf` parser reads
    /// (`resolve_response_template`: the tokenizer's `init_kwargs["response_template"]`), kept
    /// as written: only `--reasoning-parser hf` / `--tool-call-parser hf` load it.
    #[serde(default)]
    pub response_template: Option<Value>,
    /// Hunyuan v3's per-checkpoint suffix of its structural tokens (`:6124c78e`), which
    /// vLLM's hy_v3 parsers read from the tokenizer's `init_kwargs["token_suffix"]`.
    #[serde(default)]
    pub token_suffix: Option<String>,
}

impl TokenizerConfig {
    /// transformers' `special_tokens_map`: the named special tokens that are set, in
    /// `SPECIAL_TOKENS_ATTRIBUTES` order. Templates see each as a variable (`bos_token` …).
    pub fn special_tokens_map(&self) -> Vec<(&'static str, String)> {
        [
            ("bos_token", &self.bos_token),
            ("eos_token", &self.eos_token),
            ("unk_token", &self.unk_token),
            ("sep_token", &self.sep_token),
            ("pad_token", &self.pad_token),
            ("cls_token", &self.cls_token),
            ("mask_token", &self.mask_token),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|t| (k, t.content().to_string())))
        .collect()
    }
}

/// An int or a list of ints (`eos_token_id` takes both forms).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(u32),
    Many(Vec<u32>),
}

impl OneOrMany {
    pub fn to_vec(&self) -> Vec<u32> {
        match self {
            OneOrMany::One(x) => vec![*x],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// `generation_config.json` defaults that vLLM copies into `SamplingParams`
/// (`ModelConfig.get_diff_sampling_param`: repetition_penalty, temperature, top_k, top_p,
/// min_p, max_new_tokens) plus the EOS ids that become `stop_token_ids`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct GenerationConfig {
    #[serde(default)]
    pub eos_token_id: Option<OneOrMany>,
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub top_p: Option<f64>,
    #[serde(default)]
    pub top_k: Option<i64>,
    #[serde(default)]
    pub min_p: Option<f64>,
    #[serde(default)]
    pub repetition_penalty: Option<f64>,
    #[serde(default)]
    pub max_new_tokens: Option<u64>,
}

/// `config.json`: the context length, the image token and the model type.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ModelConfig {
    /// `gpt_oss` renders in Harmony (`harmony.rs`).
    #[serde(default)]
    pub model_type: Option<String>,
    #[serde(default)]
    pub max_position_embeddings: Option<u64>,
    #[serde(default)]
    pub max_seq_len: Option<u64>,
    #[serde(default)]
    pub text_config: Option<Value>,
    #[serde(default)]
    pub image_token_id: Option<u32>,
}

impl ModelConfig {
    /// The context length vLLM would derive (`max_position_embeddings`, also in
    /// `text_config` for multimodal configs).
    pub fn max_model_len(&self) -> Option<u64> {
        self.max_position_embeddings
            .or(self.max_seq_len)
            .or_else(|| {
                self.text_config
                    .as_ref()
                    .and_then(|t| t.get("max_position_embeddings"))
                    .and_then(Value::as_u64)
            })
    }
}
