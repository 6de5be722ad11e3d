"""vLLM `kwargs_data` goldens: what vLLM 0.33's own render server puts in `features` for images.

Starts `vllm launch render` (CPU only) on the fixture Qwen2.5-VL bundle, renders chat requests
with images from fixtures/goldens/images, and writes one line per request:
  {"id", "images": [file, ...], "mm_processor_kwargs"?, "model_id", "mm_hashes",
   "token_ids_sha256",
   "mm_placeholders",
   "kwargs_data": [{"len", "sha256"}], "mm_metadata": [<exact base64 string>]}
kwargs_data strings are large (base64 msgpack of uint8 patches), so only their length and
sha256 are kept; `mm_metadata` is small and kept verbatim.

Two things vary in vLLM's own output, and the golden pins them down:
* vLLM builds each item's map from a set of keys, so whether `pixel_values` or
  `image_grid_thw` comes first changes with the server process's hash seed (both orders were
  seen; its decoder reads a dict, so both mean the same). Items are re-encoded with msgspec
  (vLLM's own msgpack library) in the order `pixel_values`, `image_grid_thw`.
* vLLM 0.33 ships pixel values before rescale/normalize (its model normalizes). With the
  torchvision image processor (the default where torchvision is installed) they are `uint8`
  from torchvision's resize; with the PIL processor (transformers' reference, and the
  backend of the shared image goldens) they are the model dtype (`bfloat16` here) holding the
  same 0..255 integers from Pillow's resize. This script runs the PIL backend, checks every
  value is such an integer, and re-encodes the item as `uint8`: byte for byte what vLLM's
  uint8 path writes for Pillow's pixels, which is what llm-render emits.

Setup: python3 -m venv bench-peers/vllmenv && bench-peers/vllmenv/bin/pip install vllm==0.33.0
Usage: bench-peers/vllmenv/bin/python scripts/gen_kwargs_data_goldens.py \
           fixtures/goldens/render_mm/kwargs_data.jsonl
       bench-peers/vllmenv/bin/python scripts/gen_kwargs_data_goldens.py \
           fixtures/goldens/render_mm/server_kwargs.jsonl --server-kwargs
"""
import base64, hashlib, http.client, json, os, sys

import msgspec
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import ROOT, vllm_render  # noqa: E402

PORT = 31719
CASES = [
    ("single_tiny", ["tiny_14x14.png"]),
    ("single_rgb", ["rgb_640x480.png"]),
    ("single_rgba", ["rgba_320x240.png"]),
    ("single_palette", ["palette_300x200.png"]),
    ("single_gray", ["gray_256x192.png"]),
    ("single_wide", ["wide_3000x20.png"]),
    ("two_images", ["square_400x400.png", "palette_trns_96x64.png"]),
    # Per-request resolution bounds: they change the grid, and vLLM hashes them with the
    # image (in the order given), so mm_hashes differ from the same image without them.
    ("rgb_max_pixels", ["rgb_640x480.png"], {"max_pixels": 200704}),
    ("rgb_min_max", ["rgb_640x480.png"], {"min_pixels": 3136, "max_pixels": 100352}),
    ("rgb_max_min", ["rgb_640x480.png"], {"max_pixels": 100352, "min_pixels": 3136}),
    ("tiny_min_pixels", ["tiny_14x14.png"], {"min_pixels": 200704}),
    ("two_images_max", ["square_400x400.png", "palette_trns_96x64.png"], {"max_pixels": 50176}),
]


def request(files, kwargs=None):
    content = []
    for f in files:
        data = base64.b64encode(open(os.path.join(ROOT, "fixtures/goldens/images", f), "rb").read()).decode()
        content.append({"type": "image_url", "image_url": {"url": "data:image/png;base64," + data}})
    content.append({"type": "text", "text": "Describe the images."})
    req = {"model": "qwen2_5_vl", "messages": [{"role": "user", "content": content}]}
    if kwargs:
        req["mm_processor_kwargs"] = kwargs
    return req


def canonical(item):
    """Length and sha256 of a kwargs_data string as uint8, `pixel_values` first."""
    d = msgspec.msgpack.decode(base64.b64decode(item))
    assert set(d) == {"pixel_values", "image_grid_thw"}, set(d)
    dtype, shape, raw = d["pixel_values"]["data"]
    assert dtype == "bfloat16", dtype
    bits = np.frombuffer(raw.data, np.uint16).astype(np.uint32) << 16
    values = bits.view(np.float32)
    as_u8 = values.astype(np.uint8)
    assert (as_u8.astype(np.float32) == values).all(), "pixel values are not 0..255 integers"
    pv = dict(d["pixel_values"], data=["uint8", shape, msgspec.msgpack.Ext(raw.code, as_u8.tobytes())])
    k = base64.b64encode(msgspec.msgpack.encode({"pixel_values": pv, "image_grid_thw": d["image_grid_thw"]})).decode()
    return {"len": len(k), "sha256": hashlib.sha256(k.encode()).hexdigest()}


def post(body):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=300)
    c.request("POST", "/v1/chat/completions/render", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    out = json.loads(r.read())
    if r.status != 200:
        raise RuntimeError(out)
    return out


# With server-level bounds (`--mm-processor-kwargs` at launch): they change the processing
# but vLLM does not hash them; a request's own kwargs are hashed alone.
SERVER_KWARGS = {"max_pixels": 200704}
SERVER_CASES = [
    ("server_max_pixels", ["rgb_640x480.png"]),
    ("server_max_request_min", ["rgb_640x480.png"], {"min_pixels": 3136}),
    ("server_max_two_images", ["square_400x400.png", "palette_trns_96x64.png"]),
]


def main():
    """argv[1]: output file; `--server-kwargs` makes the SERVER_CASES file instead."""
    server = "--server-kwargs" in sys.argv
    mm = dict({"use_fast": False}, **(SERVER_KWARGS if server else {}))
    args = ["--served-model-name", "qwen2_5_vl", "--mm-processor-kwargs", json.dumps(mm),
            "--trust-request-mm-kwargs"]
    with vllm_render("qwen2_5_vl", PORT, args) as model_id, open(sys.argv[1], "w") as out:
        for name, files, *kwargs in SERVER_CASES if server else CASES:
            kwargs = kwargs[0] if kwargs else None
            r = post(request(files, kwargs))
            f = r["features"]
            ids = ",".join(map(str, r["token_ids"])).encode()
            out.write(json.dumps({
                "id": name, "images": files,
                **({"server_mm_processor_kwargs": SERVER_KWARGS} if server else {}),
                **({"mm_processor_kwargs": kwargs} if kwargs else {}),
                # vLLM hashes images with its `--model` value: here the temporary model dir
                "model_id": model_id, "mm_hashes": f["mm_hashes"]["image"],
                "token_ids_sha256": hashlib.sha256(ids).hexdigest(),
                "mm_placeholders": f["mm_placeholders"]["image"],
                "kwargs_data": [canonical(k) for k in f["kwargs_data"]["image"]],
                "mm_metadata": f["mm_metadata"]["image"],
            }) + "\n")
            print(name, "ok")


if __name__ == "__main__":
    main()
