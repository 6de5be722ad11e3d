//! llm-render patch (PATCH.md): bounds the formatting (and hashing) of one value.
//!
//! `Display`/`Debug` of a value walk it recursively, with no limit of their own: a value
//! that holds itself (`{% set ns.v = (ns, 1) %}`) recursed until the stack overflowed and
//! the process aborted, one nested a hundred thousand lists deep did the same, and a list
//! doubled by reference (`{% set ns.v = [ns.v, ns.v] %}`, 40 times) printed 2^40 items.
//! Here each object formatted inside one top-level `Display`/`Debug` call counts against a
//! depth and an object budget, and each string inside them against a byte budget; past any
//! of them the object or string is written as `...`, as Python's repr writes a container
//! it is already printing. `Hash` of an object walks under the same bounds (leaving deeper
//! items out of the hash). Real chat templates stay far below these limits.

use std::cell::Cell;

/// Objects nested inside one another while formatting.
pub(crate) const MAX_DEPTH: u32 = 256;
/// Objects formatted within one top-level call.
pub(crate) const MAX_OBJECTS: u64 = 1 << 20;
/// Bytes of strings written inside objects within one top-level call.
pub(crate) const MAX_BYTES: u64 = 64 << 20;

thread_local! {
    static OVERFLOWED: Cell<bool> = const { Cell::new(false) };
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static OBJECTS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

/// An object being formatted; dropping it leaves the object (and, at the top level, resets
/// the budgets for the next value).
pub(crate) struct Guard(());

impl Drop for Guard {
    fn drop(&mut self) {
        let depth = DEPTH.with(|d| {
            let v = d.get().saturating_sub(1);
            d.set(v);
            v
        });
        if depth == 0 {
            OBJECTS.with(|o| o.set(0));
            BYTES.with(|b| b.set(0));
        }
    }
}

/// Enters an object to format, or `None` when it must be written as `...`.
pub(crate) fn enter_object() -> Option<Guard> {
    let depth = DEPTH.with(Cell::get);
    let objects = OBJECTS.with(Cell::get);
    if depth >= MAX_DEPTH || objects >= MAX_OBJECTS || BYTES.with(Cell::get) >= MAX_BYTES {
        return None;
    }
    DEPTH.with(|d| d.set(depth + 1));
    OBJECTS.with(|o| o.set(objects + 1));
    Some(Guard(()))
}

/// Enters an object to compare (`==`, ordering), or `None` past the bounds: the comparison
/// then answers as if equal (unequal for `==`) and the render that made it fails with
/// [`overflow_error`], as Python's `RecursionError` would end it.
pub(crate) fn enter_compare() -> Option<Guard> {
    let guard = enter_object();
    if guard.is_none() {
        OVERFLOWED.with(|o| o.set(true));
    }
    guard
}

/// Clears the comparison-overflow mark (a render starting on this thread).
pub(crate) fn reset_overflow() {
    OVERFLOWED.with(|o| o.set(false));
}

/// The error of a render during which a comparison overflowed its bounds.
pub(crate) fn overflow_error() -> Option<crate::Error> {
    OVERFLOWED.with(|o| o.replace(false)).then(|| {
        crate::Error::new(
            crate::ErrorKind::InvalidOperation,
            "comparison of values nested too deeply (or holding themselves)",
        )
    })
}

/// Whether a string of `len` bytes may be written: always at the top level (not inside an
/// object), else while the byte budget lasts.
pub(crate) fn spend_bytes(len: usize) -> bool {
    if DEPTH.with(Cell::get) == 0 {
        return true;
    }
    BYTES.with(|b| {
        let v = b.get().saturating_add(len as u64);
        b.set(v);
        v <= MAX_BYTES
    })
}
