//! A checkpoint's `response_template` (Hugging Face's declarative output format, the metadata
//! vLLM's `hf` parser reads from `tokenizer_config.json`), loaded and checked as vLLM loads it
//! (`vllm/parser/chat_parsing/response_templates.py`) and as its serving checks it
//! (`validate_response_template_for_serving`), in the streaming form vLLM parses with
//! (`_streaming_template`: every field optional, and a `content` sink added when every field
//! has an opener).
//!
//! What llm-render cannot run exactly is refused here, with the reason, so a server never
//! starts with a parser that would answer differently from vLLM:
//! * a regex delimiter (`open_pattern`, `close_pattern`, `start_anchor_pattern`) must be one
//!   `pattern.rs` runs: literals, `\s*`, `\s+`, `\w+`, `(?P<name>\w+)` and `.*?` in a row that
//!   match without backtracking (Gemma 4's `<\|tool_call>call:(?P<name>\w+)`, Qwen3's
//!   `<tool_call>\s*<function=(?P<name>\w+)>`); other regexes are refused;
//! * a literal list where one literal is a prefix of another is refused (vLLM's matching of
//!   such lists depends on how the text is chunked);
//! * `tool_calls` content kinds: `json` (with `unquoted_keys`, `string_delims`,
//!   `allow_non_json`), `kv-lines`, `xml-inline` by Qwen3's tag shape
//!   (`<open>(?P<key>\w+)<mid>\s*(?P<value>.*?)\s*<close>`), values `text` or `json`, and
//!   `text`; other tag patterns and `int`/`float`/`bool` are refused.

use super::pattern::{pattern_atoms, pattern_delim};
pub(crate) use super::pattern::{space, word, Atom};
use crate::registry::truthy;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub(crate) const THINKING: &str = "thinking";
pub(crate) const CONTENT: &str = "content";
pub(crate) const TOOLS: &str = "tool_calls";

/// One delimiter: any of some literals, or a literal then a `\w+` run captured by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Delim {
    /// Longest first (vLLM's alternation order); no literal is a prefix of another.
    Literals(Vec<String>),
    /// A regex that is one literal: matched as the literal, but, as every regex delimiter in
    /// vLLM, a match ending where the text so far ends is held (more text "could grow it").
    Pattern(String),
    /// `lit(?P<group>\w+)`; `group` is `None` for an unnamed `(\w+)`-free literal + `\w+`.
    Word { lit: String, group: Option<String> },
    /// A longer regex llm-render runs ([`Atom`]s; see `pattern_delim`).
    Seq(Vec<Atom>),
}

/// How a region's body becomes its value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    Text {
        strip: bool,
    },
    Json(JsonArgs),
    KvLines {
        line_sep: String,
        kv_sep: String,
        strip: bool,
        value: Option<Box<Kind>>,
    },
    /// `open` key `mid` whitespace value whitespace `close`, tag after tag.
    XmlInline {
        open: String,
        mid: String,
        close: String,
        value: Option<Box<Kind>>,
        merge: bool,
    },
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct JsonArgs {
    pub unquoted_keys: bool,
    pub string_delims: Vec<(String, String)>,
    pub allow_non_json: bool,
    /// `_text`'s strip, for `allow_non_json`'s fallback.
    pub strip: bool,
}

/// One field (region kind) of the template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Field {
    pub name: String,
    pub open: Option<Delim>,
    pub close: Option<Delim>,
    pub kind: Kind,
    pub transform: Option<Value>,
    pub transform_each: bool,
    /// The field may occur more than once (vLLM's reasoning-end check reads it).
    pub repeats: bool,
}

/// A loaded, serving-checked `response_template`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseTemplate {
    pub(crate) fields: Vec<Field>,
    /// The field without an opener (the sink text outside any region goes to).
    pub(crate) implicit: Option<usize>,
    pub(crate) start_anchor: Delim,
}

impl ResponseTemplate {
    /// Loads `response_template` metadata as vLLM's serving does; the error says what is wrong
    /// or what llm-render does not run.
    pub fn from_json(spec: &Value) -> Result<Self, String> {
        let spec = spec
            .as_object()
            .ok_or_else(|| "response_template must be a dict".to_string())?;
        if let Some(v) = spec.get("version") {
            if v.as_i64() != Some(1) {
                return Err(format!("Unsupported response_template version: {v}"));
            }
        }
        let allowed = [
            "version",
            "defaults",
            "fields",
            "start_anchor",
            "start_anchor_pattern",
        ];
        let unknown: Vec<&String> = spec
            .keys()
            .filter(|k| !allowed.contains(&k.as_str()))
            .collect();
        if !unknown.is_empty() {
            return Err(format!("Unknown keys in response_template: {unknown:?}"));
        }
        let defaults = match spec.get("defaults") {
            None => Map::new(),
            Some(Value::Object(d)) => d.clone(),
            Some(_) => return Err("response_template.defaults must be a dict".into()),
        };
        let raw_fields = match spec.get("fields") {
            Some(Value::Object(f)) if !f.is_empty() => f,
            _ => return Err("response_template.fields must be a non-empty dict".into()),
        };
        let mut fields = Vec::new();
        for (name, raw) in raw_fields {
            fields.push(build_field(name, raw)?);
        }
        let implicit: Vec<usize> = (0..fields.len())
            .filter(|&i| fields[i].open.is_none())
            .collect();
        if implicit.len() > 1 {
            let names: Vec<&str> = implicit.iter().map(|&i| fields[i].name.as_str()).collect();
            return Err(format!(
                "At most one field may omit 'open'/'open_pattern' (that field becomes the \
                 implicit-open / leftover sink). Found: {}",
                names.join(", ")
            ));
        }
        let start_anchor = anchor(
            "response_template",
            spec,
            "start_anchor",
            "start_anchor_pattern",
        )?
        .ok_or("response_template must define 'start_anchor' or 'start_anchor_pattern'.")?;
        // vLLM's `validate_response_template_for_serving`.
        let mut unsupported: Vec<String> = fields
            .iter()
            .map(|f| f.name.clone())
            .filter(|n| ![THINKING, CONTENT, TOOLS].contains(&n.as_str()))
            .chain(defaults.keys().filter(|k| *k != "role").cloned())
            .collect();
        unsupported.sort();
        unsupported.dedup();
        if !unsupported.is_empty() {
            return Err(format!(
                "response_template contains unsupported semantic fields: {unsupported:?}. \
                 Supported fields are: [\"content\", \"thinking\", \"tool_calls\"]"
            ));
        }
        for (f, raw) in fields.iter().zip(raw_fields.values()) {
            if f.name == TOOLS {
                continue;
            }
            let text = matches!(f.kind, Kind::Text { .. });
            let set = |k: &str| raw.get(k).is_some_and(|v| !v.is_null());
            if !text || set("transform") || set("join") {
                return Err(format!(
                    "response_template field {:?} uses semantics that cannot be streamed by the \
                     OpenAI serving adapter",
                    f.name
                ));
            }
        }
        // `_streaming_template`: a content sink when every field opens explicitly.
        let mut template = ResponseTemplate {
            fields,
            implicit: implicit.first().copied(),
            start_anchor,
        };
        if template.field(CONTENT).is_none() && template.implicit.is_none() {
            template.fields.push(Field {
                name: CONTENT.into(),
                open: None,
                close: None,
                kind: Kind::Text { strip: true },
                transform: None,
                transform_each: false,
                repeats: false,
            });
            template.implicit = Some(template.fields.len() - 1);
        }
        Ok(template)
    }

    /// Whether a template read back from a stream state could have been loaded here: what the
    /// machine relies on (no empty delimiter, so every match consumes text; a `.*?` before a
    /// literal; the sink a field without an opener).
    pub(crate) fn check(&self) -> Result<(), String> {
        fn delim(d: &Delim) -> bool {
            match d {
                Delim::Literals(lits) => !lits.is_empty() && lits.iter().all(|l| !l.is_empty()),
                Delim::Pattern(lit) | Delim::Word { lit, .. } => !lit.is_empty(),
                Delim::Seq(atoms) => {
                    matches!(atoms.first(), Some(Atom::Lit(_)))
                        && atoms.iter().enumerate().all(|(i, a)| match a {
                            Atom::Lit(l) => !l.is_empty(),
                            Atom::Lazy => matches!(atoms.get(i + 1), Some(Atom::Lit(_))),
                            _ => true,
                        })
                }
            }
        }
        fn kind(k: &Kind) -> bool {
            match k {
                Kind::Text { .. } => true,
                Kind::Json(a) => a
                    .string_delims
                    .iter()
                    .all(|(o, c)| !o.is_empty() && !c.is_empty()),
                Kind::KvLines {
                    line_sep,
                    kv_sep,
                    value,
                    ..
                } => {
                    !line_sep.is_empty() && !kv_sep.is_empty() && value.as_deref().is_none_or(kind)
                }
                Kind::XmlInline {
                    open,
                    mid,
                    close,
                    value,
                    ..
                } => {
                    !open.is_empty()
                        && !mid.is_empty()
                        && !close.is_empty()
                        && value.as_deref().is_none_or(kind)
                }
            }
        }
        let ok = !self.fields.is_empty()
            && delim(&self.start_anchor)
            && self
                .implicit
                .is_none_or(|i| self.fields.get(i).is_some_and(|f| f.open.is_none()))
            && self.fields.iter().enumerate().all(|(i, f)| {
                f.open.as_ref().map_or(self.implicit == Some(i), delim)
                    && f.close.as_ref().is_none_or(delim)
                    && kind(&f.kind)
            });
        if ok {
            Ok(())
        } else {
            Err("invalid response_template in a parser state".into())
        }
    }

    pub(crate) fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// Whether the template has a `thinking` field (`--reasoning-parser hf` needs one).
    pub fn has_thinking(&self) -> bool {
        self.field(THINKING).is_some()
    }

    /// Whether the template has a `tool_calls` field (`--tool-call-parser hf` needs one).
    pub fn has_tool_calls(&self) -> bool {
        self.field(TOOLS).is_some()
    }
}

const FIELD_KEYS: [&str; 11] = [
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform",
    "transform_each",
];

fn build_field(name: &str, raw: &Value) -> Result<Field, String> {
    let scope = format!("Field '{name}'");
    let f = raw
        .as_object()
        .ok_or_else(|| format!("{scope} must be a dict"))?;
    let mut unknown: Vec<&String> = f
        .keys()
        .filter(|k| !FIELD_KEYS.contains(&k.as_str()))
        .collect();
    unknown.sort();
    if !unknown.is_empty() {
        return Err(format!("{scope}: unknown keys {unknown:?}"));
    }
    let content = match f.get("content") {
        None => "text",
        Some(Value::String(s)) => s.as_str(),
        Some(v) => return Err(format!("{scope}: unknown content parser {v}")),
    };
    let args = match f.get("content_args") {
        None => Map::new(),
        Some(Value::Object(a)) => a.clone(),
        Some(_) => return Err(format!("{scope}: content_args must be a dict")),
    };
    let kind = kind(&scope, content, &args)?;
    let open = anchor(&scope, f, "open", "open_pattern")?;
    let close = anchor(&scope, f, "close", "close_pattern")?;
    let repeats = f.get("repeats").is_some_and(truthy);
    if let Some(join) = f.get("join") {
        if !join.is_string() && !join.is_null() {
            return Err(format!("{scope}: 'join' must be a string"));
        }
        if !join.is_null() && !repeats {
            return Err(format!("{scope}: 'join' requires 'repeats': true"));
        }
    }
    let transform = f.get("transform").filter(|t| !t.is_null()).cloned();
    let transform_each = match f.get("transform_each") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(format!("{scope}: transform_each must be a bool")),
    };
    if transform_each && transform.is_none() {
        return Err(format!(
            "{scope}: transform_each is set but no transform was provided"
        ));
    }
    match &transform {
        Some(t) => check_transform(&scope, t)?,
        None => {
            let named = [&open, &close].into_iter().flatten().any(|d| match d {
                Delim::Word { group, .. } => group.is_some(),
                Delim::Seq(atoms) => atoms
                    .iter()
                    .any(|a| matches!(a, Atom::Word { name: Some(_) })),
                _ => false,
            });
            if named {
                return Err(format!(
                    "{scope}: open_pattern/close_pattern declares a named group, but the \
                     field has no 'transform'"
                ));
            }
        }
    }
    Ok(Field {
        name: name.to_string(),
        open,
        close,
        kind,
        transform,
        transform_each,
        repeats,
    })
}

/// `_text`'s `strip` argument (default on).
fn strip_arg(args: &Map<String, Value>) -> bool {
    args.get("strip").is_none_or(truthy)
}

fn kind(scope: &str, content: &str, args: &Map<String, Value>) -> Result<Kind, String> {
    match content {
        "text" => Ok(Kind::Text {
            strip: strip_arg(args),
        }),
        "json" => {
            let mut delims = Vec::new();
            match args.get("string_delims") {
                None | Some(Value::Null) => {}
                Some(Value::Array(list)) => {
                    for pair in list {
                        let pair = pair.as_array().map(Vec::as_slice);
                        let Some([Value::String(o), Value::String(c)]) = pair else {
                            return Err(format!(
                                "{scope}: llm-render reads string_delims as [open, close] \
                                 string pairs"
                            ));
                        };
                        if o.is_empty() || c.is_empty() {
                            return Err(format!(
                                "{scope}: llm-render does not run empty string_delims"
                            ));
                        }
                        delims.push((o.clone(), c.clone()));
                    }
                }
                Some(_) => return Err(format!("{scope}: string_delims must be a list")),
            }
            Ok(Kind::Json(JsonArgs {
                unquoted_keys: args.get("unquoted_keys").is_some_and(truthy),
                string_delims: delims,
                allow_non_json: args.get("allow_non_json").is_some_and(truthy),
                strip: strip_arg(args),
            }))
        }
        "kv-lines" => {
            let sep = |key: &str, default: &str| match args.get(key) {
                None => Ok(default.to_string()),
                Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
                Some(_) => Err(format!(
                    "{scope}: llm-render runs kv-lines with a non-empty string {key}"
                )),
            };
            let value = value_parser(scope, args)?;
            Ok(Kind::KvLines {
                line_sep: sep("line_sep", "\n")?,
                kv_sep: sep("kv_sep", ":")?,
                strip: strip_arg(args),
                value,
            })
        }
        "xml-inline" => {
            let refuse = || {
                format!(
                    "{scope}: llm-render runs xml-inline with a tag_pattern \
                     <open>(?P<key>\\w+)<mid>\\s*(?P<value>.*?)\\s*<close> only (Qwen3's \
                     <parameter=(?P<key>\\w+)>\\s*(?P<value>.*?)\\s*</parameter>)"
                )
            };
            let pattern = args
                .get("tag_pattern")
                .and_then(Value::as_str)
                .ok_or_else(refuse)?;
            let (open, rest) = pattern.split_once(r"(?P<key>\w+)").ok_or_else(refuse)?;
            let (mid, close) = rest
                .split_once(r"\s*(?P<value>.*?)\s*")
                .ok_or_else(refuse)?;
            let lit = |raw: &str, ok: fn(char) -> bool| match pattern_atoms(raw).as_deref() {
                Some([Atom::Lit(l)]) if l.chars().next().is_some_and(ok) => Some(l.clone()),
                _ => None,
            };
            Ok(Kind::XmlInline {
                open: lit(open, |_| true).ok_or_else(refuse)?,
                // What ends the key's `\w+` and begins the value's `\s*` close cannot continue
                // them, so the match is the regex's without backtracking.
                mid: lit(mid, |c| !word(c)).ok_or_else(refuse)?,
                close: lit(close, |c| !space(c)).ok_or_else(refuse)?,
                value: value_parser(scope, args)?,
                merge: args.get("merge_duplicates").is_some_and(truthy),
            })
        }
        "int" | "float" | "bool" => Err(format!(
            "{scope}: content parser '{content}' is not supported by llm-render's hf parser \
             (supported: text, json, kv-lines, xml-inline)"
        )),
        other => Err(format!(
            "{scope}: unknown content parser '{other}'. Available: [\"bool\", \"float\", \
             \"int\", \"json\", \"kv-lines\", \"text\", \"xml-inline\"]"
        )),
    }
}

/// A `value_parser` content argument (`{"name", "args"}`): how each value is parsed.
fn value_parser(scope: &str, args: &Map<String, Value>) -> Result<Option<Box<Kind>>, String> {
    match args.get("value_parser") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(p)) => {
            let name = p.get("name").map_or(Some("text"), Value::as_str);
            let sub = match p.get("args") {
                None => Map::new(),
                Some(Value::Object(a)) => a.clone(),
                Some(_) => return Err(format!("{scope}: value_parser args must be a dict")),
            };
            match name {
                Some(n @ ("text" | "json")) => Ok(Some(Box::new(kind(scope, n, &sub)?))),
                _ => Err(format!(
                    "{scope}: llm-render runs value_parser text or json only"
                )),
            }
        }
        Some(_) => Err(format!("{scope}: value_parser must be a dict")),
    }
}

/// vLLM's `validate_transform_strings`: a string is a whole `{placeholder}` or plain text.
fn check_transform(scope: &str, t: &Value) -> Result<(), String> {
    match t {
        Value::Object(m) => m.values().try_for_each(|v| check_transform(scope, v)),
        Value::Array(a) => a.iter().try_for_each(|v| check_transform(scope, v)),
        Value::String(s) => {
            if placeholder(s).is_none() && contains_placeholder(s) {
                return Err(format!(
                    "{scope}: transform string {s:?} mixes a {{placeholder}} with literal text"
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The dotted path of a whole-string `{a.b}` placeholder (`\{(\w+(?:\.\w+)*)\}`).
pub(crate) fn placeholder(s: &str) -> Option<&str> {
    let inner = s.strip_prefix('{')?.strip_suffix('}')?;
    let ok = !inner.is_empty()
        && inner
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(word));
    ok.then_some(inner)
}

fn contains_placeholder(s: &str) -> bool {
    s.match_indices('{').any(|(i, _)| {
        s[i + 1..]
            .find('}')
            .is_some_and(|j| placeholder(&s[i..i + 1 + j + 1]).is_some())
    })
}

/// A region's delimiter from a literal key (a string or a list of them) or a pattern key.
fn anchor(
    scope: &str,
    f: &Map<String, Value>,
    literal_key: &str,
    pattern_key: &str,
) -> Result<Option<Delim>, String> {
    if f.contains_key(literal_key) && f.contains_key(pattern_key) {
        return Err(format!(
            "{scope}: cannot specify both '{literal_key}' and '{pattern_key}'"
        ));
    }
    if let Some(raw) = f.get(literal_key) {
        let mut literals: Vec<String> = match raw {
            Value::String(s) => vec![s.clone()],
            Value::Array(list) if list.is_empty() => {
                return Err(format!(
                    "{scope}: '{literal_key}' list must contain at least one literal"
                ))
            }
            Value::Array(list) => {
                let mut out: Vec<String> = Vec::new();
                for v in list {
                    let s = v.as_str().ok_or_else(|| {
                        format!("{scope}: '{literal_key}' list must contain only strings")
                    })?;
                    if !out.iter().any(|o| o == s) {
                        out.push(s.to_string());
                    }
                }
                out
            }
            _ => {
                return Err(format!(
                    "{scope}: '{literal_key}' must be a string or list of strings"
                ))
            }
        };
        if literals.iter().any(String::is_empty) {
            return Err(format!(
                "{scope}: '{literal_key}' literals cannot be empty strings"
            ));
        }
        return literal_delim(scope, literal_key, &mut literals).map(Some);
    }
    let Some(raw) = f.get(pattern_key) else {
        return Ok(None);
    };
    let pattern = raw
        .as_str()
        .ok_or_else(|| format!("{scope}: invalid {pattern_key} regex: not a string"))?;
    pattern_delim(scope, pattern_key, pattern).map(Some)
}

fn literal_delim(scope: &str, key: &str, literals: &mut Vec<String>) -> Result<Delim, String> {
    let extends = literals
        .iter()
        .any(|a| literals.iter().any(|b| a != b && a.starts_with(b.as_str())));
    if extends {
        return Err(format!(
            "{scope}: '{key}' lists a literal that is a prefix of another; llm-render does \
             not run such lists (vLLM's matching of them depends on the chunking)"
        ));
    }
    // Longest first, stable (vLLM's alternation order).
    literals.sort_by_key(|s| std::cmp::Reverse(s.len()));
    Ok(Delim::Literals(std::mem::take(literals)))
}

#[cfg(test)]
mod tests {
    use super::super::check_response_template;
    use super::*;
    use serde_json::json;

    #[test]
    fn serving_checks_are_vllms() {
        let base = json!({"start_anchor": "A", "fields": {
            "thinking": {"open": "<t>", "close": "</t>"},
            "tool_calls": {"open": "<c>", "close": "</c>", "content": "json"}}});
        let t = ResponseTemplate::from_json(&base).unwrap();
        assert!(t.has_thinking() && t.has_tool_calls());
        // A content sink is added, as vLLM's streaming form adds one.
        assert_eq!(t.implicit, t.field(CONTENT));
        let mut bad = base.clone();
        bad["fields"]["thinking"]["content"] = json!("json");
        assert!(ResponseTemplate::from_json(&bad)
            .unwrap_err()
            .contains("cannot be streamed"));
        let mut bad = base.clone();
        bad["fields"]["answer"] = json!({"open": "<a>"});
        assert!(ResponseTemplate::from_json(&bad)
            .unwrap_err()
            .contains("unsupported semantic fields"));
        assert!(check_response_template(None, true, false)
            .unwrap_err()
            .contains("requires `response_template`"));
        let mut no_tools = base.clone();
        no_tools["fields"]
            .as_object_mut()
            .unwrap()
            .remove("tool_calls");
        assert!(check_response_template(Some(&no_tools), false, true)
            .unwrap_err()
            .contains("tool_calls field"));
        let mut prefix_list = base;
        prefix_list["fields"]["thinking"]["close"] = json!(["</t>", "</t>x"]);
        assert!(ResponseTemplate::from_json(&prefix_list).is_err());
    }
}
