//! `stream_state` on the wire: vLLM's `DerenderStreamState` object, with our signed state in
//! one more field.
//!
//! Wire form (what every streamed derender answers):
//!
//! ```json
//! {"prev_tokens": ["Ġthe"], "prefix_offset": 0, "read_offset": 1, "role_sent": true,
//!  "logprob_context_token_ids": [], "logprob_text_offset": 0,
//!  "output_token_ids": [], "output_chunk_lens": [], "tools_streamed": false,
//!  "last_tool_call_ids": [], "llm_render_state": "<id>.<payload>.<mac>"}
//! ```
//!
//! The field names and meanings are vLLM's (`token_in_token_out/protocol.py`); the values
//! are this choice's: the detokenizer window as token strings, whether the role was sent,
//! the logprobs' context. **(ext)** `llm_render_state` is the compact signed state of
//! `state.rs`, which holds everything else (the parsers' modes and held text, held stop-string
//! text, counters) in O(1) bytes.
//!
//! What comes back decides the path:
//! * an object with `llm_render_state` (a plain JSON client passes the state verbatim), or
//!   that string alone: the signed state, checked byte for byte by its MAC; vLLM's fields
//!   beside it are ignored;
//! * an object without it (a client typed with vLLM's pydantic model drops unknown fields):
//!   vLLM's fields are validated as vLLM's model does and the choice is rebuilt from them:
//!   by replaying `output_token_ids` in `output_chunk_lens` steps when they are there
//!   (`--derender-replay-state` fills them, O(n) bytes, as vLLM's own parser path), else
//!   from the decode window, which is exact only where no parser or stop string holds text.
//!   Where it is not, the request is refused with a 400 naming what to do; a stream is never
//!   silently reset.
//!
//! vLLM's state is one sequence's: in that form a chunk carries at most one choice (vLLM's
//! rule). The signed form also carries several choices per chunk **(ext)**.

use super::detok::DetokState;
use super::session::{ChoiceState, Options, Replay, MAX_LOGPROB_CONTEXT, MAX_PREV_TOKENS};
use super::state::{StateCodec, StreamState};
use crate::error::RequestError;
use crate::model::Model;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The field that carries the signed state.
pub const SIGNED_FIELD: &str = "llm_render_state";

/// vLLM's `DerenderStreamState`, field for field. Unknown fields are ignored, as pydantic's
/// default does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VllmStreamState {
    pub prev_tokens: Vec<String>,
    pub prefix_offset: usize,
    pub read_offset: usize,
    pub role_sent: bool,
    pub logprob_context_token_ids: Vec<u32>,
    pub logprob_text_offset: usize,
    pub output_token_ids: Vec<u32>,
    pub output_chunk_lens: Vec<usize>,
    pub tools_streamed: bool,
    pub last_tool_call_ids: Vec<String>,
}

impl VllmStreamState {
    /// vLLM's validators: the window and context bounds, and chunk lengths that are
    /// positive and add up to the replayed IDs.
    fn validate(&self) -> Result<(), RequestError> {
        let bad =
            |field: &str, why: String| RequestError::invalid(format!("stream_state.{field}"), why);
        if self.prev_tokens.len() > MAX_PREV_TOKENS {
            return Err(bad(
                "prev_tokens",
                format!(
                    "prev_tokens length ({}) exceeds maximum ({MAX_PREV_TOKENS})",
                    self.prev_tokens.len()
                ),
            ));
        }
        if self.logprob_context_token_ids.len() > MAX_LOGPROB_CONTEXT {
            return Err(bad(
                "logprob_context_token_ids",
                format!("at most {MAX_LOGPROB_CONTEXT} IDs"),
            ));
        }
        if self.output_chunk_lens.contains(&0) {
            return Err(bad("output_chunk_lens", "lengths must be > 0".into()));
        }
        // Checked: lengths near usize::MAX must not wrap into a sum that passes.
        let total = self
            .output_chunk_lens
            .iter()
            .try_fold(0usize, |acc, n| acc.checked_add(*n));
        if total != Some(self.output_token_ids.len()) {
            let total = total.map_or_else(|| "overflow".to_string(), |t| t.to_string());
            return Err(bad(
                "output_chunk_lens",
                format!(
                    "output_chunk_lens must sum to len(output_token_ids) (got sum={total}, \
                     len(output_token_ids)={})",
                    self.output_token_ids.len()
                ),
            ));
        }
        Ok(())
    }
}

/// A `stream_state` as a request carries it.
pub enum Incoming {
    /// The signed state (verified).
    Signed(StreamState),
    /// vLLM's fields alone (validated, not yet applied).
    Fields(VllmStreamState),
}

/// Reads a request's `stream_state`: `null`/absent (a new stream), the signed string
/// **(ext)**, or the object.
pub fn read(
    value: Option<&Value>,
    codec: &StateCodec,
    model: &str,
) -> Result<Option<Incoming>, RequestError> {
    let signed = |token: &str| codec.decode(token, model).map(Incoming::Signed);
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(token)) => signed(token).map(Some),
        Some(Value::Object(map)) => match map.get(SIGNED_FIELD) {
            Some(Value::String(token)) => signed(token).map(Some),
            Some(Value::Null) | None => {
                let fields: VllmStreamState = serde_json::from_value(Value::Object(map.clone()))
                    .map_err(|e| {
                        RequestError::invalid("stream_state", format!("invalid stream_state: {e}"))
                    })?;
                fields.validate()?;
                Ok(Some(Incoming::Fields(fields)))
            }
            Some(_) => Err(RequestError::invalid(
                format!("stream_state.{SIGNED_FIELD}"),
                "must be a string",
            )),
        },
        Some(_) => Err(RequestError::invalid(
            "stream_state",
            "stream_state must be an object (as the previous call returned it) or null",
        )),
    }
}

/// The wire object for a state: vLLM's fields from its one choice (defaults when the state
/// has none or several), and the signed state.
pub fn write(state: &StreamState, signed: String, model: &Model, call_ids: Vec<String>) -> Value {
    let mut fields = VllmStreamState::default();
    if let [st] = state.choices.as_slice() {
        let detok = st.detok();
        fields.prev_tokens = detok
            .window
            .iter()
            .map(|id| model.tokenizer.id_to_token(*id).unwrap_or_default())
            .collect();
        fields.read_offset = detok.read;
        fields.role_sent = st.role_sent;
        fields.logprob_context_token_ids = st.logprob_context.clone();
        fields.logprob_text_offset = st.logprob_offset;
        if let Some(r) = &st.replay {
            fields.output_token_ids = r.ids.clone();
            fields.output_chunk_lens = r.lens.clone();
        }
        fields.tools_streamed = st.tool_calls > 0;
        fields.last_tool_call_ids = call_ids;
    }
    let mut value =
        serde_json::to_value(fields).unwrap_or_else(|_| Value::Object(Default::default()));
    if let Value::Object(map) = &mut value {
        map.insert(SIGNED_FIELD.into(), Value::String(signed));
    }
    value
}

/// Rebuilds a choice from vLLM's fields onto `fresh` (the request's new choice, with its
/// parsers and stop strings): by replay when the fields carry it, else from the window where
/// that is exact. `keep_replay`: whether the rebuilt choice keeps recording its chunks.
pub fn resume(
    fields: VllmStreamState,
    mut fresh: ChoiceState,
    model: &Model,
    opts: &Options,
    keep_replay: bool,
) -> Result<ChoiceState, RequestError> {
    if !fields.output_token_ids.is_empty() {
        let mut start = 0;
        for len in &fields.output_chunk_lens {
            let chunk = &fields.output_token_ids[start..start + len];
            fresh.advance(model, opts, chunk, None)?;
            start += len;
        }
        if keep_replay && fresh.holds_text() {
            fresh.replay = Some(Replay {
                ids: fields.output_token_ids,
                lens: fields.output_chunk_lens,
            });
        }
    } else if fresh.holds_text() && (fields.role_sent || !fields.prev_tokens.is_empty()) {
        return Err(RequestError::invalid(
            "stream_state",
            format!(
                "stream_state lacks `{SIGNED_FIELD}` and vLLM's replay fields \
                 (`output_token_ids`), and this stream's parsers or stop strings hold text that \
                 the decode window cannot carry: pass stream_state back as it was returned (a \
                 client typed with vLLM's DerenderStreamState drops `{SIGNED_FIELD}`), or run \
                 llm-render with --derender-replay-state"
            ),
        ));
    } else {
        let window = fields
            .prev_tokens
            .iter()
            .enumerate()
            .skip(fields.prefix_offset)
            .map(|(i, t)| {
                model.tokenizer.token_to_id(t).ok_or_else(|| {
                    RequestError::invalid(
                        format!("stream_state.prev_tokens[{i}]"),
                        format!("`{t}` is not a token of model `{}`", model.name),
                    )
                })
            })
            .collect::<Result<Vec<u32>, _>>()?;
        let read = fields
            .read_offset
            .checked_sub(fields.prefix_offset)
            .filter(|r| *r <= window.len())
            .ok_or_else(|| {
                RequestError::invalid(
                    "stream_state.read_offset",
                    "read_offset must lie between prefix_offset and the end of prev_tokens",
                )
            })?;
        fresh.resume_detok(DetokState { window, read });
    }
    fresh.role_sent = fields.role_sent;
    fresh.logprob_context = fields.logprob_context_token_ids;
    fresh.logprob_offset = fields.logprob_text_offset;
    Ok(fresh)
}
