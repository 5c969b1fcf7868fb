//! Servers shared by every session of a gateway ([`Proxy::share_upstreams`]): each started
//! once, initialized with the proxy's own `initialize`, its requests from every session sent
//! over one connection (ids are the connection's own, so they never meet), and what it sends
//! routed to the session it is for.
//!
//! What is no longer a session's own, and how each is handled:
//!
//! - **Progress** goes to the session whose request carries the token: tokens are rewritten on
//!   the way in (each session's own tokens may collide) and back on the way out.
//! - **`list_changed`** goes to every session (any of them may list).
//! - **Logs and resource updates** cannot be told apart by session, and could carry one
//!   client's data to another: they are not relayed. `logging/setLevel` is answered and not
//!   sent; subscriptions are not offered, and `resources/subscribe` is refused.
//! - **Roots, sampling and elicitation** are a client's: the server is initialized without
//!   them, and a request for one is refused, saying why.
//! - **The protocol version** is each session's: the server is initialized with the newest the
//!   gateway knows, and each client is answered with the version it asked for when the server
//!   speaks it, else the newest both speak, or refused when there is none ([`negotiate`]).
//! - **Tasks** are each session's: a task a session's call made is known to that session only;
//!   another session's `tasks/get`, `tasks/result` or `tasks/cancel` of its id is answered as
//!   for an unknown task, and `tasks/list` lists the session's own.
//!
//! [`Proxy::share_upstreams`]: super::super::Proxy::share_upstreams

use std::sync::{Arc, Mutex, OnceLock, Weak};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::super::peer::{Incoming, Peer};
use super::super::upstream::{self, Connecting, Live, LiveSlot, Upstream};
use super::progress::ProgressRoutes;
use super::{Session, value};
use crate::mcp::wire;
use crate::mcp::wire::METHOD_NOT_FOUND;
use crate::sync::lock;

/// The protocol versions this gateway speaks, oldest first.
const KNOWN_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The protocol version a shared server is asked for: the newest known. It answers with that,
/// or the newest it speaks; each client is then answered with its own version where the server
/// speaks it ([`negotiate`]).
const PROTOCOL_VERSION: &str = KNOWN_VERSIONS[KNOWN_VERSIONS.len() - 1];

/// The versions a server that answered `server` speaks: the known ones no newer than it.
pub(super) fn spoken(server: &str) -> Vec<&'static str> {
    KNOWN_VERSIONS
        .iter()
        .copied()
        .filter(|known| *known <= server)
        .collect()
}

/// The version a session of a shared server speaks, the client having asked for `asked` and
/// the server speaking `server` (what it answered the gateway's own `initialize`): the client's
/// own when the server speaks it (a known version no newer than the server's), else the newest
/// both speak; an error naming both and what the server speaks, when there is none.
pub(super) fn negotiate(asked: &str, server: &str) -> Result<String, String> {
    let spoken = spoken(server);
    if spoken.contains(&asked) {
        return Ok(asked.to_owned());
    }
    // Dates order the versions: the newest the server speaks that is no newer than the client's.
    match spoken.iter().rev().find(|known| **known <= asked) {
        Some(newest) => Ok((*newest).to_owned()),
        None => Err(format!(
            "unsupported protocol version `{asked}`: this gateway's shared servers speak {}",
            if spoken.is_empty() {
                format!("`{server}` only")
            } else {
                spoken.join(", ")
            }
        )),
    }
}

/// The servers every session of a proxy shares.
#[derive(Debug)]
pub(crate) struct Shared {
    slots: Vec<LiveSlot>,
    upstreams: Vec<Upstream>,
    /// The sessions that initialized, told when a server's lists change.
    sessions: Mutex<Vec<Weak<Session>>>,
    /// The progress tokens of every session's requests in flight.
    pub(super) progress: Arc<ProgressRoutes>,
    /// Whether each server was ever started: a start after the first is a restart.
    ever: Box<[std::sync::atomic::AtomicBool]>,
    /// Where restarts are counted, when the endpoint keeps metrics.
    metrics: OnceLock<crate::mcp::Metrics>,
    me: Weak<Shared>,
}

impl Shared {
    pub(crate) fn new(upstreams: &[Upstream]) -> Arc<Shared> {
        Arc::new_cyclic(|me| Shared {
            slots: upstreams
                .iter()
                .map(|_| tokio::sync::Mutex::new(None))
                .collect(),
            upstreams: upstreams.to_vec(),
            sessions: Mutex::default(),
            progress: Arc::default(),
            ever: upstreams.iter().map(|_| Default::default()).collect(),
            metrics: OnceLock::new(),
            me: me.clone(),
        })
    }

    /// Counts restarts into `metrics` from now on.
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    pub(crate) fn count_into(&self, metrics: crate::mcp::Metrics) {
        let _ = self.metrics.set(metrics);
    }

    /// Starts every server that is not up, so the first client does not wait for them; why a
    /// server could not be started is logged (each session tries it again).
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    pub(crate) async fn start_all(&self, connecting: Connecting) {
        let starting = (0..self.slots.len()).map(|index| self.live(index, connecting));
        for (index, started) in futures_util::future::join_all(starting)
            .await
            .into_iter()
            .enumerate()
        {
            if let Err(why) = started {
                tracing::warn!(server = %self.upstreams[index].name, "{why}");
            }
        }
    }

    /// Server `index`, started (again) when it is not up.
    pub(super) async fn live(
        &self,
        index: usize,
        connecting: Connecting,
    ) -> Result<Arc<Live>, String> {
        upstream::up_or_start(&self.slots[index], || async {
            let params = json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": { "name": "toolsmith-proxy", "version": crate::VERSION },
            });
            let shared = self.me.clone();
            let on_incoming =
                move |peer: Arc<Peer>, incoming: Incoming| -> BoxFuture<'static, ()> {
                    let shared = shared.clone();
                    Box::pin(async move {
                        if let Some(shared) = shared.upgrade() {
                            shared.on_upstream(index, peer, incoming).await;
                        }
                    })
                };
            let started = upstream::start(
                &self.upstreams[index],
                &params,
                connecting,
                None,
                on_incoming,
            )
            .await?;
            started.peer.notify("notifications/initialized", None).await;
            if self.ever[index].swap(true, std::sync::atomic::Ordering::SeqCst)
                && let Some(metrics) = self.metrics.get()
            {
                metrics.restart(&self.upstreams[index].name);
            }
            Ok(started)
        })
        .await
    }

    /// Server `index`, if it is up.
    pub(super) async fn current(&self, index: usize) -> Option<Arc<Live>> {
        self.slots[index].lock().await.clone()
    }

    /// Tells the shared servers' list changes to `session` from now on.
    pub(super) fn join(&self, session: Weak<Session>) {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|session| session.strong_count() > 0);
        sessions.push(session);
    }

    /// A request or notification of a shared server's.
    async fn on_upstream(&self, index: usize, peer: Arc<Peer>, incoming: Incoming) {
        match incoming {
            Incoming::Notification { method, params } => {
                let params = params.as_deref().map(value).unwrap_or(Value::Null);
                match method.as_str() {
                    "notifications/progress" => {
                        let Some((session, forwarded)) = self.progress.back(index, params) else {
                            return;
                        };
                        session
                            .client
                            .notify(&method, Some(wire::raw(&forwarded)))
                            .await;
                    }
                    "notifications/tools/list_changed"
                    | "notifications/prompts/list_changed"
                    | "notifications/resources/list_changed" => {
                        let sessions: Vec<Arc<Session>> = lock(&self.sessions)
                            .iter()
                            .filter_map(Weak::upgrade)
                            .collect();
                        for session in sessions {
                            if method == "notifications/tools/list_changed" {
                                lock(&session.routes).tools_listed = false;
                            }
                            let params = (!params.is_null()).then(|| wire::raw(&params));
                            session.client.notify(&method, params).await;
                        }
                    }
                    _ => tracing::debug!(
                        "a shared server's `{method}` is not relayed: it cannot be told which \
                         session it is for"
                    ),
                }
            }
            Incoming::Request { id, method, .. } => {
                let answer = if method == "ping" {
                    Ok(wire::raw(&json!({})))
                } else {
                    Err(wire::raw(&wire::error(
                        METHOD_NOT_FOUND,
                        format!(
                            "`{method}` is a client's to answer, and this gateway shares the \
                             server among its clients: it cannot ask one of them"
                        ),
                    )))
                };
                peer.answer(&id, answer).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::negotiate;

    #[test]
    fn each_client_gets_its_own_version_where_the_server_speaks_it() {
        assert_eq!(negotiate("2025-06-18", "2025-11-25").unwrap(), "2025-06-18");
        assert_eq!(negotiate("2025-03-26", "2025-06-18").unwrap(), "2025-03-26");
        // Newer than the server: the newest both speak.
        assert_eq!(negotiate("2025-11-25", "2025-06-18").unwrap(), "2025-06-18");
        assert_eq!(negotiate("2099-01-01", "2025-11-25").unwrap(), "2025-11-25");
        // Unknown but between two known: the newest known before it.
        assert_eq!(negotiate("2025-05-01", "2025-11-25").unwrap(), "2025-03-26");
        // Older than any: refused, saying what is spoken.
        let why = negotiate("2023-01-01", "2025-06-18").unwrap_err();
        assert!(
            why.contains("`2023-01-01`") && why.contains("2024-11-05, 2025-03-26, 2025-06-18"),
            "{why}"
        );
    }
}
