//! The TCP sockets the crate accepts and opens, set up one way: `TCP_NODELAY` on every one.
//!
//! An answer written in two small writes (the headers of a stream of server-sent events, then
//! the event) waits, without it, for the peer's delayed acknowledgement of the first: some
//! 40 ms a small call, on Linux. Every accepted socket goes through [`accepted`], every HTTP
//! client is built with `tcp_nodelay(true)` (rmcp's own client, for the registry's MCP client,
//! is reqwest's default, which sets it); a test of the crate's sources holds it.

use tokio::net::TcpStream;

/// `stream`, just accepted, with `TCP_NODELAY` set. A socket that refuses it (the peer reset it
/// already) is passed on as it is: serving it fails as it would have.
pub(crate) fn accepted(stream: TcpStream) -> TcpStream {
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!("TCP_NODELAY could not be set on an accepted connection: {error}");
    }
    stream
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn an_accepted_socket_sends_small_writes_at_once() {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let address = listener.local_addr().unwrap();
        let client = tokio::net::TcpStream::connect(address).await.unwrap();
        let (stream, _) = listener.accept().await.unwrap();
        assert!(
            !stream.nodelay().unwrap(),
            "the kernel's default, which the owner changes"
        );
        assert!(super::accepted(stream).nodelay().unwrap());
        drop(client);
    }

    /// Every `accept` and `connect` of a TCP socket in the crate's own code goes through the
    /// owner: a new path that bypasses it is a test failure, not a 40 ms regression found later.
    #[test]
    fn every_socket_the_crate_accepts_goes_through_the_owner() {
        let mut bypasses = Vec::new();
        for (path, code) in crate::own_code("net.rs") {
            let lines: Vec<&str> = code.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                if line.contains("reqwest::Client::builder()") {
                    let near = lines[i..lines.len().min(i + 10)].join("\n");
                    if !near.contains(".tcp_nodelay(true)") {
                        bypasses.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                    }
                    continue;
                }
                let accepts = line.contains("listener.accept()");
                let connects = line.contains("TcpStream::connect(");
                if !(accepts || connects) {
                    continue;
                }
                // The owner is called on the stream in the lines that follow.
                let near = lines[i..lines.len().min(i + 40)].join("\n");
                if !near.contains("net::accepted(") {
                    bypasses.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                }
            }
        }
        assert!(
            bypasses.is_empty(),
            "sockets set up without the owner: {bypasses:#?}"
        );
    }
}
