//! A `response_template` field as vLLM 0.33's `response_template_grammar.py` reads it (the
//! template's regexes and literal lists as written, not llm-render's parsing machine), and the
//! pieces of a structural tag it derives from one: `_openers`, `_closers`, `_continuing`,
//! `_thinking_format`, `_nonempty_start`, `_reply_format`, `_answer_text`,
//! `answer_rest_structural_tag` and the format constructors (`_sequence`, `_one_of`, `_tag`,
//! …), each building the dict vLLM builds, keys in its order.

use super::literals::{class_escape, escape, literals};
use serde_json::{json, Map, Value};

/// A delimiter as written: a literal list (first-seen order, deduplicated, vLLM's
/// `open_literals`), or a pattern (`open_re.pattern`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Anchor {
    Literals(Vec<String>),
    Pattern(String),
}

impl Anchor {
    /// vLLM's `_compile_anchor` for a field's literal key or pattern key.
    pub(crate) fn read(spec: &Map<String, Value>, literal: &str, pattern: &str) -> Option<Self> {
        match (spec.get(literal), spec.get(pattern)) {
            (Some(Value::String(s)), _) => Some(Anchor::Literals(vec![s.clone()])),
            (Some(Value::Array(list)), _) => {
                let mut out: Vec<String> = Vec::new();
                for s in list.iter().filter_map(Value::as_str) {
                    if !out.iter().any(|o| o == s) {
                        out.push(s.to_string());
                    }
                }
                Some(Anchor::Literals(out))
            }
            (_, Some(Value::String(p))) => Some(Anchor::Pattern(p.clone())),
            _ => None,
        }
    }

    /// The literal strings the anchor's regex matches whole (`opener.fullmatch`), for
    /// `_continuing`: a literal list's, or a pattern's when it is literal.
    fn matches(&self, text: &str) -> bool {
        match self {
            Anchor::Literals(l) => l.iter().any(|l| l == text),
            Anchor::Pattern(p) => literals(p, false).is_some_and(|l| l.iter().any(|l| l == text)),
        }
    }
}

/// One field of the (streaming) template, as the grammar reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GrammarField {
    pub open: Option<Anchor>,
    pub close: Option<Anchor>,
    /// The content parser's name (`json`, `xml-inline`, …) and whether it has arguments.
    pub content: String,
    pub content_args: bool,
    pub repeats: bool,
    pub transform: Option<Value>,
    pub transform_each: bool,
}

impl GrammarField {
    /// vLLM's `_openers`: the openers as literals (a pattern's only when literal), with their
    /// continuations past the message-start `anchors`.
    pub(crate) fn openers(&self, anchors: Option<&[String]>) -> Option<Vec<String>> {
        let open = self.open.as_ref()?;
        let openers = match open {
            Anchor::Literals(l) => Some(l.clone()),
            Anchor::Pattern(p) => literals(p, anchors.is_some()),
        };
        continuing(openers, anchors, open)
    }

    /// vLLM's `_closers`: the closers as literals, none without a closer, `None` when a
    /// pattern is not literal.
    pub(crate) fn closers(&self) -> Option<Vec<String>> {
        match &self.close {
            None => Some(Vec::new()),
            Some(Anchor::Literals(l)) => Some(l.clone()),
            Some(Anchor::Pattern(p)) => literals(p, false),
        }
    }
}

/// vLLM's `_continuing`: `literals` plus, for each that starts with a message-start anchor, its
/// rest where the opener would still be found in it.
pub(crate) fn continuing(
    literals: Option<Vec<String>>,
    anchors: Option<&[String]>,
    opener: &Anchor,
) -> Option<Vec<String>> {
    let (Some(literals), Some(anchors)) = (literals.as_ref(), anchors) else {
        return literals;
    };
    if literals.is_empty() || anchors.is_empty() {
        return Some(literals.clone());
    }
    let mut out = literals.clone();
    for literal in literals {
        for anchor in anchors {
            let Some(rest) = literal.strip_prefix(anchor.as_str()) else {
                continue;
            };
            let found = rest.char_indices().any(|(i, _)| opener.matches(&rest[i..]));
            if !rest.is_empty() && found && !out.iter().any(|o| o == rest) {
                out.push(rest.to_string());
            }
        }
    }
    Some(out)
}

/// `{"type": "structural_tag", "format": …}`.
pub(crate) fn structural(format: Value) -> Value {
    json!({"type": "structural_tag", "format": format})
}

/// vLLM's `_sequence`.
pub(crate) fn sequence(elements: Vec<Value>) -> Value {
    json!({"type": "sequence", "elements": elements})
}

/// vLLM's `_one_of`: the one format, or an `or` of them.
pub(crate) fn one_of(mut formats: Vec<Value>) -> Value {
    if formats.len() == 1 {
        formats.remove(0)
    } else {
        json!({"type": "or", "elements": formats})
    }
}

/// vLLM's `_optional`.
pub(crate) fn optional(content: Value) -> Value {
    json!({"type": "optional", "content": content})
}

/// vLLM's `_const_strings`.
pub(crate) fn const_strings(values: &[String]) -> Value {
    one_of(
        values
            .iter()
            .map(|v| json!({"type": "const_string", "value": v}))
            .collect(),
    )
}

/// vLLM's `_tag`.
pub(crate) fn tag(begin: &str, content: Value, end: Value) -> Value {
    json!({"type": "tag", "begin": begin, "content": content, "end": end})
}

/// vLLM's `_ANY_TEXT`.
pub(crate) fn any_text() -> Value {
    json!({"type": "any_text"})
}

pub(crate) fn regex(pattern: String) -> Value {
    json!({"type": "regex", "pattern": pattern})
}

/// vLLM's `_thinking_format`: the reasoning between an opener and a closer, holding at least
/// a character if `nonempty`; `None` without literal openers and closers.
pub(crate) fn thinking_format(
    thinking: &GrammarField,
    anchors: Option<&[String]>,
    nonempty: bool,
) -> Option<Value> {
    let openers = thinking.openers(anchors).filter(|o| !o.is_empty())?;
    let closers = thinking.closers().filter(|c| !c.is_empty())?;
    let text = if nonempty {
        sequence(vec![nonempty_start(&closers), any_text()])
    } else {
        any_text()
    };
    Some(one_of(
        openers
            .iter()
            .map(|o| tag(o, text.clone(), json!(closers)))
            .collect(),
    ))
}

/// vLLM's `_nonempty_start`: a regex for the start of text that is not empty and does not
/// begin with a closer, each branch leaving a closer's spelling on a character that starts
/// none.
pub(crate) fn nonempty_start(closers: &[String]) -> Value {
    let closers: Vec<Vec<char>> = closers
        .iter()
        .filter(|c| !c.is_empty())
        .map(|c| c.chars().collect())
        .collect();
    let starts: std::collections::BTreeSet<char> = closers.iter().map(|c| c[0]).collect();
    let mut prefixes: Vec<Vec<char>> = vec![Vec::new()];
    for closer in &closers {
        for end in 1..closer.len() {
            let p = closer[..end].to_vec();
            if !prefixes.contains(&p) {
                prefixes.push(p);
            }
        }
    }
    let mut branches = Vec::new();
    for prefix in prefixes {
        let text: String = prefix.iter().collect();
        let whole = |c: &Vec<char>| text.contains(&c.iter().collect::<String>());
        if closers.iter().any(whole) {
            continue;
        }
        let mut excluded = starts.clone();
        excluded.extend(
            closers
                .iter()
                .filter(|c| c.len() > prefix.len() && c.starts_with(&prefix))
                .map(|c| c[prefix.len()]),
        );
        let class: String = excluded.into_iter().map(class_escape).collect();
        branches.push(format!("{}[^{class}]", escape(&text)));
    }
    regex(branches.join("|"))
}

/// vLLM's `_reply_format`: the answer field holding `content` (free text when `None`); `None`
/// without literal openers or closers.
pub(crate) fn reply_format(
    answer: &GrammarField,
    anchors: Option<&[String]>,
    content: Option<&Value>,
) -> Option<Value> {
    let openers = answer.openers(anchors).filter(|o| !o.is_empty())?;
    let closers = answer.closers()?;
    let mut elements = vec![const_strings(&openers)];
    elements.extend(answer_text(&closers, content));
    Some(sequence(elements))
}

/// vLLM's `_answer_text`: the answer's text (no closer inside), then its closer, optional as
/// the output may end at a stop token.
pub(crate) fn answer_text(closers: &[String], content: Option<&Value>) -> Vec<Value> {
    let text = content
        .cloned()
        .unwrap_or_else(|| json!({"type": "any_text", "excludes": closers}));
    let mut elements = vec![text];
    if !closers.is_empty() {
        elements.push(optional(const_strings(closers)));
    }
    elements
}

/// vLLM's `answer_rest_structural_tag`: the rest of an answer the prompt left open.
pub(crate) fn answer_rest(answer: &GrammarField) -> Option<Value> {
    let closers = answer.closers()?;
    Some(structural(sequence(answer_text(&closers, None))))
}

/// The output after the reasoning, built for the message start's anchors (`Some`) or not;
/// `None` where it cannot be derived.
pub(crate) type Output<'a> = dyn Fn(Option<&[String]>) -> Option<Vec<Value>> + 'a;

/// vLLM's `_structural_tag`: `output` (built for the message start's anchors or not) after
/// the reasoning, optional unless `requires_reasoning`; from the message start, the tag covers
/// the whole message.
pub(crate) fn frame(
    output: &Output,
    thinking: Option<&GrammarField>,
    anchors: Option<&[String]>,
    requires_reasoning: bool,
) -> Option<Value> {
    let mut rest = output(None)?;
    let think = match thinking {
        Some(t) => Some(thinking_format(t, anchors, requires_reasoning)?),
        None => None,
    };
    let Some(anchors) = anchors else {
        if let Some(think) = think {
            rest.insert(0, optional(think));
        }
        return Some(structural(sequence(rest)));
    };
    if let (Some(think), true) = (&think, requires_reasoning) {
        rest.insert(0, think.clone());
        return Some(structural(sequence(rest)));
    }
    let format = sequence(output(Some(anchors))?);
    Some(structural(match think {
        Some(think) => {
            rest.insert(0, think);
            one_of(vec![sequence(rest), format])
        }
        None => format,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonempty_start_is_vllms() {
        // vLLM's own output for gpt-oss's `<|end|>`.
        let want = r"[^<]|<[^<|]|<\|[^<e]|<\|e[^<n]|<\|en[^<d]|<\|end[^<|]|<\|end\|[^<>]";
        assert_eq!(
            nonempty_start(&["<|end|>".into()]),
            json!({"type": "regex", "pattern": want})
        );
    }
}
