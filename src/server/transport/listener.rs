//! The listening socket: bound before the models load, listening once they have, and closed
//! at shutdown without resetting a connection the kernel has already accepted.
//!
//! Binding first makes a port in use fail at once, before seconds of model loading; not
//! listening until the models are loaded keeps clients from queueing on a server that cannot
//! answer yet (they are refused instead, and try another replica).
//!
//! Closing: a listening socket's close resets every connection still in its accept queue,
//! and the kernel keeps completing handshakes into that queue until the close. So
//! [`close`] first stops new handshakes (Linux: a socket filter that drops SYNs, so a client
//! connecting now retries its SYN and then finds the port closed: refused, nothing sent),
//! then accepts every connection already queued, and only then closes the socket.

use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};

/// The accept queue's length (the kernel caps it at `net.core.somaxconn`).
const BACKLOG: i32 = 1024;

/// A socket bound to the serving address, not yet listening.
#[derive(Debug)]
pub struct Bound {
    socket: socket2::Socket,
    addr: SocketAddr,
}

/// Why the serving address cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error("cannot listen on {addr}: {error}")]
    Io { addr: String, error: std::io::Error },
    #[error("cannot listen on {0}: it resolves to no address")]
    NoAddress(String),
}

/// Binds `host:port` (each address it resolves to in turn, as `TcpListener::bind` does,
/// with `SO_REUSEADDR` as it sets), without listening yet.
pub fn bind(host: &str, port: u16) -> Result<Bound, BindError> {
    let name = format!("{host}:{port}");
    let io = |addr: &str, error| BindError::Io {
        addr: addr.to_string(),
        error,
    };
    let addrs = (host, port).to_socket_addrs().map_err(|e| io(&name, e))?;
    let mut last = BindError::NoAddress(name);
    for addr in addrs {
        match bind_one(addr) {
            Ok(socket) => {
                let addr = socket
                    .local_addr()
                    .ok()
                    .and_then(|a| a.as_socket())
                    .unwrap_or(addr);
                return Ok(Bound { socket, addr });
            }
            Err(e) => last = io(&addr.to_string(), e),
        }
    }
    Err(last)
}

fn bind_one(addr: SocketAddr) -> std::io::Result<socket2::Socket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    Ok(socket)
}

impl Bound {
    /// The bound address (its port, when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Starts listening: connections are accepted (into the kernel's queue) from now on.
    pub fn listen(self) -> Result<TcpListener, BindError> {
        self.socket.listen(BACKLOG).map_err(|error| BindError::Io {
            addr: self.addr.to_string(),
            error,
        })?;
        Ok(self.socket.into())
    }
}

/// Stops taking connections: no new handshakes complete, every connection already in the
/// accept queue goes to `hand` (non-blocking), then the listener closes. Returns how many
/// were queued.
pub(crate) fn close(listener: TcpListener, mut hand: impl FnMut(TcpStream)) -> usize {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Err(e) = refuse_handshakes(&listener) {
        tracing::debug!("cannot stop new handshakes before closing the listener: {e}");
    }
    let _ = listener.set_nonblocking(true);
    let mut queued = 0;
    loop {
        match listener.accept() {
            Ok((stream, _)) => match stream.set_nonblocking(true) {
                Ok(()) => {
                    queued += 1;
                    hand(stream);
                }
                Err(e) => tracing::warn!("cannot hand over a queued connection: {e}"),
            },
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            // Reset by its client while queued, or a signal: the next one.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => {
                tracing::warn!("accept failed while closing the listener: {e}");
                break;
            }
        }
    }
    queued
}

/// Attaches a socket filter to `listener` that drops TCP segments with SYN set: new
/// handshakes stop, those under way and every established connection are untouched (the
/// connections already queued were made before the filter, and carry none).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn refuse_handshakes(listener: &TcpListener) -> std::io::Result<()> {
    use socket2::{SockFilter, SockRef};
    // Classic BPF over the TCP header (a TCP socket's filter sees the segment from there).
    const LD_B_ABS: u16 = 0x30; // BPF_LD | BPF_B | BPF_ABS
    const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const FLAGS: u32 = 13; // the byte of the TCP flags
    const SYN: u32 = 0x02;
    let program = [
        SockFilter::new(LD_B_ABS, 0, 0, FLAGS),
        SockFilter::new(JSET_K, 0, 1, SYN),
        SockFilter::new(RET_K, 0, 0, 0),        // SYN: drop
        SockFilter::new(RET_K, 0, 0, u32::MAX), // anything else: keep whole
    ];
    SockRef::from(listener).attach_filter(&program)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_port_in_use_is_refused_at_bind() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let err = bind("127.0.0.1", port).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("cannot listen on 127.0.0.1:{port}: ")),
            "{err}"
        );
        let bound = bind("127.0.0.1", 0).unwrap();
        assert_ne!(bound.local_addr().port(), 0);
    }

    /// Connections queued before the close are handed over and still talk; one attempted
    /// after the filter went on does not complete its handshake.
    #[test]
    fn closing_hands_over_the_queue_and_refuses_new_handshakes() {
        use std::io::{Read, Write};
        let listener = bind("127.0.0.1", 0).unwrap().listen().unwrap();
        let addr = listener.local_addr().unwrap();
        let mut clients: Vec<TcpStream> =
            (0..3).map(|_| TcpStream::connect(addr).unwrap()).collect();
        let mut taken = Vec::new();
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            refuse_handshakes(&listener).unwrap();
            let late = TcpStream::connect_timeout(&addr, Duration::from_millis(1500));
            assert!(late.is_err(), "a handshake completed after the filter");
        }
        assert_eq!(close(listener, |s| taken.push(s)), 3);
        for (client, server) in clients.iter_mut().zip(&mut taken) {
            client.write_all(b"ping").unwrap();
            server.set_nonblocking(false).unwrap();
            let mut buf = [0u8; 4];
            server.read_exact(&mut buf).unwrap();
            assert_eq!(&buf, b"ping");
        }
        assert!(TcpStream::connect(addr).is_err(), "the listener is closed");
    }
}
