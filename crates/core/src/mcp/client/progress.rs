//! A server's progress notifications and log messages, routed to the calls waiting for them,
//! bounded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
#[allow(deprecated)]
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    ClientCapabilities, Implementation, InitializeRequestParams, JsonRpcMessage,
    JsonRpcNotification, ProgressNotificationParam, ProgressToken, ServerNotification,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;

use crate::tool::LogLevel;
use rmcp::service::RoleClient;
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

/// What a server reports while a call runs, as the call passes it on.
pub(super) enum Reported {
    /// A progress notification of the call: its message (or its figures in words), its
    /// progress and its total.
    Progress(String, f64, Option<f64>),
    /// A log message of the server while the call runs: its level, logger and data.
    Log(LogLevel, Option<String>, Value),
}

/// The most bytes of one log message's data passed on; a larger one becomes a string of its
/// start, saying so.
const MAX_LOG_BYTES: usize = 64 * 1024;

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
    // Progress and log messages never reach here: `Routed` passes them to their calls as they
    // are read.
    fn get_info(&self) -> InitializeRequestParams {
        InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("toolsmith", crate::VERSION),
        )
    }
}

/// A session's transport that passes progress and log messages to their calls as it reads them,
/// in order: one read before a call's answer reaches the call before its answer does (rmcp
/// handles a notification in a task of its own, which may run after the answer is delivered).
pub(super) struct Routed<T> {
    pub(super) inner: T,
    pub(super) progress: Progress,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Routed<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.inner.receive().await? {
                JsonRpcMessage::Notification(JsonRpcNotification {
                    notification: ServerNotification::ProgressNotification(progress),
                    ..
                }) => route_progress(&self.progress, progress.params),
                JsonRpcMessage::Notification(JsonRpcNotification {
                    notification: ServerNotification::LoggingMessageNotification(log),
                    ..
                }) => route_log(&self.progress, log.params),
                other => return Some(other),
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Passes a progress notification to the call of its token.
fn route_progress(progress: &Progress, params: ProgressNotificationParam) {
    let mut message = match (params.message, params.total) {
        (Some(message), _) => message,
        (None, Some(total)) => format!("{} of {total}", params.progress),
        (None, None) => format!("{}", params.progress),
    };
    if let Some((cut, _)) = message.char_indices().nth(MAX_PROGRESS_CHARS) {
        message.truncate(cut);
        message.push('…');
    }
    let mut routes = crate::sync::lock(progress);
    let Some(route) = routes.get_mut(&params.progress_token) else {
        return;
    };
    // Read in order, so a figure that does not increase is the server's own step back.
    if params.progress.partial_cmp(&route.last) != Some(std::cmp::Ordering::Greater) {
        return;
    }
    route.last = params.progress;
    // Full: the call is behind on its progress, and this message is dropped.
    let _ = route
        .sender
        .try_send(Reported::Progress(message, params.progress, params.total));
}

/// Passes a server's log message to every call running on the server (a log message names
/// no call). Logging is deprecated by SEP-2577 (rmcp marks it so), and servers of the protocol
/// versions before it still send log messages: they are passed on while they come.
#[allow(deprecated)]
fn route_log(progress: &Progress, params: LoggingMessageNotificationParam) {
    let level = crate::mcp::logging::log_level_of(params.level);
    let mut data = params.data;
    let text = data.to_string();
    if text.len() > MAX_LOG_BYTES {
        let mut end = MAX_LOG_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        data = Value::String(format!(
            "{}… [toolsmith: log message cut from {} bytes]",
            &text[..end],
            crate::figures::grouped(text.len())
        ));
    }
    let routes = crate::sync::lock(progress);
    for route in routes.values() {
        // Full: the call is behind on what it passes on, and this message is dropped.
        let _ = route
            .sender
            .try_send(Reported::Log(level, params.logger.clone(), data.clone()));
    }
}

/// Removes a call's progress route when the call ends.
pub(super) struct ProgressRoute {
    pub(super) progress: Progress,
    pub(super) token: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        crate::sync::lock(&self.progress).remove(&self.token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    /// A progress map with one running call, and what reaches that call.
    fn one_call() -> (Progress, mpsc::Receiver<Reported>) {
        let (sender, received) = mpsc::channel(PROGRESS_BACKLOG);
        let progress: Progress = Arc::default();
        progress
            .lock()
            .unwrap()
            .insert(ProgressToken(NumberOrString::Number(1)), Route::new(sender));
        (progress, received)
    }

    #[allow(deprecated)] // logging: see `route_log`
    fn log(data: Value) -> LoggingMessageNotificationParam {
        LoggingMessageNotificationParam::new(rmcp::model::LoggingLevel::Warning, data)
    }

    #[test]
    fn a_flood_of_log_messages_is_bounded_per_call_and_each_message_in_size() {
        let (progress, mut received) = one_call();
        // A message of 1 MB: cut to 64 KiB, saying so.
        route_log(&progress, log(Value::String("x".repeat(1_000_000))));
        let Ok(Reported::Log(level, _, Value::String(data))) = received.try_recv() else {
            panic!("the message reaches the call as a string");
        };
        assert_eq!(level, LogLevel::Warning);
        assert!(data.len() < MAX_LOG_BYTES + 100, "{}", data.len());
        assert!(data.ends_with("[toolsmith: log message cut from 1,000,002 bytes]"));
        // Ten thousand messages while the call is busy: the queue holds 64, the rest are
        // dropped, and nothing grows.
        for i in 0..10_000 {
            route_log(&progress, log(Value::from(i)));
        }
        let mut queued = 0;
        while received.try_recv().is_ok() {
            queued += 1;
        }
        assert_eq!(queued, PROGRESS_BACKLOG);
    }
}
