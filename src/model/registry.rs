//! The models one process serves, by name.

use super::{parse_model_spec, LoadError, LoadOptions, Model};
use crate::error::RenderError;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct ModelRegistry {
    models: Vec<Arc<Model>>,
}

impl ModelRegistry {
    pub fn new(models: Vec<Model>) -> Result<Self, LoadError> {
        let mut seen = std::collections::HashSet::new();
        for m in &models {
            if !seen.insert(m.name.clone()) {
                return Err(LoadError::Duplicate(m.name.clone()));
            }
        }
        Ok(ModelRegistry {
            models: models.into_iter().map(Arc::new).collect(),
        })
    }

    /// Loads every `--model [NAME=]PATH`, or the embedded default when there are none.
    pub fn load(specs: &[String], opts: &LoadOptions) -> Result<Self, LoadError> {
        if specs.is_empty() {
            return Self::new(vec![Model::embedded(opts)?]);
        }
        let mut models = Vec::with_capacity(specs.len());
        for spec in specs {
            let (name, path) = parse_model_spec(spec)?;
            models.push(Model::load_dir(&name, &path, opts)?);
        }
        Self::new(models)
    }

    pub fn models(&self) -> &[Arc<Model>] {
        &self.models
    }

    /// The model a request names; it may omit the name when exactly one model is served.
    pub fn get(&self, name: Option<&str>) -> Result<Arc<Model>, RenderError> {
        match name {
            Some(n) => self
                .models
                .iter()
                .find(|m| m.name == n)
                .cloned()
                .ok_or_else(|| RenderError::ModelNotFound(n.to_string())),
            None => match self.models.as_slice() {
                [only] => Ok(only.clone()),
                _ => Err(RenderError::invalid(
                    "model",
                    "`model` is required when several models are served",
                )),
            },
        }
    }
}
