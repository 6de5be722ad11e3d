#!/usr/bin/env python3
"""The sidecar's front door against the same vLLM engine's own OpenAI server: each request
goes to `llm-render serve --engine` (render → the engine's `/inference/v1/generate` →
derender) and to the engine's own `/v1/completions`, `/v1/chat/completions`,
`/v1/responses` or `/v1/messages` (vLLM's coupled path), greedy. Cases: `echo` and
`prompt_logprobs`, the settings and logprobs a Response carries, and the cached prompt
tokens each API's usage reports (a prompt sent before, streamed and not). The
answers must be equal but for ids and timestamps (a case may name the keys it compares,
where the two vLLM versions differ elsewhere: the engine is 0.32, our derender follows 0.33), and for the one alternative per generated token that the generate
route drops from a completion's `top_logprobs` (`as_generate_route`).

    ../shared/engines/vllm_cpu.sh install /tmp/vllm-cpu
    ../shared/engines/vllm_cpu.sh serve /tmp/vllm-cpu 18500 --enforce-eager --enable-prompt-tokens-details &
    cargo build --release
    python3 scripts/front_vs_vllm.py [--engine http://127.0.0.1:18500] [--record]

`--record` also writes `fixtures/goldens/front/coupled.json`: per case, the request, what the
engine's generate route answered for the render's request (the scripted engine of
`tests/sidecar_vs_vllm.rs` replays it) and vLLM's own answer (its compared keys). Exits 1 on the first difference.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from multi_replica import free_port  # noqa: E402
PROMPT = "The capital of France is"
IDS = [785, 6722, 315, 9625, 374]
CHAT = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "The answer is"}]
LONG = [{"role": "user", "content": " ".join(f"word{i}" for i in range(200))}]

# What a Response echoes from its sampling parameters, and its output (vLLM 0.32's message
# item says `completed` where 0.33's, which we follow, says `incomplete` for a length cut).
RESPONSE_KEYS = ["temperature", "top_p", "max_output_tokens", "status", "incomplete_details",
                 "usage", "tool_choice", "parallel_tool_calls", "top_logprobs"]

CASES = [
    ("completion_echo_logprobs", "completions", {"prompt": PROMPT, "max_tokens": 3, "logprobs": 1, "echo": True}),
    ("completion_echo_max_tokens_0", "completions", {"prompt": PROMPT, "max_tokens": 0, "logprobs": 1, "echo": True}),
    ("completion_echo_text_only", "completions", {"prompt": PROMPT, "max_tokens": 3, "echo": True}),
    ("completion_echo_ids_logprobs_2", "completions", {"prompt": IDS, "max_tokens": 2, "logprobs": 2, "echo": True}),
    ("completion_echo_logprobs_0", "completions", {"prompt": PROMPT, "max_tokens": 2, "logprobs": 0, "echo": True}),
    ("completion_prompt_logprobs", "completions", {"prompt": PROMPT, "max_tokens": 2, "prompt_logprobs": 2}),
    ("chat_echo_continue", "chat/completions", {"messages": CHAT, "max_tokens": 3, "echo": True,
                                                "add_generation_prompt": False, "continue_final_message": True}),
    # Streamed echo: compared on the folded stream (each choice's text or content, its
    # logprobs lists joined, its finish reason) and its usage; the engine's events are
    # chunked differently on the two paths (an echo with logprobs is asked of the generate
    # route whole, which alone carries the prompt's logprobs).
    ("completion_echo_stream_logprobs", "completions", {"prompt": PROMPT, "max_tokens": 3, "logprobs": 1, "echo": True,
                                                        "stream": True, "stream_options": {"include_usage": True}},
     ["choices", "usage"]),
    ("completion_echo_stream_text", "completions", {"prompt": PROMPT, "max_tokens": 3, "echo": True,
                                                    "stream": True, "stream_options": {"include_usage": True}},
     ["choices", "usage"]),
    ("completion_echo_stream_max_tokens_0", "completions", {"prompt": PROMPT, "max_tokens": 0, "logprobs": 1,
                                                            "echo": True, "stream": True,
                                                            "stream_options": {"include_usage": True}},
     ["choices", "usage"]),
    ("chat_echo_stream_continue", "chat/completions", {"messages": CHAT, "max_tokens": 3, "echo": True, "stream": True,
                                                       "add_generation_prompt": False, "continue_final_message": True},
     ["choices"]),
    ("chat_prompt_logprobs", "chat/completions", {"messages": CHAT[:1], "max_tokens": 2, "prompt_logprobs": 1}),
    # No temperature: the model's generation_config.json defaults (0.6, top_p 0.95).
    ("responses_generation_defaults", "responses", {"input": "Hi", "max_output_tokens": 3, "temperature": None}, RESPONSE_KEYS),
    ("responses_greedy", "responses", {"input": "Hi", "max_output_tokens": 3, "top_p": 0.5}, RESPONSE_KEYS),
    ("responses_sampled", "responses", {"input": "Hi", "max_output_tokens": 3, "temperature": 0.3, "top_p": 0.5, "seed": 1}, RESPONSE_KEYS),
    ("responses_logprobs", "responses", {"input": "Hi", "max_output_tokens": 3, "top_logprobs": 2,
                                          "include": ["message.output_text.logprobs"]},
     ["output.0.content.0.logprobs", "top_logprobs"]),
    ("responses_logprobs_top_0", "responses", {"input": "Hi", "max_output_tokens": 3,
                                               "include": ["message.output_text.logprobs"]},
     ["output.0.content.0.logprobs", "top_logprobs"]),
    ("messages_usage", "messages", {"messages": CHAT[:1], "max_tokens": 3}, ["content", "stop_reason", "usage", "type", "role"]),
    # A prompt past one KV block (128 tokens on the CPU engine) sent before: the engine's
    # prefix cache holds its full blocks, which every API's usage reports its own way (the
    # engine runs with --enable-prompt-tokens-details).
    ("chat_cached", "chat/completions", {"messages": LONG, "max_tokens": 2}, ["usage"], "warm"),
    ("chat_cached_stream", "chat/completions", {"messages": LONG, "max_tokens": 2, "stream": True,
                                                "stream_options": {"include_usage": True}}, ["usage"], "warm"),
    ("completion_cached", "completions", {"prompt": LONG[0]["content"], "max_tokens": 2}, ["usage"], "warm"),
    ("messages_cached", "messages", {"messages": LONG, "max_tokens": 2}, ["usage"], "warm"),
    ("messages_cached_stream", "messages", {"messages": LONG, "max_tokens": 2, "stream": True}, ["usage"], "warm"),
    ("responses_cached", "responses", {"input": LONG[0]["content"], "max_output_tokens": 2}, ["usage"], "warm"),
]

# Fields that differ by construction (ids, clocks, the server's fingerprint), and the
# tokens written to the cache (`created_cache_tokens`, Anthropic's
# `cache_creation_input_tokens`): vLLM's coupled server writes its count (0 without a KV
# connector), its generate route carries none, so the front door leaves it out rather than
# claim one.
VOLATILE = {"id", "created", "system_fingerprint", "service_tier", "model",
            "created_cache_tokens", "cache_creation_input_tokens"}


def as_generate_route(body, answer):
    """vLLM's coupled answer as its generate route can carry it: that route cuts each
    generated token's alternatives to the first max(N, 1) (`_create_tokens_logprobs`, the
    chat convention), where `/v1/completions` lists N + 1; no derender behind it (vLLM's
    own included) can give the one it drops. The prompt's positions come whole
    (`prompt_logprobs`)."""
    n = body.get("logprobs")
    if not isinstance(n, int) or n < 0 or "choices" not in answer or "text" not in answer["choices"][0]:
        return answer
    first = answer["usage"]["prompt_tokens"] if body.get("echo") else 0
    for c in answer["choices"]:
        tops = (c.get("logprobs") or {}).get("top_logprobs") or []
        for i in range(first, len(tops)):
            if tops[i] is not None:
                tops[i] = dict(list(tops[i].items())[:max(n, 1)])
    return answer


def pick(v, path):
    """The value at a dotted path (`output.0.content.0.logprobs`), None when absent."""
    for part in path.split("."):
        if isinstance(v, list) and part.isdigit() and int(part) < len(v):
            v = v[int(part)]
        elif isinstance(v, dict):
            v = v.get(part)
        else:
            return None
    return v


def folded(sse):
    """A stream as `{"usage": …, "choices": […]}`: its final usage, the last `data:` event's
    that has one (chat and completions' usage chunk, Messages' `message_delta`), or the last
    event's `response.usage` (Responses); and its chat or completion choices folded: per
    index, the text (`text`, or the delta's `content`) joined, the logprobs' lists joined,
    the last finish reason."""
    usage = None
    choices = {}
    for line in sse.decode().splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        e = json.loads(line[6:])
        usage = e.get("usage") or (e.get("response") or {}).get("usage") or usage
        for c in e.get("choices") or []:
            f = choices.setdefault(c["index"], {"index": c["index"]})
            key, text = ("text", c["text"]) if "text" in c else ("content", (c.get("delta") or {}).get("content"))
            f[key] = f.get(key, "") + (text or "")
            for k, v in (c.get("logprobs") or {}).items():
                f.setdefault("logprobs", {}).setdefault(k, []).extend(v or [])
            if c.get("finish_reason") is not None:
                f["finish_reason"] = c["finish_reason"]
    out = {"usage": usage}
    if choices:
        out["choices"] = [choices[i] for i in sorted(choices)]
    return out


def post(url, body):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            if body.get("stream") and not url.endswith("/render"):
                return r.status, folded(r.read())
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in VOLATILE and x is not None}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def diff(a, b, at=""):
    """The first path where `a` (vLLM) and `b` (ours) differ; keys only ours has are extras
    of our answer (`reasoning`, `continuation`, …) and are not compared."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if k not in b:
                return f"{at}.{k}: vLLM {json.dumps(a[k])[:200]}, ours absent"
            d = diff(a[k], b[k], f"{at}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{at}: vLLM {len(a)} items, ours {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = diff(x, y, f"{at}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{at}: vLLM {json.dumps(a)[:200]}, ours {json.dumps(b)[:200]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="http://127.0.0.1:18500")
    ap.add_argument("--binary", default=f"{ROOT}/target/release/llm-render")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    port = free_port()
    server = subprocess.Popen(
        [args.binary, "serve", "--port", str(port), "--engine", args.engine, "--engine-model",
         "tiny-qwen3", "--reasoning-parser", "none", "--model", f"tiny-qwen3={ROOT}/fixtures/models/qwen3"],
        stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    recorded = []
    bad = 0
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/health")
                break
            except Exception:
                time.sleep(0.05)
        for name, route, extra, *keys in CASES:
            body = {k: v for k, v in dict({"model": "tiny-qwen3", "temperature": 0}, **extra).items()
                    if v is not None}
            if keys[1:] == ["warm"]:
                post(f"{args.engine}/v1/{route}", dict(body, stream=False))
            vs, theirs = post(f"{args.engine}/v1/{route}", body)
            theirs = as_generate_route(body, theirs)
            os_, ours = post(f"{base}/v1/{route}", body)
            if keys and vs == 200:
                theirs = {k: pick(theirs, k) for k in keys[0]}
                ours = {k: pick(ours, k) for k in keys[0]}
            d = f"status vLLM {vs}, ours {os_}: {json.dumps(ours)[:300]}" if vs != os_ else diff(strip(theirs), strip(ours))
            print(("same " if not d else "DIFF ") + name + ("" if not d else f": {d}"))
            bad += bool(d)
            if args.record:
                # What the engine's generate route answers for the render's request.
                render_route = {"completions": "completions/render", "responses": "responses/render",
                                "messages": "messages/render"}.get(route, "chat/completions/render")
                _, g = post(f"{base}/v1/{render_route}", body)
                g = g[0] if isinstance(g, list) else g
                g["stream"] = False
                g.pop("stream_options", None)
                g["sampling_params"]["output_kind"] = 2
                _, engine = post(f"{args.engine}/inference/v1/generate", g)
                recorded.append({"name": name, "route": route, "request": body,
                                 "engine": engine, "vllm": theirs})
    finally:
        server.terminate()
        server.wait()
    if args.record:
        out = f"{ROOT}/fixtures/goldens/front/coupled.json"
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as f:
            json.dump({"source": "scripts/front_vs_vllm.py --record, vLLM 0.32 CPU engine "
                       "(../shared/engines), tiny random-weight Qwen3, greedy",
                       "cases": recorded}, f, indent=1)
            f.write("\n")
    print(f"{len(CASES) - bad} of {len(CASES)} equal")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
