//! A thread-local value set for the duration of one call, for state that must reach code
//! deep inside a library call (serde visitors, the render pipeline) without threading a
//! parameter through it: the body being parsed (`protocol::text`), a render's cancellation
//! flag (`render::cancel`).

use std::cell::RefCell;
use std::thread::LocalKey;

/// Runs `f` with `key` holding `value`, then restores what it held before, also when `f`
/// unwinds.
pub(crate) fn with_local<T: 'static, R>(
    key: &'static LocalKey<RefCell<Option<T>>>,
    value: T,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore<T: 'static> {
        key: &'static LocalKey<RefCell<Option<T>>>,
        previous: Option<T>,
    }
    impl<T: 'static> Drop for Restore<T> {
        fn drop(&mut self) {
            let previous = self.previous.take();
            // `try_with`: the thread-local may already be gone while the thread exits.
            let _ = self.key.try_with(|v| *v.borrow_mut() = previous);
        }
    }
    let previous = key.with(|v| v.replace(Some(value)));
    let _restore = Restore { key, previous };
    f()
}
