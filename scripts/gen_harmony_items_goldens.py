"""gpt-oss (Harmony) `/v1/responses/render` and `/v1/messages/render` goldens from vLLM 0.33's
own render server.

vLLM renders a Responses request for a Harmony model without its chat conversion
(`OnlineRenderer._render_responses_with_harmony`, `vllm/renderers/online_renderer.py`): the
preamble by `harmony_utils.build_harmony_preamble` from `instructions` (else a leading
system/developer item), the request's tools (when any is not a builtin) and
`reasoning.effort`; each input item by `responses/harmony.py:response_input_to_harmony`;
the tokens by `render_for_completion`. A Messages request is converted to a chat request
(`AnthropicServingMessages.to_chat_completion_request`) and rendered as a chat, with the
inline-system merge probed on the chat template (the fixture has none: merged; two more
servers with a `--chat-template` refusing and accepting a later system message).

The server is `vllm launch render` on the gpt-oss fixture (tokenizer, no chat template) with a
gpt-oss-20b `config.json`, `VLLM_SYSTEM_START_DATE` pinned and the tiktoken file offline
(`TIKTOKEN_ENCODINGS_BASE`); no tool server, so builtin tools add no namespace.

Output: one JSON line per case, `{"id", "route", "request", "start_date", "status",
"response", "chat_template"?}` (`response`: vLLM's body, a GenerateRequest or an error;
`chat_template`: the server's `--chat-template`).

Usage (`bench-peers/vllmenv`, see `scripts/vllm_peer.py`):
    bench-peers/vllmenv/bin/python scripts/gen_harmony_items_goldens.py \
        fixtures/goldens/render_harmony/items.jsonl
"""
import http.client, json, os, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_peer import GPT_OSS_CONFIG, ROOT, vllm_render  # noqa: E402

START_DATE = "2026-01-15"
os.environ["VLLM_SYSTEM_START_DATE"] = START_DATE
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
os.environ.setdefault(
    "TIKTOKEN_ENCODINGS_BASE", os.path.join(os.path.dirname(ROOT), "shared", "models", "gpt_oss")
)
CONFIG = GPT_OSS_CONFIG
PORT = 8131
MODEL = "gpt-oss"

W = {"type": "function", "name": "get_weather", "description": "Get the weather in a city",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}
NOW = {"type": "function", "name": "now", "description": "The time now"}
U = {"role": "user", "content": "Weather in Paris?"}
CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather",
        "arguments": "{\"city\":\"Paris\"}"}
OUT = {"type": "function_call_output", "call_id": "call_1", "output": "{\"temp\": 21}"}
REASON = {"type": "reasoning", "id": "rs_1", "summary": [],
          "content": [{"type": "reasoning_text", "text": "Need the weather tool."}]}
ASSIST = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
          "content": [{"type": "output_text", "text": "It is 21 degrees.", "annotations": []}]}

RESPONSES = {
    "string": {"input": "Hello there"},
    "empty_string": {"input": ""},
    "instructions": {"instructions": "Answer in French.", "input": "Hello"},
    "empty_instructions_system_item": {"instructions": "", "input": [
        {"role": "system", "content": "Be terse."}, U]},
    "empty_instructions_tools": {"instructions": "", "input": "Hi", "tools": [W]},
    "developer_item_empty": {"input": [{"role": "developer", "content": ""}, U]},
    "effort_high": {"input": "Hi", "reasoning": {"effort": "high"}},
    "effort_low_summary": {"input": "Hi", "reasoning": {"effort": "low", "summary": "auto"}},
    "effort_none": {"input": "Hi", "reasoning": {"effort": "none"}},
    "effort_minimal": {"input": "Hi", "reasoning": {"effort": "minimal"}},
    "tools": {"input": "Weather in Paris?", "tools": [W, NOW]},
    "tools_choice_none": {"input": "Weather in Paris?", "tools": [W], "tool_choice": "none"},
    "tools_choice_required": {"input": "Weather?", "tools": [W], "tool_choice": "required"},
    "tools_choice_named": {"input": "Weather?", "tools": [W],
                           "tool_choice": {"type": "function", "name": "get_weather"}},
    "tool_strict": {"input": "Weather?", "tools": [{**W, "strict": True}]},
    "builtin_only": {"input": "Search it", "tools": [{"type": "web_search_preview"}]},
    "builtin_and_function": {"input": "Search it", "tools": [
        {"type": "code_interpreter", "container": {"type": "auto"}}, W]},
    "mcp_tool": {"input": "Hi", "tools": [
        {"type": "mcp", "server_label": "deepwiki", "server_url": "https://x.invalid/mcp"}]},
    "function_and_file_search": {"input": "Hi", "tools": [
        W, {"type": "file_search", "vector_store_ids": ["vs_1"]}]},
    "custom_tool": {"input": "Hi", "tools": [{"type": "custom", "name": "shell"}]},
    "user_item": {"input": [U]},
    "user_parts": {"input": [{"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "First part."},
        {"type": "input_text", "text": " Second part."}]}]},
    "system_item_peeled": {"input": [{"role": "system", "content": "Be terse."}, U]},
    "developer_parts_peeled": {"input": [{"role": "developer", "content": [
        {"type": "input_text", "text": "Rule one. "}, {"type": "input_text", "text": "Rule two."}]},
        U], "tools": [W]},
    "instructions_and_developer_item": {"instructions": "Answer in French.", "input": [
        {"role": "developer", "content": "Use metric."}, U]},
    "later_system_item": {"input": [U, {"role": "assistant", "content": "Sunny."},
        {"role": "system", "content": "Now be brief."}, {"role": "user", "content": "Tomorrow?"}]},
    "multi_turn": {"input": [U, ASSIST, {"role": "user", "content": "And in Rome?"}]},
    "assistant_string": {"input": [U, {"role": "assistant", "content": "Sunny."},
                                   {"role": "user", "content": "Thanks"}]},
    "reasoning_then_final": {"input": [U, REASON, ASSIST, {"role": "user", "content": "Rome?"}]},
    "reasoning_summary_only": {"input": [U, {"type": "reasoning", "id": "rs_2", "summary": [
        {"type": "summary_text", "text": "Summarised."}]}, CALL, OUT], "tools": [W]},
    "reasoning_two_parts": {"input": [U, {"type": "reasoning", "id": "rs_3", "summary": [],
        "content": [{"type": "reasoning_text", "text": "First."},
                    {"type": "reasoning_text", "text": "Second."}]}, CALL, OUT], "tools": [W]},
    "call_round_trip": {"input": [U, REASON, CALL, OUT], "tools": [W]},
    "call_round_trip_final": {"input": [U, REASON, CALL, OUT, ASSIST,
                                        {"role": "user", "content": "Thanks, and Rome?"}],
                              "tools": [W], "instructions": "Be helpful."},
    "call_without_tools": {"input": [U, CALL, OUT]},
    "parallel_calls": {"input": [U, CALL, {**CALL, "call_id": "call_2", "name": "now",
                                           "arguments": "{}"},
                                 OUT, {**OUT, "call_id": "call_2", "output": "noon"}],
                       "tools": [W, NOW]},
    "text_before_call": {"input": [U, {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "Let me check.", "annotations": []}]}, CALL, OUT],
        "tools": [W]},
    "output_before_call": {"input": [U, OUT, CALL], "tools": [W]},
    "empty_items": {"input": [], "instructions": "Be brief."},
    "image_part": {"input": [{"role": "user", "content": [
        {"type": "input_text", "text": "What is this?"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]}]},
    "reasoning_empty_content": {"input": [U, {"type": "reasoning", "id": "rs_4", "summary": [
        {"type": "summary_text", "text": "S."}], "content": []}, ASSIST,
        {"role": "user", "content": "More?"}]},
    "two_finals": {"input": [U, REASON, ASSIST, {"role": "user", "content": "Rome?"},
        {**REASON, "content": [{"type": "reasoning_text", "text": "Rome now."}]},
        {**ASSIST, "content": [{"type": "output_text", "text": "25.", "annotations": []}]},
        {"role": "user", "content": "Thanks"}]},
    "tool_null_fields": {"input": "Hi", "tools": [
        {"type": "function", "name": "ping", "description": None, "parameters": None}]},
    "unknown_call_id": {"input": [U, {**OUT, "call_id": "call_9"}], "tools": [W]},
    "sampling": {"input": "Hi", "temperature": 0.4, "top_p": 0.9, "max_output_tokens": 64,
                 "request_id": "resp_fixed", "stream": True},
    "json_schema": {"input": "Give JSON", "text": {"format": {
        "type": "json_schema", "name": "o", "schema": {"type": "object",
        "properties": {"a": {"type": "integer"}}}}}},
    "in_progress_last": {"input": [U, {"type": "message", "role": "assistant",
        "status": "in_progress", "content": [{"type": "output_text", "text": "It is",
                                               "annotations": []}]}]},
    "previous_input_messages": {"input": "And Rome?", "previous_input_messages": [
        {"role": "system", "content": "dropped"}, {"role": "user", "content": "Paris?"},
        {"role": "assistant", "content": "Sunny."}]},
    "previous_input_messages_calls": {"input": "Thanks", "tools": [W], "previous_input_messages": [
        {"role": "user", "content": "Paris?"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        {"role": "tool", "name": "get_weather", "tool_call_id": "c1", "content": "21"},
        {"author": {"role": "assistant"}, "channel": "final", "content": "It is 21."}]},
}

MW = {"name": "get_weather", "description": "Get the weather",
      "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}
MU = {"role": "user", "content": "Weather in Paris?"}
MESSAGES = {
    "plain": {"messages": [{"role": "user", "content": "Hello"}]},
    "system": {"system": "Be brief.", "messages": [MU]},
    "system_blocks": {"system": [{"type": "text", "text": "Be brief. "},
                                 {"type": "text", "text": "Use metric."}], "messages": [MU]},
    "multi_turn": {"system": "Be brief.", "messages": [MU, {"role": "assistant", "content": "Sunny."},
                                                      {"role": "user", "content": "Rome?"}]},
    "tools": {"messages": [MU], "tools": [MW]},
    "tool_choice_any": {"messages": [MU], "tools": [MW], "tool_choice": {"type": "any"}},
    "tool_choice_none": {"messages": [MU], "tools": [MW], "tool_choice": {"type": "none"}},
    "tool_round_trip": {"messages": [MU, {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Need the tool.", "signature": "s"},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": "21 degrees"}]}], "tools": [MW]},
    "thinking_enabled": {"messages": [MU], "max_tokens": 4096,
                         "thinking": {"type": "enabled", "budget_tokens": 1024}},
    "thinking_disabled": {"messages": [MU], "thinking": {"type": "disabled"}},
    "thinking_history": {"messages": [MU, {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Easy.", "signature": "s"},
        {"type": "text", "text": "Sunny."}]}, {"role": "user", "content": "Rome?"}]},
    "inline_system": {"system": "Lead.", "messages": [MU, {"role": "assistant", "content": "Sunny."},
        {"role": "system", "content": "Reminder."}, {"role": "user", "content": "Rome?"}]},
    "two_tool_uses": {"messages": [MU, {"role": "assistant", "content": [
        {"type": "text", "text": "Checking both."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "21"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
             "content": [{"type": "text", "text": "timeout"}]},
            {"type": "text", "text": "Go on."}]}], "tools": [MW]},
    "sampling": {"messages": [MU], "temperature": 0.3, "top_k": 5, "stop_sequences": ["END"],
                 "stream": True},
}


# `--chat-template`s for the Messages inline-system probe, which asks the template even for
# gpt-oss: one refusing a system message after the first (merged), one taking it (kept).
TEMPLATES = {
    "refusing": "{%- for m in messages %}{%- if m.role == 'system' and not loop.first %}"
                "{{ raise_exception('System message must be at the beginning.') }}{%- endif %}"
                "{{ m.role }}: {{ m.content }}\n{% endfor %}",
    "accepting": "{%- for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
}
TEMPLATE_CASES = ["inline_system", "plain"]


def post(path, body):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    return r.status, json.loads(r.read())


def main():
    out_path = sys.argv[1]
    args = ["--served-model-name", MODEL, "--reasoning-parser", "openai_gptoss",
            "--tool-call-parser", "openai", "--enable-auto-tool-choice"]
    lines = []
    with vllm_render("gpt_oss", PORT, args, config=CONFIG, log="/tmp/harmony_items_vllm.log"):
        for route, cases, path in [("responses", RESPONSES, "/v1/responses/render"),
                                   ("messages", MESSAGES, "/v1/messages/render")]:
            for name, body in cases.items():
                req = {"model": MODEL, **body}
                if route == "messages":
                    req.setdefault("max_tokens", 256)
                status, resp = post(path, req)
                lines.append({"id": f"{route}_{name}", "route": route, "request": req,
                              "start_date": START_DATE, "status": status, "response": resp})
                print(f"{route}_{name}: {status}", file=sys.stderr)
    for tag, source in TEMPLATES.items():
        path = os.path.join(tempfile.mkdtemp(), "t.jinja")
        with open(path, "w") as f:
            f.write(source)
        with vllm_render("gpt_oss", PORT, [*args, "--chat-template", path], config=CONFIG,
                         log=f"/tmp/harmony_items_vllm_{tag}.log"):
            for name in TEMPLATE_CASES:
                req = {"model": MODEL, "max_tokens": 256, **MESSAGES[name]}
                status, resp = post("/v1/messages/render", req)
                lines.append({"id": f"messages_{tag}_template_{name}", "route": "messages",
                              "chat_template": source, "request": req,
                              "start_date": START_DATE, "status": status, "response": resp})
                print(f"messages_{tag}_template_{name}: {status}", file=sys.stderr)
    with open(out_path, "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
