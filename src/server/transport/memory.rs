//! What the allocator does with memory the server frees (mimalloc's *purge*).
//!
//! mimalloc returns freed memory to the OS once it has gone unused for its purge delay (1 s
//! by default in mimalloc 3), and pays a page fault, clearing a fresh page (often a 2 MiB
//! huge page), when it needs that memory again. A chat's prompt-cache entry grows every
//! turn, so each new one lands on memory that other conversations' entries freed a while
//! before. With the default delay that cost 12–15% of a chat turn's mean server CPU (paired
//! runs of 80 rounds of fresh 20-turn chats: 0.23 `madvise` and 0.6 page faults per
//! request, none without purging), for ~37 MB less resident memory (~355 MB against
//! ~392 MB, mostly the model).
//!
//! `--memory-release-ms` sets the delay; the default, -1, keeps freed memory for reuse. The
//! memory the server holds stays bounded by its limits (caches, concurrency, body size); it
//! is just not handed back after a peak.

use std::os::raw::c_long;

/// mimalloc 3's `mi_option_purge_delay` (its place in `mi_option_e`, `mimalloc.h`;
/// libmimalloc-sys names no constant for it). The test below checks that it is the purge
/// delay.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Sets how long freed memory is kept for reuse before it is returned to the OS: `ms`
/// milliseconds, or for good when `ms` is negative. What model loading freed stays too: the
/// caches grow into it (handing it back first measured as many page faults as purging).
pub fn set_release_delay(ms: i64) {
    let ms = c_long::try_from(ms).unwrap_or(c_long::MAX);
    // SAFETY: a plain call into mimalloc, valid at any time from any thread.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, ms) };
}

#[cfg(test)]
mod tests {
    /// The option at that place has mimalloc 3's purge-delay default, 1000 ms (unless the
    /// environment sets it).
    #[test]
    fn the_option_is_the_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: a plain read of an option.
        let got = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        assert_eq!(got, 1000);
    }
}
