#!/usr/bin/env python3
"""Capacity figures for docs/capacity.md: what one core of llm-render serves, per workload.

    apt-get install -y wrk
    cargo build --release
    python3 scripts/capacity.py                       # every workload, ~4 minutes
    python3 scripts/capacity.py --only chat_short,derender_4000 --duration 20

One `llm-render serve --workers 1` pinned to core 0 (`taskset`), with the default caches and
limits, serves the embedded Qwen3 model as `qwen3` and the Qwen2.5-VL fixture as `vl`; the
load runs on the other cores. Per workload it reports

  cpu_ms     the server's CPU time (user + system, /proc/PID/stat) per request: the sizing
             figure, robust to what else the machine runs;
  per_core   1000 / cpu_ms, the requests one fully used core serves;
  rps        requests/s measured at saturation (closed loop, `--conns` connections), with
  busy       the server's CPU use in that time (1.00 = its core saturated; lower means the
             client was the limit, and `per_core` is the figure to use);
  p50, p99   latency at that load;
  tokens     the prompt's tokens (turns: the last turn's); response_kb in the JSON.

Workloads (bodies carry a nonce per request, so each prompt is new to the prompt cache while
its words are not new to the tokenizer's segment cache, as in real traffic):

  chat_short     a system prompt and a user message of ~50 words, with tools (~350 tokens)
  chat_10k       one ~10,000-token user message
  turn_N_cold    turn N (`--turns`, 20) of a chat with tools, reasoning and tool results in its
                 history, its prefix new to this replica (the previous turn went elsewhere)
  turns_cold     every turn 1..N of such chats, each with its prefix new to this replica
                 (round-robin over many replicas); per turn
  turns_sticky   the same turns in order on one replica (sticky sessions: the prompt cache
                 copies the history's IDs from the turn before); per turn, with the prompt
                 cache's hit rate
  images_4       four images (1080p, 800x600 and 640x360 JPEGs, a 1024x768 PNG) with the
                 default output (uint8 `kwargs_data`, placeholders, hashes)
  images_4_hash  the same with `mm_payload: "none"` (hashes and placeholders, as a router asks)
  derender_4000  a streamed 4,000-token chat derender (reasoning, content, a tool call),
                 chunk by chunk with the signed state, one token per chunk (`_1`) or 16
                 (`_16`); cpu_ms is per stream; each stream's fold is checked against the
                 one-shot answer

Prints a Markdown table; `--json PATH` writes the figures.
"""

import argparse
import base64
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from multi_replica import (CHAT, TOOLS, Http, Server, Spec, diff, metric,  # noqa: E402
                           one_shot_fold, render_ids, run_stream, tokenize)
import soak  # noqa: E402
from soak import LUA, Corpus, multiturn_bodies, png, proc_ticks, write_jsonl  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK = os.sysconf("SC_CLK_TCK")
RENDER = "/v1/chat/completions/render"


def chat_short(rng, prose):
    return [{"model": "qwen3", "max_tokens": 256, "tools": TOOLS, "messages": [
        {"role": "system", "content": "You are a helpful assistant. " + prose(rng, 15)},
        {"role": "user", "content": "__NONCE__ " + prose(rng, rng.randint(30, 70))}]} for _ in range(50)]


def chat_10k(rng, prose):
    return [{"model": "qwen3", "max_tokens": 512, "messages": [
        {"role": "system", "content": "Summarize the document."},
        {"role": "user", "content": "__NONCE__ " + prose(rng, 4900)}]} for _ in range(4)]


def turn_n(rng, turns):
    return [multiturn_bodies(rng, turns)[-1] for _ in range(8)]


def images(rng, prose, hash_only):
    files = ["photo_1080p.jpg", "progressive_800x600.jpg", "exif_orient6_640x360.jpg"]
    urls = []
    for name in files:
        with open(os.path.join(ROOT, "fixtures/goldens/images", name), "rb") as f:
            urls.append("data:image/jpeg;base64," + base64.b64encode(f.read()).decode())
    urls.append("data:image/png;base64," + base64.b64encode(png(1024, 768, 3)).decode())
    parts = [{"type": "text", "text": "__NONCE__ " + prose(rng, 20)}]
    parts += [{"type": "image_url", "image_url": {"url": u}} for u in urls]
    body = {"model": "vl", "max_tokens": 256, "messages": [{"role": "user", "content": parts}]}
    if hash_only:
        body["mm_payload"] = "none"
    return [body]


def cpu_s(pid):
    """The server's CPU time so far: (its live threads' on-CPU seconds from
    /proc/PID/task/*/schedstat, exact; the process's from /proc/PID/stat, in 10 ms ticks but
    keeping the time of threads that exited)."""
    ns = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return ns / 1e9, proc_ticks(pid) / CLK


def cpu_used(a, b):
    """Seconds between two `cpu_s` readings: the exact figure, unless the ticks saw more
    (a blocking-pool thread ended in between and took its time with it)."""
    exact, ticks = b[0] - a[0], b[1] - a[1]
    return ticks if ticks > exact + 2 / CLK else exact


def run_wrk(port, workdir, name, bodies, pid, duration, conns, client_cpus, cycle=False):
    """wrk at `conns` connections over `bodies` (a nonce per request; with `cycle`, one nonce
    per pass over them: the turns of one conversation)."""
    path = os.path.join(workdir, f"{name}.jsonl")
    write_jsonl(path, bodies)
    base = ["taskset", "-c", client_cpus, "wrk", "-t1", f"-c{conns}", "--timeout", "60s", "-s", LUA,
            f"http://127.0.0.1:{port}"]
    tail = ["--", RENDER, path] + ([str(len(bodies))] if cycle else [])
    subprocess.run(base[:4] + ["-d3s"] + base[4:] + tail, stdout=subprocess.DEVNULL, check=True)  # warm-up
    c0, t0 = cpu_s(pid), time.time()
    out = subprocess.run(base[:4] + [f"-d{duration}s"] + base[4:] + tail, capture_output=True, text=True, check=True)
    c1, t1 = cpu_s(pid), time.time()
    used = cpu_used(c0, c1)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("SOAKJSON ")), None)
    if line is None:
        raise RuntimeError(f"{name}: no SOAKJSON line from wrk: {out.stdout[-500:]}")
    r = json.loads(line[len("SOAKJSON "):])
    ok = r["statuses"].get("200", 0)
    bad = {k: v for k, v in r["statuses"].items() if k != "200"}
    if bad or any(r["errors"].values()) or ok == 0:
        raise RuntimeError(f"{name}: statuses {r['statuses']}, errors {r['errors']}")
    secs = r["duration_us"] / 1e6
    return {"requests": ok, "cpu_ms": used * 1000 / ok, "rps": ok / secs, "busy": used / (t1 - t0),
            "response_kb": r["bytes"] / 1024 / r["requests"],
            "p50_ms": r["latency_us"]["p50"] / 1000, "p99_ms": r["latency_us"]["p99"] / 1000}


def prompt_cache(http):
    """The prompt cache's (hits, misses) so far, from /metrics."""
    text = http.request("GET", "/metrics")[2].decode()
    return tuple(metric(text, "llm_render_prompt_cache_total", kind=k) for k in ("hits", "misses"))


def derender_spec(http, rng, prose):
    chat = {"model": "qwen3", "tools": TOOLS, "messages": [
        {"role": "system", "content": "You are a careful assistant. Use tools when useful."},
        {"role": "user", "content": "Read the notes, think it through, then look up the weather."}]}
    args = {"city": "Zürich", "unit": "celsius"}
    words = 2600
    while True:
        text = ("<think>\n" + prose(rng, words) + "\n</think>\n\n" + prose(rng, words // 3) +
                "\n<tool_call>\n" + json.dumps({"name": "get_weather", "arguments": args}, ensure_ascii=False) +
                "\n</tool_call><|im_end|>")
        ids = tokenize(http, text)
        if len(ids) >= 4000:
            ids = ids[:3960] + tokenize(http, text[text.index("\n</think>"):])[-40:]
            break
        words = int(words * 4100 / len(ids))
    return Spec("derender_4000", CHAT, chat, render_ids(http, RENDER, chat), {0: ids[:4000]}, {0: "stop"})


def derender(port, pid, spec, chunk, streams):
    http = Http(port)
    status, _, body = http.json("POST", spec.route, spec.one_shot())
    if status != 200:
        raise RuntimeError(f"derender one-shot: {status} {body}")
    want = one_shot_fold(body, spec.completions)
    plan = fixed_plan(spec, chunk)
    lat, requests = [], 0
    c0, t0 = cpu_s(pid), time.time()
    for _ in range(streams):
        s = time.perf_counter()
        got, chunks, stats = run_stream(http, spec, plan)
        lat.append(time.perf_counter() - s)
        requests += stats["requests"]
        d = diff(got, want)
        if d:
            raise RuntimeError(f"derender stream differs from the one-shot answer: {d}")
    c1, t1 = cpu_s(pid), time.time()
    used = cpu_used(c0, c1)
    return {"requests": streams, "chunks": requests, "cpu_ms": used * 1000 / streams,
            "cpu_us_per_chunk": used * 1e6 / requests, "rps": streams / (t1 - t0),
            "busy": used / (t1 - t0), "p50_ms": soak.pct(lat, 50) * 1000, "p99_ms": soak.pct(lat, 99) * 1000}


def fixed_plan(spec, n):
    ids = spec.choices[0]
    return [[{"index": 0, "token_ids": ids[i:i + n],
              "finish_reason": spec.finish[0] if i + n >= len(ids) else None}] for i in range(0, len(ids), n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/llm-render"))
    ap.add_argument("--only", help="comma-separated workloads (default: all)")
    ap.add_argument("--duration", type=int, default=20, help="seconds of measured load per wrk workload")
    ap.add_argument("--conns", type=int, default=4, help="wrk connections")
    ap.add_argument("--turns", type=int, default=20, help="N of turn_N")
    ap.add_argument("--streams", type=int, default=12, help="derender streams per chunk size")
    ap.add_argument("--server-cpu", default="0", help="the server's core (taskset)")
    ap.add_argument("--client-cpus", default=None, help="the load's cores (default: the others)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    for tool in ("wrk", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found (apt-get install -y {tool})")
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"no executable at {args.bin} (cargo build --release, or --bin PATH)")
    cores = sorted(os.sched_getaffinity(0))
    client = args.client_cpus or ",".join(str(c) for c in cores if str(c) != args.server_cpu) or args.server_cpu
    names = ["chat_short", "chat_10k", "turn_N_cold", "turns_cold", "turns_sticky", "images_4", "images_4_hash",
             "derender_4000_1", "derender_4000_16"]
    only = args.only.split(",") if args.only else names
    for n in only:
        if not any(n == k or k.startswith(n + "_") for k in names):
            sys.exit(f"unknown workload {n!r}; known: {', '.join(names)}")
    want = [k for k in names if any(k == n or k.startswith(n + "_") for n in only)]

    workdir = tempfile.mkdtemp(prefix="llm-render-capacity-")
    extra = ["--workers", "1", "--model", "qwen3=" + os.path.join(ROOT, "fixtures/models/qwen3"),
             "--model", "vl=" + os.path.join(ROOT, "fixtures/models/qwen2_5_vl")]
    # `taskset -c CPU llm-render serve …`: Server runs `[binary, "serve", …]`, so the binary is
    # wrapped in a one-line script that pins it.
    wrapper = os.path.join(workdir, "pinned")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nexec taskset -c {args.server_cpu} {args.bin} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    server = Server(wrapper, "capacity", workdir, extra).start()
    rows = {}
    try:
        server.wait_ready()
        port, pid = server.port, server.proc.pid
        rng = random.Random(42)
        prose = Corpus()
        http = Http(port)
        print(f"server pid {pid} on core {args.server_cpu} (--workers 1), load on cores {client}; "
              f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load average "
              f"{os.getloadavg()[0]:.2f} at the start", flush=True)
        wrk_kinds = {
            "chat_short": lambda: chat_short(rng, prose),
            "chat_10k": lambda: chat_10k(rng, prose),
            "turn_N_cold": lambda: turn_n(rng, args.turns),
            "turns_cold": lambda: multiturn_bodies(rng, args.turns),
            "turns_sticky": lambda: multiturn_bodies(rng, args.turns),
            "images_4": lambda: images(rng, prose, False),
            "images_4_hash": lambda: images(rng, prose, True),
        }
        soak.prose = prose
        spec = None
        for name in want:
            if name in wrk_kinds:
                bodies = wrk_kinds[name]()
                probe = json.loads(json.dumps(bodies[-1]).replace("__NONCE__", "probe"))
                tokens = len(render_ids(http, RENDER, probe))
                before = prompt_cache(http)
                r = run_wrk(port, workdir, name, bodies, pid, args.duration, args.conns, client,
                            cycle=name == "turns_sticky")
                if name.startswith("turns_"):
                    hits, misses = (a - b for a, b in zip(prompt_cache(http), before))
                    r["prompt_cache_hit_rate"] = hits / max(1, hits + misses)
            else:
                spec = spec or derender_spec(http, rng, prose)
                tokens = len(spec.choices[0])
                r = derender(port, pid, spec, int(name.rsplit("_", 1)[1]), args.streams)
            r["tokens"] = tokens
            rows[name] = r
            hit = f"  prompt cache hits {r['prompt_cache_hit_rate']:.0%}" if "prompt_cache_hit_rate" in r else ""
            print(f"{name:16} {tokens:6} tokens  {r['cpu_ms']:9.2f} ms CPU/request  "
                  f"{1000 / r['cpu_ms']:8.1f}/s per core  measured {r['rps']:8.1f}/s at busy {r['busy']:.2f}  "
                  f"p50 {r['p50_ms']:.1f} ms  p99 {r['p99_ms']:.1f} ms{hit}", flush=True)
        if not server.alive():
            raise RuntimeError(f"server exited {server.proc.returncode}")
    finally:
        server.stop()

    print("\n| workload | tokens | CPU per request | requests/s per core | measured requests/s (server busy) | p50 / p99 |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in rows.items():
        extra = f" ({r['cpu_us_per_chunk']:.0f} µs per chunk)" if "cpu_us_per_chunk" in r else ""
        print(f"| {name} | {r['tokens']:,} | {r['cpu_ms']:.2f} ms{extra} | {1000 / r['cpu_ms']:,.1f} | "
              f"{r['rps']:,.1f} ({r['busy']:.2f}) | {r['p50_ms']:.1f} / {r['p99_ms']:.1f} ms |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "args": vars(args)}, f, indent=1)


if __name__ == "__main__":
    main()
