//! Chat templates written out in Rust, for the exact template sources they were written from.
//!
//! Why: on a 20-turn chat (47 KB of prompt), minijinja spends ~50 µs interpreting Qwen3's
//! template and ~15 µs more converting the conversation into template values: three
//! quarters of a render. The native renderer writes the same bytes in a few µs, and the
//! whole render drops from ~85 to ~22 µs (`cargo bench --bench render -- render_turn20_warm`). llama.cpp takes the same approach (`llm_chat_apply_template`), but
//! matches templates by heuristics; here the match is exact:
//!
//! * a native renderer is attached to a template only when the template's source hashes to
//!   the one it was written from (blake3 of the source as the model ships it), so an edited
//!   template always goes through minijinja;
//! * it renders only inputs inside the class it was written and tested for, and answers
//!   `None` for anything else (unusual roles, non-string fields, kwargs that could shadow a
//!   template variable, `continue_final_message`…), which then renders through minijinja.
//!   Errors are therefore always minijinja's.
//! * a property test renders random conversations both ways and requires equal bytes, and
//!   every render golden of the model runs through it (`tests/render_goldens.rs`).
//!
//! `--no-native-templates` turns the whole path off.

mod qwen3;

use serde_json::{Map, Value};

/// What a chat template sees of a request, before any conversion into template values.
pub struct NativeInput<'a> {
    /// The request's messages, as sent.
    pub messages: &'a [Map<String, Value>],
    /// The request's `tools` (`[]` when it has none).
    pub tools: &'a [Map<String, Value>],
    /// `chat_template_kwargs` without the names the renderer consumes itself.
    pub kwargs: &'a Map<String, Value>,
    pub add_generation_prompt: bool,
}

/// A template family rendered natively.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeTemplate {
    /// Qwen3 (0.6B … 32B, 30B-A3B, 235B-A22B): ChatML with `<think>` handling.
    Qwen3,
}

/// The template sources each native renderer was written from: blake3 of the source text.
const KNOWN: [(&str, NativeTemplate); 1] = [(
    "45fdf00a05e3daa5751bcd1de40a0a8280bde6328765dfe3828f9dac093b584b",
    NativeTemplate::Qwen3,
)];

impl NativeTemplate {
    /// The native renderer written from exactly this template source, if any.
    pub fn detect(source: &str) -> Option<NativeTemplate> {
        let hash = blake3::hash(source.as_bytes());
        let hex = hash.to_hex();
        KNOWN
            .iter()
            .find(|(h, _)| *h == hex.as_str())
            .map(|(_, t)| *t)
    }

    /// The rendered prompt, or `None` when the input is outside what this renderer covers.
    pub fn render(self, input: &NativeInput<'_>) -> Option<String> {
        match self {
            NativeTemplate::Qwen3 => qwen3::render(input),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            NativeTemplate::Qwen3 => "qwen3",
        }
    }
}

/// `json.dumps(v)` as the template's `tojson` filter writes it: the same conversion into a
/// template value and the same writer.
fn tojson<T: serde::Serialize>(v: &T) -> Option<String> {
    let value = minijinja::Value::from(minijinja::value::Serde(v));
    super::pyjson::dumps(&value, &super::pyjson::DumpOptions::default()).ok()
}
