"""Reasoning-token count goldens: vLLM 0.33's own `count_reasoning_tokens`, as its OpenAI chat
server calls it (`vllm/entrypoints/openai/chat_completion/serving.py`), for every reasoning
parser in our registry, over the cases of `scripts/parser_cases/*.reasoning.json` (and the
cohere_command3/4 unified-parser files).

The machinery is `gen_parser_family_goldens.py`'s: a fixture tokenizer per family with the
family's markers added as single tokens (`model_dir`), the text fed one token at a time
(`token_steps`), the case's constructor kwargs (`"parser_kwargs"`). The parser is the one
chat serving builds: `ParserManager.get_parser(reasoning_parser_name=...)` (no tool parser:
a reasoning parser alone), constructed as `_make_parser` constructs it, with the case's
`chat_template_kwargs`.

For every case:
  * `nonstream`: serving's `chat_completion_full_generator`: a fresh parser, `parse(text, ...,
    model_output_token_ids=ids)`, then `count_reasoning_tokens(ids)`;
  * `stream`: serving's `chat_completion_stream_generator_raw` without continuous usage: a
    fresh parser, `parse_delta` one token at a time (`finished` on the last), then
    `count_reasoning_tokens(all ids)`;
  * `continuous`: with `continuous_usage_stats`: the count after each step, over the IDs so
    far (`count_reasoning_tokens(tuple(generated_token_ids))` after each `processor.step`).

Families our registry has and no case file covers run another family's cases: deepseek_r1 and
step5 share step5's, qwen3 mimo's, musespark1x muse's; mistral runs step5's with `[THINK]`
and `[/THINK]` for its tags (and the `[TOOL_CALLS]` and `[ARGS]` tokens its constructor wants).

Output (JSONL, gzipped where the path ends in `.gz`): one line per case, `{"parser", "vllm_parser", "case_file", "id", "text",
"parser_kwargs"?, "token_suffix"?, "vocab_token_suffix"?, "ids", "tokens", "marker_ids",
"encoded", "nonstream", "stream", "continuous"}` (or `"error"` where vLLM raised). `tokens` is each ID's
vocabulary string; `marker_ids` the vocabulary IDs of the family's added tokens and of every
marker string any family names, and `encoded` the IDs of the markers some count matches as
token sequences (so a test resolves markers as vLLM does, with no tokenizer).

Usage: bench-peers/vllmenv/bin/python scripts/gen_reasoning_count_goldens.py \
    fixtures/goldens/derender/reasoning_counts.jsonl.gz
(cohere_command3/4 need `cohere_melody`: `pip install --target DIR cohere-melody`, then
`PYTHONPATH=DIR`; without it their lines are left out and the run says so.)
"""
import copy, glob, gzip, json, os, shutil, sys, traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_parser_family_goldens import CASES, model_dir, suffixes, token_steps  # noqa: E402

# Registry names that run another family's case file.
BORROWED = {"deepseek_r1": "step5", "qwen3": "mimo", "musespark1x": "muse"}

# Every marker string a family's count may look up, resolved against each fixture's vocabulary.
MARKERS = [
    "<think>", "</think>", "<tool_call>", "<seed:think>", "</seed:think>", "<seed:tool_call>",
    "<|im_start|>", "<|im_end|>", "<|open|>", "<|close|>", "<|sep|>", "<ifm|think>",
    "</ifm|think>", "<ifm|think_fast>", "</ifm|think_fast>", "<ifm|think_faster>",
    "</ifm|think_faster>", "<ifm|tool_calls>", "<|START_THINKING|>", "<|END_THINKING|>",
    "<|START_RESPONSE|>", "<|START_ACTION|>", "<|START_TEXT|>", "<minimax:tool_call>",
    "<｜DSML｜tool_calls>", "<|channel>", "<channel|>", "<|tool_call>", "<|turn>",
    "<|tool_response>", "<mm:think>", "</mm:think>", "<|tool_calls_section_begin|>",
    "<|content_thinking|>", "<|end_message|>", "<|content_model_end_sampling|>",
    "<|message_model|>", "<|content_text|>", "<|message|>", "<|start|>", "<|eom|>", "<|eot|>",
    "<|plamo:begin_think:plamo|>", "<|plamo:end_think:plamo|>", "<|plamo:tag|>",
    "<|plamo:begin_tool_requests:plamo|>", "[THINK]", "[/THINK]", "<assistant>",
    "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>", "<seed:bos>", "<seed:eos>",
    "<think:6124c78e>", "</think:6124c78e>", "<response>", "</response>", "<answer>",
]


def specs():
    """(registry name, vLLM name, case file name, spec) for every family to run."""
    files = {}
    for path in sorted(glob.glob(os.path.join(CASES, "*.reasoning.json"))):
        files[os.path.basename(path)[: -len(".reasoning.json")]] = json.load(open(path))
    for name in ("cohere_command3", "cohere_command4"):
        files[name] = json.load(open(os.path.join(CASES, f"{name}.json")))
    out = []
    for stem, spec in files.items():
        out.append((spec["parser"], spec.get("vllm_parser", spec["parser"]), stem, spec))
    for name, stem in BORROWED.items():
        out.append((name, name, stem, files[stem]))
    # Magistral's [THINK]…[/THINK] (special tokens in v13+ tokenizers): step5's texts with its
    # tags.
    mistral = copy.deepcopy(files["step5"])
    mistral["added_tokens"] = ["[THINK]", "[/THINK]", "[TOOL_CALLS]", "[ARGS]"]
    for case in mistral["cases"]:
        case["text"] = case["text"].replace("<think>", "[THINK]").replace("</think>", "[/THINK]")
    out.append(("mistral", "mistral", "step5", mistral))
    return out


# Markers of several tokens that a count matches as sequences (kimi_k3's, minimax_m3's): their
# encodings are written to each line (`encoded`).
SEQUENCES = ["<|open|>think<|sep|>", "<|close|>think<|sep|>", "<|open|>response<|sep|>",
             "<mm:think>", "</mm:think>"]


def marker_ids(tok, added):
    """The vocabulary IDs of the family's added tokens and of every marker in `MARKERS`."""
    vocab = tok.get_vocab()
    return dict(sorted((m, vocab[m]) for m in set(MARKERS) | set(added) if m in vocab))


def counts(cls, tok, req, text, kwargs):
    """vLLM's counts for one output: one-shot, streamed, and after each streamed step."""
    ids = tok.encode(text, add_special_tokens=False)
    p = cls(tok, None, **copy.deepcopy(kwargs or {}))
    p.parse(text, req, model_output_token_ids=ids)
    nonstream = p.count_reasoning_tokens(ids)
    p = cls(tok, None, **copy.deepcopy(kwargs or {}))
    steps = list(token_steps(tok, text))
    seen, continuous = [], []
    for n, (_, _, delta, _, _, delta_ids) in enumerate(steps):
        p.parse_delta(delta, list(delta_ids), req, finished=n + 1 == len(steps))
        seen.extend(delta_ids)
        continuous.append(p.count_reasoning_tokens(tuple(seen)))
    q = cls(tok, None, **copy.deepcopy(kwargs or {}))
    for n, (_, _, delta, _, _, delta_ids) in enumerate(steps):
        q.parse_delta(delta, list(delta_ids), req, finished=n + 1 == len(steps))
    stream = q.count_reasoning_tokens(tuple(ids)) if ids else 0
    return ids, nonstream, stream, continuous


def run(out, name, vname, stem, spec):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.parser_manager import ParserManager

    d = model_dir(spec.get("fixture", "qwen3"), spec.get("added_tokens", []),
                  spec.get("tokenizer_config"))
    try:
        from vllm.tokenizers import get_tokenizer
        tok = get_tokenizer(d)
        cls = ParserManager.get_parser(reasoning_parser_name=vname)
        markers = marker_ids(tok, spec.get("added_tokens", []))
        for case in spec["cases"]:
            if case.get("check") == "reasoning_end":
                continue
            kwargs = case.get("parser_kwargs", spec.get("parser_kwargs"))
            line = {"parser": name, "vllm_parser": vname, "case_file": stem, "id": case["id"],
                    "text": case["text"], **suffixes(tok)}
            if kwargs is not None:
                line["parser_kwargs"] = kwargs
            req = ChatCompletionRequest(
                model="m", messages=[{"role": "user", "content": "go"}],
                chat_template_kwargs=(kwargs or {}).get("chat_template_kwargs"))
            saved = getattr(tok, "chat_template", None)
            if "chat_template" in case:
                tok.chat_template = case["chat_template"]
                line["chat_template"] = case["chat_template"]
            try:
                ids, line["nonstream"], line["stream"], line["continuous"] = counts(
                    cls, tok, req, case["text"], kwargs)
                line["ids"] = ids
                line["tokens"] = tok.convert_ids_to_tokens(ids)
                line["marker_ids"] = markers
                line["encoded"] = {m: tok.encode(m, add_special_tokens=False) for m in SEQUENCES}
            except Exception as e:  # recorded, not fatal: vLLM raising is a finding
                line["error"] = "".join(traceback.format_exception_only(type(e), e)).strip()
            finally:
                tok.chat_template = saved
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
            agree = "error" if "error" in line else (
                "same" if line["nonstream"] == line["stream"] == (line["continuous"] or [0])[-1]
                else "stream != nonstream")
            print(f"{name} {case['id']}: {line.get('nonstream')} {agree}", flush=True)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    path = sys.argv[1]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as out:
        for name, vname, stem, spec in specs():
            try:
                run(out, name, vname, stem, spec)
            except ImportError as e:
                print(f"{name}: not run here ({e!r})", flush=True)


if __name__ == "__main__":
    main()
