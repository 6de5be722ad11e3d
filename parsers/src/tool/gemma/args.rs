//! The arguments of a Gemma call, read into JSON.
//!
//! Gemma 4 (`gemma4`) writes its own literal syntax, not JSON, between the call's braces:
//!
//! ```text
//! city:<|"|>Paris, France<|"|>,days:3,metric:true,opts:{unit:<|"|>C<|"|>,hours:[1,2]}
//! ```
//!
//! Strings are delimited by the `<|"|>` token (and may hold `,`, `{`, newlines), everything
//! else is bare text up to the next `,`, `}` or `]`; keys may be `<|"|>`-quoted; objects and
//! lists nest. As vLLM 0.32/0.33's gemma4 engine (`_parse_gemma4_args` and
//! `_fix_arg_types`), every value is read as a string, then typed by the request's schema:
//! a declared `integer`/`number`/`boolean` (...) is converted as the XML families convert
//! ([`coerce`]); a value of an undeclared tool or parameter, or inside an object whose schema
//! has no `properties` (a list without `items`), stays a string. A key left without a value
//! is `""`; a nested object or list left open is read as far as it goes, its last bare value
//! dropped (it may be cut off). A body that is a JSON object (`{"city": "Paris"}`) is taken
//! as JSON, where vLLM reads it as Gemma text and makes keys such as `"\"city\""`.
//!
//! FunctionGemma (`functiongemma`) writes `key:<escape>value<escape>` pairs, commas
//! optional; as vLLM's `FunctionGemmaToolParser`, a pair is a run of word characters, `:`,
//! and a value up to the next `<escape>`; each value is read as JSON if it is JSON, else
//! kept as a string; text outside pairs is ignored; no schema typing.

use super::super::coerce::{coerce, json_roundtrip};
use super::super::{ToolSchemas, Types};
use crate::pyjson::dumps_str;
use crate::pystr::py_space;
use serde_json::Value;

/// Gemma 4's string delimiter (one token).
pub(super) const STRING_DELIM: &str = "<|\"|>";
/// FunctionGemma's value delimiter (one token).
pub(super) const ESCAPE: &str = "<escape>";
/// What starts a FunctionGemma value, after its key.
const PAIR: &str = ":<escape>";

/// A Gemma value as read: text, an object (keys in first-written order) or a list.
enum GVal {
    Str(String),
    Obj(Vec<(String, GVal)>),
    List(Vec<GVal>),
}

/// Sets `key` as a Python dict does: a repeated key keeps its first place, the last value.
fn insert(fields: &mut Vec<(String, GVal)>, key: String, value: GVal) {
    match fields.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => fields.push((key, value)),
    }
}

fn skip(s: &str, mut i: usize, set: &[u8]) -> usize {
    while i < s.len() && set.contains(&s.as_bytes()[i]) {
        i += 1;
    }
    i
}

/// From `i` just past an opening `open`, the offset just past its matching `close` (or the
/// end); whether it was closed. `<|"|>` strings are skipped.
fn matching(s: &str, mut i: usize, open: u8, close: u8) -> (usize, bool) {
    let b = s.as_bytes();
    let delim = STRING_DELIM.as_bytes();
    let mut depth = 1usize;
    while i < b.len() && depth > 0 {
        // Bytes, not chars: `i` may sit inside a multi-byte character here.
        if b[i..].starts_with(delim) {
            i += delim.len();
            i = b[i..]
                .windows(delim.len())
                .position(|w| w == delim)
                .map_or(b.len(), |e| i + e + delim.len());
            continue;
        }
        if b[i] == open {
            depth += 1;
        } else if b[i] == close {
            depth -= 1;
        }
        i += 1;
    }
    (i, depth == 0)
}

/// A nested object or list starting at `i` (its opening character): the value and the
/// offset after it.
fn nested(s: &str, i: usize) -> (GVal, usize) {
    let (open, close) = if s.as_bytes()[i] == b'{' {
        (b'{', b'}')
    } else {
        (b'[', b']')
    };
    let (end, closed) = matching(s, i + 1, open, close);
    let inner = if closed {
        &s[i + 1..end - 1]
    } else {
        &s[i + 1..end]
    };
    let value = if open == b'{' {
        GVal::Obj(fields(inner, !closed))
    } else {
        GVal::List(items(inner, !closed))
    };
    (value, end)
}

/// A bare value from `i` up to one of `stops`: `None` where reading stops (nothing there, or
/// a partial read's last value, which may be cut off).
fn bare(s: &str, i: usize, stops: &[u8], partial: bool) -> (Option<String>, usize) {
    let b = s.as_bytes();
    let mut j = i;
    while j < s.len() && !stops.contains(&b[j]) {
        j += 1;
    }
    if (partial && j >= s.len()) || j == i {
        return (None, j);
    }
    let raw = s[i..j].trim_matches(py_space);
    if partial && raw.ends_with('.') {
        return (None, j);
    }
    (Some(raw.to_string()), j)
}

/// `key:value,...` (vLLM's `_parse_gemma4_args`). `partial`: an object left open, whose
/// trailing bare value may be cut off.
fn fields(s: &str, partial: bool) -> Vec<(String, GVal)> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        i = skip(s, i, b" ,\n\t");
        if i >= s.len() {
            break;
        }
        let Some(colon) = s[i..].find(':') else {
            break;
        };
        let mut key = s[i..i + colon].trim_matches(py_space);
        if key.starts_with(STRING_DELIM) && key.ends_with(STRING_DELIM) {
            key = key
                .get(STRING_DELIM.len()..key.len().saturating_sub(STRING_DELIM.len()))
                .unwrap_or("");
        }
        let key = key.to_string();
        i = skip(s, i + colon + 1, b" \n\t");
        if i >= s.len() {
            if !partial {
                insert(&mut out, key, GVal::Str(String::new()));
            }
            break;
        }
        if let Some(rest) = s[i..].strip_prefix(STRING_DELIM) {
            let start = i + STRING_DELIM.len();
            match rest.find(STRING_DELIM) {
                Some(e) => {
                    insert(&mut out, key, GVal::Str(rest[..e].to_string()));
                    i = start + e + STRING_DELIM.len();
                }
                None => {
                    let value = if partial {
                        strip_partial_delim(rest)
                    } else {
                        rest
                    };
                    insert(&mut out, key, GVal::Str(value.to_string()));
                    break;
                }
            }
        } else if matches!(s.as_bytes()[i], b'{' | b'[') {
            let (value, end) = nested(s, i);
            insert(&mut out, key, value);
            i = end;
        } else {
            let (value, end) = bare(s, i, b",}]", partial);
            let Some(value) = value else { break };
            insert(&mut out, key, GVal::Str(value));
            i = end;
        }
    }
    out
}

/// `a,b,...` inside a list (vLLM's `_parse_gemma4_array`).
fn items(s: &str, partial: bool) -> Vec<GVal> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        i = skip(s, i, b" ,\n\t");
        if i >= s.len() {
            break;
        }
        if let Some(rest) = s[i..].strip_prefix(STRING_DELIM) {
            match rest.find(STRING_DELIM) {
                Some(e) => {
                    out.push(GVal::Str(rest[..e].to_string()));
                    i += STRING_DELIM.len() + e + STRING_DELIM.len();
                }
                None => {
                    out.push(GVal::Str(rest.to_string()));
                    break;
                }
            }
        } else if matches!(s.as_bytes()[i], b'{' | b'[') {
            let (value, end) = nested(s, i);
            out.push(value);
            i = end;
        } else {
            let (value, end) = bare(s, i, b",]", partial);
            let Some(value) = value else { break };
            out.push(GVal::Str(value));
            i = end;
        }
    }
    out
}

/// `value` without a trailing part of `<|"|>`.
fn strip_partial_delim(value: &str) -> &str {
    (1..STRING_DELIM.len())
        .rev()
        .find(|&k| value.ends_with(&STRING_DELIM[..k]))
        .map_or(value, |k| &value[..value.len() - k])
}

/// Writes `v` as JSON, typed by `schema` (a parameter's schema; `None`: untyped).
fn write(out: &mut String, v: &GVal, schema: Option<&Value>) {
    match v {
        GVal::Str(s) => match schema {
            Some(schema) => out.push_str(&coerce(s, Types::from_schema(schema))),
            None => out.push_str(&dumps_str(s)),
        },
        GVal::Obj(fields) => {
            let props = schema
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object);
            write_fields(out, fields, |k| props.and_then(|p| p.get(k)));
        }
        GVal::List(items) => {
            let item = schema
                .and_then(|s| s.get("items"))
                .filter(|i| i.is_object());
            out.push('[');
            for (n, v) in items.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                write(out, v, item);
            }
            out.push(']');
        }
    }
}

fn write_fields<'s>(
    out: &mut String,
    fields: &[(String, GVal)],
    schema: impl Fn(&str) -> Option<&'s Value>,
) {
    out.push('{');
    for (n, (k, v)) in fields.iter().enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        out.push_str(&dumps_str(k));
        out.push_str(": ");
        write(out, v, schema(k).filter(|s| s.is_object()));
    }
    out.push('}');
}

/// Gemma 4's call body (the text after `{` or `(`, up to `<tool_call|>` or the output's
/// end) as its arguments JSON, typed by `tool`'s schema.
pub(super) fn gemma4_args(body: &str, tool: &str, schemas: &ToolSchemas) -> String {
    let text = body.trim_matches(py_space);
    let opens = text.matches('(').count();
    let closes = text.matches(')').count();
    let text = match text.strip_suffix('}') {
        Some(t) => t,
        None if opens < closes => text.strip_suffix(')').unwrap_or(text),
        None => text,
    };
    if text.starts_with('"') {
        if let Some(json) = json_roundtrip(&format!("{{{text}}}")) {
            return json;
        }
    }
    let fields = fields(text, false);
    let mut out = String::new();
    // vLLM types nothing for a tool the request does not declare with parameters.
    let typed = schemas.declares_params(tool);
    write_fields(&mut out, &fields, |k| {
        typed.then(|| schemas.param_schema(tool, k)).flatten()
    });
    out
}

/// FunctionGemma's call body (between `{` and `}`) as its arguments JSON.
pub(super) fn functiongemma_args(body: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut raw: Vec<(String, String)> = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find(PAIR) {
        let key_start = rest[..at]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| word(c))
            .last()
            .map(|(i, _)| i);
        let after = &rest[at + PAIR.len()..];
        let Some(key_start) = key_start else {
            rest = after;
            continue;
        };
        let Some(end) = after.find(ESCAPE) else {
            break;
        };
        let key = rest[key_start..at].to_string();
        let value = &after[..end];
        let json = json_roundtrip(value).unwrap_or_else(|| dumps_str(value));
        match raw.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = json,
            None => raw.push((key, json)),
        }
        rest = &after[end + ESCAPE.len()..];
    }
    let mut out = String::from("{");
    for (n, (k, v)) in raw.iter().enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        out.push_str(&dumps_str(k));
        out.push_str(": ");
        out.push_str(v);
    }
    out.push('}');
    out
}
