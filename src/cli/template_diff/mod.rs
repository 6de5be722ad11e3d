//! `llm-render template-diff`: does turn 2 of a chat reuse turn 1's KV cache, and do two
//! templates render the same conversation to the same tokens?
//!
//! **Turn mode** (default) renders turn 1, builds what the decode pod holds afterwards
//! (turn-1 prompt + the reply's IDs, without the final stop token, whose KV is never
//! computed), renders turn 2 (turn 1 + the reply as an assistant message + the follow-up)
//! and reports the common prefix, the first divergence, and the cached/uncached tokens at
//! the engine's block size and at a router index's block size (`analysis.rs`).
//!
//! `--bridge` adds the same figures for turn 2 rendered with `continue_from` (turn 1's
//! prompt and reply IDs, `render::bridge`); `--variant PATH` runs each case again under
//! another template (a prefix-stable one from templates/) and reports it beside the
//! original.
//!
//! **Template mode** (`--against PATH`) renders the same conversation with two models or
//! templates and reports the first token where they differ.
//!
//! Both take one case from flags or many from `--cases FILE.jsonl`; `--json` prints JSON
//! (one line per case), otherwise a table per case and a summary.

mod analysis;
mod report;

pub use analysis::{
    common_prefix, engine_reuse, index_reuse, index_visible_tokens, Divergence, Reuse,
};

use super::ModelArgs;
use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::{parse_json, ChatRequest, ContinueFrom};
use crate::render::{render_chat_prompt, ChatRendered, RenderOptions};
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

#[derive(Debug, Args)]
pub struct TemplateDiffArgs {
    /// Turn 1's messages: a JSON array, or a chat request with `messages`.
    #[arg(long)]
    pub messages: Option<String>,
    /// The reply the model generated, as text.
    #[arg(long, conflicts_with = "reply_ids")]
    pub reply: Option<String>,
    /// The reply as sampled token IDs (a JSON array file); a final stop token is not held.
    #[arg(long)]
    pub reply_ids: Option<String>,
    /// The user's follow-up message.
    #[arg(long)]
    pub followup: Option<String>,
    /// Engine prefix-cache block size.
    #[arg(long, default_value_t = 16)]
    pub block_size: usize,
    /// Block size of the router's index (e.g. llm-d's 64); defaults to --block-size.
    #[arg(long)]
    pub index_block_size: Option<usize>,
    /// A prefix-based P/D decider skips the prefill pod when fewer tokens than this are uncached.
    #[arg(long)]
    pub non_cached_tokens: Option<usize>,
    /// Extra template variables, e.g. '{"enable_thinking": false}'.
    #[arg(long)]
    pub chat_template_kwargs: Option<String>,
    /// Tools (a JSON array file) passed to both turns.
    #[arg(long)]
    pub tools: Option<String>,
    /// Also render turn 2 bridged (`continue_from`: turn 1's prompt and reply IDs) and report
    /// its reuse.
    #[arg(long)]
    pub bridge: bool,
    /// Turn mode: also run each case under this template (a .jinja file on the same
    /// tokenizer, e.g. templates/qwen3_keep_reasoning.jinja, or a model folder) and report
    /// it beside the model's own.
    #[arg(long, conflicts_with = "against")]
    pub variant: Option<String>,
    /// Template mode: the model folder (or a .jinja file) to compare against.
    #[arg(long)]
    pub against: Option<String>,
    /// Many cases, one JSON object per line (the same fields as the flags).
    #[arg(long)]
    pub cases: Option<String>,
    /// Machine-readable output: one JSON object per case.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// One case: flags, or a line of `--cases`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Case {
    #[serde(default)]
    pub id: Option<String>,
    pub messages: Vec<Map<String, Value>>,
    #[serde(default)]
    pub reply: Option<String>,
    #[serde(default)]
    pub reply_ids: Option<Vec<u32>>,
    #[serde(default)]
    pub followup: Option<String>,
    #[serde(default)]
    pub chat_template_kwargs: Option<Map<String, Value>>,
    #[serde(default)]
    pub tools: Option<Vec<Value>>,
}

/// The turn-mode report (`--json` keys are the contract).
#[derive(Debug, Clone, Serialize)]
pub struct TurnReport {
    pub id: Option<String>,
    /// The model, or the `--variant` template, the case ran under.
    pub template: String,
    pub turn1_prompt_tokens: usize,
    pub decode_held_tokens: usize,
    pub turn2_prompt_tokens: usize,
    pub common_prefix_tokens: usize,
    pub first_divergence: Option<Divergence>,
    pub block_size: usize,
    pub cached_tokens: usize,
    pub uncached_tokens: usize,
    pub index_block_size: usize,
    pub index_cached_tokens: usize,
    pub index_uncached_tokens: usize,
    pub decider_skips_prefill: Option<bool>,
    /// With `--bridge`: turn 2 rendered with `continue_from`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bridged: Option<BridgedReport>,
}

/// Turn 2 rendered on turn 1's tokens (`--bridge`), against what the decode pod holds.
#[derive(Debug, Clone, Serialize)]
pub struct BridgedReport {
    /// Whether the render bridged (`continuation.applied`), and why not.
    pub applied: bool,
    pub reason: Option<String>,
    pub prompt_tokens: usize,
    pub common_prefix_tokens: usize,
    pub cached_tokens: usize,
    pub uncached_tokens: usize,
    pub index_cached_tokens: usize,
    pub index_uncached_tokens: usize,
}

/// The template-mode report.
#[derive(Debug, Clone, Serialize)]
pub struct CompareReport {
    pub id: Option<String>,
    pub left_tokens: usize,
    pub right_tokens: usize,
    pub common_prefix_tokens: usize,
    pub identical: bool,
    pub first_divergence: Option<Divergence>,
}

fn bad(param: &str, msg: impl Into<String>) -> RequestError {
    RequestError::invalid(param, msg)
}

fn chat_request(case: &Case, messages: &[Map<String, Value>]) -> Result<ChatRequest, RequestError> {
    let body = json!({
        "messages": messages,
        "tools": case.tools,
        "chat_template_kwargs": case.chat_template_kwargs,
    });
    parse_json(body.to_string().as_bytes())
}

fn render(
    model: &Model,
    case: &Case,
    messages: &[Map<String, Value>],
    opts: &RenderOptions,
) -> Result<ChatRendered, RequestError> {
    render_chat_prompt(model, &chat_request(case, messages)?, opts, None)
}

fn decode(model: &Model, ids: &[u32]) -> String {
    model.decode(ids, false).unwrap_or_default()
}

/// Decoded context around `pos`: up to 6 tokens before and after.
fn context(model: &Model, ids: &[u32], pos: usize) -> String {
    let lo = pos.saturating_sub(6);
    let hi = (pos + 6).min(ids.len());
    format!(
        "{}⟨|⟩{}",
        decode(model, &ids[lo..pos.min(ids.len())]),
        decode(model, &ids[pos.min(ids.len())..hi])
    )
}

/// The message that token `pos` of a rendered prompt falls in. Each message owns the text
/// from the end of the previous message's content to the end of its own (so a header belongs
/// to the message it introduces); contents are found in order in the prompt text. Templates
/// that rewrite a message (strip it, drop reasoning) still match on its remaining text.
fn message_at(
    model: &Model,
    rendered: &ChatRendered,
    messages: &[Map<String, Value>],
    pos: usize,
) -> Option<usize> {
    let enc = model
        .tokenizer
        .encode(rendered.prompt.as_str(), false)
        .ok()?;
    let offset = enc.get_offsets().get(pos)?.0;
    let mut cursor = 0;
    for (k, m) in messages.iter().enumerate() {
        let text = match m.get("content") {
            Some(Value::String(s)) => s.trim().to_string(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
                .trim()
                .to_string(),
            _ => String::new(),
        };
        if text.is_empty() {
            continue;
        }
        if let Some(found) = rendered.prompt[cursor..].find(&text) {
            cursor += found + text.len();
            if offset < cursor {
                return Some(k);
            }
        }
    }
    None
}

fn divergence(
    model: &Model,
    left: &[u32],
    right: &[u32],
    pos: usize,
    right_model: &Model,
) -> Divergence {
    Divergence {
        position: pos,
        left_token: left.get(pos).copied(),
        right_token: right.get(pos).copied(),
        left_text: context(model, left, pos),
        right_text: context(right_model, right, pos),
        message_index: None,
        message_role: None,
    }
}

/// Turn mode for one case.
pub fn turn(
    model: &Model,
    case: &Case,
    args: &TemplateDiffArgs,
    opts: &RenderOptions,
) -> Result<TurnReport, RequestError> {
    let block = args.block_size;
    let index_block = args.index_block_size.unwrap_or(block);
    if block == 0 || index_block == 0 {
        return Err(bad("block_size", "block sizes must be at least 1"));
    }
    let followup = case
        .followup
        .as_deref()
        .ok_or_else(|| bad("followup", "turn mode needs --followup"))?;
    let turn1 = render(model, case, &case.messages, opts)?.token_ids;
    let (reply_text, reply_ids) = match (&case.reply, &case.reply_ids) {
        (Some(text), None) => (text.clone(), model.encode(text, false)?),
        (None, Some(ids)) => {
            // An ID past the tokenizer's vocabulary (a padded embedding row the engine
            // sampled) is held in the cache like any other and decodes to nothing, as in
            // vLLM's detokenizer and the derender routes.
            let mut ids = ids.clone();
            if ids.last().is_some_and(|t| model.eos_token_ids.contains(t)) {
                ids.pop();
            }
            (model.decode(&ids, true).unwrap_or_default(), ids)
        }
        _ => {
            return Err(bad(
                "reply",
                "turn mode needs exactly one of --reply and --reply-ids",
            ))
        }
    };
    let mut held = turn1.to_vec();
    held.extend_from_slice(&reply_ids);

    let mut messages2 = case.messages.clone();
    for (role, content) in [("assistant", reply_text.as_str()), ("user", followup)] {
        let mut m = Map::new();
        m.insert("role".into(), role.into());
        m.insert("content".into(), content.into());
        messages2.push(m);
    }
    let rendered2 = render(model, case, &messages2, opts)?;
    let turn2 = &rendered2.token_ids;
    let visible = if index_block == block {
        held.len()
    } else {
        index_visible_tokens(turn1.len(), held.len(), block, index_block)
    };
    // A prompt's common prefix with what the pod holds, and what the engine and the router's
    // index reuse of it.
    let reuse = |prompt: &[u32]| {
        let lcp = common_prefix(&held, prompt);
        let engine = engine_reuse(lcp, prompt.len(), block);
        let index = if index_block == block {
            engine
        } else {
            index_reuse(lcp, prompt.len(), visible, index_block)
        };
        (lcp, engine, index)
    };
    let (lcp, engine, index) = reuse(turn2);
    let first_divergence = (lcp < turn2.len()).then(|| {
        let mut d = divergence(model, &held, turn2, lcp, model);
        d.message_index = message_at(model, &rendered2, &messages2, lcp);
        d.message_role = d.message_index.and_then(|i| {
            messages2[i]
                .get("role")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
        d
    });
    let bridged = if args.bridge {
        let sampled = case.reply_ids.clone().unwrap_or_else(|| reply_ids.clone());
        let mut req = chat_request(case, &messages2)?;
        req.continue_from = Some(ContinueFrom {
            prompt_token_ids: turn1.to_vec(),
            output_token_ids: sampled,
        });
        let r = render_chat_prompt(model, &req, opts, None)?;
        let ids = &r.token_ids;
        let (lcp, engine, index) = reuse(ids);
        let c = r.continuation.as_ref();
        Some(BridgedReport {
            applied: c.is_some_and(|c| c.applied),
            reason: c.and_then(|c| c.reason.clone()),
            prompt_tokens: ids.len(),
            common_prefix_tokens: lcp,
            cached_tokens: engine.cached_tokens,
            uncached_tokens: engine.uncached_tokens,
            index_cached_tokens: index.cached_tokens,
            index_uncached_tokens: index.uncached_tokens,
        })
    } else {
        None
    };
    Ok(TurnReport {
        id: case.id.clone(),
        template: model.name.clone(),
        turn1_prompt_tokens: turn1.len(),
        decode_held_tokens: held.len(),
        turn2_prompt_tokens: turn2.len(),
        common_prefix_tokens: lcp,
        first_divergence,
        block_size: block,
        cached_tokens: engine.cached_tokens,
        uncached_tokens: engine.uncached_tokens,
        index_block_size: index_block,
        index_cached_tokens: index.cached_tokens,
        index_uncached_tokens: index.uncached_tokens,
        decider_skips_prefill: args.non_cached_tokens.map(|n| index.uncached_tokens < n),
        bridged,
    })
}

/// Template mode for one case: the conversation (with its generation prompt) under both.
pub fn compare(
    left: &Model,
    right: &Model,
    case: &Case,
    opts: &RenderOptions,
) -> Result<CompareReport, RequestError> {
    let a = render(left, case, &case.messages, opts)?.token_ids;
    let rendered_b = render(right, case, &case.messages, opts)?;
    let b = &rendered_b.token_ids;
    let lcp = common_prefix(&a, b);
    let identical = a == *b;
    let first_divergence = (!identical).then(|| {
        let mut d = divergence(left, &a, b, lcp, right);
        d.message_index = message_at(right, &rendered_b, &case.messages, lcp);
        d.message_role = d.message_index.and_then(|i| {
            case.messages[i]
                .get("role")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
        d
    });
    Ok(CompareReport {
        id: case.id.clone(),
        left_tokens: a.len(),
        right_tokens: b.len(),
        common_prefix_tokens: lcp,
        identical,
        first_divergence,
    })
}

fn read_json<T: serde::de::DeserializeOwned>(path: &str, what: &str) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{what} {path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{what} {path}: {e}"))
}

/// The cases to run: `--cases`, or one built from the flags.
fn cases(args: &TemplateDiffArgs) -> anyhow::Result<Vec<Case>> {
    if let Some(path) = &args.cases {
        let text = std::fs::read_to_string(path)?;
        return text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                let mut c: Case = serde_json::from_str(l)
                    .map_err(|e| anyhow::anyhow!("{path}:{}: {e}", i + 1))?;
                c.id.get_or_insert_with(|| format!("line {}", i + 1));
                Ok(c)
            })
            .collect();
    }
    let path = args
        .messages
        .as_deref()
        .ok_or_else(|| anyhow::anyhow!("pass --messages FILE or --cases FILE"))?;
    let messages = match read_json::<Value>(path, "--messages")? {
        Value::Object(mut o) => o.remove("messages").unwrap_or(Value::Null),
        v => v,
    };
    let messages: Vec<Map<String, Value>> = serde_json::from_value(messages)
        .map_err(|e| anyhow::anyhow!("--messages: expected a list of messages: {e}"))?;
    let reply_ids = match &args.reply_ids {
        Some(p) => Some(read_json(p, "--reply-ids")?),
        None => None,
    };
    let tools = match &args.tools {
        Some(p) => Some(read_json(p, "--tools")?),
        None => None,
    };
    let chat_template_kwargs = match &args.chat_template_kwargs {
        Some(s) => Some(
            serde_json::from_str(s).map_err(|e| anyhow::anyhow!("--chat-template-kwargs: {e}"))?,
        ),
        None => None,
    };
    Ok(vec![Case {
        id: None,
        messages,
        reply: args.reply.clone(),
        reply_ids,
        followup: args.followup.clone(),
        chat_template_kwargs,
        tools,
    }])
}

/// The model to compare against: a snapshot folder, or a `.jinja` file on the same tokenizer.
fn against_model(base: &ModelArgs, path: &str) -> anyhow::Result<Model> {
    let opts = base.load_options();
    if path.ends_with(".jinja") {
        let mut model = match base.models.first() {
            Some(spec) => {
                let (name, dir) = crate::model::parse_model_spec(spec)?;
                Model::load_dir(&name, &dir, &opts)?
            }
            None => Model::embedded(&opts)?,
        };
        let source = std::fs::read_to_string(path)?;
        model.replace_chat_template(source, opts.template_fuel)?;
        model.name = path.to_string();
        return Ok(model);
    }
    Ok(Model::load_dir(path, std::path::Path::new(path), &opts)?)
}

/// The flags a run needs, checked before any model loads (a model takes seconds to load).
fn check_flags(args: &TemplateDiffArgs) -> anyhow::Result<()> {
    if args.block_size == 0 || args.index_block_size == Some(0) {
        anyhow::bail!("--block-size and --index-block-size must be at least 1");
    }
    // Turn mode from flags (`--cases` lines carry their own fields, checked per case).
    if args.cases.is_none() && args.against.is_none() {
        if args.reply.is_none() && args.reply_ids.is_none() {
            anyhow::bail!(
                "turn mode needs the model's reply: pass --reply TEXT or --reply-ids FILE \
                 (or --against MODEL to compare two templates)"
            );
        }
        if args.followup.is_none() {
            anyhow::bail!("turn mode needs the user's next message: pass --followup TEXT");
        }
    }
    Ok(())
}

pub fn run(args: TemplateDiffArgs) -> anyhow::Result<i32> {
    check_flags(&args)?;
    let cases = cases(&args)?;
    let registry = args.model.load()?;
    let model = registry.get(None).map_err(|e| anyhow::anyhow!("{e}"))?;
    let opts = args.model.render_options();
    let against = args
        .against
        .as_deref()
        .map(|p| against_model(&args.model, p))
        .transpose()?;
    let variant = args
        .variant
        .as_deref()
        .map(|p| against_model(&args.model, p))
        .transpose()?;
    let progress = indicatif::ProgressBar::new(cases.len() as u64);
    if cases.len() < 2 {
        progress.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let mut rows = Vec::with_capacity(cases.len());
    let mut failed = 0;
    for case in &cases {
        let mut results = Vec::with_capacity(2);
        match &against {
            Some(right) => {
                results.push(compare(&model, right, case, &opts).map(report::Row::Compare))
            }
            None => {
                for m in std::iter::once(model.as_ref()).chain(variant.as_ref()) {
                    results.push(turn(m, case, &args, &opts).map(report::Row::Turn));
                }
            }
        }
        for row in results {
            let row = row.unwrap_or_else(|e| {
                failed += 1;
                report::Row::Error {
                    id: case.id.clone(),
                    message: e.to_string(),
                }
            });
            if args.json {
                progress.suspend(|| println!("{}", row.to_json()));
            }
            rows.push(row);
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    if !args.json {
        print!(
            "{}",
            report::human(
                &rows,
                &model.name,
                against.as_ref().map(|m| m.name.as_str()),
                variant.as_ref().map(|m| m.name.as_str()),
            )
        );
    }
    Ok(if failed > 0 { 1 } else { 0 })
}
