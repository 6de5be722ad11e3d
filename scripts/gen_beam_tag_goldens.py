"""Goldens for vLLM 0.33's `beam` parser's request constraint (`vllm/parser/beam.py`,
`BeamParser._constrain_request` over `vllm/parser/response_template_grammar.py`): the structural
tag it puts in `sampling_params.structured_outputs` for a chat request, or the 400 it raises.

vLLM's own classes run in process: the `beam` parser composed as `ParserManager._compose_parser`
composes it (`BeamParser` with `BeamReasoningParser` and/or `BeamToolParser`, auto tools on),
over each response template of the `hf` goldens (`scripts/parser_cases/hf.json`), its prompt
prefix (the decoded prompt text vLLM's `set_prompt_token_ids` gives it) set directly. The
tokenizer is a stub: the constraint reads only the template and the prompt text.

One line per case: {"id", "template", "parsers" ("both" | "tools" | "reasoning"), "prefix",
"request": {tools, tool_choice, parallel_tool_calls, response_format, chat_template_kwargs},
then "tag" (the `structural_tag` JSON string) or null, or "error" and "param"}. Plus one line per
template {"template", "spec", "reasoning_start_str"} (`BeamReasoningParser.reasoning_start_str`).
parsers/tests/beam_goldens.rs replays them.

Usage: /work/main/bench-peers/vllmenv/bin/python scripts/gen_beam_tag_goldens.py
"""
import copy
import gzip
import itertools
import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fixtures/goldens/beam_tags.jsonl.gz")

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: E402
from vllm.exceptions import VLLMValidationError  # noqa: E402
from vllm.parser.beam import BeamParser, BeamReasoningParser, BeamToolParser  # noqa: E402


class StubTokenizer:
    """What the parsers' constructors read off a tokenizer."""

    def __init__(self, template):
        self.response_template = template
        self.init_kwargs = {"response_template": template}

    def get_vocab(self):
        return {}

    def encode(self, text, add_special_tokens=False):
        return [1] if text else []

    def decode(self, ids, **kwargs):
        return ""


def fn(name, parameters=None, strict=None, description=None):
    f = {"name": name}
    if description:
        f["description"] = description
    if parameters is not None:
        f["parameters"] = parameters
    if strict is not None:
        f["strict"] = strict
    return {"type": "function", "function": f}


WEATHER = {"type": "object", "properties": {"city": {"type": "string"},
           "days": {"type": "integer"}}, "required": ["city"]}
NOW = {"type": "object", "properties": {}}
ALARM = {"type": "object", "properties": {"hour": {"oneOf": [{"type": "integer"},
         {"type": "null"}]}, "label": {"type": "string"}}}
NESTED = {"type": "object", "properties": {"nested": {"type": "object", "properties": {
          "inner": {"type": "string"}}}, "list": {"type": "array", "items": {"type": "string"}}}}
CONFIGURE = {"type": "object", "properties": {"enabled": {"type": "boolean"},
             "ratio": {"type": "number"}, "label": {"type": "string"},
             "value": {"type": ["string", "null"]}}}
ENUMS = {"type": "object", "properties": {
    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    "mode": {"const": "fast"},
    "level": {"enum": [1, 2, 3]},
    "tag": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    "note": {"type": "string", "description": "free text", "title": "Note"},
    "maybe": {"type": "string", "nullable": True}},
    "required": ["unit", "mode"], "additionalProperties": False}
DEFS = {"type": "object", "properties": {"where": {"$ref": "#/$defs/place"}},
        "$defs": {"place": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "required": ["where"]}
FORMATS = {"type": "object", "properties": {
    "day": {"type": "string", "format": "date"},
    "mail": {"type": "string", "format": "email"},
    "code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}
EXTRA = {"type": "object", "additionalProperties": True}
CLOSED = {"type": "object", "additionalProperties": False}
UNSORTED = {"type": "object", "properties": {"zeta": {"type": "integer"},
            "alpha": {"type": "string"}, "mid": {"type": "boolean"}}, "required": ["zeta"]}

TOOL_SETS = {
    "none": None,
    "one": [fn("get_weather", WEATHER, description="Weather")],
    "several": [fn("get_weather", WEATHER), fn("now", NOW), fn("set_alarm", ALARM),
                fn("complex_function", NESTED), fn("configure", CONFIGURE)],
    "no_params": [fn("now"), fn("ping", {})],
    "strict_one": [fn("get_weather", WEATHER, strict=True)],
    "strict_mixed": [fn("get_weather", WEATHER, strict=True), fn("now", NOW),
                     fn("configure", CONFIGURE, strict=False)],
    "strict_all": [fn("get_weather", WEATHER, strict=True), fn("set_alarm", ALARM, strict=True),
                   fn("complex_function", NESTED, strict=True)],
    "enums": [fn("pick", ENUMS)],
    "strict_enums": [fn("pick", ENUMS, strict=True)],
    "defs": [fn("go", DEFS), fn("unsorted", UNSORTED)],
    "strict_defs": [fn("go", DEFS, strict=True), fn("unsorted", UNSORTED, strict=True)],
    "formats": [fn("book", FORMATS)],
    "strict_formats": [fn("book", FORMATS, strict=True)],
    "open_objects": [fn("anything", EXTRA), fn("nothing", CLOSED, strict=True)],
    "prefix_names": [fn("get", NOW, strict=True), fn("get_time", NOW, strict=True),
                     fn("getter", WEATHER), fn("got", WEATHER, strict=True)],
    "unicode_name": [fn("天気", WEATHER, strict=True), fn("q.u(o)te", NOW)],
    # Schemas XGrammar refuses (a strict one leaves no tag, a loose one falls back to any
    # object), and ones whose verdict llm-render does not know (refused there).
    "xg_fails": [fn("bounds", {"type": "object", "properties": {"n": {"type": "integer",
                 "minimum": 5, "maximum": 1}}}, strict=True),
                 fn("empty_enum", {"type": "object", "properties": {"e": {"enum": []}}}),
                 fn("tuple", {"type": "object", "properties": {"t": {"type": "array",
                    "items": [{"type": "string"}]}}})],
    "xg_fails_loose": [fn("empty_enum", {"type": "object", "properties": {"e": {"enum": []}}}),
                       fn("missing_ref", {"type": "object", "properties": {
                           "r": {"$ref": "#/$defs/nowhere"}}})],
    "xg_unknown": [fn("negated", {"type": "object", "properties": {"a": {"not": {
                   "type": "string"}}}}, strict=True)],
    "xg_numbers": [fn("ratio", {"type": "object", "properties": {"r": {"type": "number",
                   "minimum": 0.5, "maximum": 1.5}, "n": {"type": "integer", "minimum": 0,
                   "maximum": 10}, "s": {"type": "string", "minLength": 1, "maxLength": 8}}},
                   strict=True)],
    "bad_name": [fn("get-weather", WEATHER)],
    "strict_bad_name": [fn("get-weather", WEATHER, strict=True)],
}
CHOICES = {
    "absent": {},
    "auto": {"tool_choice": "auto"},
    "none": {"tool_choice": "none"},
    "required": {"tool_choice": "required"},
    "named": {"tool_choice": "named"},
    "single": {"parallel_tool_calls": False},
    "required_single": {"tool_choice": "required", "parallel_tool_calls": False},
}
FORMATS_RF = {
    "none": None,
    "json_object": {"type": "json_object"},
    "json_schema": {"type": "json_schema", "json_schema": {"name": "answer", "schema": {
        "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}}},
    "structural_tag": {"type": "structural_tag", "format": {"type": "const_string",
                                                          "value": "ok"}},
    "text": {"type": "text"},
}
# The request's own `structured_outputs` (the kinds `response_format` cannot give).
STRUCTURED = {
    "so_regex": {"regex": "[a-z]+"},
    "so_choice": {"choice": ["yes", "no"]},
    "so_json_text": {"json": "{\"type\": \"string\"}"},
    "so_grammar": {"grammar": "root ::= \"a\""},
    "so_json_format": {"json": {"type": "string", "format": "date"}},
    "so_regex_nul": {"regex": "a\u0000"},
}


# Beam-style templates (the grammar derives more from them than from the hf goldens'): an
# answer with its own opener, JSON calls named by the opener, literal lists, a call without a
# closer, a closer JSON syntax could spell, a closer made of JSON syntax, xml-inline values.
_CALL = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
BEAM_TEMPLATES = {
    "beam_json": {"start_anchor": "<|im_start|>assistant\n", "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "content": {"open": "<answer>", "close": "</answer>"},
        "tool_calls": {"open_pattern": "<tool_call>(?P<name>\\w+)", "close": "</tool_call>",
                       "repeats": True, "content": "json", "transform": _CALL}}},
    "beam_lists": {"start_anchor": ["<|assistant|>", "<|tool_result_end|>"], "fields": {
        "thinking": {"open": ["<reasoning>", "<think>"], "close": ["</think>", "</reasoning>"]},
        "content": {"open": ["<final>", "<answer>"], "close": ["</answer>", "<|end|>"]},
        "tool_calls": {"open_pattern": "<call:(?P<name>\\w+)>", "close": ["</call>", "<|end|>"],
                       "content": "json", "transform": _CALL}}},
    "beam_noclose": {"start_anchor": "<s>", "fields": {
        "content": {"open_pattern": "<\\|answer\\|>", "close": "<|end|>"},
        "tool_calls": {"open_pattern": "<\\|call\\|>(?P<name>\\w+)\\s*", "repeats": True,
                       "content": "json", "content_args": {}, "transform": _CALL}}},
    "beam_spell": {"start_anchor": "<s>", "fields": {
        "thinking": {"open": "[[", "close": "]]"},
        "content": {"open": "<a>", "close": "</a>"},
        "tool_calls": {"open_pattern": "<c>(?P<name>\\w+)", "close": "x]x]", "repeats": True,
                       "content": "json", "transform": _CALL}}},
    "beam_syntax": {"start_anchor": "<s>", "fields": {
        "content": {"open": "<a>", "close": "</a>"},
        "tool_calls": {"open_pattern": "<c>(?P<name>\\w+)", "close": "\n\n", "repeats": True,
                       "content": "json", "content_args": {"strip": True}, "transform": _CALL}}},
    "beam_xml": {"start_anchor": "<|im_start|>assistant\n", "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "content": {"open": "<answer>", "close": "</answer>"},
        "tool_calls": {"open_pattern": "<tool_call>\\s*<function=(?P<name>\\w+)>",
                       "close": "</tool_call>", "repeats": True, "content": "xml-inline",
                       "content_args": {"tag_pattern":
                           "<parameter=(?P<key>\\w+)>\\s*(?P<value>.*?)\\s*</parameter>"},
                       "transform": _CALL}}},
}


def prefixes(name, template):
    """Prompt prefixes: no prompt, the message start, open thinking, an open answer, mid-text."""
    anchor = template["start_anchor"]
    anchor = anchor[0] if isinstance(anchor, list) else anchor
    out = {"empty": "", "start": "<|im_start|>user\nhi<|im_end|>\n" + anchor, "mid": anchor + "Hello"}
    fields = template["fields"]
    thinking = fields.get("thinking", {}).get("open")
    if thinking:
        thinking = thinking[0] if isinstance(thinking, list) else thinking
        out["thinking"] = anchor + thinking
        out["thought"] = anchor + thinking + "plan" + (
            fields["thinking"]["close"] if isinstance(fields["thinking"].get("close"), str)
            else fields["thinking"].get("close", [""])[0])
    content = fields.get("content", {})
    if "open" in content:
        o = content["open"]
        out["answer"] = anchor + (o[0] if isinstance(o, list) else o)
    elif "open_pattern" in content:
        out["answer"] = anchor + re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m[1], m[1]),
                                        content["open_pattern"])
    return out


def request(tools, choice, rf, thinking):
    body = {"messages": [{"role": "user", "content": "hi"}], "model": "m"}
    c = dict(CHOICES[choice])
    if tools is not None:
        body["tools"] = copy.deepcopy(tools)
    if c.get("tool_choice") == "named":
        name = tools[0]["function"]["name"] if tools else "get_weather"
        c["tool_choice"] = {"type": "function", "function": {"name": name}}
    body.update(c)
    if rf in STRUCTURED:
        body["structured_outputs"] = copy.deepcopy(STRUCTURED[rf])
    elif rf is not None:
        body["response_format"] = copy.deepcopy(FORMATS_RF[rf])
    if thinking == "no_reasoning":
        body["include_reasoning"] = False
    elif thinking is not None:
        body["chat_template_kwargs"] = {"enable_thinking": thinking}
    return body


def parser_cls(parsers):
    return type("BeamParser", (BeamParser,), {
        "reasoning_parser_cls": BeamReasoningParser if parsers != "tools" else None,
        "tool_parser_cls": BeamToolParser if parsers != "reasoning" else None,
        "tool_strict_level": None,
        "_enable_auto_tools": True,
    })


def run(template, parsers, prefix, body):
    cls = parser_cls(parsers)
    kwargs = body.get("chat_template_kwargs")
    tok = StubTokenizer(template)
    try:
        req = ChatCompletionRequest(**copy.deepcopy(body))
    except Exception as exc:  # noqa: BLE001
        return {"invalid_request": str(exc)[:200]}
    p = cls(tok, req.tools, response_template=template, enable_auto_tools=True,
            chat_template_kwargs=kwargs)
    p._prefix = prefix
    try:
        req = p.adjust_request(req)
    except VLLMValidationError as exc:
        return {"error": str(exc.args[0]) if exc.args else str(exc), "param": exc.parameter}
    so = req.structured_outputs
    tag = None if so is None else so.structural_tag
    return {"tag": tag, "response_format_cleared": req.response_format is None}


def main():
    spec = json.load(open(os.path.join(ROOT, "scripts/parser_cases/hf.json")))
    templates = {**spec["templates"], **BEAM_TEMPLATES}
    lines = []
    for tname, template in templates.items():
        tok = StubTokenizer(template)
        try:
            r = BeamReasoningParser(tok, response_template=template)
            start = r.reasoning_start_str
        except Exception as exc:  # noqa: BLE001
            start = {"error": str(exc)}
        lines.append({"template": tname, "spec": template, "reasoning_start_str": start})
        has_tools = "tool_calls" in template["fields"]
        has_thinking = "thinking" in template["fields"]
        pairings = ["both" if has_tools and has_thinking else ("tools" if has_tools else "reasoning")]
        if has_tools and has_thinking:
            pairings += ["tools", "reasoning"]
        pre = prefixes(tname, template)
        for parsers in pairings:
            # The main grid: every tool set and choice, at the message start and mid-text.
            grid = []
            for ts, ch in itertools.product(TOOL_SETS, CHOICES):
                if ts == "none" and ch not in ("absent", "required"):
                    continue
                for pk in ("start", "mid") if parsers == "both" else ("start",):
                    grid.append((ts, ch, "none", None, pk))
            # Response formats and thinking switches over fewer tool sets.
            for ts, ch, rf, th in itertools.product(
                    ("none", "one", "strict_one"), ("absent", "required", "none"),
                    [*FORMATS_RF, *STRUCTURED], (None, False)):
                if ts == "none" and ch != "absent":
                    continue
                if (rf, th) == ("none", None):
                    continue
                grid.append((ts, ch, rf, th, "start"))
            # Every prefix.
            if parsers == "both":
                for pk in pre:
                    for ts, ch, rf, th in (("none", "absent", "none", None),
                                           ("one", "absent", "none", None),
                                           ("strict_one", "absent", "none", False),
                                           ("several", "required", "none", None),
                                           ("one", "none", "json_object", None),
                                           ("none", "absent", "json_schema", False)):
                        grid.append((ts, ch, rf, th, pk))
                    # Reasoning left out of the output (`include_reasoning: false`).
                    grid.append(("one", "absent", "none", "no_reasoning", pk))
            seen = set()
            for ts, ch, rf, th, pk in grid:
                key = (ts, ch, rf, th, pk)
                if key in seen or pk not in pre:
                    continue
                seen.add(key)
                body = request(TOOL_SETS[ts], ch, None if rf == "none" else rf, th)
                out = run(template, parsers, pre[pk], body)
                if "invalid_request" in out:
                    continue
                case_id = f"{tname}/{parsers}/{ts}/{ch}/{rf}/{th}/{pk}"
                lines.append({"id": case_id, "template": tname, "parsers": parsers,
                              "prefix": pre[pk], "request": body, **out})
    with gzip.open(OUT, "wt", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    cases = [x for x in lines if "id" in x]
    print(len(cases), "cases;", sum("error" in x for x in cases), "errors;",
          sum(x.get("tag") is not None for x in cases), "tags")


if __name__ == "__main__":
    main()
