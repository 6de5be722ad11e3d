//! `templates/` holds the exact sources the native renderings reproduce and the embedded
//! default's template. They must stay the templates the fixture models ship, byte for byte:
//! a native rendering attaches only to an identical source, so a drifted copy would turn the
//! fast path off for the real model without any test failing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The chat template a fixture model ships (`chat_template.jinja`, else the config's).
fn fixture_template(model: &str) -> String {
    let dir = root().join("fixtures/models").join(model);
    if let Ok(jinja) = std::fs::read_to_string(dir.join("chat_template.jinja")) {
        return jinja;
    }
    let config = std::fs::read_to_string(dir.join("tokenizer_config.json")).unwrap();
    let config: serde_json::Value = serde_json::from_str(&config).unwrap();
    config["chat_template"].as_str().unwrap().to_string()
}

#[test]
fn templates_are_the_fixture_models_own() {
    for (file, model) in [
        ("qwen3.jinja", "qwen3"),
        ("deepseek_v3.jinja", "deepseek_v3"),
        ("llama3.1_json_tools.jinja", "llama3_1"),
    ] {
        let ours = std::fs::read_to_string(root().join("templates").join(file)).unwrap();
        assert!(
            ours == fixture_template(model),
            "templates/{file} differs from {model}'s template"
        );
    }
}

#[test]
fn every_native_rendering_has_its_source_in_templates() {
    let dir = root().join("templates");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    for entry in llm_render::template::native::NATIVE_TEMPLATES {
        assert!(
            files.iter().any(|f| f == entry.source),
            "native rendering {}: its source is not a file of templates/",
            entry.name
        );
    }
}

#[test]
fn the_embedded_model_renders_natively() {
    let model = llm_render::model::Model::embedded(&Default::default()).unwrap();
    let selected = model.templates.select(false).unwrap();
    assert_eq!(selected.source, fixture_template("qwen3"));
    assert_eq!(selected.native.map(|n| n.name()), Some("qwen3"));
}
