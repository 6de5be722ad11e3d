//! Reading one MiniCPM5 `<function …>…</function>` block into its name and parameters, as
//! vLLM's `_parse_function_block` does: as XML first (Python's `xml.etree`, which vLLM 0.32
//! and 0.33 use when lxml is not installed), else by its regular expressions.
//!
//! * XML: the block must be well-formed. A parameter is a `<param>` child of `<function>` (or
//!   of an `<arguments>` child, when `<function>` has none), its name the `name` attribute,
//!   its value the text before its first child element, entities decoded and CDATA kept as
//!   written, whitespace kept.
//! * Otherwise: the name is the first `<function name="…">`'s, a parameter each
//!   `<param name="…">…</param>`; a value wrapped whole in CDATA is unwrapped, any other is
//!   stripped; a `<param>` with no name makes the block invalid.
//!
//! Only the XML this reads is supported: elements, attributes, text, CDATA and the five named
//! entities and character references. Anything else (comments, processing instructions,
//! other entities) is read the second way, where `xml.etree` might have read it as XML.

use crate::pystr::py_space;

/// A parameter: its name (`None`: written without one) and its value text.
pub(super) type Param = (Option<String>, String);

struct Elem {
    name: String,
    attrs: Vec<(String, String)>,
    /// The text before the first child element.
    text: String,
    children: Vec<Elem>,
}

impl Elem {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Xml<'a> {
    s: &'a str,
    i: usize,
}

fn name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

impl<'a> Xml<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.i..]
    }

    fn ws(&mut self) {
        let r = self.rest();
        self.i += r.len() - r.trim_start_matches([' ', '\t', '\n', '\r']).len();
    }

    fn name(&mut self) -> Option<String> {
        let r = self.rest();
        let n = r.find(|c: char| !name_char(c)).unwrap_or(r.len());
        let name = &r[..n];
        let first = name.chars().next()?;
        if first.is_ascii_digit() || matches!(first, '-' | '.') {
            return None;
        }
        self.i += n;
        Some(name.to_string())
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.i += s.len();
            true
        } else {
            false
        }
    }

    /// An element from its `<`.
    fn element(&mut self, depth: usize) -> Option<Elem> {
        if depth > 64 || !self.eat("<") {
            return None;
        }
        let name = self.name()?;
        let mut attrs: Vec<(String, String)> = Vec::new();
        loop {
            let before = self.i;
            self.ws();
            if self.eat("/>") {
                return Some(Elem {
                    name,
                    attrs,
                    text: String::new(),
                    children: Vec::new(),
                });
            }
            if self.eat(">") {
                break;
            }
            if self.i == before {
                return None;
            }
            let key = self.name()?;
            self.ws();
            if !self.eat("=") {
                return None;
            }
            self.ws();
            let quote = self
                .rest()
                .chars()
                .next()
                .filter(|c| *c == '"' || *c == '\'')?;
            self.i += 1;
            let end = self.rest().find(quote)?;
            let raw = &self.rest()[..end];
            if raw.contains('<') || attrs.iter().any(|(k, _)| *k == key) {
                return None;
            }
            let value = decode(raw)?;
            self.i += end + 1;
            attrs.push((key, value));
        }
        let mut text = String::new();
        let mut children = Vec::new();
        loop {
            if self.eat("</") {
                let close = self.name()?;
                self.ws();
                return (close == name && self.eat(">")).then_some(Elem {
                    name,
                    attrs,
                    text,
                    children,
                });
            }
            if self.eat("<![CDATA[") {
                let end = self.rest().find("]]>")?;
                if children.is_empty() {
                    text.push_str(&self.rest()[..end]);
                }
                self.i += end + 3;
                continue;
            }
            if self.rest().starts_with("<!") || self.rest().starts_with("<?") {
                return None;
            }
            if self.rest().starts_with('<') {
                children.push(self.element(depth + 1)?);
                continue;
            }
            let r = self.rest();
            let n = r.find('<')?;
            if children.is_empty() {
                text.push_str(&decode(&r[..n])?);
            } else {
                decode(&r[..n])?;
            }
            self.i += n;
        }
    }
}

/// Text with its entity and character references decoded; `None` for a reference XML does not
/// define (or a bare `&`).
fn decode(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let end = after.find(';')?;
        let entity = &after[..end];
        let c = match entity {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = if let Some(hex) = entity.strip_prefix("#x") {
                    u32::from_str_radix(hex, 16).ok()?
                } else {
                    entity.strip_prefix('#')?.parse::<u32>().ok()?
                };
                char::from_u32(code).filter(|c| *c != '\0')?
            }
        };
        out.push(c);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// The block read as XML: the function's name (trimmed) and its parameters; `None` when it
/// is not well-formed or its name is empty.
fn as_xml(block: &str) -> Option<(String, Vec<Param>)> {
    let mut x = Xml { s: block, i: 0 };
    let root = x.element(0)?;
    x.ws();
    if x.i != block.len() || root.name != "function" {
        return None;
    }
    let name = root.attr("name").unwrap_or("").trim().to_string();
    if name.is_empty() {
        return None;
    }
    let mut params: Vec<&Elem> = root.children.iter().filter(|c| c.name == "param").collect();
    if params.is_empty() {
        if let Some(args) = root.children.iter().find(|c| c.name == "arguments") {
            params = args.children.iter().filter(|c| c.name == "param").collect();
        }
    }
    let params = params
        .into_iter()
        .map(|p| {
            let key = p.attr("name").filter(|k| !k.is_empty()).map(str::to_string);
            (key, p.text.clone())
        })
        .collect();
    Some((name, params))
}

/// `name=` then a quoted value (either quote) of at least one character without quotes.
fn quoted_name(s: &str) -> Option<(&str, &str)> {
    let rest = s.strip_prefix("name=")?;
    let q = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let end = rest[1..].find(['"', '\''])?;
    if end == 0 {
        return None;
    }
    let _ = q;
    Some((&rest[1..1 + end], &rest[2 + end..]))
}

/// Python's `\s+`, at the start of `s`: the rest after it, if there is any.
fn after_space(s: &str) -> Option<&str> {
    let rest = s.trim_start_matches(char::is_whitespace);
    (rest.len() < s.len()).then_some(rest)
}

/// The block read by vLLM's regular expressions.
fn as_text(block: &str) -> (Option<String>, Vec<Param>, bool) {
    let mut name = None;
    for (at, _) in block.match_indices("<function") {
        let head = &block[at + "<function".len()..];
        let Some((n, rest)) = after_space(head).and_then(quoted_name) else {
            continue;
        };
        if rest.contains('>') {
            name = Some(n.trim_matches(py_space).to_string());
            break;
        }
    }
    let mut missing_name = false;
    let mut params = Vec::new();
    let mut pos = 0;
    while let Some(at) = block[pos..].find("<param") {
        let start = pos + at;
        let head = &block[start + "<param".len()..];
        let tag_end = head.find('>');
        if let Some(e) = tag_end {
            let inside = &head[..e];
            // `<param` with no `name=` as a whole word before its `>`.
            let named = inside.match_indices("name=").any(|(i, _)| {
                inside[..i]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            });
            if !named {
                missing_name = true;
            }
        }
        let found = after_space(head)
            .and_then(quoted_name)
            .and_then(|(k, rest)| {
                let body = rest.strip_prefix('>')?;
                let end = body.find("</param>")?;
                Some((
                    k,
                    &body[..end],
                    block.len() - body.len() + end + "</param>".len(),
                ))
            });
        match found {
            Some((k, v, next)) => {
                let v = match v
                    .strip_prefix("<![CDATA[")
                    .and_then(|v| v.strip_suffix("]]>"))
                {
                    Some(inner) => inner,
                    None => v.trim_matches(py_space),
                };
                params.push((Some(k.trim_matches(py_space).to_string()), v.to_string()));
                pos = next;
            }
            None => pos = start + "<param".len(),
        }
    }
    (name, params, missing_name)
}

/// The block's name and parameters; `None` when neither reading finds a name, or a
/// parameter without one makes the regular-expression reading invalid.
pub(super) fn read_block(block: &str) -> Option<(String, Vec<Param>)> {
    if let Some(found) = as_xml(block) {
        return Some(found);
    }
    let (name, params, missing_name) = as_text(block);
    let name = name.filter(|n| !n.is_empty())?;
    if missing_name {
        return None;
    }
    Some((name, params))
}
