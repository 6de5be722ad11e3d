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

    /// Applies `--chat-template [NAME=]PATH` (repeatable): the file's template replaces the
    /// named model's own (all of them, as vLLM's flag does); without a name, the only model
    /// served. Called right after [`ModelRegistry::load`], while the models are not shared.
    pub fn set_chat_templates(
        &mut self,
        specs: &[String],
        fuel: Option<u64>,
    ) -> Result<(), LoadError> {
        for spec in specs {
            let bad = |message: String| LoadError::ChatTemplate {
                spec: spec.clone(),
                message,
            };
            let (name, path) = match spec.split_once('=') {
                Some((n, p)) if !n.is_empty() && !p.is_empty() => (Some(n), p),
                Some(_) => return Err(bad("expected PATH or NAME=PATH".into())),
                None => (None, spec.as_str()),
            };
            let names: Vec<&str> = self.models.iter().map(|m| m.name.as_str()).collect();
            let index = match name {
                Some(n) => self
                    .models
                    .iter()
                    .position(|m| m.name == n)
                    .ok_or_else(|| {
                        bad(format!("no model is served as {n:?} (served: {names:?})"))
                    })?,
                None if self.models.len() == 1 => 0,
                None => {
                    return Err(bad(format!(
                        "several models are served ({names:?}): name one as NAME=PATH"
                    )))
                }
            };
            let source = std::fs::read_to_string(path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => bad(format!("{path} does not exist")),
                _ => bad(format!("{path}: {e}")),
            })?;
            let model = Arc::get_mut(&mut self.models[index])
                .ok_or_else(|| bad("the model is already in use".into()))?;
            model
                .replace_chat_template(source, fuel)
                .map_err(|e| bad(e.to_string()))?;
        }
        Ok(())
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
    fn chat_template_flags_replace_a_models_template() {
        let dir = env!("CARGO_MANIFEST_DIR");
        let keep = format!("{dir}/templates/qwen3_keep_reasoning.jinja");
        let opts = LoadOptions::default();
        let mut one = ModelRegistry::load(&[spec("a", "qwen3")], &opts).unwrap();
        one.set_chat_templates(std::slice::from_ref(&keep), None)
            .unwrap();
        let source = std::fs::read_to_string(&keep).unwrap();
        assert_eq!(one.models()[0].templates.sources(), [source.as_str()]);
        let mut two =
            ModelRegistry::load(&[spec("a", "qwen3"), spec("b", "llama3_1")], &opts).unwrap();
        two.set_chat_templates(&[format!("a={keep}")], None)
            .unwrap();
        for (flag, needle) in [
            (keep.clone(), "name one as NAME=PATH"),
            (format!("c={keep}"), "no model is served as \"c\""),
            (
                "a=/no/such.jinja".to_string(),
                "/no/such.jinja does not exist",
            ),
            ("a=".to_string(), "expected PATH or NAME=PATH"),
        ] {
            let err = two.set_chat_templates(&[flag], None).unwrap_err();
            assert!(err.to_string().contains(needle), "{err}");
        }
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
