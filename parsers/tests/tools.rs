//! Tool-call parsers, one family at a time, on outputs written in each model's documented
//! format: the one-shot result, and the same result under every chunking (every two-piece
//! split puts a split point at every byte of every marker).

mod common;
use common::{chunkings, one_shot, run};

/// (parser, output, content, [(name, arguments)])
type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

const CASES: &[Case] = &[
    // --- hermes (Qwen2.5 / Qwen3) ---
    (
        "hermes",
        "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
        "Let me check.\n",
        &[("get_weather", "{\"city\": \"Paris\"}")],
    ),
    (
        "hermes",
        "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": [1, {\"y\": \"}\\\"</tool_call>\"}]}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>\nDone 日本 🤖",
        // Text after the calls is dropped, as vLLM 0.33's hermes drops it (both paths).
        "",
        &[("a", "{\"x\": [1, {\"y\": \"}\\\"</tool_call>\"}]}"), ("b", "{}")],
    ),
    (
        "hermes",
        "<tool_call>{\"arguments\": {\"q\": \"ü\"}, \"name\": \"search\"}</tool_call>",
        "",
        &[("search", "{\"q\": \"ü\"}")],
    ),
    ("hermes", "<tool_call>\n{\"name\": \"now\"}\n</tool_call>", "", &[("now", "{}")]),
    (
        "hermes",
        "<tool_call>\nnot json at all\n</tool_call> after",
        "<tool_call>\nnot json at all\n</tool_call> after",
        &[],
    ),
    (
        "hermes",
        "<tool_call>{\"foo\": 1}</tool_call>",
        "<tool_call>{\"foo\": 1}</tool_call>",
        &[],
    ),
    ("hermes", "a < b and <tool_ca", "a < b and <tool_ca", &[]),
    // The end marker arrives while the arguments are open: that call is broken and dropped
    // (its arguments are not JSON), the good one after it stays; the text between calls is
    // dropped (vLLM keeps only what precedes the first call).
    (
        "hermes",
        "<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": 1</tool_call> tail<tool_call>{\"name\": \"b\"}</tool_call>",
        "",
        &[("b", "{}")],
    ),
    // Output cut off inside the arguments: not JSON, so no call.
    (
        "hermes",
        "<tool_call>\n{\"name\": \"cut\", \"arguments\": {\"city\": \"Par",
        "",
        &[],
    ),
    // --- llama3_json ---
    (
        "llama3_json",
        "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
        "",
        &[("get_weather", "{\"city\": \"Paris\"}")],
    ),
    (
        "llama3_json",
        " {\"name\": \"a\", \"parameters\": {\"n\": 1}}; {\"name\": \"b\", \"parameters\": {\"s\": \"x;y\"}}",
        "",
        &[("a", "{\"n\": 1}"), ("b", "{\"s\": \"x;y\"}")],
    ),
    (
        "llama3_json",
        "{\"answer\": 42} is plain JSON",
        "{\"answer\": 42} is plain JSON",
        &[],
    ),
    ("llama3_json", "The weather is fine.", "The weather is fine.", &[]),
    // --- mistral ---
    (
        "mistral",
        "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, {\"name\": \"now\", \"arguments\": {}}]",
        "",
        &[("get_weather", "{\"city\": \"Paris\"}"), ("now", "{}")],
    ),
    (
        "mistral",
        "Sure. [TOOL_CALLS]get_weather[ARGS]{\"city\": \"Zürich\"}[TOOL_CALLS]now[ARGS]{}",
        "Sure. ",
        &[("get_weather", "{\"city\": \"Zürich\"}"), ("now", "{}")],
    ),
    // Multi-byte whitespace between array items (an ideographic space, 3 bytes)
    (
        "mistral",
        "[TOOL_CALLS][\u{3000}{\"name\": \"now\", \"arguments\": {}},\u{3000}{\"name\": \"later\", \"arguments\": {}}]",
        "",
        &[("now", "{}"), ("later", "{}")],
    ),
    (
        "mistral",
        "[TOOL_CALLS]bad name here[ARGS]{}",
        "[TOOL_CALLS]bad name here[ARGS]{}",
        &[],
    ),
    // --- deepseek_v3 ---
    (
        "deepseek_v3",
        "I'll look.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>now\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "I'll look.",
        &[("get_weather", "{\"city\": \"Paris\"}"), ("now", "{}")],
    ),
    (
        "deepseek_v3",
        "<｜tool▁calls▁begin｜>oops<｜tool▁calls▁end｜>",
        "<｜tool▁calls▁begin｜>oops<｜tool▁calls▁end｜>",
        &[],
    ),
    // --- deepseek_v31 ---
    (
        "deepseek_v31",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"東京\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>Then more.",
        "Then more.",
        &[("get_weather", "{\"city\": \"東京\"}")],
    ),
    // --- kimi_k2 ---
    (
        "kimi_k2",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|><|tool_call_begin|>functions.now:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
        "",
        &[("get_weather", "{\"city\": \"Paris\"}"), ("now", "{}")],
    ),
    // --- qwen3_coder ---
    (
        "qwen3_coder",
        "Writing it.\n<tool_call>\n<function=write_file>\n<parameter=path>\n/tmp/a.py\n</parameter>\n<parameter=content>\nprint(\"hi\")\n\n</parameter>\n</function>\n</tool_call>",
        "Writing it.\n",
        &[("write_file", "{\"path\": \"/tmp/a.py\", \"content\": \"print(\\\"hi\\\")\\n\"}")],
    ),
    (
        "qwen3_coder",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nnull\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=metric>\nTrue\n</parameter>\n<parameter=ratio>\n2.50\n</parameter>\n<parameter=opts>\n{\"a\":[1,2]}\n</parameter>\n<parameter=other>\nnullable\n</parameter>\n</function>\n</tool_call>",
        "",
        // `null` for a string parameter stays a string (vLLM 0.33; `loose_values` golden).
        &[("get_weather", "{\"city\": \"null\", \"days\": 3, \"metric\": true, \"ratio\": 2.5, \"opts\": {\"a\": [1, 2]}, \"other\": \"nullable\"}")],
    ),
    (
        "qwen3_coder",
        "<tool_call>\n<function=now>\n</function>\n</tool_call>",
        "",
        &[("now", "{}")],
    ),
    (
        "qwen3_coder",
        "<tool_call>\nnope\n</tool_call>",
        "<tool_call>\nnope\n</tool_call>",
        &[],
    ),
    // --- glm45 ---
    (
        "glm45",
        "ok<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
        "ok",
        &[("get_weather", "{\"city\": \"Paris\", \"days\": 3}")],
    ),
    (
        "glm45",
        "<tool_call>now</tool_call>",
        "",
        &[("now", "{}")],
    ),
    // A call to a tool the request does not declare is dropped, text and all (vLLM's
    // `validate_tool_names`); the calls around it are kept.
    (
        "glm45",
        "a<tool_call>launch\n<arg_key>x</arg_key><arg_value>1</arg_value></tool_call>b<tool_call>now</tool_call>",
        "ab",
        &[("now", "{}")],
    ),
    // --- pythonic ---
    (
        "pythonic",
        "[get_weather(city='San Francisco', days=3, metric=True), now()]",
        "",
        &[("get_weather", "{\"city\": \"San Francisco\", \"days\": 3, \"metric\": true}"), ("now", "{}")],
    ),
    (
        "pythonic",
        "<|python_start|>[f(a=[1, 2.5, None], b={'k': \"v\\n\"})]<|python_end|>",
        "",
        &[("f", "{\"a\": [1, 2.5, null], \"b\": {\"k\": \"v\\n\"}}")],
    ),
    // Integers up to u64 in full; floats as Python's `repr` (`json.dumps`).
    (
        "pythonic",
        "[f(n=18446744073709551615, x=1e16, y=1.5e-07, z=0.00001, w=1e15)]",
        "",
        &[("f", "{\"n\": 18446744073709551615, \"x\": 1e+16, \"y\": 1.5e-07, \"z\": 1e-05, \"w\": 1000000000000000.0}")],
    ),
    ("pythonic", "[1, 2, 3] are numbers", "[1, 2, 3] are numbers", &[]),
    // Text after a call list is dropped, as vLLM's stream drops it.
    ("pythonic", "[now()] done", "", &[("now", "{}")]),
    // Multi-byte whitespace inside the list (an ideographic space, 3 bytes)
    (
        "pythonic",
        "[\u{3000}now(),\u{3000}later()]",
        "",
        &[("now", "{}"), ("later", "{}")],
    ),
];

fn calls(want: &[(&str, &str)]) -> Vec<(String, String)> {
    want.iter()
        .map(|(n, a)| (n.to_string(), a.to_string()))
        .collect()
}

fn got(calls: &[llm_render_parsers::ToolCall]) -> Vec<(String, String)> {
    calls
        .iter()
        .map(|c| (c.name.clone(), c.arguments.clone()))
        .collect()
}

#[test]
fn one_shot_results() {
    for (name, text, content, want) in CASES {
        let (c, t) = one_shot(name, text);
        assert_eq!(
            (c.as_str(), got(&t)),
            (*content, calls(want)),
            "{name}: {text:?}"
        );
    }
}

#[test]
fn every_chunking_equals_one_shot() {
    for (name, text, _, _) in CASES {
        let want = one_shot(name, text);
        for chunks in chunkings(text) {
            let (c, t, _) = run(name, &chunks);
            assert_eq!((c, t), want, "{name}: {chunks:?}");
        }
    }
}

#[test]
fn every_streamed_prefix_of_arguments_is_a_prefix_of_the_final() {
    for (name, text, _, _) in CASES {
        let (_, want) = one_shot(name, text);
        let mut p = llm_render_parsers::tool_parser(name, common::schemas()).unwrap();
        let mut out = llm_render_parsers::Parsed::default();
        for piece in chunkings(text).pop().unwrap_or_default() {
            llm_render_parsers::ToolParser::push(&mut p, piece, &mut out);
            for (i, call) in out.tool_calls().iter().enumerate() {
                assert!(
                    want[i].arguments.starts_with(&call.arguments),
                    "{name}: {call:?}"
                );
                assert_eq!(want[i].name, call.name);
            }
        }
    }
}

#[test]
fn kimi_ids_come_from_the_model_and_names_lead() {
    let (_, _, parsed) = run(
        "kimi_k2",
        &["<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\"", ": 1}<|tool_call_end|>"],
    );
    assert_eq!(parsed.calls[0].id.as_deref(), Some("functions.f:0"));
    assert_eq!(parsed.calls[0].name.as_deref(), Some("f"));
    // Later deltas carry no name.
    assert!(parsed.calls[1..].iter().all(|d| d.name.is_none()));
}

#[test]
fn several_calls_in_one_chunk_stream_in_order() {
    let (_, _, parsed) = run(
        "hermes",
        &["<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"b\", \"arguments\": {\"x\": 1}}</tool_call>"],
    );
    let idx: Vec<usize> = parsed.calls.iter().map(|d| d.index).collect();
    // One delta per call: the name and its arguments so far travel together.
    assert_eq!(idx, vec![0, 1]);
}
