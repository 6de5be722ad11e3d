//! How connections are served, below the routes: the two runtimes and the connection loop
//! (`runtime.rs`), the listening socket (`listener.rs`), graceful shutdown
//! (`shutdown.rs`), the request and header-read timeouts on one sweeper thread's clock,
//! with each connection's watch (`deadlines.rs`), and the allocator's purge delay
//! (`memory.rs`).

mod deadlines;
pub mod listener;
pub mod memory;
mod runtime;
mod shutdown;

pub(crate) use deadlines::{ConnectionWatch, Deadlines};
pub use runtime::{serve_per_core, serve_per_core_until, serve_work_stealing};
