//! The parsers by vLLM's `--reasoning-parser` / `--tool-call-parser` names: one table each
//! ([`REASONING_PARSERS`], [`TOOL_PARSERS`]). The server's flag checks, its `--help`, `auto`
//! (by model name) and `/v1/models` all read these tables, so adding a family is one entry
//! here plus its parser (a [`Spec`](crate::tool) of an existing machine, or a file of its own
//! with a variant of [`AnyToolParser`]).

use crate::grammar::{
    ToolGrammar, DEEPSEEK_R1_TAGS, DEEPSEEK_V31_TAGS, DEEPSEEK_V32_TAGS, DEEPSEEK_V41_TAGS,
    DEEPSEEK_V4_TAGS, GLM47_TAGS, KIMI_TAGS, LLAMA_TAGS, MIMO_TAGS, MINIMAX_TAGS, PLAMO3_TAGS,
    QWEN3_CODER_TAGS,
};
use crate::tool::{
    BlockFamily, CohereParser, DotsParser, ForcedCallParser, GemmaFamily, GemmaParser, HyV4Parser,
    InklingParser, K2HorizonParser, KimiK3Parser, MarkedFamily, MarkedParser, Minicpm5Parser,
    MinimaxM3Parser, MuseParser, Parsed, PythonicBlockParser, PythonicParser, Step3Parser,
    ToolParser, ToolSchemas, XmlFamily, XmlParser,
};
use crate::{HarmonyParser, TagReasoningParser, TagSpec, TagVariant};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One reasoning parser family.
pub struct ReasoningEntry {
    /// vLLM's `--reasoning-parser` name.
    pub name: &'static str,
    /// One line for `--help`: the models and the tags.
    pub help: &'static str,
    /// Lower-case substrings of a model name that pick this family for `auto`.
    pub model_patterns: &'static [&'static str],
    /// Its tag parser; `None` for gpt-oss's `openai_gptoss`, whose reasoning the Harmony
    /// parser reads (with the calls, as vLLM runs both as one parser for gpt-oss).
    pub make: fn() -> Option<TagReasoningParser>,
    /// vLLM's parser sets `skip_special_tokens: false` on every request (its parser-engine
    /// adapters' `adjust_request`).
    pub keeps_special_tokens: bool,
}

/// One tool-call parser family.
pub struct ToolEntry {
    /// vLLM's `--tool-call-parser` name.
    pub name: &'static str,
    /// One line for `--help`: the models and the wire format.
    pub help: &'static str,
    /// Lower-case substrings of a model name that pick this family for `auto`.
    pub model_patterns: &'static [&'static str],
    /// A parser for one request, given its tools' schemas (the XML families type values by
    /// them).
    pub make: fn(Arc<ToolSchemas>) -> AnyToolParser,
    /// vLLM's parser sets `skip_special_tokens: false` on requests with tools and a
    /// `tool_choice` other than `none` (its `adjust_request`: hermes, kimi_k2 and the
    /// parser-engine adapters).
    pub keeps_special_tokens: bool,
    /// How vLLM constrains the engine's output for `tool_choice` `required`, a named tool,
    /// or `auto` with strict tools or `parallel_tool_calls: false`.
    pub grammar: ToolGrammar,
}

fn tags(start: &str, end: &str, starts_in_reasoning: bool) -> TagReasoningParser {
    TagReasoningParser::new(TagSpec {
        start: start.into(),
        end: end.into(),
        starts_in_reasoning,
        implicit_end: None,
        turn_boundaries: Vec::new(),
        trim_reasoning_end: false,
        literal_tags: false,
        content_drop: None,
        keep_leading_start: false,
        more_implicit_ends: Vec::new(),
        variant: TagVariant::Plain,
        dropped: Vec::new(),
    })
}

/// vLLM's qwen3 parser engine with one family's tags: output starts in reasoning (thinking
/// on), a start tag inside it is dropped, `implicit_end` also ends it, and the prompt scan
/// stops at the turn boundaries.
fn engine_tags(
    start: &str,
    end: &str,
    implicit_end: &str,
    turn_boundaries: &[&str],
    trim_reasoning_end: bool,
) -> TagReasoningParser {
    TagReasoningParser::new(TagSpec {
        start: start.into(),
        end: end.into(),
        starts_in_reasoning: true,
        implicit_end: Some(implicit_end.into()),
        turn_boundaries: turn_boundaries.iter().map(|b| b.to_string()).collect(),
        trim_reasoning_end,
        literal_tags: false,
        content_drop: None,
        keep_leading_start: false,
        more_implicit_ends: Vec::new(),
        variant: TagVariant::Plain,
        dropped: Vec::new(),
    })
}

/// Muse's channel messages, cut by their own machine. The tags are what the render and the
/// reasoning-token count read: no single token spells them, so a prompt never reads as
/// having ended reasoning (vLLM's Muse parsers say it has only once a tool channel opened)
/// and no reasoning tokens are counted.
fn muse_tags(variant: TagVariant) -> TagReasoningParser {
    TagReasoningParser::new(TagSpec {
        start: "to=self<|message|>".into(),
        end: "to=user<|message|>".into(),
        starts_in_reasoning: false,
        implicit_end: None,
        turn_boundaries: Vec::new(),
        trim_reasoning_end: false,
        variant,
        dropped: Vec::new(),
        literal_tags: false,
        content_drop: None,
        keep_leading_start: false,
        more_implicit_ends: Vec::new(),
    })
}

/// vLLM's `CHATML_TURN_BOUNDARIES`, where its scan of the prompt stops.
const CHATML: [&str; 2] = ["<|im_start|>", "<|im_end|>"];
/// GLM's turn tokens.
const GLM_TURNS: [&str; 4] = ["<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"];

/// Every reasoning parser. For `auto`, the first entry whose name is the model's name or
/// one of whose patterns its name contains is used, so more specific patterns come first.
pub static REASONING_PARSERS: &[ReasoningEntry] = &[
    ReasoningEntry {
        name: "deepseek_r1",
        help: "DeepSeek-R1: <think>…</think>, the template writes <think>",
        model_patterns: &["deepseek-r1"],
        // R1's templates end the generation prompt with "<think>\n".
        make: || Some(tags("<think>", "</think>", true)),
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "qwen3",
        help: "Qwen3: <think>…</think>; <tool_call> also ends reasoning; off with enable_thinking: false",
        model_patterns: &["qwen3"],
        // As vLLM 0.33's qwen3 parser (`vllm/parser/qwen3.py`): with thinking on, output
        // starts in reasoning (Qwen3-2507 thinking templates write `<think>` into the prompt;
        // a `<think>` the model writes itself is dropped), and `<tool_call>` also ends it.
        // Thinking off (`enable_thinking: false`) turns the parser off per request.
        make: || Some(engine_tags("<think>", "</think>", "<tool_call>", &CHATML, false)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "seed_oss",
        help: "Seed-OSS: <seed:think>…</seed:think>; <seed:tool_call> also ends reasoning",
        model_patterns: &["seed-oss", "seed_oss"],
        // vLLM's seed_oss is its qwen3 engine with Seed's tags.
        make: || {
            let bounds = ["<seed:bos>", "<seed:eos>"];
            Some(engine_tags("<seed:think>", "</seed:think>", "<seed:tool_call>", &bounds, false))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "step3p5",
        help: "Step-3.5: qwen3's <think>…</think>, reasoning's trailing whitespace dropped",
        model_patterns: &["step-3.5", "step3p5", "step3.5"],
        // vLLM's step3p5 is its qwen3 engine, always thinking, reasoning right-stripped.
        make: || Some(engine_tags("<think>", "</think>", "<tool_call>", &CHATML, true)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "mimo",
        help: "MiMo-V2: qwen3's <think>…</think>",
        model_patterns: &["mimo-v2"],
        // vLLM's mimo reasoning is its qwen3 engine unchanged.
        make: || Some(engine_tags("<think>", "</think>", "<tool_call>", &CHATML, false)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "nemotron_v3",
        help: "Nemotron 3: qwen3's <think>…</think>, reasoning's trailing whitespace dropped",
        model_patterns: &["nemotron-3", "nemotron_3", "nemotron_v3"],
        // vLLM's nemotron_v3 (`vllm/parser/nemotron_v3.py`) is its qwen3 engine with the
        // reasoning right-stripped. Its swap of an empty content with the reasoning under
        // `enable_thinking: false` gives what the parser being off gives (all content); the
        // one under `force_nonempty_content: true` is not done.
        make: || Some(engine_tags("<think>", "</think>", "<tool_call>", &CHATML, true)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "granite_thinking_parser",
        help: "Granite 4.2 thinking: nemotron_v3's <think>…</think>, the content's leading newlines dropped",
        model_patterns: &["granite-4.2"],
        // vLLM's granite_thinking_parser (`vllm/parser/granite_thinking.py`): nemotron_v3's
        // engine, and the newlines its template writes after `</think>` dropped.
        make: || {
            Some(TagReasoningParser::new(TagSpec {
                start: "<think>".into(),
                end: "</think>".into(),
                starts_in_reasoning: true,
                implicit_end: Some("<tool_call>".into()),
                turn_boundaries: CHATML.iter().map(|b| b.to_string()).collect(),
                trim_reasoning_end: true,
                literal_tags: false,
                content_drop: None,
                keep_leading_start: false,
                more_implicit_ends: Vec::new(),
                variant: TagVariant::GraniteThinking,
                dropped: Vec::new(),
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "glm47",
        help: "GLM-4.5 to 5: <think>…</think>, <tool_call> also ends it, trailing whitespace dropped",
        model_patterns: &["glm-4.7", "glm47", "glm-5", "glm-4.5", "glm-4.6", "glm45"],
        make: || Some(engine_tags("<think>", "</think>", "<tool_call>", &GLM_TURNS, true)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "glm45",
        help: "GLM-4.5/4.6: vLLM's second name for glm47",
        model_patterns: &[],
        make: || Some(engine_tags("<think>", "</think>", "<tool_call>", &GLM_TURNS, true)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "ling3",
        help: "Ling 3: glm47's <think>…</think>, <tool_call> also ends it; off with thinking/enable_thinking false",
        model_patterns: &["ling-3", "ling3"],
        // vLLM's ling3 (`vllm/parser/ling3.py`) is its GLM-4.7 engine, thinking on unless the
        // request's `thinking` or `enable_thinking` is false (then the identity).
        make: || Some(engine_tags("<think>", "</think>", "<tool_call>", &GLM_TURNS, true)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "kimi_k2",
        help: "Kimi K2 thinking: <think>…</think>; the tool-calls section also ends it",
        // Kimi-K2-Instruct does not think: only the thinking models pick it.
        model_patterns: &["kimi-k2-thinking"],
        make: || Some(engine_tags("<think>", "</think>", "<|tool_calls_section_begin|>", &[], true)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "kimi_k3",
        help: "Kimi K3: <|open|>think<|sep|>…<|close|>think<|sep|>, output starts in it; the response channel also ends it",
        model_patterns: &["kimi-k3", "kimi_k3"],
        // vLLM's KimiK3ReasoningParser: the template may write the think opener as the
        // generation prefix, so output starts in reasoning; with tools the channels after it
        // are left to the tool parser.
        make: || {
            Some(engine_tags(
                "<|open|>think<|sep|>",
                "<|close|>think<|sep|>",
                "<|open|>response<|sep|>",
                &[],
                false,
            ))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "k2_horizon",
        help: "K2 Horizon: <ifm|think>…</ifm|think>, output starts in it; <ifm|tool_calls> also ends it",
        model_patterns: &["k2-horizon", "k2_horizon"],
        // vLLM's K2HorizonReasoningParser (reasoning_effort high, its default): a start tag
        // is dropped only at the output's start, only the first end tag counts.
        make: || {
            Some(TagReasoningParser::new(TagSpec {
                start: "<ifm|think>".into(),
                end: "</ifm|think>".into(),
                starts_in_reasoning: true,
                implicit_end: Some("<ifm|tool_calls>".into()),
                turn_boundaries: Vec::new(),
                trim_reasoning_end: false,
                literal_tags: true,
                content_drop: None,
                keep_leading_start: false,
                more_implicit_ends: Vec::new(),
                variant: TagVariant::Plain,
                dropped: Vec::new(),
            }))
        },
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "hunyuan_a13b",
        help: "Hunyuan-A13B: <think>\\n…\\n</think>\\n<answer>\\n…\\n</answer>",
        model_patterns: &["hunyuan-a13b", "hunyuan_a13b"],
        // vLLM's HunyuanA13BReasoningParser: reasoning from `<think>\n` to
        // `\n</think>\n<answer>\n`, the answer's `\n</answer>` dropped.
        make: || {
            Some(TagReasoningParser::new(TagSpec {
                start: "<think>\n".into(),
                end: "\n</think>\n<answer>\n".into(),
                starts_in_reasoning: false,
                implicit_end: None,
                turn_boundaries: Vec::new(),
                trim_reasoning_end: false,
                literal_tags: false,
                content_drop: Some("\n</answer>".into()),
                keep_leading_start: false,
                more_implicit_ends: Vec::new(),
                variant: TagVariant::Plain,
                dropped: Vec::new(),
            }))
        },
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "step5",
        help: "Step-5: DeepSeek-R1's <think>…</think>",
        model_patterns: &["step-5", "step5"],
        // vLLM 0.33 registers step5 as its DeepSeekR1ReasoningParser.
        make: || Some(tags("<think>", "</think>", true)),
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "step3",
        help: "Step-3: <think>…</think>, output starts in reasoning, a written <think> kept in it",
        model_patterns: &["step3"],
        // vLLM's Step3ReasoningParser: everything before the first `</think>` is reasoning,
        // a `<think>` included; a later `</think>` stays content (its one-shot).
        make: || {
            Some(TagReasoningParser::new(TagSpec {
                start: "<think>".into(),
                end: "</think>".into(),
                starts_in_reasoning: true,
                implicit_end: None,
                turn_boundaries: Vec::new(),
                trim_reasoning_end: false,
                literal_tags: true,
                content_drop: None,
                keep_leading_start: true,
                more_implicit_ends: Vec::new(),
                variant: TagVariant::Plain,
                dropped: Vec::new(),
            }))
        },
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "cohere_command4",
        help: "Command A Plus (command4): <|START_THINKING|>…<|END_THINKING|>, output starts in it; a response or action channel ends it",
        model_patterns: &["command-a-plus", "north-"],
        // vLLM's CohereCommandParser with melody's cmd4 preset: text before any channel is
        // reasoning.
        make: || {
            Some(TagReasoningParser::new(TagSpec {
                start: "<|START_THINKING|>".into(),
                end: "<|END_THINKING|>".into(),
                starts_in_reasoning: true,
                implicit_end: Some("<|START_RESPONSE|>".into()),
                turn_boundaries: Vec::new(),
                trim_reasoning_end: false,
                literal_tags: false,
                content_drop: None,
                keep_leading_start: false,
                more_implicit_ends: vec!["<|START_ACTION|>".into(), "<|START_TEXT|>".into()],
                variant: TagVariant::Plain,
                dropped: Vec::new(),
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "cohere_command3",
        help: "Command A Reasoning (command3): <|START_THINKING|>…<|END_THINKING|>",
        model_patterns: &["command-a-reasoning"],
        make: || Some(tags("<|START_THINKING|>", "<|END_THINKING|>", false)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "minimax_m2",
        help: "MiniMax-M2: <think>…</think>; <minimax:tool_call> also ends it",
        model_patterns: &["minimax-m2", "minimax_m2"],
        make: || Some(engine_tags("<think>", "</think>", "<minimax:tool_call>", &[], true)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "deepseek_v41",
        help: "DeepSeek-V4.1: <think>…</think>; a spaced DSML calls block also ends it",
        model_patterns: &["deepseek-v4.1", "deepseek_v41"],
        make: || Some(engine_tags("<think>", "</think>", "<｜DSML｜ calls>", &[], true)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "deepseek_v4",
        help: "DeepSeek-V4: <think>…</think>; a DSML tool-calls block also ends it",
        model_patterns: &["deepseek-v4"],
        make: || Some(engine_tags("<think>", "</think>", "<｜DSML｜tool_calls>", &[], true)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "gemma4",
        help: "Gemma 4: <|channel>thought\\n…<channel|>, anywhere in the output; <|tool_call> also ends it",
        model_patterns: &["gemma-4", "gemma4"],
        // vLLM's gemma4 parser engine (`vllm/parser/gemma4.py`): output starts in content.
        make: || {
            Some(TagReasoningParser::new(TagSpec {
                start: "<|channel>".into(),
                end: "<channel|>".into(),
                starts_in_reasoning: false,
                implicit_end: Some("<|tool_call>".into()),
                turn_boundaries: vec!["<|turn>".into(), "<|tool_response>".into()],
                trim_reasoning_end: true,
                variant: TagVariant::Gemma4,
                dropped: Vec::new(),
                literal_tags: false,
                content_drop: None,
                keep_leading_start: false,
                more_implicit_ends: Vec::new(),
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "minimax_m3",
        help: "MiniMax-M3: one <mm:think>…</mm:think> block, anywhere in the output",
        model_patterns: &["minimax-m3", "minimax_m3"],
        // vLLM's MiniMaxM3ReasoningParser without `thinking_mode: "enabled"` (its default):
        // output starts in content.
        make: || {
            Some(TagReasoningParser::new(TagSpec {
                start: "<mm:think>".into(),
                end: "</mm:think>".into(),
                starts_in_reasoning: false,
                implicit_end: None,
                turn_boundaries: Vec::new(),
                trim_reasoning_end: false,
                variant: TagVariant::MinimaxM3,
                dropped: Vec::new(),
                literal_tags: false,
                content_drop: None,
                keep_leading_start: false,
                more_implicit_ends: Vec::new(),
            }))
        },
        // Its markers are ordinary added tokens: vLLM leaves the request's setting alone.
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "minicpmv",
        help: "MiniCPM-V 4.5/MiniCPM5: qwen3's <think>…</think>, <|im_end|> and reserved markers dropped",
        model_patterns: &["minicpm-v", "minicpmv", "minicpm5", "minicpm-5"],
        // vLLM's minicpmv parser: its qwen3 grammar (thinking on by default, no turn
        // boundaries), `<|im_end|>`, `<reserved_12..15>` and `<|reserved_12..15|>` dropped.
        make: || {
            let mut dropped = vec!["<|im_end|>".to_string()];
            for n in 12..16 {
                dropped.push(format!("<reserved_{n}>"));
                dropped.push(format!("<|reserved_{n}|>"));
            }
            Some(TagReasoningParser::new(TagSpec {
                start: "<think>".into(),
                end: "</think>".into(),
                starts_in_reasoning: true,
                implicit_end: Some("<tool_call>".into()),
                turn_boundaries: Vec::new(),
                trim_reasoning_end: false,
                variant: TagVariant::Plain,
                dropped,
                literal_tags: false,
                content_drop: None,
                keep_leading_start: false,
                more_implicit_ends: Vec::new(),
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "poolside_v1",
        help: "Poolside Laguna thinking: DeepSeek-R1's <think>…</think>, the prompt scan stopping at <assistant>",
        // vLLM's poolside_v1 is the identity (all content) unless the request sets
        // `thinking`/`enable_thinking`; this entry is its thinking mode, so `auto` does not
        // pick it: with no reasoning parser, the output is all content, as vLLM's default.
        model_patterns: &[],
        make: || {
            Some(TagReasoningParser::new(TagSpec {
                start: "<think>".into(),
                end: "</think>".into(),
                starts_in_reasoning: true,
                implicit_end: None,
                turn_boundaries: vec!["<assistant>".into()],
                trim_reasoning_end: false,
                variant: TagVariant::Plain,
                dropped: Vec::new(),
                literal_tags: false,
                content_drop: None,
                keep_leading_start: false,
                more_implicit_ends: Vec::new(),
            }))
        },
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "muse_glimmer",
        help: "Muse Glimmer: the bodies of its to=self<|message|>…<|eom|> messages",
        model_patterns: &["muse_glimmer", "muse-glimmer", "museglimmer"],
        make: || Some(muse_tags(TagVariant::MuseGlimmer)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "muse",
        help: "Muse Spark: the bodies of its to=self (and bare) <|message|>…<|eom|> messages",
        model_patterns: &["muse-spark", "muse_spark", "musespark"],
        make: || Some(muse_tags(TagVariant::Muse)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "musespark1x",
        help: "Muse Spark (vLLM's second name for muse)",
        model_patterns: &[],
        make: || Some(muse_tags(TagVariant::Muse)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "inkling",
        help: "Inkling: <|content_thinking|>…<|end_message|> blocks",
        model_patterns: &["inkling"],
        make: || {
            Some(TagReasoningParser::new(TagSpec {
                start: "<|content_thinking|>".into(),
                end: "<|end_message|>".into(),
                // For the render's prompt check only (the blocks are read by their own
                // machine): a prompt that ends in `<|message_model|>` has not ended
                // reasoning, as vLLM's inkling `is_reasoning_end` says.
                starts_in_reasoning: true,
                implicit_end: None,
                turn_boundaries: vec!["<|message_model|>".into()],
                trim_reasoning_end: true,
                variant: TagVariant::Inkling,
                dropped: Vec::new(),
                literal_tags: false,
                content_drop: None,
                keep_leading_start: false,
                more_implicit_ends: Vec::new(),
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "holo2",
        help: "Holo2: DeepSeek-R1's <think>…</think>",
        model_patterns: &["holo2"],
        make: || Some(tags("<think>", "</think>", true)),
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "olmo3",
        help: "OLMo 3 Think: <think>…</think>, output starts in reasoning",
        model_patterns: &["olmo-3", "olmo3"],
        make: || Some(tags("<think>", "</think>", true)),
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "hy_v4",
        help: "Hunyuan (hy_v4): <think>…</think>, output starts in reasoning",
        model_patterns: &[],
        make: || Some(tags("<think>", "</think>", true)),
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "mistral",
        help: "Magistral: [THINK]…[/THINK]",
        model_patterns: &["magistral"],
        make: || Some(tags("[THINK]", "[/THINK]", false)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "ernie45",
        help: "ERNIE 4.5 Thinking: <think>…</think>, the template writes <think>",
        model_patterns: &["ernie-4.5", "ernie4.5", "ernie45"],
        // vLLM's ernie45 is its base thinking parser, as deepseek_r1.
        make: || Some(tags("<think>", "</think>", true)),
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: HARMONY_REASONING,
        help: "gpt-oss (Harmony): the analysis channel; read with the calls by one parser",
        model_patterns: &["gpt-oss", "gpt_oss"],
        make: || None,
        // vLLM's gpt-oss parsers read token IDs and leave the request's setting alone (the
        // derender keeps special tokens itself wherever a parser runs).
        keeps_special_tokens: false,
    },
];

/// Every tool-call parser. For `auto`, the first entry whose name is the model's name or
/// one of whose patterns its name contains is used, so more specific patterns come first
/// (`qwen3-coder` before `qwen`, `deepseek-v3.1` before `deepseek`).
pub static TOOL_PARSERS: &[ToolEntry] = &[
    ToolEntry {
        name: "qwen3_coder",
        help:
            "Qwen3-Coder: <tool_call><function=f><parameter=p>v</parameter></function></tool_call>",
        model_patterns: &["qwen3-coder", "qwen3_coder"],
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::Qwen3Coder, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(QWEN3_CODER_TAGS),
    },
    ToolEntry {
        name: "qwen3_xml",
        help: "Qwen3-Coder (vLLM's second name for the qwen3_coder parser)",
        model_patterns: &[],
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::Qwen3Coder, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(QWEN3_CODER_TAGS),
    },
    ToolEntry {
        name: "step3p5",
        help: "Step-3.5: qwen3_coder's <tool_call><function=f><parameter=p>…",
        model_patterns: &["step-3.5", "step3p5", "step3.5"],
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::Qwen3Coder, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(QWEN3_CODER_TAGS),
    },
    ToolEntry {
        name: "step5",
        help: "Step-5: qwen3_coder's <tool_call><function=f><parameter=p>…, content whitespace kept",
        model_patterns: &["step-5", "step5"],
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::Step5, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(QWEN3_CODER_TAGS),
    },
    ToolEntry {
        name: "step3",
        help: "Step-3: <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"f\"><steptml:parameter name=\"k\">v</steptml:parameter></steptml:invoke><｜tool_call_end｜>…",
        model_patterns: &["step3"],
        make: |schemas| AnyToolParser::Step3(Step3Parser::new(schemas)),
        keeps_special_tokens: true,
        // vLLM's Step3ToolParser keeps the default supports_required_and_named and has no
        // structural tag: required and named choices get the JSON schema.
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "seed_oss",
        help: "Seed-OSS: <seed:tool_call><function=f><parameter=p>v</parameter></function></seed:tool_call>",
        model_patterns: &["seed-oss", "seed_oss"],
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::SeedOss, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "mimo",
        help: "MiMo-V2: qwen3_coder's <tool_call><function=f><parameter=p>v</parameter>…, values untrimmed",
        model_patterns: &["mimo"],
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::Mimo, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(MIMO_TAGS),
    },
    ToolEntry {
        name: "longcat",
        help: "LongCat-Flash: <longcat_tool_call>{\"name\", \"arguments\"}</longcat_tool_call>",
        model_patterns: &["longcat"],
        make: |_| marked(MarkedFamily::LongCat),
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
        make: |_| marked(MarkedFamily::Hermes),
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
        make: |_| marked(MarkedFamily::Hermes),
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
        make: |_| AnyToolParser::Pythonic(PythonicParser::new()),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "pythonic",
        help: "Python call lists: [f(a=1), g(b=\"x\")]",
        model_patterns: &[],
        make: |_| AnyToolParser::Pythonic(PythonicParser::new()),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "llama3_json",
        help: "Llama 3.x: <|python_tag|>{\"name\", \"parameters\"}, or the object alone",
        model_patterns: &["llama-3", "llama3"],
        make: |_| marked(MarkedFamily::Llama3Json),
        keeps_special_tokens: false,
        grammar: ToolGrammar::Tags(LLAMA_TAGS),
    },
    ToolEntry {
        name: "lfm2",
        help: "LFM2/LFM2.5: <|tool_call_start|>[f(a=1), g(b=\"x\")]<|tool_call_end|>, text around kept",
        model_patterns: &["lfm2"],
        make: |_| block(BlockFamily::Lfm2),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "olmo3",
        help: "OLMo 3: <function_calls>f(a=1)\\ng(b=\"x\")</function_calls>, one Python call a line",
        model_patterns: &["olmo-3", "olmo3"],
        make: |_| block(BlockFamily::Olmo3),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "granite-20b-fc",
        help: "Granite-20B-FunctionCalling: <function_call> {\"name\", \"arguments\"}, repeated",
        model_patterns: &["granite-20b-functioncalling", "granite-20b-fc"],
        make: |_| marked(MarkedFamily::Granite20bFc),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "granite",
        help: "Granite 3.0/3.1: <|tool_call|> or <tool_call>, then [{\"name\", \"arguments\"}, …]",
        model_patterns: &["granite-3"],
        make: |_| marked(MarkedFamily::Granite),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "llama4_json",
        help: "Llama 4 with JSON calls: llama3_json's format (vLLM's second name for it)",
        model_patterns: &[],
        make: |_| marked(MarkedFamily::Llama3Json),
        keeps_special_tokens: false,
        grammar: ToolGrammar::Tags(LLAMA_TAGS),
    },
    ToolEntry {
        name: "mistral",
        help: "Mistral: [TOOL_CALLS][{…}] (pre-v11) or [TOOL_CALLS]f[ARGS]{…} / [TOOL_CALLS]f{…} (v11+)",
        model_patterns: &["mistral", "magistral", "devstral"],
        make: |_| marked(MarkedFamily::Mistral),
        keeps_special_tokens: true,
        grammar: ToolGrammar::MistralJsonList,
    },
    ToolEntry {
        name: "deepseek_v31",
        help: "DeepSeek-V3.1/V3.2-Exp: <｜tool▁call▁begin｜>f<｜tool▁sep｜>{…}<｜tool▁call▁end｜>",
        // V3.2-Exp still writes V3.1's format; V3.2 itself writes DSML (deepseek_v32).
        model_patterns: &["deepseek-v3.1", "deepseek-v3.2-exp"],
        make: |_| marked(MarkedFamily::DeepseekV31),
        keeps_special_tokens: false,
        grammar: ToolGrammar::Tags(DEEPSEEK_V31_TAGS),
    },
    ToolEntry {
        name: "deepseek_v32",
        help: "DeepSeek-V3.2: <｜DSML｜function_calls><｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"k\" string=\"true\">v</｜DSML｜parameter></｜DSML｜invoke>…",
        model_patterns: &["deepseek-v3.2", "deepseek_v32"],
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::DeepseekV32, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(DEEPSEEK_V32_TAGS),
    },
    ToolEntry {
        name: "deepseek_v41",
        help: "DeepSeek-V4.1: deepseek_v4's DSML with a space after the marker: <｜DSML｜ calls><｜DSML｜ invoke name=\"f\">…",
        model_patterns: &["deepseek-v4.1", "deepseek_v41"],
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::DeepseekV41, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(DEEPSEEK_V41_TAGS),
    },
    ToolEntry {
        name: "deepseek_v4",
        help: "DeepSeek-V4: deepseek_v32's DSML calls in <｜DSML｜tool_calls>…</｜DSML｜tool_calls>",
        model_patterns: &["deepseek-v4"],
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::DeepseekV4, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(DEEPSEEK_V4_TAGS),
    },
    ToolEntry {
        name: "deepseek_v3",
        help: "DeepSeek-V3/R1: <｜tool▁call▁begin｜>function<｜tool▁sep｜>f\\n```json …```",
        model_patterns: &["deepseek"],
        make: |_| marked(MarkedFamily::DeepseekV3),
        keeps_special_tokens: false,
        grammar: ToolGrammar::Tags(DEEPSEEK_R1_TAGS),
    },
    ToolEntry {
        name: "kimi_k3",
        help: "Kimi K3 (XTML): <|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|open|>argument key=\"k\" type=\"t\"<|sep|>v<|close|>argument<|sep|>…",
        model_patterns: &["kimi-k3", "kimi_k3"],
        make: |_| AnyToolParser::KimiK3(KimiK3Parser::new()),
        keeps_special_tokens: true,
        // vLLM's KimiK3ToolParser: supports_required_and_named = False; its own XTML tag
        // is not built here yet.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "k2_horizon",
        help: "K2 Horizon: <ifm|tool_calls><ifm|tool_call>f<ifm|arg_key>k</ifm|arg_key><ifm|arg_value>v</ifm|arg_value></ifm|tool_call></ifm|tool_calls>, a group read whole",
        model_patterns: &["k2-horizon", "k2_horizon"],
        make: |schemas| AnyToolParser::K2Horizon(K2HorizonParser::new(schemas)),
        keeps_special_tokens: false,
        // vLLM's K2HorizonToolParser: supports_required_and_named = False and no structural
        // tag; its adjust_request adds no JSON schema.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "kimi_k2",
        help: "Kimi K2: <|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{…}",
        model_patterns: &["kimi-k2", "kimi_k2"],
        make: |_| marked(MarkedFamily::KimiK2),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(KIMI_TAGS),
    },
    ToolEntry {
        name: "ling3",
        help: "Ling 3: glm45's <tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>",
        model_patterns: &["ling-3", "ling3"],
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::Glm45, schemas)),
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
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::Glm45, schemas)),
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
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::Glm45, schemas)),
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
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::MinimaxM2, schemas)),
        keeps_special_tokens: true,
        // vLLM's own `minimax` tag (its registry's, not xgrammar's template).
        grammar: ToolGrammar::Tags(MINIMAX_TAGS),
    },
    ToolEntry {
        name: "minimax_m3",
        help: "MiniMax-M3: ]<]minimax[>[<tool_call> holding ]<]minimax[>[<invoke name=\"f\"> calls, parameters as nested elements",
        model_patterns: &["minimax-m3", "minimax_m3"],
        make: |schemas| AnyToolParser::MinimaxM3(MinimaxM3Parser::new(schemas)),
        // Its markers are ordinary added tokens: vLLM's adjust_request changes nothing.
        keeps_special_tokens: false,
        // vLLM's minimax_m3: supports_required_and_named = False and no structural tag.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "minicpm5",
        help: "MiniCPM5: <function name=\"f\"><param name=\"k\">v</param>…</function>, bare, checked against the schema",
        model_patterns: &["minicpm5", "minicpm-5"],
        make: |schemas| AnyToolParser::Minicpm5(Minicpm5Parser::new(schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "poolside_v1",
        help: "Poolside Laguna: glm45's <tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>, names unchecked",
        model_patterns: &["laguna", "poolside"],
        make: |schemas| AnyToolParser::Xml(XmlParser::new(XmlFamily::PoolsideV1, schemas)),
        keeps_special_tokens: true,
        // vLLM's poolside_v1: supports_required_and_named = False and no structural tag.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "muse_glimmer",
        help: "Muse Glimmer: ATEM <atem:invoke name=\"f\"> calls in messages to a tool (<|start|>assistant to=f<|message|>…<|eom|>)",
        model_patterns: &["muse_glimmer", "muse-glimmer", "museglimmer"],
        make: |schemas| AnyToolParser::Muse(MuseParser::new(true, schemas)),
        keeps_special_tokens: true,
        // vLLM's Muse parsers: supports_required_and_named = False and no structural tag.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "muse",
        help: "Muse Spark: muse_glimmer's channels, commentary as content, string parameters verbatim",
        model_patterns: &["muse-spark", "muse_spark", "musespark"],
        make: |schemas| AnyToolParser::Muse(MuseParser::new(false, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "musespark1x",
        help: "Muse Spark (vLLM's second name for muse)",
        model_patterns: &[],
        make: |schemas| AnyToolParser::Muse(MuseParser::new(false, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "inkling",
        help: "Inkling: <|content_invoke_tool_json|>{\"name\", \"args\"}<|end_message|> blocks among text and thinking blocks",
        model_patterns: &["inkling"],
        make: |_| AnyToolParser::Inkling(InklingParser::new()),
        keeps_special_tokens: true,
        // vLLM's inkling: supports_required_and_named = False and no structural tag.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "granite4",
        help: "Granite 4.0: <tool_call>{\"name\", \"arguments\"}</tool_call>, text around calls kept",
        model_patterns: &["granite-4"],
        make: |_| marked(MarkedFamily::Granite4),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "ernie45",
        help: "ERNIE 4.5: hermes's <tool_call>{\"name\", \"arguments\"}</tool_call>",
        model_patterns: &["ernie-4.5", "ernie4.5", "ernie45"],
        make: |_| marked(MarkedFamily::Hermes),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "hunyuan_a13b",
        help: "Hunyuan-A13B: jamba's <tool_calls>[{\"name\", \"arguments\"}, …]</tool_calls>",
        model_patterns: &["hunyuan-a13b", "hunyuan_a13b"],
        make: |_| marked(MarkedFamily::Jamba),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "phi4_mini_json",
        help: "Phi-4-mini: functools[{\"name\", \"arguments\"}, …]",
        model_patterns: &["phi-4-mini"],
        make: |_| marked(MarkedFamily::Phi4MiniJson),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "jamba",
        help: "AI21 Jamba: <tool_calls>[{\"name\", \"arguments\"}, …]</tool_calls>",
        model_patterns: &["jamba"],
        make: |_| marked(MarkedFamily::Jamba),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "apertus",
        help: "Apertus: <|tools_prefix|>[{\"f\": {…}}, …]<|tools_suffix|>",
        model_patterns: &["apertus"],
        make: |_| marked(MarkedFamily::Apertus),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "xlam",
        help: "Salesforce xLAM: [{\"name\", \"arguments\"}, …], bare or after [TOOL_CALLS], in <tool_call> or a ```json fence",
        model_patterns: &["xlam"],
        make: |_| marked(MarkedFamily::Xlam),
        keeps_special_tokens: false,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "functiongemma",
        help: "FunctionGemma: <start_function_call>call:f{k:<escape>v<escape>,…}<end_function_call>",
        model_patterns: &["functiongemma"],
        make: |schemas| AnyToolParser::Gemma(GemmaParser::new(GemmaFamily::FunctionGemma, schemas)),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "gemma4",
        help: "Gemma 4: <|tool_call>call:f{k:<|\"|>v<|\"|>,n:3}<tool_call|>, values typed by the schema",
        model_patterns: &["gemma-4", "gemma4"],
        make: |schemas| AnyToolParser::Gemma(GemmaParser::new(GemmaFamily::Gemma4, schemas)),
        keeps_special_tokens: true,
        // vLLM's gemma4 parser: supports_required_and_named = False and no structural tag,
        // so the model writes its own format for every tool_choice.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "hy_v4",
        help: "Hunyuan v4: <tool_calls><tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call></tool_calls>",
        model_patterns: &["hy4", "hy-4"],
        make: |schemas| AnyToolParser::HyV4(HyV4Parser::new(schemas)),
        keeps_special_tokens: false,
        // vLLM's HYV4ToolParser: supports_required_and_named = False, its structural tag
        // only with VLLM_ENFORCE_STRICT_TOOL_CALLING.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "hy_v3",
        help: "Hunyuan v3 (Hy3): <tool_calls><tool_call>f<tool_sep><arg_key>k</arg_key><arg_value>v</arg_value></tool_call></tool_calls>",
        model_patterns: &["hy3", "hy-3"],
        make: |schemas| AnyToolParser::HyV4(HyV4Parser::hy_v3(schemas)),
        keeps_special_tokens: false,
        // vLLM's HYV3ToolParser keeps the default supports_required_and_named and has no
        // structural tag: required and named choices get the JSON schema.
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "gigachat3",
        help: "GigaChat 3/3.1: <|message_sep|>\\n\\nfunction call<|role_sep|>\\n{\"name\", \"arguments\"} or <|function_call|>{…}",
        model_patterns: &["gigachat3", "gigachat-3"],
        make: |_| marked(MarkedFamily::Gigachat3),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: "plamo3",
        help: "PLaMo 3: <|plamo:begin_tool_requests:plamo|> holding <|plamo:begin_tool_request:plamo|> calls (a name, then JSON arguments)",
        model_patterns: &["plamo-3", "plamo3"],
        make: |_| marked(MarkedFamily::Plamo3),
        keeps_special_tokens: true,
        grammar: ToolGrammar::Tags(PLAMO3_TAGS),
    },
    ToolEntry {
        name: "dots",
        help: "dots: <dots_function_call><invoke name=\"f\"><parameter name=\"k\">v</parameter></invoke></dots_function_call>, or a {\"name\", \"arguments\"} body",
        model_patterns: &["dots.llm", "dots2", "dots3"],
        make: |schemas| AnyToolParser::Dots(DotsParser::new(schemas)),
        keeps_special_tokens: false,
        // vLLM's DotsToolParser: supports_required_and_named = False and no structural tag.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "cohere_command4",
        help: "Command A Plus (command4): <|START_RESPONSE|>…<|END_RESPONSE|> or <|START_TEXT|>…, <|START_ACTION|>[{\"tool_call_id\", \"tool_name\", \"parameters\"}]<|END_ACTION|>",
        model_patterns: &["command-a-plus", "north-"],
        make: |_| AnyToolParser::Cohere(CohereParser::new(true)),
        keeps_special_tokens: true,
        // vLLM's CohereCommandParser builds its own structural tag (a grammar of the
        // action array), not built here yet.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "cohere_command3",
        help: "Command A Reasoning (command3): <|START_RESPONSE|>…<|END_RESPONSE|>, <|START_ACTION|>[{\"tool_call_id\", \"tool_name\", \"parameters\"}]<|END_ACTION|>",
        model_patterns: &["command-a-reasoning"],
        make: |_| AnyToolParser::Cohere(CohereParser::new(false)),
        keeps_special_tokens: true,
        // As cohere_command4: vLLM's own structural tag, not built here yet.
        grammar: ToolGrammar::Unconstrained,
    },
    ToolEntry {
        name: "internlm",
        help: "InternLM2/2.5: <|action_start|><|plugin|>{\"name\", \"parameters\"}<|action_end|>",
        model_patterns: &["internlm"],
        make: |_| marked(MarkedFamily::Internlm),
        keeps_special_tokens: true,
        grammar: ToolGrammar::JsonSchema,
    },
    ToolEntry {
        name: HARMONY_TOOLS,
        help: "gpt-oss (Harmony): <|channel|>commentary to=functions.f <|constrain|>json<|message|>{…}<|call|>",
        model_patterns: &["gpt-oss", "gpt_oss"],
        make: |_| AnyToolParser::Harmony(HarmonyParser::new(false, true)),
        keeps_special_tokens: false,
        grammar: crate::grammar::HARMONY,
    },
];

/// gpt-oss's parser names (vLLM's `--reasoning-parser openai_gptoss`,
/// `--tool-call-parser openai`); for a Harmony model either one runs [`HarmonyParser`].
pub const HARMONY_REASONING: &str = "openai_gptoss";
pub const HARMONY_TOOLS: &str = "openai";

fn marked(family: MarkedFamily) -> AnyToolParser {
    AnyToolParser::Marked(MarkedParser::new(family))
}

fn block(family: BlockFamily) -> AnyToolParser {
    AnyToolParser::PythonicBlock(PythonicBlockParser::new(family))
}

/// The first entry, in table order, that `model` names: its name, or one of its patterns in
/// the lower-cased model name.
fn for_model<'a, E>(
    entries: &'a [E],
    model: &str,
    name: impl Fn(&E) -> &'static str,
    patterns: impl Fn(&E) -> &'static [&'static str],
) -> Option<&'a E> {
    let m = model.to_ascii_lowercase();
    entries
        .iter()
        .find(|e| name(e) == m || patterns(e).iter().any(|p| m.contains(p)))
}

/// The reasoning family `auto` picks for a model name.
pub fn reasoning_parser_for_model(model: &str) -> Option<&'static ReasoningEntry> {
    for_model(REASONING_PARSERS, model, |e| e.name, |e| e.model_patterns)
}

/// The tool-call family `auto` picks for a model name.
pub fn tool_parser_for_model(model: &str) -> Option<&'static ToolEntry> {
    for_model(TOOL_PARSERS, model, |e| e.name, |e| e.model_patterns)
}

/// Whether vLLM's parsers set `skip_special_tokens: false` on a request: the reasoning
/// parser always, the tool parser when the request has tools and a `tool_choice` other
/// than `none` (`uses_tools`).
pub fn keeps_special_tokens(
    reasoning: Option<&ReasoningEntry>,
    tools: Option<&ToolEntry>,
    uses_tools: bool,
) -> bool {
    reasoning.is_some_and(|r| r.keeps_special_tokens)
        || (uses_tools && tools.is_some_and(|t| t.keeps_special_tokens))
}

/// A reasoning parser by name (any case), by a model name as `auto` reads one, or
/// `tags:<start>,<end>` for any tag pair; `None` when nothing matches.
pub fn reasoning_parser(name: &str) -> Option<TagReasoningParser> {
    if let Some(pair) = name.strip_prefix("tags:") {
        let (start, end) = pair.split_once(',')?;
        return Some(tags(start, end, false));
    }
    reasoning_parser_for_model(name).and_then(|e| (e.make)())
}

/// A tool parser by vLLM name; `None` for an unknown name.
pub fn tool_parser(name: &str, schemas: Arc<ToolSchemas>) -> Option<AnyToolParser> {
    TOOL_PARSERS
        .iter()
        .find(|e| e.name == name)
        .map(|e| (e.make)(schemas))
}

/// Any tool parser, as one serializable type (the stream state carries it): one variant per
/// state machine, whatever the families it reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnyToolParser {
    Marked(MarkedParser),
    Xml(XmlParser),
    Pythonic(PythonicParser),
    PythonicBlock(PythonicBlockParser),
    HyV4(HyV4Parser),
    KimiK3(KimiK3Parser),
    K2Horizon(K2HorizonParser),
    Step3(Step3Parser),
    Dots(DotsParser),
    Cohere(CohereParser),
    Gemma(GemmaParser),
    MinimaxM3(MinimaxM3Parser),
    Minicpm5(Minicpm5Parser),
    Muse(MuseParser),
    Inkling(InklingParser),
    Harmony(HarmonyParser),
    /// A `tool_choice` JSON schema's output (named or `required`), in place of the family's.
    Forced(ForcedCallParser),
}

impl AnyToolParser {
    /// Whether the parser types values by the request's tool schemas (the XML families).
    pub fn uses_schemas(&self) -> bool {
        matches!(
            self,
            AnyToolParser::Xml(_)
                | AnyToolParser::HyV4(_)
                | AnyToolParser::K2Horizon(_)
                | AnyToolParser::Step3(_)
                | AnyToolParser::Dots(_)
                | AnyToolParser::Gemma(_)
                | AnyToolParser::MinimaxM3(_)
                | AnyToolParser::Minicpm5(_)
                | AnyToolParser::Muse(_)
        )
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        match self {
            AnyToolParser::Xml(p) => p.set_schemas(schemas),
            AnyToolParser::HyV4(p) => p.set_schemas(schemas),
            AnyToolParser::K2Horizon(p) => p.set_schemas(schemas),
            AnyToolParser::Step3(p) => p.set_schemas(schemas),
            AnyToolParser::Dots(p) => p.set_schemas(schemas),
            AnyToolParser::Gemma(p) => p.set_schemas(schemas),
            AnyToolParser::MinimaxM3(p) => p.set_schemas(schemas),
            AnyToolParser::Minicpm5(p) => p.set_schemas(schemas),
            AnyToolParser::Muse(p) => p.set_schemas(schemas),
            _ => {}
        }
    }
}

impl ToolParser for AnyToolParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        match self {
            AnyToolParser::Marked(p) => p.push(text, out),
            AnyToolParser::Xml(p) => p.push(text, out),
            AnyToolParser::Pythonic(p) => p.push(text, out),
            AnyToolParser::PythonicBlock(p) => p.push(text, out),
            AnyToolParser::HyV4(p) => p.push(text, out),
            AnyToolParser::KimiK3(p) => p.push(text, out),
            AnyToolParser::K2Horizon(p) => p.push(text, out),
            AnyToolParser::Step3(p) => p.push(text, out),
            AnyToolParser::Dots(p) => p.push(text, out),
            AnyToolParser::Cohere(p) => p.push(text, out),
            AnyToolParser::Gemma(p) => p.push(text, out),
            AnyToolParser::MinimaxM3(p) => p.push(text, out),
            AnyToolParser::Minicpm5(p) => p.push(text, out),
            AnyToolParser::Muse(p) => p.push(text, out),
            AnyToolParser::Inkling(p) => p.push(text, out),
            AnyToolParser::Forced(p) => p.push(text, out),
            // As a tool parser alone, analysis is dropped (vLLM without a reasoning parser).
            AnyToolParser::Harmony(p) => p.push(text, &mut String::new(), out),
        }
    }

    fn finish(&mut self, out: &mut Parsed) {
        match self {
            AnyToolParser::Marked(p) => p.finish(out),
            AnyToolParser::Xml(p) => p.finish(out),
            AnyToolParser::Pythonic(p) => p.finish(out),
            AnyToolParser::PythonicBlock(p) => p.finish(out),
            AnyToolParser::HyV4(p) => p.finish(out),
            AnyToolParser::KimiK3(p) => p.finish(out),
            AnyToolParser::K2Horizon(p) => p.finish(out),
            AnyToolParser::Step3(p) => p.finish(out),
            AnyToolParser::Dots(p) => p.finish(out),
            AnyToolParser::Cohere(p) => p.finish(out),
            AnyToolParser::Gemma(p) => p.finish(out),
            AnyToolParser::MinimaxM3(p) => p.finish(out),
            AnyToolParser::Minicpm5(p) => p.finish(out),
            AnyToolParser::Muse(p) => p.finish(out),
            AnyToolParser::Inkling(p) => p.finish(out),
            AnyToolParser::Forced(p) => p.finish(out),
            AnyToolParser::Harmony(p) => p.finish(&mut String::new(), out),
        }
    }
}
