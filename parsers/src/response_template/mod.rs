//! vLLM's `hf` parser (`--reasoning-parser hf`, `--tool-call-parser hf`,
//! `vllm/parser/response_template.py`): reasoning, content and tool calls split by the
//! `response_template` metadata a checkpoint ships in `tokenizer_config.json` (Gemma 4's, for
//! one), not by a format of its own.
//!
//! vLLM runs one machine for both parsers ([`ResponseTemplateParser`], its
//! `ResponseTemplateParser` + `_ResponseStream`), over the prompt's text after its last
//! `start_anchor` and then the output, so a region the prompt opened (a `<think>` the chat
//! template wrote) goes on in the output:
//! * `thinking` text is reasoning when the reasoning parser is `hf`, else content;
//! * `content` text is content;
//! * a `tool_calls` region, with tool parsing on, is held until it closes (or the output
//!   ends) and becomes its calls, each sent whole; a region whose value does not parse, or
//!   whose calls lack a name or arguments, is dropped. With tool parsing off, its text and
//!   delimiters are content.
//!
//! The other delimiters are dropped. [`template`] says which templates llm-render runs; the
//! rest are refused when loaded, never run differently.

mod content;
mod regions;
mod template;

pub use template::{check_response_template, ResponseTemplate};

use crate::tool::coerce::marked;
use crate::tool::{Parsed, ToolParser, ToolSchemas};
use regions::{Event, Regions};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use template::{CONTENT, THINKING, TOOLS};

/// The `hf` parser for one output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResponseTemplateParser {
    template: ResponseTemplate,
    regions: Regions,
    /// `--reasoning-parser hf`: thinking is reasoning (else content).
    reasoning: bool,
    /// `--tool-call-parser hf` on a request that asks for calls: tool regions are calls (else
    /// content).
    calls: bool,
    /// Whether any output was read (vLLM ends the parse only then).
    output: bool,
    done: bool,
    /// Calls sent so far.
    next_call: usize,
    /// The request's tools, which type the calls' arguments; not carried in a stream state
    /// (given back by [`ResponseTemplateParser::set_schemas`]).
    #[serde(skip)]
    schemas: Arc<ToolSchemas>,
}

impl ResponseTemplateParser {
    /// A parser for one output of a prompt whose text (decoded with its special tokens, as
    /// vLLM's `set_prompt_token_ids` decodes it; empty when unknown) is `prompt`.
    pub fn new(
        template: ResponseTemplate,
        prompt: &str,
        schemas: Arc<ToolSchemas>,
        reasoning: bool,
        calls: bool,
    ) -> Self {
        let mut regions = Regions::new(&template);
        regions.prefix(&template, prompt, &|f, body, caps| {
            content::value(f, body, caps, &schemas)
        });
        ResponseTemplateParser {
            template,
            regions,
            reasoning,
            calls,
            output: false,
            done: false,
            next_call: 0,
            schemas,
        }
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        self.schemas = schemas;
    }

    /// Reads the next text: reasoning appended to `reasoning`, content and calls to `out`.
    pub fn push(&mut self, text: &str, reasoning: &mut String, out: &mut Parsed) {
        if self.done {
            return;
        }
        self.output |= !text.is_empty();
        let mut events = Vec::new();
        let schemas = self.schemas.clone();
        self.regions.push(
            &self.template,
            text,
            &|f, body, caps| content::value(f, body, caps, &schemas),
            &mut events,
        );
        self.route(events, reasoning, out);
    }

    /// The end of the output: a region still open is parsed as written.
    pub fn finish(&mut self, reasoning: &mut String, out: &mut Parsed) {
        if std::mem::replace(&mut self.done, true) || !self.output {
            return;
        }
        let mut events = Vec::new();
        let schemas = self.schemas.clone();
        self.regions.finish(
            &self.template,
            &|f, body, caps| content::value(f, body, caps, &schemas),
            &mut events,
        );
        self.route(events, reasoning, out);
    }

    /// vLLM's `_ResponseStream._route`.
    fn route(&mut self, events: Vec<Event>, reasoning: &mut String, out: &mut Parsed) {
        for e in events {
            let field = match &e {
                Event::Open { field, .. }
                | Event::Chunk { field, .. }
                | Event::Close { field, .. } => self.template.fields[*field].name.as_str(),
            };
            match (field, e) {
                (TOOLS, Event::Chunk { text, .. }) if !self.calls => out.content.push_str(&text),
                (TOOLS, Event::Open { delim, .. } | Event::Close { delim, .. }) if !self.calls => {
                    out.content.push_str(&delim)
                }
                (TOOLS, Event::Close { value: Some(v), .. }) => {
                    for (name, arguments) in tool_calls(&v.value, v.exact) {
                        out.start_call(self.next_call, name, None);
                        out.args(self.next_call, &arguments);
                        self.next_call += 1;
                    }
                }
                (THINKING, Event::Chunk { text, .. }) if self.reasoning => {
                    reasoning.push_str(&text)
                }
                (THINKING | CONTENT, Event::Chunk { text, .. }) => out.content.push_str(&text),
                _ => {}
            }
        }
    }
}

/// As a tool parser alone (`--tool-call-parser hf` without the reasoning parser), thinking
/// is content.
impl ToolParser for ResponseTemplateParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        ResponseTemplateParser::push(self, text, &mut String::new(), out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        ResponseTemplateParser::finish(self, &mut String::new(), out);
    }
}

/// vLLM's `_to_tool_calls`: each call's name and arguments (JSON text; an object written as
/// Python's `json.dumps` writes it), or none if any call lacks them. `exact`: the value's
/// marked strings are integers past 64 bits (`content::Valued`).
fn tool_calls(value: &Value, exact: bool) -> Vec<(String, String)> {
    let int = |v: &Value| exact && v.as_str().and_then(marked).is_some();
    let items = match value {
        Value::Array(items) => items.as_slice(),
        one => std::slice::from_ref(one),
    };
    let mut calls = Vec::new();
    for item in items {
        let Some(function) = item.get("function").and_then(Value::as_object) else {
            return Vec::new();
        };
        let name = match function.get("name") {
            Some(Value::String(n)) if !n.is_empty() && !int(&Value::String(n.clone())) => n.clone(),
            _ => return Vec::new(),
        };
        let arguments = match function.get("arguments") {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::String(s)) if !int(&Value::String(s.clone())) => s.clone(),
            Some(v) if exact => {
                let mut out = String::new();
                crate::pyjson::write_json_with(&mut out, v, &marked);
                out
            }
            Some(v) => crate::pyjson::dumps(v),
        };
        calls.push((name, arguments));
    }
    calls
}
