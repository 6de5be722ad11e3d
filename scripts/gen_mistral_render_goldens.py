"""Mistral-format chat render goldens, made by vLLM 0.33's own render server (`tokenizer_mode`
`mistral`): `fixtures/goldens/mistral/render.jsonl.gz`.

For every tokenizer under `fixtures/models/mistral_*` and every request below, the prompt
token IDs are what `vllm launch render` (CPU) answers on `/v1/chat/completions/render` for a
model folder holding that tokenizer, served with `--tokenizer-mode mistral`: vLLM's
`OnlineRenderer.render_chat` (`maybe_serialize_tool_calls`, `truncate_tool_call_ids`,
`validate_request_params`), `MistralRenderer.render_messages`, vLLM's
`MistralTokenizer.apply_chat_template`, transformers' `MistralCommonBackend.apply_chat_template`,
then mistral-common 1.13.1's `ChatCompletionRequest.from_openai` and
`MistralTokenizer.encode_chat_completion` (validator in `ValidationMode.test`, the version's
normalizer and instruct encoder). docs/design/mistral-mode.md describes that chain. Where vLLM
refuses a request, the line holds its HTTP status, message and `param`.

The tokenizers: the seven files mistral-common 1.13.1 ships (v1, v2, v3 SentencePiece; v3
tekken; v3 tekken with Pixtral's image settings; v7 and v7m1 SentencePiece), and three
synthetic tekken files for v11, v13 and v15 (mistral-common ships none): the v3 tekken
vocabulary of `mistral_v3_tekken` with the `tekken_overlay.json` of
`fixtures/models/mistral_v1{1,3,5}_synth` laid over it (the version, the special-token list
and, for v15, the `model_settings_builder`); `synth_tekken()` below builds them, and a reader
of the goldens must build them the same way. Each folder also gets a `config.json`
(`MistralForCausalLM`, the vocabulary's size; `PixtralForConditionalGeneration` in Mistral's
`params.json` format for the two image tokenizers) and the tokenizer under the name
mistral-common looks for (`tekken.json`, `tokenizer.model.vN[m1]`).

Output: one JSON line per case, `{"id", "tokenizer", "version", "request", "token_ids" |
"error": {"status", "message", "param"}, "prompt_text"?}`; `prompt_text` is mistral-common's
decode of the IDs with special tokens kept (a reading aid, not a reference; left out for
images).

Setup: python3 -m venv bench-peers/vllmenv && bench-peers/vllmenv/bin/pip install vllm==0.33.0
(it pulls mistral_common 1.13.1; check with `pip show mistral_common`)
Usage: bench-peers/vllmenv/bin/python scripts/gen_mistral_render_goldens.py [--only NAME,...]
       [OUT] (default fixtures/goldens/mistral/render.jsonl.gz)
"""
import argparse, base64, copy, gzip, http.client, io, json, os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import ROOT, wait_healthy  # noqa: E402

# The `vllm` next to this interpreter (the venv it runs in).
VLLM = os.path.join(os.path.dirname(sys.executable), "vllm")

PORT = 31811
CHAT = "/v1/chat/completions/render"
MODELS = os.path.join(ROOT, "fixtures/models")

# (fixture folder, file in it (gzipped), name served under, multimodal)
TOKENIZERS = [
    ("mistral_v1", "tokenizer.model.v1", "tokenizer.model.v1", False),
    ("mistral_v2", "mistral_instruct_tokenizer_240216.model.v2", "tokenizer.model.v2", False),
    ("mistral_v3", "mistral_instruct_tokenizer_240323.model.v3", "tokenizer.model.v3", False),
    ("mistral_v3_tekken", "tekken_240718.json", "tekken.json", False),
    ("mistral_v3_tekken_pixtral", "tekken_240911.json", "tekken.json", True),
    ("mistral_v7", "mistral_instruct_tokenizer_241114.model.v7", "tokenizer.model.v7", False),
    ("mistral_v7m1", "mistral_instruct_tokenizer_241114.model.v7m1", "tokenizer.model.v7m1", True),
    ("mistral_v11_synth", None, "tekken.json", False),
    ("mistral_v13_synth", None, "tekken.json", False),
    ("mistral_v15_synth", None, "tekken.json", False),
]


def synth_tekken(name):
    """The v3 tekken vocabulary (tekken_240718) with `name`'s overlay: `config` keys replaced,
    `special_tokens` and `model_settings_builder` set."""
    with gzip.open(os.path.join(MODELS, "mistral_v3_tekken/tekken_240718.json.gz")) as f:
        base = json.load(f)
    overlay = json.load(open(os.path.join(MODELS, name, "tekken_overlay.json")))
    base["config"].update(overlay["config"])
    base["special_tokens"] = overlay["special_tokens"]
    if "model_settings_builder" in overlay:
        base["model_settings_builder"] = overlay["model_settings_builder"]
    return base


def text_config(vocab_size):
    return {
        "architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 4096,
        "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "vocab_size": vocab_size,
        "max_position_embeddings": 32768, "rms_norm_eps": 1e-05, "rope_theta": 1000000.0,
        "sliding_window": None, "torch_dtype": "bfloat16", "bos_token_id": 1, "eos_token_id": 2,
        "tie_word_embeddings": False,
    }


# Pixtral-12B-2409's params.json (Mistral format), what vLLM serves as
# PixtralForConditionalGeneration; the vocabulary size is the tokenizer's.
def pixtral_params(vocab_size):
    return {
        "dim": 5120, "n_layers": 40, "head_dim": 128, "hidden_dim": 14336, "n_heads": 32,
        "n_kv_heads": 8, "rope_theta": 1000000000.0, "norm_eps": 1e-05,
        "vocab_size": vocab_size, "max_position_embeddings": 32768, "dtype": "bfloat16",
        "vision_encoder": {
            "hidden_size": 1024, "num_channels": 3, "image_size": 1024, "patch_size": 16,
            "rope_theta": 10000.0, "intermediate_size": 4096, "num_hidden_layers": 24,
            "num_attention_heads": 16, "image_token_id": 10,
        },
    }


def model_dir(name, src, served, mm):
    d = tempfile.mkdtemp(prefix=f"{name}-")
    if src is None:
        data = synth_tekken(name)
        json.dump(data, open(os.path.join(d, served), "w"))
        vocab = data["config"]["default_vocab_size"]
    else:
        with gzip.open(os.path.join(MODELS, name, src + ".gz")) as a, \
                open(os.path.join(d, served), "wb") as b:
            shutil.copyfileobj(a, b)
        vocab = 32000 if name == "mistral_v1" else (131072 if served == "tekken.json" else 32768)
    if mm:
        json.dump(pixtral_params(vocab), open(os.path.join(d, "params.json"), "w"))
    else:
        json.dump(text_config(vocab), open(os.path.join(d, "config.json"), "w"))
    return d


# ---------------------------------------------------------------------------------------------
# Requests.

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "description": "The time in a city, ISO 8601",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
TOOLS = [WEATHER, TIME]

U = lambda c: {"role": "user", "content": c}  # noqa: E731
A = lambda c: {"role": "assistant", "content": c}  # noqa: E731
S = lambda c: {"role": "system", "content": c}  # noqa: E731


def call(id, name="get_weather", args='{"city": "Paris"}'):
    return {"id": id, "type": "function", "function": {"name": name, "arguments": args}}


def calls(*cs, content=None):
    return {"role": "assistant", "content": content, "tool_calls": list(cs)}


def result(id, content='{"temp": 21, "sky": "clear"}', **extra):
    return dict({"role": "tool", "tool_call_id": id, "content": content}, **extra)


def png(w, h, color=(200, 40, 40)):
    from PIL import Image
    buf = io.BytesIO()
    Image.new("RGB", (w, h), color).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def image_part(w, h):
    return {"type": "image_url", "image_url": {"url": png(w, h)}}


ASK = U("What is the weather in Paris?")
CASES = []


def case(id, messages, **extra):
    CASES.append((id, dict({"messages": messages}, **extra)))


case("user_only", [U("Hello, who are you?")])
case("system_user", [S("You are a terse assistant."), U("Hello")])
case("developer_role", [{"role": "developer", "content": "Answer in French."}, U("Hello")])
case("multi_turn", [U("Hi"), A("Hello! How can I help?"), U("Tell me a joke.")])
case("multi_turn_system", [S("Be brief."), U("Hi"), A("Hello."), U("A joke?"), A("No."),
                           U("Why not?")])
case("system_between_turns", [U("Hi"), A("Hello."), S("From now on, answer in caps."),
                              U("How are you?")])
case("system_only", [S("You only have a system prompt.")])
case("two_systems", [S("First rule."), S("Second rule."), U("Go")])
case("consecutive_users", [U("First part."), U("Second part.")])
case("starts_with_assistant", [A("Welcome! Ask me anything."), U("What is 2+2?")])
case("text_parts", [{"role": "user", "content": [{"type": "text", "text": "Part one."},
                                                 {"type": "text", "text": "Part two."}]}])
case("unicode", [S("Tu es un assistant — réponds en français ☕."),
                 U("日本語で答えて: what is 🤖? Ünïcödé, Ελληνικά, עברית, \u00a0nbsp.")])
case("whitespace", [U("  leading and trailing spaces  "), A("an answer with a trailing space "),
                    U("line one\nline two\n\n\ttabbed")])
case("tools_auto", [ASK], tools=TOOLS)
case("tools_system", [S("Use tools when useful."), ASK], tools=TOOLS)
case("tools_multi_turn", [U("Hi"), A("Hello."), ASK], tools=TOOLS)
case("tool_choice_none", [ASK], tools=TOOLS, tool_choice="none")
case("tool_choice_required", [ASK], tools=TOOLS, tool_choice="required")
case("tool_choice_named", [ASK], tools=TOOLS,
     tool_choice={"type": "function", "function": {"name": "get_weather"}})
case("tool_result", [ASK, calls(call("abcDEF123")), result("abcDEF123")], tools=TOOLS)
case("tool_result_then_answer", [ASK, calls(call("abcDEF123")), result("abcDEF123"),
                                 A("It is 21 degrees and clear in Paris."),
                                 U("And in Rome?")], tools=TOOLS)
case("tool_result_text", [ASK, calls(call("abcDEF123")), result("abcDEF123", "sunny, 21C")],
     tools=TOOLS)
case("tool_result_named", [ASK, calls(call("abcDEF123")),
                           result("abcDEF123", name="get_weather")], tools=TOOLS)
case("parallel_calls", [U("Weather and time in Paris?"),
                        calls(call("aaaaaaaa1"), call("bbbbbbbb2", "get_time")),
                        result("aaaaaaaa1"), result("bbbbbbbb2", '"12:00"')], tools=TOOLS)
case("parallel_results_reordered", [U("Weather and time in Paris?"),
                                    calls(call("aaaaaaaa1"), call("bbbbbbbb2", "get_time")),
                                    result("bbbbbbbb2", '"12:00"'), result("aaaaaaaa1")],
     tools=TOOLS)
case("call_id_truncated", [ASK, calls(call("call_0123456789abcdef")),
                           result("call_0123456789abcdef")], tools=TOOLS)
case("call_id_short", [ASK, calls(call("call_1")), result("call_1")], tools=TOOLS)
case("call_args_not_json", [ASK, calls(call("abcDEF123", args="city=Paris")),
                            result("abcDEF123")], tools=TOOLS)
case("call_args_empty", [ASK, calls(call("abcDEF123", "get_time", args="")),
                         result("abcDEF123")], tools=TOOLS)
case("call_with_content", [ASK, calls(call("abcDEF123"), content="Let me check."),
                           result("abcDEF123")], tools=TOOLS)
case("calls_without_tools", [ASK, calls(call("abcDEF123")), result("abcDEF123")])
case("missing_tool_result", [ASK, calls(call("abcDEF123")), U("never mind")], tools=TOOLS)
case("bad_function_name", [ASK], tools=[{"type": "function", "function": {
    "name": "get weather", "parameters": {"type": "object", "properties": {}}}}])
case("tool_minimal", [U("What time is it?")],
     tools=[{"type": "function", "function": {"name": "now"}}])
case("tool_strict", [ASK], tools=[{"type": "function", "function": dict(
    WEATHER["function"], strict=True)}])
case("call_without_id", [ASK, {"role": "assistant", "content": None, "tool_calls": [
    {"type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
    result("abcDEF123")], tools=TOOLS)
case("reasoning_effort_high", [U("Think hard: 17*23?")], reasoning_effort="high")
case("reasoning_effort_none", [U("17*23?")], reasoning_effort="none")
case("reasoning_effort_low", [U("17*23?")], reasoning_effort="low")
case("reasoning_in_history", [U("17*23?"), {"role": "assistant", "content": "391",
                                            "reasoning": "17*23 = 17*20 + 17*3 = 391"},
                              U("And 17*24?")])
case("continue_final_message", [U("Write a haiku."), A("Autumn moonlight")],
     continue_final_message=True, add_generation_prompt=False)
case("continue_with_generation_prompt", [U("Write a haiku."), A("Autumn moonlight")],
     continue_final_message=True)
case("add_generation_prompt_false", [U("Hello")], add_generation_prompt=False)
case("last_assistant_no_continue", [U("Hello"), A("Hi there")], add_generation_prompt=False)
case("last_assistant_generation_prompt", [U("Hello"), A("Hi there")])
case("chat_template_given", [U("Hello")], chat_template="{{ messages[0].content }}")
case("chat_template_kwargs_given", [U("Hello")], chat_template_kwargs={"enable_thinking": True})
case("empty_assistant", [U("Hello"), A(""), U("Again")])
case("image_small", [{"role": "user", "content": [image_part(40, 30),
                                                  {"type": "text", "text": "Describe it."}]}])
case("image_after_text", [{"role": "user", "content": [{"type": "text", "text": "Look:"},
                                                       image_part(64, 48)]}])
case("image_large", [{"role": "user", "content": [{"type": "text", "text": "What colour?"},
                                                  image_part(1600, 200)]}])


def post(body):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
    c.request("POST", CHAT, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    return r.status, json.loads(r.read())


def prompt_text(path, ids):
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer
    if path not in prompt_text.cache:
        prompt_text.cache[path] = MistralTokenizer.from_file(path).instruct_tokenizer.tokenizer
    return prompt_text.cache[path].decode(ids, special_token_policy=SpecialTokenPolicy.KEEP)


prompt_text.cache = {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?",
                    default=os.path.join(ROOT, "fixtures/goldens/mistral/render.jsonl.gz"))
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    lines = []
    for name, src, served, mm in TOKENIZERS:
        if only and name not in only:
            continue
        d = model_dir(name, src, served, mm)
        args = [VLLM, "launch", "render", d, "--port", str(PORT), "--served-model-name", "m",
                "--tokenizer-mode", "mistral"]
        if mm:
            args += ["--config-format", "mistral", "--load-format", "mistral"]
        log = f"/tmp/gen_mistral_{name}.log"
        proc = subprocess.Popen(args, env=dict(os.environ, VLLM_TARGET_DEVICE="cpu"),
                                stdout=subprocess.DEVNULL, stderr=open(log, "w"))
        try:
            if not wait_healthy(PORT, tries=400):
                sys.exit(f"{name}: vLLM did not start, see {log}")
            version = None
            for id, req in CASES:
                body = dict(copy.deepcopy(req), model="m")
                status, resp = post(body)
                line = {"id": id, "tokenizer": name, "request": req}
                if status == 200:
                    line["token_ids"] = resp["token_ids"]
                    if not id.startswith("image"):
                        line["prompt_text"] = prompt_text(os.path.join(d, served),
                                                          resp["token_ids"])
                else:
                    err = resp.get("error", resp)
                    line["error"] = {"status": status, "message": err.get("message"),
                                     "param": err.get("param")}
                lines.append(line)
            from mistral_common.tokens.tokenizers.mistral import MistralTokenizer
            version = MistralTokenizer.from_file(os.path.join(d, served)).version.value
            for line in lines:
                if line["tokenizer"] == name:
                    line["version"] = version
            ok = sum(1 for x in lines if x["tokenizer"] == name and "token_ids" in x)
            print(f"{name} ({version}): {ok} rendered, "
                  f"{sum(1 for x in lines if x['tokenizer'] == name) - ok} refused")
        finally:
            proc.terminate()
            proc.wait()
            shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with gzip.GzipFile(a.out, "wb", mtime=0) as f:
        for line in lines:
            f.write((json.dumps(line, ensure_ascii=False, sort_keys=False) + "\n").encode())


if __name__ == "__main__":
    main()
