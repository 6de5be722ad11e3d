"""Template value goldens: how Jinja2 prints and transforms values, for llm-render's template
environment to match (tests/template_values.rs).

Chat templates print values (`{{ x }}`, `|string`, `|tojson`) and transform strings (`.strip()`,
`|trim`, `|title`, `.split()` …); every byte they produce is tokenized. This script renders a
fixed set of such expressions over seeded random values (floats of every magnitude, strings
mixing quotes, escapes, Python-only whitespace, format characters, ligatures, sigmas and
emoji) in transformers' Jinja2 setup, and writes what Jinja2 printed, or that it raised.

Usage (pip install jinja2): python scripts/gen_template_value_goldens.py fixtures/goldens/template_values.jsonl
"""
import json, random, sys
from jinja2.sandbox import ImmutableSandboxedEnvironment

random.seed(20261130)
POOL = list("aZ09 _-.,'\"\\/\n\t\r({[<") + [
    "\x00", "\x01", "\x1c", "\x1f", "\x7f", "\x85", "\xa0", "\xad", "é", "ß", "İ", "ǆ", "ǅ", "ﬁ", "Σ", "ς",
    "\u0301", "\u0345", "ŉ", "ΐ", "\u200b", "\u200d", "\u2028", "\u3000", "\ufeff", "\ue000", "漢", "🤖", "👍🏽",
    "𝔘", "\U000e0041", "\ufdd0"]


def rstr():
    return "".join(random.choice(POOL) for _ in range(random.randint(0, 14)))


def rfloat():
    return random.choice([
        lambda: random.uniform(-1e6, 1e6), lambda: random.random() * 1e-10, lambda: random.random() * 1e20,
        lambda: float(random.randint(-10**17, 10**17)), lambda: random.uniform(-1, 1),
        lambda: random.choice([0.1, 1e-5, 1e16, 1e22, -0.0, 2.0, 5e-324, 1.7976931348623157e308, 0.30000000000000004]),
    ])()


def rval(depth=0):
    r = random.random()
    if depth > 2 or r < 0.5:
        return random.choice([rstr, rstr, rfloat, lambda: random.randint(-10**18, 10**18),
                              lambda: random.choice([True, False, None])])()
    if r < 0.75:
        return [rval(depth + 1) for _ in range(random.randint(0, 4))]
    return {rstr(): rval(depth + 1) for _ in range(random.randint(0, 4))}


VALUE_EXPRS = ["{{ x }}", "{{ x | string }}", "{{ x | tojson }}", "{{ x | tojson(indent=2) }}",
               "{{ x | tojson(ensure_ascii=true) }}", "{{ x | tojson(sort_keys=true) }}",
               "{{ x is iterable }}{{ x is sequence }}{{ x is mapping }}{{ x is string }}{{ x is number }}",
               "{{ x | int if x is not number or x is boolean or (x > -1e30 and x < 1e30) else '' }}|{{ x | float }}",
               "{{ x | e }}"]
NUMERIC = ["12", " 1_000 ", "3.9", "1e3", "-0", "+5", "0x1A", "inf", "-Infinity", "nan", "1__0", "_1", ".5",
           "5.", "1e400", "0b11", "\u3000 7\x1c", "1_0.5", "--1", "1e", "0_0"]
STRING_EXPRS = ["{{ s.strip() }}|{{ s | trim }}|{{ s.lstrip() }}|{{ s.rstrip() }}", "{{ s.split() }}|{{ s.isspace() }}",
                "{{ s.upper() }}|{{ s.lower() }}|{{ s | upper }}|{{ s | lower }}", "{{ s | capitalize }}|{{ s.capitalize() }}",
                "{{ s | title }}", "{{ s | length }}|{{ s[1:3] }}|{{ s[::-1] }}", "{{ s.split('a') }}|{{ s.replace('a', 'b') }}",
                "{{ [s] }}|{{ {s: s} }}", "{{ s.startswith('a') }}{{ s.endswith('a') }}{{ 'a' in s }}",
                "{{ s | e }}|{{ s | escape | length }}",
                "{{ s.rsplit() }}|{{ s.rsplit(None, 1) }}|{{ s.rsplit(' ', 1) }}|{{ s.rsplit('a') }}|{{ s.rsplit('a', 2) }}",
                "{{ s.zfill(9) }}|{{ s | center(15) }}|{{ s | center(16) }}",
                "{{ s | truncate(6) }}|{{ s | truncate(6, true) }}|{{ s | truncate(5, false, '..', 0) }}|{{ s | truncate(4, leeway=1) }}",
                "{{ s.splitlines() }}|{{ s | indent }}|{{ s | indent(2, true) }}|{{ s | indent('> ', blank=true) }}"]

env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
env.filters["tojson"] = lambda x, ensure_ascii=False, indent=None, separators=None, sort_keys=False: json.dumps(
    x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

cases = [(e, {"x": v}) for v in (rval() for _ in range(150)) for e in VALUE_EXPRS]
cases += [(e, {"s": s}) for s in (rstr() for _ in range(150)) for e in STRING_EXPRS]
cases += [("{{ s | int }}|{{ s | float }}|{{ s | int(base=16) }}|{{ s | int(7) }}", {"s": s}) for s in NUMERIC]
with open(sys.argv[1], "w") as f:
    for template, ctx in cases:
        rec = {"template": template, "context": ctx}
        try:
            rec["expected"] = env.from_string(template).render(**ctx)
        except Exception as e:  # noqa: BLE001 - any Jinja2 error is an expected error
            rec["expected_error"] = type(e).__name__
        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
print(len(cases), "cases ->", sys.argv[1])
