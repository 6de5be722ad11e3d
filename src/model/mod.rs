//! A served model: tokenizer, compiled chat templates, special tokens and generation defaults,
//! loaded from a Hugging Face snapshot folder (given, or found in the local Hub cache by its
//! Hub id: `hub.rs`) or from the bundle embedded in the binary.
//!
//! Files read (docs/api.md, "Process"):
//! * `tokenizer.json`, or `tokenizer.json.gz`;
//! * `tokenizer_config.json`: `chat_template` (string or `[{name, template}]`), named special
//!   tokens (string or `AddedToken` object), `model_max_length`;
//! * `chat_template.jinja`, which overrides the template in `tokenizer_config.json`
//!   (as transformers ≥ 4.43 does); `chat_template.json` (`{"chat_template": ...}`) is used
//!   only when neither of the others has one;
//! * `generation_config.json` and `config.json`, both optional; `config.json` gives the
//!   context length, the image token, and the per-token state sizes `llm-render audit`
//!   reports (`architecture.rs`).

mod architecture;
mod bundle;
mod config;
mod harmony;
pub mod hub;
mod registry;

pub use architecture::{dtype_bytes, Architecture, KvLayout};
pub use config::{GenerationConfig, ModelConfig, TokenizerConfig};
pub use registry::ModelRegistry;

use crate::error::RequestError;
use crate::media::QwenVlProcessor;
use crate::template::{ChatTemplates, TemplateLoadError};
use crate::tokenize::{Encoder, EncoderOptions, TextDecoder};
use bundle::{embedded, Bundle};
pub use harmony::Harmony;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use thiserror::Error;
use tokenizers::Tokenizer;

#[derive(Debug, Error)]
pub enum LoadError {
    // The causes are fields named `error`, not `source`: they are part of the message, and
    // a `source` would print them a second time in anyhow's `{:#}` chain.
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: invalid JSON: {error}")]
    Json {
        path: String,
        error: serde_json::Error,
    },
    #[error("{0}: no tokenizer.json or tokenizer.json.gz")]
    NoTokenizer(String),
    #[error("{path}: cannot load tokenizer: {message}")]
    Tokenizer { path: String, message: String },
    #[error(transparent)]
    Template(#[from] TemplateLoadError),
    #[error("bad --model value {0:?}: expected PATH or NAME=PATH")]
    BadSpec(String),
    #[error("{0} does not exist")]
    Missing(String),
    #[error("{0} is not a folder (a model is a Hugging Face snapshot folder)")]
    NotAFolder(String),
    #[error(
        "{id} does not exist as a folder, and is not in the Hugging Face cache: {why}; \
         download it with `huggingface-cli download {id} --include '*.json' '*.jinja'` \
         (the tokenizer and configs: the weights are not needed)"
    )]
    NotInHubCache { id: String, why: String },
    #[error("model name {0:?} is given twice")]
    Duplicate(String),
    #[error("{0}: loading it panicked")]
    Panicked(String),
    #[error("--chat-template {spec:?}: {message}")]
    ChatTemplate { spec: String, message: String },
}

/// serve's template budget per render (`--template-fuel`), in minijinja fuel: one per
/// instruction, one per 64 bytes of data a template makes. Measured by
/// `scripts/template_fuel_budget.py` (docs/fuzzing.md): a 1,000-turn chat with 200 tools
/// takes at most 318k (Qwen3's template, 140k tokens; Llama 3.1's, DeepSeek-V3's and
/// Qwen2.5-VL's take less), so the default is 6.3× the most; at 2M, a self-doubling string
/// ends in a 400 after ~128 MB and ~0.05 s, where the former 50M let it reach 6.6 GB and 8 s.
pub const DEFAULT_TEMPLATE_FUEL: u64 = 2_000_000;

/// Options that apply to every loaded model.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// minijinja fuel per render (bounds a template's run time and the data it makes);
    /// `None` is unbounded.
    pub template_fuel: Option<u64>,
    /// Overrides the context length from `config.json`.
    pub max_model_len: Option<u64>,
    /// Use the fast encoder where it proves equal to `tokenizers` (see `crate::tokenize`).
    pub fast_tokenizer: bool,
    /// Segment cache budget of the fast encoder, in bytes; 0 turns it off.
    pub segment_cache_bytes: usize,
    /// Prompt prefix cache budget, in bytes; 0 turns it off (see `render::prompt_cache`).
    pub prompt_cache_bytes: usize,
}

impl Default for LoadOptions {
    /// The `serve` defaults: fast encoder on, 256 MiB segment cache, [`DEFAULT_TEMPLATE_FUEL`].
    fn default() -> Self {
        LoadOptions {
            template_fuel: Some(DEFAULT_TEMPLATE_FUEL),
            max_model_len: None,
            fast_tokenizer: true,
            segment_cache_bytes: 256 * 1024 * 1024,
            prompt_cache_bytes: 64 * 1024 * 1024,
        }
    }
}

/// One served model. Immutable after load and shared by all requests.
pub struct Model {
    pub name: String,
    /// The folder it was loaded from, or `<embedded>`.
    pub source: String,
    /// The reference tokenizer (`tokenizers`, what transformers runs): decoding, token
    /// strings, and encoding wherever the fast encoder is off.
    pub tokenizer: Tokenizer,
    /// The encoder renders use.
    pub encoder: Encoder,
    /// IDs → text, as `tokenizer.decode` (see [`Model::decode`]).
    pub decoder: TextDecoder,
    pub templates: ChatTemplates,
    /// Named special tokens (`bos_token` …) passed to every template render.
    pub special_tokens: Vec<(&'static str, String)>,
    pub generation: GenerationConfig,
    /// EOS ids from `generation_config.json`, else the tokenizer's `eos_token`.
    pub eos_token_ids: Vec<u32>,
    /// The tokenizer's own `eos_token` (vLLM's primary EOS: an output ending on it reports
    /// `stop_reason: null`, any other stop token its ID).
    pub primary_eos: Option<u32>,
    pub max_model_len: Option<u64>,
    /// How long this model took to load (the startup log's `load_ms`).
    pub load_time: std::time::Duration,
    /// The image processor from `preprocessor_config.json`, when it is one we implement.
    pub image_processor: Option<QwenVlProcessor>,
    /// The image placeholder token (`image_token_id` in `config.json`, else `<|image_pad|>`).
    pub image_token_id: Option<u32>,
    /// Embedding width and KV-cache size per token, from `config.json` (`llm-render audit`).
    pub architecture: Option<Architecture>,
    /// Set for a Harmony model (gpt-oss), whose chats render in that format rather than
    /// through a chat template.
    pub harmony: Option<Harmony>,
    /// `tokenizer_config.json`'s `response_template` (vLLM's `hf` parser), as written; null
    /// when absent. Checked at startup where a parser flag is `hf` (`ParserArgs::check_model`).
    pub response_template_json: Option<serde_json::Value>,
    /// That template loaded, when it loads (`ResponseTemplate::from_json`): what the `hf`
    /// parser of each request is built from.
    pub response_template: Option<std::sync::Arc<llm_render_parsers::ResponseTemplate>>,
    /// The same template as vLLM's `beam` grammar reads it (`--tool-call-parser beam` /
    /// `--reasoning-parser beam`).
    pub beam_template: Option<std::sync::Arc<llm_render_parsers::BeamTemplate>>,
    /// The checkpoint's chat template when it has one (transformers' `tokenizer.chat_template`
    /// as a string; named templates are a dict there, so none), kept as loaded (vLLM's
    /// `--chat-template` does not change it): what a reasoning parser's constructor reads
    /// (`ParserSettings::chat_template`).
    pub chat_template_source: Option<std::sync::Arc<str>>,
    /// `tokenizer_config.json`'s `token_suffix` (Hunyuan v3's parsers append it to their
    /// tags); `None` when unset or empty.
    pub token_suffix: Option<std::sync::Arc<str>>,
    /// The suffix of the Hunyuan structural tokens in the vocabulary (Hunyuan v4's parsers
    /// and tag, vLLM's `detect_token_suffix`); `None` when there is none.
    pub vocab_token_suffix: Option<std::sync::Arc<str>>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("name", &self.name)
            .field("source", &self.source)
            .finish()
    }
}

impl Model {
    /// Loads a Hugging Face snapshot folder.
    pub fn load_dir(name: &str, dir: &Path, opts: &LoadOptions) -> Result<Model, LoadError> {
        Self::load(name, dir.display().to_string(), &Bundle::Dir(dir), opts)
    }

    /// Loads the embedded default model (`qwen3`).
    pub fn embedded(opts: &LoadOptions) -> Result<Model, LoadError> {
        Self::load(embedded::NAME, "<embedded>".into(), &Bundle::Embedded, opts)
    }

    fn load(
        name: &str,
        source: String,
        bundle: &Bundle,
        opts: &LoadOptions,
    ) -> Result<Model, LoadError> {
        let started = std::time::Instant::now();
        let (tokenizer, encoder) = load_tokenizer(bundle, opts)?;
        let decoder = TextDecoder::new(&tokenizer);
        let tok_config: TokenizerConfig = bundle.json("tokenizer_config.json")?;
        let generation: GenerationConfig = bundle.json("generation_config.json")?;
        let (model_config, architecture) = read_config(bundle)?;
        let templates =
            ChatTemplates::compile(template_sources(bundle, &tok_config)?, opts.template_fuel)?;
        let primary_eos = tok_config
            .eos_token
            .as_ref()
            .and_then(|t| tokenizer.token_to_id(t.content()));
        let eos_token_ids = match &generation.eos_token_id {
            Some(ids) => ids.to_vec(),
            None => primary_eos.into_iter().collect(),
        };
        let max_model_len = opts
            .max_model_len
            .or(model_config.max_model_len())
            .or_else(|| {
                // Python writes "no limit" as ~1e30; only a real limit is kept.
                tok_config
                    .model_max_length
                    .filter(|m| *m > 0.0 && *m < 1e12)
                    .map(|m| m as u64)
            });
        let image_processor = bundle
            .read("preprocessor_config.json")?
            .and_then(|b| QwenVlProcessor::from_config(&b));
        let image_token_id = model_config
            .image_token_id
            .or_else(|| tokenizer.token_to_id("<|image_pad|>"));
        let harmony = Harmony::detect(model_config.model_type.as_deref(), &tokenizer);
        let response_template = tok_config
            .response_template
            .as_ref()
            .filter(|t| t.is_object())
            .and_then(|t| llm_render_parsers::ResponseTemplate::from_json(t).ok())
            .map(std::sync::Arc::new);
        let beam_template = tok_config
            .response_template
            .as_ref()
            .filter(|t| t.is_object())
            .and_then(|t| llm_render_parsers::BeamTemplate::from_json(t).ok())
            .map(std::sync::Arc::new);
        let chat_template_source = match templates.sources().as_slice() {
            [only] => Some(std::sync::Arc::from(*only)),
            _ => None,
        };
        let token_suffix = tok_config
            .token_suffix
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(std::sync::Arc::from);
        let vocab_token_suffix = hy_token_suffix(&tokenizer).map(std::sync::Arc::from);
        Ok(Model {
            load_time: started.elapsed(),
            chat_template_source,
            token_suffix,
            vocab_token_suffix,
            harmony,
            response_template_json: tok_config.response_template.clone(),
            response_template,
            beam_template,
            image_processor,
            image_token_id,
            architecture,
            name: name.to_string(),
            source,
            special_tokens: tok_config.special_tokens_map(),
            tokenizer,
            encoder,
            decoder,
            templates,
            generation,
            eos_token_ids,
            primary_eos,
            max_model_len,
        })
    }

    /// Encodes `text` with the model's encoder; added tokens in it are matched
    /// (`split_special_tokens=False`).
    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>, RequestError> {
        self.encoder
            .encode(&self.tokenizer, text, add_special_tokens)
            .map_err(RequestError::Tokenizer)
    }

    /// [`Model::encode`] of a prompt held shared, without special tokens (the prompt cache
    /// keeps it and the IDs rather than copies).
    pub fn encode_shared(
        &self,
        prompt: &std::sync::Arc<String>,
    ) -> Result<std::sync::Arc<Vec<u32>>, RequestError> {
        self.encoder
            .encode_shared(&self.tokenizer, prompt)
            .map_err(RequestError::Tokenizer)
    }

    /// `tokenizer.decode(ids, skip_special_tokens)`, from a table of each ID's bytes when
    /// that is exact for this tokenizer (see `decoder.rs`).
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, String> {
        self.decoder
            .decode(&self.tokenizer, ids, skip_special_tokens)
    }

    /// Each token's (start, end) in characters of `text`, as a fast tokenizer's
    /// `return_offsets_mapping` gives them (vLLM's `token_offsets`): from `tokenizers`' own
    /// encoding of `text`, when it is exactly `ids` (`None` otherwise, as vLLM leaves them out
    /// where it cannot compute them). Only run when a request asks for offsets.
    pub fn token_offsets(
        &self,
        text: &str,
        ids: &[u32],
        add_special_tokens: bool,
    ) -> Option<Vec<(usize, usize)>> {
        let enc = self.tokenizer.encode(text, add_special_tokens).ok()?;
        if enc.get_ids() != ids {
            return None;
        }
        // Byte offsets → character offsets, in one pass over the text's char boundaries.
        let mut chars_before = vec![0usize; text.len() + 1];
        let mut count = 0;
        for (b, _) in text.char_indices() {
            chars_before[b] = count;
            count += 1;
        }
        chars_before[text.len()] = count;
        // A byte inside a character (a token split through one) counts as that character.
        let mut last = 0;
        for (b, slot) in chars_before.iter_mut().enumerate() {
            if text.is_char_boundary(b) {
                last = *slot;
            } else {
                *slot = last;
            }
        }
        Some(
            enc.get_offsets()
                .iter()
                .map(|&(s, e)| {
                    let at = |b: usize| chars_before[b.min(text.len())];
                    (at(s), at(e))
                })
                .collect(),
        )
    }

    /// The name `auto` looks a parser up by: the model's name, or for a Harmony model
    /// (gpt-oss) `harmony`, gpt-oss's parser of that kind, whatever the model is called.
    pub fn auto_parser_key<'a>(&'a self, harmony: &'static str) -> &'a str {
        match self.harmony {
            Some(_) => harmony,
            None => &self.name,
        }
    }

    /// Whether `id` names a token of this vocabulary (base or added).
    pub fn has_token(&self, id: u32) -> bool {
        self.decoder.has_token(&self.tokenizer, id)
    }

    /// Replaces every chat template of the model with `source` (`--chat-template`,
    /// `template-diff`'s `.jinja` files), as vLLM's `--chat-template` overrides the
    /// tokenizer's.
    pub fn replace_chat_template(
        &mut self,
        source: String,
        fuel: Option<u64>,
    ) -> Result<(), crate::template::TemplateLoadError> {
        self.templates = ChatTemplates::compile(vec![("default".into(), source)], fuel)?;
        Ok(())
    }

    /// Whether `skip_special_tokens` drops `id` (a special added token).
    pub fn is_special_token(&self, id: u32) -> bool {
        self.decode(&[id], true).is_ok_and(|t| t.is_empty())
            && self.decode(&[id], false).is_ok_and(|t| !t.is_empty())
    }
}

/// The reference tokenizer and the encoder renders use, from `tokenizer.json`. The two are
/// built from the same file on two threads: fastokens' tables take the longer (~0.4–0.8 s
/// for Qwen3 here), `tokenizers`' parse ~0.15 s.
fn load_tokenizer(bundle: &Bundle, opts: &LoadOptions) -> Result<(Tokenizer, Encoder), LoadError> {
    let (file, json) = bundle.tokenizer_json()?;
    let (tokenizer, fast) = std::thread::scope(|scope| {
        let fast = opts
            .fast_tokenizer
            .then(|| scope.spawn(|| crate::tokenize::build_fast(&json)));
        let tokenizer = Tokenizer::from_bytes(&json);
        let fast = fast.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err("fastokens panicked while loading it".into()))
        });
        (tokenizer, fast)
    });
    drop(json);
    let tokenizer = tokenizer.map_err(|e| LoadError::Tokenizer {
        path: bundle.describe(file),
        message: e.to_string(),
    })?;
    let encoder_opts = EncoderOptions {
        segment_cache_bytes: opts.segment_cache_bytes,
        prompt_cache_bytes: opts.prompt_cache_bytes,
    };
    let encoder = match fast {
        Some(fast) => Encoder::new(&tokenizer, fast, &encoder_opts),
        None => {
            Encoder::reference_only(&tokenizer, "disabled by --no-fast-tokenizer", &encoder_opts)
        }
    };
    Ok((tokenizer, encoder))
}

/// `config.json`, read once: the fields rendering uses, and the sizes `llm-render audit`
/// reports. A bundle without one has neither.
fn read_config(bundle: &Bundle) -> Result<(ModelConfig, Option<Architecture>), LoadError> {
    let Some(bytes) = bundle.read("config.json")? else {
        return Ok((ModelConfig::default(), None));
    };
    let bad = |error| LoadError::Json {
        path: bundle.describe("config.json"),
        error,
    };
    let json: serde_json::Value = serde_json::from_slice(&bytes).map_err(bad)?;
    let config = ModelConfig::deserialize(&json).map_err(bad)?;
    Ok((config, Architecture::from_config(&json)))
}

/// The chat templates as `(name, source)`, as transformers picks them: `chat_template.jinja`,
/// else `tokenizer_config.json`'s `chat_template` (one, or named ones), else
/// `chat_template.json`.
fn template_sources(
    bundle: &Bundle,
    tok_config: &TokenizerConfig,
) -> Result<Vec<(String, String)>, LoadError> {
    if let Some(bytes) = bundle.read("chat_template.jinja")? {
        return Ok(vec![(
            "default".into(),
            String::from_utf8_lossy(&bytes).into_owned(),
        )]);
    }
    if let Some(spec) = &tok_config.chat_template {
        return Ok(match spec {
            config::TemplateSpec::Single(s) => vec![("default".into(), s.clone())],
            config::TemplateSpec::Named(list) => list
                .iter()
                .map(|t| (t.name.clone(), t.template.clone()))
                .collect(),
        });
    }
    let Some(bytes) = bundle.read("chat_template.json")? else {
        return Ok(Vec::new());
    };
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|error| LoadError::Json {
        path: bundle.describe("chat_template.json"),
        error,
    })?;
    Ok(v.get("chat_template")
        .and_then(|s| s.as_str())
        .map(|s| vec![("default".into(), s.to_string())])
        .unwrap_or_default())
}

/// Parses a `--model` value, `[NAME=]PATH` or `[NAME=]ORG/REPO`, into the served name and
/// the folder to load. A path that exists is that folder, served under its own name by
/// default; otherwise a Hugging Face Hub id is looked up in the local Hub cache (`hub.rs`),
/// served under the id by default, as vLLM does.
pub fn parse_model_spec(spec: &str) -> Result<(String, PathBuf), LoadError> {
    let (name, given) = match spec.split_once('=') {
        Some((n, p)) if !n.is_empty() && !p.is_empty() => (Some(n), p),
        Some(_) => return Err(LoadError::BadSpec(spec.into())),
        None => (None, spec),
    };
    let path = Path::new(given);
    let exists = path.try_exists().map_err(|error| LoadError::Io {
        path: given.into(),
        error,
    })?;
    if exists {
        if !path.is_dir() {
            return Err(LoadError::NotAFolder(given.into()));
        }
        let name = match name {
            Some(n) => n.to_string(),
            None => path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .filter(|n| !n.is_empty())
                .ok_or_else(|| LoadError::BadSpec(spec.into()))?,
        };
        return Ok((name, path.to_path_buf()));
    }
    if !hub::is_repo_id(given) {
        return Err(LoadError::Missing(given.into()));
    }
    let snapshot = match hub::cache_dir() {
        Some(cache) => hub::snapshot(&cache, given),
        None => Err("there is no cache folder (set HF_HUB_CACHE or HF_HOME)".into()),
    }
    .map_err(|why| LoadError::NotInHubCache {
        id: given.into(),
        why,
    })?;
    Ok((name.unwrap_or(given).to_string(), snapshot))
}

/// The suffix of the Hunyuan structural tokens (`<think:6124c78e>` → `:6124c78e`), as vLLM's
/// `detect_token_suffix` finds it: a token `<think…>`, `<tool_calls…>`, `<tool_call…>`,
/// `<arg_key…>` or `<arg_value…>` whose rest is `:` and characters that are neither
/// whitespace nor `>`. vLLM takes the first in its vocabulary's (unordered) dict; here the
/// one with the lowest ID. An unsuffixed match, or none, is no suffix.
fn hy_token_suffix(tokenizer: &Tokenizer) -> Option<String> {
    const NAMES: [&str; 5] = ["think", "tool_calls", "tool_call", "arg_key", "arg_value"];
    let suffix_of = |token: &str| {
        let inner = token.strip_prefix('<')?.strip_suffix('>')?;
        NAMES.iter().find_map(|name| {
            let rest = inner.strip_prefix(name)?;
            let suffixed = rest.len() > 1
                && rest.starts_with(':')
                && !rest.chars().any(|c| c.is_whitespace() || c == '>');
            (rest.is_empty() || suffixed).then(|| rest.to_string())
        })
    };
    tokenizer
        .get_vocab(true)
        .into_iter()
        .filter_map(|(token, id)| suffix_of(&token).map(|s| (id, s)))
        .min_by_key(|(id, _)| *id)
        .map(|(_, s)| s)
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::hy_token_suffix;
    use tokenizers::Tokenizer;

    fn tokenizer(vocab: &str) -> Tokenizer {
        let json = format!(
            r#"{{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
                "normalizer": null, "pre_tokenizer": null, "post_processor": null,
                "decoder": null, "model": {{"type": "WordLevel", "vocab": {vocab},
                "unk_token": "<unk>"}}}}"#
        );
        Tokenizer::from_bytes(json.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// vLLM's `detect_token_suffix`: the suffix of a Hunyuan structural token, none for
    /// unsuffixed ones or a vocabulary without them.
    #[test]
    fn the_hunyuan_token_suffix_is_read_off_the_vocabulary() {
        let hy = tokenizer(
            r#"{"<unk>": 0, "hi": 1, "</think:6124c78e>": 2, "<tool_call:6124c78e>": 3}"#,
        );
        assert_eq!(hy_token_suffix(&hy).as_deref(), Some(":6124c78e"));
        let plain = tokenizer(r#"{"<unk>": 0, "<think>": 1, "<arg_key>": 2}"#);
        assert_eq!(hy_token_suffix(&plain), None);
        let other =
            tokenizer(r#"{"<unk>": 0, "<thinking:x>": 1, "<tool_call: x>": 2, "<think:>": 3}"#);
        assert_eq!(hy_token_suffix(&other), None);
    }
}
