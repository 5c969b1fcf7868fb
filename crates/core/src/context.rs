//! What a running tool can see and do: its budget, its page, progress, cancellation.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::artifacts::ArtifactId;

/// The context of one tool call.
///
/// The registry builds one per call. To run a tool directly (in a unit test, say), build one
/// with [`ToolContext::new`].
#[derive(Debug, Clone)]
pub struct ToolContext {
    call_id: Arc<str>,
    tool: Arc<str>,
    budget: usize,
    page: Option<Page>,
    events: Option<broadcast::Sender<Event>>,
    cancel: CancellationToken,
}

impl ToolContext {
    /// A context for calling a tool outside a registry: no events are sent anywhere, and the
    /// call is never cancelled unless you cancel [`cancellation_token`](Self::cancellation_token).
    pub fn new(call_id: impl Into<Arc<str>>, tool: impl Into<Arc<str>>, budget: usize) -> Self {
        ToolContext {
            call_id: call_id.into(),
            tool: tool.into(),
            budget,
            page: None,
            events: None,
            cancel: CancellationToken::new(),
        }
    }

    /// Sets the page request (what a paginated tool's `offset` and `limit` asked for).
    #[must_use]
    pub fn with_page(mut self, page: Option<Page>) -> Self {
        self.page = page;
        self
    }

    pub(crate) fn with_events(mut self, events: broadcast::Sender<Event>) -> Self {
        self.events = Some(events);
        self
    }

    pub(crate) fn with_cancellation(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    pub(crate) fn events_sender(&self) -> Option<&broadcast::Sender<Event>> {
        self.events.as_ref()
    }

    /// The id of this call (`tool_use_id`).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// This call's allowance, in chars: the most the model will see of the output.
    ///
    /// Output over it is post-trimmed by the registry; a tool that knows its structure may
    /// pre-trim to it at a meaningful boundary instead (a whole line, a whole match).
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The page the call asked for, for tools whose spec has `paginate`; `None` otherwise.
    pub fn page(&self) -> Option<Page> {
        self.page
    }

    /// Sends a progress event. Progress never counts against the budget and never reaches
    /// the model; it goes to whoever [subscribed](crate::Registry::subscribe) to the registry.
    pub fn progress(&self, audience: Audience, message: impl Into<String>) {
        if let Some(events) = &self.events {
            // No subscriber is not an error: progress is best-effort by design.
            let _ = events.send(Event::Progress {
                call_id: self.call_id.clone(),
                tool: self.tool.clone(),
                audience,
                message: message.into(),
            });
        }
    }

    /// Whether the call has been cancelled (its turn was cancelled, or it timed out).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Completes when the call is cancelled: `select!` on it around long work.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await;
    }

    /// The call's cancellation token, to hand to work the tool spawns.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.cancel
    }
}

/// A page request: the lines `offset..offset + limit` (0-based), or all from `offset` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Page {
    /// The first line to return, counting from 0.
    pub offset: usize,
    /// How many lines to return; `None` means as many as fit the budget.
    pub limit: Option<usize>,
}

/// Who a progress event is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Audience {
    /// Shown to the person watching the agent (a spinner line, a status chip).
    User,
    /// For logs and traces only.
    Log,
}

/// What the registry reports while it works. Subscribe with
/// [`Registry::subscribe`](crate::Registry::subscribe).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A call started running.
    CallStarted {
        /// The call's id.
        call_id: Arc<str>,
        /// The tool's name.
        tool: Arc<str>,
        /// The allowance the tool sees as its budget.
        allowance: usize,
    },
    /// A tool reported progress.
    Progress {
        /// The call's id.
        call_id: Arc<str>,
        /// The tool's name.
        tool: Arc<str>,
        /// Who the message is for.
        audience: Audience,
        /// The message.
        message: String,
    },
    /// Something the user should know about a call: a cap tripped, an artifact not stored.
    Warning {
        /// The call's id.
        call_id: Arc<str>,
        /// The tool's name.
        tool: Arc<str>,
        /// What happened.
        message: String,
    },
    /// A call's result is final.
    CallFinished(CallSummary),
}

/// The figures of one finished call, as [`Event::CallFinished`] reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallSummary {
    /// The call's id.
    pub call_id: Arc<str>,
    /// The tool's name.
    pub tool: Arc<str>,
    /// How long the tool ran.
    pub duration: Duration,
    /// The final allowance, in chars.
    pub allowance: usize,
    /// Chars of the output before trimming.
    pub original_chars: usize,
    /// Whether the output was trimmed.
    pub trimmed: bool,
    /// Where the full output is, when it was stored.
    pub artifact: Option<ArtifactId>,
    /// Whether the result is an error.
    pub is_error: bool,
}
