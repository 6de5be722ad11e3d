//! Python's string semantics where minijinja's differ: whitespace (`str.isspace`, which takes
//! in U+001C–U+001F) in `trim`, `.strip()` and `.split()`; Jinja2's `title` filter and
//! Python's `str.title()`.

use minijinja::value::{Kwargs, Rest, Value};
use minijinja::{Error, ErrorKind, State};

pub use llm_render_parsers::pystr::py_space;

/// String methods with Python's whitespace where pycompat uses Rust's (`"\x1fa".strip()` is
/// `"a"` in Python); everything else is `minijinja_contrib::pycompat`.
pub(super) fn py_methods(
    state: &mut State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    if let Some(s) = value.as_str() {
        match (method, args) {
            ("rsplit", _) => return py_rsplit(s, args),
            ("zfill", [width]) => return py_zfill(s, width).map(Value::from),
            _ => {}
        }
    }
    if let (Some(s), []) = (value.as_str(), args) {
        match method {
            "strip" => return Ok(Value::from(s.trim_matches(py_space))),
            "lstrip" => return Ok(Value::from(s.trim_start_matches(py_space))),
            "rstrip" => return Ok(Value::from(s.trim_end_matches(py_space))),
            "isspace" => return Ok(Value::from(!s.is_empty() && s.chars().all(py_space))),
            "title" => return Ok(Value::from(py_str_title(s))),
            "splitlines" => {
                let lines = py_splitlines(s).into_iter().map(Value::from);
                return Ok(Value::from(lines.collect::<Vec<_>>()));
            }
            "split" => {
                let parts = s.split(py_space).filter(|p| !p.is_empty());
                return Ok(Value::from(parts.map(Value::from).collect::<Vec<_>>()));
            }
            _ => {}
        }
    }
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
}

fn invalid(message: &str) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.to_string())
}

/// Python's `str.rsplit(sep=None, maxsplit=-1)` (positional arguments): splits from the
/// right, so overlapping separators pair up as Python pairs them (`"aaa".rsplit("aa")` is
/// `["a", ""]`); without `sep`, on runs of Python whitespace, keeping the leading
/// whitespace of what `maxsplit` leaves unsplit.
fn py_rsplit(s: &str, args: &[Value]) -> Result<Value, Error> {
    if args.len() > 2 {
        return Err(invalid("rsplit takes at most 2 arguments"));
    }
    let sep = match args.first() {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) => Some(
            v.as_str()
                .ok_or_else(|| invalid("rsplit: sep must be a string or None"))?,
        ),
    };
    let maxsplit = match args.get(1) {
        None => -1,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| invalid("rsplit: maxsplit must be an integer"))?,
    };
    let mut parts: Vec<&str> = match sep {
        Some("") => return Err(invalid("rsplit: empty separator")),
        Some(sep) if maxsplit < 0 => s.rsplit(sep).collect(),
        Some(sep) => s.rsplitn(maxsplit as usize + 1, sep).collect(),
        None => {
            let mut parts = Vec::new();
            let mut rest = s.trim_end_matches(py_space);
            let mut left = maxsplit;
            while left != 0 && !rest.is_empty() {
                let Some((i, c)) = rest.char_indices().rev().find(|&(_, c)| py_space(c)) else {
                    break;
                };
                parts.push(&rest[i + c.len_utf8()..]);
                rest = rest[..i].trim_end_matches(py_space);
                left -= 1;
            }
            if !rest.is_empty() {
                parts.push(rest);
            }
            parts
        }
    };
    parts.reverse();
    Ok(Value::from(
        parts.into_iter().map(Value::from).collect::<Vec<_>>(),
    ))
}

/// Python's `str.zfill(width)`: zeros after a leading sign up to `width` characters.
fn py_zfill(s: &str, width: &Value) -> Result<String, Error> {
    let width = width
        .as_i64()
        .ok_or_else(|| invalid("zfill: width must be an integer"))?;
    let len = s.chars().count() as i64;
    if len >= width {
        return Ok(s.to_string());
    }
    let zeros = "0".repeat((width - len) as usize);
    Ok(match s.strip_prefix(['+', '-']) {
        Some(rest) => format!("{}{zeros}{rest}", &s[..1]),
        None => format!("{zeros}{s}"),
    })
}

/// Jinja2's `center(value, width=80)`: Python's `str.center`, the odd space on the left when
/// both the margin and the width are odd.
pub(super) fn py_center(s: std::borrow::Cow<'_, str>, width: Option<i64>) -> String {
    let width = width.unwrap_or(80);
    let len = s.chars().count() as i64;
    if width <= len {
        return s.into_owned();
    }
    let margin = width - len;
    let left = margin / 2 + (margin & width & 1);
    format!(
        "{}{s}{}",
        " ".repeat(left as usize),
        " ".repeat((margin - left) as usize)
    )
}

/// Jinja2's `truncate(s, length=255, killwords=False, end='...', leeway=5)`: text within
/// `length + leeway` characters is kept; otherwise it is cut to `length - len(end)`
/// characters, back to the last space unless `killwords`, and `end` appended.
pub(super) fn py_truncate(
    s: std::borrow::Cow<'_, str>,
    args: Rest<Value>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let [length, killwords, end, leeway] = super::filter_args(
        "truncate",
        ["length", "killwords", "end", "leeway"],
        &args,
        &kwargs,
    )?;
    let length = length
        .map_or(Some(255), |v| v.as_i64())
        .ok_or_else(|| invalid("truncate: length must be an integer"))?;
    let killwords = killwords.is_some_and(|v| v.is_true());
    let end = end
        .map_or(Some("...".to_string()), |v| v.as_str().map(str::to_string))
        .ok_or_else(|| invalid("truncate: end must be a string"))?;
    let leeway = leeway
        .filter(|v| !v.is_none())
        .map_or(Some(5), |v| v.as_i64())
        .ok_or_else(|| invalid("truncate: leeway must be an integer"))?;
    let end_len = end.chars().count() as i64;
    if length < end_len {
        return Err(invalid("expected length >= len(end)"));
    }
    if leeway < 0 {
        return Err(invalid("expected leeway >= 0"));
    }
    if s.chars().count() as i64 <= length + leeway {
        return Ok(s.into_owned());
    }
    let keep = (length - end_len) as usize;
    let cut = s.char_indices().nth(keep).map_or(s.len(), |(i, _)| i);
    let head = &s[..cut];
    let head = if killwords {
        head
    } else {
        head.rsplit_once(' ').map_or(head, |(before, _)| before)
    };
    Ok(format!("{head}{end}"))
}

/// Python's `str.splitlines()`: lines end at `\n`, `\r`, `\r\n`, `\v`, `\f`, U+001C–U+001E,
/// U+0085, U+2028 and U+2029; a last line break does not start an empty line.
fn py_splitlines(s: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        ) {
            continue;
        }
        lines.push(&s[start..i]);
        start = i + c.len_utf8();
        if c == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n') {
            chars.next();
            start += 1;
        }
    }
    if start < s.len() {
        lines.push(&s[start..]);
    }
    lines
}

/// Jinja2's `indent(s, width=4, first=False, blank=False)`, `width` a count or a string. As
/// Jinja2 does, a newline is appended before Python's `splitlines` (so a trailing line break
/// survives), and the lines are joined with `\n` whatever broke them.
pub(super) fn py_indent(
    s: std::borrow::Cow<'_, str>,
    args: Rest<Value>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let [width, first, blank] =
        super::filter_args("indent", ["width", "first", "blank"], &args, &kwargs)?;
    let indention = match width {
        None => "    ".to_string(),
        Some(w) => match (w.as_str(), w.as_i64()) {
            (Some(text), _) => text.to_string(),
            (None, Some(n)) => " ".repeat(n.max(0) as usize),
            _ => return Err(invalid("indent: width must be an integer or a string")),
        },
    };
    let first = first.is_some_and(|v| v.is_true());
    let blank = blank.is_some_and(|v| v.is_true());
    let text = format!("{s}\n");
    let lines = py_splitlines(&text);
    let mut out = String::with_capacity(text.len() + lines.len() * indention.len());
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
            if blank || !line.is_empty() {
                out.push_str(&indention);
            }
        }
        out.push_str(line);
    }
    if first {
        out.insert_str(0, &indention);
    }
    Ok(out)
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
pub(super) fn py_trim(
    s: std::borrow::Cow<'_, str>,
    chars: Option<std::borrow::Cow<'_, str>>,
) -> String {
    match chars {
        Some(chars) => s.trim_matches(|c| chars.contains(c)).to_string(),
        None => s.trim_matches(py_space).to_string(),
    }
}

/// Jinja2's `title`: the text split before runs of whitespace (Python's), `-`, `(`, `{`, `[`
/// and `<`; each piece's first character upper-cased and the rest lower-cased, each piece on
/// its own (so a final sigma is judged within the piece, as `str.lower()` of the slice does).
pub(super) fn py_title(s: std::borrow::Cow<'_, str>) -> String {
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

/// Jinja2's `escape`/`e` (markupsafe): `&`, `<`, `>`, `"` and `'` become `&amp;`, `&lt;`,
/// `&gt;`, `&#34;` and `&#39;`, and nothing else changes. minijinja spells the quotes
/// `&quot;`/`&#x27;` and escapes `/` too. Values that are not strings are escaped as Jinja2
/// prints them; text already marked safe passes through.
pub(super) fn py_escape(value: &Value) -> Value {
    if value.is_safe() {
        return value.clone();
    }
    let text = super::py_print::py_string(value.clone());
    let text = text.as_str().unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    Value::from_safe_string(out)
}

#[cfg(test)]
mod tests {
    use super::super::tests::render;
    use minijinja::Error;

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

    /// Jinja2 3.1 (markupsafe) output.
    #[test]
    fn escape_is_markupsafe() -> Result<(), Error> {
        let ctx = serde_json::json!({"s": "<a href='x'>&\"/</a>", "n": null});
        assert_eq!(
            render(
                "{{ s | e }}|{{ s | escape }}|{{ (s | e) ~ '<' }}|{{ 5 | e }}|{{ n | e }}|{{ 1.5e-5 | e }}|{{ s | e | e }}",
                ctx
            )?,
            "&lt;a href=&#39;x&#39;&gt;&amp;&#34;/&lt;/a&gt;|&lt;a href=&#39;x&#39;&gt;&amp;&#34;/&lt;/a&gt;|&lt;a href=&#39;x&#39;&gt;&amp;&#34;/&lt;/a&gt;<|5|None|1.5e-05|&lt;a href=&#39;x&#39;&gt;&amp;&#34;/&lt;/a&gt;"
        );
        Ok(())
    }

    /// Jinja2 3.1 (Python 3.11) output.
    #[test]
    fn rsplit_zfill_center_truncate_as_jinja2() -> Result<(), Error> {
        let ctx = serde_json::json!({"s": "  a b\tca  "});
        assert_eq!(
            render(
                "{{ s.rsplit() }}|{{ s.rsplit(None, 1) }}|{{ s.rsplit(' ', 1) }}|{{ s.rsplit('a') }}|{{ s.zfill(12) }}|{{ '-3'.zfill(4) }}|{{ s | center(20) }}|{{ s | truncate(8) }}|{{ s | truncate(8, true) }}|{{ s | truncate(8, false, '..', 0) }}|{{ 'aaa'.rsplit('aa') }}",
                ctx
            )?,
            "['a', 'b', 'ca']|['  a b', 'ca']|['  a b\\tca ', '']|['  ', ' b\\tc', '  ']|00  a b\tca  |-003|       a b\tca       |  a b\tca  |  a b\tca  |  a..|['a', '']"
        );
        Ok(())
    }

    /// Jinja2 3.1 (Python 3.11) output: trailing line breaks and every Python line boundary.
    #[test]
    fn indent_and_splitlines_as_jinja2() -> Result<(), Error> {
        for (src, s, want) in [
            ("{{ s | indent(2) }}", "a\nb\n\nc", "a\n  b\n\n  c"),
            (
                "{{ s | indent(2, first=true) }}",
                "a\nb\n\nc\n",
                "  a\n  b\n\n  c\n",
            ),
            (
                "{{ s | indent(2, blank=true) }}",
                "a\nb\n\nc",
                "a\n  b\n  \n  c",
            ),
            (
                "{{ s | indent(2) }}",
                "a\r\nb\rc\u{2028}d\u{85}e\u{1c}f",
                "a\n  b\n  c\n  d\n  e\n  f",
            ),
            ("{{ s | indent }}", "x\ny", "x\n    y"),
            (
                "{{ s | indent(2, true, true) }}",
                "\n\na\n",
                "  \n  \n  a\n  ",
            ),
            (
                "{{ s.splitlines() }}",
                "a\r\nb\rc\u{2028}d\u{85}e\u{1c}f\n",
                "['a', 'b', 'c', 'd', 'e', 'f']",
            ),
        ] {
            assert_eq!(
                render(src, serde_json::json!({ "s": s }))?,
                want,
                "{src} {s:?}"
            );
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
}
