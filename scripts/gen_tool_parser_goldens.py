"""Tool-parser goldens made by vLLM 0.33's own derender (`vllm launch render`, CPU only).

For each tool-call parser that has a fixture tokenizer, starts vLLM's render server with that
parser, tokenizes each model output with the fixture tokenizer, and records what vLLM returns:
  * `nonstream`: POST /v1/chat/completions/derender with the whole output;
  * `stream`: the same IDs one per request with the returned `stream_state`, deltas
    concatenated (reasoning, content, each call's name and arguments).
One JSON line per case: {"parser", "reasoning_parser", "model", "id", "text", "token_ids",
"tools", "nonstream", "stream"}; each result is {"content", "reasoning", "calls": [{"name",
"arguments"}]}.

Setup: python3 -m venv bench-peers/vllmenv && bench-peers/vllmenv/bin/pip install vllm==0.33.0
Usage: bench-peers/vllmenv/bin/python scripts/gen_tool_parser_goldens.py fixtures/goldens/tool_parsers.jsonl
"""
import http.client, json, os, sys

from tokenizers import Tokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import vllm_render  # noqa: E402

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
    ("float_forms", "<tool_call>\n<function=get_weather>\n<parameter=ratio>\n0.00001\n</parameter>\n<parameter=opts>\n{\"eps\": 1.5e-7, \"big\": 1e16, \"mid\": 1e15, \"neg\": -2.5e-10, \"two\": 2.0}\n</parameter>\n</function>\n</tool_call>"),
    ("large_numbers", "<tool_call>\n<function=get_weather>\n<parameter=days>\n12345678901234567890123\n</parameter>\n<parameter=ratio>\n1e20\n</parameter>\n</function>\n</tool_call>"),
    ("repeated_parameter", "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n2\n</parameter>\n<parameter=city>\nBergen\n</parameter>\n</function>\n</tool_call>"),
    ("loose_values", "<tool_call>\n<function=get_weather>\n<parameter=metric>\nyes\n</parameter>\n<parameter=days>\n3.0\n</parameter>\n<parameter=ratio>\ninf\n</parameter>\n<parameter=city>\nnull\n</parameter>\n</function>\n</tool_call>"),
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
    ("float_forms", "[get_weather(ratio=1.5e-07, opts={'big': 1e16, 'mid': 1e15, 'small': 0.00001, 'neg': -2.5e-10, 'two': 2.0})]"),
    ("number_literals", "[get_weather(days=1_000, ratio=1_0.2_5e1_0, opts={'hex': 0x1F, 'oct': 0o17, 'bin': -0b101, 'zero': 0_0, 'plus': +5, 'dot': 5., 'lead': .5})]"),
    ("misplaced_separator", "[get_weather(days=1__0)]"),
    ("leading_zero", "[get_weather(days=007)]"),
]

QWEN3_REASONING = [
    ("think_then_answer", "<think>\nThe user wants Paris.\n</think>\n\nIt is mild in Paris."),
    ("think_then_call", "<think>\nI need the tool.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"),
    ("never_closed", "<think>\nStill thinking about the weather in"),
    ("no_tags", "Plain answer without any thinking."),
    ("call_ends_reasoning", "I should call it.\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>"),
]

# (model, tool parser, reasoning parser, cases)
SUITES = [
    ("qwen3", "hermes", None, HERMES),
    ("qwen3", "qwen3_coder", None, QWEN3_CODER),
    ("llama3_1", "llama3_json", None, LLAMA3_JSON),
    ("llama3_1", "pythonic", None, PYTHONIC),
    ("qwen3", "hermes", "qwen3", QWEN3_REASONING),
]


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


def result(content, calls, reasoning=""):
    return {"content": content or "", "reasoning": reasoning or "",
            "calls": [{"name": c["name"], "arguments": c["arguments"]} for c in calls]}


# The end of each model's generation prompt (vLLM reads the prompt to see whether the
# template left reasoning open; these leave it closed).
PROMPT_TEXT = {"qwen3": "<|im_start|>assistant\n", "llama3_1": "<|start_header_id|>assistant<|end_header_id|>\n\n"}


def run_case(client, ids, prompt):
    chat = {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": TOOLS}
    out = client.post({"model": "m", "stream": False, "prompt_token_ids": prompt, "chat_request": chat,
                       "generate_response": {"choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}]}})
    msg = out["choices"][0]["message"]
    nonstream = result(msg.get("content"), [c["function"] for c in msg.get("tool_calls") or []],
                       msg.get("reasoning_content") or msg.get("reasoning"))
    state, content, calls, reasoning = None, "", [], ""
    for i, t in enumerate(ids):
        last = i + 1 == len(ids)
        out = client.post({"model": "m", "stream": True, "stream_state": state, "prompt_token_ids": prompt,
                           "chat_request": chat, "generate_chunk": {"choices": [
                               {"index": 0, "token_ids": [t], "finish_reason": "stop" if last else None}]}})
        state = out["stream_state"]
        for ch in out["chunk"]["choices"]:
            d = ch.get("delta") or {}
            content += d.get("content") or ""
            reasoning += d.get("reasoning_content") or d.get("reasoning") or ""
            for tc in d.get("tool_calls") or []:
                while len(calls) <= tc["index"]:
                    calls.append({"name": "", "arguments": ""})
                f = tc.get("function") or {}
                calls[tc["index"]]["name"] += f.get("name") or ""
                calls[tc["index"]]["arguments"] += f.get("arguments") or ""
    return nonstream, result(content, calls, reasoning)


def main():
    out = open(sys.argv[1], "w")
    for model, parser, reasoning, cases in SUITES:
        args = ["--served-model-name", "m", "--tool-call-parser", parser, "--enable-auto-tool-choice"]
        args += ["--reasoning-parser", reasoning] if reasoning else []
        with vllm_render(model, PORT, args, CONFIGS.get(model), log=f"/tmp/vllm_{parser}.log") as d:
            tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
            client = Client()
            for cid, text in cases:
                ids = tok.encode(text, add_special_tokens=False).ids
                prompt = tok.encode(PROMPT_TEXT[model], add_special_tokens=False).ids
                nonstream, stream = run_case(client, ids, prompt)
                out.write(json.dumps({"parser": parser, "reasoning_parser": reasoning or "none",
                                      "model": model, "id": cid, "text": text, "prompt_token_ids": prompt,
                                      "token_ids": ids, "tools": TOOLS, "nonstream": nonstream, "stream": stream},
                                     ensure_ascii=False) + "\n")
                print(parser, cid, "same" if nonstream == stream else "stream != nonstream", flush=True)


if __name__ == "__main__":
    main()
