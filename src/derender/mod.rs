//! Generated token IDs → text: the incremental detokenizer (`detok.rs`) and the
//! non-streaming chat derender (`chat.rs`). Streaming with a carried state and the tool-call
//! parsers come with the rest of the derender issue.

mod chat;
mod detok;
mod stop;

pub use chat::{derender_chat, parser_for, DerenderRequest, GenerateResponse, GeneratedChoice};
pub use detok::{DetokState, IncrementalDetokenizer};
pub use stop::StopStrings;
