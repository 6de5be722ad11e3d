//! The reasoning parsers' table ([`REASONING_PARSERS`]); the shapes its entries share are
//! in `reasoning_shapes.rs`.

use super::reasoning_shapes::{
    deepseek_v4_tags, enable_thinking, engine_spec, engine_tags, force_nonempty_content,
    glm47_tags, glm_tags, glm_thinking, identity, muse_tags, qwen3_engine, tags, thinking_asked,
    CHATML,
};
use super::settings::{truthy, ParserSettings};
use super::{ReasoningEntry, BEAM, HARMONY_REASONING, RESPONSE_TEMPLATE};
use crate::{TagReasoningParser, TagSpec, TagVariant};

/// Every reasoning parser. For `auto`, the first entry whose name is the model's name or
/// one of whose patterns its name contains is used, so more specific patterns come first.
pub static REASONING_PARSERS: &[ReasoningEntry] = &[
    ReasoningEntry {
        name: "deepseek_r1",
        help: "DeepSeek-R1: <think>…</think>, the template writes <think>",
        model_patterns: &["deepseek-r1"],
        // R1's templates end the generation prompt with "<think>\n".
        make: |_| Some(tags("<think>", "</think>", true)),
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "qwen3",
        help: "Qwen3: <think>…</think>; <tool_call> also ends reasoning; off with enable_thinking: false",
        model_patterns: &["qwen3"],
        // As vLLM 0.33's qwen3 parser (`vllm/parser/qwen3.py`): with thinking on, output
        // starts in reasoning (Qwen3-2507 thinking templates write `<think>` into the prompt;
        // a `<think>` the model writes itself is dropped), and `<tool_call>` also ends it.
        // Thinking off (`enable_thinking` set and falsy): its one-shot is all content (its
        // stream drops a `</think>`; goldens list it).
        make: qwen3_engine,
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "seed_oss",
        help: "Seed-OSS: <seed:think>…</seed:think>; <seed:tool_call> also ends reasoning",
        model_patterns: &["seed-oss", "seed_oss"],
        // vLLM's seed_oss is its qwen3 engine with Seed's tags (and its switch).
        make: |s| {
            if !enable_thinking(s) {
                return Some(identity());
            }
            let bounds = ["<seed:bos>", "<seed:eos>"];
            Some(engine_tags("<seed:think>", "</seed:think>", "<seed:tool_call>", &bounds, false))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "step3p5",
        help: "Step-3.5: qwen3's <think>…</think>, reasoning's trailing whitespace dropped",
        model_patterns: &["step-3.5", "step3p5", "step3.5"],
        // vLLM's step3p5 is its qwen3 engine, always thinking (`enable_thinking` is not
        // read), reasoning right-stripped.
        make: |_| Some(engine_tags("<think>", "</think>", "<tool_call>", &CHATML, true)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "mimo",
        help: "MiMo-V2: qwen3's <think>…</think>",
        model_patterns: &["mimo-v2"],
        // vLLM's mimo reasoning is its qwen3 engine unchanged (its switch too).
        make: qwen3_engine,
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "nemotron_v3",
        help: "Nemotron 3: qwen3's <think>…</think>, reasoning's trailing whitespace dropped",
        model_patterns: &["nemotron-3", "nemotron_3", "nemotron_v3"],
        // vLLM's nemotron_v3 (`vllm/parser/nemotron_v3.py`) is its qwen3 engine with the
        // reasoning right-stripped; with thinking off (`enable_thinking` falsy) its one-shot
        // is all content. Its swap of an empty content with the reasoning under
        // `enable_thinking: false` gives what the parser being off gives (all content).
        // Under `force_nonempty_content: true`, as its stream: no content by the end, the
        // reasoning is sent again as the content (its one-shot moves it instead).
        make: |s| {
            if !enable_thinking(s) {
                return Some(identity());
            }
            Some(TagReasoningParser::new(TagSpec {
                repeat_reasoning_if_no_content: force_nonempty_content(s),
                ..engine_spec("<think>", "</think>", "<tool_call>", &CHATML, true)
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "granite_thinking_parser",
        help: "Granite 4.2 thinking: nemotron_v3's <think>…</think>, the content's leading newlines dropped",
        model_patterns: &["granite-4.2"],
        // vLLM's granite_thinking_parser (`vllm/parser/granite_thinking.py`): nemotron_v3's
        // engine, and the newlines its template writes after `</think>` dropped. Thinking
        // off (`enable_thinking` falsy): all content, its leading newlines still dropped.
        // `force_nonempty_content: true`: as nemotron_v3 (newlines alone are no content).
        make: |s| {
            if !enable_thinking(s) {
                return Some(TagReasoningParser::new(TagSpec {
                    variant: TagVariant::GraniteThinkingOff,
                    ..TagSpec::default()
                }));
            }
            Some(TagReasoningParser::new(TagSpec {
                start: "<think>".into(),
                end: "</think>".into(),
                starts_in_reasoning: true,
                implicit_end: Some("<tool_call>".into()),
                turn_boundaries: CHATML.iter().map(|b| b.to_string()).collect(),
                trim_reasoning_end: true,
                variant: TagVariant::GraniteThinking,
                repeat_reasoning_if_no_content: force_nonempty_content(s),
                ..TagSpec::default()
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "granite",
        help: "Granite 3.2/3.3: Here is (Here's) my thought process: … Here is (Here's) my response:",
        model_patterns: &["granite-3.2", "granite-3.3"],
        // vLLM's GraniteReasoningParser: phrases, not tokens. As its stream, the thought
        // phrase opens reasoning only at the start of the output, and reasoning never closed
        // stays reasoning.
        make: |_| {
            Some(TagReasoningParser::new(TagSpec {
                start: "Here is my thought process:".into(),
                end: "Here is my response:".into(),
                variant: TagVariant::Granite,
                ..TagSpec::default()
            }))
        },
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "glm47",
        help: "GLM-4.5 to 5: <think>…</think>, <tool_call> also ends it, trailing whitespace dropped",
        model_patterns: &["glm-4.7", "glm47", "glm-5", "glm-4.5", "glm-4.6", "glm45"],
        // Thinking off (`thinking`/`enable_thinking` set, neither truthy): all content, but
        // for GLM-5.3's template, which has no switch (`glm47_tags`).
        make: |s| Some(glm47_tags(s)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "glm45",
        help: "GLM-4.5/4.6: vLLM's second name for glm47",
        model_patterns: &[],
        make: |s| Some(glm47_tags(s)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "ling3",
        help: "Ling 3: glm47's <think>…</think>, <tool_call> also ends it; off with thinking/enable_thinking false",
        model_patterns: &["ling-3", "ling3"],
        // vLLM's ling3 (`vllm/parser/ling3.py`) is its GLM-4.7 engine, thinking on unless the
        // request's `thinking` or `enable_thinking` is false (then the identity).
        make: |s| Some(glm_tags(s)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "kimi_k2",
        help: "Kimi K2 thinking: <think>…</think>; the tool-calls section also ends it",
        // Kimi-K2-Instruct does not think: only the thinking models pick it.
        model_patterns: &["kimi-k2-thinking"],
        // Its switch is GLM-4.7's: thinking off, all content.
        make: |s| {
            if !glm_thinking(s) {
                return Some(identity());
            }
            Some(engine_tags("<think>", "</think>", "<|tool_calls_section_begin|>", &[], true))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "kimi_k3",
        help: "Kimi K3: <|open|>think<|sep|>…<|close|>think<|sep|>, output starts in it; the response channel also ends it; off with thinking false",
        model_patterns: &["kimi-k3", "kimi_k3"],
        // vLLM's KimiK3ReasoningParser: the template may write the think opener as the
        // generation prefix, so output starts in reasoning; with tools the channels after it
        // are left to the tool parser. `thinking` (else `enable_thinking`, default on) false
        // in the request's kwargs: all content, as its identity fallthrough streams it.
        make: |s| {
            let thinking = match s.get("thinking") {
                Some(v) => truthy(v),
                None => s.chat_template_kwargs.get("enable_thinking").is_none_or(truthy),
            };
            if !thinking {
                return Some(identity());
            }
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
        help: "K2 Horizon: <ifm|think>…</ifm|think> (think_fast/think_faster for reasoning_effort medium/low), output starts in it; <ifm|tool_calls> also ends it",
        model_patterns: &["k2-horizon", "k2_horizon"],
        // vLLM's K2HorizonReasoningParser: a start tag is dropped only at the output's start,
        // only the first end tag counts. The tags are the kwargs' `reasoning_effort`'s
        // (`high`, its default, `medium` or `low`); vLLM refuses any other effort
        // (`k2_horizon_effort`, a 400 before any parser is built).
        make: |s| {
            let (start, end) = k2_horizon_effort(s).ok()?;
            Some(TagReasoningParser::new(TagSpec {
                start: start.into(),
                end: end.into(),
                starts_in_reasoning: true,
                implicit_end: Some("<ifm|tool_calls>".into()),
                literal_tags: true,
                ..TagSpec::default()
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
        make: |_| {
            Some(TagReasoningParser::new(TagSpec {
                start: "<think>\n".into(),
                end: "\n</think>\n<answer>\n".into(),
                content_drop: Some("\n</answer>".into()),
                ..TagSpec::default()
            }))
        },
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "step5",
        help: "Step-5: DeepSeek-R1's <think>…</think>",
        model_patterns: &["step-5", "step5"],
        // vLLM 0.33 registers step5 as its DeepSeekR1ReasoningParser.
        make: |_| Some(tags("<think>", "</think>", true)),
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "step3",
        help: "Step-3: <think>…</think>, output starts in reasoning, a written <think> kept in it",
        model_patterns: &["step3"],
        // vLLM's Step3ReasoningParser: everything before the first `</think>` is reasoning,
        // a `<think>` included; a later `</think>` stays content (its one-shot).
        make: |_| {
            Some(TagReasoningParser::new(TagSpec {
                start: "<think>".into(),
                end: "</think>".into(),
                starts_in_reasoning: true,
                literal_tags: true,
                keep_leading_start: true,
                ..TagSpec::default()
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
        make: |_| {
            Some(TagReasoningParser::new(TagSpec {
                start: "<|START_THINKING|>".into(),
                end: "<|END_THINKING|>".into(),
                starts_in_reasoning: true,
                implicit_end: Some("<|START_RESPONSE|>".into()),
                more_implicit_ends: vec!["<|START_ACTION|>".into(), "<|START_TEXT|>".into()],
                ..TagSpec::default()
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "cohere_command3",
        help: "Command A Reasoning (command3): <|START_THINKING|>…<|END_THINKING|>",
        model_patterns: &["command-a-reasoning"],
        make: |_| Some(tags("<|START_THINKING|>", "<|END_THINKING|>", false)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "minimax_m2_append_think",
        help: "MiniMax-M2, reasoning left in the content: <think> written in front of the output",
        // An alternative to minimax_m2 that a deployment asks for by name (before it: a
        // name that holds another's pattern must come first).
        model_patterns: &[],
        make: |_| {
            Some(TagReasoningParser::new(TagSpec {
                start: "<think>".into(),
                end: "</think>".into(),
                variant: TagVariant::AppendThink,
                ..TagSpec::default()
            }))
        },
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "minimax_m2",
        help: "MiniMax-M2: <think>…</think>; <minimax:tool_call> also ends it",
        model_patterns: &["minimax-m2", "minimax_m2"],
        make: |_| Some(engine_tags("<think>", "</think>", "<minimax:tool_call>", &[], true)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "deepseek_v41",
        help: "DeepSeek-V4.1: <think>…</think>; a spaced DSML calls block also ends it",
        model_patterns: &["deepseek-v4.1", "deepseek_v41"],
        make: |s| Some(deepseek_v4_tags("<｜DSML｜ calls>", s)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "deepseek_v3",
        help: "DeepSeek-V3: no split (vLLM's identity), deepseek_r1's when the request sets thinking/enable_thinking",
        // vLLM's DeepSeekV3ReasoningParser is deepseek_r1's when the request's
        // `chat_template_kwargs` sets `thinking` or `enable_thinking` (truthy; a
        // `reasoning_effort` other than `none` sets `enable_thinking`), else the identity.
        // `auto` does not pick it.
        model_patterns: &[],
        make: |s| Some(if thinking_asked(s) { tags("<think>", "</think>", true) } else { identity() }),
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "deepseek_v4",
        help: "DeepSeek-V4: <think>…</think>; a DSML tool-calls block also ends it",
        model_patterns: &["deepseek-v4"],
        // Thinking off (`thinking`/`enable_thinking` set and neither truthy, or
        // `reasoning_effort: none`): output starts in content, a `<think>` anywhere opens
        // reasoning.
        make: |s| Some(deepseek_v4_tags("<｜DSML｜tool_calls>", s)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "gemma4",
        help: "Gemma 4: <|channel>thought\\n…<channel|>, anywhere in the output; <|tool_call> also ends it",
        model_patterns: &["gemma-4", "gemma4"],
        // vLLM's gemma4 parser engine (`vllm/parser/gemma4.py`): output starts in content;
        // with `enable_thinking` (default off) a prompt that ends at a turn boundary waits
        // for reasoning (`gemma4_config(thinking).wait_for_reasoning`).
        make: |s| {
            Some(TagReasoningParser::new(TagSpec {
                start: "<|channel>".into(),
                end: "<channel|>".into(),
                implicit_end: Some("<|tool_call>".into()),
                turn_boundaries: vec!["<|turn>".into(), "<|tool_response>".into()],
                wait_for_reasoning: Some(s.truthy("enable_thinking")),
                trim_reasoning_end: true,
                variant: TagVariant::Gemma4,
                ..TagSpec::default()
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "minimax_m3",
        help: "MiniMax-M3: one <mm:think>…</mm:think> block, anywhere in the output; output starts in it with thinking_mode: enabled",
        model_patterns: &["minimax-m3", "minimax_m3"],
        // vLLM's MiniMaxM3ReasoningParser: output starts in content, unless the request's
        // kwargs set `thinking_mode: "enabled"` (the template wrote the start tag): then it
        // starts in reasoning, a leading start tag is dropped and the first end tag ends it,
        // every other tag being text.
        make: |s| {
            let thinking = s.str("thinking_mode") == Some("enabled");
            Some(TagReasoningParser::new(TagSpec {
                start: "<mm:think>".into(),
                end: "</mm:think>".into(),
                starts_in_reasoning: thinking,
                literal_tags: thinking,
                variant: TagVariant::MinimaxM3,
                ..TagSpec::default()
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
        // Thinking off (`enable_thinking` falsy): output starts in content, and a stray
        // `<think>…</think>` anywhere is dropped (neither content nor reasoning).
        make: |s| {
            let mut dropped = vec!["<|im_end|>".to_string()];
            for n in 12..16 {
                dropped.push(format!("<reserved_{n}>"));
                dropped.push(format!("<|reserved_{n}|>"));
            }
            let thinking = enable_thinking(s);
            Some(TagReasoningParser::new(TagSpec {
                start: "<think>".into(),
                end: "</think>".into(),
                starts_in_reasoning: thinking,
                implicit_end: Some("<tool_call>".into()),
                dropped,
                opens_anywhere: !thinking,
                reasoning_dropped: !thinking,
                ..TagSpec::default()
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "poolside_v1",
        help: "Poolside Laguna: no split (vLLM's identity); with thinking/enable_thinking DeepSeek-R1's <think>…</think>, the prompt scan stopping at <assistant>",
        // vLLM's poolside_v1 is deepseek_v3's switch: the identity (all content) unless the
        // request's kwargs set `thinking`/`enable_thinking`, then DeepSeek-R1's tags with its
        // own prompt scan. `auto` does not pick it.
        model_patterns: &[],
        make: |s| {
            if !thinking_asked(s) {
                return Some(identity());
            }
            Some(TagReasoningParser::new(TagSpec {
                start: "<think>".into(),
                end: "</think>".into(),
                starts_in_reasoning: true,
                turn_boundaries: vec!["<assistant>".into()],
                ..TagSpec::default()
            }))
        },
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "muse_glimmer",
        help: "Muse Glimmer: the bodies of its to=self<|message|>…<|eom|> messages",
        model_patterns: &["muse_glimmer", "muse-glimmer", "museglimmer"],
        make: |_| Some(muse_tags(TagVariant::MuseGlimmer)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "muse",
        help: "Muse Spark: the bodies of its to=self (and bare) <|message|>…<|eom|> messages",
        model_patterns: &["muse-spark", "muse_spark", "musespark"],
        make: |_| Some(muse_tags(TagVariant::Muse)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "musespark1x",
        help: "Muse Spark (vLLM's second name for muse)",
        model_patterns: &[],
        make: |_| Some(muse_tags(TagVariant::Muse)),
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "inkling",
        help: "Inkling: <|content_thinking|>…<|end_message|> blocks",
        model_patterns: &["inkling"],
        make: |_| {
            Some(TagReasoningParser::new(TagSpec {
                start: "<|content_thinking|>".into(),
                end: "<|end_message|>".into(),
                // For the render's prompt check only (the blocks are read by their own
                // machine): a prompt that ends in `<|message_model|>` has not ended
                // reasoning, as vLLM's inkling `is_reasoning_end` says.
                starts_in_reasoning: true,
                turn_boundaries: vec!["<|message_model|>".into()],
                trim_reasoning_end: true,
                variant: TagVariant::Inkling,
                ..TagSpec::default()
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "holo2",
        help: "Holo2: DeepSeek-R1's <think>…</think>",
        model_patterns: &["holo2"],
        // vLLM's DeepSeekV3ReasoningWithThinkingParser: deepseek_v3's switch, on when the
        // request sets neither `thinking` nor `enable_thinking`.
        make: |s| {
            let unset = s.get("thinking").is_none() && s.get("enable_thinking").is_none();
            Some(if unset || thinking_asked(s) { tags("<think>", "</think>", true) } else { identity() })
        },
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "olmo3",
        help: "OLMo 3 Think: <think>…</think>, output starts in reasoning",
        model_patterns: &["olmo-3", "olmo3"],
        make: |_| Some(tags("<think>", "</think>", true)),
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "plamo3",
        help: "PLaMo 3: <|plamo:begin_think:plamo|>…<|plamo:end_think:plamo|>, output starts in reasoning; the tool block and <|plamo:tag|> also end it",
        model_patterns: &["plamo-3", "plamo3"],
        // vLLM's plamo3 parser engine with thinking on (its default; `enable_thinking: false`
        // turns it off: no reasoning markers are read, all content but `<|plamo:tag|>`).
        // The markers are several tokens each, so the prompt scan sees only
        // `<|plamo:tag|>`, where it stops.
        make: |s| {
            if !enable_thinking(s) {
                return Some(TagReasoningParser::new(TagSpec {
                    content_drop: Some("<|plamo:tag|>".into()),
                    variant: TagVariant::Identity,
                    ..TagSpec::default()
                }));
            }
            Some(TagReasoningParser::new(TagSpec {
                start: "<|plamo:begin_think:plamo|>".into(),
                end: "<|plamo:end_think:plamo|>".into(),
                starts_in_reasoning: true,
                implicit_end: Some("<|plamo:begin_tool_requests:plamo|>".into()),
                more_implicit_ends: vec!["<|plamo:tag|>".into()],
                content_drop: Some("<|plamo:tag|>".into()),
                turn_boundaries: vec!["<|plamo:tag|>".into()],
                variant: TagVariant::Plamo3,
                ..TagSpec::default()
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "hy_v3",
        help: "Hunyuan v3: no split (vLLM's identity), <think>…</think> when reasoning_effort is set and not no_think",
        // vLLM's HYV3ReasoningParser: the identity unless the `reasoning_effort` it is handed
        // (the request's, merged into its `chat_template_kwargs`) is set and not `no_think`;
        // then its base thinking parser, output starting in reasoning. `auto` does not pick
        // it.
        model_patterns: &[],
        make: |s| {
            let effort = s.get("reasoning_effort").filter(|v| truthy(v));
            Some(match effort {
                None => identity(),
                Some(e) if e == "no_think" => identity(),
                // The tags carry the tokenizer's `token_suffix`, as vLLM's hy_v3 reads it.
                Some(_) => {
                    let suffix = s.token_suffix.as_deref().unwrap_or_default();
                    tags(&format!("<think{suffix}>"), &format!("</think{suffix}>"), true)
                }
            })
        },
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "hy_v4",
        help: "Hunyuan (hy_v4): <think>…</think>, output starts in reasoning; all content with reasoning_effort no_think",
        model_patterns: &[],
        // vLLM's HYV4ReasoningParser: thinking unless the effort (the kwargs', default
        // `high`) is `no_think`; `enable_thinking` is not read.
        make: |s| {
            let effort = s.get("reasoning_effort").filter(|v| truthy(v));
            Some(match effort {
                Some(e) if e == "no_think" => identity(),
                // The tags carry the suffix vLLM's `detect_token_suffix` finds in the vocabulary.
                _ => {
                    let suffix = s.vocab_token_suffix.as_deref().unwrap_or_default();
                    tags(&format!("<think{suffix}>"), &format!("</think{suffix}>"), true)
                }
            })
        },
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: "mistral",
        help: "Magistral: [THINK]…[/THINK] anywhere in the output; [TOOL_CALLS] also ends it",
        model_patterns: &["magistral"],
        // vLLM 0.33's MistralParser engine (`vllm/parser/mistral.py`, `[THINK]` in the
        // vocabulary): output starts in content, a `[THINK]` anywhere opens reasoning (one
        // inside it is dropped), a `[/THINK]` outside reasoning is dropped, `[TOOL_CALLS]`
        // ends reasoning and stays content, the reasoning's trailing whitespace is dropped;
        // a prompt with neither tag reads as still before reasoning (`wait_for_reasoning`).
        make: |_| {
            Some(TagReasoningParser::new(TagSpec {
                start: "[THINK]".into(),
                end: "[/THINK]".into(),
                implicit_end: Some("[TOOL_CALLS]".into()),
                opens_anywhere: true,
                wait_for_reasoning: Some(true),
                trim_reasoning_end: true,
                ..TagSpec::default()
            }))
        },
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: "ernie45",
        help: "ERNIE 4.5 Thinking: <think>…</think>, the template writes <think>",
        model_patterns: &["ernie-4.5", "ernie4.5", "ernie45"],
        // vLLM's ernie45 is its base thinking parser, as deepseek_r1.
        make: |_| Some(tags("<think>", "</think>", true)),
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: HARMONY_REASONING,
        help: "gpt-oss (Harmony): the analysis channel; read with the calls by one parser",
        model_patterns: &["gpt-oss", "gpt_oss"],
        make: |_| None,
        // vLLM's gpt-oss parsers read token IDs and leave the request's setting alone (the
        // derender keeps special tokens itself wherever a parser runs).
        keeps_special_tokens: false,
    },
    ReasoningEntry {
        name: RESPONSE_TEMPLATE,
        help: "the checkpoint's response_template metadata (tokenizer_config.json): its thinking field; read with the calls by one parser",
        model_patterns: &[],
        // No tag parser: `response_template_parser` builds the one parser that reads the
        // reasoning with the calls, from the model's template (as openai_gptoss's Harmony).
        make: |_| None,
        // vLLM's `ResponseTemplateParser.adjust_request`: every request.
        keeps_special_tokens: true,
    },
    ReasoningEntry {
        name: BEAM,
        help: "Beam checkpoints: hf's reading of the thinking field; the render constrains every chat request to the template",
        model_patterns: &[],
        make: |_| None,
        keeps_special_tokens: true,
    },
];

/// K2 Horizon's reasoning tags for the request's `reasoning_effort` (`high` when unset), or
/// vLLM's refusal of any other value (`K2HorizonReasoningParser.__init__`'s `ValueError`).
pub(super) fn k2_horizon_effort(
    s: &ParserSettings,
) -> Result<(&'static str, &'static str), String> {
    const EFFORTS: [(&str, &str, &str); 3] = [
        ("high", "<ifm|think>", "</ifm|think>"),
        ("medium", "<ifm|think_fast>", "</ifm|think_fast>"),
        ("low", "<ifm|think_faster>", "</ifm|think_faster>"),
    ];
    let asked = match s.chat_template_kwargs.get("reasoning_effort") {
        None => return Ok((EFFORTS[0].1, EFFORTS[0].2)),
        Some(v) => v,
    };
    EFFORTS
        .iter()
        .find(|(name, _, _)| asked == name)
        .map(|(_, start, end)| (*start, *end))
        .ok_or_else(|| {
            // Python's `repr` of a plain string; other values as JSON writes them.
            let shown = match asked.as_str() {
                Some(text) if !text.contains('\'') => format!("'{text}'"),
                Some(text) => format!("\"{text}\""),
                None => asked.to_string(),
            };
            format!("Unsupported reasoning_effort {shown}. Supported values: high, medium, low.")
        })
}
