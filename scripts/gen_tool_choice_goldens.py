"""Goldens for `tool_choice` → `sampling_params.structured_outputs` (and `skip_special_tokens`),
from vLLM 0.33's own render server: the Qwen3 fixture served with each tool parser whose
constraint llm-render reproduces (hermes: a structural tag; pythonic: a JSON schema), every
`tool_choice` with and without `parallel_tool_calls: false` and `response_format`, with plain
and strict tools. Written to fixtures/goldens/tool_choice/structured_outputs.jsonl, one line
per request: {"parser", "request", "status", "structured_outputs", "skip_special_tokens"}
(a field vLLM leaves out is written with its default). tests/tool_choice_goldens.rs replays them.

Setup: as scripts/sampling_params_vs_vllm.py.
Usage: bench-peers/vllmenv/bin/python scripts/gen_tool_choice_goldens.py
"""
import http.client, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import ROOT, vllm_render  # noqa: E402

PORT = 31781
OUT = os.path.join(ROOT, "fixtures/goldens/tool_choice/structured_outputs.jsonl")
PLAIN = [
    {"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}},
    {"type": "function", "function": {"name": "g", "description": "G", "parameters": {
        "type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}, "$defs": {"X": {"type": "string"}}}}},
]
STRICT = [PLAIN[0], {"type": "function", "function": {"name": "h", "strict": True, "parameters": {
    "type": "object", "properties": {"y": {"type": "string", "description": "naïve ☕"}}}}},
    {"type": "function", "function": {"name": "e", "strict": True}}]
CHOICES = [None, "auto", "required", "none",
           {"type": "function", "function": {"name": "f"}},
           {"type": "function", "function": {"name": "g"}}]
VARIANTS = [{}, {"parallel_tool_calls": False}, {"response_format": {"type": "json_object"}},
            {"parallel_tool_calls": False, "response_format": {"type": "json_object"}}]


def post(body):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
    c.request("POST", "/v1/chat/completions/render", json.dumps(body), {"content-type": "application/json"})
    r = c.getresponse()
    return r.status, json.loads(r.read())


def main():
    lines = []
    for parser in ["hermes", "pythonic"]:
        args = ["--served-model-name", "qwen3", "--enable-auto-tool-choice", "--tool-call-parser", parser]
        with vllm_render("qwen3", PORT, args, log=f"/tmp/vllm_tool_choice_{parser}.log"):
            for tools in (PLAIN, STRICT):
                for choice in CHOICES:
                    if isinstance(choice, dict) and choice["function"]["name"] not in [
                            t["function"]["name"] for t in tools]:
                        choice = {"type": "function", "function": {"name": tools[-1]["function"]["name"]}}
                    for variant in VARIANTS:
                        body = {"model": "qwen3", "messages": [{"role": "user", "content": "hi"}],
                                "tools": tools, **variant}
                        if choice is not None:
                            body["tool_choice"] = choice
                        status, out = post(body)
                        sp = out.get("sampling_params", {}) if status == 200 else {}
                        lines.append({"parser": parser, "request": body, "status": status,
                                      "structured_outputs": sp.get("structured_outputs"),
                                      "skip_special_tokens": sp.get("skip_special_tokens", True)})
                        print(parser, status, json.dumps(body)[60:150], flush=True)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"{len(lines)} goldens -> {OUT}")


if __name__ == "__main__":
    main()
