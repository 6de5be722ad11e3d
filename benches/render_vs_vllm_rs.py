"""Side by side, in one run: llm-render vs vllm-rs render (vLLM 0.33's Rust render server).

Both serve the same Qwen3 fixture on loopback; the same requests go to each. Reports server CPU
per request (utime+stime from /proc/<pid>/stat) and, with wrk, requests/s at concurrency 1 and 8.

  cold long_9k   the 10,140-token qwen3/long_9k chat, each request made unique at its start
                 (a nonce in the system message), so no cache of any kind can help;
  turn N         20-turn conversations (~10k tokens by the end), each request carrying the whole
                 history as clients send it; CPU of turns 2..19, and of turn 20, after turns
                 1..N-1 were rendered; three rounds of 12 fresh conversations, median round;
  short tools    qwen3/tools_defined (328 tokens);
  /health        the per-request HTTP floor both servers pay (wakeups, recv, writev), and
                 turns 2..19 less that floor.

Turns 2..19 are then measured once more with the two servers alternating turn by turn
(paired), which keeps drift in the machine's load out of the ratio.

Setup (nothing committed; bench-peers/ is git-ignored):
  mkdir -p bench-peers && cd bench-peers && pip download --no-deps vllm==0.33.0 -d . \
      && unzip -o -q vllm-0.33.0-*.whl vllm/vllm-rs && cd ..
  apt-get install -y wrk;  cargo build --profile dist
Usage: python3 benches/render_vs_vllm_rs.py [--quick]
"""
import http.client, json, os, random, shutil, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_support import LLM_RENDER_BIN, ROOT, goldens, model_dir, proc_cpu, wait_healthy  # noqa: E402

VLLM_RS = os.path.join(ROOT, "bench-peers/vllm/vllm-rs")
LLM_RENDER = LLM_RENDER_BIN
QUICK = "--quick" in sys.argv


CONNS = {}


def post(url, body):
    """POST over one kept-alive connection per server, as a router's connection pool would;
    a connection the server closed while idle (both close idle keep-alives) is reopened."""
    for attempt in (0, 1):
        conn = CONNS.get(url)
        if conn is None:
            conn = CONNS[url] = http.client.HTTPConnection(url.split("//")[1])
        try:
            conn.request("POST", "/v1/chat/completions/render", body=body, headers={"content-type": "application/json"})
            return json.loads(conn.getresponse().read())
        except (ConnectionError, http.client.RemoteDisconnected):
            conn.close()
            del CONNS[url]
            if attempt:
                raise


def golden(cid):
    return goldens()[cid]


def words(n, rng):
    vocab = ("the of and to in is that for it as with was on be by this are from or an at which model cache token "
             "prefill decode router latency throughput request server memory block transfer prompt template").split()
    return " ".join(rng.choice(vocab) for _ in range(n))


def cold_bodies(n):
    req = golden("qwen3/long_9k")["request"]
    out = []
    for i in range(n):
        r = json.loads(json.dumps(req))
        r["messages"][0]["content"] = f"Request {i:08d} {random.random()}. " + r["messages"][0]["content"]
        r["model"] = "qwen3"
        out.append(json.dumps(r).encode())
    return out


def conversations(k, turns=20, seed=1000):
    """k conversations; returns a list per turn index of request bodies."""
    per_turn = [[] for _ in range(turns)]
    for c in range(k):
        rng = random.Random(seed + c)
        msgs = [{"role": "system", "content": f"Conversation {c}. " + words(200, rng)}]
        for t in range(turns):
            msgs.append({"role": "user", "content": words(rng.randint(150, 300), rng)})
            per_turn[t].append(json.dumps({"model": "qwen3", "messages": msgs}).encode())
            msgs.append({"role": "assistant", "content": words(rng.randint(100, 200), rng)})
    return per_turn


def measure(url, pid, bodies):
    c0 = proc_cpu(pid)
    for b in bodies:
        post(url, b)
    return (proc_cpu(pid) - c0) / len(bodies)


def health_cpu(url, pid, n):
    """Server CPU per `GET /health` on the kept-alive connection: the per-request HTTP floor."""
    conn = CONNS.get(url) or CONNS.setdefault(url, http.client.HTTPConnection(url.split("//")[1]))
    for _ in range(50):
        conn.request("GET", "/health")
        conn.getresponse().read()
    c0 = proc_cpu(pid)
    for _ in range(n):
        conn.request("GET", "/health")
        conn.getresponse().read()
    return (proc_cpu(pid) - c0) / n


def wrk(url, body, conns, secs):
    lua = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    bf = tempfile.NamedTemporaryFile("wb", delete=False)
    bf.write(body)
    bf.close()
    lua.write(f'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
              f'local f = io.open("{bf.name}", "rb")\nwrk.body = f:read("*all")\nf:close()\n')
    lua.close()
    out = subprocess.run(["wrk", "-t1", f"-c{conns}", f"-d{secs}s", "-s", lua.name,
                          url + "/v1/chat/completions/render"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split()[1])
    raise RuntimeError(out)


def paired_turns(urls, procs, rounds):
    """Turns 2-19 again, the two servers taking each turn's 12 requests in alternation (the
    order flipping every turn), so that both see the machine in the same state: drift in the
    load of this shared machine cancels out of the ratio instead of landing in it."""
    cpu = {n: 0.0 for n in urls}
    count, ratios = 0, []
    for r in range(rounds):
        convs = conversations(12, seed=7000 + 100 * r)
        for name, url in urls.items():
            measure(url, procs[name].pid, convs[0])
        for t in range(1, len(convs) - 1):
            names = list(urls) if (t + r) % 2 == 0 else list(urls)[::-1]
            block = {}
            for name in names:
                block[name] = measure(urls[name], procs[name].pid, convs[t])
                cpu[name] += block[name] * len(convs[t])
            ratios.append(block["vllm-rs"] / block["llm-render"])
            count += len(convs[t])
    out = {n: c / count * 1e3 for n, c in cpu.items()}
    out["median_ratio"] = statistics.median(ratios)
    return out


def main():
    d = model_dir()
    servers = {
        "vllm-rs": [VLLM_RS, "render", d, "--port", "31001", "--served-model-name", "qwen3"],
        "llm-render": [LLM_RENDER, "serve", "--port", "31002", "--model", f"qwen3={d}"],
    }
    urls = {"vllm-rs": "http://127.0.0.1:31001", "llm-render": "http://127.0.0.1:31002"}
    procs = {k: subprocess.Popen(v, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for k, v in servers.items()}
    try:
        for u in urls.values():
            wait_healthy(u)
        n_cold = 60 if QUICK else 300
        cold = cold_bodies(n_cold)
        rounds = [conversations(4 if QUICK else 12, seed=1000 + 100 * i) for i in range(1 if QUICK else 3)]
        tools = json.dumps(dict(golden("qwen3/tools_defined")["request"], model="qwen3")).encode()
        expect = golden("qwen3/long_9k")["expected_token_ids"]
        res = {}
        for name, url in urls.items():
            pid = procs[name].pid
            got = post(url, json.dumps(dict(golden("qwen3/long_9k")["request"], model="qwen3")).encode())["token_ids"]
            assert got == expect, f"{name}: long_9k token IDs differ from the golden"
            measure(url, pid, cold[:10])  # warm up
            r = {"cold_cpu_ms": measure(url, pid, cold[10:]) * 1e3}
            # Rounds of fresh conversations; the median round is reported, so that one burst
            # of interference from other tenants of the machine does not decide the figure.
            turn_n, turn_20 = [], []
            for convs in rounds:
                measure(url, pid, convs[0])  # turn 1 of every conversation
                c0, n = proc_cpu(pid), 0
                for t in range(1, len(convs) - 1):
                    for b in convs[t]:
                        post(url, b)
                        n += 1
                turn_n.append((proc_cpu(pid) - c0) / n * 1e3)
                turn_20.append(measure(url, pid, convs[-1]) * 1e3)
            r["turnN_cpu_ms"] = statistics.median(turn_n)
            r["turn20_cpu_ms"] = statistics.median(turn_20)
            r["tools_cpu_ms"] = measure(url, pid, [tools] * (300 if QUICK else 2000)) * 1e3
            r["health_cpu_ms"] = health_cpu(url, pid, 300 if QUICK else 2000) * 1e3
            secs = 3 if QUICK else 8
            for c in (1, 8):
                r[f"tools_rps_c{c}"] = wrk(url, tools, c, secs)
                r[f"cold_rps_c{c}"] = wrk(url, cold[0], c, secs)  # identical body: the peer's best case too
            res[name] = r
        paired = paired_turns(urls, procs, 1 if QUICK else 3)
        a, b = res["vllm-rs"], res["llm-render"]
        print(f"{'metric':28} {'vllm-rs':>10} {'llm-render':>11} {'ratio':>7}")
        rows = [("cold long_9k CPU/req (ms)", "cold_cpu_ms", True), ("turns 2-19 CPU/req (ms)", "turnN_cpu_ms", True), ("turn 20 CPU/req (ms)", "turn20_cpu_ms", True),
                ("short tools CPU/req (ms)", "tools_cpu_ms", True), ("short tools req/s c=1", "tools_rps_c1", False),
                ("short tools req/s c=8", "tools_rps_c8", False), ("long_9k req/s c=1 (same body)", "cold_rps_c1", False),
                ("long_9k req/s c=8 (same body)", "cold_rps_c8", False), ("GET /health CPU/req (ms)", "health_cpu_ms", True)]
        for label, k, lower_better in rows:
            ratio = a[k] / b[k] if lower_better else b[k] / a[k]
            print(f"{label:28} {a[k]:10.3f} {b[k]:11.3f} {ratio:6.1f}x")
        print("(ratio > 1 means llm-render is better: less CPU, or more requests/s)")
        print(f"turns 2-19, paired (the servers alternate turn by turn): vllm-rs {paired['vllm-rs']:.3f} ms, "
              f"llm-render {paired['llm-render']:.3f} ms, ratio {paired['vllm-rs'] / paired['llm-render']:.1f}x; "
              f"median block ratio {paired['median_ratio']:.1f}x")
        # The HTTP floor (wakeups, one recv and one writev on loopback) is paid by any server;
        # what each spends on a turn beyond it is the render work itself.
        above = [res[n]["turnN_cpu_ms"] - res[n]["health_cpu_ms"] for n in ("vllm-rs", "llm-render")]
        print(f"turns 2-19 above the /health floor: vllm-rs {above[0]:.3f} ms, llm-render {above[1]:.3f} ms, "
              f"ratio {above[0] / above[1]:.1f}x")
    finally:
        for p in procs.values():
            p.terminate()
            p.wait()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
