//! The tool-call parsers' table ([`TOOL_PARSERS`]).

use super::{AnyToolParser, ToolEntry, BEAM, HARMONY_TOOLS, RESPONSE_TEMPLATE};
use crate::grammar::{
    ToolGrammar, DEEPSEEK_R1_TAGS, DEEPSEEK_V31_TAGS, DEEPSEEK_V32_TAGS, DEEPSEEK_V41_TAGS,
    DEEPSEEK_V4_TAGS, GLM47_TAGS, KIMI_TAGS, LLAMA_TAGS, MIMO_TAGS, MINIMAX_TAGS, PLAMO3_TAGS,
    QWEN3_CODER_TAGS,
};
use crate::tool::{
    BlockFamily, CohereParser, DotsParser, GemmaFamily, GemmaParser, HyV4Parser, InklingParser,
    K2HorizonParser, KimiK3Parser, MarkedFamily, MarkedParser, Minicpm5Parser, MinimaxM3Parser,
    MuseParser, PythonicBlockParser, PythonicParser, Step3Parser, XmlFamily, XmlParser,
};
use crate::HarmonyParser;

fn marked(family: MarkedFamily) -> AnyToolParser {
    AnyToolParser::Marked(MarkedParser::new(family))
}

fn block(family: BlockFamily) -> AnyToolParser {
    AnyToolParser::PythonicBlock(PythonicBlockParser::new(family))
}

/// Every tool-call parser. For `auto`, the first entry whose name is the model's name or
/// one of whose patterns its name contains is used, so more specific patterns come first
/// (`qwen3-coder` before `qwen`, `deepseek-v3.1` before `deepseek`).
pub static TOOL_PARSERS: &[ToolEntry] = &[
    ToolEntry {
        name: "qwen3_coder",
        help:
            "Qwen3-Coder: <tool_call><function=f><parameter=p>v</parameter></function></tool_call>",
        model_patterns: &["qwen3-coder", "qwen3_coder"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::Qwen3Coder, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(QWEN3_CODER_TAGS),
    },
    ToolEntry {
        name: "qwen3_xml",
        help: "Qwen3-Coder (vLLM's second name for the qwen3_coder parser)",
        model_patterns: &[],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::Qwen3Coder, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(QWEN3_CODER_TAGS),
    },
    ToolEntry {
        name: "step3p5",
        help: "Step-3.5: qwen3_coder's <tool_call><function=f><parameter=p>…",
        model_patterns: &["step-3.5", "step3p5", "step3.5"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::Qwen3Coder, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(QWEN3_CODER_TAGS),
    },
    ToolEntry {
        name: "step5",
        help: "Step-5: qwen3_coder's <tool_call><function=f><parameter=p>…, content whitespace kept",
        model_patterns: &["step-5", "step5"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::Step5, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(QWEN3_CODER_TAGS),
    },
    ToolEntry {
        name: "step3",
        help: "Step-3: <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"f\"><steptml:parameter name=\"k\">v</steptml:parameter></steptml:invoke><｜tool_call_end｜>…",
        model_patterns: &["step3"],
        make: |schemas, _| AnyToolParser::Step3(Step3Parser::new(schemas)),
        keeps_special_tokens: true,
        // vLLM's Step3ToolParser keeps the default supports_required_and_named and has no
        // structural tag: required and named choices get the JSON schema.
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "seed_oss",
        help: "Seed-OSS: <seed:tool_call><function=f><parameter=p>v</parameter></function></seed:tool_call>",
        model_patterns: &["seed-oss", "seed_oss"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::SeedOss, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "mimo",
        help: "MiMo-V2: qwen3_coder's <tool_call><function=f><parameter=p>v</parameter>…, values untrimmed",
        model_patterns: &["mimo"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::Mimo, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(MIMO_TAGS),
    },
    ToolEntry {
        name: "longcat",
        help: "LongCat-Flash: <longcat_tool_call>{\"name\", \"arguments\"}</longcat_tool_call>",
        model_patterns: &["longcat"],
        make: |_, _| marked(MarkedFamily::LongCat),
        keeps_special_tokens: true,
        grammar: ToolGrammar::HermesTags {
            start: "<longcat_tool_call>",
            end: "</longcat_tool_call>",
        },
    },
    ToolEntry {
        name: "qwen3_json",
        help: "Qwen3 with JSON calls: hermes's <tool_call>{…}</tool_call> (vLLM's second name for it)",
        model_patterns: &[],
        make: |_, _| marked(MarkedFamily::Hermes),
        keeps_special_tokens: true,
        grammar: ToolGrammar::HermesTags {
            start: "<tool_call>",
            end: "</tool_call>",
        },
    },
    ToolEntry {
        name: "hermes",
        help: "Qwen 2.5/3, Hermes: <tool_call>{\"name\", \"arguments\"}</tool_call>",
        model_patterns: &["qwen", "hermes"],
        make: |_, _| marked(MarkedFamily::Hermes),
        keeps_special_tokens: true,
        grammar: ToolGrammar::HermesTags {
            start: "<tool_call>",
            end: "</tool_call>",
        },
    },
    ToolEntry {
        name: "llama4_pythonic",
        help: "Llama 4: [f(a=1), g(b=\"x\")], optionally inside <|python_start|>…<|python_end|>",
        model_patterns: &["llama-4", "llama4"],
        make: |_, _| AnyToolParser::Pythonic(PythonicParser::new()),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "pythonic",
        help: "Python call lists: [f(a=1), g(b=\"x\")]",
        model_patterns: &[],
        make: |_, _| AnyToolParser::Pythonic(PythonicParser::new()),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "llama3_json",
        help: "Llama 3.x: <|python_tag|>{\"name\", \"parameters\"}, or the object alone",
        model_patterns: &["llama-3", "llama3"],
        make: |_, _| marked(MarkedFamily::Llama3Json),
        keeps_special_tokens: false,
        grammar: ToolGrammar::Tags(LLAMA_TAGS),
    },
    ToolEntry {
        name: "lfm2",
        help: "LFM2/LFM2.5: <|tool_call_start|>[f(a=1), g(b=\"x\")]<|tool_call_end|>, text around kept",
        model_patterns: &["lfm2"],
        make: |_, _| block(BlockFamily::Lfm2),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "olmo3",
        help: "OLMo 3: <function_calls>f(a=1)\\ng(b=\"x\")</function_calls>, one Python call a line",
        model_patterns: &["olmo-3", "olmo3"],
        make: |_, _| block(BlockFamily::Olmo3),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "granite-20b-fc",
        help: "Granite-20B-FunctionCalling: <function_call> {\"name\", \"arguments\"}, repeated",
        model_patterns: &["granite-20b-functioncalling", "granite-20b-fc"],
        make: |_, _| marked(MarkedFamily::Granite20bFc),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "granite",
        help: "Granite 3.0/3.1: <|tool_call|> or <tool_call>, then [{\"name\", \"arguments\"}, …]",
        model_patterns: &["granite-3"],
        make: |_, _| marked(MarkedFamily::Granite),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "llama4_json",
        help: "Llama 4 with JSON calls: llama3_json's format (vLLM's second name for it)",
        model_patterns: &[],
        make: |_, _| marked(MarkedFamily::Llama3Json),
        keeps_special_tokens: false,
        grammar: ToolGrammar::Tags(LLAMA_TAGS),
    },
    ToolEntry {
        name: "mistral",
        help: "Mistral: [TOOL_CALLS][{…}] (pre-v11) or [TOOL_CALLS]f[ARGS]{…} / [TOOL_CALLS]f{…} (v11+)",
        model_patterns: &["mistral", "magistral", "devstral"],
        make: |_, _| marked(MarkedFamily::Mistral),
        keeps_special_tokens: true,
        grammar: ToolGrammar::MistralJsonList,
    },
    ToolEntry {
        name: "deepseek_v31",
        help: "DeepSeek-V3.1/V3.2-Exp: <｜tool▁call▁begin｜>f<｜tool▁sep｜>{…}<｜tool▁call▁end｜>",
        // V3.2-Exp still writes V3.1's format; V3.2 itself writes DSML (deepseek_v32).
        model_patterns: &["deepseek-v3.1", "deepseek-v3.2-exp"],
        make: |_, _| marked(MarkedFamily::DeepseekV31),
        keeps_special_tokens: false,
        grammar: ToolGrammar::Tags(DEEPSEEK_V31_TAGS),
    },
    ToolEntry {
        name: "deepseek_v32",
        help: "DeepSeek-V3.2: <｜DSML｜function_calls><｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"k\" string=\"true\">v</｜DSML｜parameter></｜DSML｜invoke>…",
        model_patterns: &["deepseek-v3.2", "deepseek_v32"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::DeepseekV32, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(DEEPSEEK_V32_TAGS),
    },
    ToolEntry {
        name: "deepseek_v41",
        help: "DeepSeek-V4.1: deepseek_v4's DSML with a space after the marker: <｜DSML｜ calls><｜DSML｜ invoke name=\"f\">…",
        model_patterns: &["deepseek-v4.1", "deepseek_v41"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::DeepseekV41, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(DEEPSEEK_V41_TAGS),
    },
    ToolEntry {
        name: "deepseek_v4",
        help: "DeepSeek-V4: deepseek_v32's DSML calls in <｜DSML｜tool_calls>…</｜DSML｜tool_calls>",
        model_patterns: &["deepseek-v4"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::DeepseekV4, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(DEEPSEEK_V4_TAGS),
    },
    ToolEntry {
        name: "deepseek_v3",
        help: "DeepSeek-V3/R1: <｜tool▁call▁begin｜>function<｜tool▁sep｜>f\\n```json …```",
        model_patterns: &["deepseek"],
        make: |_, _| marked(MarkedFamily::DeepseekV3),
        keeps_special_tokens: false,
        grammar: ToolGrammar::Tags(DEEPSEEK_R1_TAGS),
    },
    ToolEntry {
        name: "kimi_k3",
        help: "Kimi K3 (XTML): <|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|open|>argument key=\"k\" type=\"t\"<|sep|>v<|close|>argument<|sep|>…",
        model_patterns: &["kimi-k3", "kimi_k3"],
        make: |_, _| AnyToolParser::KimiK3(KimiK3Parser::new()),
        keeps_special_tokens: true,
        // vLLM's KimiK3ToolParser: structural_tag_model = "kimi_k3", vLLM's own XTML tag.
        grammar: ToolGrammar::KimiK3,
    },
    ToolEntry {
        name: "k2_horizon",
        help: "K2 Horizon: <ifm|tool_calls><ifm|tool_call>f<ifm|arg_key>k</ifm|arg_key><ifm|arg_value>v</ifm|arg_value></ifm|tool_call></ifm|tool_calls>, a group read whole",
        model_patterns: &["k2-horizon", "k2_horizon"],
        make: |schemas, _| AnyToolParser::K2Horizon(K2HorizonParser::new(schemas)),
        keeps_special_tokens: false,
        // vLLM's K2HorizonToolParser: supports_required_and_named = False and no structural
        // tag; its adjust_request adds no JSON schema.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "kimi_k2",
        help: "Kimi K2: <|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{…}",
        model_patterns: &["kimi-k2", "kimi_k2"],
        make: |_, _| marked(MarkedFamily::KimiK2),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(KIMI_TAGS),
    },
    ToolEntry {
        name: "ling3",
        help: "Ling 3: glm45's <tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>",
        model_patterns: &["ling-3", "ling3"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::Glm45, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Glm47 {
            tags: GLM47_TAGS,
            always: false,
        },
    },
    ToolEntry {
        name: "glm47",
        help: "GLM-4.7 and GLM-5: glm45's format (vLLM runs one class for both names)",
        model_patterns: &["glm-4.7", "glm47", "glm-5"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::Glm45, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Glm47 {
            tags: GLM47_TAGS,
            always: true,
        },
    },
    ToolEntry {
        name: "glm45",
        help: "GLM-4.5/4.6: <tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>",
        model_patterns: &["glm-4.5", "glm-4.6", "glm45"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::Glm45, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Glm47 {
            tags: GLM47_TAGS,
            always: true,
        },
    },
    ToolEntry {
        name: "minimax_m2",
        help: "MiniMax-M2: <minimax:tool_call><invoke name=\"f\"><parameter name=\"k\">v</parameter></invoke>…</minimax:tool_call>",
        model_patterns: &["minimax-m2", "minimax_m2"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::MinimaxM2, schemas)),
        keeps_special_tokens: true,
        // vLLM's own `minimax` tag (its registry's, not xgrammar's template).
        grammar: ToolGrammar::Tags(MINIMAX_TAGS),
    },
    ToolEntry {
        name: "minimax_m3",
        help: "MiniMax-M3: ]<]minimax[>[<tool_call> holding ]<]minimax[>[<invoke name=\"f\"> calls, parameters as nested elements",
        model_patterns: &["minimax-m3", "minimax_m3"],
        make: |schemas, _| AnyToolParser::MinimaxM3(MinimaxM3Parser::new(schemas)),
        // Its markers are ordinary added tokens: vLLM's adjust_request changes nothing.
        keeps_special_tokens: false,
        // vLLM's minimax_m3: supports_required_and_named = False and no structural tag.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "minicpm5",
        help: "MiniCPM5: <function name=\"f\"><param name=\"k\">v</param>…</function>, bare, checked against the schema",
        model_patterns: &["minicpm5", "minicpm-5"],
        make: |schemas, _| AnyToolParser::Minicpm5(Minicpm5Parser::new(schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "poolside_v1",
        help: "Poolside Laguna: glm45's <tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>, names unchecked",
        model_patterns: &["laguna", "poolside"],
        make: |schemas, _| AnyToolParser::Xml(XmlParser::new(XmlFamily::PoolsideV1, schemas)),
        keeps_special_tokens: true,
        // vLLM's poolside_v1: supports_required_and_named = False and no structural tag.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "muse_glimmer",
        help: "Muse Glimmer: ATEM <atem:invoke name=\"f\"> calls in messages to a tool (<|start|>assistant to=f<|message|>…<|eom|>)",
        model_patterns: &["muse_glimmer", "muse-glimmer", "museglimmer"],
        make: |schemas, _| AnyToolParser::Muse(MuseParser::new(true, schemas)),
        keeps_special_tokens: true,
        // vLLM's Muse parsers: supports_required_and_named = False and no structural tag.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "muse",
        help: "Muse Spark: muse_glimmer's channels, commentary as content, string parameters verbatim",
        model_patterns: &["muse-spark", "muse_spark", "musespark"],
        make: |schemas, _| AnyToolParser::Muse(MuseParser::new(false, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "musespark1x",
        help: "Muse Spark (vLLM's second name for muse)",
        model_patterns: &[],
        make: |schemas, _| AnyToolParser::Muse(MuseParser::new(false, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "inkling",
        help: "Inkling: <|content_invoke_tool_json|>{\"name\", \"args\"}<|end_message|> blocks among text and thinking blocks",
        model_patterns: &["inkling"],
        make: |_, _| AnyToolParser::Inkling(InklingParser::new()),
        keeps_special_tokens: true,
        // vLLM's inkling: supports_required_and_named = False and no structural tag.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "granite4",
        help: "Granite 4.0: <tool_call>{\"name\", \"arguments\"}</tool_call>, text around calls kept",
        model_patterns: &["granite-4"],
        make: |_, _| marked(MarkedFamily::Granite4),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "ernie45",
        help: "ERNIE 4.5: hermes's <tool_call>{\"name\", \"arguments\"}</tool_call>",
        model_patterns: &["ernie-4.5", "ernie4.5", "ernie45"],
        make: |_, _| marked(MarkedFamily::Hermes),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "hunyuan_a13b",
        help: "Hunyuan-A13B: jamba's <tool_calls>[{\"name\", \"arguments\"}, …]</tool_calls>",
        model_patterns: &["hunyuan-a13b", "hunyuan_a13b"],
        make: |_, _| marked(MarkedFamily::Jamba),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "phi4_mini_json",
        help: "Phi-4-mini: functools[{\"name\", \"arguments\"}, …]",
        model_patterns: &["phi-4-mini"],
        make: |_, _| marked(MarkedFamily::Phi4MiniJson),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "jamba",
        help: "AI21 Jamba: <tool_calls>[{\"name\", \"arguments\"}, …]</tool_calls>",
        model_patterns: &["jamba"],
        make: |_, _| marked(MarkedFamily::Jamba),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "apertus",
        help: "Apertus: <|tools_prefix|>[{\"f\": {…}}, …]<|tools_suffix|>",
        model_patterns: &["apertus"],
        make: |_, _| marked(MarkedFamily::Apertus),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "xlam",
        help: "Salesforce xLAM: [{\"name\", \"arguments\"}, …], bare or after [TOOL_CALLS], in <tool_call> or a ```json fence",
        model_patterns: &["xlam"],
        make: |_, _| marked(MarkedFamily::Xlam),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "functiongemma",
        help: "FunctionGemma: <start_function_call>call:f{k:<escape>v<escape>,…}<end_function_call>",
        model_patterns: &["functiongemma"],
        make: |schemas, _| AnyToolParser::Gemma(GemmaParser::new(GemmaFamily::FunctionGemma, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "gemma4",
        help: "Gemma 4: <|tool_call>call:f{k:<|\"|>v<|\"|>,n:3}<tool_call|>, values typed by the schema",
        model_patterns: &["gemma-4", "gemma4"],
        make: |schemas, _| AnyToolParser::Gemma(GemmaParser::new(GemmaFamily::Gemma4, schemas)),
        keeps_special_tokens: true,
        // vLLM's gemma4 parser: supports_required_and_named = False and no structural tag,
        // so the model writes its own format for every tool_choice.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "hy_v4",
        help: "Hunyuan v4: <tool_calls><tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call></tool_calls>",
        model_patterns: &["hy4", "hy-4"],
        // The checkpoint's token suffix, as vLLM's `detect_token_suffix` reads it off the
        // vocabulary.
        make: |schemas, s| {
            let suffix = s.vocab_token_suffix.as_deref().unwrap_or_default();
            AnyToolParser::HyV4(HyV4Parser::new(schemas).with_suffix(suffix))
        },
        keeps_special_tokens: false,
        // vLLM's HYV4ToolParser: structural_tag_model = "hy_v4", vLLM's own tag, for
        // required and named choices.
        grammar: ToolGrammar::HyV4,
    },
    ToolEntry {
        name: "hy_v3",
        help: "Hunyuan v3 (Hy3): <tool_calls><tool_call>f<tool_sep><arg_key>k</arg_key><arg_value>v</arg_value></tool_call></tool_calls>",
        model_patterns: &["hy3", "hy-3"],
        // The checkpoint's token suffix, as vLLM's hy_v3 reads it: the tokenizer's
        // `token_suffix` (`tokenizer_config.json`).
        make: |schemas, s| {
            let suffix = s.token_suffix.as_deref().unwrap_or_default();
            AnyToolParser::HyV4(HyV4Parser::hy_v3(schemas).with_suffix(suffix))
        },
        keeps_special_tokens: false,
        // vLLM's HYV3ToolParser keeps the default supports_required_and_named and has no
        // structural tag: required and named choices get the JSON schema.
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "gigachat3",
        help: "GigaChat 3/3.1: <|message_sep|>\\n\\nfunction call<|role_sep|>\\n{\"name\", \"arguments\"} or <|function_call|>{…}",
        model_patterns: &["gigachat3", "gigachat-3"],
        make: |_, _| marked(MarkedFamily::Gigachat3),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "plamo3",
        help: "PLaMo 3: <|plamo:begin_tool_requests:plamo|> holding <|plamo:begin_tool_request:plamo|> calls (a name, then JSON arguments)",
        model_patterns: &["plamo-3", "plamo3"],
        make: |_, _| marked(MarkedFamily::Plamo3),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(PLAMO3_TAGS),
    },
    ToolEntry {
        name: "dots",
        help: "dots: <dots_function_call><invoke name=\"f\"><parameter name=\"k\">v</parameter></invoke></dots_function_call>, or a {\"name\", \"arguments\"} body",
        model_patterns: &["dots.llm", "dots2", "dots3"],
        make: |schemas, _| AnyToolParser::Dots(DotsParser::new(schemas)),
        keeps_special_tokens: false,
        // vLLM's DotsToolParser: supports_required_and_named = False and no structural tag.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "cohere_command4",
        help: "Command A Plus (command4): <|START_RESPONSE|>…<|END_RESPONSE|> or <|START_TEXT|>…, <|START_ACTION|>[{\"tool_call_id\", \"tool_name\", \"parameters\"}]<|END_ACTION|>",
        model_patterns: &["command-a-plus", "north-"],
        make: |_, _| AnyToolParser::Cohere(CohereParser::new(true)),
        keeps_special_tokens: true,
        // vLLM's CohereCommandParser builds its own structural tag (a grammar of the
        // action array), not built here yet.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "cohere_command3",
        help: "Command A Reasoning (command3): <|START_RESPONSE|>…<|END_RESPONSE|>, <|START_ACTION|>[{\"tool_call_id\", \"tool_name\", \"parameters\"}]<|END_ACTION|>",
        model_patterns: &["command-a-reasoning"],
        make: |_, _| AnyToolParser::Cohere(CohereParser::new(false)),
        keeps_special_tokens: true,
        // As cohere_command4: vLLM's own structural tag, not built here yet.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "internlm",
        help: "InternLM2/2.5: <|action_start|><|plugin|>{\"name\", \"parameters\"}<|action_end|>",
        model_patterns: &["internlm"],
        make: |_, _| marked(MarkedFamily::Internlm),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: HARMONY_TOOLS,
        help: "gpt-oss (Harmony): <|channel|>commentary to=functions.f <|constrain|>json<|message|>{…}<|call|>",
        model_patterns: &["gpt-oss", "gpt_oss"],
        make: |_, _| AnyToolParser::Harmony(HarmonyParser::new(false, true)),
        keeps_special_tokens: false,
        grammar: crate::grammar::HARMONY,
    },
    ToolEntry {
        name: RESPONSE_TEMPLATE,
        help: "the checkpoint's response_template metadata (tokenizer_config.json), e.g. Gemma 4's",
        model_patterns: &[],
        // Built by `tool_parser_with` / `response_template_parser` from the model's template,
        // which a table entry does not have; the lookups never call this.
        make: |_, _| unreachable!("hf is built by tool_parser_with from the model's template"),
        // vLLM's `ResponseTemplateParser.adjust_request` keeps them on every request.
        keeps_special_tokens: true,
        // vLLM refuses `required`, a named tool, strict tools and `parallel_tool_calls: false`
        // with a 400 (no grammar fits a template): the render's `response_template_refusal`.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: BEAM,
        help: "Beam checkpoints: hf's parser, and every chat request constrained to the response_template's format",
        model_patterns: &[],
        make: |_, _| unreachable!("beam is built by tool_parser_with from the model's template"),
        // vLLM's `BeamParser` is a `ResponseTemplateParser`: every request.
        keeps_special_tokens: true,
        // The template's grammar, built by the render on every chat request.
        grammar: ToolGrammar::Beam,
    },
];
