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
//! limit (`sessions.rs`). What it holds is bounded: bodies one by one (413) and together (503),
//! the time to send headers, and an `accept` that fails for want of descriptors backs off and
//! sheds idle connections rather than spin.

mod guard;
mod limits;
mod sessions;

pub use limits::Limits;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::ProxyError;
use super::link::{self, Link, QUEUE};
use crate::artifacts::Owner;
use crate::mcp::metrics::{Metrics, MetricsOptions, Telemetry};
use crate::mcp::wire::MAX_MESSAGE_BYTES;
use crate::mcp::wire::{self, Received};
use guard::Credentials;
use sessions::{Credential, Refused, Table};

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

/// Where and for whom an HTTP endpoint listens, and what it holds at most.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The address to listen on: `127.0.0.1:8080` (port 0: any free port).
    pub addr: SocketAddr,
    /// The endpoint's path (`/mcp`).
    pub path: String,
    /// A token every request may carry as `Authorization: Bearer TOKEN`, naming no principal.
    /// With neither this nor [`principal_tokens`](Self::principal_tokens), requests need none.
    pub bearer_token: Option<String>,
    /// Tokens that each name a principal, `(token, principal)`: a principal's artifacts are
    /// kept apart from every other's, and outlive its sessions.
    pub principal_tokens: Vec<(String, String)>,
    /// Origins allowed beside loopback ones (`https://app.example.com`).
    pub allowed_origins: Vec<String>,
    /// Host names allowed beside loopback ones and the listening address.
    pub allowed_hosts: Vec<String>,
    /// The most client sessions at once (256 by default); at the limit, the least recently
    /// used idle session ends to make room.
    pub max_sessions: usize,
    /// How long a session may sit idle — no request waiting, none coming — before it ends,
    /// its servers stopped and its streams closed (30 minutes by default).
    pub session_idle_timeout: Duration,
    /// The most bytes of request bodies read at once, across every connection (64 MiB by
    /// default); a body beyond it is refused with 503 and `Retry-After`.
    pub max_body_bytes_in_flight: usize,
    /// How long a client has to send a request's headers (10 s by default).
    pub header_read_timeout: Duration,
    /// Which figures `GET /metrics` serves (on by default, behind the same token as the
    /// endpoint; tool names capped at 1,000 series; principals not a label).
    pub metrics: MetricsOptions,
    /// Requests per minute and tool calls at once, per principal and across the endpoint (none
    /// by default); a request over one is answered 429 with `Retry-After`.
    pub limits: Limits,
}

impl HttpOptions {
    /// Listens on `addr` at `/mcp`, without a token, for loopback origins and hosts.
    pub fn new(addr: SocketAddr) -> Self {
        HttpOptions {
            addr,
            path: "/mcp".to_owned(),
            bearer_token: None,
            principal_tokens: Vec::new(),
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_sessions: 256,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_body_bytes_in_flight: 64 << 20,
            header_read_timeout: Duration::from_secs(10),
            metrics: MetricsOptions::default(),
            limits: Limits::default(),
        }
    }

    /// Requires `Authorization: Bearer TOKEN` on every request.
    #[must_use]
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Takes `token` as the credential of `principal` (several tokens may name one).
    #[must_use]
    pub fn with_principal_token(
        mut self,
        token: impl Into<String>,
        principal: impl Into<String>,
    ) -> Self {
        self.principal_tokens.push((token.into(), principal.into()));
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

    /// Takes at most `max` sessions at once.
    #[must_use]
    pub fn with_max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max;
        self
    }

    /// Ends a session once idle for `timeout`.
    #[must_use]
    pub fn with_session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// Reads at most `bytes` of request bodies at once, across connections.
    #[must_use]
    pub fn with_max_body_bytes_in_flight(mut self, bytes: usize) -> Self {
        self.max_body_bytes_in_flight = bytes;
        self
    }

    /// Gives a client `timeout` to send a request's headers.
    #[must_use]
    pub fn with_header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Limits each principal's requests and calls, and the endpoint's calls, as `limits` say.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Keeps the figures `GET /metrics` serves as `metrics` say.
    #[must_use]
    pub fn with_metrics(mut self, metrics: MetricsOptions) -> Self {
        self.metrics = metrics;
        self
    }
}

/// The path `GET` serves the endpoint's figures on, in Prometheus' text format.
pub const METRICS_PATH: &str = "/metrics";

/// A running HTTP endpoint. Dropping it (or [`shutdown`](Self::shutdown)) stops it and ends
/// every session.
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    metrics: Metrics,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl HttpServer {
    /// Listens as `options` say and serves each session with `sessions`.
    pub(crate) async fn start(
        options: HttpOptions,
        metrics: Metrics,
        sessions: Sessions,
    ) -> Result<Self, ProxyError> {
        for (_, principal) in &options.principal_tokens {
            Owner::principal(principal).map_err(ProxyError::Artifacts)?;
        }
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
            credentials: Credentials::new(&options),
            table: Table::new(
                options.max_sessions,
                options.session_idle_timeout,
                metrics.clone(),
            ),
            limiter: limits::Limiter::new(options.limits.clone(), metrics.clone()),
            metrics: metrics.clone(),
            bodies: Arc::new(Semaphore::new(
                options.max_body_bytes_in_flight.min(Semaphore::MAX_PERMITS),
            )),
            shed: Notify::new(),
            options,
            addr,
            sessions,
        });
        tokio::spawn(sweep(Arc::clone(&endpoint), stop.clone()));
        let task = tokio::spawn(accept(listener, endpoint, stop.clone()));
        Ok(HttpServer {
            addr,
            metrics,
            stop,
            task: Some(task),
        })
    }

    /// The address it listens on (with the port chosen, for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint's figures, as `GET /metrics` serves them.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
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
    credentials: Credentials,
    table: Table,
    limiter: limits::Limiter,
    metrics: Metrics,
    /// Permits for the bytes of request bodies being read, across connections.
    bodies: Arc<Semaphore>,
    /// Told when descriptors ran out: every connection closes once its response is done.
    shed: Notify,
}

/// Ends idle sessions until the endpoint stops.
async fn sweep(endpoint: Arc<Endpoint>, stop: CancellationToken) {
    let every = endpoint.table.sweep_every();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        endpoint.table.expire(Instant::now());
    }
}

/// Whether an `accept` failed for want of a resource the process gets back when connections
/// close (descriptors, buffers), rather than for one connection's fault.
fn is_exhaustion(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc_errno::EMFILE | libc_errno::ENFILE | libc_errno::ENOBUFS | libc_errno::ENOMEM)
    )
}

/// The error numbers of exhaustion, as Linux and the BSDs number them.
mod libc_errno {
    pub(super) const ENOMEM: i32 = 12;
    pub(super) const ENFILE: i32 = 23;
    pub(super) const EMFILE: i32 = 24;
    #[cfg(target_os = "linux")]
    pub(super) const ENOBUFS: i32 = 105;
    #[cfg(not(target_os = "linux"))]
    pub(super) const ENOBUFS: i32 = 55;
}

async fn accept(listener: TcpListener, endpoint: Arc<Endpoint>, stop: CancellationToken) {
    const FIRST_PAUSE: Duration = Duration::from_millis(10);
    const LONGEST_PAUSE: Duration = Duration::from_secs(1);
    let mut pause = FIRST_PAUSE;
    let mut exhausted = false;
    loop {
        let (stream, _) = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) if is_exhaustion(&error) => {
                    // Retrying at once would spin: the connection waits in the backlog until a
                    // descriptor comes back. Idle connections go first.
                    if !exhausted {
                        tracing::warn!(
                            "cannot accept a connection ({error}): closing idle connections, \
                             retrying with backoff"
                        );
                        exhausted = true;
                    }
                    endpoint.shed.notify_waiters();
                    tokio::select! {
                        () = stop.cancelled() => break,
                        () = tokio::time::sleep(pause) => {}
                    }
                    pause = (pause * 2).min(LONGEST_PAUSE);
                    continue;
                }
                // One connection's failure (reset before it was accepted): the next one.
                Err(_) => continue,
            },
        };
        if exhausted {
            tracing::warn!("accepting connections again");
            exhausted = false;
        }
        pause = FIRST_PAUSE;
        let endpoint = Arc::clone(&endpoint);
        let stop = stop.clone();
        tokio::spawn(async move {
            let serving = Arc::clone(&endpoint);
            let service = hyper::service::service_fn(move |request| {
                let endpoint = Arc::clone(&serving);
                async move { Ok::<_, Infallible>(endpoint.handle(request).await) }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(endpoint.options.header_read_timeout);
            let connection =
                builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            let shed = endpoint.shed.notified();
            tokio::select! {
                _ = connection.as_mut() => return,
                () = stop.cancelled() => return,
                () = shed => connection.as_mut().graceful_shutdown(),
            }
            tokio::select! {
                _ = connection => {}
                () = stop.cancelled() => {}
            }
        });
    }
    endpoint.table.clear();
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

/// Why a body was not read.
enum Unread {
    /// Over the limit of one message.
    TooLarge,
    /// Over the bytes in flight across connections.
    Busy,
    /// The connection failed mid-body.
    Broken,
}

impl Endpoint {
    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        if request.uri().path() == METRICS_PATH
            && self.options.metrics.enabled
            && self.options.path != METRICS_PATH
        {
            return self.serve_metrics(&request);
        }
        if request.uri().path() != self.options.path {
            return full(
                StatusCode::NOT_FOUND,
                format!("not found; the MCP endpoint is {}", self.options.path),
            );
        }
        let credential = match guard::admit(
            &self.options,
            self.addr,
            &self.credentials,
            request.headers(),
        ) {
            Ok(credential) => credential,
            Err(refused) => return *refused,
        };
        if let Err(refused) = guard::media_types(request.method(), request.headers()) {
            return *refused;
        }
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        match *request.method() {
            Method::POST => self.post(request, session, credential).await,
            Method::GET => self.get(session, credential),
            Method::DELETE => match session.filter(|id| self.table.remove(id, credential)) {
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

    /// `GET /metrics`: the figures, for a request the endpoint admits (its token, its origins).
    fn serve_metrics(&self, request: &Request<Incoming>) -> Response<Body> {
        if let Err(refused) = guard::admit(
            &self.options,
            self.addr,
            &self.credentials,
            request.headers(),
        ) {
            return *refused;
        }
        if request.method() != Method::GET {
            let mut response = full(StatusCode::METHOD_NOT_ALLOWED, "use GET");
            response
                .headers_mut()
                .insert(header::ALLOW, header::HeaderValue::from_static("GET"));
            return response;
        }
        let mut response = full(StatusCode::OK, self.metrics.render());
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        );
        response
    }

    /// Reads a body within the limit of one message and the bytes in flight across
    /// connections; the permits are held until the message is handed on.
    async fn body(
        &self,
        request: Request<Incoming>,
    ) -> Result<(Bytes, tokio::sync::OwnedSemaphorePermit), Unread> {
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<usize>().ok());
        if declared.is_some_and(|length| length > MAX_MESSAGE_BYTES) {
            return Err(Unread::TooLarge);
        }
        let take = |bytes: usize| {
            u32::try_from(bytes)
                .ok()
                .and_then(|bytes| Arc::clone(&self.bodies).try_acquire_many_owned(bytes).ok())
                .ok_or(Unread::Busy)
        };
        let mut held = take(declared.unwrap_or(0))?;
        let mut read = bytes::BytesMut::new();
        let mut body = request.into_body();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| Unread::Broken)?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if read.len() + data.len() > MAX_MESSAGE_BYTES {
                return Err(Unread::TooLarge);
            }
            read.extend_from_slice(&data);
            let unpaid = read.len().saturating_sub(held.num_permits());
            if unpaid > 0 {
                held.merge(take(unpaid)?);
            }
        }
        Ok((read.freeze(), held))
    }

    async fn post(
        &self,
        request: Request<Incoming>,
        session: Option<String>,
        credential: Credential,
    ) -> Response<Body> {
        let (body, _held) = match self.body(request).await {
            Ok(read) => read,
            Err(Unread::TooLarge) => {
                return json_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    crate::mcp::wire::INVALID_REQUEST,
                    "the message is over the limit of 16 MiB and was not read",
                );
            }
            Err(Unread::Busy) => {
                let mut response = json_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    crate::mcp::wire::INVALID_REQUEST,
                    "the server is reading as many bytes of messages as it takes at once; retry shortly",
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
                return response;
            }
            Err(Unread::Broken) => {
                return full(StatusCode::BAD_REQUEST, "the body could not be read");
            }
        };
        let received = wire::parse(&body);
        drop(body);
        let (is_initialize, is_call, request_id, token) = match &received {
            Received::Message(message) => (
                message.method.as_deref() == Some("initialize"),
                message.method.as_deref() == Some("tools/call"),
                message
                    .id
                    .as_ref()
                    .filter(|_| message.method.is_some())
                    .map(Value::to_string),
                message.params_value()["_meta"]["progressToken"].to_string(),
            ),
            Received::Unreadable { .. } => (false, false, None, String::new()),
        };
        // Limits count requests (not notifications or answers, which finish what is running).
        let principal = self.credentials.principal(credential).unwrap_or_default();
        let mut held = limits::Held::default();
        if request_id.is_some() {
            let taken = self.limiter.request(principal).and_then(|()| {
                if is_call {
                    held = self.limiter.call(principal)?;
                }
                Ok(())
            });
            if let Err(refused) = taken {
                return too_many(refused);
            }
        }
        let (id, live) = match (session, is_initialize) {
            (None, true) => match self.open(credential) {
                Ok(opened) => opened,
                Err(refused) => return *refused,
            },
            (Some(id), _) => match self.table.get(&id, credential) {
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
        crate::sync::lock(&live.router).wait(request_id, token, stream);
        let _ = live.to_session.send(received).await;
        let mut response = sse(answers, held);
        response
            .headers_mut()
            .insert(SESSION_HEADER, header_value(&id));
        response
    }

    /// A new session of `credential`, running; its artifacts its principal's, or its own.
    fn open(
        &self,
        credential: Credential,
    ) -> Result<(String, Arc<sessions::LiveSession>), Box<Response<Body>>> {
        let principal = self.credentials.principal(credential);
        let telemetry = Telemetry {
            metrics: self.metrics.clone(),
            principal: principal.map(Arc::from),
        };
        let owner_of = |id: &str| {
            principal
                .and_then(|name| Owner::principal(name).ok())
                .or_else(|| Owner::session(id).ok())
                .expect("a session id of hex digits names an owner")
        };
        self.table
            .open(&self.sessions, credential, owner_of, telemetry)
            .map_err(|refused| {
                Box::new(match refused {
                    Refused::Full(open) => {
                        let mut response = full(
                            StatusCode::SERVICE_UNAVAILABLE,
                            format!(
                                "{open} sessions are open and busy, the most this server takes; \
                                 retry shortly"
                            ),
                        );
                        response
                            .headers_mut()
                            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("5"));
                        response
                    }
                    Refused::NoId(why) => full(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        format!("no session id ({why})"),
                    ),
                })
            })
    }

    /// The client's stream of what the session sends outside any request.
    fn get(&self, session: Option<String>, credential: Credential) -> Response<Body> {
        let Some(live) = session.and_then(|id| self.table.get(&id, credential)) else {
            return full(StatusCode::NOT_FOUND, "no such session");
        };
        let (stream, messages) = mpsc::channel(QUEUE);
        if !crate::sync::lock(&live.router).listen(stream) {
            return full(StatusCode::CONFLICT, "the session's stream is already open");
        }
        sse(messages, limits::Held::default())
    }
}

/// 429: a limit refused the request; when to try again.
fn too_many(refused: limits::Refusal) -> Response<Body> {
    use crate::mcp::metrics::Limited;
    let what = match refused.why {
        Limited::Rate => "this principal's requests per minute",
        Limited::Concurrency => "this principal's tool calls at once",
        Limited::Global => "the tool calls this server runs at once",
    };
    let mut response = json_error(
        StatusCode::TOO_MANY_REQUESTS,
        crate::mcp::wire::INVALID_REQUEST,
        &format!("over {what}; retry in {} s", refused.retry_after),
    );
    response.headers_mut().insert(
        header::RETRY_AFTER,
        header::HeaderValue::from(refused.retry_after),
    );
    response
}

fn header_value(text: &str) -> header::HeaderValue {
    header::HeaderValue::from_str(text).unwrap_or_else(|_| header::HeaderValue::from_static(""))
}

/// A response that streams `messages` as server-sent events until their sender is dropped;
/// `held` (a call's permits) is released when the stream ends.
fn sse(messages: mpsc::Receiver<String>, held: limits::Held) -> Response<Body> {
    let events =
        futures_util::stream::unfold((messages, held), |(mut messages, held)| async move {
            let message = messages.recv().await?;
            let event = format!("event: message\ndata: {message}\n\n");
            Some((
                Ok::<_, Infallible>(Frame::data(Bytes::from(event))),
                (messages, held),
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
