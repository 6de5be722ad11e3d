//! Graceful shutdown, shared by both runtimes: what a stop signal starts, and the accept
//! loop that runs until the listener is closed.
//!
//! On SIGTERM or Ctrl-C:
//!
//! 1. the server turns not ready at once: `/health` answers 503, `/live` still 200, and
//!    every response carries `Connection: close`, so keep-alive clients reconnect
//!    (through their load balancer, to another replica);
//! 2. it keeps accepting and serving for `--drain-delay-secs`, the time load balancers and
//!    Kubernetes endpoints take to see the 503 or the pod's termination and stop sending;
//! 3. it stops accepting: no new handshakes, every connection the kernel has already
//!    queued is accepted and served, and the listener closes (`listener::close`);
//! 4. each open connection finishes the request it is on, or its first when it has sent
//!    none yet, and closes (hyper's graceful shutdown); idle keep-alive connections close;
//! 5. the process exits 0 once the last connection has closed, or at
//!    `--drain-timeout-secs` after the signal (the bound of the whole shutdown), cutting
//!    those still open. A second signal cuts them at once.

use crate::server::AppState;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

type Signal = Pin<Box<dyn Future<Output = ()> + Send>>;

/// When the server stops: `first` starts the drain, `again` (awaited only after it) cuts
/// the drain short.
pub struct Shutdown {
    first: Signal,
    pub(super) again: Signal,
}

impl Shutdown {
    /// SIGTERM or Ctrl-C, then another one.
    pub fn signals() -> Shutdown {
        Shutdown {
            first: Box::pin(signal()),
            again: Box::pin(signal()),
        }
    }

    /// When `first` completes, with no second signal.
    pub fn on(first: impl Future<Output = ()> + Send + 'static) -> Shutdown {
        Shutdown {
            first: Box::pin(first),
            again: Box::pin(std::future::pending()),
        }
    }
}

/// Accepts connections and gives each to `hand` (non-blocking) until the shutdown signal,
/// then drains: readiness off at once, accepting on for `--drain-delay-secs` (or until a
/// second signal), then the queued connections and the close (`listener::close`). Returns
/// the instant the whole shutdown must end by (`--drain-timeout-secs` after the signal), or
/// `None` when a second signal came: it ends now.
pub(super) async fn accept_until_closed(
    listener: std::net::TcpListener,
    state: &AppState,
    stop: &mut Shutdown,
    mut hand: impl FnMut(std::net::TcpStream),
) -> std::io::Result<Option<Instant>> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    accept_until(&listener, stop.first.as_mut(), &mut hand).await;
    let signalled = Instant::now();
    state.start_draining();
    let delay = state.config.drain_delay;
    tracing::info!(
        "shutdown signal received: /health answers 503; serving on for {:.1} s before closing the listener (another signal exits at once)",
        delay.as_secs_f64()
    );
    let mut hurried = false;
    accept_until(
        &listener,
        async {
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = stop.again.as_mut() => hurried = true,
            }
        },
        &mut hand,
    )
    .await;
    if hurried {
        return Ok(None);
    }
    let queued = super::listener::close(listener.into_std()?, &mut hand);
    tracing::info!(
        queued,
        "listener closed; finishing the requests of open connections"
    );
    Ok(Some(signalled + state.config.drain_timeout))
}

/// Waits for `drained` (every connection closed) until `deadline` or a second signal, and
/// says what cut it, with the count of connections `open` then. Whether all drained.
pub(super) async fn finish(
    drained: impl Future<Output = ()>,
    deadline: Option<Instant>,
    stop: &mut Shutdown,
    open: impl Fn() -> usize,
) -> bool {
    let cut = match deadline {
        None => Some("a second signal came"),
        Some(deadline) => tokio::select! {
            _ = drained => None,
            _ = tokio::time::sleep_until(deadline.into()) => Some("the drain timeout has passed"),
            _ = stop.again.as_mut() => Some("a second signal came"),
        },
    };
    if let Some(why) = cut {
        tracing::warn!(open = open(), "{why}: exiting with connections still open");
    }
    cut.is_none()
}

/// Accepts connections and gives each to `hand` until `until` completes.
async fn accept_until(
    listener: &tokio::net::TcpListener,
    until: impl Future<Output = ()>,
    hand: &mut impl FnMut(std::net::TcpStream),
) {
    let mut until = std::pin::pin!(until);
    loop {
        let accepted = tokio::select! {
            biased;
            _ = &mut until => return,
            accepted = listener.accept() => accepted,
        };
        match accepted.and_then(|(stream, _)| stream.into_std()) {
            Ok(stream) => hand(stream),
            // Out of file descriptors or similar: back off instead of spinning, as axum does.
            Err(e) => {
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Resolves on SIGTERM or Ctrl-C.
async fn signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}
