//! vLLM 0.33's `beam` parser (`vllm/parser/beam.py`): the `hf` parser under another name for
//! reading output, which also constrains every chat request to the checkpoint's
//! `response_template` (`BeamParser._constrain_request`): a structural tag derived from the
//! template (`response_template_grammar.py`) in `sampling_params.structured_outputs`, the
//! request's `response_format` dropped.
//!
//! [`BeamTemplate`] is the template as the grammar reads it (its delimiters as written), beside
//! the loaded machine that reads the prompt; [`BeamTemplate::constrain`] is `_template_tag`.

use super::grammar::{answer_rest, Anchor, GrammarField};
use super::literals::literals;
use super::template::{CONTENT, THINKING, TOOLS};
use super::tool_tag::{tool_call_structural_tag, TagError, ToolTagArgs};
use super::xgrammar::{self, Verdict};
use super::ResponseTemplate;
use crate::registry::truthy;
use serde_json::{json, Map, Value};

/// A checkpoint's `response_template` for `beam`: the loaded template (which reads the prompt)
/// and its fields as the grammar reads them.
#[derive(Debug, Clone, PartialEq)]
pub struct BeamTemplate {
    loaded: ResponseTemplate,
    thinking: Option<GrammarField>,
    content: Option<GrammarField>,
    tools: Option<GrammarField>,
    /// vLLM's `message_start_anchors`.
    anchors: Vec<String>,
}

/// A request `beam` refuses (vLLM's `VLLMValidationError`, a 400): its message and parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeamRefusal {
    pub message: String,
    pub param: &'static str,
}

/// The request as `_template_tag` reads it.
pub struct BeamRequest<'a> {
    /// The request's tools (chat form: `{"type": "function", "function": {…}}`).
    pub tools: &'a [Map<String, Value>],
    /// The effective `tool_choice` (`auto` with tools when unset, `none` without).
    pub tool_choice: &'a Value,
    pub parallel_tool_calls: Option<bool>,
    /// The request's own constraint (`extract_structured_outputs`): vLLM's
    /// `StructuredOutputsParams` as a dict, `None` without one.
    pub output: Option<&'a Value>,
    /// The effective `chat_template_kwargs`' `enable_thinking` (true when unset).
    pub requires_reasoning: bool,
    pub include_reasoning: bool,
    /// The prompt decoded with its special tokens (`set_prompt_token_ids`).
    pub prompt: &'a str,
    /// Whether `beam` runs as the reasoning parser and as the tool parser.
    pub reasoning_parser: bool,
    pub tool_parser: bool,
}

/// The constraint `beam` puts on a request.
#[derive(Debug, Clone, PartialEq)]
pub struct BeamTag {
    /// `json.dumps(tag)`: the `structural_tag` of the new `structured_outputs`.
    pub structural_tag: String,
    /// The tag covers the output from its first token (vLLM's `_grammar_from_parser`, which
    /// makes the render's `reasoning_ended` true).
    pub message_start: bool,
}

impl BeamTemplate {
    /// Loads `response_template` metadata as `hf` does ([`ResponseTemplate::from_json`]),
    /// keeping its delimiters as written for the grammar.
    pub fn from_json(spec: &Value) -> Result<Self, String> {
        let loaded = ResponseTemplate::from_json(spec)?;
        let raw = spec.get("fields").and_then(Value::as_object);
        let field = |name: &str| -> Option<GrammarField> {
            let f = raw?.get(name)?.as_object()?;
            Some(GrammarField {
                open: Anchor::read(f, "open", "open_pattern"),
                close: Anchor::read(f, "close", "close_pattern"),
                content: f
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or("text")
                    .to_string(),
                content_args: f.get("content_args").is_some_and(truthy),
                repeats: f.get("repeats").is_some_and(truthy),
                transform: f.get("transform").filter(|t| !t.is_null()).cloned(),
                transform_each: f.get("transform_each") == Some(&Value::Bool(true)),
            })
        };
        let (thinking, tools) = (field(THINKING), field(TOOLS));
        // `_streaming_template`: a content sink when every field opens explicitly.
        let content = field(CONTENT).or_else(|| {
            loaded.field(CONTENT).map(|_| GrammarField {
                open: None,
                close: None,
                content: "text".into(),
                content_args: false,
                repeats: false,
                transform: None,
                transform_each: false,
            })
        });
        let start = Anchor::read(
            spec.as_object().ok_or("not a dict")?,
            "start_anchor",
            "start_anchor_pattern",
        );
        let anchors = match start {
            Some(Anchor::Literals(l)) => l,
            Some(Anchor::Pattern(p)) => literals(&p, false).unwrap_or_default(),
            None => Vec::new(),
        };
        Ok(BeamTemplate {
            loaded,
            thinking,
            content,
            tools,
            anchors,
        })
    }

    /// The loaded template (the `hf` machine `beam` parses with).
    pub fn template(&self) -> &ResponseTemplate {
        &self.loaded
    }

    /// vLLM's `BeamReasoningParser.reasoning_start_str`: the thinking field's first literal
    /// opener, else the shortest of its openers when every opener ends with it.
    pub fn reasoning_start_str(&self) -> Option<String> {
        let thinking = self.thinking.as_ref()?;
        if let Some(Anchor::Literals(l)) = &thinking.open {
            return l.first().cloned();
        }
        let openers = thinking.openers(Some(&self.anchors))?;
        let marker = openers.iter().min_by_key(|o| o.chars().count())?;
        openers
            .iter()
            .all(|o| o.ends_with(marker.as_str()))
            .then(|| marker.clone())
    }

    /// vLLM's `BeamParser._template_tag` (within `_constrain_request`): the tag for the request,
    /// `None` to leave its output to its own constraint, or vLLM's 400. What llm-render cannot
    /// decide as vLLM does (XGrammar's verdict on a schema it does not know) is refused too.
    pub fn constrain(&self, r: &BeamRequest) -> Result<Option<BeamTag>, BeamRefusal> {
        let named = r.tool_choice.as_object().and_then(|c| {
            c.get("function")
                .and_then(|f| f.get("name"))
                .or_else(|| c.get("name"))
                .and_then(Value::as_str)
        });
        let choice = r.tool_choice.as_str();
        let has_tools = !r.tools.is_empty();
        // `_tool_parsing_enabled` with auto tools on.
        let parsing = match choice {
            Some("none") => false,
            Some("required") => true,
            _ if named.is_some() => true,
            Some("auto") | None => true,
            Some(_) => false,
        };
        let tools_enabled = r.tool_parser && has_tools && parsing;
        let forced = tools_enabled && (choice == Some("required") || named.is_some());
        let tools_forbidden = has_tools && choice == Some("none") && self.tools.is_some();
        // `resolve_tool_strictness` at level AUTO (`VLLM_ENFORCE_STRICT_TOOL_CALLING` is on).
        let strict = |t: &Map<String, Value>| {
            t.get("function").and_then(|f| f.get("strict")) == Some(&Value::Bool(true))
        };
        let constrained = tools_enabled && (choice != Some("auto") || r.tools.iter().any(strict));
        let mut output = r.output;
        if forced {
            output = None;
        }
        let answer = self.content.as_ref();
        if let Some(out) = output {
            let kept = out.get("structural_tag").is_some_and(|t| !t.is_null())
                || answer.is_none_or(|a| a.open.is_none())
                || !supports(out)?;
            if kept {
                return Ok(None);
            }
        }
        let always = !forced;
        if !constrained && output.is_none() && !tools_forbidden && !always {
            return Ok(None);
        }
        let message_start = self.starts_message(r.prompt);
        let open = self.loaded.open_field(r.prompt);
        let gated = r.reasoning_parser && r.include_reasoning;
        let mut tag = None;
        if open == Some(CONTENT) {
            if always && output.is_none() {
                tag = answer.and_then(answer_rest);
            }
        } else if open != Some(THINKING) || gated {
            let functions = self.functions(r, tools_enabled, constrained, named);
            let functions: Vec<&Map<String, Value>> = functions.iter().collect();
            let answer_format = output.map(to_format);
            let args = ToolTagArgs {
                functions: &functions,
                parallel_tool_calls: named.is_none() && r.parallel_tool_calls != Some(false),
                thinking: self.thinking.as_ref(),
                answer: if forced { None } else { answer },
                answer_format: answer_format.as_ref(),
                message_start: message_start.then_some(self.anchors.as_slice()),
                requires_reasoning: r.requires_reasoning,
            };
            tag = match tool_call_structural_tag(self.tools.as_ref(), &args) {
                Ok(tag) => tag,
                Err(TagError::Tools(message)) => {
                    return Err(BeamRefusal {
                        message,
                        param: "tools",
                    })
                }
                Err(TagError::TooLong(name)) => {
                    let shown: String = name.chars().take(40).collect();
                    return Err(BeamRefusal {
                        message: format!(
                            "tool name {shown:?}… is too long for llm-render to derive vLLM's \
                             beam grammar (more than 512 characters)"
                        ),
                        param: "tools",
                    });
                }
                Err(TagError::Unknown(name)) => {
                    return Err(BeamRefusal {
                        message: format!(
                            "llm-render cannot tell whether XGrammar compiles the parameters \
                             schema of tool {name:?}, which vLLM's beam grammar asks XGrammar \
                             itself (schema keywords llm-render knows: type, properties, \
                             required, additionalProperties, items, enum, const, anyOf, oneOf, \
                             $defs/$ref, nullable, format, pattern, length and range bounds, \
                             annotations)"
                        ),
                        param: "tools",
                    })
                }
            };
        }
        if tag.is_none() && forced {
            let kind = if named.is_some() { "named" } else { "required" };
            return Err(BeamRefusal {
                message: format!(
                    "response_template parsing cannot guarantee {kind} tool choice for this \
                     request"
                ),
                param: "tool_choice",
            });
        }
        Ok(tag.map(|t| BeamTag {
            structural_tag: crate::pyjson::dumps_ascii(&t),
            message_start,
        }))
    }

    /// vLLM's `_starts_message`: the prompt ends with a start anchor.
    fn starts_message(&self, prompt: &str) -> bool {
        !prompt.is_empty() && self.loaded.last_anchor_end(prompt) == prompt.len()
    }

    /// The functions the tag offers (`_as_tool_dicts` of the constrained tools, `strict`
    /// pinned by `resolve_tool_strictness`, or of the request's; the named one only).
    fn functions(
        &self,
        r: &BeamRequest,
        enabled: bool,
        constrained: bool,
        named: Option<&str>,
    ) -> Vec<Map<String, Value>> {
        if !enabled {
            return Vec::new();
        }
        r.tools
            .iter()
            .filter_map(|t| {
                let mut f = t.get("function")?.as_object()?.clone();
                if constrained {
                    let strict = f.get("strict") == Some(&Value::Bool(true));
                    f.insert("strict".into(), Value::Bool(strict));
                }
                Some(f)
            })
            .filter(|f| named.is_none_or(|n| f.get("name").and_then(Value::as_str) == Some(n)))
            .collect()
    }
}

/// The request's constraint kinds, in `structured_outputs_to_format`'s order.
fn kind(out: &Value) -> Option<(&'static str, &Value)> {
    [
        "json_object",
        "json",
        "regex",
        "choice",
        "grammar",
        "structural_tag",
    ]
    .into_iter()
    .find_map(|k| {
        out.get(k)
            .filter(|v| !v.is_null() && **v != Value::Bool(false))
            .map(|v| (k, v))
    })
}

/// A `json` constraint's schema (a string is JSON text).
fn schema_of(v: &Value) -> Option<Value> {
    match v {
        Value::String(s) => serde_json::from_str(s).ok(),
        other => Some(other.clone()),
    }
}

/// vLLM's `_xgrammar_supports` (`validate_xgrammar_grammar` passes); refused where llm-render
/// cannot tell XGrammar's answer.
fn supports(out: &Value) -> Result<bool, BeamRefusal> {
    let unknown = |what: &str| BeamRefusal {
        message: format!(
            "llm-render cannot tell whether XGrammar accepts this {what}, which vLLM's beam \
             parser asks XGrammar itself before it joins the request's constraint to the \
             template's grammar"
        ),
        param: "response_format",
    };
    let verdict = match kind(out) {
        Some(("json_object", _)) => Verdict::Compiles,
        Some(("json", v)) => match schema_of(v) {
            Some(schema) => xgrammar::json_schema(&schema, true),
            None => Verdict::Fails,
        },
        Some(("regex", Value::String(p))) if p.contains('\0') => Verdict::Fails,
        Some(("regex", Value::String(p))) => xgrammar::regex(p),
        Some(("choice", Value::Array(c))) if c.iter().all(Value::is_string) => Verdict::Compiles,
        _ => Verdict::Unknown,
    };
    match verdict {
        Verdict::Compiles => Ok(true),
        Verdict::Fails => Ok(false),
        Verdict::Unknown => Err(unknown(kind(out).map_or("constraint", |(k, _)| k))),
    }
}

/// vLLM's `structured_outputs_to_format(output).model_dump()` for the constraints
/// [`supports`] passes.
fn to_format(out: &Value) -> Value {
    let json_schema = |schema: Value| {
        json!({"type": "json_schema", "json_schema": schema, "style": "json",
            "any_order": false, "max_whitespace_cnt": null, "excludes": []})
    };
    match kind(out) {
        Some(("json_object", _)) => json_schema(json!({"type": "object"})),
        Some(("json", v)) => json_schema(schema_of(v).unwrap_or(Value::Null)),
        Some(("regex", p)) => json!({"type": "regex", "pattern": p}),
        Some(("choice", Value::Array(c))) => json!({"type": "or", "elements": c
            .iter()
            .map(|v| json!({"type": "const_string", "value": v}))
            .collect::<Vec<_>>()}),
        Some(("grammar", g)) => json!({"type": "grammar", "grammar": g}),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template() -> BeamTemplate {
        let spec = json!({"start_anchor": "<s>", "fields": {
            "thinking": {"open_pattern": "<\\|think\\|>", "close": "</t>"},
            "content": {"open": "<a>", "close": "</a>"},
            "tool_calls": {"open_pattern": "<c>(?P<name>\\w+)", "close": "</c>",
                "content": "json", "transform": {"type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"}}}}});
        match BeamTemplate::from_json(&spec) {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        }
    }

    fn request<'a>(tools: &'a [Map<String, Value>], choice: &'a Value) -> BeamRequest<'a> {
        BeamRequest {
            tools,
            tool_choice: choice,
            parallel_tool_calls: None,
            output: None,
            requires_reasoning: true,
            include_reasoning: true,
            prompt: "<s>",
            reasoning_parser: true,
            tool_parser: true,
        }
    }

    #[test]
    fn reasoning_start_str_of_a_pattern_opener() {
        // vLLM: BeamReasoningParser(...).reasoning_start_str == '<|think|>'.
        assert_eq!(
            template().reasoning_start_str().as_deref(),
            Some("<|think|>")
        );
    }

    #[test]
    fn refusals_name_the_parameter() {
        let t = template();
        let tool = |name: &str| {
            json!({"type": "function", "function": {"name": name, "strict": true}})
                .as_object()
                .cloned()
                .unwrap_or_default()
        };
        let long = [tool(&"x".repeat(600))];
        let err = t.constrain(&request(&long, &json!("auto"))).err();
        assert_eq!(err.map(|e| e.param), Some("tools"));
        let bad = [tool("a-b")];
        let err = t.constrain(&request(&bad, &json!("auto"))).err();
        assert_eq!(
            err.map(|e| e.message),
            Some("tool name 'a-b' cannot be encoded in tool calls".into())
        );
        // Nothing to constrain against: the answer alone.
        let tag = t.constrain(&request(&[], &json!("none")));
        assert!(matches!(
            tag,
            Ok(Some(BeamTag {
                message_start: true,
                ..
            }))
        ));
    }
}
