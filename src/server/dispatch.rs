//! Which handler serves a request, and what every request passes through on its way:
//! metrics, a debug log line and the access log when on (every route; `access.rs`), and
//! `Connection: close` once the server drains → for the work routes, a guard that answers
//! 503 at once when `--max-concurrency` requests are in flight → the body, read up to
//! `--max-body-bytes` (413 past it) within the request timeout (408 past it) → the handler,
//! within what is left of the timeout (504 past it). A refused body is read on and
//! discarded, boundedly, before the answer ([`Refused::answer`]), so that a client that writes its
//! whole body before reading gets the 413 or 408 rather than a reset connection.
//!
//! Every route is a fixed path, so routing is a lookup in one table ([`ROUTES`]) rather
//! than axum's `Router` with two `axum::middleware::from_fn` layers, which cost a chat turn
//! boxed services and futures at each layer, a clone of the matched route's service, and a
//! boxed request body (measured in `docs/performance.md`, "Routing"). Here a work request
//! costs two boxed futures: the connection's and its handler's. The handlers (`routes.rs`)
//! still answer with axum's response types.

use super::access;
use super::otel;
use super::routes;
use super::transport::ConnectionWatch;
use super::{ApiError, AppState};
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::OwnedSemaphorePermit;

/// A boxed handler future: the one allocation a work route adds to a request.
type Answer = Pin<Box<dyn Future<Output = Response> + Send>>;

/// What a route does with a request.
pub(crate) enum Handler {
    /// A POST whose body is parsed and worked on, behind the guard (503, 504, 413).
    Work(fn(Arc<AppState>, Bytes) -> Answer),
    /// A POST served by the engine behind the sidecar (`front/`): its concurrency slot is
    /// held until the answer is complete (a stream's last byte), and the request timeout
    /// covers reading the body and the render; the engine's own pace is bounded by
    /// `--engine-stall-timeout-secs` instead.
    Front(fn(Arc<AppState>, Bytes, OwnedSemaphorePermit) -> Answer),
    /// A GET (and HEAD) without a body, answered at once, outside the guard.
    Info(fn(&AppState) -> Response),
}

/// One route: its path (also its metrics' `route` label), the name of its trace span (its
/// handler's name in vLLM, which names the span after it; `server::otel`; the GET routes
/// are not traced), and its handler.
pub(crate) struct Route {
    pub(crate) path: &'static str,
    pub(crate) span: &'static str,
    pub(crate) handler: Handler,
}

/// A work route's handler from an `async fn(Arc<AppState>, Bytes) -> impl IntoResponse`.
macro_rules! work {
    ($handler:path) => {
        Handler::Work(|st, body| Box::pin(async move { $handler(st, body).await.into_response() }))
    };
}

/// A front-door route's handler from an `async fn(Arc<AppState>, Bytes, OwnedSemaphorePermit)
/// -> Response`.
macro_rules! front {
    ($handler:path) => {
        Handler::Front(|st, body, permit| Box::pin($handler(st, body, permit)))
    };
}

/// Every route the server answers. Adding one is an entry here and its handler in
/// `routes.rs` (or a file of its own); metrics, 404/405 and `Allow` follow from the entry.
pub(crate) static ROUTES: &[Route] = &[
    Route {
        path: "/v1/chat/completions/render",
        span: "render_chat_completion",
        handler: work!(routes::chat_render),
    },
    Route {
        path: "/v1/messages/render",
        span: "render_messages",
        handler: work!(routes::messages_render),
    },
    Route {
        path: "/v1/responses/render",
        span: "render_responses",
        handler: work!(routes::responses_render),
    },
    Route {
        path: "/v1/completions/render",
        span: "render_completion",
        handler: work!(routes::completion_render),
    },
    Route {
        path: "/tokenize",
        span: "tokenize",
        handler: work!(routes::tokenize),
    },
    Route {
        path: "/detokenize",
        span: "detokenize",
        handler: work!(routes::detokenize),
    },
    Route {
        path: "/v1/block_hashes",
        span: "block_hashes",
        handler: work!(routes::block_hashes),
    },
    Route {
        path: "/v1/chat/completions/derender",
        span: "derender_chat_completion",
        handler: work!(routes::chat_derender),
    },
    Route {
        path: "/v1/completions/derender",
        span: "derender_completion",
        handler: work!(routes::completion_derender),
    },
    Route {
        path: "/v1/messages/derender",
        span: "derender_messages",
        handler: work!(routes::messages_derender),
    },
    Route {
        path: "/v1/responses/derender",
        span: "derender_responses",
        handler: work!(routes::responses_derender),
    },
    Route {
        path: "/v1/chat/completions",
        span: "create_chat_completion",
        handler: front!(super::front::chat_completions),
    },
    Route {
        path: "/v1/completions",
        span: "create_completion",
        handler: front!(super::front::completions),
    },
    Route {
        path: "/v1/messages",
        span: "create_messages",
        handler: front!(super::front::messages),
    },
    Route {
        path: "/v1/responses",
        span: "create_responses",
        handler: front!(super::front::responses),
    },
    Route {
        path: "/health",
        span: "health",
        handler: Handler::Info(|st| routes::health(st).into_response()),
    },
    Route {
        path: "/live",
        span: "live",
        handler: Handler::Info(|_| routes::live().into_response()),
    },
    Route {
        path: "/v1/models",
        span: "show_available_models",
        handler: Handler::Info(|st| routes::models(st).into_response()),
    },
    Route {
        path: "/metrics",
        span: "metrics",
        handler: Handler::Info(|st| routes::metrics(st).into_response()),
    },
];

impl Route {
    /// The route served at `path` (exactly: no trailing slash, case-sensitive).
    pub(crate) fn find(path: &str) -> Option<&'static Route> {
        ROUTES.iter().find(|r| r.path == path)
    }

    fn is_work(&self) -> bool {
        matches!(self.handler, Handler::Work(_) | Handler::Front(_))
    }

    /// The methods it answers, as the `Allow` header lists them.
    fn allow(&self) -> &'static str {
        if self.is_work() {
            "POST"
        } else {
            "GET,HEAD"
        }
    }

    fn allows(&self, method: &Method) -> bool {
        if self.is_work() {
            method == Method::POST
        } else {
            method == Method::GET || method == Method::HEAD
        }
    }
}

/// The service hyper calls for each request of one connection.
#[derive(Clone)]
pub(crate) struct Dispatcher {
    state: Arc<AppState>,
    /// The connection's header-read timeout (`server::transport::deadlines`), told when a request
    /// arrives and when its response has been sent.
    watch: Option<Arc<ConnectionWatch>>,
    /// Set once the connection's first request head has been read (shutdown closes such a
    /// connection when idle; one that has sent nothing yet is left to send its request).
    started: Arc<AtomicBool>,
}

impl Dispatcher {
    pub(crate) fn new(
        state: Arc<AppState>,
        watch: Option<Arc<ConnectionWatch>>,
        started: Arc<AtomicBool>,
    ) -> Self {
        Dispatcher {
            state,
            watch,
            started,
        }
    }
}

impl hyper::service::Service<Request<Incoming>> for Dispatcher {
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        // Its head has been read: the connection is busy until the response is sent.
        if let Some(w) = &self.watch {
            w.request_started();
        }
        self.started.store(true, Ordering::Relaxed);
        let state = self.state.clone();
        let watch = self.watch.clone();
        Box::pin(async move {
            let mut access = state
                .config
                .access_log
                .then(|| access::Entry::start(req.method(), req.uri().path()));
            let traced = state.config.traces.is_some();
            let mut seen = access::Seen::new(access.is_some() || traced);
            let mut resp = dispatch(&state, req, &mut seen).await;
            if let Some(entry) = &mut access {
                entry.answered(resp.status().as_u16(), seen);
            }
            if state.is_draining() {
                // Keep-alive clients reconnect, through their load balancer, elsewhere.
                resp.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            Ok(resp.map(|body| ResponseBody {
                body,
                watch,
                access,
            }))
        })
    }
}

/// A request body the server reads: hyper's `Incoming` from a connection, or a whole body
/// handed in by [`respond`].
pub(crate) trait RequestBody:
    http_body::Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + Unpin
{
}

impl<B> RequestBody for B where
    B: http_body::Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
        + Send
        + Unpin
{
}

/// The server's answer to one request, in process: the same routing, guard, limits, metrics
/// and handlers as a request from a connection, without the connection (no access log line,
/// no header-read timeout, no `Connection: close` while draining). For callers that hold a
/// whole request: the fuzz targets (`fuzz/`) and their regression test.
pub async fn respond(state: &Arc<AppState>, req: Request<http_body_util::Full<Bytes>>) -> Response {
    dispatch(state, req, &mut access::Seen::new(false)).await
}

/// Routes `req`, counted in the request metrics whatever its answer; `seen` gets what the
/// access log says of the body when it is read.
async fn dispatch<B: RequestBody>(
    state: &Arc<AppState>,
    req: Request<B>,
    seen: &mut access::Seen,
) -> Response {
    let method = req.method().clone();
    let continues = expects_continue(req.headers());
    let route = Route::find(req.uri().path());
    let flight = InFlight::start(state, route.map_or("unmatched", |r| r.path));
    let resp = match route {
        None => ApiError::new(StatusCode::NOT_FOUND, "no such route").into_response(),
        Some(route) if !route.allows(&method) => {
            let mut resp = ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed on this route",
            )
            .into_response();
            resp.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static(route.allow()));
            resp
        }
        Some(route) => {
            let span = match (&state.config.traces, &route.handler) {
                (Some(t), Handler::Work(_) | Handler::Front(_)) => {
                    Some(t.start_span(route.span, route.path, req.headers()))
                }
                _ => None,
            };
            let resp = otel::with_downstream(span.as_ref(), async {
                match route.handler {
                    Handler::Work(handler) => {
                        guarded(state, (req.into_body(), continues), handler, seen).await
                    }
                    Handler::Front(handler) => {
                        front(state, (req.into_body(), continues), handler, seen).await
                    }
                    Handler::Info(handler) => handler(state),
                }
            })
            .await;
            if let Some(mut span) = span {
                if let Some(model) = seen.model() {
                    span.model(model);
                }
                span.answered(resp.status().as_u16());
            }
            resp
        }
    };
    flight.answered(resp.status().as_u16(), &method);
    resp
}

/// A work route's `handler` behind the guard: 503 at once when `--max-concurrency` requests
/// are already being served; the body within `--request-timeout-secs` (408 past it), then
/// the handler within what is left of it (504 past it). `body`: the body and whether the
/// client waits for `100 Continue` ([`expects_continue`]). `seen`: the body, once read, for
/// the access log.
async fn guarded(
    state: &Arc<AppState>,
    body: (impl RequestBody, bool),
    handler: fn(Arc<AppState>, Bytes) -> Answer,
    seen: &mut access::Seen,
) -> Response {
    let Ok(permit) = state.permits.try_acquire() else {
        return at_capacity(state);
    };
    let limit = state.config.request_timeout;
    let start = Instant::now();
    let bytes = match body_in_time(state, body).await {
        Ok(bytes) => bytes,
        Err(refused) => {
            // The slot is free while the rest of a refused body is read.
            drop(permit);
            return refused.answer(state).await;
        }
    };
    seen.body(state, &bytes);
    let left = limit.saturating_sub(start.elapsed());
    match state
        .deadlines
        .timeout(left, handler(state.clone(), bytes))
        .await
    {
        Ok(resp) => resp,
        Err(_) => ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            format!(
                "request took longer than the server's {:.1} s limit",
                limit.as_secs_f64()
            ),
        )
        .into_response(),
    }
}

/// A front-door route's `handler`: 503 at once at `--max-concurrency`, as [`guarded`], and
/// the body read within the request timeout (408 past it); the handler keeps the slot.
/// `seen`: the body, once read, for the access log.
async fn front(
    state: &Arc<AppState>,
    body: (impl RequestBody, bool),
    handler: fn(Arc<AppState>, Bytes, OwnedSemaphorePermit) -> Answer,
    seen: &mut access::Seen,
) -> Response {
    let Ok(permit) = state.permits.clone().try_acquire_owned() else {
        return at_capacity(state);
    };
    match body_in_time(state, body).await {
        Ok(bytes) => {
            seen.body(state, &bytes);
            handler(state.clone(), bytes, permit).await
        }
        Err(refused) => {
            drop(permit);
            refused.answer(state).await
        }
    }
}

fn at_capacity(state: &AppState) -> Response {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "server is at its concurrency limit ({}); retry later",
            state.config.max_concurrency
        ),
    )
    .into_response()
}

/// A body refused before its handler ran: the answer, and the body's unread rest when it is
/// to be read on first ([`Refused::answer`]).
struct Refused<B> {
    answer: Response,
    rest: Option<B>,
}

impl<B: RequestBody> Refused<B> {
    /// The answer, once the body's rest has been read and dropped (at most [`DISCARD_TIME`]
    /// and [`discard_bytes`]). Common clients (Python's `requests` and `urllib`, many SDKs)
    /// write the whole body before they read anything: a server that answers and closes
    /// with the body unread resets the connection, and such a client sees a broken pipe
    /// instead of the answer. Past either bound the connection closes after the answer all
    /// the same (hyper closes a connection whose body was not read to its end).
    async fn answer(self, state: &AppState) -> Response {
        if let Some(mut body) = self.rest {
            let most = discard_bytes(state.config.max_body_bytes);
            let read = async {
                let mut seen = 0u64;
                while let Some(Ok(frame)) = body.frame().await {
                    seen += frame.data_ref().map_or(0, |d| d.len() as u64);
                    if seen > most {
                        return;
                    }
                }
            };
            let _ = state.deadlines.timeout(DISCARD_TIME, read).await;
        }
        self.answer
    }
}

/// The whole body within `--request-timeout-secs`, or why not: 413 past `--max-body-bytes`
/// (at once when its `content-length` says so), 400 when the client stops sending it
/// midway, 408 when it has not arrived in time. A body refused for its size or its time is
/// read on before the answer unless the client waits for `100 Continue` (it then never
/// sends the body) or says it is past [`discard_bytes`] (it would be cut there anyway).
async fn body_in_time<B: RequestBody>(
    state: &AppState,
    (mut body, continues): (B, bool),
) -> Result<Bytes, Refused<B>> {
    let limit = state.config.request_timeout;
    let max = state.config.max_body_bytes;
    let declared = http_body::Body::size_hint(&body).lower();
    let answer = if declared > max as u64 {
        too_large()
    } else {
        match state
            .deadlines
            .timeout(limit, Limited::new(&mut body, max).collect())
            .await
        {
            Ok(Ok(collected)) => return Ok(collected.to_bytes()),
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => too_large(),
            Ok(Err(e)) => {
                return Err(Refused {
                    answer: ApiError::new(
                        StatusCode::BAD_REQUEST,
                        format!("failed to read the request body: {e}"),
                    )
                    .into_response(),
                    rest: None,
                })
            }
            Err(_) => ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body did not arrive within the server's {:.1} s limit \
                     (--request-timeout-secs)",
                    limit.as_secs_f64()
                ),
            )
            .into_response(),
        }
    };
    let read_on = !continues && declared <= discard_bytes(max);
    Err(Refused {
        answer,
        rest: read_on.then_some(body),
    })
}

fn too_large() -> Response {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "request body is larger than the server's limit (--max-body-bytes)",
    )
    .into_response()
}

/// How long a refused body is still read for ([`Refused::answer`]).
const DISCARD_TIME: Duration = Duration::from_secs(5);

/// How much of a refused body is still read ([`Refused::answer`]): four times
/// `--max-body-bytes`, at least 64 MiB.
fn discard_bytes(limit: usize) -> u64 {
    (limit as u64).saturating_mul(4).max(64 << 20)
}

/// Whether the request asks for `100 Continue` before it sends its body (curl does for
/// large ones): hyper sends it on the body's first read, so a body refused unread is never
/// sent.
fn expects_continue(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}

/// A response body that tells the connection's watch when hyper is done with it (has
/// written it, or dropped it with the connection), and writes the access log line then.
pub(crate) struct ResponseBody {
    body: Body,
    watch: Option<Arc<ConnectionWatch>>,
    /// With `--access-log`: the request's line, which counts the bytes sent.
    access: Option<Box<access::Entry>>,
}

impl http_body::Body for ResponseBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if let (Some(entry), std::task::Poll::Ready(Some(Ok(frame)))) = (&mut self.access, &polled)
        {
            if let Some(data) = frame.data_ref() {
                entry.sent(data.len());
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for ResponseBody {
    fn drop(&mut self) {
        if let Some(w) = &self.watch {
            w.response_sent();
        }
    }
}

/// One request in `requests_in_flight`, from its arrival until it is answered or dropped.
/// hyper drops a request's future when its client goes away first; the request then still
/// leaves the gauge, and is counted with status 499 (nginx's "client closed request").
struct InFlight<'a> {
    state: &'a AppState,
    route: &'static str,
    start: Instant,
    answered: bool,
}

impl<'a> InFlight<'a> {
    fn start(state: &'a AppState, route: &'static str) -> Self {
        state.metrics.in_flight.inc();
        InFlight {
            state,
            route,
            start: Instant::now(),
            answered: false,
        }
    }

    /// Records the answer, and logs it at debug level.
    fn answered(mut self, status: u16, method: &Method) {
        self.answered = true;
        let elapsed = self.start.elapsed();
        let route = self.route;
        self.state.metrics.observe_request(route, status, elapsed);
        tracing::debug!(%method, route, status, latency_us = elapsed.as_micros() as u64, "request");
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.state.metrics.in_flight.dec();
        if !self.answered {
            let elapsed = self.start.elapsed();
            self.state.metrics.observe_request(self.route, 499, elapsed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_found_by_their_exact_paths() {
        for route in ROUTES {
            assert!(Route::find(route.path).is_some_and(|r| std::ptr::eq(r, route)));
        }
        for other in ["/", "/health/", "/v1/chat/completions/", "/V1/models", ""] {
            assert!(Route::find(other).is_none());
        }
        let mut paths: Vec<_> = ROUTES.iter().map(|r| r.path).collect();
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(paths.len(), ROUTES.len(), "a path is listed twice");
    }
}
