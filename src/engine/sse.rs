//! Server-sent events from the engine: `data: <json>\n\n` blocks, ended by `data: [DONE]`.
//!
//! The splitter keeps at most one unfinished event; an event past `max_event_bytes` is an
//! error rather than a buffer that grows with whatever the engine sends.

use bytes::{Buf, BytesMut};

/// One event's data, or the end of the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    Data(Vec<u8>),
    Done,
}

/// Splits a byte stream into SSE events.
#[derive(Debug)]
pub struct SseSplitter {
    buf: BytesMut,
    /// How far `buf` has been searched for a blank line: an event read in many pieces is
    /// scanned once, not once per piece.
    scanned: usize,
    max_event_bytes: usize,
}

/// An event longer than the limit.
#[derive(Debug, thiserror::Error)]
#[error("an engine event is longer than {0} bytes (--engine-max-event-bytes)")]
pub struct EventTooLong(pub usize);

impl SseSplitter {
    pub fn new(max_event_bytes: usize) -> Self {
        SseSplitter {
            buf: BytesMut::new(),
            scanned: 0,
            max_event_bytes,
        }
    }

    /// Adds bytes read from the engine.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete event, if one has arrived. Blocks without a `data:` line
    /// (comments, keep-alives) are skipped; several `data:` lines of one event are joined
    /// with `\n`, as the SSE specification joins them.
    pub fn next_event(&mut self) -> Result<Option<Event>, EventTooLong> {
        loop {
            let Some((end, sep)) = block_end(&self.buf, self.scanned.saturating_sub(2)) else {
                self.scanned = self.buf.len();
                if self.buf.len() > self.max_event_bytes {
                    return Err(EventTooLong(self.max_event_bytes));
                }
                return Ok(None);
            };
            let block = self.buf.split_to(end);
            self.buf.advance(sep);
            self.scanned = 0;
            let mut data: Option<Vec<u8>> = None;
            for line in block[..].split(|b: &u8| *b == b'\n') {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                let Some(rest) = line.strip_prefix(b"data:") else {
                    continue;
                };
                let rest = rest.strip_prefix(b" ").unwrap_or(rest);
                match data.as_mut() {
                    Some(d) => {
                        d.push(b'\n');
                        d.extend_from_slice(rest);
                    }
                    None => data = Some(rest.to_vec()),
                }
            }
            match data {
                Some(d) if d == b"[DONE]" => return Ok(Some(Event::Done)),
                Some(d) => return Ok(Some(Event::Data(d))),
                None => continue,
            }
        }
    }

    /// Bytes received that do not yet form an event.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }
}

/// Where the first blank line at or after `from` is: the block's end and the separator's length.
fn block_end(buf: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut i = from;
    while i < buf.len() {
        if buf[i] == b'\n' {
            if buf.get(i + 1) == Some(&b'\n') {
                return Some((i, 2));
            }
            if buf.get(i + 1) == Some(&b'\r') && buf.get(i + 2) == Some(&b'\n') {
                return Some((i, 3));
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn splits_events_across_any_read_boundary() {
        let wire = b"data: {\"a\":1}\n\n: keep-alive\n\ndata: {\"b\":2}\r\n\r\ndata: [DONE]\n\n";
        for cut in 0..wire.len() {
            let mut s = SseSplitter::new(1 << 20);
            let mut got = Vec::new();
            for part in [&wire[..cut], &wire[cut..]] {
                s.extend(part);
                while let Some(e) = s.next_event().unwrap() {
                    got.push(e);
                }
            }
            assert_eq!(
                got,
                vec![
                    Event::Data(b"{\"a\":1}".to_vec()),
                    Event::Data(b"{\"b\":2}".to_vec()),
                    Event::Done
                ],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn an_endless_event_is_refused() {
        let mut s = SseSplitter::new(8);
        s.extend(b"data: 0123456789");
        assert!(s.next_event().is_err());
    }
}
