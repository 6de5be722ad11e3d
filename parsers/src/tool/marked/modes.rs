//! One step of [`MarkedParser`]'s scan per [`Mode`]: each consumes what it can decide at
//! `at.i` and says where to go on ([`Flow::Next`]) or that it needs more text
//! ([`Flow::Stop`]).

use super::object::ObjPhase;
use super::{mark, CallForm, Mark, MarkedFamily, MarkedParser, Mode, MAX_NAME, THINK_END};
use crate::tool::json_scan::{Step, ValueScan};
use crate::tool::Parsed;

/// Where the scan stands: the text of this round, the position, and whether more follows.
#[derive(Clone, Copy)]
pub(super) struct At<'a> {
    pub text: &'a str,
    pub i: usize,
    pub at_end: bool,
}

impl<'a> At<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.i..]
    }

    fn c(&self) -> char {
        self.rest().chars().next().unwrap_or_default()
    }
}

pub(super) enum Flow {
    /// Go on from this position (in whatever mode is now set).
    Next(usize),
    /// Stop here: the rest is undecided until more text comes.
    Stop(usize),
}

impl MarkedParser {
    pub(super) fn step_content(&mut self, at: At, at_start: bool, out: &mut Parsed) -> Flow {
        let (rest, c, mut i) = (at.rest(), at.c(), at.i);
        let spec = self.spec();
        if at_start && self.family == MarkedFamily::Llama3Json {
            if c.is_whitespace() {
                self.pending.push(c);
                return Flow::Next(i + c.len_utf8());
            }
            if c == '{' {
                self.begin_call();
                self.mode = Mode::Object(ObjPhase::Open);
                return Flow::Next(i);
            }
        }
        if at_start && self.family == MarkedFamily::Xlam {
            // vLLM's xlam reads an output that is an array (after whitespace) as calls;
            // `[TOOL_CALLS]` is its marker, not an array.
            if c.is_whitespace() {
                self.pending.push(c);
                return Flow::Next(i + c.len_utf8());
            }
            match mark(rest, "[TOOL_CALLS]", at.at_end) {
                Mark::Partial => return Flow::Stop(i),
                Mark::Yes => {}
                Mark::No if c == '[' => {
                    self.begin_call();
                    self.opener = usize::MAX;
                    self.mode = Mode::MistralBody;
                    return Flow::Next(i);
                }
                Mark::No => {}
            }
        }
        let opener = spec.section.map_or(spec.call_start, |s| s.0);
        if at_start && self.family == MarkedFamily::Jamba {
            // vLLM's jamba drops content that is one space before the calls (the leading
            // space its tokenizer writes): held until the marker shows whether it is that.
            if self.pending.is_empty() && c == ' ' {
                self.pending.push(c);
                return Flow::Next(i + 1);
            }
            if self.pending == " " {
                match mark(rest, opener, at.at_end) {
                    // Kept with the call's text: content again if the call is malformed.
                    Mark::Yes => {
                        self.mode = Mode::Content { at_start: false };
                        return Flow::Next(i);
                    }
                    Mark::Partial => return Flow::Stop(i),
                    Mark::No => {}
                }
            }
        }
        if at_start {
            let pending = std::mem::take(&mut self.pending);
            self.push_content(&pending, out);
            self.mode = Mode::Content { at_start: false };
        }
        if let Some(flow) = self.dropped_marker(at, opener, out) {
            return flow;
        }
        match self.find_opener(rest, opener) {
            Some((found, THINK_END)) => {
                // Thinking is content; an array right after it is calls (vLLM's xlam).
                let end = found + THINK_END.len();
                self.push_content(&rest[..end], out);
                self.mode = Mode::Content { at_start: true };
                Flow::Next(i + end)
            }
            Some((found, opener))
                if !at.at_end
                    && self.family.openers().iter().any(|o| {
                        o.start.len() > opener.len() && o.start.starts_with(&rest[found..])
                    }) =>
            {
                // A longer opener may still follow (xlam's ```` ``` ```` and ```` ```json ````).
                self.push_content(&rest[..found], out);
                Flow::Stop(i + found)
            }
            Some((found, opener)) => {
                self.push_content(&rest[..found], out);
                self.pending.push_str(opener);
                i += found + opener.len();
                self.begin_call();
                self.mode = match (spec.section, self.family) {
                    (Some(_), _) => Mode::Section,
                    (None, family) if family.array_body() => Mode::MistralBody,
                    (None, _) => match spec.form {
                        CallForm::Object | CallForm::Keyed => Mode::Object(ObjPhase::Open),
                        CallForm::Named { .. } => Mode::Name,
                    },
                };
                Flow::Next(i)
            }
            None => {
                let keep = if at.at_end {
                    0
                } else {
                    self.opener_suffix(rest, opener)
                };
                self.push_content(&rest[..rest.len() - keep], out);
                Flow::Stop(i + rest.len() - keep)
            }
        }
    }

    /// The first call opener in `rest` (`opener`, or one of the family's `openers`: the
    /// earliest, the longest of those there) and where; records which one it is.
    fn find_opener(&mut self, rest: &str, opener: &'static str) -> Option<(usize, &'static str)> {
        let openers = self.family.openers();
        if openers.is_empty() {
            return rest.find(opener).map(|at| (at, opener));
        }
        let found = openers
            .iter()
            .enumerate()
            .filter_map(|(k, o)| rest.find(o.start).map(|at| (at, k)))
            .min_by_key(|&(at, k)| (at, std::cmp::Reverse(openers[k].start.len())));
        let (at, k) = found?;
        self.opener = k;
        Some((at, openers[k].start))
    }

    /// How many bytes at the end of `rest` may begin a call opener (or, for PLaMo 3, any of
    /// its markers: one cut off at the end is dropped).
    fn opener_suffix(&self, rest: &str, opener: &str) -> usize {
        let own = crate::partial_suffix(rest, opener);
        let others = self.family.openers().iter().map(|o| o.start);
        let more = self.family.cut_markers().iter().copied();
        others
            .chain(more)
            .fold(own, |n, o| n.max(crate::partial_suffix(rest, o)))
    }

    /// A marker the family drops from content (PLaMo 3's end of turn) before the next call
    /// opener: the text before it is content, the marker goes.
    fn dropped_marker(&mut self, at: At, opener: &str, out: &mut Parsed) -> Option<Flow> {
        let rest = at.rest();
        let (found, m) = self
            .family
            .dropped()
            .iter()
            .filter_map(|m| rest.find(m).map(|f| (f, *m)))
            .min()?;
        if rest.find(opener).is_some_and(|o| o < found) {
            return None;
        }
        self.push_content(&rest[..found], out);
        Some(Flow::Next(at.i + found + m.len()))
    }

    /// The marker that may close the current block (see `MarkedFamily::openers`).
    fn block_end(&self) -> Option<&'static str> {
        self.family.openers().get(self.opener).and_then(|o| o.end)
    }

    pub(super) fn step_section(&mut self, at: At, out: &mut Parsed) -> Flow {
        let (rest, c, i) = (at.rest(), at.c(), at.i);
        let spec = self.spec();
        let Some((_, section_end)) = spec.section else {
            self.mode = Mode::Content { at_start: false };
            return Flow::Next(i);
        };
        if c.is_whitespace() {
            if !self.pending.is_empty() {
                self.pending.push(c);
            }
            return Flow::Next(i + c.len_utf8());
        }
        match (
            mark(rest, spec.call_start, at.at_end),
            mark(rest, section_end, at.at_end),
        ) {
            (Mark::Yes, _) => {
                self.pending.push_str(spec.call_start);
                self.begin_call();
                self.mode = Mode::Name;
                Flow::Next(i + spec.call_start.len())
            }
            (_, Mark::Yes) if self.family == MarkedFamily::KimiK2 => {
                // vLLM's kimi_k2 engine stays in its tool preamble once a section opens: text
                // after the section is dropped, and later calls are still read.
                self.pending.clear();
                Flow::Next(i + section_end.len())
            }
            (_, Mark::Yes) => {
                if !self.pending.is_empty() {
                    // A section with no call in it: keep it as content.
                    self.pending.push_str(section_end);
                    let pending = std::mem::take(&mut self.pending);
                    self.push_content(&pending, out);
                }
                self.mode = Mode::Content { at_start: false };
                Flow::Next(i + section_end.len())
            }
            (Mark::Partial, _) | (_, Mark::Partial) => Flow::Stop(i),
            (Mark::No, Mark::No) if self.family == MarkedFamily::KimiK2 => {
                // Other text in the preamble is dropped too.
                self.pending.clear();
                Flow::Next(i + c.len_utf8())
            }
            (Mark::No, Mark::No) => {
                self.malformed(out);
                Flow::Next(i)
            }
        }
    }

    /// Just after mistral's `[TOOL_CALLS]`: an array, an object or a name follows. After
    /// phi4mini's `functools`, only an array, at once (vLLM's `functools\[`): anything else
    /// leaves the word as text. After jamba's `<tool_calls>`, only an array (vLLM's
    /// `json.loads` of a list, whitespace allowed), and granite's markers likewise; after
    /// apertus's, an array or one call object.
    pub(super) fn step_mistral_body(&mut self, at: At, out: &mut Parsed) -> Flow {
        let (c, i) = (at.c(), at.i);
        let array_only = match self.family {
            MarkedFamily::Phi4MiniJson => c != '[',
            MarkedFamily::Jamba | MarkedFamily::Granite | MarkedFamily::Xlam => {
                c != '[' && !c.is_whitespace()
            }
            MarkedFamily::Apertus => !matches!(c, '[' | '{') && !c.is_whitespace(),
            _ => false,
        };
        if array_only {
            self.malformed(out);
            return Flow::Next(i);
        }
        if c.is_whitespace() {
            self.pending.push(c);
            return Flow::Next(i + c.len_utf8());
        }
        match c {
            '[' => {
                self.pending.push(c);
                self.in_array = true;
                self.mode = Mode::MistralArray;
                Flow::Next(i + 1)
            }
            '{' => {
                self.in_array = false;
                self.mode = Mode::Object(ObjPhase::Open);
                Flow::Next(i)
            }
            _ => {
                self.in_array = false;
                self.mode = Mode::Name;
                Flow::Next(i)
            }
        }
    }

    /// Inside mistral's `[..]`. `pending` is non-empty exactly until the array's first call
    /// is named.
    pub(super) fn step_mistral_array(&mut self, at: At, out: &mut Parsed) -> Flow {
        let (c, i) = (at.c(), at.i);
        match c {
            c if c.is_whitespace() || c == ',' => {
                if !self.pending.is_empty() {
                    self.pending.push(c);
                }
                Flow::Next(i + c.len_utf8())
            }
            '{' => {
                self.begin_call();
                self.mode = Mode::Object(ObjPhase::Open);
                Flow::Next(i)
            }
            ']' => {
                self.in_array = false;
                // vLLM's apertus reads an empty array as no calls, and drops it.
                let empty =
                    self.family == MarkedFamily::Apertus && self.pending.trim_end().ends_with('[');
                if empty {
                    self.pending.clear();
                }
                if self.pending.is_empty() {
                    self.mode = Mode::AfterCall;
                } else {
                    self.pending.push(c);
                    self.malformed(out);
                }
                Flow::Next(i + 1)
            }
            _ => {
                self.in_array = false;
                if self.pending.is_empty() {
                    self.mode = Mode::Content { at_start: false };
                } else {
                    self.malformed(out);
                }
                Flow::Next(i)
            }
        }
    }

    /// `<prefix>name<sep>` of the `CallForm::Named` families.
    pub(super) fn step_name(&mut self, at: At, out: &mut Parsed) -> Flow {
        let (rest, i) = (at.rest(), at.i);
        let CallForm::Named { prefix, sep } = self.spec().form else {
            self.malformed(out);
            return Flow::Next(i);
        };
        // Mistral v11+ also writes `[TOOL_CALLS]name{…}`: the arguments' `{` ends the name
        // (and stays, as the value's first byte).
        let brace = (self.family == MarkedFamily::Mistral)
            .then(|| rest.find('{'))
            .flatten();
        let (found, sep) = match (rest.find(sep), brace) {
            (Some(s), Some(b)) if b < s => (Some(b), ""),
            (None, Some(b)) => (Some(b), ""),
            (s, _) => (s, sep),
        };
        let avail = found.unwrap_or(rest.len() - crate::partial_suffix(rest, sep));
        let limit = MAX_NAME + prefix.len();
        // A newline ends a name, except Kimi K2's, whose header may end with one.
        let bad: fn(char) -> bool = if self.family == MarkedFamily::KimiK2 {
            |_| false
        } else {
            |c| c == '\n'
        };
        if let Some(cut) = crate::tool::name_cut(self.token.len(), &rest[..avail], limit, bad) {
            self.pending.push_str(&rest[..cut]);
            self.malformed(out);
            return Flow::Next(i + cut);
        }
        let Some(found) = found else {
            self.token.push_str(&rest[..avail]);
            self.pending.push_str(&rest[..avail]);
            if at.at_end {
                self.malformed(out);
                return Flow::Next(i + avail);
            }
            return Flow::Stop(i + avail);
        };
        self.token.push_str(&rest[..found]);
        self.pending.push_str(&rest[..found + sep.len()]);
        let raw = std::mem::take(&mut self.token);
        let raw = raw.trim();
        let raw = raw.strip_prefix(prefix).unwrap_or(raw);
        let Some((name, id)) = self.call_name(raw) else {
            // vLLM drops a call whose header it cannot read, text and all.
            self.pending.clear();
            self.committed = false;
            self.mode = Mode::AfterCall;
            return Flow::Next(i + found + sep.len());
        };
        if name.is_empty()
            || name.len() > MAX_NAME
            || name.contains(|c: char| c.is_whitespace() || c == '<' || c == '>')
        {
            self.malformed(out);
            return Flow::Next(i + found + sep.len());
        }
        self.commit(name, id);
        self.scan = ValueScan::default();
        self.mode = Mode::Args;
        Flow::Next(i + found + sep.len())
    }

    /// A named call's arguments value, streamed as it arrives.
    pub(super) fn step_args(&mut self, at: At, out: &mut Parsed) -> Flow {
        let (text, rest, c, i) = (at.text, at.rest(), at.c(), at.i);
        let spec = self.spec();
        if let Some(end) = spec.call_end.filter(|_| !self.scan.in_string()) {
            match mark(rest, end, at.at_end) {
                Mark::Yes => {
                    self.end_call(out);
                    self.mode = self.after_call_mode();
                    return Flow::Next(i + end.len());
                }
                Mark::Partial => return Flow::Stop(i),
                Mark::No => {}
            }
        }
        if !self.scan.started() && c.is_whitespace() {
            return Flow::Next(i + c.len_utf8());
        }
        // Stream a run of characters up to the value's end or a possible marker.
        let mut j = i;
        let mut ended = false;
        for (k, ch) in rest.char_indices() {
            if k > 0 && !self.scan.in_string() && spec.call_end.is_some_and(|e| e.starts_with(ch)) {
                break;
            }
            match self.scan.step(ch) {
                Step::More => j = i + k + ch.len_utf8(),
                Step::Last => {
                    j = i + k + ch.len_utf8();
                    ended = true;
                    break;
                }
                // Past the value, or not JSON: the call keeps what it has; skip to its end.
                Step::EndedBefore | Step::Invalid => {
                    ended = true;
                    break;
                }
            }
        }
        self.send_args(&text[i..j]);
        if ended {
            self.end_call(out);
            self.mode = Mode::AfterCall;
        } else if j == text.len() {
            if at.at_end {
                self.end_call(out);
            }
            return Flow::Stop(j);
        }
        Flow::Next(j)
    }

    /// A JSON call object (see `object.rs`), watching for the call's end marker.
    pub(super) fn step_object(&mut self, at: At, phase: ObjPhase, out: &mut Parsed) -> Flow {
        let (rest, c, i) = (at.rest(), at.c(), at.i);
        if let Some(end) = self.spec().call_end.filter(|_| !self.scan.in_string()) {
            match mark(rest, end, at.at_end) {
                Mark::Yes => {
                    // jamba's end marker also closes an array left open.
                    self.in_array = false;
                    if self.committed && self.family.keeps_raw() && self.args_whole() {
                        // hermes: a call whose arguments are whole but whose object is not
                        // closed by its end marker, which vLLM's one-shot cannot read: the
                        // call's text is content (broken arguments still drop the call).
                        self.raw_to_content(end, out);
                        self.mode = self.after_call_mode();
                        return Flow::Next(i + end.len());
                    }
                    if self.committed {
                        self.end_call(out);
                        self.mode = self.after_call_mode();
                        return Flow::Next(i + end.len());
                    }
                    self.malformed(out);
                    return Flow::Next(i);
                }
                Mark::Partial => return Flow::Stop(i),
                Mark::No => {}
            }
        }
        // A consumed character belongs to the call; before the name it is also recorded, to
        // become content if the call turns out malformed.
        let was_committed = self.committed;
        if self.object_char(phase, c, out) {
            // (A nameless element that was dropped, mode changed, records nothing.)
            if !was_committed && !self.committed && matches!(self.mode, Mode::Object(_)) {
                self.pending.push(c);
            }
            return Flow::Next(i + c.len_utf8());
        }
        Flow::Next(i)
    }

    /// The call's value is done: back into its array, or drop text up to its end marker.
    pub(super) fn step_after_call(&mut self, at: At) -> Flow {
        let (rest, i) = (at.rest(), at.i);
        if self.in_array {
            self.mode = Mode::MistralArray;
            return Flow::Next(i);
        }
        match self.spec().call_end {
            Some(end) => match rest.find(end) {
                Some(found) => {
                    self.mode = self.after_call_mode();
                    Flow::Next(i + found + end.len())
                }
                None => {
                    let keep = if at.at_end {
                        0
                    } else {
                        crate::partial_suffix(rest, end)
                    };
                    Flow::Stop(i + rest.len() - keep)
                }
            },
            None => match self.block_end() {
                // The end marker, where it comes next (after whitespace), is dropped with
                // that whitespace; what follows is content, whitespace included (as vLLM's
                // apertus streams it).
                Some(end) => {
                    let ws = rest.len() - rest.trim_start().len();
                    match mark(&rest[ws..], end, at.at_end) {
                        Mark::Yes => {
                            self.mode = Mode::Content { at_start: false };
                            Flow::Next(i + ws + end.len())
                        }
                        Mark::Partial => Flow::Stop(i),
                        Mark::No if ws == rest.len() && !at.at_end => Flow::Stop(i),
                        Mark::No => {
                            self.mode = Mode::Content { at_start: false };
                            Flow::Next(i)
                        }
                    }
                }
                None => {
                    self.mode = Mode::Between;
                    Flow::Next(i)
                }
            },
        }
    }

    /// Between calls of a family without sections.
    pub(super) fn step_between(&mut self, at: At) -> Flow {
        let (text, rest, c, i) = (at.text, at.rest(), at.c(), at.i);
        if matches!(
            self.family,
            MarkedFamily::Hermes | MarkedFamily::LongCat | MarkedFamily::Internlm
        ) {
            // vLLM 0.33's hermes (and internlm2) keeps only the text before the first call:
            // text between and after calls is dropped in both of its paths, and later calls
            // are still read (internlm2's own parser fails on a second call).
            let call_start = self.spec().call_start;
            return match rest.find(call_start) {
                Some(found) => {
                    self.mode = Mode::Content { at_start: false };
                    Flow::Next(i + found)
                }
                None => {
                    let keep = if at.at_end {
                        0
                    } else {
                        crate::partial_suffix(rest, call_start)
                    };
                    Flow::Stop(i + rest.len() - keep)
                }
            };
        }
        let llama = self.family == MarkedFamily::Llama3Json;
        if c.is_whitespace() || (c == ';' && llama) {
            // Held, not dropped, until what follows is known: whitespace at the very end is
            // dropped, before text it is content.
            let ws_end = rest
                .find(|ch: char| !(ch.is_whitespace() || ch == ';'))
                .unwrap_or(rest.len());
            if ws_end == rest.len() {
                return Flow::Stop(if at.at_end { text.len() } else { i });
            }
            let next = &rest[ws_end..];
            let own = [self.spec().call_start];
            let starts = own
                .iter()
                .chain(self.family.openers().iter().map(|o| &o.start));
            if !at.at_end && starts.clone().any(|s| s.starts_with(next)) {
                return Flow::Stop(i); // a partial marker: wait for it
            }
            if starts.clone().any(|s| next.starts_with(s)) || (llama && next.starts_with('{')) {
                return Flow::Next(i + ws_end);
            }
            self.mode = Mode::Content { at_start: false };
            return Flow::Next(i);
        }
        if llama && c == '{' {
            self.begin_call();
            self.mode = Mode::Object(ObjPhase::Open);
            return Flow::Next(i);
        }
        self.mode = Mode::Content { at_start: false };
        Flow::Next(i)
    }
}
