//! The models one process serves, by name.

use super::{parse_model_spec, LoadError, LoadOptions, Model};
use crate::error::RequestError;
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
        let specs = specs
            .iter()
            .map(|spec| parse_model_spec(spec))
            .collect::<Result<Vec<_>, _>>()?;
        // One thread per model: each load is ~0.5–1 s of single-threaded work (parsing the
        // tokenizer twice, building fastokens, the load-time equality check), so several
        // models start in about the time of the slowest rather than the sum.
        let models = std::thread::scope(|scope| {
            let loads: Vec<_> = specs
                .iter()
                .map(|(name, path)| (path, scope.spawn(move || Model::load_dir(name, path, opts))))
                .collect();
            loads
                .into_iter()
                .map(|(path, load)| {
                    load.join()
                        .unwrap_or_else(|_| Err(LoadError::Panicked(path.display().to_string())))
                })
                .collect::<Result<Vec<_>, _>>()
        })?;
        Self::new(models)
    }

    pub fn models(&self) -> &[Arc<Model>] {
        &self.models
    }

    /// The model a request names; it may omit the name when exactly one model is served.
    pub fn get(&self, name: Option<&str>) -> Result<Arc<Model>, RequestError> {
        match name {
            Some(n) => self
                .models
                .iter()
                .find(|m| m.name == n)
                .cloned()
                .ok_or_else(|| RequestError::ModelNotFound(n.to_string())),
            None => match self.models.as_slice() {
                [only] => Ok(only.clone()),
                _ => Err(RequestError::invalid(
                    "model",
                    "`model` is required when several models are served",
                )),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, fixture: &str) -> String {
        format!(
            "{name}={}/fixtures/models/{fixture}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    #[test]
    fn models_load_side_by_side_in_the_order_given() {
        let specs = [
            spec("b", "llama3_1"),
            spec("a", "qwen3"),
            spec("c", "wordlevel"),
        ];
        let registry = ModelRegistry::load(&specs, &LoadOptions::default()).unwrap();
        let names: Vec<&str> = registry.models().iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["b", "a", "c"]);
    }

    #[test]
    fn a_failed_load_or_a_repeated_name_is_an_error() {
        let specs = [spec("a", "qwen3"), spec("b", "no_such_model")];
        let err = ModelRegistry::load(&specs, &LoadOptions::default()).unwrap_err();
        assert!(err.to_string().contains("no_such_model"), "{err}");
        let specs = [spec("a", "qwen3"), spec("a", "wordlevel")];
        let err = ModelRegistry::load(&specs, &LoadOptions::default()).unwrap_err();
        assert!(
            matches!(err, LoadError::Duplicate(ref n) if n == "a"),
            "{err}"
        );
    }
}
