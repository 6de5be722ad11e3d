//! How a tool parser's family constrains the engine for `tool_choice` (the data behind
//! [`ToolGrammar`]): the call tags of xgrammar's builtin structural-tag templates and of
//! vLLM's own, one constant per family, read by the render (`src/render/tool_choice/`).

/// How a tool parser's `tool_choice` becomes `sampling_params.structured_outputs` in vLLM 0.33
/// (`tool_parsers/abstract_tool_parser.py` `adjust_request`, `parser/abstract_parser.py`
/// `_apply_structural_tag`, `tool_parsers/structural_tag_registry.py` and xgrammar's
/// `builtin_structural_tag.py`, whose templates vLLM asks for by its parser's
/// `structural_tag_model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolGrammar {
    /// No `structural_tag_model`: a JSON schema of the arguments (named) or of the list of
    /// calls (`required`).
    JsonSchema,
    /// No constraint: the model writes the family's own format for every `tool_choice`, and
    /// the family's parser reads it (vLLM's parsers with `supports_required_and_named =
    /// False` and no structural tag: k2_horizon, dots, gemma4, minimax_m3, poolside_v1, muse
    /// and inkling). Also the families whose constraint is not built here
    /// (cohere_command3/4: vLLM folds every request's tools into a grammar of xgrammar's
    /// JSON-schema converter, `docs/fidelity.md`).
    Unconstrained,
    /// vLLM's own Kimi K3 XTML tag (`get_kimi_k3_structural_tag`, on with its default
    /// `VLLM_ENFORCE_STRICT_TOOL_CALLING`): the response channel, then a tools channel of
    /// `call` tags holding `argument` tags (a strict tool's by its properties, the others'
    /// any), optional for `auto`.
    KimiK3,
    /// vLLM's own HYV4 tag (`get_hy_v4_structural_tag`, unsuffixed tokens): a `<tool_calls>`
    /// block of `<tool_call>` tags holding every tool's `<arg_key>` pairs (required keys in
    /// order, then the optional ones any number of times); never for `auto` alone (its
    /// `get_structural_tag`), only in `required`'s tag joined with the request's constraint.
    HyV4,
    /// vLLM's mistral parser with a Hugging Face tokenizer (`_build_guided_schema_pre_v11`): a
    /// JSON schema of the list `[{"name", "arguments"}]` for `required` and a named tool.
    MistralJsonList,
    /// vLLM's hermes-style tag (`_hermes_style_structural_tag`): `start` `{"name": …,
    /// "arguments": …}` `end`, each call with and without newlines inside its tags.
    HermesTags {
        start: &'static str,
        end: &'static str,
    },
    /// One of xgrammar's builtin tag templates (reasoning off): calls written by [`CallTags`].
    Tags(CallTags),
    /// vLLM's own GLM-4.7 tag (`glm_4_7`): strict tools' arguments by their schema in GLM's
    /// XML, the others key by key; xgrammar's template (`tags`) when every tool is strict. `always`:
    /// the parser's default strict level is FUNCTION (glm45/glm47), so `auto` is constrained
    /// too.
    Glm47 { tags: CallTags, always: bool },
    /// vLLM's own Harmony tag (gpt-oss, `vllm/parser/harmony.py`): an optional analysis and
    /// an optional commentary message, then one call (each `call_begins` pattern for each
    /// tool, `constrains` marker and `channels` channel) or, for `auto`, a final message.
    /// vLLM's Harmony parser also moves the request's own constraint into a final message
    /// after an optional analysis one, whatever the `tool_choice`.
    Harmony(HarmonyTags),
    /// vLLM's `beam` (`BeamParser._constrain_request`): a structural tag derived from the
    /// checkpoint's `response_template` on every chat request, with or without tools
    /// ([`crate::BeamTemplate`]); the render builds it beside the `tool_choice` constraints.
    Beam,
}

/// The patterns of vLLM's Harmony tag ([`ToolGrammar::Harmony`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HarmonyTags {
    /// A call's begin, `{name}`, `{channel}` and `{constrain}` filled in.
    pub call_begins: &'static [&'static str],
    /// The channels a call may be written in.
    pub channels: &'static [&'static str],
    /// The markers of a JSON message (a call's, and a final message's for a JSON schema).
    pub constrains: &'static [&'static str],
    /// A final message's begin, `{constrain}` filled in.
    pub final_begin: &'static str,
    /// The ends of a call or a final message (`""`: a stop token, which xgrammar may not
    /// name).
    pub ends: &'static [&'static str],
    /// The begins of the analysis and the commentary message allowed before.
    pub analysis: &'static str,
    pub commentary: &'static str,
    /// The end of such a message, and the text that starts the next.
    pub message_end: &'static str,
    pub next: &'static str,
}

/// vLLM's Harmony tag (`_FUNCTION_CALL_BEGINS`, `_TOOL_CALL_CHANNELS`, `_JSON_CONSTRAINS`,
/// `_FINAL_BEGIN`, `_END_TAG`, `_assemble_tag`).
pub(crate) const HARMONY: ToolGrammar = ToolGrammar::Harmony(HarmonyTags {
    call_begins: &[
        " to=functions.{name}{channel}{constrain}<|message|>",
        "{channel} to=functions.{name}{constrain}<|message|>",
    ],
    channels: &[
        "<|channel|>commentary",
        "<|channel|>analysis",
        "<|channel|>final",
    ],
    constrains: &[" json", " <|constrain|>json"],
    final_begin: "<|channel|>final{constrain}<|message|>",
    ends: &["<|end|>", ""],
    analysis: "<|channel|>analysis<|message|>",
    commentary: "<|channel|>commentary<|message|>",
    message_end: "<|end|>",
    next: "<|start|>assistant",
});

/// An xgrammar builtin template: one tag per tool, `begin` + name + `after_name`, its
/// arguments, then `end`, grouped by [`CallGroup`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTags {
    pub begin: &'static str,
    pub after_name: &'static str,
    pub end: &'static str,
    pub arguments: Arguments,
    pub group: CallGroup,
    /// Strings the text around the calls may not hold (`excludes` of the triggered tags).
    pub excludes: &'static [&'static str],
}

/// How a call's arguments are written: the `style` of xgrammar's `json_schema` format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arguments {
    /// JSON.
    Json,
    /// JSON after a call index and a marker (Kimi: `\d+` then `<|tool_call_argument_begin|>`).
    IndexedJson { marker: &'static str },
    /// `qwen_xml`: `<parameter=k>v</parameter>`.
    QwenXml,
    /// `glm_xml`: `<arg_key>k</arg_key><arg_value>v</arg_value>`.
    GlmXml,
    /// Another of xgrammar's XML styles by its name (`deepseek_xml`, `deepseek_v4_1_xml`,
    /// `minimax_xml`).
    Xml(&'static str),
}

/// How an xgrammar template groups the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallGroup {
    /// Calls found in text by `trigger`: `triggered_tags` (`at_least_one` for `required`), a
    /// named tool's call alone.
    Triggered { trigger: &'static str },
    /// Calls inside a section `begin` … `end`, `separator` between them: for `auto` the section
    /// is a triggered tag; for `required` and a named tool the section is written either as a
    /// tag (`as_tag`, a named tool's call merged into it: DeepSeek) or as constant strings
    /// around the calls (Kimi).
    Section {
        begin: &'static str,
        end: &'static str,
        separator: &'static str,
        as_tag: bool,
    },
    /// Calls back to back inside a block `begin` … `end` (DeepSeek's DSML, MiniMax): for `auto`
    /// the block is a tag triggered by `trigger`; for `required` and a named tool it is
    /// written as constant strings around the calls, after `lead`, the named tool's call
    /// alone (`named_in_list` false) or as a one-call list.
    Block {
        trigger: &'static str,
        lead: &'static str,
        begin: &'static str,
        end: &'static str,
        named_in_list: bool,
    },
    /// Calls back to back inside one tag `begin` … any of `ends`, for every choice (vLLM's
    /// own PLaMo 3 tag): for `auto` that tag triggered by `begin`; a named tool's call alone
    /// in its list.
    Wrapped {
        begin: &'static str,
        ends: &'static [&'static str],
    },
}

const THINK: &[&str] = &["<think>", "</think>"];

/// xgrammar's `llama`: `{"name": "f", "parameters": {…}}`.
pub(crate) const LLAMA_TAGS: CallTags = CallTags {
    begin: "{\"name\": \"",
    after_name: "\", \"parameters\": ",
    end: "}",
    arguments: Arguments::Json,
    group: CallGroup::Triggered {
        trigger: "{\"name\": ",
    },
    excludes: THINK,
};

/// xgrammar's `qwen_3_coder`.
pub(crate) const QWEN3_CODER_TAGS: CallTags = CallTags {
    begin: "<tool_call>\n<function=",
    after_name: ">\n",
    end: "\n</function>\n</tool_call>",
    arguments: Arguments::QwenXml,
    group: CallGroup::Triggered {
        trigger: "<tool_call>\n<function=",
    },
    excludes: THINK,
};

/// xgrammar's `mimo`: qwen3_coder's XML without the newlines.
pub(crate) const MIMO_TAGS: CallTags = CallTags {
    begin: "<tool_call><function=",
    after_name: ">",
    end: "</function></tool_call>",
    arguments: Arguments::QwenXml,
    group: CallGroup::Triggered {
        trigger: "<tool_call>",
    },
    excludes: &["<think>", "</think>", "</tool_call>", "<function="],
};

/// xgrammar's `deepseek_r1` (vLLM's deepseek_v3 parser).
pub(crate) const DEEPSEEK_R1_TAGS: CallTags = CallTags {
    begin: "<｜tool▁call▁begin｜>function<｜tool▁sep｜>",
    after_name: "\n```json\n",
    end: "\n```<｜tool▁call▁end｜>",
    arguments: Arguments::Json,
    group: CallGroup::Section {
        begin: "<｜tool▁calls▁begin｜>",
        end: "<｜tool▁calls▁end｜>",
        separator: "\n",
        as_tag: true,
    },
    excludes: THINK,
};

/// xgrammar's `deepseek_v3_1`.
pub(crate) const DEEPSEEK_V31_TAGS: CallTags = CallTags {
    begin: "<｜tool▁call▁begin｜>",
    after_name: "<｜tool▁sep｜>",
    end: "<｜tool▁call▁end｜>",
    arguments: Arguments::Json,
    group: CallGroup::Section {
        begin: "<｜tool▁calls▁begin｜>",
        end: "<｜tool▁calls▁end｜>",
        separator: "",
        as_tag: true,
    },
    excludes: THINK,
};

/// xgrammar's `kimi`.
pub(crate) const KIMI_TAGS: CallTags = CallTags {
    begin: "<|tool_call_begin|>functions.",
    after_name: ":",
    end: "<|tool_call_end|>",
    arguments: Arguments::IndexedJson {
        marker: "<|tool_call_argument_begin|>",
    },
    group: CallGroup::Section {
        begin: "<|tool_calls_section_begin|>",
        end: "<|tool_calls_section_end|>",
        separator: "",
        as_tag: false,
    },
    excludes: &["<think>", "</think>", "<|tool_call_begin|>"],
};

/// xgrammar's `glm_4_7`, which vLLM's own GLM-4.7 tag uses when every tool is strict (its
/// begin, end, trigger and excludes are those of vLLM's own tag too).
pub(crate) const GLM47_TAGS: CallTags = CallTags {
    begin: "<tool_call>",
    after_name: "",
    end: "</tool_call>",
    arguments: Arguments::GlmXml,
    group: CallGroup::Triggered {
        trigger: "<tool_call>",
    },
    excludes: &[
        "<think>",
        "</think>",
        "</tool_call>",
        "<arg_key>",
        "</arg_key>",
        "<arg_value>",
        "</arg_value>",
    ],
};

/// The DSML tag shared by xgrammar's `deepseek_v3_2`, `deepseek_v4` and `deepseek_v4_1`
/// (`get_deepseek_v3_2_structural_tag`, `_get_deepseek_v4_structural_tag`): a call's tags,
/// the block's trigger, begin and end, and the arguments' XML style; a call required, the
/// block follows two newlines.
const fn dsml(
    invoke_begin: &'static str,
    invoke_end: &'static str,
    block: [&'static str; 3],
    style: &'static str,
) -> CallTags {
    CallTags {
        begin: invoke_begin,
        after_name: "\">\n",
        end: invoke_end,
        arguments: Arguments::Xml(style),
        group: CallGroup::Block {
            trigger: block[0],
            lead: "\n\n",
            begin: block[1],
            end: block[2],
            named_in_list: false,
        },
        excludes: THINK,
    }
}

/// xgrammar's `deepseek_v3_2` (DeepSeek-V3.2's DSML in `<｜DSML｜function_calls>`).
pub(crate) const DEEPSEEK_V32_TAGS: CallTags = dsml(
    "<｜DSML｜invoke name=\"",
    "</｜DSML｜invoke>\n",
    [
        "<｜DSML｜function_calls>",
        "<｜DSML｜function_calls>\n",
        "</｜DSML｜function_calls>",
    ],
    "deepseek_xml",
);

/// xgrammar's `deepseek_v4` (V3.2's DSML in `<｜DSML｜tool_calls>`).
pub(crate) const DEEPSEEK_V4_TAGS: CallTags = dsml(
    "<｜DSML｜invoke name=\"",
    "</｜DSML｜invoke>\n",
    [
        "<｜DSML｜tool_calls>",
        "<｜DSML｜tool_calls>\n",
        "</｜DSML｜tool_calls>",
    ],
    "deepseek_xml",
);

/// xgrammar's `deepseek_v4_1` (V4's DSML with a space after the marker, in `<｜DSML｜ calls>`,
/// arguments in its `deepseek_v4_1_xml` style).
#[allow(dead_code)] // the deepseek_v41 parser entry is not on this branch yet
pub(crate) const DEEPSEEK_V41_TAGS: CallTags = dsml(
    "<｜DSML｜ invoke name=\"",
    "</｜DSML｜ invoke>\n",
    [
        "<｜DSML｜ calls>",
        "<｜DSML｜ calls>\n",
        "</｜DSML｜ calls>",
    ],
    "deepseek_v4_1_xml",
);

/// vLLM's own `minimax` tag (`get_minimax_structural_tag` in `structural_tag_registry.py`,
/// which vLLM's registry picks over xgrammar's template of the same name): `<invoke>` calls
/// in `<minimax:tool_call>`, a named tool's as a one-call list.
pub(crate) const MINIMAX_TAGS: CallTags = CallTags {
    begin: "<invoke name=\"",
    after_name: "\">\n",
    end: "</invoke>\n",
    arguments: Arguments::Xml("minimax_xml"),
    group: CallGroup::Block {
        trigger: "<minimax:tool_call>",
        lead: "\n",
        begin: "<minimax:tool_call>\n",
        end: "</minimax:tool_call>",
        named_in_list: true,
    },
    excludes: THINK,
};

/// vLLM's own `plamo3` tag (`get_plamo3_structural_tag`): each call a tool request with its
/// name and JSON arguments, all in one tool-requests block, which may end with the end of
/// turn.
pub(crate) const PLAMO3_TAGS: CallTags = CallTags {
    begin: "<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>",
    after_name: "<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>",
    end: "<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>",
    arguments: Arguments::Json,
    group: CallGroup::Wrapped {
        begin: "<|plamo:begin_tool_requests:plamo|>",
        ends: &[
            "<|plamo:end_tool_requests:plamo|>",
            "<|plamo:end_tool_requests:plamo|><|plamo:tag|>",
        ],
    },
    excludes: &[],
};
