"""Streaming goldens for a `tool_choice` the render constrained with a JSON schema (a tool
parser with `supports_required_and_named`, no structural tag of its own): what vLLM 0.33's
chat stream sends for a named tool and for `required`, delta by delta, next to what its
one-shot answer holds.

vLLM's own serving code runs in process: `ChatStreamProcessor.step` (the per-choice loop
`OpenAIServingChat.chat_completion_stream_generator` and the streaming chat derender both
call), over `ParserManager.get_parser(tool_parser_name="pythonic")` (no reasoning parser),
fed the text one token at a time as vLLM's detokenizer yields it (a token ending inside a
character is held). Under it, `Parser.parse_delta` reaches `extract_named_tool_call_streaming`
(first delta: id, name and the delta text; then each delta text as arguments) and
`extract_required_tool_call_streaming` (a scan of the accumulated `[{"name", "parameters"},
…]`: a call is sent once its name is closed and its `parameters` value has started, then the
raw text of that value as it grows). The one-shot side is `Parser.parse` (a named call's
arguments are the output as written, none if blank; `required`'s are
`json.dumps(parameters, ensure_ascii=False)` of a list pydantic accepts, else no call at all).

One line per case: {"tool_choice", "id", "text", "deltas": [text per token],
"stream": [[{"index", "name"?, "arguments"}] per delta], "stream_calls": the stream folded,
"calls": the one-shot's [{"name", "arguments"}]}. `parsers/tests/forced_stream_goldens.rs`
feeds the same text deltas to `ForcedCallParser`.

Usage: bench-peers/vllmenv/bin/python scripts/gen_forced_stream_goldens.py
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_parser_family_goldens import ROOT, model_dir  # noqa: E402

from transformers import AutoTokenizer  # noqa: E402
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: E402
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor  # noqa: E402
from vllm.parser.parser_manager import ParserManager  # noqa: E402

OUT = os.path.join(ROOT, "fixtures/goldens/derender/forced_stream.jsonl")
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                                         "opts": {"type": "object"}}}}},
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}},
]
NAMED = {"type": "function", "function": {"name": "get_weather"}}
CASES = {
    "named": [
        ("object", '{"city": "Paris", "days": 3}'),
        ("compact", '{"city":"Paris","days":3,"opts":{"a":[1,2.50,{"b":null}]}}'),
        ("empty_object", "{}"),
        ("unicode", '{"city": "Zürich ☕ 日本", "note": "\\u00e9\\ud83e\\udd16"}'),
        ("spaced", '  {"city": "Oslo"}\n'),
        ("whitespace_only", " \n\t "),
        ("empty", ""),
        ("not_json", "Paris, three days"),
    ],
    "required": [
        ("one_call", '[{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}]'),
        ("two_calls", '[{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}, '
                      '{"name": "now", "parameters": {}}]'),
        ("nested", '[{"name": "get_weather", "parameters": {"city": "Rome", "opts": '
                   '{"units": ["c", "f"], "deep": {"x": [1, {"y": true}], "z": null}}}}]'),
        ("escaped", '[{"name": "get_weather", "parameters": {"city": "a \\"quoted\\" [b] {c} \\\\ '
                    'd/e\\n", "days": 1}}]'),
        ("compact", '[{"name":"get_weather","parameters":{"city":"Paris","days":3}},'
                    '{"name":"now","parameters":{}}]'),
        ("numbers", '[{"name": "get_weather", "parameters": {"days": 1e2, "a": -0, "b": 2.50, '
                    '"c": 12345678901234567890, "d": 1.5E-7}}]'),
        ("unicode_escapes", '[{"name": "get_weather", "parameters": {"city": "Z\\u00fcrich \\ud83e\\udd16"}}]'),
        ("unicode", '[{"name": "get_weather", "parameters": {"city": "Zürich ☕ 日本"}}]'),
        ("spaced", ' \n[ {"name" : "now" , "parameters" : { } } ]\n'),
        ("parameters_first", '[{"parameters": {"city": "Paris"}, "name": "get_weather"}]'),
        ("description", '[{"name": "now", "description": "the time", "parameters": {}}]'),
        ("no_parameters", '[{"name": "now"}]'),
        ("null_parameters", '[{"name": "now", "parameters": null}]'),
        ("empty_list", "[]"),
        ("invalid_bad_entry", '[{"name": "now", "parameters": {}}, {"parameters": {}}]'),
        ("invalid_not_list", '{"name": "now", "parameters": {}}'),
        ("invalid_cut_off", '[{"name": "get_weather", "parameters": {"city": "Par'),
        ("invalid_parameters_type", '[{"name": "now", "parameters": [1, 2]}]'),
        ("invalid_trailing", '[{"name": "now", "parameters": {}}] x'),
        ("whitespace_only", " \n "),
    ],
}


def token_deltas(tok, text):
    """The text one token at a time, as vLLM's detokenizer yields it."""
    ids = tok.encode(text, add_special_tokens=False)
    prev, prev_ids, out = "", 0, []
    for i in range(len(ids)):
        cur = tok.decode(ids[: i + 1], skip_special_tokens=False)
        if cur.endswith("\ufffd") and i + 1 < len(ids):
            continue
        out.append((cur[len(prev):], ids[prev_ids: i + 1]))
        prev, prev_ids = cur, i + 1
    return out


def fold(stream):
    calls = []
    for step in stream:
        for tc in step:
            while len(calls) <= tc["index"]:
                calls.append({"name": "", "arguments": ""})
            calls[tc["index"]]["name"] += tc.get("name") or ""
            calls[tc["index"]]["arguments"] += tc["arguments"]
    return calls


def main():
    tok = AutoTokenizer.from_pretrained(model_dir("qwen3", []))
    cls = ParserManager.get_parser(tool_parser_name="pythonic", reasoning_parser_name=None,
                                   enable_auto_tools=True, model_name="qwen3")
    assert cls.tool_parser_cls.supports_required_and_named
    lines = []
    for kind, cases in CASES.items():
        choice = NAMED if kind == "named" else "required"
        for case, text in cases:
            req = ChatCompletionRequest(model="qwen3", tools=TOOLS, tool_choice=choice,
                                        messages=[{"role": "user", "content": "hi"}])
            _, _, calls = cls(tok, req.tools).parse(text, req, enable_auto_tools=True)
            steps = token_deltas(tok, text)
            proc = ChatStreamProcessor(req, cls(tok, req.tools), enable_auto_tools=True,
                                       parser_cls=cls)
            stream = []
            for n, (delta, ids) in enumerate(steps):
                last = n + 1 == len(steps)
                step = proc.step(delta, list(ids), "stop" if last else None, [1, 2, 3])
                d = step.delta
                stream.append([{"index": tc.index, **({"name": tc.function.name}
                                                      if tc.function.name else {}),
                                "arguments": tc.function.arguments or ""}
                               for tc in (d.tool_calls if d is not None else None) or []])
            lines.append({"tool_choice": choice, "id": f"{kind}/{case}", "text": text,
                          "deltas": [d for d, _ in steps], "stream": stream,
                          "stream_calls": fold(stream),
                          "calls": [{"name": c.name, "arguments": c.arguments}
                                    for c in calls or []]})
    with open(OUT, "w") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"{len(lines)} cases -> {OUT}")


if __name__ == "__main__":
    main()
