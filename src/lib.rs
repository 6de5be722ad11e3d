//! llm-render: the CPU render tier of an LLM server.
//!
//! Chat request → Hugging Face chat template → token IDs, equal to transformers token for
//! token, served over HTTP in vLLM's render API shapes (see `docs/api.md` in the shared
//! folder and README.md). Stages are modules: [`model`] loads snapshots, [`render`] turns
//! requests into token IDs, [`server`] is the HTTP tier and [`cli`] the command line.

pub mod cli;
pub mod derender;
pub mod error;
pub mod hashing;
pub mod media;
pub mod model;
pub mod protocol;
pub mod render;
pub mod server;
mod thread_scope;
