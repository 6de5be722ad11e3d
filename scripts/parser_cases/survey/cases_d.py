"""Group d: cases for vLLM 0.32's tool parsers qwen3_coder (= qwen3_engine_tool_parser.py),
dots, gigachat3, inkling, ling3, minicpm5, muse_glimmer, plamo3, poolside_v1, hf
(response_template), plus broken output for hermes, llama3_json, deepseek_v3, deepseek_v31,
qwen3_coder; and reasoning parsers.

Format (as scripts/gen_tool_parser_direct_goldens.py):
  SUITES = [(parser, fixture_model, added_tokens, with_stream, cases)], case = (id, text, source)
  REASONING_SUITES = [(parser, fixture_model, cases)], case = (id, text, source)
Extras this module adds (read by gen.py here; the generator would need them too):
  REASONING_ADDED_TOKENS: {parser: [tokens]}  tokens a reasoning parser needs in the vocabulary
  REASONING_CLASSES: {name: "module:Class"}   reasoning parsers that are not registered
  REASONING_KWARGS: {name: (registered_name, kwargs)} a registered parser built with kwargs
  HF_TEMPLATE / HF_SUITES: `--tool-call-parser hf` has no extract_tool_calls of its own (the
    registered class is a stub); the work is done by vllm.parser.response_template.
    ResponseTemplateParser, driven by the checkpoint's `response_template` metadata, which
    gen.py runs with HF_TEMPLATE (a Qwen3/Hermes-shaped template written for this survey).
No TOOLS_EXTRA: every case uses the generator's TOOLS (get_weather{city,days,metric,ratio,
opts}, write_file{path,content}, now{}).
"""

# ---------------------------------------------------------------- qwen3_coder (engine)
QWEN3_CODER = [
    ("with_content_no_newline",
     "Sure! Let me check the weather for you.<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>",
     "vllm tests/tool_parsers/test_qwen3coder_tool_parser.py::test_extract_tool_calls[single_tool_with_content]"),
    ("multiline_object_param",
     "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=opts>\n{\"width\": 10, \n \"height\": 20}\n</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>",
     "vllm tests/tool_parsers/test_qwen3coder_tool_parser.py::test_extract_tool_calls[single_tool_multiline_param]"),
    ("no_tool_call_tag",
     "<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n</function>",
     "vllm tests/tool_parsers/test_qwen3coder_tool_parser.py::test_extract_tool_calls_fallback_no_tags; broken: <function=…> without <tool_call>"),
    ("text_then_no_tool_call_tag",
     "Checking.\n<function=now>\n</function>",
     "broken: <function=…> without <tool_call>, after text"),
    ("unterminated_call",
     "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar",
     "broken: unterminated call (no </parameter>, </function>, </tool_call>)"),
    ("param_without_close",
     "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
     "broken: <parameter=x> without </parameter>, next <parameter= follows"),
    ("last_param_without_close",
     "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</function>\n</tool_call>",
     "broken: last <parameter=x> without </parameter> before </function>"),
    ("missing_function_close",
     "<tool_call>\n<function=now>\n</tool_call>\nDone.",
     "broken: </function> missing, </tool_call> present"),
    ("missing_tool_call_close_then_text",
     "<tool_call>\n<function=now>\n</function>\nDone.",
     "broken: </tool_call> missing after </function>, text follows"),
    ("two_calls_no_outer_close",
     "<tool_call>\n<function=now>\n</function>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>",
     "broken: first call lacks </tool_call> (engine TOOL_BETWEEN -> TOOL_START)"),
    ("json_body_in_tool_call",
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
     "broken: hermes JSON written inside <tool_call> instead of XML"),
    ("invalid_json_object_param",
     "<tool_call>\n<function=get_weather>\n<parameter=opts>\n{unit: C\n</parameter>\n</function>\n</tool_call>",
     "broken: invalid JSON in an object-typed parameter"),
    ("json_string_object_param",
     "<tool_call>\n<function=get_weather>\n<parameter=opts>\n\"{\\\"unit\\\": \\\"C\\\"}\"\n</parameter>\n</function>\n</tool_call>",
     "broken: object parameter given as a JSON string"),
    ("between_calls",
     "<tool_call>\n<function=now>\n</function>\n</tool_call> and then <tool_call>\n<function=now>\n</function>\n</tool_call>",
     "broken: text between calls"),
    ("name_without_close_angle",
     "<tool_call>\n<function=now\n</function>\n</tool_call>",
     "broken: <function=name without '>' (engine: TOOL_NAME + FUNC_END)"),
]

# ---------------------------------------------------------------- hermes (broken output)
HERMES_BROKEN = [
    ("until_eos_valid_json",
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
     "vllm tests/tool_parsers/test_hermes_tool_parser.py::test_hermes_parser_non_streaming_tool_call_until_eos; broken: unterminated call"),
    ("unterminated_truncated_json",
     "I'll check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par",
     "vllm tests/tool_parsers/test_hermes_tool_parser.py::test_hermes_parser_non_streaming_tool_call_invalid_json; broken: unterminated call, JSON cut"),
    ("invalid_json_args",
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": Paris}}\n</tool_call>",
     "broken: invalid JSON inside a call"),
    ("valid_then_invalid",
     "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"now\", \"arguments\": {]}\n</tool_call>",
     "broken: second of two calls has invalid JSON"),
    ("json_string_args",
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}\n</tool_call>",
     "vllm tests/tool_parsers/test_hermes_tool_parser.py::test_hermes_parser_non_streaming_serialized_arguments (upstream main; 0.32 differs); broken: arguments as JSON string"),
    ("bare_string_args",
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \"hello\"}\n</tool_call>",
     "vllm tests/tool_parsers/test_hermes_tool_parser.py::test_hermes_parser_non_streaming_bare_string_arguments"),
    ("missing_arguments_key",
     "<tool_call>\n{\"name\": \"now\"}\n</tool_call>",
     "broken: call object without arguments"),
    ("parameters_key",
     "<tool_call>\n{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n</tool_call>",
     "broken: 'parameters' instead of 'arguments'"),
    ("text_between_and_after",
     "A<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>B<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>C",
     "broken: text before, between and after calls"),
    ("boolean_args",
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"metric\": true}}\n</tool_call>",
     "vllm tests/tool_parsers/test_hermes_tool_parser.py::test_hermes_parser_streaming_failure_case_bug_19056"),
]

# ---------------------------------------------------------------- llama3_json (broken output)
LLAMA3_JSON_BROKEN = [
    ("invalid_json_args",
     "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": Paris}}",
     "broken: invalid JSON inside a call"),
    ("unterminated_call",
     "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Par",
     "broken: unterminated call"),
    ("unterminated_bare",
     "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Par",
     "broken: unterminated bare-JSON call"),
    ("json_string_args",
     "{\"name\": \"get_weather\", \"parameters\": \"{\\\"city\\\": \\\"Paris\\\"}\"}",
     "broken: arguments as JSON string"),
    ("two_calls_no_space",
     "{\"name\": \"now\", \"parameters\": {}};{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}",
     "vllm tests/tool_parsers/test_llama3_json_tool_parser.py (multiple calls); broken: ';' without the space the stream assumes"),
    ("text_with_brace_after_call",
     "{\"name\": \"now\", \"parameters\": {}} then {see notes}",
     "broken: text after a call containing a brace"),
    ("missing_name",
     "{\"parameters\": {\"city\": \"Oslo\"}}",
     "broken: object without name"),
    ("undeclared_tool",
     "{\"name\": \"launch\", \"parameters\": {\"x\": 1}}",
     "broken: unknown tool"),
    ("text_before_then_call",
     "Here you go: <|python_tag|>{\"name\": \"now\", \"parameters\": {}}",
     "broken: text before <|python_tag|>"),
]

# ---------------------------------------------------------------- deepseek (broken output)
B, E, CB, CE, SEP = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
DEEPSEEK_V3_BROKEN = [
    ("unterminated_call",
     f"I'll look.{B}{CB}function{SEP}get_weather\n```json\n{{\"city\": \"Par",
     "broken: unterminated call"),
    ("no_calls_end",
     f"{B}{CB}function{SEP}get_weather\n```json\n{{\"city\": \"Paris\"}}\n```{CE}",
     "broken: <｜tool▁calls▁end｜> missing"),
    ("invalid_json_args",
     f"{B}{CB}function{SEP}get_weather\n```json\n{{\"city\": Paris}}\n```{CE}{E}",
     "broken: invalid JSON inside a call"),
    ("json_string_args",
     f"{B}{CB}function{SEP}get_weather\n```json\n\"{{\\\"city\\\": \\\"Paris\\\"}}\"\n```{CE}{E}",
     "broken: arguments as JSON string"),
    ("text_between_calls",
     f"{B}{CB}function{SEP}now\n```json\n{{}}\n```{CE} mid {CB}function{SEP}now\n```json\n{{}}\n```{CE}{E}",
     "broken: text between calls inside the section"),
    ("no_fence",
     f"{B}{CB}function{SEP}get_weather\n{{\"city\": \"Paris\"}}{CE}{E}",
     "broken: V3.1-style body (no ```json fence) to deepseek_v3"),
    ("section_without_call",
     f"Hi{B}oops{E} bye",
     "broken: section with no call in it"),
]
DEEPSEEK_V31_BROKEN = [
    ("unterminated_call",
     f"I'll look.{B}{CB}get_weather{SEP}{{\"city\": \"Par",
     "broken: unterminated call"),
    ("no_calls_end",
     f"{B}{CB}get_weather{SEP}{{\"city\": \"Paris\"}}{CE}",
     "broken: <｜tool▁calls▁end｜> missing"),
    ("invalid_json_args",
     f"{B}{CB}get_weather{SEP}{{\"city\": Paris}}{CE}{E}",
     "broken: invalid JSON inside a call"),
    ("json_string_args",
     f"{B}{CB}get_weather{SEP}\"{{\\\"city\\\": \\\"Paris\\\"}}\"{CE}{E}",
     "broken: arguments as JSON string"),
    ("text_between_calls",
     f"{B}{CB}now{SEP}{{}}{CE} mid {CB}now{SEP}{{}}{CE}{E}",
     "broken: text between calls inside the section"),
    ("v3_body",
     f"{B}{CB}function{SEP}get_weather\n```json\n{{\"city\": \"Paris\"}}\n```{CE}{E}",
     "broken: V3-style body (function<sep>name + fence) to deepseek_v31"),
]

# ---------------------------------------------------------------- dots
DOTS_TOKENS = ["<dots_function_call>", "</dots_function_call>"]
DS, DE = DOTS_TOKENS
DOTS = [
    ("xml_typed",
     f"ok{DS}<invoke name=\"get_weather\"><parameter name=\"city\">Shanghai</parameter><parameter name=\"days\">3</parameter><parameter name=\"metric\">true</parameter><parameter name=\"opts\">{{\"unit\": \"C\"}}</parameter></invoke>{DE}",
     "vllm tests/tool_parsers/test_dots_tool_parser.py::test_non_stream_xml_converts_schema_types_and_resolves_ref"),
    ("multi_invoke_and_json_block",
     f"{DS}<invoke name=\"get_weather\"><parameter name=\"city\">chairs</parameter></invoke><invoke name=\"now\"></invoke>{DE}{DS}{{\"name\":\"get_weather\",\"arguments\":{{\"city\":\"tables\"}}}}{DE}",
     "vllm tests/tool_parsers/test_dots_tool_parser.py::test_non_stream_supports_multiple_invokes_and_json_fallback"),
    ("newlines_canonical",
     f"Let me check.\n{DS}\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"ratio\">2.0</parameter>\n</invoke>\n{DE}",
     "dots_tool_parser.py docstring (canonical form)"),
    ("unknown_tool",
     f"{DS}<invoke name=\"ghost\"><parameter name=\"query\">chairs</parameter></invoke>{DE}",
     "vllm tests/tool_parsers/test_dots_tool_parser.py::test_non_stream_unknown_tool_is_left_as_content"),
    ("garbage_then_valid",
     f"{DS}garbage{DE}{DS}<invoke name=\"get_weather\"><parameter name=\"city\">chairs</parameter></invoke>{DE}",
     "vllm tests/tool_parsers/test_dots_tool_parser.py::test_streaming_malformed_block_does_not_block_later_valid_call"),
    ("stray_end_marker",
     f"some text {DE}",
     "vllm tests/tool_parsers/test_dots_tool_parser.py::test_streaming_strips_stray_end_marker"),
    ("json_body_streamed",
     f"{DS}{{\"name\":\"get_weather\",\"arguments\":{{\"city\":\"chairs\"}}}}{DE}",
     "vllm tests/tool_parsers/test_dots_tool_parser.py::test_streaming_emits_complete_json_before_end_marker_without_duplication"),
    ("unterminated_block",
     f"Answer {DS}<invoke name=\"get_weather\"><parameter name=\"city\">Par",
     "broken: unterminated call"),
    ("invalid_json_body",
     f"{DS}{{\"name\": \"get_weather\", \"arguments\": {{\"city\": Paris}}}}{DE}",
     "broken: invalid JSON inside a call"),
    ("json_string_args",
     f"{DS}{{\"name\": \"get_weather\", \"arguments\": \"{{\\\"city\\\": \\\"Paris\\\"}}\"}}{DE}",
     "broken: arguments as JSON string"),
    ("text_around_calls",
     f"A{DS}<invoke name=\"now\"></invoke>{DE}B{DS}<invoke name=\"now\"></invoke>{DE}C",
     "broken: text before, between and after calls"),
    ("loose_values",
     f"{DS}<invoke name='get_weather'><parameter name=\"days\">3.0</parameter><parameter name=\"metric\">yes</parameter><parameter name=\"ratio\">7</parameter><parameter name=\"city\">null</parameter></invoke>{DE}",
     "broken: values that do not fit their declared types; single-quoted name"),
]

# ---------------------------------------------------------------- gigachat3
GIGA_TOKENS = ["<|message_sep|>\n\n", "<|role_sep|>\n", "<|function_call|>", "</s>"]
MSG_SEP, ROLE_SEP, FC31, EOS = GIGA_TOKENS
GH3 = f"function call{ROLE_SEP}"
G_SIMPLE = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}"
G_COMPLEX = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"opts\": {\"short\": true, \"list\": [1, 2.5, null]}}}"
G_EMPTY = "{\"name\": \"now\", \"arguments\": {}}"
GIGACHAT3 = [
    ("simple_v3", f"{MSG_SEP}{GH3}{G_SIMPLE}",
     "vllm tests/tool_parsers/test_gigachat3_tool_parser.py::test_tool_call[simple_nonstreaming_gigachat3]"),
    ("parameterless_v3", f"{MSG_SEP}{GH3}{G_EMPTY}",
     "vllm tests/tool_parsers/test_gigachat3_tool_parser.py::test_tool_call[parameterless_nonstreaming_gigachat3]"),
    ("mixed_v3_eos", f"I'll check that for you.{MSG_SEP}{GH3}{G_COMPLEX}{EOS}",
     "vllm tests/tool_parsers/test_gigachat3_tool_parser.py::test_tool_call[mixed_content_nonstreaming_with_eos_gigachat3]"),
    ("simple_v31", f"{FC31}{G_SIMPLE}",
     "vllm tests/tool_parsers/test_gigachat3_tool_parser.py::test_tool_call[simple_nonstreaming_gigachat31]"),
    ("mixed_v31", f"I'll check that for you.{FC31}{G_COMPLEX}",
     "vllm tests/tool_parsers/test_gigachat3_tool_parser.py::test_tool_call[mixed_content_nonstreaming_gigachat31]"),
    ("parameterless_v31_eos", f"{FC31}{G_EMPTY}{EOS}",
     "vllm tests/tool_parsers/test_gigachat3_tool_parser.py::test_streaming_split_special_tokens[gigachat31_parameterless]"),
    ("no_call", "How can I help you today?",
     "vllm tests/tool_parsers/test_gigachat3_tool_parser.py::test_no_tool_call"),
    ("invalid_json_args", f"{FC31}{{\"name\": \"get_weather\", \"arguments\": {{\"city\": Paris}}}}",
     "broken: invalid JSON inside a call"),
    ("unterminated_call", f"Checking.{FC31}{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Par",
     "broken: unterminated call"),
    ("json_string_args", f"{FC31}{{\"name\": \"get_weather\", \"arguments\": \"{{\\\"city\\\": \\\"Paris\\\"}}\"}}",
     "broken: arguments as JSON string"),
    ("undeclared_tool", f"{FC31}{{\"name\": \"launch\", \"arguments\": {{\"x\": 1}}}}",
     "broken: unknown tool"),
    ("text_after_call", f"{FC31}{G_EMPTY} Done.",
     "broken: text after the call"),
    ("two_calls", f"{FC31}{G_EMPTY}{FC31}{G_SIMPLE}",
     "broken: two calls"),
]

# ---------------------------------------------------------------- inkling
INK_TOKENS = ["<|message_model|>", "<|content_text|>", "<|content_thinking|>",
              "<|content_invoke_tool_json|>", "<|content_invoke_tool_text|>",
              "<|content_tool_error|>", "<|content_model_end_sampling|>", "<|end_message|>"]
IM, ITXT, ITHK, ITJ, ITT, IERR, IES, IEND = INK_TOKENS


def _ink(name, args):
    return f"{ITJ}{{\"name\":\"{name}\",\"args\":{args}}}{IEND}"


INKLING = [
    ("bare_text", "hello world",
     "vllm tests/parser/engine/test_inkling.py::TestNonStreaming::test_bare_text_after_model_opener"),
    ("plain_text_block", f"{ITXT}hello world{IEND}",
     "vllm tests/parser/engine/test_inkling.py::TestNonStreaming::test_plain_text"),
    ("reasoning_text_tool",
     f"{ITHK}I should check the weather.{IEND}{IM}{ITXT}Let me check.{IEND}{IM}" + _ink("get_weather", "{\"city\":\"SF\"}"),
     "vllm tests/parser/engine/test_inkling.py::TestNonStreaming::test_reasoning_text_tool"),
    ("header_name_not_content", "get_weather" + _ink("get_weather", "{\"city\":\"SF\"}"),
     "vllm tests/parser/engine/test_inkling.py::TestNonStreaming::test_tool_header_name_is_not_visible_content"),
    ("parallel_calls", _ink("now", "{}") + IM + _ink("get_weather", "{\"opts\":{\"x\":[1,2]}}"),
     "vllm tests/parser/engine/test_inkling.py::TestNonStreaming::test_parallel_tool_calls"),
    ("text_after_call", _ink("now", "{}") + f"{IM}{ITXT}done{IEND}",
     "vllm tests/parser/engine/test_inkling.py::TestNonStreaming::test_text_after_tool_call"),
    ("incomplete_call_at_eos", f"{ITJ}{{\"name\":\"get_weather\",\"args\":{{\"city\":\"v\"",
     "vllm tests/parser/engine/test_inkling.py::TestNonStreaming::test_incomplete_tool_call_at_eos; broken: unterminated call"),
    ("invoke_tool_text_visible", f"{ITT}do something{IEND}",
     "vllm tests/parser/engine/test_inkling.py::TestNonStreaming::test_invoke_tool_text_is_visible_text"),
    ("nested_args", _ink("get_weather", "{\"opts\":{\"deep\":{\"list\":[{\"k\":\"v\"}]}},\"city\":\"a}b\"}"),
     "vllm tests/parser/engine/test_inkling.py::TestNonStreaming::test_nested_args"),
    ("non_object_args", _ink("get_weather", "[1]"),
     "vllm tests/parser/engine/test_inkling.py::TestArgConverter::test_non_object_args_rejected"),
    ("invalid_json_args", _ink("get_weather", "{\"city\":Paris}"),
     "broken: invalid JSON inside a call"),
    ("json_string_args", _ink("get_weather", "\"{\\\"city\\\":\\\"Paris\\\"}\""),
     "broken: args as JSON string"),
    ("undeclared_tool", _ink("launch", "{\"x\":1}"),
     "broken: unknown tool"),
    ("end_sampling_closes", f"{ITXT}hi{IES}",
     "vllm tests/parser/engine/test_inkling.py::TestNonStreaming::test_end_sampling_closes_blocks"),
]

# ---------------------------------------------------------------- ling3 (GLM-4.7 engine)
GLM_TOKENS = ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
              "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"]
LING3 = [
    ("no_newline", "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>",
     "vllm tests/parser/engine/test_ling3.py::test_ling3_tool_call_without_newline"),
    ("no_args", "<tool_call>now</tool_call>",
     "vllm tests/parser/engine/test_ling3.py::test_ling3_tool_call_without_args"),
    ("typed", "I'll check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n<arg_key>metric</arg_key>\n<arg_value>true</arg_value>\n</tool_call>",
     "same input as the glm45 goldens' typed case"),
    ("unknown_tool", "<tool_call>launch_rocket\n<arg_key>when</arg_key>\n<arg_value>now</arg_value>\n</tool_call>",
     "broken: unknown tool (as glm45 goldens)"),
    ("unclosed", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par",
     "broken: unterminated call (as glm45 goldens)"),
    ("text_between_and_after", "A<tool_call>now</tool_call>B<tool_call>now</tool_call>C",
     "broken: text around calls"),
    ("think_in_content", "<think>hmm</think>Answer<tool_call>now</tool_call>",
     "broken: reasoning tags reaching the tool parser (tool adapter starts in CONTENT)"),
    ("invalid_json_object_value", "<tool_call>get_weather<arg_key>opts</arg_key><arg_value>{bad</arg_value></tool_call>",
     "broken: invalid JSON in an object-typed value"),
]

# ---------------------------------------------------------------- minicpm5
# Assumed special tokens (the parser says MiniCPM5's tool XML tags are special tokens; which
# ones is not stated): with "<" a token of its own the stream never sees "<function" (see REPORT).
MINICPM5_TOKENS = ["<function", "</function>", "<param", "</param>"]
MINICPM5 = [
    ("with_surrounding_text",
     "Intro before.\n<function name=\"get_weather\"><param name=\"city\">上海</param><param name=\"days\">2</param></function>\nOutro after.\n",
     "vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_single_call_with_surrounding_text"),
    ("cdata_multiline",
     "<function name=\"write_file\"><param name=\"path\">/a</param><param name=\"content\"><![CDATA[北\n京]]></param></function>\n",
     "vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_cdata_multiline"),
    ("collapsed_tags",
     "<functionname=\"get_weather\"><paramname=\"city\">Dallas</param><paramname=\"metric\">true</param></function>",
     "vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_collapsed_function_and_param_tags"),
    ("non_string_types",
     "<function name=\"get_weather\"><param name=\"opts\">{\"a\": [1, 2, 3]}</param><param name=\"metric\">true</param><param name=\"ratio\">2.5</param></function>\n",
     "vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_non_string_types"),
    ("multiple_interleaved",
     "Head\n<function name=\"get_weather\"><param name=\"city\">北京</param></function>\nTXT\n<function name=\"now\"></function>\nTail\n",
     "vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_multiple_calls_interleaved_text"),
    ("unknown_tool",
     "<function name=\"unknown\"><param name=\"x\">1</param></function>\n",
     "vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_unknown_tool_block_preserved"),
    ("missing_function_end",
     "<function name=\"get_weather\"><param name=\"city\">北京</param>",
     "vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_incomplete_missing_function_end; broken: unterminated call"),
    ("param_missing_name",
     "<function name=\"get_weather\"><param>北京</param><param name=\"city\">x</param></function>\n",
     "vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_param_missing_name_invalid"),
    ("duplicate_param",
     "<function name=\"get_weather\"><param name=\"city\">北京</param><param name=\"city\">上海</param></function>\n",
     "vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_duplicate_param_names_invalid"),
    ("undeclared_param_ignored",
     "<function name=\"get_weather\"><param name=\"City\">北京</param></function>\n",
     "vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_case_sensitive_param_name_invalid (no 'required' in our TOOLS)"),
    ("thinking_then_call",
     "<think>hmm</think>\n<function name=\"now\"></function>",
     "broken: </think> left in the text the tool parser sees"),
    ("invalid_json_object_param",
     "<function name=\"get_weather\"><param name=\"opts\">{bad</param></function>",
     "broken: invalid JSON in an object-typed value"),
    ("properties_wrapper",
     "<function name=\"get_weather\"><param name=\"properties\">{'city': 'Lima'}</param></function>",
     "vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py::test_properties_wrapped_arguments"),
]

# ---------------------------------------------------------------- muse_glimmer
MG_TOKENS = ["<|start|>", "<|message|>", "<|eom|>", "<|eot|>"]
MG_TOOL = ("<|start|>assistant to=get_weather.get_weather<|message|>"
           "<atem:function_calls>\n<atem:invoke name=\"get_weather.get_weather\">\n"
           "<atem:parameter name=\"city\">Paris</atem:parameter>\n"
           "<atem:parameter name=\"days\">3</atem:parameter>\n"
           "</atem:invoke>\n</atem:function_calls>")
MUSE_GLIMMER = [
    ("reasoning_then_tool", " to=self<|message|>I should check.<|eom|>" + MG_TOOL,
     "vllm tests/parser/engine/test_muse_glimmer.py RAW_TOOLCALL (names adapted)"),
    ("tool_then_answer", MG_TOOL + "<|eom|><|start|>assistant to=user<|message|>It is mild.<|eot|>",
     "broken: text after the call, in a to=user channel"),
    ("answer_only", " to=user<|message|>Just a direct answer.<|eot|>",
     "vllm tests/parser/engine/test_muse_glimmer.py::TestNonStreaming::test_content_only"),
    ("unframed_text", "Just a direct answer.",
     "vllm tests/parser/engine/test_muse_glimmer.py::TestNonStreaming::test_unframed_output_passes_through"),
    ("parallel_calls",
     " to=self<|message|>two<|eom|><|start|>assistant to=now<|message|><atem:function_calls>\n<atem:invoke name=\"now\">\n</atem:invoke>\n</atem:function_calls><|eom|>"
     "<|start|>assistant to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"city\">Rome</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eot|>",
     "vllm tests/parser/engine/test_muse_glimmer.py::TestNonStreaming::test_parallel_calls_forwarded"),
    ("invoke_in_reasoning_truncated",
     " to=self<|message|>Maybe I should call <atem:function_calls>\n<atem:invoke name=\"now\">\n</atem:invoke>\n</atem:function_calls> but wait",
     "vllm tests/parser/engine/test_muse_glimmer.py RAW_TRUNCATED"),
    ("bare_header_without_eom",
     " to=self<|message|>calling now to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"city\">Paris</atem:parameter>\n</atem:invoke>\n</atem:function_calls>",
     "vllm tests/parser/engine/test_muse_glimmer.py::TestNonStreaming::test_bare_tool_header_without_eom_routes_tool_call"),
    ("unframed_atem",
     "<atem:function_calls>\n<atem:invoke name=\"now\">\n</atem:invoke>\n</atem:function_calls>",
     "broken: ATEM markup with no channel framing"),
    ("unterminated_invoke",
     "<|start|>assistant to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"city\">Par",
     "broken: unterminated call"),
    ("json_and_string_values",
     "<|start|>assistant to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"opts\">{\"a\": 1}</atem:parameter>\n<atem:parameter name=\"city\">\"{\\\"a\\\": 1}\"</atem:parameter>\n<atem:parameter name=\"ratio\">{bad</atem:parameter>\n</atem:invoke>\n</atem:function_calls>",
     "broken: JSON value, JSON-string value and invalid JSON value"),
    ("undeclared_tool",
     "<|start|>assistant to=launch<|message|><atem:function_calls>\n<atem:invoke name=\"launch.go\">\n</atem:invoke>\n</atem:function_calls>",
     "broken: unknown tool"),
]

# ---------------------------------------------------------------- plamo3
PLAMO_TOKENS = ["<|plamo:begin_", "<|plamo:end_", ":plamo|>", "<|plamo:tag|>",
                "<|plamo:constrain|>", "<|plamo:msg|>"]
P_BTRS = "<|plamo:begin_tool_requests:plamo|>"
P_ETRS = "<|plamo:end_tool_requests:plamo|>"
P_BTR = "<|plamo:begin_tool_request:plamo|>"
P_ETR = "<|plamo:end_tool_request:plamo|>"
P_BTN = "<|plamo:begin_tool_name:plamo|>"
P_ETN = "<|plamo:end_tool_name:plamo|>"
P_BTA = "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>"
P_ETA = "<|plamo:end_tool_arguments:plamo|>"
P_EOT = "<|plamo:tag|>"


def _pcall(name, args):
    return f"{P_BTR}{P_BTN}{name}{P_ETN}{P_BTA}{args}{P_ETA}{P_ETR}"


PLAMO3 = [
    ("content_then_call", "Checking the weather." + P_BTRS + _pcall("get_weather", "{\"city\": \"Tokyo\"}") + P_ETRS + P_EOT,
     "vllm tests/tool_parsers/test_plamo3_tool_parser.py::test_extract_tool_calls"),
    ("two_calls", P_BTRS + _pcall("get_weather", "{\"city\": \"東京\"}") + _pcall("now", "{}") + P_ETRS,
     "vllm tests/parser/engine/test_plamo3.py::test_multiple_calls_keep_indices_ids_and_arguments_separate"),
    ("eot_then_text", "Regular response" + P_EOT + "ignored",
     "vllm tests/tool_parsers/test_plamo3_tool_parser.py::test_extract_tool_calls (EOT)"),
    ("partial_marker_at_end", "Answer<|plamo:begin_",
     "vllm tests/tool_parsers/test_plamo3_tool_parser.py::test_extract_tool_calls (partial marker)"),
    ("missing_closers", "Before tools. " + P_BTRS + P_BTR + P_BTN + "get_weather" + P_ETN + P_BTA + "{\"city\":\"東京\"}",
     "vllm tests/parser/engine/test_plamo3.py::test_complete_arguments_survive_missing_closers; broken: unterminated call"),
    ("truncated_second_name", P_BTRS + _pcall("get_weather", "{\"city\":\"東京\"}") + P_BTR + P_BTN + "clo",
     "vllm tests/parser/engine/test_plamo3.py::test_multiple_calls_keep_indices_ids_and_arguments_separate[truncated_second]"),
    ("args_not_rewritten", P_BTRS + _pcall("get_weather", "{\"name\":\"Alice\",\"arguments\":{\"x\":1},\"parameters\":true}") + P_ETRS,
     "vllm tests/parser/engine/test_plamo3.py::test_arguments_are_not_rewritten"),
    ("invalid_json_args", P_BTRS + _pcall("get_weather", "{\"city\": Paris}") + P_ETRS,
     "broken: invalid JSON inside a call"),
    ("json_string_args", P_BTRS + _pcall("get_weather", "\"{\\\"city\\\": \\\"Paris\\\"}\"") + P_ETRS,
     "broken: arguments as JSON string"),
    ("undeclared_tool", P_BTRS + _pcall("launch", "{\"x\": 1}") + P_ETRS,
     "broken: unknown tool"),
    ("text_after_section", P_BTRS + _pcall("now", "{}") + P_ETRS + "Done.",
     "broken: text after the call section"),
    ("plain_literal_lt", "a < b literal <|plamo:unknown",
     "vllm tests/parser/engine/test_plamo3.py::test_plain_content_is_preserved"),
]

# ---------------------------------------------------------------- poolside_v1 (GLM-4.5 format, own parser)
POOLSIDE_V1 = [
    ("string_whitespace_kept",
     "<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>/a.py</arg_value>\n<arg_key>content</arg_key>\n<arg_value>    def f():\n        return 1\n</arg_value>\n</tool_call>",
     "vllm tests/tool_parsers/test_poolside_v1_tool_parser.py::test_string_arg_preserves_whitespace"),
    ("non_string_stripped",
     "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>hi</arg_value>\n<arg_key>days</arg_key>\n<arg_value> 420 </arg_value>\n</tool_call>",
     "vllm tests/tool_parsers/test_poolside_v1_tool_parser.py::test_non_string_arg_still_deserialized"),
    ("no_newline_after_name",
     "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
     "vllm tests/tool_parsers/test_poolside_v1_tool_parser.py::test_no_newline_after_name_streaming"),
    ("whitespace_only_name", "<tool_call>   </tool_call>",
     "vllm tests/tool_parsers/test_poolside_v1_tool_parser.py::test_whitespace_only_tool_call_name_is_rejected"),
    ("name_with_spaces",
     "<tool_call>  get weather  <arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
     "vllm tests/tool_parsers/test_poolside_v1_tool_parser.py::test_function_name_with_internal_whitespace_still_parses"),
    ("typed_and_text_after",
     "I'll check.\n<tool_call>get_weather\n<arg_key>metric</arg_key>\n<arg_value>true</arg_value>\n<arg_key>ratio</arg_key>\n<arg_value>2.5</arg_value>\n<arg_key>opts</arg_key>\n<arg_value>{'a': (1, 2)}</arg_value>\n</tool_call>\nDone.",
     "broken: text after the call; python-literal object value"),
    ("two_calls_text_between",
     "<tool_call>now</tool_call> and <tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Rome</arg_value>\n</tool_call>",
     "broken: two calls with text between"),
    ("unknown_tool",
     "<tool_call>launch_rocket\n<arg_key>when</arg_key>\n<arg_value>now</arg_value>\n</tool_call>",
     "broken: unknown tool"),
    ("repeated_key",
     "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>A</arg_value>\n<arg_key>city</arg_key>\n<arg_value>B</arg_value>\n</tool_call>",
     "broken: repeated key"),
    ("unclosed", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par",
     "broken: unterminated call"),
    ("invalid_json_value",
     "<tool_call>get_weather\n<arg_key>opts</arg_key>\n<arg_value>{bad</arg_value>\n</tool_call>",
     "broken: invalid JSON in an object-typed value"),
    ("json_string_value",
     "<tool_call>get_weather\n<arg_key>opts</arg_key>\n<arg_value>\"{\\\"a\\\": 1}\"</arg_value>\n</tool_call>",
     "broken: object value given as a JSON string"),
]

SUITES = [
    ("qwen3_coder", "qwen3", [], True, QWEN3_CODER),
    ("hermes", "qwen3", [], True, HERMES_BROKEN),
    ("llama3_json", "llama3_1", [], True, LLAMA3_JSON_BROKEN),
    ("deepseek_v3", "deepseek_v3", [], True, DEEPSEEK_V3_BROKEN),
    ("deepseek_v31", "deepseek_v3", [], True, DEEPSEEK_V31_BROKEN),
    ("dots", "qwen3", DOTS_TOKENS, True, DOTS),
    ("gigachat3", "qwen3", GIGA_TOKENS, True, GIGACHAT3),
    ("inkling", "qwen3", INK_TOKENS, True, INKLING),
    ("ling3", "qwen3", GLM_TOKENS, True, LING3),
    ("minicpm5", "qwen3", MINICPM5_TOKENS, True, MINICPM5),
    ("muse_glimmer", "qwen3", MG_TOKENS, True, MUSE_GLIMMER),
    ("plamo3", "qwen3", PLAMO_TOKENS, True, PLAMO3),
    ("poolside_v1", "qwen3", GLM_TOKENS, True, POOLSIDE_V1),
    # The registered class has no parsing of its own: recorded to show the crash.
    ("hf", "qwen3", [], True, [("registered_stub", "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>",
                                "vllm/tool_parsers/response_template_tool_parser.py (stub)")]),
]

# ---------------------------------------------------------------- hf (response_template)
# A Qwen3/Hermes-shaped response_template (no real checkpoint in the fixtures carries one).
HF_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "fields": {
        "content": {"close": ["<|im_end|>"], "content": "text"},
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open": "<tool_call>", "close": "</tool_call>", "content": "json", "repeats": True,
            "transform": {"type": "function", "function": {"name": "{content.name}",
                                                            "arguments": "{content.arguments}"}},
        },
    },
    "start_anchor": ["<|im_start|>assistant\n"],
}
HF = [
    ("content_only", "Hello there.", "vllm tests/parser/test_response_template.py (content)"),
    ("think_then_call", "<think>plan</think>Let me check.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
     "vllm tests/parser/test_response_template.py (reasoning, content_then_tool)"),
    ("two_calls", "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"東京\"}}\n</tool_call>",
     "vllm tests/parser/test_response_template.py (multiple_tools)"),
    ("text_after_call", "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>\nDone.",
     "broken: text after the call"),
    ("invalid_json", "Hi<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": Paris}}\n</tool_call>",
     "broken: invalid JSON inside a call"),
    ("unterminated", "Hi<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par",
     "broken: unterminated call"),
    ("json_string_args", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}\n</tool_call>",
     "broken: arguments as JSON string"),
    ("missing_arguments", "<tool_call>\n{\"name\": \"now\"}\n</tool_call>",
     "broken: call without arguments"),
]
HF_SUITES = [("hf", "qwen3", [], HF)]

# ---------------------------------------------------------------- reasoning
R_COMMON = [
    ("think_then_answer", "<think>\nThe user wants Paris.\n</think>\n\nIt is mild.", "generator DEEPSEEK_R1 case"),
    ("no_start_tag", "Thinking without a start tag.</think>The answer.", "generator DEEPSEEK_R1 case"),
    ("never_closed", "Still thinking about", "generator DEEPSEEK_R1 case"),
    ("text_before_start", "Preamble <think>inner</think>after", "generator DEEPSEEK_R1 case"),
    ("call_ends_reasoning", "I should call it.\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>",
     "generator QWEN3_REASONING case"),
    ("two_ends", "a</think>b</think>c", "generator DEEPSEEK_R1 case"),
]
INK_R = [
    ("think_text", f"{ITHK}hm{IEND}{IM}{ITXT}hi{IEND}", "vllm tests/parser/engine/test_inkling.py::test_end_sampling_closes_blocks"),
    ("bare_text", "hello world", "vllm tests/parser/engine/test_inkling.py::test_bare_text_after_model_opener"),
    ("two_thinks", f"{ITHK}one{IEND}{IM}{ITXT}mid{IEND}{IM}{ITHK}two{IEND}",
     "vllm tests/parser/engine/test_inkling.py::test_multiple_reasoning_blocks_concatenate"),
    ("think_unclosed", f"{ITHK}still", "broken: unterminated thinking block"),
]
MG_R = [
    ("answer", " to=self<|message|>Think about it.<|eom|><|start|>assistant to=user<|message|>The answer is 42.<|eot|>",
     "vllm tests/parser/engine/test_muse_glimmer.py RAW_ANSWER"),
    ("tool", " to=self<|message|>I should check.<|eom|>" + MG_TOOL, "vllm tests/parser/engine/test_muse_glimmer.py RAW_TOOLCALL"),
    ("unframed", "Just a direct answer.", "vllm tests/parser/engine/test_muse_glimmer.py::test_unframed_output_passes_through"),
    ("truncated", " to=self<|message|>Maybe I should call but wait", "vllm tests/parser/engine/test_muse_glimmer.py RAW_TRUNCATED"),
]
PLAMO_R = [
    ("think_answer", "<|plamo:begin_think:plamo|>Reasoning.<|plamo:end_think:plamo|>Answer.", "vllm tests/parser/engine/test_plamo3.py::test_reasoning_mode"),
    ("no_markers", "Answer.", "vllm tests/parser/engine/test_plamo3.py::test_reasoning_mode"),
    ("tool_ends_reasoning", "reasoning" + P_BTRS + _pcall("now", "{}") + P_ETRS, "vllm tests/parser/engine/test_plamo3.py::test_tool_block_can_end_reasoning_implicitly"),
    ("partial_end", "visible<|plamo:end_think", "vllm tests/parser/engine/test_plamo3.py::test_partial_end_think_is_consistent_between_streaming_and_non_streaming"),
]
REASONING_SUITES = [
    ("qwen3", "qwen3", R_COMMON),
    ("ling3", "qwen3", R_COMMON + [("truncated_start", "<think>only reasoning", "vllm tests/parser/engine/test_ling3.py::test_ling3_truncated_reasoning_stays_reasoning")]),
    ("minicpmv", "qwen3", R_COMMON),
    ("nemotron_v3", "qwen3", R_COMMON),
    ("poolside_v1", "qwen3", R_COMMON),
    ("poolside_v1+thinking", "qwen3", R_COMMON),
    ("identity", "qwen3", R_COMMON[:3]),
    ("basic(<think>,</think>)", "qwen3", R_COMMON),
    ("inkling", "qwen3", INK_R),
    ("muse_glimmer", "qwen3", MG_R),
    ("plamo3", "qwen3", PLAMO_R),
    ("hf", "qwen3", R_COMMON[:1]),
]
REASONING_ADDED_TOKENS = {
    "poolside_v1": ["<assistant>"],
    "poolside_v1+thinking": ["<assistant>"],
    "inkling": INK_TOKENS,
    "muse_glimmer": MG_TOKENS,
    "plamo3": PLAMO_TOKENS,
}
REASONING_CLASSES = {
    "identity": "vllm.reasoning.identity_reasoning_parser:IdentityReasoningParser",
    "basic(<think>,</think>)": "basic",  # a two-property subclass of BaseThinkingReasoningParser (gen.py)
}
REASONING_KWARGS = {
    "poolside_v1+thinking": ("poolside_v1", {"chat_template_kwargs": {"thinking": True}}),
}
