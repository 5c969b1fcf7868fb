//! Progress tokens as servers see them. Each request's token is rewritten on its way to its
//! server and back on the way out, so a server's progress reaches the call it is for, only
//! from the server that call went to: a server cannot send progress for another server's
//! calls (or another session's, when servers are shared) by naming their tokens.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;

use super::{Session, key};
use crate::sync::lock;

/// The routes of the progress tokens of requests in flight.
#[derive(Debug, Default)]
pub(crate) struct ProgressRoutes {
    /// A token as a server saw it → the route back.
    routes: Mutex<HashMap<String, Back>>,
    next: AtomicU64,
    /// Whether a server's progress for no call of its own was logged (it is logged once).
    told: AtomicBool,
}

/// Where a server's progress goes back to.
#[derive(Debug)]
struct Back {
    /// The server the request went to: only its progress goes back.
    index: usize,
    session: Weak<Session>,
    /// The token the client sent.
    token: Value,
}

/// A route of a request's progress token; dropped when its request is answered.
#[derive(Debug)]
pub(crate) struct ProgressRoute {
    routes: Arc<ProgressRoutes>,
    key: String,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        lock(&self.routes.routes).remove(&self.key);
    }
}

impl ProgressRoutes {
    /// Rewrites the progress token of a request of `session`'s to server `index`, if it has
    /// one, so the server's progress comes back to it alone.
    pub(crate) fn route(
        self: &Arc<Self>,
        index: usize,
        session: Weak<Session>,
        params: &mut Value,
    ) -> Option<ProgressRoute> {
        let token = params.get_mut("_meta")?.get_mut("progressToken")?;
        let serial = self.next.fetch_add(1, Ordering::Relaxed);
        let routed = Value::String(format!("toolsmith-{serial}"));
        let original = std::mem::replace(token, routed.clone());
        let route_key = key(&routed);
        lock(&self.routes).insert(
            route_key.clone(),
            Back {
                index,
                session,
                token: original,
            },
        );
        Some(ProgressRoute {
            routes: self.clone(),
            key: route_key,
        })
    }

    /// Server `index`'s progress notification, with the client's token back, and the session
    /// it is for; `None` (and a log line, once) for a token of no request of that server's.
    pub(crate) fn back(&self, index: usize, params: Value) -> Option<(Arc<Session>, Value)> {
        let found = params.get("progressToken").and_then(|token| {
            let routes = lock(&self.routes);
            let back = routes.get(&key(token))?;
            (back.index == index).then(|| (back.session.clone(), back.token.clone()))
        });
        let Some((session, token)) = found else {
            if !self.told.swap(true, Ordering::Relaxed) {
                let token = params.get("progressToken").cloned().unwrap_or_default();
                tracing::warn!(
                    "a server sent progress for no request of its own (token {}); it is dropped, \
                     and so is any more of the kind, unlogged",
                    token
                );
            }
            return None;
        };
        let mut forwarded = params;
        forwarded["progressToken"] = token;
        Some((session.upgrade()?, forwarded))
    }
}
