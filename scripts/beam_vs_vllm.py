"""The `beam` constraint end to end against vLLM 0.33's own render server (`vllm launch render`,
CPU): the Qwen3 fixture with a Beam-style `response_template` (the beam goldens' `beam_json`)
in its `tokenizer_config.json`, served by both with `--reasoning-parser beam
--tool-call-parser beam`; each request's chat (and Responses) render must give the same
status, `sampling_params.structured_outputs` and `reasoning_ended` (a 400's `param` for a
refusal). Prints one line per case and a summary; exits 1 when a case differs.

Setup: python3 -m venv bench-peers/vllmenv && bench-peers/vllmenv/bin/pip install vllm==0.33.0;
cargo build --release (LLM_RENDER=<binary>, VLLM=<vllm script> to use others).
Usage: bench-peers/vllmenv/bin/python scripts/beam_vs_vllm.py
"""
import gzip, http.client, json, os, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vllm_peer  # noqa: E402
from vllm_peer import ROOT, model_dir, wait_healthy  # noqa: E402

VLLM_PORT, OURS_PORT = 31761, 31762
LLM_RENDER = os.environ.get("LLM_RENDER", vllm_peer.LLM_RENDER)
VLLM = os.environ.get("VLLM", vllm_peer.VLLM)


def template():
    with gzip.open(os.path.join(ROOT, "fixtures/goldens/beam_tags.jsonl.gz"), "rt") as f:
        for line in f:
            g = json.loads(line)
            if g.get("template") == "beam_json" and "spec" in g:
                return g["spec"]
    raise SystemExit("no beam_json template in the goldens")


W = {"type": "function", "function": {"name": "get_weather", "description": "Weather",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                    "days": {"type": "integer"}}, "required": ["city"]}}}
NOW = {"type": "function", "function": {"name": "now", "parameters": {"type": "object",
       "properties": {}}}}
STRICT = {"type": "function", "function": dict(W["function"], strict=True)}
BAD = {"type": "function", "function": {"name": "get-weather", "parameters": {}}}
MSG = [{"role": "user", "content": "weather in Paris?"}]
SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
CHAT = [
    ("plain", {}),
    ("thinking_off", {"chat_template_kwargs": {"enable_thinking": False}}),
    ("tools", {"tools": [W, NOW]}),
    ("tools_thinking_off", {"tools": [W, NOW], "chat_template_kwargs": {"enable_thinking": False}}),
    ("strict", {"tools": [STRICT, NOW]}),
    ("required", {"tools": [W, NOW], "tool_choice": "required"}),
    ("named", {"tools": [W, NOW], "tool_choice": {"type": "function", "function": {"name": "now"}}}),
    ("single", {"tools": [W, NOW], "parallel_tool_calls": False}),
    ("none", {"tools": [W, NOW], "tool_choice": "none"}),
    ("bad_name", {"tools": [BAD]}),
    ("json_object", {"response_format": {"type": "json_object"}}),
    ("json_schema", {"response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}}}),
    ("structural_tag", {"response_format": {"type": "structural_tag", "format": {"type": "const_string", "value": "ok"}}}),
    ("so_regex", {"structured_outputs": {"regex": "[a-z]+"}}),
    ("so_choice", {"tools": [W], "structured_outputs": {"choice": ["yes", "no"]}}),
    ("required_json", {"tools": [W], "tool_choice": "required", "response_format": {"type": "json_object"}}),
    ("no_reasoning", {"include_reasoning": False}),
    ("prefill", {"messages": MSG + [{"role": "assistant", "content": "<answer>Sun"}],
                 "add_generation_prompt": False, "continue_final_message": True}),
]
RESPONSES = [
    ("plain", {}),
    ("tools", {"tools": [{"type": "function", "name": "get_weather", "description": "Weather",
                          "parameters": W["function"]["parameters"]}]}),
    ("json_schema", {"text": {"format": {"type": "json_schema", "name": "a", "schema": SCHEMA}}}),
]


def post(port, path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    r = c.getresponse()
    return r.status, json.loads(r.read() or b"null")


def view(status, out):
    if status != 200:
        err = out.get("error", out) if isinstance(out, dict) else out
        return status, err.get("param") if isinstance(err, dict) else None
    sp = out["sampling_params"]
    so = sp.get("structured_outputs") or {}
    return status, {k: v for k, v in so.items() if v not in (None, False) and not k.startswith("_")}, \
        out.get("reasoning_ended"), sp.get("skip_special_tokens"), sp.get("spaces_between_special_tokens")


def main():
    d = model_dir("qwen3")
    cfg_path = os.path.join(d, "tokenizer_config.json")
    cfg = json.load(open(cfg_path))
    cfg["response_template"] = template()
    json.dump(cfg, open(cfg_path, "w"))
    parsers = ["--reasoning-parser", "beam", "--tool-call-parser", "beam"]
    theirs = subprocess.Popen([VLLM, "launch", "render", d, "--port", str(VLLM_PORT),
                               "--served-model-name", "qwen3", "--enable-auto-tool-choice", *parsers],
                              env=dict(os.environ, VLLM_TARGET_DEVICE="cpu"),
                              stdout=subprocess.DEVNULL, stderr=open("/tmp/vllm_beam.log", "w"))
    ours = subprocess.Popen([LLM_RENDER, "serve", "--port", str(OURS_PORT), "--model", f"qwen3={d}", *parsers],
                            stdout=subprocess.DEVNULL, stderr=open("/tmp/ours_beam.log", "w"))
    bad, n = 0, 0
    try:
        if not (wait_healthy(OURS_PORT, tries=300, pause=0.1) and wait_healthy(VLLM_PORT)):
            raise SystemExit("a server did not start (/tmp/vllm_beam.log, /tmp/ours_beam.log)")
        cases = [("chat/" + n_, "/v1/chat/completions/render", dict({"model": "qwen3", "messages": MSG}, **e)) for n_, e in CHAT]
        cases += [("responses/" + n_, "/v1/responses/render", dict({"model": "qwen3", "input": "weather in Paris?"}, **e)) for n_, e in RESPONSES]
        for name, path, body in cases:
            n += 1
            v, o = view(*post(VLLM_PORT, path, body)), view(*post(OURS_PORT, path, body))
            if v == o:
                tagged = len(v) > 2 and "structural_tag" in v[1]
                print(f"same {name}" + (" (tag)" if tagged else f" {v}"[:100]))
            else:
                bad += 1
                print(f"DIFF {name}:\n  vLLM {v}\n  ours {o}")
    finally:
        for p in (theirs, ours):
            p.terminate()
            p.wait()
        shutil.rmtree(d, ignore_errors=True)
    print(f"{n - bad} of {n} cases agree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
