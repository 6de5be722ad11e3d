"""vLLM 0.33's render server as a reference: a fixture model in a temporary folder, served by
`vllm launch render` on CPU. Shared by the golden scripts in this folder.

Setup: python3 -m venv bench-peers/vllmenv && bench-peers/vllmenv/bin/pip install vllm==0.33.0
"""
import contextlib, gzip, http.client, json, os, shutil, subprocess, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VLLM = os.path.join(ROOT, "bench-peers/vllmenv/bin/vllm")


def model_dir(name, config=None):
    """A fixture model, tokenizer uncompressed, with `config` as config.json if it has none."""
    d = tempfile.mkdtemp(prefix=f"{name}-")
    src = os.path.join(ROOT, "fixtures/models", name)
    for f in os.listdir(src):
        if f.endswith(".gz"):
            with gzip.open(os.path.join(src, f)) as a, open(os.path.join(d, f[:-3]), "wb") as b:
                shutil.copyfileobj(a, b)
        else:
            shutil.copy(os.path.join(src, f), d)
    if config is not None and not os.path.exists(os.path.join(d, "config.json")):
        json.dump(config, open(os.path.join(d, "config.json"), "w"))
    return d


LLM_RENDER = os.path.join(ROOT, "target/release/llm-render")

# A gpt-oss-20b `config.json` for the gpt-oss fixture (tokenizer only): what vLLM needs to
# serve it as gpt-oss (`max_position_embeddings` is the context the goldens assume).
GPT_OSS_CONFIG = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880,
    "intermediate_size": 2880, "num_hidden_layers": 24, "num_attention_heads": 64,
    "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 201088,
    "max_position_embeddings": 131072, "num_local_experts": 32, "num_experts_per_tok": 4,
    "experts_per_token": 4, "sliding_window": 128, "rope_theta": 150000, "rms_norm_eps": 1e-05,
    "layer_types": ["sliding_attention", "full_attention"] * 12,
    "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                     "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": False},
    "torch_dtype": "bfloat16", "eos_token_id": 200002, "pad_token_id": 199999,
    "tie_word_embeddings": False,
}


def wait_healthy(port, tries=600, pause=0.5):
    """Polls http://127.0.0.1:PORT/health until it answers 200 (or the tries run out)."""
    for _ in range(tries):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return True
        except OSError:
            pass
        time.sleep(pause)
    return False


@contextlib.contextmanager
def llm_render(port, args=()):
    """Serves `target/release/llm-render serve --port PORT ARGS` until the block ends."""
    proc = subprocess.Popen([LLM_RENDER, "serve", "--port", str(port), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(port, tries=300, pause=0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait()


@contextlib.contextmanager
def vllm_render(model, port, args, config=None, log=os.devnull):
    """Serves fixture `model` with `vllm launch render` until the block ends; yields its dir."""
    d = model_dir(model, config)
    proc = subprocess.Popen([VLLM, "launch", "render", d, "--port", str(port), *args],
                            env=dict(os.environ, VLLM_TARGET_DEVICE="cpu"),
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    try:
        wait_healthy(port)
        yield d
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(d, ignore_errors=True)
