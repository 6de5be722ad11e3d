//! Chat templates written out in Rust, for the exact template sources they were written from.
//!
//! Why: on a 20-turn chat (47 KB of prompt), minijinja spends ~50 µs interpreting Qwen3's
//! template and ~15 µs more converting the conversation into template values: three
//! quarters of a render. The native renderer writes the same bytes in a few µs, and the
//! whole render drops from ~85 to ~17 µs (`cargo bench --bench render -- render_turn20`);
//! DeepSeek-V3's from ~78 to ~15 µs. llama.cpp takes the same approach
//! (`llm_chat_apply_template`), but matches templates by heuristics; here the match is exact:
//!
//! * a native renderer is attached to a template only when the template's source is the
//!   one it was written from, byte for byte (`templates/`, see [`NATIVE_TEMPLATES`]), so an
//!   edited template always goes through minijinja;
//! * it renders only inputs inside the class it was written and tested for, and answers
//!   `None` for anything else (unusual roles, non-string fields, kwargs that could shadow a
//!   template variable, `continue_final_message`…), which then renders through minijinja.
//!   Errors are therefore always minijinja's.
//! * a property test renders random conversations both ways and requires equal bytes
//!   (`tests/native_templates.rs`), `tests/render_fuzz.rs` does the same with JSON of any
//!   shape, and the render goldens run through it over HTTP (`tests/golden_render.rs`).
//!
//! `--no-native-templates` turns the whole path off.

mod deepseek_v3;
mod llama3;
mod qwen3;

use super::messages::{convert_content, convert_tool_calls, ContentFormat, REASONING_FIELDS};
use crate::protocol::{Field, Message};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// What a chat template sees of a request, before any conversion into template values.
pub struct NativeInput<'a> {
    /// The request's messages, as sent.
    pub messages: &'a [Message],
    /// The request's `tools`, as given (`Some([])` is not `None` to every template).
    pub tools: Option<&'a [Map<String, Value>]>,
    /// `chat_template_kwargs` without the names the renderer consumes itself.
    pub kwargs: &'a Map<String, Value>,
    pub add_generation_prompt: bool,
    /// The model's `bos_token`, as templates see it.
    pub bos_token: Option<&'a str>,
}

impl NativeInput<'_> {
    /// Whether a request kwarg has one of `names`, the names a template binds or reads: in
    /// minijinja's context it would shadow or set them, so a native rendering must not apply.
    fn kwargs_shadow(&self, names: &[&str]) -> bool {
        self.kwargs.keys().any(|k| names.contains(&k.as_str()))
    }
}

/// A native rendering: the template source it reproduces, byte for byte, and the function
/// that writes the same prompt. Adding one is an entry here, its source in `templates/` and
/// its own file beside this one.
pub struct NativeEntry {
    /// Its name in `/v1/models` (`native_template`).
    pub name: &'static str,
    /// The exact template source, as the model ships it (`templates/`).
    pub source: &'static str,
    /// The rendered prompt, or `None` when the input is outside what the rendering covers.
    pub render: fn(&NativeInput<'_>) -> Option<String>,
}

/// Every native rendering.
pub static NATIVE_TEMPLATES: &[NativeEntry] = &[
    NativeEntry {
        // The first Qwen3 release's template (ChatML with `<think>` handling); the embedded
        // default model's.
        name: "qwen3",
        source: include_str!("../../../templates/qwen3.jinja"),
        render: qwen3::render,
    },
    NativeEntry {
        name: "deepseek_v3",
        source: include_str!("../../../templates/deepseek_v3.jinja"),
        render: deepseek_v3::render,
    },
    NativeEntry {
        // vLLM's `examples/tool_chat_template_llama3.1_json.jinja`.
        name: "llama3_1",
        source: include_str!("../../../templates/llama3.1_json_tools.jinja"),
        render: llama3::render,
    },
];

/// The native rendering attached to one template source.
#[derive(Clone, Copy)]
pub struct NativeTemplate(&'static NativeEntry);

impl NativeTemplate {
    /// The native rendering written from exactly this template source, if any: one byte more
    /// or less is another template, which minijinja renders.
    pub fn detect(source: &str) -> Option<NativeTemplate> {
        NATIVE_TEMPLATES
            .iter()
            .find(|e| e.source == source)
            .map(NativeTemplate)
    }

    /// The rendered prompt, or `None` when the input is outside what this rendering covers.
    pub fn render(self, input: &NativeInput<'_>) -> Option<String> {
        (self.0.render)(input)
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }
}

impl std::fmt::Debug for NativeTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("NativeTemplate").field(&self.0.name).finish()
    }
}

/// The roles native renderings cover; any other sends the request to minijinja.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One message as the template reads it.
struct Msg<'a> {
    role: Role,
    /// `message.content`: a string, `""` for null, text parts joined with `"\n"`.
    content: Cow<'a, str>,
    /// `message.reasoning_content` when defined (transformers' alias of the three fields).
    reasoning: Option<&'a str>,
    /// `message.tool_calls` when non-empty (assistant messages only), converted as
    /// `template::messages` converts them (`arguments` strings parsed).
    tool_calls: Option<Vec<Value>>,
}

/// One message as a template reads it after `template::messages`' conversion (for templates
/// that read content as a string), or `None` when it is outside what native renderings cover.
fn read_message(i: usize, m: &Message) -> Option<Msg<'_>> {
    // One pass over the (small) map instead of six hashed lookups.
    let (mut role, mut content, mut calls) = (None, None, None);
    let mut reasoning_fields = [None; REASONING_FIELDS.len()];
    for (key, value) in m.iter() {
        match key {
            "role" => role = Some(value),
            "content" => content = Some(value),
            "tool_calls" => calls = Some(value),
            k => {
                if let Some(p) = REASONING_FIELDS.iter().position(|f| *f == k) {
                    reasoning_fields[p] = Some(value);
                }
            }
        }
    }
    let role = match role?.as_str()? {
        "system" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        _ => return None,
    };
    let content = match content? {
        Field::Str(s) => Cow::Borrowed(s.as_str()),
        Field::Json(other) => {
            match convert_content(i, other, ContentFormat::String, &mut Vec::new()).ok()? {
                Value::String(s) => Cow::Owned(s),
                _ => return None,
            }
        }
    };
    // The first non-null field in transformers' order, as `messages::reasoning` picks it.
    let reasoning = match reasoning_fields
        .into_iter()
        .flatten()
        .find(|v| !v.is_null())
    {
        None => None,
        Some(Field::Str(s)) => Some(s.as_str()),
        Some(_) => return None,
    };
    let tool_calls = match calls {
        // Arguments that are not JSON are the general path's error to report.
        Some(Field::Json(calls @ Value::Array(a))) if role == Role::Assistant && !a.is_empty() => {
            match convert_tool_calls(i, calls).ok()? {
                Value::Array(list) => Some(list),
                _ => return None,
            }
        }
        Some(Field::Json(Value::Array(_) | Value::Null)) | None => None,
        Some(_) if role != Role::Assistant => None,
        Some(_) => return None,
    };
    Some(Msg {
        role,
        content,
        reasoning,
        tool_calls,
    })
}

/// Every message, or `None` when one is outside what native renderings cover.
fn read_messages(messages: &[Message]) -> Option<Vec<Msg<'_>>> {
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| read_message(i, m))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_template(model: &str) -> Option<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/models")
            .join(model);
        if let Ok(jinja) = std::fs::read_to_string(dir.join("chat_template.jinja")) {
            return Some(jinja);
        }
        let config = std::fs::read_to_string(dir.join("tokenizer_config.json")).ok()?;
        let config: Value = serde_json::from_str(&config).ok()?;
        config["chat_template"].as_str().map(str::to_string)
    }

    #[test]
    fn detects_exactly_the_fixture_templates() {
        for (model, want) in [
            ("qwen3", "qwen3"),
            ("deepseek_v3", "deepseek_v3"),
            ("llama3_1", "llama3_1"),
        ] {
            let source = fixture_template(model);
            assert!(source.is_some(), "{model}: no chat_template");
            let source = source.unwrap_or_default();
            assert_eq!(
                NativeTemplate::detect(&source).map(NativeTemplate::name),
                Some(want),
                "{model}: the fixture's template is not the one in templates/"
            );
            // One byte more is another template.
            assert!(NativeTemplate::detect(&format!("{source} ")).is_none());
        }
    }
}
