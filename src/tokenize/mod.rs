//! Text ↔ token IDs, equal to `tokenizers` (what transformers runs) and fast.
//!
//! * `encoder.rs`: fastokens where it proves equal to `tokenizers` at load, else `tokenizers`;
//! * `prompt_cache/`: the IDs of a recent prompt that the new one extends, reused;
//! * `added_split.rs`: the text after a reused prefix, split at added tokens here;
//! * `decoder.rs`: IDs → text from a table of each ID's bytes, proven against `tokenizers`.
//!
//! Below `model`, which builds one encoder and one decoder per snapshot; it imports nothing
//! else of the crate.

mod added_split;
mod decoder;
mod encoder;
pub mod prompt_cache;

pub use decoder::TextDecoder;
pub use encoder::{build_fast, Backend, Encoder, EncoderOptions};
