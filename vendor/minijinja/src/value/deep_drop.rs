//! llm-render patch (PATCH.md): dropping a deeply nested value without recursion.
//!
//! A value nested a hundred thousand objects deep (`{% set ns.v = [ns.v] %}` in a loop, or
//! maps, tuples or namespaces the same way) was freed by Rust's recursive drop, one stack
//! frame group per level, and overflowed the stack: the process aborted. Here the release
//! of an object's last reference made while another object is being freed is deferred to a
//! per-thread list, which the outermost release drains one object at a time, so freeing
//! takes constant stack at any depth (as CPython's "trashcan" does for its containers).

use std::cell::{Cell, RefCell};

type Release = (*const (), fn(*const ()));

thread_local! {
    static DRAINING: Cell<bool> = const { Cell::new(false) };
    static PENDING: RefCell<Vec<Release>> = const { RefCell::new(Vec::new()) };
}

/// Resets the draining flag even if a drop unwinds.
struct Draining;

impl Drop for Draining {
    fn drop(&mut self) {
        let _ = DRAINING.try_with(|d| d.set(false));
    }
}

/// Releases one reference to a type-erased object (`decref(ptr)`), now or, when called
/// while an object is being freed on this thread, after that.
pub(crate) fn release(ptr: *const (), decref: fn(*const ())) {
    match DRAINING.try_with(|d| d.replace(true)) {
        // Inside a release: defer this one to the loop below.
        Ok(true) => {
            if PENDING.try_with(|p| p.borrow_mut().push((ptr, decref))).is_err() {
                decref(ptr);
            }
        }
        Ok(false) => {
            let _draining = Draining;
            decref(ptr);
            while let Some((p, d)) = PENDING.try_with(|q| q.borrow_mut().pop()).ok().flatten() {
                d(p);
            }
        }
        // The thread's locals are being torn down: release it as minijinja did.
        Err(_) => decref(ptr),
    }
}
