//! The `serve` command as a process: both runtimes answer over many connections at once,
//! and SIGTERM drains the request in flight before the process exits 0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `llm-render serve` on an ephemeral port (embedded default model).
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_llm-render"))
            .args(["serve", "--port", "0"])
            .args(args)
            .env("NO_COLOR", "1")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn llm-render serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("serve exited before listening")
                .unwrap();
            if let Some(at) = line.find("http://") {
                let url: String = line[at..]
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != '\u{1b}')
                    .collect();
                break url;
            }
        };
        // Keep draining the log so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Server { child, url }
    }

    fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(killed.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "serve did not stop after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn chat(i: usize) -> Value {
    json!({
        "model": "qwen3",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": format!("Question number {i}: what is {i} + {i}?")}
        ]
    })
}

fn post(client: &reqwest::blocking::Client, url: &str, body: &Value) -> (u16, Value) {
    let resp = client.post(url).json(body).send().unwrap();
    (resp.status().as_u16(), resp.json().unwrap())
}

/// Eight clients, each on its own keep-alive connection, get the same answers as one
/// client asking alone.
fn answers_concurrently(server: &Server) {
    let url = format!("{}/v1/chat/completions/render", server.url);
    let alone = reqwest::blocking::Client::new();
    let expected: Vec<Value> = (0..16)
        .map(|i| {
            let (status, body) = post(&alone, &url, &chat(i));
            assert_eq!(status, 200, "{body}");
            body["token_ids"].clone()
        })
        .collect();
    assert!(expected
        .iter()
        .all(|ids| ids.as_array().unwrap().len() > 10));
    std::thread::scope(|s| {
        for t in 0..8 {
            let (url, expected) = (&url, &expected);
            s.spawn(move || {
                let client = reqwest::blocking::Client::new();
                for round in 0..10 {
                    let i = (t + round) % 16;
                    let (status, body) = post(&client, url, &chat(i));
                    assert_eq!(status, 200, "{body}");
                    assert_eq!(body["token_ids"], expected[i]);
                }
            });
        }
    });
    let metrics = alone
        .get(format!("{}/metrics", server.url))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(metrics.contains("llm_render_requests_total"), "{metrics}");
}

#[test]
fn per_core_runtime_serves_many_connections() {
    let server = Server::start(&["--workers", "2"]);
    answers_concurrently(&server);
}

#[test]
fn work_stealing_runtime_serves_many_connections() {
    let server = Server::start(&["--runtime", "work-stealing", "--workers", "2"]);
    answers_concurrently(&server);
}

/// A connection that sends no request, or only part of a request head, is closed once the
/// header read timeout passes; a complete request just before is answered. Both runtimes.
#[test]
fn idle_and_slow_header_connections_are_closed() {
    for runtime in ["per-core", "work-stealing"] {
        idle_and_slow_header_connections_are_closed_on(runtime);
    }
}

fn idle_and_slow_header_connections_are_closed_on(runtime: &str) {
    use std::io::{Read, Write};
    let server = Server::start(&["--runtime", runtime, "--header-read-timeout-secs", "1"]);
    let addr = server.url.trim_start_matches("http://").to_string();
    let wait_for_close = |mut conn: std::net::TcpStream| {
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let start = Instant::now();
        let mut buf = [0u8; 4096];
        let mut got = Vec::new();
        loop {
            match conn.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) => panic!(
                    "{runtime}: connection not closed after {:?}: {e}",
                    start.elapsed()
                ),
            }
        }
        (start.elapsed(), got)
    };
    // A complete request, then silence on the same connection.
    let mut conn = std::net::TcpStream::connect(&addr).unwrap();
    conn.write_all(b"GET /health HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    let (elapsed, got) = wait_for_close(conn);
    assert!(
        got.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    // Half a request head.
    let mut conn = std::net::TcpStream::connect(&addr).unwrap();
    conn.write_all(b"POST /v1/chat/completions/render HTTP/1.1\r\nhost: x\r\n")
        .unwrap();
    let (elapsed, _) = wait_for_close(conn);
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

/// The header-read clock stops while a request is served: a request slower than the timeout
/// is answered on its kept-alive connection, which is closed a timeout after the response.
#[test]
fn a_request_slower_than_the_header_read_timeout_is_answered() {
    use std::io::{Read, Write};
    let server = Server::start(&[
        "--header-read-timeout-secs",
        "0.3",
        "--trust-request-chat-template",
        "--template-fuel",
        "0",
    ]);
    let addr = server.url.trim_start_matches("http://").to_string();
    let slow = json!({
        "model": "qwen3",
        "messages": [{"role": "user", "content": "hi"}],
        // 18M template loop iterations, ~1 s.
        "chat_template": "{% for i in range(6000) %}{% for j in range(3000) %}{% endfor %}{% endfor %}done"
    })
    .to_string();
    let mut conn = std::net::TcpStream::connect(&addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let start = Instant::now();
    write!(
        conn,
        "POST /v1/chat/completions/render HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{slow}",
        slow.len()
    )
    .unwrap();
    let mut buf = [0u8; 4096];
    let mut got = Vec::new();
    let mut first_byte = None;
    loop {
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                first_byte.get_or_insert_with(|| start.elapsed());
                got.extend_from_slice(&buf[..n]);
            }
            Err(e) => panic!("connection not closed after {:?}: {e}", start.elapsed()),
        }
    }
    let first_byte = first_byte.expect("no response");
    assert!(
        got.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    assert!(
        first_byte > Duration::from_millis(300),
        "the slow request was not slow: {first_byte:?}"
    );
    assert!(start.elapsed() - first_byte < Duration::from_secs(5));
}

/// SIGTERM while a slow request runs: the request still gets its answer, and the process
/// then exits 0.
#[test]
fn sigterm_drains_the_request_in_flight() {
    for runtime in ["per-core", "work-stealing"] {
        let mut server = Server::start(&[
            "--runtime",
            runtime,
            "--trust-request-chat-template",
            // The slow template below outruns serve's default fuel.
            "--template-fuel",
            "0",
        ]);
        let url = format!("{}/v1/chat/completions/render", server.url);
        let client = reqwest::blocking::Client::new();
        // Warm the connection pool so the slow request does not race the listener closing.
        let (status, _) = post(&client, &url, &chat(1));
        assert_eq!(status, 200);
        let slow = json!({
            "model": "qwen3",
            "messages": [{"role": "user", "content": "hi"}],
            // 9M template loop iterations, ~0.5 s: still running at SIGTERM.
            "chat_template": "{% for i in range(3000) %}{% for j in range(3000) %}{% endfor %}{% endfor %}done"
        });
        let in_flight = std::thread::spawn(move || post(&client, &url, &slow));
        std::thread::sleep(Duration::from_millis(150));
        assert!(
            !in_flight.is_finished(),
            "{runtime}: the slow request was not slow"
        );
        let status = server.terminate();
        let (code, body) = in_flight.join().unwrap();
        assert_eq!(code, 200, "{runtime}: {body}");
        assert!(status.success(), "{runtime}: exit status {status}");
    }
}

/// Flag values that make no sense stop the server at startup, exit 2, with the flag named.
#[test]
fn bad_flag_values_are_refused_at_startup() {
    for (args, flag) in [
        (&["--workers", "0"][..], "--workers"),
        (&["--memory-release-ms", "-2"][..], "--memory-release-ms"),
        (&["--max-logprobs", "-2"][..], "--max-logprobs"),
        (&["--tool-call-parser", "nope"][..], "--tool-call-parser"),
        (&["--reasoning-parser", "nope"][..], "--reasoning-parser"),
        (
            &["--header-read-timeout-secs=-1"][..],
            "--header-read-timeout-secs",
        ),
        (
            &["--request-timeout-secs", "0"][..],
            "--request-timeout-secs",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_llm-render"))
            .args(["serve", "--port", "0"])
            .args(args)
            .env("NO_COLOR", "1")
            .output()
            .expect("run llm-render serve");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
    }
}

/// `llm-render health` against `port`: its exit code.
fn health(port: &str) -> i32 {
    Command::new(env!("CARGO_BIN_EXE_llm-render"))
        .args(["health", "--port", port, "--timeout-secs", "5"])
        .env_remove("LLM_RENDER_PORT")
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .code()
        .unwrap()
}

#[test]
fn the_health_probe_exits_0_on_a_live_server_and_1_otherwise() {
    let mut server = Server::start(&[]);
    let port = server.url.rsplit(':').next().unwrap().to_string();
    assert_eq!(health(&port), 0, "{}", server.url);
    assert!(server.terminate().success());
    assert_eq!(health(&port), 1, "nothing listens on {port} any more");
    // Something that is not an HTTP server: refused with 1, without hanging.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = listener.local_addr().unwrap().port().to_string();
    let start = Instant::now();
    assert_eq!(health(&silent), 1);
    assert!(start.elapsed() < Duration::from_secs(30));
}
