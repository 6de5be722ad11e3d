#!/usr/bin/env python3
"""Streaming derender cost: stateful (state carried by the client) vs stateless replay.

Starts `target/dist/llm-render serve` on the embedded Qwen3 model and streams a
reasoning + tool-call answer one token per request through POST /v1/chat/completions/derender:

* stateful: each request carries only the new token and the previous `stream_state`; after
  the first chunk the prompt and messages are omitted (ext);
* replay: each request resends every output ID so far as a non-stream derender, which is what
  a stateless tier (vLLM's) does per chunk.

* vLLM (peer, when installed): vLLM 0.33's own stateless streaming derender (`vllm launch
  render`, CPU only) on the same answer, one token per request. Its state carries every
  output ID and chunk length, and each chunk replays all earlier chunks through its parsers;
  the streamed message is compared with llm-render's;
* replay through SMG (peer, when installed): the same answer replayed the way a stateless
  tier that lacks stream state must, against SGLang's Rust gateway (SMG 1.13.0) in the same
  run: every chunk resends all output IDs to /v1/detokenize, then the whole text to
  /parse/reasoning and the remaining text to /parse/function_call.

Server CPU is read from /proc/<pid>/task/*/schedstat (ns resolution). Prints CPU per chunk
for chunks 1-1000 vs 3001-4000, totals at 4,000 and 8,000 tokens, the replay ratios at
4,000 tokens, and the largest state.

Setup for the peers (nothing committed; bench-peers/ is git-ignored; vLLM pulls ~9 GB):
  python3 -m venv bench-peers/smgenv && bench-peers/smgenv/bin/pip install smg==1.13.0
  python3 -m venv bench-peers/vllmenv && bench-peers/vllmenv/bin/pip install vllm==0.33.0
Usage: cargo build --profile dist && python3 benches/derender_stream.py [--no-peers]
(the vLLM replay takes a few minutes: its cost grows with the square of the position)
"""
import gzip, http.client, json, os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_support import LLM_RENDER_BIN, ROOT, model_dir, proc_cpu, wait_healthy  # noqa: E402

from tokenizers import Tokenizer  # noqa: E402

PORT = 18931
SMG_PORT = 18932
SMG_PYTHON = os.path.join(ROOT, "bench-peers/smgenv/bin/python3")
VLLM_PORT = 18934
VLLM = os.path.join(ROOT, "bench-peers/vllmenv/bin/vllm")
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
    def __init__(self, port=PORT):
        self.c = http.client.HTTPConnection("127.0.0.1", port)

    def post(self, path, body):
        data = json.dumps(body)
        self.c.request("POST", path, data, {"Content-Type": "application/json"})
        r = self.c.getresponse()
        out = json.loads(r.read())
        if r.status != 200:
            raise RuntimeError(out)
        return out


def accumulate(msg, chunk):
    """Adds one chat.completion.chunk's delta to `msg` (reasoning, content, calls)."""
    for choice in chunk.get("choices", []):
        delta = choice.get("delta") or {}
        msg["reasoning"] += delta.get("reasoning_content") or delta.get("reasoning") or ""
        msg["content"] += delta.get("content") or ""
        for tc in delta.get("tool_calls") or []:
            while len(msg["calls"]) <= tc.get("index", 0):
                msg["calls"].append({"name": "", "arguments": ""})
            call, fn = msg["calls"][tc.get("index", 0)], tc.get("function") or {}
            call["name"] += fn.get("name") or ""
            call["arguments"] += fn.get("arguments") or ""


def stateful(client, pid, ids, full=False):
    """Streams `ids` one per request, carrying `stream_state`.

    Returns CPU seconds per chunk (list), the largest state in bytes and the accumulated
    message. `full` resends the prompt IDs and the whole chat request on every chunk, which
    vLLM's derender requires; llm-render needs them on the first chunk only (ext)."""
    state, per, largest = None, [], 0
    msg = {"reasoning": "", "content": "", "calls": []}
    chat = {"model": "qwen3", "messages": [{"role": "user", "content": "write the file"}], "tools": TOOLS}
    for i, tid in enumerate(ids):
        last = i + 1 == len(ids)
        first = i == 0 or full
        body = {"model": "qwen3", "stream": True, "stream_state": state,
                "generate_chunk": {"choices": [{"index": 0, "token_ids": [tid],
                                                "finish_reason": "stop" if last else None}]},
                "prompt_token_ids": list(range(100)) if first else None,
                "chat_request": chat if first else {"tools": TOOLS}}
        t0 = proc_cpu(pid)
        out = client.post("/v1/chat/completions/derender", body)
        per.append(proc_cpu(pid) - t0)
        state = out["stream_state"]
        largest = max(largest, len(json.dumps(state)) if not isinstance(state, str) else len(state))
        accumulate(msg, out["chunk"])
    return per, largest, msg


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


def vllm_stream(ids):
    """vLLM 0.33's own stateless streaming derender (`vllm launch render`, CPU only), one
    token per request: server CPU per chunk and the accumulated message. None when the peer
    is not installed."""
    if not os.path.exists(VLLM):
        print("vLLM peer not installed (see the docstring); skipping it")
        return None
    d = model_dir()
    proc = subprocess.Popen([VLLM, "launch", "render", d, "--port", str(VLLM_PORT), "--served-model-name", "qwen3",
                             "--tool-call-parser", "hermes", "--reasoning-parser", "qwen3",
                             "--enable-auto-tool-choice"],
                            env=dict(os.environ, VLLM_TARGET_DEVICE="cpu"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(f"http://127.0.0.1:{VLLM_PORT}", tries=1200)
        client = Client(VLLM_PORT)
        stateful(client, proc.pid, ids[:50], full=True)  # warm-up
        per, largest, msg = stateful(client, proc.pid, ids, full=True)
        return per, largest, msg
    finally:
        proc.terminate()
        proc.wait()


def smg_replay(ids):
    """SMG's server CPU to stream `ids` statelessly, and the final (reasoning, content, calls).

    Returns None when the peer is not installed."""
    if not os.path.exists(SMG_PYTHON):
        print("SMG peer not installed (see the docstring); skipping the peer replay")
        return None
    d = model_dir()
    proc = subprocess.Popen([SMG_PYTHON, "-c", "from smg.cli import main; main()", "launch",
                             "--host", "127.0.0.1", "--port", str(SMG_PORT), "--model-path", d,
                             "--prometheus-host", "127.0.0.1", "--prometheus-port", str(SMG_PORT + 1)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(f"http://127.0.0.1:{SMG_PORT}")
        client = Client(SMG_PORT)
        tools = TOOLS

        def chunk(i):
            text = client.post("/v1/detokenize", {"model": d, "tokens": ids[:i]})["text"]
            r = client.post("/parse/reasoning", {"text": text, "reasoning_parser": "qwen3"})
            t = client.post("/parse/function_call", {"text": r["normal_text"], "tool_call_parser": "qwen",
                                                     "tools": tools})
            return r["reasoning_text"], t["remaining_text"], t["tool_calls"]

        for _ in range(300):  # the tokenizer registers in the background after /health is up
            try:
                chunk(1)
                break
            except RuntimeError:
                time.sleep(0.1)
        for i in range(1, 50):
            chunk(i)  # warm-up
        t0 = proc_cpu(proc.pid)
        for i in range(1, len(ids) + 1):
            last = chunk(i)
        return proc_cpu(proc.pid) - t0, last
    finally:
        proc.terminate()
        proc.wait()


def main():
    binary = LLM_RENDER_BIN
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
        ours = runs4[0][2]
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
        print(f"replay through llm-render's own one-shot derender, 4000 tokens: {rep*1e3:.1f} ms "
              f"-> replay/stateful {rep/sum(per4):.1f}x (a best-case replay: linear parsers, one request a chunk)")
    finally:
        server.terminate()
        server.wait()
    print(f"llm-render streamed: {len(ours['reasoning'])} chars of reasoning, content {ours['content']!r}, "
          f"calls {[c['name'] for c in ours['calls']]}")
    if "--no-peers" in sys.argv:
        return
    peer = vllm_stream(ids4)
    if peer is not None:
        vper, vbig, theirs = peer
        vfirst, vlate = sum(vper[:1000]), sum(vper[3000:4000])
        print(f"vLLM 0.33 stateless derender (replays every earlier chunk through its parsers), 4000 tokens: "
              f"{sum(vper)*1e3:.0f} ms; chunks 1-1000 {vfirst*1e3:.0f} ms, 3001-4000 {vlate*1e3:.0f} ms; "
              f"largest state {vbig} bytes")
        print(f"  -> replay ratio (vLLM / llm-render stateful) at 4000 tokens: {sum(vper)/sum(per4):.0f}x "
              f"(expect >= 50x)")
        print(f"  same streamed message as llm-render: {theirs == ours}")
    peer = smg_replay(ids4)
    if peer is not None:
        cpu, (reasoning, content, calls) = peer
        ok = len(calls) == 1 and calls[0]["function"]["name"] == "write_file"
        print(f"replay through SMG 1.13.0 (detokenize + parse/reasoning + parse/function_call per chunk), "
              f"4000 tokens: {cpu*1e3:.1f} ms -> SMG replay / llm-render stateful {cpu/sum(per4):.1f}x; "
              f"SMG parsed the call: {ok}")


if __name__ == "__main__":
    main()
