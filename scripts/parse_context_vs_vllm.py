"""`reasoning_ended`, `reasoning_parser_kwargs`, `parse_context` and the parser-set
`sampling_params` (`skip_special_tokens`, `structured_outputs`) of llm-render's chat,
Messages and Responses renders against vLLM 0.33's own render server, both serving the Qwen3
fixture: once with vLLM's qwen3 reasoning parser and hermes tool parser (ours: the same by
`auto`), once with no parsers (ours: `--reasoning-parser none --tool-call-parser none`), where both
refuse a `tool_choice` other than `none`.

Setup: as scripts/sampling_params_vs_vllm.py.
Usage: bench-peers/vllmenv/bin/python scripts/parse_context_vs_vllm.py
"""
import http.client, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import ROOT, llm_render, vllm_render  # noqa: E402

VLLM_PORT, OURS_PORT = 31771, 31772
FIELDS = ("reasoning_ended", "reasoning_parser_kwargs", "parse_context")
HI = [{"role": "user", "content": "hi"}]
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
         {"type": "function", "function": {"name": "g", "description": "G", "strict": True,
                                           "parameters": {"type": "object", "properties": {}}}}]
CHAT = "/v1/chat/completions/render"
CASES = [
    (CHAT, {"messages": HI}),
    (CHAT, {"messages": HI, "chat_template_kwargs": {"enable_thinking": False}}),
    (CHAT, {"messages": HI, "chat_template_kwargs": {"enable_thinking": True, "foo": [1, None]}}),
    (CHAT, {"messages": HI, "reasoning_effort": "none"}),
    (CHAT, {"messages": HI, "reasoning_effort": "low"}),
    (CHAT, {"messages": HI, "include_reasoning": False}),
    (CHAT, {"messages": HI, "tools": TOOLS}),
    (CHAT, {"messages": HI, "tools": TOOLS, "tool_choice": "required", "parallel_tool_calls": False}),
    (CHAT, {"messages": HI, "tools": TOOLS,
            "tool_choice": {"type": "function", "function": {"name": "g"}}}),
    (CHAT, {"messages": HI + [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "tool", "tool_call_id": "b", "content": "2"}], "tools": TOOLS}),
    (CHAT, {"messages": HI + [{"role": "assistant", "content": "<think>\nx\n</think>\n\nHel"}],
            "add_generation_prompt": False, "continue_final_message": True}),
    (CHAT, {"messages": HI + [{"role": "assistant", "content": "<think>\nstill"}],
            "add_generation_prompt": False, "continue_final_message": True}),
    (CHAT, {"messages": HI + [{"role": "assistant", "content": "Sure."}, {"role": "user", "content": "more"}]}),
    (CHAT, {"messages": HI, "documents": [{"title": "t", "text": "x"}]}),
    ("/v1/messages/render", {"max_tokens": 8, "messages": HI}),
    ("/v1/messages/render", {"max_tokens": 8, "messages": HI, "thinking": {"type": "disabled"},
                             "tools": [{"name": "f", "input_schema": {"type": "object"}}]}),
    ("/v1/responses/render", {"input": "hi"}),
    ("/v1/responses/render", {"input": "hi", "reasoning": {"effort": "none"}}),
]


def post(port, path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    r = c.getresponse()
    out = json.loads(r.read())
    # Both refusing agrees (the messages differ: ours names our flag).
    if "error" in out:
        return {"refused": r.status}
    got = {k: out.get(k, "<missing>") for k in FIELDS}
    # vLLM's serializer leaves out fields at their defaults.
    sp = out.get("sampling_params") or {}
    got["skip_special_tokens"] = sp.get("skip_special_tokens", True)
    got["structured_outputs"] = sp.get("structured_outputs")
    return got


def run(vllm_args, ours_args, label):
    bad = 0
    fixture = ["--model", f"qwen3={os.path.join(ROOT, 'fixtures/models/qwen3')}"]
    with llm_render(OURS_PORT, fixture + ours_args), \
            vllm_render("qwen3", VLLM_PORT, ["--served-model-name", "qwen3", *vllm_args],
                        log=f"/tmp/vllm_parse_context_{label}.log"):
        for path, body in CASES:
            body = dict(body, model="qwen3")
            a, b = post(VLLM_PORT, path, body), post(OURS_PORT, path, body)
            same = a == b
            bad += not same
            print("same" if same else "DIFF", label, path, json.dumps(body)[:90])
            if not same:
                print("  vllm:", json.dumps(a))
                print("  ours:", json.dumps(b))
    return bad


def main():
    bad = run(["--reasoning-parser", "qwen3", "--tool-call-parser", "hermes",
               "--enable-auto-tool-choice"], [], "parsers")
    bad += run([], ["--reasoning-parser", "none", "--tool-call-parser", "none"], "no-parsers")
    total = 2 * len(CASES)
    print(f"{total - bad} of {total} agree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
