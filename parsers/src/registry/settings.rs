//! What a request tells its reasoning parser: vLLM builds one parser per request and hands
//! its constructor the request's effective chat template kwargs, which several families
//! read (deepseek_v3's `thinking`, hy_v3's `reasoning_effort`, minimax_m3's `thinking_mode`).

use crate::ResponseTemplate;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A request's parser settings: the `chat_template_kwargs` vLLM's serving passes to the
/// reasoning parser's constructor (`_make_parser`, the derender's `_parse_and_assemble`).
/// `Default`: no kwargs, as a parser built with none (each family's default mode).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParserSettings {
    /// The effective kwargs: the request's own, with its `reasoning_effort` and the
    /// `enable_thinking` derived from it merged in.
    pub chat_template_kwargs: Map<String, Value>,
    /// `hf` only: the model's `response_template` metadata (`tokenizer_config.json`), loaded
    /// once ([`ResponseTemplate::from_json`] or [`crate::check_response_template`] at
    /// startup); `None` for a model without one.
    pub response_template: Option<Arc<ResponseTemplate>>,
    /// `hf` only: the request's prompt as text (its token IDs decoded with special tokens,
    /// as vLLM's `set_prompt_token_ids` decodes them); empty when unknown, as vLLM's is
    /// without prompt IDs.
    pub prompt: String,
    /// The model's own chat template (vLLM's `tokenizer.chat_template`, not a request's),
    /// which glm47's constructor reads (GLM-5.3's has no thinking switch); `None` when
    /// unknown.
    pub chat_template: Option<Arc<str>>,
}

/// vLLM's `merge_kwargs` leaves these values out (they mean "not set").
fn unset(v: &Value) -> bool {
    v.is_null() || v == "auto"
}

impl ParserSettings {
    /// Settings from kwargs already resolved (a parse context's, a golden case's).
    pub fn new(chat_template_kwargs: Map<String, Value>) -> Self {
        ParserSettings {
            chat_template_kwargs,
            ..Default::default()
        }
    }

    /// vLLM's effective kwargs for a chat request (`build_chat_params(...).with_defaults(...)`),
    /// as far as a parser reads them: the request's `chat_template_kwargs` without null or
    /// `"auto"` values, then its top-level `reasoning_effort` over them, and, unless the
    /// request's kwargs set `enable_thinking`, `enable_thinking = effort != "none"`. (Its
    /// server defaults, `cohere_format`, and the render flags it also merges are read by no
    /// reasoning parser.)
    pub fn from_request(
        chat_template_kwargs: Option<&Map<String, Value>>,
        reasoning_effort: Option<&str>,
    ) -> Self {
        let mut kwargs: Map<String, Value> = chat_template_kwargs
            .into_iter()
            .flatten()
            .filter(|(_, v)| !unset(v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(effort) = reasoning_effort {
            let asked = chat_template_kwargs.is_some_and(|k| k.contains_key("enable_thinking"));
            if effort != "auto" {
                kwargs.insert("reasoning_effort".into(), effort.into());
            }
            if !asked {
                kwargs.insert("enable_thinking".into(), (effort != "none").into());
            }
        }
        ParserSettings::new(kwargs)
    }

    /// Under the server's `--default-chat-template-kwargs`: each default whose key the
    /// request's kwargs leave unset (vLLM's `ChatParams.with_defaults`, `merge_kwargs`).
    pub fn with_defaults(mut self, defaults: &Map<String, Value>) -> Self {
        for (k, v) in defaults {
            if !self.chat_template_kwargs.contains_key(k) {
                self.chat_template_kwargs.insert(k.clone(), v.clone());
            }
        }
        self
    }

    /// With the model's own chat template (see [`ParserSettings::chat_template`]).
    pub fn with_chat_template(mut self, template: Option<Arc<str>>) -> Self {
        self.chat_template = template;
        self
    }

    /// One kwarg, `None` when absent or null (Python's `dict.get` reads both as `None`).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.chat_template_kwargs.get(key).filter(|v| !v.is_null())
    }

    /// Python's `bool(kwargs.get(key, False))`.
    pub fn truthy(&self, key: &str) -> bool {
        self.get(key).is_some_and(truthy)
    }

    /// A string kwarg, if it is one.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
}

/// Python's truth value of a JSON value.
pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn effort_merges_over_the_kwargs_as_vllm_does() {
        let k = obj(json!({"reasoning_effort": "no_think", "thinking": null, "x": "auto"}));
        let s = ParserSettings::from_request(Some(&k), Some("low"));
        assert_eq!(
            Value::Object(s.chat_template_kwargs),
            json!({"reasoning_effort": "low", "enable_thinking": true})
        );
        let k = obj(json!({"enable_thinking": false}));
        let s = ParserSettings::from_request(Some(&k), Some("high"));
        assert_eq!(s.get("enable_thinking"), Some(&json!(false)));
        let s = ParserSettings::from_request(None, Some("none"));
        assert_eq!(s.get("enable_thinking"), Some(&json!(false)));
        assert_eq!(
            ParserSettings::from_request(None, None),
            ParserSettings::default()
        );
    }

    #[test]
    fn truth_is_pythons() {
        let s = ParserSettings::new(obj(json!({"a": 1, "b": 0, "c": "", "d": "no", "e": null})));
        assert!(s.truthy("a") && s.truthy("d"));
        assert!(!s.truthy("b") && !s.truthy("c") && !s.truthy("e") && !s.truthy("z"));
    }
}
