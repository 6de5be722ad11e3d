"""Streams through llm-render's derender with `stream_state` carried two ways, and checks each
against the one-shot answer:

* verbatim: the JSON object as returned (a plain JSON client);
* typed: through vLLM 0.33's own `DerenderStreamState` (`model_validate` then `model_dump`),
  which drops `llm_render_state`, as a client typed with vLLM's models does.

Cases: a plain completion stream (no parser) on a default server; a chat stream with the
qwen3 reasoning and hermes tool parsers on a default server (the typed client must get a 400
that names --derender-replay-state) and on one started with --derender-replay-state (both
clients must get the one-shot answer).

Setup: python3 -m venv bench-peers/vllmenv && bench-peers/vllmenv/bin/pip install vllm==0.33.0;
cargo build --release.
Usage: bench-peers/vllmenv/bin/python scripts/stream_state_vllm_roundtrip.py
"""
import http.client, json, os, sys

from vllm.entrypoints.scale_out.token_in_token_out.protocol import DerenderStreamState

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import llm_render  # noqa: E402


def post(port, path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    r = c.getresponse()
    return r.status, json.loads(r.read() or b"null")


def fold(chunks):
    text, reasoning, calls, finish = "", "", [], None
    for ch in chunks:
        for c in ch["choices"]:
            d = c.get("delta") or {}
            text += c.get("text") or d.get("content") or ""
            reasoning += d.get("reasoning_content") or ""
            for t in d.get("tool_calls") or []:
                if t.get("function", {}).get("name"):
                    calls.append([t["function"]["name"], ""])
                calls[-1][1] += t["function"].get("arguments") or ""
            finish = c.get("finish_reason") or finish
    return {"text": text, "reasoning": reasoning, "calls": calls, "finish": finish}


def whole(resp):
    c = resp["choices"][0]
    m = c.get("message") or {}
    calls = [[t["function"]["name"], t["function"]["arguments"]] for t in m.get("tool_calls") or []]
    return {"text": c.get("text") or m.get("content") or "", "reasoning": m.get("reasoning_content") or "",
            "calls": calls, "finish": c["finish_reason"]}


def stream(port, route, original_key, original, ids, typed):
    state, chunks = None, []
    for i, tid in enumerate(ids):
        body = {"stream": True, "model": "qwen3", "stream_state": state, "prompt_token_ids": [1, 2],
                "generate_chunk": {"request_id": "rt-1", "choices": [{"index": 0, "token_ids": [tid],
                                   "finish_reason": "stop" if i + 1 == len(ids) else None}]},
                original_key: original}
        status, out = post(port, route, body)
        if status != 200:
            return status, out
        chunks.append(out["chunk"])
        state = out["stream_state"]
        if typed:
            state = DerenderStreamState.model_validate(state).model_dump()
            assert "llm_render_state" not in state
    return 200, fold(chunks)


def one_shot(port, route, original_key, original, ids):
    key = "generate_response" if route.startswith("/v1/chat") else "generate_responses"
    gen = {"request_id": "rt-1", "choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}]}
    body = {"model": "qwen3", "prompt_token_ids": [1, 2], key: gen if key == "generate_response" else [gen],
            original_key: original}
    status, out = post(port, route, body)
    assert status == 200, out
    return whole(out)


def tokenize(port, text):
    status, out = post(port, "/tokenize", {"model": "qwen3", "prompt": text, "add_special_tokens": False})
    assert status == 200, out
    return out["tokens"]


def main():
    failures = 0
    def check(name, ok, detail=""):
        nonlocal failures
        print(f"{'ok  ' if ok else 'FAIL'} {name}{(': ' + detail) if detail and not ok else ''}")
        failures += not ok

    plain_text = "Café ☕ naïve 日本語 🤖🦀, then plain text to the end."
    parsed_text = ("<think>\nweather first\n</think>\n\nChecking.\n<tool_call>\n"
                   "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}}\n</tool_call>")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    chat = {"messages": [{"role": "user", "content": "weather?"}], "tools": tools}
    completion = {"prompt": "x"}
    C, R = "/v1/completions/derender", "/v1/chat/completions/derender"

    with llm_render(18931) as port:
        ids = tokenize(port, plain_text)
        want = one_shot(port, C, "completion_request", completion, ids)
        for typed in (False, True):
            status, got = stream(port, C, "completion_request", completion, ids, typed)
            check(f"plain completion stream, {'typed' if typed else 'verbatim'} client", status == 200 and got == want,
                  f"{status} {got} != {want}")
        pids = tokenize(port, parsed_text)
        pwant = one_shot(port, R, "chat_request", chat, pids)
        status, got = stream(port, R, "chat_request", chat, pids, False)
        check("parsed chat stream, verbatim client", status == 200 and got == pwant, f"{status} {got}")
        status, out = stream(port, R, "chat_request", chat, pids, True)
        msg = (out.get("error") or {}).get("message", "") if isinstance(out, dict) else ""
        check("parsed chat stream, typed client, no replay flag: 400 naming the flag",
              status == 400 and "--derender-replay-state" in msg, f"{status} {out}")
    with llm_render(18932, ["--derender-replay-state"]) as port:
        for typed in (False, True):
            status, got = stream(port, R, "chat_request", chat, pids, typed)
            check(f"parsed chat stream with --derender-replay-state, {'typed' if typed else 'verbatim'} client",
                  status == 200 and got == pwant, f"{status} {got} != {pwant}")
    print("all equal" if not failures else f"{failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
