//! The server's limits over HTTP on loopback: bodies past `--max-body-bytes` (413), a full
//! `--max-concurrency` (503), the request timeout (504), clients that leave mid-request, and
//! offloaded renders waiting for a `--max-blocking-renders` slot.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use llm_render::render::RenderOptions;
use llm_render::server::ServerConfig;
use serde_json::json;
use std::time::Duration;

#[test]
fn oversized_body_is_413() {
    let base = start_server(
        qwen3_only(),
        ServerConfig {
            max_body_bytes: 1024,
            ..ServerConfig::default()
        },
    );
    let big =
        json!({"model": "qwen3", "messages": [{"role": "user", "content": "x".repeat(4096)}]});
    assert_error(
        &post_json(&chat_url(&base), &big),
        413,
        "--max-body-bytes",
        None,
    );
    assert_eq!(post_json(&chat_url(&base), &hello("qwen3")).0, 200);
    // Sent chunked, without a content-length to refuse it by: cut off at the limit.
    let resp = client()
        .post(chat_url(&base))
        .header("content-type", "application/json")
        .body(reqwest::blocking::Body::new(std::io::Cursor::new(
            big.to_string().into_bytes(),
        )))
        .send()
        .unwrap();
    let status = resp.status().as_u16();
    assert_error(
        &(status, resp.json().unwrap()),
        413,
        "--max-body-bytes",
        None,
    );
}

/// Writes a request head and `body` on a fresh connection, the body in `pieces` with
/// `pause` between them, then reads the whole answer (the connection closed by the server or
/// the read timing out), as a client that writes before it reads (Python's `requests`).
fn write_then_read(
    base: &str,
    head: &str,
    body: &[u8],
    pieces: usize,
    pause: Duration,
) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut sock = std::net::TcpStream::connect(addr)?;
    sock.set_read_timeout(Some(Duration::from_secs(20)))?;
    sock.write_all(head.as_bytes())?;
    for (i, piece) in body.chunks(body.len().div_ceil(pieces).max(1)).enumerate() {
        if i > 0 {
            std::thread::sleep(pause);
        }
        sock.write_all(piece)?;
    }
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match sock.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if out.windows(4).any(|w| w == b"\r\n\r\n") && out.ends_with(b"}}") {
                    break;
                }
            }
            Err(e) if out.is_empty() => return Err(e),
            Err(_) => break,
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// A client that writes its whole oversized body before reading gets the 413 (the server
/// reads the body on and discards it), not a reset connection (#50); so does one that
/// sends it chunked, and one that waits for `100 Continue` gets it at once.
#[test]
fn an_oversized_body_written_whole_first_still_gets_its_413() {
    let base = start_server(
        qwen3_only(),
        ServerConfig {
            max_body_bytes: 1024,
            ..ServerConfig::default()
        },
    );
    let body = json!({"model": "qwen3", "messages": [{"role": "user",
        "content": "x".repeat(8 << 20)}]})
    .to_string();
    let head = format!(
        "POST /v1/chat/completions/render HTTP/1.1\r\nhost: x\r\ncontent-type: \
         application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let answer = write_then_read(&base, &head, body.as_bytes(), 64, Duration::ZERO).unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer:.300}");
    assert!(answer.contains("--max-body-bytes"), "{answer:.300}");

    // Chunked: refused at the limit, the rest read on.
    let mut chunked = Vec::new();
    for piece in body.as_bytes().chunks(64 << 10) {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let head = "POST /v1/chat/completions/render HTTP/1.1\r\nhost: x\r\ncontent-type: \
                application/json\r\ntransfer-encoding: chunked\r\n\r\n";
    let answer = write_then_read(&base, head, &chunked, 64, Duration::ZERO).unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer:.300}");

    // `Expect: 100-continue`: the 413 comes without the body being sent.
    let head = format!(
        "POST /v1/chat/completions/render HTTP/1.1\r\nhost: x\r\ncontent-type: \
         application/json\r\nexpect: 100-continue\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let answer = write_then_read(&base, &head, b"", 1, Duration::ZERO).unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer:.300}");
    assert_eq!(post_json(&chat_url(&base), &hello("qwen3")).0, 200);
}

/// A body that has not arrived within the request timeout is a 408 (not the 504 of slow
/// work), and a client still writing it reads the answer once it has written the rest.
#[test]
fn a_body_that_does_not_arrive_in_time_is_408() {
    let base = start_server(
        qwen3_only(),
        ServerConfig {
            request_timeout: Duration::from_millis(300),
            ..ServerConfig::default()
        },
    );
    let body = hello("qwen3").to_string();
    for path in ["/v1/chat/completions/render", "/v1/chat/completions"] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n",
            body.len()
        );
        let answer =
            write_then_read(&base, &head, body.as_bytes(), 2, Duration::from_millis(800)).unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "{path}: {answer:.300}");
        assert!(answer.contains("--request-timeout-secs"), "{answer:.300}");
    }
}

#[test]
fn saturation_is_503_and_slow_requests_are_504() {
    let trusted = RenderOptions {
        trust_request_chat_template: true,
        template_fuel: None,
        ..RenderOptions::default()
    };
    let models = qwen3_only();
    let base = start_server(
        models.clone(),
        ServerConfig {
            max_concurrency: 1,
            render: trusted.clone(),
            ..ServerConfig::default()
        },
    );
    let mut slow = hello("qwen3");
    slow["chat_template"] = json!(slow_template(4000));
    let url = chat_url(&base);
    let first = {
        let (url, slow) = (url.clone(), slow.clone());
        std::thread::spawn(move || post_json(&url, &slow))
    };
    std::thread::sleep(Duration::from_millis(300));
    assert_error(
        &post_json(&url, &hello("qwen3")),
        503,
        "concurrency limit",
        None,
    );
    assert_eq!(first.join().unwrap().0, 200);

    let base = start_server(
        models,
        ServerConfig {
            request_timeout: Duration::from_millis(100),
            render: trusted,
            ..ServerConfig::default()
        },
    );
    assert_error(&post_json(&chat_url(&base), &slow), 504, "limit", None);
}

/// A client that goes away mid-request leaves `requests_in_flight` (hyper drops its request)
/// and is counted with status 499.
#[test]
fn a_client_gone_mid_request_leaves_the_in_flight_gauge() {
    use std::io::Write;
    let base = start_server(
        qwen3_only(),
        ServerConfig {
            render: RenderOptions {
                trust_request_chat_template: true,
                template_fuel: None,
                ..RenderOptions::default()
            },
            ..ServerConfig::default()
        },
    );
    let mut slow = hello("qwen3");
    slow["chat_template"] = json!(slow_template(3000));
    let body = slow.to_string();
    let addr = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST /v1/chat/completions/render HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    drop(stream);
    // Only the metrics request itself in flight, once the server has noticed.
    let mut text = String::new();
    for _ in 0..100 {
        text = client()
            .get(format!("{base}/metrics"))
            .send()
            .unwrap()
            .text()
            .unwrap();
        if text.contains("llm_render_requests_in_flight 1\n") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        text.contains("llm_render_requests_in_flight 1\n"),
        "{}",
        text.lines()
            .filter(|l| l.contains("in_flight"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        text.contains(
            "llm_render_requests_total{route=\"/v1/chat/completions/render\",status=\"499\"} 1"
        ),
        "no 499 counted"
    );
}

/// Offloaded renders beyond `max_blocking_renders` wait for a slot, within the request
/// timeout; a timed-out render keeps its slot until its work ends.
#[test]
fn offloaded_renders_wait_for_a_slot() {
    let base = start_server(
        qwen3_only(),
        ServerConfig {
            max_blocking_renders: 1,
            request_timeout: Duration::from_millis(300),
            render: RenderOptions {
                trust_request_chat_template: true,
                template_fuel: None,
                ..RenderOptions::default()
            },
            ..ServerConfig::default()
        },
    );
    let url = chat_url(&base);
    // Requests with their own template always run on the blocking pool.
    let mut slow = hello("qwen3");
    slow["chat_template"] = json!(slow_template(4000));
    let mut quick = hello("qwen3");
    quick["chat_template"] = json!("{% for m in messages %}{{ m.content }}{% endfor %}");
    let first = {
        let (url, slow) = (url.clone(), slow.clone());
        std::thread::spawn(move || post_json(&url, &slow))
    };
    std::thread::sleep(Duration::from_millis(100));
    // The only slot is taken: this one waits, and its timeout fires while it waits.
    assert_error(&post_json(&url, &quick), 504, "limit", None);
    assert_eq!(first.join().unwrap().0, 504);
    // The slow render still runs after its 504; once it ends, the slot is free again.
    let mut ok = false;
    for _ in 0..200 {
        if post_json(&url, &quick).0 == 200 {
            ok = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(ok, "the slot never came back");
}
