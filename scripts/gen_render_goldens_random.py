"""Random render goldens for llm-render, made by Hugging Face transformers (the oracle).

Seeded random chats for each shared model: system prompts, user turns with text parts,
assistant turns with reasoning fields, tool calls (object, JSON-string and empty arguments,
17-digit floats) and null content, runs of tool results, tools, `enable_thinking`, and text
mixing think and tool tags, other models' special tokens, quotes, emoji with joiners, NBSP,
U+001F and U+3000. The fixed cases of gen_render_goldens_extra.py test one thing each; these
test the combinations, for the minijinja path and the native templates alike.

Usage (pip install transformers tokenizers jinja2; no torch, no network):
    HF_HUB_OFFLINE=1 python scripts/gen_render_goldens_random.py ../shared fixtures/goldens/render_extra
Writes OUT_DIR/random_<model>.jsonl (100 chats a model).
"""
import json, os, random, sys

shared, out_dir = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(shared, "reference"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import gen_render_goldens as ref  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

CHATS = 100
POOL = ["hello", " world", "\n", "\n\n", "  ", "\t", "<think>", "</think>", "<tool_call>", "<tool_response>",
        "</tool_response>", "{\"a\": 1}", "'q'", "\"dq\"", "é", "漢字", "🤖", "👨\u200d👩", "\u00a0", "\x1f", "\u3000",
        "1.5", "42", "<|im_end|>", "<|eot_id|>", "<｜User｜>", "a,b", "x" * 30]


def text(rng):
    return "".join(rng.choice(POOL) for _ in range(rng.randint(0, 8)))


def arguments(rng):
    return rng.choice([{"city": text(rng), "n": rng.choice([1, 2.5, 1e-7, 458883.84580789995])},
                       json.dumps({"q": text(rng)}), "", {"nested": {"l": [1, "a", None, True]}}])


def message(rng, role):
    m = {"role": role, "content": text(rng)}
    if role == "assistant":
        r = rng.random()
        if r < 0.25:
            m["reasoning_content"] = text(rng)
        elif r < 0.35:
            m["reasoning"] = text(rng)
        if rng.random() < 0.3:
            m["tool_calls"] = [ref.call(f"c{i}", rng.choice(["get_weather", "search_docs"]), arguments(rng))
                               for i in range(rng.randint(1, 2))]
            if rng.random() < 0.5:
                m["content"] = None
    if role == "user" and rng.random() < 0.15:
        m["content"] = [{"type": "text", "text": text(rng)} for _ in range(rng.randint(1, 3))]
    return m


def chat(rng):
    msgs = [{"role": "system", "content": text(rng)}] if rng.random() < 0.6 else []
    for _ in range(rng.randint(1, 4)):
        msgs.append(message(rng, "user"))
        if rng.random() < 0.8:
            msgs.append(message(rng, "assistant"))
        if rng.random() < 0.3:
            msgs += [{"role": "tool", "tool_call_id": "c0", "content": text(rng)} for _ in range(rng.randint(1, 2))]
    req = {"messages": msgs, "add_generation_prompt": rng.random() < 0.8}
    if rng.random() < 0.4:
        req["tools"] = rng.sample([ref.WEATHER, ref.SEARCH], rng.randint(1, 2))
    if rng.random() < 0.3:
        req["chat_template_kwargs"] = {"enable_thinking": rng.choice([True, False])}
    return req


os.makedirs(out_dir, exist_ok=True)
for seed, name in enumerate(["qwen3", "llama3_1", "deepseek_v3"]):
    rng = random.Random(20261130 + seed)
    tok = AutoTokenizer.from_pretrained(os.path.join(shared, "models", name))
    join = ref.template_reads_string_content(tok)
    path = os.path.join(out_dir, f"random_{name}.jsonl")
    with open(path, "w") as f:
        for i in range(CHATS):
            req = chat(rng)
            if name == "llama3_1":  # its template prints today's date otherwise
                req.setdefault("chat_template_kwargs", {})["date_string"] = "01 Jan 2026"
            rec = {"id": f"{name}/random_{i:03d}", "model": name, "request": req}
            try:
                prompt = tok.apply_chat_template(
                    ref.to_template_messages(req["messages"], join), tools=req.get("tools"), tokenize=False,
                    add_generation_prompt=req["add_generation_prompt"], **req.get("chat_template_kwargs", {}))
                rec.update(expected_prompt=prompt, expected_token_ids=tok.encode(prompt, add_special_tokens=False))
            except Exception as e:  # noqa: BLE001 - the template's own error is the expectation
                rec["expected_error"] = f"{type(e).__name__}: {e}"
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(f"{name}: {CHATS} chats -> {path}")
