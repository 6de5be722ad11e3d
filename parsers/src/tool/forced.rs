//! Output forced by a `tool_choice` JSON schema: what vLLM's serving layer reads in place of
//! the family's format when the parser has no structural tag of its own
//! (`supports_required_and_named`; `parser/abstract_parser.py` `_extract_tool_calls` one
//! shot, `tool_parsers/streaming.py` streamed). The render constrained the engine with that
//! schema (`src/render/tool_choice/`, `ToolGrammar::JsonSchema`), so the output is JSON, not
//! the family's markup, and nothing is content:
//!
//! * a named tool (`tool_choice: {"type": "function", "function": {"name": "f"}}`): the whole
//!   output is `f`'s arguments, passed on as written; an empty or blank output is no call.
//!   Streamed as vLLM streams it (`extract_named_tool_call_streaming`): the call's name comes
//!   with the first text, then every piece of text is an arguments delta. Leading whitespace
//!   is held until the first other character (vLLM sends the name with it, but its one-shot
//!   makes a blank output no call, and the stream folds to the one-shot answer here), so the
//!   state is that whitespace only.
//! * `required`: the output is `[{"name": "f", "parameters": {…}}, …]`, each entry one call
//!   whose arguments are `json.dumps(parameters, ensure_ascii=False)`. Read as it streams
//!   (`forced_list`): a call is sent once its name is closed and its `parameters` have
//!   started (vLLM's `extract_required_tool_call_streaming`), and its arguments stream as
//!   `json.dumps` writes them, which vLLM's one-shot sends (its stream sends the text as the
//!   model wrote it: `{"a":1}` where the one-shot has `{"a": 1}`). An entry without
//!   `parameters` is sent at its `}` with `null`, as the one-shot (vLLM's stream never sends
//!   it). The state is the current call's: its name, the open containers of its arguments,
//!   a number not yet ended, and its arguments while the name is still to come.
//!
//!   An output that is not such a list (pydantic's `list[FunctionDefinition]` fails) is no
//!   call in vLLM's one-shot; a stream cannot take back what it sent, so here, as in vLLM's
//!   stream, the reading stops at the first fault and the calls sent before it stay (an
//!   output cut off inside a call keeps that call's arguments so far). A fault found before
//!   a call starts (not a list, an entry without a string name, `parameters` neither an
//!   object nor `null`) sends nothing, as the one-shot.

use super::forced_list::ListReader;
use super::{Parsed, ToolParser};
use crate::pystr::py_space;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForcedCallParser(Forced);

#[derive(Debug, Clone, Serialize, Deserialize)]
enum Forced {
    /// A named tool: whether its call has been sent, and the whitespace held before it.
    Named {
        name: String,
        sent: bool,
        held: String,
    },
    /// `required`.
    Required(ListReader),
}

impl ForcedCallParser {
    /// `tool_choice` naming `name`.
    pub fn named(name: &str) -> Self {
        ForcedCallParser(Forced::Named {
            name: name.to_string(),
            sent: false,
            held: String::new(),
        })
    }

    /// `tool_choice: "required"`.
    pub fn required() -> Self {
        ForcedCallParser(Forced::Required(ListReader::default()))
    }
}

impl ToolParser for ForcedCallParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        match &mut self.0 {
            Forced::Named { sent: true, .. } => out.args(0, text),
            Forced::Named { name, sent, held } => {
                held.push_str(text);
                if text.chars().any(|c| !py_space(c)) {
                    out.start_call(0, name.clone(), None);
                    out.args(0, held);
                    held.clear();
                    *sent = true;
                }
            }
            Forced::Required(list) => list.push(text, out),
        }
    }

    fn finish(&mut self, out: &mut Parsed) {
        match &mut self.0 {
            // Blank to the end: no call.
            Forced::Named { held, .. } => held.clear(),
            Forced::Required(list) => list.finish(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mut p: ForcedCallParser, chunks: &[&str]) -> Parsed {
        let mut out = Parsed::default();
        for c in chunks {
            p.push(c, &mut out);
        }
        p.finish(&mut out);
        out
    }

    #[test]
    fn a_named_tool_takes_the_whole_output_as_its_arguments() {
        let out = run(ForcedCallParser::named("f"), &["{\"a\": ", "1}"]);
        assert_eq!(out.content, "");
        let calls = out.tool_calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "f");
        assert_eq!(calls[0].arguments, "{\"a\": 1}");
        assert!(run(ForcedCallParser::named("f"), &[" \n"]).is_empty());
    }

    #[test]
    fn required_reads_a_list_of_name_and_parameters() {
        let out = run(
            ForcedCallParser::required(),
            &[
                r#"[{"name": "f", "parameters": {"a": 1, "b": "é"}}, "#,
                r#"{"name": "g"}]"#,
            ],
        );
        let calls = out.tool_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].name.as_str(), calls[0].arguments.as_str()),
            ("f", r#"{"a": 1, "b": "é"}"#)
        );
        assert_eq!(
            (calls[1].name.as_str(), calls[1].arguments.as_str()),
            ("g", "null")
        );
        assert_eq!(out.content, "");
        for bad in [
            r#"{"name": "f"}"#,
            r#"[{"parameters": {}}]"#,
            r#"[{"name": 1}]"#,
            r#"[{"name": "f", "parameters": [1]}]"#,
            r#"[{"name": "f", "parameters": "{}"}]"#,
            r#"[{"name": "f""#,
            r#"x[{"name": "f", "parameters": {}}]"#,
            r#"[{"name": "f", "strict": "maybe", "parameters": {}}]"#,
            r#"[{"name": "f", "description": 1, "parameters": {}}]"#,
            r#"[{"name": "\ud800", "parameters": {}}]"#,
        ] {
            assert!(
                run(ForcedCallParser::required(), &[bad]).is_empty(),
                "{bad}"
            );
        }
    }

    fn calls(chunks: &[&str]) -> Vec<(String, String)> {
        run(ForcedCallParser::required(), chunks)
            .tool_calls()
            .into_iter()
            .map(|c| (c.name, c.arguments))
            .collect()
    }

    #[test]
    fn required_arguments_are_written_as_json_dumps_writes_them() {
        for (text, args) in [
            (
                r#"[{"name":"f","parameters":{"a":1,"b":[1,2.50,{}],"c":{ }}}]"#,
                r#"{"a": 1, "b": [1, 2.5, {}], "c": {}}"#,
            ),
            (
                r#"[{"name": "f", "parameters": {"n": -0, "e": 1e2, "s": 1.5E-7, "i": 1e400, "x": -Infinity, "y": NaN, "z": 123456789012345678901234567890}}]"#,
                r#"{"n": 0, "e": 100.0, "s": 1.5e-07, "i": Infinity, "x": -Infinity, "y": NaN, "z": 123456789012345678901234567890}"#,
            ),
            (
                r#"[{"name": "f", "parameters": {"s": "\u00e9\ud83e\udd16\/\"\\\n\u0001\u007f"}}]"#,
                "{\"s\": \"é🤖/\\\"\\\\\\n\\u0001\u{7f}\"}",
            ),
            (
                " \n[ { \"name\" : \"f\" ,\"parameters\" :\n{ \"a\" :\t[ ] } } ] \r\n",
                r#"{"a": []}"#,
            ),
            (
                r#"[{"parameters": {"a": 1}, "name": "f", "extra": [{"x": 1}], "strict": 1}]"#,
                r#"{"a": 1}"#,
            ),
            (
                r#"[{"name": "f", "parameters": null, "defer_loading": "Yes", "description": null}]"#,
                "null",
            ),
        ] {
            assert_eq!(
                calls(&[text]),
                vec![("f".to_string(), args.to_string())],
                "{text}"
            );
        }
    }

    #[test]
    fn required_stops_at_the_first_fault_keeping_what_was_sent() {
        let f = |a: &str| ("f".to_string(), a.to_string());
        assert_eq!(
            calls(&[r#"[{"name": "f", "parameters": {"city": "Par"#]),
            vec![f(r#"{"city": "Par"#)]
        );
        assert_eq!(
            calls(&[r#"[{"name": "f", "parameters": {"n": 12"#]),
            vec![f(r#"{"n": 12"#)]
        );
        assert_eq!(
            calls(&[r#"[{"name": "f", "parameters": {}}, {"parameters": {}}]"#]),
            vec![f("{}")]
        );
        assert_eq!(
            calls(&[r#"[{"name": "f", "parameters": {}}] x"#]),
            vec![f("{}")]
        );
        assert_eq!(
            calls(&[r#"[{"name": "f", "parameters": {"a": 1,}}]"#]),
            vec![f(r#"{"a": 1,"#)]
        );
        assert_eq!(
            calls(&[r#"[{"name": "f"}, {"parameters": {}}]"#]),
            vec![f("null")]
        );
        assert_eq!(
            calls(&[r#"[{"name": "f", "parameters": {}, "name": "g"}]"#]),
            vec![f("{}")]
        );
        // A parameters object before the name waits for it, and is dropped without one.
        assert!(calls(&[r#"[{"parameters": {"a": 1}}]"#]).is_empty());
    }

    #[test]
    fn every_split_gives_the_one_shot_calls() {
        for text in [
            r#"[{"name":"f","parameters":{"a":[1,2.50,{"b":null}],"s":"x\u00e9\ud83e\udd16\n"}}, {"parameters": {"c": -1e-7}, "name": "g"}, {"name": "h"}]"#,
            r#"  {"city": "Zürich"}  "#,
        ] {
            let named = text.starts_with(' ');
            let mk = || {
                if named {
                    ForcedCallParser::named("f")
                } else {
                    ForcedCallParser::required()
                }
            };
            let want = run(mk(), &[text]).tool_calls();
            assert!(!want.is_empty());
            let b: Vec<usize> = (0..=text.len())
                .filter(|i| text.is_char_boundary(*i))
                .collect();
            for &i in &b {
                for &j in b.iter().filter(|&&j| j >= i) {
                    let got = run(mk(), &[&text[..i], &text[i..j], &text[j..]]).tool_calls();
                    assert_eq!(got, want, "{i} {j}");
                }
            }
        }
    }
}
