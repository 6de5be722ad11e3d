#!/usr/bin/env python3
"""Soak: one `llm-render serve` at saturation under a mixed load, for a set duration.

    apt-get install -y wrk                 # Debian bookworm: wrk 4.1 (LuaJIT scripts)
    cargo build --release
    python3 scripts/soak.py --bin target/release/llm-render --duration 30     # CI
    python3 scripts/soak.py --bin target/release/llm-render --duration 600    # the 10-minute soak
    python3 scripts/soak.py ... --vl-model fixtures/models/qwen2_5_vl          # adds image renders

Starts the server (embedded qwen3 model; with `--vl-model PATH` also that Qwen2.5-VL folder as
`vl`, and qwen3 from fixtures/models/qwen3) and drives it, all at once and closed-loop (each
connection sends its next request when the last is answered), with:

  chat_short      wrk, short chat renders (1-3 messages, some with tools or thinking off)
  chat_10k        wrk, a 10,000-token chat render
  chat_multiturn  wrk, 12-turn conversations, each turn re-sending the growing history
                  (reasoning, a tool call and its result in it)
  completions     wrk, completions renders (text, token IDs, lists of prompts)
  images          wrk, chat renders with one or two PNG images (only with --vl-model)
  derender        Python threads, streamed chat/completions derenders: chunk chains of 1-16
                  IDs with the signed state carried, each stream's fold checked against the
                  one-shot answer (2,000-token reasoning + tool-call outputs among them)

wrk bodies carry a nonce per request (per conversation for the multi-turn ones), so every
prompt is new to the prompt cache while its words are not new to the tokenizer's segment
cache, as in real traffic. Every second it samples the server's VmRSS (/proc/PID/status) and
the CPU time of the server, the load generators and the whole machine.

Pass: no response other than 200 and 503 (shedding) and no socket error, on every kind;
every derender stream equal to its one-shot answer; the server's own counters show no 5xx
but 503; resident memory after the warm-up (the first 20% of the run) within +-10% of its
median; SIGTERM at the end exits 0. Prints per kind requests, throughput and p50/p99/max
latency; `--json PATH` writes everything, RSS samples included. Exits non-zero on a failure.
"""

import argparse
import base64
import json
import os
import random
import re
import signal
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from multi_replica import (TOOLS, Http, Server, build_specs, fold_chunk,  # noqa: E402
                           finalize, metric, one_shot_fold, diff)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LUA = os.path.join(ROOT, "scripts", "soak", "rotate.lua")
CLK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------------------------------
# Request bodies


class Corpus:
    """Windows of the project's own docs: varied English, code and punctuation (the
    tokenizer sees realistic text, not a small vocabulary)."""

    def __init__(self):
        words = []
        for name in ["README.md"] + sorted(os.listdir(os.path.join(ROOT, "docs"))):
            path = os.path.join(ROOT, name) if name == "README.md" else os.path.join(ROOT, "docs", name)
            if path.endswith(".md"):
                with open(path, encoding="utf-8") as f:
                    words += f.read().split()
        self.words = words

    def __call__(self, rng, n):
        start = rng.randrange(len(self.words))
        return " ".join(self.words[(start + i) % len(self.words)] for i in range(n))


prose = None  # set in main: Corpus()


def chat_short_bodies(rng):
    out = []
    for i in range(60):
        msgs = [{"role": "user", "content": "__NONCE__ " + prose(rng, rng.randint(5, 150))}]
        if i % 3 == 0:
            msgs.insert(0, {"role": "system", "content": "You are a helpful assistant. " + prose(rng, 20)})
        if i % 5 == 0:
            msgs += [{"role": "assistant", "content": prose(rng, 30)},
                     {"role": "user", "content": prose(rng, 15)}]
        b = {"model": "qwen3", "messages": msgs, "max_tokens": rng.choice([64, 256, 1024])}
        if i % 4 == 0:
            b["tools"] = TOOLS
        if i % 6 == 0:
            b["chat_template_kwargs"] = {"enable_thinking": False}
        out.append(b)
    return out


def chat_10k_bodies(rng, words=4900):
    return [{"model": "qwen3", "max_tokens": 512, "messages": [
        {"role": "system", "content": "Summarize the document."},
        {"role": "user", "content": "__NONCE__ " + prose(rng, words)}]} for _ in range(4)]


def multiturn_bodies(rng, turns=12):
    """Turn k re-sends turns 1..k-1 (user and assistant, one assistant turn with reasoning,
    one with a tool call and its result) and a new user message."""
    history = [{"role": "system", "content": "__NONCE__ You are a travel agent. " + prose(rng, 40)}]
    out = []
    for k in range(turns):
        history.append({"role": "user", "content": prose(rng, rng.randint(10, 80))})
        out.append({"model": "qwen3", "messages": list(history), "tools": TOOLS, "max_tokens": 1024})
        if k % 4 == 1:
            history.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": f"call_{k}", "type": "function", "function": {
                    "name": "get_weather", "arguments": json.dumps({"city": "Zürich", "unit": "celsius"})}}]})
            history.append({"role": "tool", "tool_call_id": f"call_{k}", "content": json.dumps(
                {"temp": 21, "sky": "clear", "note": prose(rng, 12)}, ensure_ascii=False)})
        else:
            a = {"role": "assistant", "content": prose(rng, rng.randint(30, 200))}
            if k % 3 == 0:
                a["reasoning_content"] = prose(rng, 60)
            history.append(a)
    return out


def completions_bodies(rng, ids):
    out = []
    for i in range(40):
        if i % 4 == 3:
            start = rng.randrange(0, len(ids) - 600)
            prompt = ids[start:start + rng.randint(20, 600)]
        elif i % 4 == 2:
            prompt = ["__NONCE__ " + prose(rng, rng.randint(5, 80)) for _ in range(rng.randint(2, 3))]
        else:
            prompt = "__NONCE__ " + prose(rng, rng.randint(5, 1500))
        out.append({"model": "qwen3", "prompt": prompt, "max_tokens": rng.choice([16, 128, 512])})
    return out


def png(w, h, seed):
    """An RGB PNG (gradients and a checker), stdlib only."""
    rows = []
    for y in range(h):
        row = bytearray(1 + 3 * w)
        for x in range(w):
            row[1 + 3 * x] = (x * 255 // w + seed * 37) & 255
            row[2 + 3 * x] = (y * 255 // h) & 255
            row[3 + 3 * x] = 255 if ((x >> 4) ^ (y >> 4) ^ seed) & 1 else 0
        rows.append(bytes(row))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"".join(rows), 6)) + chunk(b"IEND", b""))


def image_bodies(rng):
    sizes = [(224, 224), (448, 336), (640, 480), (800, 600), (1024, 768), (320, 1280)]
    urls = ["data:image/png;base64," + base64.b64encode(png(w, h, i)).decode()
            for i, (w, h) in enumerate(sizes)]
    out = []
    for i in range(len(sizes)):
        parts = [{"type": "text", "text": "__NONCE__ " + prose(rng, 20)},
                 {"type": "image_url", "image_url": {"url": urls[i]}}]
        if i % 3 == 2:
            parts.append({"type": "image_url", "image_url": {"url": urls[(i + 1) % len(urls)]}})
        b = {"model": "vl", "messages": [{"role": "user", "content": parts}], "max_tokens": 256}
        if i % 2:
            b["mm_payload"] = "none"  # hash-only, as a router asks
        out.append(b)
    return out


# ---------------------------------------------------------------------------------------
# Sampling


def proc_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError):
        return None


def vm_rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def machine_ticks():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v[:8]) - idle


class Sampler(threading.Thread):
    """Every second: the server's VmRSS and CPU ticks, the load generators' and the machine's;
    every fifth, the bytes its bounded caches hold (from /metrics)."""

    def __init__(self, server_pid, port, others):
        super().__init__(daemon=True)
        self.server_pid, self.port, self.others = server_pid, port, others  # others: () -> {name: [pids]}
        self.http = Http(port, timeout=10)
        self.cache_mb = None
        self.samples = []
        self.stop = threading.Event()
        self.last = {}  # pid -> CPU ticks when last seen (a process that exited keeps its own)

    def snap(self):
        t = os.times()
        groups = {"server": [self.server_pid], **self.others()}
        for pids in groups.values():
            for p in pids:
                v = proc_ticks(p)
                if v is not None:
                    self.last[p] = v
        ticks = {g: sum(self.last.get(p, 0) for p in pids) for g, pids in groups.items()}
        ticks["python"] = (t.user + t.system) * CLK
        if len(self.samples) % 5 == 0:
            try:
                text = self.http.request("GET", "/metrics")[2].decode()
                self.cache_mb = sum(metric(text, f"llm_render_{k}_cache_size", kind="bytes")
                                    for k in ("segment", "prompt")) / 2 ** 20
            except OSError:
                pass
        return {"t": time.time(), "rss_kb": vm_rss_kb(self.server_pid), "ticks": ticks,
                "machine": machine_ticks(), "cache_mb": self.cache_mb}

    def run(self):
        while not self.stop.is_set():
            self.samples.append(self.snap())
            self.stop.wait(1.0)
        self.samples.append(self.snap())


def cpu_split(a, b, groups):
    dt = b["t"] - a["t"]
    out = {g: (b["ticks"].get(g, 0) - a["ticks"].get(g, 0)) / CLK / dt for g in groups}
    out["machine"] = (b["machine"] - a["machine"]) / CLK / dt
    out["others"] = out["machine"] - sum(out[g] for g in groups)
    return out


# ---------------------------------------------------------------------------------------
# Derender chains


CALL_ID = re.compile(r"^call_[0-9a-f]{24}$")


def normalize_ids(folded):
    """Call ids derive from the request id (unique per stream here): checked for shape, then
    blanked for the comparison with the one-shot answer."""
    for c in folded.values():
        for call in c["calls"]:
            call["id"] = "call_<24 hex>" if CALL_ID.match(call["id"] or "") else call["id"]
    return folded


class DerenderLoad:
    def __init__(self, port, specs, expected, clients, max_chunk=16):
        self.port, self.specs, self.expected = port, specs, expected
        self.clients, self.max_chunk = clients, max_chunk
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.lat = []
        self.statuses, self.errors, self.mismatches = {}, [], []
        self.streams, self.tokens, self.shed_retries = 0, 0, 0
        self.threads = []

    def start(self):
        for i in range(self.clients):
            t = threading.Thread(target=self.run, args=(i,), daemon=True)
            t.start()
            self.threads.append(t)

    def join(self):
        self.stop.set()
        for t in self.threads:
            t.join(60)

    def run(self, seed):
        rng = random.Random(seed)
        http = Http(self.port, timeout=60)
        names = ["long_tools"] * 3 + ["stop_string", "two_choices", "completions"]
        n = 0
        while not self.stop.is_set():
            spec = self.specs[rng.choice(names)]
            n += 1
            acc, state, finished, lat = {}, None, set(), []
            done = True
            for step in spec.plan(rng, self.max_chunk):
                step = [c for c in step if c["index"] not in finished]
                if not step:
                    continue
                if self.stop.is_set():
                    done = False
                    break
                body = json.dumps({"stream": True, "model": "qwen3", "stream_state": state,
                                   "generate_chunk": {"request_id": f"soak-{seed}-{n}", "choices": step},
                                   "prompt_token_ids": spec.prompt_ids, spec.key: spec.original}).encode()
                while True:
                    t0 = time.perf_counter()
                    try:
                        status, _, out = http.json("POST", spec.route, body)
                    except OSError as e:
                        status, out = "socket", repr(e)
                    lat.append(time.perf_counter() - t0)
                    with self.lock:
                        self.statuses[status] = self.statuses.get(status, 0) + 1
                    if status == 503 and not self.stop.is_set():
                        with self.lock:
                            self.shed_retries += 1
                        time.sleep(0.05)  # shed: the same chunk again (the state makes it idempotent)
                        continue
                    break
                if status != 200:
                    with self.lock:
                        if status != 503:
                            self.errors.append(f"{spec.name}: {status} {str(out)[:200]}")
                    done = False
                    break
                fold_chunk(acc, out["chunk"], spec.completions)
                state = out["stream_state"]
                for c in out["chunk"]["choices"]:
                    if c.get("finish_reason"):
                        finished.add(c["index"])
            with self.lock:
                self.lat += lat
                if done:
                    self.streams += 1
                    self.tokens += spec.tokens()
                    d = diff(normalize_ids(finalize(acc)), self.expected[spec.name])
                    if d:
                        self.mismatches.append(f"{spec.name}: {d}")


# ---------------------------------------------------------------------------------------


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def write_jsonl(path, bodies):
    with open(path, "w") as f:
        for b in bodies:
            f.write(json.dumps(b, ensure_ascii=False) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/llm-render"))
    ap.add_argument("--duration", type=int, default=30, help="seconds of load (600: the 10-minute soak)")
    ap.add_argument("--vl-model", help="a Qwen2.5-VL snapshot folder: adds image renders")
    ap.add_argument("--workers", type=int, default=0, help="server --workers (default: its own, the cores)")
    ap.add_argument("--conns", default="chat_short=4,chat_10k=1,chat_multiturn=2,completions=2,images=1",
                    help="wrk connections per kind")
    ap.add_argument("--derender-clients", type=int, default=2, help="derender chain threads")
    ap.add_argument("--warmup", type=float, default=0.2, help="share of the run before RSS is judged")
    ap.add_argument("--rss-band", type=float, default=0.10, help="allowed RSS deviation from its median")
    ap.add_argument("--caches", default="auto",
                    help="SEGMENT_MB,PROMPT_MB,DERENDER_STATES for the server's bounded caches, or "
                         "`default` (256,64,16384), or `auto`: the defaults for runs of 300 s or more, "
                         "32,16,2048 for shorter ones, so that the caches fill inside the warm-up")
    ap.add_argument("--server-arg", action="append", default=[], help="extra serve flag (repeatable)")
    ap.add_argument("--json", help="write the results (RSS samples included) here")
    args = ap.parse_args()
    for tool in ("wrk",):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found (apt-get install -y {tool})")
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"no executable at {args.bin} (cargo build --release, or --bin PATH)")
    conns = {k: int(v) for k, v in (kv.split("=") for kv in args.conns.split(","))}

    workdir = tempfile.mkdtemp(prefix="llm-render-soak-")
    extra = list(args.server_arg)
    caches = args.caches
    if caches == "auto":
        caches = "default" if args.duration >= 300 else "32,16,2048"
    if caches != "default":
        seg, prompt, states = caches.split(",")
        extra += ["--segment-cache-mb", seg, "--prompt-cache-mb", prompt, "--derender-state-cache", states]
    if args.workers:
        extra += ["--workers", str(args.workers)]
    if args.vl_model:
        extra += ["--model", "qwen3=" + os.path.join(ROOT, "fixtures/models/qwen3"),
                  "--model", "vl=" + os.path.abspath(args.vl_model)]
    server = Server(args.bin, "soak", workdir, extra).start()
    wrks, failures, results = {}, [], {}
    sampler = None
    try:
        server.wait_ready()
        port = server.port
        http = Http(port)
        global prose
        prose = Corpus()
        rng = random.Random(42)

        # Bodies, and the derender streams with their one-shot answers.
        specs = build_specs(http, rng)
        expected = {}
        for name, spec in specs.items():
            status, _, body = http.json("POST", spec.route, spec.one_shot())
            if status != 200:
                raise RuntimeError(f"one-shot {name}: {status} {body}")
            expected[name] = normalize_ids(one_shot_fold(body, spec.completions))
        kinds = {
            "chat_short": ("/v1/chat/completions/render", chat_short_bodies(rng), 0),
            "chat_10k": ("/v1/chat/completions/render", chat_10k_bodies(rng), 0),
            "chat_multiturn": ("/v1/chat/completions/render", multiturn_bodies(rng), 1),
            "completions": ("/v1/completions/render", completions_bodies(rng, specs["long_tools"].choices[0]), 0),
        }
        if args.vl_model:
            kinds["images"] = ("/v1/chat/completions/render", image_bodies(rng), 0)
        sizes = {}
        for kind, (route, bodies, _) in kinds.items():
            write_jsonl(os.path.join(workdir, f"{kind}.jsonl"), bodies)
            probe = json.loads(json.dumps(bodies[-1]).replace("__NONCE__", "probe"))
            status, _, out = http.json("POST", route, probe)
            if status != 200:
                raise RuntimeError(f"{kind} probe: {status} {str(out)[:300]}")
            sizes[kind] = len(out[0]["token_ids"] if isinstance(out, list) else out["token_ids"])
        http.close()
        print(f"server :{port} pid {server.proc.pid}, caches {caches}; prompt tokens of a sample request per kind: {sizes}; "
              f"derender streams: { {n: s.tokens() for n, s in specs.items()} } output tokens", flush=True)
        metrics_before = server.metrics()

        # Load.
        t_start = time.time()
        for kind, (route, bodies, cycle) in kinds.items():
            c = conns.get(kind, 1)
            if c <= 0:
                continue
            cmd = ["wrk", "-t1", f"-c{c}", f"-d{args.duration}s", "--timeout", "30s", "-s", LUA,
                   f"http://127.0.0.1:{port}", "--", route, os.path.join(workdir, f"{kind}.jsonl")]
            if cycle:
                cmd.append(str(len(bodies)))
            wrks[kind] = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        der = DerenderLoad(port, specs, expected, args.derender_clients)
        der.start()
        sampler = Sampler(server.proc.pid, port, lambda: {"wrk": [p.pid for p in wrks.values()]})
        sampler.start()
        last_report = t_start
        while time.time() - t_start < args.duration:
            time.sleep(1)
            if not server.alive():
                failures.append(f"server exited {server.proc.returncode} during the run")
                break
            if time.time() - last_report >= max(10, args.duration / 10):
                last_report = time.time()
                s = sampler.samples[-1]
                print(f"  t={time.time() - t_start:5.0f}s  RSS {s['rss_kb'] / 1024:7.1f} MB  "
                      f"derender streams {der.streams}", flush=True)
        der.join()
        for kind, p in wrks.items():
            out, _ = p.communicate(timeout=60)
            line = next((l for l in out.splitlines() if l.startswith("SOAKJSON ")), None)
            if p.returncode != 0 or line is None:
                failures.append(f"wrk {kind} exited {p.returncode}: {out[-500:]}")
                continue
            results[kind] = json.loads(line[len("SOAKJSON "):])
        sampler.stop.set()
        sampler.join()
        metrics_after = server.metrics() if server.alive() else ""
        elapsed = time.time() - t_start

        # Per kind.
        print(f"\n{'kind':16} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}  statuses / errors")
        for kind, r in results.items():
            secs = r["duration_us"] / 1e6
            errs = {k: v for k, v in r["errors"].items() if v and k != "status"}
            bad = {k: v for k, v in r["statuses"].items() if k not in ("200", "503")}
            print(f"{kind:16} {r['requests']:9d} {r['requests'] / secs:8.1f} {r['latency_us']['p50'] / 1e3:8.2f} "
                  f"{r['latency_us']['p99'] / 1e3:8.2f} {r['latency_us']['max'] / 1e3:8.2f}  {r['statuses']} {errs or ''}")
            if errs or bad:
                failures.append(f"{kind}: statuses {r['statuses']}, socket errors {errs}")
        n = len(der.lat)
        print(f"{'derender chunk':16} {n:9d} {n / elapsed:8.1f} {pct(der.lat, 50) * 1e3:8.2f} "
              f"{pct(der.lat, 99) * 1e3:8.2f} {max(der.lat or [0]) * 1e3:8.2f}  {der.statuses}; "
              f"{der.streams} streams ({der.streams / elapsed:.1f}/s, {der.tokens / elapsed:.0f} tokens/s), "
              f"{len(der.mismatches)} not equal to the one-shot answer")
        results["derender"] = {"requests": n, "rps": n / elapsed, "p50_ms": pct(der.lat, 50) * 1e3,
                               "p99_ms": pct(der.lat, 99) * 1e3, "max_ms": max(der.lat or [0]) * 1e3,
                               "statuses": {str(k): v for k, v in der.statuses.items()},
                               "streams": der.streams, "tokens": der.tokens, "shed_retries": der.shed_retries,
                               "errors": der.errors[:20], "mismatches": der.mismatches[:20]}
        if der.errors:
            failures.append(f"derender: {len(der.errors)} errors, first {der.errors[:3]}")
        if der.mismatches:
            failures.append(f"derender: {len(der.mismatches)} streams differ from the one-shot answer: {der.mismatches[:3]}")
        if der.streams == 0:
            failures.append("derender: no stream completed")

        # The server's own counters: every status it answered during the run.
        by_status = {}
        for line in metrics_after.splitlines():
            if line.startswith("llm_render_requests_total{"):
                st = line.split('status="')[1].split('"')[0]
                route = line.split('route="')[1].split('"')[0]
                v = metric(metrics_after, "llm_render_requests_total", route=route, status=st) - \
                    metric(metrics_before, "llm_render_requests_total", route=route, status=st)
                if v:
                    by_status[st] = by_status.get(st, 0) + int(v)
        print(f"\nserver counters during the run, by status: {dict(sorted(by_status.items()))} "
              f"(499: a client gone before its answer, wrk's open requests at its end)")
        bad = {s: v for s, v in by_status.items() if s.startswith("5") and s != "503" or s.startswith("4") and s != "499"}
        if bad:
            failures.append(f"server answered {bad}")

        # Memory.
        samples = [s for s in sampler.samples if s["rss_kb"]]
        t0 = samples[0]["t"]
        warm = t0 + args.warmup * (samples[-1]["t"] - t0)
        post = [s["rss_kb"] / 1024 for s in samples if s["t"] >= warm]
        med = statistics.median(post)
        lo, hi = min(post), max(post)
        ts = [s["t"] - t0 for s in samples if s["t"] >= warm]
        slope = 0.0
        if len(post) > 2:
            mt, mr = statistics.mean(ts), statistics.mean(post)
            den = sum((t - mt) ** 2 for t in ts)
            slope = sum((t - mt) * (r - mr) for t, r in zip(ts, post)) / den * 60 if den else 0.0
        flat = lo >= (1 - args.rss_band) * med and hi <= (1 + args.rss_band) * med
        # The same without the bounded caches' bytes (they fill up to their budgets by design):
        # what a leak would show in.
        judged = [s for s in samples if s["t"] >= warm and s["cache_mb"] is not None]
        rest = [s["rss_kb"] / 1024 - s["cache_mb"] for s in judged]
        rest_line = (f"RSS less the segment and prompt caches' bytes after the warm-up: {rest[0]:.0f} MB "
                     f"-> {rest[-1]:.0f} MB (min {min(rest):.0f}, max {max(rest):.0f}); the caches "
                     f"{judged[0]['cache_mb']:.0f} MB -> {judged[-1]['cache_mb']:.0f} MB") if rest else ""
        cache = {k: metric(metrics_after, f"llm_render_{k}_cache_size", kind="bytes") / 2 ** 20
                 for k in ("segment", "prompt")}
        print(f"RSS: {samples[0]['rss_kb'] / 1024:.0f} MB at the start, "
              f"{post[0]:.0f} MB after the warm-up (first {args.warmup:.0%}, {warm - t0:.0f} s); then median "
              f"{med:.0f}, min {lo:.0f} ({(lo / med - 1) * 100:+.1f}%), max {hi:.0f} ({(hi / med - 1) * 100:+.1f}%), "
              f"end {post[-1]:.0f}, trend {slope:+.1f} MB/min over {len(post)} samples; "
              f"caches at the end: segment {cache['segment']:.0f} MB, prompt {cache['prompt']:.0f} MB "
              f"-> {'flat' if flat else 'NOT flat'} within +-{args.rss_band:.0%}")
        if rest_line:
            print(rest_line)
        if not flat:
            failures.append(f"RSS not within +-{args.rss_band:.0%} of its median {med:.0f} MB after the warm-up: "
                            f"min {lo:.0f}, max {hi:.0f}")

        # CPU split.
        groups = ["server", "wrk", "python"]
        split = cpu_split(samples[0], samples[-1], groups)
        print(f"CPU (cores, mean over the run; machine has {os.cpu_count()}): server {split['server']:.2f}, "
              f"wrk {split['wrk']:.2f}, Python derender client + sampler {split['python']:.2f}, "
              f"other processes {max(split['others'], 0):.2f}, machine busy {split['machine']:.2f}")
        results.update(rss={"samples_mb": [[round(s["t"] - t0, 1), round(s["rss_kb"] / 1024, 1),
                                             None if s["cache_mb"] is None else round(s["cache_mb"], 1)]
                                            for s in samples],
                            "without_caches_mb": [min(rest), max(rest)] if rest else None,
                            "warmup_s": warm - t0, "median_mb": med, "min_mb": lo, "max_mb": hi,
                            "slope_mb_per_min": slope, "flat": flat, "cache_mb": cache},
                       cpu=split, prompt_tokens=sizes, server_statuses=by_status, duration_s=elapsed)
    except Exception as e:
        import traceback
        traceback.print_exc()
        failures.append(f"setup: {e!r}")
    finally:
        for p in wrks.values():
            if p.poll() is None:
                p.kill()
        code = None
        if server.alive():
            server.signal(signal.SIGTERM)
            code = server.wait_exit(30)
            if code != 0:
                failures.append(f"server exit status after SIGTERM: {code}")
            server.stop()
        with open(server.log_path, errors="replace") as f:
            log_text = f.read()
        panics = [l for l in log_text.splitlines() if "panicked" in l or " ERROR " in l]
        if panics:
            failures.append(f"server log: {len(panics)} ERROR/panic lines, first {panics[:3]}")
    results["failures"] = failures
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print()
    for f in failures:
        print(f"FAIL  {f}")
    print(f"{'PASS' if not failures else 'FAIL'}: soak of {args.duration}s"
          + (f"; server log kept in {server.log_path}" if failures else ""))
    if not failures:
        shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
