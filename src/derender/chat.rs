//! `POST /v1/chat/completions/derender`, non-streaming: generated token IDs → a
//! `chat.completion` with `content`, `reasoning_content` (also as `reasoning`) and `usage`.
//!
//! Request (vLLM's shape, api.md): `{"stream": false, "model", "generate_response":
//! {"choices": [{"index", "token_ids", "finish_reason"}]}, "prompt_token_ids",
//! "chat_request": <the original chat request>}`. Each choice is detokenized with the
//! incremental detokenizer (fed everything, then finished: the streaming code path) and split
//! by the reasoning parser chosen by `--reasoning-parser` (`auto` picks by model name).
//! The chat request's stops apply as vLLM applies them: the text ends at the first stop
//! token ID (`stop_token_ids`, plus the model's EOS ids unless `ignore_eos`) or stop string
//! (`stop`, kept with `include_stop_str_in_output`), and `finish_reason` becomes `stop`.
//! Tool-call parsing and streaming are not implemented yet; a `stream: true` request is a 400.

use super::{IncrementalDetokenizer, StopStrings};
use crate::error::RenderError;
use crate::model::Model;
use llm_render_parsers::{reasoning_parser, Split};
use serde::Deserialize;
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Deserialize)]
pub struct GeneratedChoice {
    #[serde(default)]
    pub index: u32,
    pub token_ids: Vec<u32>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GenerateResponse {
    pub choices: Vec<GeneratedChoice>,
    #[serde(default)]
    pub request_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct DerenderRequest {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub stream: bool,
    pub generate_response: GenerateResponse,
    #[serde(default)]
    pub prompt_token_ids: Option<Vec<u32>>,
    #[serde(default)]
    pub chat_request: Option<Map<String, Value>>,
}

/// Which reasoning parser a server uses: a name, `auto` (by model name) or `none`.
pub fn parser_for(
    setting: &str,
    model: &str,
) -> Option<Box<dyn llm_render_parsers::ReasoningParser>> {
    match setting {
        "none" => None,
        "auto" => reasoning_parser(model),
        name => reasoning_parser(name),
    }
}

/// Derenders every choice of a non-streaming request.
pub fn derender_chat(
    model: &Model,
    req: &DerenderRequest,
    reasoning: &str,
) -> Result<Value, RenderError> {
    if req.stream {
        return Err(RenderError::invalid(
            "stream",
            "streaming derender is not implemented yet; send stream: false",
        ));
    }
    let empty = Map::new();
    let chat = req.chat_request.as_ref().unwrap_or(&empty);
    let skip_special = chat
        .get("skip_special_tokens")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let stop_strings: Vec<String> = match chat.get("stop") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(v)) => v
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let include_stop = chat
        .get("include_stop_str_in_output")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut stop_ids: Vec<u32> = chat
        .get("stop_token_ids")
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(|x| x.as_u64().map(|x| x as u32))
                .collect()
        })
        .unwrap_or_default();
    if !chat
        .get("ignore_eos")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        stop_ids.extend(&model.eos_token_ids);
    }
    let mut choices = Vec::with_capacity(req.generate_response.choices.len());
    let mut completion_tokens = 0;
    for (ci, choice) in req.generate_response.choices.iter().enumerate() {
        if let Some((i, id)) = choice
            .token_ids
            .iter()
            .enumerate()
            .find(|(_, id)| !model.has_token(**id))
        {
            return Err(RenderError::invalid(
                format!("generate_response.choices[{ci}].token_ids[{i}]"),
                format!("token ID {id} is out of range for model `{}`", model.name),
            ));
        }
        completion_tokens += choice.token_ids.len();
        let mut detok = IncrementalDetokenizer::new(&model.tokenizer, skip_special);
        let mut stops = StopStrings::new(stop_strings.clone(), include_stop);
        let mut split = Split::default();
        let mut parser = parser_for(reasoning, &model.name);
        let mut feed = |text: &str, split: &mut Split| match parser.as_mut() {
            Some(p) => p.push(text, split),
            None => split.content.push_str(text),
        };
        let mut stopped_by_id = false;
        for id in &choice.token_ids {
            if stop_ids.contains(id) {
                stopped_by_id = true;
                break;
            }
            let text = detok.push(*id).map_err(RenderError::Tokenizer)?;
            feed(&stops.push(&text), &mut split);
            if stops.stopped() {
                break;
            }
        }
        if !stops.stopped() {
            let rest = detok.finish().map_err(RenderError::Tokenizer)?;
            let tail = stops.push(&rest);
            feed(&tail, &mut split);
            if !stops.stopped() {
                feed(&stops.finish(), &mut split);
            }
        }
        if let Some(p) = parser.as_mut() {
            p.finish(&mut split);
        }
        let reasoning_value = if split.reasoning.is_empty() {
            Value::Null
        } else {
            Value::String(split.reasoning)
        };
        choices.push(json!({
            "index": choice.index,
            "message": {
                "role": "assistant",
                "content": split.content,
                "reasoning_content": reasoning_value,
                "reasoning": reasoning_value,
                "tool_calls": [],
            },
            "logprobs": null,
            "finish_reason": if stopped_by_id || stops.stopped() {
                "stop".to_string()
            } else {
                choice.finish_reason.clone().unwrap_or_else(|| "stop".into())
            },
        }));
    }
    let prompt_tokens = req.prompt_token_ids.as_ref().map_or(0, Vec::len);
    Ok(json!({
        "id": req.generate_response.request_id.clone().unwrap_or_else(|| crate::render::request_id("chatcmpl")),
        "object": "chat.completion",
        "created": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        "model": model.name,
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }))
}
