//! Whether XGrammar compiles a JSON schema or a regex, which vLLM's `beam` grammar asks
//! XGrammar itself (`_json_compiles`: `Grammar.from_json_schema`; `_xgrammar_supports`:
//! `validate_xgrammar_grammar`). llm-render has no XGrammar, so it answers only where it knows
//! XGrammar's answer (checked against XGrammar 0.1.x as vLLM 0.33 ships it): schemas of the
//! common keywords, regexes of the common syntax. Anything else is [`Verdict::Unknown`], which
//! the caller refuses rather than guess.

use serde_json::{json, Value};

/// XGrammar's answer, as far as llm-render knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Compiles,
    Fails,
    Unknown,
}

impl Verdict {
    /// Both parts compile: a failure decides, else anything unknown.
    fn and(self, other: Verdict) -> Verdict {
        use Verdict::*;
        match (self, other) {
            (Fails, _) | (_, Fails) => Fails,
            (Unknown, _) | (_, Unknown) => Unknown,
            _ => Compiles,
        }
    }
}

/// Keywords that describe a schema without constraining it.
const ANNOTATIONS: [&str; 8] = [
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "$comment",
    "$schema",
    "$id",
];
const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "null", "object", "array",
];

/// `Grammar.from_json_schema(json.dumps(schema))` succeeds. `output`: a request's own
/// constraint, which vLLM also holds to `has_xgrammar_unsupported_json_features`.
pub(crate) fn json_schema(schema: &Value, output: bool) -> Verdict {
    let mut walk = Walk {
        root: schema,
        depth: 0,
        refs: Vec::new(),
    };
    let verdict = walk.schema(schema, Place::Top);
    if output {
        unsupported(schema, 0).and(verdict)
    } else {
        verdict
    }
}

/// The formats vLLM lets a request's string schema use (`STRING_SUPPORTED_FORMATS`).
const STRING_FORMATS: [&str; 14] = [
    "email",
    "date",
    "time",
    "date-time",
    "duration",
    "ipv4",
    "ipv6",
    "hostname",
    "uuid",
    "uri",
    "uri-reference",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
];

/// vLLM's `has_xgrammar_unsupported_json_features` over every object nested in `schema`:
/// `Fails` where it finds one, `Unknown` for `propertyNames`.
fn unsupported(schema: &Value, depth: usize) -> Verdict {
    use Verdict::*;
    if depth > 64 {
        return Unknown;
    }
    let items: Box<dyn Iterator<Item = &Value>> = match schema {
        Value::Object(map) => {
            let types: Vec<&str> = match map.get("type") {
                Some(Value::String(t)) => vec![t.as_str()],
                Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            let has = |t: &str| types.contains(&t);
            let key = |k: &str| map.contains_key(k);
            let bounded =
                (key("pattern") || key("format")) && (key("minLength") || key("maxLength"));
            let format_ok = map
                .get("format")
                .is_none_or(|f| f.as_str().is_some_and(|f| STRING_FORMATS.contains(&f)));
            let all_of = map
                .get("allOf")
                .and_then(Value::as_array)
                .is_some_and(|a| a.len() >= 2);
            let pattern_properties = map
                .get("patternProperties")
                .and_then(Value::as_object)
                .is_some_and(|p| key("properties") || p.len() > 1);
            if ((has("integer") || has("number")) && key("multipleOf"))
                || (has("array")
                    && ["uniqueItems", "contains", "minContains", "maxContains"]
                        .iter()
                        .any(|k| key(k)))
                || (has("string") && (!format_ok || bounded))
                || (has("object") && pattern_properties)
                || all_of
            {
                return Fails;
            }
            if has("object") && key("propertyNames") {
                return Unknown;
            }
            Box::new(map.values())
        }
        Value::Array(a) => Box::new(a.iter()),
        _ => return Compiles,
    };
    items
        .filter(|v| v.is_object() || v.is_array())
        .fold(Compiles, |acc, v| acc.and(unsupported(v, depth + 1)))
}

#[derive(Clone, Copy, PartialEq)]
enum Place {
    Top,
    Property,
    Items,
    Extra,
    Branch,
}

struct Walk<'a> {
    root: &'a Value,
    depth: usize,
    /// The references being followed (a cycle is left unknown).
    refs: Vec<String>,
}

impl Walk<'_> {
    fn schema(&mut self, schema: &Value, place: Place) -> Verdict {
        use Verdict::*;
        match schema {
            Value::Bool(true) => return Compiles,
            Value::Bool(false) => {
                return match place {
                    Place::Items | Place::Extra => Compiles,
                    Place::Top | Place::Property | Place::Branch => Fails,
                }
            }
            Value::Object(_) => {}
            _ => return Unknown,
        }
        if self.depth > 32 {
            return Unknown;
        }
        self.depth += 1;
        let verdict = self.object(schema);
        self.depth -= 1;
        verdict
    }

    fn object(&mut self, schema: &Value) -> Verdict {
        use Verdict::*;
        let Value::Object(map) = schema else {
            return Unknown;
        };
        let mut verdict = Compiles;
        let int = |v: Option<&Value>| v.map(|v| v.as_u64());
        for (key, value) in map {
            let v = match key.as_str() {
                k if ANNOTATIONS.contains(&k) => Compiles,
                "type" => match value {
                    Value::String(t) if TYPES.contains(&t.as_str()) => Compiles,
                    Value::String(_) => Fails,
                    Value::Array(ts)
                        if ts
                            .iter()
                            .all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t))) =>
                    {
                        Compiles
                    }
                    _ => Unknown,
                },
                "properties" => match value {
                    Value::Object(props) => props
                        .values()
                        .fold(Compiles, |acc, p| acc.and(self.schema(p, Place::Property))),
                    _ => Fails,
                },
                "required" => match value {
                    Value::Array(keys) if keys.iter().all(Value::is_string) => Compiles,
                    Value::Array(_) => Unknown,
                    _ => Fails,
                },
                "additionalProperties" => self.schema(value, Place::Extra),
                "items" => match value {
                    Value::Array(_) => Fails,
                    v => self.schema(v, Place::Items),
                },
                "enum" => match value {
                    Value::Array(a) if a.is_empty() => Fails,
                    Value::Array(_) => Compiles,
                    _ => Unknown,
                },
                "const" => Compiles,
                "nullable" if value.is_boolean() => Compiles,
                "anyOf" | "oneOf" => match value {
                    Value::Array(branches) => branches
                        .iter()
                        .fold(Compiles, |acc, b| acc.and(self.schema(b, Place::Branch))),
                    _ => Unknown,
                },
                // Definitions are read where a reference leads.
                "$defs" | "definitions" if value.is_object() => Compiles,
                "$ref" => self.reference(value),
                "format" if value.is_string() => Compiles,
                "pattern" => match value {
                    Value::String(p) if regex(p) == Compiles => Compiles,
                    _ => Unknown,
                },
                "minLength" | "maxLength" | "minItems" | "maxItems" => {
                    let (min, max) = if key.starts_with("min") {
                        (Some(value), map.get(&key.replacen("min", "max", 1)))
                    } else {
                        (map.get(&key.replacen("max", "min", 1)), Some(value))
                    };
                    match (int(min), int(max)) {
                        (Some(Some(a)), Some(Some(b))) if a > b => Fails,
                        (Some(None), _) | (_, Some(None)) => Unknown,
                        _ => Compiles,
                    }
                }
                "minimum" | "maximum" => {
                    let whole = |v: Option<&Value>| v.is_none_or(|v| v.is_i64() || v.is_u64());
                    let (min, max) = (map.get("minimum"), map.get("maximum"));
                    let ordered = match (min.and_then(Value::as_f64), max.and_then(Value::as_f64)) {
                        (Some(a), Some(b)) => a <= b,
                        _ => true,
                    };
                    let number = map.get("type") == Some(&json!("number"));
                    if (number || (whole(min) && whole(max))) && value.is_number() {
                        if ordered {
                            Compiles
                        } else {
                            Fails
                        }
                    } else {
                        Unknown
                    }
                }
                _ => Unknown,
            };
            verdict = verdict.and(v);
        }
        verdict
    }

    /// A `$ref` to the root's `$defs` or `definitions`, followed.
    fn reference(&mut self, value: &Value) -> Verdict {
        let Some(path) = value.as_str() else {
            return Verdict::Unknown;
        };
        let Some((defs, name)) = path
            .strip_prefix("#/")
            .and_then(|p| p.split_once('/'))
            .filter(|(d, n)| matches!(*d, "$defs" | "definitions") && !n.contains(['/', '~', '%']))
        else {
            return Verdict::Unknown;
        };
        let Some(target) = self.root.get(defs).and_then(|d| d.get(name)) else {
            // XGrammar: "Cannot find field".
            return Verdict::Fails;
        };
        if self.refs.iter().any(|r| r == path) {
            return Verdict::Unknown;
        }
        self.refs.push(path.to_string());
        let verdict = self.schema(target, Place::Branch);
        self.refs.pop();
        verdict
    }
}

/// `Grammar.from_regex(pattern)` succeeds, for the common syntax: literals, escapes of
/// punctuation and `\d\w\s\D\W\S\n\t\r`, `.`, classes with ranges, groups `(…)` and `(?:…)`,
/// `|`, `^`, `$`, and one quantifier after an atom (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`,
/// optionally lazy). Anything else is unknown.
pub(crate) fn regex(pattern: &str) -> Verdict {
    let chars: Vec<char> = pattern.chars().collect();
    let mut r = Regex {
        p: &chars,
        i: 0,
        depth: 0,
    };
    match r.alternation() {
        Some(()) if r.i == chars.len() => Verdict::Compiles,
        _ => Verdict::Unknown,
    }
}

struct Regex<'a> {
    p: &'a [char],
    i: usize,
    depth: usize,
}

impl Regex<'_> {
    fn peek(&self) -> Option<char> {
        self.p.get(self.i).copied()
    }

    fn alternation(&mut self) -> Option<()> {
        loop {
            while !matches!(self.peek(), None | Some('|' | ')')) {
                self.piece()?;
            }
            if self.peek() != Some('|') {
                return Some(());
            }
            self.i += 1;
        }
    }

    fn piece(&mut self) -> Option<()> {
        let quantifiable = self.atom()?;
        if self.quantifier()? {
            if !quantifiable {
                return None;
            }
            if self.peek() == Some('?') {
                self.i += 1;
            }
            if matches!(self.peek(), Some('*' | '+' | '?' | '{')) {
                return None;
            }
        }
        Some(())
    }

    /// One atom; whether a quantifier may follow it.
    fn atom(&mut self) -> Option<bool> {
        let c = self.peek()?;
        self.i += 1;
        match c {
            '(' => {
                if self.p.get(self.i) == Some(&'?') {
                    if self.p.get(self.i + 1) != Some(&':') {
                        return None;
                    }
                    self.i += 2;
                }
                self.depth += 1;
                if self.depth > 64 {
                    return None;
                }
                self.alternation()?;
                self.depth -= 1;
                (self.peek() == Some(')')).then(|| self.i += 1)?;
                Some(true)
            }
            '[' => self.class().map(|()| true),
            '\\' => self.escape().map(|_| true),
            '^' | '$' => Some(false),
            '.' => Some(true),
            '*' | '+' | '?' | '{' | '}' | ']' | ')' | '|' => None,
            _ => Some(true),
        }
    }

    /// After a backslash: the escaped character (`None` inside a class for `\d` and kin).
    fn escape(&mut self) -> Option<Option<char>> {
        let c = self.peek()?;
        self.i += 1;
        match c {
            'd' | 'w' | 's' | 'D' | 'W' | 'S' => Some(None),
            'n' => Some(Some('\n')),
            't' => Some(Some('\t')),
            'r' => Some(Some('\r')),
            c if c.is_ascii_punctuation() || c == ' ' => Some(Some(c)),
            _ => None,
        }
    }

    fn class(&mut self) -> Option<()> {
        if self.peek() == Some('^') {
            self.i += 1;
        }
        let mut items = 0;
        loop {
            let c = self.peek()?;
            self.i += 1;
            let low = match c {
                ']' if items > 0 => return Some(()),
                ']' | '[' => return None,
                '\\' => self.escape()?,
                c => Some(c),
            };
            items += 1;
            if self.peek() == Some('-') && self.p.get(self.i + 1).is_some_and(|&n| n != ']') {
                self.i += 1;
                let c = self.peek()?;
                self.i += 1;
                let high = match c {
                    '\\' => self.escape()?,
                    '[' => return None,
                    c => Some(c),
                };
                match (low, high) {
                    (Some(a), Some(b)) if a <= b => {}
                    _ => return None,
                }
            }
        }
    }

    /// A quantifier, if one follows; `None` for a malformed one.
    fn quantifier(&mut self) -> Option<bool> {
        match self.peek() {
            Some('*' | '+' | '?') => {
                self.i += 1;
                Some(true)
            }
            Some('{') => {
                self.i += 1;
                let number = |r: &mut Self| {
                    let start = r.i;
                    while r.peek().is_some_and(|c| c.is_ascii_digit()) {
                        r.i += 1;
                    }
                    let digits: String = r.p[start..r.i].iter().collect();
                    (!digits.is_empty())
                        .then(|| digits.parse::<u32>().ok())
                        .flatten()
                };
                let low = number(self)?;
                let high = if self.peek() == Some(',') {
                    self.i += 1;
                    if self.peek() == Some('}') {
                        None
                    } else {
                        Some(number(self)?)
                    }
                } else {
                    Some(low)
                };
                (self.peek() == Some('}')).then(|| self.i += 1)?;
                (high.is_none_or(|h| low <= h) && low <= 1000).then_some(true)
            }
            _ => Some(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use Verdict::*;

    /// XGrammar's own answers (`Grammar.from_json_schema`, `Grammar.from_regex`).
    #[test]
    fn verdicts_match_xgrammar() {
        for (schema, want) in [
            (json!({"type": "object"}), Compiles),
            (json!(false), Fails),
            (json!({"type": "foo"}), Fails),
            (json!({"$ref": "#/$defs/x"}), Fails),
            (
                json!({"$ref": "#/$defs/x", "$defs": {"x": {"type": "string"}}}),
                Compiles,
            ),
            (json!({"type": "object", "$defs": {"b": false}}), Compiles),
            (
                json!({"type": "integer", "minimum": 5, "maximum": 1}),
                Fails,
            ),
            (
                json!({"type": "array", "minItems": 3, "maxItems": 1}),
                Fails,
            ),
            (json!({"enum": []}), Fails),
            (json!({"type": "object", "properties": {"a": false}}), Fails),
            (json!({"type": "object", "required": "a"}), Fails),
            (
                json!({"type": "array", "items": [{"type": "string"}]}),
                Fails,
            ),
            (json!({"type": "array", "items": false}), Compiles),
            (json!({"anyOf": [false]}), Fails),
            (json!({"type": "string", "format": "weird"}), Compiles),
            (json!({"type": "string", "pattern": "^[A-Z]{3}$"}), Compiles),
            (json!({"not": {"type": "string"}}), Unknown),
        ] {
            assert_eq!(json_schema(&schema, false), want, "{schema}");
        }
        for (p, want) in [
            ("^[A-Z]{3}$", Compiles),
            ("(?:ab)*c?", Compiles),
            ("[^a-z\\d]", Compiles),
            ("a{2,3}?", Compiles),
            ("a{,3}", Unknown),
            ("\\bword", Unknown),
            ("[]", Unknown),
            ("a{3,2}", Unknown),
            ("(?P<x>a)", Unknown),
        ] {
            assert_eq!(regex(p), want, "{p}");
        }
    }
}
