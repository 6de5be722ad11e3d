//! The server's two timeouts — the header-read timeout and the per-request limit — on a
//! coarse clock kept by one sweeper thread, instead of in the workers' tokio timer wheels.
//!
//! # Why
//!
//! A tokio runtime that holds any timer when it goes idle parks in `epoll_wait` with a
//! timeout, which arms a kernel high-resolution timer at every park and cancels it at every
//! wakeup; with no timer it parks with none (`strace`: a worker's `epoll_wait` timeouts were
//! ~29,600 ms, now -1). Each
//! request armed `tokio::time::timeout` around its handler, and hyper armed its header-read
//! timer whenever a connection waited for a request head, so a worker always held one.
//! With both here, a chat turn costs 3.8% less server CPU (six paired `benches/ab_turns.py`
//! runs of fresh processes: 0.984, 0.933, 0.985, 0.989, 0.934, 0.948 of before), a short
//! render 5.6% less. A tokio-free `hyper::rt::Timer` alone changed nothing measurable: hyper
//! still made a timer per request and polled its connection once more after each response to
//! start it, and the request timer was still in the wheel.
//!
//! # How
//!
//! A request's deadline is a slot in a shared table: its time on the coarse clock and the
//! waker of the task waiting on it. Arming one takes a slot when its future first waits,
//! dropping it frees the slot; each is a short uncontended lock.
//!
//! The header-read timeout is kept per connection instead ([`ConnectionWatch`]), outside
//! hyper, whose own (`header_read_timeout`) costs a timer per request whatever the clock. A
//! connection
//! is *waiting* from when it opens, and from when a response's body has been handed to hyper
//! (the body is dropped), until the service is called with the next request, that is until
//! its head has been read. That is when hyper's timer runs. Each connection registers once;
//! a request marks it busy and its response's body marks it waiting, one atomic store each.
//!
//! The sweeper thread wakes every tick (an eighth of the shorter timeout, 10–250 ms), advances
//! the clock, and wakes the tasks whose deadline has passed and the connections that have
//! waited too long; the tasks then see that for themselves and end. Deadlines are armed from
//! the real clock (one `clock_gettime` in the vDSO) and checked against the last tick, so a
//! timeout fires up to one tick late, never early. The sweeper's own sleep is the only timer,
//! four times a second at the defaults.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// The coarse clock, the armed deadlines, and the thread that sweeps them.
#[derive(Debug)]
pub struct Deadlines {
    base: Instant,
    /// Milliseconds from `base` to the last tick.
    now_ms: AtomicU64,
    slots: Mutex<Slots>,
    /// Open connections under a header-read timeout.
    watches: Mutex<Vec<Weak<ConnectionWatch>>>,
}

#[derive(Debug, Default)]
struct Slots {
    table: Vec<Slot>,
    free: Vec<usize>,
}

#[derive(Debug)]
struct Slot {
    /// Milliseconds from `base`.
    at_ms: u64,
    waker: Option<Waker>,
}

impl Deadlines {
    /// A clock ticking every eighth of `shortest` (10 ms to 250 ms), and its sweeper thread,
    /// which stops once the returned value is dropped.
    pub fn start(shortest: Duration) -> std::io::Result<Arc<Deadlines>> {
        let tick = (shortest / 8).clamp(Duration::from_millis(10), Duration::from_millis(250));
        let deadlines = Arc::new(Deadlines {
            base: Instant::now(),
            now_ms: AtomicU64::new(0),
            slots: Mutex::new(Slots::default()),
            watches: Mutex::new(Vec::new()),
        });
        let weak: Weak<Deadlines> = Arc::downgrade(&deadlines);
        std::thread::Builder::new()
            .name("llm-render-deadlines".into())
            .spawn(move || loop {
                std::thread::sleep(tick);
                match weak.upgrade() {
                    Some(d) => d.sweep(),
                    None => return,
                }
            })?;
        Ok(deadlines)
    }

    /// Runs `fut` until it finishes or `limit` has passed (`Err` then), as
    /// `tokio::time::timeout` does: `fut` is polled first.
    pub async fn timeout<F: Future>(
        self: &Arc<Self>,
        limit: Duration,
        fut: F,
    ) -> Result<F::Output, Elapsed> {
        let mut deadline = self.deadline(self.real_now_ms().saturating_add(ceil_ms(limit)));
        let mut fut = std::pin::pin!(fut);
        std::future::poll_fn(|cx| {
            if let Poll::Ready(v) = fut.as_mut().poll(cx) {
                return Poll::Ready(Ok(v));
            }
            if deadline.poll_expired(cx) {
                return Poll::Ready(Err(Elapsed));
            }
            Poll::Pending
        })
        .await
    }

    /// A header-read timeout of `timeout` for a new connection, waiting from now.
    pub fn watch(self: &Arc<Self>, timeout: Duration) -> Arc<ConnectionWatch> {
        let watch = Arc::new(ConnectionWatch {
            deadlines: self.clone(),
            timeout_ms: ceil_ms(timeout),
            since_ms: AtomicU64::new(self.real_now_ms()),
            waker: Mutex::new(None),
            registered: AtomicBool::new(false),
        });
        lock(&self.watches).push(Arc::downgrade(&watch));
        watch
    }

    fn deadline(self: &Arc<Self>, at_ms: u64) -> Deadline {
        Deadline {
            deadlines: self.clone(),
            at_ms,
            slot: None,
        }
    }

    /// The clock as of the last tick: what expiry is checked against. It is never ahead of
    /// the real time, so nothing expires early.
    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::Relaxed)
    }

    /// The real time, for arming: a deadline counted from the last tick could fire up to a
    /// tick early.
    fn real_now_ms(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Advances the clock, wakes the tasks whose deadline has passed and the connections that
    /// have waited too long, and forgets closed connections.
    fn sweep(&self) {
        let now = self.real_now_ms();
        self.now_ms.store(now, Ordering::Relaxed);
        let mut due: Vec<Waker> = lock(&self.slots)
            .table
            .iter_mut()
            .filter(|s| s.at_ms <= now)
            .filter_map(|s| s.waker.take())
            .collect();
        lock(&self.watches).retain(|w| {
            let Some(w) = w.upgrade() else {
                return false;
            };
            if w.expired_at(now) {
                if let Some(waker) = lock(&w.waker).take() {
                    // The task may find the connection busy again when it runs, and must
                    // then leave its waker anew for the next time it waits too long.
                    w.registered.store(false, Ordering::Relaxed);
                    due.push(waker);
                }
            }
            true
        });
        due.into_iter().for_each(Waker::wake);
    }
}

/// Nothing that can panic runs under these locks; what they guard stays consistent.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The limit of [`Deadlines::timeout`] passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed;

fn ceil_ms(d: Duration) -> u64 {
    u64::try_from(d.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX)
}

/// One armed deadline; frees its slot when dropped.
#[derive(Debug)]
struct Deadline {
    deadlines: Arc<Deadlines>,
    at_ms: u64,
    /// Taken when the deadline is first waited on.
    slot: Option<usize>,
}

impl Deadline {
    /// Whether the deadline has passed; if not, `cx`'s task is woken when it does.
    fn poll_expired(&mut self, cx: &mut Context<'_>) -> bool {
        if self.deadlines.now_ms() >= self.at_ms {
            return true;
        }
        let mut slots = lock(&self.deadlines.slots);
        let slots = &mut *slots;
        match self.slot {
            Some(i) => {
                let slot = &mut slots.table[i];
                match &slot.waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => slot.waker = Some(cx.waker().clone()),
                }
            }
            None => {
                let slot = Slot {
                    at_ms: self.at_ms,
                    waker: Some(cx.waker().clone()),
                };
                self.slot = Some(match slots.free.pop() {
                    Some(i) => {
                        slots.table[i] = slot;
                        i
                    }
                    None => {
                        slots.table.push(slot);
                        slots.table.len() - 1
                    }
                });
            }
        }
        false
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            let mut slots = lock(&self.deadlines.slots);
            slots.table[i] = Slot {
                at_ms: u64::MAX,
                waker: None,
            };
            slots.free.push(i);
        }
    }
}

/// The header-read timeout of one connection (see the module documentation).
#[derive(Debug)]
pub struct ConnectionWatch {
    deadlines: Arc<Deadlines>,
    timeout_ms: u64,
    /// When the connection began waiting for a request head (coarse milliseconds), or
    /// [`BUSY`] while a request is being served.
    since_ms: AtomicU64,
    /// The connection task's waker, kept once it has waited.
    waker: Mutex<Option<Waker>>,
    registered: AtomicBool,
}

/// [`ConnectionWatch::since_ms`] while a request is being served.
const BUSY: u64 = u64::MAX;

impl ConnectionWatch {
    /// The service got a request: its head has been read.
    pub fn request_started(&self) {
        self.since_ms.store(BUSY, Ordering::Relaxed);
    }

    /// A response's body has been handed to hyper: the connection waits for the next head.
    pub fn response_sent(&self) {
        self.since_ms
            .store(self.deadlines.real_now_ms(), Ordering::Relaxed);
    }

    /// Resolves once the connection has waited longer than its timeout for a request head.
    /// It must always be awaited from the same task (the connection's).
    pub async fn expired(&self) {
        std::future::poll_fn(|cx| {
            if self.expired_at(self.deadlines.now_ms()) {
                return Poll::Ready(());
            }
            if !self.registered.load(Ordering::Relaxed) {
                *lock(&self.waker) = Some(cx.waker().clone());
                self.registered.store(true, Ordering::Relaxed);
            }
            Poll::Pending
        })
        .await;
    }

    fn expired_at(&self, now_ms: u64) -> bool {
        let since = self.since_ms.load(Ordering::Relaxed);
        since != BUSY && now_ms.saturating_sub(since) >= self.timeout_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn counter() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        (count, waker)
    }

    #[test]
    fn a_deadline_expires_at_the_first_sweep_past_it_and_wakes_its_task() {
        let d = Deadlines::start(Duration::from_secs(60)).unwrap();
        let (count, waker) = counter();
        let mut cx = Context::from_waker(&waker);
        let mut deadline = d.deadline(d.now_ms() + 30);
        assert!(!deadline.poll_expired(&mut cx));
        d.sweep();
        assert_eq!(count.0.load(Ordering::Relaxed), 0);
        std::thread::sleep(Duration::from_millis(40));
        d.sweep();
        assert_eq!(count.0.load(Ordering::Relaxed), 1);
        assert!(deadline.poll_expired(&mut cx));
    }

    /// Armed from the real clock, not the last tick's: a timeout never fires early.
    #[test]
    fn a_stale_tick_does_not_make_a_timeout_early() {
        let d = Deadlines::start(Duration::from_secs(60)).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let t = Instant::now();
        let r = rt.block_on(d.timeout(Duration::from_millis(50), async {
            // Sweeps by hand (the thread ticks every 250 ms), as the clock stood 100 ms behind.
            d.sweep();
            std::future::pending::<()>().await
        }));
        assert_eq!(r, Err(Elapsed));
        assert!(
            t.elapsed() >= Duration::from_millis(50),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn dropped_deadlines_do_not_fire_and_their_slots_are_reused() {
        let d = Deadlines::start(Duration::from_secs(60)).unwrap();
        let (count, waker) = counter();
        let mut cx = Context::from_waker(&waker);
        let mut first = d.deadline(d.now_ms() + 1);
        assert!(!first.poll_expired(&mut cx));
        drop(first);
        let mut later = d.deadline(d.now_ms() + 60_000);
        assert!(!later.poll_expired(&mut cx));
        std::thread::sleep(Duration::from_millis(20));
        d.sweep();
        assert_eq!(count.0.load(Ordering::Relaxed), 0);
        assert!(!later.poll_expired(&mut cx));
        assert_eq!(lock(&d.slots).table.len(), 1);
    }

    /// A connection's clock runs only while it waits for a request head; a closed one leaves
    /// the sweep.
    #[test]
    fn a_watch_expires_only_while_its_connection_waits() {
        let d = Deadlines::start(Duration::from_secs(60)).unwrap();
        let (count, waker) = counter();
        let mut cx = Context::from_waker(&waker);
        let watch = d.watch(Duration::from_millis(30));
        let mut expired = Box::pin(watch.expired());
        assert!(expired.as_mut().poll(&mut cx).is_pending());
        watch.request_started();
        std::thread::sleep(Duration::from_millis(40));
        d.sweep();
        assert_eq!(count.0.load(Ordering::Relaxed), 0);
        assert!(expired.as_mut().poll(&mut cx).is_pending());
        watch.response_sent();
        d.sweep();
        assert_eq!(count.0.load(Ordering::Relaxed), 0);
        std::thread::sleep(Duration::from_millis(40));
        d.sweep();
        assert_eq!(count.0.load(Ordering::Relaxed), 1);
        // Woken, but a request came in before the task ran: it waits again, and is woken
        // again when that wait runs too long.
        watch.request_started();
        assert!(expired.as_mut().poll(&mut cx).is_pending());
        watch.response_sent();
        std::thread::sleep(Duration::from_millis(40));
        d.sweep();
        assert_eq!(count.0.load(Ordering::Relaxed), 2);
        assert!(expired.as_mut().poll(&mut cx).is_ready());
        drop(expired);
        drop(watch);
        d.sweep();
        assert!(lock(&d.watches).is_empty());
    }

    #[test]
    fn timeout_returns_the_output_or_elapsed() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let d = Deadlines::start(Duration::from_millis(80)).unwrap();
        rt.block_on(async {
            assert_eq!(
                d.timeout(Duration::from_millis(50), async { 7 }).await,
                Ok(7)
            );
            let never = std::future::pending::<()>();
            let t = Instant::now();
            assert_eq!(
                d.timeout(Duration::from_millis(50), never).await,
                Err(Elapsed)
            );
            let waited = t.elapsed();
            assert!(waited >= Duration::from_millis(40), "{waited:?}");
        });
    }

    #[test]
    fn the_sweeper_stops_with_its_deadlines() {
        let d = Deadlines::start(Duration::from_millis(80)).unwrap();
        let weak = Arc::downgrade(&d);
        drop(d);
        std::thread::sleep(Duration::from_millis(50));
        assert!(weak.upgrade().is_none());
    }
}
