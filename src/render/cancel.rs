//! Cooperative cancellation of a render that runs on the blocking pool.
//!
//! When a client disconnects or the request timeout fires, hyper drops the request's future,
//! but a render already handed to `spawn_blocking` cannot be dropped: it runs to the end, its
//! `--max-blocking-renders` slot held, while new requests wait for slots. The server runs
//! such a render inside [`scope`] with a flag it sets when the request's future is dropped;
//! the render checks [`requested`] between its costly stages (after the template, before
//! each image) and stops with [`RequestError::Cancelled`](crate::error::RequestError).
//! Outside a scope (inline renders, the CLI) nothing is ever cancelled.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

thread_local! {
    static FLAG: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Runs `f` with `flag` as this thread's cancellation flag.
pub fn scope<R>(flag: Arc<AtomicBool>, f: impl FnOnce() -> R) -> R {
    crate::thread_scope::with_local(&FLAG, flag, f)
}

/// Whether the render running on this thread has been cancelled.
pub fn requested() -> bool {
    FLAG.with(|f| {
        f.borrow()
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
    })
}

/// Sets its flag when dropped: held by the request's future, so that dropping the future
/// (client gone, timeout) cancels the render it waits for.
pub struct CancelOnDrop(pub Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// `Err(Cancelled)` when [`requested`].
pub fn check() -> Result<(), crate::error::RequestError> {
    if requested() {
        Err(crate::error::RequestError::Cancelled)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_set_flag_in_scope_cancels() {
        assert!(!requested());
        let flag = Arc::new(AtomicBool::new(false));
        scope(flag.clone(), || {
            assert!(!requested());
            drop(CancelOnDrop(flag.clone()));
            assert!(requested());
            assert!(check().is_err());
        });
        assert!(!requested());
        assert!(check().is_ok());
    }
}
