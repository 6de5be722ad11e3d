//! Python's notions of whitespace and of decimal digits, where they differ from Rust's.
//!
//! Parsers that follow vLLM's Python code (`str.strip()`, `int()`, `float()`) and the chat
//! template environment (`trim`, `.split()`) read text through these.

use std::borrow::Cow;

/// Python's whitespace (`str.isspace`, what `str.strip()` and `str.split()` drop): Unicode's
/// White_Space, as Rust's `char::is_whitespace`, plus U+001C–U+001F. (`int()` and `float()`
/// strip only White_Space, as `str::trim` does.)
pub fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The zero of each run of ten decimal digits (Unicode category Nd), from Python 3.11's
/// `unicodedata` (Unicode 14.0): every Nd character is `zero + 0..=9` of one of them.
const DIGIT_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50,
    0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The value of a decimal digit of any script (`unicodedata.decimal`).
fn decimal(c: char) -> Option<u8> {
    let c = u32::from(c);
    let i = DIGIT_ZEROS.partition_point(|&z| z <= c).checked_sub(1)?;
    let d = c - DIGIT_ZEROS[i];
    (d < 10).then_some(d as u8)
}

/// `s` with every decimal digit written in ASCII, as `int()` and `float()` read digits of any
/// script (`int("３")` is 3).
pub fn ascii_digits(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    s.chars()
        .map(|c| decimal(c).map_or(c, |d| char::from(b'0' + d)))
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_of_any_script() {
        assert_eq!(ascii_digits("12"), "12");
        assert_eq!(ascii_digits("３.٥𝟗"), "3.59");
        assert_eq!(ascii_digits("x١y"), "x1y");
        // Just past a run, and other numerics that are not Nd.
        assert_eq!(ascii_digits("\u{66A}½Ⅻ"), "\u{66A}½Ⅻ");
        assert!(py_space('\u{1f}') && py_space('\u{3000}') && !py_space('x'));
    }
}
