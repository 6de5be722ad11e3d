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
//! Shutdown (`shutdown.rs`): on SIGTERM or Ctrl-C the server turns not ready, serves on for
//! the drain delay, then closes the listener after taking every queued connection; each
//! connection finishes its request and closes, and the process exits when the last one has,
//! or at the drain timeout.

use super::shutdown::{accept_until_closed, finish, Shutdown};
use crate::server::dispatch::Dispatcher;
use crate::server::AppState;
use hyper_util::rt::TokioIo;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, watch};

/// One worker as the acceptor sees it.
struct Worker {
    connections: mpsc::UnboundedSender<std::net::TcpStream>,
    /// Connections open on this worker (incremented here, decremented by the connection).
    open: Arc<AtomicUsize>,
}

/// Serves `listener` on `workers` single-threaded runtimes until SIGTERM or Ctrl-C, then
/// drains (`shutdown.rs`). Blocks the calling thread, which becomes the acceptor.
pub fn serve_per_core(
    listener: std::net::TcpListener,
    state: Arc<AppState>,
    workers: usize,
) -> std::io::Result<()> {
    serve_per_core_with(listener, state, workers, Shutdown::signals())
}

/// [`serve_per_core`] until `shutdown` completes instead of a signal (tests serve through
/// this with a shutdown that never comes, so they run the server's own runtime).
pub fn serve_per_core_until(
    listener: std::net::TcpListener,
    state: Arc<AppState>,
    workers: usize,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_per_core_with(listener, state, workers, Shutdown::on(shutdown))
}

fn serve_per_core_with(
    listener: std::net::TcpListener,
    state: Arc<AppState>,
    workers: usize,
    mut stop: Shutdown,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let (stop_tx, stop_rx) = watch::channel(false);
    // Each worker holds a sender; the receiver sees the channel close when all have ended.
    let (done_tx, mut done_rx) = mpsc::channel::<()>(1);
    let workers = workers.max(1);
    let mut pool = Vec::with_capacity(workers);
    let mut threads = Vec::with_capacity(workers);
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
            _done: done_tx.clone(),
        };
        threads.push(
            std::thread::Builder::new()
                .name(format!("llm-render-worker-{i}"))
                .spawn(move || {
                    rt.block_on(worker.run());
                    // Renders of requests already gone may still run on the blocking pool:
                    // they stop at their next cancellation check, unwaited.
                    rt.shutdown_background();
                })?,
        );
        pool.push(Worker {
            connections: tx,
            open,
        });
    }
    drop(done_tx);

    let acceptor = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let opens: Vec<Arc<AtomicUsize>> = pool.iter().map(|w| w.open.clone()).collect();
    let drained = acceptor.block_on(async move {
        let deadline =
            accept_until_closed(listener, &state, &mut stop, |stream| hand(&pool, stream)).await?;
        // Every queued connection is with its worker: now each finishes and closes, and each
        // worker ends once it has no connection left and will get none.
        let _ = stop_tx.send(true);
        drop(pool);
        let open = || {
            opens
                .iter()
                .map(|o| o.load(Ordering::Relaxed))
                .sum::<usize>()
        };
        let drained = async {
            done_rx.recv().await;
        };
        Ok::<bool, std::io::Error>(finish(drained, deadline, &mut stop, open).await)
    })?;
    // Cut short, the workers are left to the process's exit.
    if drained {
        for thread in threads {
            if thread.join().is_err() {
                tracing::error!("a worker thread panicked during shutdown");
            }
        }
    }
    Ok(())
}

/// Hands a new connection to the least-loaded worker.
fn hand(pool: &[Worker], stream: std::net::TcpStream) {
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
}

/// `--runtime work-stealing`: serves `listener` on the current multi-thread runtime, one task
/// per connection, each served as the per-core workers serve theirs (header-read timeout,
/// `TCP_NODELAY`, graceful shutdown). Returns when the last connection has drained after
/// SIGTERM or Ctrl-C, or at the drain timeout.
pub async fn serve_work_stealing(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
) -> std::io::Result<()> {
    let mut stop = Shutdown::signals();
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    let deadline = accept_until_closed(listener.into_std()?, &state, &mut stop, |stream| {
        match tokio::net::TcpStream::from_std(stream) {
            // No connection count: the scheduler balances tasks here.
            Ok(stream) => {
                tasks.spawn(serve_connection(stream, state.clone(), stop_rx.clone(), ()));
            }
            Err(e) => tracing::warn!("cannot register a connection: {e}"),
        }
        // Reap finished connections so the set does not grow with the process lifetime.
        while tasks.try_join_next().is_some() {}
    })
    .await?;
    let _ = stop_tx.send(true);
    let open = std::sync::atomic::AtomicUsize::new(tasks.len());
    let drained = async {
        while tasks.join_next().await.is_some() {
            open.store(tasks.len(), Ordering::Relaxed);
        }
    };
    finish(drained, deadline, &mut stop, || {
        open.load(Ordering::Relaxed)
    })
    .await;
    // Connections still open are dropped with their tasks when the runtime shuts down.
    Ok(())
}

/// One worker's runtime: serves the connections the acceptor sends it.
struct WorkerLoop {
    incoming: mpsc::UnboundedReceiver<std::net::TcpStream>,
    state: Arc<AppState>,
    open: Arc<AtomicUsize>,
    /// Set at shutdown, once every queued connection has been handed over: connections end
    /// after their request.
    stop: watch::Receiver<bool>,
    /// Dropped when the worker has ended (the acceptor waits for all).
    _done: mpsc::Sender<()>,
}

impl WorkerLoop {
    /// Serves every connection the acceptor sends, until it stops sending (shutdown) and the
    /// last has closed. A connection that arrives after the stop is still served: its first
    /// request is answered, then it closes.
    async fn run(mut self) {
        let mut tasks = tokio::task::JoinSet::new();
        while let Some(stream) = self.incoming.recv().await {
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
    let started = Arc::new(AtomicBool::new(false));
    let service = Dispatcher::new(state, watch.clone(), started.clone());
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.header_read_timeout(None);
    let mut conn = pin!(builder.serve_connection(TokioIo::new(stream), service));
    let mut expired = pin!(async {
        match &watch {
            Some(w) => w.expired().await,
            None => std::future::pending().await,
        }
    });
    tokio::select! {
        biased;
        _ = conn.as_mut() => return,
        _ = stop.changed() => {}
        // Dropping the connection closes it, as hyper does when its own timer fires.
        _ = &mut expired => return,
    }
    // The server drains, so every response from now on carries `Connection: close`, and the
    // connection closes after its current (or first) request. Keep-alive off on top closes
    // an idle connection now; but hyper also closes at once one that has read nothing yet,
    // whose request may well be on its way (just accepted from the queue): that one is left
    // to send it, within its header-read timeout.
    if started.load(Ordering::Relaxed) {
        conn.as_mut().graceful_shutdown();
    }
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = &mut expired => {}
    }
}
