//! Stop strings over streamed text, as vLLM's output processor applies them
//! (`v1/engine/detokenizer.py` `update` and `check_stop_strings`): text arrives one token's
//! piece at a time, and the output ends at the stop string that *completes* first (ties:
//! the earlier in the request's list), which is dropped unless `include_stop_str_in_output`.
//! Under `min_tokens`, a stop string must end after the text of the first `min_tokens`
//! tokens (it may begin inside it). While streaming, the last `longest_stop - 1` bytes are
//! held back, since the next piece may complete a stop string across the boundary.

/// The stop-string state machine; one instance per output. Serializable: it travels in the
/// stream state (its size is the request's stop strings plus under one stop of held text).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct StopStrings {
    stops: Vec<String>,
    include: bool,
    held: String,
    /// The stop string that ended the output (vLLM's `stop_reason`).
    #[serde(default)]
    matched: Option<String>,
    /// The request's `min_tokens`.
    #[serde(default)]
    min_tokens: u64,
    /// Pieces (tokens) pushed so far.
    #[serde(default)]
    tokens: u64,
    /// Bytes at the front of `held` that belong to the first `min_tokens` tokens: no stop
    /// string may end inside them.
    #[serde(default)]
    guarded: usize,
}

impl StopStrings {
    pub fn new(stops: Vec<String>, include_stop_str_in_output: bool) -> Self {
        let stops = stops.into_iter().filter(|s| !s.is_empty()).collect();
        StopStrings {
            stops,
            include: include_stop_str_in_output,
            held: String::new(),
            matched: None,
            min_tokens: 0,
            tokens: 0,
            guarded: 0,
        }
    }

    /// Stop strings count only once they end after the first `min_tokens` tokens' text.
    pub fn with_min_tokens(mut self, min_tokens: u64) -> Self {
        self.min_tokens = min_tokens;
        self
    }

    /// Replaces the stop strings before any text was pushed: vLLM's one-shot derender cuts
    /// only at the stop string the engine reported, and at none when the engine reports a
    /// stop token or finishes otherwise than `stop` (`online_derenderer._decode_output`).
    pub fn replace_stops(&mut self, stops: Vec<String>) {
        if self.tokens == 0 {
            self.stops = stops.into_iter().filter(|s| !s.is_empty()).collect();
        }
    }

    /// Whether the request has stop strings (text may be held back between chunks).
    pub fn is_active(&self) -> bool {
        !self.stops.is_empty()
    }

    /// Whether a stop string ended the output.
    pub fn stopped(&self) -> bool {
        self.matched.is_some()
    }

    /// The stop string that ended the output, if one did.
    pub fn matched(&self) -> Option<&str> {
        self.matched.as_deref()
    }

    /// Adds the text of the next token (or, at the end, the detokenizer's rest); returns
    /// what may be emitted now.
    pub fn push(&mut self, text: &str) -> String {
        if self.stopped() {
            return String::new();
        }
        self.held.push_str(text);
        self.tokens += 1;
        if self.tokens <= self.min_tokens {
            self.guarded = self.held.len();
        }
        // The stop string that completes first; ties: the earlier in the list.
        let hit = self
            .stops
            .iter()
            .filter_map(|s| first_end_after(&self.held, s, self.guarded).map(|at| (at, s)))
            .min_by_key(|(at, s)| at + s.len());
        if let Some((at, stop)) = hit {
            let len = stop.len();
            self.matched = Some(stop.clone());
            let end = if self.include { at + len } else { at };
            let out = self.held[..end].to_string();
            self.held.clear();
            self.guarded = 0;
            return out;
        }
        let keep = self
            .stops
            .iter()
            .map(|s| s.len().saturating_sub(1))
            .max()
            .unwrap_or(0)
            .min(self.held.len());
        let mut cut = self.held.len() - keep;
        while !self.held.is_char_boundary(cut) {
            cut -= 1;
        }
        let out = self.held[..cut].to_string();
        self.held.drain(..cut);
        self.guarded = self.guarded.saturating_sub(cut);
        out
    }

    /// The held text at the end of the output.
    pub fn finish(&mut self) -> String {
        self.guarded = 0;
        std::mem::take(&mut self.held)
    }
}

/// Where the first occurrence of `stop` in `text` that ends after byte `guarded` begins
/// (occurrences may overlap).
fn first_end_after(text: &str, stop: &str, guarded: usize) -> Option<usize> {
    let mut from = (guarded + 1).saturating_sub(stop.len());
    loop {
        while !text.is_char_boundary(from) {
            from -= 1;
        }
        let at = from + text[from..].find(stop)?;
        if at + stop.len() > guarded {
            return Some(at);
        }
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stops: &[&str], include: bool, chunks: &[&str]) -> (String, bool) {
        let mut s = StopStrings::new(stops.iter().map(|s| s.to_string()).collect(), include);
        let mut out = String::new();
        for c in chunks {
            out.push_str(&s.push(c));
        }
        out.push_str(&s.finish());
        (out, s.stopped())
    }

    #[test]
    fn stops_across_chunks_in_any_split() {
        let text = "Hello wörld. END of it";
        for split in 0..=text.len() {
            if !text.is_char_boundary(split) {
                continue;
            }
            let chunks = [&text[..split], &text[split..]];
            assert_eq!(
                run(&["END"], false, &chunks),
                ("Hello wörld. ".to_string(), true),
                "{split}"
            );
            assert_eq!(
                run(&["END"], true, &chunks),
                ("Hello wörld. END".to_string(), true),
                "{split}"
            );
            assert_eq!(
                run(&["nope"], false, &chunks),
                (text.to_string(), false),
                "{split}"
            );
        }
        assert_eq!(
            run(&["o w", "wö"], false, &["Hello wörld"]),
            ("Hell".to_string(), true)
        );
        let mut s = StopStrings::new(vec!["o w".into(), "wö".into()], false);
        s.push("Hello wörld");
        assert_eq!(s.matched(), Some("o w"));
        assert_eq!(run(&[""], false, &["abc"]), ("abc".to_string(), false));
    }

    #[test]
    fn the_stop_string_that_completes_first_wins() {
        // One token at a time, vLLM stops at "ab" before "abc" can complete.
        assert_eq!(run(&["abc", "ab"], true, &["a", "b", "c"]).0, "ab");
        // In one piece too, as vLLM's check of a step's new text.
        assert_eq!(run(&["abc", "ab"], true, &["abc"]).0, "ab");
        assert_eq!(run(&["bc", "abcd"], false, &["xabcd"]).0, "xa");
        // Same end: the earlier in the list.
        let mut s = StopStrings::new(vec!["bc".into(), "abc".into()], false);
        s.push("abc");
        assert_eq!(s.matched(), Some("bc"));
    }

    fn run_min(stops: &[&str], min: u64, pieces: &[&str]) -> (String, Option<String>) {
        let mut s = StopStrings::new(stops.iter().map(|s| s.to_string()).collect(), false)
            .with_min_tokens(min);
        let mut out = String::new();
        for p in pieces {
            out.push_str(&s.push(p));
        }
        out.push_str(&s.finish());
        (out, s.matched().map(str::to_string))
    }

    #[test]
    fn under_min_tokens_a_stop_must_end_after_their_text() {
        // "X" in the first two tokens does not count; the one after does.
        assert_eq!(
            run_min(&["X"], 2, &["aX", "b", "cX", "d"]),
            ("aXbc".to_string(), Some("X".into()))
        );
        // A stop string may begin inside the guarded text and end after it.
        assert_eq!(
            run_min(&["XY"], 1, &["aX", "Yb"]),
            ("a".to_string(), Some("XY".into()))
        );
        // Ending exactly at the guard does not count, overlapping occurrences are found.
        assert_eq!(
            run_min(&["aa"], 1, &["aa", "a"]),
            ("a".to_string(), Some("aa".into()))
        );
        assert_eq!(
            run_min(&["ö"], 3, &["ö", "ö", "ö"]),
            ("ööö".to_string(), None)
        );
        assert_eq!(
            run_min(&["ö"], 3, &["ö", "ö", "ö", "xö"]),
            ("öööx".to_string(), Some("ö".into()))
        );
    }
}
