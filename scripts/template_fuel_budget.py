#!/usr/bin/env python3
"""What `--template-fuel` real chats need, and what the default stops: the figures behind the
default of 2M (src/model/mod.rs `DEFAULT_TEMPLATE_FUEL`, docs/fuzzing.md).

    cargo build --release
    python3 scripts/template_fuel_budget.py          # ~1-2 minutes

1. For each fixture model's own chat template (Qwen3, Llama 3.1, DeepSeek-V3, Qwen2.5-VL;
   `--no-native-templates`, so minijinja runs the template), the least fuel that renders a
   chat of `--turns` turns (default 1,000: user, assistant with a tool call, tool result,
   assistant) with `--tools` tools (default 200), found by bisection with `llm-render render
   --template-fuel N`; and how far the default is above it.
2. A request template that doubles a string in a loop, at the default fuel: it must end in
   the fuel error; the peak RSS of that command (from wait4's rusage) is printed beside that
   of the same command with a one-line template, and its time.

Exits non-zero when a chat needs more than a quarter of the default, or the doubling
template is not stopped by fuel.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = 2_000_000
MODELS = ["qwen3", "llama3_1", "deepseek_v3", "qwen2_5_vl"]


def chat(turns, tools):
    tool_list = [{"type": "function", "function": {
        "name": f"tool_{i}", "description": f"Tool number {i}: looks things up in catalogue {i}.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "what to look for"},
            "limit": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["query"]}}} for i in range(tools)]
    msgs = [{"role": "system", "content": "You are a helpful assistant with many tools."}]
    for t in range(turns):
        msgs.append({"role": "user", "content": f"Question {t}: find the entries about topic {t} and summarize them."})
        msgs.append({"role": "assistant", "content": "", "tool_calls": [{
            "id": f"call_{t}", "type": "function",
            "function": {"name": f"tool_{t % tools}", "arguments": json.dumps({"query": f"topic {t}", "limit": 5})}}]})
        msgs.append({"role": "tool", "tool_call_id": f"call_{t}", "content": json.dumps({"entries": [f"entry {t}.{k}" for k in range(3)]})})
        msgs.append({"role": "assistant", "content": f"Topic {t} has three entries; the first is the most recent."})
    return {"model": "m", "messages": msgs, "tools": tool_list}


def render(binary, model, body_path, fuel, extra=()):
    """(ok, stderr or error text, seconds, peak RSS MiB) of one `llm-render render`."""
    cmd = [binary, "render", "--model", f"m={model}", "--no-native-templates",
           "--max-model-len", "10000000", "--template-fuel", str(fuel), *extra, body_path]
    t0 = time.time()
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        out.seek(max(0, out.tell() - 2000))
        text = out.read().decode(errors="replace")
    return os.waitstatus_to_exitcode(status) == 0, text, time.time() - t0, ru.ru_maxrss / 1024


def least_fuel(binary, model, body_path):
    ok, text, _, _ = render(binary, model, body_path, 0)
    if not ok:
        raise RuntimeError(f"{model}: the chat does not render even without a fuel bound: {text[-400:]}")
    lo, hi = 1, DEFAULT
    while not render(binary, model, body_path, hi)[0]:
        lo, hi = hi, hi * 2
    while hi - lo > max(1000, lo // 200):  # within 0.5 %
        mid = (lo + hi) // 2
        if render(binary, model, body_path, mid)[0]:
            hi = mid
        else:
            lo = mid
    return hi


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/llm-render"))
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--tools", type=int, default=200)
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"no executable at {args.bin} (cargo build --release, or --bin PATH)")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    work = tempfile.mkdtemp(prefix="llm-render-fuel-")
    body_path = os.path.join(work, "chat.json")
    with open(body_path, "w") as f:
        json.dump(chat(args.turns, args.tools), f)
    failures = []
    print(f"1. A chat of {args.turns} turns (4 messages each, a tool call and its result) with "
          f"{args.tools} tools, each fixture's own template run by minijinja:")
    print("| model template | prompt tokens | least fuel | default / least | the command at the default |")
    print("|---|---:|---:|---:|---:|")
    for name in MODELS:
        model = os.path.join(ROOT, "fixtures/models", name)
        need = least_fuel(args.bin, model, body_path)
        ok, text, secs, _ = render(args.bin, model, body_path, DEFAULT)
        out = subprocess.run([args.bin, "render", "--model", f"m={model}", "--no-native-templates",
                              "--max-model-len", "10000000", body_path], capture_output=True, check=True)
        tokens = len(json.loads(out.stdout)["token_ids"])
        print(f"| {name} | {tokens:,} | {need:,} | {DEFAULT / need:.1f}× | {secs:.2f} s |", flush=True)
        if need * 4 > DEFAULT:
            failures.append(f"{name} needs {need:,} fuel, more than a quarter of the default")

    doubling = ("{% set s = namespace(v='abcdefghijklmnopqrstuvwxyz0123456789') %}"
                "{% for i in range(64) %}{% set s.v = s.v ~ s.v %}{% endfor %}{{ s.v }}")
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "chat_template": doubling}
    dpath = os.path.join(work, "doubling.json")
    with open(dpath, "w") as f:
        json.dump(body, f)
    ok, text, secs, rss = render(args.bin, os.path.join(ROOT, "fixtures/models/qwen3"), dpath, DEFAULT,
                                 ["--trust-request-chat-template"])
    stopped = not ok and "--template-fuel" in text
    body["chat_template"] = "{{ messages[0].content }}"
    with open(dpath, "w") as f:
        json.dump(body, f)
    base_rss = render(args.bin, os.path.join(ROOT, "fixtures/models/qwen3"), dpath, DEFAULT,
                      ["--trust-request-chat-template"])[3]
    print(f"\n2. A request template doubling a string 64 times, default fuel {DEFAULT:,}: "
          f"{'stopped by fuel' if stopped else 'NOT stopped by fuel'} after {secs:.2f} s (the whole "
          f"command), peak RSS {rss:,.0f} MiB against {base_rss:,.0f} MiB for a one-line template: "
          f"{text.strip().splitlines()[-1][:160] if text.strip() else ''}")
    if not stopped:
        failures.append("the doubling template was not stopped by fuel")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
