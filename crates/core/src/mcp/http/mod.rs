//! MCP's streamable HTTP transport, as a server: one endpoint (`/mcp`) where a client POSTs its
//! messages and reads the answers as server-sent events, GETs a stream of what the server sends
//! on its own, and DELETEs its session. Each session (`Mcp-Session-Id`) is a link to a session
//! of its own — of a proxy, or of a registry's server.
//!
//! Guarded as the specification asks, and as a gateway a team shares must be: it listens on
//! loopback unless told otherwise; a request whose `Origin` or `Host` is not allowed is refused
//! (a web page cannot drive it through DNS rebinding); with tokens set, a request without one
//! is refused, and a session answers only the credential that opened it (`guard.rs`). Sessions
//! expire when idle and the least recently used idle one makes room for a new client at the
//! limit (`table.rs`). What it holds is bounded: bodies one by one (413) and together (503),
//! the time to send headers, and an `accept` that fails for want of descriptors backs off and
//! sheds idle connections rather than spin.
//!
//! A layer of its own, below the server and the proxy (the proxy's upstreams over HTTP are
//! reached through it too; the library's `McpClient` uses rmcp's transport): it knows
//! JSON-RPC lines ([`wire`]) and links ([`Link`]), not what a session does with them. The files: the options
//! (`options.rs`), the listener and its accept loop (`listen.rs`), the routes of the endpoint
//! (`routes.rs`), the event streams of answers (`events.rs`), the guard (`guard.rs`), the
//! limits per principal (`limits.rs`), the table of sessions (`table.rs`); and the client
//! side of the same transport, an upstream reached over HTTP (`client.rs`).

mod client;
mod events;
mod guard;
mod limits;
mod listen;
mod options;
mod routes;
mod table;

pub(crate) use client::connect;
pub use limits::Limits;
pub use listen::HttpServer;
pub use options::{HttpOptions, METRICS_PATH};

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use serde_json::Value;

use crate::artifacts::Owner;
use crate::mcp::link::{self, Link};
use crate::mcp::metrics::Telemetry;
use crate::mcp::wire::MAX_MESSAGE_BYTES;
use crate::mcp::wire::{self, Received};

const SESSION_HEADER: &str = "mcp-session-id";

/// What runs a session over a link, for the owner of its artifacts, counting its calls into the
/// endpoint's metrics: a proxy's, or a registry server's.
pub(crate) type Sessions =
    Arc<dyn Fn(Link, Owner, Telemetry) -> BoxFuture<'static, ()> + Send + Sync>;

type Body = BoxBody<Bytes, Infallible>;

/// Sessions of a service that speaks newline-delimited JSON over a byte stream (an rmcp
/// server): each HTTP session runs `run` over one end of an in-memory pipe, its messages
/// passed as they are.
pub(crate) fn over_streams(
    run: impl Fn(tokio::io::DuplexStream, Owner, Telemetry) -> BoxFuture<'static, ()>
    + Send
    + Sync
    + 'static,
) -> Sessions {
    let run = Arc::new(run);
    Arc::new(move |outer: Link, owner: Owner, telemetry: Telemetry| {
        let run = Arc::clone(&run);
        Box::pin(async move {
            let (ours, theirs) = tokio::io::duplex(1 << 16);
            let (read, write) = tokio::io::split(ours);
            let inner = link::lines(read, write, MAX_MESSAGE_BYTES);
            let Link {
                incoming: mut from_client,
                outgoing: to_client,
            } = outer;
            let Link {
                incoming: mut from_service,
                outgoing: to_service,
            } = inner;
            let to_client_too = to_client.clone();
            let inbound = async move {
                while let Some(received) = from_client.recv().await {
                    match received {
                        Received::Message(message) => {
                            if to_service.send(message.line()).await.is_err() {
                                return;
                            }
                        }
                        Received::Unreadable { id, code, why } => {
                            let error = wire::raw(&wire::error(code, why));
                            let _ = to_client_too.send(wire::answer(&id, Err(error))).await;
                        }
                    }
                }
            };
            let outbound = async move {
                while let Some(received) = from_service.recv().await {
                    if let Received::Message(message) = received
                        && to_client.send(message.line()).await.is_err()
                    {
                        return;
                    }
                }
            };
            // The session ends when the client's side ends: the service's input closes with it.
            tokio::join!(inbound, outbound, run(theirs, owner, telemetry));
        })
    })
}

/// Whether `store` can keep the endpoint's clients apart (each session's or principal's
/// artifacts read by it alone): tried before a client comes, so a store that cannot is
/// refused at the start.
pub(crate) fn check_apart(
    store: &dyn crate::artifacts::ArtifactStore,
) -> Result<(), crate::artifacts::ArtifactError> {
    let owner =
        crate::artifacts::ArtifactId::generate().and_then(|id| Owner::session(id.as_str()))?;
    drop(store.scoped(&owner)?);
    Ok(())
}

/// The part of `store` a session's artifacts go to and are read from: `owner`'s alone. Where
/// the store cannot give it one (it could at the start), the session keeps its artifacts in
/// memory until it ends, logged.
pub(crate) fn store_for(
    store: &Arc<dyn crate::artifacts::ArtifactStore>,
    owner: &Owner,
) -> Arc<dyn crate::artifacts::ArtifactStore> {
    store.scoped(owner).unwrap_or_else(|error| {
        tracing::warn!(
            "the artifacts of {owner} cannot be kept apart ({error}); its session keeps them in \
             memory until it ends"
        );
        Arc::new(crate::artifacts::MemoryStore::new())
    })
}

/// Why an HTTP endpoint could not serve, a variant a caller can match.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// A principal's name cannot name its artifacts.
    #[error("{0}")]
    Artifacts(crate::artifacts::ArtifactError),
    /// The address could not be listened on.
    #[error("cannot listen on {addr} ({source})")]
    Listen {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The listener stopped with a failure while it served.
    #[error("the HTTP listener failed ({0})")]
    Listener(#[source] tokio::task::JoinError),
}

fn full(status: StatusCode, text: impl Into<String>) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text.into())).boxed());
    *response.status_mut() = status;
    response
}

fn json_error(status: StatusCode, code: i64, message: &str) -> Response<Body> {
    let body = wire::answer(&Value::Null, Err(wire::raw(&wire::error(code, message))));
    let mut response = full(status, body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

fn header_value(text: &str) -> header::HeaderValue {
    header::HeaderValue::from_str(text).unwrap_or_else(|_| header::HeaderValue::from_static(""))
}

#[cfg(test)]
mod tests {
    //! The layer on its own: an endpoint on loopback whose sessions echo every message back,
    //! driven by hand-written HTTP/1.1 so each status, header and body is the one a client reads.

    use std::net::SocketAddr;
    use std::time::Duration;

    use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};

    use super::*;
    use crate::mcp::metrics::{Metrics, MetricsOptions};

    /// Sessions that send back each message they are given, as it came.
    fn echo() -> Sessions {
        Arc::new(|link: Link, _owner, _telemetry| {
            Box::pin(async move {
                let Link {
                    mut incoming,
                    outgoing,
                } = link;
                while let Some(received) = incoming.recv().await {
                    if let Received::Message(message) = received {
                        let answer = wire::answer(
                            message.id.as_ref().unwrap_or(&Value::Null),
                            Ok(wire::raw(&serde_json::json!({ "echo": message.method }))),
                        );
                        if outgoing.send(answer).await.is_err() {
                            return;
                        }
                    }
                }
            })
        })
    }

    async fn endpoint() -> HttpServer {
        let options = HttpOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
        let metrics = Metrics::new(MetricsOptions::default());
        HttpServer::start(options, metrics, echo())
            .await
            .expect("loopback port 0 can be listened on")
    }

    /// The status, the headers (lowercase names) and as much of the body as came within a
    /// second (an event stream stays open).
    async fn send(addr: SocketAddr, request: String) -> (u16, Vec<(String, String)>, String) {
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).await.expect("status line");
        let code = status
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .expect("a status code");
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).await.expect("a header");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("name: value");
            headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
        }
        let mut body = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(1), reader.read_to_end(&mut body)).await;
        (code, headers, String::from_utf8_lossy(&body).into_owned())
    }

    fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn post(addr: SocketAddr, session: Option<&str>, body: &str) -> String {
        let session = session
            .map(|id| format!("Mcp-Session-Id: {id}\r\n"))
            .unwrap_or_default();
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
    }

    #[tokio::test]
    async fn a_session_opens_with_initialize_and_its_answers_come_as_events() {
        let server = endpoint().await;
        let addr = server.local_addr();
        let (code, headers, body) = send(
            addr,
            post(
                addr,
                None,
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            ),
        )
        .await;
        assert_eq!(code, 200, "{body}");
        assert_eq!(header(&headers, "content-type"), Some("text/event-stream"));
        let session = header(&headers, "mcp-session-id").expect("a session id");
        assert_eq!(session.len(), 32, "128 random bits in hex: {session}");
        assert!(
            body.contains("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"echo\":\"initialize\"}}\n\n"),
            "{body}"
        );

        // The session answers its own requests; an unknown one is 404 with a JSON-RPC error.
        let (code, _, body) = send(
            addr,
            post(
                addr,
                Some(session),
                r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            ),
        )
        .await;
        assert_eq!(code, 200);
        assert!(
            body.contains(r#""id":2,"result":{"echo":"ping"}"#),
            "{body}"
        );
        let (code, _, body) = send(
            addr,
            post(
                addr,
                Some("0123"),
                r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
            ),
        )
        .await;
        assert_eq!(code, 404);
        let error: Value = serde_json::from_str(&body).expect("a JSON-RPC error");
        assert_eq!(error["error"]["code"], wire::INVALID_REQUEST);
        assert!(
            error["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("initialize a new one")),
            "{error}"
        );
    }

    #[tokio::test]
    async fn requests_outside_the_endpoint_are_refused_saying_what_to_do() {
        let server = endpoint().await;
        let addr = server.local_addr();

        let (code, _, body) = send(
            addr,
            format!("GET /elsewhere HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
        )
        .await;
        assert_eq!(code, 404);
        assert!(body.contains("the MCP endpoint is /mcp"), "{body}");

        let (code, headers, _) = send(
            addr,
            format!(
                "PUT /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        assert_eq!(code, 405);
        assert_eq!(header(&headers, "allow"), Some("GET, POST, DELETE"));

        // A request before `initialize`: 400, and the JSON-RPC error says what to send first.
        let (code, _, body) = send(
            addr,
            post(addr, None, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        )
        .await;
        assert_eq!(code, 400);
        assert!(body.contains("send `initialize` first"), "{body}");

        // A body over the limit of one message is refused from its declared length, unread.
        let (code, _, body) = send(
            addr,
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n",
                MAX_MESSAGE_BYTES + 1
            ),
        )
        .await;
        assert_eq!(code, 413);
        assert!(body.contains("over the limit of 16 MiB"), "{body}");

        // The figures are served where the options say.
        let (code, headers, body) = send(
            addr,
            format!("GET {METRICS_PATH} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
        )
        .await;
        assert_eq!(code, 200);
        assert!(
            header(&headers, "content-type").is_some_and(|t| t.starts_with("text/plain")),
            "{headers:?}"
        );
        assert!(body.contains("# TYPE"), "{body}");
    }

    #[tokio::test]
    async fn an_address_in_use_is_an_error_naming_it() {
        let taken = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = taken.local_addr().expect("its address");
        let error = HttpServer::start(
            HttpOptions::new(addr),
            Metrics::new(MetricsOptions::default()),
            echo(),
        )
        .await
        .expect_err("the port is taken");
        assert!(matches!(error, HttpError::Listen { addr: a, .. } if a == addr));
        assert!(
            error
                .to_string()
                .starts_with(&format!("cannot listen on {addr}")),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_shut_down_endpoint_stops_listening_and_its_wait_returns() {
        let server = endpoint().await;
        let addr = server.local_addr();
        server.shutdown();
        server.wait().await.expect("a clean stop");
        // Nothing accepts on the address any more.
        let mut refused = false;
        for _ in 0..50 {
            if tokio::net::TcpStream::connect(addr).await.is_err() {
                refused = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(refused, "{addr} still accepts after shutdown");
    }
}
