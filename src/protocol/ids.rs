//! OpenAI ids and timestamps of responses.

/// A fresh request id with vLLM's prefixes (`chatcmpl-`, `cmpl-`).
pub fn request_id(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

/// Seconds since the Unix epoch, for OpenAI's `created` fields (0 if the clock is before it).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
