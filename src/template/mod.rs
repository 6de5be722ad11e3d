//! Chat templates: a request's messages → the prompt text, byte for byte as transformers'
//! `apply_chat_template` writes it.
//!
//! * `chat_templates.rs`: a model's compiled templates and how one is chosen per request;
//! * `messages.rs`: the request's messages → the `messages` a template sees (vLLM's and
//!   transformers' conversions);
//! * `env/`: the minijinja environment set up as transformers' Jinja2 sandbox, with Python's
//!   printing, string methods and types;
//! * `pyjson.rs`: Python's `json.dumps` (the `tojson` filter);
//! * `native/`: known templates written out in Rust, attached to their exact sources;
//! * `harmony/`: gpt-oss's Harmony format, which replaces the template for those models.
//!
//! Below `model` (which compiles a snapshot's templates) and `render` (which runs them); it
//! imports neither.

mod chat_templates;
pub mod env;
pub mod harmony;
pub mod messages;
pub mod native;
pub mod pyjson;

pub use chat_templates::{ChatTemplates, SelectError, Selected, TemplateLoadError};
pub use messages::ImageRef;

/// What rendered a chat template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateEngine {
    /// A Rust rendering of the exact template source ([`native`]).
    Native,
    Minijinja,
    /// gpt-oss's Harmony format, which has no template ([`harmony`]).
    Harmony,
}

impl TemplateEngine {
    pub fn as_str(self) -> &'static str {
        match self {
            TemplateEngine::Native => "native",
            TemplateEngine::Minijinja => "minijinja",
            TemplateEngine::Harmony => "harmony",
        }
    }
}
