//! A server's progress notifications, routed to the calls waiting for them, bounded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, Implementation, InitializeRequestParams, ProgressNotificationParam,
    ProgressToken,
};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::mpsc;

pub(super) type Progress = Arc<Mutex<HashMap<ProgressToken, Route>>>;

/// Where one call's progress goes, and the last figure passed on: notifications are handled
/// concurrently, so one that arrives after a later one is dropped (progress only increases).
pub(super) struct Route {
    sender: mpsc::Sender<Reported>,
    last: f64,
}

impl Route {
    pub(super) fn new(sender: mpsc::Sender<Reported>) -> Self {
        Route {
            sender,
            last: f64::NEG_INFINITY,
        }
    }
}

/// A server's progress notification as a call passes it on: its message (or its figures in
/// words), its progress and its total.
pub(super) type Reported = (String, f64, Option<f64>);

/// Progress messages waiting for their call, at most: a server that floods notifications loses
/// the excess (progress is best-effort), it does not grow the client's memory.
pub(super) const PROGRESS_BACKLOG: usize = 64;
/// The longest progress message passed on, in chars; a longer one is cut with `…`.
const MAX_PROGRESS_CHARS: usize = 1_000;

/// The client side of a session: forwards progress to the calls waiting for it.
#[derive(Clone)]
pub(super) struct Handler {
    pub(super) progress: Progress,
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let mut message = match (params.message, params.total) {
            (Some(message), _) => message,
            (None, Some(total)) => format!("{} of {total}", params.progress),
            (None, None) => format!("{}", params.progress),
        };
        if let Some((cut, _)) = message.char_indices().nth(MAX_PROGRESS_CHARS) {
            message.truncate(cut);
            message.push('…');
        }
        let mut routes = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(route) = routes.get_mut(&params.progress_token) else {
            return;
        };
        if params.progress.partial_cmp(&route.last) != Some(std::cmp::Ordering::Greater) {
            return; // overtaken by a later notification
        }
        route.last = params.progress;
        // Sent under the lock, so that the order of the figures is the order in the channel.
        // Full: the call is behind on its progress, and this message is dropped.
        let _ = route
            .sender
            .try_send((message, params.progress, params.total));
    }

    fn get_info(&self) -> InitializeRequestParams {
        InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("toolsmith", crate::VERSION),
        )
    }
}

/// Removes a call's progress route when the call ends.
pub(super) struct ProgressRoute {
    pub(super) progress: Progress,
    pub(super) token: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.token);
    }
}
