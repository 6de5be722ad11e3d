//! `llm-render health`: asks a running server's `/health` and exits 0 when it answers 200,
//! 1 otherwise. The container image's `HEALTHCHECK` runs this, so the image needs no curl.
//!
//! A plain HTTP/1.1 GET over a TCP connection with a timeout on each step: no client
//! library, no TLS (the probe runs beside the server).

use clap::Args;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct HealthArgs {
    /// Host of the server to ask.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port of the server to ask (the server's own `LLM_RENDER_PORT` when set).
    #[arg(long, default_value_t = 8000, env = "LLM_RENDER_PORT")]
    pub port: u16,
    /// Seconds to wait for the answer, in all.
    #[arg(long, default_value_t = 2.0)]
    pub timeout_secs: f64,
}

/// The status line's code of `GET /health`, or why there is none.
fn probe(args: &HealthArgs) -> Result<u16, String> {
    let timeout = Duration::try_from_secs_f64(args.timeout_secs.clamp(0.01, 3600.0))
        .map_err(|e| format!("--timeout-secs: {e}"))?;
    let addr = (args.host.as_str(), args.port)
        .to_socket_addrs()
        .map_err(|e| format!("{}:{}: {e}", args.host, args.port))?
        .next()
        .ok_or_else(|| format!("{}:{}: no address", args.host, args.port))?;
    let mut stream =
        TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("{addr}: {e}"))?;
    stream
        .set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    stream
        .set_write_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let request = format!(
        "GET /health HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        args.host
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("{addr}: {e}"))?;
    let mut head = [0u8; 64];
    let mut n = 0;
    while n < head.len() {
        match stream.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(format!("{addr}: {e}")),
        }
        if head[..n].contains(&b'\n') {
            break;
        }
    }
    // "HTTP/1.1 200 OK"
    let line = String::from_utf8_lossy(&head[..n]);
    line.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("{addr}: not an HTTP answer: {line:?}"))
}

pub fn run(args: HealthArgs) -> anyhow::Result<i32> {
    match probe(&args) {
        Ok(200) => Ok(0),
        Ok(code) => {
            eprintln!("llm-render health: /health answered {code}");
            Ok(1)
        }
        Err(e) => {
            eprintln!("llm-render health: {e}");
            Ok(1)
        }
    }
}
