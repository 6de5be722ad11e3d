//! The XML families' grammars: one [`Spec`] of markers and rules per [`XmlFamily`].

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum XmlFamily {
    Qwen3Coder,
    SeedOss,
    /// MiMo-V2: qwen3_coder's grammar, values not newline-trimmed.
    Mimo,
    /// Step-5: qwen3_coder's grammar, whitespace-only content before calls kept.
    Step5,
    Glm45,
    /// MiniMax-M2: `<minimax:tool_call>` holding `<invoke name="f">` calls.
    MinimaxM2,
    /// DeepSeek-V3.2: DSML, `<｜DSML｜function_calls>` holding `<｜DSML｜invoke name="f">` calls.
    DeepseekV32,
    /// DeepSeek-V4: DSML, `<｜DSML｜tool_calls>` holding `<｜DSML｜invoke name="f">` calls.
    DeepseekV4,
    /// DeepSeek-V4.1: DSML with a space after the marker, `<｜DSML｜ calls>` holding
    /// `<｜DSML｜ invoke name="f">` calls.
    DeepseekV41,
    /// Poolside Laguna: glm45's grammar, names unchecked and may hold spaces, values read
    /// loosely ([`Spec::loose_values`]).
    PoolsideV1,
}

pub(super) struct Spec {
    /// What opens a call (or, with `section`, a section of calls): the first is the
    /// family's own marker, any others spellings vLLM also accepts.
    pub(super) call_starts: &'static [&'static str],
    pub(super) call_end: &'static str,
    /// Before the name (qwen3_coder's `<function=`); none: the name follows `call_start`.
    pub(super) func_open: Option<&'static str>,
    /// What ends the name.
    pub(super) name_ends: &'static [&'static str],
    pub(super) func_close: Option<&'static str>,
    pub(super) key_open: &'static str,
    pub(super) key_close: &'static str,
    pub(super) value_open: Option<&'static str>,
    pub(super) value_close: &'static str,
    pub(super) trim_newline: bool,
    /// Values of parameters that can only be strings stream character by character
    /// (qwen3_coder's engine); otherwise a value is emitted when its closing tag arrives.
    pub(super) streams_strings: bool,
    /// A call to a tool the request does not declare is dropped (glm45).
    pub(super) drops_undeclared: bool,
    /// `func_open` in content opens a call without `call_start` (vLLM's qwen3_coder engine:
    /// `<function=f>…</function>` alone is a call).
    pub(super) bare_function: bool,
    /// `call_starts` opens a section of calls (MiniMax-M2): after `func_close`, the next
    /// `func_open` is the next call of the section, and `call_end` ends the section.
    pub(super) section: bool,
    /// Names and keys may be quoted (`name="f"`, `name='f'`, `name=f`): one quote is dropped
    /// on each side.
    pub(super) quoted_names: bool,
    /// DeepSeek's DSML parameters: a head with a `string` attribute that says how the value
    /// is read, and `arguments`/`input` wrappers unwrapped (see [`super::dsml`]).
    pub(super) dsml: bool,
    /// Content is sent as written, whitespace before calls included (vLLM's step5 turns its
    /// engine's `drop_whitespace_only_content_before_tools` off); otherwise as
    /// [`super::super::engine_content`] holds it.
    pub(super) keeps_content_ws: bool,
    /// poolside_v1's values: a parameter declared `"type": "string"` exactly keeps its value
    /// as written; any other value is stripped and read as JSON, else as a Python literal,
    /// else kept as a string.
    pub(super) loose_values: bool,
    /// A name may hold spaces inside (poolside_v1's `get weather`).
    pub(super) spaced_names: bool,
}

/// qwen3_coder's grammar between other call markers (vLLM runs the same engine for
/// `qwen3_coder`, `qwen3_xml`, `step3p5` and `seed_oss`).
const fn qwen3_coder(call_starts: &'static [&'static str], call_end: &'static str) -> Spec {
    Spec {
        call_starts,
        call_end,
        func_open: Some("<function="),
        name_ends: &[">"],
        func_close: Some("</function>"),
        key_open: "<parameter=",
        key_close: ">",
        value_open: None,
        value_close: "</parameter>",
        trim_newline: true,
        streams_strings: true,
        drops_undeclared: false,
        bare_function: true,
        section: false,
        quoted_names: false,
        dsml: false,
        keeps_content_ws: false,
        loose_values: false,
        spaced_names: false,
    }
}

/// DeepSeek's DSML between `call_starts` and `call_end` (vLLM's deepseek_v32, deepseek_v4 and
/// deepseek_v41 engines, `vllm/parser/deepseek_v32.py`, `deepseek_v4.py` and
/// `deepseek_v41.py`): values verbatim, read by their `string` attribute, undeclared tools
/// kept. `tags`: the invoke's opener (up to the name), its closer, and the parameter's
/// opener and closer.
const fn dsml(
    call_starts: &'static [&'static str],
    call_end: &'static str,
    tags: [&'static str; 4],
) -> Spec {
    let [invoke, invoke_end, param, param_end] = tags;
    Spec {
        call_starts,
        call_end,
        func_open: Some(invoke),
        name_ends: &["\">"],
        func_close: Some(invoke_end),
        key_open: param,
        key_close: ">",
        value_open: None,
        value_close: param_end,
        trim_newline: false,
        streams_strings: true,
        drops_undeclared: false,
        bare_function: true,
        section: true,
        quoted_names: false,
        dsml: true,
        keeps_content_ws: false,
        loose_values: false,
        spaced_names: false,
    }
}

/// GLM-4.5's grammar (vLLM's glm45 engine): `<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`,
/// values typed by the schema, undeclared tools dropped (`validate_tool_names`).
const fn glm45() -> Spec {
    Spec {
        call_starts: &["<tool_call>"],
        call_end: "</tool_call>",
        func_open: None,
        name_ends: &["\n", "<arg_key>", "</tool_call>"],
        func_close: None,
        key_open: "<arg_key>",
        key_close: "</arg_key>",
        value_open: Some("<arg_value>"),
        value_close: "</arg_value>",
        trim_newline: false,
        streams_strings: false,
        drops_undeclared: true,
        bare_function: false,
        section: false,
        quoted_names: false,
        dsml: false,
        keeps_content_ws: false,
        loose_values: false,
        spaced_names: false,
    }
}

/// V3.2's and V4's DSML tags.
const DSML_TAGS: [&str; 4] = [
    "<｜DSML｜invoke name=\"",
    "</｜DSML｜invoke>",
    "<｜DSML｜parameter",
    "</｜DSML｜parameter>",
];

/// V4.1's: a space after the marker.
const DSML_SPACED_TAGS: [&str; 4] = [
    "<｜DSML｜ invoke name=\"",
    "</｜DSML｜ invoke>",
    "<｜DSML｜ parameter",
    "</｜DSML｜ parameter>",
];

impl XmlFamily {
    pub(super) fn spec(self) -> Spec {
        match self {
            XmlFamily::Qwen3Coder => qwen3_coder(&["<tool_call>"], "</tool_call>"),
            XmlFamily::SeedOss => qwen3_coder(&["<seed:tool_call>"], "</seed:tool_call>"),
            XmlFamily::Mimo => Spec {
                trim_newline: false,
                ..qwen3_coder(&["<tool_call>"], "</tool_call>")
            },
            // vLLM 0.33's step5: the qwen3 engine with content whitespace kept.
            XmlFamily::Step5 => Spec {
                keeps_content_ws: true,
                ..qwen3_coder(&["<tool_call>"], "</tool_call>")
            },
            XmlFamily::Glm45 => glm45(),
            // vLLM's poolside_v1 (`tool_parsers/poolside_v1_tool_parser.py`).
            XmlFamily::PoolsideV1 => Spec {
                drops_undeclared: false,
                loose_values: true,
                spaced_names: true,
                ..glm45()
            },
            // vLLM's minimax_m2 engine (`vllm/parser/minimax_m2.py`): values verbatim, typed
            // by the schema, undeclared tools dropped (`validate_tool_names`).
            XmlFamily::MinimaxM2 => Spec {
                call_starts: &["<minimax:tool_call>"],
                call_end: "</minimax:tool_call>",
                func_open: Some("<invoke name="),
                name_ends: &[">"],
                func_close: Some("</invoke>"),
                key_open: "<parameter name=",
                key_close: ">",
                value_open: None,
                value_close: "</parameter>",
                trim_newline: false,
                streams_strings: true,
                drops_undeclared: true,
                bare_function: true,
                section: true,
                quoted_names: true,
                dsml: false,
                keeps_content_ws: false,
                loose_values: false,
                spaced_names: false,
            },
            XmlFamily::DeepseekV32 => dsml(
                &["<｜DSML｜function_calls>"],
                "</｜DSML｜function_calls>",
                DSML_TAGS,
            ),
            // V4 also accepts two other spellings of its block's opener.
            XmlFamily::DeepseekV4 => dsml(
                &[
                    "<｜DSML｜tool_calls>",
                    "<｜DSML｜toolcalls>",
                    "<｜DSML｜tool>",
                ],
                "</｜DSML｜tool_calls>",
                DSML_TAGS,
            ),
            XmlFamily::DeepseekV41 => {
                dsml(&["<｜DSML｜ calls>"], "</｜DSML｜ calls>", DSML_SPACED_TAGS)
            }
        }
    }
}
