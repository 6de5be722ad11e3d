"""Tool-parser goldens from vLLM 0.33's own parser classes, called in process.

For parsers whose model has no fixture tokenizer, or that vLLM's render server cannot run on
our fixtures: `ToolParserManager.get_tool_parser(name)` (what `--tool-call-parser name`
selects) is called directly, on the fixture tokenizer or on Qwen3's with the family's markers
added as tokens:
  * `nonstream`: `extract_tool_calls(text)`;
  * `stream`: `extract_tool_calls_streaming` one token at a time (a token that ends inside a
    character is held, as vLLM's detokenizer holds it), then `finish_streaming` where the
    parser has one, deltas concatenated.
vLLM's render server, given Qwen3's vocabulary with GLM's markers, dropped every glm45 call
that has arguments (its derender path starts the GLM engine in another state than the parser
API does), hence this script.
One JSON line per case: {"parser", "id", "text", "tools", "nonstream", "stream"}, each result
{"content", "calls": [{"name", "arguments"}]}; for reasoning parsers (deepseek_r1, on Qwen3's
vocabulary, which has the `<think>` tokens) {"reasoning_parser", "id", "text", "nonstream",
"stream"} with results {"content", "reasoning"}. The parsers are text state machines, so
`parsers/tests/vllm_direct_goldens.rs` compares at the text level.

Usage: bench-peers/vllmenv/bin/python scripts/gen_tool_parser_direct_goldens.py \
           fixtures/goldens/derender/tool_parsers_direct.jsonl
"""
import gzip, json, os, shutil, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_tool_parser_goldens import TOOLS  # noqa: E402

GLM_TOKENS = ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
              "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"]
KIMI_TOKENS = ["<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
               "<|tool_call_argument_begin|>", "<|tool_call_end|>"]

GLM45 = [
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

B, E, CB, CE, SEP = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
DEEPSEEK_V3 = [
    ("one_call", f"I'll look.{B}{CB}function{SEP}get_weather\n```json\n{{\"city\": \"Paris\", \"days\": 3}}\n```{CE}{E}"),
    ("two_calls", f"{B}{CB}function{SEP}get_weather\n```json\n{{\"city\": \"東京 🌧\"}}\n```{CE}\n{CB}function{SEP}now\n```json\n{{}}\n```{CE}{E}"),
    ("pretty_args", f"{B}{CB}function{SEP}get_weather\n```json\n{{\n  \"city\": \"Oslo\",\n  \"opts\": {{\"a\": [1, 2.5]}}\n}}\n```{CE}{E}"),
    ("no_call", "Just text."),
    ("text_after", f"{B}{CB}function{SEP}now\n```json\n{{}}\n```{CE}{E} done"),
    ("undeclared_tool", f"{B}{CB}function{SEP}launch\n```json\n{{\"x\": 1}}\n```{CE}{E}"),
]
DEEPSEEK_V31 = [
    ("one_call", f"I'll look.{B}{CB}get_weather{SEP}{{\"city\": \"Paris\", \"days\": 3}}{CE}{E}"),
    ("two_calls", f"{B}{CB}get_weather{SEP}{{\"city\": \"東京 🌧\"}}{CE}{CB}now{SEP}{{}}{CE}{E}"),
    ("no_call", "Just text."),
    ("text_after", f"{B}{CB}now{SEP}{{}}{CE}{E} done"),
    ("undeclared_tool", f"{B}{CB}launch{SEP}{{\"x\": 1}}{CE}{E}"),
]
KB, KE, KCB, KA, KCE = KIMI_TOKENS
KIMI_K2 = [
    ("one_call", f"I'll look.{KB}{KCB}functions.get_weather:0{KA}{{\"city\": \"Paris\", \"days\": 3}}{KCE}{KE}"),
    ("two_calls", f"{KB}{KCB}functions.get_weather:0{KA}{{\"city\": \"東京 🌧\"}}{KCE}{KCB}functions.now:1{KA}{{}}{KCE}{KE}"),
    ("no_call", "Just text."),
    ("text_after", f"{KB}{KCB}functions.now:0{KA}{{}}{KCE}{KE} done"),
    ("undeclared_tool", f"{KB}{KCB}functions.launch:0{KA}{{\"x\": 1}}{KCE}{KE}"),
    ("call_after_section", f"hi{KB}{KCB}functions.now:0{KA}{{}}{KCE}{KE} bye{KCB}functions.now:1{KA}{{}}{KCE}"),
    ("junk_in_section", f"{KB}oops{KCB}functions.now:0{KA}{{}}{KCE}{KE}"),
    ("empty_section", f"a{KB}{KE}b"),
    ("ws_before", f"\n\n{KB}{KCB}functions.now:0{KA}{{}}{KCE}{KE}"),
]

# Edge cases for the parsers the HTTP goldens (gen_tool_parser_goldens.py) cover.
HERMES = [
    ("ws_before", "\n\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>"),
    ("text_after", "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>\nDone."),
    ("undeclared_tool", "<tool_call>\n{\"name\": \"launch\", \"arguments\": {\"x\": 1}}\n</tool_call>"),
    ("between_calls", "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call> and <tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>"),
]
GLM45 += [("ws_before", "\n\n<tool_call>now</tool_call>")]
LLAMA3_JSON = [
    ("ws_before", "\n\n{\"name\": \"now\", \"parameters\": {}}"),
    ("text_before", "Sure: {\"name\": \"now\", \"parameters\": {}}"),
    ("two_calls", "<|python_tag|>{\"name\": \"now\", \"parameters\": {}}; {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}"),
    ("text_after", "<|python_tag|>{\"name\": \"now\", \"parameters\": {}} done"),
    ("not_a_call", "{\"answer\": 42}"),
]
QWEN3_CODER = [
    ("ws_before", "\n\n<tool_call>\n<function=now>\n</function>\n</tool_call>"),
    ("text_after", "<tool_call>\n<function=now>\n</function>\n</tool_call>\nDone."),
    ("undeclared_tool", "<tool_call>\n<function=launch>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>"),
]
PYTHONIC = [
    ("text_after", "[now()] done"),
    ("undeclared_tool", "[launch(x=1)]"),
    ("nested", "[get_weather(opts={'a': (1, 2), 'b': [True, None]})]"),
]

# (parser, fixture model, tokens added to it, whether to record the stream, cases).
SUITES = [
    ("glm45", "qwen3", GLM_TOKENS, True, GLM45),
    ("deepseek_v3", "deepseek_v3", [], True, DEEPSEEK_V3),
    ("deepseek_v31", "deepseek_v3", [], True, DEEPSEEK_V31),
    ("kimi_k2", "qwen3", KIMI_TOKENS, True, KIMI_K2),
    ("hermes", "qwen3", [], True, HERMES),
    ("qwen3_coder", "qwen3", [], True, QWEN3_CODER),
    ("pythonic", "llama3_1", [], True, PYTHONIC),
    ("llama3_json", "llama3_1", [], True, LLAMA3_JSON),
]


# config.json for fixtures without one. Without it, vLLM's get_tokenizer loads the DeepSeek-V3
# fixture with a decoder that leaves byte-level `Ġ`/`Ċ` in the text and turns `▁` into a
# space (transformers' LlamaTokenizerFast fallback); with the model type it decodes as the
# real model's folder does.
CONFIGS = {"deepseek_v3": {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3"}}


def model_dir(model, added):
    """A fixture model, with `added` appended as tokens after its own added tokens."""
    d = tempfile.mkdtemp(prefix=f"{model}-")
    src = os.path.join(ROOT, "fixtures/models", model)
    t = json.load(gzip.open(os.path.join(src, "tokenizer.json.gz")))
    nid = max(a["id"] for a in t["added_tokens"]) + 1
    for i, c in enumerate(added):
        t["added_tokens"].append({"id": nid + i, "content": c, "single_word": False, "lstrip": False,
                                  "rstrip": False, "normalized": False, "special": False})
    json.dump(t, open(os.path.join(d, "tokenizer.json"), "w"))
    for f in os.listdir(src):
        if not f.endswith(".gz"):
            shutil.copy(os.path.join(src, f), d)
    if model in CONFIGS and not os.path.exists(os.path.join(d, "config.json")):
        json.dump(CONFIGS[model], open(os.path.join(d, "config.json"), "w"))
    return d


def result(content, calls):
    return {"content": content or "", "calls": calls}


def run_suite(out, parser, model, added, with_stream, cases):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.tokenizers import get_tokenizer
    from vllm.tool_parsers import ToolParserManager

    cls = ToolParserManager.get_tool_parser(parser)
    d = model_dir(model, added)
    try:
        tok = get_tokenizer(d)
        req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "go"}], tools=TOOLS)
        for cid, text in cases:
            r = cls(tok, TOOLS).extract_tool_calls(text, req)
            nonstream = result(r.content, [{"name": c.function.name, "arguments": c.function.arguments}
                                           for c in r.tool_calls])
            p = cls(tok, TOOLS)
            ids = tok.encode(text, add_special_tokens=False)
            content, calls, prev_text, prev_ids, deltas = "", [], "", [], []
            for i in range(len(ids)):
                cur_ids = ids[: i + 1]
                cur_text = tok.decode(cur_ids)
                # Hold a token that ends inside a character, as vLLM's detokenizer does.
                if cur_text.endswith("\ufffd") and i + 1 < len(ids):
                    continue
                deltas.append(p.extract_tool_calls_streaming(prev_text, cur_text, cur_text[len(prev_text):],
                                                             prev_ids, cur_ids, ids[len(prev_ids) : i + 1], req))
                prev_text, prev_ids = cur_text, cur_ids
            if hasattr(p, "finish_streaming"):
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
            stream = result(content, [c for c in calls if c["name"] or c["arguments"]]) if with_stream else None
            out.write(json.dumps({"parser": parser, "id": cid, "text": text, "tools": TOOLS,
                                  "nonstream": nonstream, "stream": stream}, ensure_ascii=False) + "\n")
            print(parser, cid, "same" if nonstream == stream else "stream != nonstream" if stream else "", flush=True)
    finally:
        shutil.rmtree(d, ignore_errors=True)


DEEPSEEK_R1 = [
    ("think_then_answer", "<think>\nThe user wants Paris.\n</think>\n\nIt is mild."),
    ("no_start_tag", "Thinking without a start tag.</think>The answer."),
    ("never_closed", "Still thinking about"),
    ("text_before_start", "Preamble <think>inner</think>after"),
    ("empty_answer", "<think>only thoughts</think>"),
    ("two_ends", "a</think>b</think>c"),
    ("unicode", "思考 🤔</think>答え"),
]

# (reasoning parser, fixture model, cases): Qwen3's vocabulary has `<think>` tokens.
REASONING_SUITES = [("deepseek_r1", "qwen3", DEEPSEEK_R1), ("qwen3", "qwen3", DEEPSEEK_R1)]


def run_reasoning_suite(out, parser, model, cases):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.reasoning import ReasoningParserManager
    from vllm.tokenizers import get_tokenizer

    cls = ReasoningParserManager.get_reasoning_parser(parser)
    d = model_dir(model, [])
    try:
        tok = get_tokenizer(d)
        req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "go"}])
        for cid, text in cases:
            reasoning, content = cls(tok).extract_reasoning(text, req)
            nonstream = {"content": content or "", "reasoning": reasoning or ""}
            p = cls(tok)
            ids = tok.encode(text, add_special_tokens=False)
            sc, sr, prev_text, prev_ids = "", "", "", []
            for i in range(len(ids)):
                cur_ids = ids[: i + 1]
                cur_text = tok.decode(cur_ids)
                if cur_text.endswith("\ufffd") and i + 1 < len(ids):
                    continue
                dm = p.extract_reasoning_streaming(prev_text, cur_text, cur_text[len(prev_text):],
                                                   prev_ids, cur_ids, ids[len(prev_ids) : i + 1])
                if dm is not None:
                    sc += dm.content or ""
                    sr += dm.reasoning or ""
                prev_text, prev_ids = cur_text, cur_ids
            stream = {"content": sc, "reasoning": sr}
            out.write(json.dumps({"reasoning_parser": parser, "id": cid, "text": text,
                                  "nonstream": nonstream, "stream": stream}, ensure_ascii=False) + "\n")
            print(parser, cid, "same" if nonstream == stream else "stream != nonstream", flush=True)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    out = open(sys.argv[1], "w")
    for parser, model, added, with_stream, cases in SUITES:
        run_suite(out, parser, model, added, with_stream, cases)
    for parser, model, cases in REASONING_SUITES:
        run_reasoning_suite(out, parser, model, cases)


if __name__ == "__main__":
    main()
