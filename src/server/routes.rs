//! Route handlers (`dispatch.rs` routes to them, with the body already read). Each parses
//! its body, runs the CPU work inline or on the blocking pool, and maps every failure to an
//! OpenAI-shaped error.

use super::{ApiError, AppState};
use crate::error::RequestError;
use crate::model::Model;
use crate::protocol::fast_json::JsonChunks;
use crate::protocol::{
    parse_json, parse_json_shared, ChatRequest, CompletionRequest, DetokenizeRequest,
    DetokenizeResponse, GenerateRequest, ModelCard, ModelList, TokenizeRequest, TokenizeResponse,
};
use crate::render::{self, render_completion, RenderOptions};
use axum::body::Bytes;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use serde_json::Value;
use std::sync::Arc;

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Where a request's CPU work runs.
///
/// Small requests (body up to `--inline-max-bytes`, a few hundred µs of work at most, with
/// templates bounded by fuel) run inline on the async worker: handing them to the blocking
/// pool costs two thread wake-ups, measured at a quarter of a long render's server CPU.
/// Larger bodies, and any request that may carry its own template (only possible with
/// `--trust-request-chat-template`), go to the blocking pool so the reactor keeps serving
/// and the request timeout can fire while they run.
fn offload(st: &AppState, bytes: &[u8]) -> bool {
    bytes.len() > st.config.inline_max_bytes
        || (st.config.render.trust_request_chat_template && contains(bytes, b"\"chat_template\""))
}

/// Runs CPU-bound work on a request body, inline or on the blocking pool as [`offload`]
/// decides for that body (inline for most requests, on the blocking pool for large ones).
/// A panic becomes a 500 for this request only.
pub(super) async fn cpu_work<T: Send + 'static>(
    st: &Arc<AppState>,
    bytes: Bytes,
    f: impl FnOnce(&AppState, Bytes) -> Result<T, RequestError> + Send + 'static,
) -> Result<T, ApiError> {
    let internal = |what: &dyn std::fmt::Display| {
        tracing::error!("render task failed: {what}");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error while rendering",
        )
    };
    if !offload(st, &bytes) {
        let f = || f(st, bytes);
        return match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            Ok(r) => r.map_err(ApiError::from),
            Err(_) => Err(internal(&"panic")),
        };
    }
    // At most `--max-blocking-renders` at once; the rest wait here, where the request
    // timeout still applies (the semaphore is never closed, so acquiring cannot fail). The
    // slot goes with the work: a request that timed out frees it only when its render ends.
    let Ok(slot) = st.blocking_permits.clone().acquire_owned().await else {
        return Err(internal(&"render slots closed"));
    };
    let st = st.clone();
    // Dropping this future (client gone, timeout) sets the flag; the render stops at its
    // next check and frees the slot (see `render::cancel`).
    let cancelled = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _cancel_on_drop = crate::render::cancel::CancelOnDrop(cancelled.clone());
    let work = move || {
        let _slot = slot;
        crate::render::cancel::scope(cancelled, || f(&st, bytes))
    };
    match tokio::task::spawn_blocking(work).await {
        Ok(r) => r.map_err(ApiError::from),
        Err(e) => Err(internal(&e)),
    }
}

/// A JSON body already serialized (on the worker that rendered it), as one or more
/// buffers (see [`JsonChunks`]); sent with its exact `content-length`.
pub struct JsonBytes(Vec<Bytes>);

impl IntoResponse for JsonBytes {
    fn into_response(self) -> axum::response::Response {
        let len = self.0.iter().map(|b| b.len() as u64).sum();
        let body = axum::body::Body::new(ChunkedBody {
            parts: self.0.into(),
            left: len,
        });
        ([(header::CONTENT_TYPE, "application/json")], body).into_response()
    }
}

/// A body of buffers sent in order, each without a copy.
struct ChunkedBody {
    parts: std::collections::VecDeque<Bytes>,
    left: u64,
}

impl http_body::Body for ChunkedBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let next = self.parts.pop_front();
        if let Some(b) = &next {
            self.left -= b.len() as u64;
        }
        std::task::Poll::Ready(next.map(|b| Ok(http_body::Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        self.parts.is_empty()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.left)
    }
}

impl JsonBytes {
    /// One `GenerateRequest`, through its fast writer.
    fn generate(g: GenerateRequest) -> Result<Self, RequestError> {
        Self::generate_list(vec![g], false)
    }

    /// `[g, ...]` when `array`, else the single element. Large feature strings (image
    /// tensors) become buffers of their own; the rest is written between them.
    fn generate_list(gs: Vec<GenerateRequest>, array: bool) -> Result<Self, RequestError> {
        let size: usize = gs.iter().map(|g| g.json_size_hint()).sum();
        let mut out = JsonChunks::with_capacity(size.min(1 << 20));
        if array {
            out.cur.push(b'[');
        }
        for (i, g) in gs.into_iter().enumerate() {
            if i > 0 {
                out.cur.push(b',');
            }
            g.into_json(&mut out)
                .map_err(|e| RequestError::Internal(format!("serializing the response: {e}")))?;
        }
        if array {
            out.cur.push(b']');
        }
        Ok(JsonBytes(out.finish()))
    }
}

pub async fn chat_render(st: Arc<AppState>, bytes: Bytes) -> Result<JsonBytes, ApiError> {
    // http(s) images are fetched here, on the reactor, before the CPU-bound render.
    let media = if st.config.render.fetcher.is_some() && contains(&bytes, b"http") {
        let req: ChatRequest = parse_json(&bytes)?;
        render::fetch_request_media(&req, &st.config.render).await?
    } else {
        render::FetchedMedia::default()
    };
    let out = cpu_work(&st, bytes, move |st, bytes| {
        let req: ChatRequest = parse_json_shared(&bytes)?;
        let model = st.models.get(req.model.as_deref())?;
        let (out, timings) = render::render_chat(&model, &req, &st.config.render, Some(&media))?;
        st.metrics
            .observe_render(&model.name, out.token_ids.len(), timings);
        if let Some(c) = &out.continuation {
            st.metrics.observe_continuation(&model.name, c);
        }
        JsonBytes::generate(out)
    })
    .await?;
    Ok(out)
}

/// How a Messages or Responses body becomes the chat request vLLM renders for it.
type ToChat = fn(&Model, &Value, &RenderOptions) -> Result<ChatRequest, RequestError>;

/// The model a Messages or Responses body names, and `convert`'s result for it. vLLM
/// validates such a body (its request model) before it looks the model up, so a malformed
/// body for an unknown model is its 400, not a 404: the body is converted with a served model
/// first, and the 404 comes only when that passes.
pub(super) fn converted_for_model<T>(
    st: &AppState,
    body: &Value,
    convert: impl Fn(&Model) -> Result<T, RequestError>,
) -> Result<(Arc<Model>, T), RequestError> {
    match st.models.get(body.get("model").and_then(Value::as_str)) {
        Ok(model) => {
            let out = convert(&model)?;
            Ok((model, out))
        }
        Err(e) => {
            if let Some(any) = st.models.models().first() {
                convert(any)?;
            }
            Err(e)
        }
    }
}

/// A body of another API shape, converted to a chat request and rendered as one.
async fn converted_render(
    st: Arc<AppState>,
    bytes: Bytes,
    to_chat: ToChat,
) -> Result<JsonBytes, ApiError> {
    let convert =
        move |st: &AppState, bytes: &[u8]| -> Result<(Arc<Model>, ChatRequest), RequestError> {
            let body: Value = parse_json(bytes)?;
            converted_for_model(st, &body, |model| to_chat(model, &body, &st.config.render))
        };
    let media = if st.config.render.fetcher.is_some() && contains(&bytes, b"http") {
        let (_, req) = convert(&st, &bytes)?;
        render::fetch_request_media(&req, &st.config.render).await?
    } else {
        render::FetchedMedia::default()
    };
    let out = cpu_work(&st, bytes, move |st, bytes| {
        let (model, req) = convert(st, &bytes)?;
        let (out, timings) = render::render_chat(&model, &req, &st.config.render, Some(&media))?;
        st.metrics
            .observe_render(&model.name, out.token_ids.len(), timings);
        JsonBytes::generate(out)
    })
    .await?;
    Ok(out)
}

pub async fn messages_render(st: Arc<AppState>, bytes: Bytes) -> Result<JsonBytes, ApiError> {
    converted_render(st, bytes, render::anthropic::messages_to_chat).await
}

pub async fn responses_render(st: Arc<AppState>, bytes: Bytes) -> Result<JsonBytes, ApiError> {
    converted_render(st, bytes, render::responses::responses_to_chat).await
}

pub async fn completion_render(st: Arc<AppState>, bytes: Bytes) -> Result<JsonBytes, ApiError> {
    let out = cpu_work(&st, bytes, move |st, bytes| {
        let req: CompletionRequest = parse_json(&bytes)?;
        let model = st.models.get(req.model.as_deref())?;
        let (out, timings) = render_completion(&model, &req)?;
        let tokens = out.iter().map(|g| g.token_ids.len()).sum();
        st.metrics.observe_render(&model.name, tokens, timings);
        JsonBytes::generate_list(out, true)
    })
    .await?;
    Ok(out)
}

pub async fn tokenize(st: Arc<AppState>, bytes: Bytes) -> Result<Json<TokenizeResponse>, ApiError> {
    let out = cpu_work(&st, bytes, move |st, bytes| {
        let req: TokenizeRequest = parse_json(&bytes)?;
        let model = st.models.get(req.model.as_deref())?;
        let tokens = match (&req.prompt, &req.messages) {
            (Some(prompt), None) => model.encode(prompt, req.add_special_tokens.unwrap_or(true))?,
            (None, Some(_)) => {
                let mut chat: ChatRequest = parse_json_shared(&bytes)?;
                // vLLM's `TokenizeChatRequest` checks the messages and tools as the chat
                // request does (an empty `tools` aside).
                chat.validate_shapes()?;
                // `/tokenize` gives the template's tokens; bridging is the render routes'.
                chat.continue_from = None;
                let prompt = render::render_chat_prompt(&model, &chat, &st.config.render, None)?;
                if req.add_special_tokens.unwrap_or(false) {
                    model.encode(&prompt.prompt, true)?
                } else {
                    Arc::unwrap_or_clone(prompt.token_ids)
                }
            }
            _ => {
                return Err(RequestError::invalid(
                    "prompt",
                    "pass exactly one of `prompt` and `messages`",
                ))
            }
        };
        let token_strs = req.return_token_strs.then(|| {
            tokens
                .iter()
                .map(|id| model.tokenizer.id_to_token(*id).unwrap_or_default())
                .collect()
        });
        Ok(TokenizeResponse {
            count: tokens.len(),
            max_model_len: model.max_model_len,
            tokens,
            token_strs,
        })
    })
    .await?;
    Ok(Json(out))
}

pub async fn detokenize(
    st: Arc<AppState>,
    bytes: Bytes,
) -> Result<Json<DetokenizeResponse>, ApiError> {
    let out = cpu_work(&st, bytes, move |st, bytes| {
        let req: DetokenizeRequest = parse_json(&bytes)?;
        let model = st.models.get(req.model.as_deref())?;
        // An ID without a token decodes to nothing, as vLLM 0.32's and 0.33's `/detokenize`
        // decode it (`{"tokens": [9707, 151711]}` → `"Hello"`).
        let prompt = model
            .decode(&req.tokens, false)
            .map_err(RequestError::Tokenizer)?;
        Ok(DetokenizeResponse { prompt })
    })
    .await?;
    Ok(Json(out))
}

pub async fn block_hashes(
    st: Arc<AppState>,
    bytes: Bytes,
) -> Result<Json<crate::hashing::HashResponse>, ApiError> {
    let out = cpu_work(&st, bytes, move |_, bytes| {
        let req: crate::hashing::HashRequest = parse_json(&bytes)?;
        Ok(crate::hashing::compute(&req)?)
    })
    .await?;
    Ok(Json(out))
}

pub async fn chat_derender(
    st: Arc<AppState>,
    bytes: Bytes,
) -> Result<Json<serde_json::Value>, ApiError> {
    derender(st, bytes, crate::derender::Kind::Chat).await
}

pub async fn completion_derender(
    st: Arc<AppState>,
    bytes: Bytes,
) -> Result<Json<serde_json::Value>, ApiError> {
    derender(st, bytes, crate::derender::Kind::Completion).await
}

async fn derender(
    st: Arc<AppState>,
    bytes: Bytes,
    kind: crate::derender::Kind,
) -> Result<Json<serde_json::Value>, ApiError> {
    let out = cpu_work(&st, bytes, move |st, bytes| {
        let req: crate::derender::DerenderRequest = parse_json(&bytes)?;
        let model = st.models.get(req.model.as_deref())?;
        if kind == crate::derender::Kind::Chat {
            crate::derender::check_named_parser_rule(&req, &st.config.derender)?;
        }
        crate::derender::derender(&model, &req, &st.config.derender, kind)
    })
    .await?;
    Ok(Json(out))
}

pub async fn messages_derender(
    st: Arc<AppState>,
    bytes: Bytes,
) -> Result<Json<serde_json::Value>, ApiError> {
    reshaped_derender(st, bytes, true).await
}

pub async fn responses_derender(
    st: Arc<AppState>,
    bytes: Bytes,
) -> Result<Json<serde_json::Value>, ApiError> {
    reshaped_derender(st, bytes, false).await
}

/// A Messages (`messages`) or Responses derender: the original request converted to the
/// chat request it rendered as, without its conversation (derender reads only settings).
async fn reshaped_derender(
    st: Arc<AppState>,
    bytes: Bytes,
    messages: bool,
) -> Result<Json<serde_json::Value>, ApiError> {
    use crate::derender::{derender_as, Api, DerenderRequest};
    let out = cpu_work(&st, bytes, move |st, bytes| {
        let mut req: DerenderRequest = parse_json(&bytes)?;
        let model = st.models.get(req.model.as_deref())?;
        let (field, conversation) = if messages {
            ("messages_request", "messages")
        } else {
            ("responses_request", "input")
        };
        let original = if messages {
            req.messages_request.take()
        } else {
            req.responses_request.take()
        };
        if let Some(original) = &original {
            let mut body: serde_json::Map<String, Value> = original
                .iter()
                .filter(|(k, _)| *k != conversation)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            body.insert(conversation.into(), Value::Array(Vec::new()));
            body.entry("model")
                .or_insert_with(|| Value::String(model.name.clone()));
            if messages {
                // Only bounds `thinking.budget_tokens` here; the render checked the real one.
                body.entry("max_tokens").or_insert_with(|| u32::MAX.into());
            }
            let body = Value::Object(body);
            let chat = if messages {
                render::anthropic::messages_to_chat_map(&model, &body, &st.config.render)
            } else {
                crate::protocol::responses::to_chat(&body)
            };
            req.chat_request = Some(chat.map_err(|e| e.nested_in(field))?);
        }
        let empty = serde_json::Map::new();
        let api = if messages {
            Api::Messages
        } else {
            Api::Responses(original.as_ref().unwrap_or(&empty))
        };
        derender_as(&model, &req, &st.config.derender, api)
    })
    .await?;
    Ok(Json(out))
}

/// `GET /v1/models`: the served models. With `--engine`, those the engine lists (under its
/// own names, at its last readiness probe; all of them until a probe has read the list),
/// each with the smaller of the two `max_model_len`s.
pub fn models(st: &AppState) -> Json<ModelList> {
    let created = crate::protocol::unix_now();
    let engine = st.config.engine.as_deref();
    let listed = engine.and_then(|e| e.models());
    let data = st
        .models
        .models()
        .iter()
        .filter_map(|m| {
            let engine_model = engine.map(|e| e.model(&m.name).to_string());
            let mut max_model_len = m.max_model_len;
            if let (Some(list), Some(name)) = (&listed, &engine_model) {
                let card = list.iter().find(|c| &c.id == name)?;
                max_model_len = match (max_model_len, card.max_model_len) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
            let (reasoning, tools) = st.config.derender.parser_names(m);
            Some(ModelCard {
                id: m.name.clone(),
                object: "model",
                created,
                owned_by: "llm-render",
                root: m.source.clone(),
                parent: None,
                max_model_len,
                tokenizer_backend: match m.encoder.backend() {
                    crate::tokenize::Backend::Fast => "fastokens",
                    crate::tokenize::Backend::Reference(_) => "tokenizers",
                },
                native_template: match m.harmony {
                    Some(_) => Some("harmony"),
                    None => m
                        .templates
                        .select(false)
                        .ok()
                        .and_then(|s| s.native)
                        .filter(|_| st.config.render.native_templates)
                        .map(|t| t.name()),
                },
                parsers_chosen_by: st.config.derender.parsers_chosen_by(m),
                reasoning_parser: reasoning.map(str::to_string),
                tool_call_parser: tools.map(str::to_string),
                engine_model,
            })
        })
        .collect();
    Json(ModelList {
        object: "list",
        data,
    })
}

/// `GET /health`: 200 when the server serves; with `--engine`, 503 while the engine's
/// last readiness probe failed, so a Kubernetes readiness probe takes the pod out of
/// rotation with its engine.
/// Readiness: 200 while the server should get traffic; 503 once it drains after a stop
/// signal, and with `--engine` while the engine's last readiness probe failed.
pub fn health(st: &AppState) -> axum::response::Response {
    if st.is_draining() {
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        )
        .into_response();
    }
    match &st.config.engine {
        Some(engine) if !engine.ready() => {
            ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the engine is not ready")
                .into_response()
        }
        _ => StatusCode::OK.into_response(),
    }
}

/// Liveness: 200 whenever the process answers at all (draining, or with the engine down,
/// included), so a liveness probe restarts only a server that has stopped answering.
pub fn live() -> impl IntoResponse {
    Json(serde_json::json!({"status": "ok"}))
}

pub fn metrics(st: &AppState) -> impl IntoResponse {
    st.metrics.observe_caches(st.models.models());
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        st.metrics.render_text(),
    )
}
