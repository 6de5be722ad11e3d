"""Side by side, in one run: image bytes -> pixel_values, transformers vs llm-render.

transformers: Qwen2VLImageProcessor (PIL backend, as vLLM runs it without torchvision) on the
fixture Qwen2.5-VL preprocessor_config.json, PIL decode included, CPU time per image in this
process. llm-render: the criterion bench `image_to_pixel_values` (same images, one thread).
Prints both and the ratio. Needs: pip install transformers pillow numpy; cargo.
Usage: python3 benches/images_vs_transformers.py
"""
import io, os, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_support import ROOT  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
FILES = ["photo_1080p.jpg", "rgb_640x480.png", "progressive_800x600.jpg"]


def transformers_ms():
    from PIL import Image
    from transformers import AutoImageProcessor
    proc = AutoImageProcessor.from_pretrained(os.path.join(ROOT, "fixtures/models/qwen2_5_vl"))
    out = {}
    for f in FILES:
        data = open(os.path.join(ROOT, "fixtures/goldens/images", f), "rb").read()
        def once():
            img = Image.open(io.BytesIO(data)).convert("RGB")
            return proc(images=[img])["pixel_values"]
        once()
        n = 10
        t0 = time.process_time()
        for _ in range(n):
            once()
        out[f] = (time.process_time() - t0) / n * 1e3
    return out


def llm_render_ms():
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    res = subprocess.run(["cargo", "bench", "--bench", "images", "--", "--warm-up-time", "1",
                          "--measurement-time", "5"], cwd=ROOT, capture_output=True, text=True, env=env)
    out = {}
    name = None
    for line in res.stdout.splitlines():
        m = re.match(r"image_to_pixel_values/(\S+)", line.strip())
        if m:
            name = m.group(1)
        m = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+)", line)
        if m and name:
            v, unit = float(m.group(1)), m.group(2)
            out[name] = v * {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}[unit]
            name = None
    return out


tf = transformers_ms()
lr = llm_render_ms()
print(f"{'image':26} {'transformers ms':>16} {'llm-render ms':>14} {'ratio':>7}")
for f in FILES:
    if f in lr:
        print(f"{f:26} {tf[f]:16.2f} {lr[f]:14.2f} {tf[f] / lr[f]:6.1f}x")
