"""Request shapes vLLM 0.33's render server refuses (or takes), recorded from vLLM itself:
`fixtures/goldens/validation.jsonl`, one line per case `{"id", "path", "body", "status",
"param", "message"}` with vLLM's status, its error's `param` and message. Run against
`vllm launch render` (CPU) serving the Qwen3 fixture with the qwen3 reasoning parser and the
hermes tool parser (auto tool choice on), as `tests/vllm_contract_validation.rs`'s server
is started. That test checks that ours answers each case with vLLM's status (and, for a
refusal, a `param` naming the same field).

The cases are the shapes #50 lists (a message `name` that is not a string, tool calls with a
non-string `arguments` or a missing or non-string `function.name`, `tools[].function.strict`
and `stream_options.include_usage` that are not booleans, malformed `tools` on `/tokenize`),
each with its neighbours that vLLM accepts (pydantic's lax booleans, a null, a dict), so
that ours refuses exactly what vLLM refuses.

Setup: python3 -m venv bench-peers/vllmenv && bench-peers/vllmenv/bin/pip install vllm==0.33.0
Usage: bench-peers/vllmenv/bin/python scripts/gen_validation_goldens.py [--compare]
(--compare also serves target/release/llm-render and prints each case where ours differs)
"""
import http.client, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import ROOT, llm_render, vllm_render  # noqa: E402

VLLM_PORT, OURS_PORT = 31751, 31752
CHAT, COMPLETION, TOKENIZE = "/v1/chat/completions/render", "/v1/completions/render", "/tokenize"
TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                         "parameters": {"type": "object", "properties": {
                                             "city": {"type": "string"}}}}}


def user(**extra):
    return dict({"role": "user", "content": "What is the weather in Paris?"}, **extra)


def call(function=None, **extra):
    f = {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"} if function is None else function
    return dict({"id": "call_1", "type": "function", "function": f}, **extra)


def with_call(c, tool_msg=None):
    """A conversation whose assistant turn carries the tool call `c`."""
    return [user(), {"role": "assistant", "content": None, "tool_calls": [c]},
            tool_msg or {"role": "tool", "content": "sunny", "tool_call_id": "call_1"}]


def strict_tool(v):
    t = json.loads(json.dumps(TOOL))
    t["function"]["strict"] = v
    return t


CASES = []


def case(id, path, body):
    CASES.append((id, path, body))


# A message's `name`.
for role, extra in [("user", {}), ("system", {}), ("assistant", {})]:
    base = {"role": role, "content": "hi"}
    for label, v in [("int", 5), ("null", None), ("list", ["a"]), ("str", "bob"), ("bool", True)]:
        msgs = [dict(base, name=v)] + ([user()] if role != "user" else [])
        case(f"name_{role}_{label}", CHAT, {"messages": msgs})
for label, v in [("int", 5), ("str", "get_weather"), ("null", None)]:
    case(f"name_tool_{label}", CHAT, {"messages": with_call(call(), {
        "role": "tool", "content": "sunny", "tool_call_id": "call_1", "name": v}), "tools": [TOOL]})
case("name_user_int_tokenize", TOKENIZE, {"messages": [user(name=5)]})
for label, v in [("int", 5), ("str", "get_weather")]:
    case(f"name_tool_no_call_id_{label}", CHAT, {"messages": with_call(call(), {
        "role": "tool", "content": "sunny", "name": v}), "tools": [TOOL]})

# A custom tool's call (OpenAI's `ChatCompletionMessageCustomToolCallParam`).
for label, c in [("ok", {"id": "call_1", "type": "custom", "custom": {"name": "grep", "input": "x"}}),
                 ("no_id", {"type": "custom", "custom": {"name": "grep", "input": "x"}}),
                 ("no_custom", {"id": "call_1", "type": "custom"}),
                 ("input_int", {"id": "call_1", "type": "custom", "custom": {"name": "grep", "input": 5}}),
                 ("no_name", {"id": "call_1", "type": "custom", "custom": {"input": "x"}})]:
    case(f"custom_call_{label}", CHAT, {"messages": with_call(c)})

# An assistant tool call's `function.arguments` and `function.name`.
for label, args in [("int", 5), ("float", 1.5), ("dict", {"city": "Paris"}), ("null", None),
                    ("list", ["Paris"]), ("bool", True), ("str", "{\"city\": \"Paris\"}"),
                    ("empty_str", "")]:
    case(f"arguments_{label}", CHAT, {"messages": with_call(call({"name": "get_weather", "arguments": args})),
                                      "tools": [TOOL]})
case("arguments_missing", CHAT, {"messages": with_call(call({"name": "get_weather"})), "tools": [TOOL]})
for label, f in [("missing", {"arguments": "{}"}), ("int", {"name": 5, "arguments": "{}"}),
                 ("null", {"name": None, "arguments": "{}"}), ("list", {"name": ["f"], "arguments": "{}"}),
                 ("empty", {"name": "", "arguments": "{}"})]:
    case(f"call_name_{label}", CHAT, {"messages": with_call(call(f)), "tools": [TOOL]})
case("call_function_missing", CHAT, {"messages": with_call({"id": "call_1", "type": "function"}),
                                     "tools": [TOOL]})
case("call_function_str", CHAT, {"messages": with_call({"id": "call_1", "type": "function", "function": "f"}),
                                 "tools": [TOOL]})
case("call_id_missing", CHAT, {"messages": with_call({"type": "function", "function": {
    "name": "get_weather", "arguments": "{}"}}), "tools": [TOOL]})
case("call_type_missing", CHAT, {"messages": with_call({"id": "call_1", "function": {
    "name": "get_weather", "arguments": "{}"}}), "tools": [TOOL]})
case("call_id_int", CHAT, {"messages": with_call(call(id=5)), "tools": [TOOL]})
case("tool_calls_not_list", CHAT, {"messages": [user(), {"role": "assistant", "tool_calls": 5}]})
case("tool_calls_null", CHAT, {"messages": [user(), {"role": "assistant", "content": "ok", "tool_calls": None},
                                            user()]})

# `tools[].function.strict`.
for label, v in [("true", True), ("null", None), ("str_yes", "yes"), ("str_true", "true"),
                 ("int_1", 1), ("int_2", 2), ("str_maybe", "maybe"), ("list", [True])]:
    case(f"strict_{label}", CHAT, {"messages": [user()], "tools": [strict_tool(v)]})

# `stream_options.include_usage` / `continuous_usage_stats`.
for key in ["include_usage", "continuous_usage_stats"]:
    for label, v in [("true", True), ("null", None), ("str_true", "true"), ("str_yes", "yes"),
                     ("int_0", 0), ("int_1", 1), ("int_2", 2), ("str_maybe", "maybe"),
                     ("float", 0.5), ("list", [True])]:
        case(f"{key}_{label}", CHAT, {"messages": [user()], "stream": True, "stream_options": {key: v}})
    case(f"{key}_completion_str_maybe", COMPLETION,
         {"prompt": "Hi", "stream": True, "stream_options": {key: "maybe"}})
    case(f"{key}_completion_int_2", COMPLETION, {"prompt": "Hi", "stream": True, "stream_options": {key: 2}})
case("stream_options_unknown_key", CHAT, {"messages": [user()], "stream": True,
                                          "stream_options": {"other": 1}})

# Malformed `tools` on /tokenize (and the same on the chat render, for reference).
for path, tag in [(TOKENIZE, "tokenize"), (CHAT, "chat")]:
    for label, tools in [("not_list", 5), ("no_function", [{"type": "function"}]),
                         ("function_str", [{"type": "function", "function": "f"}]),
                         ("name_int", [{"type": "function", "function": {"name": 5}}]),
                         ("no_name", [{"type": "function", "function": {"description": "x"}}]),
                         ("params_str", [{"type": "function", "function": {"name": "f", "parameters": "x"}}]),
                         ("type_other", [{"type": "retrieval", "function": {"name": "f"}}]),
                         ("empty", []), ("ok", [TOOL])]:
        case(f"tools_{label}_{tag}", path, {"messages": [user()], "tools": tools})


def post(port, path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    r = c.getresponse()
    out = json.loads(r.read() or b"null")
    err = out.get("error") if isinstance(out, dict) else None
    if isinstance(err, dict):
        return r.status, err.get("param"), err.get("message")
    return r.status, None, None


def main():
    compare = "--compare" in sys.argv
    model = ["--served-model-name", "qwen3"]
    parsers = ["--reasoning-parser", "qwen3", "--tool-call-parser", "hermes", "--enable-auto-tool-choice"]
    out_path = os.path.join(ROOT, "fixtures/goldens/validation.jsonl")
    lines = []
    with vllm_render("qwen3", VLLM_PORT, model + parsers, log="/tmp/vllm_validation.log"):
        for id, path, body in CASES:
            body = dict(body, model="qwen3")
            status, param, message = post(VLLM_PORT, path, body)
            lines.append({"id": id, "path": path, "body": body, "status": status,
                          "param": param, "message": message})
    if not compare:
        with open(out_path, "w") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")
        print(f"{len(lines)} cases ({sum(l['status'] != 200 for l in lines)} refused) -> {out_path}")
        return
    bad = 0
    ours_args = ["--model", f"qwen3={os.path.join(ROOT, 'fixtures/models/qwen3')}",
                 "--tool-call-parser", "hermes"]
    with llm_render(OURS_PORT, ours_args):
        for line in lines:
            status, param, message = post(OURS_PORT, line["path"], line["body"])
            same = status == line["status"]
            bad += not same
            print("same" if same else "DIFF", line["id"], "vLLM", line["status"], line["param"],
                  (line["message"] or "")[:100], "| ours", status, param, (message or "")[:100])
    print(f"{len(lines) - bad} of {len(lines)} statuses equal")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
