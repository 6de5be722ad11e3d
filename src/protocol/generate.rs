use super::fast_json::JsonChunks;
use super::SamplingParams;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// vLLM's `GenerateRequest`: what the render routes return and a token-in engine accepts.
///
/// `{"request_id": "chatcmpl-<uuid>", "token_ids": [..], "token_offsets": null, "features":
/// null, "content_parts": null, "sampling_params": {..}, "model": "..", "reasoning_ended":
/// null, "reasoning_parser_kwargs": null, "return_token_ids": null, "output_mode": "tokens",
/// "parse_context": null, "stream": false, "stream_options": null, "cache_salt": null,
/// "priority": 0, "kv_transfer_params": null, "ec_transfer_params": null}`: vLLM's fields in
/// vLLM's order. `reasoning_ended`, `reasoning_parser_kwargs` and `parse_context` are filled
/// by `render::parse_context` as vLLM's render fills them.
#[derive(Debug, Clone, Serialize)]
pub struct GenerateRequest {
    pub request_id: String,
    /// Shared with the prompt cache when it kept them.
    pub token_ids: std::sync::Arc<Vec<u32>>,
    /// vLLM main's field (0.33 has none), written only when the request asked for it
    /// (`return_assistant_tokens_mask`): one 0/1 per token, 1 inside the template's `{%
    /// generation %}` blocks, or `null` when the template has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assistant_tokens_mask: Option<Option<Vec<u8>>>,
    /// With `return_token_offsets`: each token's (start, end) in characters of the prompt.
    pub token_offsets: Option<Vec<(usize, usize)>>,
    /// Multimodal features (images); `null` for text-only prompts.
    pub features: Option<Value>,
    /// vLLM's raw multimodal input for the engine to resolve; never set by a render.
    pub content_parts: Option<Value>,
    pub sampling_params: SamplingParams,
    pub model: String,
    pub reasoning_ended: Option<bool>,
    pub reasoning_parser_kwargs: Option<Value>,
    pub return_token_ids: Option<bool>,
    /// Always `tokens` from a render.
    pub output_mode: &'static str,
    pub parse_context: Option<Value>,
    pub stream: bool,
    pub stream_options: Option<Value>,
    pub cache_salt: Option<String>,
    pub priority: i64,
    pub kv_transfer_params: Option<Value>,
    pub ec_transfer_params: Option<Value>,
    /// **(ext)** Present when the request asked for `return_block_hashes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_hashes: Option<Vec<Value>>,
    /// **(ext)** Present when the request had `continue_from`: what the bridge did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation: Option<Continuation>,
}

/// **(ext)** The render's answer to `continue_from` (`render::bridge`):
/// `{"applied": true, "reason": null, "bridged_tokens": 812, "end_of_turn_added": false,
/// "plain_prompt_tokens": 790, "template_divergence": {"position": 771, "cause":
/// "reasoning_dropped"}}`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Continuation {
    /// Whether `token_ids` start with the previous prompt and output.
    pub applied: bool,
    /// Why not, when `applied` is false (the prompt is then the template's own rendering).
    pub reason: Option<String>,
    /// Tokens taken from the previous turn: its prompt, its output and the end-of-turn
    /// marker after it (0 when not applied).
    pub bridged_tokens: usize,
    /// The engine stopped before the template's end-of-turn marker (length, a stop string,
    /// another stop token), so the render wrote it after the output.
    pub end_of_turn_added: bool,
    /// Length of the template's own rendering of the conversation.
    pub plain_prompt_tokens: usize,
    /// Where the template's own rendering departs from the bridged prompt, and why; `null`
    /// when both are the same tokens.
    pub template_divergence: Option<ContinuationDivergence>,
}

/// The first token where the template's rendering differs from the bridged prompt.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ContinuationDivergence {
    pub position: usize,
    /// `reasoning_dropped` (the template leaves the reply's reasoning out of history),
    /// `retokenized` (same text, other IDs than the engine sampled), `whitespace` (the texts
    /// differ in white space only), `rewritten` (the template renders the reply otherwise:
    /// another header, re-serialized tool calls), `history` (an earlier turn, carried in the
    /// previous prompt as it was bridged then).
    pub cause: &'static str,
}

impl GenerateRequest {
    /// Appends this request as JSON, byte for byte what `serde_json::to_writer` writes, with
    /// `token_ids` and `features` through the fast writers in [`super::fast_json`]. It
    /// consumes the request so that large feature strings (image tensors) become buffers of
    /// their own instead of being copied.
    pub fn into_json(mut self, out: &mut JsonChunks) -> serde_json::Result<()> {
        self.write_head(&mut out.cur)?;
        match self.features.take() {
            Some(f) => super::fast_json::write_value_owned(out, f)?,
            None => out.cur.extend_from_slice(b"null"),
        }
        self.write_tail(&mut out.cur)
    }

    /// Everything before the `features` value.
    fn write_head(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(b"{\"request_id\":");
        serde_json::to_writer(&mut *out, &self.request_id)?;
        out.extend_from_slice(b",\"token_ids\":");
        super::fast_json::write_u32_array(out, &self.token_ids);
        if let Some(mask) = &self.assistant_tokens_mask {
            out.extend_from_slice(b",\"assistant_tokens_mask\":");
            serde_json::to_writer(&mut *out, mask)?;
        }
        out.extend_from_slice(b",\"token_offsets\":");
        serde_json::to_writer(&mut *out, &self.token_offsets)?;
        out.extend_from_slice(b",\"features\":");
        Ok(())
    }

    /// Every field after `features`, and the closing brace.
    fn write_tail(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        /// Every field after `features`, borrowed, in declaration order.
        #[derive(Serialize)]
        struct Rest<'a> {
            content_parts: &'a Option<Value>,
            sampling_params: &'a SamplingParams,
            model: &'a str,
            reasoning_ended: Option<bool>,
            reasoning_parser_kwargs: &'a Option<Value>,
            return_token_ids: Option<bool>,
            output_mode: &'static str,
            parse_context: &'a Option<Value>,
            stream: bool,
            stream_options: &'a Option<Value>,
            cache_salt: &'a Option<String>,
            priority: i64,
            kv_transfer_params: &'a Option<Value>,
            ec_transfer_params: &'a Option<Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            block_hashes: &'a Option<Vec<Value>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            continuation: &'a Option<Continuation>,
        }
        let rest = out.len();
        serde_json::to_writer(
            &mut *out,
            &Rest {
                content_parts: &self.content_parts,
                sampling_params: &self.sampling_params,
                model: &self.model,
                reasoning_ended: self.reasoning_ended,
                reasoning_parser_kwargs: &self.reasoning_parser_kwargs,
                return_token_ids: self.return_token_ids,
                output_mode: self.output_mode,
                parse_context: &self.parse_context,
                stream: self.stream,
                stream_options: &self.stream_options,
                cache_salt: &self.cache_salt,
                priority: self.priority,
                kv_transfer_params: &self.kv_transfer_params,
                ec_transfer_params: &self.ec_transfer_params,
                block_hashes: &self.block_hashes,
                continuation: &self.continuation,
            },
        )?;
        // `Rest` opened its own object: continue ours instead.
        out[rest] = b',';
        Ok(())
    }

    /// A rough size of the JSON, to allocate the output once.
    pub fn json_size_hint(&self) -> usize {
        1024 + self.token_ids.len() * 7
            + self
                .assistant_tokens_mask
                .as_ref()
                .map_or(0, |_| self.token_ids.len() * 2)
            + self
                .features
                .as_ref()
                .map_or(0, super::fast_json::size_hint)
    }
}

/// One entry of `GET /v1/models` (OpenAI shape plus vLLM's `root` and `max_model_len`).
#[derive(Debug, Clone, Serialize)]
pub struct ModelCard {
    pub id: String,
    pub object: &'static str,
    pub created: u64,
    pub owned_by: &'static str,
    pub root: String,
    pub parent: Option<String>,
    pub max_model_len: Option<u64>,
    /// **(ext)** `fastokens` when the fast encoder proved equal at load, else `tokenizers`.
    pub tokenizer_backend: &'static str,
    /// **(ext)** `harmony` for gpt-oss (no template), else the native rendering of the model's default chat template (`qwen3`,
    /// `deepseek_v3`, `llama3_1`: `template::native::NATIVE_TEMPLATES`), or `null` when minijinja renders it (`--no-native-templates`, or a
    /// template without one).
    pub native_template: Option<&'static str>,
    /// **(ext)** The reasoning parser derender runs for this model (`--reasoning-parser`,
    /// `auto` resolved by the model name), or `null`.
    pub reasoning_parser: Option<String>,
    /// **(ext)** The tool-call parser derender runs for requests with `tools`, or `null`.
    pub tool_call_parser: Option<String>,
    /// **(ext)** Why those parsers: `--reasoning-parser`/`--tool-call-parser` named them,
    /// the model is gpt-oss (by `config.json` or by its vocabulary's Harmony tokens), or its
    /// name contains a family's pattern (which); `null` when no parser runs.
    pub parsers_chosen_by: Option<String>,
    /// **(ext)** With `--engine`: the engine's name for the model (`--engine-model`, else
    /// the served name); absent without an engine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_model: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModelList {
    pub object: &'static str,
    pub data: Vec<ModelCard>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(features: Option<Value>, block_hashes: Option<Vec<Value>>) -> GenerateRequest {
        let model = crate::model::Model::embedded(&Default::default()).expect("embedded model");
        let fields = crate::protocol::SamplingFields {
            stop: Some(crate::protocol::StopSpec::One("\n\n".into())),
            temperature: Some(0.5),
            ..Default::default()
        };
        let sampling_params =
            crate::render::sampling::build_sampling_params(&model, &fields, 10, true)
                .expect("params");
        GenerateRequest {
            request_id: "chatcmpl-\"quoted\"\u{e9}".into(),
            token_ids: std::sync::Arc::new((0..2000).map(|i| i * 97 % 160_000).collect()),
            assistant_tokens_mask: None,
            token_offsets: Some(vec![(0, 3), (3, 5)]),
            features,
            content_parts: None,
            sampling_params,
            model: "qwen3".into(),
            reasoning_ended: None,
            reasoning_parser_kwargs: None,
            output_mode: "tokens",
            parse_context: None,
            stream: true,
            stream_options: Some(serde_json::json!({"include_usage": true})),
            cache_salt: None,
            priority: -3,
            kv_transfer_params: None,
            ec_transfer_params: Some(serde_json::json!({"remote": true})),
            return_token_ids: Some(true),
            block_hashes,
            continuation: None,
        }
    }

    #[test]
    fn fast_writer_equals_serde() {
        for g in [
            sample(None, None),
            sample(
                Some(serde_json::json!({"mm_hashes": {"image": ["ab"]}})),
                None,
            ),
            sample(
                None,
                Some(vec![serde_json::json!("00ff"), serde_json::json!(7)]),
            ),
        ] {
            let want = serde_json::to_vec(&g).unwrap_or_default();
            let mut out = super::JsonChunks::default();
            assert!(g.into_json(&mut out).is_ok());
            assert_eq!(
                String::from_utf8_lossy(&out.finish().concat()),
                String::from_utf8_lossy(&want)
            );
        }
    }
}

/// One choice of the engine's output (vLLM's `GenerateResponseChoice` and its stream form).
#[derive(Debug, Clone, Deserialize)]
pub struct GeneratedChoice {
    #[serde(default)]
    pub index: u32,
    /// Required non-empty in a whole response; a stream chunk may carry none (a finish-only
    /// chunk).
    #[serde(default)]
    pub token_ids: Option<Vec<u32>>,
    /// Absent in a whole response means `stop`, as vLLM's model defaults it.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// What ended the output, as the engine reports it: a stop string, or a stop token's ID
    /// (`null` for the primary EOS). Read by the stop-token rule (`derender::session`).
    #[serde(default)]
    pub stop_reason: Option<Value>,
    /// The engine's logprobs (`derender::logprobs` reads both of vLLM's forms).
    #[serde(default)]
    pub logprobs: Option<Value>,
}

impl GeneratedChoice {
    pub fn ids(&self) -> &[u32] {
        self.token_ids.as_deref().unwrap_or_default()
    }
}

/// The engine's output: vLLM's `GenerateResponse` (whole) or `GenerateStreamResponse` (one
/// chunk) from `/inference/v1/generate`. The fields derender passes through are kept as
/// sent.
#[derive(Debug, Clone, Deserialize)]
pub struct GenerateResponse {
    pub choices: Vec<GeneratedChoice>,
    #[serde(default)]
    pub request_id: Option<String>,
    /// The prompt's IDs, as some engines echo them; read when the request has none.
    #[serde(default)]
    pub prompt_token_ids: Option<Vec<u32>>,
    #[serde(default)]
    pub prompt_logprobs: Option<Value>,
    #[serde(default)]
    pub kv_transfer_params: Option<Value>,
    /// Validated and written back whole, as vLLM's `PerRequestMetrics` (`metrics.rs`).
    #[serde(default, deserialize_with = "super::metrics::deserialize")]
    pub metrics: Option<Value>,
    /// The engine's usage (a stream's usage chunk, or `continuous_usage_stats` on each).
    #[serde(default)]
    pub usage: Option<Value>,
    /// The prompt tokens an engine found in its prefix cache, where its protocol says so
    /// outside a usage (SGLang's `meta_info.cached_tokens`, `engine/sglang.rs`); never read
    /// from a client.
    #[serde(skip)]
    pub cached_tokens: Option<u64>,
}

impl GenerateResponse {
    /// An output with no choices yet, of response `id`.
    pub fn named(id: String) -> Self {
        GenerateResponse {
            choices: Vec::new(),
            request_id: Some(id),
            prompt_token_ids: None,
            prompt_logprobs: None,
            kv_transfer_params: None,
            metrics: None,
            usage: None,
            cached_tokens: None,
        }
    }
}
