//! The text of the call being read, as written (`raw`), for the families where vLLM 0.33's
//! one-shot turns a broken call's JSON back into content instead of dropping it: hermes
//! (a call object not closed by its `</tool_call>`, or by the end of the output) and
//! llama3_json (an object with a name but no `arguments`/`parameters`, or one that is not
//! JSON: from there on the output is content, as vLLM's one-shot keeps it all).

use super::object::ObjPhase;
use super::{MarkedFamily, MarkedParser, Mode};
use crate::tool::Parsed;

impl MarkedFamily {
    /// Whether the call being read is kept as written, to be content if it breaks.
    pub(super) fn keeps_raw(self) -> bool {
        matches!(self, MarkedFamily::Hermes | MarkedFamily::Llama3Json)
    }
}

/// Whether `mode` is inside a call (its text belongs to it).
fn in_call(mode: Mode) -> bool {
    matches!(
        mode,
        Mode::Object(_) | Mode::Name | Mode::Args | Mode::MistralBody | Mode::MistralArray
    )
}

impl MarkedParser {
    /// After one step of the scan, which consumed `consumed` in mode `before`: a call's text
    /// is recorded from its opener (or, for llama3_json, the whitespace before its `{`) on,
    /// and forgotten once the scan is out of the call.
    pub(super) fn note_raw(&mut self, before: Mode, consumed: &str) {
        if !self.family.keeps_raw() {
            return;
        }
        if !in_call(self.mode) {
            self.raw.clear();
        } else if in_call(before) {
            self.raw.push_str(consumed);
        } else {
            self.raw = self.pending.clone();
        }
    }

    /// The call being read is not a call after all: its text so far, then `tail` (what this
    /// step consumed of it), is content, and the call is not sent.
    pub(super) fn raw_to_content(&mut self, tail: &str, out: &mut Parsed) {
        let mut text = std::mem::take(&mut self.raw);
        text.push_str(tail);
        self.push_content(&text, out);
        self.args.clear();
        self.name = None;
        self.committed = false;
        self.pending.clear();
    }

    /// Whether the call's arguments so far are none or whole JSON (the call would be sent).
    pub(super) fn args_whole(&self) -> bool {
        self.args.trim().is_empty() || serde_json::from_str::<serde_json::Value>(&self.args).is_ok()
    }

    /// At the end of the output: a hermes or llama3_json call object whose arguments are
    /// whole but whose object was never closed is content (vLLM's one-shot cannot read it).
    pub(super) fn finish_raw(&mut self, out: &mut Parsed) {
        if self.family.keeps_raw() && self.committed && self.mode == Mode::Object(ObjPhase::After) {
            self.raw_to_content("", out);
            self.mode = Mode::Content { at_start: false };
        }
    }
}
