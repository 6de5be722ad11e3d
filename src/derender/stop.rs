//! Stop strings over streamed text, as vLLM's output processor applies them: the output ends
//! at the first occurrence of any stop string, which is dropped unless
//! `include_stop_str_in_output`. While streaming, the last `longest_stop - 1` bytes are held
//! back, since the next delta may complete a stop string across the boundary.

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
}

impl StopStrings {
    pub fn new(stops: Vec<String>, include_stop_str_in_output: bool) -> Self {
        let stops = stops.into_iter().filter(|s| !s.is_empty()).collect();
        StopStrings {
            stops,
            include: include_stop_str_in_output,
            held: String::new(),
            matched: None,
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

    /// Adds generated text; returns what may be emitted now.
    pub fn push(&mut self, text: &str) -> String {
        if self.stopped() {
            return String::new();
        }
        self.held.push_str(text);
        // The earliest stop string wins (ties: the longer one, as it ends later).
        let hit = self
            .stops
            .iter()
            .filter_map(|s| self.held.find(s.as_str()).map(|at| (at, s)))
            .min_by_key(|(at, s)| (*at, usize::MAX - s.len()));
        if let Some((at, stop)) = hit {
            let len = stop.len();
            self.matched = Some(stop.clone());
            let end = if self.include { at + len } else { at };
            let out = self.held[..end].to_string();
            self.held.clear();
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
        out
    }

    /// The held text at the end of the output.
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
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
}
