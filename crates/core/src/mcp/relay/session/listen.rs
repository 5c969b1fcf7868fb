//! `subscriptions/listen` (2026-07-28): a client of the version gets a server's change
//! notifications only on a listen request of its own, each tagged with that request's id, and
//! only the kinds it asked for. A server of the handshake era announces its changes to the
//! session; the proxy delivers each to the listens that asked for it, subscribing at the server
//! to the resources a listen names.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::super::peer::Outcome;
use super::{Session, key, value};
use crate::mcp::wire::era::SUBSCRIPTION_ID_KEY;
use crate::mcp::wire::{self, Raw};
use crate::sync::lock;

/// What one open listen asked for.
#[derive(Debug)]
pub(super) struct Listen {
    /// The listen request's id, as its client sent it.
    id: Value,
    tools: bool,
    prompts: bool,
    resources: bool,
    /// The resources whose updates it gets.
    uris: HashSet<String>,
}

impl Listen {
    /// Whether the listen asked for a notification of `method` with `params`.
    fn wants(&self, method: &str, params: &Value) -> bool {
        match method {
            "notifications/tools/list_changed" => self.tools,
            "notifications/prompts/list_changed" => self.prompts,
            "notifications/resources/list_changed" => self.resources,
            "notifications/resources/updated" => params["uri"]
                .as_str()
                .is_some_and(|uri| self.uris.contains(uri)),
            _ => false,
        }
    }
}

/// Whether a notification of `method` is one a 2026-07-28 client gets only on a listen.
pub(super) fn is_listened(method: &str) -> bool {
    matches!(
        method,
        "notifications/tools/list_changed"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/resources/updated"
    )
}

/// Ends a listen's delivery when its request ends (answered, cancelled or dropped).
struct Registered {
    session: Arc<Session>,
    key: String,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let listen = lock(&self.session.listens).remove(&self.key);
        let Some(listen) = listen.filter(|listen| !listen.uris.is_empty()) else {
            return;
        };
        // The server stops sending updates no listen asks for.
        let session = Arc::clone(&self.session);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                for uri in listen.uris {
                    session.unsubscribe_unless_listened(&uri).await;
                }
            });
        }
    }
}

impl Session {
    /// Serves a `subscriptions/listen` request `id`: acknowledges the kinds it will deliver,
    /// then delivers them, tagged, until the request is cancelled or the session ends.
    pub(super) async fn listen(&self, id: &Value, params: Option<Value>) -> Outcome {
        let asked = params.unwrap_or_default()["notifications"].clone();
        let flag = |name: &str| asked[name] == Value::Bool(true);
        let mut listen = Listen {
            id: id.clone(),
            tools: flag("toolsListChanged"),
            prompts: flag("promptsListChanged"),
            resources: flag("resourcesListChanged"),
            uris: HashSet::new(),
        };
        // A resource's updates come once the server is subscribed to it; shared servers
        // cannot tell one client's subscriptions from another's.
        if self.settings.shared.is_none() {
            for uri in asked["resourceSubscriptions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if self.subscribe(uri).await {
                    listen.uris.insert(uri.to_owned());
                }
            }
        }
        let mut honored = serde_json::Map::new();
        for (name, honors) in [
            ("toolsListChanged", listen.tools),
            ("promptsListChanged", listen.prompts),
            ("resourcesListChanged", listen.resources),
        ] {
            if honors {
                honored.insert(name.to_owned(), Value::Bool(true));
            }
        }
        if !listen.uris.is_empty() {
            let mut uris: Vec<&String> = listen.uris.iter().collect();
            uris.sort();
            honored.insert("resourceSubscriptions".to_owned(), json!(uris));
        }
        let acknowledged = json!({
            "notifications": honored,
            "_meta": { SUBSCRIPTION_ID_KEY: id },
        });
        // The acknowledgement is the listen's first frame; its events follow it.
        self.client
            .notify(
                "notifications/subscriptions/acknowledged",
                Some(wire::raw(&acknowledged)),
            )
            .await;
        let _registered = Registered {
            session: self.arc(),
            key: key(id),
        };
        lock(&self.listens).insert(key(id), listen);
        if lock(&self.working).is_none() {
            // The client's input ended meanwhile: the stream closes, gracefully.
            return Ok(wire::raw(&json!({ "_meta": { SUBSCRIPTION_ID_KEY: id } })));
        }
        // The stream is the answer: it ends when the client cancels it or the session ends.
        std::future::pending::<()>().await;
        unreachable!("a listen ends only by being dropped")
    }

    /// Delivers a server's change notification to each listen that asked for it, tagged with
    /// the listen's id; none goes untagged.
    pub(super) async fn deliver(&self, method: &str, params: Option<Raw>) {
        let params = params.as_deref().map(value).unwrap_or_else(|| json!({}));
        let ids: Vec<Value> = lock(&self.listens)
            .values()
            .filter(|listen| listen.wants(method, &params))
            .map(|listen| listen.id.clone())
            .collect();
        for id in ids {
            let mut tagged = params.clone();
            if !tagged["_meta"].is_object() {
                tagged["_meta"] = json!({});
            }
            tagged["_meta"][SUBSCRIPTION_ID_KEY] = id;
            self.client.notify(method, Some(wire::raw(&tagged))).await;
        }
    }

    /// Subscribes the server of `uri` to its updates (once, however many listens name it);
    /// whether it is.
    async fn subscribe(&self, uri: &str) -> bool {
        let listened = lock(&self.listens)
            .values()
            .any(|listen| listen.uris.contains(uri));
        if listened {
            return true;
        }
        let Ok(index) = self.resource_route(uri).await else {
            return false;
        };
        let sent = Arc::new(Mutex::new(None));
        let params = json!({ "uri": uri });
        self.forward(index, "resources/subscribe", Some(params), &sent)
            .await
            .is_ok()
    }

    /// Unsubscribes the server of `uri` when no listen names it any more.
    async fn unsubscribe_unless_listened(&self, uri: &str) {
        let listened = lock(&self.listens)
            .values()
            .any(|listen| listen.uris.contains(uri));
        if listened {
            return;
        }
        if let Ok(index) = self.resource_route(uri).await {
            let sent = Arc::new(Mutex::new(None));
            let params = json!({ "uri": uri });
            let _ = self
                .forward(index, "resources/unsubscribe", Some(params), &sent)
                .await;
        }
    }
}
