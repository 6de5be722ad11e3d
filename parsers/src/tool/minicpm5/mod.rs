//! MiniCPM5 (`minicpm5`) tool calls, checked against vLLM 0.32's `MiniCPM5XMLToolParser`
//! (`vllm/tool_parsers/minicpm5xml_tool_parser.py`). The wire format, bare in the text:
//!
//! ```text
//! text<function name="get_weather"><param name="city">Paris</param><param name="days">2</param></function>text
//! ```
//!
//! A block runs from `<function` to the next `</function>`; it is held until it ends and read
//! as [`read`] describes (the collapsed `<functionname=`/`<paramname=` and byte-level
//! `Ġ`/`Ċ` spellings normalized first, as vLLM does). As vLLM's one-shot path, a block is a
//! call only if it passes the request's schema: its tool is declared; no parameter is
//! without a name or written twice; every `required` parameter is there. Parameters the tool
//! does not declare are dropped (all kept for a tool declaring none); a `properties` or
//! `arguments` parameter the tool does not declare is read as an object whose declared keys
//! are the arguments. A value of a parameter declared `"type": "string"` is kept as written;
//! any other is read as JSON, else as a Python literal, else kept as a string. A block that
//! fails is content, verbatim; so is a block cut off by the output's end.
//!
//! Where we differ from vLLM (listed in the case file): the text around calls is content as
//! written, as vLLM streams it; its one-shot drops all of it when a call is found (and
//! otherwise strips it and cuts it at a `</think>`). vLLM's stream sends a call's name and
//! arguments before the block is checked (then the block again as content when it fails,
//! and an open `{` for a block cut off); a call is sent here only once its block passes.
//! vLLM's table of aliases for some τ-bench tool names is not applied.

mod read;

use super::coerce::loose;
use super::{Parsed, Scan, ToolParser, ToolSchemas};
use crate::partial_suffix;
use crate::pyjson::{dumps, dumps_pairs, dumps_str};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

const START: &str = "<function";
const END: &str = "</function>";

/// The state machine for MiniCPM5's format; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Minicpm5Parser {
    buf: String,
    /// Inside a block: its text after `<function`, so far.
    in_block: bool,
    block: String,
    calls: usize,
    #[serde(skip)]
    schemas: Arc<ToolSchemas>,
}

/// MiniCPM5's other spellings, as vLLM normalizes them (`_normalize_model_output`).
fn normalized(block: &str) -> String {
    block
        .replace('\u{120}', " ")
        .replace('\u{10a}', "\n")
        .replace("<functionname=", "<function name=")
        .replace("<paramname=", "<param name=")
}

impl Minicpm5Parser {
    pub fn new(schemas: Arc<ToolSchemas>) -> Self {
        Minicpm5Parser {
            buf: String::new(),
            in_block: false,
            block: String::new(),
            calls: 0,
            schemas,
        }
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        self.schemas = schemas;
    }

    /// Whether `param` of `tool` is declared `"type": "string"` exactly.
    fn is_string(&self, tool: &str, param: &str) -> bool {
        self.schemas
            .param_schema(tool, param)
            .and_then(|s| s.get("type"))
            .and_then(Value::as_str)
            == Some("string")
    }

    /// A parameter's value as JSON: `text` as written for a string parameter, else read.
    fn value(&self, tool: &str, key: &str, text: &str) -> String {
        if self.is_string(tool, key) {
            dumps_str(text)
        } else {
            loose(text)
        }
    }

    /// A wrapped value (already read): a string parameter gets it as a string, JSON text
    /// for a non-string; others get it as it is, a string read again.
    fn wrapped_value(&self, tool: &str, key: &str, v: &Value) -> String {
        match v {
            Value::String(s) if !self.is_string(tool, key) => loose(s),
            Value::String(s) => dumps_str(s),
            v if self.is_string(tool, key) => dumps_str(&dumps(v)),
            v => dumps(v),
        }
    }

    /// The call a block makes: its name and arguments JSON; `None` when it fails.
    fn call(&self, block: &str) -> Option<(String, String)> {
        let (name, params) = read::read_block(&normalized(block))?;
        if self.schemas.is_empty() || !self.schemas.allows(&name) {
            return None;
        }
        let declared = self.schemas.params(&name);
        let mut args: Vec<(String, String)> = Vec::new();
        for (key, text) in params {
            let key = key?;
            let wrapper = (key == "properties" || key == "arguments")
                && !declared.is_empty()
                && !declared.contains(&key);
            if wrapper {
                let parsed: Value = serde_json::from_str(&loose(&text)).ok()?;
                let Value::Object(map) = parsed else {
                    return None;
                };
                let mut added = false;
                for (k, v) in &map {
                    if !declared.contains(k) {
                        continue;
                    }
                    if args.iter().any(|(a, _)| a == k) {
                        return None;
                    }
                    args.push((k.clone(), self.wrapped_value(&name, k, v)));
                    added = true;
                }
                if !added {
                    return None;
                }
                continue;
            }
            if !declared.is_empty() && !declared.contains(&key) {
                continue;
            }
            if args.iter().any(|(a, _)| *a == key) {
                return None;
            }
            let value = self.value(&name, &key, &text);
            args.push((key, value));
        }
        let required = self.schemas.required(&name);
        if !required.iter().all(|r| args.iter().any(|(a, _)| a == r)) {
            return None;
        }
        Some((name, dumps_pairs(&args)))
    }

    fn end_block(&mut self, out: &mut Parsed) {
        self.in_block = false;
        let block = format!("{START}{}{END}", std::mem::take(&mut self.block));
        match self.call(&block) {
            Some((name, args)) => {
                out.start_call(self.calls, name, None);
                out.args(self.calls, &args);
                self.calls += 1;
            }
            None => out.content.push_str(&block),
        }
    }
}

impl Scan for Minicpm5Parser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let mut used = 0;
        loop {
            let rest = &text[used..];
            let marker = if self.in_block { END } else { START };
            match rest.find(marker) {
                Some(at) if self.in_block => {
                    self.block.push_str(&rest[..at]);
                    used += at + END.len();
                    self.end_block(out);
                }
                Some(at) => {
                    out.content.push_str(&rest[..at]);
                    used += at + START.len();
                    self.in_block = true;
                }
                None => {
                    let keep = if at_end {
                        0
                    } else {
                        partial_suffix(rest, marker)
                    };
                    let n = rest.len() - keep;
                    if self.in_block {
                        self.block.push_str(&rest[..n]);
                    } else {
                        out.content.push_str(&rest[..n]);
                    }
                    return used + n;
                }
            }
        }
    }
}

impl ToolParser for Minicpm5Parser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        self.drive(true, out);
        if self.in_block {
            // Cut off: not a call.
            self.in_block = false;
            out.content.push_str(START);
            out.content.push_str(&std::mem::take(&mut self.block));
        }
    }
}
