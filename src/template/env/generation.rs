//! `{% generation %}…{% endgeneration %}`: transformers' tags around what the assistant
//! wrote, from which `return_assistant_tokens_mask` marks the prompt's assistant tokens.
//!
//! transformers' `AssistantTracker` extension parses the tags into a Jinja2 `CallBlock`
//! whose callee records where its body lands in the output. minijinja has no such
//! extension, so the tags are rewritten into a `{% call %}` of [`generation`], a function
//! that renders the body (`caller()`) and, when the render tracks them, wraps it in a
//! marker carrying a per-render nonce. The spans are read, and the markers removed, by
//! [`take_spans`]. A block tag stays a block tag, so `trim_blocks`/`lstrip_blocks` and the
//! `-` whitespace controls act on it as in Jinja2, and the body is scoped as a Jinja2 call
//! block's is (a `{% set %}` inside does not leak out).

use minijinja::value::{Kwargs, Value};
use minijinja::{Error, State};
use std::sync::OnceLock;

/// The function the tags call.
pub(super) const FUNCTION: &str = "__llm_render_generation";

/// The context variable that turns tracking on: the render's marker (a string no request
/// can guess), or absent/none to render the blocks' bodies as they are.
pub const MARKER_VAR: &str = "__llm_render_generation_marker";

/// Whether `source` has `{% generation %}` tags: transformers' own test
/// (`\{\%-?\s*generation\s*-?\%\}`), without which it warns and masks nothing.
pub fn has_generation_tags(source: &str) -> bool {
    static RE: OnceLock<Option<regex::Regex>> = OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(r"\{%-?\s*generation\s*-?%\}").ok())
        .as_ref()
        .is_some_and(|re| re.is_match(source))
}

/// Rewrites `{% generation %}` / `{% endgeneration %}` into `{% call
/// __llm_render_generation() %}` / `{% endcall %}`, keeping their whitespace-control dashes.
pub fn rewrite_generation_tags(source: &str) -> String {
    static RE: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"\{%(-?)\s*(end)?generation\s*(-?)%\}").ok());
    match re {
        Some(re) => re
            .replace_all(source, |c: &regex::Captures| {
                let body = if c.get(2).is_some() {
                    "endcall".to_string()
                } else {
                    format!("call {FUNCTION}()")
                };
                format!("{{%{} {} {}%}}", &c[1], body, &c[3])
            })
            .into_owned(),
        None => source.to_string(),
    }
}

/// The callee of a rewritten block: its body, between the render's open and close markers
/// when [`MARKER_VAR`] is set.
pub(super) fn generation(state: &mut State, kwargs: Kwargs) -> Result<String, Error> {
    let caller: Value = kwargs.get("caller")?;
    kwargs.assert_all_used()?;
    let body = caller.call(state, &[])?;
    let body = body
        .as_str()
        .map_or_else(|| body.to_string(), str::to_string);
    match state.lookup(MARKER_VAR).as_ref().and_then(Value::as_str) {
        Some(marker) => Ok(format!("{marker}({body}{marker})")),
        None => Ok(body),
    }
}

/// A marker for one render: a private-use character and a random (v4) UUID, which no
/// request text can contain by chance or design.
pub fn new_marker() -> String {
    format!("\u{10FFFD}{}", uuid::Uuid::new_v4().simple())
}

/// Removes the marker's pairs from `rendered` and returns each block's `(start, end)` in
/// characters of the text without them, in the order the blocks closed (transformers
/// records a block when its call returns). `None` if the markers do not pair up.
pub fn take_spans(rendered: &str, marker: &str) -> Option<(String, Vec<(usize, usize)>)> {
    let (open, close) = (format!("{marker}("), format!("{marker})"));
    let mut text = String::with_capacity(rendered.len());
    let mut chars = 0usize;
    let (mut stack, mut spans) = (Vec::new(), Vec::new());
    let mut rest = rendered;
    while let Some(at) = rest.find(marker) {
        let before = &rest[..at];
        text.push_str(before);
        chars += before.chars().count();
        let tail = &rest[at..];
        if tail.starts_with(&open) {
            stack.push(chars);
            rest = &tail[open.len()..];
        } else if tail.starts_with(&close) {
            spans.push((stack.pop()?, chars));
            rest = &tail[close.len()..];
        } else {
            return None;
        }
    }
    text.push_str(rest);
    stack.is_empty().then_some((text, spans))
}

/// transformers' `assistant_masks` for a prompt whose tokens cover `offsets` (each token's
/// `(start, end)` in characters) and whose generation blocks cover `spans`: for each span,
/// the tokens from the one holding its first character to the one holding its last are 1.
/// As transformers: a span whose first character no token holds stops the marking, and a
/// last character held by no token, or by token 0 (Python's falsy `end_token`), marks to
/// the end.
pub fn assistant_mask(offsets: &[(usize, usize)], spans: &[(usize, usize)]) -> Vec<u8> {
    let char_to_token = |c: usize| offsets.iter().position(|&(s, e)| c >= s && c < e);
    let mut mask = vec![0u8; offsets.len()];
    for &(start, end) in spans {
        let Some(first) = char_to_token(start) else {
            break;
        };
        let last = end.checked_sub(1).and_then(char_to_token);
        let upper = match last {
            Some(t) if t != 0 => t + 1,
            _ => mask.len(),
        };
        for m in mask.iter_mut().take(upper).skip(first) {
            *m = 1;
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_become_call_blocks_with_their_dashes() {
        assert_eq!(
            rewrite_generation_tags("{%- generation %}a{% endgeneration -%}"),
            "{%- call __llm_render_generation() %}a{% endcall -%}"
        );
        assert!(has_generation_tags("x{%-generation-%}y"));
        assert!(!has_generation_tags("{% if generation %}"));
    }

    #[test]
    fn spans_are_read_in_characters_and_markers_removed() {
        let m = "\u{10FFFD}n";
        let rendered = format!("ü {m}(ab{m}) c {m}(d{m}(e{m}){m})");
        let (text, spans) = take_spans(&rendered, m).unwrap();
        assert_eq!(text, "ü ab c de");
        assert_eq!(spans, vec![(2, 4), (8, 9), (7, 9)]);
        assert!(take_spans(&format!("{m}(x"), m).is_none());
        assert!(take_spans(&format!("x{m})"), m).is_none());
    }

    #[test]
    fn mask_follows_transformers() {
        // Tokens "ab", "c", "de", "f": a span over "cd" marks tokens 1 and 2.
        let offsets = [(0, 2), (2, 3), (3, 5), (5, 6)];
        assert_eq!(assistant_mask(&offsets, &[(2, 4)]), vec![0, 1, 1, 0]);
        // A span ending inside token 0 marks to the end (Python's `if end_token`).
        assert_eq!(assistant_mask(&offsets, &[(0, 1)]), vec![1, 1, 1, 1]);
        // A span starting past the tokens stops the marking.
        assert_eq!(
            assistant_mask(&offsets, &[(9, 10), (5, 6)]),
            vec![0, 0, 0, 0]
        );
        // An empty span marks nothing unless both ends fall in one token.
        assert_eq!(assistant_mask(&offsets, &[(3, 3)]), vec![0, 0, 0, 0]);
        assert_eq!(assistant_mask(&offsets, &[(4, 4)]), vec![0, 0, 1, 0]);
    }
}
