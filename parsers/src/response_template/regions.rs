//! The region machine vLLM's `ResponseParser` runs (`vllm/parser/chat_parsing/response_parser.py`),
//! over the delimiters llm-render accepts (literals, and the regexes of `pattern.rs`).
//!
//! Text goes to the region open now: the implicit field's (the sink) until an opener is
//! seen, then the opened field's until its closer, then the sink again. While in the sink
//! every opener and the sink's own closer are watched; inside a region only its closer. The
//! earliest delimiter that can be committed wins (longest on ties, openers first, then by
//! field name); text from the earliest delimiter still pending (a partial match at the end
//! of the buffer, or a regex match ending there, which more text could grow) is held. As the
//! Python `regex` module's partial search does, a complete match is taken over an earlier
//! partial one. Only held text, the open tool region's body, what the searches learnt of
//! the held text and how much text has passed (for the events' offsets, vLLM's `start` and
//! `end`, which the reasoning token count reads) are kept between chunks.

use super::content::Valued;
use super::template::{word, Atom, Delim, Field, ResponseTemplate, TOOLS};
use serde::{Deserialize, Serialize};

/// One delimiter found in the buffer.
#[derive(Clone)]
struct Found {
    start: usize,
    end: usize,
    /// More text could change it: held, not committed.
    pending: bool,
    /// Where the `\w+` run of a `Word` delimiter starts (read out only when committed).
    run_from: Option<usize>,
}

/// What earlier searches of one delimiter learnt of the buffer, kept so that no stretch of
/// it is searched twice (a chunk at a time, a long held `\w+` run would be searched again
/// for every chunk).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Seen {
    /// Per literal (the one of a `Word`): no occurrence starts before this offset in `buf`.
    clear: Vec<usize>,
    /// `Word`: a literal found at `.0`, followed by word characters up to `.1`.
    run: Option<(usize, usize)>,
}

impl Seen {
    /// The buffer lost its first `n` bytes.
    fn shift(&mut self, n: usize) {
        self.clear.iter_mut().for_each(|c| *c = c.saturating_sub(n));
        self.run = self
            .run
            .filter(|&(s, _)| s >= n)
            .map(|(s, e)| (s - n, e - n));
    }
}

/// The largest char boundary of `buf` at or below `i`.
fn floor(buf: &str, i: usize) -> usize {
    let mut i = i.min(buf.len());
    while !buf.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The first match of `d` in `buf` at or after `pos`: a complete one first, else (before the
/// end of the output) the earliest text at the end of `buf` that could still become one.
/// Python `regex`'s partial search, from `pos`.
fn find(d: &Delim, buf: &str, pos: usize, eos: bool, seen: &mut Seen) -> Option<Found> {
    let (lits, pattern) = match d {
        Delim::Literals(lits) => (lits.as_slice(), false),
        Delim::Pattern(lit) => (std::slice::from_ref(lit), true),
        Delim::Word { .. } | Delim::Seq(_) => (&[][..], false),
    };
    match d {
        Delim::Seq(atoms) => find_seq(atoms, buf, pos, eos, seen),
        Delim::Literals(_) | Delim::Pattern(_) => {
            seen.clear.resize(lits.len(), 0);
            let mut full: Option<(usize, usize)> = None;
            for (l, clear) in lits.iter().zip(seen.clear.iter_mut()) {
                let from = pos.max(*clear);
                match buf[from..].find(l.as_str()) {
                    Some(i) => {
                        *clear = from + i;
                        let m = (from + i, from + i + l.len());
                        // The earliest; on a tie the longest (the list is longest first).
                        if full.is_none_or(|(s, _)| m.0 < s) {
                            full = Some(m);
                        }
                    }
                    None => *clear = floor(buf, from.max((buf.len() + 1).saturating_sub(l.len()))),
                }
            }
            if let Some((start, end)) = full {
                return Some(Found {
                    start,
                    end,
                    pending: pattern && !eos && end == buf.len(),
                    run_from: None,
                });
            }
            if eos {
                return None;
            }
            let longest = lits.iter().map(String::len).max().unwrap_or(0);
            partial(buf, pos, longest, |tail| {
                lits.iter().any(|l| l.starts_with(tail))
            })
        }
        Delim::Word { lit, .. } => {
            seen.clear.resize(1, 0);
            let first = pos.max(seen.clear[0]);
            let mut from = first;
            while let Some(i) = buf[from..].find(lit.as_str()) {
                let start = from + i;
                let after = start + lit.len();
                // Word characters already read after this literal need not be read again.
                let known = match seen.run {
                    Some((s, e)) if s == start => e,
                    _ => after,
                };
                let run: usize = buf[known..]
                    .chars()
                    .take_while(|&c| word(c))
                    .map(char::len_utf8)
                    .sum();
                let end = known + run;
                if end > after {
                    seen.clear[0] = start;
                    let pending = !eos && end == buf.len();
                    seen.run = pending.then_some((start, end));
                    return Some(Found {
                        start,
                        end,
                        pending,
                        run_from: Some(after),
                    });
                }
                from = start + buf[start..].chars().next().map_or(1, char::len_utf8);
            }
            seen.clear[0] = floor(buf, first.max(buf.len().saturating_sub(lit.len())));
            seen.run = None;
            if eos {
                return None;
            }
            partial(buf, pos, lit.len(), |tail| lit.starts_with(tail))
        }
    }
}

/// How a [`Delim::Seq`] fares at one position.
enum SeqAt {
    /// Matched up to here; the named runs' spans.
    Full(usize, Vec<(String, usize, usize)>),
    /// The text ends inside a match that could still complete.
    Partial,
    Fail,
}

/// Matches `atoms` at `p` (each run greedy: a pattern is refused when loaded unless what
/// follows a run cannot continue it, so this is the regex's one match).
fn seq_at(atoms: &[Atom], buf: &str, p: usize) -> SeqAt {
    let mut i = p;
    let mut groups = Vec::new();
    for (k, atom) in atoms.iter().enumerate() {
        let last = k + 1 == atoms.len();
        match atom {
            Atom::Lazy => {
                // Up to the first occurrence of the literal after it (the load checks there
                // is one); none yet: any text may still bring it.
                let Some(Atom::Lit(next)) = atoms.get(k + 1) else {
                    return SeqAt::Fail;
                };
                match buf[i..].find(next.as_str()) {
                    Some(j) => i += j,
                    None => return SeqAt::Partial,
                }
            }
            Atom::Lit(l) => {
                let rest = &buf[i..];
                if rest.starts_with(l.as_str()) {
                    i += l.len();
                } else if l.starts_with(rest) {
                    return SeqAt::Partial;
                } else {
                    return SeqAt::Fail;
                }
            }
            run => {
                let n: usize = buf[i..]
                    .chars()
                    .take_while(|&c| run.holds(c))
                    .map(char::len_utf8)
                    .sum();
                let min = match run {
                    Atom::Space { min } => *min,
                    _ => 1,
                };
                let at_end = i + n == buf.len();
                if n < min {
                    return if at_end { SeqAt::Partial } else { SeqAt::Fail };
                }
                if at_end && !last {
                    return SeqAt::Partial;
                }
                if let Atom::Word { name: Some(name) } = run {
                    groups.push((name.clone(), i, i + n));
                }
                i += n;
            }
        }
    }
    SeqAt::Full(i, groups)
}

/// [`find`] of a [`Delim::Seq`]: the first complete match, else the earliest partial one.
fn find_seq(atoms: &[Atom], buf: &str, pos: usize, eos: bool, seen: &mut Seen) -> Option<Found> {
    let Some(Atom::Lit(first)) = atoms.first() else {
        return None;
    };
    let lead = first.chars().next().unwrap_or_default();
    seen.clear.resize(1, 0);
    let from = pos.max(seen.clear[0]);
    let mut earliest_partial = None;
    for (i, _) in buf[from..].match_indices(lead) {
        let p = from + i;
        match seq_at(atoms, buf, p) {
            SeqAt::Full(end, _) => {
                seen.clear[0] = earliest_partial.unwrap_or(p);
                return Some(Found {
                    start: p,
                    end,
                    // A regex match ending where the text so far ends may grow.
                    pending: !eos && end == buf.len(),
                    run_from: None,
                });
            }
            SeqAt::Partial => {
                earliest_partial.get_or_insert(p);
            }
            SeqAt::Fail => {}
        }
    }
    // Positions that failed never match; a partial one may complete.
    seen.clear[0] = earliest_partial.unwrap_or(buf.len());
    let p = earliest_partial.filter(|_| !eos)?;
    Some(Found {
        start: p,
        end: buf.len(),
        pending: true,
        run_from: None,
    })
}

/// The earliest non-empty tail of `buf` from `pos` on, of at most `longest` bytes, that
/// `fits`, as a pending match.
fn partial(buf: &str, pos: usize, longest: usize, fits: impl Fn(&str) -> bool) -> Option<Found> {
    let start = (pos.max(buf.len().saturating_sub(longest))..buf.len())
        .filter(|&i| buf.is_char_boundary(i))
        .find(|&i| fits(&buf[i..]))?;
    Some(Found {
        start,
        end: buf.len(),
        pending: true,
        run_from: None,
    })
}

/// What the machine reports, as vLLM's events (only what routing reads).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event {
    /// A field's region opened: by its opener (`explicit`; `delim`: the opener's text after
    /// the prompt), or the sink's, at its first text.
    Open {
        field: usize,
        delim: String,
        explicit: bool,
        /// Where the opener ends in the text read (prompt part and output), vLLM's `end`.
        end: usize,
    },
    /// Text of the open region (the prompt's part left out).
    Chunk { field: usize, text: String },
    /// A region ended: its value (tool regions only: `None` when it failed to parse, vLLM's
    /// `region_malformed`) and the closer's text after the prompt.
    Close {
        field: usize,
        delim: String,
        value: Option<Valued>,
        /// Where the closer starts in the text read, vLLM's `start`.
        start: usize,
    },
}

/// The machine's state between chunks.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Regions {
    /// Text not yet decided (from vLLM's `_pos` on).
    buf: String,
    /// How many bytes at the start of `buf` are the prompt's.
    prefix_left: usize,
    /// The open field (`None`: the null sink, where text is dropped).
    current: Option<usize>,
    /// Whether `current` has opened (the implicit field opens at its first byte).
    opened: bool,
    /// The open tool region's text so far.
    body: String,
    captures: Vec<(String, String)>,
    /// During a run: where the undecided text starts in `buf` (0 between runs).
    #[serde(skip)]
    pos: usize,
    /// Per delimiter (a field's opener at `2 * field`, its closer at `2 * field + 1`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    seen: Vec<Seen>,
    /// How many bytes of the text read have left `buf` (where `buf` starts in it).
    #[serde(default)]
    drained: usize,
}

/// How a closed tool region's body becomes its value.
pub(crate) type Valuer<'a> = &'a dyn Fn(&Field, &str, &[(String, String)]) -> Option<Valued>;

impl Regions {
    /// Whether a carried state fits its template: the open field exists, the prompt's part is
    /// within the buffer, and the remembered offsets fall on its characters.
    pub(crate) fn check(&self, t: &ResponseTemplate) -> Result<(), String> {
        let on_char = |i: usize| self.buf.is_char_boundary(i);
        let fits = self.current.is_none_or(|c| c < t.fields.len())
            && on_char(self.prefix_left)
            && self.seen.len() <= t.fields.len() * 2
            && self.seen.iter().all(|s| {
                s.clear.iter().all(|&c| on_char(c))
                    && s.run
                        .is_none_or(|(a, b)| a <= b && on_char(a) && on_char(b))
            });
        if fits {
            Ok(())
        } else {
            Err("invalid response_template parser state".into())
        }
    }

    /// Where the text not yet decided starts in the text read (between runs).
    pub(crate) fn decided(&self) -> usize {
        self.drained
    }

    pub(crate) fn new(t: &ResponseTemplate) -> Self {
        Regions {
            current: t.implicit,
            ..Default::default()
        }
    }

    /// Feeds the prompt's part after its last start anchor (its events, vLLM's
    /// `initial_events`, go to `events`, kept apart from the output's); its held tail is then
    /// the prompt's.
    pub(crate) fn prefix(
        &mut self,
        t: &ResponseTemplate,
        prompt: &str,
        value: Valuer,
        events: &mut Vec<Event>,
    ) {
        let text = &prompt[last_anchor_end(&t.start_anchor, prompt)..];
        self.buf.push_str(text);
        self.run(t, false, value, events);
        self.prefix_left = self.buf.len();
    }

    pub(crate) fn push(
        &mut self,
        t: &ResponseTemplate,
        text: &str,
        value: Valuer,
        events: &mut Vec<Event>,
    ) {
        self.buf.push_str(text);
        self.run(t, false, value, events);
    }

    pub(crate) fn finish(&mut self, t: &ResponseTemplate, value: Valuer, events: &mut Vec<Event>) {
        self.run(t, true, value, events);
    }

    /// vLLM 0.33's `_ResponseStream._closer_rest`: when the open region's literal closer is
    /// some text then a message start anchor (literal), and the text so far ends in that
    /// closer cut somewhere in the anchor (the text before it whole, only (part of) the
    /// anchor missing), the rest of the closer; else empty. vLLM looks in the text since the
    /// region opened; a closer's proper prefix that text ends in is always held here, so
    /// `buf` (the text not yet decided, after the region's start) holds it too. Closers and
    /// anchors are tried longest first, where vLLM tries them as the template lists them
    /// (the same whenever one closer and one anchor fit, as in every template seen).
    pub(crate) fn closer_rest(&self, t: &ResponseTemplate) -> String {
        let Some(field) = self.current.filter(|_| self.opened) else {
            return String::new();
        };
        let Some(Delim::Literals(closers)) = &t.fields[field].close else {
            return String::new();
        };
        let anchors: &[String] = match &t.start_anchor {
            Delim::Literals(l) => l,
            Delim::Pattern(l) => std::slice::from_ref(l),
            Delim::Word { .. } | Delim::Seq(_) => &[],
        };
        for closer in closers {
            for anchor in anchors {
                if anchor.is_empty() || !closer.ends_with(anchor.as_str()) || closer == anchor {
                    continue;
                }
                let whole = closer.len() - anchor.len();
                for cut in (whole..closer.len()).rev() {
                    if closer.is_char_boundary(cut) && self.buf.ends_with(&closer[..cut]) {
                        return closer[cut..].to_string();
                    }
                }
            }
        }
        String::new()
    }

    /// vLLM's `_process`.
    fn run(&mut self, t: &ResponseTemplate, eos: bool, value: Valuer, events: &mut Vec<Event>) {
        self.seen.resize(t.fields.len() * 2, Seen::default());
        self.pos = 0;
        self.step(t, eos, value, events);
        self.buf.drain(..self.pos);
        let n = std::mem::take(&mut self.pos);
        self.drained = self.drained.saturating_add(n);
        self.seen.iter_mut().for_each(|s| s.shift(n));
    }

    fn step(&mut self, t: &ResponseTemplate, eos: bool, value: Valuer, events: &mut Vec<Event>) {
        loop {
            let (best, hold) = self.scan(t, eos);
            if let Some((open, field, found)) = best {
                if found.start > self.pos {
                    self.accumulate(t, found.start - self.pos, events);
                }
                let at = self.at();
                let delim = self.consume(found.end - found.start);
                if open {
                    self.close(t, String::new(), at, value, events);
                    self.current = Some(field);
                    self.opened = true;
                    self.body.clear();
                    // The opener's named `\w+` runs, vLLM's `captures`.
                    self.captures = match t.fields[field].open.as_ref() {
                        Some(Delim::Word { group, .. }) => group
                            .iter()
                            .zip(found.run_from)
                            .map(|(g, from)| (g.clone(), self.buf[from..found.end].to_string()))
                            .collect(),
                        Some(Delim::Seq(atoms)) => match seq_at(atoms, &self.buf, found.start) {
                            SeqAt::Full(_, groups) => groups
                                .into_iter()
                                .map(|(g, a, b)| (g, self.buf[a..b].to_string()))
                                .collect(),
                            _ => Vec::new(),
                        },
                        _ => Vec::new(),
                    };
                    events.push(Event::Open {
                        field,
                        delim,
                        explicit: true,
                        end: self.at(),
                    });
                } else {
                    self.close(t, delim, at, value, events);
                }
                continue;
            }
            if eos {
                if self.pos < self.buf.len() {
                    self.accumulate(t, self.buf.len() - self.pos, events);
                }
                self.close(t, String::new(), self.at(), value, events);
            } else if hold > self.pos {
                self.accumulate(t, hold - self.pos, events);
            }
            return;
        }
    }

    /// vLLM's `_scan` over its `_watchlist`: the delimiter to commit now (whether it opens,
    /// its field, the match, in `buf`), and where held text starts.
    fn scan(&mut self, t: &ResponseTemplate, eos: bool) -> (Option<(bool, usize, Found)>, usize) {
        let mut watch: Vec<(bool, usize, &Delim)> = Vec::new();
        match self.current {
            Some(c) if Some(c) != t.implicit => {
                watch.extend(t.fields[c].close.as_ref().map(|d| (false, c, d)));
            }
            _ => {
                for (i, f) in t.fields.iter().enumerate() {
                    watch.extend(f.open.as_ref().map(|d| (true, i, d)));
                }
                if let Some(i) = t.implicit {
                    watch.extend(t.fields[i].close.as_ref().map(|d| (false, i, d)));
                }
            }
        }
        let mut hold = self.buf.len();
        let mut best: Option<(bool, usize, Found)> = None;
        for (open, field, d) in watch {
            let seen = &mut self.seen[field * 2 + usize::from(!open)];
            let Some(found) = find(d, &self.buf, self.pos, eos, seen) else {
                continue;
            };
            if found.pending {
                hold = hold.min(found.start);
                continue;
            }
            let key = |open: bool, field: usize, f: &Found| {
                (
                    f.start,
                    std::cmp::Reverse(f.end - f.start),
                    !open,
                    t.fields[field].name.clone(),
                )
            };
            let better = best
                .as_ref()
                .is_none_or(|(o, i, b)| key(open, field, &found) < key(*o, *i, b));
            if better {
                best = Some((open, field, found));
            }
        }
        if best.as_ref().is_some_and(|(_, _, f)| f.start >= hold) {
            best = None;
        }
        (best, hold)
    }

    /// Where the undecided text starts in the text read.
    fn at(&self) -> usize {
        self.drained.saturating_add(self.pos)
    }

    /// Passes the next `n` bytes of the buffer; returns their part after the prompt.
    fn consume(&mut self, n: usize) -> String {
        let skip = self.prefix_left.min(n);
        self.prefix_left -= skip;
        let out = self.buf[self.pos + skip..self.pos + n].to_string();
        self.pos += n;
        out
    }

    /// vLLM's `_accumulate` of the next `n` bytes into the open region.
    fn accumulate(&mut self, t: &ResponseTemplate, n: usize, events: &mut Vec<Event>) {
        let Some(field) = self.current else {
            self.consume(n);
            return;
        };
        if t.fields[field].name == TOOLS {
            self.body.push_str(&self.buf[self.pos..self.pos + n]);
        }
        let end = self.at();
        let text = self.consume(n);
        if !std::mem::replace(&mut self.opened, true) {
            events.push(Event::Open {
                field,
                delim: String::new(),
                explicit: false,
                end,
            });
        }
        if !text.is_empty() {
            events.push(Event::Chunk { field, text });
        }
    }

    /// vLLM's `_close_current`, then back to the sink.
    fn close(
        &mut self,
        t: &ResponseTemplate,
        delim: String,
        start: usize,
        value: Valuer,
        events: &mut Vec<Event>,
    ) {
        if let (Some(field), true) = (self.current, self.opened) {
            let f = &t.fields[field];
            let value = if f.name == TOOLS {
                value(f, &self.body, &self.captures)
            } else {
                Some(Valued {
                    value: serde_json::Value::Null,
                    exact: false,
                })
            };
            events.push(Event::Close {
                field,
                delim,
                value,
                start,
            });
        }
        self.current = t.implicit;
        self.opened = false;
        self.body.clear();
        self.captures.clear();
    }
}

/// Where the prompt's text after its last start anchor begins (0 without one: vLLM then
/// parses the whole prompt). Matches are taken left to right without overlapping (Python's
/// `finditer`), each literal's next occurrence looked for again only once passed.
pub(crate) fn last_anchor_end(d: &Delim, prompt: &str) -> usize {
    let (mut end, mut from) = (0, 0);
    let lits = match d {
        Delim::Literals(lits) => lits.as_slice(),
        Delim::Pattern(lit) => std::slice::from_ref(lit),
        Delim::Word { .. } | Delim::Seq(_) => &[],
    };
    match d {
        Delim::Literals(_) | Delim::Pattern(_) => {
            let mut next: Vec<Option<usize>> =
                lits.iter().map(|l| prompt.find(l.as_str())).collect();
            loop {
                for (n, l) in next.iter_mut().zip(lits) {
                    if n.is_some_and(|at| at < from) {
                        *n = prompt[from..].find(l.as_str()).map(|i| i + from);
                    }
                }
                // The earliest, longest first (the list is sorted so).
                let best = next
                    .iter()
                    .zip(lits)
                    .filter_map(|(n, l)| n.map(|at| (at, l.len())))
                    .min_by_key(|&(at, len)| (at, std::cmp::Reverse(len)));
                let Some((at, len)) = best else {
                    return end;
                };
                end = at + len;
                from = end;
            }
        }
        Delim::Word { .. } | Delim::Seq(_) => {
            let mut seen = Seen::default();
            while let Some(found) = find(d, prompt, from, true, &mut seen) {
                end = found.end;
                from = end;
            }
            end
        }
    }
}
