//! What a chat render tells the engine about parsing its output, as vLLM 0.33's render server
//! fills it (`entrypoints/scale_out/render/serving.py` `render_chat_request`):
//!
//! * `reasoning_parser_kwargs`: `{"chat_template_kwargs": <effective kwargs>}` when a
//!   reasoning parser runs for the model (`--reasoning-parser`, `auto` by model name), else
//!   null. The effective kwargs are vLLM's `effective_chat_template_kwargs`: the server
//!   defaults (vLLM always has `cohere_format: "cmd4"` there), the request's
//!   `chat_template_kwargs`, then `add_generation_prompt`, `continue_final_message`,
//!   `documents`, `reasoning_effort` and (from the effort, unless the request sets it)
//!   `enable_thinking`, each merge dropping null and `"auto"` values (`merge_kwargs`).
//! * `reasoning_ended`: `true` with `include_reasoning: false`; with a reasoning parser,
//!   whether the prompt has already closed reasoning ([`TagSpec::prompt_ends_reasoning`],
//!   vLLM's `is_reasoning_end` on the prompt IDs; under `hf`, the model's
//!   `response_template` reading the decoded prompt); else null (the engine decides).
//! * `parse_context`: `{"tools", "tool_choice", "parallel_tool_calls", "include_reasoning",
//!   "chat_template_kwargs", "history_tool_call_cnt"}`, always: the tools as vLLM's
//!   `ChatCompletionToolsParam` dumps them, `tool_choice` defaulting to `auto` with tools and
//!   `none` without, and the assistant tool calls already in the conversation.
//!
//! Checked against vLLM's render server by `scripts/parse_context_vs_vllm.py`.

use super::RenderOptions;
use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::{ChatRequest, ConvertedFrom};
use llm_render_parsers::is_response_template;
use llm_render_parsers::{
    reasoning_parser_for_model, reasoning_parser_with, response_template_refusal,
    tool_parser_for_model, ParserSettings, TagSpec, ToolEntry, BEAM, HARMONY_REASONING,
    HARMONY_TOOLS, RESPONSE_TEMPLATE,
};
use serde_json::{json, Map, Value};

/// The three fields, as vLLM's chat render fills them.
pub struct ParseFields {
    pub reasoning_ended: Option<bool>,
    pub reasoning_parser_kwargs: Option<Value>,
    pub parse_context: Option<Value>,
}

/// vLLM's server-side default template kwargs (`--cohere-format`'s default lands there).
const SERVER_DEFAULT_KWARGS: [(&str, &str); 1] = [("cohere_format", "cmd4")];

/// `merge_kwargs`: `base` overridden by every value of `over` that is not null or `"auto"`.
fn merge(base: &mut Map<String, Value>, over: impl IntoIterator<Item = (String, Value)>) {
    for (k, v) in over {
        if !v.is_null() && v != "auto" {
            base.insert(k, v);
        }
    }
}

/// vLLM's `effective_chat_template_kwargs` for a chat request, over the server's defaults
/// (`--default-chat-template-kwargs`, then `cohere_format` unless the flag sets it).
pub fn effective_kwargs(opts: &RenderOptions, req: &ChatRequest) -> Map<String, Value> {
    let mut request = req.chat_template_kwargs.clone().unwrap_or_default();
    let mut extra = vec![
        (
            "add_generation_prompt".to_string(),
            Value::Bool(req.add_generation_prompt),
        ),
        (
            "continue_final_message".to_string(),
            Value::Bool(req.continue_final_message),
        ),
        ("documents".to_string(), json!(req.documents)),
        ("reasoning_effort".to_string(), json!(req.reasoning_effort)),
    ];
    if let Some(effort) = &req.reasoning_effort {
        if !request.contains_key("enable_thinking") {
            extra.push(("enable_thinking".into(), Value::Bool(effort != "none")));
        }
    }
    merge(&mut request, extra);
    let mut out: Map<String, Value> = (*opts.default_chat_template_kwargs).clone();
    for (k, v) in SERVER_DEFAULT_KWARGS {
        out.entry(k).or_insert_with(|| Value::String(v.to_string()));
    }
    merge(&mut out, request);
    out
}

/// The request's tools as vLLM's `ChatCompletionToolsParam` dumps them: `type`, then
/// `function` with `name`, `description` and `parameters` (null when absent), and `strict`
/// / `defer_loading` only when set.
fn tools(req: &ChatRequest) -> Value {
    let Some(tools) = &req.tools else {
        return Value::Null;
    };
    let list = tools
        .iter()
        .map(|t| {
            let f = t.get("function").and_then(Value::as_object);
            let get = |k: &str| f.and_then(|f| f.get(k)).cloned().unwrap_or(Value::Null);
            let mut function = Map::new();
            for k in ["name", "description", "parameters"] {
                function.insert(k.into(), get(k));
            }
            for k in ["strict", "defer_loading"] {
                let v = get(k);
                if !v.is_null() {
                    function.insert(k.into(), v);
                }
            }
            let mut tool = Map::new();
            tool.insert("type".into(), "function".into());
            tool.insert("function".into(), Value::Object(function));
            if let Some(d) = t.get("defer_loading").filter(|d| !d.is_null()) {
                tool.insert("defer_loading".into(), d.clone());
            }
            Value::Object(tool)
        })
        .collect();
    Value::Array(list)
}

/// Tool calls in the conversation's assistant messages (vLLM's
/// `count_chat_history_tool_calls`).
fn history_tool_calls(req: &ChatRequest) -> usize {
    req.messages
        .iter()
        .filter(|m| m.get("role").and_then(|r| r.as_str()) == Some("assistant"))
        .filter_map(|m| m.get("tool_calls").and_then(|c| c.as_json()))
        .filter_map(Value::as_array)
        .map(Vec::len)
        .sum()
}

/// What a chat request tells its reasoning parser's constructor (vLLM's effective kwargs,
/// over the server's defaults).
pub fn parser_settings(opts: &RenderOptions, model: &Model, req: &ChatRequest) -> ParserSettings {
    ParserSettings::from_request(
        req.chat_template_kwargs.as_ref(),
        req.reasoning_effort.as_deref(),
    )
    .with_defaults(&opts.default_chat_template_kwargs)
    .with_chat_template(model.chat_template_source.clone())
    .with_token_suffixes(model.token_suffix.clone(), model.vocab_token_suffix.clone())
}

/// vLLM's reasoning parser constructors that refuse a request's settings (K2 Horizon's
/// `reasoning_effort` beyond high, medium and low) refuse the request: a 400 naming
/// `reasoning_effort`, or `chat_template_kwargs` when the effort came from there.
pub fn check_reasoning_settings(
    opts: &RenderOptions,
    model: &Model,
    req: &ChatRequest,
) -> Result<(), RequestError> {
    let settings = parser_settings(opts, model, req);
    match llm_render_parsers::refused_settings(&opts.reasoning_parser, &model.name, &settings) {
        None => Ok(()),
        Some(why) => {
            let param = match req.reasoning_effort {
                Some(_) => "reasoning_effort",
                None => "chat_template_kwargs",
            };
            Err(RequestError::invalid(param, why))
        }
    }
}

/// The reasoning tags of the parser this server runs for `model`, built for a request with
/// `settings` (vLLM builds one parser per request), if any.
pub(super) fn reasoning_spec(
    opts: &RenderOptions,
    model: &Model,
    settings: &ParserSettings,
) -> Option<TagSpec> {
    if model.harmony.is_some() {
        return None;
    }
    let parser = match opts.reasoning_parser.as_str() {
        "none" => None,
        "auto" => reasoning_parser_with(&model.name, settings),
        name => reasoning_parser_with(name, settings),
    };
    parser.map(|p| p.spec().clone())
}

/// The request's `tool_choice` as vLLM's request model has it: `auto` with tools and `none`
/// without, when not given; null for a Messages request without tools (its converter's).
pub(super) fn tool_choice(req: &ChatRequest) -> Value {
    let has_tools = req.tools.as_ref().is_some_and(|t| !t.is_empty());
    match &req.tool_choice {
        Some(c) => c.clone(),
        None if has_tools => json!("auto"),
        None if req.converted_from == ConvertedFrom::Messages => Value::Null,
        None => json!("none"),
    }
}

/// vLLM's refusal of a `tool_choice` no tool parser can serve (`online_renderer.py`): with
/// `--tool-call-parser none` (vLLM's default: no parser), any `tool_choice` but `none`
/// (`auto` is the default with tools) is a 400. **(ext)** With `auto` and no parser for the
/// model's name, tool requests still render (exactly; derender then returns calls as text),
/// so render-only users (RL trainers, routers) keep every model. A Harmony model (gpt-oss)
/// is never refused, as vLLM's `use_harmony` exempts it.
pub fn check_tool_choice(
    opts: &RenderOptions,
    model: &Model,
    req: &ChatRequest,
) -> Result<(), RequestError> {
    let choice = tool_choice(req);
    if opts.tool_call_parser != "none"
        || model.harmony.is_some()
        || choice.is_null()
        || choice == "none"
    {
        return Ok(());
    }
    let message = match &choice {
        Value::String(s) if s == "auto" => {
            "\"auto\" tool choice requires --tool-call-parser to be set".to_string()
        }
        Value::String(s) => format!("tool_choice=\"{s}\" requires --tool-call-parser to be set"),
        other => {
            let name = other["function"]["name"].as_str().unwrap_or_default();
            format!("tool_choice=function \"{name}\" requires --tool-call-parser to be set")
        }
    };
    Err(RequestError::invalid("tool_choice", message))
}

/// Whether the parsers this server runs for `model` set `skip_special_tokens: false` on the
/// request, as vLLM's parsers' `adjust_request` does (Qwen3's and Mistral's reasoning
/// parsers on every request; hermes, qwen3_coder, mistral, kimi_k2 and glm45 when the
/// request has tools and a `tool_choice` other than `none`).
pub fn keeps_special_tokens(opts: &RenderOptions, model: &Model, req: &ChatRequest) -> bool {
    if runs_hf(opts, model) {
        // `ResponseTemplateParser.adjust_request`, on every request.
        return true;
    }
    let reasoning = by_setting(&opts.reasoning_parser, model, HARMONY_REASONING)
        .and_then(reasoning_parser_for_model);
    let has_tools = req.tools.as_ref().is_some_and(|t| !t.is_empty());
    let uses_tools = has_tools && tool_choice(req) != "none";
    llm_render_parsers::keeps_special_tokens(reasoning, tool_entry(opts, model), uses_tools)
}

/// The parser name a `--reasoning-parser` / `--tool-call-parser` setting picks for `model`.
/// `harmony`: gpt-oss's parser of that kind, which `auto` picks for a Harmony model.
fn by_setting<'a>(setting: &'a str, model: &'a Model, harmony: &'static str) -> Option<&'a str> {
    match setting {
        "none" => None,
        "auto" => Some(model.auto_parser_key(harmony)),
        name => Some(name),
    }
}

/// The tool parser this server runs for `model`, if any.
pub fn tool_entry(opts: &RenderOptions, model: &Model) -> Option<&'static ToolEntry> {
    by_setting(&opts.tool_call_parser, model, HARMONY_TOOLS).and_then(tool_parser_for_model)
}

/// The tool parser whose `tool_choice` constraints a render applies, and whether its tools'
/// tags apply. gpt-oss with a reasoning parser and `--tool-call-parser none` still gets
/// vLLM's Harmony parser (`ParserManager._compose_parser` returns it when either parser is
/// set), whose `adjust_request` moves the request's own constraint into a final message but
/// adds no tool tags.
pub fn constraint_parser(
    opts: &RenderOptions,
    model: &Model,
) -> Option<(&'static ToolEntry, bool)> {
    match tool_entry(opts, model) {
        Some(entry) => Some((entry, true)),
        None if harmony_reasoning(opts, model) => {
            tool_parser_for_model(HARMONY_TOOLS).map(|entry| (entry, false))
        }
        None => None,
    }
}

/// Whether vLLM's `hf` parser (`ResponseTemplateParser`) runs for `model`: either setting is
/// `hf` or `beam` (its subclass; a Harmony model gets its Harmony parser whatever the
/// settings, as in vLLM's `_compose_parser`).
pub fn runs_hf(opts: &RenderOptions, model: &Model) -> bool {
    model.harmony.is_none()
        && [&opts.reasoning_parser, &opts.tool_call_parser]
            .iter()
            .any(|s| is_response_template(s))
}

/// Whether vLLM's `beam` parser runs for `model`, and as which parsers: `(reasoning, tools)`.
pub fn runs_beam(opts: &RenderOptions, model: &Model) -> Option<(bool, bool)> {
    let (r, t) = (opts.reasoning_parser == BEAM, opts.tool_call_parser == BEAM);
    (model.harmony.is_none() && (r || t)).then_some((r, t))
}

/// Whether `hf` (or `beam`) reads the reasoning (`--reasoning-parser hf`).
fn hf_reasoning(opts: &RenderOptions, model: &Model) -> bool {
    model.harmony.is_none() && is_response_template(&opts.reasoning_parser)
}

/// vLLM's `ResponseTemplateParser.adjust_request` refusal under `--tool-call-parser hf`: a
/// request with tools and a `tool_choice` other than `none` that asks for strict tools,
/// `required`, a named tool or `parallel_tool_calls: false` (no grammar holds the model to
/// a template's format) is a 400 naming that parameter.
pub fn check_response_template(
    opts: &RenderOptions,
    model: &Model,
    req: &ChatRequest,
) -> Result<(), RequestError> {
    if model.harmony.is_some() || opts.tool_call_parser != RESPONSE_TEMPLATE {
        return Ok(());
    }
    let tools: Vec<Value> = req
        .tools
        .iter()
        .flatten()
        .map(|t| Value::Object(t.clone()))
        .collect();
    match response_template_refusal(&tools, &tool_choice(req), req.parallel_tool_calls) {
        None => Ok(()),
        Some((why, param)) => Err(RequestError::invalid(param, why)),
    }
}

/// A Harmony model (gpt-oss) with a reasoning parser: vLLM then runs its Harmony parser.
fn harmony_reasoning(opts: &RenderOptions, model: &Model) -> bool {
    model.harmony.is_some() && opts.reasoning_parser != "none"
}

/// The fields for a chat request rendered to `prompt`.
pub fn chat(opts: &RenderOptions, model: &Model, req: &ChatRequest, prompt: &[u32]) -> ParseFields {
    let kwargs = effective_kwargs(opts, req);
    let include_reasoning = req.include_reasoning.unwrap_or(true);
    let spec = reasoning_spec(opts, model, &parser_settings(opts, model, req));
    // gpt-oss's reasoning parser has no tags; vLLM's says reasoning has always ended
    // (`GptOssReasoningParser.is_reasoning_end`).
    let harmony_reasoning = harmony_reasoning(opts, model);
    let hf_reasoning = hf_reasoning(opts, model);
    let reasoning_parser_kwargs = (spec.is_some() || harmony_reasoning || hf_reasoning)
        .then(|| json!({"chat_template_kwargs": kwargs}));
    if req.converted_from == ConvertedFrom::Responses {
        // vLLM's Responses render sets only the parser kwargs.
        return ParseFields {
            reasoning_ended: None,
            reasoning_parser_kwargs,
            parse_context: None,
        };
    }
    let reasoning_ended = if !include_reasoning || harmony_reasoning {
        Some(true)
    } else if hf_reasoning {
        // `ResponseTemplateReasoningParser.is_reasoning_end`: the prompt decoded with its
        // special tokens, read by the template; its constructor reads thinking as off when
        // the effective kwargs' `enable_thinking` is falsy (`not kwargs.get(…, True)`).
        let settings = ParserSettings::new(kwargs.clone());
        let thinking_disabled =
            settings.get("enable_thinking").is_some() && !settings.truthy("enable_thinking");
        let ended = match (&model.response_template, model.decode(prompt, false)) {
            (Some(t), Ok(text)) => t.prompt_ends_reasoning(&text, thinking_disabled),
            // vLLM's answer where the parser cannot be built or the prompt not decoded.
            _ => false,
        };
        Some(ended)
    } else {
        // The request's thinking switch is in the spec, read by its family's entry.
        spec.as_ref()
            .map(|s| s.prompt_ends_reasoning(prompt, |t| model.tokenizer.token_to_id(t)))
    };
    let parse_context = json!({
        "tools": tools(req),
        "tool_choice": tool_choice(req),
        "parallel_tool_calls": req.parallel_tool_calls.unwrap_or(true),
        "include_reasoning": include_reasoning,
        // vLLM's `ServingRender._build_parse_context`: Harmony output is parsed without
        // template kwargs.
        "chat_template_kwargs": if model.harmony.is_some() { json!({}) } else { Value::Object(kwargs) },
        "history_tool_call_cnt": history_tool_calls(req),
    });
    ParseFields {
        reasoning_ended,
        reasoning_parser_kwargs,
        parse_context: Some(parse_context),
    }
}
