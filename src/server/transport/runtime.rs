//! The two runtimes `llm-render serve` runs on, and the one way both serve a connection
//! (`serve_connection`: hyper HTTP/1.1, the header-read timeout of `server::transport::deadlines`,
//! `TCP_NODELAY`, graceful shutdown).
//!
//! The default is one single-threaded runtime per core ([`serve_per_core`]).
//! An acceptor thread takes each new connection and hands it to the worker with the fewest
//! open connections; that worker serves the connection with hyper's HTTP/1.1 server until it
//! closes. A worker is a tokio current-thread runtime on its own OS thread, so a request
//! never crosses threads: no work stealing, no cross-core wakeups.
//!
//! Why not tokio's multi-thread runtime: hyper's body channel wakes the connection task from
//! inside its own poll (the handler taking a body chunk wakes the dispatcher, which is the
//! same task). The multi-thread scheduler treats such a self-wake as a yield, queues the
//! task behind others and wakes an idle worker through a futex to come and steal it. With
//! one request in flight there is nothing to steal, so every POST pays a futile cross-core
//! wakeup and a context switch: 15–17% of server CPU per chat turn (paired runs,
//! docs/performance.md, "Serving"). A current-thread runtime just requeues the task.
//!
//! The trade-off: requests are balanced by connection, not by request. Each inline request
//! is bounded (`--inline-max-bytes`, ~0.1 ms), and larger ones already run on the blocking
//! pool, so a busy connection delays its worker's other connections by at most that much.
//! `--runtime work-stealing` ([`serve_work_stealing`]) restores the multi-thread runtime.
//!
//! Shutdown: on SIGTERM or Ctrl-C the acceptor stops, every connection finishes the
//! request it is serving and closes (hyper's graceful shutdown), and the process exits
//! when the last one has.

use crate::server::dispatch::Dispatcher;
use crate::server::AppState;
use hyper_util::rt::TokioIo;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// One worker as the acceptor sees it.
struct Worker {
    connections: mpsc::UnboundedSender<std::net::TcpStream>,
    /// Connections open on this worker (incremented here, decremented by the connection).
    open: Arc<AtomicUsize>,
    thread: std::thread::JoinHandle<()>,
}

/// Serves `listener` on `workers` single-threaded runtimes until SIGTERM or Ctrl-C, then
/// drains in-flight requests. Blocks the calling thread, which becomes the acceptor.
pub fn serve_per_core(
    listener: std::net::TcpListener,
    state: Arc<AppState>,
    workers: usize,
) -> std::io::Result<()> {
    serve_per_core_until(listener, state, workers, shutdown_signal())
}

/// [`serve_per_core`] until `shutdown` completes instead of a signal (tests serve through
/// this with a shutdown that never comes, so they run the server's own runtime).
pub fn serve_per_core_until(
    listener: std::net::TcpListener,
    state: Arc<AppState>,
    workers: usize,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let workers = workers.max(1);
    let mut pool = Vec::with_capacity(workers);
    for i in 0..workers {
        let (tx, rx) = mpsc::unbounded_channel();
        let open = Arc::new(AtomicUsize::new(0));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let worker = WorkerLoop {
            incoming: rx,
            state: state.clone(),
            open: open.clone(),
            stop: stop_rx.clone(),
        };
        let thread = std::thread::Builder::new()
            .name(format!("llm-render-worker-{i}"))
            .spawn(move || rt.block_on(worker.run()))?;
        pool.push(Worker {
            connections: tx,
            open,
            thread,
        });
    }

    let acceptor = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let accepted = acceptor.block_on(accept_loop(listener, &pool, shutdown));
    let _ = stop_tx.send(true);
    for worker in pool {
        drop(worker.connections);
        if worker.thread.join().is_err() {
            tracing::error!("a worker thread panicked during shutdown");
        }
    }
    accepted
}

/// Accepts until `shutdown`, handing each connection to the least-loaded worker.
async fn accept_loop(
    listener: std::net::TcpListener,
    pool: &[Worker],
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    accept_until_shutdown(&listener, shutdown, |stream| {
        let stream = match stream.into_std() {
            Ok(stream) => stream,
            Err(e) => return tracing::warn!("cannot hand over a connection: {e}"),
        };
        let Some(worker) = pool.iter().min_by_key(|w| w.open.load(Ordering::Relaxed)) else {
            return;
        };
        worker.open.fetch_add(1, Ordering::Relaxed);
        if worker.connections.send(stream).is_err() {
            // Its thread is gone (it cannot stop otherwise before shutdown): never pick it
            // again.
            worker.open.store(usize::MAX / 2, Ordering::Relaxed);
            tracing::error!("a worker has stopped; dropping its new connection");
        }
    })
    .await;
    Ok(())
}

/// `--runtime work-stealing`: serves `listener` on the current multi-thread runtime, one task
/// per connection, each served as the per-core workers serve theirs (header-read timeout,
/// `TCP_NODELAY`, graceful shutdown). Returns when the last connection has drained after
/// SIGTERM or Ctrl-C.
pub async fn serve_work_stealing(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    accept_until_shutdown(&listener, shutdown_signal(), |stream| {
        // No connection count: the scheduler balances tasks here.
        tasks.spawn(serve_connection(stream, state.clone(), stop_rx.clone(), ()));
        // Reap finished connections so the set does not grow with the process lifetime.
        while tasks.try_join_next().is_some() {}
    })
    .await;
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
    Ok(())
}

/// Accepts connections and gives each to `hand` until `shutdown` (SIGTERM or Ctrl-C when
/// serving).
async fn accept_until_shutdown(
    listener: &tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()>,
    mut hand: impl FnMut(tokio::net::TcpStream),
) {
    let mut shutdown = pin!(shutdown);
    loop {
        let stream = tokio::select! {
            biased;
            _ = &mut shutdown => return,
            accepted = listener.accept() => accepted,
        };
        match stream {
            Ok((stream, _)) => hand(stream),
            // Out of file descriptors or similar: back off instead of spinning, as axum does.
            Err(e) => {
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// One worker's runtime: serves the connections the acceptor sends it.
struct WorkerLoop {
    incoming: mpsc::UnboundedReceiver<std::net::TcpStream>,
    state: Arc<AppState>,
    open: Arc<AtomicUsize>,
    stop: watch::Receiver<bool>,
}

impl WorkerLoop {
    async fn run(mut self) {
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            let stream = tokio::select! {
                biased;
                _ = self.stop.changed() => break,
                stream = self.incoming.recv() => match stream {
                    Some(stream) => stream,
                    None => break,
                },
            };
            let guard = OpenGuard(self.open.clone());
            match tokio::net::TcpStream::from_std(stream) {
                Ok(stream) => {
                    tasks.spawn(serve_connection(
                        stream,
                        self.state.clone(),
                        self.stop.clone(),
                        guard,
                    ));
                }
                Err(e) => tracing::warn!("cannot register a connection: {e}"),
            }
            // Reap finished connections so the set does not grow with the process lifetime.
            while tasks.try_join_next().is_some() {}
        }
        while tasks.join_next().await.is_some() {}
    }
}

/// Decrements its worker's open-connection count when the connection ends.
struct OpenGuard(Arc<AtomicUsize>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Serves one HTTP/1.1 connection until the client closes it, or until shutdown, when the
/// request in progress finishes and the connection closes. `_guard` is dropped when it ends.
async fn serve_connection(
    stream: tokio::net::TcpStream,
    state: Arc<AppState>,
    mut stop: watch::Receiver<bool>,
    _guard: impl Send + 'static,
) {
    // Responses go out in one write; there is nothing to coalesce.
    let _ = stream.set_nodelay(true);
    // The header-read timeout runs while the connection waits for a request head: from now,
    // and from each response's end to the next request (`server::transport::deadlines`, not hyper's).
    let watch = state
        .config
        .header_read_timeout
        .map(|timeout| state.deadlines.watch(timeout));
    let service = Dispatcher::new(state, watch.clone());
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.header_read_timeout(None);
    let mut conn = pin!(builder.serve_connection(TokioIo::new(stream), service));
    let expired = async {
        match &watch {
            Some(w) => w.expired().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        _ = conn.as_mut() => return,
        _ = stop.changed() => {}
        // Dropping the connection closes it, as hyper does when its own timer fires.
        _ = expired => return,
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

/// Resolves on SIGTERM or Ctrl-C.
async fn shutdown_signal() {
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
    tracing::info!("shutdown signal received; draining in-flight requests");
}
