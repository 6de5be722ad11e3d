//! vLLM 0.33's `tool_call_structural_tag` (`response_template_grammar.py`): the calls to the
//! request's functions in the format of the template's `tool_calls` field, with their
//! arguments held to their schemas where the template can hold them, after the reasoning, or
//! the answer instead when the model may answer.
//!
//! Of the argument formats, llm-render derives `json` (a field without `content_args`) as vLLM
//! does. `xml-inline` arguments vLLM derives only from a `tag_pattern` whose text between the
//! key and the value is literal (`_literals`); every `tag_pattern` llm-render's `hf` parser
//! runs has `\s*` there (Qwen3's `<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>`),
//! so vLLM derives none for them, and neither does llm-render.

use super::grammar::{
    const_strings, continuing, frame, one_of, optional, regex, reply_format, sequence, Anchor,
    GrammarField,
};
use super::literals::{class_escape, escape, literals, py_repr, split_group};
use super::word::word;
use super::xgrammar::{self, Verdict};
use serde_json::{json, Map, Value};

/// Characters JSON writes outside strings (vLLM's `_JSON_SYNTAX`).
const JSON_SYNTAX: &str = " \t\n\r{}[],:\"-+.0123456789eEtrufalsn";

/// Why no tag: vLLM's 400 (`ValueError` → `param` "tools"), or what llm-render cannot tell.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TagError {
    /// vLLM's own refusal: a name the template cannot spell.
    Tools(String),
    /// XGrammar's answer llm-render does not know, for the schema of this function.
    Unknown(String),
    /// A name longer than [`MAX_OTHER_NAME`], whose `_other_names` branch vLLM builds by
    /// recursing once per character (past Python's recursion limit, a 500 there).
    TooLong(String),
}

/// The longest name llm-render builds `_other_names`' regex for.
const MAX_OTHER_NAME: usize = 512;

/// The request's side of `tool_call_structural_tag`.
pub(crate) struct ToolTagArgs<'a> {
    /// OpenAI function definitions (`name`, `parameters`, `strict` read).
    pub functions: &'a [&'a Map<String, Value>],
    pub parallel_tool_calls: bool,
    pub thinking: Option<&'a GrammarField>,
    pub answer: Option<&'a GrammarField>,
    pub answer_format: Option<&'a Value>,
    pub message_start: Option<&'a [String]>,
    pub requires_reasoning: bool,
}

/// vLLM's `tool_call_structural_tag` with `sorted_arguments` and `strict_arguments` (as `beam`
/// calls it). `Ok(None)`: the template's format cannot be derived.
pub(crate) fn tool_call_structural_tag(
    field: Option<&GrammarField>,
    a: &ToolTagArgs,
) -> Result<Option<Value>, TagError> {
    if a.functions.is_empty() {
        if let Some(answer) = a.answer {
            let reply = |start: Option<&[String]>| {
                reply_format(answer, start, a.answer_format).map(|f| vec![f])
            };
            return Ok(frame(
                &reply,
                a.thinking,
                a.message_start,
                a.requires_reasoning,
            ));
        }
        return Ok(None);
    }
    let Some(field) = field.filter(|f| names_function_by_opener(f)) else {
        return Ok(None);
    };
    let Some(Anchor::Pattern(pattern)) = &field.open else {
        return Ok(None);
    };
    let (Some(opener), Some(closer_literals)) = (split_group(pattern, "name"), field.closers())
    else {
        return Ok(None);
    };
    let mut arguments = Vec::new();
    let mut enforced = Vec::new();
    for function in a.functions {
        // Like the generic JSON schema, a function without parameters takes none.
        let parameters = match function.get("parameters") {
            Some(p) if crate::registry::truthy(p) => p.clone(),
            _ => json!({"type": "object", "properties": {}}),
        };
        let strict = function.get("strict").is_some_and(crate::registry::truthy);
        let name = function.get("name").and_then(Value::as_str).unwrap_or("");
        let unknown = || TagError::Unknown(name.to_string());
        let mut args = arguments_format(field, &parameters, true).ok_or_else(unknown)?;
        enforced.push(args.is_some());
        if args.is_none() && !strict {
            args = arguments_format(field, &parameters, false).ok_or_else(unknown)?;
        }
        let Some(args) = args else {
            return Ok(None);
        };
        arguments.push(args);
    }
    let mut names = Vec::new();
    for function in a.functions {
        let name = function.get("name").and_then(Value::as_str).unwrap_or("");
        if !fullmatch_name(opener.1, name).ok_or_else(|| TagError::Unknown(name.into()))? {
            return Err(TagError::Tools(format!(
                "tool name {} cannot be encoded in tool calls",
                py_repr(name)
            )));
        }
        names.push(escape(name));
    }
    if a.answer.is_some() {
        let enforced_names: Vec<&str> = a
            .functions
            .iter()
            .zip(&enforced)
            .filter(|(_, e)| **e)
            .map(|(f, _)| f.get("name").and_then(Value::as_str).unwrap_or(""))
            .collect();
        if let Some(long) = enforced_names
            .iter()
            .find(|n| n.chars().count() > MAX_OTHER_NAME)
        {
            return Err(TagError::TooLong(long.to_string()));
        }
        let others = other_names(opener.1, &enforced_names);
        let loose = arguments_format(field, &json!({}), false).flatten();
        if let (Some(others), Some(loose)) = (others, loose) {
            // Calls to any function whose schema is not enforced take any arguments.
            let keep = |v: Vec<Value>| -> Vec<Value> {
                v.into_iter()
                    .zip(&enforced)
                    .filter(|(_, e)| **e)
                    .map(|(v, _)| v)
                    .collect()
            };
            let kept: Vec<String> = names
                .iter()
                .zip(&enforced)
                .filter(|(_, e)| **e)
                .map(|(n, _)| n.clone())
                .collect();
            names = kept;
            names.push(format!("(?:{others})"));
            arguments = keep(arguments);
            arguments.push(loose);
        }
    }
    let closers = (!closer_literals.is_empty()).then(|| const_strings(&closer_literals));
    let call = |start: Option<&[String]>| {
        one_of(
            names
                .iter()
                .zip(&arguments)
                .map(|(name, args)| {
                    sequence(vec![regex(call_opener(opener, name, start)), args.clone()])
                })
                .collect(),
        )
    };
    let output = |start: Option<&[String]>| -> Option<Vec<Value>> {
        let mut elements = vec![call(start)];
        if a.parallel_tool_calls && field.repeats {
            let repeated = match &closers {
                Some(c) => sequence(vec![c.clone(), call(None)]),
                None => call(None),
            };
            elements.push(json!({"type": "star", "content": repeated}));
        }
        if let Some(c) = &closers {
            // EOS can end a call without its closer.
            elements.push(optional(c.clone()));
        }
        if let Some(answer) = a.answer {
            let reply = reply_format(answer, start, a.answer_format)?;
            elements = vec![one_of(vec![sequence(elements), reply])];
        }
        Some(elements)
    };
    Ok(frame(
        &output,
        a.thinking,
        a.message_start,
        a.requires_reasoning,
    ))
}

/// vLLM's `_names_function_by_opener`: the opener captures the name, and the transform makes
/// each region one call of that name with the content as its arguments.
fn names_function_by_opener(field: &GrammarField) -> bool {
    let named = matches!(&field.open, Some(Anchor::Pattern(p)) if p.contains("(?P<name>"));
    let function = field
        .transform
        .as_ref()
        .filter(|t| crate::registry::truthy(t))
        .and_then(|t| t.get("function"))
        .and_then(Value::as_object);
    named
        && !field.transform_each
        && function.is_some_and(|f| {
            f.get("name") == Some(&json!("{name}"))
                && f.get("arguments") == Some(&json!("{content}"))
        })
}

/// `re.fullmatch(body, name)` for the name group's body (`\w+`, the only one llm-render's `hf`
/// parser runs); `None` for another body.
fn fullmatch_name(body: &str, name: &str) -> Option<bool> {
    (body == r"\w+").then(|| !name.is_empty() && name.chars().all(word))
}

/// vLLM's `_call_opener`: the opener for `name`; from the message start, its literal text before
/// the name also matches its continuations past the anchors.
fn call_opener(opener: (&str, &str, &str), name: &str, start: Option<&[String]>) -> String {
    let (mut before, _, after) = (opener.0.to_string(), opener.1, opener.2);
    if let (Some(start), false) = (start, before.is_empty()) {
        if let Some(lits) = literals(&before, true).filter(|l| !l.is_empty()) {
            let lits = continuing(Some(lits), Some(start), &Anchor::Pattern(before.clone()));
            let escaped: Vec<String> = lits.unwrap_or_default().iter().map(|l| escape(l)).collect();
            before = format!("(?:{})", escaped.join("|"));
        }
    }
    format!("{before}{name}{after}")
}

/// vLLM's `_other_names`: a regex for the names the name group's body matches besides
/// `names`; `None` when the body is no negatable class repeated.
fn other_names(pattern: &str, names: &[&str]) -> Option<String> {
    if names.is_empty() {
        return Some(pattern.to_string());
    }
    let negated = match pattern {
        r"\w+" => r"\W",
        r"\S+" => r"\s",
        _ => return None,
    };
    let other = |chars: &std::collections::BTreeSet<char>| {
        let listed: String = chars.iter().copied().map(class_escape).collect();
        format!("[^{negated}{listed}]")
    };
    /// A trie node: children in insertion order, and whether a name ends here.
    #[derive(Default)]
    struct Node {
        children: Vec<(char, Node)>,
        end: bool,
    }
    let mut trie = Node::default();
    for name in names {
        let mut node = &mut trie;
        for c in name.chars() {
            let at = match node.children.iter().position(|(k, _)| *k == c) {
                Some(i) => i,
                None => {
                    node.children.push((c, Node::default()));
                    node.children.len() - 1
                }
            };
            node = &mut node.children[at].1;
        }
        node.end = true;
    }
    fn rest(
        node: &Node,
        first: bool,
        other: &dyn Fn(&std::collections::BTreeSet<char>) -> String,
    ) -> String {
        let chars = node.children.iter().map(|(c, _)| *c).collect();
        let mut branches = vec![format!("{}{}*", other(&chars), other(&Default::default()))];
        for (c, child) in &node.children {
            branches.push(format!(
                "{}{}",
                escape(&c.to_string()),
                rest(child, false, other)
            ));
        }
        let optional = if first || node.end { "" } else { "?" };
        format!("(?:{}){optional}", branches.join("|"))
    }
    Some(rest(&trie, true, &other))
}

/// vLLM's `_arguments_format` (`strict`: the schema's; else any object): `Some(None)` where
/// the template cannot hold the arguments, `None` where llm-render cannot tell XGrammar's
/// answer.
fn arguments_format(
    field: &GrammarField,
    parameters: &Value,
    strict: bool,
) -> Option<Option<Value>> {
    let closers = field.closers().unwrap_or_default();
    if field.content == "json" && !field.content_args {
        if spells_closer_in_json(&closers) {
            return Some(None);
        }
        let schema = if strict {
            parameters.clone()
        } else {
            json!({"type": "object"})
        };
        return json_format(schema, &closers);
    }
    // `xml-inline`: see the module's note; every other content parser has no format.
    Some(None)
}

/// vLLM's `_json_format`: JSON of `schema`, unless a closer is all JSON syntax or XGrammar
/// does not compile the schema.
fn json_format(schema: Value, closers: &[String]) -> Option<Option<Value>> {
    if !closers.is_empty() {
        if closers
            .iter()
            .any(|c| c.chars().all(|ch| JSON_SYNTAX.contains(ch)))
        {
            return Some(None);
        }
        match xgrammar::json_schema(&schema, false) {
            Verdict::Compiles => {}
            Verdict::Fails => return Some(None),
            Verdict::Unknown => return None,
        }
    }
    Some(Some(
        json!({"type": "json_schema", "json_schema": schema, "excludes": closers}),
    ))
}

/// vLLM's `_spells_closer` for JSON arguments (one piece: any text, ending on a character JSON
/// writes outside strings): a closer starts on such a character and its rest begins, or is
/// begun by, a closer.
fn spells_closer_in_json(closers: &[String]) -> bool {
    closers.iter().any(|closer| {
        closer.char_indices().skip(1).any(|(split, _)| {
            let last = closer[..split].chars().next_back();
            let rest = &closer[split..];
            last.is_some_and(|c| JSON_SYNTAX.contains(c))
                && closers
                    .iter()
                    .any(|c| c.starts_with(rest) || rest.starts_with(c.as_str()))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_names_are_vllms() {
        assert_eq!(other_names(r"\w+", &[]), Some(r"\w+".into()));
        // vLLM: _other_names(r"\w+", ["ab"]).
        assert_eq!(
            other_names(r"\w+", &["ab"]),
            Some(r"(?:[^\Wa][^\W]*|a(?:[^\Wb][^\W]*|b(?:[^\W][^\W]*))?)".into())
        );
    }

    #[test]
    fn closers_json_spells() {
        assert!(spells_closer_in_json(&["x]x]".into()]));
        assert!(!spells_closer_in_json(&["</tool_call>".into()]));
        assert!(!spells_closer_in_json(&[]));
    }
}
