//! The Hugging Face–compatible minijinja environment that chat templates run in.
//!
//! transformers compiles chat templates in a Jinja2 `ImmutableSandboxedEnvironment` with
//! `trim_blocks=True, lstrip_blocks=True`, the `loopcontrols` extension, and these extras
//! (`transformers/utils/chat_template_utils.py::_compile_jinja_template`):
//! * `tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)` = `json.dumps`;
//! * `raise_exception(message)` raises `TemplateError(message)`;
//! * `strftime_now(format)` = `datetime.now().strftime(format)`;
//! * `{% generation %}…{% endgeneration %}` marks assistant spans (we render it as a no-op block).
//!
//! We add `fromjson` (the inverse of `tojson`, used by some tool templates) and Python string
//! and dict methods (`.startswith`, `.split`, `.items()` …) from `minijinja_contrib::pycompat`.
//! Where minijinja reads whitespace its own way, the `trim` filter and the argument-less
//! `.strip()`, `.lstrip()`, `.rstrip()`, `.split()` and `.isspace()` are replaced with
//! Python's, whose whitespace (`str.isspace`) also takes in U+001C–U+001F.
//!
//! The `title` filter splits words as Jinja2 does, and `.title()` restarts words after every
//! non-letter as Python does. Known differences left (none in the fixture templates; a
//! differential run against Jinja2 found them): `.title()` upper-cases letters whose title
//! case differs (`ß` → `SS`, Python `Ss`); `|int` and `|float` fail on text that is not a
//! number, where Jinja2 returns 0; `is sequence` is false for a dict; `%` formatting, `pprint`
//! and `indent` with a string width differ or fail; `escape` writes `&#39;` in Jinja2 and `&#x27;`/`&#x2f;` here; the
//! filters `wordcount`, `truncate`, `center` and the methods `rsplit`, `zfill` are missing.

use super::pyjson::{self, DumpOptions};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, Output, State, UndefinedBehavior};
use std::sync::OnceLock;

/// Marker put at the front of errors raised by a template's own `raise_exception`, so the
/// error mapper can report the template's message verbatim.
pub const RAISED_PREFIX: &str = "TemplateError: ";

/// Builds the environment every chat template of every model is compiled in.
pub fn new_environment(fuel: Option<u64>) -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    env.set_syntax(
        SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(false)
            .build()?,
    );
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_undefined_behavior(UndefinedBehavior::Lenient);
    env.set_fuel(fuel);
    env.set_unknown_method_callback(py_methods);
    env.set_formatter(py_formatter);
    env.add_filter("string", py_string);
    env.add_filter("trim", py_trim);
    env.add_filter("title", py_title);
    env.add_filter("tojson", tojson);
    env.add_filter("fromjson", fromjson);
    env.add_function("raise_exception", raise_exception);
    env.add_function("strftime_now", strftime_now);
    Ok(env)
}

/// Python's whitespace (`str.isspace`, what `str.strip()` and `str.split()` drop): Unicode's
/// White_Space, as Rust's `char::is_whitespace`, plus U+001C–U+001F.
pub fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// String methods with Python's whitespace where pycompat uses Rust's (`"\x1fa".strip()` is
/// `"a"` in Python); everything else is `minijinja_contrib::pycompat`.
fn py_methods(
    state: &mut State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    if let (Some(s), []) = (value.as_str(), args) {
        match method {
            "strip" => return Ok(Value::from(s.trim_matches(py_space))),
            "lstrip" => return Ok(Value::from(s.trim_start_matches(py_space))),
            "rstrip" => return Ok(Value::from(s.trim_end_matches(py_space))),
            "isspace" => return Ok(Value::from(!s.is_empty() && s.chars().all(py_space))),
            "title" => return Ok(Value::from(py_str_title(s))),
            "split" => {
                let parts = s.split(py_space).filter(|p| !p.is_empty());
                return Ok(Value::from(parts.map(Value::from).collect::<Vec<_>>()));
            }
            _ => {}
        }
    }
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
}

/// Python's `str.title()`: a character after a cased one is lower-cased, any other is
/// title-cased, so words restart after every non-letter (`"o'neil"` → `"O'Neil"`, `"get_x"` →
/// `"Get_X"`, `"ǆx"` → `"ǅx"`). Approximations: title case is upper case except for the
/// four Latin digraphs (so `"ß"` gives `"SS"` where Python gives `"Ss"`), and a final sigma
/// is not special-cased.
fn py_str_title(s: &str) -> String {
    // (upper, title, lower) of the digraphs, the only letters whose title case is their own.
    const DIGRAPHS: [[char; 3]; 4] = [
        ['\u{1c4}', '\u{1c5}', '\u{1c6}'],
        ['\u{1c7}', '\u{1c8}', '\u{1c9}'],
        ['\u{1ca}', '\u{1cb}', '\u{1cc}'],
        ['\u{1f1}', '\u{1f2}', '\u{1f3}'],
    ];
    let digraph = |c: char| DIGRAPHS.iter().find(|d| d.contains(&c));
    let mut out = String::with_capacity(s.len());
    let mut previous_is_cased = false;
    for c in s.chars() {
        match (digraph(c), previous_is_cased) {
            (Some(d), true) => out.push(d[2]),
            (Some(d), false) => out.push(d[1]),
            (None, true) => out.extend(c.to_lowercase()),
            (None, false) => out.extend(c.to_uppercase()),
        }
        previous_is_cased = c.is_lowercase() || c.is_uppercase() || digraph(c).is_some();
    }
    out
}

/// Jinja2's `trim(value, chars=None)`: `str.strip(chars)`.
fn py_trim(s: std::borrow::Cow<'_, str>, chars: Option<std::borrow::Cow<'_, str>>) -> String {
    match chars {
        Some(chars) => s.trim_matches(|c| chars.contains(c)).to_string(),
        None => s.trim_matches(py_space).to_string(),
    }
}

/// Jinja2's `title`: the text split before runs of whitespace (Python's), `-`, `(`, `{`, `[`
/// and `<`; each piece's first character upper-cased and the rest lower-cased, each piece on
/// its own (so a final sigma is judged within the piece, as `str.lower()` of the slice does).
fn py_title(s: std::borrow::Cow<'_, str>) -> String {
    let separator = |c: char| py_space(c) || "-({[<".contains(c);
    let mut out = String::with_capacity(s.len());
    let mut rest: &str = &s;
    while let Some(c) = rest.chars().next() {
        let run = if separator(c) {
            let end = rest.find(|c: char| !separator(c)).unwrap_or(rest.len());
            out.push_str(&rest[..end]);
            end
        } else {
            let end = rest.find(separator).unwrap_or(rest.len());
            out.extend(c.to_uppercase());
            out.push_str(&rest[c.len_utf8()..end].to_lowercase());
            end
        };
        rest = &rest[run..];
    }
    out
}

/// Writes `{{ value }}` as Jinja2 writes it (`str(value)`). minijinja already prints like
/// Python (`True`, `None`, `['a', 1]`) except in two places. Python's `str(float)` is `repr`,
/// with an exponent below 1e-4 and from 1e16 (`1e-05`, `1e+16`); minijinja writes `0.00001`
/// and `10000000000000000.0`, and `1e-5` inside a list. And Python's `repr` of a string in a
/// list or dict escapes every non-printable character (`'\u200d'` for the joiner inside emoji,
/// `'\xa0'`); minijinja only escapes controls. Floats, and lists and dicts holding either,
/// are written here; everything else as minijinja does. (`~` still uses minijinja's own
/// conversion: a formatter only sees what is printed, and `|string` is [`py_string`].)
fn py_formatter(out: &mut Output, state: &mut State, value: &Value) -> Result<(), Error> {
    match py_str(value) {
        Some(s) => out.write_str(&s).map_err(Error::from),
        None => minijinja::escape_formatter(out, state, value),
    }
}

/// Jinja2's `string` filter (`str(value)`), with Python's printing of floats and
/// containers (see [`py_formatter`]); strings pass through unchanged.
fn py_string(value: Value) -> Value {
    if let Some(s) = py_str(&value) {
        Value::from(s)
    } else if value.kind() == ValueKind::String {
        value
    } else {
        Value::from(value.to_string())
    }
}

/// Python's `str(v)` when `v` is a float, or a list or dict holding a float or a string
/// with a non-ASCII character Python escapes (where minijinja prints otherwise); `None` for
/// everything else, which minijinja prints as Python does (tuples from `items` included).
fn py_str(v: &Value) -> Option<String> {
    if !(is_float(v) || (is_container(v) && differs_in_repr(v))) {
        return None;
    }
    let mut s = String::new();
    py_repr(&mut s, v, true);
    Some(s)
}

fn is_float(v: &Value) -> bool {
    v.is_number() && !v.is_integer()
}

fn is_container(v: &Value) -> bool {
    matches!(v.kind(), ValueKind::Seq | ValueKind::Map)
}

/// Whether minijinja's `repr` of `v` differs from Python's: `v` holds a float, or a string
/// with a non-printable character beyond ASCII (minijinja escapes only controls).
fn differs_in_repr(v: &Value) -> bool {
    match v.kind() {
        ValueKind::Seq => v
            .try_iter()
            .is_ok_and(|mut it| it.any(|x| differs_in_repr(&x))),
        ValueKind::Map => v.try_iter().is_ok_and(|mut it| {
            it.any(|k| differs_in_repr(&k) || v.get_item(&k).is_ok_and(|x| differs_in_repr(&x)))
        }),
        ValueKind::String => v
            .as_str()
            .is_some_and(|s| s.chars().any(|c| !c.is_ascii() && !py_printable(c))),
        _ => is_float(v),
    }
}

/// Python's `str` (`top`) or `repr` (inside a container) of `v`.
fn py_repr(out: &mut String, v: &Value, top: bool) {
    use std::fmt::Write;
    if is_float(v) {
        let f = f64::try_from(v.clone()).unwrap_or(f64::NAN);
        match f {
            f if f.is_nan() => out.push_str("nan"),
            f if f.is_infinite() => out.push_str(if f > 0.0 { "inf" } else { "-inf" }),
            f => out.push_str(&pyjson::py_float_repr(f)),
        }
        return;
    }
    match v.kind() {
        ValueKind::Seq => {
            out.push('[');
            for (i, x) in v.try_iter().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_repr(out, &x, false);
            }
            out.push(']');
        }
        ValueKind::Map => {
            out.push('{');
            for (i, k) in v.try_iter().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_repr(out, &k, false);
                out.push_str(": ");
                py_repr(out, &v.get_item(&k).unwrap_or_default(), false);
            }
            out.push('}');
        }
        ValueKind::String if !top => py_str_repr(out, v.as_str().unwrap_or_default()),
        _ if top => {
            let _ = write!(out, "{v}");
        }
        // None, True, 1 …: minijinja's Debug is Python's repr
        _ => {
            let _ = write!(out, "{v:?}");
        }
    }
}

/// Python's `repr(str)` (CPython `unicode_repr`): single quotes unless the text has a `'` and
/// no `"`; `\\`, `\t`, `\n`, `\r` and the quote escaped; other characters that are not
/// printable as `\xhh`, `\uhhhh` or `\Uhhhhhhhh`.
fn py_str_repr(out: &mut String, s: &str) {
    use std::fmt::Write;
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        let n = c as u32;
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if py_printable(c) => out.push(c),
            _ if n <= 0xff => {
                let _ = write!(out, "\\x{n:02x}");
            }
            _ if n <= 0xffff => {
                let _ = write!(out, "\\u{n:04x}");
            }
            _ => {
                let _ = write!(out, "\\U{n:08x}");
            }
        }
    }
    out.push(quote);
}

/// Python's `str.isprintable()` for one character: false for the general categories Cc, Cf,
/// Co, Zl, Zp and Zs (except the space), and for noncharacters. Cf is listed as of Unicode
/// 14 (CPython 3.11). Other unassigned code points (Cn) count as printable here, where
/// CPython escapes them: no table of unassigned code points is kept.
fn py_printable(c: char) -> bool {
    const NOT_PRINTABLE: &[(u32, u32)] = &[
        (0x0000, 0x001f),
        (0x007f, 0x00a0),
        (0x00ad, 0x00ad),
        (0x0600, 0x0605),
        (0x061c, 0x061c),
        (0x06dd, 0x06dd),
        (0x070f, 0x070f),
        (0x0890, 0x0891),
        (0x08e2, 0x08e2),
        (0x1680, 0x1680),
        (0x180e, 0x180e),
        (0x2000, 0x200f),
        (0x2028, 0x202f),
        (0x205f, 0x2064),
        (0x2066, 0x206f),
        (0x3000, 0x3000),
        (0xe000, 0xf8ff),
        (0xfdd0, 0xfdef),
        (0xfeff, 0xfeff),
        (0xfff9, 0xfffb),
        (0x110bd, 0x110bd),
        (0x110cd, 0x110cd),
        (0x13430, 0x13438),
        (0x1bca0, 0x1bca3),
        (0x1d173, 0x1d17a),
        (0xe0001, 0xe0001),
        (0xe0020, 0xe007f),
        (0xf0000, 0x10ffff),
    ];
    let n = c as u32;
    if n & 0xfffe == 0xfffe {
        return false;
    }
    !NOT_PRINTABLE.iter().any(|&(lo, hi)| (lo..=hi).contains(&n))
}

/// Rewrites `{% generation %}` / `{% endgeneration %}` (transformers' assistant-mask tags) into
/// an always-true `if` block, keeping their whitespace-control dashes so trimming is unchanged.
pub fn strip_generation_tags(source: &str) -> String {
    static RE: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"\{%(-?)\s*(end)?generation\s*(-?)%\}").ok());
    match re {
        Some(re) => re
            .replace_all(source, |c: &regex::Captures| {
                let body = if c.get(2).is_some() {
                    "endif"
                } else {
                    "if true"
                };
                format!("{{%{} {} {}%}}", &c[1], body, &c[3])
            })
            .into_owned(),
        None => source.to_string(),
    }
}

/// `tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`, with the
/// arguments accepted positionally in that order as Jinja2 would pass them.
fn tojson(value: &Value, args: Rest<Value>, kwargs: Kwargs) -> Result<String, Error> {
    let names = ["ensure_ascii", "indent", "separators", "sort_keys"];
    if args.len() > names.len() {
        return Err(Error::new(
            ErrorKind::TooManyArguments,
            "tojson takes at most 4 arguments",
        ));
    }
    let arg = |i: usize| -> Result<Option<Value>, Error> {
        let kw: Option<Value> = kwargs.get(names[i])?;
        Ok(args.get(i).cloned().or(kw))
    };
    let mut opts = DumpOptions::default();
    if let Some(v) = arg(0)? {
        opts.ensure_ascii = v.is_true();
    }
    if let Some(v) = arg(1)? {
        opts.indent = match v.kind() {
            ValueKind::None | ValueKind::Undefined => None,
            ValueKind::Number => Some(" ".repeat(v.as_i64().unwrap_or(0).max(0) as usize)),
            ValueKind::String => Some(v.as_str().unwrap_or_default().to_string()),
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "tojson: indent must be an int or a string",
                ))
            }
        };
        if opts.indent.is_some() {
            opts.item_separator = ",".into();
        }
    }
    if let Some(v) = arg(2)? {
        if !v.is_none() && !v.is_undefined() {
            let parts: Vec<Value> = v.try_iter()?.collect();
            match parts.as_slice() {
                [a, b] if a.as_str().is_some() && b.as_str().is_some() => {
                    opts.item_separator = a.as_str().unwrap_or_default().to_string();
                    opts.key_separator = b.as_str().unwrap_or_default().to_string();
                }
                _ => {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        "tojson: separators must be a pair of strings",
                    ))
                }
            }
        }
    }
    if let Some(v) = arg(3)? {
        opts.sort_keys = v.is_true();
    }
    kwargs.assert_all_used()?;
    pyjson::dumps(value, &opts)
}

/// `fromjson(s)`: parses a JSON string into a template value.
fn fromjson(value: &str) -> Result<Value, Error> {
    serde_json::from_str::<serde_json::Value>(value)
        .map(|v| Value::from(minijinja::value::Serde(&v)))
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("fromjson: {e}")))
}

/// `raise_exception(message)`: the template rejects its input; the request is invalid.
fn raise_exception(message: Value) -> Result<Value, Error> {
    Err(Error::new(
        ErrorKind::InvalidOperation,
        format!("{RAISED_PREFIX}{message}"),
    ))
}

/// `strftime_now(format)`: the local time formatted with C `strftime` codes, as Python does.
/// An unknown code is an error rather than a panic.
fn strftime_now(format: &str) -> Result<String, Error> {
    use chrono::format::{Item, StrftimeItems};
    let items: Vec<Item> = StrftimeItems::new(format).collect();
    if items.iter().any(|i| matches!(i, Item::Error)) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("strftime_now: bad format {format:?}"),
        ));
    }
    let mut out = String::new();
    std::fmt::Write::write_fmt(
        &mut out,
        format_args!(
            "{}",
            chrono::Local::now().format_with_items(items.into_iter())
        ),
    )
    .map_err(|_| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("strftime_now: bad format {format:?}"),
        )
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(src: &str, ctx: serde_json::Value) -> Result<String, Error> {
        let mut env = new_environment(Some(100_000))?;
        env.add_template_owned("t", strip_generation_tags(src))?;
        env.get_template("t")?
            .render(Value::from(minijinja::value::Serde(ctx)))
    }

    #[test]
    fn python_semantics() -> Result<(), Error> {
        let ctx = serde_json::json!({"x": {"b": 1, "a": [true, null, 1.5]}, "s": "  hi\n"});
        assert_eq!(
            render("{{ x | tojson }}", ctx.clone())?,
            r#"{"b": 1, "a": [true, null, 1.5]}"#
        );
        assert_eq!(
            render("{{ x | tojson(sort_keys=true) }}", ctx.clone())?,
            r#"{"a": [true, null, 1.5], "b": 1}"#
        );
        assert_eq!(render("{{ true }} {{ none }}", ctx.clone())?, "True None");
        // Jinja2 (Python 3.11) output for the same template and values
        let floats = serde_json::json!({"f": [1e-05, 1e16, 2.0, 0.1], "m": {"a": -0.0}});
        assert_eq!(
            render(
                "{{ f }} {{ f[0] }} {{ f[1] | string }} {{ m }} {{ 1 / 0.0 if false else 3 }}",
                floats
            )?,
            "[1e-05, 1e+16, 2.0, 0.1] 1e-05 1e+16 {'a': -0.0} 3"
        );
        assert_eq!(
            render("{{ s.strip() }}|{{ s.startswith('  h') }}", ctx.clone())?,
            "hi|True"
        );
        let odd = serde_json::json!({"x": "\u{1f}a\u{1c} \u{3000}"});
        // Jinja2 (Python 3.11): 'a|a|a\x1c \u3000|\x1fa|1|ab|TrueFalse'
        assert_eq!(
            render(
                "{{ x | trim }}|{{ x.strip() }}|{{ x.lstrip() }}|{{ x.rstrip() }}|{{ x.split() | length }}|{{ 'xaby' | trim('xy') }}|{{ ' \u{1f}'.isspace() }}{{ ''.isspace() }}",
                odd
            )?,
            "a|a|a\u{1c} \u{3000}|\u{1f}a|1|ab|TrueFalse"
        );
        assert_eq!(
            render("{% generation %}a{% endgeneration %}", ctx.clone())?,
            "a"
        );
        assert_eq!(
            render("{{ '{\"a\": 1}' | fromjson | tojson }}", ctx)?,
            r#"{"a": 1}"#
        );
        Ok(())
    }

    /// Jinja2 3.1 `title` on text with Python-only whitespace, a ligature and sigmas.
    #[test]
    fn title_splits_words_as_jinja2() -> Result<(), Error> {
        for (s, want) in [
            (
                "\u{fb01}\u{fdd0}\u{3c2}\u{85}/\u{2028}\u{1d518}\u{feff}\u{3a3}9",
                "FI\u{fdd0}\u{3c2}\u{85}/\u{2028}\u{1d518}\u{feff}\u{3c3}9",
            ),
            ("\u{1c}\u{e9}\rZ a-b(c [d", "\u{1c}\u{c9}\rZ A-B(C [D"),
            ("hELLO wORLD", "Hello World"),
        ] {
            let ctx = serde_json::json!({ "s": s });
            assert_eq!(render("{{ s | title }}", ctx)?, want, "{s:?}");
        }
        Ok(())
    }

    /// CPython 3.11 `str.title()`.
    #[test]
    fn title_method_is_python() -> Result<(), Error> {
        for (s, want) in [
            ("a-b_c", "A-B_C"),
            ("o'neil x3y", "O'Neil X3Y"),
            ("\u{1c6}x \u{1c5}Y \u{1c4}", "\u{1c5}x \u{1c5}y \u{1c5}"),
            ("hELLO wORLD", "Hello World"),
            ("get_weather", "Get_Weather"),
            ("\u{e9}\u{6f22}a1b", "\u{c9}\u{6f22}A1B"),
        ] {
            let ctx = serde_json::json!({ "s": s });
            assert_eq!(render("{{ s.title() }}", ctx)?, want, "{s:?}");
        }
        Ok(())
    }

    /// `repr([s])` from CPython 3.11 for strings with quotes, escapes and non-printable
    /// characters (the joiner inside emoji, NBSP, BOM, private use, noncharacters, tags).
    #[test]
    fn containers_print_strings_as_python_repr() -> Result<(), Error> {
        for (s, want) in [
            ("it's", "[\"it's\"]"),
            ("a\"b", "['a\"b']"),
            ("both'\"", "['both\\'\"']"),
            ("back\\slash", "['back\\\\slash']"),
            ("nl\nt\tab\rx", "['nl\\nt\\tab\\rx']"),
            (
                "ctl \u{1} \u{1f} \u{7f} \u{80} \u{9f}",
                "['ctl \\x01 \\x1f \\x7f \\x80 \\x9f']",
            ),
            ("nbsp\u{a0} shy\u{ad}", "['nbsp\\xa0 shy\\xad']"),
            ("ls\u{2028}ps\u{2029}", "['ls\\u2028ps\\u2029']"),
            (
                "zwj \u{1f468}\u{200d}\u{1f469} bom\u{feff}",
                "['zwj \u{1f468}\\u200d\u{1f469} bom\\ufeff']",
            ),
            ("ideo\u{3000}sp", "['ideo\\u3000sp']"),
            ("pua\u{e000} \u{f0000}", "['pua\\ue000 \\U000f0000']"),
            ("nonchar\u{fdd0}\u{ffff}", "['nonchar\\ufdd0\\uffff']"),
            (
                "ok \u{e9} \u{6f22} \u{1f916} \u{301}",
                "['ok \u{e9} \u{6f22} \u{1f916} \u{301}']",
            ),
            ("tag\u{e0041}", "['tag\\U000e0041']"),
        ] {
            let ctx = serde_json::json!({"x": [s]});
            assert_eq!(render("{{ x }}", ctx.clone())?, want, "{s:?}");
            assert_eq!(render("{{ x | string }}", ctx)?, want, "{s:?}");
        }
        Ok(())
    }

    #[test]
    fn raise_exception_and_fuel() {
        let err = render("{{ raise_exception('nope') }}", serde_json::json!({})).err();
        assert!(err
            .map(|e| format!("{e:#}"))
            .unwrap_or_default()
            .contains("TemplateError: nope"));
        let err = render(
            "{% for i in range(100000) %}{{ i }}{% endfor %}",
            serde_json::json!({}),
        )
        .err();
        assert!(err.is_some_and(|e| e.kind() == ErrorKind::OutOfFuel));
    }
}
