//! One end of a session, as the relay sees it: requests it sends and the answers they wait
//! for, and the requests and notifications that come from the other side.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::mcp::link::{Link, Sink, Source};
use crate::mcp::wire::{self, INTERNAL_ERROR, Raw, Received};

/// An answer: its result, or its error object, each as the peer wrote it.
pub(crate) type Outcome = Result<Raw, Raw>;

/// Which side the peer is: a client the relay serves, or a server it is a client of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The peer is a client: what it sends that cannot be read is answered with an error.
    Client,
    /// The peer is a server: an answer that cannot be read fails the request it names.
    Server,
}

/// A request or a notification from the peer, its `params` as they were written.
#[derive(Debug)]
pub(crate) enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Option<Raw>,
    },
    Notification {
        method: String,
        params: Option<Raw>,
    },
}

/// One end of a session.
#[derive(Debug)]
pub(crate) struct Peer {
    /// Who the peer is, for messages (`the MCP server `git``).
    pub(crate) label: String,
    out: Sink,
    pending: std::sync::Mutex<HashMap<String, oneshot::Sender<Outcome>>>,
    next_id: AtomicU64,
    /// Cancelled when the link ends.
    pub(crate) closed: CancellationToken,
    /// For a peer that speaks MCP 2026-07-28 (no handshake): the envelope every request sent
    /// to it carries in `params._meta`.
    envelope: std::sync::OnceLock<serde_json::Map<String, Value>>,
}

/// A request sent and its answer to come.
pub(crate) struct Pending {
    /// The id the request went with.
    pub(crate) id: Value,
    answer: oneshot::Receiver<Outcome>,
    peer: Arc<Peer>,
}

impl Pending {
    /// The answer; an error naming the peer when it ended first.
    pub(crate) async fn answer(self) -> Outcome {
        match self.answer.await {
            Ok(outcome) => outcome,
            Err(_) => Err(wire::raw(&wire::error(
                INTERNAL_ERROR,
                format!("{} ended before it answered", self.peer.label),
            ))),
        }
    }
}

fn key(id: &Value) -> String {
    id.to_string()
}

impl Peer {
    /// Starts dispatching what comes over `link`: answers go to the requests that wait for
    /// them; each request and notification is handed to `on_incoming` (with the peer, to answer
    /// on), whose future is awaited
    /// before the next message is read — so what the peer sent before an answer is handled
    /// before the request that waits for the answer goes on.
    pub(crate) fn start(
        label: impl Into<String>,
        link: Link,
        side: Side,
        on_incoming: impl Fn(Arc<Peer>, Incoming) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    ) -> Arc<Peer> {
        let (peer, incoming) = Peer::unstarted(label, link);
        peer.dispatch(incoming, side, on_incoming);
        peer
    }

    /// A peer that sends over `link` and reads nothing until [`dispatch`](Self::dispatch) is
    /// given what `link` brings: for a handler that needs the peer built first.
    pub(crate) fn unstarted(label: impl Into<String>, link: Link) -> (Arc<Peer>, Source) {
        let peer = Arc::new(Peer {
            label: label.into(),
            out: link.outgoing,
            pending: std::sync::Mutex::default(),
            next_id: AtomicU64::new(1),
            closed: CancellationToken::new(),
            envelope: std::sync::OnceLock::new(),
        });
        (peer, link.incoming)
    }

    /// Starts dispatching what comes from `incoming`, as [`start`](Self::start) does.
    pub(crate) fn dispatch(
        self: &Arc<Self>,
        incoming: Source,
        side: Side,
        on_incoming: impl Fn(Arc<Peer>, Incoming) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    ) {
        tokio::spawn(dispatch(Arc::clone(self), incoming, on_incoming, side));
    }

    /// Sends a request with an id of the relay's own.
    /// Makes every later request to the peer carry `envelope` in its `params._meta`: the peer
    /// speaks MCP 2026-07-28.
    pub(crate) fn speak_modern(&self, envelope: serde_json::Map<String, Value>) {
        let _ = self.envelope.set(envelope);
    }

    /// Whether the peer speaks MCP 2026-07-28.
    pub(crate) fn is_modern(&self) -> bool {
        self.envelope.get().is_some()
    }

    pub(crate) async fn request(self: &Arc<Self>, method: &str, params: Option<Raw>) -> Pending {
        let params = match self.envelope.get() {
            Some(envelope) => Some(with_envelope(params, envelope)),
            None => params,
        };
        let id = Value::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.lock().insert(key(&id), tx);
        if self
            .out
            .send(wire::request(&id, method, params))
            .await
            .is_err()
        {
            // The link is gone: the answer's sender is dropped, so `answer` says so.
            self.take(&id);
        }
        Pending {
            id,
            answer: rx,
            peer: Arc::clone(self),
        }
    }

    /// Stops waiting for the answer to request `id`.
    pub(crate) fn forget(&self, id: &Value) {
        self.take(id);
    }

    /// Sends a notification; a peer that is gone is not an error. A peer of 2026-07-28 is not
    /// told of a handshake it does not have (`notifications/initialized`).
    pub(crate) async fn notify(&self, method: &str, params: Option<Raw>) {
        if self.is_modern() && method == "notifications/initialized" {
            return;
        }
        let _ = self.out.send(wire::notification(method, params)).await;
    }

    /// Answers a request of the peer's.
    pub(crate) async fn answer(&self, id: &Value, outcome: Outcome) {
        let _ = self.out.send(wire::answer(id, outcome)).await;
    }

    /// Whether nothing more can be sent to the peer (it may still have sent its last).
    pub(crate) fn is_gone(&self) -> bool {
        self.out.is_closed()
    }

    /// Resolves when nothing more can be sent to the peer, as far as the link can tell.
    pub(crate) async fn gone(&self) {
        self.out.closed().await;
    }

    /// Whether the link ended.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.is_cancelled() || self.out.is_closed()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Outcome>>> {
        crate::sync::lock(&self.pending)
    }

    fn take(&self, id: &Value) -> Option<oneshot::Sender<Outcome>> {
        self.lock().remove(&key(id))
    }
}

async fn dispatch(
    peer: Arc<Peer>,
    mut from: Source,
    on_incoming: impl Fn(Arc<Peer>, Incoming) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    side: Side,
) {
    let invalid = |why: &str| wire::raw(&wire::error(crate::mcp::wire::INVALID_REQUEST, why));
    while let Some(received) = from.recv().await {
        let message = match received {
            Received::Message(message) => message,
            Received::Unreadable { id, code, why } => {
                match side {
                    Side::Client => {
                        peer.answer(&id, Err(wire::raw(&wire::error(code, why))))
                            .await
                    }
                    Side::Server => {
                        if let Some(waiting) = peer.take(&id) {
                            let why =
                                format!("{} sent an answer that cannot be read: {why}", peer.label);
                            let _ = waiting.send(Err(wire::raw(&wire::error(code, why))));
                        }
                    }
                }
                continue;
            }
        };
        let incoming = match (message.method, message.id) {
            (Some(method), Some(id)) if id.is_string() || id.is_number() => Incoming::Request {
                id,
                method,
                params: message.params,
            },
            (Some(method), None) => Incoming::Notification {
                method,
                params: message.params,
            },
            (None, Some(id)) if message.result.is_some() || message.error.is_some() => {
                let outcome = match (message.result, message.error) {
                    (_, Some(error)) => Err(error),
                    (Some(result), None) => Ok(result),
                    (None, None) => continue,
                };
                if let Some(waiting) = peer.take(&id) {
                    let _ = waiting.send(outcome);
                }
                continue;
            }
            (_, id) => {
                if side == Side::Client {
                    let why = "invalid request: not a JSON-RPC request, notification or answer";
                    peer.answer(&id.unwrap_or(Value::Null), Err(invalid(why)))
                        .await;
                }
                continue;
            }
        };
        on_incoming(Arc::clone(&peer), incoming).await;
    }
    peer.closed.cancel();
    // Every request still waiting learns the peer ended (its sender dropped).
    peer.lock().clear();
}

/// `params` with `envelope`'s keys in its `_meta` (the request's own `_meta` keys kept).
fn with_envelope(params: Option<Raw>, envelope: &serde_json::Map<String, Value>) -> Raw {
    let mut params = params
        .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    if let Some(params) = params.as_object_mut() {
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            // What the request says for itself (its client's capabilities) stands.
            for (key, value) in envelope {
                meta.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
    }
    wire::raw(&params)
}
