//! A link to a server over streamable HTTP, messages as they are: each message the relay sends
//! is a POST; what the server answers (one JSON message, or a stream of server-sent events) and
//! what it sends on its own stream (a GET) comes back over the link. The session id and the
//! protocol version the server gave are sent with every later request.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::figures::grouped;
use crate::mcp::link::{Link, QUEUE};
use crate::mcp::wire::{self, Received};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
/// The most of an HTTP error's body quoted in the error.
const MAX_QUOTED: usize = 300;

/// What the requests of one session share.
struct Shared {
    client: reqwest::Client,
    url: String,
    headers: reqwest::header::HeaderMap,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    /// The id of the `initialize` request, until it is answered.
    initialize: Mutex<Option<Value>>,
    max_message_bytes: usize,
    to: mpsc::Sender<Received>,
}

impl Shared {
    fn request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let mut request = self
            .client
            .request(method, &self.url)
            .headers(self.headers.clone());
        if let Some(session) = crate::sync::lock(&self.session).clone() {
            request = request.header(SESSION_HEADER, session);
        }
        if let Some(version) = crate::sync::lock(&self.version).clone() {
            request = request.header(VERSION_HEADER, version);
        }
        request
    }

    /// Passes a message on; an answer to `initialize` also gives the protocol version.
    async fn deliver(&self, received: Received) -> bool {
        if let Received::Message(message) = &received {
            let mut initialize = crate::sync::lock(&self.initialize);
            if initialize.is_some() && *initialize == message.id {
                *initialize = None;
                let result: Value = message
                    .result
                    .as_deref()
                    .and_then(|raw| serde_json::from_str(raw.get()).ok())
                    .unwrap_or(Value::Null);
                if let Some(version) = result["protocolVersion"].as_str() {
                    *crate::sync::lock(&self.version) = Some(version.to_owned());
                }
            }
        }
        self.to.send(received).await.is_ok()
    }

    /// Fails request `id` with an error saying `why`, and the HTTP status the server answered
    /// with (in the error's data, [`wire::HTTP_STATUS_KEY`]; `None`: it could not be reached,
    /// [`wire::UNREACHABLE_KEY`]).
    async fn fail(&self, id: &Value, why: String, status: Option<reqwest::StatusCode>) {
        let mut error = wire::error(wire::HTTP_FAILED, why);
        error["data"] = match status {
            Some(status) => serde_json::json!({ wire::HTTP_STATUS_KEY: status.as_u16() }),
            None => serde_json::json!({ wire::UNREACHABLE_KEY: true }),
        };
        let answer = wire::Message {
            id: Some(id.clone()),
            error: Some(wire::raw(&error)),
            ..wire::Message::default()
        };
        self.deliver(Received::Message(answer)).await;
    }
}

/// Opens a link to the server at `url`, sending `headers` with every request.
pub(crate) fn connect(
    url: &str,
    headers: &BTreeMap<String, String>,
    max_message_bytes: usize,
) -> Result<Link, String> {
    let parsed =
        reqwest::Url::parse(url).map_err(|error| format!("the URL is not valid ({error})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "the URL's scheme is `{}`; use http or https",
            parsed.scheme()
        ));
    }
    let mut map = reqwest::header::HeaderMap::new();
    for (key, value) in headers {
        let name = reqwest::header::HeaderName::try_from(key.as_str())
            .map_err(|_| format!("`{key}` is not a valid header name"))?;
        let value = reqwest::header::HeaderValue::try_from(value.as_str())
            .map_err(|_| format!("the value of header `{key}` is not valid in a header"))?;
        map.insert(name, value);
    }
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        // A request's small writes go at once (the `net` module's rule for every socket).
        .tcp_nodelay(true)
        .build()
        .map_err(|error| format!("no HTTP client could be made ({error})"))?;
    let (to, incoming) = mpsc::channel(QUEUE);
    let (outgoing, from) = mpsc::channel(QUEUE);
    let shared = Arc::new(Shared {
        client,
        url: url.to_owned(),
        headers: map,
        session: Mutex::new(None),
        version: Mutex::new(None),
        initialize: Mutex::new(None),
        max_message_bytes,
        to,
    });
    tokio::spawn(send_all(shared, from));
    Ok(Link {
        incoming: incoming.into(),
        outgoing: outgoing.into(),
    })
}

/// Sends each message as a POST of its own, concurrently; opens the server's own stream once
/// the session is initialized; ends the session when the relay is done with it.
async fn send_all(shared: Arc<Shared>, mut from: mpsc::Receiver<String>) {
    let mut listening = None;
    while let Some(message) = from.recv().await {
        let (method, id, era_headers) = match wire::parse(message.as_bytes()) {
            Received::Message(parsed) => {
                let headers = modern_headers(&parsed);
                let id = parsed.id.filter(|_| parsed.method.is_some());
                (parsed.method, id, headers)
            }
            Received::Unreadable { .. } => (None, None, Vec::new()),
        };
        if !era_headers.is_empty() {
            // MCP 2026-07-28: each request on its own, its headers saying what its body says.
            let shared = Arc::clone(&shared);
            tokio::spawn(
                async move { post_with(&shared, &message, id.as_ref(), &era_headers).await },
            );
            continue;
        }
        if method.as_deref() == Some("initialize") {
            *crate::sync::lock(&shared.initialize) = id.clone();
            // The session id comes with the answer: nothing else goes out before it.
            post(&shared, &message, id.as_ref()).await;
            continue;
        }
        if method.as_deref() == Some("notifications/initialized") {
            post(&shared, &message, None).await;
            if listening.is_none() {
                listening = Some(tokio::spawn(listen(Arc::clone(&shared))));
            }
            continue;
        }
        let shared = Arc::clone(&shared);
        tokio::spawn(async move { post(&shared, &message, id.as_ref()).await });
    }
    if let Some(listening) = listening {
        listening.abort();
    }
    // The relay is done: the server may forget the session.
    if crate::sync::lock(&shared.session).is_some() {
        let _ = shared.request(reqwest::Method::DELETE).send().await;
    }
}

/// The HTTP headers a request of MCP 2026-07-28 carries (`MCP-Protocol-Version`, `Mcp-Method`,
/// and `Mcp-Name` for a call, a prompt, a read): none for a message without the envelope.
fn modern_headers(message: &wire::Message) -> Vec<(&'static str, String)> {
    let params = message.params_value();
    let Some(method) = message.method.as_deref() else {
        return Vec::new();
    };
    let Some(version) = params["_meta"][wire::era::PROTOCOL_VERSION_KEY].as_str() else {
        return Vec::new();
    };
    let mut headers = vec![
        ("MCP-Protocol-Version", version.to_owned()),
        ("Mcp-Method", method.to_owned()),
    ];
    let named = match method {
        "tools/call" | "prompts/get" => params["name"].as_str(),
        "resources/read" => params["uri"].as_str(),
        _ => None,
    };
    if let Some(named) = named {
        headers.push(("Mcp-Name", wire::era::encode_header(named)));
    }
    headers
}

/// POSTs one message; what comes back (an answer, events) is delivered. A request whose POST
/// fails gets an error answer saying why.
async fn post(shared: &Shared, message: &str, id: Option<&Value>) {
    post_with(shared, message, id, &[]).await;
}

/// [`post`], with `headers` besides the session's.
async fn post_with(
    shared: &Shared,
    message: &str,
    id: Option<&Value>,
    headers: &[(&'static str, String)],
) {
    let mut request = shared
        .request(reqwest::Method::POST)
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .header(reqwest::header::CONTENT_TYPE, "application/json");
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = request.body(message.to_owned()).send().await;
    let response = match response {
        Ok(response) => response,
        Err(error) => {
            if let Some(id) = id {
                shared
                    .fail(
                        id,
                        format!("the server could not be reached ({})", plain(&error)),
                        None,
                    )
                    .await;
            }
            return;
        }
    };
    if let Some(session) = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
    {
        *crate::sync::lock(&shared.session) = Some(session.to_owned());
    }
    let status = response.status();
    if !status.is_success() {
        if let Some(id) = id {
            let body = response.text().await.unwrap_or_default();
            // The server's own answer (2026-07-28 answers its refusals with an HTTP status):
            // delivered as it said it.
            if let Received::Message(answer) = wire::parse(body.as_bytes())
                && answer.method.is_none()
                && answer.error.is_some()
                && answer.id.as_ref() == Some(id)
            {
                shared.deliver(Received::Message(answer)).await;
                return;
            }
            let quoted: String = body.chars().take(MAX_QUOTED).collect();
            let why = if quoted.trim().is_empty() {
                format!("the server answered HTTP {status}")
            } else {
                format!("the server answered HTTP {status}: {}", quoted.trim())
            };
            shared.fail(id, why, Some(status)).await;
        }
        return;
    }
    if status == reqwest::StatusCode::ACCEPTED || id.is_none() {
        return;
    }
    let is_stream = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|kind| kind.starts_with("text/event-stream"));
    if is_stream {
        read_events(shared, response).await;
    } else {
        match read_body(shared, response).await {
            Ok(body) => {
                // One message, or (an older server) a batch of them.
                let batch = body.trim_ascii_start().starts_with(b"[");
                match serde_json::from_slice::<Vec<wire::Raw>>(&body) {
                    Ok(messages) if batch => {
                        for message in messages {
                            shared.deliver(wire::parse(message.get().as_bytes())).await;
                        }
                    }
                    _ => {
                        shared.deliver(wire::parse(&body)).await;
                    }
                }
            }
            Err(why) => {
                if let Some(id) = id {
                    shared.fail(id, why, Some(status)).await;
                }
            }
        }
    }
}

/// A response's body, at most the message limit.
async fn read_body(shared: &Shared, response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|error| format!("the answer broke off ({})", plain(&error)))?;
        if body.len() + chunk.len() > shared.max_message_bytes {
            return Err(format!(
                "the answer is over the limit of {} bytes and was not read",
                grouped(shared.max_message_bytes)
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Delivers each event of a server-sent event stream (its `data`, one message), each event at
/// most the message limit: a longer one is skipped, its first bytes kept to answer it by id.
async fn read_events(shared: &Shared, response: reqwest::Response) {
    let limit = shared.max_message_bytes;
    let mut stream = response.bytes_stream();
    let mut line: Vec<u8> = Vec::new();
    let mut data: Vec<u8> = Vec::new();
    // The first bytes of an event over the limit, while the rest of it is skipped.
    let mut oversized: Option<Vec<u8>> = None;
    let mut skipping_line = false;
    while let Some(Ok(chunk)) = stream.next().await {
        for &byte in chunk.iter() {
            if byte != b'\n' {
                if skipping_line {
                    continue;
                }
                line.push(byte);
                if line.len() > limit + 8 {
                    let mut prefix = std::mem::take(&mut data);
                    prefix.extend_from_slice(line.strip_prefix(b"data:").unwrap_or(&line));
                    prefix.truncate(crate::mcp::wire::ID_PREFIX_BYTES);
                    oversized.get_or_insert(prefix);
                    line.clear();
                    skipping_line = true;
                }
                continue;
            }
            skipping_line = false;
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.is_empty() {
                // The end of an event.
                let received = match oversized.take() {
                    Some(prefix) => Received::Unreadable {
                        id: crate::mcp::wire::id_in_prefix(&prefix),
                        code: crate::mcp::wire::INVALID_REQUEST,
                        why: format!(
                            "the message is over the limit of {} bytes and was not read",
                            grouped(limit)
                        ),
                    },
                    None if data.is_empty() => continue,
                    None => wire::parse(&data),
                };
                data.clear();
                if !shared.deliver(received).await {
                    return;
                }
                continue;
            }
            if let Some(value) = line.strip_prefix(b"data:") {
                let value = value.strip_prefix(b" ").unwrap_or(value);
                if oversized.is_none() {
                    if !data.is_empty() {
                        data.push(b'\n');
                    }
                    data.extend_from_slice(value);
                    if data.len() > limit {
                        data.truncate(crate::mcp::wire::ID_PREFIX_BYTES);
                        oversized = Some(std::mem::take(&mut data));
                    }
                }
            }
            line.clear();
        }
    }
}

/// Listens on the server's own stream (a GET) for what it sends outside any request; a server
/// that offers none (405) is not asked again. A stream that ends is opened again.
async fn listen(shared: Arc<Shared>) {
    let mut delay = Duration::from_millis(500);
    loop {
        let response = shared
            .request(reqwest::Method::GET)
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .send()
            .await;
        match response {
            Ok(response) if response.status().is_success() => {
                read_events(&shared, response).await;
                delay = Duration::from_millis(500);
            }
            Ok(_) => return,
            Err(_) => {
                delay = (delay * 2).min(Duration::from_secs(30));
            }
        }
        if shared.to.is_closed() {
            return;
        }
        tokio::time::sleep(delay).await;
    }
}

/// An HTTP error in words, without the library's type names.
fn plain(error: &reqwest::Error) -> String {
    let mut text = if error.is_connect() {
        "the connection was refused or failed".to_owned()
    } else if error.is_timeout() {
        "it timed out".to_owned()
    } else {
        "the HTTP request failed".to_owned()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !cause_text.is_empty() && !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
