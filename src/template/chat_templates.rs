//! A model's compiled chat templates and how one is chosen per request.
//!
//! Templates are compiled once, at model load, into one minijinja environment per model;
//! rendering borrows it immutably, so requests render in parallel with no lock.

use super::env::{new_environment, rewrite_generation_tags, RAISED_PREFIX};
use super::messages::ContentFormat;
use super::native::NativeTemplate;
use crate::error::RequestError;
use minijinja::Environment;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TemplateLoadError {
    /// `error` is not a `source`: it is in the message already, which anyhow's `{:#}`
    /// would otherwise repeat.
    #[error("chat template {name:?} does not compile: {error:#}")]
    Compile {
        name: String,
        error: minijinja::Error,
    },
}

/// Why no template could be chosen for a request.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SelectError {
    #[error("this model has no chat template; use /v1/completions/render or pass chat_template")]
    NoTemplate,
    #[error("this model has several chat templates ({0}) and none is named \"default\"")]
    NoDefault(String),
}

/// The compiled chat templates of one model.
pub struct ChatTemplates {
    env: Environment<'static>,
    /// In file order.
    entries: Vec<Entry>,
}

impl std::fmt::Debug for ChatTemplates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| &e.name))
            .finish()
    }
}

struct Entry {
    name: String,
    format: ContentFormat,
    source: String,
    native: Option<NativeTemplate>,
}

/// A template chosen for a request.
pub struct Selected<'a> {
    pub template: minijinja::Template<'a, 'a>,
    pub source: &'a str,
    pub format: ContentFormat,
    /// The Rust rendering of exactly this source, when there is one.
    pub native: Option<NativeTemplate>,
}

impl ChatTemplates {
    /// Compiles `(name, source)` pairs. A single unnamed template is named `default`.
    pub fn compile(
        templates: Vec<(String, String)>,
        fuel: Option<u64>,
    ) -> Result<Self, TemplateLoadError> {
        let mut env = new_environment(fuel).map_err(|error| TemplateLoadError::Compile {
            name: String::new(),
            error,
        })?;
        let mut entries = Vec::with_capacity(templates.len());
        for (name, source) in templates {
            let format = ContentFormat::detect(&source);
            env.add_template_owned(name.clone(), rewrite_generation_tags(&source))
                .map_err(|error| TemplateLoadError::Compile {
                    name: name.clone(),
                    error,
                })?;
            let native = NativeTemplate::detect(&source);
            entries.push(Entry {
                name,
                format,
                source,
                native,
            });
        }
        Ok(ChatTemplates { env, entries })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_str())
    }

    /// The templates' sources, in order.
    pub fn sources(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.source.as_str()).collect()
    }

    /// transformers' `get_chat_template`: with several named templates, `tool_use` when the
    /// request passes tools (even an empty list), else `default`.
    pub fn select(&self, has_tools: bool) -> Result<Selected<'_>, SelectError> {
        let entry = match self.entries.as_slice() {
            [] => return Err(SelectError::NoTemplate),
            [only] => only,
            many => {
                let find = |n: &str| many.iter().find(|e| e.name == n);
                let tool_use = if has_tools { find("tool_use") } else { None };
                tool_use.or_else(|| find("default")).ok_or_else(|| {
                    SelectError::NoDefault(
                        many.iter()
                            .map(|e| e.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    )
                })?
            }
        };
        // The name was added to this environment in `compile`, so lookup cannot fail.
        let template = self
            .env
            .get_template(&entry.name)
            .map_err(|_| SelectError::NoTemplate)?;
        Ok(Selected {
            template,
            source: &entry.source,
            format: entry.format,
            native: entry.native,
        })
    }
}

impl Selected<'_> {
    /// Renders the template with `ctx`; a template error becomes the request's error.
    pub fn render<V: Into<minijinja::Value>>(&self, ctx: V) -> Result<String, RequestError> {
        self.template.render(ctx).map_err(render_error)
    }
}

/// A minijinja error raised while rendering, as the request's error: the template's own
/// `raise_exception` message verbatim, fuel exhaustion, or a Jinja2-style `TemplateError`
/// with the template line.
fn render_error(err: minijinja::Error) -> RequestError {
    if err.kind() == minijinja::ErrorKind::OutOfFuel {
        return RequestError::TemplateFuel;
    }
    let detail = err.detail().unwrap_or_default();
    if let Some(pos) = detail.find(RAISED_PREFIX) {
        return RequestError::Template(detail[pos..].to_string());
    }
    let mut msg = format!("TemplateError: {}", err.kind());
    if !detail.is_empty() {
        msg.push_str(": ");
        msg.push_str(detail);
    }
    if let Some(line) = err.line() {
        msg.push_str(&format!(" (chat template line {line})"));
    }
    RequestError::Template(msg)
}
