//! `POST /v1/chat/completions/render`: messages → template → token IDs → `GenerateRequest`.
//!
//! Two steps, each its own entry point: [`render_chat_prompt`] (the prompt text and its
//! token IDs, with images expanded: what `/tokenize`, `hash` and `template-diff` need) and
//! [`generate_request`] (those IDs with the request's sampling parameters and options);
//! [`render_chat`] runs both.

use super::multimodal::{expand_images, FetchedMedia, ImageKwargs};
use super::sampling::build_sampling_params;
use super::{RenderOptions, Timings};
use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::{request_id, ChatRequest, GenerateRequest};
use crate::template::env::{generation, py_space};
use crate::template::messages::to_template_messages;
use crate::template::native::NativeInput;
use crate::template::{ChatTemplates, ImageRef, SelectError, Selected, TemplateEngine};
use minijinja::value::{Serde, Value};
use std::collections::BTreeMap;
use std::time::Instant;

/// transformers' marker for `continue_final_message` (`render_jinja_template`).
const CONTINUE_TAG: &str = "CONTINUE_FINAL_MESSAGE_TAG ";

/// Names a request's `chat_template_kwargs` may not set: the renderer passes them itself.
const RESERVED_KWARGS: [&str; 2] = ["messages", "tools"];

/// Names `--default-chat-template-kwargs` may not set: the reserved ones, and the request
/// fields the renderer always passes (a default would never apply, or would apply only
/// where the request leaves the field out, as for `documents`; request fields, not server
/// defaults).
pub const NOT_DEFAULT_KWARGS: [&str; 5] = [
    "messages",
    "tools",
    "add_generation_prompt",
    "continue_final_message",
    "documents",
];

/// The output of rendering a chat request.
#[derive(Debug, Clone)]
pub struct ChatRendered {
    /// Shared with the prompt cache, which keeps it for the next turn.
    pub prompt: std::sync::Arc<String>,
    /// With image placeholders expanded; shared with the prompt cache.
    pub token_ids: std::sync::Arc<Vec<u32>>,
    /// Multimodal features when the request had images.
    pub features: Option<serde_json::Value>,
    pub timings: Timings,
    /// What `continue_from` did (`bridge.rs`); `None` without it.
    pub continuation: Option<crate::protocol::Continuation>,
    /// With `return_assistant_tokens_mask` and a template with `{% generation %}` tags:
    /// transformers' `assistant_masks` of the prompt, one entry per token of `token_ids`.
    pub assistant_mask: Option<Vec<u8>>,
}

/// Renders and tokenizes a chat request, then builds vLLM's `GenerateRequest`. `media` holds
/// the request's `http(s)` images, fetched beforehand (`fetch_request_media`); `None` when
/// there are none to fetch.
pub fn render_chat(
    model: &Model,
    req: &ChatRequest,
    opts: &RenderOptions,
    media: Option<&FetchedMedia>,
) -> Result<(GenerateRequest, Timings), RequestError> {
    req.validate()?;
    super::parse_context::check_tool_choice(opts, model, req)?;
    super::parse_context::check_reasoning_settings(opts, model, req)?;
    let param = match (req.converted_from, req.max_completion_tokens) {
        (crate::protocol::ConvertedFrom::Responses, _) => "max_output_tokens",
        (_, Some(_)) => "max_completion_tokens",
        (_, None) => "max_tokens",
    };
    super::check_output_budget(model, req.max_completion_tokens.or(req.max_tokens), param)?;
    let rendered = render_chat_prompt(model, req, opts, media)?;
    let timings = rendered.timings;
    Ok((generate_request(model, req, opts, rendered)?, timings))
}

/// vLLM's `GenerateRequest` for a rendered chat request: its token IDs and features, with the
/// request's sampling parameters, IDs and options.
pub fn generate_request(
    model: &Model,
    req: &ChatRequest,
    opts: &RenderOptions,
    mut rendered: ChatRendered,
) -> Result<GenerateRequest, RequestError> {
    // vLLM: offsets only for text prompts (its renderer has none with multimodal data),
    // computed on the whole prompt and cut with it.
    // vLLM's Harmony render has none either (its engine input carries no prompt text).
    let mut token_offsets =
        if req.return_token_offsets && rendered.features.is_none() && model.harmony.is_none() {
            model.token_offsets(&rendered.prompt, &rendered.token_ids, false)
        } else {
            None
        };
    let len = rendered.token_ids.len();
    let keep = super::truncate_prompt(
        model,
        len,
        req.truncate_prompt_tokens,
        req.truncation_side.as_deref(),
        req.max_completion_tokens.or(req.max_tokens),
    )?;
    if keep.len() != len {
        if rendered.features.is_some() {
            return Err(RequestError::invalid(
                "truncate_prompt_tokens",
                "truncate_prompt_tokens would cut a prompt with images (their placeholders \
                 would no longer match)",
            ));
        }
        token_offsets = token_offsets.map(|o| o[keep.clone()].to_vec());
        // vLLM main's mask is cut with the prompt it labels
        // (`test_chat_render_assistant_tokens_mask_follows_truncation`).
        rendered.assistant_mask = rendered.assistant_mask.map(|m| m[keep.clone()].to_vec());
        rendered.token_ids = std::sync::Arc::new(rendered.token_ids[keep].to_vec());
    }
    if rendered.token_ids.is_empty() {
        // vLLM's render refuses a prompt that renders to nothing (`serving.py`), a template
        // that writes nothing for these messages.
        return Err(RequestError::invalid(
            "messages",
            "No token_ids rendered: the chat template wrote nothing for these messages",
        ));
    }
    // vLLM's `adjust_request` runs after the render.
    super::parse_context::check_response_template(opts, model, req)?;
    let mut sampling_params =
        build_sampling_params(model, &req.sampling(), rendered.token_ids.len(), true)?;
    if super::parse_context::keeps_special_tokens(opts, model, req) {
        sampling_params.skip_special_tokens = false;
    }
    if super::parse_context::runs_hf(opts, model) {
        // `ResponseTemplateParser.adjust_request`: the output is decoded as the template
        // spells it, special tokens kept and no spaces between them.
        sampling_params.spaces_between_special_tokens = false;
    }
    let tool_parser = super::parse_context::constraint_parser(opts, model);
    let suffix = model.vocab_token_suffix.as_deref().unwrap_or_default();
    super::tool_choice::constrain(tool_parser, req, &mut sampling_params, suffix)?;
    let beam_from_start = super::tool_choice::beam::constrain(
        opts,
        model,
        req,
        &rendered.token_ids,
        &mut sampling_params,
    )?;
    if req.converted_from == crate::protocol::ConvertedFrom::Responses
        && sampling_params.extra_args.is_none()
        && req.kv_transfer_params.is_none()
        && req.ec_transfer_params.is_none()
    {
        // vLLM's `ResponsesRequest.to_sampling_params` starts `extra_args` at `{}`, and
        // `_hoist_transfer_params` leaves it there unless it moved transfer params out.
        sampling_params.extra_args = Some(Default::default());
    }
    let block_hashes = req
        .return_block_hashes
        .as_ref()
        .map(|h| h.of_render(&rendered.token_ids, req.cache_salt.as_deref(), &model.name))
        .transpose()?;
    let mut parse = super::parse_context::chat(opts, model, req, &rendered.token_ids);
    if beam_from_start && parse.parse_context.is_some() {
        // vLLM's `resolve_reasoning_ended`: the parser's grammar covers the reasoning.
        parse.reasoning_ended = Some(true);
    }
    let out = GenerateRequest {
        request_id: req
            .request_id
            .clone()
            .unwrap_or_else(|| request_id("chatcmpl")),
        token_offsets,
        token_ids: rendered.token_ids,
        assistant_tokens_mask: req
            .return_assistant_tokens_mask
            .then_some(rendered.assistant_mask),
        features: rendered.features,
        content_parts: None,
        sampling_params,
        model: model.name.clone(),
        reasoning_ended: parse.reasoning_ended,
        reasoning_parser_kwargs: parse.reasoning_parser_kwargs,
        return_token_ids: req.return_token_ids,
        output_mode: "tokens",
        parse_context: parse.parse_context,
        stream: req.stream,
        stream_options: req.stream_options.clone(),
        cache_salt: req.cache_salt.clone(),
        priority: req.priority,
        kv_transfer_params: req.kv_transfer_params.clone(),
        ec_transfer_params: req.ec_transfer_params.clone(),
        block_hashes,
        continuation: rendered.continuation,
    };
    Ok(out)
}

/// Renders the prompt text and its token IDs (images expanded; `media` as [`render_chat`]).
/// With `continue_from`, the IDs are the bridged prompt when it fits (`bridge.rs`); the
/// text stays the template's.
pub fn render_chat_prompt(
    model: &Model,
    req: &ChatRequest,
    opts: &RenderOptions,
    media: Option<&FetchedMedia>,
) -> Result<ChatRendered, RequestError> {
    let mut rendered = render_plain(model, req, opts, media)?;
    super::bridge::apply(model, req, opts, &mut rendered)?;
    Ok(rendered)
}

/// The template's own rendering of the request.
fn render_plain(
    model: &Model,
    req: &ChatRequest,
    opts: &RenderOptions,
    media: Option<&FetchedMedia>,
) -> Result<ChatRendered, RequestError> {
    let t0 = Instant::now();
    if req.messages.is_empty() && req.harmony_responses.is_none() {
        return Err(RequestError::invalid(
            "messages",
            "messages must contain at least one message",
        ));
    }
    if let Some(harmony) = &model.harmony {
        return super::harmony::render_prompt(model, harmony, req);
    }
    render_template(model, req, opts, media, t0)
}

/// The chat template's rendering of the request, for a Harmony model too (vLLM's
/// Messages probe asks its template, `_should_merge_inline_system`). `t0`: when the render
/// began.
pub(super) fn render_template(
    model: &Model,
    req: &ChatRequest,
    opts: &RenderOptions,
    media: Option<&FetchedMedia>,
    t0: Instant,
) -> Result<ChatRendered, RequestError> {
    let mut kwargs = req.chat_template_kwargs.clone().unwrap_or_default();
    if let Some(k) = RESERVED_KWARGS.iter().find(|k| kwargs.contains_key(**k)) {
        return Err(RequestError::invalid(
            "chat_template_kwargs",
            format!("chat_template_kwargs may not set `{k}`; pass it as a request field"),
        ));
    }
    // vLLM: request kwargs override these three (serving_chat builds them, then `.update`s).
    let add_generation_prompt =
        take_bool(&mut kwargs, "add_generation_prompt")?.unwrap_or(req.add_generation_prompt);
    let continue_final =
        take_bool(&mut kwargs, "continue_final_message")?.unwrap_or(req.continue_final_message);
    let documents = kwargs.remove("documents");
    if let Some(effort) = &req.reasoning_effort {
        if !kwargs.contains_key("enable_thinking") {
            kwargs.insert("enable_thinking".into(), (effort != "none").into());
        }
        kwargs.insert("reasoning_effort".into(), effort.as_str().into());
    }
    // `--default-chat-template-kwargs` under the request's own (vLLM's `with_defaults`); the
    // flag may not set the names taken above (checked at startup).
    for (k, v) in opts.default_chat_template_kwargs.iter() {
        if !kwargs.contains_key(k) {
            kwargs.insert(k.clone(), v.clone());
        }
    }
    if continue_final && req.return_assistant_tokens_mask {
        // transformers' `apply_chat_template` refuses the pair.
        return Err(RequestError::invalid(
            "return_assistant_tokens_mask",
            "continue_final_message is not compatible with return_assistant_tokens_mask.",
        ));
    }
    if continue_final && add_generation_prompt {
        return Err(RequestError::invalid(
            "continue_final_message",
            "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when \
             you want the model to continue the final message, and add_generation_prompt when you want to add a \
             header that will prompt it to start a new assistant message instead.",
        ));
    }

    let request_templates;
    let templates = match &req.chat_template {
        Some(src) if opts.trust_request_chat_template => {
            request_templates =
                ChatTemplates::compile(vec![("request".into(), src.clone())], opts.template_fuel)
                    .map_err(|e| RequestError::invalid("chat_template", e.to_string()))?;
            &request_templates
        }
        Some(_) => {
            return Err(RequestError::invalid(
                "chat_template",
                "chat_template is passed with the request, but the server was not started with \
                 --trust-request-chat-template",
            ))
        }
        None => &model.templates,
    };
    let selected = templates.select(req.tools.is_some()).map_err(|e| match e {
        SelectError::NoTemplate => RequestError::invalid("messages", e.to_string()),
        SelectError::NoDefault(_) => RequestError::Template(e.to_string()),
    })?;

    // The spans of `{% generation %}` blocks, tracked when the request asks for the mask
    // and the template has them (transformers' test; without them vLLM's mask is null).
    let track_generation =
        req.return_assistant_tokens_mask && generation::has_generation_tags(selected.source);
    let native = selected
        .native
        .filter(|_| {
            opts.native_templates
                && !continue_final
                && !track_generation
                && req.chat_template.is_none()
        })
        .and_then(|t| {
            t.render(&NativeInput {
                messages: &req.messages,
                tools: req.tools.as_deref(),
                kwargs: &kwargs,
                add_generation_prompt,
                bos_token: model
                    .special_tokens
                    .iter()
                    .find(|(k, _)| *k == "bos_token")
                    .map(|(_, v)| v.as_str()),
            })
        });
    let mut images = Vec::new();
    let mut spans = None;
    let (prompt, engine) = match native {
        Some(prompt) => (prompt, TemplateEngine::Native),
        None => {
            let marker = track_generation.then(generation::new_marker);
            let args = TemplateArgs {
                kwargs,
                documents,
                add_generation_prompt,
                continue_final,
                generation_marker: marker.clone(),
            };
            let mut prompt = render_with_minijinja(model, req, &selected, &mut images, args)?;
            if let Some(marker) = marker {
                let (text, found) = generation::take_spans(&prompt, &marker).ok_or_else(|| {
                    RequestError::Template(
                        "TemplateError: the chat template's {% generation %} blocks do not nest"
                            .into(),
                    )
                })?;
                prompt = text;
                spans = Some(found);
            }
            // minijinja's output grows by doubling; the prompt cache may keep this string,
            // and counts entries at their capacity.
            if prompt.capacity() > prompt.len() + prompt.len() / 8 {
                prompt.shrink_to_fit();
            }
            (prompt, TemplateEngine::Minijinja)
        }
    };
    super::cancel::check()?;
    let t1 = Instant::now();
    let prompt = std::sync::Arc::new(prompt);
    let token_ids = model.encode_shared(&prompt)?;
    // transformers' `char_to_token` over the encoding's offsets; for a prompt with images the
    // mask labels the text's tokens, and is padded or cut to the expanded prompt below, as
    // vLLM main pads or cuts it (with a warning that it is then misaligned).
    let text_tokens = token_ids.len();
    let assistant_mask = spans.and_then(|spans| {
        let offsets = model.token_offsets(&prompt, &token_ids, false)?;
        Some(generation::assistant_mask(&offsets, &spans))
    });
    let timings = Timings {
        template: t1 - t0,
        tokenize: t1.elapsed(),
        template_engine: Some(engine),
    };
    let (token_ids, features) = expand_images(
        model,
        &images,
        token_ids,
        opts,
        media,
        &ImageKwargs {
            no_payload: req.no_mm_payload(),
            raw_images: req.skip_pixel_values,
            ..ImageKwargs::parse(req.mm_processor_kwargs.as_ref(), opts)?
        },
    )?;
    let assistant_mask = assistant_mask.map(|mut m| {
        if token_ids.len() != text_tokens {
            m.resize(token_ids.len(), 0);
        }
        m
    });
    Ok(ChatRendered {
        prompt,
        token_ids,
        features,
        timings,
        continuation: None,
        assistant_mask,
    })
}

/// What a template call takes besides the messages, tools and documents of the request.
struct TemplateArgs {
    /// `chat_template_kwargs` less the names consumed here.
    kwargs: serde_json::Map<String, serde_json::Value>,
    /// `chat_template_kwargs.documents`, which wins over the request's `documents`.
    documents: Option<serde_json::Value>,
    add_generation_prompt: bool,
    continue_final: bool,
    /// The marker `{% generation %}` blocks wrap their bodies in, when tracked.
    generation_marker: Option<String>,
}

/// The general path: the request becomes template values (see [`to_template_messages`])
/// and minijinja renders the template; `images` collects the image parts in order.
fn render_with_minijinja(
    model: &Model,
    req: &ChatRequest,
    selected: &Selected<'_>,
    images: &mut Vec<ImageRef>,
    args: TemplateArgs,
) -> Result<String, RequestError> {
    let mut messages = to_template_messages(&req.messages, selected.format, images)?;
    let final_text = if args.continue_final {
        Some(tag_final_message(&mut messages, selected.source)?)
    } else {
        None
    };

    let mut ctx: BTreeMap<String, Value> = BTreeMap::new();
    for (k, v) in &model.special_tokens {
        ctx.insert((*k).to_string(), Value::from(v.as_str()));
    }
    for (k, v) in &args.kwargs {
        ctx.insert(k.clone(), Value::from(Serde(v)));
    }
    ctx.insert("messages".into(), Value::from(Serde(&messages)));
    ctx.insert(
        "tools".into(),
        req.tools
            .as_ref()
            .map(|v| Value::from(Serde(v)))
            .unwrap_or(Value::from(())),
    );
    let documents = args
        .documents
        .or_else(|| req.documents.as_ref().map(|d| serde_json::json!(d)));
    ctx.insert(
        "documents".into(),
        documents
            .as_ref()
            .map(|v| Value::from(Serde(v)))
            .unwrap_or(Value::from(())),
    );
    ctx.insert(
        "add_generation_prompt".into(),
        Value::from(args.add_generation_prompt),
    );
    // Set last, so that no `chat_template_kwargs` key can stand in for it.
    ctx.insert(
        generation::MARKER_VAR.into(),
        Value::from(args.generation_marker),
    );

    let mut prompt = selected.render(&ctx)?;
    if let Some(final_text) = final_text {
        prompt = cut_at_continue_tag(prompt, &final_text)?;
    }
    Ok(prompt)
}

fn take_bool(
    kwargs: &mut serde_json::Map<String, serde_json::Value>,
    key: &str,
) -> Result<Option<bool>, RequestError> {
    match kwargs.remove(key) {
        None => Ok(None),
        Some(serde_json::Value::Bool(b)) => Ok(Some(b)),
        Some(_) => Err(RequestError::invalid(
            format!("chat_template_kwargs.{key}"),
            format!("chat_template_kwargs.{key} must be a boolean"),
        )),
    }
}

/// transformers' `continue_final_message`: appends a tag to the last message's content (the
/// last text part for part lists) and returns the text to continue.
fn tag_final_message(
    messages: &mut [serde_json::Value],
    source: &str,
) -> Result<String, RequestError> {
    let bad = |m: &str| RequestError::invalid("continue_final_message", m);
    let last = messages
        .last_mut()
        .ok_or_else(|| bad("continue_final_message is set but the conversation is empty!"))?;
    if !source.contains("content") {
        return Err(bad("continue_final_message is set to \"content\" but this is not an accepted field in the chat_template"));
    }
    match last.get_mut("content") {
        Some(serde_json::Value::String(s)) => {
            let text = s.clone();
            s.push_str(CONTINUE_TAG);
            Ok(text)
        }
        Some(serde_json::Value::Array(parts)) => {
            for part in parts.iter_mut().rev() {
                if let Some(serde_json::Value::String(t)) = part.get_mut("text") {
                    let text = t.clone();
                    t.push_str(CONTINUE_TAG);
                    return Ok(text);
                }
            }
            Err(bad("continue_final_message is set but we could not find any text to continue in the final message!"))
        }
        _ => Err(bad(
            "continue_final_message is set but the final message has no \"content\" to continue!",
        )),
    }
}

/// Cuts the rendered prompt at the continue tag, as transformers does.
fn cut_at_continue_tag(rendered: String, final_text: &str) -> Result<String, RequestError> {
    let tag = CONTINUE_TAG.trim_matches(py_space);
    let stripped = final_text.trim_matches(py_space);
    let Some(loc) = rendered.rfind(tag).filter(|_| rendered.contains(stripped)) else {
        return Err(RequestError::invalid(
            "continue_final_message",
            "continue_final_message is set but the final message does not appear in the chat after applying the \
             chat template! This can happen if the chat template deletes portions of the final message.",
        ));
    };
    if rendered[loc..].starts_with(CONTINUE_TAG) {
        Ok(rendered[..loc].to_string())
    } else {
        Ok(rendered[..loc].trim_end_matches(py_space).to_string())
    }
}
