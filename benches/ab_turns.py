"""Paired A/B of llm-render builds or flags on chat turns: how the "paired 0.97" figures
of docs/performance.md for one change against another were measured.

Each configuration serves the Qwen3 fixture on its own port; rounds of 12 fresh 20-turn chats
(benches/render_vs_vllm_rs.py's) are sent with the servers taking each turn's 12 requests in
alternation (the order flipping every turn), so both see the machine in the same state. For
every turn block the server CPU per request is read from /proc; the figure reported is the
median, over blocks, of each configuration's CPU divided by the first one's.

Usage:
  python3 benches/ab_turns.py '{"before": ({"BIN": "/tmp/old"}, []), "after": ({}, [])}' [rounds]
Each value is (environment, extra `serve` arguments); BIN in the environment picks the binary
(default: bench_support.LLM_RENDER_BIN, the dist build). Example, the header-read timer:
  python3 benches/ab_turns.py '{"default": ({}, []), "off": ({}, ["--header-read-timeout-secs", "0"])}' 10
"""
import ast, os, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_support import LLM_RENDER_BIN, model_dir, proc_cpu, wait_healthy  # noqa: E402
import render_vs_vllm_rs as rv  # noqa: E402


def main():
    configs = ast.literal_eval(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    d = model_dir()
    procs = {}
    try:
        for i, (name, (env, args)) in enumerate(configs.items()):
            e = dict(os.environ, **env)
            binary = e.pop("BIN", LLM_RENDER_BIN)
            port = 18800 + i
            cmd = [binary, "serve", "--port", str(port), "--model", f"qwen3={d}", *args]
            proc = subprocess.Popen(cmd, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs[name] = (proc, f"http://127.0.0.1:{port}")
        for _, url in procs.values():
            wait_healthy(url)
        names = list(procs)
        blocks = {n: [] for n in names}
        for r in range(rounds):
            convs = rv.conversations(12, seed=1000 + 100 * r)
            for n in names:
                for body in convs[0]:
                    rv.post(procs[n][1], body)
            for t in range(1, 19):
                for n in names if (t + r) % 2 == 0 else names[::-1]:
                    proc, url = procs[n]
                    c0 = proc_cpu(proc.pid)
                    for body in convs[t]:
                        rv.post(url, body)
                    blocks[n].append((proc_cpu(proc.pid) - c0) / len(convs[t]) * 1e6)
        base = names[0]
        for n in names:
            ratios = [a / b for a, b in zip(blocks[n], blocks[base])]
            print(f"{n}: mean {statistics.mean(blocks[n]):.1f} µs per turn; "
                  f"median block ratio vs {base} {statistics.median(ratios):.3f}")
    finally:
        for proc, _ in procs.values():
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
