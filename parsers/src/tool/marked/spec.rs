//! Each [`MarkedFamily`]'s markers and call form: the data the machine in `mod.rs` runs on.

use super::MarkedFamily;

/// How a call's name is written.
#[derive(Debug, Clone, Copy)]
pub(super) enum CallForm {
    /// A JSON object `{"name": .., "arguments"|"parameters": ..}`.
    Object,
    /// A JSON object whose first key is the name and its value the arguments
    /// (`{"f": {..}}`); other members are skipped.
    Keyed,
    /// `<prefix>name<sep>` then the arguments value.
    Named {
        prefix: &'static str,
        sep: &'static str,
    },
}

/// One family's markers.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spec {
    /// Markers around the block of calls, where the family has them.
    pub(super) section: Option<(&'static str, &'static str)>,
    pub(super) call_start: &'static str,
    pub(super) call_end: Option<&'static str>,
    pub(super) form: CallForm,
}

const DS_SEP: &str = "<｜tool▁sep｜>";

impl MarkedFamily {
    pub(super) fn spec(self) -> Spec {
        match self {
            MarkedFamily::Hermes => Spec {
                section: None,
                call_start: "<tool_call>",
                call_end: Some("</tool_call>"),
                form: CallForm::Object,
            },
            MarkedFamily::LongCat => Spec {
                section: None,
                call_start: "<longcat_tool_call>",
                call_end: Some("</longcat_tool_call>"),
                form: CallForm::Object,
            },
            MarkedFamily::Granite4 => Spec {
                section: None,
                call_start: "<tool_call>",
                call_end: Some("</tool_call>"),
                form: CallForm::Object,
            },
            // The array body is Mistral's (`step_mistral_body`).
            MarkedFamily::Phi4MiniJson => Spec {
                section: None,
                call_start: "functools",
                call_end: None,
                form: CallForm::Object,
            },
            // The array body is Mistral's, and its `]` ends the calls (the second opener in
            // `openers` too).
            MarkedFamily::Granite => Spec {
                section: None,
                call_start: "<|tool_call|>",
                call_end: None,
                form: CallForm::Object,
            },
            // The array body is Mistral's (or one object); its suffix (`openers`) may follow.
            MarkedFamily::Apertus => Spec {
                section: None,
                call_start: "<|tools_prefix|>",
                call_end: None,
                form: CallForm::Keyed,
            },
            // The array body is Mistral's; the other openers are in `openers`.
            MarkedFamily::Xlam => Spec {
                section: None,
                call_start: "<tool_call>",
                call_end: None,
                form: CallForm::Object,
            },
            // The array body is Mistral's; the end marker closes the array.
            MarkedFamily::Jamba => Spec {
                section: None,
                call_start: "<tool_calls>",
                call_end: Some("</tool_calls>"),
                form: CallForm::Object,
            },
            MarkedFamily::Internlm => Spec {
                section: None,
                call_start: "<|action_start|><|plugin|>",
                call_end: Some("<|action_end|>"),
                form: CallForm::Object,
            },
            MarkedFamily::Granite20bFc => Spec {
                section: None,
                call_start: "<function_call>",
                call_end: None,
                form: CallForm::Object,
            },
            // The openers are in `openers`.
            MarkedFamily::Gigachat3 => Spec {
                section: None,
                call_start: "<|function_call|>",
                call_end: None,
                form: CallForm::Object,
            },
            MarkedFamily::Llama3Json => Spec {
                section: None,
                call_start: "<|python_tag|>",
                call_end: None,
                form: CallForm::Object,
            },
            // The body style (array, object or name) is chosen per call: see `begin_body`.
            MarkedFamily::Mistral => Spec {
                section: None,
                call_start: "[TOOL_CALLS]",
                call_end: None,
                form: CallForm::Named {
                    prefix: "",
                    sep: "[ARGS]",
                },
            },
            MarkedFamily::DeepseekV3 => Spec {
                section: Some(("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")),
                call_start: "<｜tool▁call▁begin｜>",
                call_end: Some("<｜tool▁call▁end｜>"),
                form: CallForm::Named {
                    prefix: "function<｜tool▁sep｜>",
                    sep: "\n```json\n",
                },
            },
            MarkedFamily::DeepseekV31 => Spec {
                section: Some(("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")),
                call_start: "<｜tool▁call▁begin｜>",
                call_end: Some("<｜tool▁call▁end｜>"),
                form: CallForm::Named {
                    prefix: "",
                    sep: DS_SEP,
                },
            },
            MarkedFamily::Plamo3 => Spec {
                section: Some((
                    "<|plamo:begin_tool_requests:plamo|>",
                    "<|plamo:end_tool_requests:plamo|>",
                )),
                call_start: "<|plamo:begin_tool_request:plamo|>",
                call_end: Some("<|plamo:end_tool_request:plamo|>"),
                // `<|plamo:end_tool_arguments:plamo|>` after the value is dropped with what
                // else comes before the call's end.
                form: CallForm::Named {
                    prefix: "<|plamo:begin_tool_name:plamo|>",
                    sep: "<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>",
                },
            },
            MarkedFamily::KimiK2 => Spec {
                section: Some(("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>")),
                call_start: "<|tool_call_begin|>",
                call_end: Some("<|tool_call_end|>"),
                form: CallForm::Named {
                    prefix: "",
                    sep: "<|tool_call_argument_begin|>",
                },
            },
        }
    }
}
