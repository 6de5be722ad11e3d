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

/// What the inputs hold: the requests, and whether they are a traffic sample (a JSON-lines
/// input, a directory or several inputs: reported as percentiles even when only one request
/// is in them) or one plain request (reported stage by stage).
pub struct Inputs {
    pub requests: Vec<Request>,
    pub sample: bool,
}

/// Every request of `inputs` (nothing or `-`: standard input), in order; a directory gives
/// its `.json` (a request each) and `.jsonl` files, sorted by name, without descending into
/// subdirectories.
pub fn collect(inputs: &[String], jsonl: bool) -> anyhow::Result<Inputs> {
    let mut out = Vec::new();
    let mut sample = jsonl || inputs.len() > 1;
    if inputs.is_empty() {
        read("-", jsonl, &mut out)?;
    }
    for input in inputs {
        let path = Path::new(input);
        if input != "-" && path.is_dir() {
            sample = true;
            let mut files: Vec<_> = std::fs::read_dir(path)
                .map_err(|e| anyhow::anyhow!("{input}: {e}"))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && extension(p).is_some())
                .collect();
            files.sort();
            if files.is_empty() {
                bail!(
                    "{input}: a directory without .json or .jsonl files (subdirectories are \
                     not searched)"
                );
            }
            for f in files {
                read(&f.display().to_string(), jsonl, &mut out)?;
            }
        } else {
            sample |= extension(path) == Some(Kind::Lines);
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
    Ok(Inputs {
        requests: out,
        sample,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `.json`: one request.
    One,
    /// `.jsonl`: a request per line.
    Lines,
}

/// What a file's extension (in any case) says it holds, if it is one the audit reads.
fn extension(path: &Path) -> Option<Kind> {
    let ext = path.extension()?.to_str()?;
    if ext.eq_ignore_ascii_case("jsonl") {
        Some(Kind::Lines)
    } else if ext.eq_ignore_ascii_case("json") {
        Some(Kind::One)
    } else {
        None
    }
}

fn read(input: &str, jsonl: bool, out: &mut Vec<Request>) -> anyhow::Result<()> {
    if input == "-" && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        bail!("no input: name request files or a directory, or pipe requests in (`-`)");
    }
    let body = super::super::read_input(Some(input))?;
    let name = if input == "-" { "stdin" } else { input };
    if jsonl || extension(Path::new(input)) == Some(Kind::Lines) {
        for (i, line) in body.split(|b| *b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
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
    let unwrapped = unwrap_batch(&request.body).map_err(|e| lines_hint(e, &request.body))?;
    let body = unwrapped.as_deref().unwrap_or(&request.body);
    let req: ChatRequest = parse_json(body).map_err(|e| lines_hint(e.into(), body))?;
    let model = match models.models() {
        [only] => only.clone(),
        _ => models.get(req.model.as_deref())?,
    };
    audit(&model, &req, body.len(), opts, assume)
}

/// A parse error, with a hint when the body looks like JSON lines read as one request.
fn lines_hint(e: anyhow::Error, body: &[u8]) -> anyhow::Error {
    let objects = body
        .split(|b| *b == b'\n')
        .filter(|l| l.trim_ascii_start().starts_with(b"{"))
        .count();
    if objects > 1 {
        e.context("this looks like JSON lines: pass --jsonl (or name the file .jsonl)")
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_in_any_case() {
        assert_eq!(extension(Path::new("a/b.JSONL")), Some(Kind::Lines));
        assert_eq!(extension(Path::new("b.Json")), Some(Kind::One));
        assert_eq!(extension(Path::new("b.txt")), None);
        assert_eq!(extension(Path::new("jsonl")), None);
    }

    #[test]
    fn json_lines_read_as_one_request_get_a_hint() {
        let e = lines_hint(anyhow::anyhow!("trailing characters"), b"{}\n{}\n");
        assert!(format!("{e:#}").contains("pass --jsonl"), "{e:#}");
        let e = lines_hint(anyhow::anyhow!("bad"), b"{\"a\": 1}");
        assert_eq!(format!("{e:#}"), "bad");
    }
}
