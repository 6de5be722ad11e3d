//! The streaming derender state carried by the client between chunks.
//!
//! Wire form: `<id>.<payload>.<mac>`, where `id` is the response id (`chatcmpl-…`), `payload`
//! is base64url (no padding) of the JSON of [`StreamState`] and `mac` is base64url of the
//! first 16 bytes of `blake3::keyed_hash(key, "<id>.<payload>")`. The key comes from
//! `--derender-state-key` (or `LLM_RENDER_STATE_KEY`); unset, each process draws a random
//! one, so only that process accepts its states. Replicas that share the key share states.
//!
//! The state holds the detokenizer window, the parsers' modes and unfinished text, and
//! counters: its size does not grow with the output (it grows only while one tool call's
//! arguments are held, bounded by that call). A state that fails the MAC, does not decode,
//! or belongs to another model is refused with a 400.
//!
//! **(ext)** Each process also keeps the states it issued in a bounded cache keyed by id; a
//! state whose MAC checks and equals the cached one is taken from the cache without decoding
//! its payload. The MAC is checked on every state, cached or not.

use super::messages::MessagesStream;
use super::responses::ResponsesStream;
use super::session::{ChoiceState, Options};
use crate::error::RequestError;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Everything a stream needs between chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamState {
    pub model: String,
    pub id: String,
    pub created: u64,
    pub prompt_tokens: usize,
    pub opts: Options,
    /// The prompt's last tokens a new choice's detokenizer starts from
    /// ([`super::DetokState::seeded`]); empty without `prompt_token_ids` on the first chunk.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_tail: Vec<u32>,
    pub choices: Vec<ChoiceState>,
    /// A Messages or Responses stream's own fields (`reshape.rs`); none for chat and
    /// completions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<ApiStream>,
}

/// A Messages or Responses stream's own fields (`reshape.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ApiStream {
    Messages(MessagesStream),
    Responses(Box<ResponsesStream>),
}

impl ApiStream {
    /// The API, as the routes name it.
    pub fn name(&self) -> &'static str {
        match self {
            ApiStream::Messages(_) => "messages",
            ApiStream::Responses(_) => "responses",
        }
    }
}

const MAC_LEN: usize = 16;

/// The most choices one signed state follows.
pub(super) const MAX_STREAM_CHOICES: usize = 128;

/// Signs, checks and caches stream states.
pub struct StateCodec {
    key: [u8; 32],
    capacity: usize,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    map: HashMap<String, ([u8; MAC_LEN], StreamState)>,
    order: VecDeque<String>,
}

impl std::fmt::Debug for StateCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateCodec")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl StateCodec {
    /// A codec keyed by `secret` (any string; hashed into a key), or by a random key when
    /// `None`. `capacity` states are cached (0: no cache).
    pub fn new(secret: Option<&str>, capacity: usize) -> Self {
        let key = match secret {
            Some(s) => blake3::derive_key("llm-render derender stream state v1", s.as_bytes()),
            None => {
                let mut seed = Vec::with_capacity(32);
                seed.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
                seed.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
                blake3::derive_key("llm-render derender stream state v1 random", &seed)
            }
        };
        StateCodec {
            key,
            capacity,
            cache: Mutex::new(Cache::default()),
        }
    }

    fn mac(&self, signed: &str) -> [u8; MAC_LEN] {
        let full = blake3::keyed_hash(&self.key, signed.as_bytes());
        let mut out = [0u8; MAC_LEN];
        out.copy_from_slice(&full.as_bytes()[..MAC_LEN]);
        out
    }

    /// Signs a state (and caches it).
    pub fn encode(&self, state: &StreamState) -> Result<String, RequestError> {
        let json = serde_json::to_vec(state)
            .map_err(|e| RequestError::Internal(format!("stream state: {e}")))?;
        let signed = format!("{}.{}", state.id, URL_SAFE_NO_PAD.encode(json));
        let mac = self.mac(&signed);
        if self.capacity > 0 {
            if let Ok(mut cache) = self.cache.lock() {
                if cache
                    .map
                    .insert(state.id.clone(), (mac, state.clone()))
                    .is_none()
                {
                    cache.order.push_back(state.id.clone());
                }
                while cache.order.len() > self.capacity {
                    if let Some(old) = cache.order.pop_front() {
                        cache.map.remove(&old);
                    }
                }
            }
        }
        Ok(format!("{signed}.{}", URL_SAFE_NO_PAD.encode(mac)))
    }

    /// Checks and decodes a state issued for `model`.
    pub fn decode(&self, token: &str, model: &str) -> Result<StreamState, RequestError> {
        let bad = |why: &str| {
            RequestError::invalid("stream_state", format!("invalid stream_state: {why}"))
        };
        let (signed, mac_b64) = token.rsplit_once('.').ok_or_else(|| bad("malformed"))?;
        let (id, payload) = signed.split_once('.').ok_or_else(|| bad("malformed"))?;
        let mac = URL_SAFE_NO_PAD
            .decode(mac_b64)
            .map_err(|_| bad("malformed"))?;
        if mac.len() != MAC_LEN {
            return Err(bad("malformed"));
        }
        // The MAC is checked first, always: it covers every byte of the id and the payload,
        // so no altered state is taken, from the cache or not (~1 µs for a 1.2 KB state).
        let want = self.mac(signed);
        // Constant-time comparison: the MAC must not leak through timing.
        let diff = want
            .iter()
            .zip(mac.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff != 0 {
            return Err(bad(
                "signature mismatch (tampered, or issued by a server with another key)",
            ));
        }
        // The state this process issued last for the id: the same bytes, so its decoded form
        // is taken without parsing the payload again.
        if self.capacity > 0 {
            if let Ok(cache) = self.cache.lock() {
                if let Some((cached_mac, state)) = cache.map.get(id) {
                    if cached_mac[..] == mac[..] && state.model == model {
                        return Ok(state.clone());
                    }
                }
            }
        }
        let json = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| bad("malformed"))?;
        let state: StreamState =
            serde_json::from_slice(&json).map_err(|_| bad("undecodable payload"))?;
        if state.id != id {
            return Err(bad("malformed"));
        }
        if state.model != model {
            return Err(bad(&format!(
                "it belongs to model `{}`, not `{model}`",
                state.model
            )));
        }
        state.check().map_err(bad)?;
        Ok(state)
    }
}

impl StreamState {
    /// The bounds a decoded state must keep before it is resumed: no more choices than a
    /// stream follows, each index once, a prompt tail no longer than vLLM's `prev_tokens`,
    /// and each choice's own (`ChoiceState::check`).
    fn check(&self) -> Result<(), &'static str> {
        if self.choices.len() > MAX_STREAM_CHOICES {
            return Err("too many choices");
        }
        let mut seen = std::collections::HashSet::with_capacity(self.choices.len());
        if !self.choices.iter().all(|c| seen.insert(c.index)) {
            return Err("a choice index twice");
        }
        if self.prompt_tail.len() > super::session::MAX_PREV_TOKENS {
            return Err("prompt tail too long");
        }
        self.choices.iter().try_for_each(ChoiceState::check)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    fn sample() -> StreamState {
        StreamState {
            model: "qwen3".into(),
            id: "chatcmpl-1".into(),
            created: 1,
            prompt_tokens: 3,
            opts: Options::default(),
            prompt_tail: Vec::new(),
            choices: Vec::new(),
            api: None,
        }
    }

    /// A state signed with the key but out of bounds (as the fuzz target `state` made them:
    /// `fuzz/regressions/state/`) is refused with a 400, not resumed into a panic.
    #[test]
    fn a_signed_state_out_of_bounds_is_refused() {
        let codec = StateCodec::new(Some("k"), 0);
        let stops = || crate::derender::StopStrings::new(Vec::new(), false);
        let choice = || ChoiceState::new(0, stops(), None, None);
        let mut past_window = choice();
        past_window.resume_detok(crate::derender::DetokState {
            window: vec![1],
            read: 7,
        });
        let mut calls = choice();
        calls.tool_calls = usize::MAX;
        let cases = [
            vec![past_window],
            vec![calls],
            vec![choice(), choice()],
            (0..200)
                .map(|i| ChoiceState::new(i, stops(), None, None))
                .collect(),
        ];
        for choices in cases {
            let mut st = sample();
            st.choices = choices;
            let token = codec.encode(&st).unwrap();
            let err = codec.decode(&token, "qwen3").unwrap_err();
            assert!(err.to_string().contains("invalid stream_state"), "{err}");
        }
        let mut st = sample();
        st.choices = vec![choice()];
        assert!(codec.decode(&codec.encode(&st).unwrap(), "qwen3").is_ok());
    }

    #[test]
    fn round_trips_with_and_without_the_cache() {
        for cap in [0, 4] {
            let codec = StateCodec::new(Some("k"), cap);
            let token = codec.encode(&sample()).unwrap();
            assert_eq!(codec.decode(&token, "qwen3").unwrap().id, "chatcmpl-1");
            assert!(codec.decode(&token, "llama").is_err());
        }
    }

    proptest! {
        /// The decoder is a fuzz target: arbitrary text, and a valid state with any byte
        /// changed, never panics and is never accepted, whether the process still caches the
        /// state it issued or not.
        #[test]
        fn never_panics_and_refuses_every_mutation(
            junk in ".{0,300}",
            at in 0usize..10_000,
            byte in 0u8..128,
            cache in 0usize..2,
        ) {
            let codec = StateCodec::new(Some("k"), cache * 4);
            prop_assert!(codec.decode(&junk, "qwen3").is_err());
            let token = codec.encode(&sample()).unwrap();
            let mut bytes = token.clone().into_bytes();
            let i = at % bytes.len();
            prop_assume!(bytes[i] != byte);
            bytes[i] = byte;
            if let Ok(mutated) = String::from_utf8(bytes) {
                prop_assert!(codec.decode(&mutated, "qwen3").is_err());
            }
        }
    }
}
