//! What a running tool can see and do: its budget, its page, progress, cancellation.

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::error::ToolError;
use super::page::Page;
use crate::artifacts::{ArtifactId, ArtifactStore};

/// Values the registry shares with every call, one per type: a workspace root, a client, a
/// connection pool. Set with [`RegistryBuilder::state`](crate::registry::RegistryBuilder::state), read with
/// [`ToolContext::state`].
#[derive(Clone, Default)]
pub struct State {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl State {
    /// An empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the value of type `T`.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if any.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.values.get(&TypeId::of::<T>())?.downcast_ref()
    }

    /// Whether the state holds what `need` asks for.
    pub fn satisfies(&self, need: &StateNeed) -> bool {
        self.values.contains_key(&need.type_id)
    }
}

/// `Sandbox` for `toolsmith_std::sandbox::Sandbox`: a type as its user writes it, not the
/// module path it is defined in (generic arguments shortened the same way).
fn short_type_name(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    let mut segment_start = 0;
    for (at, c) in full.char_indices() {
        if c == ':' {
            segment_start = at + 1;
        } else if matches!(c, '<' | '>' | ',' | ' ' | '&' | '(' | ')' | '[' | ']' | ';') {
            out.push_str(&full[segment_start..at]);
            out.push(c);
            segment_start = at + c.len_utf8();
        }
    }
    out.push_str(&full[segment_start..]);
    out
}

/// A value a tool needs in the registry's state (a sandbox, a connection), stated in its
/// [`ToolSpec`](crate::tool::ToolSpec) so that [`RegistryBuilder::build`](crate::registry::RegistryBuilder::build)
/// refuses a registry without it, in words, before the model's first call.
///
/// ```
/// use toolsmith::tool::StateNeed;
///
/// struct Database;
/// let need = StateNeed::of::<Database>(
///     "the database connection it queries",
///     "`.state(Database::connect(url)?)`",
/// );
/// assert_eq!(need.what(), "the database connection it queries");
/// ```
#[derive(Debug, Clone)]
pub struct StateNeed {
    type_id: TypeId,
    what: Cow<'static, str>,
    fix: Cow<'static, str>,
}

impl StateNeed {
    /// A need for the value of type `T`: `what` it is in words (``the workspace it works in``)
    /// and the `fix`, the builder call that adds it (`` `.state(Sandbox::new(root)?)` ``).
    pub fn of<T: Any + Send + Sync>(
        what: impl Into<Cow<'static, str>>,
        fix: impl Into<Cow<'static, str>>,
    ) -> Self {
        StateNeed {
            type_id: TypeId::of::<T>(),
            what: what.into(),
            fix: fix.into(),
        }
    }

    /// A need for the value of type `T`, described by the type's name (what the macros'
    /// `state = T` key states): "a `Database`", added with `` `.state(…)` `` holding one.
    pub fn of_type<T: Any + Send + Sync>() -> Self {
        let name = short_type_name(std::any::type_name::<T>());
        StateNeed {
            type_id: TypeId::of::<T>(),
            what: format!("a `{name}`").into(),
            fix: format!("`Registry::builder().state(…)` and a `{name}`").into(),
        }
    }

    /// What is needed, in words.
    pub fn what(&self) -> &str {
        &self.what
    }

    /// How to add it: the builder call.
    pub fn fix(&self) -> &str {
        &self.fix
    }
}

impl PartialEq for StateNeed {
    fn eq(&self, other: &Self) -> bool {
        self.type_id == other.type_id
    }
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("State")
            .field("values", &self.values.len())
            .finish()
    }
}

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
    cancel: Cancellation,
    state: Arc<State>,
    artifacts: Option<Arc<dyn ArtifactStore>>,
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
            cancel: Cancellation::new(CancellationToken::new()),
            state: Arc::default(),
            artifacts: None,
        }
    }

    /// Sets the shared state (what the registry's `state(…)` calls provided).
    #[must_use]
    pub fn with_state(mut self, state: Arc<State>) -> Self {
        self.state = state;
        self
    }

    /// Sets the artifact store a tool may spool its full output to.
    #[must_use]
    pub fn with_artifacts(mut self, artifacts: Option<Arc<dyn ArtifactStore>>) -> Self {
        self.artifacts = artifacts;
        self
    }

    /// The shared value of type `T`.
    ///
    /// # Errors
    ///
    /// A [`ToolError::Failed`] naming the type when the registry has none: a set-up mistake of
    /// the agent's author, reported to the model as a failure of the tool.
    pub fn state<T: Any + Send + Sync>(&self) -> Result<&T, ToolError> {
        self.state.get::<T>().ok_or_else(|| {
            ToolError::failed(format!(
                "the tool `{}` is not set up: the registry has no `{}` (add it with \
                 `Registry::builder().state(…)`)",
                self.tool,
                short_type_name(std::any::type_name::<T>())
            ))
        })
    }

    /// The registry's artifact store, when one is configured: a tool that streams a large
    /// output (a command's) can spool all of it there and keep only what fits in memory.
    pub fn artifacts(&self) -> Option<&Arc<dyn ArtifactStore>> {
        self.artifacts.as_ref()
    }

    /// Sets the page request (what a paginated tool's `offset` and `limit` asked for).
    #[must_use]
    pub fn with_page(mut self, page: Option<Page>) -> Self {
        self.page = page;
        self
    }

    /// Sets the allowance the call sees, once the registry has planned it.
    pub(crate) fn set_budget(&mut self, budget: usize) {
        self.budget = budget;
    }

    /// The context of one call of a registry's turn, made at once with everything the registry
    /// gives it (no default token or state made and dropped).
    pub(crate) fn for_call(
        call_id: &str,
        tool: Arc<str>,
        page: Option<Page>,
        events: broadcast::Sender<Event>,
        turn: CancellationToken,
        state: Arc<State>,
        artifacts: Option<Arc<dyn ArtifactStore>>,
    ) -> Self {
        ToolContext {
            call_id: call_id.into(),
            tool,
            budget: 0,
            page,
            events: Some(events),
            cancel: Cancellation::new(turn),
            state,
            artifacts,
        }
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
    pub fn allowance(&self) -> usize {
        self.budget
    }

    /// The page the call asked for, for tools whose spec has `paginate`; `None` otherwise.
    pub fn page(&self) -> Option<Page> {
        self.page
    }

    /// Sends a progress event. Progress never counts against the budget and never reaches
    /// the model; it goes to whoever [subscribed](crate::Registry::subscribe) to the registry.
    pub fn progress(&self, audience: Audience, message: impl Into<String>) {
        self.send_progress(audience, message.into(), None, None);
    }

    /// Sends a progress event with figures: how far the work is (`progress`, in the tool's own
    /// unit, increasing) and of how much (`total`, when known). An MCP server passes them on as
    /// they are; [`progress`](Self::progress) sends none.
    ///
    /// ```
    /// # use toolsmith::ToolContext;
    /// # use toolsmith::tool::Audience;
    /// # let cx = ToolContext::new("call_1", "index", 1_000);
    /// cx.progress_of(Audience::User, "indexed 50 of 100 files", 50.0, Some(100.0));
    /// ```
    pub fn progress_of(
        &self,
        audience: Audience,
        message: impl Into<String>,
        progress: f64,
        total: Option<f64>,
    ) {
        self.send_progress(audience, message.into(), Some(progress), total);
    }

    /// Sends a log message of the call to whoever subscribed ([`Event::Log`]): never into the
    /// result or the budget. `data` is any JSON (a string for a line of text); `logger` names
    /// what logged it. An MCP server (`McpServer`) sends it to its client as a
    /// `notifications/message` at or above the level the client set; the MCP client passes
    /// its server's log messages on this way.
    ///
    /// ```
    /// # use toolsmith::ToolContext;
    /// # use toolsmith::tool::LogLevel;
    /// # let cx = ToolContext::new("call_1", "index", 1_000);
    /// cx.log(LogLevel::Warning, Some("index"), serde_json::json!("3 files skipped"));
    /// ```
    pub fn log(&self, level: LogLevel, logger: Option<&str>, data: serde_json::Value) {
        if let Some(events) = &self.events {
            // No subscriber is not an error: logs are best-effort, as progress is.
            let _ = events.send(Event::Log {
                call_id: self.call_id.clone(),
                tool: self.tool.clone(),
                level,
                logger: logger.map(str::to_owned),
                data,
            });
        }
    }

    fn send_progress(
        &self,
        audience: Audience,
        message: String,
        progress: Option<f64>,
        total: Option<f64>,
    ) {
        if let Some(events) = &self.events {
            // No subscriber is not an error: progress is best-effort by design.
            let _ = events.send(Event::Progress {
                call_id: self.call_id.clone(),
                tool: self.tool.clone(),
                audience,
                message,
                progress,
                total,
            });
        }
    }

    /// Whether the call has been cancelled (its turn was cancelled, or it timed out).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.turn.is_cancelled()
            || self
                .cancel
                .call
                .get()
                .is_some_and(|call| call.is_cancelled())
    }

    /// Completes when the call is cancelled: `select!` on it around long work.
    pub async fn cancelled(&self) {
        self.cancellation_token().cancelled().await;
    }

    /// The call's cancellation token, to hand to work the tool spawns.
    pub fn cancellation_token(&self) -> &CancellationToken {
        self.cancel
            .call
            .get_or_init(|| self.cancel.turn.child_token())
    }
}

/// A call's cancellation: its turn's token and, made the first time anyone asks for it (most
/// calls never do), a child token of its own that a timeout cancels. Shared by the context's
/// clones, so a token handed out by one is the token every other cancels.
#[derive(Debug, Clone)]
struct Cancellation {
    turn: CancellationToken,
    call: Arc<std::sync::OnceLock<CancellationToken>>,
}

impl Cancellation {
    fn new(turn: CancellationToken) -> Self {
        Cancellation {
            turn,
            call: Arc::default(),
        }
    }
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

/// How severe a log message is: the levels of syslog (RFC 5424), as MCP names them, from the
/// least severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// A normal event.
    Info,
    /// A normal but significant event.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, from the least severe.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level as MCP writes it: `debug`, `info`, … `emergency`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level MCP writes as `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        LogLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == name)
    }
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
        /// How far the work is, when the tool said ([`ToolContext::progress_of`]).
        progress: Option<f64>,
        /// Of how much, when the tool said.
        total: Option<f64>,
    },
    /// A tool logged a message ([`ToolContext::log`]).
    Log {
        /// The call's id.
        call_id: Arc<str>,
        /// The tool's name.
        tool: Arc<str>,
        /// How severe it is.
        level: LogLevel,
        /// What logged it, when the tool said.
        logger: Option<String>,
        /// The message: any JSON, a string for a line of text.
        data: serde_json::Value,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_lose_their_module_paths() {
        assert_eq!(
            short_type_name("toolsmith_std::sandbox::Sandbox"),
            "Sandbox"
        );
        assert_eq!(
            short_type_name("std::sync::Arc<my::db::Pool<u8>>"),
            "Arc<Pool<u8>>"
        );
        assert_eq!(short_type_name("(a::B, &c::D)"), "(B, &D)");
        assert_eq!(short_type_name("u32"), "u32");
    }
}
