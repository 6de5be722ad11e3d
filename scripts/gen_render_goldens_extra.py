"""Extra render goldens for llm-render, made by Hugging Face transformers (the oracle).

A copy-and-extend of ../shared/reference/gen_render_goldens.py: it imports that script for the
request → template-input conversion (the exact rules the dev goldens use) and adds cases the dev
set lacks: tool_choice, documents, odd Unicode and Python whitespace, argument objects, named templates
(default/tool_use), generation tags, tojson options, loop controls and raise_exception, the last
ones through fixtures/models/features (a template written for these tests).

Usage (pip install transformers tokenizers jinja2; no torch, no network):
    HF_HUB_OFFLINE=1 python scripts/gen_render_goldens_extra.py ../shared fixtures/goldens/render_extra
Writes OUT_DIR/extra_<model>.jsonl. The heldout set of the original script goes to the same folder:
    python ../shared/reference/gen_render_goldens.py ../shared/models fixtures/goldens/render_extra \
        --set heldout --models qwen3,llama3_1,deepseek_v3
"""
import gzip, json, os, shutil, sys, tempfile

shared, out_dir = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(shared, "reference"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import gen_render_goldens as ref  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

ODD = "NUL\u0000 BOM\ufeff LS\u2028 ZWJ👨‍👩‍👧 skin👍🏽 flags🇨🇭🇯🇵 math𝔸𝕓 CJK漢字かなカナ한글 RTL\u202eabc\u202c Thai ภาษา Devanagari हिन्दी"
WS = "x" + " " * 37 + "\n\n\n\t\t  y" + "\u3000" * 5 + "1234567890" * 7 + " 3.14159e-10"


def cases(family):
    c = []
    add = lambda name, **req: c.append((name, req))
    add("x_tool_choice_required", tools=[ref.WEATHER], tool_choice="required",
        messages=[{"role": "user", "content": "Weather in Bern?"}])
    add("x_tool_choice_named", tools=[ref.WEATHER, ref.SEARCH],
        tool_choice={"type": "function", "function": {"name": "search_docs"}},
        messages=[{"role": "user", "content": "Search for the runbook."}])
    add("x_tool_choice_none", tools=[ref.WEATHER], tool_choice="none",
        messages=[{"role": "user", "content": "Just chat."}])
    add("x_odd_unicode", messages=[{"role": "system", "content": ODD}, {"role": "user", "content": ODD[::-1]}])
    add("x_whitespace_digits", messages=[{"role": "user", "content": WS}])
    add("x_args_object_nested", tools=[ref.SEARCH], messages=[
        {"role": "user", "content": "search"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "q", "type": "function", "function": {
            "name": "search_docs", "arguments": {"query": "naïve \"quoted\" \\ back", "filters": {"tags": ["a", "ü"]}, "limit": 2}}}]},
        {"role": "tool", "tool_call_id": "q", "content": "{\"hits\": [1.5, 2e20, null, true]}"}])
    # Python's str.isspace() takes in U+001C-U+001F; Rust's trim does not (Llama trims content)
    add("x_python_whitespace", messages=[{"role": "system", "content": "\x1f sys \x1c"},
                                         {"role": "user", "content": "\x1e\u3000 hi \x1d\x1f"}])
    # floats Python prints with 17 significant digits: serde_json needs float_roundtrip to read them exactly
    add("x_long_floats", tools=[{"type": "function", "function": {"name": "f", "description": "d", "parameters": {
        "type": "object", "properties": {"x": {"type": "number", "default": 458883.84580789995}}}}}], messages=[
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "type": "function", "function": {
            "name": "f", "arguments": {"x": 4.6916736840516316e-11, "y": 0.30000000000000004}}}]},
        {"role": "tool", "tool_call_id": "a", "content": "done"}])
    add("x_documents", documents=[{"title": "Runbook", "text": "Restart the pod. Überprüfen."}],
        messages=[{"role": "user", "content": "Use the docs."}])
    if family == "llama3_1":
        for _, req in c:
            req.setdefault("chat_template_kwargs", {})["date_string"] = "01 Jan 2026"
    return c


def feature_cases():
    c = []
    add = lambda name, **req: c.append((name, req))
    add("f_single", messages=[{"role": "user", "content": "Hello"}])
    add("f_named_multi", messages=[
        {"role": "system", "content": "  Be exact.  "}, {"role": "user", "name": "ana", "content": "Hi"},
        {"role": "assistant", "content": "Hello Ana."}, {"role": "system", "content": "skipped by continue"},
        {"role": "user", "content": "Bye"}])
    add("f_tools_tool_use_template", tools=[ref.WEATHER, ref.SEARCH], messages=[{"role": "user", "content": "Weather?"}])
    add("f_tools_empty_list", tools=[], messages=[{"role": "user", "content": "No tools, but a list."}])
    add("f_tool_roundtrip", tools=[ref.WEATHER], messages=[
        {"role": "user", "content": "Zürich?"},
        {"role": "assistant", "content": None, "tool_calls": [ref.call("c1", "get_weather", {"city": "Zürich", "unit": "celsius"})]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"t\": -2.5, \"s\": \"❄\"}"}])
    add("f_float_args", tools=[ref.WEATHER], messages=[
        {"role": "user", "content": "floats"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "n", "type": "function", "function": {
            "name": "get_weather", "arguments": {"a": 2.0, "b": 1e20, "c": 1.5e-7, "d": -0.0, "e": 123456789012345678, "f": 0.1}}}]},
        {"role": "user", "content": "ok"}])
    # `{{ x }}` and `x|string` of floats are Python's str(): 1e-05, 1e+16, inside lists too
    add("f_print_floats", chat_template_kwargs={"print_values": [
        1e-05, 1e16, 0.1, 2.0, 1.5e300, -0.0, 123456789.123, 5e-324, 1e15, 0.0001, 12345678901234567890.0,
        [1e-7, "it's", 2], {"k": 2.5e-5, "s": "x\ty"}, 3, True, None, "str"]},
        messages=[{"role": "user", "content": "print"}])
    # `{{ list }}` is Python's repr: strings in it escape non-printable characters (ZWJ, NBSP, BOM)
    add("f_print_repr_escapes", chat_template_kwargs={"print_values": [
        ["👨\u200d👩\u200d👧", "nbsp\xa0", "bom\ufeff", "it's", "q\"", "tab\t", "ok é 漢"],
        {"k\u2028": "v\u00ad"}, "top\u200d"]},
        messages=[{"role": "user", "content": "print"}])
    add("f_documents_ascii", documents=[{"title": "café", "text": "Ünïcödé ✓ \"q\"\n"}, {"title": "b", "text": "𝔘"}],
        messages=[{"role": "user", "content": "Summarize."}])
    add("f_reasoning_alias", messages=[
        {"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4", "reasoning": "  simple  "},
        {"role": "user", "content": "3+3?"}])
    add("f_reasoning_odd_space", messages=[
        {"role": "system", "content": "\x1f Be exact. \x1c"}, {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4", "reasoning": "\x1d simple \x1f"}, {"role": "user", "content": "3+3?"}])
    add("f_thinking_alias", messages=[
        {"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4", "thinking": "add"},
        {"role": "user", "content": "ok"}])
    add("f_enable_thinking_false", chat_template_kwargs={"enable_thinking": False}, messages=[{"role": "user", "content": "Quick."}])
    add("f_no_user_raises", messages=[{"role": "system", "content": "alone"}])
    add("f_continue_final", add_generation_prompt=False, continue_final_message=True, messages=[
        {"role": "user", "content": "Count"}, {"role": "assistant", "content": "1, 2, "}])
    add("f_parts_joined", messages=[{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b "}]}])
    add("f_no_generation_prompt", add_generation_prompt=False, messages=[{"role": "user", "content": ODD}])
    return c


def run(tok_dir, name, case_list, out):
    tok = AutoTokenizer.from_pretrained(tok_dir)
    join = ref.template_reads_string_content(tok)
    n = 0
    with open(out, "w") as f:
        for cname, req in case_list:
            rec = {"id": f"{name}/{cname}", "model": name, "request": req}
            kwargs = dict(req.get("chat_template_kwargs", {}))
            try:
                prompt = tok.apply_chat_template(
                    ref.to_template_messages(req["messages"], join), tools=req.get("tools"),
                    documents=req.get("documents"), tokenize=False,
                    add_generation_prompt=req.get("add_generation_prompt", True),
                    continue_final_message=req.get("continue_final_message", False), **kwargs)
                rec.update(expected_prompt=prompt, expected_token_ids=tok.encode(prompt, add_special_tokens=False))
            except Exception as e:
                rec["expected_error"] = f"{type(e).__name__}: {e}"
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
    print(f"{name}: {n} cases -> {out}")


os.makedirs(out_dir, exist_ok=True)
for name in ["qwen3", "llama3_1", "deepseek_v3"]:
    run(os.path.join(shared, "models", name), name, cases(name), os.path.join(out_dir, f"extra_{name}.jsonl"))
# The features model: its tokenizer_config.json from fixtures, the Qwen3 tokenizer beside it.
here = os.path.dirname(os.path.abspath(__file__))
with tempfile.TemporaryDirectory() as d:
    shutil.copy(os.path.join(here, "..", "fixtures", "models", "features", "tokenizer_config.json"), d)
    with gzip.open(os.path.join(here, "..", "fixtures", "models", "qwen3", "tokenizer.json.gz")) as src, \
            open(os.path.join(d, "tokenizer.json"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    run(d, "features", feature_cases(), os.path.join(out_dir, "extra_features.jsonl"))
