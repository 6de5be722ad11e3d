"""Tool-parser goldens made by vLLM 0.33's own derender (`vllm launch render`, CPU only).

For each tool-call parser that has a fixture tokenizer, starts vLLM's render server with that
parser, tokenizes each model output with the fixture tokenizer, and records what vLLM returns:
  * `nonstream`: POST /v1/chat/completions/derender with the whole output;
  * `stream`: the same IDs one per request with the returned `stream_state`, deltas
    concatenated (reasoning, content, each call's name and arguments).
One JSON line per case: {"parser", "model", "id", "text", "token_ids", "tools", "nonstream",
"stream"}; each result is {"content", "calls": [{"name", "arguments"}]}.

Setup: python3 -m venv bench-peers/vllmenv && bench-peers/vllmenv/bin/pip install vllm==0.33.0
Usage: bench-peers/vllmenv/bin/python scripts/gen_tool_parser_goldens.py fixtures/goldens/tool_parsers.jsonl
"""
import gzip, http.client, json, os, shutil, subprocess, sys, tempfile, time

from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VLLM = os.path.join(ROOT, "bench-peers/vllmenv/bin/vllm")
PORT = 31733


def fn(name, props):
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": props}}}


TOOLS = [
    fn("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"},
                       "metric": {"type": "boolean"}, "ratio": {"type": "number"},
                       "opts": {"type": "object"}}),
    fn("write_file", {"path": {"type": "string"}, "content": {"type": "string"}}),
    fn("now", {}),
]

# Minimal configs for fixtures without one: vLLM's render server reads only these fields.
CONFIGS = {
    "llama3_1": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 128256,
                 "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                 "num_key_value_heads": 8, "intermediate_size": 14336, "max_position_embeddings": 131072,
                 "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009]},
}

HERMES = [
    ("one_call", "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>"),
    ("two_calls", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"東京 🌧\", \"opts\": {\"a\": [1, 2.5, null]}}}\n</tool_call>\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>"),
    ("escaped", "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"/tmp/a.txt\", \"content\": \"say \\\"hi\\\"\\n\\tand </tool_call> too\"}}\n</tool_call>"),
    ("malformed", "<tool_call>\nnot json at all\n</tool_call>"),
    ("no_call", "The weather in Paris is mild; no tool needed."),
    ("compact_json", "<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}</tool_call>"),
]
QWEN3_CODER = [
    ("typed", "I'll check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=metric>\ntrue\n</parameter>\n<parameter=ratio>\n2.5\n</parameter>\n</function>\n</tool_call>"),
    ("multiline_string", "<tool_call>\n<function=write_file>\n<parameter=path>\n/tmp/a.py\n</parameter>\n<parameter=content>\nprint(\"hi\")\nx = 1\n</parameter>\n</function>\n</tool_call>"),
    ("two_calls", "<tool_call>\n<function=now>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>"),
    ("object_param", "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=opts>\n{\"unit\": \"C\", \"hours\": [1, 2]}\n</parameter>\n</function>\n</tool_call>"),
    ("no_call", "Nothing to call here."),
]
LLAMA3_JSON = [
    ("python_tag", "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"days\": 3}}"),
    ("bare_json", "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Lima\"}}"),
    ("arguments_key", "{\"name\": \"now\", \"arguments\": {}}"),
    ("no_call", "It is sunny in Lima today."),
]
PYTHONIC = [
    ("two_calls", "[get_weather(city='San Francisco', days=3, metric=True), now()]"),
    ("nested", "[get_weather(city=\"Paris\", opts={'a': [1, 2.5, None], 'b': 'x'})]"),
    ("no_call", "No calls needed."),
]

SUITES = [
    ("qwen3", "hermes", HERMES),
    ("qwen3", "qwen3_coder", QWEN3_CODER),
    ("llama3_1", "llama3_json", LLAMA3_JSON),
    ("llama3_1", "pythonic", PYTHONIC),
]


def model_dir(name):
    d = tempfile.mkdtemp(prefix=f"{name}-")
    src = os.path.join(ROOT, "fixtures/models", name)
    for f in os.listdir(src):
        if f.endswith(".gz"):
            with gzip.open(os.path.join(src, f)) as a, open(os.path.join(d, f[:-3]), "wb") as b:
                shutil.copyfileobj(a, b)
        else:
            shutil.copy(os.path.join(src, f), d)
    if name in CONFIGS and not os.path.exists(os.path.join(d, "config.json")):
        json.dump(CONFIGS[name], open(os.path.join(d, "config.json"), "w"))
    return d


class Client:
    def __init__(self):
        self.c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)

    def post(self, body):
        self.c.request("POST", "/v1/chat/completions/derender", json.dumps(body), {"Content-Type": "application/json"})
        r = self.c.getresponse()
        out = json.loads(r.read())
        if r.status != 200:
            raise RuntimeError(out)
        return out


def result(content, calls):
    return {"content": content or "", "calls": [{"name": c["name"], "arguments": c["arguments"]} for c in calls]}


def run_case(client, ids):
    chat = {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": TOOLS}
    prompt = [1, 2, 3]
    out = client.post({"model": "m", "stream": False, "prompt_token_ids": prompt, "chat_request": chat,
                       "generate_response": {"choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}]}})
    msg = out["choices"][0]["message"]
    nonstream = result(msg.get("content"), [c["function"] for c in msg.get("tool_calls") or []])
    state, content, calls = None, "", []
    for i, t in enumerate(ids):
        last = i + 1 == len(ids)
        out = client.post({"model": "m", "stream": True, "stream_state": state, "prompt_token_ids": prompt,
                           "chat_request": chat, "generate_chunk": {"choices": [
                               {"index": 0, "token_ids": [t], "finish_reason": "stop" if last else None}]}})
        state = out["stream_state"]
        for ch in out["chunk"]["choices"]:
            d = ch.get("delta") or {}
            content += d.get("content") or ""
            for tc in d.get("tool_calls") or []:
                while len(calls) <= tc["index"]:
                    calls.append({"name": "", "arguments": ""})
                f = tc.get("function") or {}
                calls[tc["index"]]["name"] += f.get("name") or ""
                calls[tc["index"]]["arguments"] += f.get("arguments") or ""
    return nonstream, result(content, calls)


def main():
    out = open(sys.argv[1], "w")
    for model, parser, cases in SUITES:
        d = model_dir(model)
        tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        proc = subprocess.Popen([VLLM, "launch", "render", d, "--port", str(PORT), "--served-model-name", "m",
                                 "--tool-call-parser", parser, "--enable-auto-tool-choice"],
                                env=dict(os.environ, VLLM_TARGET_DEVICE="cpu"),
                                stdout=subprocess.DEVNULL, stderr=open(f"/tmp/vllm_{parser}.log", "w"))
        try:
            for _ in range(600):
                try:
                    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=1)
                    c.request("GET", "/health")
                    if c.getresponse().status == 200:
                        break
                except OSError:
                    pass
                time.sleep(0.5)
            client = Client()
            for cid, text in cases:
                ids = tok.encode(text, add_special_tokens=False).ids
                nonstream, stream = run_case(client, ids)
                out.write(json.dumps({"parser": parser, "model": model, "id": cid, "text": text, "token_ids": ids,
                                      "tools": TOOLS, "nonstream": nonstream, "stream": stream},
                                     ensure_ascii=False) + "\n")
                print(parser, cid, "same" if nonstream == stream else "stream != nonstream", flush=True)
        finally:
            proc.terminate()
            proc.wait()
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
