//! Tool-call parsers: generated text → content plus OpenAI-shaped tool calls.
//!
//! Every family is a state machine fed text as it is generated. Calls come out as
//! [`ToolCallDelta`]s: the first delta of a call carries its `name` (and `id` where the model
//! writes one, as Kimi K2 does), later deltas carry `arguments` fragments. Concatenated, the
//! fragments of one call are its final `arguments` JSON string, so every streamed prefix is a
//! prefix of the final string (OpenAI's streaming semantics).
//!
//! Arguments written by the model as JSON (hermes, longcat, llama3_json, mistral, deepseek,
//! kimi_k2) are passed through as written, from the first byte of the value to its last (a
//! JSON string holding an object is unwrapped into it); such a call is held until it ends
//! and sent whole, name and arguments in one delta, only if its arguments are valid JSON.
//! Arguments written as XML parameters (qwen3_coder and its kin, glm45) or Python call
//! syntax (pythonic) are built here as a JSON object, so they are valid by construction and
//! stream as they are read.
//!
//! Malformed output: text that opens a call but turns out not to be one before the call's
//! name is known (for example `<tool_call>not json</tool_call>`) stays content, verbatim. A
//! JSON call whose arguments are broken or cut off is dropped, as vLLM's one-shot parsers
//! drop it; the good calls around it stay. vLLM's stream, which has sent the name by then,
//! sends the broken arguments too: no client should get arguments its JSON reader rejects,
//! and holding the call is what keeps the stream equal to the one-shot result.

pub(crate) mod coerce;
mod cohere;
mod dots;
mod engine_content;
mod forced;
mod forced_list;
mod gemma;
mod held_content;
mod hy_types;
mod hy_v4;
mod inkling;
mod json_scan;
mod k2_horizon;
mod kimi_k3;
mod marked;
mod minicpm5;
mod minimax_m3;
mod minimax_m3_args;
mod muse;
mod pythonic;
mod pythonic_block;
mod step3;
mod xml;

pub use coerce::Types;
pub use cohere::CohereParser;
pub use dots::DotsParser;
pub use forced::ForcedCallParser;
pub use gemma::{GemmaFamily, GemmaParser};
pub use hy_v4::HyV4Parser;
pub use inkling::InklingParser;
pub use k2_horizon::K2HorizonParser;
pub use kimi_k3::KimiK3Parser;
pub use marked::{MarkedFamily, MarkedParser};
pub use minicpm5::Minicpm5Parser;
pub use minimax_m3::MinimaxM3Parser;
pub use muse::MuseParser;
pub use pythonic::PythonicParser;
pub use pythonic_block::{BlockFamily, PythonicBlockParser};
pub use step3::Step3Parser;
pub use xml::{XmlFamily, XmlParser};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

/// One piece of one tool call, in stream order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallDelta {
    /// The call's position among this output's calls (0-based).
    pub index: usize,
    /// The call id, when the model wrote one (Kimi K2); otherwise the server assigns one.
    pub id: Option<String>,
    /// Set on a call's first delta only.
    pub name: Option<String>,
    /// The next fragment of the arguments JSON string (may be empty).
    pub arguments: String,
}

/// A finished tool call: the deltas of one index folded together.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: Option<String>,
    pub name: String,
    pub arguments: String,
}

/// What a tool parser appends: content deltas and tool-call deltas.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub content: String,
    pub calls: Vec<ToolCallDelta>,
}

impl Parsed {
    pub fn is_empty(&self) -> bool {
        self.content.is_empty() && self.calls.is_empty()
    }

    /// Folds the deltas into whole calls, by index.
    pub fn tool_calls(&self) -> Vec<ToolCall> {
        let mut out: Vec<ToolCall> = Vec::new();
        for d in &self.calls {
            if out.len() <= d.index {
                out.resize(d.index + 1, ToolCall::default());
            }
            let call = &mut out[d.index];
            if let Some(name) = &d.name {
                call.name.clone_from(name);
            }
            if d.id.is_some() {
                call.id.clone_from(&d.id);
            }
            call.arguments.push_str(&d.arguments);
        }
        out
    }

    /// Appends an arguments fragment to call `index`, merging with the previous delta of the
    /// same call so a chunk carries one delta per call.
    pub(crate) fn args(&mut self, index: usize, text: &str) {
        if text.is_empty() {
            return;
        }
        match self.calls.last_mut() {
            Some(last) if last.index == index => last.arguments.push_str(text),
            _ => self.calls.push(ToolCallDelta {
                index,
                arguments: text.to_string(),
                ..Default::default()
            }),
        }
    }

    pub(crate) fn start_call(&mut self, index: usize, name: String, id: Option<String>) {
        self.calls.push(ToolCallDelta {
            index,
            id,
            name: Some(name),
            arguments: String::new(),
        });
    }
}

/// The buffering every tool parser shares: text arrives in `buf`, `run` consumes what it
/// can decide, and the rest (a possibly partial marker) waits for the next chunk.
pub(crate) trait Scan {
    fn buf(&mut self) -> &mut String;

    /// Consumes as much of `text` as can be decided; returns the bytes consumed.
    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize;

    /// Appends `text` and runs over the buffer.
    fn feed(&mut self, text: &str, out: &mut Parsed) {
        self.buf().push_str(text);
        self.drive(false, out);
    }

    /// Runs over the buffer, keeping the unconsumed tail in place (no new allocation).
    fn drive(&mut self, at_end: bool, out: &mut Parsed) {
        let mut text = std::mem::take(self.buf());
        let used = self.run(&text, at_end, out).min(text.len());
        text.drain(..used);
        *self.buf() = text;
    }
}

/// A tool-call parser: fed generated text, appends deltas to a [`Parsed`].
pub trait ToolParser {
    fn push(&mut self, text: &str, out: &mut Parsed);
    fn finish(&mut self, out: &mut Parsed);
}

/// The request's tools, as the parsers need them: each function's parameter types (from
/// `parameters.properties.<name>`, see [`Types::from_schema`]), used by the XML formats to
/// type values.
#[derive(Debug, Clone, Default)]
pub struct ToolSchemas {
    types: HashMap<String, HashMap<String, Types>>,
    /// Each function's parameter schemas as written, for the families that read them their
    /// own way (hy_v4).
    raw: HashMap<String, HashMap<String, Value>>,
    /// Each function's `parameters` schema whole, for the families that resolve `$defs`
    /// (dots).
    parameters: HashMap<String, Value>,
    /// Each function's `required` parameters.
    required: HashMap<String, Vec<String>>,
}

impl ToolSchemas {
    /// From an OpenAI `tools` array (`[{"type": "function", "function": {"name", "parameters"}}]`);
    /// entries it cannot read are ignored.
    pub fn from_tools(tools: &[Value]) -> Self {
        let mut types = HashMap::new();
        let mut raw = HashMap::new();
        let mut parameters = HashMap::new();
        let mut required = HashMap::new();
        for tool in tools {
            let Some(f) = tool.get("function").and_then(Value::as_object) else {
                continue;
            };
            let Some(name) = f.get("name").and_then(Value::as_str) else {
                continue;
            };
            if let Some(p) = f.get("parameters") {
                parameters.insert(name.to_string(), p.clone());
            }
            let props = f
                .get("parameters")
                .and_then(|p| p.get("properties"))
                .and_then(Value::as_object);
            let params = props
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), Types::from_schema(v)))
                .collect();
            types.insert(name.to_string(), params);
            let names = f
                .get("parameters")
                .and_then(|p| p.get("required"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
            required.insert(name.to_string(), names);
            let schemas = props.into_iter().flatten();
            raw.insert(
                name.to_string(),
                schemas.map(|(k, v)| (k.clone(), v.clone())).collect(),
            );
        }
        ToolSchemas {
            types,
            raw,
            parameters,
            required,
        }
    }

    /// Whether the request declares a tool named `name` (vLLM's parsers that keep only
    /// declared tools, as dots).
    pub fn declares(&self, name: &str) -> bool {
        self.types.contains_key(name)
    }

    /// A function's `parameters` schema as the request wrote it.
    pub fn tool_parameters(&self, name: &str) -> Option<&Value> {
        self.parameters.get(name)
    }

    /// Whether a call to `name` may be sent: the request declares that tool, or declares none
    /// (vLLM's `_is_valid_tool_name`, for the parsers that validate names).
    pub fn allows(&self, name: &str) -> bool {
        self.types.is_empty() || self.types.contains_key(name)
    }

    /// The declared types of a parameter; `None` when the tool or the parameter is not
    /// declared.
    pub fn param_types(&self, tool: &str, param: &str) -> Option<Types> {
        self.types.get(tool)?.get(param).copied()
    }

    /// Whether the request declares no tools.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// The parameter names `tool` declares (`parameters.properties`), in no order.
    pub fn params(&self, tool: &str) -> Vec<String> {
        self.raw
            .get(tool)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The parameters `tool` declares `required`.
    pub fn required(&self, tool: &str) -> &[String] {
        self.required.get(tool).map_or(&[], Vec::as_slice)
    }

    /// Whether the request declares `tool` with at least one parameter.
    pub fn declares_params(&self, tool: &str) -> bool {
        self.types.get(tool).is_some_and(|p| !p.is_empty())
    }

    /// A parameter's schema as the request wrote it; `None` when the tool or the parameter
    /// is not declared.
    pub fn param_schema(&self, tool: &str, param: &str) -> Option<&Value> {
        self.raw.get(tool)?.get(param)
    }
}

/// Longest tool name a parser accepts; anything longer is not a call.
pub(crate) const MAX_NAME: usize = 256;

/// Where a call name being read must be given up: the offset in `more` of the first
/// character that is `bad` or that takes the name (already `have` bytes) past `limit` bytes.
/// Position-exact, so every chunking gives up at the same character.
pub(crate) fn name_cut(
    have: usize,
    more: &str,
    limit: usize,
    bad: fn(char) -> bool,
) -> Option<usize> {
    let mut len = have;
    for (i, c) in more.char_indices() {
        len += c.len_utf8();
        if bad(c) || len > limit {
            return Some(i);
        }
    }
    None
}
