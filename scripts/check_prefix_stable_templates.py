"""Prefix stability of chat templates across turns (for KV prefix caching).

A template is prefix-stable when, after the model answered turn N, the prompt of turn N+1 starts
with exactly (turn N's prompt + the text the model generated + the end-of-turn marker). The
official Qwen3 and DeepSeek-R1 templates drop the reasoning of earlier assistant turns, so they
are not; templates/*_keep_reasoning.jinja keep it. For each template and conversation this
renders every turn with transformers' apply_chat_template (the reference renderer) and checks
the property as text and as token ids, where the cached ids are encode(prompt) +
encode(generated + end), i.e. the generation boundary is tokenized as the model would see it.
The templates get vLLM's template inputs, as a server renders (and llm-render, docs/api.md):
tool-call arguments sent as a JSON string are parsed into an object. Both R1 templates concatenate
the arguments as a string, so any conversation with a tool call in its history raises there;
--raw-arguments passes the messages as the client wrote them instead (transformers used directly).

Usage (pip install transformers tokenizers jinja2):
    python3 scripts/check_prefix_stable_templates.py [--shared ../shared] [--raw-arguments]
Exit status 1 when a keep_reasoning template fails a case not listed in KNOWN_VARIANT_FAILURES
(or raises, unless listed in ARGUMENT_ERRORS).

Goldens for tests/prefix_stable_templates.rs (each render one JSON line):
    python3 scripts/check_prefix_stable_templates.py --shared ../shared \
        --write-goldens fixtures/goldens/prefix_stable/templates.jsonl
A line holds template, model (the fixtures/models folder), case, messages (as the client sends
them), add_generation_prompt, chat_template_kwargs, tools (when any), and text and token_ids
(encode(text, add_special_tokens=False)), or error where the template raised (the case stops
there). A turn N+1 render also holds prefix_of (the line of turn N's prompt), reply_text (what the
model generated after it, end-of-turn marker included), reply_token_ids (encode(reply_text)),
text_prefix and token_prefix (the property as text and as ids; null after an error) and
known_failure (null, or why the render is not prefix-stable). PATH ending in .gz is gzipped.
"""
import argparse
import copy
import gzip
import json
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
    # Seen with --raw-arguments only: on vLLM's template inputs the case raises first (ARGUMENT_ERRORS).
    ("deepseek_r1_keep_reasoning.jinja", "tool_two_rounds"): "tool calls after tool outputs",
    # Text is prefix-stable, tokens are not: the prompt ends in '<think>\n' (last token '>\n') and an
    # empty reasoning starts with '\n', which the re-rendered text tokenizes as '>\n\n'.
    ("deepseek_r1_keep_reasoning.jinja", "empty_reasoning"): "'>\\n'+'\\n' re-tokenizes as '>\\n\\n'",
}

# Why the official templates are not prefix-stable (known_failure of their failing renders).
OFFICIAL_FAILURES = {
    "qwen3.jinja": "the official template drops the <think> block of assistant turns before the last user query",
    "deepseek_r1.jinja": "the official template keeps only the text after </think> of history assistant turns",
}

# Templates that raise on vLLM's template inputs once a tool call is in the history:
# '\n' + tool['function']['arguments'] + '\n' with arguments an object (TypeError).
ARGUMENT_ERRORS = {
    name: "the template concatenates tool_calls[].function.arguments as a string; vLLM's template "
          "inputs hold them as an object (TypeError)"
    for name in ("deepseek_r1.jinja", "deepseek_r1_keep_reasoning.jinja")}

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


def template_messages(messages, raw):
    """vLLM's template inputs (as shared/reference/gen_render_goldens.py builds them): a null content
    becomes "" (these templates read content as a string) and an assistant's tool-call arguments
    given as a JSON string are parsed into an object, empty ones becoming {}. `raw`: as given."""
    if raw:
        return messages
    msgs = copy.deepcopy(messages)
    for m in msgs:
        if "content" in m and m["content"] is None:
            m["content"] = ""
        if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list):
            for tc in m["tool_calls"]:
                a = tc["function"].get("arguments")
                tc["function"]["arguments"] = (json.loads(a) if isinstance(a, str) else a) if a else {}
    return msgs


def first_difference(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def check(tok, family, template, kwargs, messages, steps, raw=False):
    """Renders every turn of a case: returns (text ok, token ok, first differing token index, where
    the text diverged or the template raised) and one row per render (see the docstring; prefix_of
    counts from the case's first row)."""
    def render(msgs):
        row = {"messages": copy.deepcopy(msgs)}
        try:
            row["text"] = tok.apply_chat_template(template_messages(msgs, raw), chat_template=template,
                                                  tokenize=False, add_generation_prompt=True, **kwargs)
            row["token_ids"] = encode(row["text"])
        except Exception as e:  # the template raised: so must llm-render
            row["error"] = f"{type(e).__name__}: {e}"
        return row

    def encode(text):
        return tok.encode(text, add_special_tokens=False)

    messages = list(messages)
    text_ok, token_ok, diff_token, where = True, True, None, ""
    rows = [render(messages)]
    for step, (reasoning, content, calls, follow) in enumerate(steps, 1):
        if "error" in rows[-1]:
            text_ok, token_ok, where = False, False, f"step {step - 1}: {rows[-1]['error']}"
            break
        prompt = rows[-1]["text"]
        reply_text = generated_text(family, prompt, reasoning, content, calls) + family["end"]
        cached_text = prompt + reply_text
        reply = {"role": "assistant", "content": content}
        if reasoning is not None:
            reply["reasoning_content"] = reasoning
        if calls:
            reply["tool_calls"] = calls
        messages += [reply] + follow
        row = render(messages)
        row.update(prefix_of=len(rows) - 1, reply_text=reply_text, reply_token_ids=encode(reply_text),
                   text_prefix=None, token_prefix=None)
        rows.append(row)
        if "error" in row:
            continue
        next_prompt = row["text"]
        row["text_prefix"] = next_prompt.startswith(cached_text)
        if text_ok and not row["text_prefix"]:
            text_ok = False
            i = first_difference(cached_text, next_prompt)
            where = f"step {step}: cached …{cached_text[max(0, i - 15):i + 15]!r} vs next …{next_prompt[max(0, i - 15):i + 15]!r}"
        cached_ids = rows[-2]["token_ids"] + row["reply_token_ids"]
        next_ids = row["token_ids"]
        row["token_prefix"] = next_ids[:len(cached_ids)] == cached_ids
        if token_ok and not row["token_prefix"]:
            token_ok, diff_token = False, first_difference(cached_ids, next_ids)
    else:
        if "error" in rows[-1]:
            text_ok, token_ok, where = False, False, f"step {len(steps)}: {rows[-1]['error']}"
    return (text_ok, token_ok, diff_token, where), rows


def golden_rows(family, name, case, kwargs, rows, base):
    """The check's rows as golden lines, `base` being the line of the case's first row."""
    out = []
    for r in rows:
        line = {"template": f"templates/{name}", "model": family["model"], "case": case,
                "messages": r["messages"], "add_generation_prompt": True,
                "chat_template_kwargs": {k: v for k, v in kwargs.items() if k != "tools"}}
        if "tools" in kwargs:
            line["tools"] = kwargs["tools"]
        line.update({k: r[k] for k in ("text", "token_ids", "error") if k in r})
        if "prefix_of" in r:
            stable = r["text_prefix"] and r["token_prefix"]
            known = (ARGUMENT_ERRORS.get(name) if "error" in r
                     else KNOWN_VARIANT_FAILURES.get((name, case), OFFICIAL_FAILURES.get(name)))
            line.update({k: r[k] for k in ("reply_text", "reply_token_ids", "text_prefix", "token_prefix")},
                        prefix_of=base + r["prefix_of"], known_failure=None if stable else known)
        out.append(line)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared", help="the shared data folder")
    ap.add_argument("--raw-arguments", action="store_true",
                    help="pass tool-call arguments as the JSON strings the client sent, not vLLM's objects")
    ap.add_argument("--write-goldens", type=Path, metavar="PATH",
                    help="write every render as a JSON line to PATH (gzipped if it ends in .gz)")
    args = ap.parse_args()
    if args.write_goldens and args.raw_arguments:
        ap.error("the goldens hold vLLM's template inputs (what llm-render renders): no --raw-arguments")
    unexpected, goldens = [], []
    for family in (QWEN, R1):
        tok = AutoTokenizer.from_pretrained(args.shared / "models" / family["model"])
        official, variant = (open(ROOT / "templates" / name, encoding="utf-8").read() for name in family["templates"])
        first_turns_same = all(
            tok.apply_chat_template(template_messages(msgs, args.raw_arguments), chat_template=official,
                                    tokenize=False, add_generation_prompt=True, **kw)
            == tok.apply_chat_template(template_messages(msgs, args.raw_arguments), chat_template=variant,
                                       tokenize=False, add_generation_prompt=True, **kw)
            for _, _, kw, msgs, _ in CASES)
        print(f"# {family['templates'][1]}: turn-1 prompts identical to {family['templates'][0]}: {first_turns_same}")
        unexpected += [] if first_turns_same else [(family["templates"][1], "turn-1 prompts")]
        for name, template in zip(family["templates"], (official, variant)):
            for case, families, kwargs, messages, steps in CASES:
                if ("q" if family is QWEN else "r") not in families:
                    continue
                (text_ok, token_ok, diff, where), rows = check(tok, family, template, kwargs, messages, steps,
                                                               args.raw_arguments)
                goldens += golden_rows(family, name, case, kwargs, rows, len(goldens))
                raised = any("error" in r for r in rows)
                known = (name in ARGUMENT_ERRORS) if raised else (name, case) in KNOWN_VARIANT_FAILURES
                print(f"{name:34} {case:16} text-prefix {'ok' if text_ok else 'FAIL':4} "
                      f"token-prefix {'ok' if token_ok else 'FAIL':4} first-diff-token {'-' if diff is None else diff:>4}"
                      + (f"  {where}" if where else "")
                      + (f"  (known: {ARGUMENT_ERRORS[name] if raised else KNOWN_VARIANT_FAILURES[name, case]})"
                         if "keep_reasoning" in name and known else ""))
                if "keep_reasoning" in name and not (text_ok and token_ok) and not known:
                    unexpected.append((name, case))
    if args.write_goldens:
        args.write_goldens.parent.mkdir(parents=True, exist_ok=True)
        data = "".join(json.dumps(g, ensure_ascii=False) + "\n" for g in goldens).encode("utf-8")
        args.write_goldens.write_bytes(gzip.compress(data, 9, mtime=0) if args.write_goldens.suffix == ".gz" else data)
        print(f"wrote {len(goldens)} renders to {args.write_goldens}")
    if unexpected:
        print("unexpected failures:", unexpected)
    sys.exit(1 if unexpected else 0)


if __name__ == "__main__":
    main()
