//! How Jinja2 prints values: Python's `str()` of floats, and Python's `repr` inside lists and
//! dicts.

use super::super::pyjson;
use minijinja::value::{Value, ValueKind};
use minijinja::{Error, Output, State};

/// Writes `{{ value }}` as Jinja2 writes it (`str(value)`). minijinja already prints like
/// Python (`True`, `None`, `['a', 1]`) except in two places. Python's `str(float)` is `repr`,
/// with an exponent below 1e-4 and from 1e16 (`1e-05`, `1e+16`); minijinja writes `0.00001`
/// and `10000000000000000.0`, and `1e-5` inside a list. And Python's `repr` of a string in a
/// list or dict escapes every non-printable character (`'\u200d'` for the joiner inside emoji,
/// `'\xa0'`); minijinja only escapes controls. Floats, and lists and dicts holding either,
/// are written here; everything else as minijinja does. (`~` still uses minijinja's own
/// conversion: a formatter only sees what is printed, and `|string` is [`py_string`].)
pub(super) fn py_formatter(
    out: &mut Output,
    state: &mut State,
    value: &Value,
) -> Result<(), Error> {
    match py_str(value) {
        Some(s) => out.write_str(&s).map_err(Error::from),
        None => minijinja::escape_formatter(out, state, value),
    }
}

/// Jinja2's `string` filter (`str(value)`), with Python's printing of floats and
/// containers (see [`py_formatter`]); strings pass through unchanged.
pub(super) fn py_string(value: Value) -> Value {
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
    if !(is_float(v) || (is_container(v) && differs_in_repr(v, &mut Budget::new()))) {
        return None;
    }
    let mut s = String::new();
    py_repr(&mut s, v, true, &mut Budget::new());
    Some(s)
}

/// How deep and how much of a value the walks below may visit, as minijinja's own
/// formatting is bounded (vendor/minijinja, `value/fmt_guard.rs`): a value that holds itself,
/// one nested past any real template's depth, or a list doubled by reference would otherwise
/// recurse until the stack overflows or print without end. Past the budget a walk stops:
/// [`differs_in_repr`] answers no (minijinja's bounded formatting prints the value), and
/// [`py_repr`] writes `...`, as Python's repr writes a container it is already printing.
struct Budget {
    depth: usize,
    visits: u64,
    bytes: u64,
}

impl Budget {
    const MAX_DEPTH: usize = pyjson::MAX_DEPTH;
    const MAX_VISITS: u64 = 1 << 20;
    const MAX_BYTES: u64 = pyjson::MAX_BYTES as u64;

    fn new() -> Self {
        Budget {
            depth: 0,
            visits: 0,
            bytes: 0,
        }
    }

    /// Enters a container, or `false` when the walk must stop here.
    fn enter(&mut self) -> bool {
        if self.depth >= Self::MAX_DEPTH || self.visits >= Self::MAX_VISITS {
            return false;
        }
        self.depth += 1;
        self.visits += 1;
        true
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }
}

fn is_float(v: &Value) -> bool {
    v.is_number() && !v.is_integer()
}

fn is_container(v: &Value) -> bool {
    matches!(v.kind(), ValueKind::Seq | ValueKind::Map)
}

/// Whether minijinja's `repr` of `v` differs from Python's: `v` holds a float, or a string
/// with a non-printable character beyond ASCII (minijinja escapes only controls).
fn differs_in_repr(v: &Value, budget: &mut Budget) -> bool {
    match v.kind() {
        ValueKind::Seq | ValueKind::Map if !budget.enter() => false,
        ValueKind::Seq => {
            let differs = v
                .try_iter()
                .is_ok_and(|mut it| it.any(|x| differs_in_repr(&x, budget)));
            budget.leave();
            differs
        }
        ValueKind::Map => {
            let differs = v.try_iter().is_ok_and(|mut it| {
                it.any(|k| {
                    differs_in_repr(&k, budget)
                        || v.get_item(&k).is_ok_and(|x| differs_in_repr(&x, budget))
                })
            });
            budget.leave();
            differs
        }
        ValueKind::String => v
            .as_str()
            .is_some_and(|s| s.chars().any(|c| !c.is_ascii() && !py_printable(c))),
        _ => is_float(v),
    }
}

/// Python's `str` (`top`) or `repr` (inside a container) of `v`.
fn py_repr(out: &mut String, v: &Value, top: bool, budget: &mut Budget) {
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
        ValueKind::Seq | ValueKind::Map if !budget.enter() => out.push_str("..."),
        ValueKind::Seq => {
            out.push('[');
            for (i, x) in v.try_iter().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_repr(out, &x, false, budget);
            }
            out.push(']');
            budget.leave();
        }
        ValueKind::Map => {
            out.push('{');
            for (i, k) in v.try_iter().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_repr(out, &k, false, budget);
                out.push_str(": ");
                py_repr(out, &v.get_item(&k).unwrap_or_default(), false, budget);
            }
            out.push('}');
            budget.leave();
        }
        ValueKind::String if !top => {
            let text = v.as_str().unwrap_or_default();
            budget.bytes = budget.bytes.saturating_add(text.len() as u64);
            if budget.bytes > Budget::MAX_BYTES {
                out.push_str("...");
            } else {
                py_str_repr(out, text);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::super::tests::render;
    use minijinja::Error;

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
}
