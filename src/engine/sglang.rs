//! SGLang's native API (`python/sglang/srt/entrypoints/http_server.py`,
//! `managers/io_struct.py` `GenerateReqInput`, `sampling/sampling_params.py`):
//!
//! * `POST /generate` `{"rid", "input_ids", "sampling_params", "stream": true,
//!   "return_logprob", "top_logprobs_num"}`; vLLM's sampling names become SGLang's
//!   (`max_tokens` → `max_new_tokens`, `min_tokens` → `min_new_tokens`, `seed` →
//!   `sampling_seed`, structured outputs → `json_schema` (a string) / `regex` / `ebnf` /
//!   `structural_tag`).
//! * A stream is `data: {"output_ids", "meta_info": {"id", "finish_reason": null |
//!   {"type": "stop" | "length" | "abort", …}, "completion_tokens", "output_token_logprobs":
//!   [[logprob, id, text], …], "output_top_logprobs"}, "index"}` events, then `data:
//!   [DONE]`. `output_ids` is every ID so far unless the server runs with
//!   `--incremental-streaming-output` (and one release range sent new ones regardless): an
//!   event whose `output_ids` are as many as its `completion_tokens` after earlier IDs is
//!   read as cumulative, any other as new IDs.
//!   `meta_info.cached_tokens` (every event) counts the prompt tokens found in the radix
//!   cache: the front door's cached-token usage (`server/front/cached.rs`).
//! * `POST /abort_request` `{"rid"}`; `GET /health` answers 200 once the server serves (it
//!   runs a one-token generation).
//!
//! With `n > 1` SGLang gives each sample a rid of its own, so an abort by the request's rid
//! reaches none of them; the samples still end at `max_tokens`.

use super::wire::{error_event, Seen, Wire};
use super::EngineError;
use crate::protocol::GenerateRequest;
use crate::protocol::{GenerateResponse, GeneratedChoice};
use serde::Deserialize;
use serde_json::{json, Map, Value};

#[derive(Debug)]
pub struct Sglang;

impl Wire for Sglang {
    fn name(&self) -> &'static str {
        "sglang"
    }

    fn generate_path(&self) -> &'static str {
        "/generate"
    }

    fn generate_body(&self, g: GenerateRequest, _model: &str) -> Result<Vec<u8>, EngineError> {
        let sp = &g.sampling_params;
        let mut s = Map::new();
        // Always written: an absent `max_new_tokens` is SGLang's `SamplingParams` default
        // (128), while `null` is read by its scheduler as "up to the context", which is what
        // a render with no bound means (docs/api.md, "max_tokens").
        s.insert("max_new_tokens".into(), sp.max_tokens.into());
        s.insert("min_new_tokens".into(), sp.min_tokens.into());
        s.insert("temperature".into(), sp.temperature.into());
        s.insert("top_p".into(), sp.top_p.value.into());
        // vLLM's `0` (and `-1`) mean no top-k; SGLang refuses anything below 1 but `-1`.
        s.insert(
            "top_k".into(),
            if sp.top_k > 0 { sp.top_k } else { -1 }.into(),
        );
        s.insert("min_p".into(), sp.min_p.value.into());
        s.insert("n".into(), sp.n.into());
        s.insert("presence_penalty".into(), sp.presence_penalty.into());
        s.insert("frequency_penalty".into(), sp.frequency_penalty.into());
        s.insert("repetition_penalty".into(), sp.repetition_penalty.into());
        s.insert("stop_token_ids".into(), json!(sp.stop_token_ids));
        s.insert("ignore_eos".into(), sp.ignore_eos.into());
        s.insert("skip_special_tokens".into(), sp.skip_special_tokens.into());
        s.insert(
            "spaces_between_special_tokens".into(),
            sp.spaces_between_special_tokens.into(),
        );
        if let Some(seed) = sp.seed {
            s.insert("sampling_seed".into(), seed.into());
        }
        if let Some(bias) = &sp.logit_bias {
            s.insert("logit_bias".into(), Value::Object(bias.clone()));
        }
        if let Some(so) = &sp.structured_outputs {
            constraint(so, &mut s);
        }
        let mut body = json!({
            "rid": g.request_id,
            "input_ids": g.token_ids.as_ref(),
            "sampling_params": s,
            "stream": true,
        });
        if let Some(n) = sp.logprobs {
            body["return_logprob"] = true.into();
            body["top_logprobs_num"] = n.into();
        }
        serde_json::to_vec(&body)
            .map_err(|e| EngineError::BadEvent(format!("writing the engine request: {e}")))
    }

    fn engine_id(&self, request_id: &str) -> String {
        request_id.to_string()
    }

    fn abort(&self, engine_id: &str) -> (&'static str, Vec<u8>) {
        let body = json!({ "rid": engine_id });
        ("/abort_request", body.to_string().into_bytes())
    }

    fn health_path(&self) -> &'static str {
        "/health"
    }

    fn event(&self, data: &[u8], seen: &mut Seen) -> Result<GenerateResponse, EngineError> {
        let ev: SglEvent = serde_json::from_slice(data).map_err(|e| error_event(data, e))?;
        let index = ev.index.unwrap_or(0);
        let i = index as usize;
        if seen.ids.len() <= i {
            if i > 1 << 16 {
                return Err(EngineError::BadEvent(format!("choice index {index}")));
            }
            seen.ids.resize(i + 1, 0);
        }
        let before = seen.ids[i];
        let len = ev.output_ids.len();
        // Decided on the first event that tells, then kept: `completion_tokens` is the
        // running total, so it equals the IDs so far plus these (new IDs) or these alone
        // (every ID so far).
        if seen.cumulative.is_none() && before > 0 {
            seen.cumulative = match ev.meta_info.completion_tokens.map(|n| n as usize) {
                Some(n) if n == before + len => Some(false),
                Some(n) if n == len && len >= before => Some(true),
                _ => None,
            };
        }
        let skip = if seen.cumulative == Some(true) {
            if len < before {
                return Err(EngineError::BadEvent(format!(
                    "choice {index}: {len} cumulative output_ids after {before}"
                )));
            }
            before
        } else {
            0
        };
        let ids = ev.output_ids.get(skip..).unwrap_or_default().to_vec();
        seen.ids[i] = before + ids.len();
        let logprobs = ev
            .meta_info
            .output_token_logprobs
            .as_ref()
            .map(|lps| logprobs(lps, ev.meta_info.output_top_logprobs.as_deref(), skip));
        let finish_reason = ev.meta_info.finish_reason.as_ref().and_then(|f| match f {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => other
                .get("type")
                .and_then(Value::as_str)
                .map(str::to_string),
        });
        let mut out = GenerateResponse::named(ev.meta_info.id.unwrap_or_default());
        out.cached_tokens = ev.meta_info.cached_tokens;
        out.choices.push(GeneratedChoice {
            index,
            token_ids: Some(ids),
            finish_reason,
            // SGLang's `matched` names the primary EOS too, where vLLM reports null: the
            // derender's own stop-token rule reads the output instead.
            stop_reason: None,
            logprobs,
        });
        Ok(out)
    }
}

#[derive(Debug, Deserialize)]
struct SglEvent {
    #[serde(default)]
    output_ids: Vec<u32>,
    #[serde(default)]
    index: Option<u32>,
    meta_info: SglMeta,
}

#[derive(Debug, Deserialize)]
struct SglMeta {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    finish_reason: Option<Value>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    output_token_logprobs: Option<Vec<Value>>,
    #[serde(default)]
    output_top_logprobs: Option<Vec<Value>>,
}

/// SGLang's `[logprob, id, text]` triples from position `skip` on, in vLLM's integer form
/// (`{"content": [{"token_id", "logprob", "top_logprobs": [{"token_id", "logprob"}]}]}`).
fn logprobs(sampled: &[Value], top: Option<&[Value]>, skip: usize) -> Value {
    let entry = |t: &Value| {
        json!({"token_id": t.get(1).cloned().unwrap_or(Value::Null),
               "logprob": t.get(0).cloned().unwrap_or(Value::Null)})
    };
    let content: Vec<Value> = sampled
        .iter()
        .enumerate()
        .skip(skip)
        .map(|(i, t)| {
            let mut e = entry(t);
            let alts: Vec<Value> = top
                .and_then(|top| top.get(i))
                .and_then(Value::as_array)
                .map(|alts| alts.iter().map(entry).collect())
                .unwrap_or_default();
            e["top_logprobs"] = Value::Array(alts);
            e
        })
        .collect();
    json!({ "content": content })
}

/// vLLM's `StructuredOutputsParams` as SGLang's one constraint.
fn constraint(so: &Value, s: &mut Map<String, Value>) {
    let get = |k: &str| so.get(k).filter(|v| !v.is_null());
    if let Some(schema) = get("json") {
        let text = match schema {
            Value::String(t) => t.clone(),
            other => other.to_string(),
        };
        s.insert("json_schema".into(), text.into());
    } else if get("json_object").is_some_and(|v| v == &Value::Bool(true)) {
        s.insert("json_schema".into(), r#"{"type": "object"}"#.into());
    } else if let Some(r) = get("regex") {
        s.insert("regex".into(), r.clone());
    } else if let Some(choices) = get("choice").and_then(Value::as_array) {
        let alts: Vec<String> = choices
            .iter()
            .filter_map(Value::as_str)
            .map(regex::escape)
            .collect();
        s.insert("regex".into(), format!("({})", alts.join("|")).into());
    } else if let Some(g) = get("grammar") {
        s.insert("ebnf".into(), g.clone());
    } else if let Some(t) = get("structural_tag") {
        s.insert("structural_tag".into(), t.clone());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ids(ev: &str, seen: &mut Seen) -> Vec<u32> {
        Sglang.event(ev.as_bytes(), seen).unwrap().choices[0]
            .ids()
            .to_vec()
    }

    #[test]
    fn cumulative_and_incremental_output_ids_both_give_new_ids() {
        let mut seen = Seen::default();
        let cum = [
            r#"{"output_ids":[1,2],"meta_info":{"id":"r","completion_tokens":2}}"#,
            r#"{"output_ids":[1,2,3],"meta_info":{"id":"r","completion_tokens":3}}"#,
        ];
        assert_eq!(ids(cum[0], &mut seen), vec![1, 2]);
        assert_eq!(ids(cum[1], &mut seen), vec![3]);
        let mut seen = Seen::default();
        let inc = [
            r#"{"output_ids":[1,2],"meta_info":{"id":"r","completion_tokens":2}}"#,
            r#"{"output_ids":[3],"meta_info":{"id":"r","completion_tokens":3,"finish_reason":{"type":"length","length":3}}}"#,
        ];
        assert_eq!(ids(inc[0], &mut seen), vec![1, 2]);
        let last = Sglang.event(inc[1].as_bytes(), &mut seen).unwrap();
        assert_eq!(last.choices[0].ids(), &[3]);
        assert_eq!(last.choices[0].finish_reason.as_deref(), Some("length"));
        assert_eq!(last.cached_tokens, None);
        let cached = r#"{"output_ids":[4],"meta_info":{"id":"r","completion_tokens":1,"cached_tokens":128}}"#;
        let ev = Sglang
            .event(cached.as_bytes(), &mut Seen::default())
            .unwrap();
        assert_eq!(ev.cached_tokens, Some(128));
    }

    #[test]
    fn an_error_event_is_an_error() {
        let e = Sglang
            .event(br#"{"error":{"message":"too long"}}"#, &mut Seen::default())
            .unwrap_err();
        assert!(matches!(e, EngineError::Status { .. }), "{e:?}");
    }
}
