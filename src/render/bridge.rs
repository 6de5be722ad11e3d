//! Bridged multi-turn render (`continue_from`, an extension): turn N's prompt starts with
//! the exact tokens of turn N−1, its prompt and the IDs the engine sampled, instead of the
//! template's re-rendering of them.
//!
//! Why: the decode pod that served turn N−1 holds the KV of its prompt and of every reply
//! token but the last. A template that rewrites history (Qwen3 drops the reply's
//! `<think>` block once a new user turn follows) or a reply whose IDs do not survive a
//! text round trip makes the plain turn-N prompt diverge inside the reply, so no prefix
//! cache reuses it; an RL trainer needs the sampled IDs for the same reason.
//!
//! How, with the model's end-of-turn markers (its EOS IDs, which chat templates write after
//! each turn they close) as the only landmarks:
//! 1. `k` is the last assistant message: the reply of the previous turn.
//! 2. The previous prompt must be this conversation up to `k`: equal to the template's
//!    rendering of `messages[..k]` with the generation prompt, or differing only inside
//!    earlier assistant replies (a previous prompt that was itself bridged), each of which
//!    still spells its message. The output must spell `messages[k]` (its content, reasoning
//!    and tool-call names appear in the decoded IDs).
//! 3. The template's own rendering of the whole conversation closes `messages[k]` with the
//!    marker after the `m`-th, `m` being the number of markers in the rendering of
//!    `messages[..k]` (checked: rendering `messages[..=k]` writes exactly `m + 1`). What
//!    follows that marker is the new turn, tokenized on its own since a marker is an added
//!    token that splits tokenization.
//! 4. Prompt = previous prompt + output (its final stop token replaced by, or followed by,
//!    the template's marker) + the template's tokens after the marker.
//!
//! A request whose previous tokens do not fit gets the plain render with `applied: false`
//! and the reason; never a silently wrong prompt.

use super::{render_chat_prompt, ChatRendered, RenderOptions};
use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::{ChatRequest, Continuation, ContinuationDivergence, ContinueFrom, Message};
use std::sync::Arc;

/// Replaces `rendered` (the plain render of `req`) with the bridged prompt when `req` has
/// `continue_from` and it fits the conversation, and records what was done.
pub fn apply(
    model: &Model,
    req: &ChatRequest,
    opts: &RenderOptions,
    rendered: &mut ChatRendered,
) -> Result<(), RequestError> {
    let Some(from) = &req.continue_from else {
        return Ok(());
    };
    check_request(model, req, from)?;
    let plain_len = rendered.token_ids.len();
    let continuation = match bridge(model, req, opts, rendered, from) {
        Ok(b) => {
            let reasoning = req.messages[b.reply]
                .get("reasoning_content")
                .or_else(|| req.messages[b.reply].get("reasoning"))
                .and_then(|f| f.as_str())
                .map(str::trim)
                .filter(|r| !r.is_empty());
            let template_divergence =
                divergence(model, opts, &b.ids, &rendered.token_ids, from, reasoning);
            rendered.token_ids = Arc::new(b.ids);
            Continuation {
                applied: true,
                reason: None,
                bridged_tokens: b.bridged_tokens,
                end_of_turn_added: b.end_of_turn_added,
                plain_prompt_tokens: plain_len,
                template_divergence,
            }
        }
        Err(Refused::Reason(reason)) => Continuation {
            applied: false,
            reason: Some(reason),
            bridged_tokens: 0,
            end_of_turn_added: false,
            plain_prompt_tokens: plain_len,
            template_divergence: None,
        },
        Err(Refused::Request(e)) => return Err(e),
    };
    rendered.continuation = Some(continuation);
    Ok(())
}

/// The request's own errors (a 400): empty or unknown IDs, and options that contradict a
/// bridged prompt.
fn check_request(
    model: &Model,
    req: &ChatRequest,
    from: &ContinueFrom,
) -> Result<(), RequestError> {
    // Offsets index the template's text, which a bridged prompt is not; truncation would
    // cut the previous turn the prompt is bridged to keep.
    for (set, field) in [
        (req.return_token_offsets, "return_token_offsets"),
        (
            req.return_assistant_tokens_mask,
            "return_assistant_tokens_mask",
        ),
        (
            req.truncate_prompt_tokens.is_some(),
            "truncate_prompt_tokens",
        ),
    ] {
        if set {
            return Err(RequestError::invalid(
                field,
                format!("{field} cannot be used with continue_from"),
            ));
        }
    }
    if from.prompt_token_ids.is_empty() {
        return Err(RequestError::invalid(
            "continue_from.prompt_token_ids",
            "continue_from.prompt_token_ids must hold the previous turn's prompt",
        ));
    }
    for (field, ids) in [
        ("prompt_token_ids", &from.prompt_token_ids),
        ("output_token_ids", &from.output_token_ids),
    ] {
        if let Some((i, id)) = ids
            .iter()
            .enumerate()
            .find(|(_, id)| !model.has_token(**id))
        {
            return Err(RequestError::invalid(
                format!("continue_from.{field}[{i}]"),
                format!("token ID {id} is out of the vocabulary"),
            ));
        }
    }
    Ok(())
}

/// Why a previous turn is not bridged: the reason `continuation` gives (the prompt is then
/// the template's own), or an error that ends the request (it was cancelled).
enum Refused {
    Reason(String),
    Request(RequestError),
}

impl From<String> for Refused {
    fn from(reason: String) -> Self {
        Refused::Reason(reason)
    }
}

/// A bridged prompt: its IDs, whether an end-of-turn marker was written, how many tokens
/// came from the previous turn, and the index of the reply it continues.
struct Bridged {
    ids: Vec<u32>,
    end_of_turn_added: bool,
    bridged_tokens: usize,
    reply: usize,
}

fn bridge(
    model: &Model,
    req: &ChatRequest,
    opts: &RenderOptions,
    plain: &ChatRendered,
    from: &ContinueFrom,
) -> Result<Bridged, Refused> {
    let refuse = |reason: &str| Err(Refused::Reason(reason.to_string()));
    if model.harmony.is_some() {
        return refuse("bridging is not supported for Harmony (gpt-oss) prompts");
    }
    if plain.features.is_some() {
        return refuse("bridging is not supported for prompts with images");
    }
    if req.continue_final_message {
        return refuse(
            "continue_final_message continues the last message itself; nothing to bridge",
        );
    }
    let markers = &model.eos_token_ids;
    if markers.is_empty() {
        return refuse("the model has no EOS token to find the end of a turn by");
    }
    let Some(k) = req
        .messages
        .iter()
        .rposition(|m| role(m) == Some("assistant"))
    else {
        return refuse("the conversation has no assistant message for continue_from to stand for");
    };
    if k == 0 {
        return refuse(
            "the assistant message is the first message: no previous prompt precedes it",
        );
    }
    // The template's rendering of the previous turn's prompt, of the history before the
    // reply, and of the reply closed.
    let before = render_part(model, req, opts, k, true)?.token_ids;
    let history = render_part(model, req, opts, k, false)?.prompt;
    let closed = render_part(model, req, opts, k + 1, false)?.token_ids;
    // A template that moves or rewrites earlier messages once later ones follow (DeepSeek's
    // gathers every system message at the top) renders the new turn over another history:
    // its tail after the reply cannot follow the previous prompt.
    if !plain.prompt.starts_with(history.as_str()) {
        return Err(format!(
            "the template renders messages[..{k}] differently once the messages after the \
             reply follow, so the new turn cannot continue the previous prompt"
        )
        .into());
    }
    let m = count_markers(&before, markers);
    if count_markers(&closed, markers) != m + 1 {
        return Err(format!(
            "the template does not close messages[{k}] with one end-of-turn marker, so the \
             turn after it cannot be found"
        )
        .into());
    }
    check_history(model, req, opts, k, &from.prompt_token_ids, &before)?;
    if !spells(model, &from.output_token_ids, &req.messages[k]) {
        return Err(format!(
            "continue_from.output_token_ids do not spell messages[{k}] (its content, \
             reasoning or tool calls are not in the decoded output)"
        )
        .into());
    }
    let Some(end) = nth_marker(&plain.token_ids, markers, m) else {
        return Err(
            format!("the template writes no end-of-turn marker after messages[{k}]").into(),
        );
    };
    let marker = plain.token_ids[end];
    let mut output = from.output_token_ids.clone();
    let end_of_turn_added = match output.last() {
        Some(&last) if last == marker => false,
        // Another stop token (Qwen3's <|endoftext|>): its KV was never computed, so the
        // template's marker costs nothing in its place.
        Some(last) if markers.contains(last) => {
            output.pop();
            output.push(marker);
            true
        }
        _ => {
            output.push(marker);
            true
        }
    };
    let mut ids = Vec::with_capacity(from.prompt_token_ids.len() + output.len() + 64);
    ids.extend_from_slice(&from.prompt_token_ids);
    ids.extend_from_slice(&output);
    let bridged_tokens = ids.len();
    ids.extend_from_slice(&plain.token_ids[end + 1..]);
    if let Some(max) = model.max_model_len.filter(|max| ids.len() as u64 >= *max) {
        return Err(format!(
            "the bridged prompt ({} tokens) does not fit max_model_len ({max})",
            ids.len()
        )
        .into());
    }
    Ok(Bridged {
        ids,
        end_of_turn_added,
        bridged_tokens,
        reply: k,
    })
}

fn role(m: &Message) -> Option<&str> {
    m.get("role").and_then(|r| r.as_str())
}

/// The template's rendering of `messages[..upto]` of `req`, with or without the generation
/// prompt (request kwargs that would override it are left out). A template error is a
/// reason not to bridge; a cancelled request ends the render.
fn render_part(
    model: &Model,
    req: &ChatRequest,
    opts: &RenderOptions,
    upto: usize,
    generation_prompt: bool,
) -> Result<ChatRendered, Refused> {
    let mut part = req.clone();
    part.messages.truncate(upto);
    part.add_generation_prompt = generation_prompt;
    part.continue_final_message = false;
    part.continue_from = None;
    if let Some(kwargs) = part.chat_template_kwargs.as_mut() {
        kwargs.remove("add_generation_prompt");
        kwargs.remove("continue_final_message");
    }
    render_chat_prompt(model, &part, opts, None).map_err(|e| match e {
        RequestError::Cancelled => Refused::Request(e),
        e => Refused::Reason(format!(
            "the template cannot render messages[..{upto}]: {e}"
        )),
    })
}

/// Length of the longest common prefix of two token sequences.
pub fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn count_markers(ids: &[u32], markers: &[u32]) -> usize {
    ids.iter().filter(|t| markers.contains(t)).count()
}

/// The index of the marker after the first `n` markers.
fn nth_marker(ids: &[u32], markers: &[u32], n: usize) -> Option<usize> {
    ids.iter()
        .enumerate()
        .filter(|(_, t)| markers.contains(t))
        .nth(n)
        .map(|(i, _)| i)
}

/// Turns: runs of IDs each ending with a marker, then what follows the last marker.
fn turns<'a>(ids: &'a [u32], markers: &[u32]) -> Vec<&'a [u32]> {
    let mut out: Vec<&[u32]> = ids.split_inclusive(|t| markers.contains(t)).collect();
    if ids.last().is_none_or(|t| markers.contains(t)) {
        out.push(&[]);
    }
    out
}

/// Whether `prompt` (the previous turn's prompt) is this conversation up to `messages[k]`:
/// the template's rendering `before`, or a bridged one that differs from it only inside
/// assistant replies, each of which starts as the template prompted it (the turn's
/// messages and the reply's header, as rendered with the generation prompt) and still
/// spells its message. The outer error is a cancelled request.
fn check_history(
    model: &Model,
    req: &ChatRequest,
    opts: &RenderOptions,
    k: usize,
    prompt: &[u32],
    before: &[u32],
) -> Result<(), Refused> {
    if prompt == before {
        return Ok(());
    }
    let markers = &model.eos_token_ids;
    let ours = turns(prompt, markers);
    let template = turns(before, markers);
    if ours.len() != template.len() {
        return Err(format!(
            "continue_from.prompt_token_ids has {} turns where messages[..{k}] render to {}: \
             it is not this conversation's previous prompt",
            ours.len() - 1,
            template.len() - 1
        )
        .into());
    }
    // The turn each earlier assistant reply ends, found only if needed.
    let mut replies: Option<Vec<Reply>> = None;
    let mut at = 0;
    for (i, (a, b)) in ours.iter().zip(&template).enumerate() {
        if a != b {
            let first = at + common_prefix(a, b);
            let position = format!(
                "continue_from.prompt_token_ids differs from the template's rendering of \
                 messages[..{k}] at token {first}"
            );
            if i + 1 == ours.len() {
                return Err(format!("{position}, in the turn being prompted").into());
            }
            if replies.is_none() {
                replies = Some(reply_turns(model, req, opts, k)?);
            }
            match replies.iter().flatten().find(|r| r.turn == i) {
                Some(r)
                    if a.starts_with(&r.header)
                        && spells(model, &a[r.header.len()..], &req.messages[r.message]) => {}
                Some(r) => {
                    return Err(format!(
                        "{position}: that turn is not messages[{}] as prompted and replied",
                        r.message
                    )
                    .into())
                }
                None => return Err(format!("{position}, outside any assistant reply").into()),
            }
        }
        at += a.len();
    }
    Ok(())
}

/// An assistant message before the reply being bridged: the turn its closing marker ends,
/// and how that turn starts (the template's tokens after the last marker of its prompt).
struct Reply {
    turn: usize,
    message: usize,
    header: Vec<u32>,
}

/// Every assistant message before `k`, as [`Reply`]s.
fn reply_turns(
    model: &Model,
    req: &ChatRequest,
    opts: &RenderOptions,
    k: usize,
) -> Result<Vec<Reply>, Refused> {
    let markers = &model.eos_token_ids;
    let mut out = Vec::new();
    for j in 1..k {
        if role(&req.messages[j]) != Some("assistant") {
            continue;
        }
        let ids = render_part(model, req, opts, j, true)?.token_ids;
        let header = turns(&ids, markers)
            .last()
            .map_or(Vec::new(), |t| t.to_vec());
        out.push(Reply {
            turn: count_markers(&ids, markers),
            message: j,
            header,
        });
    }
    Ok(out)
}

/// Whether `ids` decode to a text holding `message`'s content, reasoning and tool-call
/// names (a reply the template may wrap, reformat or strip, but whose words are there).
fn spells(model: &Model, ids: &[u32], message: &Message) -> bool {
    let Ok(text) = model.decode(ids, true) else {
        return false;
    };
    let text_of = |key: &str| -> Vec<String> {
        match message.get(key) {
            Some(f) => match f.as_str() {
                Some(s) => vec![s.trim().to_string()],
                None => f
                    .as_json()
                    .and_then(|v| v.as_array())
                    .map(|parts| {
                        parts
                            .iter()
                            .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
                            .map(|t| t.trim().to_string())
                            .collect()
                    })
                    .unwrap_or_default(),
            },
            None => Vec::new(),
        }
    };
    let mut needles = text_of("content");
    needles.extend(text_of("reasoning_content"));
    needles.extend(text_of("reasoning"));
    if let Some(calls) = message.get("tool_calls").and_then(|f| f.as_json()) {
        for call in calls.as_array().into_iter().flatten() {
            let function = call.get("function").unwrap_or(call);
            if let Some(name) = function.get("name").and_then(|n| n.as_str()) {
                needles.push(name.to_string());
            }
        }
    }
    needles
        .iter()
        .filter(|n| !n.is_empty())
        .all(|n| text.contains(n.as_str()))
}

/// Where the template's own rendering `plain` departs from the bridged prompt, and why
/// (`reasoning`: the reply message's, which a template that drops it leaves out).
fn divergence(
    model: &Model,
    opts: &RenderOptions,
    bridged: &[u32],
    plain: &[u32],
    from: &ContinueFrom,
    reasoning: Option<&str>,
) -> Option<ContinuationDivergence> {
    if bridged == plain {
        return None;
    }
    let position = common_prefix(bridged, plain);
    // The previous prompt's last turn is the reply's header; before it, earlier turns.
    let markers = &model.eos_token_ids;
    let header = from
        .prompt_token_ids
        .iter()
        .rposition(|t| markers.contains(t))
        .map_or(0, |i| i + 1);
    if position < header {
        return Some(ContinuationDivergence {
            position,
            cause: "history",
        });
    }
    // The reply as bridged (through its marker) and as the template renders it.
    let ours = reply_text(model, &bridged[position..], markers);
    let theirs = reply_text(model, &plain[position..], markers);
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    // A diagnostic: the family's tags in its default mode.
    let settings = llm_render_parsers::ParserSettings::default();
    let end_tag = super::parse_context::reasoning_spec(opts, model, &settings)
        .map(|s| s.end)
        .unwrap_or_else(|| "</think>".to_string());
    let cause = if ours == theirs {
        "retokenized"
    } else if squeeze(&ours) == squeeze(&theirs) {
        "whitespace"
    } else if (ours.contains(&end_tag) && !theirs.contains(&end_tag))
        || reasoning.is_some_and(|r| ours.contains(r) && !theirs.contains(r))
    {
        "reasoning_dropped"
    } else {
        "rewritten"
    };
    Some(ContinuationDivergence { position, cause })
}

/// The text of `ids` up to and including the first end-of-turn marker.
fn reply_text(model: &Model, ids: &[u32], markers: &[u32]) -> String {
    let end = ids
        .iter()
        .position(|t| markers.contains(t))
        .map_or(ids.len(), |i| i + 1);
    model.decode(&ids[..end], false).unwrap_or_default()
}
