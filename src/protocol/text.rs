//! Strings of a request body kept as slices of the body itself.
//!
//! A 20-turn chat body carries ~40 message strings, ~20 KB of text. Copying each into its own
//! `String` cost ~40% of parsing the body (7.7 µs against 4.6 µs borrowed, in process, for
//! `benches/render_vs_vllm_rs.py`'s chats), mostly in the allocator: each new string lands in
//! a block freed many requests ago and missing the CPU caches. [`Text`] instead keeps a
//! reference-counted slice of the body ([`Bytes`]), which the server already holds and which
//! the kernel has just written, so it is hot.
//!
//! A string is sliced when `serde_json` hands it over borrowed (`visit_borrowed_str`: no escape
//! sequences), and only while [`parse_shared`] is parsing that body on this thread; any
//! other string (escaped, parsed from a `Value` or from a body not given as [`Bytes`]) is
//! owned. Strings of up to 38 bytes (roles, names, call IDs) are copied into the `Text`
//! itself instead, which costs neither an allocation nor a reference count. Either way a
//! `Text` reads the same, so nothing downstream can tell them apart.
//!
//! A sliced `Text` keeps the whole body alive: fine for a request's lifetime, wrong for
//! anything kept longer (use [`Text::to_string`] there).

use bytes::Bytes;
use std::cell::RefCell;
use std::fmt;
use std::ops::Deref;

/// A UTF-8 string: a slice of a request body, or owned.
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    /// Bytes that were a `&str` when sliced (see [`Text::from_body_or_copy`]).
    Body(Bytes),
    /// A short string (a role, a name, a call ID) copied in place: cheaper than a reference
    /// count on the body or an allocation. Its first `.0` bytes, copied from a `&str`.
    Inline(u8, [u8; INLINE]),
    Owned(Box<str>),
}

/// The longest [`Repr::Inline`] string: what fits in the 40 bytes a `Text` takes anyway
/// (`Bytes` and a tag).
const INLINE: usize = 38;

thread_local! {
    /// The body [`parse_shared`] is parsing on this thread.
    static BODY: RefCell<Option<Bytes>> = const { RefCell::new(None) };
}

/// Runs `parse` on `body`, letting the [`Text`]s it makes slice `body` instead of copying.
pub fn parse_shared<R>(body: &Bytes, parse: impl FnOnce(&[u8]) -> R) -> R {
    crate::thread_scope::with_local(&BODY, body.clone(), || parse(body))
}

impl Text {
    /// `s` as a slice of the body being parsed when it lies inside it, else a copy.
    pub(crate) fn from_body_or_copy(s: &str) -> Text {
        if s.len() <= INLINE {
            return Text::from(s);
        }
        let sliced = BODY.with(|b| {
            let body = b.borrow();
            let body = body.as_ref()?;
            let (start, end) = (body.as_ptr() as usize, body.as_ptr() as usize + body.len());
            let at = s.as_ptr() as usize;
            // `slice_ref` panics on a slice outside `body`; this is its own check.
            (at >= start && at + s.len() <= end).then(|| body.slice_ref(s.as_bytes()))
        });
        match sliced {
            Some(bytes) => Text(Repr::Body(bytes)),
            None => Text::from(s),
        }
    }

    pub fn as_str(&self) -> &str {
        match &self.0 {
            // SAFETY: `Repr::Body` is built only in `from_body_or_copy`, from the bytes of a
            // `&str`, and `Bytes` never changes its contents, so they are valid UTF-8.
            Repr::Body(b) => unsafe { std::str::from_utf8_unchecked(b) },
            // SAFETY: built only in `From<&str>`, whose first `len` bytes are the bytes of that
            // `&str`, never changed since.
            Repr::Inline(len, buf) => unsafe {
                std::str::from_utf8_unchecked(buf.get_unchecked(..usize::from(*len)))
            },
            Repr::Owned(s) => s,
        }
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        match u8::try_from(s.len()) {
            Ok(len) if s.len() <= INLINE => {
                let mut buf = [0u8; INLINE];
                buf[..s.len()].copy_from_slice(s.as_bytes());
                Text(Repr::Inline(len, buf))
            }
            _ => Text(Repr::Owned(s.into())),
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        if s.len() <= INLINE {
            return Text::from(s.as_str());
        }
        Text(Repr::Owned(s.into_boxed_str()))
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_slice_of(t: &Text, body: &Bytes) -> bool {
        matches!(&t.0, Repr::Body(b) if b.as_ptr() >= body.as_ptr()
            && b.as_ptr() as usize + b.len() <= body.as_ptr() as usize + body.len())
    }

    const LONG: &[u8] = b"{a string longer than an inline one, sliced}";

    #[test]
    fn slices_the_body_only_while_parsing_it() {
        let body = Bytes::from_static(LONG);
        let inside = std::str::from_utf8(&body[1..]).unwrap();
        assert!(!is_slice_of(&Text::from_body_or_copy(inside), &body));
        let t = parse_shared(&body, |b| {
            Ok::<_, ()>(Text::from_body_or_copy(
                std::str::from_utf8(&b[1..]).unwrap(),
            ))
        })
        .unwrap();
        assert!(is_slice_of(&t, &body));
        assert_eq!(t.as_str(), inside);
        // Outside the body: copied.
        let other = String::from(inside);
        let t = parse_shared(&body, |_| Ok::<_, ()>(Text::from_body_or_copy(&other))).unwrap();
        assert!(matches!(t.0, Repr::Owned(_)));
        assert_eq!(t, Text::from(inside));
    }

    /// Short strings are copied in place, at every length and across char boundaries.
    #[test]
    fn short_strings_are_inline() {
        let s = "aé€😀".repeat(10);
        for end in (0..=s.len()).filter(|&i| s.is_char_boundary(i)) {
            for t in [Text::from(&s[..end]), Text::from(s[..end].to_string())] {
                assert_eq!(t.as_str(), &s[..end]);
                assert_eq!(matches!(t.0, Repr::Inline(..)), end <= INLINE);
            }
        }
        assert!(std::mem::size_of::<Text>() <= std::mem::size_of::<Bytes>() + 8);
    }

    #[test]
    fn a_panic_while_parsing_clears_the_body() {
        let body = Bytes::from_static(LONG);
        let r = std::panic::catch_unwind(|| {
            parse_shared(&body, |_| -> Result<(), ()> { panic!("parser bug") })
        });
        assert!(r.is_err());
        let inside = std::str::from_utf8(&body[..]).unwrap();
        assert!(!is_slice_of(&Text::from_body_or_copy(inside), &body));
    }
}
