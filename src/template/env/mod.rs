//! The Hugging Face–compatible minijinja environment that chat templates run in.
//!
//! transformers compiles chat templates in a Jinja2 `ImmutableSandboxedEnvironment` with
//! `trim_blocks=True, lstrip_blocks=True`, the `loopcontrols` extension, and these extras
//! (`transformers/utils/chat_template_utils.py::_compile_jinja_template`):
//! * `tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)` = `json.dumps`;
//! * `raise_exception(message)` raises `TemplateError(message)`;
//! * `strftime_now(format)` = `datetime.now().strftime(format)`;
//! * `{% generation %}…{% endgeneration %}` marks assistant spans: a call block whose body
//!   is marked when the render asks for `return_assistant_tokens_mask` (`generation.rs`).
//!
//! We add `fromjson` (the inverse of `tojson`, used by some tool templates) and Python string
//! and dict methods (`.startswith`, `.split`, `.items()` …) from `minijinja_contrib::pycompat`.
//! Where minijinja reads whitespace its own way, the `trim` filter and the argument-less
//! `.strip()`, `.lstrip()`, `.rstrip()`, `.split()` and `.isspace()` are replaced with
//! Python's, whose whitespace (`str.isspace`) also takes in U+001C–U+001F.
//!
//! The `title` filter splits words as Jinja2 does, and `.title()` restarts words after every
//! non-letter as Python does; `int`, `float`, `iterable` and `sequence` are Jinja2's
//! (`py_types.rs`). Known differences left (none in the fixture templates; a differential run
//! against Jinja2 found them): `.title()` upper-cases letters whose title case differs (`ß` →
//! `SS`, Python `Ss`); `%` formatting and `pprint` differ or fail; the `wordcount` filter is
//! missing (Python's `\w` needs Unicode categories). `escape`, `center`, `truncate`, `indent`
//! and the `.rsplit()`, `.zfill()` and `.splitlines()` methods are Jinja2's and Python's
//! (`py_text.rs`).

pub mod generation;
mod py_print;
mod py_text;
mod py_types;

pub use generation::rewrite_generation_tags;
pub use py_text::py_space;

use super::pyjson::{self, DumpOptions};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, UndefinedBehavior};
use py_print::{py_formatter, py_string};
use py_text::{py_center, py_escape, py_indent, py_methods, py_title, py_trim, py_truncate};
use py_types::{is_iterable, is_sequence, py_float, py_int};

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
    env.add_filter("escape", py_escape);
    env.add_filter("e", py_escape);
    env.add_filter("center", py_center);
    env.add_filter("truncate", py_truncate);
    env.add_filter("indent", py_indent);
    env.add_filter("int", py_int);
    env.add_filter("float", py_float);
    env.add_test("iterable", is_iterable);
    env.add_test("sequence", is_sequence);
    env.add_filter("tojson", tojson);
    env.add_filter("fromjson", fromjson);
    env.add_function("raise_exception", raise_exception);
    env.add_function("strftime_now", strftime_now);
    env.add_function(generation::FUNCTION, generation::generation);
    Ok(env)
}
/// A filter's arguments as Jinja2 passes them: positionally in the order of `names`, or by
/// keyword. More positional arguments than names, or an unknown keyword, is an error.
fn filter_args<const N: usize>(
    filter: &str,
    names: [&str; N],
    args: &[Value],
    kwargs: &Kwargs,
) -> Result<[Option<Value>; N], Error> {
    if args.len() > N {
        return Err(Error::new(
            ErrorKind::TooManyArguments,
            format!("{filter} takes at most {N} arguments"),
        ));
    }
    let mut out: [Option<Value>; N] = std::array::from_fn(|_| None);
    for (i, name) in names.iter().enumerate() {
        let keyword: Option<Value> = kwargs.get(name)?;
        out[i] = args.get(i).cloned().or(keyword);
    }
    kwargs.assert_all_used()?;
    Ok(out)
}

/// `tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`, with the
/// arguments accepted positionally in that order as Jinja2 would pass them.
fn tojson(value: &Value, args: Rest<Value>, kwargs: Kwargs) -> Result<String, Error> {
    let [ensure_ascii, indent, separators, sort_keys] = filter_args(
        "tojson",
        ["ensure_ascii", "indent", "separators", "sort_keys"],
        &args,
        &kwargs,
    )?;
    let mut opts = DumpOptions::default();
    if let Some(v) = ensure_ascii {
        opts.ensure_ascii = v.is_true();
    }
    if let Some(v) = indent {
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
    if let Some(v) = separators {
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
    if let Some(v) = sort_keys {
        opts.sort_keys = v.is_true();
    }
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
pub(crate) fn strftime_now(format: &str) -> Result<String, Error> {
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
pub(crate) mod tests {
    use super::*;

    /// Renders `src` with `ctx` in the chat template environment.
    pub(crate) fn render(src: &str, ctx: serde_json::Value) -> Result<String, Error> {
        let mut env = new_environment(Some(100_000))?;
        env.add_template_owned("t", rewrite_generation_tags(src))?;
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
