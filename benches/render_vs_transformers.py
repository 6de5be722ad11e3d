"""Side-by-side: CPU per chat render, llm-render (HTTP server on loopback) vs transformers.

In one run, for the `qwen3/long_9k` (10,140 tokens) and `qwen3/tools_defined` goldens:
  * transformers: `apply_chat_template(tokenize=False)` + `encode(add_special_tokens=False)`,
    the exact call that made the goldens, CPU time of this process per render;
  * llm-render: `llm-render serve --model qwen3=fixtures/models/qwen3` on 127.0.0.1, one request
    at a time over a kept-alive connection, each made unique at its start so no cache helps,
    server CPU per request from /proc/<pid>/task/*/schedstat (HTTP + JSON included).
Prints both and the ratio. Needs: pip install transformers tokenizers jinja2; a dist build
(`cargo build --profile dist`). Usage: python3 benches/render_vs_transformers.py [N]
"""
import http.client, json, os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_support import LLM_RENDER_BIN, ROOT, goldens, model_dir, proc_cpu, wait_healthy  # noqa: E402
N = int(sys.argv[1]) if len(sys.argv) > 1 else 200
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def bench_transformers(cases):
    from transformers import AutoTokenizer
    d = model_dir()
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
    binary = LLM_RENDER_BIN
    port = 31877
    srv = subprocess.Popen([binary, "serve", "--port", str(port), "--model", f"qwen3={ROOT}/fixtures/models/qwen3"],
                           stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url)
        res = {}
        conn = http.client.HTTPConnection(f"127.0.0.1:{port}")
        for cid, g in cases.items():
            def once(i=None):
                req = json.loads(json.dumps(g["request"]))
                if i is not None:
                    # A unique start per request: no cache of ours can help (cold render).
                    req["messages"][0]["content"] = f"Request {i}. " + req["messages"][0]["content"]
                conn.request("POST", "/v1/chat/completions/render", body=json.dumps(dict(req, model="qwen3")),
                             headers={"content-type": "application/json"})
                return json.loads(conn.getresponse().read())["token_ids"]
            assert once() == g["expected_token_ids"]
            c0 = proc_cpu(srv.pid)
            for i in range(N):
                once(i)
            res[cid] = (proc_cpu(srv.pid) - c0) / N
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
