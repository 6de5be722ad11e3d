//! gpt-oss's (Harmony's) constraint, as vLLM 0.33's `HarmonyParser.adjust_request` builds it
//! (`vllm/parser/harmony.py`): first the request's own constraint becomes a final message
//! after an optional analysis one (`_adjust_output_format`, on every request, whatever the
//! `tool_choice`); then `_apply_structural_tag` with vLLM's own Harmony tag: an optional
//! analysis and an optional commentary message, then one call of any tool in any channel
//! (or, for `auto`, a final message), the arguments of a strict tool by its schema, the
//! others any JSON. The patterns are [`ToolGrammar::Harmony`]'s data.

use super::tags::{any_text, const_string, json_schema_format, sequence};
use super::{choice, is_strict, output_format, params, shown_tools, stop_after_first};
use super::{Choice, Tool};
use crate::protocol::{ChatRequest, SamplingParams};
use llm_render_parsers::pyjson::dumps_ascii;
use llm_render_parsers::{HarmonyTags, ToolGrammar};
use serde_json::{json, Map, Value};

/// [`ToolGrammar::Harmony`]'s patterns, with the builders of vLLM's tag.
pub(super) struct Harmony(HarmonyTags);

impl Harmony {
    pub(super) fn of(grammar: ToolGrammar) -> Option<Self> {
        match grammar {
            ToolGrammar::Harmony(tags) => Some(Harmony(tags)),
            _ => None,
        }
    }

    /// A call or final message: `begin`, `content`, then one of the ends.
    fn message(&self, begin: String, content: Value) -> Value {
        json!({"type": "tag", "begin": begin, "content": content, "end": self.0.ends})
    }

    fn final_begin(&self, constrain: &str) -> String {
        self.0.final_begin.replace("{constrain}", constrain)
    }

    /// `_assemble_tag`: an optional analysis message, an optional commentary one (when
    /// `commentary`), then `content`.
    fn assemble(&self, commentary: bool, content: Value) -> Value {
        let before = |begin: &str| {
            json!({"type": "optional", "content": sequence(vec![
                json!({"type": "tag", "begin": begin, "content": any_text(&[]),
                    "end": self.0.message_end}),
                const_string(self.0.next),
            ])})
        };
        let mut elements = vec![before(self.0.analysis)];
        if commentary {
            elements.push(before(self.0.commentary));
        }
        elements.push(content);
        sequence(elements)
    }

    /// `_adjust_output_format`: the request's constraint as a final message's content (a
    /// JSON schema after either JSON marker); `None` where it is not reproduced (a Lark
    /// grammar, a structural tag) or there is none.
    fn output(&self, asked: &Value) -> Option<Value> {
        let content = output_format(asked)?;
        let message = if content["type"] == "json_schema" {
            let either = self
                .0
                .constrains
                .iter()
                .map(|c| self.message(self.final_begin(c), content.clone()))
                .collect::<Vec<_>>();
            json!({"type": "or", "elements": either})
        } else {
            self.message(self.final_begin(""), content)
        };
        Some(self.assemble(false, message))
    }

    /// vLLM's `get_harmony_structural_tag` for function tools: every tool's call in every
    /// pattern, marker and channel, and for `auto` a final message of any text.
    fn calls(&self, tools: &[Tool], choice: Choice) -> Value {
        let mut tags = Vec::new();
        for tool in tools {
            for pattern in self.0.call_begins {
                for constrain in self.0.constrains {
                    for channel in self.0.channels {
                        let begin = pattern
                            .replace("{channel}", channel)
                            .replace("{constrain}", constrain)
                            .replace("{name}", tool.name);
                        tags.push(self.message(begin, json_schema_format(tool.schema(), "json")));
                    }
                }
            }
        }
        if matches!(choice, Choice::Auto) {
            for constrain in self.0.constrains.iter().copied().chain([""]) {
                tags.push(self.message(self.final_begin(constrain), any_text(&[])));
            }
        }
        self.assemble(true, json!({"type": "or", "elements": tags}))
    }
}

fn structural_tag(format: Value) -> Value {
    Value::String(dumps_ascii(
        &json!({"type": "structural_tag", "format": format}),
    ))
}

/// `HarmonyParser.adjust_request`: the request's own constraint moved into a final message,
/// then the tools' tag where `tool_choice` calls for one (as `_apply_structural_tag` decides
/// for the other tags: `auto` only with a strict tool or `parallel_tool_calls: false`, and
/// with the request's own constraint `required`'s tag in an `OrFormat` with it).
pub(super) fn constrain(
    harmony: &Harmony,
    tools: &[Map<String, Value>],
    req: &ChatRequest,
    sampling: &mut SamplingParams,
) {
    let asked = sampling
        .structured_outputs
        .as_ref()
        .filter(|s| !s.is_null());
    let has_asked = asked.is_some();
    let output = asked.and_then(|a| Some((a.clone(), harmony.output(a)?)));
    let output = output.map(|(mut rewritten, format)| {
        for k in ["json", "regex", "choice", "grammar", "json_object"] {
            rewritten[k] = Value::Null;
        }
        rewritten["structural_tag"] = structural_tag(format.clone());
        sampling.structured_outputs = Some(rewritten);
        format
    });
    if tools.is_empty() {
        return;
    }
    let Some(choice) = choice(req) else {
        return;
    };
    let auto = matches!(choice, Choice::Auto);
    let single = req.parallel_tool_calls == Some(false);
    let function_level = single && !(auto && has_asked);
    if auto && !function_level && !tools.iter().any(is_strict) {
        return;
    }
    let (choice, or_with) = match (choice, has_asked) {
        // A constraint not reproduced (Lark, a structural tag) stays as the request set it.
        (Choice::Auto, true) => match output {
            Some(format) => (Choice::Required, Some(format)),
            None => return,
        },
        _ => (choice, None),
    };
    let shown = shown_tools(tools, &choice);
    if shown.is_empty() {
        return;
    }
    let mut format = harmony.calls(&shown, choice);
    if single {
        // No list of calls in Harmony's tag: vLLM's `limit_to_single_tool_call` finds none.
        stop_after_first(&mut format);
    }
    let format = match or_with {
        Some(other) => json!({"type": "or", "elements": [format, other]}),
        None => format,
    };
    sampling.structured_outputs = Some(params("structural_tag", structural_tag(format)));
}
