//! llm-render: the CPU render tier of an LLM server.
//!
//! Chat request → Hugging Face chat template → token IDs, equal to transformers token for
//! token, served over HTTP in vLLM's render API shapes (`docs/api.md`), and generated IDs →
//! content, reasoning and tool calls back. The modules follow a request's path:
//!
//! [`protocol`] (wire types) → [`template`] (chat templates) / [`tokenize`] (text ↔ IDs) /
//! [`media`] (images) → [`model`] (a loaded snapshot) → [`render`] (request → `GenerateRequest`)
//! → [`engine`] (the sidecar's token-in/token-out engine client) → [`derender`] (IDs →
//! message, with the parsers crate) → [`server`] (HTTP, and the sidecar's OpenAI front door)
//! / [`cli`].
//! [`hashing`] (prefix-cache block hashes) and [`error`] sit beside them. A module imports
//! only from those before it (`tests/layering.rs` holds the code to this).

pub mod cli;
pub mod derender;
pub mod engine;
pub mod error;
pub mod hashing;
pub mod media;
pub mod model;
pub mod protocol;
pub mod render;
pub mod server;
pub mod template;
mod thread_scope;
pub mod tokenize;
