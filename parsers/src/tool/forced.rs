//! Output forced by a `tool_choice` JSON schema: what vLLM's serving layer reads in place of
//! the family's format when the parser has no structural tag of its own
//! (`supports_required_and_named`; `parser/abstract_parser.py` `_extract_tool_calls`). The
//! render constrained the engine with that schema (`src/render/tool_choice/`,
//! `ToolGrammar::JsonSchema`), so the output is JSON, not the family's markup:
//!
//! * a named tool (`tool_choice: {"type": "function", "function": {"name": "f"}}`): the whole
//!   output is `f`'s arguments, passed on as written; an empty or blank output is no call;
//! * `required`: the output is `[{"name": "f", "parameters": {…}}, …]`, each entry one call
//!   whose arguments are `json.dumps(parameters, ensure_ascii=False)`; an output that is not
//!   such a list (pydantic's `list[FunctionDefinition]` fails) is no call at all.
//!
//! Either way nothing is content. The calls are only known at the end (a named call's
//! arguments end with the output; a list is valid only once closed), so they are sent whole
//! by [`ToolParser::finish`], and the text is held until then: the state grows with the
//! output, which is the call itself.

use super::{Parsed, ToolCallDelta, ToolParser};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForcedCallParser {
    /// The named tool, or `None` for `required`.
    name: Option<String>,
    text: String,
}

impl ForcedCallParser {
    /// `tool_choice` naming `name`.
    pub fn named(name: &str) -> Self {
        ForcedCallParser {
            name: Some(name.to_string()),
            text: String::new(),
        }
    }

    /// `tool_choice: "required"`.
    pub fn required() -> Self {
        ForcedCallParser {
            name: None,
            text: String::new(),
        }
    }
}

/// pydantic's `list[FunctionDefinition]`: every entry an object with a string `name`, an
/// optional string `description` and an optional object `parameters`.
fn call_list(text: &str) -> Option<Vec<(String, String)>> {
    let Ok(Value::Array(entries)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    entries
        .iter()
        .map(|e| {
            let e = e.as_object()?;
            let name = e.get("name")?.as_str()?;
            match e.get("description") {
                None | Some(Value::Null) | Some(Value::String(_)) => {}
                Some(_) => return None,
            }
            let parameters = match e.get("parameters") {
                None => Value::Null,
                Some(p @ (Value::Null | Value::Object(_))) => p.clone(),
                Some(_) => return None,
            };
            Some((name.to_string(), crate::pyjson::dumps(&parameters)))
        })
        .collect()
}

impl ToolParser for ForcedCallParser {
    fn push(&mut self, text: &str, _out: &mut Parsed) {
        self.text.push_str(text);
    }

    fn finish(&mut self, out: &mut Parsed) {
        let text = std::mem::take(&mut self.text);
        let calls = match &self.name {
            Some(name) if !text.trim().is_empty() => vec![(name.clone(), text)],
            Some(_) => Vec::new(),
            None => call_list(&text).unwrap_or_default(),
        };
        for (index, (name, arguments)) in calls.into_iter().enumerate() {
            out.calls.push(ToolCallDelta {
                index,
                id: None,
                name: Some(name),
                arguments,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mut p: ForcedCallParser, chunks: &[&str]) -> Parsed {
        let mut out = Parsed::default();
        for c in chunks {
            p.push(c, &mut out);
        }
        p.finish(&mut out);
        out
    }

    #[test]
    fn a_named_tool_takes_the_whole_output_as_its_arguments() {
        let out = run(ForcedCallParser::named("f"), &["{\"a\": ", "1}"]);
        assert_eq!(out.content, "");
        let calls = out.tool_calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "f");
        assert_eq!(calls[0].arguments, "{\"a\": 1}");
        assert!(run(ForcedCallParser::named("f"), &[" \n"]).is_empty());
    }

    #[test]
    fn required_reads_a_list_of_name_and_parameters() {
        let out = run(
            ForcedCallParser::required(),
            &[
                r#"[{"name": "f", "parameters": {"a": 1, "b": "é"}}, "#,
                r#"{"name": "g"}]"#,
            ],
        );
        let calls = out.tool_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].name.as_str(), calls[0].arguments.as_str()),
            ("f", r#"{"a": 1, "b": "é"}"#)
        );
        assert_eq!(
            (calls[1].name.as_str(), calls[1].arguments.as_str()),
            ("g", "null")
        );
        assert_eq!(out.content, "");
        for bad in [
            r#"{"name": "f"}"#,
            r#"[{"name": "f"}, {"parameters": {}}]"#,
            r#"[{"name": 1}]"#,
            r#"[{"name": "f", "parameters": [1]}]"#,
            r#"[{"name": "f""#,
        ] {
            assert!(
                run(ForcedCallParser::required(), &[bad]).is_empty(),
                "{bad}"
            );
        }
    }
}
