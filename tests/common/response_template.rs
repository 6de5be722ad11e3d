//! The qwen3 fixture with a checkpoint's `response_template`, and servers running vLLM's
//! `hf` or `beam` parser on it (`tests/hf_parser.rs`, `tests/beam_parser.rs`).

use super::{fixtures, start_server};
use llm_render::cli::ParserArgs;
use llm_render::derender::DerenderConfig;
use llm_render::model::{LoadOptions, Model, ModelRegistry};
use llm_render::render::RenderOptions;
use llm_render::server::ServerConfig;
use serde_json::Value;

/// The qwen3 fixture named `name`, its `tokenizer_config.json` carrying `template` (none
/// when null). Each call copies the fixture to a folder of its own (tests load models at the
/// same time), removed once loaded.
pub fn load(name: &str, template: &Value) -> Model {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("llm-render-rt-{}-{name}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(fixtures().join("models/qwen3")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    let config_path = dir.join("tokenizer_config.json");
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    if !template.is_null() {
        config["response_template"] = template.clone();
    }
    std::fs::write(&config_path, config.to_string()).unwrap();
    let model = Model::load_dir(name, &dir, &LoadOptions::default()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    model
}

/// The parser flags `serve` takes, with the rest at their defaults.
pub fn parser_args(reasoning: &str, tools: &str) -> ParserArgs {
    ParserArgs {
        reasoning_parser: reasoning.into(),
        tool_call_parser: tools.into(),
        derender_state_key: None,
        derender_state_cache: 0,
        max_logprobs: 20,
        derender_replay_state: false,
    }
}

/// A server with `--reasoning-parser parser --tool-call-parser parser` on `model`, checked
/// and configured as `serve` does; `derender` adjusts the derender's settings.
pub fn server(parser: &str, model: Model, derender: impl FnOnce(&mut DerenderConfig)) -> String {
    let args = parser_args(parser, parser);
    args.check().unwrap();
    args.check_model(&model).unwrap();
    let (reasoning_parser, tool_call_parser) = args.settings();
    let mut config = ServerConfig {
        render: RenderOptions {
            reasoning_parser,
            tool_call_parser,
            ..Default::default()
        },
        derender: args.derender_config(),
        ..Default::default()
    };
    derender(&mut config.derender);
    start_server(ModelRegistry::new(vec![model]).unwrap(), config)
}
