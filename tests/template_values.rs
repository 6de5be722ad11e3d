//! Template value goldens (`scripts/gen_template_value_goldens.py`, made by Jinja2 in
//! transformers' setup): printing values (`{{ x }}`, `|string`, `|tojson` with its options) and
//! string methods and filters (`.strip()`, `|trim`, `|title`, `.split()`, slicing …) over random
//! floats and strings with quotes, escapes, Python-only whitespace, format characters,
//! ligatures, sigmas and emoji. Every output must be Jinja2's byte for byte, and an expression
//! Jinja2 rejects must fail here too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use llm_render::template::env::new_environment;

#[derive(serde::Deserialize)]
struct Case {
    template: String,
    context: serde_json::Value,
    expected: Option<String>,
    expected_error: Option<String>,
}

#[test]
fn template_values_print_as_jinja2() {
    let text = std::fs::read_to_string(common::fixtures().join("goldens/template_values.jsonl"))
        .expect("template value goldens");
    let cases: Vec<Case> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("golden line"))
        .collect();
    assert!(cases.len() > 1_000, "{} cases", cases.len());
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let mut env = new_environment(None).unwrap();
        env.add_template_owned("t", case.template.clone()).unwrap();
        let ctx = minijinja::Value::from(minijinja::value::Serde(&case.context));
        let got = env.get_template("t").unwrap().render(ctx);
        let ok = match (&got, &case.expected, &case.expected_error) {
            (Ok(out), Some(want), _) => out == want,
            (Err(_), None, Some(_)) => true,
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{i}: {} with {}: want {:?} / {:?}, got {:?}",
                case.template, case.context, case.expected, case.expected_error, got
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}
