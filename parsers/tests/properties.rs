//! Property tests over the tool-call families: for random well-formed outputs of nine wire
//! formats the parser finds exactly the calls and text that were written, and for random
//! outputs of every registered family and random
//! chunkings (one character at a time, random sizes, whole) the streamed result equals the
//! one-shot result. The same generators with garbage mixed in make the fuzz test: no input
//! panics, and chunking never changes the result.

mod common;
use common::{cut, run};
use llm_render_parsers::TOOL_PARSERS;
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    // Starts and ends with a letter so it cannot continue or start a marker.
    "[a-z][a-z é日🤖.,!?\n]{0,12}[a-z]"
}

fn word() -> impl Strategy<Value = String> {
    "[a-z_]{1,8}"
}

/// A string value: quotes, backslashes, braces, tags and Unicode included.
fn string_value() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 \"\\\\{}\\[\\]<>/:,é日🤖\n]{0,16}"
}

#[derive(Debug, Clone)]
struct Call {
    name: String,
    args: Vec<(String, String)>,
}

fn calls() -> impl Strategy<Value = Vec<Call>> {
    prop::collection::vec(
        (
            word(),
            prop::collection::vec((word(), string_value()), 0..3),
        )
            .prop_map(|(name, args)| {
                // Keys are unique, as in a JSON object.
                let mut seen = std::collections::HashSet::new();
                let args = args
                    .into_iter()
                    .filter(|(k, _)| seen.insert(k.clone()))
                    .collect();
                Call { name, args }
            }),
        1..4,
    )
}

fn compact_args(c: &Call) -> String {
    let map: serde_json::Map<String, serde_json::Value> = c
        .args
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
        .collect();
    serde_json::Value::Object(map).to_string()
}

fn py_args(c: &Call) -> String {
    let members: Vec<String> = c
        .args
        .iter()
        .map(|(k, v)| format!("{}: {}", serde_json::json!(k), serde_json::json!(v)))
        .collect();
    format!("{{{}}}", members.join(", "))
}

const FAMILIES: &[&str] = &[
    "hermes",
    "llama3_json",
    "mistral",
    "deepseek_v3",
    "deepseek_v31",
    "kimi_k2",
    "qwen3_coder",
    "glm45",
    "pythonic",
];

/// The output a model of `family` writes for `before`, `calls`, `after`, and the expected
/// (content, [(name, arguments)]).
fn render(
    family: &str,
    before: &str,
    calls: &[Call],
    after: &str,
) -> (String, String, Vec<(String, String)>) {
    let obj = |c: &Call, key: &str| {
        format!(
            "{{\"name\": {}, \"{key}\": {}}}",
            serde_json::json!(c.name),
            compact_args(c)
        )
    };
    let mut out = String::new();
    let mut content = format!("{before}{after}");
    let want_json: Vec<(String, String)> = calls
        .iter()
        .map(|c| (c.name.clone(), compact_args(c)))
        .collect();
    let want_py: Vec<(String, String)> =
        calls.iter().map(|c| (c.name.clone(), py_args(c))).collect();
    let mut want = want_json.clone();
    match family {
        "hermes" => {
            out.push_str(before);
            let blocks: Vec<String> = calls
                .iter()
                .map(|c| format!("<tool_call>\n{}\n</tool_call>", obj(c, "arguments")))
                .collect();
            out.push_str(&blocks.join("\n"));
            out.push_str(after);
            // vLLM's hermes drops text after the calls.
            content = before.to_string();
        }
        "llama3_json" => {
            out.push_str(before);
            out.push_str("<|python_tag|>");
            let objs: Vec<String> = calls.iter().map(|c| obj(c, "parameters")).collect();
            out.push_str(&objs.join("; "));
            if !after.is_empty() {
                out.push(' ');
                out.push_str(after);
                content = format!("{before} {after}");
            }
        }
        "mistral" => {
            out.push_str(before);
            for c in calls {
                out.push_str(&format!("[TOOL_CALLS]{}[ARGS]{}", c.name, compact_args(c)));
            }
            content = before.to_string();
            if !after.is_empty() {
                out.push(' ');
                out.push_str(after);
                content = format!("{before} {after}");
            }
        }
        "deepseek_v3" | "deepseek_v31" | "kimi_k2" => {
            let (sb, se, cb, ce) = if family == "kimi_k2" {
                (
                    "<|tool_calls_section_begin|>",
                    "<|tool_calls_section_end|>",
                    "<|tool_call_begin|>",
                    "<|tool_call_end|>",
                )
            } else {
                (
                    "<｜tool▁calls▁begin｜>",
                    "<｜tool▁calls▁end｜>",
                    "<｜tool▁call▁begin｜>",
                    "<｜tool▁call▁end｜>",
                )
            };
            out.push_str(before);
            out.push_str(sb);
            for (i, c) in calls.iter().enumerate() {
                let a = compact_args(c);
                let body = match family {
                    "deepseek_v3" => format!("function<｜tool▁sep｜>{}\n```json\n{a}\n```", c.name),
                    "deepseek_v31" => format!("{}<｜tool▁sep｜>{a}", c.name),
                    _ => format!("functions.{}:{i}<|tool_call_argument_begin|>{a}", c.name),
                };
                out.push_str(&format!("{cb}{body}{ce}\n"));
            }
            out.push_str(se);
            out.push_str(after);
            if family == "kimi_k2" {
                // vLLM's kimi_k2 drops text after the calls section.
                content = before.to_string();
            }
        }
        "qwen3_coder" => {
            out.push_str(before);
            for (i, c) in calls.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(&format!("<tool_call>\n<function={}>\n", c.name));
                for (k, v) in &c.args {
                    out.push_str(&format!("<parameter={k}>\n{v}\n</parameter>\n"));
                }
                out.push_str("</function>\n</tool_call>");
            }
            out.push_str(after);
            want = want_py.clone();
        }
        "glm45" => {
            out.push_str(before);
            for (i, c) in calls.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(&format!("<tool_call>{}\n", c.name));
                for (k, v) in &c.args {
                    out.push_str(&format!(
                        "<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n"
                    ));
                }
                out.push_str("</tool_call>");
            }
            out.push_str(after);
            want = want_py.clone();
        }
        _ => {
            let items: Vec<String> = calls
                .iter()
                .map(|c| {
                    let kw: Vec<String> = c
                        .args
                        .iter()
                        .map(|(k, v)| format!("{k}={}", serde_json::json!(v)))
                        .collect();
                    format!("{}({})", c.name, kw.join(", "))
                })
                .collect();
            out = format!("[{}]", items.join(", "));
            content = String::new();
            want = want_py;
        }
    }
    (out, content, want)
}

fn summary(name: &str, chunks: &[&str]) -> (String, Vec<(String, String)>) {
    let (content, calls, _) = run(name, chunks);
    (
        content,
        calls.into_iter().map(|c| (c.name, c.arguments)).collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn well_formed_outputs_parse_exactly_under_any_chunking(
        family in 0..FAMILIES.len(),
        before in prop::option::of(text()),
        calls in calls(),
        after in prop::option::of(text()),
        sizes in prop::collection::vec(1usize..12, 1..6),
    ) {
        let family = FAMILIES[family];
        // glm45 values are parsed as JSON unless declared strings; keep them strings by
        // giving them a leading letter. Its calls must name a declared tool (others are
        // dropped, as vLLM drops them): `write_file`, whose parameters are strings.
        let calls: Vec<Call> = if family == "glm45" {
            calls.into_iter().map(|c| Call { name: "write_file".into(), args: c.args.into_iter()
                .map(|(k, v)| (k, format!("v{}", v.replace('<', "")))).collect() }).collect()
        } else if family == "qwen3_coder" {
            calls.into_iter().map(|c| Call { name: c.name, args: c.args.into_iter()
                .map(|(k, v)| (k, format!("v{}", v.replace('<', "")))).collect() }).collect()
        } else {
            calls
        };
        let (out, content, want) = render(
            family,
            before.as_deref().unwrap_or(""),
            &calls,
            after.as_deref().unwrap_or(""),
        );
        let one = summary(family, &[&out]);
        prop_assert_eq!(&one, &(content, want), "{}: {:?}", family, out);
        let single: Vec<&str> = cut(&out, &[1]);
        prop_assert_eq!(&summary(family, &single), &one);
        prop_assert_eq!(&summary(family, &cut(&out, &sizes)), &one);
    }

    #[test]
    fn any_output_streams_like_one_shot(
        family in 0..TOOL_PARSERS.len(),
        pieces in prop::collection::vec(prop::sample::select(&[
            "<tool_call>", "</tool_call>", "<tool_", "{\"name\": \"f\"", ", \"arguments\": ",
            "{\"a\": \"x\\\"}\"}", "}", "{", "[", "]", "\"", "\\", "\n", " ", "é", "🤖", "<",
            "\u{3000}", "\u{a0}", "<|python_tag|>", "; ", "[TOOL_CALLS]", "[ARGS]", "f(", "x=1", ")", "<function=f>",
            "<parameter=a>", "</parameter>", "</function>", "<arg_key>", "</arg_key>",
            "<arg_value>", "</arg_value>", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>",
            "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>", "function", "\n```json\n",
            "<|tool_calls_section_begin|>", "<|tool_call_begin|>", "functions.f:0",
            "<|tool_call_argument_begin|>", "<|tool_call_end|>", "null", "True", "'", "abc",
            "1__0", "0x1F", "007", "1_0.5e1", "-0b1", "<|channel|>", "commentary to=functions.f",
            "<|message|>", "<|call|>", "<|start|>assistant", "<seed:tool_call>", "<longcat_tool_call>",
            "<function_call>", "<|python_start|>", "<|python_end|>", "<｜DSML｜tool_calls>",
            "<|open|>", "<|close|>", "<|sep|>", "tools", "response", "call tool=\"now\"",
            "argument key=\"a\" type=\"integer\"", "call", "argument", "<ifm|tool_calls>",
            "</ifm|tool_calls>", "<ifm|tool_call>", "</ifm|tool_call>", "<ifm|arg_key>",
            "</ifm|arg_key>", "<ifm|arg_value>", "</ifm|arg_value>", "<tool_calls>", "</tool_calls>",
            "<tool_sep>", "<｜tool_calls_begin｜>", "<｜tool_call_begin｜>", "<｜tool_sep｜>",
            "<｜tool_call_end｜>", "<｜tool_calls_end｜>", "<steptml:invoke name=\"now\">",
            "<steptml:parameter name=\"a\">", "</steptml:parameter>", "</steptml:invoke>",
            "<dots_function_call>", "</dots_function_call>", "<invoke name=\"now\">",
            "<parameter name=\"a\">", "</invoke>", "now", "<|START_ACTION|>", "<|END_ACTION|>",
            "<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<co>", "</co: 0:[1]>",
            "{\"tool_call_id\": \"0\", \"tool_name\": \"now\", \"parameters\": {}}",
            "<|tool_call>", "<tool_call|>", "<|\"|>", "call:f{", "a:", "<start_function_call>",
            "<end_function_call>", "<escape>", "]<]minimax[>[<tool_call>", "]<]minimax[>[<invoke name=\"f\">",
            "]<]minimax[>[<a>", "]<]minimax[>[</a>", "]<]minimax[>[</invoke>", "<function name=\"f\">",
            "<param name=\"a\">", "</param>", "<![CDATA[", "]]>", "&amp;", "<|eom|>", "<|eot|>",
            " to=self", " to=f", "<atem:invoke name=\"f\">", "<atem:parameter name=\"a\">",
            "</atem:parameter>", "</atem:invoke>", "<|content_invoke_tool_json|>", "<|end_message|>",
            "<|message_model|>", "<|content_text|>", "<|content_thinking|>", "<｜DSML｜ calls>",
            "<|channel>thought\n", "<channel|>", "<turn|>", "<|channel>", "call:now",
            "<｜DSML｜ invoke name=\"f\">",
        ][..]), 0..24),
        sizes in prop::collection::vec(1usize..9, 1..5),
    ) {
        let family = TOOL_PARSERS[family].name;
        let text: String = pieces.concat();
        let one = summary(family, &[&text]);
        prop_assert_eq!(&summary(family, &cut(&text, &[1])), &one, "{}: {:?}", family, text);
        prop_assert_eq!(&summary(family, &cut(&text, &sizes)), &one, "{}: {:?}", family, text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    /// Markers, JSON and Python punctuation mixed with any Unicode scalar (multi-byte
    /// whitespace and line separators on purpose), one shot and in random chunks: no panic.
    /// (This found a scan that stepped one byte past a 3-byte space.)
    #[test]
    fn no_input_panics(
        family in 0..TOOL_PARSERS.len(),
        pieces in prop::collection::vec(prop_oneof![
            prop::sample::select(&[
                "<tool_call>", "</tool_call>", "{\"name\": \"f\"", ", \"arguments\": ", "{", "}",
                "[", "]", "\"", "\\", "<|python_tag|>", ";", "[TOOL_CALLS]", "[ARGS]", "f(", "x=",
                ")", "<function=f>", "<parameter=a>", "</parameter>", "</function>", "<arg_key>",
                "</arg_key>", "<arg_value>", "</arg_value>", "<｜tool▁calls▁begin｜>",
                "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
                "<｜tool▁calls▁end｜>", "function", "\n```json\n", "<|tool_calls_section_begin|>",
                "<|tool_call_begin|>", "functions.f:0", "<|tool_call_argument_begin|>",
                "<|tool_call_end|>", "'", ",", "=", ":", "(", "<|open|>", "<|close|>",
                "<|sep|>", "tools", "call tool=\"", "argument key=\"", "<ifm|tool_calls>",
                "</ifm|tool_calls>", "<ifm|tool_call>", "</ifm|tool_call>", "<ifm|arg_key>",
                "</ifm|arg_key>", "<ifm|arg_value>", "</ifm|arg_value>", "<tool_calls>",
                "</tool_calls>", "<tool_sep>", "<｜tool_calls_begin｜>", "<｜tool_call_begin｜>",
                "<｜tool_sep｜>", "<｜tool_call_end｜>", "<｜tool_calls_end｜>",
                "<steptml:invoke name=\"", "<steptml:parameter name=\"", "</steptml:parameter>",
                "<dots_function_call>", "</dots_function_call>", "<invoke name=",
                "<parameter name=", "</invoke>", "<|START_ACTION|>", "<|END_ACTION|>",
                "<|START_RESPONSE|>", "<|END_RESPONSE|>", "<co>", "</co:", ">",
                "\"tool_name\": ",
                "<|tool_call_end|>", "'", ",", "=", ":", "(", "<|tool_call>", "<tool_call|>",
                "<|\"|>", "call:f{", "<start_function_call>", "<escape>", "]<]minimax[>[<tool_call>",
                "]<]minimax[>[<invoke name=\"f\">", "]<]minimax[>[<a>", "]<]minimax[>[</a>",
                "<function name=\"f\">", "<param name=\"a\">", "</param>", "<![CDATA[", "&#x1F;",
                "<|message|>", "<|eom|>", "<|start|>assistant", " to=f", "<atem:invoke name=\"f\">",
                "</atem:invoke>", "<|content_invoke_tool_json|>", "<|end_message|>",
            ][..]).prop_map(str::to_string),
            any::<char>().prop_map(String::from),
            prop::sample::select(&["\u{3000}", "\u{a0}", "\u{2028}", "\u{85}", "é", "🤖"][..])
                .prop_map(str::to_string),
        ], 0..30),
        sizes in prop::collection::vec(1usize..9, 1..5),
    ) {
        let text: String = pieces.concat();
        let family = TOOL_PARSERS[family].name;
        run(family, &[&text]);
        run(family, &cut(&text, &sizes));
    }
}
