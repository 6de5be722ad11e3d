//! Where the audited requests come from: files, JSON-lines files, directories of both, or
//! standard input; each request with a label (`sample.jsonl:12`) for its error messages.

use super::request::{audit, Assumptions, Audit};
use crate::model::ModelRegistry;
use crate::protocol::{parse_json, ChatRequest};
use crate::render::RenderOptions;
use anyhow::bail;
use std::path::Path;

/// One request as sent: its bytes, and where it came from.
pub struct Request {
    pub label: String,
    pub body: Vec<u8>,
}

/// Every request of `inputs` (nothing or `-`: standard input), in order; a directory gives
/// its `.json` (a request each) and `.jsonl` files, sorted by name.
pub fn collect(inputs: &[String], jsonl: bool) -> anyhow::Result<Vec<Request>> {
    let mut out = Vec::new();
    if inputs.is_empty() {
        read("-", jsonl, &mut out)?;
    }
    for input in inputs {
        let path = Path::new(input);
        if input != "-" && path.is_dir() {
            let mut files: Vec<_> = std::fs::read_dir(path)
                .map_err(|e| anyhow::anyhow!("{input}: {e}"))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.is_file()
                        && matches!(
                            p.extension().and_then(|e| e.to_str()),
                            Some("json" | "jsonl")
                        )
                })
                .collect();
            files.sort();
            if files.is_empty() {
                bail!("{input}: a directory without .json or .jsonl files");
            }
            for f in files {
                read(&f.display().to_string(), jsonl, &mut out)?;
            }
        } else {
            read(input, jsonl, &mut out)?;
        }
    }
    if out.is_empty() {
        bail!(
            "no requests in {}",
            if inputs.is_empty() {
                "standard input".to_string()
            } else {
                inputs.join(", ")
            }
        );
    }
    Ok(out)
}

fn read(input: &str, jsonl: bool, out: &mut Vec<Request>) -> anyhow::Result<()> {
    let body = super::super::read_input(Some(input))?;
    let name = if input == "-" { "stdin" } else { input };
    if jsonl || input.ends_with(".jsonl") {
        for (i, line) in body.split(|b| *b == b'\n').enumerate() {
            if !line.iter().all(u8::is_ascii_whitespace) {
                out.push(Request {
                    label: format!("{name}:{}", i + 1),
                    body: line.to_vec(),
                });
            }
        }
    } else {
        out.push(Request {
            label: name.to_string(),
            body,
        });
    }
    Ok(())
}

/// The body of an OpenAI Batch API line (`{"custom_id", "method", "url", "body"}`), as the
/// client would send it; any other request as it is.
fn unwrap_batch(body: &[u8]) -> anyhow::Result<Option<Vec<u8>>> {
    // Only lines that name `custom_id` are parsed twice.
    if !body.windows(11).any(|w| w == b"\"custom_id\"") {
        return Ok(None);
    }
    let line: serde_json::Value = serde_json::from_slice(body)?;
    let (Some(url), Some(inner)) = (line.get("url"), line.get("body")) else {
        return Ok(None);
    };
    match url.as_str() {
        Some(u) if u.ends_with("/chat/completions") => Ok(Some(serde_json::to_vec(inner)?)),
        _ => bail!("a Batch API line for {url}; audit reads chat requests (/v1/chat/completions)"),
    }
}

/// The audit of one request, on the model it names (or the only one loaded).
pub fn audit_one(
    models: &ModelRegistry,
    opts: &RenderOptions,
    assume: &Assumptions,
    request: &Request,
) -> anyhow::Result<Audit> {
    let unwrapped = unwrap_batch(&request.body)?;
    let body = unwrapped.as_deref().unwrap_or(&request.body);
    let req: ChatRequest = parse_json(body)?;
    let model = match models.models() {
        [only] => only.clone(),
        _ => models.get(req.model.as_deref())?,
    };
    audit(&model, &req, body.len(), opts, assume)
}
