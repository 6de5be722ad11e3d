"""Prefix stability of chat templates across turns (for KV prefix caching).

A template is prefix-stable when, after the model answered turn N, the prompt of turn N+1 starts
with exactly (turn N's prompt + the text the model generated + the end-of-turn marker). The
official Qwen3 and DeepSeek-R1 templates drop the reasoning of earlier assistant turns, so they
are not; templates/*_keep_reasoning.jinja keep it. For each template and conversation this
renders every turn with transformers' apply_chat_template (the reference renderer) and checks
the property as text and as token ids, where the cached ids are encode(prompt) +
encode(generated + end), i.e. the generation boundary is tokenized as the model would see it.

Usage (pip install transformers tokenizers jinja2):
    python3 scripts/check_prefix_stable_templates.py [--shared ../shared]
Exit status 1 when a keep_reasoning template fails a case not listed in KNOWN_VARIANT_FAILURES.
"""
import argparse
import sys
from pathlib import Path

from transformers import AutoTokenizer

ROOT = Path(__file__).resolve().parent.parent

QWEN = {"model": "qwen3", "end": "<|im_end|>",
        "templates": ["qwen3.jinja", "qwen3_keep_reasoning.jinja"]}
R1 = {"model": "deepseek_v3", "end": "<｜end▁of▁sentence｜>",  # DeepSeek-R1 shares V3's tokenizer
      "templates": ["deepseek_r1.jinja", "deepseek_r1_keep_reasoning.jinja"]}

KNOWN_VARIANT_FAILURES = {
    # R1's template inherits from V3 a tool-call rendering that differs from what follows its own
    # generation prompt after tool outputs (no <｜tool▁outputs▁end｜>; <｜Assistant｜><｜tool▁calls▁begin｜>
    # only for the first tool-call message of a conversation); the variant leaves that alone.
    ("deepseek_r1_keep_reasoning.jinja", "tool_two_rounds"): "tool calls after tool outputs",
    # Text is prefix-stable, tokens are not: the prompt ends in '<think>\n' (last token '>\n') and an
    # empty reasoning starts with '\n', which the re-rendered text tokenizes as '>\n\n'.
    ("deepseek_r1_keep_reasoning.jinja", "empty_reasoning"): "'>\\n'+'\\n' re-tokenizes as '>\\n\\n'",
}

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def call(city, i=1):
    return {"id": f"call_{i}", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "%s"}' % city}}


def user(text):
    return {"role": "user", "content": text}


def tool(text):
    return {"role": "tool", "tool_call_id": "call_1", "content": text}


# A case: (name, families, template kwargs, first messages, steps). A step is what the model
# answers (reasoning or None when the client sends no reasoning_content, content, tool calls)
# and the messages the client appends after the answer.
CASES = [
    ("thinking_on", "qr", {}, [user("What is 17 * 23?")],
     [("17 * 23 = 17 * 20 + 17 * 3 = 340 + 51 = 391.", "17 × 23 = **391**.", [], [user("And 17 * 24?")])]),
    ("thinking_off", "q", {"enable_thinking": False}, [user("What is 17 * 23?")],
     [(None, "391", [], [user("And 17 * 24?")])]),
    ("empty_reasoning", "qr", {}, [user("Say hi.")],
     [(None, "Hi!", [], [user("Again.")])]),
    ("system", "qr", {}, [{"role": "system", "content": "You are terse."}, user("Capital of France?")],
     [("The capital of France is Paris.", "Paris.", [], [user("Of Italy?")])]),
    ("tool_call", "qr", {"tools": TOOLS}, [user("Weather in Paris?")],
     [("I should call get_weather for Paris.", "", [call("Paris")], [tool('{"temp_c": 18}')]),
      ("It is 18 degrees.", "It is 18 °C in Paris.", [], [user("Thanks! And Rome?")])]),
    ("tool_two_rounds", "qr", {"tools": TOOLS}, [user("Weather in Paris, then Rome?")],
     [("Call for Paris first.", "", [call("Paris")], [tool('{"temp_c": 18}')]),
      ("Now Rome.", "", [call("Rome", 2)], [tool('{"temp_c": 24}')]),
      ("Both known.", "Paris 18 °C, Rome 24 °C.", [], [user("Which is warmer?")])]),
    ("three_turns", "qr", {}, [user("Pick a number from 1 to 3.")],
     [("Any will do; 2.", "2", [], [user("Double it.")]),
      ("2 * 2 = 4.", "4", [], [user("Now halve that.")]),
      ("4 / 2 = 2.", "2", [], [user("Thanks.")])]),
]


def generated_text(family, prompt, reasoning, content, calls):
    """The text the model writes after `prompt`, before the end marker."""
    if family is QWEN:
        body = content + "".join(
            ("\n" if i or content else "") + '<tool_call>\n{"name": "%s", "arguments": %s}\n</tool_call>'
            % (c["function"]["name"], c["function"]["arguments"]) for i, c in enumerate(calls))
        if prompt.endswith("<think>\n\n</think>\n\n"):  # enable_thinking=false: the prompt holds the block
            return body
        return "<think>\n" + (reasoning or "") + "\n</think>\n\n" + body
    body = content
    if calls:
        body += "<｜tool▁calls▁begin｜>" + "\n".join(
            "<｜tool▁call▁begin｜>function<｜tool▁sep｜>%s\n```json\n%s\n```<｜tool▁call▁end｜>"
            % (c["function"]["name"], c["function"]["arguments"]) for c in calls) + "<｜tool▁calls▁end｜>"
    if prompt.endswith("<think>\n"):  # R1's generation prompt opens the think block
        return (reasoning or "") + "\n</think>\n\n" + body
    return ("<think>\n" + reasoning + "\n</think>\n\n" if reasoning else "") + body  # after tool outputs


def first_difference(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def check(tok, family, template, kwargs, messages, steps):
    """Returns (text ok, token ok, first differing token index, where the text diverged)."""
    def render(msgs):
        return tok.apply_chat_template(msgs, chat_template=template, tokenize=False,
                                       add_generation_prompt=True, **kwargs)

    def encode(text):
        return tok.encode(text, add_special_tokens=False)

    messages = list(messages)
    text_ok, token_ok, diff_token, where = True, True, None, ""
    for step, (reasoning, content, calls, follow) in enumerate(steps, 1):
        prompt = render(messages)
        cached_text = prompt + generated_text(family, prompt, reasoning, content, calls) + family["end"]
        reply = {"role": "assistant", "content": content}
        if reasoning is not None:
            reply["reasoning_content"] = reasoning
        if calls:
            reply["tool_calls"] = calls
        messages += [reply] + follow
        next_prompt = render(messages)
        if text_ok and not next_prompt.startswith(cached_text):
            text_ok = False
            i = first_difference(cached_text, next_prompt)
            where = f"step {step}: cached …{cached_text[max(0, i - 15):i + 15]!r} vs next …{next_prompt[max(0, i - 15):i + 15]!r}"
        cached_ids = encode(prompt) + encode(cached_text[len(prompt):])
        next_ids = encode(next_prompt)
        if token_ok and next_ids[:len(cached_ids)] != cached_ids:
            token_ok, diff_token = False, first_difference(cached_ids, next_ids)
    return text_ok, token_ok, diff_token, where


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared", help="the shared data folder")
    args = ap.parse_args()
    unexpected = []
    for family in (QWEN, R1):
        tok = AutoTokenizer.from_pretrained(args.shared / "models" / family["model"])
        official, variant = (open(ROOT / "templates" / name, encoding="utf-8").read() for name in family["templates"])
        first_turns_same = all(
            tok.apply_chat_template(msgs, chat_template=official, tokenize=False, add_generation_prompt=True, **kw)
            == tok.apply_chat_template(msgs, chat_template=variant, tokenize=False, add_generation_prompt=True, **kw)
            for _, _, kw, msgs, _ in CASES)
        print(f"# {family['templates'][1]}: turn-1 prompts identical to {family['templates'][0]}: {first_turns_same}")
        unexpected += [] if first_turns_same else [(family["templates"][1], "turn-1 prompts")]
        for name, template in zip(family["templates"], (official, variant)):
            for case, families, kwargs, messages, steps in CASES:
                if ("q" if family is QWEN else "r") not in families:
                    continue
                text_ok, token_ok, diff, where = check(tok, family, template, kwargs, messages, steps)
                print(f"{name:34} {case:16} text-prefix {'ok' if text_ok else 'FAIL':4} "
                      f"token-prefix {'ok' if token_ok else 'FAIL':4} first-diff-token {'-' if diff is None else diff:>4}"
                      + (f"  {where}" if where else "")
                      + (f"  (known: {KNOWN_VARIANT_FAILURES[name, case]})" if (name, case) in KNOWN_VARIANT_FAILURES else ""))
                if "keep_reasoning" in name and not (text_ok and token_ok) and (name, case) not in KNOWN_VARIANT_FAILURES:
                    unexpected.append((name, case))
    if unexpected:
        print("unexpected failures:", unexpected)
    sys.exit(1 if unexpected else 0)


if __name__ == "__main__":
    main()
