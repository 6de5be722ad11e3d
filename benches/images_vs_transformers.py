"""Side by side, in one run: image bytes -> pixel_values, transformers vs llm-render.

transformers: Qwen2VLImageProcessor (PIL backend, as vLLM runs it without torchvision) on the
fixture Qwen2.5-VL preprocessor_config.json, PIL decode included, CPU time per image in this
process. llm-render: the criterion bench `image_to_pixel_values` (same images, one thread).
Prints both and the ratio, and SMG's llm-multimodal crate (Rust, crates.io) as a second peer
when it builds (benches/peers/smg_mm, one thread); then throughput with both cores for
photo_1080p: transformers in two processes vs llm-render on two threads (criterion
`both_cores`) and llm-render's server answering two clients
(whole chat renders, response included, with float32, bfloat16 and no mm_tensors), with each
one's server CPU per request. Needs: pip install transformers pillow numpy; cargo build --profile dist.
Usage: python3 benches/images_vs_transformers.py
"""
import io, os, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_support import LLM_RENDER_BIN, ROOT  # noqa: E402

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
    """Criterion medians (ms) per image: {"image_to_pixel_values": {...}, "image_to_uint8_patches": {...},
    "both_cores": {"photo_1080p_pair_to_pixel_values": ms per pair on two threads}}."""
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    res = subprocess.run(["cargo", "bench", "--bench", "images", "--", "--warm-up-time", "1",
                          "--measurement-time", "5", "image_to_|both_cores"], cwd=ROOT, capture_output=True, text=True, env=env)
    out = {}
    name = None
    for line in res.stdout.splitlines():
        m = re.match(r"(image_to_\w+|both_cores)/(\S+)", line.strip())
        if m:
            name = m.groups()
        m = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+)", line)
        if m and name:
            v, unit = float(m.group(1)), m.group(2)
            out.setdefault(name[0], {})[name[1]] = v * {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}[unit]
            name = None
    return out


def smg_ms():
    """SMG's llm-multimodal (crates.io) on the same images, one thread (`SMG_MM_THREADS=1`):
    {file: (ms to float32 pixel_values, ms to its own uint8 patches)}, or {} if it won't build."""
    manifest = os.path.join(ROOT, "benches/peers/smg_mm/Cargo.toml")
    target = os.path.join(ROOT, "bench-peers/smg-mm-target")
    built = subprocess.run(["cargo", "build", "--release", "--manifest-path", manifest, "--target-dir", target],
                           capture_output=True, text=True)
    if built.returncode != 0:
        print("SMG llm-multimodal did not build; skipping it:\n" + built.stderr[-2000:])
        return {}
    paths = [os.path.join(ROOT, "fixtures/goldens/images", f) for f in FILES]
    res = subprocess.run([os.path.join(target, "release/smg-mm-bench"),
                          os.path.join(ROOT, "fixtures/models/qwen2_5_vl/preprocessor_config.json"), *paths],
                         capture_output=True, text=True, env=dict(os.environ, SMG_MM_THREADS="1"))
    out = {}
    for line in res.stdout.splitlines():
        name, f32_ms, own_ms, _kind = line.split()
        out[name] = (float(f32_ms), float(own_ms))
    return out


def transformers_worker(n, q):
    from PIL import Image
    from transformers import AutoImageProcessor
    proc = AutoImageProcessor.from_pretrained(os.path.join(ROOT, "fixtures/models/qwen2_5_vl"))
    data = open(os.path.join(ROOT, "fixtures/goldens/images", FILES[0]), "rb").read()
    q.get()  # start together
    for _ in range(n):
        proc(images=[Image.open(io.BytesIO(data)).convert("RGB")])["pixel_values"]


def transformers_throughput(workers=2, n=20):
    """Images/s of photo_1080p with one transformers process per core."""
    import multiprocessing as mp
    q = mp.Queue()
    ps = [mp.Process(target=transformers_worker, args=(n, q)) for _ in range(workers)]
    for p in ps:
        p.start()
    time.sleep(8)  # imports
    t0 = time.time()
    for _ in ps:
        q.put(1)
    for p in ps:
        p.join()
    return workers * n / (time.time() - t0)


def llm_render_throughput(dtype, clients=2, n=20):
    """photo_1080p chat renders through the server: (images/s with `clients` at once, server
    CPU ms per request and response MB with one client)."""
    import base64, http.client, threading
    from bench_support import model_dir, proc_cpu, wait_healthy
    d = model_dir("qwen2_5_vl")
    srv = subprocess.Popen([LLM_RENDER_BIN, "serve", "--port", "18997",
                            "--model", f"qwen2_5_vl={d}", "--mm-tensor-dtype", dtype],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy("http://127.0.0.1:18997")
        img = base64.b64encode(open(os.path.join(ROOT, "fixtures/goldens/images", FILES[0]), "rb").read()).decode()
        body = ('{"model": "qwen2_5_vl", "messages": [{"role": "user", "content": [{"type": "image_url", '
                '"image_url": {"url": "data:image/jpeg;base64,' + img + '"}}, {"type": "text", "text": "hi"}]}]}')

        size = []

        def client():
            c = http.client.HTTPConnection("127.0.0.1", 18997, timeout=300)
            for _ in range(n):
                c.request("POST", "/v1/chat/completions/render", body, {"Content-Type": "application/json"})
                size.append(len(c.getresponse().read()))
        client()  # warm-up
        c0 = proc_cpu(srv.pid)
        client()
        cpu_ms = (proc_cpu(srv.pid) - c0) / n * 1e3
        threads = [threading.Thread(target=client) for _ in range(clients)]
        t0 = time.time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return clients * n / (time.time() - t0), cpu_ms, size[-1] / 1e6
    finally:
        srv.terminate()
        srv.wait()


tf = transformers_ms()
both = llm_render_ms()
lr = both.get("image_to_pixel_values", {})
u8 = both.get("image_to_uint8_patches", {})
smg = smg_ms()
print(f"{'image':26} {'transformers ms':>16} {'llm-render ms':>14} {'ratio':>7} {'SMG ms':>8} {'ratio':>7}")
for f in FILES:
    if f in lr:
        s_ms = smg.get(f, (float("nan"), 0))[0]
        print(f"{f:26} {tf[f]:16.2f} {lr[f]:14.2f} {tf[f] / lr[f]:6.1f}x {s_ms:8.2f} {s_ms / lr[f]:6.1f}x")
if smg:
    print("(SMG: llm-multimodal 1.14.0 to float32 pixel_values; its own uint8-patch output takes "
          + ", ".join(f"{f} {v[1]:.2f} ms" for f, v in smg.items()) + ")")
if u8:
    print("(llm-render to uint8 patches, what a vLLM engine takes in kwargs_data, not the "
          "float32 pixel_values above: " + ", ".join(f"{f} {v:.2f} ms" for f, v in u8.items()) + ")")
print(f"\nthroughput with both cores, {FILES[0]} (images/s):")
t = transformers_throughput()
print(f"  transformers, 2 processes (pixel_values only):  {t:6.1f}")
pair = both.get("both_cores", {}).get("photo_1080p_pair_to_pixel_values")
if pair:
    r = 2e3 / pair
    print(f"  llm-render, 2 threads in one process (pixel_values only): {r:6.1f}  ({r / t:.1f}x)")
for dtype in ("float32", "bfloat16", "none"):
    r, cpu_ms, mb = llm_render_throughput(dtype)
    print(f"  llm-render server, 2 clients, full chat render, mm_tensors {dtype:8}: {r:6.1f}  ({r / t:.1f}x)"
          f"   [one client: {cpu_ms:.1f} ms server CPU per request, {mb:.1f} MB response]")
