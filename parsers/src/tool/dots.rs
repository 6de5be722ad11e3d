//! dots (`dots`) tool calls, checked against vLLM's `DotsToolParser`
//! (`vllm/tool_parsers/dots_tool_parser.py`, the same in 0.32 and 0.33). The wire format:
//!
//! ```text
//! Let me check.
//! <dots_function_call>
//! <invoke name="get_weather">
//! <parameter name="city">Paris</parameter>
//! </invoke>
//! </dots_function_call>
//! ```
//!
//! A block holds one or more `invoke`s (names and keys quoted with `"` or `'`, or bare), or
//! instead one JSON object `{"name", "arguments"|"parameters"}`. As vLLM's one-shot reads it:
//! * each block is read whole at its `</dots_function_call>`; a call to a tool the request
//!   does not declare is dropped, and so is a JSON body that is not an object or whose
//!   arguments are not an object;
//! * values are stripped and typed by dots' own reading of the schema: the parameter's
//!   `type` (the first that is not `null` of a list), else its `$ref` into `$defs`, else its
//!   first `anyOf`/`oneOf`/`allOf` choice that is not `null`; `null` in any case is null;
//!   `integer` is `int()` or the text; `number` a float, an integer when integral, or the
//!   text; `boolean` is true only for `true`/`1`; `string` the text; any other type JSON or
//!   the text. Arguments are written as Python's `json.dumps`;
//! * with a call, the content's outer whitespace is dropped (held while streaming); a block
//!   without a good call is content as written, and so is a block left open.
//!
//! Where we differ (listed in the case file): text between and after the blocks is kept as
//! content, which vLLM's one-shot drops (its stream keeps it).

use super::coerce::{coerce, json_roundtrip, py_float, py_int, Types};
use super::held_content::HeldContent;
use super::{Parsed, Scan, ToolParser, ToolSchemas};
use crate::pyjson::{dumps, dumps_pairs, dumps_str};
use crate::pystr::py_space;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

const BLOCK_START: &str = "<dots_function_call>";
const BLOCK_END: &str = "</dots_function_call>";

/// The state machine for dots' blocks; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DotsParser {
    /// Inside a block, up to its end.
    in_block: bool,
    buf: String,
    /// The block's text after its opener.
    block: String,
    /// Whitespace around the calls.
    #[serde(flatten)]
    held: HeldContent,
    calls: usize,
    #[serde(skip)]
    schemas: Arc<ToolSchemas>,
}

/// A name or key as dots reads it: stripped, one pair of matching quotes dropped.
fn unquote(s: &str) -> &str {
    let s = s.trim_matches(py_space);
    let quoted = s.len() >= 2
        && (s.starts_with('"') && s.ends_with('"') || s.starts_with('\'') && s.ends_with('\''));
    if quoted {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

/// A parameter's type name as dots resolves it (`_resolve_param_type`).
fn resolve_type(schema: &Value, defs: Option<&Value>, depth: usize) -> Option<Value> {
    let obj = schema.as_object().filter(|_| depth <= 10)?;
    if let Some(t) = obj.get("type") {
        return Some(t.clone());
    }
    if let Some(name) = obj
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        let name = name.rsplit('/').next().unwrap_or(name);
        return resolve_type(defs?.get(name)?, defs, depth + 1);
    }
    for keyword in ["anyOf", "oneOf", "allOf"] {
        let Some(choices) = obj.get(keyword).and_then(Value::as_array) else {
            continue;
        };
        for choice in choices {
            if choice.get("type").and_then(Value::as_str) == Some("null") {
                continue;
            }
            if let Some(t) = resolve_type(choice, defs, depth + 1) {
                return Some(t);
            }
        }
    }
    None
}

/// A value typed as dots' `_convert_param_value` types it, as JSON text.
fn convert(value: &str, ty: Option<Value>) -> String {
    if value.to_lowercase() == "null" {
        return "null".into();
    }
    let name = match ty {
        Some(Value::Array(names)) => names
            .iter()
            .find(|n| n.as_str() != Some("null"))
            .map_or("string".into(), |n| {
                n.as_str().map_or(n.to_string(), str::to_string)
            }),
        Some(Value::String(s)) => s,
        Some(other) => other.to_string(),
        None => "string".into(),
    };
    match name.to_lowercase().as_str() {
        "string" | "str" | "text" => dumps_str(value),
        "integer" | "int" => py_int(value).unwrap_or_else(|| dumps_str(value)),
        "number" | "float" => match py_float(value) {
            Some(f) if f.is_finite() => coerce(value, Types::NUMBER),
            _ => dumps_str(value),
        },
        "boolean" | "bool" => {
            let truthy = matches!(value.to_lowercase().as_str(), "true" | "1");
            (if truthy { "true" } else { "false" }).into()
        }
        _ => json_roundtrip(value).unwrap_or_else(|| dumps_str(value)),
    }
}

/// The `name` of an element head (`<invoke name="f">`): the text after `name` and `=`.
fn head_name(head: &str) -> Option<&str> {
    let rest = head.strip_prefix(char::is_whitespace)?.trim_start();
    let rest = rest.strip_prefix("name")?.trim_start();
    rest.strip_prefix('=').map(str::trim_start)
}

/// `<TAG name=…>body</TAG>` elements of `text`, in order: (name, body).
fn elements<'a>(text: &'a str, tag: &str) -> Vec<(&'a str, &'a str)> {
    let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(&open) {
        let after = &rest[at + open.len()..];
        let Some(gt) = after.find('>') else {
            break;
        };
        let Some(name) = head_name(&after[..gt]).filter(|n| !n.is_empty()) else {
            rest = after;
            continue;
        };
        let body = &after[gt + 1..];
        let Some(end) = body.find(&close) else {
            break;
        };
        out.push((name, &body[..end]));
        rest = &body[end + close.len()..];
    }
    out
}

/// A closed block's good calls.
fn parse_block(body: &str, schemas: &ToolSchemas) -> Vec<(String, String)> {
    let body = body.trim_matches(py_space);
    if body.starts_with("<invoke") {
        return elements(body, "invoke")
            .into_iter()
            .filter_map(|(name, params)| {
                let name = unquote(name);
                if !schemas.declares(name) {
                    return None;
                }
                let props = schemas.tool_parameters(name);
                let defs = props.and_then(|p| p.get("$defs"));
                let props = props.and_then(|p| p.get("properties"));
                let mut args: Vec<(String, String)> = Vec::new();
                for (key, value) in elements(params, "parameter") {
                    let key = unquote(key);
                    let ty = props
                        .and_then(|p| p.get(key))
                        .map(|s| resolve_type(s, defs, 0).unwrap_or("string".into()));
                    let json = convert(value.trim_matches(py_space), ty);
                    match args.iter_mut().find(|(k, _)| k == key) {
                        Some(slot) => slot.1 = json,
                        None => args.push((key.to_string(), json)),
                    }
                }
                Some((name.to_string(), dumps_pairs(&args)))
            })
            .collect();
    }
    let Ok(Value::Object(call)) = serde_json::from_str::<Value>(body) else {
        return Vec::new();
    };
    let Some(name) = call.get("name").and_then(Value::as_str) else {
        return Vec::new();
    };
    let args = call.get("arguments").or_else(|| call.get("parameters"));
    let args = match args {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(v) => v.clone(),
    };
    if !schemas.declares(name) || !args.is_object() {
        return Vec::new();
    }
    vec![(name.to_string(), dumps(&args))]
}

impl DotsParser {
    pub fn new(schemas: Arc<ToolSchemas>) -> Self {
        DotsParser {
            in_block: false,
            buf: String::new(),
            block: String::new(),
            held: HeldContent::default(),
            calls: 0,
            schemas,
        }
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        self.schemas = schemas;
    }
}

impl Scan for DotsParser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let mut used = 0;
        loop {
            let rest = &text[used..];
            let marker = if self.in_block {
                BLOCK_END
            } else {
                BLOCK_START
            };
            let Some(at) = rest.find(marker) else {
                let keep = if at_end {
                    0
                } else {
                    crate::partial_suffix(rest, marker)
                };
                let take = &rest[..rest.len() - keep];
                if self.in_block {
                    self.block.push_str(take);
                    if at_end {
                        // Left open: the block is content as written.
                        let block = std::mem::take(&mut self.block);
                        self.held.verbatim(&format!("{BLOCK_START}{block}"), out);
                    }
                } else {
                    self.held.content(take, self.calls, out);
                }
                return text.len() - keep;
            };
            if self.in_block {
                self.block.push_str(&rest[..at]);
                let block = std::mem::take(&mut self.block);
                let calls = parse_block(&block, &self.schemas);
                if calls.is_empty() {
                    self.held
                        .verbatim(&format!("{BLOCK_START}{block}{BLOCK_END}"), out);
                } else {
                    self.held.call_starts();
                }
                for (name, args) in calls {
                    out.start_call(self.calls, name, None);
                    out.args(self.calls, &args);
                    self.calls += 1;
                }
            } else {
                self.held.content(&rest[..at], self.calls, out);
            }
            self.in_block = !self.in_block;
            used += at + marker.len();
        }
    }
}

impl ToolParser for DotsParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        self.held.finish(self.calls, out);
    }
}
