//! Generated token IDs → text. So far: the incremental detokenizer (`detok.rs`). The
//! derender routes, stream state and the parsers' wiring come with the rest of the derender
//! issue.

mod detok;

pub use detok::{DetokState, IncrementalDetokenizer};
