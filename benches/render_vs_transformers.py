"""Side-by-side: CPU per chat render, llm-render (HTTP server on loopback) vs transformers.

In one run, for the `qwen3/long_9k` (10,140 tokens) and `qwen3/tools_defined` goldens:
  * transformers: `apply_chat_template(tokenize=False)` + `encode(add_special_tokens=False)`,
    the exact call that made the goldens, CPU time of this process per render;
  * llm-render: `llm-render serve --model qwen3=fixtures/models/qwen3` on 127.0.0.1, one request
    at a time, server CPU per request read from /proc/<pid>/stat (HTTP + JSON included).
Prints both and the ratio. Needs: pip install transformers tokenizers jinja2; a release build
(`cargo build --release`). Usage: python3 benches/render_vs_transformers.py [N]
"""
import gzip, json, os, shutil, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = int(sys.argv[1]) if len(sys.argv) > 1 else 200
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, os.path.join(ROOT, "..", "shared", "reference"))


def goldens():
    out = {}
    for line in open(os.path.join(ROOT, "fixtures/goldens/render/qwen3.jsonl")):
        g = json.loads(line)
        out[g["id"]] = g
    return out


def proc_cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_transformers(cases):
    from transformers import AutoTokenizer
    d = tempfile.mkdtemp()
    src = os.path.join(ROOT, "fixtures/models/qwen3")
    for f in os.listdir(src):
        if f == "tokenizer.json.gz":
            with gzip.open(os.path.join(src, f)) as a, open(os.path.join(d, "tokenizer.json"), "wb") as b:
                shutil.copyfileobj(a, b)
        else:
            shutil.copy(os.path.join(src, f), d)
    tok = AutoTokenizer.from_pretrained(d)
    res = {}
    for cid, g in cases.items():
        req = g["request"]
        def once():
            p = tok.apply_chat_template(req["messages"], tools=req.get("tools"), tokenize=False, add_generation_prompt=True)
            return tok.encode(p, add_special_tokens=False)
        assert once() == g["expected_token_ids"]
        n = max(5, N // 10) if "long" in cid else N
        t0 = time.process_time()
        for _ in range(n):
            once()
        res[cid] = (time.process_time() - t0) / n
    return res


def bench_llm_render(cases):
    binary = os.path.join(ROOT, "target/release/llm-render")
    port = 31877
    srv = subprocess.Popen([binary, "serve", "--port", str(port), "--model", f"qwen3={ROOT}/fixtures/models/qwen3"],
                           stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url + "/health", timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        res = {}
        for cid, g in cases.items():
            body = json.dumps(dict(g["request"], model="qwen3")).encode()
            def once():
                r = urllib.request.Request(url + "/v1/chat/completions/render", data=body,
                                           headers={"content-type": "application/json"})
                return json.loads(urllib.request.urlopen(r).read())["token_ids"]
            assert once() == g["expected_token_ids"]
            n = N
            c0 = proc_cpu(srv.pid)
            for _ in range(n):
                once()
            res[cid] = (proc_cpu(srv.pid) - c0) / n
        return res
    finally:
        srv.terminate()
        srv.wait()


g = goldens()
cases = {k: g[k] for k in ["qwen3/long_9k", "qwen3/tools_defined"]}
tf = bench_transformers(cases)
lr = bench_llm_render(cases)
print(f"{'case':24} {'transformers ms':>16} {'llm-render ms':>14} {'ratio':>7}")
for cid in cases:
    print(f"{cid:24} {tf[cid]*1e3:16.3f} {lr[cid]*1e3:14.3f} {tf[cid]/max(lr[cid],1e-9):6.1f}x")
