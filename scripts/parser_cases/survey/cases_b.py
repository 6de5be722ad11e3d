"""Group b survey cases, in the format of scripts/gen_tool_parser_direct_goldens.py.

SUITES:           (parser, fixture_model, added_tokens, with_stream, cases)
REASONING_SUITES: (parser, fixture_model, cases)
each case: (id, text, source).

Two additions the project's generator does not read yet (gen.py here does):
  * REASONING_ADDED_TOKENS: {reasoning parser: tokens added to its fixture}; K2 Horizon's,
    MiniMax M3's and Kimi K3's markers are not in Qwen3's vocabulary, and DeepSeek's fixture
    has no <think> tokens (vLLM's base thinking parser refuses to start without them).
  * REASONING_KWARGS_SUITES: (parser, fixture_model, chat_template_kwargs, cases) for the
    modes a parser only enters through chat_template_kwargs (deepseek_v3 thinking,
    minimax_m3 thinking_mode=enabled, ...).
  * TOOLS_EXTRA: one more tool (create_order, from vLLM's MiniMax M3 test), appended to TOOLS.
"""


def fn(name, props):
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": props}}}


# vLLM tests/tool_parsers/test_minimax_m3_tool_parser.py::sample_tools (trimmed).
TOOLS_EXTRA = [
    fn("create_order", {
        "user_id": {"type": "integer"},
        "urgent": {"type": "boolean"},
        "note": {"type": "string"},
        "shipping": {"type": "object", "properties": {"city": {"type": "string"},
                                                      "zip": {"type": "integer"}}},
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "sku": {"type": "string"}, "qty": {"type": "integer"}}}},
        "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
        "duplicate_demo": {"type": "object"},
    }),
]

# ─────────────────────────────── DeepSeek DSML ───────────────────────────────
DSML = "｜DSML｜"
DS_TOKENS = [DSML, "<think>", "</think>"]


def dsml(block, invokes, spaced=False):
    """A DSML block: invokes is [(name, [(param, string_attr or None, value)])]."""
    sp = " " if spaced else ""
    out = []
    for name, params in invokes:
        ps = ""
        for k, s, v in params:
            attr = f' string="{s}"' if s is not None else ""
            ps += f'<{DSML}{sp}parameter name="{k}"{attr}>{v}</{DSML}{sp}parameter>\n'
        out.append(f'<{DSML}{sp}invoke name="{name}">\n{ps}</{DSML}{sp}invoke>')
    return f"<{DSML}{block}>\n" + "\n".join(out) + f"\n</{DSML}{block}>"


def dsml_cases(block, spaced, src, extra):
    W = [("city", "true", "Paris"), ("days", "false", "3")]
    return [
        ("one_call", "Let me check. " + dsml(block, [("get_weather", W)], spaced),
         f"{src}::test_content_before_tool_call"),
        ("no_params", dsml(block, [("now", [])], spaced), f"{src}::test_single_tool_no_params"),
        ("two_calls", dsml(block, [("get_weather", [("city", "true", "SF")]),
                                   ("get_weather", [("city", "true", "NYC")])], spaced),
         f"{src}::test_multiple_tools"),
        ("typed", dsml(block, [("get_weather", [("metric", "false", "true"), ("ratio", "false", "2.5"),
                                                ("opts", "false", '{"a": [1, 2]}')])], spaced),
         f"{src}::test_type_conversion_in_non_streaming"),
        ("string_true_coerced", dsml(block, [("get_weather", [("days", "true", "42")])], spaced),
         f"{src}::test_string_attr_true_coerced_by_schema"),
        ("arguments_wrapper", dsml(block, [("get_weather", [("arguments", "false", '{"city":"Beijing"}')])], spaced),
         f"{src}::test_arguments_wrapper_repaired"),
        ("no_string_attr", dsml(block, [("get_weather", [("days", None, "3"), ("city", None, "Oslo")])], spaced),
         "broken: parameter without string= attribute (vllm parser/deepseek_v4.py _param_patterns)"),
        ("no_call", "just some text", f"{src}::test_no_tool_call"),
        ("text_after", dsml(block, [("now", [])], spaced) + "\nDone.", "broken: text after the call block"),
        ("unknown_tool", dsml(block, [("launch", [("x", "false", "1")])], spaced), "broken: unknown tool name"),
        ("invalid_json", dsml(block, [("get_weather", [("opts", "false", "{bad json")])], spaced),
         "broken: string=false value that is not JSON"),
        ("unterminated", f'<{DSML}{block}>\n<{DSML}{" " if spaced else ""}invoke name="get_weather">\n'
                         f'<{DSML}{" " if spaced else ""}parameter name="city" string="true">Par',
         "broken: unterminated call"),
    ] + extra


DEEPSEEK_V32 = dsml_cases("function_calls", False, "vllm tests/tool_parsers/test_deepseekv32_tool_parser.py", [
    ("bare_invoke", '<｜DSML｜invoke name="now">\n</｜DSML｜invoke>',
     "broken: invoke without the function_calls wrapper"),
    ("false_partial_marker", "<｜DSM some regular text",
     "vllm tests/tool_parsers/test_deepseekv32_tool_parser.py::test_false_partial_marker_emitted"),
    ("v4_block_name", dsml("tool_calls", [("now", [])]), "broken: V4's tool_calls block name under deepseek_v32"),
])
DEEPSEEK_V4 = dsml_cases("tool_calls", False, "vllm tests/tool_parsers/test_deepseekv32_tool_parser.py", [
    ("function_calls_block", dsml("function_calls", [("get_weather", [("city", "true", "vllm")])]),
     "vllm tests/tool_parsers/test_deepseekv4_tool_parser.py::test_function_calls_block_is_not_accepted"),
    ("variant_toolcalls", dsml("toolcalls", [("now", [])]).replace(f"</{DSML}toolcalls>", f"</{DSML}tool_calls>"),
     "broken: <｜DSML｜toolcalls> spelling (vllm parser/deepseek_v4.py DSML_TOOL_START_VARIANTS)"),
    ("think_in_content", "<think>hidden</think>Visible. " + dsml("tool_calls", [("now", [])]),
     "broken: <think> block in the text given to the tool parser"),
])
DEEPSEEK_V41 = dsml_cases(" calls", True, "vllm tests/tool_parsers/test_deepseekv32_tool_parser.py", [
    ("v4_spelling", dsml("tool_calls", [("now", [])]), "broken: V4's unspaced DSML under deepseek_v41"),
])

# ─────────────────────────────── GLM-4.7 ───────────────────────────────
GLM_TOKENS = ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
              "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"]
G = "vllm tests/tool_parsers/test_glm47_moe_tool_parser.py"
GLM47 = [
    ("no_call", "This is a plain response.", f"{G}::test_no_tool_call"),
    ("zero_arg_inline", "<tool_call>now</tool_call>", f"{G}::test_zero_arg_inline"),
    ("zero_arg_newline", "<tool_call>now\n</tool_call>", f"{G}::test_zero_arg_newline"),
    ("args_same_line", "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>",
     f"{G}::test_args_same_line"),
    ("args_with_newlines", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>",
     f"{G}::test_args_with_newlines"),
    ("content_before", "Checking.<tool_call>now</tool_call>", f"{G}::test_content_before"),
    ("multiple", "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>"
                 "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Shanghai</arg_value></tool_call>",
     f"{G}::test_multiple"),
    ("whitespace_content", "  \n  <tool_call>now</tool_call>", f"{G}::test_whitespace_content_none"),
    ("prefix_name", "<tool_call>get<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>",
     f"{G}::test_delays_prefix_only_tool_name_until_exact_match"),
    ("typed", "<tool_call>get_weather\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n<arg_key>opts</arg_key>\n"
              "<arg_value>{\"a\": [1, 2]}</arg_value>\n</tool_call>", "broken: typed values (schema coercion)"),
    ("unknown_tool", "<tool_call>launch<arg_key>x</arg_key><arg_value>1</arg_value></tool_call>",
     "broken: unknown tool name"),
    ("unterminated", "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Par", "broken: unterminated call"),
    ("text_after", "<tool_call>now</tool_call>\nDone.", "broken: text after the call"),
    ("think_in_content", "<think>hidden</think>Visible.<tool_call>now</tool_call>",
     "broken: <think> block in the text given to the tool parser"),
]

# ─────────────────────────────── Kimi K2 (broken output only) ───────────────────────────────
KIMI_TOKENS = ["<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
               "<|tool_call_argument_begin|>", "<|tool_call_end|>"]
KB, KE, KCB, KA, KCE = KIMI_TOKENS
KIMI_K2 = [
    ("bare_counter", f'{KB}{KCB}0{KA}{{"city": "Tokyo"}}{KCE}{KE}',
     "broken: bare counter `0` as the call id (SGLang infers the name from declared tools)"),
    ("no_functions_prefix", f'{KB}{KCB}get_weather:0{KA}{{"city": "Tokyo"}}{KCE}{KE}',
     "broken: id without the functions. prefix"),
    ("id_without_counter", f'{KB}{KCB}functions.get_weather{KA}{{"city": "Tokyo"}}{KCE}{KE}',
     "broken: invalid call id (no :N)"),
    ("id_bad_counter", f'{KB}{KCB}functions.get_weather:x{KA}{{"city": "Tokyo"}}{KCE}{KE}',
     "broken: invalid call id (non-numeric counter)"),
    ("newline_after_id", f'{KB}\n{KCB}functions.get_weather:0\n{KA}{{"city": "Tokyo"}}{KCE}\n{KE}',
     "vllm vllm/parser/kimi_k2.py docstring (newlines between markers)"),
    ("invalid_json", f'{KB}{KCB}functions.get_weather:0{KA}{{"city": Tokyo}}{KCE}{KE}',
     "broken: invalid JSON arguments"),
    ("string_args", f'{KB}{KCB}functions.get_weather:0{KA}"{{\\"city\\": \\"Tokyo\\"}}"{KCE}{KE}',
     "broken: arguments as a JSON string"),
    ("unterminated", f'{KB}{KCB}functions.get_weather:0{KA}{{"city": "Tok', "broken: unterminated call"),
    ("no_section", f'Sure. {KCB}functions.now:0{KA}{{}}{KCE}', "broken: call without the section markers"),
]

# ─────────────────────────────── Kimi K3 (XTML) ───────────────────────────────
K3_TOKENS = ["<|open|>", "<|close|>", "<|sep|>"]
O, C, S = "<|open|>", "<|close|>", "<|sep|>"


def k3_call(tool, args, index=1):
    body = "".join(f'{O}argument key="{k}" type="{t}"{S}{v}{C}argument{S}' for k, t, v in args)
    return f'{O}call tool="{tool}" index="{index}"{S}{body}{C}call{S}'


def k3_tools(*calls):
    return f"{O}tools{S}" + "".join(calls) + f"{C}tools{S}"


K3DOC = "vllm vllm/tool_parsers/kimi_k3_tool_parser.py module docstring"
WEATHER_K3 = k3_call("get_weather", [("city", "string", "Paris"), ("days", "integer", "3")])
KIMI_K3 = [
    ("response_and_tools", f"{O}response{S}Let me check.{C}response{S}" + k3_tools(WEATHER_K3), K3DOC),
    ("consumed_prefix", f"Let me check.{C}response{S}" + k3_tools(WEATHER_K3),
     "vllm vllm/tool_parsers/kimi_k3_tool_parser.py::_strip_response_content (generation prefix consumed)"),
    ("message_close", f"Hello{C}message{S}",
     "vllm tests/tool_parsers/test_kimi_k3_tool_parser.py::test_streaming_content_stops_at_message_close"),
    ("two_calls", k3_tools(k3_call("now", [], 1), k3_call("get_weather", [("opts", "object", '{"a":1}')], 2)), K3DOC),
    ("no_call", "Plain answer.", "broken: no channels at all"),
    ("invalid_json", k3_tools(k3_call("get_weather", [("opts", "object", "{bad")])),
     "broken: non-string argument that is not JSON"),
    ("unterminated", f"{O}tools{S}" + f'{O}call tool="get_weather" index="1"{S}{O}argument key="city" type="string"{S}Par',
     "broken: unterminated call"),
    ("no_tool_attr", k3_tools(f'{O}call index="1"{S}{C}call{S}'), "broken: call without tool="),
    ("escaped_attr", k3_tools(k3_call("get_weather", [("city", "string", 'say "hi" & <b>')])).replace(
        'key="city"', 'key="ci&quot;ty"'), "broken: escaped attribute (&quot;) and raw string value"),
    ("unknown_tool", k3_tools(k3_call("launch", [("x", "integer", "1")])), "broken: unknown tool name"),
    ("text_after", k3_tools(k3_call("now", [])) + "trailing", "broken: text after the tools channel"),
    ("string_typed_schema", k3_tools(k3_call("get_weather", [("days", "string", "3")])),
     "broken: type=string for an integer parameter"),
]

# ─────────────────────────────── K2 Horizon (IFM) ───────────────────────────────
IFM_TOKENS = ["<ifm|tool_calls>", "</ifm|tool_calls>", "<ifm|tool_call>", "</ifm|tool_call>",
              "<ifm|arg_key>", "</ifm|arg_key>", "<ifm|arg_type>", "</ifm|arg_type>",
              "<ifm|arg_value>", "</ifm|arg_value>", "<ifm|think>", "</ifm|think>",
              "<ifm|think_fast>", "</ifm|think_fast>", "<ifm|think_faster>", "</ifm|think_faster>"]
KH = "vllm tests/tool_parsers/test_k2_horizon_tool_parser.py"


def ifm_group(*calls, prefix="", suffix=""):
    return prefix + "<ifm|tool_calls>" + "\n".join(calls) + "</ifm|tool_calls>" + suffix


def ifm_xml(name, args, typed=False):
    parts = [f"<ifm|tool_call>{name}"]
    for k, v in args:
        parts.append(f"<ifm|arg_key>{k}</ifm|arg_key>")
        if typed:
            parts.append(f"<ifm|arg_type>{'integer' if k == 'days' else 'string'}</ifm|arg_type>")
        parts.append(f"<ifm|arg_value>{v}</ifm|arg_value>")
    return "".join(parts) + "</ifm|tool_call>"


K2_HORIZON = [
    ("xml_two_calls", ifm_group(ifm_xml("get_weather", [("city", "123"), ("days", "3")]), ifm_xml("now", []),
                                prefix="Before ", suffix=" after."),
     f"{KH}::test_xml_default_parses_multiple_calls_and_coerces_schema"),
    ("json_in_xml_mode", ifm_group('<ifm|tool_call>{"name": "now", "arguments": {}}</ifm|tool_call>'),
     f"{KH}::test_mismatched_formats_fail_closed"),
    ("typed_in_xml_mode", ifm_group(ifm_xml("get_weather", [("city", "x")], typed=True)),
     f"{KH}::test_mismatched_formats_fail_closed"),
    ("unclosed_group", "<ifm|tool_calls><ifm|tool_call>now", f"{KH}::test_malformed_and_incomplete_input_is_content"),
    ("unclosed_group_closed_call", "<ifm|tool_calls><ifm|tool_call>now</ifm|tool_call>",
     f"{KH}::test_malformed_and_incomplete_input_is_content"),
    ("junk_group", ifm_group("junk"), f"{KH}::test_malformed_and_incomplete_input_is_content"),
    ("char_split", ifm_group(ifm_xml("get_weather", [("days", "2")]), prefix="Before", suffix="after"),
     f"{KH}::test_character_split_streaming"),
    ("streamed_incomplete", "Before<ifm|tool_calls><ifm|tool_call>now",
     f"{KH}::test_streaming_flushes_incomplete_markup_as_content"),
    ("whitespace_around", ifm_group(ifm_xml("now", []), prefix=" \n", suffix="\t "),
     f"{KH}::test_whitespace_only_surrounding_content_is_not_preserved"),
    ("unknown_tool", ifm_group(ifm_xml("launch", [("x", "1")])), "broken: unknown tool name"),
    ("unknown_after_known", ifm_group(ifm_xml("now", []), ifm_xml("launch", [])),
     "broken: one unknown call among valid ones"),
    ("duplicate_arg", ifm_group(ifm_xml("get_weather", [("city", "A"), ("city", "B")])), "broken: repeated argument"),
    ("json_string_opts", ifm_group(ifm_xml("get_weather", [("opts", '{"a": 1}'), ("metric", "yes")])),
     "broken: object given as JSON text; loose boolean"),
    ("no_call", "It is sunny.", "broken: no call"),
]

# ─────────────────────────────── MiniMax M2 ───────────────────────────────
MM2_TOKENS = ["<minimax:tool_call>", "</minimax:tool_call>"]
MM = "vllm tests/tool_parsers/test_minimax_m2_tool_parser.py"
MINIMAX_M2 = [
    ("content_before", 'Let me check. <minimax:tool_call><invoke name="get_weather"><parameter name="city">Seattle'
                       '</parameter></invoke></minimax:tool_call>', f"{MM}::TestContentStreaming::test_content_before_tool_call"),
    ("multiple_params", '<minimax:tool_call><invoke name="get_weather"><parameter name="city">Seattle</parameter>'
                        '<parameter name="days">5</parameter></invoke></minimax:tool_call>',
     f"{MM}::TestSingleInvoke::test_multiple_params"),
    ("two_invokes", '<minimax:tool_call><invoke name="get_weather"><parameter name="city">NYC</parameter></invoke>'
                    '<invoke name="now"></invoke></minimax:tool_call>', f"{MM}::TestMultipleInvokes::test_different_functions"),
    ("template_newlines", '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Oslo</parameter>\n'
                          '<parameter name="opts">{"a": [1, 2]}</parameter>\n</invoke>\n</minimax:tool_call>',
     "vllm vllm/parser/minimax_m2.py module docstring (newline layout)"),
    ("quote_styles", "<minimax:tool_call><invoke name='get_weather'><parameter name='city'>Rome</parameter>"
                     "<parameter name=days>2</parameter></invoke></minimax:tool_call>",
     "vllm vllm/parser/minimax_m2.py INVOKE_PREFIX_SQ/UNQUOTED"),
    ("no_call", "Hello world", f"{MM}::TestContentStreaming::test_plain_content"),
    ("unknown_tool", '<minimax:tool_call><invoke name="launch"><parameter name="x">1</parameter></invoke>'
                     '</minimax:tool_call>', "broken: unknown tool name"),
    ("text_after", '<minimax:tool_call><invoke name="now"></invoke></minimax:tool_call>\nDone.',
     "broken: text after the call block"),
    ("unterminated", '<minimax:tool_call><invoke name="get_weather"><parameter name="city">Par',
     "broken: unterminated call"),
    ("bare_invoke", 'Sure. <invoke name="now"></invoke>', "broken: invoke without the minimax:tool_call wrapper"),
    ("unclosed_param", '<minimax:tool_call><invoke name="get_weather"><parameter name="city">A'
                       '<parameter name="days">2</parameter></invoke></minimax:tool_call>',
     "broken: parameter without </parameter>"),
    ("think_in_content", "<think>hidden</think>Visible.<minimax:tool_call><invoke name=\"now\"></invoke></minimax:tool_call>",
     "broken: <think> block in the text given to the tool parser"),
]

# ─────────────────────────────── MiniMax M3 ───────────────────────────────
NS = "]<]minimax[>["
MM3_TOKENS = [NS]
M3 = "vllm tests/tool_parsers/test_minimax_m3_tool_parser.py"


def m3_invoke(name, body):
    return f'{NS}<invoke name="{name}">{body}{NS}</invoke>'


ORDER = (f"{NS}<tool_call>\n" + m3_invoke("create_order",
         f"{NS}<user_id>42{NS}</user_id>{NS}<urgent>true{NS}</urgent>{NS}<note>Please leave at front desk.{NS}</note>"
         f"{NS}<shipping>{NS}<city>Singapore{NS}</city>{NS}<zip>018956{NS}</zip>{NS}</shipping>"
         f"{NS}<items>{NS}<item>{NS}<sku>book-001{NS}</sku>{NS}<qty>2{NS}</qty>{NS}</item>"
         f"{NS}<item>{NS}<sku>pen-007{NS}</sku>{NS}<qty>5{NS}</qty>{NS}</item>{NS}</items>"
         f"{NS}<metadata>{NS}<source>mobile{NS}</source>{NS}<campaign>may-launch{NS}</campaign>{NS}</metadata>"
         f"{NS}<duplicate_demo>{NS}<tag>a{NS}</tag>{NS}<tag>b{NS}</tag>{NS}</duplicate_demo>")
         + f"\n{NS}</tool_call>")
MINIMAX_M3 = [
    ("nested", "I will create it.\n" + ORDER, f"{M3}::test_non_streaming_nested_tool_call"),
    ("no_call", "plain response", f"{M3}::test_non_streaming_without_tool_call_keeps_content"),
    ("multiple", f"{NS}<tool_call>\n" + m3_invoke("create_order", f"{NS}<user_id>1{NS}</user_id>") + "\n"
                 + m3_invoke("create_order", f"{NS}<user_id>2{NS}</user_id>") + f"\n{NS}</tool_call>",
     f"{M3}::test_non_streaming_multiple_tool_calls"),
    ("partial_start", f"plain {NS}<tool_ca", f"{M3}::test_streaming_flushes_partial_tool_start_as_text"),
    ("second_unterminated", f"plain {NS}<tool_call>\n" + m3_invoke("create_order", f"{NS}<user_id>1{NS}</user_id>")
                            + f'\n{NS}<invoke name="create_order">{NS}<user_id>2',
     f"{M3}::test_streaming_error_recovery_keeps_committed_tool_call_structured"),
    ("parse_error", f"{NS}<tool_call>\n{NS}</user_id> after error", f"{M3}::test_streaming_parse_error_emits_buffer_and_later_deltas"),
    ("typed_weather", f"{NS}<tool_call>\n" + m3_invoke("get_weather", f"{NS}<city>Oslo{NS}</city>{NS}<days>3{NS}</days>"
                      f"{NS}<opts>{NS}<unit>C{NS}</unit>{NS}</opts>") + f"\n{NS}</tool_call>",
     "broken: scalar and nested values typed by TOOLS"),
    ("unknown_tool", f"{NS}<tool_call>\n" + m3_invoke("launch", f"{NS}<x>1{NS}</x>") + f"\n{NS}</tool_call>",
     "broken: unknown tool name"),
    ("text_after", f"{NS}<tool_call>\n" + m3_invoke("now", "") + f"\n{NS}</tool_call>\nDone.",
     "broken: text after the call block"),
    ("malformed_param", f"{NS}<tool_call>\n" + m3_invoke("get_weather", f"{NS}<city>Oslo{NS}</days>") + f"\n{NS}</tool_call>",
     "broken: mismatched parameter close tag"),
]

# ─────────────────────────────── LongCat (hermes with other tags) ───────────────────────────────
LC_TOKENS = ["<longcat_tool_call>", "</longcat_tool_call>"]
LC = "vllm tests/tool_parsers/test_longcat_tool_parser.py::TestLongCatToolParser"
LCS, LCE = LC_TOKENS
LONGCAT = [
    ("no_call", "This is a regular response without any tool calls.", f"{LC}::no_tool_calls_output"),
    ("single", f'{LCS}{{"name": "get_weather", "arguments": {{"city": "Tokyo"}}}}{LCE}', f"{LC}::single_tool_call_output"),
    ("parallel", f'{LCS}{{"name": "get_weather", "arguments": {{"city": "Tokyo"}}}}{LCE}\n'
                 f'{LCS}{{"name": "get_time", "arguments": {{"timezone": "Asia/Tokyo"}}}}{LCE}',
     f"{LC}::parallel_tool_calls_output"),
    ("various_types", f'{LCS}{{\n  "name": "get_weather",\n  "arguments": {{\n    "city": "hello",\n    "days": 42,\n'
                      f'    "ratio": 3.14,\n    "metric": true,\n    "opts": {{"nested": null, "arr": ["a", "b"], "e": {{}}}}\n  }}\n}}{LCE}',
     f"{LC}::various_data_types_output"),
    ("empty_args", f'{LCS}{{"name": "now", "arguments": {{}}}}{LCE}', f"{LC}::empty_arguments_output"),
    ("surrounding_text", f'Let me check the weather for you.\n{LCS}{{"name": "get_weather", "arguments": {{"city": "Tokyo"}}}}'
                         f'{LCE}\nHere is the result.', f"{LC}::surrounding_text_output"),
    ("escaped_strings", f'{LCS}{{"name": "write_file", "arguments": {{"path": "C:\\\\Users\\\\file.txt", '
                        f'"content": "He said \\"hello\\"\\nline2 🎉"}}}}{LCE}', f"{LC}::escaped_strings_output"),
    ("malformed_unterminated", f'{LCS}{{"name": "get_weather", "arguments": {{', f"{LC}::malformed_input_outputs[0]"),
    ("malformed_string_args", f'{LCS}{{"name": "get_weather", "arguments": "not a dict"}}{LCE}',
     f"{LC}::malformed_input_outputs[1]"),
    ("malformed_invalid_json", f"Some text with {LCS}invalid json", f"{LC}::malformed_input_outputs[2]"),
    ("json_string_args", f'{LCS}{{"name": "get_weather", "arguments": "{{\\"city\\": \\"Oslo\\"}}"}}{LCE}',
     "broken: arguments as a JSON string"),
    ("unknown_tool", f'{LCS}{{"name": "launch", "arguments": {{"x": 1}}}}{LCE}', "broken: unknown tool name"),
    ("hermes_tags", '<tool_call>{"name": "now", "arguments": {}}</tool_call>', "broken: hermes <tool_call> tags"),
]

# ─────────────────────────────── MiMo (qwen3 engine, verbatim values) ───────────────────────────────
MI = "vllm tests/tool_parsers/test_mimov2_flash_tool_parser.py"
MIMO = [
    ("basic", "Here is the result:\n<tool_call>\n<function=execute_bash>\n<parameter=command>pwd && ls</parameter>\n"
              "</function>\n</tool_call>", f"{MI}::test_extract_basic_tool_call"),
    ("two_calls_param_first", "Here is the result:\n<tool_call>\n<function=execute_bash>\n<parameter=command>pwd</parameter>\n"
                              "</function>\n</tool_call>\n<tool_call>\n<parameter=command>ls -la</parameter>\n"
                              "<function=list_files>\n</function>\n</tool_call>", f"{MI}::test_extract_multiple_tool_calls"),
    ("multiline_param", "<tool_call>\n<function=write_file>\n<parameter=path>a.txt</parameter>\n<parameter=content>"
                        "This is the value\nthat can span\nmultiple lines</parameter>\n</function>\n</tool_call>",
     f"{MI}::test_extract_tool_call_multiline_parameter"),
    ("no_call", "This is just regular text without any tool calls.", f"{MI}::test_extract_no_tool_calls"),
    ("content_before", "Let me execute that command for you.\n<tool_call>\n<function=now>\n</function>\n</tool_call>",
     f"{MI}::test_extract_content_before_tool_call"),
    ("typed", "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>3</parameter>\n"
              "<parameter=metric>true</parameter>\n<parameter=opts>{\"a\": 1}</parameter>\n</function>\n</tool_call>",
     "broken: qwen3_coder-style newlines around a value, typed values"),
    ("unknown_tool", "<tool_call>\n<function=launch>\n<parameter=x>1</parameter>\n</function>\n</tool_call>",
     "broken: unknown tool name"),
    ("text_after", "<tool_call>\n<function=now>\n</function>\n</tool_call>\nDone.", "broken: text after the call"),
    ("unterminated", "<tool_call>\n<function=get_weather>\n<parameter=city>Par", "broken: unterminated call"),
    ("bare_function", "<function=now>\n</function>", "broken: <function=> without <tool_call>"),
    ("think_in_content", "<think>hidden</think>Visible.\n<tool_call>\n<function=now>\n</function>\n</tool_call>",
     "broken: <think> block in the text given to the tool parser"),
]

SUITES = [
    ("deepseek_v32", "deepseek_v3", DS_TOKENS, True, DEEPSEEK_V32),
    ("deepseek_v4", "deepseek_v3", DS_TOKENS, True, DEEPSEEK_V4),
    ("deepseek_v41", "deepseek_v3", DS_TOKENS, True, DEEPSEEK_V41),
    ("glm47", "qwen3", GLM_TOKENS, True, GLM47),
    ("kimi_k3", "qwen3", K3_TOKENS, True, KIMI_K3),
    ("k2_horizon", "qwen3", IFM_TOKENS, True, K2_HORIZON),
    ("minimax_m2", "qwen3", MM2_TOKENS, True, MINIMAX_M2),
    ("minimax_m3", "qwen3", MM3_TOKENS, True, MINIMAX_M3),
    ("longcat", "qwen3", LC_TOKENS, True, LONGCAT),
    ("mimo", "qwen3", [], True, MIMO),
    ("kimi_k2", "qwen3", KIMI_TOKENS, True, KIMI_K2),
]

# ─────────────────────────────── reasoning ───────────────────────────────
R1 = "project scripts/gen_tool_parser_direct_goldens.py::DEEPSEEK_R1 (the existing reasoning set)"


def think_set(start, end, tool_start, extra=()):
    return [
        ("think_then_answer", f"{start}\nThe user wants Paris.\n{end}\n\nIt is mild.", R1),
        ("no_start_tag", f"Thinking without a start tag.{end}The answer.", R1),
        ("never_closed", "Still thinking about", R1),
        ("text_before_start", f"Preamble {start}inner{end}after", R1),
        ("empty_answer", f"{start}only thoughts{end}", R1),
        ("two_ends", f"a{end}b{end}c", R1),
        ("tool_start_ends_reasoning", f"I should call it.{tool_start}", "broken: tool-call start while reasoning"),
    ] + list(extra)


DS_V4_TS = '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="now">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'
DS_V41_TS = '<｜DSML｜ calls>\n<｜DSML｜ invoke name="now">\n</｜DSML｜ invoke>\n</｜DSML｜ calls>'
KIMI_TS = "<|tool_calls_section_begin|><|tool_call_begin|>functions.now:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"
K3R = "vllm vllm/reasoning/kimi_k3_reasoning_parser.py::extract_reasoning docstring"

DEEPSEEK_V3_R = think_set("<think>", "</think>", "<｜tool▁calls▁begin｜>")
DEEPSEEK_V4_R = think_set("<think>", "</think>", DS_V4_TS, [
    ("trailing_ws_reasoning", "<think>thought  \n\n</think>answer", "broken: whitespace at the end of reasoning"),
    ("double_start", "<think><think>x</think>y", "broken: repeated <think>"),
])
DEEPSEEK_V41_R = think_set("<think>", "</think>", DS_V41_TS)
GLM47_R = think_set("<think>", "</think>", "<tool_call>now</tool_call>")
KIMI_K2_R = think_set("<think>", "</think>", KIMI_TS)
MINIMAX_M2_R = think_set("<think>", "</think>", '<minimax:tool_call><invoke name="now"></invoke></minimax:tool_call>')
MIMO_R = think_set("<think>", "</think>", "<tool_call>\n<function=now>\n</function>\n</tool_call>")
K2H_R = think_set("<ifm|think>", "</ifm|think>", "<ifm|tool_calls><ifm|tool_call>now</ifm|tool_call></ifm|tool_calls>", [
    ("generated_start", "<ifm|think>thought</ifm|think>answer", "vllm vllm/reasoning/k2_horizon_reasoning_parser.py::_without_generated_start"),
    ("start_not_first", "x<ifm|think>thought</ifm|think>answer", "broken: start tag after other text"),
])
MINIMAX_M3_R = think_set("<mm:think>", "</mm:think>", "")[:6] + [
    ("stray_closer_first", "</mm:think>Answer.", "vllm vllm/reasoning/minimax_m3_reasoning_parser.py::extract_reasoning (stray first closer)"),
    ("explicit_block", "<mm:think>reasoning text</mm:think>assistant content",
     "vllm vllm/reasoning/minimax_m3_reasoning_parser.py module docstring"),
]
KIMI_K3_R = [
    ("open_close_response", f"{O}think{S}Let me think.{C}think{S}{O}response{S}Hi!{C}response{S}", K3R),
    ("consumed_open", f"Let me think.{C}think{S}{O}response{S}Hi!{C}response{S}{C}message{S}", K3R),
    ("never_closed", "Still thinking about", K3R),
    ("response_only", f"{O}response{S}Hi!{C}response{S}", K3R),
    ("think_then_tools", f"thought{C}think{S}{O}tools{S}{O}call tool=\"now\" index=\"1\"{S}{C}call{S}{C}tools{S}", K3R),
    ("plain_after_close", f"thought{C}think{S}plain answer", K3R),
]

REASONING_SUITES = [
    ("deepseek_v3", "deepseek_v3", DEEPSEEK_V3_R),
    ("holo2", "deepseek_v3", DEEPSEEK_V3_R),
    ("deepseek_v4", "deepseek_v3", DEEPSEEK_V4_R),
    ("deepseek_v41", "deepseek_v3", DEEPSEEK_V41_R),
    ("glm47", "qwen3", GLM47_R),
    ("kimi_k2", "qwen3", KIMI_K2_R),
    ("kimi_k3", "qwen3", KIMI_K3_R),
    ("k2_horizon", "qwen3", K2H_R),
    ("minimax_m2", "qwen3", MINIMAX_M2_R),
    ("minimax_m2_append_think", "qwen3", MINIMAX_M2_R[:3]),
    ("minimax_m3", "qwen3", MINIMAX_M3_R),
    ("mimo", "qwen3", MIMO_R),
]

REASONING_ADDED_TOKENS = {
    "deepseek_v3": ["<think>", "</think>"],
    "holo2": ["<think>", "</think>"],
    "deepseek_v4": DS_TOKENS,
    "deepseek_v41": DS_TOKENS,
    "glm47": GLM_TOKENS,
    "kimi_k2": KIMI_TOKENS,
    "kimi_k3": K3_TOKENS,
    "k2_horizon": IFM_TOKENS,
    "minimax_m2": MM2_TOKENS,
    "minimax_m2_append_think": MM2_TOKENS,
    "minimax_m3": ["<mm:think>", "</mm:think>"],
}

REASONING_KWARGS_SUITES = [
    ("deepseek_v3", "deepseek_v3", {"thinking": True}, DEEPSEEK_V3_R),
    ("deepseek_v4", "deepseek_v3", {"thinking": False}, DEEPSEEK_V4_R[:4]),
    ("glm47", "qwen3", {"enable_thinking": False}, GLM47_R[:4]),
    ("kimi_k2", "qwen3", {"thinking": False}, KIMI_K2_R[:4]),
    ("kimi_k3", "qwen3", {"thinking": False}, KIMI_K3_R[:2]),
    ("k2_horizon", "qwen3", {"reasoning_effort": "low"},
     think_set("<ifm|think_faster>", "</ifm|think_faster>", "<ifm|tool_calls>")[:3]),
    ("minimax_m3", "qwen3", {"thinking_mode": "enabled"}, MINIMAX_M3_R),
    ("mimo", "qwen3", {"enable_thinking": False}, MIMO_R[:4]),
]
