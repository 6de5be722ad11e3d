//! `llm-render serve` as a child process on an ephemeral loopback port, with its log kept
//! for assertions (the operations tests: configuration, logs, shutdown).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The binary under test: `LLM_RENDER_TEST_BIN` when set (to measure another build with the
/// same tests), else this build's.
pub fn bin() -> String {
    std::env::var("LLM_RENDER_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_llm-render").into())
}

/// `llm-render ARGS` with no `LLM_RENDER_*` variable inherited from the test's environment,
/// only those of `env`.
pub fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(bin());
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("LLM_RENDER_") {
            cmd.env_remove(key);
        }
    }
    cmd.args(args).envs(env.iter().copied());
    cmd
}

/// A running `llm-render serve`.
pub struct ServeProcess {
    pub child: Child,
    /// `http://127.0.0.1:PORT`
    pub url: String,
    /// `127.0.0.1:PORT`
    pub addr: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl ServeProcess {
    /// Starts `serve --port 0 ARGS` (and `env`), and waits until it logs the address it
    /// listens on. Panics with the log when it exits first.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> ServeProcess {
        let mut all_env = vec![("RUST_LOG", "info")];
        all_env.extend_from_slice(env);
        let mut child = command(&[&["serve", "--port", "0"][..], args].concat(), &all_env)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn llm-render serve");
        let stderr = child.stderr.take().expect("stderr is piped");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = log.clone();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !sent {
                    if let Some(url) = listening_url(&line) {
                        let _ = tx.send(url);
                        sent = true;
                    }
                }
                sink.lock().unwrap().push(line);
            }
        });
        let Ok(url) = rx.recv_timeout(Duration::from_secs(120)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve did not listen:\n{}", log.lock().unwrap().join("\n"));
        };
        let addr = url.trim_start_matches("http://").to_string();
        ServeProcess {
            child,
            url,
            addr,
            log,
        }
    }

    /// The log lines so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Waits (up to `limit`) for a log line containing `needle`.
    pub fn wait_for_log(&self, needle: &str, limit: Duration) -> Option<String> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(line) = self.log().into_iter().find(|l| l.contains(needle)) {
                return Some(line);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `signal` (`TERM`, `INT`) to the process.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{signal} {pid}");
    }

    /// The exit status, once the process has exited within `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `http://…` address in a "listening on" log line (text or JSON).
fn listening_url(line: &str) -> Option<String> {
    if !line.contains("listening on") {
        return None;
    }
    let at = line.find("http://")?;
    Some(
        line[at..]
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '\u{1b}' && *c != '"')
            .collect(),
    )
}

/// One HTTP/1.1 exchange on a new connection (`Connection: close`): the status and the
/// whole response (head and body), or what went wrong.
pub fn exchange(addr: &str, method: &str, path: &str, body: &str) -> Result<(u16, String), String> {
    let mut conn = std::net::TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    write!(
        conn,
        "{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .map_err(|e| format!("write: {e}"))?;
    let mut got = Vec::new();
    conn.read_to_end(&mut got)
        .map_err(|e| format!("read: {e}"))?;
    let text = String::from_utf8_lossy(&got).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no response ({} bytes)", got.len()))?;
    Ok((status, text))
}

/// `GET path`'s status (0 when there is no answer).
pub fn get_status(addr: &str, path: &str) -> u16 {
    exchange(addr, "GET", path, "").map_or(0, |(status, _)| status)
}
