//! The registry's tables: names unique, `auto` picking by model name, every entry making its
//! parser.

mod common;
use llm_render_parsers::{
    is_response_template, reasoning_parser, reasoning_parser_for_model, response_template_parser,
    tool_parser, tool_parser_for_model, tool_parser_with, ParserSettings, BEAM, HARMONY_REASONING,
    HARMONY_TOOLS, REASONING_PARSERS, RESPONSE_TEMPLATE, TOOL_PARSERS,
};
use std::sync::Arc;

#[test]
fn names_are_unique() {
    let mut tools: Vec<_> = TOOL_PARSERS.iter().map(|e| e.name).collect();
    tools.sort_unstable();
    tools.dedup();
    assert_eq!(tools.len(), TOOL_PARSERS.len());
    let mut reasoning: Vec<_> = REASONING_PARSERS.iter().map(|e| e.name).collect();
    reasoning.sort_unstable();
    reasoning.dedup();
    assert_eq!(reasoning.len(), REASONING_PARSERS.len());
}

#[test]
fn auto_picks_the_family_of_the_model_name() {
    let tool = |m: &str| tool_parser_for_model(m).map(|e| e.name);
    assert_eq!(
        tool("Qwen/Qwen3-Coder-30B-A3B-Instruct"),
        Some("qwen3_coder")
    );
    assert_eq!(tool("Qwen/Qwen3-8B"), Some("hermes"));
    assert_eq!(tool("qwen3"), Some("hermes"));
    assert_eq!(tool("NousResearch/Hermes-3-Llama-3.1-8B"), Some("hermes"));
    assert_eq!(
        tool("meta-llama/Llama-4-Scout-17B-16E"),
        Some("llama4_pythonic")
    );
    assert_eq!(
        tool("ByteDance-Seed/Seed-OSS-36B-Instruct"),
        Some("seed_oss")
    );
    assert_eq!(
        tool("meta-llama/Llama-3.1-8B-Instruct"),
        Some("llama3_json")
    );
    assert_eq!(tool("mistralai/Devstral-Small-2505"), Some("mistral"));
    assert_eq!(tool("deepseek-ai/DeepSeek-V3.1"), Some("deepseek_v31"));
    assert_eq!(tool("deepseek-ai/DeepSeek-V3"), Some("deepseek_v3"));
    assert_eq!(tool("moonshotai/Kimi-K2-Instruct"), Some("kimi_k2"));
    assert_eq!(tool("moonshotai/Kimi-K3"), Some("kimi_k3"));
    assert_eq!(tool("LLM360/K2-Horizon"), Some("k2_horizon"));
    assert_eq!(tool("tencent/Hunyuan-A13B-Instruct"), Some("hunyuan_a13b"));
    assert_eq!(tool("zai-org/GLM-4.5"), Some("glm45"));
    assert_eq!(tool("ibm-granite/granite-3.1-8b-instruct"), Some("granite"));
    assert_eq!(tool("swiss-ai/Apertus-8B-Instruct-2509"), Some("apertus"));
    assert_eq!(tool("LiquidAI/LFM2.5-1.2B-Instruct"), Some("lfm2"));
    assert_eq!(tool("Salesforce/Llama-xLAM-2-8B-fc-r"), Some("xlam"));
    assert_eq!(tool("allenai/Olmo-3-7B-Instruct"), Some("olmo3"));
    assert_eq!(tool("tencent/Hy4-preview"), Some("hy_v4"));
    assert_eq!(tool("tencent/Hy3-preview"), Some("hy_v3"));
    assert_eq!(tool("stepfun-ai/step3"), Some("step3"));
    assert_eq!(tool("stepfun-ai/Step-3.5-Flash"), Some("step3p5"));
    assert_eq!(tool("stepfun-ai/Step-5"), Some("step5"));
    assert_eq!(tool("rednote-hilab/dots.llm1.inst"), Some("dots"));
    assert_eq!(
        tool("CohereLabs/command-a-reasoning-08-2025"),
        Some("cohere_command3")
    );
    assert_eq!(tool("MiniMaxAI/MiniMax-M2.5"), Some("minimax_m2"));
    assert_eq!(tool("ai-sage/GigaChat3-10B-A1.8B"), Some("gigachat3"));
    assert_eq!(tool("pfnet/plamo-3-nict-8b-chat"), Some("plamo3"));
    assert_eq!(tool("deepseek-ai/DeepSeek-V3.2-Exp"), Some("deepseek_v31"));
    assert_eq!(tool("deepseek-ai/DeepSeek-V3.2"), Some("deepseek_v32"));
    assert_eq!(tool("deepseek-ai/DeepSeek-V4-Flash"), Some("deepseek_v4"));
    assert_eq!(tool("deepseek-ai/DeepSeek-V4.1"), Some("deepseek_v41"));
    assert_eq!(tool("google/gemma-4-26B-A4B-it"), Some("gemma4"));
    assert_eq!(tool("google/gemma-3-27b-it"), None);
    assert_eq!(tool("google/functiongemma-270m-it"), Some("functiongemma"));
    assert_eq!(tool("MiniMaxAI/MiniMax-M3"), Some("minimax_m3"));
    assert_eq!(tool("openbmb/MiniCPM5-16B"), Some("minicpm5"));
    assert_eq!(tool("poolside/Laguna-M"), Some("poolside_v1"));
    assert_eq!(tool("meta/Muse-Glimmer-A"), Some("muse_glimmer"));
    assert_eq!(tool("meta/Muse-Spark-1"), Some("muse"));
    assert_eq!(tool("inkling-base"), Some("inkling"));
    assert_eq!(tool("gpt2"), None);
    assert_eq!(tool("openai/gpt-oss-20b"), Some(HARMONY_TOOLS));
    let reasoning = |m: &str| reasoning_parser_for_model(m).map(|e| e.name);
    assert_eq!(
        reasoning("deepseek-ai/DeepSeek-R1-Distill-Qwen3-8B"),
        Some("deepseek_r1")
    );
    assert_eq!(reasoning("Qwen/Qwen3-8B"), Some("qwen3"));
    assert_eq!(reasoning("moonshotai/Kimi-K3"), Some("kimi_k3"));
    assert_eq!(reasoning("LLM360/K2-Horizon"), Some("k2_horizon"));
    assert_eq!(reasoning("stepfun-ai/step3"), Some("step3"));
    assert_eq!(reasoning("stepfun-ai/Step-5"), Some("step5"));
    assert_eq!(
        reasoning("CohereLabs/command-a-reasoning-08-2025"),
        Some("cohere_command3")
    );
    assert_eq!(
        reasoning("tencent/Hunyuan-A13B-Instruct"),
        Some("hunyuan_a13b")
    );
    assert_eq!(reasoning("mistralai/Magistral-Small-2506"), Some("mistral"));
    assert_eq!(reasoning("mistral"), Some("mistral"));
    assert_eq!(reasoning("mistralai/Mistral-7B"), None);
    assert_eq!(reasoning("zai-org/GLM-4.7"), Some("glm47"));
    assert_eq!(reasoning("moonshotai/Kimi-K2-Instruct"), None);
    assert_eq!(reasoning("moonshotai/Kimi-K2-Thinking"), Some("kimi_k2"));
    assert_eq!(tool("zai-org/GLM-4.7"), Some("glm47"));
    assert_eq!(reasoning("google/gemma-4-E4B-it"), Some("gemma4"));
    assert_eq!(reasoning("MiniMaxAI/MiniMax-M3"), Some("minimax_m3"));
    assert_eq!(reasoning("deepseek-ai/DeepSeek-V4.1"), Some("deepseek_v41"));
    assert_eq!(reasoning("openbmb/MiniCPM-V-4_5"), Some("minicpmv"));
    assert_eq!(reasoning("openbmb/MiniCPM5-16B"), Some("minicpmv"));
    assert_eq!(reasoning("meta/Muse-Glimmer-A"), Some("muse_glimmer"));
    assert_eq!(reasoning("meta/Muse-Spark-1"), Some("muse"));
    assert_eq!(reasoning("inkling-base"), Some("inkling"));
    assert_eq!(reasoning("inclusionAI/Ling-3-flash"), Some("ling3"));
    assert_eq!(
        reasoning("ibm-granite/granite-3.3-8b-instruct"),
        Some("granite")
    );
    assert_eq!(reasoning("ibm-granite/granite-3.1-8b-instruct"), None);
    assert_eq!(reasoning("MiniMaxAI/MiniMax-M2"), Some("minimax_m2"));
    assert_eq!(
        reasoning("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B"),
        Some("nemotron_v3")
    );
    assert_eq!(
        reasoning("ibm-granite/granite-4.2-8b"),
        Some("granite_thinking_parser")
    );
    // poolside_v1's reasoning is off unless the request turns thinking on: not by name.
    assert_eq!(reasoning("poolside/Laguna-M"), None);
    assert_eq!(
        reasoning("deepseek-ai/DeepSeek-V4-Flash"),
        Some("deepseek_v4")
    );
    // deepseek_v3's and hy_v3's are vLLM's identity unless the request turns thinking on:
    // not by name.
    assert_eq!(reasoning("deepseek-ai/DeepSeek-V3"), None);
    assert_eq!(reasoning("tencent/Hy3-preview"), None);
    assert_eq!(reasoning("pfnet/plamo-3-8b"), Some("plamo3"));
}

#[test]
fn identity_entries_read_every_prompt_as_past_reasoning() {
    for name in ["deepseek_v3", "hy_v3"] {
        let p = reasoning_parser(name).expect(name);
        // vLLM's IdentityReasoningParser.is_reasoning_end: always true.
        assert!(p.spec().prompt_ends_reasoning(&[], |_| Some(7)), "{name}");
        assert!(p.spec().prompt_ends_reasoning(&[7], |_| Some(7)), "{name}");
    }
}

#[test]
fn every_entry_makes_its_parser() {
    for e in TOOL_PARSERS
        .iter()
        .filter(|e| !is_response_template(e.name))
    {
        assert!(tool_parser(e.name, Arc::default()).is_some(), "{}", e.name);
    }
    for e in REASONING_PARSERS
        .iter()
        .filter(|e| e.name != HARMONY_REASONING && !is_response_template(e.name))
    {
        assert!(reasoning_parser(e.name).is_some(), "{}", e.name);
    }
    assert!(reasoning_parser("tags:<r>,</r>").is_some());
    // As `--reasoning-parser` always took them: any case, or a model name.
    assert!(reasoning_parser("Qwen3").is_some());
    assert!(reasoning_parser("deepseek-r1").is_some());
    assert!(reasoning_parser("nope").is_none());
    assert!(reasoning_parser("tags:<r>").is_none());
    assert!(tool_parser("nope", Arc::default()).is_none());
}

/// The families whose vLLM constructor reads the request's settings switch on them: the
/// parser a request gets comes from its kwargs and `reasoning_effort`, merged as vLLM merges
/// them.
#[test]
fn request_settings_switch_the_families_that_read_them() {
    use llm_render_parsers::{reasoning_parser_with, ParserSettings, TagVariant};
    let kw = |v: serde_json::Value| v.as_object().cloned().unwrap();
    let variant = |name: &str, s: &ParserSettings| {
        reasoning_parser_with(name, s).map(|p| (p.spec().variant, p.spec().start.clone()))
    };
    let none = ParserSettings::default();
    // deepseek_v3 and poolside_v1: the identity, deepseek_r1's tags with thinking asked for
    // (a `reasoning_effort` other than `none` asks through `enable_thinking`).
    let effort = ParserSettings::from_request(None, Some("high"));
    let thinking = ParserSettings::new(kw(serde_json::json!({"thinking": true})));
    for name in ["deepseek_v3", "poolside_v1"] {
        assert_eq!(
            variant(name, &none),
            Some((TagVariant::Identity, String::new()))
        );
        for s in [&effort, &thinking] {
            assert_eq!(
                variant(name, s),
                Some((TagVariant::Plain, "<think>".into()))
            );
        }
    }
    // hy_v3: thinking unless the effort is `no_think` (or unset).
    let no_think = ParserSettings::from_request(
        Some(&kw(serde_json::json!({"reasoning_effort": "no_think"}))),
        None,
    );
    assert_eq!(
        variant("hy_v3", &no_think),
        Some((TagVariant::Identity, String::new()))
    );
    assert_eq!(
        variant("hy_v3", &effort),
        Some((TagVariant::Plain, "<think>".into()))
    );
    // kimi_k3: off with `thinking: false`.
    let off = ParserSettings::new(kw(serde_json::json!({"thinking": false})));
    assert_eq!(
        variant("kimi_k3", &off),
        Some((TagVariant::Identity, String::new()))
    );
    // k2_horizon: the effort's tags; vLLM refuses another effort.
    let low = ParserSettings::from_request(None, Some("low"));
    assert_eq!(
        variant("k2_horizon", &low),
        Some((TagVariant::Plain, "<ifm|think_faster>".into()))
    );
    assert!(reasoning_parser_with(
        "k2_horizon",
        &ParserSettings::from_request(None, Some("xhigh"))
    )
    .is_none());
    // minimax_m3: output starts in reasoning with `thinking_mode: "enabled"`.
    let enabled = ParserSettings::new(kw(serde_json::json!({"thinking_mode": "enabled"})));
    assert!(
        reasoning_parser_with("minimax_m3", &enabled)
            .unwrap()
            .spec()
            .starts_in_reasoning
    );
    assert!(
        !reasoning_parser_with("minimax_m3", &none)
            .unwrap()
            .spec()
            .starts_in_reasoning
    );
}

/// A request that turns thinking off gets what each family's vLLM constructor builds then:
/// there is no rule across families. The render's `reasoning_ended` reads the same spec.
#[test]
fn thinking_off_is_each_familys_own() {
    use llm_render_parsers::{reasoning_parser_with, ParserSettings, TagVariant};
    let kw = |v: serde_json::Value| ParserSettings::new(v.as_object().cloned().unwrap());
    let spec =
        |name: &str, s: &ParserSettings| reasoning_parser_with(name, s).unwrap().spec().clone();
    // `reasoning_effort: none` merges `enable_thinking: false` in, as vLLM does.
    let effort_none = ParserSettings::from_request(None, Some("none"));
    let off = kw(serde_json::json!({"enable_thinking": false}));
    for s in [&off, &effort_none] {
        for name in [
            "qwen3",
            "seed_oss",
            "mimo",
            "nemotron_v3",
            "glm47",
            "glm45",
            "ling3",
            "kimi_k2",
            "kimi_k3",
            "holo2",
            "deepseek_v3",
            "poolside_v1",
        ] {
            assert_eq!(spec(name, s).variant, TagVariant::Identity, "{name}");
        }
        assert_eq!(
            spec("granite_thinking_parser", s).variant,
            TagVariant::GraniteThinkingOff
        );
        // Output starts in content; a `<think>` anywhere opens reasoning (minicpmv drops it).
        for name in ["deepseek_v4", "deepseek_v41", "minicpmv"] {
            let t = spec(name, s);
            assert!(t.opens_anywhere && !t.starts_in_reasoning, "{name}");
            assert_eq!(t.reasoning_dropped, name == "minicpmv", "{name}");
            assert!(t.prompt_ends_reasoning(&[], |_| Some(7)), "{name}");
        }
        // Not read: they split as with thinking on.
        for name in ["step3p5", "deepseek_r1", "minimax_m2"] {
            assert!(spec(name, s).starts_in_reasoning, "{name}");
        }
    }
    // k2_horizon: `enable_thinking` is not read; vLLM refuses effort `none`.
    assert!(spec("k2_horizon", &off).starts_in_reasoning);
    assert!(reasoning_parser_with("k2_horizon", &effort_none).is_none());
    // deepseek_v4: `reasoning_effort: none` turns it off even with `enable_thinking: true`.
    let v4 = kw(serde_json::json!({"enable_thinking": true, "reasoning_effort": "none"}));
    assert!(spec("deepseek_v4", &v4).opens_anywhere);
    // glm47: `thinking: true` wins over `enable_thinking: false`.
    let either = kw(serde_json::json!({"thinking": true, "enable_thinking": false}));
    assert!(spec("glm47", &either).starts_in_reasoning);
    // hy_v3, hy_v4: effort `none` is not `no_think`: they think.
    assert!(spec("hy_v3", &effort_none).starts_in_reasoning);
    assert!(spec("hy_v4", &effort_none).starts_in_reasoning);
    let no_think = kw(serde_json::json!({"reasoning_effort": "no_think"}));
    assert_eq!(spec("hy_v4", &no_think).variant, TagVariant::Identity);
}

/// `hf` is one parser for reasoning and calls, built from the model's template: by name
/// alone (no template) there is none, and the fallible lookups say why, in vLLM's words.
#[test]
fn hf_needs_the_models_template() {
    // `beam` is the same parser under its own name.
    for name in [RESPONSE_TEMPLATE, BEAM] {
        assert!(tool_parser(name, Arc::default()).is_none());
        assert!(reasoning_parser(name).is_none());
        let gemma = common::settings_for(name);
        assert!(tool_parser_with(name, Arc::default(), &gemma)
            .unwrap()
            .is_some());
    }
    assert!(tool_parser(RESPONSE_TEMPLATE, Arc::default()).is_none());
    assert!(reasoning_parser(RESPONSE_TEMPLATE).is_none());
    let none = ParserSettings::default();
    let err = tool_parser_with(RESPONSE_TEMPLATE, Arc::default(), &none).unwrap_err();
    assert!(
        err.contains("requires `response_template` metadata"),
        "{err}"
    );
    let gemma = common::settings_for(RESPONSE_TEMPLATE);
    assert!(tool_parser_with(RESPONSE_TEMPLATE, Arc::default(), &gemma)
        .unwrap()
        .is_some());
    assert!(response_template_parser(&gemma, Arc::default(), true, true).is_ok());
    // Never picked by `auto`.
    assert!(tool_parser_for_model("google/gemma-4-31b-it").is_some_and(|e| e.name == "gemma4"));
}
