"""The official Anthropic and OpenAI SDKs read what /v1/messages/derender and
/v1/responses/derender produce.

For each API, the engine's IDs for one output are derendered one-shot and as a stream (chunks of
1, 3 and all IDs). A loopback server then answers the SDK's `messages.create` /
`responses.create` with the one-shot body, and its `messages.stream` / `responses.stream` with
the stream's events as SSE (`event: <type>` / `data: <json>`). The script checks that the SDK
parses both into its typed objects, and that the SDK's final streamed object equals the
one-shot one (thinking signatures aside, which are random; a one-shot reasoning item's status
is null where the stream's is `completed`, as in vLLM).

Setup: bench-peers/vllmenv as in vllm_peer.py (it has `anthropic` and `openai`), and
`cargo build --release`. Run: bench-peers/vllmenv/bin/python scripts/sdk_fold_derender.py
"""
import http.server, json, sys, threading, urllib.request

import anthropic, openai
from vllm_peer import llm_render

PORT, SSE_PORT = 18531, 18532
OUTPUT = ("<think>Paris is in France.</think>Let me check. <tool_call>\n"
          '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>')
MESSAGES_REQ = {"model": "qwen3", "max_tokens": 200, "messages": [{"role": "user", "content": "Weather?"}],
                "tools": [{"name": "get_weather", "input_schema": {"type": "object",
                           "properties": {"city": {"type": "string"}}}}]}
RESPONSES_REQ = {"model": "qwen3", "input": "Weather?", "tools": [{"type": "function", "name": "get_weather",
                 "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]}


def post(path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", json.dumps(body).encode(),
                                 {"content-type": "application/json"})
    return json.loads(urllib.request.urlopen(req).read())


def derender(api, original, ids, step=None):
    path, field = f"/v1/{api}/derender", f"{api}_request"
    if step is None:
        return post(path, {"model": "qwen3", field: original, "prompt_token_ids": [1, 2, 3],
                           "generate_response": {"request_id": "chatcmpl-sdk",
                               "choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}]}})
    events, state = [], None
    chunks = [ids[i:i + step] for i in range(0, len(ids), step)]
    for i, c in enumerate(chunks):
        body = {"model": "qwen3", "stream": True, "stream_state": state,
                "generate_chunk": {"request_id": "chatcmpl-sdk", "choices": [{"index": 0, "token_ids": c,
                    "finish_reason": "stop" if i == len(chunks) - 1 else None}]}}
        if i == 0:
            body.update({field: original, "prompt_token_ids": [1, 2, 3]})
        out = post(path, body)
        events += out["events"]
        state = out["stream_state"]
    return events


class Replay(http.server.BaseHTTPRequestHandler):
    """Answers any POST with the prepared body: JSON, or SSE when the request streams."""
    whole, events = None, None

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.send_response(200)
        if req.get("stream"):
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            for e in Replay.events:
                self.wfile.write(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode())
        else:
            data = json.dumps(Replay.whole).encode()
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def log_message(self, *a):
        pass


def no_signatures(d):
    for b in d["content"]:
        if b["type"] == "thinking":
            b["signature"] = ""
    return d


# What the SDK's ParsedResponse (the streamed result's type) adds to the output items.
PARSED_ONLY = ("parsed", "parsed_arguments", "async")


def comparable(d):
    d["created_at"] = 0
    for item in d["output"]:
        if item["type"] == "reasoning":
            item["status"] = None
        for part in [item] + (item.get("content") or []):
            for k in PARSED_ONLY:
                part.pop(k, None)
    return d


def main():
    results = []
    with llm_render(PORT):
        ids = post("/tokenize", {"model": "qwen3", "prompt": OUTPUT, "add_special_tokens": False})["tokens"]
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", SSE_PORT), Replay)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{SSE_PORT}"
        ac = anthropic.Anthropic(base_url=base, api_key="x")
        oc = openai.OpenAI(base_url=f"{base}/v1", api_key="x")
        Replay.whole = derender("messages", MESSAGES_REQ, ids)
        whole = ac.messages.create(**MESSAGES_REQ)
        want = no_signatures(whole.model_dump(exclude_none=True))
        for step in (1, 3, len(ids)):
            Replay.events = derender("messages", MESSAGES_REQ, ids, step)
            with ac.messages.stream(**MESSAGES_REQ) as s:
                got = no_signatures(s.get_final_message().model_dump(exclude_none=True))
            results.append((f"anthropic messages, chunks of {step}", got == want, got, want))
        Replay.whole = derender("responses", RESPONSES_REQ, ids)
        want = comparable(oc.responses.create(**RESPONSES_REQ).model_dump())
        for step in (1, 3, len(ids)):
            Replay.events = derender("responses", RESPONSES_REQ, ids, step)
            with oc.responses.stream(**RESPONSES_REQ) as s:
                got = comparable(s.get_final_response().model_dump())
            results.append((f"openai responses, chunks of {step}", got == want, got, want))
        srv.shutdown()
    for name, same, got, want in results:
        print(f"{'ok  ' if same else 'DIFF'} {name}")
        if not same:
            print("  got: ", json.dumps(got)[:2000])
            print("  want:", json.dumps(want)[:2000])
    print(f"{sum(r[1] for r in results)}/{len(results)} equal")
    sys.exit(0 if all(r[1] for r in results) else 1)


if __name__ == "__main__":
    main()
