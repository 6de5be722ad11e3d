#!/usr/bin/env python3
"""Streaming derender cost: stateful (state carried by the client) vs stateless replay.

Starts `target/release/llm-render serve` on the embedded Qwen3 model and streams a
reasoning + tool-call answer one token per request through POST /v1/chat/completions/derender:

* stateful: each request carries only the new token and the previous `stream_state`; after
  the first chunk the prompt and messages are omitted (ext);
* replay: each request resends every output ID so far as a non-stream derender, which is what
  a stateless tier (vLLM's) does per chunk.

Server CPU is read from /proc/<pid>/task/*/schedstat (ns resolution). Prints CPU per chunk
for chunks 1-1000 vs 3001-4000, totals at 4,000 and 8,000 tokens, the replay ratio at
4,000 tokens, and the largest state. Usage: cargo build --release && python3 benches/derender_stream.py
"""
import gzip, http.client, json, os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_support import ROOT, proc_cpu, wait_healthy  # noqa: E402

from tokenizers import Tokenizer  # noqa: E402

PORT = 18931
TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object",
          "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}]


def answer_ids(n_tokens):
    """A Qwen3 answer of exactly n_tokens: reasoning, then one hermes tool call."""
    tok = Tokenizer.from_str(gzip.open(os.path.join(ROOT, "fixtures/models/qwen3/tokenizer.json.gz")).read().decode())
    enc = lambda t: tok.encode(t, add_special_tokens=False).ids  # noqa: E731
    head = enc("<think>\n")
    tail = enc("\n</think>\n\nWriting it.\n<tool_call>\n"
               '{"name": "write_file", "arguments": {"path": "/tmp/a.txt", "content": "'
               + "line of content " * 40 + '"}}\n</tool_call>')
    body = enc("Let me think about the file layout, then write it carefully. " * (n_tokens // 8 + 1))
    return head + body[:n_tokens - len(head) - len(tail)] + tail


class Client:
    def __init__(self):
        self.c = http.client.HTTPConnection("127.0.0.1", PORT)

    def post(self, path, body):
        data = json.dumps(body)
        self.c.request("POST", path, data, {"Content-Type": "application/json"})
        r = self.c.getresponse()
        out = json.loads(r.read())
        if r.status != 200:
            raise RuntimeError(out)
        return out


def stateful(client, pid, ids):
    """Returns CPU seconds per chunk (list) and the largest state."""
    state, per, largest = None, [], 0
    chat = {"messages": [{"role": "user", "content": "write the file"}], "tools": TOOLS}
    for i, tid in enumerate(ids):
        last = i + 1 == len(ids)
        body = {"stream": True, "stream_state": state,
                "generate_chunk": {"choices": [{"index": 0, "token_ids": [tid],
                                                "finish_reason": "stop" if last else None}]},
                # After the first chunk only tools are resent (ext): no prompt, no messages.
                "prompt_token_ids": list(range(100)) if i == 0 else None,
                "chat_request": chat if i == 0 else {"tools": TOOLS}}
        t0 = proc_cpu(pid)
        out = client.post("/v1/chat/completions/derender", body)
        per.append(proc_cpu(pid) - t0)
        state = out["stream_state"]
        largest = max(largest, len(state))
    return per, largest


def http_floor(client, pid, n):
    """Median server CPU of the cheapest useful request: detokenize one ID."""
    per = []
    for _ in range(n):
        t0 = proc_cpu(pid)
        client.post("/detokenize", {"tokens": [9707]})
        per.append(proc_cpu(pid) - t0)
    return sorted(per)[len(per) // 2]


def replay(client, pid, ids):
    chat = {"messages": [{"role": "user", "content": "write the file"}], "tools": TOOLS}
    t0 = proc_cpu(pid)
    for i in range(1, len(ids) + 1):
        client.post("/v1/chat/completions/derender", {
            "stream": False, "prompt_token_ids": list(range(100)),
            "generate_response": {"choices": [{"index": 0, "token_ids": ids[:i],
                                               "finish_reason": "stop" if i == len(ids) else None}]},
            "chat_request": chat})
    return proc_cpu(pid) - t0


def main():
    binary = os.path.join(ROOT, "target/release/llm-render")
    server = subprocess.Popen([binary, "serve", "--port", str(PORT), "--tool-call-parser", "hermes",
                               "--reasoning-parser", "qwen3"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(f"http://127.0.0.1:{PORT}")
        client = Client()
        ids4 = answer_ids(4000)
        ids8 = answer_ids(8000)
        stateful(client, server.pid, ids4[:200])  # warm-up
        # Three runs each; per chunk, the median (the machine's noise is per window).
        runs4 = [stateful(client, server.pid, ids4) for _ in range(3)]
        runs8 = [stateful(client, server.pid, ids8) for _ in range(3)]
        per4 = [sorted(x)[1] for x in zip(*[r[0] for r in runs4])]
        per8 = [sorted(x)[1] for x in zip(*[r[0] for r in runs8])]
        big4, big8 = max(r[1] for r in runs4), max(r[1] for r in runs8)
        floor = http_floor(client, server.pid, 2000)
        first, late = sum(per4[:1000]), sum(per4[3000:4000])
        print(f"stateful, 4000 tokens: chunks 1-1000 {first*1e3:.1f} ms, 3001-4000 {late*1e3:.1f} ms "
              f"-> ratio {late/first:.2f} (target <= 1.2)")
        print(f"stateful total: 4000 tokens {sum(per4)*1e3:.1f} ms, 8000 tokens {sum(per8)*1e3:.1f} ms "
              f"-> ratio {sum(per8)/sum(per4):.2f} (target <= 2.2)")
        print(f"largest stream_state: {big4} bytes at 4000, {big8} bytes at 8000 "
              f"(tool-call arguments open: bounded by that call)")
        rep = replay(client, server.pid, ids4)
        print(f"HTTP floor (POST /detokenize of one ID): {floor*1e6:.1f} us per request; "
              f"stateful derender: {sum(per4)/len(per4)*1e6:.1f} us per chunk")
        print(f"replay baseline, 4000 tokens: {rep*1e3:.1f} ms -> replay/stateful {rep/sum(per4):.1f}x (expect >= 50x)")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
