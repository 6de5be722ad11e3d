use serde::{Deserialize, Serialize};

/// `stop`: one string or a list of strings.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum StopSpec {
    One(String),
    Many(Vec<String>),
}

/// The sampling fields shared by chat and completion requests (OpenAI + vLLM extras).
/// Read from the same body as the request itself; absent means "use the model's default".
#[derive(Debug, Clone, Default, Deserialize)]
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
    /// Chat: a bool (with `top_logprobs`); completions: an int. Interpreted per route.
    pub logprobs: Option<serde_json::Value>,
    pub top_logprobs: Option<u32>,
    pub prompt_logprobs: Option<u32>,
    pub skip_special_tokens: Option<bool>,
    pub spaces_between_special_tokens: Option<bool>,
    pub include_stop_str_in_output: Option<bool>,
    pub min_tokens: Option<u64>,
    pub ignore_eos: Option<bool>,
}

/// vLLM's `SamplingParams`, as carried in `GenerateRequest.sampling_params`.
#[derive(Debug, Clone, Serialize)]
pub struct SamplingParams {
    pub n: u32,
    pub presence_penalty: f64,
    pub frequency_penalty: f64,
    pub repetition_penalty: f64,
    pub temperature: f64,
    pub top_p: f64,
    pub top_k: i64,
    pub min_p: f64,
    pub seed: Option<i64>,
    pub stop: Vec<String>,
    pub stop_token_ids: Vec<u32>,
    pub ignore_eos: bool,
    pub max_tokens: Option<u64>,
    pub min_tokens: u64,
    pub logprobs: Option<u32>,
    pub prompt_logprobs: Option<u32>,
    pub skip_special_tokens: bool,
    pub spaces_between_special_tokens: bool,
    pub include_stop_str_in_output: bool,
}
