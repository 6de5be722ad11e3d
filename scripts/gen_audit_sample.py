#!/usr/bin/env python3
"""Writes fixtures/audit/sample.jsonl: a seeded traffic sample of 120 chat requests for
`llm-render audit` (tests/audit_capacity.rs, the README's audit section).

Mixed as a vision-chat service sees it: short chats (some with tools), multi-turn chats,
~10k-token documents, and requests with one, two and four images at common camera and
screen sizes (640x480 to 4032x3024). Five lines are in OpenAI Batch API form
({"custom_id", "method", "url", "body"}). The images are flat palette PNGs so the file stays
small: their encoded size is far below a photo's, while their pixel sizes (all the hops
after decoding depend on) are real.

Usage: pip install pillow; python3 scripts/gen_audit_sample.py [OUT]
"""
import base64
import io
import json
import random
import sys

from PIL import Image, ImageDraw

SEED = 20261203
MODEL = "Qwen/Qwen2.5-VL-7B-Instruct"
SIZES = [(640, 480), (800, 600), (1280, 720), (1920, 1080), (1080, 1920),
         (2560, 1440), (3840, 2160), (4032, 3024), (3024, 4032), (644, 644)]
WORDS = ("the of and to in is that for it as with was on be by this are or from at an "
         "which have not had but were they one all their has been can more would there "
         "if will so what about when model cache token prefill decode request image "
         "router engine latency throughput block memory kernel batch stream replica "
         "photo chart invoice receipt table figure page summary answer question").split()
TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def png(rng, w, h):
    im = Image.new("RGB", (w, h), tuple(rng.randrange(256) for _ in range(3)))
    d = ImageDraw.Draw(im)
    for _ in range(3):
        x0, y0 = rng.randrange(w // 2), rng.randrange(h // 2)
        d.rectangle([x0, y0, x0 + w // 4, y0 + h // 4],
                    fill=tuple(rng.randrange(256) for _ in range(3)))
    im = im.convert("P", palette=Image.ADAPTIVE, colors=8)
    buf = io.BytesIO()
    im.save(buf, "PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def image_request(rng, n):
    parts = [{"type": "image_url", "image_url": {"url": png(rng, *rng.choice(SIZES))}}
             for _ in range(n)]
    parts.append({"type": "text", "text": words(rng, rng.randrange(5, 30))})
    return {"model": MODEL, "messages": [{"role": "user", "content": parts}],
            "max_tokens": 512}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "fixtures/audit/sample.jsonl"
    rng = random.Random(SEED)
    reqs = []
    for i in range(40):  # short chats
        msgs = []
        if rng.random() < 0.5:
            msgs.append({"role": "system", "content": words(rng, rng.randrange(5, 40))})
        msgs.append({"role": "user", "content": words(rng, rng.randrange(3, 80))})
        req = {"model": MODEL, "messages": msgs, "max_tokens": 256}
        if i % 8 == 0:
            req["tools"] = [TOOL]
        reqs.append(req)
    for _ in range(20):  # multi-turn chats
        msgs = [{"role": "system", "content": words(rng, 20)}]
        for _ in range(rng.randrange(2, 12)):
            msgs.append({"role": "user", "content": words(rng, rng.randrange(5, 60))})
            msgs.append({"role": "assistant", "content": words(rng, rng.randrange(20, 200))})
        msgs.append({"role": "user", "content": words(rng, rng.randrange(5, 60))})
        reqs.append({"model": MODEL, "messages": msgs, "max_tokens": 512})
    for _ in range(4):  # ~10k-token documents
        doc = " ".join(words(rng, 20) for _ in range(470))
        reqs.append({"model": MODEL, "messages": [
            {"role": "user", "content": "Summarize this document.\n\n" + doc}],
            "max_tokens": 1024})
    for n, count in [(1, 36), (2, 14), (4, 6)]:
        reqs.extend(image_request(rng, n) for _ in range(count))
    rng.shuffle(reqs)
    with open(out, "w") as f:
        for i, req in enumerate(reqs):
            if i % 24 == 5:  # OpenAI Batch API lines
                req = {"custom_id": f"request-{i}", "method": "POST",
                       "url": "/v1/chat/completions", "body": req}
            f.write(json.dumps(req, separators=(",", ":")) + "\n")
    print(f"{out}: {len(reqs)} requests")


if __name__ == "__main__":
    main()
