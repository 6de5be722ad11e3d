//! Derender requests (docs/api.md, vLLM's shapes) and the per-request choices they imply: stop
//! settings, detokenizer flags, and which reasoning and tool parsers run.
//!
//! Non-stream: `{"stream": false, "model", "generate_response": {"choices": [{"index",
//! "token_ids", "finish_reason"}]}, "prompt_token_ids", "chat_request"}`.
//! Stream, one POST per engine chunk: `{"stream": true, "model", "generate_chunk":
//! {"choices": [..new ids..]}, "stream_state": null | "<state>", "prompt_token_ids",
//! "chat_request"}`. `/v1/completions/derender` takes `completion_request` in place of
//! `chat_request`. Settings are read from the request on the first chunk and then travel in
//! the state, so later chunks may omit `prompt_token_ids` and the request's `messages`
//! **(ext)**; `tools` are read from every chunk that has them (qwen3_coder and glm45 type
//! values by them).

use super::session::{ChoiceState, Options};
use super::{StateCodec, StopStrings};
use crate::error::RequestError;
use crate::model::Model;
use llm_render_parsers::{
    reasoning_parser, reasoning_parser_for_model, tool_parser, tool_parser_for_model,
    TagReasoningParser, ToolSchemas,
};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;

#[derive(Debug, Clone, Deserialize)]
pub struct GeneratedChoice {
    #[serde(default)]
    pub index: u32,
    pub token_ids: Vec<u32>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GenerateResponse {
    pub choices: Vec<GeneratedChoice>,
    #[serde(default)]
    pub request_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct DerenderRequest {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub stream: bool,
    /// The engine's whole output (non-stream).
    #[serde(default)]
    pub generate_response: Option<GenerateResponse>,
    /// The engine's next chunk (stream).
    #[serde(default)]
    pub generate_chunk: Option<GenerateResponse>,
    #[serde(default)]
    pub stream_state: Option<String>,
    #[serde(default)]
    pub prompt_token_ids: Option<Vec<u32>>,
    #[serde(default)]
    pub chat_request: Option<Map<String, Value>>,
    #[serde(default)]
    pub completion_request: Option<Map<String, Value>>,
}

/// Chat or text completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Chat,
    Completion,
}

/// Server-wide derender settings.
#[derive(Debug, Clone)]
pub struct DerenderConfig {
    /// `--reasoning-parser`: a name, `auto` (by model name) or `none`.
    pub reasoning_parser: String,
    /// `--tool-call-parser`: a name, `auto` (by model name) or `none`.
    pub tool_call_parser: String,
    pub states: Arc<StateCodec>,
}

impl Default for DerenderConfig {
    fn default() -> Self {
        DerenderConfig {
            reasoning_parser: "auto".into(),
            tool_call_parser: "auto".into(),
            states: Arc::new(StateCodec::new(None, 0)),
        }
    }
}

impl DerenderConfig {
    /// The reasoning and tool-call parsers this server runs for `model` (the tool parser
    /// for requests that declare tools), by name: what `auto` resolves to, or the setting.
    pub fn parser_names<'a>(&'a self, model: &str) -> (Option<&'a str>, Option<&'a str>) {
        let reasoning = match self.reasoning_parser.as_str() {
            "none" => None,
            "auto" => reasoning_parser_for_model(model).map(|e| e.name),
            name => Some(name),
        };
        let tools = match self.tool_call_parser.as_str() {
            "none" => None,
            "auto" => tool_parser_for_model(model).map(|e| e.name),
            name => Some(name),
        };
        (reasoning, tools)
    }
}

impl DerenderRequest {
    /// The original request (`chat_request` or `completion_request`); empty if absent.
    pub fn original(&self, kind: Kind) -> &Map<String, Value> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        let req = match kind {
            Kind::Chat => self.chat_request.as_ref(),
            Kind::Completion => self.completion_request.as_ref(),
        };
        req.unwrap_or_else(|| EMPTY.get_or_init(Map::new))
    }

    /// The engine output this request carries.
    pub fn output(&self) -> Result<&GenerateResponse, RequestError> {
        let (field, value) = if self.stream {
            ("generate_chunk", self.generate_chunk.as_ref())
        } else {
            ("generate_response", self.generate_response.as_ref())
        };
        value.ok_or_else(|| {
            RequestError::invalid(
                field,
                format!("`{field}` is required when stream is {}", self.stream),
            )
        })
    }
}

fn flag(req: &Map<String, Value>, key: &str) -> Option<bool> {
    req.get(key).and_then(Value::as_bool)
}

/// Whether the request asks for tool calls to be parsed: it declares tools and does not
/// set `tool_choice: "none"`.
fn wants_tools(req: &Map<String, Value>) -> bool {
    let has_tools = req
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    has_tools && req.get("tool_choice").and_then(Value::as_str) != Some("none")
}

/// The tool schemas of a request (empty without tools).
pub fn schemas(req: &Map<String, Value>) -> Arc<ToolSchemas> {
    let tools = req
        .get("tools")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    Arc::new(ToolSchemas::from_tools(tools))
}

/// The reasoning parser for a request: by the server setting, off when the request turns
/// thinking off (`chat_template_kwargs.enable_thinking: false`, as vLLM's qwen3 parser).
fn reasoning_for(
    setting: &str,
    model: &Model,
    req: &Map<String, Value>,
) -> Option<TagReasoningParser> {
    let thinking_off = req
        .get("chat_template_kwargs")
        .and_then(|k| k.get("enable_thinking"))
        .and_then(Value::as_bool)
        == Some(false);
    if thinking_off {
        return None;
    }
    match setting {
        "none" => None,
        "auto" => reasoning_parser(&model.name),
        name => reasoning_parser(name),
    }
}

/// The tool parser name for a request, if tool calls are parsed.
fn tool_parser_name(setting: &str, model: &Model, req: &Map<String, Value>) -> Option<String> {
    if !wants_tools(req) {
        return None;
    }
    match setting {
        "none" => None,
        "auto" => tool_parser_for_model(&model.name).map(|e| e.name.to_string()),
        name => Some(name.to_string()),
    }
}

/// The settings of a new stream or one-shot request.
pub fn options(
    cfg: &DerenderConfig,
    model: &Model,
    kind: Kind,
    req: &Map<String, Value>,
) -> Options {
    let tools = kind == Kind::Chat && tool_parser_name(&cfg.tool_call_parser, model, req).is_some();
    // Tool markers are often special tokens: with a tool parser they are kept unless the
    // request says otherwise (vLLM's tool parsers set skip_special_tokens=False).
    let skip_special_tokens = flag(req, "skip_special_tokens").unwrap_or(!tools);
    let mut stop_token_ids: Vec<u32> = req
        .get("stop_token_ids")
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(|x| x.as_u64().map(|x| x as u32))
                .collect()
        })
        .unwrap_or_default();
    if !flag(req, "ignore_eos").unwrap_or(false) {
        stop_token_ids.extend(&model.eos_token_ids);
    }
    Options {
        skip_special_tokens,
        stop_token_ids,
    }
}

/// A fresh choice for a request.
pub fn new_choice(
    cfg: &DerenderConfig,
    model: &Model,
    kind: Kind,
    req: &Map<String, Value>,
    index: u32,
) -> ChoiceState {
    let stops: Vec<String> = match req.get("stop") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(v)) => v
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let stops = StopStrings::new(
        stops,
        flag(req, "include_stop_str_in_output").unwrap_or(false),
    );
    if kind == Kind::Completion {
        return ChoiceState::new(index, stops, None, None);
    }
    let reasoning = reasoning_for(&cfg.reasoning_parser, model, req);
    let tools = tool_parser_name(&cfg.tool_call_parser, model, req)
        .and_then(|name| tool_parser(&name, schemas(req)));
    ChoiceState::new(index, stops, reasoning, tools)
}
