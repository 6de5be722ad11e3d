//! vLLM 0.33's `beam` constraint (`BeamParser._constrain_request`), replayed: for every case of
//! `fixtures/goldens/beam_tags.jsonl.gz` (made by `scripts/gen_beam_tag_goldens.py`, vLLM's own
//! classes in process: each template of the `hf` goldens and beam-style ones, × tool sets ×
//! `tool_choice` × `response_format` × `enable_thinking` × prompt prefixes), the structural tag
//! llm-render builds is byte-equal to vLLM's `json.dumps(tag)`, or the refusal names vLLM's
//! parameter with its message. A case llm-render cannot decide as vLLM does must be refused
//! (never answered differently) and be one of the cases `docs/fidelity.md` lists.

mod common;

use llm_render_parsers::{BeamRequest, BeamTemplate};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

fn goldens() -> Vec<Value> {
    common::gz_goldens("beam_tags.jsonl.gz")
}

/// `extract_structured_outputs`: the request's `structured_outputs`, or its `response_format`.
fn output(body: &Value) -> Option<Value> {
    if let Some(own) = body.get("structured_outputs") {
        return Some(own.clone());
    }
    let rf = body.get("response_format")?;
    match rf["type"].as_str()? {
        "json_object" => Some(json!({"json_object": true})),
        "json_schema" => Some(json!({"json": rf["json_schema"]["schema"]})),
        "structural_tag" => Some(json!({"structural_tag": llm_render_parsers::pyjson::dumps(rf)})),
        _ => None,
    }
}

/// What llm-render answers for one case: `(tag, error, param)`.
fn answer(t: &BeamTemplate, case: &Value) -> (Option<String>, Option<String>, Option<String>) {
    let body = &case["request"];
    let tools: Vec<Map<String, Value>> = body["tools"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t.as_object().cloned()).collect())
        .unwrap_or_default();
    let choice = body
        .get("tool_choice")
        .cloned()
        .unwrap_or_else(|| json!(if tools.is_empty() { "none" } else { "auto" }));
    let out = output(body);
    let thinking = &body["chat_template_kwargs"]["enable_thinking"];
    let parsers = case["parsers"].as_str().unwrap_or("both");
    let r = BeamRequest {
        tools: &tools,
        tool_choice: &choice,
        parallel_tool_calls: body["parallel_tool_calls"].as_bool(),
        output: out.as_ref(),
        requires_reasoning: thinking.as_bool().unwrap_or(true),
        include_reasoning: body["include_reasoning"].as_bool().unwrap_or(true),
        prompt: case["prefix"].as_str().unwrap_or(""),
        reasoning_parser: parsers != "tools",
        tool_parser: parsers != "reasoning",
    };
    match t.constrain(&r) {
        Ok(tag) => (tag.map(|t| t.structural_tag), None, None),
        Err(e) => (None, Some(e.message), Some(e.param.to_string())),
    }
}

#[test]
fn beam_tags_equal_vllms() {
    let lines = goldens();
    let mut templates: HashMap<String, BeamTemplate> = HashMap::new();
    for l in lines.iter().filter(|l| l.get("spec").is_some()) {
        let name = l["template"].as_str().unwrap_or_default().to_string();
        let t = match BeamTemplate::from_json(&l["spec"]) {
            Ok(t) => t,
            Err(e) => panic!("{name}: {e}"),
        };
        assert_eq!(
            t.reasoning_start_str()
                .map(Value::String)
                .unwrap_or(Value::Null),
            l["reasoning_start_str"],
            "{name}: reasoning_start_str"
        );
        templates.insert(name, t);
    }
    let (mut equal, mut refused, mut differ) = (0, Vec::new(), Vec::new());
    for case in lines.iter().filter(|l| l.get("id").is_some()) {
        let id = case["id"].as_str().unwrap_or_default();
        let Some(t) = templates.get(case["template"].as_str().unwrap_or_default()) else {
            panic!("{id}: no template");
        };
        let (tag, error, param) = answer(t, case);
        let want_tag = case["tag"].as_str().map(str::to_string);
        let want_error = case["error"].as_str().map(str::to_string);
        let want_param = case["param"].as_str().map(str::to_string);
        if (&tag, &error, &param) == (&want_tag, &want_error, &want_param) {
            equal += 1;
        } else if error
            .as_deref()
            .is_some_and(|e| e.starts_with("llm-render cannot tell"))
            // The refusals docs/fidelity.md lists: an EBNF grammar, a schema using `not`.
            && (id.contains("/so_grammar/") || id.contains("/xg_unknown/"))
        {
            refused.push(id.to_string());
        } else {
            differ.push(format!(
                "{id}\n  want {want_tag:?} {want_error:?} {want_param:?}\n  got  {tag:?} {error:?} {param:?}"
            ));
        }
    }
    eprintln!("beam goldens: {equal} equal, {} refused", refused.len());
    for r in &refused {
        eprintln!("  refused {r}");
    }
    assert!(
        differ.is_empty(),
        "{} differ:\n{}",
        differ.len(),
        differ[..differ.len().min(8)].join("\n")
    );
    assert!(equal > 1500, "{equal}");
}
