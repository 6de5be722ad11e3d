//! Printing `template-diff` results: JSON lines for machines, tables for people.

use super::{CompareReport, Divergence, TurnReport};
use std::fmt::Write;

/// One case's outcome.
pub enum Row {
    Turn(TurnReport),
    Compare(CompareReport),
    Error { id: Option<String>, message: String },
}

impl Row {
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Row::Turn(r) => serde_json::to_value(r).unwrap_or_default(),
            Row::Compare(r) => serde_json::to_value(r).unwrap_or_default(),
            Row::Error { id, message } => serde_json::json!({"id": id, "error": message}),
        }
    }

    fn id(&self) -> String {
        match self {
            Row::Turn(r) => r.id.clone(),
            Row::Compare(r) => r.id.clone(),
            Row::Error { id, .. } => id.clone(),
        }
        .unwrap_or_else(|| "-".into())
    }
}

fn token(t: Option<u32>) -> String {
    t.map(|t| t.to_string()).unwrap_or_else(|| "(end)".into())
}

fn divergence_lines(out: &mut String, d: &Divergence, left: &str, right: &str) {
    let place = match (d.message_index, &d.message_role) {
        (Some(i), Some(role)) => format!("in message {i} ({role})"),
        (Some(i), None) => format!("in message {i}"),
        _ => "in the generation prompt".into(),
    };
    let _ = writeln!(out, "  first divergence      token {}, {place}", d.position);
    let _ = writeln!(
        out,
        "      {left:<8} {:?}  (token {})",
        d.left_text,
        token(d.left_token)
    );
    let _ = writeln!(
        out,
        "      {right:<8} {:?}  (token {})",
        d.right_text,
        token(d.right_token)
    );
}

/// The engine's and the index's (cached, uncached) tokens, each on a line: `indent` before
/// the label, `gap` after it, so the figures line up with the table they are in.
fn reuse_lines(
    out: &mut String,
    indent: &str,
    gap: &str,
    r: &TurnReport,
    engine: (usize, usize),
    index: (usize, usize),
) {
    for (label, block, (cached, uncached)) in [
        ("engine", r.block_size, engine),
        ("index ", r.index_block_size, index),
    ] {
        let _ = writeln!(
            out,
            "{indent}{label} (block {block:>3})  {gap}{cached} cached, {uncached} uncached"
        );
    }
}

fn turn_table(out: &mut String, r: &TurnReport) {
    let _ = writeln!(
        out,
        "  turn-1 prompt         {} tokens",
        r.turn1_prompt_tokens
    );
    let _ = writeln!(
        out,
        "  decode pod holds      {} tokens (turn-1 prompt + reply, no stop token)",
        r.decode_held_tokens
    );
    let _ = writeln!(
        out,
        "  turn-2 prompt         {} tokens",
        r.turn2_prompt_tokens
    );
    let _ = writeln!(
        out,
        "  common prefix         {} tokens",
        r.common_prefix_tokens
    );
    match &r.first_divergence {
        Some(d) => divergence_lines(out, d, "held:", "turn 2:"),
        None => {
            let _ = writeln!(out, "  first divergence      none");
        }
    }
    let engine = (r.cached_tokens, r.uncached_tokens);
    let index = (r.index_cached_tokens, r.index_uncached_tokens);
    reuse_lines(out, "  ", "  ", r, engine, index);
    if let Some(b) = &r.bridged {
        match &b.reason {
            None => {
                let _ = writeln!(
                    out,
                    "  bridged turn 2        {} tokens, common prefix {}",
                    b.prompt_tokens, b.common_prefix_tokens
                );
            }
            Some(reason) => {
                let _ = writeln!(out, "  bridged turn 2        not applied: {reason}");
            }
        }
        let engine = (b.cached_tokens, b.uncached_tokens);
        let index = (b.index_cached_tokens, b.index_uncached_tokens);
        reuse_lines(out, "    ", "", r, engine, index);
    }
    if let Some(skip) = r.decider_skips_prefill {
        let _ = writeln!(
            out,
            "  P/D decider           {}",
            if skip {
                "skips the prefill pod"
            } else {
                "uses the prefill pod"
            }
        );
    }
}

fn compare_table(out: &mut String, r: &CompareReport) {
    let _ = writeln!(
        out,
        "  tokens                {} vs {}",
        r.left_tokens, r.right_tokens
    );
    let _ = writeln!(
        out,
        "  common prefix         {} tokens{}",
        r.common_prefix_tokens,
        if r.identical { " (identical)" } else { "" }
    );
    if let Some(d) = &r.first_divergence {
        divergence_lines(out, d, "left:", "right:");
    }
}

/// Tables for every case, then a summary when there are several.
pub fn human(rows: &[Row], model: &str, against: Option<&str>, variant: Option<&str>) -> String {
    let mut out = String::new();
    match (against, variant) {
        (Some(a), _) => {
            let _ = writeln!(out, "template-diff (template mode): {model} vs {a}");
        }
        (None, Some(v)) => {
            let _ = writeln!(
                out,
                "template-diff (turn mode): {model}, and the variant {v}"
            );
        }
        (None, None) => {
            let _ = writeln!(out, "template-diff (turn mode): {model}");
        }
    }
    for row in rows {
        match (row, variant) {
            (Row::Turn(r), Some(_)) => {
                let _ = writeln!(out, "\ncase {} under {}", row.id(), r.template);
            }
            _ => {
                let _ = writeln!(out, "\ncase {}", row.id());
            }
        }
        match row {
            Row::Turn(r) => turn_table(&mut out, r),
            Row::Compare(r) => compare_table(&mut out, r),
            Row::Error { message, .. } => {
                let _ = writeln!(out, "  error: {message}");
            }
        }
    }
    if rows.len() > 1 {
        let _ = writeln!(out, "\nsummary");
        let _ = writeln!(
            out,
            "  {:<28} {:>8} {:>8} {:>8} {:>9} {:>11}",
            "case", "prompt", "prefix", "cached", "uncached", "diverges at"
        );
        for row in rows {
            let label = match (row, variant) {
                (Row::Turn(r), Some(_)) => {
                    let name = std::path::Path::new(&r.template)
                        .file_name()
                        .map_or(r.template.clone(), |n| n.to_string_lossy().into_owned());
                    format!("{} [{name}]", row.id())
                }
                _ => row.id(),
            };
            let (prompt, prefix, cached, uncached, at) = match row {
                Row::Turn(r) => (
                    r.turn2_prompt_tokens,
                    r.common_prefix_tokens,
                    r.cached_tokens.to_string(),
                    r.uncached_tokens.to_string(),
                    r.first_divergence.as_ref().map(|d| d.position.to_string()),
                ),
                Row::Compare(r) => (
                    r.right_tokens,
                    r.common_prefix_tokens,
                    "-".into(),
                    "-".into(),
                    r.first_divergence.as_ref().map(|d| d.position.to_string()),
                ),
                Row::Error { .. } => (0, 0, "-".into(), "-".into(), Some("error".into())),
            };
            let _ = writeln!(
                out,
                "  {:<28} {:>8} {:>8} {:>8} {:>9} {:>11}",
                label,
                prompt,
                prefix,
                cached,
                uncached,
                at.unwrap_or_else(|| "-".into())
            );
        }
    }
    out
}
