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
pub use crate::protocol::{GenerateResponse, GeneratedChoice};
use llm_render_parsers::tool::ForcedCallParser;
use llm_render_parsers::{
    is_response_template, reasoning_parser_for_model, reasoning_parser_with,
    response_template_parser, tool_parser_for_model, tool_parser_with, AnyToolParser,
    HarmonyParser, ParserSettings, TagReasoningParser, ToolGrammar, ToolSchemas, HARMONY_REASONING,
    HARMONY_TOOLS,
};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;

/// `prompt_tokens`: the prompt's token count for `usage`: one (chat, streams), or one per
/// engine response (completions).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum PromptTokens {
    One(u64),
    Many(Vec<u64>),
}

/// `prompt_token_ids`: one prompt's IDs (chat, streams), or one list (or null) per engine
/// response (completions).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum PromptTokenIds {
    One(Vec<u32>),
    Many(Vec<Option<Vec<u32>>>),
}

#[derive(Debug, Clone, Deserialize)]
pub struct DerenderRequest {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub stream: bool,
    /// The engine's whole output (non-stream chat; a completion with one prompt **(ext)**).
    #[serde(default)]
    pub generate_response: Option<GenerateResponse>,
    /// The engine's whole outputs, one per prompt (non-stream completions, vLLM's shape).
    #[serde(default)]
    pub generate_responses: Option<Vec<GenerateResponse>>,
    /// The engine's next chunk (stream).
    #[serde(default)]
    pub generate_chunk: Option<GenerateResponse>,
    /// The previous chunk's state (`vllm_state.rs`): vLLM's object, with or without our
    /// signed field, or the signed string alone **(ext)**.
    #[serde(default)]
    pub stream_state: Option<Value>,
    #[serde(default)]
    pub prompt_tokens: Option<PromptTokens>,
    #[serde(default)]
    pub prompt_token_ids: Option<PromptTokenIds>,
    #[serde(default)]
    pub chat_request: Option<Map<String, Value>>,
    #[serde(default)]
    pub completion_request: Option<Map<String, Value>>,
    /// **(ext)** `/v1/messages/derender`: the Anthropic Messages request (its `messages`
    /// may be left out); the server converts it into `chat_request`.
    #[serde(default)]
    pub messages_request: Option<Map<String, Value>>,
    /// **(ext)** `/v1/responses/derender`: the Responses request (its `input` may be left
    /// out); converted into `chat_request`, its settings echoed in the response.
    #[serde(default)]
    pub responses_request: Option<Map<String, Value>>,
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
    /// `--max-logprobs`: the most alternatives one logprobs entry may carry (`None`:
    /// unbounded), as vLLM's flag of that name (default 20).
    pub max_logprobs: Option<usize>,
    /// `--derender-replay-state`: stream states also carry vLLM's replay fields
    /// (`output_token_ids`, `output_chunk_lens`; O(n) bytes) where parsers or stop strings
    /// run, so a client that keeps only vLLM's fields still resumes exactly.
    pub replay_state: bool,
    /// `--default-chat-template-kwargs`: the parsers' settings under a request's own, as
    /// vLLM's derender merges them (`OnlineDerenderer`, `with_defaults`).
    pub default_chat_template_kwargs: Arc<Map<String, Value>>,
}

impl Default for DerenderConfig {
    fn default() -> Self {
        DerenderConfig {
            reasoning_parser: "auto".into(),
            tool_call_parser: "auto".into(),
            states: Arc::new(StateCodec::new(None, 0)),
            max_logprobs: Some(20),
            replay_state: false,
            default_chat_template_kwargs: Default::default(),
        }
    }
}

impl DerenderConfig {
    /// Whether a parser is set by name (`--reasoning-parser` or `--tool-call-parser` other
    /// than `auto` and `none`): vLLM's configured parser, under whose rules a chat derender
    /// needs `chat_request` (and a stream chunk `prompt_token_ids`).
    pub fn names_a_parser(&self) -> bool {
        [&self.reasoning_parser, &self.tool_call_parser]
            .iter()
            .any(|s| !matches!(s.as_str(), "auto" | "none"))
    }

    /// The reasoning and tool-call parsers this server runs for `model` (the tool parser
    /// for requests that declare tools), by name: what `auto` resolves to, or the setting.
    /// A Harmony model (gpt-oss) gets gpt-oss's two parsers under `auto`, whatever its name.
    pub fn parser_names<'a>(&'a self, model: &Model) -> (Option<&'a str>, Option<&'a str>) {
        let reasoning = match self.reasoning_parser.as_str() {
            "none" => None,
            "auto" => {
                reasoning_parser_for_model(model.auto_parser_key(HARMONY_REASONING)).map(|e| e.name)
            }
            name => Some(name),
        };
        let tools = match self.tool_call_parser.as_str() {
            "none" => None,
            "auto" => tool_parser_for_model(model.auto_parser_key(HARMONY_TOOLS)).map(|e| e.name),
            name => Some(name),
        };
        (reasoning, tools)
    }

    /// Why [`DerenderConfig::parser_names`] gives what it gives (`/v1/models`).
    pub fn parsers_chosen_by(&self, model: &Model) -> Option<String> {
        let settings = [&self.reasoning_parser, &self.tool_call_parser];
        let mut why = Vec::new();
        if settings
            .iter()
            .any(|s| !matches!(s.as_str(), "auto" | "none"))
        {
            why.push("--reasoning-parser / --tool-call-parser".to_string());
        }
        if settings.iter().any(|s| s.as_str() == "auto") {
            if let Some(h) = &model.harmony {
                why.push(format!("gpt-oss: {}", h.detected_by));
            } else {
                let name = model.name.to_ascii_lowercase();
                let reasoning = reasoning_parser_for_model(&name)
                    .map(|e| (e.name, e.model_patterns))
                    .filter(|_| self.reasoning_parser == "auto");
                let tools = tool_parser_for_model(&name)
                    .map(|e| (e.name, e.model_patterns))
                    .filter(|_| self.tool_call_parser == "auto");
                for (parser, patterns) in reasoning.into_iter().chain(tools) {
                    let hit = patterns
                        .iter()
                        .find(|p| name.contains(*p))
                        .unwrap_or(&parser);
                    why.push(format!("{parser}: the model name contains {hit:?}"));
                }
            }
        }
        let (reasoning, tools) = self.parser_names(model);
        (reasoning.is_some() || tools.is_some()).then(|| why.join("; "))
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

    /// The field the client sent the original chat request in (what a refusal of its
    /// settings is named under).
    pub fn original_field(&self) -> &'static str {
        if self.messages_request.is_some() {
            "messages_request"
        } else if self.responses_request.is_some() {
            "responses_request"
        } else {
            "chat_request"
        }
    }

    /// The engine chunk of a stream request.
    pub fn chunk(&self) -> Result<&GenerateResponse, RequestError> {
        self.generate_chunk.as_ref().ok_or_else(|| {
            RequestError::invalid(
                "generate_chunk",
                "`generate_chunk` is required when stream is true",
            )
        })
    }

    /// The engine outputs of a whole (non-stream) request, with the field each came from:
    /// chat takes one `generate_response`; completions take vLLM's `generate_responses`, one
    /// per prompt, or **(ext)** one `generate_response`.
    pub fn responses(
        &self,
        kind: Kind,
    ) -> Result<(&'static str, &[GenerateResponse]), RequestError> {
        match (kind, &self.generate_response, &self.generate_responses) {
            (_, Some(_), Some(_)) => Err(RequestError::invalid(
                "generate_responses",
                "pass one of `generate_response` and `generate_responses`, not both",
            )),
            (Kind::Chat, _, Some(_)) => Err(RequestError::invalid(
                "generate_responses",
                "chat derender takes one `generate_response`",
            )),
            (_, Some(one), None) => Ok(("generate_response", std::slice::from_ref(one))),
            (Kind::Completion, None, Some(list)) if list.is_empty() => Err(RequestError::invalid(
                "generate_responses",
                "generate_responses must not be empty",
            )),
            (Kind::Completion, None, Some(list)) => Ok(("generate_responses", list)),
            (Kind::Chat, None, None) => Err(RequestError::invalid(
                "generate_response",
                "`generate_response` is required when stream is false",
            )),
            (Kind::Completion, None, None) => Err(RequestError::invalid(
                "generate_responses",
                "`generate_responses` is required when stream is false",
            )),
        }
    }

    /// The prompt IDs of response `i` of `n`: the request's `prompt_token_ids` (one list, or
    /// the `i`-th of a list per response), else what the engine echoed.
    pub fn prompt_ids<'a>(&'a self, i: usize, response: &'a GenerateResponse) -> Option<&'a [u32]> {
        let given = match &self.prompt_token_ids {
            Some(PromptTokenIds::One(ids)) => Some(ids.as_slice()),
            Some(PromptTokenIds::Many(list)) => list.get(i).and_then(|l| l.as_deref()),
            None => None,
        };
        given.or(response.prompt_token_ids.as_deref())
    }

    /// `prompt_tokens` as the request gives it for response `i`.
    pub fn given_prompt_count(&self, i: usize) -> Option<u64> {
        match &self.prompt_tokens {
            Some(PromptTokens::One(n)) => Some(*n),
            Some(PromptTokens::Many(list)) => list.get(i).copied(),
            None => None,
        }
    }

    /// `usage.prompt_tokens` of response `i`: `prompt_tokens` as vLLM reads it, else **(ext)**
    /// the length of its prompt IDs, else 0.
    pub fn prompt_count(&self, i: usize, response: &GenerateResponse) -> usize {
        self.given_prompt_count(i).map_or_else(
            || self.prompt_ids(i, response).map_or(0, <[u32]>::len),
            |n| n as usize,
        )
    }

    /// The per-response lists match the responses in length (vLLM's validator), and every
    /// prompt fits the model's context.
    pub fn check_prompts(&self, n: usize, max_model_len: Option<u64>) -> Result<(), RequestError> {
        let lens = |field: &str, len: usize| -> Result<(), RequestError> {
            if len != n {
                return Err(RequestError::invalid(
                    field,
                    format!("{field} length ({len}) must equal generate_responses length ({n})"),
                ));
            }
            Ok(())
        };
        if let Some(PromptTokens::Many(list)) = &self.prompt_tokens {
            lens("prompt_tokens", list.len())?;
        }
        let prompts: Vec<&[u32]> = match &self.prompt_token_ids {
            Some(PromptTokenIds::One(ids)) => vec![ids],
            Some(PromptTokenIds::Many(list)) => {
                lens("prompt_token_ids", list.len())?;
                list.iter().flatten().map(Vec::as_slice).collect()
            }
            None => Vec::new(),
        };
        if let Some(max) = max_model_len {
            if let Some(p) = prompts.iter().find(|p| p.len() as u64 > max) {
                return Err(RequestError::invalid(
                    "prompt_token_ids",
                    format!(
                        "prompt_token_ids length ({}) exceeds max_model_len ({max})",
                        p.len()
                    ),
                ));
            }
        }
        Ok(())
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

/// The reasoning parser for a request: by the server setting, built from the request's
/// settings (its kwargs and `reasoning_effort`, as vLLM hands them to the constructor). What
/// turning thinking off does is each family's own (its entry reads the settings as vLLM's
/// constructor does): qwen3's is all content, hy_v3 and minimax_m3 do not read
/// `enable_thinking`, deepseek_v4's still reads a `<think>` block.
fn reasoning_for(
    cfg: &DerenderConfig,
    model: &Model,
    req: &Map<String, Value>,
) -> Option<TagReasoningParser> {
    let settings = reasoning_settings(cfg, model, req);
    match cfg.reasoning_parser.as_str() {
        "none" => None,
        "auto" => reasoning_parser_with(&model.name, &settings),
        name => reasoning_parser_with(name, &settings),
    }
}

/// The settings a chat request's reasoning parser is built from: the request's (over the
/// server's defaults), the model's chat template and its Hunyuan token suffixes.
pub(super) fn reasoning_settings(
    cfg: &DerenderConfig,
    model: &Model,
    req: &Map<String, Value>,
) -> ParserSettings {
    settings(cfg, req)
        .with_chat_template(model.chat_template_source.clone())
        .with_token_suffixes(model.token_suffix.clone(), model.vocab_token_suffix.clone())
}

/// A chat request whose settings the reasoning parser's constructor refuses (vLLM answers
/// a 400: K2 Horizon's `reasoning_effort` beyond high, medium and low), named under
/// `field`, the derender request's field that carries it.
pub fn check_reasoning_settings(
    cfg: &DerenderConfig,
    model: &Model,
    req: &Map<String, Value>,
    field: &str,
) -> Result<(), RequestError> {
    let settings = settings(cfg, req);
    match llm_render_parsers::refused_settings(&cfg.reasoning_parser, &model.name, &settings) {
        None => Ok(()),
        Some(why) => {
            let at = match req.get("reasoning_effort") {
                Some(_) => "reasoning_effort",
                None => "chat_template_kwargs",
            };
            Err(RequestError::invalid(format!("{field}.{at}"), why))
        }
    }
}

/// A chat request's parser settings: its kwargs and `reasoning_effort`, over the server's
/// defaults.
fn settings(cfg: &DerenderConfig, req: &Map<String, Value>) -> ParserSettings {
    ParserSettings::from_request(
        req.get("chat_template_kwargs").and_then(Value::as_object),
        req.get("reasoning_effort").and_then(Value::as_str),
    )
    .with_defaults(&cfg.default_chat_template_kwargs)
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
    let parsed = kind == Kind::Chat && {
        let (reasoning, tools) = cfg.parser_names(model);
        reasoning.is_some() || tools.is_some()
    };
    // vLLM's derender keeps special tokens wherever a parser is configured, so the parsers
    // see their markers (`_decode_params(preserve_special=has_parser)`); else the request's
    // `skip_special_tokens` (default true).
    let skip_special_tokens = !parsed && flag(req, "skip_special_tokens").unwrap_or(true);
    let mut stop_token_ids: Vec<u32> = req
        .get("stop_token_ids")
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(|x| x.as_u64().map(|x| x as u32))
                .collect()
        })
        .unwrap_or_default();
    let honor_eos = !flag(req, "ignore_eos").unwrap_or(false);
    if honor_eos {
        stop_token_ids.extend(&model.eos_token_ids);
        stop_token_ids.extend(model.primary_eos);
    }
    Options {
        skip_special_tokens,
        stop_token_ids,
        primary_eos: model.primary_eos.filter(|_| honor_eos),
        keep_stop_token: flag(req, "include_stop_str_in_output").unwrap_or(false),
        hide_reasoning: parsed && flag(req, "include_reasoning") == Some(false),
        named_tool: req.get("tool_choice").is_some_and(Value::is_object),
    }
}

/// A fresh choice for a request whose prompt IDs are `prompt` (when known: the `hf` parser
/// reads the prompt's text).
pub fn new_choice(
    cfg: &DerenderConfig,
    model: &Model,
    kind: Kind,
    req: &Map<String, Value>,
    index: u32,
    prompt: Option<&[u32]>,
) -> Result<ChoiceState, RequestError> {
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
    )
    .with_min_tokens(req.get("min_tokens").and_then(Value::as_u64).unwrap_or(0));
    if kind == Kind::Completion {
        return Ok(ChoiceState::new(index, stops, None, None));
    }
    if model.harmony.is_some() {
        // vLLM's `_compose_parser`: a gpt-oss model gets its Harmony parser whenever a
        // reasoning or tool parser is set; calls only for requests that ask for them.
        let (reasoning, tools) = cfg.parser_names(model);
        let choice = ChoiceState::new(index, stops, None, None);
        if reasoning.is_none() && tools.is_none() {
            return Ok(choice);
        }
        let calls = tools.is_some() && wants_tools(req);
        return Ok(choice.with_harmony(HarmonyParser::new(reasoning.is_some(), calls)));
    }
    // `beam` reads output as `hf` does (vLLM's `BeamParser` is a `ResponseTemplateParser`).
    let reasoning_hf = is_response_template(&cfg.reasoning_parser);
    let tools_hf = is_response_template(&cfg.tool_call_parser);
    if reasoning_hf || tools_hf {
        // vLLM's `ResponseTemplateParser`: one parser for both flags, on every request (it
        // also drops the template's delimiters from output without tools), reading the
        // prompt's text as `set_prompt_token_ids` decodes it (special tokens kept; a fast
        // tokenizer puts no spaces between them), and calls only when the request asks.
        let settings = ParserSettings {
            response_template: model.response_template.clone(),
            prompt: prompt
                .map(|ids| model.decode(ids, false))
                .transpose()
                .map_err(RequestError::Tokenizer)?
                .unwrap_or_default(),
            ..Default::default()
        };
        let calls = tools_hf && wants_tools(req);
        // The startup check (`ParserArgs::check_model`) makes this fail only for a model
        // loaded without it.
        let parser = response_template_parser(&settings, schemas(req), reasoning_hf, calls)
            .map_err(|why| RequestError::invalid("model", why))?;
        return Ok(ChoiceState::new(index, stops, None, None).with_template(parser));
    }
    let reasoning = reasoning_for(cfg, model, req);
    // The model's Hunyuan token suffixes are all a tool parser reads of its settings here.
    let suffixes = ParserSettings::default()
        .with_token_suffixes(model.token_suffix.clone(), model.vocab_token_suffix.clone());
    let tools = tool_parser_name(&cfg.tool_call_parser, model, req).and_then(|name| {
        forced_call(&name, req).or_else(|| {
            tool_parser_with(&name, schemas(req), &suffixes)
                .ok()
                .flatten()
        })
    });
    Ok(ChoiceState::new(index, stops, reasoning, tools))
}

/// vLLM's reading of a `tool_choice` the render constrained with a JSON schema (a family
/// without a structural tag, `ToolGrammar::JsonSchema`): a named tool's arguments, or
/// `required`'s list of calls, in place of the family's format.
fn forced_call(parser: &str, req: &Map<String, Value>) -> Option<AnyToolParser> {
    let entry = tool_parser_for_model(parser)?;
    if entry.grammar != ToolGrammar::JsonSchema {
        return None;
    }
    match req.get("tool_choice")? {
        Value::String(s) if s == "required" => {
            Some(AnyToolParser::Forced(ForcedCallParser::required()))
        }
        Value::Object(o) => {
            let name = o.get("function")?.get("name")?.as_str()?;
            Some(AnyToolParser::Forced(ForcedCallParser::named(name)))
        }
        _ => None,
    }
}
