//! The regex-text helpers of vLLM 0.33's `vllm/parser/response_template_grammar.py`: reading a
//! delimiter pattern as the literal strings it matches (`_literals`), splitting a named group
//! out of a pattern (`_split_group`), and escaping text for the regexes a structural tag holds
//! (`_escape`, `_class_escape`).

/// Stands for `^` while a pattern is expanded (vLLM's `_START`).
const START: char = '\0';
/// Precedes a final lookahead's text while a pattern is expanded (vLLM's `_AHEAD`).
const AHEAD: char = '\u{1}';
/// vLLM's `_MAX_LITERALS`: the most strings one pattern expands to.
const MAX_LITERALS: usize = 16;

/// vLLM's `_REGEX_META`: the characters a regex reads as syntax.
fn meta(c: char) -> bool {
    ".^$*+?{}[]\\|()".contains(c)
}

/// vLLM's `_escape`: `text` as a regex matching it, each syntax character after a backslash.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    for c in text.chars() {
        if meta(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// vLLM's `_class_escape`: one character as written inside a character class (whitespace as
/// its escape, since XGrammar's classes take whitespace only so).
pub(crate) fn class_escape(c: char) -> String {
    match c {
        ' ' => " ".into(),
        '\t' => r"\t".into(),
        '\n' => r"\n".into(),
        '\r' => r"\r".into(),
        '\\' | ']' | '^' | '-' | '[' => format!("\\{c}"),
        c => c.to_string(),
    }
}

/// vLLM's `_literals` (without its `lookahead`, which only `xml-inline` values use): the strings
/// `pattern` matches when it is literal text, escapes, `?`, `(?:…|…)` groups and `^` (kept only
/// with `message_start`, where it is dropped), at most 16 of them; `None` for anything else.
pub(crate) fn literals(pattern: &str, message_start: bool) -> Option<Vec<String>> {
    let chars: Vec<char> = pattern.chars().collect();
    let (literals, index) = alternatives(&chars, 0);
    let literals = literals?;
    if index != chars.len() || literals.iter().any(|l| l.contains(AHEAD)) {
        return None;
    }
    if !message_start {
        return (!literals.iter().any(|l| l.contains(START))).then_some(literals);
    }
    Some(
        literals
            .into_iter()
            .filter(|l| !l.chars().skip(1).any(|c| c == START) && l != "\0")
            .map(|l| l.strip_prefix(START).map(str::to_string).unwrap_or(l))
            .collect(),
    )
}

/// vLLM's `_alternatives`: `|`-separated branches from `index`, deduplicated in order.
fn alternatives(p: &[char], mut index: usize) -> (Option<Vec<String>>, usize) {
    let mut out: Vec<String> = Vec::new();
    loop {
        let (branch, next) = concatenation(p, index);
        index = next;
        let Some(branch) = branch else {
            return (None, index);
        };
        out.extend(branch);
        if p.get(index) != Some(&'|') {
            break;
        }
        index += 1;
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|l| seen.insert(l.clone()));
    ((out.len() <= MAX_LITERALS).then_some(out), index)
}

/// vLLM's `_concatenation`: one branch, up to `|` or `)`.
fn concatenation(p: &[char], mut index: usize) -> (Option<Vec<String>>, usize) {
    let mut literals = vec![String::new()];
    while index < p.len() && !matches!(p[index], '|' | ')') {
        let starts = |s: &str| {
            s.chars()
                .enumerate()
                .all(|(i, c)| p.get(index + i) == Some(&c))
        };
        let mut atom: Vec<String>;
        if starts("(?:") || starts("(?=") {
            let ahead = p[index + 2] == '=';
            let (inner, next) = alternatives(p, index + 3);
            index = next;
            match inner {
                Some(inner) if p.get(index) == Some(&')') => atom = inner,
                _ => return (None, index),
            }
            index += 1;
            if ahead {
                atom = atom.into_iter().map(|l| format!("{AHEAD}{l}")).collect();
            }
        } else if p[index] == '\\' && index + 1 < p.len() {
            let escaped = p[index + 1];
            let c = match escaped {
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                c if c.is_alphanumeric() => return (None, index),
                c => c,
            };
            atom = vec![c.to_string()];
            index += 2;
        } else if p[index] == '^' {
            atom = vec![START.to_string()];
            index += 1;
        } else if meta(p[index]) {
            return (None, index);
        } else {
            atom = vec![p[index].to_string()];
            index += 1;
        }
        if p.get(index) == Some(&'?') {
            atom.insert(0, String::new());
            index += 1;
        }
        // A lookahead reads as a literal only at the end of the pattern.
        if literals.iter().any(|l| l.contains(AHEAD)) {
            return (None, index);
        }
        literals = literals
            .iter()
            .flat_map(|prefix| atom.iter().map(move |suffix| format!("{prefix}{suffix}")))
            .collect();
        if literals.len() > MAX_LITERALS {
            return (None, index);
        }
    }
    (Some(literals), index)
}

/// vLLM's `_split_group`: `pattern` around its group `(?P<name>…)`: the text before it, the
/// group's body and the text after it.
pub(crate) fn split_group<'a>(pattern: &'a str, name: &str) -> Option<(&'a str, &'a str, &'a str)> {
    let opener = format!("(?P<{name}>");
    let start = pattern.find(&opener)?;
    let (mut depth, mut in_class) = (0usize, false);
    let mut iter = pattern[start..].char_indices().map(|(i, c)| (start + i, c));
    while let Some((index, c)) = iter.next() {
        if c == '\\' {
            iter.next();
            continue;
        }
        if in_class {
            in_class = c != ']';
        } else if c == '[' {
            in_class = true;
        } else if c == '(' {
            depth += 1;
        } else if c == ')' {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                let body = &pattern[start + opener.len()..index];
                return Some((&pattern[..start], body, &pattern[index + 1..]));
            }
        }
    }
    None
}

/// Python's `repr` of a string (for vLLM's `{name!r}` in its messages).
pub(crate) fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_vllms() {
        let l = |p: &str, start| literals(p, start);
        assert_eq!(
            l(r"<\|channel>final\n", false),
            Some(vec!["<|channel>final\n".into()])
        );
        assert_eq!(
            l(r"a(?:b|c)d?", false),
            Some(vec!["ab".into(), "abd".into(), "ac".into(), "acd".into()])
        );
        assert_eq!(l(r"<a>\s*", false), None);
        assert_eq!(l(r"(?P<name>\w+)", false), None);
        assert_eq!(l(r"(?:^|x)y", false), None);
        assert_eq!(l(r"(?:^|x)y", true), Some(vec!["y".into(), "xy".into()]));
        assert_eq!(l("a|a", false), Some(vec!["a".into()]));
        assert_eq!(l("a?b?c?d?e?", false), None);
    }

    #[test]
    fn split_group_and_escapes() {
        assert_eq!(
            split_group(r"<\|c>(?P<name>\w+).*?<m>", "name"),
            Some((r"<\|c>", r"\w+", ".*?<m>"))
        );
        assert_eq!(
            split_group(r"(?P<name>[)(]+)x", "name"),
            Some(("", "[)(]+", "x"))
        );
        assert_eq!(split_group("abc", "name"), None);
        assert_eq!(escape("a.b|c(d)-"), r"a\.b\|c\(d\)-");
        assert_eq!(class_escape('\n'), r"\n");
        assert_eq!(class_escape('-'), r"\-");
        assert_eq!(py_repr("get-weather"), "'get-weather'");
        assert_eq!(py_repr("it's"), "\"it's\"");
    }
}
