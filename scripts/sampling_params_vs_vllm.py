"""`sampling_params` (and the status) of llm-render's chat render against vLLM 0.33's own render
server (`vllm launch render`, CPU), on a corpus of requests that each set one field vLLM
reads, invalid values included. Both serve the Qwen3 fixture.

vLLM serializes `SamplingParams` with msgspec's omit-defaults, so a field it leaves out is
compared with vLLM's default for it (`vllm.SamplingParams()`); a field only we write is
"extra" when it is not that default. Prints one line per case and a summary; exits 1 when a
case differs, so the list of differences is the output.

Setup: python3 -m venv bench-peers/vllmenv && bench-peers/vllmenv/bin/pip install vllm==0.33.0;
cargo build --release.
Usage: bench-peers/vllmenv/bin/python scripts/sampling_params_vs_vllm.py [--all]
(--all prints the agreeing cases too)
"""
import http.client, json, math, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import ROOT, llm_render, vllm_render  # noqa: E402

import vllm  # noqa: E402

VLLM_PORT, OURS_PORT = 31741, 31742
BASE = {"model": "qwen3", "messages": [{"role": "user", "content": "Hello"}]}
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}

CASES = [
    ("defaults", {}),
    ("temperature", {"temperature": 0.3}),
    ("temperature_greedy", {"temperature": 0.0, "top_p": 0.5, "top_k": 5}),
    ("top_p", {"top_p": 0.5}),
    ("top_k", {"top_k": 5}),
    ("min_p", {"min_p": 0.1}),
    ("seed", {"seed": 7}),
    ("n", {"n": 2}),
    ("stop_string", {"stop": "x"}),
    ("stop_list", {"stop": ["a", "b"]}),
    ("stop_token_ids", {"stop_token_ids": [1, 2]}),
    ("ignore_eos", {"ignore_eos": True}),
    ("max_tokens", {"max_tokens": 5}),
    ("max_completion_tokens", {"max_completion_tokens": 6}),
    ("both_max", {"max_tokens": 5, "max_completion_tokens": 6}),
    ("min_tokens", {"min_tokens": 2}),
    ("logprobs", {"logprobs": True, "top_logprobs": 3}),
    ("logprobs_only", {"logprobs": True}),
    ("prompt_logprobs", {"prompt_logprobs": 2}),
    ("skip_special_tokens", {"skip_special_tokens": False}),
    ("spaces_between", {"spaces_between_special_tokens": False}),
    ("include_stop_str", {"include_stop_str_in_output": True}),
    ("presence_penalty", {"presence_penalty": 0.5}),
    ("frequency_penalty", {"frequency_penalty": 0.5}),
    ("repetition_penalty", {"repetition_penalty": 1.2}),
    ("json_object", {"response_format": {"type": "json_object"}}),
    ("json_schema", {"response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": SCHEMA}}}),
    ("structured_regex", {"structured_outputs": {"regex": "a+"}}),
    ("structured_choice", {"structured_outputs": {"choice": ["a", "b"]}}),
    ("logit_bias", {"logit_bias": {"5": 10}}),
    ("allowed_token_ids", {"allowed_token_ids": [1, 2, 3]}),
    ("bad_words", {"bad_words": ["foo"]}),
    ("vllm_xargs", {"vllm_xargs": {"k": 1}}),
    ("thinking_token_budget", {"thinking_token_budget": 10}),
    ("truncate_prompt_tokens", {"truncate_prompt_tokens": 5}),
    ("reasoning_effort", {"reasoning_effort": "low"}),
    ("bad_temperature", {"temperature": -1}),
    ("bad_temperature_high", {"temperature": 3}),
    ("bad_top_p", {"top_p": 0}),
    ("bad_top_k", {"top_k": -2}),
    ("bad_n", {"n": 0}),
    ("bad_max_tokens", {"max_tokens": 0}),
    ("bad_top_logprobs", {"logprobs": True, "top_logprobs": 30}),
    ("bad_min_p", {"min_p": 2}),
    ("bad_presence", {"presence_penalty": 3}),
    ("bad_repetition", {"repetition_penalty": 0}),
    ("bad_min_tokens", {"min_tokens": 10, "max_tokens": 5}),
    ("bad_stop_token", {"stop_token_ids": [-1]}),
    ("bad_seed", {"seed": "x"}),
    ("bad_greedy_n", {"temperature": 0, "n": 2}),
]


def post(port, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", "/v1/chat/completions/render", json.dumps(body), {"content-type": "application/json"})
    r = c.getresponse()
    return r.status, json.loads(r.read() or b"null")


def defaults():
    sp = vllm.SamplingParams()
    out = {}
    for k in dir(sp):
        if k.startswith("_"):
            continue
        try:
            v = getattr(sp, k)
        except Exception:
            continue
        if callable(v):
            continue
        out[k] = v
    return out


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def compare(theirs, mine, dflt):
    diffs = []
    for k, v in theirs.items():
        if k not in mine:
            if not same(v, dflt.get(k, "<no default>")):
                diffs.append(f"{k}: vLLM {v!r}, ours absent")
        elif not same(v, mine[k]):
            diffs.append(f"{k}: vLLM {v!r}, ours {mine[k]!r}")
    for k, v in mine.items():
        if k not in theirs and k in dflt and not same(v, dflt[k]) and not (v is None and dflt[k] in ([], None)):
            diffs.append(f"{k}: ours {v!r}, vLLM default {dflt[k]!r}")
        elif k not in theirs and k not in dflt:
            diffs.append(f"{k}: ours only ({v!r})")
    return diffs


def main():
    show_all = "--all" in sys.argv
    dflt = defaults()
    results = []
    with llm_render(OURS_PORT, ["--model", f"qwen3={os.path.join(ROOT, 'fixtures/models/qwen3')}"]), vllm_render("qwen3", VLLM_PORT, ["--served-model-name", "qwen3"], log="/tmp/vllm_sampling.log"):
        for name, extra in CASES:
            body = dict(BASE, **extra)
            vs, vout = post(VLLM_PORT, body)
            os_, oout = post(OURS_PORT, body)
            if vs != os_:
                detail = (vout.get("error", {}).get("message", "") if vs != 200 else "")[:120]
                results.append((name, f"status vLLM {vs}, ours {os_}" + (f" (vLLM: {detail})" if detail else "")))
                continue
            if vs != 200:
                vp, op = vout["error"].get("param"), oout["error"].get("param")
                # Where vLLM's SamplingParams checks leave `param` null, ours name the field.
                named = vp is None and op is not None
                results.append((name, None if vp == op or named or (vp or "").endswith(str(op))
                                else f"400 param vLLM {vp!r}, ours {op!r}"))
                continue
            diffs = compare(vout["sampling_params"], oout["sampling_params"], dflt)
            results.append((name, "; ".join(diffs) if diffs else None))
    bad = 0
    for name, diff in results:
        if diff:
            bad += 1
            print(f"DIFF {name}: {diff}")
        elif show_all:
            print(f"same {name}")
    print(f"{len(results) - bad} of {len(results)} cases agree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
