//! Fetching `http(s)://` image URLs, safely (`--allowed-media-domains`).
//!
//! * Only hosts listed exactly in the allowlist are fetched, and every redirect target is
//!   checked against the same list (at most 5 redirects).
//! * Names are resolved by our own resolver, which refuses loopback, private, link-local
//!   (which includes the 169.254.169.254 cloud metadata address), CGNAT, multicast,
//!   unspecified, documentation and IPv6 unique-local addresses, so a listed name that
//!   resolves inside the network is refused; literal IPs in URLs are checked the same way.
//!   `--allow-private-media-hosts` lifts this for deployments whose image store is internal.
//! * The whole fetch has a timeout, and the body is read in chunks up to `max_bytes`.

use super::MediaError;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// Where and how images may be fetched.
#[derive(Debug, Clone)]
pub struct FetchPolicy {
    /// Exact host names (lowercase) that may be fetched.
    pub allowed_domains: Vec<String>,
    pub allow_private: bool,
    pub timeout: Duration,
    pub max_bytes: u64,
}

/// Whether an address is one a fetched URL must never reach.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (o[1] & 0xc0) == 64) // 100.64.0.0/10 (CGNAT)
                || (o[0] == 198 && (o[1] & 0xfe) == 18) // 198.18.0.0/15 (benchmarking)
                || o[0] >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal(IpAddr::V4(v4));
            }
            let s = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link local
                || (s[0] == 0x2001 && s[1] == 0xdb8) // documentation
        }
    }
}

/// A resolver that drops internal addresses unless allowed.
struct SafeResolver {
    allow_private: bool,
}

impl reqwest::dns::Resolve for SafeResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| allow_private || !is_internal(a.ip()))
                .collect();
            if addrs.is_empty() {
                return Err(format!("{host} resolves only to internal addresses").into());
            }
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// An HTTP client bound to a [`FetchPolicy`].
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    policy: Arc<FetchPolicy>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("policy", &self.policy)
            .finish()
    }
}

impl Fetcher {
    pub fn new(policy: FetchPolicy) -> Result<Fetcher, String> {
        let policy = Arc::new(policy);
        let redirect_policy = policy.clone();
        let client = reqwest::Client::builder()
            .timeout(policy.timeout)
            .dns_resolver(Arc::new(SafeResolver {
                allow_private: policy.allow_private,
            }))
            .redirect(reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() >= 5 {
                    attempt.error("too many redirects")
                } else if let Err(e) = check_url(attempt.url(), &redirect_policy) {
                    attempt.error(e.to_string())
                } else {
                    attempt.follow()
                }
            }))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Fetcher { client, policy })
    }

    /// Fetches `url`'s bytes, or says why not.
    pub async fn fetch(&self, url: &str) -> Result<Vec<u8>, MediaError> {
        let parsed =
            reqwest::Url::parse(url).map_err(|e| MediaError::Fetch(format!("bad URL: {e}")))?;
        check_url(&parsed, &self.policy)?;
        let mut resp = self
            .client
            .get(parsed)
            .send()
            .await
            .map_err(|e| MediaError::Fetch(describe(&e)))?;
        if !resp.status().is_success() {
            return Err(MediaError::Fetch(format!(
                "the server answered {}",
                resp.status()
            )));
        }
        let mut out = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| MediaError::Fetch(describe(&e)))?
        {
            if out.len() as u64 + chunk.len() as u64 > self.policy.max_bytes {
                return Err(MediaError::Fetch(format!(
                    "the image is larger than {} bytes (--max-media-bytes)",
                    self.policy.max_bytes
                )));
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }
}

/// reqwest's error with its cause chain (the resolver's and redirect policy's messages).
fn describe(e: &reqwest::Error) -> String {
    let mut msg = if e.is_timeout() {
        "timed out".to_string()
    } else {
        e.to_string()
    };
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    msg
}

/// Scheme, allowlist and literal-IP checks for a URL (also run on every redirect).
fn check_url(url: &reqwest::Url, policy: &FetchPolicy) -> Result<(), MediaError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(MediaError::Scheme(url.scheme().to_string()));
    }
    let host = url
        .host_str()
        .unwrap_or_default()
        .trim_matches(['[', ']'])
        .to_ascii_lowercase();
    if !policy.allowed_domains.contains(&host) {
        return Err(MediaError::Fetch(format!(
            "host {host:?} is not in --allowed-media-domains"
        )));
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        if !policy.allow_private && is_internal(ip) {
            return Err(MediaError::Fetch(format!("{ip} is an internal address")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(
                is_internal(ip.parse().unwrap_or(IpAddr::from([0, 0, 0, 0]))),
                "{ip}"
            );
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700::1111"] {
            assert!(
                !is_internal(ip.parse().unwrap_or(IpAddr::from([127, 0, 0, 1]))),
                "{ip}"
            );
        }
    }
}
