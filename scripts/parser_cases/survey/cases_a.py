"""Group a's cases for gen.py (a copy of /work/main/scripts/gen_tool_parser_direct_goldens.py).

SUITES: (parser, fixture_model, added_tokens, with_stream, cases), each case
(id, text, source). SUITE_LABELS (parallel to SUITES) names each suite: mistral has three,
on the same fixture, that differ only in the tokens added (which is how vLLM's mistral parser
picks its path on a Hugging Face tokenizer, see REPORT.md).
REASONING_SUITES: (parser, fixture_model, cases); REASONING_ADDED_TOKENS gives the tokens a
reasoning suite's fixture needs.
Tools: gen_tool_parser_goldens.TOOLS (get_weather{city:str, days:int, metric:bool,
ratio:number, opts:object}, write_file{path, content}, now{}); no TOOLS_EXTRA needed: where a
test used other tool names they are mapped onto these, and `launch` is the undeclared tool.
"""

T = "[TOOL_CALLS]"
A = "[ARGS]"
VT = "vllm tests/tool_parsers/test_mistral_tool_parser.py"
SG = "sglang test/registered/function_call/test_mistral_detector.py"
SMG = "smg (sgl-model-gateway) tests/tool_parser_mistral.rs"

# ── mistral, pre-v11 path: the vocabulary has [TOOL_CALLS] but no [ARGS] ─────────────────────
MISTRAL_PRE_V11 = [
    ("v03_one_call", f'{T} [{{"name": "get_weather", "arguments": {{"city": "Paris", "days": 3}}}}]',
     f"{VT}::test_extract_tool_calls_pre_v11_tokenizer[single_tool_weather]"),
    ("v03_spaced", f'{T}  [ {{"name":"now" , "arguments" : {{}} }} ]',
     f"{VT}::test_extract_tool_calls_streaming_pre_v11_tokenizer[single_tool_add] (whitespace inside the array)"),
    ("v03_args_before_name", f'{T} [{{"arguments": {{"city": "Paris", "name": "x"}}, "name": "get_weather"}}]',
     f"{VT}::test_extract_tool_calls_pre_v11_tokenizer[argument_before_name_and_name_in_argument]"),
    ("v03_two_calls", f'{T} [{{"name": "get_weather", "arguments": {{"city": "東京 🌧", "opts": {{"a": [1, 2.5, null]}}}}}}, {{"name": "now", "arguments": {{}}}}]',
     f"{VT}::test_extract_tool_calls_pre_v11_tokenizer[multiple_tools]"),
    ("v03_content_before", f'Hello{T} [{{"name": "now", "arguments": {{}}}}]',
     f"{VT}::test_extract_tool_calls_pre_v11_tokenizer[content_before_tool]"),
    ("v03_trailing_text", f'{T} [{{"name": "get_weather", "arguments": {{"city": "Dallas"}}}}]\nextra trailing data',
     f"{VT}::test_extract_tool_calls_pre_v11_tokenizer[trailing_data_after_json]"),
    ("v03_pretty_around", f'I\'ll check.\n\n{T} [\n    {{\n        "name": "get_weather",\n        "arguments": {{\n            "city": "Oslo"\n        }}\n    }}\n]\n\nDone.',
     f"{SMG}::test_mistral_real_world_output (pretty array, text before and after)"),
    ("v03_junk_before_array", f'{T}  junk [{{"name": "now", "arguments": {{}}}}] trail',
     f"{VT}::test_extract_tool_calls_pre_v11_regex_fallback"),
    ("v03_not_json", f"{T} not json at all",
     f"{VT}::test_extract_tool_calls_pre_v11_regex_fallback_fails"),
    ("v03_two_markers", f'{T} [{{"name": "now", "arguments": {{}}}}]{T} [{{"name": "get_weather", "arguments": {{"city": "Oslo"}}}}]',
     f"{VT}::test_extract_tool_calls_pre_v11_multiple_bot_tokens_raises (older vLLM raised; 0.32 keeps the first)"),
    ("v03_bare_object", f'{T} {{"name": "now", "arguments": {{}}}}',
     "broken: a bare object instead of an array (vLLM reads it as one call)"),
    ("v03_string_args", f'{T} [{{"name": "get_weather", "arguments": "{{\\"city\\": \\"Paris\\"}}"}}]',
     "broken: arguments given as a JSON string"),
    ("v03_invalid_args", f'Sure.\n{T} [{{"name": "get_weather", "arguments": {{"city": Paris}}}}]',
     "broken: invalid JSON in the arguments, text before the marker"),
    ("v03_with_id", f'{T} [{{"name": "now", "arguments": {{}}, "id": "abc123xyz"}}]',
     "broken: none (well-formed): a call id in the object, as the v3-v7 templates write them in the history"),
    ("v03_unterminated", f'{T} [{{"name": "get_weather", "arguments": {{"city": "Par',
     f"broken: unterminated call ({SMG}::test_mistral_malformed_json)"),
    ("v03_unknown_tool", f'{T} [{{"name": "launch", "arguments": {{"x": 1}}}}]',
     "broken: unknown tool name"),
    ("v03_v11_body", f'{T}get_weather{{"city": "Paris"}}',
     "broken: a v11 `name{args}` body where the tokenizer is pre-v11"),
    ("v03_marker_only", f"Hi {T}", "broken: output cut off right after the marker"),
    ("no_call", "This is a test", f"{VT}::test_extract_tool_calls_no_tools"),
]

# ── mistral, v11+ path: the vocabulary has [TOOL_CALLS] and [ARGS] (parser engine) ──────────
MISTRAL_V11 = [
    ("v11_args_one_call", f'{T}get_weather{A}{{"city": "Paris", "days": 3}}',
     f"{VT}::test_extract_tool_calls[single_tool_add_args]; {SG}::test_compact_format_single_tool_call"),
    ("v11_brace_one_call", f'{T}get_weather{{"city": "Paris", "days": 3}}',
     f"{VT}::test_extract_tool_calls[single_tool_add] (no [ARGS]: the `{{` ends the name)"),
    ("v11_args_two_calls", f'{T}get_weather{A}{{"city": "東京 🌧"}}{T}now{A}{{}}',
     f"{VT}::test_extract_tool_calls[multiple_tool_calls_args]; {SG}::test_streaming_two_compact_calls_in_one_chunk"),
    ("v11_brace_two_calls", f'{T}get_weather{{"city": "Rome"}}{T}now{{}}',
     f"{VT}::test_extract_tool_calls[multiple_tool_calls]"),
    ("v11_content_before", f'Sure.\n{T}now{A}{{}}',
     f"{VT}::test_extract_tool_calls[content_before_tool_args]; {SG}::test_streaming_text_and_compact_call_in_one_chunk"),
    ("v11_braces_in_content_and_string", f'hi{{hi{T}write_file{{"path": "a.py", "content": "print(\\"hello world!\\")\\nre.compile(r\'{{}}\')"}}',
     f"{VT}::test_extract_tool_calls[wrong_json] / test_extract_tool_calls_streaming_one_chunk[v11-complex]"),
    ("v11_unclosed_object", f'hi{{hi{T}write_file{{"path": "a.py", "content": "re.compile(r\'{{}}\')"',
     f"{VT}::test_extract_tool_calls[complex] (object never closed)"),
    ("v11_trailing_text", f'Sure.\n{T}get_weather{A}{{"city": "Beijing"}}\nIt is sunny.',
     f"{SG}::test_streaming_compact_call_is_chunk_size_invariant; vLLM gh#48975 (text after name{{args}})"),
    ("v11_no_args", f"{T}now",
     f"{VT}::test_extract_tool_calls_v11_without_args_skipped"),
    ("v11_string_values_typed", f'{T}get_weather{A}{{"city": "Paris", "days": "3", "metric": "true"}}',
     "broken: numbers/booleans written as strings (vLLM's engine types them by the schema, non-stream only)"),
    ("v11_invalid_json", f'{T}get_weather{A}{{"city": Paris}}',
     "broken: invalid JSON in the arguments"),
    ("v11_unknown_tool", f'Let me check.\n{T}get_wether{A}{{"city": "Beijing"}}\nDone.',
     f"{SG}::test_streaming_unknown_compact_tool_leaks_no_markup (unknown tool, text around)"),
    ("v11_truncated_second", f'{T}get_weather{A}{{"city": "Beijing"}}{T}get_wea',
     f"{SG}::test_detect_and_parse_drops_truncated_compact_call (unterminated second call)"),
    ("v11_string_args", f'{T}get_weather{A}"{{\\"city\\": \\"Paris\\"}}"',
     "broken: arguments given as a JSON string"),
    ("v11_text_between_calls", f'{T}now{A}{{}} and then {T}now{A}{{}}',
     "broken: text between two calls"),
    ("v11_marker_in_string", f'{T}write_file{A}{{"path": "a", "content": "x {T} y"}}',
     "broken: the marker inside a JSON string argument"),
    ("v11_name_with_spaces", f"{T}bad name here{A}{{}}",
     "broken: a name with spaces (llm-render parsers/tests/tools.rs)"),
    ("v11_empty_name", f'{T}{A}{{"city": "Paris"}}', "broken: empty name"),
    ("v11_array_body", f'{T} [{{"name": "now", "arguments": {{}}}}]',
     "broken: a pre-v11 `[{...}]` body where the tokenizer is v11+"),
    ("v11_ws_before", f"\n\n{T}now{A}{{}}",
     "broken: whitespace before the call (engine drops whitespace-only content)"),
]

# ── mistral with [THINK]/[/THINK] in the vocabulary too (v13+ reasoning encoding) ────────────
MISTRAL_V13 = [
    ("v13_args_one_call", f'{T}get_weather{A}{{"city": "Paris", "days": 3}}',
     f"{VT}::test_extract_tool_calls[single_tool_add_args], with [THINK] tokens in the vocabulary"),
    ("v13_think_then_call", f'[THINK]I need the weather.[/THINK]{T}get_weather{A}{{"city": "Paris"}}',
     f"{VT}::test_extract_tool_calls_streaming[engine_with_reasoning] (think block before a call)"),
    ("v13_think_then_text", "[THINK]Thinking.[/THINK]It is sunny.",
     "broken: a think block reaching the tool parser (no reasoning parser configured)"),
    ("v13_call_inside_think", f'[THINK]Let me call.{T}now{A}{{}}',
     "broken: [TOOL_CALLS] before [/THINK] (the engine ends reasoning implicitly)"),
]

# ── granite (Granite 3.0/3.1, parser engine) ─────────────────────────────────────────────────
GT = "vllm tests/tool_parsers/test_granite_tool_parser.py"
GRANITE = [
    ("token_one_call", '<|tool_call|> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]',
     f"{GT}::TestGraniteToolParser single_tool_call_output / test_granite_token_prefix_format"),
    ("string_one_call", '<tool_call> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]',
     f"{GT}::test_granite_string_prefix_format (Granite 3.1 plain-text marker)"),
    ("two_calls_pretty", '<|tool_call|> [\n  {"name": "get_weather", "arguments": {"city": "Tokyo"}},\n  {"name": "now", "arguments": {}}\n]',
     f"{GT}::TestGraniteToolParser parallel_tool_calls_output"),
    ("args_before_name", '<|tool_call|> [{"arguments": {"city": "Tokyo"}, "name": "get_weather"}, {"arguments": {"days": 2}, "name": "get_weather"}]',
     f"{GT}::test_streaming_parallel_calls_batched_deltas"),
    ("name_in_arguments_first", '<|tool_call|> [{"arguments": {"name": "x", "city": "Rome"}, "name": "get_weather"}]',
     f"{VT}::test_extract_tool_calls_pre_v11_tokenizer[argument_before_name_and_name_in_argument], in Granite's format"),
    ("surrounding_text", 'Let me check the weather for you.\n<|tool_call|> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]\nI\'ll get that information.',
     f"{GT}::TestGraniteToolParser surrounding_text_output"),
    ("escaped_strings", '<tool_call> [{\n  "name": "write_file",\n  "arguments": {\n    "path": "C:\\\\Users\\\\f.txt",\n    "content": "He said \\"hello\\"\\nline2 🎉"\n  }\n}]',
     f"{GT}::TestGraniteToolParser escaped_strings_output"),
    ("unterminated", '<|tool_call|> [{"name": "get_weather", "arguments": {',
     f"{GT}::TestGraniteToolParser malformed_input_outputs[0] (unterminated call)"),
    ("not_an_array", '<|tool_call|> {"name": "now", "arguments": {}}',
     f"{GT}::TestGraniteToolParser malformed_input_outputs[1] (object, not an array)"),
    ("string_args", '<|tool_call|> [{"name": "get_weather", "arguments": "not a dict"}]',
     f"{GT}::TestGraniteToolParser malformed_input_outputs[2] (arguments a JSON string)"),
    ("two_markers", '<|tool_call|> [{"name": "now", "arguments": {}}] and <tool_call> [{"name": "get_weather", "arguments": {"city": "Rome"}}]',
     "broken: a second marked array after text"),
    ("no_marker_array", 'Some text [{"name": "now"}]',
     f"{GT}::TestGraniteToolParser malformed_input_outputs[3] (no marker)"),
    ("invalid_args", '<|tool_call|> [{"name": "get_weather", "arguments": {"city": Tokyo}}]',
     "broken: invalid JSON in the arguments"),
    ("unknown_tool", '<|tool_call|> [{"name": "launch", "arguments": {"x": 1}}]',
     "broken: unknown tool name"),
    ("string_values_typed", '<|tool_call|> [{"name": "get_weather", "arguments": {"days": "3", "metric": "false"}}]',
     "broken: numbers/booleans written as strings (engine schema typing)"),
    ("no_call", "This is a regular response without any tool calls.",
     f"{GT}::TestGraniteToolParser no_tool_calls_output"),
]

# ── granite4 (Granite 4.0: hermes-like <tool_call>{...}</tool_call>) ─────────────────────────
G4 = "vllm tests/tool_parsers/test_granite4_tool_parser.py"
GRANITE4 = [
    ("one_call", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
     "broken: none (well-formed): the Granite 4.0 template's format (hermes-like)"),
    ("text_around_three", 'Here goes the bbox call: \n<tool_call> {"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\", \\"opts\\": {\\"c\\": [[23.54, 43.1], [4, 5]]}}"} </tool_call> Now the stock price call: \n <tool_call> {"name": "write_file", "arguments": {"path": "a", "content": "b"}} </tool_call> See? I\'m a helpful assistant.',
     f"{G4}::test_tool_call_parser_complex (string arguments, text between and after calls)"),
    ("content_between", '<tool_call> {"name": "now", "arguments": {}} </tool_call>some explanation <tool_call> {"name": "now", "arguments": {}} </tool_call>',
     f"{G4}::test_streaming_preserves_content_between_complete_tool_calls"),
    ("compact_json", '<tool_call>{"name":"get_weather","arguments":{"city":"東京 🌧"}}</tool_call>',
     "broken: none (well-formed): compact JSON (vLLM re-serializes the arguments)"),
    ("invalid_json", '<tool_call>\n{"name": "get_weather", "arguments": {"city": Paris}}\n</tool_call>',
     "broken: invalid JSON in the call"),
    ("unterminated", 'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par',
     "broken: unterminated call"),
    ("unknown_tool", '<tool_call>\n{"name": "launch", "arguments": {"x": 1}}\n</tool_call>',
     "broken: unknown tool name"),
    ("missing_arguments", '<tool_call>\n{"name": "now"}\n</tool_call>',
     "broken: no arguments key"),
    ("two_starts", '<tool_call>\n<tool_call>\n{"name": "now", "arguments": {}}\n</tool_call>',
     "broken: two start markers in a row"),
    ("no_call", "The weather in Paris is mild.", "broken: none (well-formed): plain text"),
]

# ── granite-20b-fc ───────────────────────────────────────────────────────────────────────────
G20 = "vllm tests/tool_parsers/test_granite_20b_fc_tool_parser.py"
FC = "<function_call>"
GRANITE_20B_FC = [
    ("one_call", f'{FC} {{"name": "get_weather", "arguments": {{"city": "Tokyo"}}}}',
     f"{G20}::single_tool_call_output"),
    ("two_calls", f'{FC} {{"name": "get_weather", "arguments": {{"city": "Tokyo"}}}}\n{FC} {{"name": "now", "arguments": {{}}}}',
     f"{G20}::parallel_tool_calls_output"),
    ("pretty_types", f'{FC} {{\n  "name": "get_weather",\n  "arguments": {{\n    "city": "東京 🌧",\n    "days": 42,\n    "ratio": 3.14,\n    "metric": true,\n    "opts": {{"n": null, "l": ["a"], "e": {{}}}}\n  }}\n}}',
     f"{G20}::various_data_types_output"),
    ("surrounding_text", f'Let me check the weather for you.\n{FC} {{"name": "get_weather", "arguments": {{"city": "Tokyo"}}}}',
     f"{G20}::surrounding_text_output (xfail in streaming: marker must start the output)"),
    ("text_after", f'{FC} {{"name": "now", "arguments": {{}}}} Done.',
     "broken: text after the call"),
    ("unterminated", f'{FC} {{"name": "get_weather", "arguments": {{',
     f"{G20}::malformed_input_outputs[0]"),
    ("array_body", f'{FC} [{{"name": "now", "arguments": {{}}}}]',
     f"{G20}::malformed_input_outputs[1]"),
    ("name_not_string", f'{FC} {{"name": 123}}',
     f"{G20}::malformed_input_outputs[3]"),
    ("string_args", f'{FC} {{"name": "get_weather", "arguments": "{{\\"city\\": \\"Tokyo\\"}}"}}',
     "broken: arguments given as a JSON string"),
    ("unknown_tool", f'{FC} {{"name": "launch", "arguments": {{"x": 1}}}}',
     "broken: unknown tool name"),
    ("no_call", "This is a regular response without any tool calls.", f"{G20}::no_tool_calls_output"),
]

# ── jamba ────────────────────────────────────────────────────────────────────────────────────
JT = "vllm tests/tool_parsers/test_jamba_tool_parser.py"
JAMBA = [
    ("one_call", ' <tool_calls>[\n    {"name": "get_weather", "arguments": {"city": "Dallas", "days": 3}}\n]</tool_calls>',
     f"{JT}::test_extract_tool_calls[single_tool]"),
    ("content_before", ' Sure! let me call the tool for you.<tool_calls>[\n    {"name": "get_weather", "arguments": {"city": "Dallas"}}\n]</tool_calls>',
     f"{JT}::test_extract_tool_calls[single_tool_with_content]"),
    ("two_calls", ' <tool_calls>[\n    {"name": "get_weather", "arguments": {"city": "Dallas"}},\n    {"name": "get_weather", "arguments": {"city": "東京 🌧"}}\n]</tool_calls>',
     f"{JT}::test_extract_tool_calls[parallel_tools]"),
    ("compact", '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Dallas", "opts": {"a": [1, 2]}}}]</tool_calls>',
     f"{JT}::test_extract_tool_calls_streaming_arguments_in_single_delta"),
    ("text_after", '<tool_calls>[{"name": "now", "arguments": {}}]</tool_calls> Done.',
     "broken: text after the calls"),
    ("unterminated", '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Da',
     "broken: unterminated call (no </tool_calls>)"),
    ("invalid_json", '<tool_calls>[{"name": "get_weather", "arguments": {"city": Dallas}}]</tool_calls>',
     "broken: invalid JSON"),
    ("string_args", '<tool_calls>[{"name": "get_weather", "arguments": "{\\"city\\": \\"Dallas\\"}"}]</tool_calls>',
     "broken: arguments given as a JSON string"),
    ("unknown_tool", '<tool_calls>[{"name": "launch", "arguments": {"x": 1}}]</tool_calls>',
     "broken: unknown tool name"),
    ("no_call", "This is a test", f"{JT}::test_extract_tool_calls_no_tools"),
]

# ── internlm (InternLM2/2.5) ─────────────────────────────────────────────────────────────────
IT = "vllm tests/tool_parsers/test_internlm2_tool_parser.py"
AS, PL, AE = "<|action_start|>", "<|plugin|>", "<|action_end|>"
INTERNLM = [
    ("one_call", f'{AS}{PL}{{"name": "get_weather", "parameters": {{"city": "Tokyo"}}}}{AE}',
     f"{IT}::single_tool_call_output"),
    ("surrounding_text", f'Let me check the weather for you. {AS}{PL}{{"name": "get_weather", "parameters": {{"city": "Tokyo"}}}}{AE}',
     f"{IT}::surrounding_text_output"),
    ("pretty_types", f'{AS}{PL}{{\n  "name": "get_weather",\n  "parameters": {{\n    "city": "東京 🌧",\n    "days": 42,\n    "metric": true,\n    "opts": {{"n": null, "e": {{}}}}\n  }}\n}}{AE}',
     f"{IT}::various_data_types_output"),
    ("arguments_key", f'{AS}{PL}{{"name": "now", "arguments": {{}}}}{AE}',
     f"{IT}::empty_arguments_output (with `arguments` instead of `parameters`)"),
    ("text_after", f'{AS}{PL}{{"name": "now", "parameters": {{}}}}{AE}Done.',
     "broken: text after the call"),
    ("unterminated", f'{AS}{PL}{{"name": "get_weather", "parameters": {{',
     f"{IT}::malformed_input_outputs[0] (xfail non-stream: raises)"),
    ("string_params", f'{AS}{PL}{{"name": "get_weather", "parameters": "not a dict"}}{AE}',
     f"{IT}::malformed_input_outputs[1] (parameters a JSON string)"),
    ("not_json", f"{AS}{PL}not json{AE}", f"{IT}::malformed_input_outputs[2]"),
    ("two_calls", f'{AS}{PL}{{"name": "now", "parameters": {{}}}}{AE}{AS}{PL}{{"name": "get_weather", "parameters": {{"city": "Oslo"}}}}{AE}',
     "broken: two calls (InternLM2 has no parallel calls)"),
    ("unknown_tool", f'{AS}{PL}{{"name": "delete_everything", "parameters": {{"city": "Tokyo"}}}}{AE}',
     f"{IT}::test_extract_unknown_tool_name_not_emitted"),
    ("no_call", "This is a regular response without any tool calls.", f"{IT}::no_tool_calls_output"),
]

# ── phi4_mini_json ───────────────────────────────────────────────────────────────────────────
PT = "vllm tests/tool_parsers/test_phi4mini_tool_parser.py"
PHI4 = [
    ("one_call", 'functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]',
     f"{PT}::single_tool_call_output"),
    ("two_calls", 'functools[\n  {"name": "get_weather", "arguments": {"city": "Tokyo"}},\n  {"name": "now", "parameters": {}}\n]',
     f"{PT}::parallel_tool_calls_output (second with `parameters`)"),
    ("surrounding_text", 'Let me check the weather for you.\nfunctools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]\nWould you like to know more?',
     f"{PT}::surrounding_text_output"),
    ("nested_array", 'functools[{"name": "get_weather", "arguments": {"opts": {"l": ["a", "b"]}}}]',
     f"{PT}::various_data_types_output (xfail: the regex stops at the first `]`)"),
    ("unterminated", 'functools[{"name": "get_weather", "arguments": {',
     f"{PT}::malformed_input_outputs[0]"),
    ("string_args", 'functools[{"name": "get_weather", "arguments": "not a dict"}]',
     f"{PT}::malformed_input_outputs[1]"),
    ("missing_arguments", 'functools[{"name": "now"}]', f"{PT}::malformed_input_outputs[3]"),
    ("empty_list", "functools[] This is just text", f"{PT}::malformed_input_outputs[4]"),
    ("invalid_json", "functools[ This is just text ]", f"{PT}::malformed_input_outputs[5]"),
    ("unknown_tool", 'functools[{"name": "launch", "arguments": {"x": 1}}]', "broken: unknown tool name"),
    ("no_call", "This is a regular response without any tool calls.", f"{PT}::no_tool_calls_output"),
]

# ── xlam ─────────────────────────────────────────────────────────────────────────────────────
XT = "vllm tests/tool_parsers/test_xlam_tool_parser.py"
XLAM = [
    ("bare_array_two", '[{"name": "get_weather", "arguments": {"city": "Dallas"}}, {"name": "get_weather", "arguments": {"city": "Orlando"}}]',
     f"{XT}::test_extract_tool_calls[parallel_tool_calls]"),
    ("think_then_array", '<think>I\'ll help you with that.</think>[{"name": "get_weather", "arguments": {"city": "Dallas"}}]',
     f"{XT}::test_extract_tool_calls[single_tool_with_think_tag]"),
    ("json_code_block", 'I\'ll help you with that.\n```json\n[{"name": "get_weather", "arguments": {"city": "Dallas"}}]\n```',
     f"{XT}::test_extract_tool_calls[single_tool_with_json_code_block]"),
    ("tool_calls_tag", 'I\'ll check the weather for you.[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Dallas"}}]',
     f"{XT}::test_extract_tool_calls[single_tool_with_tool_calls_tag]"),
    ("tool_call_xml", 'I\'ll help you check the weather.<tool_call>[{"name": "get_weather", "arguments": {"city": "Dallas"}}]</tool_call>',
     f"{XT}::test_extract_tool_calls[single_tool_with_tool_call_xml_tags]"),
    ("empty_args", '[{"name": "now", "arguments": {}}]', "broken: none (well-formed): empty arguments"),
    ("nested_args", '[{"name": "get_weather", "arguments": {"opts": {"a": {"b": [1, 2]}}, "city": "東京 🌧"}}]',
     "broken: none (well-formed): arguments nested two levels (the stream's regex allows one)"),
    ("string_args", '[{"name": "get_weather", "arguments": "{\\"city\\": \\"Dallas\\"}"}]',
     "broken: arguments given as a JSON string"),
    ("text_after", '[{"name": "now", "arguments": {}}] Done.', "broken: text after the array"),
    ("unterminated", '[{"name": "get_weather", "arguments": {"city": "Da', "broken: unterminated array"),
    ("object_not_array", '{"name": "now", "arguments": {}}', "broken: one object, not an array"),
    ("unknown_tool", '[{"name": "launch", "arguments": {"x": 1}}]', "broken: unknown tool name"),
    ("no_call", "This is a test", f"{XT}::test_extract_tool_calls_no_tools"),
]

# ── apertus ──────────────────────────────────────────────────────────────────────────────────
APT = "vllm tests/tool_parsers/test_apertus_tool_parser.py"
TP, TS = "<|tools_prefix|>", "<|tools_suffix|>"
APERTUS = [
    ("one_call", f'{TP}[{{"get_weather": {{"city": "London"}}}}]{TS}', f"{APT}::test_single_tool_call"),
    ("text_before", f'Let me check the weather for you. {TP}[{{"get_weather": {{"city": "Paris"}}}}]{TS}',
     f"{APT}::test_text_before_tool_call"),
    ("two_calls", f'{TP}[{{"get_weather": {{"city": "London"}}}}, {{"now": {{}}}}]{TS}',
     f"{APT}::test_multiple_tool_calls"),
    ("nested", f'{TP}[{{"get_weather": {{"opts": {{"inner": "value"}}, "city": "東京 🌧"}}}}]{TS}',
     f"{APT}::test_nested_arguments"),
    ("unterminated", f'{TP}[{{"get_weather": {{"city": "London"}}', f"{APT}::test_incomplete_tool_call"),
    ("missing_suffix", f'{TP}[{{"get_weather": {{"city": "San Francisco", "days": 2}}}}]',
     f"{APT}::test_missing_tool_suffix"),
    ("text_after", f'Hi {TP}[{{"get_weather": {{"city": "London"}}}}]{TS} Done.',
     f"{APT}::test_vllm_streaming_character_by_character (text after the suffix)"),
    ("junk_after_array", f'{TP}[{{"now": {{}}}}] oops{TS}', "broken: text inside the block after the array"),
    ("string_args", f'{TP}[{{"get_weather": "{{\\"city\\": \\"London\\"}}"}}]{TS}',
     "broken: arguments given as a JSON string"),
    ("invalid_json", f'{TP}[{{"get_weather": {{"city": London}}}}]{TS}', "broken: invalid JSON"),
    ("unknown_tool", f'{TP}[{{"launch": {{"x": 1}}}}]{TS}', "broken: unknown tool name"),
    ("no_call", "Hello, how can I help you today?", f"{APT}::test_no_tool_calls"),
]

# ── lfm2 (LFM2 / LFM2.5: pythonic list between sentinel tokens) ──────────────────────────────
LT = "vllm tests/tool_parsers/test_lfm2_tool_parser.py"
LS, LE = "<|tool_call_start|>", "<|tool_call_end|>"
LFM2 = [
    ("simple", f"{LS}[get_weather(city='Paris')]{LE}", f"{LT}::test_tool_call[simple_*]"),
    ("more_types", f"{LS}[get_weather(city='John Doe', days=37, opts={{'city': 'SF', 'l': ['a', 'b']}}, metric=True, ratio=None)]{LE}",
     f"{LT}::test_tool_call[more_types_*]"),
    ("two_calls", f"{LS}[get_weather(city='Oslo'), now()]{LE}", f"{LT}::test_tool_call[parallel_calls_*]"),
    ("content_after", f"{LS}[now()]{LE}\nChecking the current time.",
     f"{LT}::test_tool_call[content_after_tool_call_nonstreaming]"),
    ("content_before", f"Let me check.{LS}[now()]{LE}", "broken: none (well-formed): text before the block"),
    ("echo_after_end", f"{LS}[now()]{LE}[now()]{LE}Done.",
     "broken: the model echoes the call body after the end token (vLLM strips it)"),
    ("leading_zero", f"{LS}[get_weather(days=07)]{LE}", f"{LT}::test_tool_call[leading_zero_int_*]"),
    ("nested_quote", f"{LS}[write_file(path='a', content='sed -n '360,450p' f.py')]{LE}",
     f"{LT}::test_tool_call[nested_quote_*]"),
    ("ws_after_start", f"{LS} [now()]{LE}", f"{LT}::test_whitespace_after_start_token"),
    ("unterminated", f"{LS}[get_weather(city='Par", "broken: unterminated call"),
    ("not_calls", f"{LS}[1, 2]{LE}", "broken: a list that is not calls"),
    ("empty_block", f"{LS}[]{LE}", f"{LT}::test_empty_tool_call_block"),
    ("unknown_tool", f"{LS}[launch(x=1)]{LE}", "broken: unknown tool name"),
    ("no_call", "How can I help you today?", f"{LT}::test_no_tool_call"),
]

SUITES = [
    ("mistral", "qwen3", [T], True, MISTRAL_PRE_V11),
    ("mistral", "qwen3", [T, A], True, MISTRAL_V11),
    ("mistral", "qwen3", [T, A, "[THINK]", "[/THINK]"], True, MISTRAL_V13),
    ("granite", "qwen3", ["<|tool_call|>"], True, GRANITE),
    ("granite4", "qwen3", [], True, GRANITE4),
    ("granite-20b-fc", "qwen3", [FC], True, GRANITE_20B_FC),
    ("jamba", "qwen3", ["<tool_calls>", "</tool_calls>"], True, JAMBA),
    ("internlm", "qwen3", [AS, PL, AE], True, INTERNLM),
    ("phi4_mini_json", "qwen3", [], True, PHI4),
    ("xlam", "llama3_1", [], True, XLAM),
    ("apertus", "qwen3", [TP, TS], True, APERTUS),
    ("lfm2", "qwen3", [LS, LE], True, LFM2),
]
SUITE_LABELS = ["mistral_pre_v11", "mistral_v11", "mistral_v13", "granite", "granite4", "granite-20b-fc",
                "jamba", "internlm", "phi4_mini_json", "xlam", "apertus", "lfm2"]

# ── reasoning ────────────────────────────────────────────────────────────────────────────────
MR = "vllm tests/reasoning/test_mistral_reasoning_parser.py"
MISTRAL_REASONING = [
    ("think_then_answer", "[THINK]This is a reasoning section[/THINK]This is the rest", f"{MR}::REASONING_WITH_THINK"),
    ("no_start_tag", "This is a reasoning section[/THINK]This is the rest", f"{MR}::SIMPLE_REASONING"),
    ("only_end", "[/THINK]This is the rest", f"{MR}::SHORTEST_REASONING"),
    ("never_closed", "[THINK]This is a reasoning section", f"{MR}::THINK_NO_END"),
    ("no_tags", "This is content", f"{MR}::NO_CONTENT"),
    ("newline_before", "\n[THINK]This is a reasoning section[/THINK]\nThis is the rest", f"{MR}::NEW_LINE"),
    ("multiline_trailing_ws", "[THINK]This\nThat  \n[/THINK]This is the rest\nThat", f"{MR}::MULTIPLE_LINES_WITH_THINK (+ trailing spaces)"),
    ("call_ends_reasoning", f'[THINK]I need it.{T}now{A}{{}}', "broken: [TOOL_CALLS] inside reasoning"),
    ("text_before_start", "Preamble [THINK]inner[/THINK]after", "broken: text before [THINK]"),
    ("two_blocks", "[THINK]a[/THINK]b[THINK]c[/THINK]d", "broken: a second think block"),
    ("think_as_text", "<think>x</think>y", "broken: <think> tags (v11 text encoding) on a tokenizer with [THINK]"),
]
GR = "vllm tests/reasoning/test_granite_reasoning_parser.py"
SR, SP = "Here is my thought process:", "Here is my response:"
GRANITE_REASONING = [
    ("simple", f"{SR}This is a reasoning section{SP}This is the rest", f"{GR}::SIMPLE_REASONING"),
    ("complete_no_content", f"{SR}This is a reasoning section{SP}", f"{GR}::COMPLETE_REASONING"),
    ("no_reasoning", "This is content", f"{GR}::NO_REASONING"),
    ("multiline", f"{SR}This\nThat{SP}This is the rest\nThat", f"{GR}::MULTIPLE_LINES"),
    ("heres_variant", "Here's my thought process: foo Here's my response: bar", f"{GR}::valid_think_starts (Here's)"),
    ("spaced", f"{SR} foo {SP} bar", f"{GR}::STREAMING_9"),
    ("never_closed", f"{SR} still thinking", f"{GR}::STREAMING_5 (no response marker)"),
    ("text_before_start", f"Preamble. {SR} foo {SP} bar", "broken: text before the thought marker"),
    ("broken_response_marker", f"{SR} foo Here is Here was my response: bar", f"{GR}::STREAMING_7/13 (broken marker)"),
]
GTR = "vllm tests/reasoning/test_granite_thinking_reasoning_parser.py"
GRANITE_THINKING = [
    ("leading_newline_stripped", "<think>reasoning</think>\nHello", f"{GTR}::leading_newline_stripped"),
    ("without_start_token", "This is a reasoning section</think>This is the rest", f"{GTR}::without_start_token"),
    ("multiple_newlines", "<think>reasoning</think>\n\n\nHello", f"{GTR}::multiple_leading_newlines_stripped"),
    ("multiline", "<think>line1\nline2</think>\nresult1\nresult2", f"{GTR}::multiline_reasoning_and_content"),
    ("whitespace_only_content", "<think>reasoning</think>\n\n", f"{GTR}::test_granite_thinking_whitespace_only_content"),
    ("never_closed", "This is truncated reasoning", f"{GTR}::test_granite_thinking_keeps_truncated_reasoning"),
    ("tool_call_ends_reasoning", '<think>I need a tool.\n<tool_call>\n<function=now>\n</function>\n</tool_call>',
     "broken: <tool_call> before </think> (implicit end)"),
    ("two_ends", "a</think>b</think>c", "broken: a second </think>"),
    ("trailing_ws_reasoning", "<think>think  \n\n</think>\nanswer", "broken: trailing whitespace in reasoning"),
]

REASONING_SUITES = [
    ("mistral", "qwen3", MISTRAL_REASONING),
    ("granite", "qwen3", GRANITE_REASONING),
    ("granite_thinking_parser", "qwen3", GRANITE_THINKING),
]
# The mistral reasoning parser raises without [TOOL_CALLS] in the vocabulary, and reads
# [THINK]/[/THINK] only when [THINK] is in it (else reasoning is off: all content).
REASONING_ADDED_TOKENS = {"mistral": [T, A, "[THINK]", "[/THINK]"]}
