//! The endpoint's routes: `POST` a message (answered as an event stream), `GET` the session's
//! own stream, `DELETE` the session, `GET /metrics`; each request admitted by the guard and
//! the limits first, and its body read within the bounds of one message and of all in flight.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use serde_json::Value;
use tokio::sync::mpsc;

use super::events::sse;
use super::listen::Endpoint;
use super::table::{Credential, Refused};
use super::{
    Body, METRICS_PATH, SESSION_HEADER, full, guard, header_value, json_error, limits, table,
};
use crate::artifacts::Owner;
use crate::figures::DisplayDuration;
use crate::mcp::link::QUEUE;
use crate::mcp::metrics::Telemetry;
use crate::mcp::wire::{self, MAX_MESSAGE_BYTES, Received, era};

/// Why a body was not read.
enum Unread {
    /// Over the limit of one message.
    TooLarge,
    /// Over the bytes in flight across connections.
    Busy,
    /// The connection failed mid-body.
    Broken,
}

/// What puts the client's id back on every line that carries the endpoint's (`own`) for a
/// 2026-07-28 request: an answer's id, a listen's frame's subscription id.
fn restorer(own: Value, client_id: Value) -> impl Fn(String) -> String + Send + 'static {
    move |line: String| -> String {
        match wire::parse(line.as_bytes()) {
            Received::Message(mut answer) if answer.method.is_none() => {
                answer.id = Some(client_id.clone());
                answer.line()
            }
            Received::Message(_) if line.contains(era::SUBSCRIPTION_ID_KEY) => {
                let mut frame: Value = serde_json::from_str(&line).unwrap_or_default();
                let tagged = &mut frame["params"]["_meta"][era::SUBSCRIPTION_ID_KEY];
                if *tagged == own {
                    *tagged = client_id.clone();
                }
                frame.to_string()
            }
            _ => line,
        }
    }
}

/// Relays the rest of a 2026-07-28 request's lines to its stream of events, restored; a client
/// that closes the stream before the answer cancels the request (`own`, the endpoint's id).
async fn relay_rest(
    mut answers: mpsc::Receiver<String>,
    relay: mpsc::Sender<String>,
    restore: impl Fn(String) -> String,
    live: Arc<table::LiveSession>,
    own: Value,
) {
    loop {
        tokio::select! {
            line = answers.recv() => {
                let Some(line) = line else { return };
                if relay.send(restore(line)).await.is_err() {
                    break;
                }
            }
            () = relay.closed() => break,
        }
    }
    crate::sync::lock(&live.router).abandon(&own.to_string());
    let cancel = wire::notification(
        "notifications/cancelled",
        Some(wire::raw(&serde_json::json!({
            "requestId": own,
            "reason": "the client closed its stream",
        }))),
    );
    if let Received::Message(cancel) = wire::parse(cancel.as_bytes()) {
        let _ = live.to_session.send(Received::Message(cancel)).await;
    }
}

/// What the endpoint needs to know of a posted message before it routes it.
struct Posted {
    is_initialize: bool,
    is_call: bool,
    /// A request's id, as the router keys it (`None`: a notification, or an answer).
    request_id: Option<String>,
    /// Its progress token, as the router keys it.
    token: String,
}

impl Posted {
    fn of(received: &Received) -> Self {
        match received {
            Received::Message(message) => Posted {
                is_initialize: message.method.as_deref() == Some("initialize"),
                is_call: message.method.as_deref() == Some("tools/call"),
                request_id: message
                    .id
                    .as_ref()
                    .filter(|_| message.method.is_some())
                    .map(Value::to_string),
                token: message.params_value()["_meta"]["progressToken"].to_string(),
            },
            Received::Unreadable { .. } => Posted {
                is_initialize: false,
                is_call: false,
                request_id: None,
                token: String::new(),
            },
        }
    }
}

impl Unread {
    /// The answer to a body that was not read, saying why.
    fn response(self) -> Response<Body> {
        match self {
            Unread::TooLarge => json_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                wire::INVALID_REQUEST,
                "the message is over the limit of 16 MiB and was not read",
            ),
            Unread::Busy => {
                let mut response = json_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    wire::INVALID_REQUEST,
                    "the server is reading as many bytes of messages as it takes at once; retry shortly",
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
                response
            }
            Unread::Broken => full(StatusCode::BAD_REQUEST, "the body could not be read"),
        }
    }
}

impl Endpoint {
    pub(super) async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
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
            // 2026-07-28 has no stream of the server's own: only a session of the handshake
            // era GETs one.
            Method::GET if session.is_none() => {
                let mut response = json_error(
                    StatusCode::METHOD_NOT_ALLOWED,
                    wire::INVALID_REQUEST,
                    "POST a request; a GET stream belongs to a session of the handshake era \
                     (its Mcp-Session-Id)",
                );
                response
                    .headers_mut()
                    .insert(header::ALLOW, header::HeaderValue::from_static("POST"));
                response
            }
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

    /// A POST: the body read within the limits, the principal's rate limits taken for a
    /// request, then a request of 2026-07-28 served on its own, or a message of a session
    /// (an `initialize` opening one) put on its session.
    async fn post(
        &self,
        request: Request<Incoming>,
        session: Option<String>,
        credential: Credential,
    ) -> Response<Body> {
        let header = |name: &str| {
            request
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
        };
        let era_headers = era::Headers {
            version: header(era::VERSION_HEADER),
            method: header(era::METHOD_HEADER),
            name: header(era::NAME_HEADER),
        };
        let (body, _reading) = match self.body(request).await {
            Ok(read) => read,
            Err(unread) => return unread.response(),
        };
        let received = wire::parse(&body);
        drop(body);
        let posted = Posted::of(&received);
        let held = match self.take_limits(&posted, credential) {
            Ok(held) => held,
            Err(refused) => return *refused,
        };
        // No session named and no handshake: a request of 2026-07-28, on its own (an
        // `initialize` naming 2026-07-28 too: it is answered that there is no handshake).
        let modern_header = era_headers.version.as_deref() == Some(era::MODERN);
        if session.is_none() && (!posted.is_initialize || modern_header) {
            let modern = era_headers.version.is_some()
                || matches!(&received, Received::Message(message)
                    if era::has_envelope(Some(&message.params_value())));
            if modern {
                return self
                    .post_modern(received, era_headers, credential, held)
                    .await;
            }
        }
        let (id, live) = match self.session_of(session, posted.is_initialize, credential) {
            Ok(found) => found,
            Err(refused) => return *refused,
        };
        let mut response = match posted.request_id {
            Some(request_id) => {
                let (stream, answers) = mpsc::channel(QUEUE);
                crate::sync::lock(&live.router).wait(request_id, posted.token, stream);
                let _ = live.to_session.send(received).await;
                sse(answers, held)
            }
            None => {
                // A notification or an answer: accepted, nothing to stream back.
                let unreadable = matches!(received, Received::Unreadable { .. });
                let _ = live.to_session.send(received).await;
                let status = if unreadable {
                    StatusCode::BAD_REQUEST
                } else {
                    StatusCode::ACCEPTED
                };
                full(status, "")
            }
        };
        response
            .headers_mut()
            .insert(SESSION_HEADER, header_value(&id));
        response
    }

    /// The principal's limits for a request: one more request, and one more call for a tool
    /// call (held while it runs). Notifications and answers take none: they finish what runs.
    fn take_limits(
        &self,
        posted: &Posted,
        credential: Credential,
    ) -> Result<limits::Held, Box<Response<Body>>> {
        let principal = self.credentials.principal(credential).unwrap_or_default();
        let mut held = limits::Held::default();
        if posted.request_id.is_some() {
            let taken = self.limiter.request(principal).and_then(|()| {
                if posted.is_call {
                    held = self.limiter.call(principal)?;
                }
                Ok(())
            });
            if let Err(refused) = taken {
                return Err(Box::new(too_many(refused)));
            }
        }
        Ok(held)
    }

    /// The session a message of the handshake era goes to: a new one for `initialize`, the
    /// one it names otherwise (the credential's own), or why there is none.
    fn session_of(
        &self,
        session: Option<String>,
        is_initialize: bool,
        credential: Credential,
    ) -> Result<(String, Arc<table::LiveSession>), Box<Response<Body>>> {
        match (session, is_initialize) {
            (None, true) => self.open(credential),
            (Some(id), _) => match self.table.get(&id, credential) {
                Some(live) => Ok((id, live)),
                None => Err(Box::new(json_error(
                    StatusCode::NOT_FOUND,
                    wire::INVALID_REQUEST,
                    "no such session (it ended or never was); initialize a new one",
                ))),
            },
            (None, false) => Err(Box::new(json_error(
                StatusCode::BAD_REQUEST,
                wire::INVALID_REQUEST,
                "no `Mcp-Session-Id`: send `initialize` first, then its session id with every request",
            ))),
        }
    }

    /// A 2026-07-28 request: checked as the version asks (its envelope, its headers), then
    /// served by the credential's session under an id of the endpoint's own (two clients of one
    /// principal may use the same ids), its answer given back with the client's id — as JSON,
    /// its status the one its error code takes, or as a stream of events when the server sends
    /// something first (progress). A notification is accepted and dropped: 2026-07-28 defines
    /// none a client sends (a cancellation is the response's stream closing).
    async fn post_modern(
        &self,
        received: Received,
        headers: era::Headers,
        credential: Credential,
        held: limits::Held,
    ) -> Response<Body> {
        let Received::Message(mut message) = received else {
            return json_error(
                StatusCode::BAD_REQUEST,
                wire::PARSE_ERROR,
                "the body is not JSON",
            );
        };
        let Some(method) = message.method.clone() else {
            return json_error(
                StatusCode::BAD_REQUEST,
                wire::INVALID_REQUEST,
                "a 2026-07-28 client sends requests; there is nothing to answer here",
            );
        };
        let Some(client_id) = message.id.take() else {
            return full(StatusCode::ACCEPTED, "");
        };
        let params = message.params_value();
        let checked = match era::removed(&method) {
            Some(refusal) => Err(refusal),
            None => era::check(&method, Some(&params), Some(&headers)).map(|_| ()),
        };
        if let Err(refusal) = checked {
            let line = wire::answer(&client_id, Err(wire::raw(&refusal.error())));
            return json_response(era::http_status(Some(refusal.code)), line);
        }
        let live = match self.modern_session(credential) {
            Ok(live) => live,
            Err(refused) => return *refused,
        };
        let own_id = format!(
            "modern-{}",
            self.modern_ids
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let token = params["_meta"]["progressToken"].to_string();
        message.id = Some(Value::String(own_id.clone()));
        let (stream, mut answers) = mpsc::channel(QUEUE);
        let own = Value::String(own_id);
        if method == "subscriptions/listen" {
            crate::sync::lock(&live.router).wait_listen(own.to_string(), stream);
        } else {
            crate::sync::lock(&live.router).wait(own.to_string(), token, stream);
        }
        let _ = live.to_session.send(Received::Message(message)).await;
        let restore = restorer(own.clone(), client_id);
        let Some(first) = answers.recv().await else {
            return json_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                wire::INTERNAL_ERROR,
                "the session ended before it answered",
            );
        };
        if let Received::Message(answer) = wire::parse(first.as_bytes())
            && answer.method.is_none()
        {
            let code = answer
                .error
                .as_ref()
                .and_then(|error| serde_json::from_str::<Value>(error.get()).ok())
                .and_then(|error| error["code"].as_i64());
            return json_response(era::http_status(code), restore(first));
        }
        // Something before the answer (progress, a listen's acknowledgement): the rest as a
        // stream of events.
        let (relay, events) = mpsc::channel(QUEUE);
        let _ = relay.send(restore(first)).await;
        tokio::spawn(relay_rest(answers, relay, restore, live, own));
        sse(events, held)
    }

    /// What a session of `credential` opens with: its telemetry, and the owner of its
    /// artifacts (its principal's, or the session's own, by its id).
    fn opening(&self, credential: Credential) -> (Telemetry, impl Fn(&str) -> Owner + '_) {
        let principal = self.credentials.principal(credential);
        let telemetry = Telemetry {
            metrics: self.metrics.clone(),
            principal: principal.map(Arc::from),
        };
        let owner_of = move |id: &str| {
            principal
                .and_then(|name| Owner::principal(name).ok())
                .or_else(|| Owner::session(id).ok())
                .expect("a session id of hex digits names an owner")
        };
        (telemetry, owner_of)
    }

    /// The credential's session for its 2026-07-28 requests.
    fn modern_session(
        &self,
        credential: Credential,
    ) -> Result<Arc<table::LiveSession>, Box<Response<Body>>> {
        let (telemetry, owner_of) = self.opening(credential);
        self.table
            .modern(&self.sessions, credential, owner_of, telemetry)
            .map_err(|refused| Box::new(refusal(refused)))
    }

    /// A new session of `credential`, running; its artifacts its principal's, or its own.
    fn open(
        &self,
        credential: Credential,
    ) -> Result<(String, Arc<table::LiveSession>), Box<Response<Body>>> {
        let (telemetry, owner_of) = self.opening(credential);
        self.table
            .open(&self.sessions, credential, owner_of, telemetry)
            .map_err(|refused| Box::new(refusal(refused)))
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

/// Why no session could be opened, as the client reads it.
fn refusal(refused: Refused) -> Response<Body> {
    match refused {
        Refused::Full(open) => {
            let mut response = full(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "{open} sessions are open and busy, the most this server takes; retry shortly"
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
    }
}

/// One JSON-RPC answer as a JSON body, with `status`.
fn json_response(status: u16, line: String) -> Response<Body> {
    let mut response = full(StatusCode::from_u16(status).unwrap_or(StatusCode::OK), line);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
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
        wire::INVALID_REQUEST,
        &format!(
            "over {what}; retry in {}",
            DisplayDuration(std::time::Duration::from_secs(refused.retry_after))
        ),
    );
    response.headers_mut().insert(
        header::RETRY_AFTER,
        header::HeaderValue::from(refused.retry_after),
    );
    response
}
