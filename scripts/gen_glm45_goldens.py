"""glm45 tool-parser goldens from vLLM 0.33's own parser class, called in process.

There is no GLM tokenizer among the fixtures, and vLLM's render server, given Qwen3's
vocabulary with GLM's markers added, drops every call that has arguments (its derender path
starts the GLM engine in another state than its parser API does). So this script calls
`Glm47MoeModelToolParser` (what `--tool-call-parser glm45` selects) directly on that
synthetic tokenizer:
  * `nonstream`: `extract_tool_calls(text)`;
  * `stream`: `extract_tool_calls_streaming` one token at a time, then `finish_streaming`,
    deltas concatenated.
One JSON line per case: {"id", "text", "tools", "nonstream", "stream"}, each result
{"content", "calls": [{"name", "arguments"}]}. The parsers are text state machines, so
`tests/glm45_vllm_goldens.rs` compares at the text level.

Usage: bench-peers/vllmenv/bin/python scripts/gen_glm45_goldens.py fixtures/goldens/derender/glm45.jsonl
"""
import gzip, json, os, shutil, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_tool_parser_goldens import TOOLS  # noqa: E402

GLM_TOKENS = ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
              "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"]

CASES = [
    ("typed", "I'll check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n<arg_key>metric</arg_key>\n<arg_value>true</arg_value>\n<arg_key>ratio</arg_key>\n<arg_value>2.5</arg_value>\n</tool_call>"),
    ("compact", "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value><arg_key>opts</arg_key><arg_value>{\"unit\": \"C\", \"hours\": [1, 2]}</arg_value></tool_call>"),
    ("two_calls", "<tool_call>now</tool_call><tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value></tool_call>"),
    ("no_args", "<tool_call>now\n</tool_call>"),
    ("multiline_string", "<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>/tmp/a.py</arg_value>\n<arg_key>content</arg_key>\n<arg_value>print(\"hi\")\nx = 1\n</arg_value>\n</tool_call>"),
    ("undeclared_param", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Lima</arg_value>\n<arg_key>extra</arg_key>\n<arg_value>42</arg_value>\n</tool_call>"),
    ("loose_values", "<tool_call>get_weather\n<arg_key>metric</arg_key>\n<arg_value>yes</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3.0</arg_value>\n<arg_key>ratio</arg_key>\n<arg_value>1e20</arg_value>\n<arg_key>city</arg_key>\n<arg_value>null</arg_value>\n</tool_call>"),
    ("float_forms", "<tool_call>get_weather\n<arg_key>ratio</arg_key>\n<arg_value>0.00001</arg_value>\n<arg_key>opts</arg_key>\n<arg_value>{\"eps\": 1.5e-7, \"big\": 1e16}</arg_value>\n</tool_call>"),
    ("unicode", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>東京 🌧 \"quoted\"</arg_value>\n<arg_key>days</arg_key>\n<arg_value>３</arg_value>\n</tool_call>"),
    ("no_call", "Nothing to call here."),
    ("text_after", "<tool_call>now</tool_call>\nDone."),
    ("unknown_tool", "<tool_call>launch_rocket\n<arg_key>when</arg_key>\n<arg_value>now</arg_value>\n</tool_call>"),
    ("unknown_then_known", "<tool_call>launch_rocket</tool_call><tool_call>now</tool_call>"),
    ("repeated_key", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>A</arg_value>\n<arg_key>city</arg_key>\n<arg_value>B</arg_value>\n</tool_call>"),
    ("unclosed", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par"),
]


def synthetic_dir():
    """Qwen3's fixture with GLM's markers added as tokens after its own."""
    d = tempfile.mkdtemp(prefix="glm45-")
    src = os.path.join(ROOT, "fixtures/models/qwen3")
    t = json.load(gzip.open(os.path.join(src, "tokenizer.json.gz")))
    nid = max(a["id"] for a in t["added_tokens"]) + 1
    for i, c in enumerate(GLM_TOKENS):
        t["added_tokens"].append({"id": nid + i, "content": c, "single_word": False, "lstrip": False,
                                  "rstrip": False, "normalized": False, "special": False})
    json.dump(t, open(os.path.join(d, "tokenizer.json"), "w"))
    for f in ["config.json", "tokenizer_config.json", "generation_config.json"]:
        shutil.copy(os.path.join(src, f), d)
    return d


def result(content, calls):
    return {"content": content or "", "calls": calls}


def main():
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.tokenizers import get_tokenizer
    from vllm.tool_parsers.glm47_moe_tool_parser import Glm47MoeModelToolParser

    d = synthetic_dir()
    try:
        tok = get_tokenizer(d)
        req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "go"}], tools=TOOLS)
        out = open(sys.argv[1], "w")
        for cid, text in CASES:
            r = Glm47MoeModelToolParser(tok, TOOLS).extract_tool_calls(text, req)
            nonstream = result(r.content, [{"name": c.function.name, "arguments": c.function.arguments}
                                           for c in r.tool_calls])
            p = Glm47MoeModelToolParser(tok, TOOLS)
            ids = tok.encode(text, add_special_tokens=False)
            content, calls, prev_text, prev_ids = "", [], "", []
            deltas = []
            for i in range(len(ids)):
                cur_ids = ids[: i + 1]
                cur_text = tok.decode(cur_ids)
                # Hold a token that ends inside a character, as vLLM's detokenizer does.
                if cur_text.endswith("\ufffd") and i + 1 < len(ids):
                    continue
                deltas.append(p.extract_tool_calls_streaming(prev_text, cur_text, cur_text[len(prev_text):],
                                                             prev_ids, cur_ids, ids[len(prev_ids) : i + 1], req))
                prev_text, prev_ids = cur_text, cur_ids
            deltas.append(p.finish_streaming())
            for dm in deltas:
                if dm is None:
                    continue
                content += dm.content or ""
                for tc in dm.tool_calls or []:
                    while len(calls) <= tc.index:
                        calls.append({"name": "", "arguments": ""})
                    f = tc.function
                    if f is not None:
                        calls[tc.index]["name"] += f.name or ""
                        calls[tc.index]["arguments"] += f.arguments or ""
            stream = result(content, [c for c in calls if c["name"] or c["arguments"]])
            out.write(json.dumps({"id": cid, "text": text, "tools": TOOLS, "nonstream": nonstream,
                                  "stream": stream}, ensure_ascii=False) + "\n")
            print(cid, "same" if nonstream == stream else "stream != nonstream", flush=True)
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
