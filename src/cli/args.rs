//! Option groups shared by subcommands, each under its own `--help` heading after the
//! command's own options: [`ModelArgs`] (every command: which models, how they load and
//! render), with its [`ImageArgs`], and [`ParserArgs`] (the commands that derender).

use crate::derender::{DerenderConfig, StateCodec};
use crate::media::{DecodeLimits, FetchPolicy, Fetcher, UrlPolicy};
use crate::model::{LoadOptions, ModelRegistry};
use crate::render::multimodal::Bounds;
use crate::render::{RenderOptions, TensorDtype};
use clap::builder::BoolishValueParser;
use clap::Args;
use llm_render_parsers::{REASONING_PARSERS, TOOL_PARSERS};
use std::sync::Arc;

/// The models served and how they load and render.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Model options")]
pub struct ModelArgs {
    /// A Hugging Face snapshot folder, or a Hub id (`Qwen/Qwen3-0.6B`) found in the local Hub
    /// cache ($HF_HUB_CACHE, $HF_HOME/hub or ~/.cache/huggingface/hub; nothing is
    /// downloaded), optionally named: NAME=PATH. Repeatable or comma-separated. Without it,
    /// the embedded Qwen3 tokenizer and template are served as `qwen3`.
    #[arg(
        long = "model",
        value_name = "[NAME=]PATH",
        value_delimiter = ',',
        env = "LLM_RENDER_MODEL"
    )]
    pub models: Vec<String>,
    /// A chat template file that replaces a model's own: NAME=PATH, or PATH when one model
    /// is served. Repeatable or comma-separated. templates/ has prefix-stable variants of
    /// Qwen3's and DeepSeek-R1's that keep reasoning in history (docs/multi-turn.md).
    #[arg(
        long = "chat-template",
        value_name = "[NAME=]PATH",
        value_delimiter = ',',
        env = "LLM_RENDER_CHAT_TEMPLATE"
    )]
    pub chat_templates: Vec<String>,
    /// Template budget per render (minijinja fuel: one per instruction, one per 64 bytes a
    /// template makes); exhausted → 400. The default is 6× what a 1,000-turn chat with 200
    /// tools takes, and stops a runaway template after ~128 MB. 0 disables the bound.
    #[arg(long, default_value_t = crate::model::DEFAULT_TEMPLATE_FUEL, env = "LLM_RENDER_TEMPLATE_FUEL")]
    pub template_fuel: u64,
    /// Context length; longer prompts get a 400, and it caps `max_tokens` [default: from
    /// config.json, else tokenizer_config.json's model_max_length].
    #[arg(long, env = "LLM_RENDER_MAX_MODEL_LEN")]
    pub max_model_len: Option<u64>,
    /// Always tokenize with `tokenizers`, never with the fast encoder (fastokens, used only
    /// where it proves equal at load).
    #[arg(long, env = "LLM_RENDER_NO_FAST_TOKENIZER", value_parser = BoolishValueParser::new())]
    pub no_fast_tokenizer: bool,
    /// Always render chat templates with minijinja, never with the Rust renderings of the
    /// exact templates in templates/ (Qwen3's, DeepSeek-V3's, vLLM's Llama 3.1 JSON).
    #[arg(long, env = "LLM_RENDER_NO_NATIVE_TEMPLATES", value_parser = BoolishValueParser::new())]
    pub no_native_templates: bool,
    /// Budget of the fast encoder's segment cache (MiB); 0 turns it off.
    #[arg(long, default_value_t = 256, env = "LLM_RENDER_SEGMENT_CACHE_MB")]
    pub segment_cache_mb: usize,
    /// Budget of the prompt cache (MiB): recent prompts and their IDs, so the next turn of a
    /// chat copies the IDs of the history it re-sends; 0 turns it off.
    #[arg(long, default_value_t = 64, env = "LLM_RENDER_PROMPT_CACHE_MB")]
    pub prompt_cache_mb: usize,
    /// Accept `chat_template` in requests (compiled per request), as vLLM's flag. Only for
    /// trusted clients: `--template-fuel` bounds a template's work, but minijinja 3.1 does not
    /// charge one list concatenation, which can exhaust memory (docs/fuzzing.md).
    #[arg(long, env = "LLM_RENDER_TRUST_REQUEST_CHAT_TEMPLATE", value_parser = BoolishValueParser::new())]
    pub trust_request_chat_template: bool,
    /// Chat template kwargs every request gets unless its own `chat_template_kwargs` (or
    /// `reasoning_effort`) sets the key, as vLLM's flag: a JSON object, e.g.
    /// '{"enable_thinking": false}' to turn thinking off by default. They reach the
    /// template, the reasoning parser (render and derender) and `reasoning_parser_kwargs`.
    #[arg(long, value_parser = parse_default_kwargs, env = "LLM_RENDER_DEFAULT_CHAT_TEMPLATE_KWARGS")]
    pub default_chat_template_kwargs: Option<serde_json::Map<String, serde_json::Value>>,
    #[command(flatten)]
    pub images: ImageArgs,
}

/// How images in chat requests are loaded, bounded and sent.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Image options")]
pub struct ImageArgs {
    /// Images one request may carry; more get a 400.
    #[arg(long, default_value_t = 16, env = "LLM_RENDER_MAX_IMAGES_PER_REQUEST")]
    pub max_images_per_request: usize,
    /// Largest image tensors of one request, in bytes before base64: the uint8 `kwargs_data`
    /// plus `mm_tensors`; larger requests get a 400 that suggests `output_dtype: "none"` or
    /// fewer images.
    #[arg(long, default_value_t = 512 << 20, env = "LLM_RENDER_MAX_MM_TENSOR_BYTES")]
    pub max_mm_tensor_bytes: u64,
    /// Largest image accepted, in pixels (Pillow's bomb guard); checked from the header
    /// before decoding.
    #[arg(
        long,
        default_value_t = 89_478_485,
        env = "LLM_RENDER_MAX_IMAGE_PIXELS"
    )]
    pub max_image_pixels: u64,
    /// Largest image side accepted, in pixels.
    #[arg(long, default_value_t = 32_768, env = "LLM_RENDER_MAX_IMAGE_SIDE")]
    pub max_image_side: u32,
    /// Hosts `http(s)` image URLs may name, exactly (repeatable or comma-separated); every
    /// redirect is checked too [default: none, http(s) images are refused].
    #[arg(long, value_delimiter = ',', env = "LLM_RENDER_ALLOWED_MEDIA_DOMAINS")]
    pub allowed_media_domains: Vec<String>,
    /// Let allowed hosts resolve to loopback/private/link-local addresses (an internal image
    /// store). Off: such addresses are refused after DNS resolution.
    #[arg(long, env = "LLM_RENDER_ALLOW_PRIVATE_MEDIA_HOSTS", value_parser = BoolishValueParser::new())]
    pub allow_private_media_hosts: bool,
    /// Time limit for fetching one image, in seconds.
    #[arg(
        long,
        default_value_t = 10.0,
        env = "LLM_RENDER_MEDIA_FETCH_TIMEOUT_SECS"
    )]
    pub media_fetch_timeout_secs: f64,
    /// Largest image fetched over http(s), in bytes.
    #[arg(long, default_value_t = 20 * 1024 * 1024, env = "LLM_RENDER_MAX_MEDIA_BYTES")]
    pub max_media_bytes: u64,
    /// Serve `file://` image URLs from below this folder (resolved, symlinks included)
    /// [default: none, file:// images are refused].
    #[arg(long, env = "LLM_RENDER_ALLOWED_LOCAL_MEDIA_PATH")]
    pub allowed_local_media_path: Option<std::path::PathBuf>,
    /// `float32` or `bfloat16` add transformers' normalized pixel values as `mm_tensors`
    /// (ext) beside vLLM's `kwargs_data`; `none` sends only what vLLM's render sends (requests
    /// may override with `mm_processor_kwargs.output_dtype`).
    #[arg(long, value_enum, default_value_t = TensorDtype::None, env = "LLM_RENDER_MM_TENSOR_DTYPE")]
    pub mm_tensor_dtype: TensorDtype,
    /// Accept image processor settings in requests (`mm_processor_kwargs.min_pixels` and
    /// `max_pixels`), as vLLM's flag of the same name: they change how much work an image
    /// costs, so only for trusted clients.
    #[arg(long, env = "LLM_RENDER_TRUST_REQUEST_MM_KWARGS", value_parser = BoolishValueParser::new())]
    pub trust_request_mm_kwargs: bool,
    /// Image processor bounds for every request, as vLLM's flag: a JSON object with
    /// `min_pixels` and/or `max_pixels` (e.g. '{"max_pixels": 1003520}' caps an image at
    /// 1,280 tokens). A request's own (with --trust-request-mm-kwargs) win [default: the
    /// model's preprocessor_config.json].
    #[arg(long, value_parser = Bounds::parse_flag, env = "LLM_RENDER_MM_PROCESSOR_KWARGS")]
    pub mm_processor_kwargs: Option<Bounds>,
}

/// Which parsers derender runs, and how stream states are signed.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Derender options")]
pub struct ParserArgs {
    #[arg(long, default_value = "auto", help = reasoning_help(), env = "LLM_RENDER_REASONING_PARSER")]
    pub reasoning_parser: String,
    #[arg(long, default_value = "auto", help = tool_help(), env = "LLM_RENDER_TOOL_CALL_PARSER")]
    pub tool_call_parser: String,
    /// Secret that signs streaming derender states. Replicas with the same secret accept
    /// each other's states [default: a random one per process].
    #[arg(long, env = "LLM_RENDER_STATE_KEY", hide_env_values = true)]
    pub derender_state_key: Option<String>,
    /// Stream states kept in memory for the fast path (0: none).
    #[arg(long, default_value_t = 16384, env = "LLM_RENDER_DERENDER_STATE_CACHE")]
    pub derender_state_cache: usize,
    /// The most alternatives (`top_logprobs`) one logprobs entry of the engine's output may
    /// carry; more get a 400 (-1: unbounded). As vLLM's flag.
    #[arg(
        long,
        default_value_t = 20,
        allow_negative_numbers = true,
        env = "LLM_RENDER_MAX_LOGPROBS"
    )]
    pub max_logprobs: i64,
    /// Stream states also carry vLLM's replay fields (output_token_ids, output_chunk_lens:
    /// O(n) bytes) where parsers or stop strings run, so clients that keep only vLLM's
    /// DerenderStreamState fields resume exactly [default: O(1) states; such clients get a
    /// 400 saying so].
    #[arg(long, env = "LLM_RENDER_DERENDER_REPLAY_STATE", value_parser = BoolishValueParser::new())]
    pub derender_replay_state: bool,
}

/// `--reasoning-parser`'s help, from the parsers' table.
fn reasoning_help() -> String {
    let mut help = String::from(
        "Reasoning parser for derender: auto (by model name), none, tags:<start>,<end>, or:",
    );
    for e in REASONING_PARSERS {
        help.push_str(&format!("\n  {:<12} {}", e.name, e.help));
    }
    help
}

/// `--tool-call-parser`'s help, from the parsers' table.
fn tool_help() -> String {
    let mut help = String::from(
        "Tool-call parser for derender, for requests that declare tools: auto (by model name), \
         none, or one of vLLM's names:",
    );
    for e in TOOL_PARSERS {
        help.push_str(&format!("\n  {:<12} {}", e.name, e.help));
    }
    help
}

impl ParserArgs {
    /// Refuses unknown parser names at startup.
    pub fn check(&self) -> anyhow::Result<()> {
        // vLLM's `_compose_parser`: `hf` (and `beam`, its parser under another name) reads
        // reasoning and calls with one parser, so it is never combined with another, nor `hf`
        // with `beam` (`auto` beside either is none: see `settings`).
        let (rp, tp) = self.settings();
        for name in [
            llm_render_parsers::RESPONSE_TEMPLATE,
            llm_render_parsers::BEAM,
        ] {
            if (rp == name || tp == name) && [&rp, &tp].iter().any(|s| *s != name && *s != "none") {
                anyhow::bail!(
                    "The {name} parser cannot be combined with other reasoning or tool call parsers"
                );
            }
        }
        let rp = self.reasoning_parser.as_str();
        // `openai_gptoss` has no tag parser (the Harmony parser reads it), so it is a name only.
        let known = llm_render_parsers::reasoning_parser(rp).is_some()
            || llm_render_parsers::reasoning_parser_for_model(rp).is_some();
        if !matches!(rp, "auto" | "none") && !known {
            let names: Vec<_> = REASONING_PARSERS.iter().map(|e| e.name).collect();
            anyhow::bail!(
                "--reasoning-parser {rp:?}: expected auto, none, tags:<start>,<end> or one of {names:?}"
            );
        }
        if self.max_logprobs < -1 {
            anyhow::bail!("--max-logprobs must be -1 (unbounded) or a count");
        }
        let tp = self.tool_call_parser.as_str();
        if !matches!(tp, "auto" | "none") && !TOOL_PARSERS.iter().any(|e| e.name == tp) {
            let names: Vec<_> = TOOL_PARSERS.iter().map(|e| e.name).collect();
            anyhow::bail!("--tool-call-parser {tp:?}: expected auto, none or one of {names:?}");
        }
        Ok(())
    }

    /// The `--reasoning-parser` and `--tool-call-parser` settings the server runs: as given,
    /// but `auto` beside `hf` is `none` (vLLM's `hf` is never combined with another parser,
    /// and `auto` only stands for the flag vLLM would be started with for the model).
    pub fn settings(&self) -> (String, String) {
        let beside = |this: &str, other: &str| {
            if this == "auto" && llm_render_parsers::is_response_template(other) {
                "none".to_string()
            } else {
                this.to_string()
            }
        };
        (
            beside(&self.reasoning_parser, &self.tool_call_parser),
            beside(&self.tool_call_parser, &self.reasoning_parser),
        )
    }

    /// vLLM's startup check of `hf` or `beam` against a loaded model
    /// (`validate_tokenizer_response_template`): the model's `response_template` must load, with
    /// a `thinking` field under `--reasoning-parser hf` and a `tool_calls` field under
    /// `--tool-call-parser hf` (`beam` alike). A
    /// Harmony model (gpt-oss) is read by its Harmony parser whatever the flags, as vLLM's
    /// `_compose_parser` picks that one first.
    pub fn check_model(&self, model: &crate::model::Model) -> anyhow::Result<()> {
        let (rp, tp) = self.settings();
        let is = llm_render_parsers::is_response_template;
        let Some(name) = [&rp, &tp].into_iter().find(|s| is(s)) else {
            return Ok(());
        };
        if model.harmony.is_some() {
            return Ok(());
        }
        llm_render_parsers::check_response_template_for(
            name,
            model.response_template_json.as_ref(),
            is(&rp),
            is(&tp),
        )
        .map_err(|e| anyhow::anyhow!("model {}: {e}", model.name))?;
        Ok(())
    }

    pub fn derender_config(&self) -> DerenderConfig {
        let (reasoning_parser, tool_call_parser) = self.settings();
        DerenderConfig {
            reasoning_parser,
            tool_call_parser,
            states: Arc::new(StateCodec::new(
                self.derender_state_key.as_deref(),
                self.derender_state_cache,
            )),
            max_logprobs: usize::try_from(self.max_logprobs).ok(),
            replay_state: self.derender_replay_state,
            default_chat_template_kwargs: Default::default(),
        }
    }
}

/// `--default-chat-template-kwargs`: a JSON object whose keys are not request fields.
fn parse_default_kwargs(s: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(s).map_err(|e| format!("not a JSON object: {e}"))?;
    let not = crate::render::chat::NOT_DEFAULT_KWARGS;
    match map.keys().find(|k| not.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "`{k}` is a request field, not a template default (not allowed: {})",
            not.join(", ")
        )),
        None => Ok(map),
    }
}

impl ModelArgs {
    /// `--default-chat-template-kwargs`, for the render and the derender.
    pub fn default_kwargs(&self) -> Arc<serde_json::Map<String, serde_json::Value>> {
        Arc::new(
            self.default_chat_template_kwargs
                .clone()
                .unwrap_or_default(),
        )
    }

    fn fuel(&self) -> Option<u64> {
        (self.template_fuel > 0).then_some(self.template_fuel)
    }

    /// Refuses settings that cannot work before anything loads.
    pub fn check(&self) -> anyhow::Result<()> {
        if let Some(dir) = &self.images.allowed_local_media_path {
            if !dir.exists() {
                anyhow::bail!(
                    "--allowed-local-media-path {} does not exist",
                    dir.display()
                );
            }
            if !dir.is_dir() {
                anyhow::bail!("--allowed-local-media-path {}: not a folder", dir.display());
            }
        }
        Ok(())
    }

    pub fn load(&self) -> anyhow::Result<ModelRegistry> {
        let mut registry = ModelRegistry::load(&self.models, &self.load_options())?;
        registry.set_chat_templates(&self.chat_templates, self.fuel())?;
        Ok(registry)
    }

    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            template_fuel: self.fuel(),
            max_model_len: self.max_model_len,
            fast_tokenizer: !self.no_fast_tokenizer,
            segment_cache_bytes: self.segment_cache_mb * 1024 * 1024,
            prompt_cache_bytes: self.prompt_cache_mb * 1024 * 1024,
        }
    }

    pub fn render_options(&self) -> RenderOptions {
        let images = &self.images;
        RenderOptions {
            trust_request_chat_template: self.trust_request_chat_template,
            default_chat_template_kwargs: self.default_kwargs(),
            trust_request_mm_kwargs: images.trust_request_mm_kwargs,
            processor_bounds: images.mm_processor_kwargs.unwrap_or_default(),
            template_fuel: self.fuel(),
            native_templates: !self.no_native_templates,
            max_images_per_request: images.max_images_per_request,
            max_mm_tensor_bytes: images.max_mm_tensor_bytes,
            decode_limits: DecodeLimits {
                max_pixels: images.max_image_pixels,
                max_side: images.max_image_side,
            },
            url_policy: UrlPolicy {
                // Canonicalized once here; a folder that does not exist allows nothing.
                allowed_local_media_path: images
                    .allowed_local_media_path
                    .as_ref()
                    .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.join("\0missing"))),
                max_file_bytes: 64 << 20,
            },
            fetcher: images.fetcher(),
            reasoning_parser: "auto".into(),
            tool_call_parser: "auto".into(),
            tensor_dtype: images.mm_tensor_dtype,
        }
    }
}

impl ImageArgs {
    /// The http(s) image fetcher, when `--allowed-media-domains` names any host.
    fn fetcher(&self) -> Option<Fetcher> {
        if self.allowed_media_domains.is_empty() {
            return None;
        }
        let policy = FetchPolicy {
            allowed_domains: self
                .allowed_media_domains
                .iter()
                .map(|d| d.trim().to_ascii_lowercase())
                .collect(),
            allow_private: self.allow_private_media_hosts,
            timeout: std::time::Duration::from_secs_f64(
                self.media_fetch_timeout_secs.clamp(0.1, 600.0),
            ),
            max_bytes: self.max_media_bytes,
        };
        match Fetcher::new(policy) {
            Ok(f) => Some(f),
            Err(e) => {
                tracing::error!("cannot build the image fetcher ({e}); http(s) images are refused");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ParserArgs;

    fn args(reasoning: &str, tools: &str) -> ParserArgs {
        ParserArgs {
            reasoning_parser: reasoning.into(),
            tool_call_parser: tools.into(),
            derender_state_key: None,
            derender_state_cache: 16384,
            max_logprobs: 20,
            derender_replay_state: false,
        }
    }

    #[test]
    fn default_kwargs_are_an_object_of_template_defaults() {
        let ok = super::parse_default_kwargs(r#"{"enable_thinking": false}"#);
        assert_eq!(ok.map(|m| m.len()), Ok(1));
        assert!(super::parse_default_kwargs("[1]").is_err());
        for field in ["tools", "messages", "documents", "add_generation_prompt"] {
            let err = super::parse_default_kwargs(&format!(r#"{{"{field}": 1}}"#));
            assert!(err.is_err_and(|e| e.contains(field)), "{field}");
        }
    }

    #[test]
    fn parser_names_are_checked_at_startup() {
        // gpt-oss's names, whose reasoning parser has no tags of its own.
        assert!(args("openai_gptoss", "openai").check().is_ok());
        assert!(args("qwen3", "hermes").check().is_ok());
        assert!(args("tags:<r>,</r>", "none").check().is_ok());
        assert!(args("nope", "auto").check().is_err());
        assert!(args("auto", "nope").check().is_err());
        // `hf` alone, on both flags, or beside `auto` (none there); never beside another.
        assert!(args("hf", "none").check().is_ok());
        assert!(args("none", "hf").check().is_ok());
        assert!(args("hf", "hf").check().is_ok());
        assert!(args("hf", "auto").check().is_ok());
        assert_eq!(args("hf", "auto").settings(), ("hf".into(), "none".into()));
        assert_eq!(args("auto", "hf").settings(), ("none".into(), "hf".into()));
        assert_eq!(
            args("auto", "auto").settings(),
            ("auto".into(), "auto".into())
        );
        assert!(args("hf", "hermes").check().is_err());
        assert!(args("qwen3", "hf").check().is_err());
        assert!(args("beam", "beam").check().is_ok());
        assert!(args("beam", "none").check().is_ok());
        assert_eq!(
            args("auto", "beam").settings(),
            ("none".into(), "beam".into())
        );
        // vLLM: "--reasoning-parser hf and --tool-call-parser beam cannot be combined".
        assert!(args("hf", "beam").check().is_err());
        assert!(args("beam", "hermes").check().is_err());
    }
}
