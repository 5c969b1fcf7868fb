//! MCP's streamable HTTP transport, as a server: one endpoint (`/mcp`) where a client POSTs its
//! messages and reads the answers as server-sent events, GETs a stream of what the server sends
//! on its own, and DELETEs its session. Each session (`Mcp-Session-Id`) is a link to a session
//! of its own — of a proxy, or of a registry's server.
//!
//! Guarded as the specification asks: it listens on loopback unless told otherwise; a request
//! whose `Origin` or `Host` is not allowed is refused (a web page cannot drive it through DNS
//! rebinding); with a bearer token set, a request without it is refused.

use crate::sync::lock;
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::ProxyError;
use super::link::{self, Link, QUEUE};
use crate::mcp::wire::MAX_MESSAGE_BYTES;
use crate::mcp::wire::{self, Received};

const SESSION_HEADER: &str = "mcp-session-id";
/// Messages of a session waiting for a stream to carry them, at most; older notifications go
/// first when more come.
const MAX_QUEUED: usize = 1_024;

/// What runs a session over a link: a proxy's, or a registry server's.
pub(crate) type Sessions = Arc<dyn Fn(Link) -> BoxFuture<'static, ()> + Send + Sync>;

type Body = BoxBody<Bytes, Infallible>;

/// Sessions of a service that speaks newline-delimited JSON over a byte stream (an rmcp
/// server): each HTTP session runs `run` over one end of an in-memory pipe, its messages
/// passed as they are.
pub(crate) fn over_streams(
    run: impl Fn(tokio::io::DuplexStream) -> BoxFuture<'static, ()> + Send + Sync + 'static,
) -> Sessions {
    let run = Arc::new(run);
    Arc::new(move |outer: Link| {
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
            tokio::join!(inbound, outbound, run(theirs));
        })
    })
}

/// Where and for whom an HTTP endpoint listens.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The address to listen on: `127.0.0.1:8080` (port 0: any free port).
    pub addr: SocketAddr,
    /// The endpoint's path (`/mcp`).
    pub path: String,
    /// The token every request must carry as `Authorization: Bearer TOKEN`; `None`: none.
    pub bearer_token: Option<String>,
    /// Origins allowed beside loopback ones (`https://app.example.com`).
    pub allowed_origins: Vec<String>,
    /// Host names allowed beside loopback ones and the listening address.
    pub allowed_hosts: Vec<String>,
    /// The most client sessions at once (64 by default).
    pub max_sessions: usize,
}

impl HttpOptions {
    /// Listens on `addr` at `/mcp`, without a token, for loopback origins and hosts.
    pub fn new(addr: SocketAddr) -> Self {
        HttpOptions {
            addr,
            path: "/mcp".to_owned(),
            bearer_token: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_sessions: 64,
        }
    }

    /// Requires `Authorization: Bearer TOKEN` on every request.
    #[must_use]
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Allows requests from a web origin beside loopback ones.
    #[must_use]
    pub fn with_allowed_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Allows a `Host` beside loopback ones and the listening address.
    #[must_use]
    pub fn with_allowed_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }
}

/// A running HTTP endpoint. Dropping it (or [`shutdown`](Self::shutdown)) stops it and ends
/// every session.
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl HttpServer {
    /// Listens as `options` say and serves each session with `sessions`.
    pub(crate) async fn start(
        options: HttpOptions,
        sessions: Sessions,
    ) -> Result<Self, ProxyError> {
        let listener =
            TcpListener::bind(options.addr)
                .await
                .map_err(|source| ProxyError::Listen {
                    addr: options.addr,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| ProxyError::Listen {
            addr: options.addr,
            source,
        })?;
        let stop = CancellationToken::new();
        let endpoint = Arc::new(Endpoint {
            options,
            addr,
            sessions,
            live: Mutex::default(),
        });
        let task = tokio::spawn(accept(listener, endpoint, stop.clone()));
        Ok(HttpServer {
            addr,
            stop,
            task: Some(task),
        })
    }

    /// The address it listens on (with the port chosen, for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops listening and ends every session.
    pub fn shutdown(&self) {
        self.stop.cancel();
    }

    /// Serves until [`shutdown`](Self::shutdown) is called from elsewhere (or the listener
    /// fails).
    ///
    /// # Errors
    ///
    /// [`ProxyError`] when the listener failed.
    pub async fn wait(mut self) -> Result<(), ProxyError> {
        match self.task.take() {
            Some(task) => task.await.map_err(ProxyError::Listener),
            None => Ok(()),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

struct Endpoint {
    options: HttpOptions,
    addr: SocketAddr,
    sessions: Sessions,
    live: Mutex<HashMap<String, Arc<LiveSession>>>,
}

/// One client session: where its messages go, and the streams that carry what it sends back.
struct LiveSession {
    to_session: mpsc::Sender<Received>,
    router: Arc<Mutex<Router>>,
    _task: AbortOnDrop,
}

struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Which stream carries each message the session sends.
#[derive(Default)]
struct Router {
    /// The streams of requests waiting for their answers, by request id.
    waiting: HashMap<String, mpsc::Sender<String>>,
    /// The order the waiting requests came in (the newest last).
    order: Vec<String>,
    /// Progress tokens of waiting requests, to their request ids.
    tokens: HashMap<String, String>,
    /// The client's GET stream, if open.
    listening: Option<mpsc::Sender<String>>,
    /// What no stream could carry yet.
    queue: VecDeque<String>,
}

impl Router {
    /// Sends a message of the session's (one line of JSON) to the stream it belongs on.
    fn route(&mut self, line: String) {
        let Received::Message(message) = wire::parse(line.as_bytes()) else {
            return;
        };
        if message.method.is_none()
            && let Some(id) = &message.id
        {
            let id = id.to_string();
            if let Some(stream) = self.waiting.remove(&id) {
                self.order.retain(|waiting| *waiting != id);
                self.tokens.retain(|_, request| *request != id);
                // The answer ends the response (its sender dropped once it is sent), however
                // full the stream is.
                if let Err(mpsc::error::TrySendError::Full(line)) = stream.try_send(line) {
                    tokio::spawn(async move { stream.send(line).await });
                }
            }
            return;
        }
        let token = message.params_value()["progressToken"].to_string();
        let message = line;
        let related = self
            .tokens
            .get(&token)
            .cloned()
            .or_else(|| self.order.last().cloned());
        if let Some(id) = related
            && let Some(stream) = self.waiting.get(&id)
            && stream.try_send(message.clone()).is_ok()
        {
            return;
        }
        if let Some(stream) = &self.listening
            && stream.try_send(message.clone()).is_ok()
        {
            return;
        }
        if self.queue.len() >= MAX_QUEUED {
            self.queue.pop_front();
        }
        self.queue.push_back(message);
    }
}

async fn accept(listener: TcpListener, endpoint: Arc<Endpoint>, stop: CancellationToken) {
    loop {
        let (stream, _) = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(_) => continue,
            },
        };
        let endpoint = Arc::clone(&endpoint);
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let endpoint = Arc::clone(&endpoint);
                async move { Ok::<_, Infallible>(endpoint.handle(request).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::select! {
                _ = connection => {}
                () = stop.cancelled() => {}
            }
        });
    }
    lock(&endpoint.live).clear();
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

fn is_loopback_host(host: &str) -> bool {
    let name = host_name(host);
    name == "localhost"
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `host` without its port, and without the brackets of an IPv6 address.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    host.rsplit_once(':').map_or(host, |(name, port)| {
        if port.bytes().all(|b| b.is_ascii_digit()) {
            name
        } else {
            host
        }
    })
}

impl Endpoint {
    /// Whether the request's `Host` and `Origin` are allowed, and its token right; the
    /// response refusing it otherwise.
    fn guard(&self, request: &Request<Incoming>) -> Result<(), Box<Response<Body>>> {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        let host_allowed = is_loopback_host(host)
            || host_name(host) == host_name(&self.addr.to_string())
            || self
                .options
                .allowed_hosts
                .iter()
                .any(|allowed| allowed == host || allowed == host_name(host));
        if !host_allowed {
            return Err(Box::new(full(
                StatusCode::FORBIDDEN,
                format!("the Host `{host}` is not allowed; allow it with an allowed host"),
            )));
        }
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            let origin_host = origin.split_once("://").map_or(origin, |(_, rest)| {
                rest.split('/').next().unwrap_or_default()
            });
            let allowed = is_loopback_host(origin_host)
                || self
                    .options
                    .allowed_origins
                    .iter()
                    .any(|allowed| allowed == origin);
            if !allowed {
                return Err(Box::new(full(
                    StatusCode::FORBIDDEN,
                    format!(
                        "the Origin `{origin}` is not allowed; allow it with an allowed origin"
                    ),
                )));
            }
        }
        if let Some(token) = &self.options.bearer_token {
            let given = request
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.strip_prefix("Bearer "))
                .unwrap_or_default();
            if !constant_time_eq(given.as_bytes(), token.as_bytes()) {
                let mut response = full(
                    StatusCode::UNAUTHORIZED,
                    "a bearer token is required: send `Authorization: Bearer TOKEN`",
                );
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer"),
                );
                return Err(Box::new(response));
            }
        }
        Ok(())
    }

    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        if request.uri().path() != self.options.path {
            return full(
                StatusCode::NOT_FOUND,
                format!("not found; the MCP endpoint is {}", self.options.path),
            );
        }
        if let Err(refused) = self.guard(&request) {
            return *refused;
        }
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        match *request.method() {
            Method::POST => self.post(request, session).await,
            Method::GET => self.get(session),
            Method::DELETE => match session.and_then(|id| lock(&self.live).remove(&id)) {
                Some(_) => full(StatusCode::OK, ""),
                None => full(StatusCode::NOT_FOUND, "no such session"),
            },
            _ => {
                let mut response = full(StatusCode::METHOD_NOT_ALLOWED, "use POST, GET or DELETE");
                response.headers_mut().insert(
                    header::ALLOW,
                    header::HeaderValue::from_static("GET, POST, DELETE"),
                );
                response
            }
        }
    }

    async fn post(&self, request: Request<Incoming>, session: Option<String>) -> Response<Body> {
        let body = match Limited::new(request.into_body(), MAX_MESSAGE_BYTES)
            .collect()
            .await
        {
            Ok(body) => body.to_bytes(),
            Err(_) => {
                return json_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    crate::mcp::wire::INVALID_REQUEST,
                    "the message is over the limit of 16 MiB and was not read",
                );
            }
        };
        let received = wire::parse(&body);
        let (is_initialize, request_id, token) = match &received {
            Received::Message(message) => (
                message.method.as_deref() == Some("initialize"),
                message
                    .id
                    .as_ref()
                    .filter(|_| message.method.is_some())
                    .map(Value::to_string),
                message.params_value()["_meta"]["progressToken"].to_string(),
            ),
            Received::Unreadable { .. } => (false, None, String::new()),
        };
        let (id, live) = match (session, is_initialize) {
            (None, true) => match self.open() {
                Ok(opened) => opened,
                Err(refused) => return *refused,
            },
            (Some(id), _) => match lock(&self.live).get(&id).cloned() {
                Some(live) => (id, live),
                None => {
                    return json_error(
                        StatusCode::NOT_FOUND,
                        crate::mcp::wire::INVALID_REQUEST,
                        "no such session (it ended or never was); initialize a new one",
                    );
                }
            },
            (None, false) => {
                return json_error(
                    StatusCode::BAD_REQUEST,
                    crate::mcp::wire::INVALID_REQUEST,
                    "no `Mcp-Session-Id`: send `initialize` first, then its session id with every request",
                );
            }
        };
        let Some(request_id) = request_id else {
            // A notification or an answer: accepted, nothing to stream back.
            let unreadable = matches!(received, Received::Unreadable { .. });
            let _ = live.to_session.send(received).await;
            let mut response = full(
                if unreadable {
                    StatusCode::BAD_REQUEST
                } else {
                    StatusCode::ACCEPTED
                },
                "",
            );
            response
                .headers_mut()
                .insert(SESSION_HEADER, header_value(&id));
            return response;
        };
        let (stream, answers) = mpsc::channel(QUEUE);
        {
            let mut router = lock(&live.router);
            router.waiting.insert(request_id.clone(), stream);
            router.order.push(request_id.clone());
            if token != "null" {
                router.tokens.insert(token, request_id);
            }
        }
        let _ = live.to_session.send(received).await;
        let mut response = sse(answers);
        response
            .headers_mut()
            .insert(SESSION_HEADER, header_value(&id));
        response
    }

    /// A new session, running.
    fn open(&self) -> Result<(String, Arc<LiveSession>), Box<Response<Body>>> {
        let mut live = lock(&self.live);
        if live.len() >= self.options.max_sessions {
            return Err(Box::new(full(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "{} sessions are open, the most this server takes; end one first",
                    live.len()
                ),
            )));
        }
        let id = crate::artifacts::ArtifactId::generate()
            .map(|id| id.to_string())
            .map_err(|error| {
                Box::new(full(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("no session id ({error})"),
                ))
            })?;
        let (to_session, incoming) = mpsc::channel(QUEUE);
        let (outgoing, mut from_session) = mpsc::channel::<String>(QUEUE);
        let router = Arc::new(Mutex::new(Router::default()));
        let routing = Arc::clone(&router);
        let run = (self.sessions)(Link {
            incoming: incoming.into(),
            outgoing: outgoing.into(),
        });
        let task = tokio::spawn(async move {
            let routes = async move {
                while let Some(message) = from_session.recv().await {
                    lock(&routing).route(message);
                }
            };
            tokio::join!(run, routes);
        });
        let session = Arc::new(LiveSession {
            to_session,
            router,
            _task: AbortOnDrop(task.abort_handle()),
        });
        live.insert(id.clone(), Arc::clone(&session));
        Ok((id, session))
    }

    /// The client's stream of what the session sends outside any request.
    fn get(&self, session: Option<String>) -> Response<Body> {
        let Some(live) = session.and_then(|id| lock(&self.live).get(&id).cloned()) else {
            return full(StatusCode::NOT_FOUND, "no such session");
        };
        let (stream, messages) = mpsc::channel(QUEUE);
        {
            let mut router = lock(&live.router);
            if router
                .listening
                .as_ref()
                .is_some_and(|open| !open.is_closed())
            {
                return full(StatusCode::CONFLICT, "the session's stream is already open");
            }
            while let Some(queued) = router.queue.pop_front() {
                if stream.try_send(queued).is_err() {
                    break;
                }
            }
            router.listening = Some(stream);
        }
        sse(messages)
    }
}

fn header_value(text: &str) -> header::HeaderValue {
    header::HeaderValue::from_str(text).unwrap_or_else(|_| header::HeaderValue::from_static(""))
}

/// A response that streams `messages` as server-sent events until their sender is dropped.
fn sse(messages: mpsc::Receiver<String>) -> Response<Body> {
    let events = futures_util::stream::unfold(messages, |mut messages| async move {
        let message = messages.recv().await?;
        let event = format!("event: message\ndata: {message}\n\n");
        Some((
            Ok::<_, Infallible>(Frame::data(Bytes::from(event))),
            messages,
        ))
    });
    let mut response = Response::new(StreamBody::new(events).boxed());
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache"),
    );
    response
}

/// Compares two byte strings in time that depends on their lengths only.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_read_without_their_ports() {
        assert_eq!(host_name("localhost:8080"), "localhost");
        assert_eq!(host_name("[::1]:3000"), "::1");
        assert_eq!(host_name("example.com"), "example.com");
        assert!(is_loopback_host("127.0.0.1:9"));
        assert!(is_loopback_host("[::1]:9"));
        assert!(!is_loopback_host("evil.example:80"));
        assert!(constant_time_eq(b"token", b"token"));
        assert!(!constant_time_eq(b"token", b"tokex"));
    }
}
