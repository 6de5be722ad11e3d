#!/usr/bin/env python3
"""The sidecar's front door against vLLM's own, in one run (not in CI).

    ../shared/engines/vllm_cpu.sh serve /tmp/vllm-cpu 18500 --enforce-eager &
    cargo build --release
    python3 scripts/bench_sidecar.py [--engine http://127.0.0.1:18500] [--tokens 32]

1. Real engine: the same streamed chat requests (max_tokens fixed, ignore_eos) through
   llm-render's `/v1/chat/completions` (over the engine's `/inference/v1/generate`) and
   through the engine's own `/v1/chat/completions` (vLLM's Python API server), at
   concurrency 1, 8 and 32. Reports each frontend process's CPU per request and per
   streamed token (llm-render's process vs vLLM's API-server process, from /proc), and the
   client's time to first token and inter-token latency, p50/p99.
2. Fast scripted engine (`--fake`, in this script): one token per event every
   `--fake-gap-ms`; reports llm-render's CPU per streamed token and the latency it adds per
   chunk (inter-chunk time at the client minus the engine's gap, p99).

On the 2-core machine the engine, both frontends and this client share the cores:
compare the two columns of one run, not runs with each other.
"""

import argparse
import asyncio
import http.client
import json
import os
import socket
import statistics
import subprocess
import threading
import time
import urllib.request

ROOT = __file__.rsplit("/scripts/", 1)[0]
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def find_pid(needle):
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if needle in cmd:
            return int(p)
    raise SystemExit(f"no process with `{needle}` in its command line")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def one_stream(host, port, model, tokens, out):
    body = json.dumps({"model": model, "stream": True, "max_tokens": tokens,
                       "ignore_eos": True,
                       "messages": [{"role": "user", "content": "Tell me a story."}]})
    conn = http.client.HTTPConnection(host, port, timeout=300)
    t0 = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", body, {"content-type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200, resp.read()
    times, buf = [], b""
    while True:
        data = resp.read1(65536)
        if not data:
            break
        buf += data
        while b"\n\n" in buf:
            event, buf = buf.split(b"\n\n", 1)
            if event.startswith(b"data: {") and b'"content":"' in event:
                times.append(time.perf_counter())
    conn.close()
    out.append((t0, times))


def run_load(host, port, model, tokens, concurrency, requests):
    out, threads = [], []
    sem = threading.Semaphore(concurrency)

    def worker():
        with sem:
            one_stream(host, port, model, tokens, out)

    for _ in range(requests):
        t = threading.Thread(target=worker)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    ttft = [times[0] - t0 for t0, times in out if times]
    itl = [b - a for _, times in out for a, b in zip(times, times[1:])]
    chunks = sum(len(times) for _, times in out)
    return ttft, itl, chunks


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def measure(label, pid, host, port, model, tokens, concurrency, requests):
    c0 = cpu_seconds(pid)
    ttft, itl, chunks = run_load(host, port, model, tokens, concurrency, requests)
    cpu = cpu_seconds(pid) - c0
    return {"label": label, "cpu_ms_per_req": 1000 * cpu / requests,
            "cpu_us_per_token": 1e6 * cpu / max(chunks, 1),
            "ttft_p50_ms": 1000 * pct(ttft, 50), "ttft_p99_ms": 1000 * pct(ttft, 99),
            "itl_p50_ms": 1000 * pct(itl, 50), "itl_p99_ms": 1000 * pct(itl, 99),
            "chunks": chunks}


def start_llm_render(engine_url, extra=()):
    port = free_port()
    proc = subprocess.Popen([f"{ROOT}/target/release/llm-render", "serve", "--port", str(port),
                             "--engine", engine_url, "--engine-model", "tiny-qwen3",
                             "--reasoning-parser", "none", *extra],
                            stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health")
            return proc, port
        except Exception:
            time.sleep(0.05)
    raise SystemExit("llm-render did not start")


# A fast scripted vLLM engine: one token per event, `gap` seconds apart.
async def fake_engine(reader, writer, gap):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        raw = await reader.readexactly(length)
        path = head.split(b" ")[1]
        if path != b"/inference/v1/generate":
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            await writer.drain()
            return
        body = json.loads(raw)
        n = body["sampling_params"]["max_tokens"]
        rid = "generate-tokens-" + body["request_id"]
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                     b"transfer-encoding: chunked\r\n\r\n")
        for i in range(n):
            finish = "length" if i == n - 1 else None
            ev = json.dumps({"request_id": rid, "choices": [{"index": 0, "token_ids": [1234 + i % 500],
                             "finish_reason": finish, "logprobs": None}]})
            data = f"data: {ev}\n\n".encode()
            writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            await writer.drain()
            await asyncio.sleep(gap)
        data = b"data: [DONE]\n\n"
        writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data))
        await writer.drain()
    finally:
        writer.close()


def serve_fake(port, gap):
    async def main():
        server = await asyncio.start_server(lambda r, w: fake_engine(r, w, gap), "127.0.0.1", port)
        async with server:
            await server.serve_forever()
    threading.Thread(target=lambda: asyncio.run(main()), daemon=True).start()


def table(rows):
    keys = ["label", "cpu_ms_per_req", "cpu_us_per_token", "ttft_p50_ms", "ttft_p99_ms",
            "itl_p50_ms", "itl_p99_ms"]
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(r[k] if isinstance(r[k], str) else f"{r[k]:.2f}" for k in keys) + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="http://127.0.0.1:18500")
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--concurrency", default="1,8,32")
    ap.add_argument("--fake", action="store_true", help="only the fast scripted engine")
    ap.add_argument("--fake-gap-ms", type=float, default=5.0)
    args = ap.parse_args()
    rows = []
    if not args.fake:
        host, eport = args.engine.split("//")[1].split(":")
        vllm_pid = find_pid("vllm.entrypoints.launchers.api_server.entry")
        proc, port = start_llm_render(args.engine)
        try:
            for c in map(int, args.concurrency.split(",")):
                n = max(8, 2 * c)
                one_stream("127.0.0.1", port, "qwen3", 4, [])  # warm both
                one_stream(host, int(eport), "tiny-qwen3", 4, [])
                rows.append(measure(f"llm-render c={c}", proc.pid, "127.0.0.1", port, "qwen3",
                                    args.tokens, c, n))
                rows.append(measure(f"vLLM frontend c={c}", vllm_pid, host, int(eport),
                                    "tiny-qwen3", args.tokens, c, n))
                r, v = rows[-2], rows[-1]
                print(f"c={c}: frontend CPU per token, vLLM / llm-render = "
                      f"{v['cpu_us_per_token'] / r['cpu_us_per_token']:.1f}x", flush=True)
        finally:
            proc.terminate()
            proc.wait()
    fport = free_port()
    serve_fake(fport, args.fake_gap_ms / 1000)
    proc, port = start_llm_render(f"http://127.0.0.1:{fport}")
    try:
        for c in map(int, args.concurrency.split(",")):
            r = measure(f"llm-render, fake engine c={c}", proc.pid, "127.0.0.1", port, "qwen3",
                        args.tokens * 4, c, max(8, 2 * c))
            r["added_itl_p99_ms"] = r["itl_p99_ms"] - args.fake_gap_ms
            rows.append(r)
            print(f"fake c={c}: {r['cpu_us_per_token']:.1f} us CPU per streamed token, "
                  f"p99 inter-chunk {r['itl_p99_ms']:.2f} ms for a {args.fake_gap_ms} ms engine gap",
                  flush=True)
    finally:
        proc.terminate()
        proc.wait()
    table(rows)


if __name__ == "__main__":
    main()
