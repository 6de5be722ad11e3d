//! Every parser family against vLLM's own parser classes, run in process over the cases of
//! `scripts/parser_cases/<name>.json` by `scripts/gen_parser_family_goldens.py` (each case
//! names its source: a vLLM, SGLang or SMG test, or a broken output).
//!
//! A family vLLM runs only as one unified parser (`"kind": "parser"`, cohere_command) is
//! checked as the derender chains ours: its reasoning parser, then its tool parser.
//!
//! A reasoning case may carry the constructor kwargs vLLM's parser ran with
//! (`parser_kwargs`, a request's settings: deepseek_v3's `thinking`, hy_v3's
//! `reasoning_effort`); ours is built from the same ones.
//!
//! vLLM's `hf` parser (`"kind": "template"`) is built from the case's `response_template` and
//! prompt text (`prefix`), reading reasoning and/or calls as the case's two switches say; a
//! case with `"check": "reasoning_end"` is its reasoning parser's `is_reasoning_end` of the
//! prefix ([`ResponseTemplate::prompt_ends_reasoning`]). A reasoning family's case with that
//! check is the same of a rendered prompt, given as IDs ([`TagSpec::prompt_ends_reasoning`]).
//!
//! Each case is parsed one shot and in every chunking (all must agree). Where vLLM's stream
//! and one-shot results agree, ours must equal them. A case where they disagree, or where we
//! deliberately differ, carries `ours` (our result) and `why` in its case file, and ours
//! must equal `ours`.

mod common;
use common::{chunkings, golden_lines, reasoning_json, tools_json_with};
use llm_render_parsers::{
    reasoning_parser, response_template_parser, tool_parser, Parsed, ParserSettings,
    ReasoningParser, ResponseTemplate, Split, ToolParser, ToolSchemas,
};
use serde_json::{json, Value};
use std::sync::Arc;

/// A family vLLM runs only as one unified parser (cohere_command): ours is the reasoning
/// parser of its name, then its tool parser over the reasoning parser's content, chunk by
/// chunk, as the derender chains them: `{"reasoning", "content", "calls"}`.
fn unified_json(parser: &str, schemas: &Arc<ToolSchemas>, chunks: &[&str]) -> Value {
    let (Some(mut r), Some(mut t)) = (
        reasoning_parser(parser),
        tool_parser(parser, schemas.clone()),
    ) else {
        panic!("no reasoning and tool parser {parser}");
    };
    let mut reasoning = String::new();
    let mut out = Parsed::default();
    for c in chunks.iter().map(Some).chain([None]) {
        let mut split = Split::default();
        match c {
            Some(c) => r.push(c, &mut split),
            None => r.finish(&mut split),
        }
        reasoning.push_str(&split.reasoning);
        t.push(&split.content, &mut out);
    }
    t.finish(&mut out);
    let calls: Vec<Value> = out
        .tool_calls()
        .into_iter()
        .map(|c| json!({"name": c.name, "arguments": c.arguments}))
        .collect();
    json!({"reasoning": reasoning, "content": out.content, "calls": calls})
}

/// vLLM's `hf` parser over a case: `{"reasoning", "content", "calls"}`.
fn template_json(case: &Value, schemas: &Arc<ToolSchemas>, chunks: &[&str]) -> Value {
    let template = ResponseTemplate::from_json(&case["response_template"])
        .unwrap_or_else(|e| panic!("{}: {e}", case["id"]));
    let settings = ParserSettings {
        response_template: Some(Arc::new(template)),
        prompt: case["prefix"].as_str().unwrap_or_default().to_string(),
        ..Default::default()
    };
    let reasoning = case["reasoning_parser"] == true;
    let calls = case["tool_parser"] == true && case["request"]["tool_choice"] != "none";
    let mut p = response_template_parser(&settings, schemas.clone(), reasoning, calls)
        .unwrap_or_else(|e| panic!("{}: {e}", case["id"]));
    let mut thinking = String::new();
    let mut out = Parsed::default();
    for c in chunks {
        p.push(c, &mut thinking, &mut out);
    }
    p.finish(&mut thinking, &mut out);
    let calls: Vec<Value> = out
        .tool_calls()
        .into_iter()
        .map(|c| json!({"name": c.name, "arguments": c.arguments}))
        .collect();
    json!({"reasoning": thinking, "content": out.content, "calls": calls})
}

fn goldens() -> Vec<Value> {
    golden_lines("parser_families.jsonl")
}

#[test]
fn every_family_matches_vllm_or_lists_why() {
    let cases = goldens();
    assert!(cases.len() >= 70, "{} cases", cases.len());
    let templates = cases.iter().filter(|c| c["kind"] == "template").count();
    assert!(templates >= 50, "{templates} hf cases");
    let mut failures = Vec::new();
    for case in &cases {
        if case["check"] == "reasoning_end" && case["kind"] == "template" {
            // vLLM's hf reasoning parser's `is_reasoning_end` of a prompt.
            let id = &case["id"];
            let template = ResponseTemplate::from_json(&case["response_template"])
                .unwrap_or_else(|e| panic!("{id}: {e}"));
            let disabled = case["chat_template_kwargs"]["enable_thinking"] == false;
            let prefix = case["prefix"].as_str().unwrap_or_default();
            let ours = template.prompt_ends_reasoning(prefix, disabled);
            if case["ended"] != ours {
                failures.push(format!(
                    "template hf/{id}: prompt ends reasoning: ours {ours}, vLLM {}",
                    case["ended"]
                ));
            }
            continue;
        }
        if case["check"] == "reasoning_end" {
            // A reasoning family's `is_reasoning_end` of a rendered prompt (the render's
            // `reasoning_ended`), from the prompt's IDs and each added token's ID.
            let (parser, id) = (case["parser"].as_str().unwrap_or_default(), &case["id"]);
            let kwargs = case["parser_kwargs"]["chat_template_kwargs"].as_object();
            let settings = ParserSettings::new(kwargs.cloned().unwrap_or_default());
            let spec = llm_render_parsers::reasoning_parser_with(parser, &settings)
                .unwrap_or_else(|| panic!("{parser}/{id}: no parser"))
                .spec()
                .clone();
            let ids: Vec<u32> = serde_json::from_value(case["prompt_ids"].clone()).unwrap();
            let markers = &case["marker_ids"];
            let token = |t: &str| markers[t].as_u64().map(|n| n as u32);
            let ours = spec.prompt_ends_reasoning(&ids, token);
            if case["ended"] != ours {
                failures.push(format!(
                    "reasoning {parser}/{id}: prompt ends reasoning: ours {ours}, vLLM {}",
                    case["ended"]
                ));
            }
            continue;
        }
        let kind = case["kind"].as_str().unwrap_or_default();
        let parser = case["parser"].as_str().unwrap_or_default();
        let id = case["id"].as_str().unwrap_or_default();
        let text = case["text"].as_str().unwrap_or_default();
        // The constructor kwargs the case ran vLLM's parser with (its request's settings).
        let kwargs = case["parser_kwargs"]["chat_template_kwargs"].as_object();
        // And the model's own chat template, where the case set one (glm47's GLM-5.3 check).
        // The model's Hunyuan token suffixes, where its tokenizer has them.
        let suffix = |k: &str| case[k].as_str().map(Arc::from);
        let settings = ParserSettings::new(kwargs.cloned().unwrap_or_default())
            .with_chat_template(case["chat_template"].as_str().map(Arc::from))
            .with_token_suffixes(suffix("token_suffix"), suffix("vocab_token_suffix"));
        let run = |chunks: &[&str]| match kind {
            "tool" => {
                let list: Vec<Value> = case["tools"].as_array().cloned().unwrap_or_default();
                let schemas = Arc::new(ToolSchemas::from_tools(&list));
                tools_json_with(parser, &schemas, &settings, chunks)
            }
            "parser" => {
                let list: Vec<Value> = case["tools"].as_array().cloned().unwrap_or_default();
                unified_json(parser, &Arc::new(ToolSchemas::from_tools(&list)), chunks)
            }
            "template" => {
                let list: Vec<Value> = case["tools"].as_array().cloned().unwrap_or_default();
                template_json(case, &Arc::new(ToolSchemas::from_tools(&list)), chunks)
            }
            _ => reasoning_json(parser, &settings, chunks),
        };
        let ours = run(&[text]);
        for chunks in chunkings(text) {
            assert_eq!(
                run(&chunks),
                ours,
                "{kind} {parser}/{id}: chunked {chunks:?}"
            );
        }
        let expected = match case.get("ours") {
            Some(listed) => {
                assert!(
                    case["why"].as_str().is_some_and(|w| !w.is_empty()),
                    "{kind} {parser}/{id}: `ours` without `why`"
                );
                listed
            }
            None if case.get("error").is_some() => {
                failures.push(format!("{kind} {parser}/{id}: vLLM raised; list ours"));
                continue;
            }
            None if case["stream"] != case["nonstream"] => {
                failures.push(format!(
                    "{kind} {parser}/{id}: vLLM's paths differ (stream {}, nonstream {}); \
                     list ours {ours}",
                    case["stream"], case["nonstream"]
                ));
                continue;
            }
            None => &case["nonstream"],
        };
        if &ours != expected {
            failures.push(format!(
                "{kind} {parser}/{id}: ours {ours} != expected {expected}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// vLLM 0.33's `count_reasoning_tokens` (`ResponseTemplateParser`) of every `hf` case's
/// output, its tokens' texts (`token_texts`, each decoded alone as vLLM's counter does) fed
/// whole and a few at a time, the parser carried between feeds as a stream state carries it.
#[test]
fn hf_reasoning_token_counts_match_vllm() {
    let cases = goldens();
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in cases.iter().filter(|c| c["kind"] == "template") {
        let Some(expected) = case["reasoning_tokens"].as_u64() else {
            continue;
        };
        let id = &case["id"];
        let texts: Vec<String> = case["token_texts"]
            .as_array()
            .unwrap_or_else(|| panic!("{id}: token_texts"))
            .iter()
            .map(|t| t.as_str().unwrap_or_default().to_string())
            .collect();
        let template = ResponseTemplate::from_json(&case["response_template"])
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        let settings = ParserSettings {
            response_template: Some(Arc::new(template)),
            prompt: case["prefix"].as_str().unwrap_or_default().to_string(),
            ..Default::default()
        };
        let reasoning = case["reasoning_parser"] == true;
        let calls = case["tool_parser"] == true;
        for size in [texts.len().max(1), 1, 2, 3] {
            let mut p = response_template_parser(&settings, Arc::default(), reasoning, calls)
                .unwrap_or_else(|e| panic!("{id}: {e}"));
            let mut count = p.count_reasoning_tokens(&[]);
            for group in texts.chunks(size) {
                let carried = serde_json::to_string(&p).expect("state serializes");
                p = serde_json::from_str(&carried).expect("state reads back");
                count = p.count_reasoning_tokens(group);
            }
            if count as u64 != expected {
                failures.push(format!(
                    "template hf/{id}: {size} tokens a feed: {count} reasoning tokens, vLLM {expected}"
                ));
            }
        }
        checked += 1;
    }
    assert!(checked >= 90, "{checked} counts");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
