use serde::{Deserialize, Serialize};

/// `stop`: one string or a list of strings.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum StopSpec {
    One(String),
    Many(Vec<String>),
}

/// Declares a request struct with the fields chat and completion requests share appended
/// (the sampling fields, OpenAI's and vLLM's, and the ones passed to the engine as they are),
/// and `fn sampling(&self) -> SamplingFields`.
/// The fields are real struct fields, not `#[serde(flatten)]`, so a type error names the
/// field (`temperature: invalid type ...`) and the body is parsed once.
/// `max_tokens_default` names the function giving `max_tokens` when the field is absent
/// (an explicit `null` is `None`): vLLM's chat request has none, its completion request 16.
macro_rules! with_sampling_fields {
    (max_tokens_default = $default:literal; $(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        pub struct $name {
            $($body)*
            #[serde(default = $default)] pub max_tokens: Option<u64>,
            #[serde(default)] pub max_completion_tokens: Option<u64>,
            #[serde(default)] pub temperature: Option<f64>,
            #[serde(default)] pub top_p: Option<f64>,
            #[serde(default)] pub top_k: Option<i64>,
            #[serde(default)] pub min_p: Option<f64>,
            #[serde(default)] pub n: Option<u32>,
            #[serde(default)] pub stop: Option<$crate::protocol::StopSpec>,
            #[serde(default)] pub stop_token_ids: Option<Vec<u32>>,
            #[serde(default)] pub seed: Option<i64>,
            #[serde(default)] pub presence_penalty: Option<f64>,
            #[serde(default)] pub frequency_penalty: Option<f64>,
            #[serde(default)] pub repetition_penalty: Option<f64>,
            /// Chat: a bool (with `top_logprobs`); completions: an int.
            #[serde(default)] pub logprobs: Option<serde_json::Value>,
            #[serde(default)] pub top_logprobs: Option<i64>,
            #[serde(default)] pub prompt_logprobs: Option<i64>,
            #[serde(default)] pub skip_special_tokens: Option<bool>,
            #[serde(default)] pub spaces_between_special_tokens: Option<bool>,
            #[serde(default)] pub include_stop_str_in_output: Option<bool>,
            #[serde(default)] pub min_tokens: Option<u64>,
            #[serde(default)] pub ignore_eos: Option<bool>,
            /// OpenAI's `text`, `json_object`, `json_schema`; vLLM's `structural_tag`.
            #[serde(default)] pub response_format: Option<serde_json::Value>,
            /// vLLM's `StructuredOutputsParams` (`json`, `regex`, `choice`, `grammar`, …).
            #[serde(default)] pub structured_outputs: Option<serde_json::Value>,
            /// vLLM's cap on reasoning tokens (`SamplingParams.thinking_token_budget`).
            #[serde(default)] pub thinking_token_budget: Option<u64>,
            /// Token ID (as a string) → bias added to its logit.
            #[serde(default)] pub logit_bias: Option<serde_json::Map<String, serde_json::Value>>,
            #[serde(default)] pub allowed_token_ids: Option<Vec<u32>>,
            #[serde(default)] pub bad_words: Option<Vec<String>>,
            /// vLLM's `vllm_xargs`: passed to the engine as `sampling_params.extra_args`.
            #[serde(default)] pub vllm_xargs: Option<serde_json::Map<String, serde_json::Value>>,
            /// vLLM's prompt truncation (`render::truncate`): keep N tokens (-1: the context).
            #[serde(default)] pub truncate_prompt_tokens: Option<i64>,
            #[serde(default)] pub truncation_side: Option<String>,
            // The GenerateRequest fields both requests pass to the engine.
            #[serde(default)] pub stream: bool,
            /// Its `include_usage` and `continuous_usage_stats` read as pydantic reads a
            /// `bool` (`"yes"` is `true`: `lax::lax_bool`) at parse time.
            #[serde(default, deserialize_with = "super::lax::lax_stream_options")]
            pub stream_options: Option<serde_json::Value>,
            #[serde(default)] pub cache_salt: Option<String>,
            #[serde(default)] pub priority: i64,
            #[serde(default)] pub kv_transfer_params: Option<serde_json::Value>,
            /// vLLM's encoder-cache transfer parameters (P/D for multimodal), passed through.
            #[serde(default)] pub ec_transfer_params: Option<serde_json::Value>,
            /// Ask for `token_offsets`: each prompt token's (start, end) in characters of the
            /// prompt.
            #[serde(default)] pub return_token_offsets: bool,
            /// Passed to the engine: return the prompt's IDs with its output.
            #[serde(default)] pub return_token_ids: Option<bool>,
            /// Echo the prompt (completions) or the last message (chat) before the output;
            /// the render asks the engine for the prompt's logprobs (vLLM's
            /// `to_sampling_params`: `prompt_logprobs` defaults to `logprobs`, chat's to
            /// `top_logprobs`).
            #[serde(default)] pub echo: Option<bool>,
        }

        impl $name {
            /// The request's sampling fields.
            pub fn sampling(&self) -> $crate::protocol::SamplingFields {
                $crate::protocol::SamplingFields {
                    max_tokens: self.max_tokens,
                    max_completion_tokens: self.max_completion_tokens,
                    temperature: self.temperature,
                    top_p: self.top_p,
                    top_k: self.top_k,
                    min_p: self.min_p,
                    n: self.n,
                    stop: self.stop.clone(),
                    stop_token_ids: self.stop_token_ids.clone(),
                    seed: self.seed,
                    presence_penalty: self.presence_penalty,
                    frequency_penalty: self.frequency_penalty,
                    repetition_penalty: self.repetition_penalty,
                    logprobs: self.logprobs.clone(),
                    top_logprobs: self.top_logprobs,
                    prompt_logprobs: self.prompt_logprobs,
                    skip_special_tokens: self.skip_special_tokens,
                    spaces_between_special_tokens: self.spaces_between_special_tokens,
                    include_stop_str_in_output: self.include_stop_str_in_output,
                    min_tokens: self.min_tokens,
                    ignore_eos: self.ignore_eos,
                    response_format: self.response_format.clone(),
                    structured_outputs: self.structured_outputs.clone(),
                    thinking_token_budget: self.thinking_token_budget,
                    logit_bias: self.logit_bias.clone(),
                    allowed_token_ids: self.allowed_token_ids.clone(),
                    bad_words: self.bad_words.clone(),
                    vllm_xargs: self.vllm_xargs.clone(),
                    stream: self.stream,
                    echo: self.echo.unwrap_or(false),
                }
            }
        }
    };
}
pub(crate) use with_sampling_fields;

/// No `max_tokens` (chat): the model's room decides.
pub(crate) fn no_max_tokens() -> Option<u64> {
    None
}

/// vLLM's `CompletionRequest.max_tokens` default.
pub(crate) fn sixteen_max_tokens() -> Option<u64> {
    Some(16)
}

/// The sampling fields of a request; absent means "use the model's default".
#[derive(Debug, Clone, Default)]
pub struct SamplingFields {
    pub max_tokens: Option<u64>,
    pub max_completion_tokens: Option<u64>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub top_k: Option<i64>,
    pub min_p: Option<f64>,
    pub n: Option<u32>,
    pub stop: Option<StopSpec>,
    pub stop_token_ids: Option<Vec<u32>>,
    pub seed: Option<i64>,
    pub presence_penalty: Option<f64>,
    pub frequency_penalty: Option<f64>,
    pub repetition_penalty: Option<f64>,
    pub logprobs: Option<serde_json::Value>,
    pub top_logprobs: Option<i64>,
    pub prompt_logprobs: Option<i64>,
    pub skip_special_tokens: Option<bool>,
    pub spaces_between_special_tokens: Option<bool>,
    pub include_stop_str_in_output: Option<bool>,
    pub min_tokens: Option<u64>,
    pub ignore_eos: Option<bool>,
    pub response_format: Option<serde_json::Value>,
    pub structured_outputs: Option<serde_json::Value>,
    pub thinking_token_budget: Option<u64>,
    pub logit_bias: Option<serde_json::Map<String, serde_json::Value>>,
    pub allowed_token_ids: Option<Vec<u32>>,
    pub bad_words: Option<Vec<String>>,
    pub vllm_xargs: Option<serde_json::Map<String, serde_json::Value>>,
    /// The request streams (vLLM's `output_kind`: `DELTA` then, else `FINAL_ONLY`).
    pub stream: bool,
    /// The request echoes its prompt: `prompt_logprobs` defaults to the logprobs asked for.
    pub echo: bool,
}

/// vLLM's `SamplingParams`, as carried in `GenerateRequest.sampling_params`: its fields in
/// vLLM's order, written as vLLM's render writes them. vLLM's msgspec struct omits a field
/// whose value *is* its default (`omit_defaults`, an identity test): in CPython that holds
/// for `None`, booleans and small integers, never for a float, a string or a list. So `n:
/// 1`, `top_k: 0`, `min_tokens: 0`, unset options and default flags are left out, while
/// every float, `stop`, `stop_token_ids` and `bad_words` (`[]` when empty) are written
/// (`scripts/sampling_params_vs_vllm.py` compares the keys too).
///
/// One deliberate difference: `max_tokens` is always written, `16` included. vLLM's render
/// leaves out `16` (its struct default), but vLLM's `/inference/v1/generate` reads an
/// absent `max_tokens` as "up to `max_model_len`" (`../shared/engines/vllm-recorded/
/// ok_default_maxtokens.json`), so a request for 16 tokens would generate to the context
/// limit. The other omitted defaults mean the same to the engine absent or present (its
/// struct defaults: `n` 1, `top_k` 0, `min_tokens` 0, `ignore_eos` false, ...).
/// docs/api.md lists this.
#[derive(Debug, Clone, Serialize)]
pub struct SamplingParams {
    #[serde(skip_serializing_if = "is_one")]
    pub n: u32,
    pub presence_penalty: f64,
    pub frequency_penalty: f64,
    pub repetition_penalty: f64,
    pub temperature: f64,
    #[serde(skip_serializing_if = "Reset::is_reset")]
    pub top_p: Reset,
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub top_k: i64,
    #[serde(skip_serializing_if = "Reset::is_reset")]
    pub min_p: Reset,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    pub stop: Vec<String>,
    pub stop_token_ids: Vec<u32>,
    #[serde(skip_serializing_if = "is_false")]
    pub ignore_eos: bool,
    /// Always written, `16` included (see above); `null` only when neither the request, the
    /// generation config nor a known context length bounds it, which the engine reads as
    /// "up to its context", as vLLM's own default would.
    pub max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub min_tokens: u64,
    /// `-1`: the whole vocabulary (the engine checks it against its `--max-logprobs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_logprobs: Option<i64>,
    #[serde(skip_serializing_if = "is_true")]
    pub skip_special_tokens: bool,
    #[serde(skip_serializing_if = "is_true")]
    pub spaces_between_special_tokens: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub include_stop_str_in_output: bool,
    /// vLLM's `RequestOutputKind`: 1 (`DELTA`) for a stream, 2 (`FINAL_ONLY`) otherwise.
    pub output_kind: u8,
    /// Always `true` in vLLM's render output (the engine need not copy the params).
    pub skip_clone: bool,
    /// vLLM's `SamplingParams.__post_init__`: the characters held back for stop strings, the
    /// longest stop string's length less one, when there are stop strings not kept in the
    /// output (vLLM's default 0 is not written, as vLLM leaves it out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_text_buffer_length: Option<usize>,
    /// vLLM's `StructuredOutputsParams`, from `response_format` and `structured_outputs`;
    /// absent when the request constrains nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_outputs: Option<serde_json::Value>,
    /// Token ID (a string, as the request gives it) → bias, as a float.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logit_bias: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_token_ids: Option<Vec<u32>>,
    /// The request's `vllm_xargs`, for the engine's logits processors and plugins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_args: Option<serde_json::Map<String, serde_json::Value>>,
    /// Words the engine must not generate (`[]` when none, as vLLM writes it).
    pub bad_words: Vec<String>,
    /// Whether `prompt_logprobs` is asked for (vLLM's `__post_init__`: the prompt is then
    /// recomputed, not read from the prefix cache).
    pub skip_reading_prefix_cache: bool,
    /// The reasoning-token cap, when the request sets one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_token_budget: Option<u64>,
}

/// A float that vLLM's `__post_init__` may set back to its default (greedy sampling resets
/// `top_p` and `min_p`): the default's own object then, which msgspec leaves out, where a
/// float from the request is always written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reset {
    pub value: f64,
    /// Set back to vLLM's default by vLLM itself.
    pub reset: bool,
}

impl Reset {
    pub fn new(value: f64) -> Self {
        Reset {
            value,
            reset: false,
        }
    }

    /// vLLM's default, set by vLLM.
    pub fn to_default(value: f64) -> Self {
        Reset { value, reset: true }
    }

    fn is_reset(&self) -> bool {
        self.reset
    }
}

impl Serialize for Reset {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.value)
    }
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_false(b: &bool) -> bool {
    !*b
}
