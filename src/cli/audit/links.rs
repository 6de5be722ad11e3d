//! The links a request crosses between processes, and the message limit of each.
//!
//! A request's stages (`request.rs`) are what it *is* at each point; a link is where it
//! *travels* as one message, which is what an RPC stack's limit applies to (gRPC refuses
//! messages over 4 MiB by default, on both ends):
//!
//! | link | carries |
//! |---|---|
//! | `client-render` | the request JSON |
//! | `render-engine` | the render response (vLLM's `GenerateRequest`, with `kwargs_data`) |
//! | `render-encoder` | every image's float32 patches (transformers' `pixel_values`) |
//! | `encoder-prefill` | every image's vision embeddings |
//! | `prefill-decode` | the prompt's KV cache, in whole blocks (a P/D split's transfer) |

use super::units::{human, parse_size};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Link {
    ClientRender,
    RenderEngine,
    RenderEncoder,
    EncoderPrefill,
    PrefillDecode,
}

impl Link {
    pub const ALL: [Link; 5] = [
        Link::ClientRender,
        Link::RenderEngine,
        Link::RenderEncoder,
        Link::EncoderPrefill,
        Link::PrefillDecode,
    ];

    /// The name `--limit` takes.
    pub fn key(self) -> &'static str {
        match self {
            Link::ClientRender => "client-render",
            Link::RenderEngine => "render-engine",
            Link::RenderEncoder => "render-encoder",
            Link::EncoderPrefill => "encoder-prefill",
            Link::PrefillDecode => "prefill-decode",
        }
    }

    /// The name tables print.
    pub fn label(self) -> &'static str {
        match self {
            Link::ClientRender => "client → render",
            Link::RenderEngine => "render → engine",
            Link::RenderEncoder => "render → encoder",
            Link::EncoderPrefill => "encoder → prefill",
            Link::PrefillDecode => "prefill → decode",
        }
    }

    /// Whether every request crosses it (the encoder links only carry images).
    pub fn always(self) -> bool {
        !matches!(self, Link::RenderEncoder | Link::EncoderPrefill)
    }

    /// gRPC's default message limit on the two links that carry image tensors.
    fn default_limit(self) -> Option<u64> {
        match self {
            Link::RenderEngine | Link::RenderEncoder => Some(4 << 20),
            _ => None,
        }
    }

    fn from_key(key: &str) -> Option<Link> {
        Link::ALL.into_iter().find(|l| l.key() == key)
    }
}

/// The limit of each link: the defaults, then every `--limit LINK=SIZE` in order.
#[derive(Debug, Clone)]
pub struct Limits([Option<u64>; 5]);

impl Limits {
    pub fn new(flags: &[LimitFlag]) -> Limits {
        let mut limits = Link::ALL.map(Link::default_limit);
        for f in flags {
            for (slot, link) in limits.iter_mut().zip(Link::ALL) {
                if f.links.contains(&link) {
                    *slot = f.bytes;
                }
            }
        }
        Limits(limits)
    }

    pub fn of(&self, link: Link) -> Option<u64> {
        self.0[link as usize]
    }

    /// `render-engine 4.00 MiB, render-encoder 4.00 MiB` (or `none`).
    pub fn describe(&self) -> String {
        let set: Vec<String> = Link::ALL
            .into_iter()
            .filter_map(|l| self.of(l).map(|b| format!("{} {}", l.key(), human(b))))
            .collect();
        if set.is_empty() {
            "none".into()
        } else {
            set.join(", ")
        }
    }
}

/// One `--limit LINK=SIZE`: `LINK` is a link's name or `all`; `SIZE` is a size or `none`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitFlag {
    links: Vec<Link>,
    bytes: Option<u64>,
}

pub fn parse_limit(text: &str) -> Result<LimitFlag, String> {
    let names = || {
        Link::ALL
            .iter()
            .map(|l| l.key())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (link, size) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: expected LINK=SIZE, LINK one of {}, all", names()))?;
    let links = match link.trim() {
        "all" => Link::ALL.to_vec(),
        key => vec![Link::from_key(key)
            .ok_or_else(|| format!("unknown link {key:?}; one of {}, all", names()))?],
    };
    let bytes = match size.trim() {
        "none" | "off" => None,
        s => Some(parse_size(s)?),
    };
    Ok(LimitFlag { links, bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_flags() {
        let l = Limits::new(&[]);
        assert_eq!(l.of(Link::RenderEngine), Some(4 << 20));
        assert_eq!(l.of(Link::RenderEncoder), Some(4 << 20));
        assert_eq!(l.of(Link::PrefillDecode), None);
        let flags = [
            parse_limit("all=none").unwrap(),
            parse_limit("prefill-decode=64MiB").unwrap(),
            parse_limit("render-engine = 16MB").unwrap(),
        ];
        let l = Limits::new(&flags);
        assert_eq!(l.of(Link::RenderEncoder), None);
        assert_eq!(l.of(Link::PrefillDecode), Some(64 << 20));
        assert_eq!(l.of(Link::RenderEngine), Some(16_000_000));
        assert_eq!(
            l.describe(),
            "render-engine 15.26 MiB, prefill-decode 64.00 MiB"
        );
        assert!(parse_limit("engine=4MiB")
            .unwrap_err()
            .contains("unknown link \"engine\""));
        assert!(parse_limit("render-engine")
            .unwrap_err()
            .contains("LINK=SIZE"));
        assert!(parse_limit("render-engine=lots").is_err());
    }

    #[test]
    fn all_is_in_discriminant_order() {
        // Per-link arrays are indexed by `link as usize`, filled in `ALL` order.
        for (i, link) in Link::ALL.into_iter().enumerate() {
            assert_eq!(link as usize, i, "{link:?}");
        }
    }
}
