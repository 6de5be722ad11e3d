//! Prefix stability of the chat templates in `templates/` across turns, against goldens made
//! by transformers: `fixtures/goldens/prefix_stable/templates.jsonl`, written by
//! `scripts/check_prefix_stable_templates.py --write-goldens` (`apply_chat_template` +
//! `encode(add_special_tokens=False)` on vLLM's template inputs, with Qwen3's and DeepSeek-R1's
//! official templates and their `*_keep_reasoning.jinja` variants, several conversations
//! rendered turn by turn).
//!
//! Every render, with the template loaded into the fixture model in place of its own, gives
//! the golden's text and token IDs, through the native template where there is one and
//! through minijinja, or fails where transformers raised (both R1 templates once a tool call
//! is in the history: they concatenate its arguments, an object in vLLM's inputs, as a
//! string). For each turn N+1, whether its prompt starts with turn N's prompt + the reply as
//! generated + the end-of-turn marker (as text, and as turn N's IDs + encode(reply)) comes out
//! as transformers found it; the variants are prefix-stable wherever the golden names no
//! known failure, and their turn-1 prompts equal the official templates'.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::fixtures;
use llm_render::model::{LoadOptions, Model};
use llm_render::protocol::{parse_json, ChatRequest};
use llm_render::render::{render_chat_prompt, RenderOptions};
use llm_render::template::ChatTemplates;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const GOLDENS: &str = "goldens/prefix_stable/templates.jsonl";

const TEMPLATES: [&str; 4] = [
    "templates/qwen3.jinja",
    "templates/qwen3_keep_reasoning.jinja",
    "templates/deepseek_r1.jinja",
    "templates/deepseek_r1_keep_reasoning.jinja",
];

const R1_VARIANT: &str = "templates/deepseek_r1_keep_reasoning.jinja";

/// The variants' cases that are not prefix-stable (the script's `KNOWN_VARIANT_FAILURES` and
/// `ARGUMENT_ERRORS`): a new one in the goldens is a regression, not a fixture update.
const VARIANT_FAILURES: [(&str, &str); 3] = [
    (R1_VARIANT, "empty_reasoning"),
    (R1_VARIANT, "tool_call"),
    (R1_VARIANT, "tool_two_rounds"),
];

/// One render of the goldens: `text` and `token_ids`, or `error` where the template raised;
/// the last six fields only on turn N+1 renders (the two prefixes null after an error).
#[derive(Debug, serde::Deserialize)]
struct Row {
    template: String,
    model: String,
    case: String,
    messages: Vec<Value>,
    add_generation_prompt: bool,
    chat_template_kwargs: Map<String, Value>,
    tools: Option<Vec<Value>>,
    text: Option<String>,
    token_ids: Option<Vec<u32>>,
    error: Option<String>,
    prefix_of: Option<usize>,
    reply_text: Option<String>,
    reply_token_ids: Option<Vec<u32>>,
    text_prefix: Option<bool>,
    token_prefix: Option<bool>,
    known_failure: Option<String>,
}

fn rows() -> Vec<Row> {
    std::fs::read_to_string(fixtures().join(GOLDENS))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn request(row: &Row) -> ChatRequest {
    let mut body = json!({
        "messages": row.messages,
        "add_generation_prompt": row.add_generation_prompt,
        "chat_template_kwargs": row.chat_template_kwargs,
    });
    if let Some(tools) = &row.tools {
        body["tools"] = json!(tools);
    }
    parse_json(&serde_json::to_vec(&body).unwrap()).unwrap()
}

fn template(path: &str) -> ChatTemplates {
    let source =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
            .unwrap();
    ChatTemplates::compile(vec![("default".into(), source)], Some(50_000_000)).unwrap()
}

fn common_len<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Our (text, token IDs) for each row (`None` where the render failed), after checking both
/// engines against the golden.
fn render_all(
    rows: &[Row],
    models: &mut BTreeMap<String, Model>,
    failures: &mut Vec<String>,
) -> Vec<Option<(String, Vec<u32>)>> {
    let mut loaded: BTreeMap<&str, &str> = BTreeMap::new();
    let native = RenderOptions::default();
    let minijinja = RenderOptions {
        native_templates: false,
        ..RenderOptions::default()
    };
    let mut out = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let model = models.get_mut(&row.model).unwrap();
        if loaded.insert(&row.model, &row.template) != Some(row.template.as_str()) {
            model.templates = template(&row.template);
        }
        let req = request(row);
        let mut ours = None;
        for (engine, opts) in [("native", &native), ("minijinja", &minijinja)] {
            let at = format!("row {i} ({} {}, {engine})", row.template, row.case);
            let got = match (render_chat_prompt(model, &req, opts, None), &row.error) {
                (Ok(got), None) => got,
                (Err(_), Some(_)) => continue,
                (Ok(got), Some(want)) => {
                    failures.push(format!(
                        "{at}: transformers raised {want:?}, we rendered {:?}",
                        *got.prompt
                    ));
                    continue;
                }
                (Err(e), None) => {
                    failures.push(format!("{at}: we failed: {e}"));
                    continue;
                }
            };
            let text = row.text.as_deref().unwrap();
            let ids = row.token_ids.as_deref().unwrap();
            if *got.prompt != text {
                failures.push(format!(
                    "{at}: text differs at byte {}: ours {:?}, transformers {text:?}",
                    common_len(got.prompt.as_bytes(), text.as_bytes()),
                    *got.prompt,
                ));
            }
            if *got.token_ids != ids {
                failures.push(format!(
                    "{at}: token IDs differ at {}",
                    common_len(&got.token_ids, ids)
                ));
            }
            ours.get_or_insert(((*got.prompt).clone(), (*got.token_ids).clone()));
        }
        out.push(ours);
    }
    out
}

#[test]
fn renders_and_prefix_property_match_transformers() {
    let rows = rows();
    assert_eq!(rows.len(), 66, "renders in {GOLDENS}");
    for t in TEMPLATES {
        assert!(rows.iter().any(|r| r.template == t), "{t} has no goldens");
    }
    // Each fixture model loaded once; render_all swaps its template per row.
    let mut models: BTreeMap<String, Model> = BTreeMap::new();
    for row in &rows {
        models.entry(row.model.clone()).or_insert_with(|| {
            let dir = fixtures().join("models").join(&row.model);
            Model::load_dir(&row.model, &dir, &LoadOptions::default()).unwrap()
        });
    }
    let mut failures = Vec::new();
    let ours = render_all(&rows, &mut models, &mut failures);
    let mut variant_failures = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let Some(prev) = row.prefix_of else { continue };
        let at = format!("row {i} ({} {})", row.template, row.case);
        let p = &rows[prev];
        assert!(
            prev < i && p.template == row.template && p.case == row.case && p.error.is_none(),
            "{at}: prefix_of {prev}"
        );
        let reply = row.reply_text.as_deref().unwrap();
        let reply_ids = models[&row.model].encode(reply, false).unwrap();
        if Some(&reply_ids) != row.reply_token_ids.as_ref() {
            failures.push(format!("{at}: encode(reply_text) differs: {reply_ids:?}"));
        }
        if let (Some((text, ids)), Some((prev_text, prev_ids))) = (&ours[i], &ours[prev]) {
            let text_prefix = text.starts_with(&format!("{prev_text}{reply}"));
            let cached: Vec<u32> = prev_ids.iter().chain(&reply_ids).copied().collect();
            let token_prefix = ids.starts_with(&cached);
            if Some(text_prefix) != row.text_prefix || Some(token_prefix) != row.token_prefix {
                failures.push(format!(
                    "{at}: ours text_prefix {text_prefix} token_prefix {token_prefix}, \
                     transformers {:?} {:?}",
                    row.text_prefix, row.token_prefix
                ));
            }
        }
        let stable = row.text_prefix == Some(true) && row.token_prefix == Some(true);
        match &row.known_failure {
            None => assert!(stable, "{at}: not prefix-stable and no known failure"),
            Some(why) => assert!(!stable, "{at}: prefix-stable but known to fail ({why})"),
        }
        if row.template.contains("keep_reasoning") && !stable {
            variant_failures.push((row.template.as_str(), row.case.as_str()));
        }
    }
    variant_failures.dedup();
    assert_eq!(variant_failures, VARIANT_FAILURES);
    // The variants change history only: each case's first prompt is the official template's.
    for (official, variant) in [(0, 1), (2, 3)] {
        let first = |t: &str| -> Vec<(&str, Option<&str>)> {
            rows.iter()
                .filter(|r| r.template == t && r.prefix_of.is_none())
                .map(|r| (r.case.as_str(), r.text.as_deref()))
                .collect()
        };
        assert_eq!(first(TEMPLATES[official]), first(TEMPLATES[variant]));
    }
    assert!(
        failures.is_empty(),
        "{} disagreements with transformers:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
