"""`token_offsets` (with `token_ids`) of llm-render's renders against vLLM 0.33's own render
server, for prompts with multi-byte characters, whitespace runs, a chat template and a
truncated prompt. Both serve the Qwen3 fixture.

Setup: as scripts/sampling_params_vs_vllm.py.
Usage: bench-peers/vllmenv/bin/python scripts/token_offsets_vs_vllm.py
"""
import http.client, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import ROOT, llm_render, vllm_render  # noqa: E402
VLLM_PORT, OURS_PORT = 31761, 31762
CASES = [("/v1/completions/render", {"prompt": t, "return_token_offsets": True})
         for t in ["Hello, world.", "Café ☕ naïve 日本語 🤖🦀 done", "  spaced\n\ttabs  "]]
CASES += [
    ("/v1/chat/completions/render",
     {"messages": [{"role": "user", "content": "Café ☕ 日本語 🤖"}], "return_token_offsets": True}),
    ("/v1/completions/render", {"prompt": "The quick brown fox jumps over the lazy dog.",
                                "return_token_offsets": True, "truncate_prompt_tokens": 4}),
]


def post(port, path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    r = c.getresponse()
    out = json.loads(r.read())
    return out[0] if isinstance(out, list) else out


def main():
    bad = 0
    fixture = ["--model", f"qwen3={os.path.join(ROOT, 'fixtures/models/qwen3')}"]
    with llm_render(OURS_PORT, fixture), \
            vllm_render("qwen3", VLLM_PORT, ["--served-model-name", "qwen3"], log="/tmp/vllm_offsets.log"):
        for path, body in CASES:
            body = dict(body, model="qwen3")
            a, b = post(VLLM_PORT, path, body), post(OURS_PORT, path, body)
            same = a["token_ids"] == b["token_ids"] and a["token_offsets"] == b["token_offsets"]
            bad += not same
            print("same" if same else "DIFF", path, json.dumps(body, ensure_ascii=False)[:70])
    print(f"{len(CASES) - bad} of {len(CASES)} agree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
