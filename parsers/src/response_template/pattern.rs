//! The regexes llm-render runs as delimiters (and as xml-inline's tag pieces): a pattern is read
//! into [`Atom`]s, or refused, so that a template is never run differently from vLLM's `regex`.

use super::template::Delim;
pub(crate) use super::word::word;
use serde::{Deserialize, Serialize};

/// One piece of a regex delimiter llm-render runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Atom {
    Lit(String),
    /// `\s*` (`min` 0) or `\s+` (`min` 1).
    Space {
        min: usize,
    },
    /// `\w+`, captured by `name` for `(?P<name>\w+)`.
    Word {
        name: Option<String>,
    },
    /// `.*?` (DOTALL): any text, as little as the literal after it allows.
    Lazy,
}

/// Python `regex`'s `\s` for a str pattern: Unicode's White_Space.
pub(crate) fn space(c: char) -> bool {
    c.is_whitespace()
}

impl Atom {
    /// Whether a run atom's class holds `c`.
    pub(crate) fn holds(&self, c: char) -> bool {
        match self {
            Atom::Lit(_) => false,
            Atom::Space { .. } => space(c),
            Atom::Word { .. } => word(c),
            Atom::Lazy => true,
        }
    }
}

/// The regexes llm-render runs: escaped literals, `\s*`, `\s+`, `\w+`, `(?P<name>\w+)` and
/// `.*?` in a row, starting with a literal, each run followed by a literal that cannot continue
/// it or by a run of the other class, each `.*?` by a literal (so each match is found without
/// backtracking): a literal (Gemma's `<\|channel>final\n`), a literal and a name (Gemma 4's
/// `<\|tool_call>call:(?P<name>\w+)`), or longer (Qwen3's `<tool_call>\s*<function=(?P<name>\w+)>`,
/// gpt-oss's `<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>`).
pub(crate) fn pattern_delim(scope: &str, key: &str, pattern: &str) -> Result<Delim, String> {
    let refuse = || {
        format!(
            "{scope}: {key} {pattern:?} is not supported by llm-render's hf parser (it runs \
             literals, \\s*, \\s+, \\w+, (?P<name>\\w+) and .*? in a row, starting with a \
             literal, each run ended by what cannot continue it, each .*? by a literal)"
        )
    };
    let atoms = pattern_atoms(pattern).ok_or_else(refuse)?;
    // A `.*?` takes the first occurrence of the literal after it (a run before it keeps all
    // it can, as the regex's first try succeeds wherever any does).
    let lazy_ok = atoms
        .iter()
        .enumerate()
        .all(|(i, a)| *a != Atom::Lazy || matches!(atoms.get(i + 1), Some(Atom::Lit(_))));
    let deterministic = lazy_ok
        && matches!(atoms.first(), Some(Atom::Lit(_)))
        && atoms.windows(2).all(|w| match (&w[0], &w[1]) {
            (Atom::Lit(_), _) | (_, Atom::Lazy) | (Atom::Lazy, Atom::Lit(_)) => true,
            (run, Atom::Lit(l)) => l.chars().next().is_some_and(|c| !run.holds(c)),
            (Atom::Space { .. }, Atom::Word { .. }) | (Atom::Word { .. }, Atom::Space { .. }) => {
                true
            }
            _ => false,
        });
    if !deterministic {
        return Err(refuse());
    }
    match atoms.as_slice() {
        [Atom::Lit(lit)] => Ok(Delim::Pattern(lit.clone())),
        [Atom::Lit(lit), Atom::Word { name }] => Ok(Delim::Word {
            lit: lit.clone(),
            group: name.clone(),
        }),
        _ => Ok(Delim::Seq(atoms)),
    }
}

/// A pattern's pieces, literals joined; `None` for any other regex syntax.
pub(crate) fn pattern_atoms(pattern: &str) -> Option<Vec<Atom>> {
    let mut atoms: Vec<Atom> = Vec::new();
    let push_char = |atoms: &mut Vec<Atom>, c: char| match atoms.last_mut() {
        Some(Atom::Lit(l)) => l.push(c),
        _ => atoms.push(Atom::Lit(c.to_string())),
    };
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix(r"\s*") {
            atoms.push(Atom::Space { min: 0 });
            rest = r;
        } else if let Some(r) = rest.strip_prefix(r"\s+") {
            atoms.push(Atom::Space { min: 1 });
            rest = r;
        } else if let Some(r) = rest.strip_prefix(r"\w+") {
            atoms.push(Atom::Word { name: None });
            rest = r;
        } else if let Some(r) = rest.strip_prefix(".*?") {
            atoms.push(Atom::Lazy);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("(?P<") {
            let (name, r) = r.split_once(r">\w+)")?;
            let valid = !name.is_empty()
                && name.chars().all(word)
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if !valid {
                return None;
            }
            atoms.push(Atom::Word {
                name: Some(name.to_string()),
            });
            rest = r;
        } else if c == '\\' {
            let mut chars = rest[1..].chars();
            let e = chars.next()?;
            match e {
                'n' => push_char(&mut atoms, '\n'),
                't' => push_char(&mut atoms, '\t'),
                'r' => push_char(&mut atoms, '\r'),
                e if e.is_ascii_punctuation() || e == ' ' => push_char(&mut atoms, e),
                _ => return None,
            }
            rest = chars.as_str();
        } else if ".^$*+?{}[]|()".contains(c) {
            return None;
        } else {
            push_char(&mut atoms, c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Some(atoms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_llm_render_runs_and_refuses() {
        let d = |p: &str| pattern_delim("f", "open_pattern", p);
        assert_eq!(
            d(r"<\|tool_call>call:(?P<name>\w+)").unwrap(),
            Delim::Word {
                lit: "<|tool_call>call:".into(),
                group: Some("name".into())
            }
        );
        assert_eq!(
            d(r"<\|channel>final\n").unwrap(),
            Delim::Pattern("<|channel>final\n".into())
        );
        assert_eq!(
            d(r"<tool_call>\s*<function=(?P<name>\w+)>").unwrap(),
            Delim::Seq(vec![
                Atom::Lit("<tool_call>".into()),
                Atom::Space { min: 0 },
                Atom::Lit("<function=".into()),
                Atom::Word {
                    name: Some("name".into())
                },
                Atom::Lit(">".into()),
            ])
        );
        for bad in [
            r"(?:^|<think>\s*)",
            r"\n?</response>",
            r"a.*b",
            r"<a>.*?",
            r"<a>.*?\w+",
            r"(?P<1x>\w+)",
            // Runs a regex would backtrack over, or that start a match.
            r"<a>\w+b",
            r"<a>\s*\s+<b>",
            r"<a>\s* <b>",
            r"\s*<a>",
            r"<a>\d+",
        ] {
            assert!(d(bad).is_err(), "{bad}");
        }
    }
}
