"""Goldens for `return_assistant_tokens_mask`, made by Hugging Face transformers (the oracle).

vLLM main's render answers `assistant_tokens_mask` from transformers' `apply_chat_template(...,
tokenize=True, return_dict=True, return_assistant_tokens_mask=True)`: 1 for each token inside
the template's `{% generation %}` blocks. This script asks transformers for the token IDs and
`assistant_masks` of
  * every render golden (fixtures/goldens/render*/) with an assistant turn and string contents,
    rendered with two request templates that carry generation tags: vLLM's own test template
    (tests/entrypoints/serve/render/test_render.py, `_TEMPLATE_WITH_GENERATION`) and a ChatML
    template with whitespace control around the tags and a `{% set %}` inside one (a Jinja2
    call block's scope: it must not leak out);
  * the features model's goldens with an assistant turn (its own template has the tags);
  * a few conversations written here (multi-byte text in the assistant turn, empty and
    back-to-back blocks, a generation prompt).
Each line is a render request (`chat_template`, `return_assistant_tokens_mask: true`) with
`expected_token_ids` and `expected_mask`. `tests/assistant_mask_goldens.rs` checks them.

Usage (pip install transformers tokenizers jinja2; no torch, no network):
    HF_HUB_OFFLINE=1 python scripts/gen_assistant_mask_goldens.py ../shared fixtures/goldens/assistant_mask.jsonl && gzip -9f fixtures/goldens/assistant_mask.jsonl
"""
import gzip, json, os, shutil, sys, tempfile

shared, out_path = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(shared, "reference"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import gen_render_goldens as ref  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")

VLLM_TEST_TEMPLATE = (
    "{% for m in messages %}"
    "{% if m['role'] == 'user' %}User: {{ m['content'] }}\n"
    "{% elif m['role'] == 'assistant' %}"
    "{% generation %}Assistant: {{ m['content'] }}\n{% endgeneration %}"
    "{% endif %}"
    "{% endfor %}"
)

CHATML_TEMPLATE = """{%- for m in messages -%}
{%- if m.role == 'assistant' -%}
<|im_start|>assistant
{% generation -%}
{%- set last = m.content -%}
{{ m.content | trim }}<|im_end|>
{%- endgeneration %}
[{{ last | default('scoped') }}]
{% else -%}
<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif -%}"""

TEMPLATES = {"vllm_test": VLLM_TEST_TEMPLATE, "chatml": CHATML_TEMPLATE}

ODD = "Grüße aus Zürich 🤖 — 漢字かな 한글 👨‍👩‍👧 𝔸𝕓"


def own_cases():
    return [
        ("odd_text", {"messages": [
            {"role": "user", "content": ODD}, {"role": "assistant", "content": ODD[::-1]},
            {"role": "user", "content": "again"}, {"role": "assistant", "content": " " + ODD + " "}]}),
        ("empty_reply", {"messages": [
            {"role": "user", "content": "say nothing"}, {"role": "assistant", "content": ""},
            {"role": "user", "content": "ok"}]}),
        ("back_to_back", {"messages": [
            {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
            {"role": "assistant", "content": "c"}, {"role": "user", "content": "d"}]}),
        ("generation_prompt", {"add_generation_prompt": True, "messages": [
            {"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"},
            {"role": "user", "content": "3+3?"}]}),
        ("no_assistant", {"messages": [{"role": "user", "content": "only me"}]}),
    ]


def golden_requests(model):
    out = []
    for d in ["render", "render_extra"]:
        folder = os.path.join(FIXTURES, "goldens", d)
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".jsonl"):
                continue
            for line in open(os.path.join(folder, name), encoding="utf-8"):
                g = json.loads(line)
                req = g["request"]
                if g["model"] != model or g.get("expected_token_ids") is None:
                    continue
                msgs = req.get("messages", [])
                if req.get("continue_final_message") or not any(m.get("role") == "assistant" for m in msgs):
                    continue
                out.append((g["id"].split("/", 1)[1], req))
    return out


def mask_of(tok, req, template):
    msgs = req["messages"]
    out = tok.apply_chat_template(
        ref.to_template_messages(msgs, True), tools=req.get("tools"), documents=req.get("documents"),
        chat_template=template, tokenize=True, return_dict=True, return_assistant_tokens_mask=True,
        add_generation_prompt=req.get("add_generation_prompt", True),
        **dict(req.get("chat_template_kwargs", {})))
    return list(out["input_ids"]), list(out["assistant_masks"])


def load(model):
    if model != "features":
        return AutoTokenizer.from_pretrained(os.path.join(shared, "models", model))
    d = tempfile.mkdtemp()
    shutil.copy(os.path.join(FIXTURES, "models", "features", "tokenizer_config.json"), d)
    with gzip.open(os.path.join(FIXTURES, "models", "qwen3", "tokenizer.json.gz")) as src, \
            open(os.path.join(d, "tokenizer.json"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    return AutoTokenizer.from_pretrained(d)


lines = []
for model in ["qwen3", "llama3_1", "deepseek_v3", "features"]:
    tok = load(model)
    if model == "features":
        runs = [(None, name, req) for name, req in golden_requests(model) + own_cases()]
    else:
        string_only = [(n, r) for n, r in golden_requests(model) + own_cases()
                       if all(isinstance(m.get("content"), str) for m in r["messages"])]
        runs = [(t, name, req) for t in TEMPLATES for name, req in string_only]
    for tname, name, req in runs:
        request = dict(req)
        if tname is not None:
            request["chat_template"] = TEMPLATES[tname]
        request["return_assistant_tokens_mask"] = True
        try:
            ids, mask = mask_of(tok, req, None if tname is None else TEMPLATES[tname])
        except Exception as e:  # noqa: BLE001 - the reference refused it; not a mask golden
            print(f"skip {model}/{name} ({tname}): {type(e).__name__}: {e}", file=sys.stderr)
            continue
        lines.append({"id": f"{model}/{tname or 'own'}/{name}", "model": model, "request": request,
                      "expected_token_ids": ids, "expected_mask": mask})

with open(out_path, "w", encoding="utf-8") as f:
    for rec in lines:
        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
marked = sum(1 for r in lines if any(r["expected_mask"]))
print(f"{len(lines)} cases ({marked} with assistant tokens) -> {out_path}; transformers {transformers.__version__}")
