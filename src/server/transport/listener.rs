//! The listening socket: bound before the models load, listening once they have.
//!
//! Binding first makes a port in use fail at once, before seconds of model loading; not
//! listening until the models are loaded keeps clients from queueing on a server that cannot
//! answer yet (they are refused instead, and try another replica).

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
