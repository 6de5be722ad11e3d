//! Server-wide switches that change how requests render (`llm-render serve`'s flags).

use super::multimodal::{Bounds, TensorDtype};

/// Server-wide switches that change how requests render.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// Allow `chat_template` in the request (compiled per request; vLLM's
    /// `--trust-request-chat-template`).
    pub trust_request_chat_template: bool,
    /// Allow `mm_processor_kwargs` other than `output_dtype` (vLLM's
    /// `--trust-request-mm-kwargs`).
    pub trust_request_mm_kwargs: bool,
    /// Fuel for per-request templates; model templates carry their own from load time.
    pub template_fuel: Option<u64>,
    /// Render known templates in Rust (`template::native`); off, every render goes through minijinja.
    pub native_templates: bool,
    /// Images one request may carry.
    pub max_images_per_request: usize,
    /// Tensor bytes one request may produce before base64: its uint8 `kwargs_data` plus its
    /// `mm_tensors`.
    pub max_mm_tensor_bytes: u64,
    /// Size limits checked before an image is decoded.
    pub decode_limits: crate::media::DecodeLimits,
    /// Which image URLs besides `data:` may be loaded.
    pub url_policy: crate::media::UrlPolicy,
    /// Fetches `http(s)` image URLs (`--allowed-media-domains`); `None` refuses them.
    pub fetcher: Option<crate::media::Fetcher>,
    /// Element type of `mm_tensors` unless the request asks otherwise.
    pub tensor_dtype: TensorDtype,
    /// Server-wide image processor bounds (`--mm-processor-kwargs`), under a request's own.
    pub processor_bounds: Bounds,
    /// `--reasoning-parser` (as derender reads it): whether and how the render fills
    /// `reasoning_ended` and `reasoning_parser_kwargs` (`parse_context.rs`).
    pub reasoning_parser: String,
    /// `--tool-call-parser`: without one for the model, a `tool_choice` other than `none` is
    /// refused, as vLLM refuses it without `--tool-call-parser`.
    pub tool_call_parser: String,
    /// `--default-chat-template-kwargs` (vLLM's flag): template kwargs every chat request
    /// gets unless its own `chat_template_kwargs` (or `reasoning_effort`) sets the key.
    pub default_chat_template_kwargs: std::sync::Arc<serde_json::Map<String, serde_json::Value>>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            trust_request_chat_template: false,
            trust_request_mm_kwargs: false,
            template_fuel: None,
            native_templates: true,
            max_images_per_request: 16,
            max_mm_tensor_bytes: 512 << 20,
            decode_limits: crate::media::DecodeLimits::default(),
            url_policy: crate::media::UrlPolicy {
                allowed_local_media_path: None,
                max_file_bytes: 64 << 20,
            },
            fetcher: None,
            tensor_dtype: TensorDtype::None,
            processor_bounds: Bounds::default(),
            reasoning_parser: "auto".into(),
            tool_call_parser: "auto".into(),
            default_chat_template_kwargs: Default::default(),
        }
    }
}
