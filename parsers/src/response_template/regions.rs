//! The region machine vLLM's `ResponseParser` runs (`vllm/parser/chat_parsing/response_parser.py`),
//! over the delimiters llm-render accepts (literals, and a literal then a `\w+` run).
//!
//! Text goes to the region open now: the implicit field's (the sink) until an opener is
//! seen, then the opened field's until its closer, then the sink again. While in the sink
//! every opener and the sink's own closer are watched; inside a region only its closer. The
//! earliest delimiter that can be committed wins (longest on ties, openers first, then by
//! field name); text from the earliest delimiter still pending (a partial literal at the end
//! of the buffer, or a `\w+` run that may go on) is held. As the Python `regex` module's
//! partial search does, a complete match of a literal list is taken over an earlier partial
//! one. Only held text and the open tool region's body are kept between chunks.

use super::content::Valued;
use super::template::{word, Delim, Field, ResponseTemplate, TOOLS};
use serde::{Deserialize, Serialize};

/// One delimiter found in the buffer.
struct Found {
    start: usize,
    end: usize,
    /// More text could change it: held, not committed.
    pending: bool,
    /// The `\w+` run of a `(?P<name>\w+)` delimiter.
    capture: Option<(String, String)>,
}

/// The first match of `d` in `buf`: a complete one first, else (before the end of the output)
/// the earliest text at the end of `buf` that could still become one.
fn find(d: &Delim, buf: &str, eos: bool) -> Option<Found> {
    match d {
        Delim::Literals(lits) => {
            let full = lits
                .iter()
                .filter_map(|l| buf.find(l.as_str()).map(|s| (s, s + l.len())))
                .min_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
            if let Some((start, end)) = full {
                return Some(Found {
                    start,
                    end,
                    pending: false,
                    capture: None,
                });
            }
            if eos {
                return None;
            }
            partial(buf, |tail| lits.iter().any(|l| l.starts_with(tail)))
        }
        Delim::Word { lit, group } => {
            let mut from = 0;
            while let Some(i) = buf[from..].find(lit.as_str()) {
                let start = from + i;
                let after = start + lit.len();
                let run: usize = buf[after..]
                    .chars()
                    .take_while(|&c| word(c))
                    .map(char::len_utf8)
                    .sum();
                if run > 0 {
                    let end = after + run;
                    return Some(Found {
                        start,
                        end,
                        pending: !eos && end == buf.len(),
                        capture: group
                            .as_ref()
                            .map(|g| (g.clone(), buf[after..end].to_string())),
                    });
                }
                from = start + buf[start..].chars().next().map_or(1, char::len_utf8);
            }
            if eos {
                return None;
            }
            partial(buf, |tail| lit.starts_with(tail))
        }
    }
}

/// The earliest non-empty tail of `buf` that `fits`, as a pending match.
fn partial(buf: &str, fits: impl Fn(&str) -> bool) -> Option<Found> {
    let start = buf
        .char_indices()
        .map(|(i, _)| i)
        .find(|&i| fits(&buf[i..]))?;
    Some(Found {
        start,
        end: buf.len(),
        pending: true,
        capture: None,
    })
}

/// What the machine reports, as vLLM's events (only what routing reads).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event {
    /// A field's region opened by its opener (`delim`: the opener's text after the prompt).
    Open { field: usize, delim: String },
    /// Text of the open region (the prompt's part left out).
    Chunk { field: usize, text: String },
    /// A region ended: its value (tool regions only: `None` when it failed to parse, vLLM's
    /// `region_malformed`) and the closer's text after the prompt.
    Close {
        field: usize,
        delim: String,
        value: Option<Valued>,
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
}

/// How a closed tool region's body becomes its value.
pub(crate) type Valuer<'a> = &'a dyn Fn(&Field, &str, &[(String, String)]) -> Option<Valued>;

impl Regions {
    pub(crate) fn new(t: &ResponseTemplate) -> Self {
        Regions {
            current: t.implicit,
            ..Default::default()
        }
    }

    /// Feeds the prompt's part after its last start anchor (events dropped, as vLLM keeps them
    /// apart from the output's); its held tail is then the prompt's.
    pub(crate) fn prefix(&mut self, t: &ResponseTemplate, prompt: &str, value: Valuer) {
        let text = &prompt[last_anchor_end(&t.start_anchor, prompt)..];
        self.buf.push_str(text);
        self.run(t, false, value, &mut Vec::new());
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

    /// vLLM's `_process`.
    fn run(&mut self, t: &ResponseTemplate, eos: bool, value: Valuer, events: &mut Vec<Event>) {
        loop {
            let (best, hold) = self.scan(t, eos);
            if let Some((open, field, found)) = best {
                if found.start > 0 {
                    self.accumulate(t, found.start, events);
                }
                let delim = self.consume(found.end - found.start);
                if open {
                    self.close(t, String::new(), value, events);
                    self.current = Some(field);
                    self.opened = true;
                    self.body.clear();
                    self.captures = found.capture.into_iter().collect();
                    events.push(Event::Open { field, delim });
                } else {
                    self.close(t, delim, value, events);
                }
                continue;
            }
            if eos {
                if !self.buf.is_empty() {
                    self.accumulate(t, self.buf.len(), events);
                }
                self.close(t, String::new(), value, events);
            } else if hold > 0 {
                self.accumulate(t, hold, events);
            }
            return;
        }
    }

    /// vLLM's `_scan` over its `_watchlist`: the delimiter to commit now (whether it opens,
    /// its field, the match), and where held text starts.
    fn scan(&self, t: &ResponseTemplate, eos: bool) -> (Option<(bool, usize, Found)>, usize) {
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
            let Some(found) = find(d, &self.buf, eos) else {
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

    /// Drops the first `n` bytes of the buffer; returns their part after the prompt.
    fn consume(&mut self, n: usize) -> String {
        let skip = self.prefix_left.min(n);
        self.prefix_left -= skip;
        let out = self.buf[skip..n].to_string();
        self.buf.drain(..n);
        out
    }

    /// vLLM's `_accumulate` of the first `n` bytes into the open region.
    fn accumulate(&mut self, t: &ResponseTemplate, n: usize, events: &mut Vec<Event>) {
        let Some(field) = self.current else {
            self.consume(n);
            return;
        };
        if t.fields[field].name == TOOLS {
            self.body.push_str(&self.buf[..n]);
        }
        let text = self.consume(n);
        self.opened = true;
        if !text.is_empty() {
            events.push(Event::Chunk { field, text });
        }
    }

    /// vLLM's `_close_current`, then back to the sink.
    fn close(
        &mut self,
        t: &ResponseTemplate,
        delim: String,
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
            });
        }
        self.current = t.implicit;
        self.opened = false;
        self.body.clear();
        self.captures.clear();
    }
}

/// Where the prompt's text after its last start anchor begins (0 without one: vLLM then
/// parses the whole prompt).
fn last_anchor_end(d: &Delim, prompt: &str) -> usize {
    let mut end = 0;
    let mut from = 0;
    while from <= prompt.len() {
        let Some(found) = find(d, &prompt[from..], true) else {
            break;
        };
        end = from + found.end;
        from = end;
    }
    end
}
