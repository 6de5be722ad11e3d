"""Goldens for `tool_choice` → `sampling_params.structured_outputs` (and `skip_special_tokens`),
from vLLM 0.33's own render server: a fixture served with each tool parser, every `tool_choice`
with and without `parallel_tool_calls: false`, `response_format` and `structured_outputs`, over
sets of plain and strict tools. Written to fixtures/goldens/tool_choice/structured_outputs.jsonl.gz (gzip),
one line per request: {"parser", "request", "status", "structured_outputs",
"skip_special_tokens"} (a field vLLM leaves out is written with its default).
tests/tool_choice_goldens.rs replays them.

The constraint depends on the parser, not on the tokenizer, but some of vLLM's parsers refuse a
tokenizer without their markers: llama3_json runs on the Llama 3.1 fixture, deepseek_v3/v31/v32/
v4/v41 on the DeepSeek-V3 one (with a config.json naming the model type), mistral and jamba on Qwen3's with
their markers added as tokens (the requests name `qwen3`, which llm-render serves unchanged).
openai (gpt-oss) runs on the gpt-oss fixture with a gpt-oss-20b config.json (as
scripts/harmony_render_vs_vllm.py serves it), where vLLM's Harmony parser also rewrites a
request's own constraint into a Harmony tag, whatever the `tool_choice`.

Setup: as scripts/sampling_params_vs_vllm.py, and `pip install cohere-melody` (0.15.3) for the
cohere_command3/4 suites.
Usage: bench-peers/vllmenv/bin/python scripts/gen_tool_choice_goldens.py [PARSER ...]
(with parsers named, only their lines are regenerated; the others are kept as they are)
"""
import contextlib, gzip, http.client, io, json, os, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import ROOT, VLLM, model_dir, wait_healthy  # noqa: E402
# gpt-oss-20b's config.json, as the Harmony render comparison serves the fixture with it.
from harmony_render_vs_vllm import CONFIG as GPT_OSS  # noqa: E402

PORT = 31781
OUT = os.path.join(ROOT, "fixtures/goldens/tool_choice/structured_outputs.jsonl.gz")
PLAIN = [
    {"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}},
    {"type": "function", "function": {"name": "g", "description": "G", "parameters": {
        "type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}, "$defs": {"X": {"type": "string"}}}}},
]
STRICT = [PLAIN[0], {"type": "function", "function": {"name": "h", "strict": True, "parameters": {
    "type": "object", "properties": {"y": {"type": "string", "description": "naïve ☕"}}}}},
    {"type": "function", "function": {"name": "e", "strict": True}}]
# Schemas GLM-4.7's own tag reads key by key: enums, type lists, free and empty objects.
RICH = [
    {"type": "function", "function": {"name": "r", "parameters": {"type": "object", "properties": {
        "s": {"type": "string"}, "n": {"type": "number"}, "u": {"enum": ["a", 1, True, None, 2.5]},
        "one": {"enum": ["x"]}, "t": {"type": ["integer", "string", "null"]}, "b": {"type": ["boolean"]},
        "o": {"type": "object", "properties": {"p": {"type": "string"}}}, "any": {}},
        "required": ["s"]}}},
    {"type": "function", "function": {"name": "free", "parameters": {
        "type": "object", "properties": {"k": {"type": "string"}}, "additionalProperties": True}}},
    {"type": "function", "function": {"name": "empty", "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "bare"}},
    {"type": "function", "function": {"name": "alt", "strict": False, "parameters": {
        "anyOf": [{"type": "object"}], "properties": {"z": {"type": "integer"}}}}},
]
ALL_STRICT = [STRICT[1], STRICT[2], {"type": "function", "function": {
    "name": "d", "strict": True, "parameters": {"type": "object", "properties": {
        "q": {"$ref": "#/$defs/Q"}}, "$defs": {"Q": {"type": "integer"}}, "required": ["q"]}}}]
CHOICES = [None, "auto", "required", "none",
           {"type": "function", "function": {"name": "f"}},
           {"type": "function", "function": {"name": "g"}}]
VARIANTS = [{}, {"parallel_tool_calls": False}, {"response_format": {"type": "json_object"}},
            {"parallel_tool_calls": False, "response_format": {"type": "json_object"}}]
# The request's own constraints beyond `json_object`, where vLLM may join them with its tag.
MORE_VARIANTS = VARIANTS + [
    {"response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": {
        "type": "object", "properties": {"k": {"type": "string"}}}}}},
    {"parallel_tool_calls": False, "structured_outputs": {"regex": "[a-z]+"}},
]
# The other request constraints vLLM joins with its tag, for one family of each builder.
OR_VARIANTS = MORE_VARIANTS + [
    {"structured_outputs": {"choice": ["yes", "no \"q\" ☕"]}},
    {"structured_outputs": {"grammar": "# EBNF\nroot ::= \"a\" | \"b\""}},
    {"structured_outputs": {"grammar": "start: \"a\" | \"b\""}},
    {"response_format": {"type": "structural_tag", "format": {"type": "const_string", "value": "x"}}},
]

QWEN3 = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 128256,
         "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
         "num_key_value_heads": 8, "intermediate_size": 14336, "max_position_embeddings": 131072,
         "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009]}
DEEPSEEK = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3"}
# Command A's architecture, which vLLM's Cohere parser reads its tags by (written over the
# fixture's own config.json).
COHERE = {"architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2"}
# gpt-oss's tokenizer reads its encoding from the shared models (openai_harmony, offline).
GPT_OSS_ENV = {"TIKTOKEN_ENCODINGS_BASE": os.path.join(os.path.dirname(ROOT), "shared/models/gpt_oss"),
               "HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1"}

# (parser, fixture, its config.json if it has none, tokens to add, tool sets, variants).
# hermes and pythonic come first with their original sets, so their lines stay as they were.
BASIC = (PLAIN, STRICT)
GLM = (PLAIN, STRICT, RICH, ALL_STRICT)
SUITES = [
    ("hermes", "qwen3", None, [], BASIC, VARIANTS),
    ("pythonic", "qwen3", None, [], BASIC, VARIANTS),
    ("qwen3_coder", "qwen3", None, [], BASIC, OR_VARIANTS),
    ("llama3_json", "llama3_1", LLAMA, [], BASIC, MORE_VARIANTS),
    ("deepseek_v3", "deepseek_v3", DEEPSEEK, [], BASIC, MORE_VARIANTS),
    ("deepseek_v31", "deepseek_v3", DEEPSEEK, [], BASIC, MORE_VARIANTS),
    ("kimi_k2", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("glm45", "qwen3", None, [], GLM, MORE_VARIANTS),
    ("glm47", "qwen3", None, [], GLM, OR_VARIANTS),
    ("ling3", "qwen3", None, [], GLM, MORE_VARIANTS),
    ("mistral", "qwen3", None, ["[TOOL_CALLS]"], BASIC, MORE_VARIANTS),
    ("step3p5", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("mimo", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("longcat", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("seed_oss", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("llama4_pythonic", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("granite-20b-fc", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("granite4", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("ernie45", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("phi4_mini_json", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("jamba", "qwen3", None, ["<tool_calls>", "</tool_calls>"], BASIC, MORE_VARIANTS),
    ("internlm", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("granite", "qwen3", None, ["<|tool_call|>"], BASIC, MORE_VARIANTS),
    ("apertus", "qwen3", None, ["<|tools_prefix|>", "<|tools_suffix|>"], BASIC, MORE_VARIANTS),
    ("lfm2", "qwen3", None, ["<|tool_call_start|>", "<|tool_call_end|>"], BASIC, MORE_VARIANTS),
    ("xlam", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("olmo3", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("deepseek_v32", "deepseek_v3", DEEPSEEK, [], BASIC, MORE_VARIANTS),
    ("deepseek_v4", "deepseek_v3", DEEPSEEK, [], BASIC, MORE_VARIANTS),
    ("deepseek_v41", "deepseek_v3", DEEPSEEK, [], BASIC, MORE_VARIANTS),
    ("plamo3", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("minimax_m2", "qwen3", None, [], BASIC, MORE_VARIANTS),
    # The parsers whose constraint is a JSON schema, vLLM's or xgrammar's tag or none at all
    # (their supports_required_and_named is False), with the markers some refuse to start
    # without.
    *[(p, "qwen3", None, [], BASIC, MORE_VARIANTS) for p in (
        "qwen3_xml", "qwen3_json", "step5", "step3", "minicpm5", "hunyuan_a13b",
        "functiongemma", "gigachat3", "k2_horizon", "minimax_m3", "poolside_v1", "muse",
        "muse_glimmer", "musespark1x", "inkling", "gemma4", "dots")],
    ("llama4_json", "llama3_1", LLAMA, [], BASIC, MORE_VARIANTS),
    ("kimi_k3", "qwen3", None, [], BASIC, MORE_VARIANTS),
    ("hy_v3", "qwen3", None, ["<tool_calls>", "</tool_calls>"], BASIC, MORE_VARIANTS),
    ("hy_v4", "qwen3", None, ["<tool_calls>", "</tool_calls>"], BASIC, MORE_VARIANTS),
    # vLLM's Cohere parser (cohere-melody installed) folds the tools and the request's JSON
    # schema into its own tag on every request, whatever the `tool_choice`.
    ("cohere_command3", "qwen3", COHERE, [], BASIC + ([],), MORE_VARIANTS),
    ("cohere_command4", "qwen3", COHERE, [], BASIC + ([],), MORE_VARIANTS),
    ("openai", "gpt_oss", GPT_OSS, [], BASIC + ([],), OR_VARIANTS),
    # gpt-oss with its reasoning parser only: vLLM still composes its Harmony parser, which
    # rewrites the request's own constraint (no tool tags).
    ("none", "gpt_oss", GPT_OSS, [], BASIC + ([],), OR_VARIANTS),
]


def add_tokens(d, added):
    """Appends `added` to the tokenizer in `d` as special added tokens."""
    path = os.path.join(d, "tokenizer.json")
    t = json.load(open(path))
    nid = max(max(a["id"] for a in t["added_tokens"]), len(t["model"]["vocab"])) + 1
    new = [{"id": nid + i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True} for i, c in enumerate(added)]
    t["added_tokens"] += new
    json.dump(t, open(path, "w"))
    cfg_path = os.path.join(d, "tokenizer_config.json")
    cfg = json.load(open(cfg_path))
    for a in new:
        cfg.setdefault("added_tokens_decoder", {})[str(a["id"])] = {
            k: a[k] for k in ("content", "single_word", "lstrip", "rstrip", "normalized", "special")}
    json.dump(cfg, open(cfg_path, "w"))


@contextlib.contextmanager
def served(fixture, config, added, args, log):
    """`vllm launch render` on the fixture (with `added` tokens) until the block ends."""
    d = model_dir(fixture, config)
    if config is COHERE:
        json.dump(config, open(os.path.join(d, "config.json"), "w"))
    if added:
        add_tokens(d, added)
    proc = subprocess.Popen([VLLM, "launch", "render", d, "--port", str(PORT), *args],
                            env=dict(os.environ, VLLM_TARGET_DEVICE="cpu",
                                     **(GPT_OSS_ENV if fixture == "gpt_oss" else {})),
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    try:
        if not wait_healthy(PORT):
            raise RuntimeError(f"vLLM did not start; see {log}")
        yield
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(d, ignore_errors=True)


def post(body):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
    c.request("POST", "/v1/chat/completions/render", json.dumps(body), {"content-type": "application/json"})
    r = c.getresponse()
    return r.status, json.loads(r.read())


def named(choice, tools):
    """A named choice of a tool the set has: `f` else the first tool, `g` else the last."""
    names = [t["function"]["name"] for t in tools]
    if isinstance(choice, dict) and choice["function"]["name"] not in names:
        pick = names[0] if choice["function"]["name"] == "f" else names[-1]
        choice = {"type": "function", "function": {"name": pick}}
    return choice


def suite(parser, fixture, config, added, tool_sets, variants):
    model = "qwen3" if added else fixture
    args = ["--served-model-name", model, "--enable-auto-tool-choice", "--tool-call-parser", parser]
    if parser == "none":
        args = ["--served-model-name", model, "--reasoning-parser", "openai_gptoss"]
    lines = []
    with served(fixture, config, added, args, f"/tmp/vllm_tool_choice_{parser}.log"):
        for tools in tool_sets:
            # An empty set: requests without tools (and without a tool_choice).
            for choice in CHOICES if tools else [None]:
                choice = named(choice, tools)
                for variant in variants:
                    body = {"model": model, "messages": [{"role": "user", "content": "hi"}],
                            **({"tools": tools} if tools else {}), **variant}
                    if choice is not None:
                        body["tool_choice"] = choice
                    status, out = post(body)
                    sp = out.get("sampling_params", {}) if status == 200 else {}
                    lines.append({"parser": parser, "request": body, "status": status,
                                  "structured_outputs": sp.get("structured_outputs"),
                                  "skip_special_tokens": sp.get("skip_special_tokens", True)})
                    print(parser, status, json.dumps(body)[60:150], flush=True)
    return lines


def main():
    only = set(sys.argv[1:])
    kept = {}
    if only and os.path.exists(OUT):
        for line in gzip.open(OUT, "rt"):
            g = json.loads(line)
            kept.setdefault(g["parser"], []).append(line)
    out = []
    for parser, *rest in SUITES:
        if only and parser not in only:
            out += kept.get(parser, [])
            continue
        out += [json.dumps(line, ensure_ascii=False) + "\n" for line in suite(parser, *rest)]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with gzip.GzipFile(OUT, "wb", mtime=0) as raw, io.TextIOWrapper(raw, "utf-8") as f:
        f.writelines(out)
    print(f"{len(out)} goldens -> {OUT}")


if __name__ == "__main__":
    main()
