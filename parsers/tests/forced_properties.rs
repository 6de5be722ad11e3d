//! Property tests for a forced `tool_choice`'s output (`ForcedCallParser`): for random
//! `required` lists, written compactly or spaced, every chunking gives the calls written,
//! with arguments as `json.dumps` writes them; for random JSON-ish text, named or `required`,
//! every chunking folds to the one-shot calls.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::cut;
use llm_render_parsers::tool::ForcedCallParser;
use llm_render_parsers::{Parsed, ToolParser};
use proptest::prelude::*;
use serde_json::Value;

fn run(mut p: ForcedCallParser, chunks: &[&str]) -> Vec<(String, String)> {
    let mut all = Vec::new();
    for c in chunks {
        let mut out = Parsed::default();
        p.push(c, &mut out);
        assert_eq!(out.content, "");
        all.extend(out.calls);
    }
    let mut out = Parsed::default();
    p.finish(&mut out);
    all.extend(out.calls);
    Parsed {
        content: String::new(),
        calls: all,
    }
    .tool_calls()
    .into_iter()
    .map(|c| (c.name, c.arguments))
    .collect()
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1000i32..1000, 0u32..4)
            .prop_map(|(m, e)| Value::from(f64::from(m) / 10f64.powi(e as i32))),
        "[a-z \"\\\\{}\\[\\]/:,é日🤖\n\t\u{1}]{0,10}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z\"é]{1,5}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn next_ws(ws: &[&str], k: &mut usize) -> String {
    *k += 1;
    ws[*k % ws.len()].to_string()
}

/// `v` written with whitespace from `ws` around its tokens (cycled, `""` for compact), its
/// strings every other time as `\u` escapes.
fn spaced(v: &Value, ws: &[&str], k: &mut usize) -> String {
    match v {
        Value::Array(items) => {
            let mut parts = Vec::new();
            for i in items {
                let item = spaced(i, ws, k);
                parts.push(item + &next_ws(ws, k));
            }
            format!("[{}{}]", next_ws(ws, k), parts.join(","))
        }
        Value::Object(map) => {
            let mut parts = Vec::new();
            for (key, val) in map {
                let (a, b) = (next_ws(ws, k), next_ws(ws, k));
                let key = Value::String(key.clone());
                parts.push(format!("{key}{a}:{b}{}", spaced(val, ws, k)));
            }
            format!("{{{}{}}}", next_ws(ws, k), parts.join(","))
        }
        Value::String(s) if (*k).is_multiple_of(2) => {
            *k += 1;
            let mut out = String::from("\"");
            for c in s.chars() {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{u:04X}"));
                }
            }
            out + "\""
        }
        v => {
            *k += 1;
            v.to_string()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn required_lists_stream_as_written(
        calls in prop::collection::vec(
            ("[a-z_]{1,8}", prop::option::of(prop::collection::vec(("[a-z]{1,4}", json_value()), 0..4))),
            0..4),
        ws in prop::collection::vec(prop::sample::select(&["", " ", "\n", "\t ", "\r\n"][..]), 1..4),
        sizes in prop::collection::vec(1usize..9, 1..5),
    ) {
        let mut k = 0;
        let mut entries = Vec::new();
        let mut want = Vec::new();
        for (name, params) in &calls {
            let name_json = Value::String(name.clone()).to_string();
            match params {
                Some(kv) => {
                    let obj = Value::Object(kv.iter().cloned().collect());
                    want.push((name.clone(), llm_render_parsers::pyjson::dumps(&obj)));
                    let p = spaced(&obj, &ws, &mut k);
                    entries.push(if k.is_multiple_of(3) {
                        format!("{{\"parameters\":{p}, \"name\" : {name_json}}}")
                    } else {
                        format!("{{\"name\": {name_json},\"parameters\": {p}}}")
                    });
                }
                None => {
                    want.push((name.clone(), "null".into()));
                    entries.push(format!("{{\"name\":{name_json}}}"));
                }
            }
        }
        let text = format!("{}[{}]{}", ws[0], entries.join(&format!(",{}", ws[ws.len() - 1])), ws[0]);
        let one = run(ForcedCallParser::required(), &[&text]);
        prop_assert_eq!(&one, &want, "{:?}", text);
        prop_assert_eq!(&run(ForcedCallParser::required(), &cut(&text, &[1])), &one, "{:?}", text);
        prop_assert_eq!(&run(ForcedCallParser::required(), &cut(&text, &sizes)), &one, "{:?}", text);
    }

    #[test]
    fn any_forced_output_streams_like_one_shot(
        named in any::<bool>(),
        pieces in prop::collection::vec(prop::sample::select(&[
            "[", "]", "{", "}", ",", ":", " ", "\n", "\"", "\\", "\\u", "d83e", "\\udd16", "00e9",
            "\"name\"", "\"parameters\"", "\"description\"", "\"strict\"", "\"f\"", "\"a\"", "1",
            "-", "0", ".5", "e", "E+", "1e400", "NaN", "-Infinity", "null", "true", "tru", "é",
            "🤖", "\u{3000}", "\u{1c}", "\t", "\"x\\\"y\"", "\u{1}", "x",
        ][..]), 0..30),
        sizes in prop::collection::vec(1usize..9, 1..5),
    ) {
        let text: String = pieces.concat();
        let mk = || if named { ForcedCallParser::named("f") } else { ForcedCallParser::required() };
        let one = run(mk(), &[&text]);
        prop_assert_eq!(&run(mk(), &cut(&text, &[1])), &one, "{:?}", text);
        prop_assert_eq!(&run(mk(), &cut(&text, &sizes)), &one, "{:?}", text);
        if named {
            let blank = text.chars().all(llm_render_parsers::pystr::py_space);
            let want = if blank { vec![] } else { vec![("f".to_string(), text.clone())] };
            prop_assert_eq!(one, want);
        }
    }
}
