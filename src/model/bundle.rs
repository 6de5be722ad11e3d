//! Where a model's files come from: a snapshot folder, or the bundle compiled into the binary.

use super::LoadError;
use std::io::Read;
use std::path::Path;

/// Where a model's files come from.
pub(super) enum Bundle<'a> {
    Dir(&'a Path),
    Embedded,
}

/// The default model compiled into the binary: the Qwen3 tokenizer and chat template
/// (Apache-2.0, see fixtures/NOTICE).
pub(super) mod embedded {
    pub const NAME: &str = "qwen3";
    /// `templates/qwen3.jinja`: the template of `tokenizer_config.json`, as its own file
    /// (`tests/templates_dir.rs` checks they are the same).
    pub const CHAT_TEMPLATE: &[u8] = include_bytes!("../../templates/qwen3.jinja");
    pub const TOKENIZER_GZ: &[u8] = include_bytes!("../../fixtures/models/qwen3/tokenizer.json.gz");
    pub const TOKENIZER_CONFIG: &[u8] =
        include_bytes!("../../fixtures/models/qwen3/tokenizer_config.json");
    pub const GENERATION_CONFIG: &[u8] =
        include_bytes!("../../fixtures/models/qwen3/generation_config.json");
    pub const CONFIG: &[u8] = include_bytes!("../../fixtures/models/qwen3/config.json");
}

impl Bundle<'_> {
    pub(super) fn describe(&self, file: &str) -> String {
        match self {
            Bundle::Dir(p) => p.join(file).display().to_string(),
            Bundle::Embedded => format!("<embedded>/{file}"),
        }
    }

    /// The bytes of `file`, or `None` when the bundle does not have it.
    pub(super) fn read(&self, file: &str) -> Result<Option<Vec<u8>>, LoadError> {
        match self {
            Bundle::Dir(dir) => match std::fs::read(dir.join(file)) {
                Ok(b) => Ok(Some(b)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(error) => Err(LoadError::Io {
                    path: self.describe(file),
                    error,
                }),
            },
            Bundle::Embedded => Ok(match file {
                "tokenizer.json.gz" => Some(embedded::TOKENIZER_GZ.to_vec()),
                "tokenizer_config.json" => Some(embedded::TOKENIZER_CONFIG.to_vec()),
                "generation_config.json" => Some(embedded::GENERATION_CONFIG.to_vec()),
                "config.json" => Some(embedded::CONFIG.to_vec()),
                "chat_template.jinja" => Some(embedded::CHAT_TEMPLATE.to_vec()),
                _ => None,
            }),
        }
    }

    pub(super) fn json<T: serde::de::DeserializeOwned + Default>(
        &self,
        file: &str,
    ) -> Result<T, LoadError> {
        match self.read(file)? {
            None => Ok(T::default()),
            Some(bytes) => serde_json::from_slice(&bytes).map_err(|error| LoadError::Json {
                path: self.describe(file),
                error,
            }),
        }
    }

    /// `tokenizer.json` (or its gzip, unpacked), and which of the two it was.
    pub(super) fn tokenizer_json(&self) -> Result<(&'static str, Vec<u8>), LoadError> {
        let (file, bytes) = if let Some(b) = self.read("tokenizer.json")? {
            ("tokenizer.json", b)
        } else if let Some(gz) = self.read("tokenizer.json.gz")? {
            let mut b = Vec::new();
            flate2::read::GzDecoder::new(gz.as_slice())
                .read_to_end(&mut b)
                .map_err(|error| LoadError::Io {
                    path: self.describe("tokenizer.json.gz"),
                    error,
                })?;
            ("tokenizer.json.gz", b)
        } else {
            return Err(LoadError::NoTokenizer(self.describe("")));
        };
        Ok((file, bytes))
    }
}
