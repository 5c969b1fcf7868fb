//! Where and for whom an endpoint listens, and what it holds at most.

use std::net::SocketAddr;
use std::time::Duration;

use super::Limits;
use crate::mcp::metrics::MetricsOptions;

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
