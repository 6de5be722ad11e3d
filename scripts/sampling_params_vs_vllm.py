"""`sampling_params` (and the status) of llm-render's chat, completion, Messages and Responses
renders against vLLM 0.33's own render server (`vllm launch render`, CPU), on a corpus of
requests that each set one field vLLM reads, invalid values included. Both serve the Qwen3
fixture, whose generation_config.json sets temperature, top_p and top_k defaults, with the
qwen3 reasoning parser (ours picks it by default; vLLM is told), whose `adjust_request` keeps
special tokens.

vLLM serializes `SamplingParams` with msgspec's omit-defaults (an identity test: `None`,
booleans and small integers at their default are left out, floats and lists always
written); ours must write the same keys with the same values. Prints one line per case and a summary; exits 1 when a
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
    ("echo", {"echo": True}),
    ("echo_top_logprobs", {"echo": True, "logprobs": True, "top_logprobs": 2}),
    ("echo_prompt_logprobs", {"echo": True, "top_logprobs": 2, "prompt_logprobs": 1}),
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

# Completions: what `CompletionRequest.to_sampling_params` reads beyond chat's fields
# (echo turns `logprobs` into `prompt_logprobs`, and `max_tokens: 0` into one token).
COMPLETION = {"model": "qwen3", "prompt": "Hello"}
COMPLETION_CASES = [
    ("defaults", {}),
    ("max_tokens", {"max_tokens": 5}),
    ("logprobs", {"logprobs": 3}),
    ("echo", {"echo": True}),
    ("echo_logprobs", {"echo": True, "logprobs": 2}),
    ("echo_max_tokens_0", {"echo": True, "max_tokens": 0, "logprobs": 1}),
    ("echo_prompt_logprobs", {"echo": True, "logprobs": 2, "prompt_logprobs": 4}),
    ("prompt_logprobs", {"prompt_logprobs": 2}),
    ("prompt_logprobs_all", {"prompt_logprobs": -1}),
    ("temperature", {"temperature": 0.2}),
    ("top_k", {"top_k": 3}),
    ("seed", {"seed": 3}),
    ("n", {"n": 2}),
    ("stop", {"stop": ["x"]}),
    ("min_tokens", {"min_tokens": 1}),
    ("logit_bias", {"logit_bias": {"5": -3}}),
    ("json_object", {"response_format": {"type": "json_object"}}),
    ("structured_regex", {"structured_outputs": {"regex": "a+"}}),
    ("include_stop_str", {"include_stop_str_in_output": True}),
    ("skip_special_tokens", {"skip_special_tokens": False}),
    ("truncate_prompt_tokens", {"truncate_prompt_tokens": 1}),
    ("bad_max_tokens", {"max_tokens": 0}),
    ("bad_logprobs", {"logprobs": 30}),
    ("bad_prompt_logprobs", {"prompt_logprobs": -2}),
    ("bad_stream_prompt_logprobs", {"stream": True, "prompt_logprobs": 1}),
    ("bad_temperature", {"temperature": -1}),
]

# Messages: `AnthropicMessagesRequest` → chat, then chat's sampling params.
MESSAGES = {"model": "qwen3", "max_tokens": 16, "messages": [{"role": "user", "content": "Hello"}]}
MESSAGES_CASES = [
    ("defaults", {}),
    ("temperature", {"temperature": 0.4}),
    ("top_p", {"top_p": 0.5}),
    ("top_k", {"top_k": 4}),
    ("stop_sequences", {"stop_sequences": ["x", "y"]}),
    ("thinking", {"max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}}),
    ("bad_thinking_budget", {"thinking": {"type": "enabled", "budget_tokens": 1024}}),
    ("bad_max_tokens", {"max_tokens": 0}),
]

# Responses: `ResponsesRequest.to_sampling_params`.
RESPONSES = {"model": "qwen3", "input": "Hello"}
RESPONSES_CASES = [
    ("defaults", {}),
    ("temperature", {"temperature": 0.4}),
    ("top_p", {"top_p": 0.5}),
    ("max_output_tokens", {"max_output_tokens": 9}),
    ("top_logprobs", {"top_logprobs": 2}),
    ("json_schema", {"text": {"format": {"type": "json_schema", "name": "n", "schema": SCHEMA}}}),
    ("json_object", {"text": {"format": {"type": "json_object"}}}),
    ("reasoning", {"reasoning": {"effort": "low"}}),
    ("bad_temperature", {"temperature": -1}),
]

ROUTES = [
    ("chat", "/v1/chat/completions/render", BASE, CASES),
    ("completion", "/v1/completions/render", COMPLETION, COMPLETION_CASES),
    ("messages", "/v1/messages/render", MESSAGES, MESSAGES_CASES),
    ("responses", "/v1/responses/render", RESPONSES, RESPONSES_CASES),
]


def post(port, path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    r = c.getresponse()
    out = json.loads(r.read() or b"null")
    # The completion render answers one GenerateRequest per prompt.
    return r.status, out[0] if isinstance(out, list) and out else out


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
    """Values and keys: vLLM's render leaves a field out where msgspec's `omit_defaults`
    finds its default (`dflt` says which default a missing field has); ours must write and
    leave out the same keys."""
    diffs = []
    for k, v in theirs.items():
        if k not in mine:
            diffs.append(f"{k}: vLLM writes {v!r}, ours leaves it out")
        elif not same(v, mine[k]):
            diffs.append(f"{k}: vLLM {v!r}, ours {mine[k]!r}")
    for k, v in mine.items():
        # docs/api.md: `max_tokens` is always written (vLLM's generate route reads an absent
        # one as "up to the context", not as its default 16): the one key allowed here.
        if k == "max_tokens" and k not in theirs and v == dflt.get(k):
            continue
        if k not in theirs:
            diffs.append(f"{k}: ours writes {v!r}, vLLM leaves it out (default {dflt.get(k, '<none>')!r})")
    return diffs


def main():
    show_all = "--all" in sys.argv
    dflt = defaults()
    results = []
    with llm_render(OURS_PORT, ["--model", f"qwen3={os.path.join(ROOT, 'fixtures/models/qwen3')}"]), vllm_render("qwen3", VLLM_PORT, ["--served-model-name", "qwen3", "--reasoning-parser", "qwen3"], log="/tmp/vllm_sampling.log"):
        for route, path, base, case, extra in ((r, p, b, c, e) for r, p, b, cs in ROUTES for c, e in cs):
            name = case if route == "chat" else f"{route}/{case}"
            body = dict(base, **extra)
            vs, vout = post(VLLM_PORT, path, body)
            os_, oout = post(OURS_PORT, path, body)
            if vs != os_:
                detail = (vout.get("error", {}).get("message", "") if vs != 200 else "")[:120]
                results.append((name, f"status vLLM {vs}, ours {os_}" + (f" (vLLM: {detail})" if detail else "")))
                continue
            if vs != 200:
                vp, op = vout["error"].get("param"), oout["error"].get("param")
                # Where vLLM's SamplingParams checks leave `param` null (or pydantic's model
                # validators name the whole `body`), ours name the field.
                named = vp in (None, "body") and op is not None
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
