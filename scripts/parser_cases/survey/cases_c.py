"""Group c cases for scripts/gen_tool_parser_direct_goldens.py (SUITES format).

SUITES:           (parser, fixture_model, added_tokens, with_stream, cases)
REASONING_SUITES: (parser, fixture_model, cases)  -- as the generator reads them
each case:        (id, text, source)

Extras read by this group's gen.py (the main generator can ignore them):
  REASONING_ADDED_TOKENS  {reasoning parser: tokens added to the fixture}  (the
                          generator's reasoning path adds none; gemma4, seed_oss need
                          their markers as tokens to be realistic)
  REASONING_KWARGS_SUITES (parser, fixture_model, constructor kwargs, cases): the same
                          parser again with per-request kwargs (hy_v3 thinking on)
  PARSER_SUITES           (tool parser, reasoning parser, fixture_model, added, cases):
                          run through vLLM's unified Parser (ParserManager.get_parser,
                          parse / parse_delta), for cohere_command3/4 whose ToolParser
                          class is an empty shim.
No TOOLS_EXTRA: every case uses the generator's TOOLS (get_weather, write_file, now) or a
deliberately undeclared name.
"""

TOOLS_EXTRA = []
OPTS_A1 = '{"a": 1}'
OPTS_A_LIST = '{"a": [1]}'

# ---------------------------------------------------------------------------------------
# gemma4 (vllm/parser/gemma4.py engine)
# ---------------------------------------------------------------------------------------
G4_TOKENS = ["<|tool_call>", "<tool_call|>", "<|channel>", "<channel|>", '<|"|>', "<|turn>",
             "<turn|>", "<|tool_response>"]
Q = '<|"|>'
TC, TE = "<|tool_call>", "<tool_call|>"
T4 = "vllm tests/tool_parsers/test_gemma4_tool_parser.py"
GEMMA4 = [
    ("one_call", f"{TC}call:get_weather{{city:{Q}London{Q},days:3}}{TE}",
     f"{T4}::TestExtractToolCalls::test_single_tool_call"),
    ("text_before", f"Let me check the weather for you. {TC}call:get_weather{{city:{Q}Paris{Q}}}{TE}",
     f"{T4}::TestExtractToolCalls::test_text_before_tool_call"),
    ("two_calls", f"{TC}call:get_weather{{city:{Q}London{Q}}}{TE}{TC}call:now{{}}{TE}",
     f"{T4}::TestExtractToolCalls::test_multiple_tool_calls"),
    ("typed_nested", f"{TC}call:get_weather{{city:{Q}Oslo{Q},days:3,metric:true,ratio:2.5,"
                     f"opts:{{unit:{Q}C{Q},hours:[1,2],tags:[{Q}a{Q},{Q}b{Q}]}}}}{TE}",
     f"{T4}::TestExtractToolCalls::test_nested_arguments + test_tool_call_with_number_and_boolean"),
    ("comma_in_string", f"{TC}call:get_weather{{city:{Q}Paris, France{Q}}}{TE}",
     f"{T4}::TestStreamingExtraction::test_basic_streaming_single_tool"),
    ("html_string", f"{TC}call:write_file{{path:{Q}index.html{Q},content:{Q}<!DOCTYPE html>\n<html lang=\"zh\">{{x}}</html>\n{Q}}}{TE}",
     f"{T4}::TestStreamingExtraction::test_streaming_html_argument_does_not_duplicate_tag_prefixes"),
    ("no_call", "Hello, how can I help you today?", f"{T4}::TestExtractToolCalls::test_no_tool_calls"),
    ("unterminated", f"{TC}call:get_weather{{city:{Q}London", f"{T4}::TestExtractToolCalls::test_incomplete_tool_call"),
    ("unknown_tool", f"{TC}call:launch_rocket{{when:{Q}now{Q},count:3,armed:true}}{TE}", "broken: unknown tool (untyped values)"),
    ("text_after", f"{TC}call:now{{}}{TE}Done.", "broken: text after call"),
    ("json_args", f'{TC}call:get_weather{{"city": "Paris", "days": 3}}{TE}', "broken: JSON object instead of gemma key:value args"),
    ("reasoning_then_call", f"<|channel>thought\nNeed the tool.<channel|>{TC}call:now{{}}{TE}",
     "vllm tests/reasoning/test_gemma4_reasoning_parser.py (channel then call), through the tool parser"),
    ("bare_call_after_channel", f"<|channel>thought\nListing files.\n<channel|>call:write_file{{path:{Q}/work{Q}}}",
     "vllm tests/tool_parsers/test_gemma4_regex_and_bare_calls.py::test_engine_tool_parser_bare_call_extraction"),
    ("paren_args", f"{TC}call:get_weather(city:{Q}Rome{Q}){TE}", "broken: parentheses instead of braces (engine OPEN_PAREN)"),
    ("bad_value_types", f"{TC}call:get_weather{{days:three,metric:yes,ratio:1e400}}{TE}", "broken: values that do not fit the schema"),
]

# ---------------------------------------------------------------------------------------
# functiongemma
# ---------------------------------------------------------------------------------------
FG_TOKENS = ["<start_function_call>", "<end_function_call>", "<escape>"]
FS, FE, E = "<start_function_call>", "<end_function_call>", "<escape>"
TFG = "vllm tests/tool_parsers/test_functiongemma_tool_parser.py"
FUNCTIONGEMMA = [
    ("one_call", f"{FS}call:get_weather{{city:{E}London{E}}}{FE}", f"{TFG}::TestExtractToolCalls::test_single_tool_call"),
    ("two_keys", f"{FS}call:get_weather{{city:{E}NYC{E},days:{E}3{E}}}{FE}",
     f"{TFG}::TestExtractToolCallsStreaming::test_streamed_arguments_form_valid_json_with_two_keys"),
    ("three_keys_no_commas", f"{FS}call:get_weather{{city:{E}python{E}days:{E}10{E}metric:{E}true{E}}}{FE}",
     f"{TFG}::TestExtractToolCallsStreaming::test_streamed_arguments_form_valid_json_with_three_keys"),
    ("text_before", f"Let me check the weather for you. {FS}call:get_weather{{city:{E}Paris{E}}}{FE}",
     f"{TFG}::TestExtractToolCalls::test_text_before_tool_call"),
    ("two_calls", f"{FS}call:get_weather{{city:{E}London{E}}}{FE}{FS}call:now{{}}{FE}",
     f"{TFG}::TestExtractToolCalls::test_multiple_tool_calls"),
    ("typed_values", f"{FS}call:get_weather{{metric:{E}true{E},ratio:{E}2.5{E},opts:{E}{{\"a\": [1, 2]}}{E},city:{E}\"quoted\"{E}}}{FE}",
     f"{TFG}::TestParseArguments (json.loads of each value)"),
    ("no_call", "Hello, how can I help you today?", f"{TFG}::TestExtractToolCalls::test_no_tool_calls"),
    ("unterminated", f"{FS}call:get_weather{{city:{E}Par", "broken: unterminated call"),
    ("text_after", f"{FS}call:now{{}}{FE}Done.", "broken: text after call"),
    ("unknown_tool", f"{FS}call:launch_rocket{{when:{E}now{E}}}{FE}", "broken: unknown tool"),
    ("bare_values", f"{FS}call:get_weather{{days:3,city:Paris}}{FE}", "broken: values without <escape>"),
    ("json_args", f'{FS}call:get_weather{{"city": "Paris"}}{FE}', "broken: JSON object arguments"),
]

# ---------------------------------------------------------------------------------------
# llama4_pythonic, pythonic (broken siblings only)
# ---------------------------------------------------------------------------------------
L4_TOKENS = ["<|python_start|>", "<|python_end|>"]
PS, PE = "<|python_start|>", "<|python_end|>"
TL4 = "vllm tests/tool_parsers/test_llama4_pythonic_tool_parser.py"
LLAMA4_PYTHONIC = [
    ("simple", "[get_weather(city='LA', metric=True)]", f"{TL4}::test_tool_call[simple_nonstreaming]"),
    ("python_tag", f"{PS}[get_weather(city='LA', days=3)]{PE}", f"{TL4}::test_tool_call[python_tag_nonstreaming]"),
    ("parallel_python_start", f"{PS}[get_weather(city='LA', metric=True), now()]",
     f"{TL4}::test_tool_call[parallel_calls_streaming]"),
    ("more_types", "[get_weather(city='Doe', days=9, opts={'city': 'LA', 'state': None, 'l': ['John', 'Johnny']}, metric=True, ratio=2.5)]",
     f"{TL4}::test_tool_call[more_types_nonstreaming]"),
    ("escaped_string", r"[write_file(path='Martha\'s Vineyard', content='\"cool units\"')]",
     f"{TL4}::test_tool_call[escaped_string_nonstreaming]"),
    ("large_steps_end", f"{PS}[get_weather(city='LA', metric=True), now(), write_file(path='x')]{PE}",
     f"{TL4}::test_streaming_tool_call_with_large_steps"),
    ("no_call", "How can I help you today?", f"{TL4}::test_no_tool_call"),
    ("bad_sibling", f"{PS}[launch(x=b'z'), get_weather(city='LA', metric=True)]{PE}",
     f"{TL4}::test_bad_sibling_call_does_not_drop_good_calls"),
    ("non_finite", f"{PS}[get_weather(ratio=1e999), now()]{PE}", f"{TL4}::test_non_finite_argument_rejected"),
    ("mismatched_brackets", f"{PS}[get_weather(days=1])]{PE}", f"{TL4}::test_streaming_mismatched_brackets_reported_once"),
    ("text_before", "Sure: [now()]", "broken: text before the list"),
    ("text_after_end", f"{PS}[now()]{PE} trailing", "broken: text after <|python_end|>"),
    ("unknown_tool", "[launch_rocket(when='now')]", "broken: unknown tool"),
    ("json_literals", "[get_weather(metric=true, opts=null)]", "broken: JSON literals true/null"),
]
TPY = "vllm tests/tool_parsers/test_pythonic_tool_parser.py"
PYTHONIC_BROKEN = [
    ("bad_sibling_bytes", "[launch(x=b'z'), get_weather(city='LA')]", f"{TPY}::test_bad_sibling_call_does_not_drop_good_calls"),
    ("bad_sibling_name_value", "[get_weather(city=foo), now()]", "broken: non-literal argument in the first call"),
    ("bad_second_call", "[now(), get_weather(city=os.environ)]", "broken: non-literal argument in the second call"),
    ("positional_arg", "[get_weather('LA'), now()]", "broken: positional argument"),
    ("non_finite", "[get_weather(ratio=1e999), now()]", f"{TPY}::test_non_finite_argument_rejected"),
    ("syntax_error_sibling", "[now(), get_weather(city='LA'), oops(]", "broken: unclosed third call"),
    ("dotted_name", "[tools.now(), get_weather(city='LA')]", "broken: dotted call name"),
    ("python_start", f"{PS}[now()]{PE}", "broken: llama4 markers given to the plain pythonic parser"),
]

# ---------------------------------------------------------------------------------------
# olmo3
# ---------------------------------------------------------------------------------------
TO3 = "vllm tests/tool_parsers/test_olmo3_tool_parser.py"
OLMO3 = [
    ("simple", "<function_calls>get_weather(city='San Francisco', metric=True)</function_calls>",
     f"{TO3}::test_tool_call[simple_nonstreaming]"),
    ("json_literals", "<function_calls>get_weather(city='Paris', metric=true, opts=null)</function_calls>",
     f"{TO3}::test_tool_call[more_types_nonstreaming_json_literals]"),
    ("parallel_newline", "<function_calls>get_weather(city='Paris', days=3)\nnow()</function_calls>",
     f"{TO3}::test_tool_call[parallel_calls_nonstreaming]"),
    ("parameterless", "<function_calls>now()</function_calls>", f"{TO3}::test_tool_call[parameterless_nonstreaming]"),
    ("escaped_string", r"<function_calls>write_file(path='Martha\'s Vineyard', content='\"cool units\"')</function_calls>",
     f"{TO3}::test_tool_call[escaped_string_nonstreaming]"),
    ("no_call", "How can I help you today?", f"{TO3}::test_no_tool_call"),
    ("bad_sibling", "<function_calls>bad(x=b'z')\nget_weather(city='LA')</function_calls>",
     f"{TO3}::test_bad_sibling_call_does_not_drop_good_calls"),
    ("mismatched_brackets", "<function_calls>get_weather(days=1])</function_calls>",
     f"{TO3}::test_streaming_mismatched_brackets_reported_once"),
    ("bare_no_tags", "get_weather(city='Rome')", "broken: call without <function_calls>"),
    ("text_before", "Let me check.\n<function_calls>now()</function_calls>", "broken: text before the block"),
    ("text_after", "<function_calls>now()</function_calls>\nDone.", "broken: text after the block"),
    ("unterminated", "<function_calls>get_weather(city='Par", "broken: unterminated call"),
    ("unknown_tool", "<function_calls>launch_rocket(when='now')</function_calls>", "broken: unknown tool"),
]

# ---------------------------------------------------------------------------------------
# seed_oss (Qwen3 engine with <seed:...> wrappers)
# ---------------------------------------------------------------------------------------
SEED_TOKENS = ["<seed:think>", "</seed:think>", "<seed:tool_call>", "</seed:tool_call>", "<seed:bos>",
               "<seed:eos>", "<seed:cot_budget_reflect>", "</seed:cot_budget_reflect>"]
SB, SE = "<seed:tool_call>", "</seed:tool_call>"
TSO = "vllm tests/tool_parsers/test_seed_oss_tool_parser.py"
SEED_OSS = [
    ("one_call", f"{SB}\n<function=get_weather>\n<parameter=city>Barcelona, Spain</parameter>\n</function>\n{SE}",
     f"{TSO}::test_extract_tool_calls[tool_call_0_thinking_budget]"),
    ("think_then_call", f"<seed:think>The user wants the weather.<seed:cot_budget_reflect>I have used 13 tokens.</seed:cot_budget_reflect>\n</seed:think>\n"
     f"{SB}\n<function=get_weather>\n<parameter=city>Barcelona, Spain</parameter>\n</function>\n{SE}",
     f"{TSO}::test_extract_tool_calls[tool_call_512_thinkg_budget]"),
    ("call_text_inside_think", f"<seed:think>The format is {SB}\n<function=now>\n</function>\n{SE}. Go.</seed:think>"
     f"{SB}\n<function=get_weather>\n<parameter=city>Rome</parameter>\n</function>\n{SE}",
     f"{TSO}::test_extract_tool_calls[tool_call_unlimited_thinking_budget]"),
    ("typed", f"{SB}\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
     f"<parameter=metric>\ntrue\n</parameter>\n<parameter=ratio>\n2.5\n</parameter>\n<parameter=opts>\n{{\"a\": [1, 2]}}\n</parameter>\n</function>\n{SE}",
     "qwen3_coder-style typed params (vllm tests/tool_parsers/test_qwen3coder_tool_parser.py) in seed wrappers"),
    ("two_calls", f"{SB}\n<function=now>\n</function>\n{SE}\n{SB}\n<function=get_weather>\n<parameter=city>Rome</parameter>\n</function>\n{SE}",
     "broken: two calls"),
    ("text_around", f"I'll check.\n{SB}\n<function=now>\n</function>\n{SE}\nDone.", "broken: text before and after"),
    ("no_call", "This is a test response without any tool calls", f"{TSO}::test_extract_tool_calls_no_tools"),
    ("unknown_tool", f"{SB}\n<function=launch_rocket>\n<parameter=when>now</parameter>\n</function>\n{SE}", "broken: unknown tool"),
    ("unterminated", f"{SB}\n<function=get_weather>\n<parameter=city>Par", "broken: unterminated call"),
    ("bare_function", "<function=now>\n</function>", "broken: <function=...> without the seed wrapper"),
    ("qwen_wrapper", "<tool_call>\n<function=now>\n</function>\n</tool_call>", "broken: Qwen3 wrapper given to seed_oss"),
]

# ---------------------------------------------------------------------------------------
# step3
# ---------------------------------------------------------------------------------------
ST3_TOKENS = ["<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>", "<｜tool_call_end｜>", "<｜tool_sep｜>"]
S3B, S3E, S3CB, S3CE, S3SEP = ST3_TOKENS
TS3 = "vllm tests/tool_parsers/test_step3_tool_parser.py"


def s3call(name, params="", typed=True):
    body = "".join(f'<steptml:parameter name="{k}">{v}</steptml:parameter>' for k, v in params)
    head = f"function{S3SEP}" if typed else ""
    return f'{S3CB}{head}<steptml:invoke name="{name}">{body}</steptml:invoke>{S3CE}'


STEP3 = [
    ("one_call", f"{S3B}{s3call('get_weather', [('city', 'Tokyo')])}{S3E}", f"{TS3}::TestStep3ParameterWhitespace (_ws_output shape)"),
    ("no_type_prefix", f"{S3B}{s3call('get_weather', [('city', 'Tokyo')], typed=False)}{S3E}",
     f"{TS3}::TestStep3ToolParser single_tool_call_output"),
    ("typed", f"{S3B}{s3call('get_weather', [('city', 'Oslo'), ('days', '3'), ('metric', 'true'), ('ratio', '2.5'), ('opts', OPTS_A1)])}{S3E}",
     f"{TS3}::TestStep3ToolParser various_data_types_output"),
    ("two_calls", f"{S3B}{s3call('get_weather', [('city', 'Tokyo')])}{S3SEP}{s3call('now')}{S3E}",
     f"{TS3}::TestStep3ToolParser parallel_tool_calls_output"),
    ("two_calls_newline", f"{S3B}{s3call('get_weather', [('city', 'Tokyo')])}\n{s3call('now')}{S3E}", "broken: two calls separated by a newline"),
    ("surrounding_text", f"Let me check the weather for you.\n\n{S3B}{s3call('get_weather', [('city', 'Tokyo')])}{S3E}\n\nI'll get that information.",
     f"{TS3}::TestStep3ToolParser surrounding_text_output"),
    ("whitespace_value", f"{S3B}{s3call('get_weather', [('city', '    if x:'), ('days', ' 4 '), ('metric', ' true ')])}{S3E}",
     f"{TS3}::TestStep3ParameterWhitespace::test_string_value_preserved"),
    ("empty_args", f"{S3B}{s3call('now')}{S3E}", f"{TS3}::TestStep3ToolParser empty_arguments_output"),
    ("no_call", "This is a regular response without any tool calls.", f"{TS3}::TestStep3ToolParser no_tool_calls_output"),
    ("unterminated", f'{S3B}{S3CB}function{S3SEP}<steptml:invoke name="get_weather">', f"{TS3}::TestStep3ToolParser malformed_input_outputs[0]"),
    ("no_section", f'{S3CB}<steptml:invoke name="now"></steptml:invoke>{S3CE}', f"{TS3}::TestStep3ToolParser malformed_input_outputs[1]"),
    ("unknown_tool", f"{S3B}{s3call('launch_rocket', [('when', 'now')])}{S3E}", "broken: unknown tool"),
    ("lt_in_value", f"{S3B}{s3call('write_file', [('path', 'a'), ('content', 'x<y')])}{S3E}", "broken: '<' inside a value"),
]

# ---------------------------------------------------------------------------------------
# step3p5 (= Qwen3 engine, <tool_call> XML)
# ---------------------------------------------------------------------------------------
TS35 = "vllm tests/tool_parsers/test_step3p5_tool_parser.py"
STEP3P5 = [
    ("single_tool", "<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
     f"{TS35}::test_extract_tool_calls[single_tool]"),
    ("with_content", "Sure! Let me check the weather for you.<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n</function>\n</tool_call>",
     f"{TS35}::test_extract_tool_calls[single_tool_with_content]"),
    ("multiline_param", "<tool_call>\n<function=get_weather>\n<parameter=opts>\n{\"width\": 10, \n \"height\": 20}\n</parameter>\n<parameter=ratio>\n2\n</parameter>\n</function>\n</tool_call>",
     f"{TS35}::test_extract_tool_calls[single_tool_multiline_param]"),
    ("parallel", "<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nOrlando\n</parameter>\n</function>\n</tool_call>",
     f"{TS35}::test_extract_tool_calls[parallel_tools]"),
    ("typed_params", "<tool_call>\n<function=get_weather>\n<parameter=days>\n42\n</parameter>\n<parameter=ratio>\n3.14\n</parameter>\n<parameter=metric>\ntrue\n</parameter>\n<parameter=city>\nhello world\n</parameter>\n<parameter=opts>\n{\"key\": \"value\"}\n</parameter>\n</function>\n</tool_call>",
     f"{TS35}::test_extract_tool_calls_type_conversion"),
    ("fallback_no_tags", "<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n</function>", f"{TS35}::test_extract_tool_calls_fallback_no_tags"),
    ("no_call", "This is a test response without any tool calls", f"{TS35}::test_extract_tool_calls_no_tools"),
    ("text_after", "<tool_call>\n<function=now>\n</function>\n</tool_call>\nDone.", "broken: text after call"),
    ("unknown_tool", "<tool_call>\n<function=launch_rocket>\n<parameter=when>\nnow\n</parameter>\n</function>\n</tool_call>", "broken: unknown tool"),
    ("unterminated", "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar", "broken: unterminated call"),
    ("think_markup", "<think>\nplan\n</think>\n\n<tool_call>\n<function=now>\n</function>\n</tool_call>", "broken: reasoning markup reaching the tool parser"),
]

# ---------------------------------------------------------------------------------------
# ernie45
# ---------------------------------------------------------------------------------------
ERNIE_TOKENS = ["<response>", "</response>"]
TE45 = "vllm tests/tool_parsers/test_ernie45_moe_tool_parser.py"
ERNIE45 = [
    ("single", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Beijing\"}}\n</tool_call>\n",
     f"{TE45}::test_extract_tool_calls[single_tool_call]"),
    ("multiple", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Beijing\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Guangzhou\", \"days\": 3}}\n</tool_call>\n",
     f"{TE45}::test_extract_tool_calls[multiple_tool_calls]"),
    ("content_before", "I need to call two tools to handle these two issues separately.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Beijing\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>\n",
     f"{TE45}::test_extract_tool_calls[tool_call_with_content_before]"),
    ("no_call", "This is a test", f"{TE45}::test_extract_tool_calls_no_tools"),
    ("invalid_json", "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }}\n</tool_call>",
     "broken: second call has invalid JSON"),
    ("string_args", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}\n</tool_call>", "broken: arguments given as a JSON string"),
    ("parameters_key", "<tool_call>\n{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n</tool_call>", "broken: 'parameters' instead of 'arguments'"),
    ("text_after", "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>\nDone.", "broken: text after call"),
    ("text_between", "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call> and <tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>", "broken: text between calls"),
    ("unknown_tool", "<tool_call>\n{\"name\": \"launch_rocket\", \"arguments\": {\"when\": \"now\"}}\n</tool_call>", "broken: unknown tool"),
    ("unterminated", "Checking.\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}", "broken: unterminated call"),
    ("response_wrapped", "<response>\nHello there.\n</response>\n", "vllm reasoning/ernie45 docstring: <response> wrapped answer, no call"),
]

# ---------------------------------------------------------------------------------------
# cohere_command3 / cohere_command4 (logic in vllm/parser/cohere_command.py via cohere_melody)
# ---------------------------------------------------------------------------------------
COHERE_TOKENS = ["<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>", "<|END_ACTION|>",
                 "<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>", "<|CHATBOT_TOKEN|>"]
TCO = "vllm tests/tool_parsers/test_cohere_command_tool_parser.py"
COHERE = [
    ("single_tool_call", "<|START_THINKING|> i will call get_weather with Paris<|END_THINKING|><|START_ACTION|>\n[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n]\n<|END_ACTION|>",
     f"{TCO}::TOOL_CALL_CASES[cmd3-single_tool_call]"),
    ("multiple_tool_calls", "<|START_THINKING|>first I think about it<|END_THINKING|><|START_ACTION|>\n[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}},\n    {\"tool_call_id\": \"1\", \"tool_name\": \"now\", \"parameters\": {}}\n]\n<|END_ACTION|>",
     f"{TCO}::TOOL_CALL_CASES[cmd3-multiple_tool_calls]"),
    ("citations_no_tool_calls", "<|START_THINKING|>This is a rainbow <co>emoji: 🌈</co: 0:[1]><|END_THINKING|>\n<|START_RESPONSE|>foo <co>bar</co: 0:[1,2],1:[3,4]><|END_RESPONSE|>",
     f"{TCO}::TOOL_CALL_CASES[cmd3-citations_no_tool_calls]"),
    ("reasoning_only", "<|START_THINKING|>just think, no response<|END_THINKING|>", f"{TCO}::TOOL_CALL_CASES[cmd3-reasoning_only]"),
    ("response_only", "<|START_RESPONSE|>It is mild in Paris.<|END_RESPONSE|>", "broken: plain answer, no thinking"),
    ("plain_text", "Just text, no markers.", "broken: no markers at all"),
    ("invalid_json", "<|START_ACTION|>\n[{\"tool_call_id\": \"0\", \"tool_name\": \"now\", \"parameters\": {}}, {\"tool_call_id\": \"1\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": }}]\n<|END_ACTION|>",
     "broken: invalid JSON in the second call"),
    ("unknown_tool", "<|START_ACTION|>\n[{\"tool_call_id\": \"0\", \"tool_name\": \"launch_rocket\", \"parameters\": {\"when\": \"now\"}}]\n<|END_ACTION|>", "broken: unknown tool"),
    ("unterminated", "<|START_ACTION|>\n[{\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Par", "broken: unterminated action"),
    ("string_params", "<|START_ACTION|>\n[{\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": \"{\\\"city\\\": \\\"Paris\\\"}\"}]\n<|END_ACTION|>", "broken: parameters as a JSON string"),
]

# ---------------------------------------------------------------------------------------
# hunyuan_a13b
# ---------------------------------------------------------------------------------------
HUN_TOKENS = ["<tool_calls>", "</tool_calls>"]
THA = "vllm tests/tool_parsers/test_hunyuan_a13b_tool_parser.py"
HUNYUAN_A13B = [
    ("single", '<tool_calls>[{"name": "get_weather", "arguments": {"city": "San Francisco", "metric": true}}]</tool_calls>',
     f"{THA}::test_hunyuan_a13b_tool_parser_extract[single]"),
    ("multiple", '<tool_calls>[{"name": "get_weather", "arguments": {"city": "San Francisco", "days": 3}}, {"name": "write_file", "arguments": {"path": "/tmp/a", "content": null}}]</tool_calls>',
     f"{THA}::test_hunyuan_a13b_tool_parser_extract[multiple]"),
    ("content_before", 'I will call the tool now. <tool_calls>[{"name": "get_weather", "arguments": {"city": "Boston"}}]</tool_calls>',
     f"{THA}::test_hunyuan_a13b_tool_parser_extract[content_before]"),
    ("content_after", '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Seattle"}}]</tool_calls>\nThank you!',
     f"{THA}::test_hunyuan_a13b_tool_parser_extract[content_after]"),
    ("nested", '<tool_calls>[{"name": "get_weather", "arguments": {"opts": {"level2": {"level3": {"value": 123}}}}}]</tool_calls>',
     f"{THA}::test_hunyuan_a13b_tool_parser_extract[nested]"),
    ("non_ascii", '<tool_calls>[{"name": "get_weather", "arguments": {"city": "北京"}}]</tool_calls>', f"{THA}::test_hunyuan_a13b_tool_parser_non_ascii"),
    ("empty_args_first", '<tool_calls>[{"name": "now", "arguments": {}}, {"name": "get_weather", "arguments": {"days": 42}}]</tool_calls>',
     f"{THA}::test_hunyuan_a13b_tool_parser_streaming_one_empty_args_tool"),
    ("compact_json", '<tool_calls>[{"name":"get_weather","arguments":{"city":"Oslo"}}]</tool_calls>', "broken: compact JSON (no spaces)"),
    ("no_call", "助手：How can I help you today?", f"{THA}::test_hunyuan_a13b_tool_parser_extract[no_call] + template prefix"),
    ("invalid_json", '<tool_calls>[{"name": "get_weather", "arguments": {"city": }}]</tool_calls>', "broken: invalid JSON"),
    ("string_args", '<tool_calls>[{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}]</tool_calls>', "broken: arguments as a JSON string"),
    ("unknown_tool", '<tool_calls>[{"name": "launch_rocket", "arguments": {"when": "now"}}]</tool_calls>', "broken: unknown tool"),
    ("inside_think", '<think>\n<tool_calls>[{"name": "now", "arguments": {}}]</tool_calls>\n</think>\nok', "broken: call block inside <think>"),
    ("unterminated", '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Par', "broken: unterminated block"),
]

# ---------------------------------------------------------------------------------------
# hy_v3
# ---------------------------------------------------------------------------------------
HY3_TOKENS = ["<tool_calls>", "</tool_calls>", "<tool_sep>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"]
THY3 = "vllm tests/tool_parsers/test_hy_v3_tool_parser.py::TestHYV3ExtractToolCalls"


def hy3(name, args=(), nl=True):
    n = "\n" if nl else ""
    body = "".join(f"{n}<arg_key>{k}</arg_key>{n}<arg_value>{v}</arg_value>" for k, v in args)
    return f"<tool_call>{name}<tool_sep>{body}{n}</tool_call>"


HY_V3 = [
    ("zero_arg_inline", f"<tool_calls>{hy3('now', nl=False)}</tool_calls>", f"{THY3}::test_zero_arg_inline"),
    ("zero_arg_newline", f"<tool_calls>\n{hy3('now')}\n</tool_calls>", f"{THY3}::test_zero_arg_newline"),
    ("args_same_line", f"<tool_calls>{hy3('get_weather', [('city', 'Beijing'), ('days', '3')], nl=False)}</tool_calls>", f"{THY3}::test_args_same_line"),
    ("typed_newlines", f"<tool_calls>\n{hy3('get_weather', [('city', 'Beijing'), ('days', '3'), ('metric', 'True'), ('ratio', '5'), ('opts', OPTS_A_LIST)])}\n</tool_calls>",
     f"{THY3}::test_args_with_newlines"),
    ("content_before", f"Checking.<tool_calls>\n{hy3('now')}\n</tool_calls>", f"{THY3}::test_content_before"),
    ("multiple", f"<tool_calls>\n{hy3('get_weather', [('city', 'Beijing')])}\n{hy3('get_weather', [('city', 'Hangzhou')])}\n</tool_calls>", f"{THY3}::test_multiple"),
    ("no_call", "This is a plain response.", f"{THY3}::test_no_tool_call"),
    ("text_after", f"<tool_calls>{hy3('now', nl=False)}</tool_calls>\nDone.", "broken: text after block"),
    ("unknown_tool", f"<tool_calls>{hy3('launch_rocket', [('count', '3')], nl=False)}</tool_calls>", "broken: unknown tool"),
    ("loose_values", f"<tool_calls>{hy3('get_weather', [('metric', 'yes'), ('days', '3.0'), ('opts', 'notjson')], nl=False)}</tool_calls>", "broken: values that do not fit the schema"),
    ("unterminated", f"<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Par", "broken: unterminated call"),
    ("no_wrapper", hy3('now', nl=False), "broken: <tool_call> without <tool_calls>"),
]

# ---------------------------------------------------------------------------------------
# hy_v4 (strict)
# ---------------------------------------------------------------------------------------
HY4_TOKENS = ["<tool_calls>", "</tool_calls>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"]
THY4 = "vllm tests/tool_parsers/test_hy_v4_tool_parser.py"


def a4(k, v):
    return f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>"


def c4(name, args=""):
    return f"<tool_call>{name}{args}</tool_call>"


def b4(body):
    return f"<tool_calls>{body}</tool_calls>"


HY_V4 = [
    ("values_typed", "sure!" + b4(c4("get_weather", a4("city", "Beijing") + a4("days", "3"))), f"{THY4}::TestExtractToolCalls::test_values_typed_from_schema"),
    ("zero_arg", b4(c4("now")), f"{THY4}::TestExtractToolCalls::test_zero_arg_call"),
    ("multiple", b4(c4("get_weather", a4("city", "A")) + c4("now")), f"{THY4}::TestExtractToolCalls::test_multiple_calls_keep_their_order"),
    ("non_ascii", b4(c4("get_weather", a4("city", "北京") + a4("metric", "True") + a4("ratio", "1e3"))), f"{THY4}::TestExtractToolCalls::test_non_ascii_values_are_not_escaped"),
    ("no_call", "A plain response.", f"{THY4}::TestExtractToolCalls::test_no_tool_call"),
    ("missing_tool_calls_end", "<tool_calls>" + c4("now"), f"{THY4}::MALFORMED[missing_tool_calls_end]"),
    ("unbalanced_tool_call", b4("<tool_call>get_weather" + a4("city", "X")), f"{THY4}::MALFORMED[unbalanced_tool_call]"),
    ("empty_function_name", b4(c4("")), f"{THY4}::MALFORMED[empty_function_name]"),
    ("unparsed_payload", b4("<tool_call>get_weather" + a4("city", "X") + "JUNK</tool_call>"), f"{THY4}::MALFORMED[unparsed_argument_payload]"),
    ("newlines_between_tags", "<tool_calls>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\n</tool_calls>",
     "broken: newlines between the arg tags (hy_v3 layout)"),
    ("text_after", b4(c4("now")) + "\nDone.", "broken: text after block"),
    ("unknown_tool", b4(c4("mystery", a4("x", "1"))), f"{THY4}::TestArgumentValueTypes::test_unknown_tool_keeps_values_as_text"),
    ("loose_values", b4(c4("get_weather", a4("days", "notanint") + a4("metric", "yes") + a4("opts", "notjson"))), f"{THY4}::TestArgumentValueTypes::test_unparsable_value_is_kept_as_text"),
]

QWEN = "qwen3"
LLAMA = "llama3_1"
SUITES = [
    ("gemma4", QWEN, G4_TOKENS, True, GEMMA4),
    ("functiongemma", QWEN, FG_TOKENS, True, FUNCTIONGEMMA),
    ("llama4_pythonic", LLAMA, L4_TOKENS, True, LLAMA4_PYTHONIC),
    ("pythonic", LLAMA, L4_TOKENS, True, PYTHONIC_BROKEN),
    ("olmo3", LLAMA, [], True, OLMO3),
    ("seed_oss", QWEN, SEED_TOKENS, True, SEED_OSS),
    ("step3", QWEN, ST3_TOKENS, True, STEP3),
    ("step3p5", QWEN, [], True, STEP3P5),
    ("ernie45", QWEN, ERNIE_TOKENS, True, ERNIE45),
    # The registered ToolParser classes are empty shims: extract_tool_calls raises
    # NotImplementedError. Kept to record that; PARSER_SUITES has the real behaviour.
    ("cohere_command3", QWEN, COHERE_TOKENS, True, COHERE[:2]),
    ("cohere_command4", QWEN, COHERE_TOKENS, True, COHERE[:2]),
    ("hunyuan_a13b", LLAMA, HUN_TOKENS, True, HUNYUAN_A13B),
    # Hunyuan-A13B's tokenizer splits <think> into "<th" "ink" ">\n" (the reasoning
    # parser's hardcoded IDs), so its tags are likely plain text: the same parser with
    # <tool_calls> not a token (ids suffixed _text_markers).
    ("hunyuan_a13b", LLAMA, [], True, [(i + "_text_markers", t, s + " (markers as plain text)")
                                       for i, t, s in HUNYUAN_A13B if i in ("single", "content_before", "multiple")]),
    ("hy_v3", QWEN, HY3_TOKENS, True, HY_V3),
    ("hy_v4", QWEN, HY4_TOKENS, True, HY_V4),
]

G4_PROMPT = "<|turn>user\ngo<turn|>\n<|turn>model\n"
SEED_PROMPT = "<seed:bos>user\ngo<seed:eos><seed:bos>assistant\n"
COHERE_PROMPT = "<|CHATBOT_TOKEN|>"
# (tool parser, reasoning parser or None, fixture, added tokens, cases, prompt text whose
# token IDs parse_delta gets as prompt_token_ids)
PARSER_SUITES = [
    ("cohere_command3", "cohere_command3", QWEN, COHERE_TOKENS, COHERE, COHERE_PROMPT),
    ("cohere_command4", "cohere_command4", QWEN, COHERE_TOKENS, COHERE, COHERE_PROMPT),
    # How the serving layer runs these engine families: tool parser alone (reasoning markup
    # is then passed through, skip_reasoning_parsing) and paired with its reasoning parser.
    ("gemma4", None, QWEN, G4_TOKENS, [c for c in GEMMA4 if c[0] in ("text_before", "text_after", "reasoning_then_call", "bare_call_after_channel", "two_calls")], G4_PROMPT),
    ("gemma4", "gemma4", QWEN, G4_TOKENS, [c for c in GEMMA4 if c[0] in ("text_before", "text_after", "reasoning_then_call", "bare_call_after_channel", "two_calls")], G4_PROMPT),
    ("seed_oss", None, QWEN, SEED_TOKENS, [c for c in SEED_OSS if c[0] in ("think_then_call", "call_text_inside_think", "text_around", "unterminated")], SEED_PROMPT),
    ("seed_oss", "seed_oss", QWEN, SEED_TOKENS, [c for c in SEED_OSS if c[0] in ("think_then_call", "call_text_inside_think", "text_around", "unterminated")], SEED_PROMPT),
]

# ---------------------------------------------------------------------------------------
# Reasoning
# ---------------------------------------------------------------------------------------


def std_reasoning(start, end, src):
    return [
        ("think_then_answer", f"{start}\nThe user wants Paris.\n{end}\n\nIt is mild.", src),
        ("no_start_tag", f"Thinking without a start tag.{end}The answer.", src),
        ("never_closed", "Still thinking about", src),
        ("text_before_start", f"Preamble {start}inner{end}after", src),
        ("empty_answer", f"{start}only thoughts{end}", src),
        ("two_ends", f"a{end}b{end}c", src),
        ("unicode", f"思考 🤔{end}答え", src),
    ]


G4R = "vllm tests/reasoning/test_gemma4_reasoning_parser.py"
GEMMA4_R = [
    ("thought_prefix", "<|channel>thought\nActual reasoning here<channel|>Final answer", f"{G4R}::THOUGHT_PREFIX"),
    ("no_reasoning", "This is content", f"{G4R}::NO_REASONING"),
    ("channel_no_end", "<|channel>This is a reasoning section", f"{G4R}::CHANNEL_NO_END"),
    ("invalid_simple", "This is a reasoning section<channel|>This is the rest", f"{G4R}::INVALID_SIMPLE_NONSTREAMING/STREAMING"),
    ("new_line", "Before\n<|channel>This is a reasoning section<channel|>\nThis is the rest", f"{G4R}::NEW_LINE_NONSTREAMING"),
    ("thought_prefix_only", "<|channel>thought\n<channel|>", f"{G4R}::THOUGHT_PREFIX_ONLY"),
    ("thought_prefix_diverge", "<|channel>thousand reasons<channel|>Done", f"{G4R}::THOUGHT_PREFIX_DIVERGE"),
    ("thought_without_start", "thought\nImplicit channel.<channel|>Answer.", "vllm parser/gemma4.py _preprocess_feed (injected <|channel>)"),
    ("tool_call_ends_reasoning", "<|channel>thought\nNeed a tool.<|tool_call>call:now{}<tool_call|>", "vllm tests/reasoning/test_gemma4_reasoning_with_tool_call.py (call from reasoning)"),
    ("duplicate_end", "<|channel>thought\nA<channel|>B<channel|>C", "broken: second <channel|>"),
    ("trailing_ws_reasoning", "<|channel>thought\nWhy  \n\n<channel|>\nAnswer", "broken: whitespace before <channel|>"),
]
OLMO3_R = std_reasoning("<think>", "</think>", "vllm tests/reasoning/test_olmo3_reasoning_parser.py (standard cases)")
SEED_R = std_reasoning("<seed:think>", "</seed:think>", "vllm tests/reasoning/test_seedoss_reasoning_parser.py (standard cases)") + [
    ("tool_call_ends_reasoning", "Need a tool.<seed:tool_call>\n<function=now>\n</function>\n</seed:tool_call>", "broken: call without </seed:think>"),
]
STEP3_R = std_reasoning("<think>", "</think>", "vllm tests/reasoning/test_step3_reasoning_parser.py (standard cases)")
STEP3P5_R = std_reasoning("<think>", "</think>", "vllm tests/reasoning/test_step3p5_reasoning_parser.py (standard cases)") + [
    ("trailing_ws", "\nReason here.\n</think>\nAnswer", "vllm parser/step3p5.py docstring: \\n</think>\\n"),
    ("tool_call_ends_reasoning", "Need a tool.<tool_call>\n<function=now>\n</function>\n</tool_call>", "broken: call without </think>"),
]
ERNIE_R = std_reasoning("<think>", "</think>", "vllm tests/reasoning/test_ernie45_reasoning_parser.py (standard cases)") + [
    ("response_tags", "abc\n</think>\n\n<response>\ndef\n</response>\n", "vllm reasoning/ernie45_reasoning_parser.py docstring"),
    ("no_response_tags", "abc\n</think>\ndef", "vllm reasoning/ernie45_reasoning_parser.py docstring"),
]
HUN_R = [
    ("full", "<think>\nabc\n</think>\n<answer>\ndef\n</answer>", "vllm tests/reasoning/test_hunyuan_reasoning_parser.py (full match)"),
    ("fast_think", "<think>\n\n</think>\n<answer>\ndef\n</answer>", "vllm tests/reasoning/test_hunyuan_reasoning_parser.py (fast think)"),
    ("answer_unclosed", "<think>\nabc\n</think>\n<answer>\ndef", "vllm tests/reasoning/test_hunyuan_reasoning_parser.py (half match)"),
    ("no_tags", "Plain answer.", "broken: no tags"),
    ("never_closed", "<think>\nStill thinking", "broken: reasoning never closed"),
    ("no_start_tag", "thinking\n</think>\n<answer>\nok\n</answer>", "broken: no <think>"),
    ("answer_only", "<answer>\nok\n</answer>", "broken: answer without think"),
]
HY3_R = std_reasoning("<think>", "</think>", "vllm tests/reasoning/test_hy_v3_reasoning_parser.py (standard cases)")
HY4_R = std_reasoning("<think>", "</think>", "vllm tests/reasoning/test_hy_v4_reasoning_parser.py (standard cases)")
COHERE_R = [c for c in COHERE if c[0] in ("citations_no_tool_calls", "reasoning_only", "response_only")]

REASONING_SUITES = [
    ("gemma4", QWEN, GEMMA4_R),
    ("olmo3", LLAMA, OLMO3_R),
    ("seed_oss", QWEN, SEED_R),
    ("step3", QWEN, STEP3_R),
    ("step3p5", QWEN, STEP3P5_R),
    ("ernie45", QWEN, ERNIE_R),
    ("cohere_command3", QWEN, COHERE_R),
    ("hunyuan_a13b", LLAMA, HUN_R),
    ("hy_v3", QWEN, HY3_R),
    ("hy_v4", QWEN, HY4_R),
]
REASONING_ADDED_TOKENS = {
    "gemma4": G4_TOKENS,
    "seed_oss": SEED_TOKENS,
    "ernie45": ERNIE_TOKENS,
    "cohere_command3": COHERE_TOKENS,
}
REASONING_KWARGS_SUITES = [
    ("hy_v3", QWEN, {"chat_template_kwargs": {"reasoning_effort": "high"}}, HY3_R),
    ("hy_v4", QWEN, {"chat_template_kwargs": {"reasoning_effort": "no_think"}}, HY4_R[:3]),
    ("gemma4", QWEN, {"chat_template_kwargs": {"enable_thinking": True}}, GEMMA4_R[:3]),
    ("seed_oss", QWEN, {"chat_template_kwargs": {"enable_thinking": False}}, SEED_R[:3]),
]
