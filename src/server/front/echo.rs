//! `echo: true` on the front door's `/v1/completions` and `/v1/chat/completions`, as
//! vLLM's OpenAI server answers it. vLLM's render and derender have no echo (it is the
//! coupled server's), so it lives here, after the derender. On a whole answer:
//!
//! * completions (`OpenAIServingCompletion.request_output_to_completion_response`): each
//!   choice's text is the prompt's text followed by the output's (the prompt's alone when
//!   the request asked for `max_tokens: 0`, which the render sends as one token). With
//!   `logprobs: N`, its logprobs are the prompt's (from the engine's `prompt_logprobs`,
//!   which the render asked for) followed by the output's, `text_offset` running on from 0:
//!   the prompt's first token has `null` for its logprob and alternatives, and its text is
//!   `tokenizer.decode([id])`; every other token's text is the engine's `decoded_token`,
//!   and its alternatives are the first `N + 1` the engine listed (all for -1). The prompt's
//!   text is the request's (a token-ID prompt: its decoding, special tokens kept), or `""`
//!   with `return_token_ids`, as vLLM writes it.
//! * chat (`OpenAIServingChat.chat_completion_full_generator`): the last message's content
//!   (text parts joined by `\n`) before each choice's content, when that message's role is
//!   the answer's (`assistant` unless `add_generation_prompt: false`, then the last
//!   message's own).
//!
//! Streamed (`OpenAIServingCompletion.completion_stream_generator`), a completion choice's
//! first chunk carries the prompt's text before its own, and with `logprobs` the prompt's
//! logprobs before its own, every later `text_offset` running on past the prompt's; with
//! `max_tokens: 0` the first chunk is the prompt alone. vLLM's generate stream carries no
//! prompt logprobs, so such a request is sent to the engine whole (`stream: false`) and its
//! one answer streamed from here. A chat choice's first chunk carries the last message's
//! content before its own: vLLM sends that content in a chunk of its own after the role
//! chunk, which concatenates to the same message.

use crate::error::RequestError;
use crate::model::Model;
use serde_json::{json, Map, Value};

/// What an echoed request puts before each choice.
#[derive(Debug, Clone)]
pub(super) enum Echo {
    Completion {
        /// The prompt's text.
        text: String,
        /// The request's `logprobs` (the prompt's are added to the output's).
        logprobs: Option<i64>,
        /// `max_tokens: 0`: the prompt alone, without the one token generated.
        without_generation: bool,
    },
    /// The last message's content.
    Chat(String),
}

impl Echo {
    /// A completion request's echo, if it asks for one. `text` is its prompt's text, when
    /// it was sent as text; `g` the render the engine is sent (its IDs, and its `logprobs`
    /// as the render read them).
    pub fn completion(
        model: &Model,
        original: &Map<String, Value>,
        text: Option<&str>,
        g: &crate::protocol::GenerateRequest,
    ) -> Result<Option<Echo>, RequestError> {
        if original.get("echo") != Some(&Value::Bool(true)) {
            return Ok(None);
        }
        let text = if original.get("return_token_ids") == Some(&Value::Bool(true)) {
            String::new()
        } else {
            match text {
                Some(t) => t.to_string(),
                None => model
                    .decode(&g.token_ids, false)
                    .map_err(RequestError::Tokenizer)?,
            }
        };
        Ok(Some(Echo::Completion {
            text,
            logprobs: g.sampling_params.logprobs,
            without_generation: original.get("max_tokens").and_then(Value::as_u64) == Some(0),
        }))
    }

    /// A chat request's echo, if it asks for one (read before its messages are dropped).
    pub fn chat(original: &Map<String, Value>) -> Result<Option<Echo>, RequestError> {
        if original.get("echo") != Some(&Value::Bool(true)) {
            return Ok(None);
        }
        let Some(last) = original
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| m.last())
        else {
            return Ok(None);
        };
        let role = match original.get("add_generation_prompt") {
            Some(Value::Bool(false)) => last.get("role").and_then(Value::as_str).unwrap_or(""),
            _ => "assistant",
        };
        if last.get("role").and_then(Value::as_str) != Some(role) {
            return Ok(None);
        }
        let content = match last.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        Ok((!content.is_empty()).then_some(Echo::Chat(content)))
    }

    /// Whether the echo shows the prompt's logprobs, which only the engine's whole answer
    /// carries.
    pub fn needs_prompt_logprobs(&self) -> bool {
        matches!(
            self,
            Echo::Completion {
                logprobs: Some(_),
                ..
            }
        )
    }

    /// Puts the echo before each choice of the whole answer `out`. `prompt_logprobs` is
    /// the engine's (one entry per prompt token).
    pub fn apply(
        &self,
        model: &Model,
        out: &mut Value,
        prompt_ids: &[u32],
        prompt_logprobs: Option<&Value>,
    ) -> Result<(), RequestError> {
        let Some(choices) = out.get_mut("choices").and_then(Value::as_array_mut) else {
            return Ok(());
        };
        match self {
            Echo::Chat(content) => {
                for c in choices {
                    let message = &mut c["message"];
                    let own = message["content"].as_str().unwrap_or_default();
                    message["content"] = Value::String(format!("{content}{own}"));
                }
            }
            Echo::Completion {
                text,
                logprobs,
                without_generation,
            } => {
                let prompt_part = match logprobs {
                    Some(n) => Some(prompt_logprobs_form(
                        model,
                        prompt_ids,
                        prompt_logprobs,
                        *n,
                    )?),
                    None => None,
                };
                for c in choices {
                    let own = c["text"].as_str().unwrap_or_default();
                    c["text"] = Value::String(if *without_generation {
                        text.clone()
                    } else {
                        format!("{text}{own}")
                    });
                    if let Some((part, end)) = &prompt_part {
                        c["logprobs"] = if *without_generation {
                            part.clone()
                        } else {
                            joined(part, *end, &c["logprobs"])
                        };
                    }
                }
            }
        }
        Ok(())
    }
}

/// The prompt's logprobs in completions' form, and the text offset after its last token.
fn prompt_logprobs_form(
    model: &Model,
    ids: &[u32],
    prompt_logprobs: Option<&Value>,
    n: i64,
) -> Result<(Value, usize), RequestError> {
    let missing = || {
        RequestError::invalid(
            "echo",
            "the engine answered without the prompt's logprobs (`prompt_logprobs`)",
        )
    };
    let entries = prompt_logprobs
        .and_then(Value::as_array)
        .filter(|e| e.len() == ids.len())
        .ok_or_else(missing)?;
    // vLLM's `completion_top_logprobs_limit`: the first N + 1, all for -1.
    let limit = usize::try_from(n).ok().map(|n| n + 1);
    let (mut offsets, mut tokens, mut token_logprobs, mut tops) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut offset = 0usize;
    for (id, entry) in ids.iter().zip(entries) {
        let (token, logprob, top) = match entry.as_object() {
            None => (
                model
                    .decode(&[*id], false)
                    .map_err(RequestError::Tokenizer)?,
                Value::Null,
                Value::Null,
            ),
            Some(alts) => {
                let own = alts.get(&id.to_string()).ok_or_else(missing)?;
                let token = decoded(model, *id, own)?;
                let mut top = Map::new();
                for (k, alt) in alts.iter().take(limit.unwrap_or(usize::MAX)) {
                    let alt_id: u32 = k.parse().map_err(|_| missing())?;
                    top.insert(decoded(model, alt_id, alt)?, floor(alt));
                }
                (token, floor(own), Value::Object(top))
            }
        };
        offsets.push(offset);
        offset += token.chars().count();
        tokens.push(Value::String(token));
        token_logprobs.push(logprob);
        tops.push(top);
    }
    Ok((
        json!({"text_offset": offsets, "token_logprobs": token_logprobs, "tokens": tokens,
               "top_logprobs": tops}),
        offset,
    ))
}

/// A candidate's text: the engine's `decoded_token`, else `tokenizer.decode([id])`
/// (vLLM's `_get_decoded_token`).
fn decoded(model: &Model, id: u32, lp: &Value) -> Result<String, RequestError> {
    match lp.get("decoded_token").and_then(Value::as_str) {
        Some(t) => Ok(t.to_string()),
        None => model.decode(&[id], false).map_err(RequestError::Tokenizer),
    }
}

/// A candidate's logprob, no lower than -9999 (what OpenAI writes for `-inf`).
fn floor(lp: &Value) -> Value {
    match lp.get("logprob").and_then(Value::as_f64) {
        Some(x) => json!(x.max(-9999.0)),
        None => Value::Null,
    }
}

/// The prompt's logprobs followed by the output's, whose offsets move past the prompt's.
fn joined(prompt: &Value, end: usize, output: &Value) -> Value {
    let mut out = prompt.clone();
    for key in ["token_logprobs", "tokens", "top_logprobs"] {
        if let (Some(into), Some(more)) = (out[key].as_array_mut(), output[key].as_array()) {
            into.extend(more.iter().cloned());
        }
    }
    if let (Some(into), Some(more)) = (
        out["text_offset"].as_array_mut(),
        output["text_offset"].as_array(),
    ) {
        into.extend(
            more.iter()
                .map(|o| json!(o.as_u64().unwrap_or(0) as usize + end)),
        );
    }
    out
}

/// A stream's echo: each choice's first chunk gets the echo, later ones their text offsets
/// moved past the prompt's (or, with `max_tokens: 0`, nothing of the output).
pub(super) struct EchoStream {
    echo: Echo,
    /// The prompt's logprobs in completions' form and the offset after them, once made.
    prompt_part: Option<(Value, usize)>,
    /// The choices whose first chunk has gone.
    echoed: Vec<u64>,
}

impl EchoStream {
    pub fn new(echo: Echo) -> Self {
        EchoStream {
            echo,
            prompt_part: None,
            echoed: Vec::new(),
        }
    }

    /// Applies the echo to one chunk (`choices[]` with `text`/`logprobs`, or chat's
    /// `delta`). `prompt_logprobs` is the engine's, from its (whole) answer.
    pub fn apply(
        &mut self,
        model: &Model,
        chunk: &mut Value,
        prompt_ids: &[u32],
        prompt_logprobs: Option<&Value>,
    ) -> Result<(), RequestError> {
        let Some(choices) = chunk.get_mut("choices").and_then(Value::as_array_mut) else {
            return Ok(());
        };
        for c in choices {
            let index = c.get("index").and_then(Value::as_u64).unwrap_or(0);
            let first = !self.echoed.contains(&index);
            if first {
                self.echoed.push(index);
            }
            match &self.echo {
                Echo::Chat(content) => {
                    if first {
                        let delta = &mut c["delta"];
                        let own = delta["content"].as_str().unwrap_or_default();
                        delta["content"] = Value::String(format!("{content}{own}"));
                    }
                }
                Echo::Completion {
                    text,
                    logprobs,
                    without_generation,
                } => {
                    if let (Some(n), None) = (logprobs, &self.prompt_part) {
                        self.prompt_part = Some(prompt_logprobs_form(
                            model,
                            prompt_ids,
                            prompt_logprobs,
                            *n,
                        )?);
                    }
                    let part = self.prompt_part.as_ref();
                    match (first, *without_generation) {
                        (true, true) => {
                            c["text"] = Value::String(text.clone());
                            if let Some((part, _)) = part {
                                c["logprobs"] = part.clone();
                            }
                        }
                        (true, false) => {
                            let own = c["text"].as_str().unwrap_or_default();
                            c["text"] = Value::String(format!("{text}{own}"));
                            if let Some((part, end)) = part {
                                c["logprobs"] = joined(part, *end, &c["logprobs"]);
                            }
                        }
                        (false, true) => {
                            c["text"] = Value::String(String::new());
                            if part.is_some() {
                                c["logprobs"] = joined(&empty_logprobs(), 0, &Value::Null);
                            }
                        }
                        (false, false) => {
                            if let Some((_, end)) = part {
                                c["logprobs"] = joined(&empty_logprobs(), *end, &c["logprobs"]);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Completions' logprobs with no token.
fn empty_logprobs() -> Value {
    json!({"text_offset": [], "token_logprobs": [], "tokens": [], "top_logprobs": []})
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn model() -> Model {
        Model::embedded(&Default::default()).expect("embedded model")
    }

    /// A completion chunk of choice `index` with `text` and one token's logprobs at `offset`.
    fn chunk(index: u64, text: &str, offset: u64) -> Value {
        json!({"choices": [{"index": index, "text": text, "logprobs": {
            "text_offset": [offset], "token_logprobs": [-0.5], "tokens": [text],
            "top_logprobs": [{text: -0.5}]}}]})
    }

    /// Two prompt tokens: the first without logprobs, as the engine gives them.
    fn prompt() -> (Vec<u32>, Value) {
        let ids = vec![9707u32, 1879];
        let lps = json!([null, {"1879": {"logprob": -1.25, "decoded_token": " world"}}]);
        (ids, lps)
    }

    /// A completion echo of "Hello world" with `logprobs: 0`.
    fn completion_echo(without_generation: bool) -> EchoStream {
        EchoStream::new(Echo::Completion {
            text: "Hello world".into(),
            logprobs: Some(0),
            without_generation,
        })
    }

    #[test]
    fn a_streamed_completion_echo_leads_each_choice_and_moves_its_offsets() {
        let m = model();
        let (ids, lps) = prompt();
        let mut s = completion_echo(false);
        let mut first = chunk(1, "!", 0);
        s.apply(&m, &mut first, &ids, Some(&lps)).unwrap();
        let c = &first["choices"][0];
        assert_eq!(c["text"], "Hello world!");
        assert_eq!(c["logprobs"]["tokens"], json!(["Hello", " world", "!"]));
        assert_eq!(c["logprobs"]["text_offset"], json!([0, 5, 11]));
        assert_eq!(c["logprobs"]["token_logprobs"], json!([null, -1.25, -0.5]));
        // A later chunk of the same choice: no echo, offsets past the prompt's.
        let mut later = chunk(1, " Bye", 1);
        s.apply(&m, &mut later, &ids, None).unwrap();
        let c = &later["choices"][0];
        assert_eq!(c["text"], " Bye");
        assert_eq!(c["logprobs"]["text_offset"], json!([12]));
        // Another choice's first chunk gets its own echo.
        let mut other = chunk(0, "?", 0);
        s.apply(&m, &mut other, &ids, None).unwrap();
        assert_eq!(other["choices"][0]["text"], "Hello world?");
        assert_eq!(
            other["choices"][0]["logprobs"]["text_offset"],
            json!([0, 5, 11])
        );
    }

    #[test]
    fn max_tokens_0_streams_the_prompt_alone() {
        let m = model();
        let (ids, lps) = prompt();
        let mut s = completion_echo(true);
        let mut first = chunk(0, "!", 0);
        s.apply(&m, &mut first, &ids, Some(&lps)).unwrap();
        assert_eq!(first["choices"][0]["text"], "Hello world");
        assert_eq!(
            first["choices"][0]["logprobs"]["tokens"],
            json!(["Hello", " world"])
        );
        let mut later = chunk(0, " more", 1);
        s.apply(&m, &mut later, &ids, None).unwrap();
        assert_eq!(later["choices"][0]["text"], "");
        assert_eq!(later["choices"][0]["logprobs"]["tokens"], json!([]));
    }

    #[test]
    fn a_streamed_chat_echo_leads_each_choices_first_delta() {
        let m = model();
        let mut s = EchoStream::new(Echo::Chat("The answer is".into()));
        let mut first = json!({"choices": [
            {"index": 0, "delta": {"role": "assistant", "content": ""}},
            {"index": 1, "delta": {"role": "assistant", "content": " 4"}}]});
        s.apply(&m, &mut first, &[], None).unwrap();
        assert_eq!(first["choices"][0]["delta"]["content"], "The answer is");
        assert_eq!(first["choices"][1]["delta"]["content"], "The answer is 4");
        let mut later = json!({"choices": [{"index": 0, "delta": {"content": " 2"}}]});
        s.apply(&m, &mut later, &[], None).unwrap();
        assert_eq!(later["choices"][0]["delta"]["content"], " 2");
    }
}
