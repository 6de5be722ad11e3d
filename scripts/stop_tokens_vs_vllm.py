"""Derender's stop tokens, `stop_reason` and `metrics` against vLLM 0.33's own render server.

vLLM 0.33 reads an output's end from the engine (`online_derenderer._drop_stop_token`): the
final ID is dropped only when `finish_reason` is `stop` and it is the reported `stop_reason`
or, with none reported, a stop token (`stop_reason` null for the tokenizer's EOS, else the
ID); a stop token anywhere else, or at the end of a `length` output, is decoded as text.
`metrics` is re-validated as `PerRequestMetrics`. This sends the same derender requests
(one-shot chat and completion, and one-token stream chunks) to both servers, with parsers
and without, and prints every difference; `--write` stores vLLM's answers as goldens for
tests/derender_stop_goldens.rs.

Setup: python3 -m venv bench-peers/vllmenv && bench-peers/vllmenv/bin/pip install vllm==0.33.0;
cargo build --release.
Usage: python3 scripts/stop_tokens_vs_vllm.py [--write]
"""
import gzip, http.client, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import ROOT, llm_render, vllm_render  # noqa: E402

OURS, VLLM = 18731, 18732
GOLDENS = os.path.join(ROOT, "fixtures/goldens/derender_stop.jsonl.gz")
IM_END, EOT = 151645, 151643  # Qwen3's tokenizer EOS and generation_config's second EOS
HELLO = [9707, 1879, 13]  # "Hello world."

# (name, token_ids, finish_reason, stop_reason (or "absent"), chat_request extras, metrics)
CASES = [
    ("eos_final_stop", HELLO + [IM_END], "stop", "absent", {}, None),
    ("eos_final_length", HELLO + [IM_END], "length", "absent", {}, None),
    ("eos_middle_length", HELLO + [IM_END] + HELLO, "length", "absent", {}, None),
    ("eos_middle_stop", HELLO + [IM_END] + HELLO, "stop", "absent", {}, None),
    ("second_eos_final_stop", HELLO + [EOT], "stop", "absent", {}, None),
    ("second_eos_reported_null", HELLO + [EOT], "stop", None, {}, None),
    ("reported_id_matches", HELLO + [EOT], "stop", EOT, {}, None),
    ("reported_id_other", HELLO + [IM_END], "stop", 13, {}, None),
    ("reported_string", HELLO + [IM_END], "stop", "world", {}, None),
    ("length_with_reported", HELLO, "length", 7, {}, None),
    ("finish_absent", HELLO + [IM_END], "absent", "absent", {}, None),
    ("request_stop_token", HELLO + [1879], "stop", "absent", {"stop_token_ids": [1879]}, None),
    ("ignore_eos_final", HELLO + [IM_END], "stop", "absent", {"ignore_eos": True}, None),
    ("ignore_eos_listed", HELLO + [IM_END], "stop", "absent",
     {"ignore_eos": True, "stop_token_ids": [IM_END]}, None),
    ("include_stop_str", HELLO + [IM_END], "stop", "absent", {"include_stop_str_in_output": True}, None),
    ("keep_special", HELLO + [IM_END], "length", "absent", {"skip_special_tokens": False}, None),
    ("metrics_partial", HELLO, "length", "absent", {}, {"time_to_first_token_ms": 12}),
    ("metrics_lax", HELLO, "length", "absent", {}, {"queue_time_ms": "3.5", "x": [1]}),
    ("metrics_spec", HELLO, "length", "absent", {}, {"speculative_decoding": {
        "mean_acceptance_length": 2, "draft_acceptance_rate": 0.5, "acceptance_histogram": [1, 2],
        "num_spec_steps": 3, "num_accepted_draft_tokens": 3, "num_draft_tokens": 6,
        "num_spec_tokens": 2}}),
    ("metrics_bad", HELLO, "length", "absent", {}, {"queue_time_ms": "soon"}),
    ("metrics_spec_missing", HELLO, "length", "absent", {}, {"speculative_decoding": {}}),
]


def post(port, path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    r = c.getresponse()
    return r.status, json.loads(r.read() or b"null")


def choice(ids, finish, stop_reason):
    c = {"index": 0, "token_ids": ids}
    if finish != "absent":
        c["finish_reason"] = finish
    if stop_reason != "absent":
        c["stop_reason"] = stop_reason
    return c


def bodies(case, kind):
    """The request bodies of `case` for `kind`: one for `chat`/`completion`; for `stream`, a
    chat stream one token per chunk with the finish (and stop_reason) on the last (None when
    the case has no finish, which a stream cannot leave out)."""
    name, ids, finish, stop_reason, extra, metrics = case
    chat = {"model": "qwen3", "messages": [{"role": "user", "content": "hi"}],
            "chat_template_kwargs": {"enable_thinking": False}, **extra}
    gen = {"request_id": "r-1", "choices": [choice(ids, finish, stop_reason)]}
    if metrics is not None:
        gen["metrics"] = metrics
    if kind == "chat":
        return [{"model": "qwen3", "generate_response": gen, "chat_request": chat,
                 "prompt_token_ids": [1, 2]}]
    if kind == "completion":
        return [{"model": "qwen3", "generate_responses": [gen], "prompt_token_ids": [[1, 2]],
                 "completion_request": {"model": "qwen3", "prompt": "hi", **extra}}]
    if finish == "absent":
        return None
    out = []
    for i, tid in enumerate(ids):
        last = i + 1 == len(ids)
        c = choice([tid], finish if last else None, stop_reason if last else "absent")
        out.append({"model": "qwen3", "stream": True, "prompt_token_ids": [1, 2],
                    "chat_request": {**chat, "stream": True},
                    "generate_chunk": {"request_id": "r-1", "choices": [c]}})
    return out


def send(port, kind, reqs):
    """Posts `reqs` (a stream's chunks carry the previous answer's state) and summarizes the
    answer as tests/derender_stop_goldens.rs does."""
    path = "/v1/completions/derender" if kind == "completion" else "/v1/chat/completions/derender"
    if kind != "stream":
        status, resp = post(port, path, reqs[0])
        if status != 200:
            return {"status": status}
        c = resp["choices"][0]
        text = c["message"]["content"] if kind == "chat" else c["text"]
        return {"text": text, "finish": c["finish_reason"], "stop_reason": c.get("stop_reason"),
                "completion_tokens": resp["usage"]["completion_tokens"],
                "metrics": resp.get("metrics")}
    state, text, finish, reason = None, "", None, None
    for body in reqs:
        status, resp = post(port, path, {**body, "stream_state": state})
        if status != 200:
            return {"status": status}
        state = resp["stream_state"]
        for ch in resp["chunk"]["choices"]:
            text += (ch.get("delta") or {}).get("content") or ""
            if ch.get("finish_reason"):
                finish, reason = ch["finish_reason"], ch.get("stop_reason")
    return {"text": text, "finish": finish, "stop_reason": reason}


KINDS = ("chat", "completion", "stream")


def run(port):
    out = {}
    for case in CASES:
        for kind in KINDS:
            reqs = bodies(case, kind)
            if reqs is not None:
                out[f"{case[0]}/{kind}"] = (reqs, send(port, kind, reqs))
    return out


def main():
    write = "--write" in sys.argv
    model = os.path.join(ROOT, "fixtures/models/qwen3")
    results = {}
    for setup, ours_args, vllm_args in [
        ("parsers", ["--reasoning-parser", "qwen3", "--tool-call-parser", "hermes"],
         ["--reasoning-parser", "qwen3", "--tool-call-parser", "hermes", "--enable-auto-tool-choice"]),
        ("plain", ["--reasoning-parser", "none", "--tool-call-parser", "none"], []),
    ]:
        with llm_render(OURS, ["--model", f"qwen3={model}", *ours_args]), \
                vllm_render("qwen3", VLLM, ["--served-model-name", "qwen3", *vllm_args],
                            log=f"/tmp/vllm_stop_{setup}.log"):
            ours, theirs = run(OURS), run(VLLM)
        for key in theirs:
            results[f"{setup}/{key}"] = (theirs[key][0], ours[key][1], theirs[key][1])
    same, kept = 0, []
    for key, (reqs, o, t) in results.items():
        # vLLM refuses stop strings in streams; its param names differ in form (listed).
        comparable = "status" not in t
        if o == t:
            same += 1
        elif comparable:
            print(f"DIFF {key}\n  ours: {json.dumps(o)}\n  vllm: {json.dumps(t)}")
        else:
            print(f"not comparable {key}: vllm {json.dumps(t)}, ours {json.dumps(o)}")
        kept.append({"key": key, "requests": reqs, "vllm": t})
    print(f"{same}/{len(results)} equal")
    if write:
        with gzip.open(GOLDENS, "wt") as f:
            for line in kept:
                f.write(json.dumps(line) + "\n")
        print(f"wrote {GOLDENS} ({len(kept)} lines)")


if __name__ == "__main__":
    main()
