#!/usr/bin/env python3
"""Three replicas behind a real HAProxy: streams hop replicas, a replica dies, one drains.

    apt-get install -y haproxy            # Debian bookworm: HAProxy 2.6
    cargo build --release
    python3 scripts/multi_replica.py --bin target/release/llm-render

Starts three `llm-render serve` (embedded qwen3 model, loopback, ephemeral ports) sharing one
derender state key (`LLM_RENDER_STATE_KEY`), and HAProxy in front of them (config written to
a temp folder): `balance roundrobin`, `option http-server-close` (one server connection per
request, so every request is balanced on its own and consecutive chunks of one stream land
on different replicas), readiness `option httpchk GET /health` every 200 ms, `retries 3`,
`option redispatch 1`, and `retry-on conn-failure empty-response` on the main frontend (a
second frontend keeps HAProxy's default, `retry-on conn-failure`, to show what a client sees
without layer-7 retries). Stdlib only. Sub-tests, each printing PASS/FAIL with its counts:

  1 round-robin: four derender streams (chat with reasoning and two tool calls over 2,000+
    tokens, a stop string, two choices, completions) chunk by chunk through HAProxy fold to
    the one-shot answer of one replica; the long one's chunks equal, one for one, the same
    stream served by one replica; HAProxy's `X-Served-By`, its stats and every replica's
    `/metrics` show the chunks spread over all three.
  2 SIGKILL: (a) a replica killed mid-stream: the stream completes, identical, through the
    others; (b) a request in flight on the killed replica (a slow render): without layer-7
    retries HAProxy answers 502 and the client's retry succeeds; with `retry-on
    empty-response` HAProxy retries it itself; (c) a chunk request sent twice (to one
    replica and to another) gets the same answer: chunk requests are idempotent given the
    state, so a client or LB may retry them.
  3 SIGTERM under load: connection-per-request renders from several threads through HAProxy
    while one replica gets SIGTERM: no failed request at the client and none in HAProxy's
    stats (5xx, connection or response errors, retries), and the replica exits 0. With a
    binary whose `serve --help` has `--drain-delay-secs`, replicas get `--drain-delay-secs 2`
    (readiness 503 at once, keep serving 2 s, then drain).

Exits non-zero when any sub-test fails. About 40-60 s on two cores.
"""

import argparse
import csv
import http.client
import io
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATE_KEY = "multi-replica-test-key"
CHAT = "/v1/chat/completions/derender"
COMPL = "/v1/completions/derender"
RETRYABLE = {502, 503, 504}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------
# HTTP


class Http:
    """One HTTP/1.1 client: keep-alive (reconnects when the server closed) or one
    connection per request (`Connection: close`)."""

    def __init__(self, port, keepalive=True, timeout=60):
        self.port, self.keepalive, self.timeout = port, keepalive, timeout
        self.conn = None

    def request(self, method, path, body=None):
        """(status, headers, bytes); raises OSError / http.client errors on a broken
        connection."""
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        headers = {"content-type": "application/json"} if data is not None else {}
        if not self.keepalive:
            headers["connection"] = "close"
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            self.conn.request(method, path, body=data, headers=headers)
            resp = self.conn.getresponse()
            out = resp.read()
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
            if not self.keepalive or hdrs.get("connection", "").lower() == "close":
                self.close()
            return resp.status, hdrs, out
        except Exception:
            self.close()
            raise

    def json(self, method, path, body=None):
        status, hdrs, out = self.request(method, path, body)
        try:
            return status, hdrs, json.loads(out) if out else None
        except ValueError:
            return status, hdrs, out.decode(errors="replace")

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def get_text(port, path, timeout=10):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode(errors="replace")
    finally:
        c.close()


def metric(text, name, **labels):
    """Sum of a Prometheus counter/gauge over the series whose labels include `labels`."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        m = re.match(r"^([a-zA-Z_:]+)(\{[^}]*\})?\s+(\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
    return total


# ---------------------------------------------------------------------------------------
# Processes


class Server:
    """One `llm-render serve` process, its log in `workdir`."""

    def __init__(self, binary, name, workdir, extra=(), env=None):
        self.binary, self.name, self.workdir = binary, name, workdir
        self.extra, self.env = list(extra), env
        self.port, self.proc, self.starts = 0, None, 0

    @property
    def log_path(self):
        return os.path.join(self.workdir, f"{self.name}.{self.starts}.log")

    def start(self, port=0):
        """Starts on `port` (0: ephemeral; the same port again after a kill)."""
        self.starts += 1
        env = dict(os.environ, NO_COLOR="1", RUST_LOG=os.environ.get("RUST_LOG", "info"))
        env.update(self.env or {})
        with open(self.log_path, "wb") as logf:
            self.proc = subprocess.Popen(
                [self.binary, "serve", "--host", "127.0.0.1", "--port", str(port), *self.extra],
                stdout=subprocess.DEVNULL, stderr=logf, env=env)
        self.port = port
        return self

    def wait_ready(self, timeout=90):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited {self.proc.returncode}: {self.tail()}")
            with open(self.log_path, errors="replace") as f:
                m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
                try:
                    if get_text(self.port, "/health", timeout=5)[0] == 200:
                        return self
                except OSError:
                    pass
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} not ready after {timeout}s: {self.tail()}")

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait_exit(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.alive():
            self.proc.kill()
            self.proc.wait()

    def tail(self, n=15):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def metrics(self):
        return get_text(self.port, "/metrics")[1]


HAPROXY_CFG = """\
global
    maxconn 4096
    # Layer-7 retries keep a copy of the whole request: a derender chunk (state + chat
    # request) fits in 256 KiB.
    tune.bufsize 262144
    log stderr format raw local0 info

defaults
    mode http
    log global
    option httplog
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 10s
    timeout check 2s
    # One server connection per request: each request is balanced on its own.
    option http-server-close
    retries 3
    option redispatch 1

frontend fe
    bind 127.0.0.1:{fe_port}
    default_backend replicas

frontend fe_noretry
    bind 127.0.0.1:{fe_noretry_port}
    default_backend replicas_noretry

backend replicas
    balance roundrobin
    # Render and derender requests are idempotent (a chunk's state travels with it), so a
    # request sent to a replica that died before answering is sent again to another. A
    # layer-7 retry needs the whole request buffered before it is sent (POST bodies).
    retry-on conn-failure empty-response
    option http-buffer-request
    option httpchk GET /health
    http-check expect status 200
    http-response set-header X-Served-By %s
    default-server inter 200ms fastinter 100ms downinter 300ms fall 2 rise 2
{servers}

backend replicas_noretry
    balance roundrobin
    retry-on conn-failure
    option httpchk GET /health
    http-check expect status 200
    http-response set-header X-Served-By %s
    default-server inter 200ms fastinter 100ms downinter 300ms fall 2 rise 2
{servers}

listen stats
    bind 127.0.0.1:{stats_port}
    stats enable
    stats uri /stats
"""


class HAProxy:
    def __init__(self, workdir, replicas):
        self.workdir = workdir
        self.fe_port, self.fe_noretry_port, self.stats_port = free_port(), free_port(), free_port()
        servers = "\n".join(f"    server {r.name} 127.0.0.1:{r.port} check" for r in replicas)
        self.cfg = os.path.join(workdir, "haproxy.cfg")
        with open(self.cfg, "w") as f:
            f.write(HAPROXY_CFG.format(fe_port=self.fe_port, fe_noretry_port=self.fe_noretry_port,
                                       stats_port=self.stats_port, servers=servers))
        self.log_path = os.path.join(workdir, "haproxy.log")
        self.proc = None

    def start(self):
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        check = subprocess.run([haproxy, "-c", "-f", self.cfg], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"haproxy -c: {check.stdout}{check.stderr}")
        with open(self.log_path, "wb") as logf:
            self.proc = subprocess.Popen([haproxy, "-db", "-f", self.cfg],
                                         stdout=logf, stderr=subprocess.STDOUT)
        return self

    def stats(self):
        """{(pxname, svname): row} from the stats CSV."""
        _, text = get_text(self.stats_port, "/stats;csv")
        text = text.lstrip("# ")
        return {(r["pxname"], r["svname"]): r for r in csv.DictReader(io.StringIO(text))}

    def status(self, backend, server):
        return self.stats()[(backend, server)]["status"]

    def wait_status(self, servers, want, timeout=30, backends=("replicas", "replicas_noretry")):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                st = self.stats()
                if all(st[(b, s)]["status"].startswith(want) for b in backends for s in servers):
                    return True
            except (OSError, KeyError):
                pass
            time.sleep(0.05)
        return False

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


COUNTERS = ("stot", "econ", "eresp", "wretr", "wredis", "hrsp_5xx")


def snapshot(hap, backend):
    """The counters of `backend`, its servers and its frontend."""
    st = hap.stats()
    fe = {"replicas": "fe", "replicas_noretry": "fe_noretry"}[backend]
    out = {}
    for (px, sv), row in st.items():
        if px == backend or (px == fe and sv == "FRONTEND"):
            key = "frontend" if px == fe else sv
            out[key] = {c: int(row[c] or 0) for c in COUNTERS}
    return out


def delta(after, before):
    return {k: {c: after[k][c] - before.get(k, {}).get(c, 0) for c in COUNTERS} for k in after}


def fmt_counts(d, keys=("econ", "eresp", "wretr", "wredis", "hrsp_5xx")):
    return " ".join(f"{k}={d[k]}" for k in keys)


# ---------------------------------------------------------------------------------------
# Derender streams


def fold_chunk(acc, chunk, completions):
    for c in chunk.get("choices", []):
        a = acc.setdefault(c["index"], {"content": "", "reasoning": "", "calls": {},
                                        "finish": None, "stop_reason": None})
        if completions:
            a["content"] += c.get("text") or ""
        else:
            d = c.get("delta") or {}
            a["content"] += d.get("content") or ""
            a["reasoning"] += d.get("reasoning_content") or ""
            for t in d.get("tool_calls") or []:
                call = a["calls"].setdefault(t["index"], {"id": None, "name": "", "arguments": ""})
                if t.get("id"):
                    call["id"] = t["id"]
                fn = t.get("function") or {}
                call["name"] += fn.get("name") or ""
                call["arguments"] += fn.get("arguments") or ""
        if c.get("finish_reason"):
            a["finish"] = c["finish_reason"]
            a["stop_reason"] = c.get("stop_reason")


def finalize(acc):
    return {i: {"content": a["content"], "reasoning": a["reasoning"],
                "calls": [a["calls"][k] for k in sorted(a["calls"])],
                "finish": a["finish"], "stop_reason": a["stop_reason"]}
            for i, a in sorted(acc.items())}


def one_shot_fold(body, completions):
    out = {}
    for c in body["choices"]:
        if completions:
            out[c["index"]] = {"content": c.get("text") or "", "reasoning": "", "calls": [],
                               "finish": c.get("finish_reason"), "stop_reason": c.get("stop_reason")}
        else:
            m = c["message"]
            out[c["index"]] = {
                "content": m.get("content") or "", "reasoning": m.get("reasoning_content") or "",
                "calls": [{"id": t["id"], "name": t["function"]["name"],
                           "arguments": t["function"]["arguments"]} for t in m.get("tool_calls") or []],
                "finish": c.get("finish_reason"), "stop_reason": c.get("stop_reason")}
    return out


class Spec:
    """One engine output to derender: route, the original request, prompt IDs and each
    choice's generated IDs and engine finish reason."""

    def __init__(self, name, route, original, prompt_ids, choices, finish):
        self.name, self.route, self.original = name, route, original
        self.prompt_ids, self.choices, self.finish = prompt_ids, choices, finish
        self.completions = route == COMPL
        self.key = "completion_request" if self.completions else "chat_request"

    def tokens(self):
        return sum(len(v) for v in self.choices.values())

    def one_shot(self):
        resp = {"request_id": f"req-{self.name}", "choices": [
            {"index": i, "token_ids": ids, "finish_reason": self.finish[i]}
            for i, ids in sorted(self.choices.items())]}
        body = {"stream": False, "model": "qwen3", "generate_response": resp,
                "prompt_token_ids": self.prompt_ids, self.key: self.original}
        if self.completions:
            body["prompt_tokens"] = len(self.prompt_ids)
        return body

    def plan(self, rng, max_chunk):
        """Chunk requests' choices: each choice's IDs cut in random 1..max_chunk slices."""
        pos = {i: 0 for i in self.choices}
        steps = []
        while any(pos[i] < len(ids) for i, ids in self.choices.items()):
            step = []
            for i, ids in sorted(self.choices.items()):
                if pos[i] >= len(ids):
                    continue
                n = rng.randint(1, max_chunk)
                piece = ids[pos[i]:pos[i] + n]
                pos[i] += len(piece)
                last = pos[i] >= len(ids)
                step.append({"index": i, "token_ids": piece,
                             "finish_reason": self.finish[i] if last else None})
            steps.append(step)
        return steps


class StreamError(Exception):
    pass


def run_stream(http, spec, plan, retries=0, on_request=None, served=None):
    """Sends `plan` chunk by chunk, carrying the state; returns (folded, chunks, stats).
    A connection error or a 502/503/504 is retried with the same body (the state makes the
    request idempotent) up to `retries` times. Choices that finished (a stop string) are
    no longer sent; the stream ends when every choice has finished."""
    acc, state, chunks = {}, None, []
    stats = {"requests": 0, "retries": 0, "errors": []}
    finished = set()
    for n, step in enumerate(plan):
        step = [c for c in step if c["index"] not in finished]
        if not step:
            continue
        body = {"stream": True, "model": "qwen3", "stream_state": state,
                "generate_chunk": {"request_id": f"req-{spec.name}", "choices": step},
                "prompt_token_ids": spec.prompt_ids, spec.key: spec.original}
        data = json.dumps(body).encode()
        for attempt in range(retries + 1):
            if on_request:
                on_request(n)
            stats["requests"] += 1
            try:
                status, hdrs, out = http.json("POST", spec.route, data)
            except (OSError, http.client.HTTPException) as e:
                status, hdrs, out = None, {}, repr(e)
            if status == 200:
                break
            stats["errors"].append((n, status, str(out)[:200]))
            if status is not None and status not in RETRYABLE or attempt == retries:
                raise StreamError(f"{spec.name} chunk {n}: {status} {str(out)[:300]}")
            stats["retries"] += 1
            time.sleep(0.1 * 2 ** attempt)
        if served is not None:
            served.append(hdrs.get("x-served-by"))
        chunks.append(out["chunk"])
        fold_chunk(acc, out["chunk"], spec.completions)
        state = out["stream_state"]
        for c in out["chunk"]["choices"]:
            if c.get("finish_reason"):
                finished.add(c["index"])
    return finalize(acc), chunks, stats


def diff(a, b, path=""):
    """The first difference between two folded answers, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            d = diff(a.get(k), b.get(k), f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            d = diff(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {str(a)[:120]!r} != {str(b)[:120]!r}"


# ---------------------------------------------------------------------------------------
# Test data


WORDS = ("the of and to in is was for on that with as by at from it an were are which this be "
         "or had not but first one their its new after who they have has been two also time more "
         "other into most only over city some would may world part states later about cache "
         "token replica stream state prefix block router engine").split()
UNICODE = ["café", "naïve", "日本語", "🤖", "🦀", "Zürich", "—", "€42", "ﬁ", "👩‍💻", "Ωμέγα"]


def prose(rng, n_words, unicode_every=17):
    out = []
    for i in range(n_words):
        out.append(rng.choice(UNICODE) if i % unicode_every == unicode_every - 1 else rng.choice(WORDS))
        if i % 23 == 22:
            out[-1] += "."
        if i % 97 == 96:
            out[-1] += "\n\n"
    return " ".join(out)


TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search_docs", "description": "Full-text search over the docs",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "filters": {"type": "object"}, "limit": {"type": "integer"}},
            "required": ["query"]}}},
]


def tokenize(http, text):
    status, _, body = http.json("POST", "/tokenize", {"model": "qwen3", "prompt": text,
                                                      "add_special_tokens": False})
    if status != 200:
        raise RuntimeError(f"/tokenize: {status} {body}")
    return body["tokens"]


def render_ids(http, route, request):
    status, _, body = http.json("POST", route, request)
    if status != 200:
        raise RuntimeError(f"{route}: {status} {body}")
    return body[0]["token_ids"] if isinstance(body, list) else body["token_ids"]


def build_specs(http, rng):
    """The four streams of sub-test 1, their IDs made by the server's own tokenizer."""
    specs = {}
    # A: reasoning, content and two tool calls; 2,000+ tokens.
    chat = {"model": "qwen3", "messages": [
        {"role": "system", "content": "You are a careful assistant. Use tools when useful."},
        {"role": "user", "content": "Plan my trip to Zürich and find the docs on stream states."}],
        "tools": TOOLS}
    args1 = {"city": "Zürich", "unit": "celsius"}
    args2 = {"query": "signed stream_state 🤖 replicas", "filters": {"lang": ["en", "日本語"],
             "path": "docs/api.md", "note": prose(rng, 60)}, "limit": 5}
    text = ("<think>\n" + prose(rng, 1250) + "\n</think>\n\n" + prose(rng, 330) +
            "\n<tool_call>\n" + json.dumps({"name": "get_weather", "arguments": args1}, ensure_ascii=False) +
            "\n</tool_call>\n<tool_call>\n" +
            json.dumps({"name": "search_docs", "arguments": args2}, ensure_ascii=False) +
            "\n</tool_call><|im_end|>")
    specs["long_tools"] = Spec("long_tools", CHAT, chat, render_ids(http, "/v1/chat/completions/render", chat),
                               {0: tokenize(http, text)}, {0: "stop"})
    # B: a stop string held across chunks (and replicas). The engine reports `stop` (vLLM
    # ends at a stop string; its one-shot derender cuts only an output that ended so).
    chat = {"model": "qwen3", "messages": [{"role": "user", "content": "Write until the marker."}],
            "stop": ["<<END>>"], "chat_template_kwargs": {"enable_thinking": False}}
    text = prose(rng, 200) + " <<END>> " + prose(rng, 60)
    specs["stop_string"] = Spec("stop_string", CHAT, chat, render_ids(http, "/v1/chat/completions/render", chat),
                                {0: tokenize(http, text)}, {0: "stop"})
    # C: two choices in each chunk, thinking off: one calls a tool, one answers in text.
    chat = {"model": "qwen3", "n": 2, "temperature": 0.8, "tools": TOOLS,
            "chat_template_kwargs": {"enable_thinking": False},
            "messages": [{"role": "user", "content": "Weather in Kyoto, or tell me why not."}]}
    t0 = ("Let me check.\n<tool_call>\n" + json.dumps({"name": "get_weather", "arguments":
          {"city": "京都", "unit": "celsius"}}, ensure_ascii=False) + "\n</tool_call><|im_end|>")
    t1 = prose(rng, 150) + "<|im_end|>"
    specs["two_choices"] = Spec("two_choices", CHAT, chat, render_ids(http, "/v1/chat/completions/render", chat),
                                {0: tokenize(http, t0), 1: tokenize(http, t1)}, {0: "stop", 1: "stop"})
    # D: completions, multi-byte characters split over chunks, a stop string.
    creq = {"model": "qwen3", "prompt": "Once upon a time", "max_tokens": 400, "stop": ["THE END"]}
    text = prose(rng, 220, unicode_every=5) + " THE END and more"
    specs["completions"] = Spec("completions", COMPL, creq,
                                render_ids(http, "/v1/completions/render", creq),
                                {0: tokenize(http, text)}, {0: "stop"})
    return specs


# ---------------------------------------------------------------------------------------
# Sub-tests


class Result:
    def __init__(self):
        self.rows = []

    def add(self, name, ok, detail):
        self.rows.append((name, ok, detail))
        log(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")
        return ok


def test_round_robin(ctx, res):
    log("\n== 1. round-robin: streamed derenders through HAProxy equal the one-shot answer")
    reps, hap, specs = ctx["replicas"], ctx["haproxy"], ctx["specs"]
    direct = Http(reps[0].port)
    lb = Http(hap.fe_port)
    route_by_spec = {s.route for s in specs.values()}
    before_m = {r.name: r.metrics() for r in reps}
    before_s = snapshot(hap, "replicas")
    rng = random.Random(7)
    served_all, total_chunks, ok_all = [], 0, True
    for spec in specs.values():
        status, _, body = direct.json("POST", spec.route, spec.one_shot())
        if status != 200:
            ok_all &= res.add(f"1.{spec.name}", False, f"one-shot {status} {body}")
            continue
        want = one_shot_fold(body, spec.completions)
        plan = spec.plan(rng, 8 if spec.name == "long_tools" else 3)
        served = []
        try:
            got, chunks, st = run_stream(lb, spec, plan, served=served)
        except StreamError as e:
            ok_all &= res.add(f"1.{spec.name}", False, str(e))
            continue
        served_all += served
        total_chunks += st["requests"]
        d = diff(got, want)
        detail = (f"{spec.tokens()} tokens in {st['requests']} chunk requests; finish "
                  f"{[c['finish'] for c in got.values()]}, {sum(len(c['calls']) for c in got.values())} tool calls, "
                  f"{sum(len(c['reasoning']) for c in got.values())} reasoning chars")
        if d is None and spec.name == "long_tools":
            # The same plan on one replica: every chunk's choices equal, one for one.
            _, one_chunks, _ = run_stream(direct, spec, plan)
            same = sum(a["choices"] == b["choices"] for a, b in zip(chunks, one_chunks))
            if same != len(chunks) or len(chunks) != len(one_chunks):
                d = f"chunks equal to one replica's: {same}/{len(chunks)} (vs {len(one_chunks)})"
            detail += f"; chunk-for-chunk equal to one replica's stream: {same}/{len(chunks)}"
        ok_all &= res.add(f"1.{spec.name}", d is None, detail + ("" if d is None else f"; DIFF {d}"))
    # Spread: X-Served-By per request, HAProxy stats, each replica's own counter.
    after_s = snapshot(hap, "replicas")
    ds = delta(after_s, before_s)
    by_header = {r.name: served_all.count(r.name) for r in reps}
    hops = sum(a != b for a, b in zip(served_all, served_all[1:]))
    by_metrics = {}
    for r in reps:
        m = r.metrics()
        by_metrics[r.name] = int(sum(metric(m, "llm_render_requests_total", route=route, status="200")
                                     - metric(before_m[r.name], "llm_render_requests_total", route=route, status="200")
                                     for route in route_by_spec))
    fair = total_chunks / len(reps)
    spread_ok = (all(v >= 0.5 * fair for v in by_header.values())
                 and all(ds[r.name]["stot"] >= 0.5 * fair for r in reps)
                 and all(by_metrics[r.name] >= 0.5 * fair for r in reps)
                 and hops >= 0.9 * (len(served_all) - len(specs)))
    res.add("1.spread", spread_ok,
            f"{total_chunks} chunk requests; X-Served-By {by_header}; HAProxy stot "
            f"{ {r.name: ds[r.name]['stot'] for r in reps} }; replicas' own derender counters {by_metrics}; "
            f"{hops} of {len(served_all) - 1} consecutive chunks changed replica")
    return ok_all and spread_ok


def slow_render_body(n):
    return {"model": "qwen3", "messages": [{"role": "user", "content": "hi"}],
            "chat_template": "{% for i in range(" + str(n) + ") %}{% for j in range(" + str(n) +
                             ") %}{% endfor %}{% endfor %}done"}


def restart(ctx, rep):
    rep.stop()
    rep.start(rep.port).wait_ready()
    if not ctx["haproxy"].wait_status([rep.name], "UP", timeout=30):
        raise RuntimeError(f"HAProxy does not see {rep.name} UP again")


def serving_replica(hap, backend, reps, timeout=10):
    """The replica holding the one session of `backend` (HAProxy's scur), polled."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        st = hap.stats()
        busy = [r for r in reps if int(st[(backend, r.name)]["scur"] or 0) > 0]
        if len(busy) == 1:
            return busy[0]
        time.sleep(0.02)
    return None


def test_sigkill(ctx, res):
    log("\n== 2. SIGKILL: a replica dies mid-stream")
    reps, hap, specs = ctx["replicas"], ctx["haproxy"], ctx["specs"]
    spec = specs["long_tools"]
    direct = Http(reps[0].port)
    _, _, body = direct.json("POST", spec.route, spec.one_shot())
    want = one_shot_fold(body, spec.completions)
    ok_all = True

    # (a) Killed while the stream runs; the kill lands wherever the stream is.
    victim = reps[2]
    plan = spec.plan(random.Random(11), 6)
    progress = threading.Event()
    kill_at = len(plan) // 3

    def on_request(n):
        if n >= kill_at:
            progress.set()

    def killer():
        progress.wait(60)
        time.sleep(0.003)  # lands inside a request, not between two
        victim.signal(signal.SIGKILL)
        ctx["killed_at"] = time.time()

    before = snapshot(hap, "replicas")
    th = threading.Thread(target=killer)
    th.start()
    served = []
    try:
        got, _, st = run_stream(Http(hap.fe_port), spec, plan, retries=5, on_request=on_request, served=served)
        err = None
    except StreamError as e:
        got, st, err = None, {"requests": 0, "retries": 0, "errors": []}, str(e)
    finally:
        progress.set()
    th.join()
    ds = delta(snapshot(hap, "replicas"), before)
    after_kill = served[kill_at + 1:]
    d = err or diff(got, want)
    ok_all &= res.add(
        "2a.kill_mid_stream", d is None,
        f"{victim.name} SIGKILLed at chunk ~{kill_at} of {len(plan)}; stream "
        f"{'identical to the one-shot answer' if d is None else 'DIFF ' + d}; client retries "
        f"{st['retries']} {st['errors'][:3]}; HAProxy {victim.name} {fmt_counts(ds[victim.name])}, "
        f"backend {fmt_counts(ds['BACKEND'])}, frontend 5xx {ds['frontend']['hrsp_5xx']}; chunks served by "
        f"{victim.name} after the kill: {after_kill.count(victim.name)} of {len(after_kill)}")
    restart(ctx, victim)

    # (b) A request in flight on the killed replica: a render made slow by its template.
    for backend, port, expect in (("replicas_noretry", hap.fe_noretry_port, "502, then the client's retry"),
                                  ("replicas", hap.fe_port, "HAProxy retries it (retry-on empty-response)")):
        before = snapshot(hap, backend)
        out = {}

        def probe():
            c = Http(port)
            t = time.time()
            try:
                out["first"] = c.request("POST", "/v1/chat/completions/render", slow_render_body(ctx["slow_n"]))[0]
            except (OSError, http.client.HTTPException) as e:
                out["first"] = repr(e)
            out["first_s"] = time.time() - t
            if out["first"] != 200:  # the client rule: retry an idempotent request
                out["retry"] = c.request("POST", "/v1/chat/completions/render", slow_render_body(ctx["slow_n"]))[0]

        th = threading.Thread(target=probe)
        th.start()
        victim = serving_replica(hap, backend, reps)
        if victim is None:
            th.join()
            ok_all &= res.add(f"2b.in_flight[{backend}]", False, f"no replica seen serving the slow render: {out}")
            continue
        time.sleep(0.2)
        still_running = th.is_alive()
        victim.signal(signal.SIGKILL)
        th.join()
        ds = delta(snapshot(hap, backend), before)
        final = out.get("retry", out["first"])
        if backend == "replicas_noretry":
            ok = still_running and final == 200
        else:
            ok = still_running and out["first"] == 200
        ok_all &= res.add(
            f"2b.in_flight[{backend}]", ok,
            f"slow render in flight on {victim.name} (killed {'while running' if still_running else 'TOO LATE'}): "
            f"client got {out['first']} after {out['first_s']:.1f}s"
            + (f", its retry {out['retry']}" if "retry" in out else "") +
            f"; expected {expect}; HAProxy {victim.name} {fmt_counts(ds[victim.name])}, "
            f"frontend 5xx {ds['frontend']['hrsp_5xx']}")
        restart(ctx, victim)

    # (c) Idempotence: one chunk request, sent twice to one replica and once to another.
    plan = spec.plan(random.Random(5), 8)
    mid = len(plan) // 2
    body = {"stream": True, "model": "qwen3", "stream_state": None,
            "generate_chunk": {"request_id": f"req-{spec.name}", "choices": plan[0]},
            "prompt_token_ids": spec.prompt_ids, spec.key: spec.original}
    a = Http(reps[0].port)
    for step in plan[1:mid]:  # walk to the middle of the stream
        _, _, o = a.json("POST", spec.route, body)
        body["stream_state"] = o["stream_state"]
        body["generate_chunk"]["choices"] = step
    answers = [Http(r.port).json("POST", spec.route, body)[2] for r in (reps[0], reps[0], reps[1], reps[2])]
    same = all(x == answers[0] for x in answers)
    ok_all &= res.add("2c.idempotent_chunk", same and isinstance(answers[0], dict) and "chunk" in answers[0],
                      f"chunk {mid} sent 4 times (r1, r1, r2, r3): answers (chunk and next state) "
                      f"{'identical' if same else 'DIFFER'}")
    return ok_all


def has_drain_flag(binary):
    out = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True).stdout
    return "--drain-delay-secs" in out


def render_bodies(rng):
    bodies = []
    for i in range(40):
        msgs = [{"role": "user", "content": prose(rng, rng.randint(5, 120))}]
        if i % 3 == 0:
            msgs.insert(0, {"role": "system", "content": "Be brief."})
        b = {"model": "qwen3", "messages": msgs, "max_tokens": 64}
        if i % 4 == 0:
            b["tools"] = TOOLS
        bodies.append(("/v1/chat/completions/render", json.dumps(b).encode()))
        bodies.append(("/v1/completions/render",
                       json.dumps({"model": "qwen3", "prompt": prose(rng, 40), "max_tokens": 16}).encode()))
    return bodies


def test_sigterm(ctx, res, backend, victim, threads=4):
    """SIGTERM to `victim` while `threads` clients render through `backend`'s frontend."""
    hap = ctx["haproxy"]
    port = {"replicas": hap.fe_port, "replicas_noretry": hap.fe_noretry_port}[backend]
    bodies = render_bodies(random.Random(3))
    stop = threading.Event()
    lock = threading.Lock()
    counts = {"ok": 0, "status": {}, "conn_errors": [], "victim_after_term": 0}
    term_at = [None]

    def load(seed):
        rng = random.Random(seed)
        c = Http(port, keepalive=False, timeout=30)
        while not stop.is_set():
            path, body = rng.choice(bodies)
            try:
                status, hdrs, _ = c.request("POST", path, body)
            except (OSError, http.client.HTTPException) as e:
                with lock:
                    counts["conn_errors"].append(repr(e)[:120])
                continue
            with lock:
                if status == 200:
                    counts["ok"] += 1
                else:
                    counts["status"][status] = counts["status"].get(status, 0) + 1
                if term_at[0] and hdrs.get("x-served-by") == victim.name:
                    counts["victim_after_term"] += 1

    before = snapshot(hap, backend)
    ths = [threading.Thread(target=load, args=(i,)) for i in range(threads)]
    for t in ths:
        t.start()
    time.sleep(2.0)
    victim.signal(signal.SIGTERM)
    term_at[0] = time.time()
    down_after = exit_after = code = None
    deadline = term_at[0] + ctx["drain_delay"] + 20
    while time.time() < deadline and (code is None or down_after is None):
        if down_after is None and not hap.status(backend, victim.name).startswith("UP"):
            down_after = time.time() - term_at[0]
        if code is None:
            code = victim.proc.poll()
            if code is not None:
                exit_after = time.time() - term_at[0]
        time.sleep(0.05)
    time.sleep(1.0)  # load continues on the two others
    stop.set()
    for t in ths:
        t.join()
    ds = delta(snapshot(hap, backend), before)
    failed = sum(counts["status"].values()) + len(counts["conn_errors"])
    hap_failed = (ds["frontend"]["hrsp_5xx"] + ds["BACKEND"]["econ"] + ds["BACKEND"]["eresp"]
                  + ds["BACKEND"]["wretr"] + ds["BACKEND"]["wredis"])
    ok = failed == 0 and hap_failed == 0 and code == 0
    return res.add(
        f"3.sigterm_under_load[{backend}]", ok,
        f"{threads} threads, connection per request: {counts['ok']} ok, {failed} failed at the client "
        f"(status {counts['status']}, connection errors {len(counts['conn_errors'])} {counts['conn_errors'][:2]}); "
        f"HAProxy frontend 5xx {ds['frontend']['hrsp_5xx']}, backend {fmt_counts(ds['BACKEND'])} "
        f"(econ/eresp: connection/response errors; wretr/wredis: requests HAProxy had to retry); "
        f"{victim.name} answered {counts['victim_after_term']} after SIGTERM, marked DOWN by HAProxy after "
        f"{'%.2fs' % down_after if down_after is not None else 'never'}, exited "
        + (f"{code} after {exit_after:.2f}s" if code is not None else "not at all")
        + f" (drain delay {ctx['drain_delay']}s{'' if ctx['drain_flag'] else ': flag absent, old binary'})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/llm-render"))
    ap.add_argument("--drain-delay", type=float, default=2.0,
                    help="--drain-delay-secs for the replicas, when the binary has the flag")
    ap.add_argument("--slow-render", type=int, default=4500,
                    help="loop size of the slow render of sub-test 2b (n*n template iterations)")
    ap.add_argument("--only", default="123", help="sub-tests to run, e.g. 13")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder (logs, haproxy.cfg)")
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"no executable at {args.bin} (cargo build --release, or --bin PATH)")
    if not shutil.which("haproxy") and not os.path.exists("/usr/sbin/haproxy"):
        sys.exit("haproxy not found (apt-get install -y haproxy)")
    t0 = time.time()
    workdir = tempfile.mkdtemp(prefix="llm-render-replicas-")
    drain_flag = has_drain_flag(args.bin)
    extra = ["--trust-request-chat-template", "--template-fuel", "0"]
    if drain_flag:
        extra += ["--drain-delay-secs", str(args.drain_delay)]
    ctx = {"drain_flag": drain_flag, "drain_delay": args.drain_delay if drain_flag else 0,
           "slow_n": args.slow_render}
    reps = [Server(args.bin, f"r{i + 1}", workdir, extra, env={"LLM_RENDER_STATE_KEY": STATE_KEY})
            for i in range(3)]
    hap = None
    res = Result()
    try:
        for r in reps:
            r.start()
        for r in reps:
            r.wait_ready()
        hap = HAProxy(workdir, reps).start()
        if not hap.wait_status([r.name for r in reps], "UP", timeout=30):
            raise RuntimeError(f"HAProxy does not see the replicas UP: {open(hap.log_path).read()[-2000:]}")
        ctx.update(replicas=reps, haproxy=hap)
        log(f"replicas {[r.port for r in reps]} (state key shared), HAProxy :{hap.fe_port} "
            f"(noretry :{hap.fe_noretry_port}, stats :{hap.stats_port}); drain flag "
            f"{'present' if drain_flag else 'absent'}; ready in {time.time() - t0:.1f}s; work dir {workdir}")
        ctx["specs"] = build_specs(Http(hap.fe_port), random.Random(1))
        if "1" in args.only:
            test_round_robin(ctx, res)
        if "2" in args.only:
            test_sigkill(ctx, res)
        if "3" in args.only:
            log("\n== 3. SIGTERM under load: no failed request")
            test_sigterm(ctx, res, "replicas", reps[0])
            restart(ctx, reps[0])
            test_sigterm(ctx, res, "replicas_noretry", reps[1])
    except Exception as e:  # a broken setup is a failure too
        import traceback
        traceback.print_exc()
        res.add("setup", False, repr(e))
    finally:
        if hap:
            hap.stop()
        for r in reps:
            r.stop()
    failed = [n for n, ok, _ in res.rows if not ok]
    log(f"\n{len(res.rows) - len(failed)}/{len(res.rows)} passed in {time.time() - t0:.0f}s"
        + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    if failed or args.keep:
        log(f"logs kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
