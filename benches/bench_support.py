"""Helpers shared by the side-by-side benchmark scripts in benches/."""
import gzip, json, os, shutil, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The binary the benchmarks measure: the production build (`cargo build --profile dist`),
# or another one through LLM_RENDER_BIN.
LLM_RENDER_BIN = os.environ.get("LLM_RENDER_BIN", os.path.join(ROOT, "target/dist/llm-render"))


def proc_cpu(pid):
    """Seconds of CPU the process's live threads have run (schedstat, ns resolution)."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total / 1e9


def model_dir(name="qwen3"):
    """A temporary HF snapshot folder of a fixture model, with tokenizer.json uncompressed."""
    d = tempfile.mkdtemp(prefix=f"{name}-")
    src = os.path.join(ROOT, "fixtures/models", name)
    for f in os.listdir(src):
        if f == "tokenizer.json.gz":
            with gzip.open(os.path.join(src, f)) as a, open(os.path.join(d, "tokenizer.json"), "wb") as b:
                shutil.copyfileobj(a, b)
        else:
            shutil.copy(os.path.join(src, f), d)
    return d


def goldens(model="qwen3"):
    """The render goldens of a model, by id."""
    out = {}
    for line in open(os.path.join(ROOT, f"fixtures/goldens/render/{model}.jsonl")):
        g = json.loads(line)
        out[g["id"]] = g
    return out


def wait_healthy(url, tries=300):
    for _ in range(tries):
        try:
            urllib.request.urlopen(url + "/health", timeout=1)
            return
        except Exception:
            time.sleep(0.1)
    raise RuntimeError("server did not start: " + url)
