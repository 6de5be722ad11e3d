//! Finding where a JSON value ends, one character at a time, without parsing it: the
//! scanner tracks nesting depth and whether it is inside a string, which is all it takes to
//! stream a value's bytes as they arrive and to know when the value is complete. Values are
//! not validated (see the module docs of `tool`).

use serde::{Deserialize, Serialize};

/// Where one JSON value is in its text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueScan {
    started: bool,
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// A bare scalar (`12`, `true`, `null`): it ends at the first character that cannot
    /// continue it, which is not part of the value.
    scalar: bool,
    done: bool,
}

/// What one character did to the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The character is part of the value, which continues.
    More,
    /// The character is the value's last.
    Last,
    /// The value ended before this character (a scalar's delimiter), which is not part of it.
    EndedBefore,
    /// The character cannot start a value.
    Invalid,
}

impl ValueScan {
    /// Whether the scanner is inside a string literal (where markers are plain text).
    pub fn in_string(&self) -> bool {
        self.in_string
    }

    pub fn started(&self) -> bool {
        self.started
    }

    /// Whether the value is complete (a scalar is only known complete at its delimiter or
    /// at the end of the output: see [`ValueScan::complete_at_end`]).
    pub fn done(&self) -> bool {
        self.done
    }

    /// Whether the value would be complete if the output ended here.
    #[cfg(test)]
    fn complete_at_end(&self) -> bool {
        self.done || (self.scalar && !self.in_string)
    }

    /// Feeds the next character; leading whitespace must be skipped by the caller.
    pub fn step(&mut self, c: char) -> Step {
        if self.done {
            return Step::EndedBefore;
        }
        if !self.started {
            self.started = true;
            match c {
                '{' | '[' => self.depth = 1,
                '"' => self.in_string = true,
                '-' | '0'..='9' | 't' | 'f' | 'n' => self.scalar = true,
                _ => {
                    self.started = false;
                    return Step::Invalid;
                }
            }
            return Step::More;
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if c == '\\' {
                self.escaped = true;
            } else if c == '"' {
                self.in_string = false;
                if self.depth == 0 {
                    self.done = true;
                    return Step::Last;
                }
            }
            return Step::More;
        }
        if self.scalar {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-') {
                return Step::More;
            }
            self.done = true;
            return Step::EndedBefore;
        }
        match c {
            '"' => self.in_string = true,
            '{' | '[' => self.depth += 1,
            '}' | ']' => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    self.done = true;
                    return Step::Last;
                }
            }
            _ => {}
        }
        Step::More
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extent(text: &str) -> Option<usize> {
        let mut s = ValueScan::default();
        for (i, c) in text.char_indices() {
            match s.step(c) {
                Step::More => {}
                Step::Last => return Some(i + c.len_utf8()),
                Step::EndedBefore => return Some(i),
                Step::Invalid => return None,
            }
        }
        s.complete_at_end().then_some(text.len())
    }

    #[test]
    fn finds_value_ends() {
        assert_eq!(extent(r#"{"a": "}\"", "b": [1, {"c": 2}]} tail"#), Some(32));
        assert_eq!(extent(r#""x\\" y"#), Some(5));
        assert_eq!(extent("12.5e3, 1"), Some(6));
        assert_eq!(extent("true"), Some(4));
        assert_eq!(extent("<x>"), None);
        assert_eq!(extent(r#"{"open": "#), None);
    }
}
