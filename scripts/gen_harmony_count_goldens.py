"""gpt-oss reasoning-token count goldens: vLLM 0.33's `HarmonyParser.count_reasoning_tokens`
(`vllm/parser/harmony.py`), what its chat server reports as
`usage.completion_tokens_details.reasoning_tokens` for a Harmony model. A token counts when,
after the streamable parser has read it, the message it is in is on the `analysis` channel,
or on `commentary` with a recipient, and it is not a special token.

For each output (our own, in the shapes gpt-oss writes: reasoning, final answers, preambles,
tool calls with the recipient before or after the channel, builtin tools, cut-off and
malformed outputs), the IDs are the Harmony encoding's (`allowed_special="all"`), and the
golden line holds vLLM's count of the whole output from a fresh parser (`count`, as its
non-stream path counts) and after each token (`continuous`, as its stream counts the IDs so
far).

Output: `fixtures/goldens/derender/harmony_counts.jsonl`, one line per output `{"id", "text",
"ids", "texts" (each ID's text), "markers" (the
structural tokens' IDs), "count", "continuous"}`. `parsers/tests/reasoning_count_goldens.rs` replays them.

Usage: bench-peers/vllmenv/bin/python scripts/gen_harmony_count_goldens.py
"""
import json, os, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

A = "<|channel|>analysis<|message|>"
END, CALL, RET, START = "<|end|>", "<|call|>", "<|return|>", "<|start|>assistant"
CASES = {
    "analysis_then_final": f"{A}The user wants the capital of France. That is Paris.{END}{START}<|channel|>final<|message|>Paris.{RET}",
    "final_only": "<|channel|>final<|message|>Hello there! How can I help?<|return|>",
    "analysis_cut_off": f"{A}Let me think step by step about the weather in",
    "analysis_then_call_recipient_first": f"{A}Need the weather.{END}{START} to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{{\"city\": \"Paris\"}}{CALL}",
    "call_recipient_after_channel": "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Oslo\", \"days\": 3}<|call|>",
    "preamble_then_final": f"{A}Plan.{END}{START}<|channel|>commentary<|message|>I will look it up.{END}{START}<|channel|>final<|message|>Done.{RET}",
    "two_analysis": f"{A}First thought.{END}{START}<|channel|>analysis<|message|>Second thought, longer.{END}{START}<|channel|>final<|message|>Answer{RET}",
    "builtin_browser": "<|channel|>analysis to=browser.search code<|message|>{\"query\": \"vLLM\"}<|call|>",
    "analysis_unicode": f"{A}Météo à Zürich: 🌧️ 雨。{END}{START}<|channel|>final<|message|>Il pleut.{RET}",
    "text_before_header": "Hello<|channel|>analysis<|message|>x y z<|end|>",
    "text_after_return": "<|channel|>final<|message|>Hi.<|return|>trailing words",
    "start_again_at_once": f"{START}<|channel|>analysis<|message|>Odd start.{END}",
    "recipient_self": "<|channel|>commentary to=self<|message|>note to self<|end|>",
    "analysis_then_call_then_final": f"{A}Check two cities.{END}{START} to=functions.get_weather<|channel|>commentary json<|message|>{{\"city\": \"Paris\"}}{CALL}{START}<|channel|>final<|message|>Sunny.{RET}",
    "empty": "",
    "header_only": "<|channel|>analysis",
    "message_then_nothing": f"{A}",
    "constrain_in_analysis": "<|channel|>analysis <|constrain|>json<|message|>{\"a\": 1}<|end|>",
    "commentary_functions_no_constrain": "<|channel|>commentary to=functions.now<|message|>{}<|call|>",
    "commentary_lone_word": "<|channel|>commentary json<|message|>abc def<|end|>",
    "commentary_empty_to": "<|channel|>commentary to=<|message|>abc def<|end|>",
    "final_with_recipient": "<|channel|>final to=functions.f<|message|>abc def<|end|>",
    "channel_case": "<|channel|>ANALYSIS<|message|>abc def<|end|>",
    "specials_inside_analysis": "<|channel|>analysis<|message|>abc<|start|>assistant<|channel|>final<|message|>def<|end|>",
    "header_after_end_without_start": "<|channel|>analysis<|message|>abc<|end|><|channel|>analysis<|message|>def<|end|>",
    "recipient_before_channel_no_role": " to=functions.f<|channel|>commentary<|message|>abc def<|end|>",
    "header_that_does_not_parse": "<|channel|>commentary<|constrain|>json to=functions.f<|message|>abc def<|end|>",
    "return_then_more": "<|channel|>analysis<|message|>abc<|return|><|start|>assistant<|channel|>analysis<|message|>def<|end|>",
    "long_analysis": A + " ".join(f"step {i} of the plan;" for i in range(40)) + END + f"{START}<|channel|>final<|message|>ok{RET}",
}


def main():
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding
    from vllm.parser.harmony import HarmonyParser

    enc = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)

    def fresh():
        # The count reads only the Harmony encoding, not the tokenizer's own files.
        p = HarmonyParser.__new__(HarmonyParser)
        p._parser = None
        p._num_counted_tokens = -1
        p._num_reasoning_tokens = 0
        return p

    markers = {m: enc.encode(m, allowed_special="all")[0]
               for m in ["<|start|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>"]}
    out_path = os.path.join(ROOT, "fixtures/goldens/derender/harmony_counts.jsonl")
    with open(out_path, "w") as out:
        for id, text in CASES.items():
            ids = enc.encode(text, allowed_special="all")
            count = fresh().count_reasoning_tokens(ids)
            continuous = [fresh().count_reasoning_tokens(ids[: n + 1]) for n in range(len(ids))]
            texts = [enc.decode([t]) for t in ids]
            out.write(json.dumps({"id": id, "text": text, "ids": ids, "texts": texts,
                                  "markers": markers, "count": count,
                                  "continuous": continuous}, ensure_ascii=False) + "\n")
            print(id, len(ids), count)
    print(f"{len(CASES)} outputs -> {out_path}")


if __name__ == "__main__":
    main()
