//! The servers a proxy relays to: where each is, how it is started and initialized with the
//! client's own `initialize`, and started again after it died.

use crate::mcp::outgoing::Copies;
pub(crate) use crate::mcp::target::Target;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::peer::{Incoming, Peer, Side};
use crate::figures::DisplayDuration;
use crate::mcp::child::{self, Process};
use crate::mcp::client::{ConfigError, McpClientError, ServerConfig, expand_config};
use crate::mcp::link::{self, Link};
use crate::mcp::wire;
use crate::tool::OverCap;

/// When a server's tool (or prompt) names get the server's name in front
/// (`git__status`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Prefix {
    /// Only names two servers share, and names the proxy keeps for itself (`read_artifact`).
    #[default]
    OnCollision,
    /// Every name of the server.
    Always,
    /// None of the server's names: a name it shares with another server (or with the proxy's
    /// own tools) is an error, naming both, and the client's `initialize` is refused.
    Never,
}

impl Prefix {
    /// The mode a configuration file names: `always`, `on-collision` or `never`.
    pub(crate) fn from_setting(setting: &str) -> Option<Prefix> {
        match setting {
            "always" => Some(Prefix::Always),
            "on-collision" => Some(Prefix::OnCollision),
            "never" => Some(Prefix::Never),
            _ => None,
        }
    }
}

/// One server a [`Proxy`](super::Proxy) relays to: a command it starts and speaks to on stdio,
/// or a streamable HTTP endpoint.
///
/// ```
/// use toolsmith::mcp::{Prefix, Upstream};
///
/// let git = Upstream::command("git", "uvx").arg("mcp-server-git").prefix(Prefix::Always);
/// assert_eq!(git.name(), "git");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Upstream {
    pub(crate) name: String,
    pub(crate) target: Target,
    pub(crate) prefix: Prefix,
    /// Globs of the tool names served (empty: every tool).
    pub(crate) allow: Vec<String>,
    /// Globs of the tool names hidden.
    pub(crate) deny: Vec<String>,
    /// What a result over the cap becomes.
    pub(crate) over_cap: OverCap,
    /// Which copy of a structured result is sent.
    pub(crate) send: Copies,
}

impl Upstream {
    /// A server started as `program`, spoken to on its stdin and stdout; its stderr is this
    /// process's.
    pub fn command(name: impl Into<String>, program: impl Into<String>) -> Self {
        Upstream {
            name: name.into(),
            target: Target::command(program),
            prefix: Prefix::default(),
            allow: Vec::new(),
            deny: Vec::new(),
            over_cap: OverCap::Cut,
            send: Copies::Auto,
        }
    }

    /// A server at a streamable HTTP endpoint (`http://127.0.0.1:8000/mcp`).
    #[cfg(feature = "mcp-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
    pub fn url(name: impl Into<String>, url: impl Into<String>) -> Self {
        Upstream {
            name: name.into(),
            target: Target::url(url),
            prefix: Prefix::default(),
            allow: Vec::new(),
            deny: Vec::new(),
            over_cap: OverCap::Cut,
            send: Copies::Auto,
        }
    }

    /// A server as a configuration file describes it
    /// ([`parse_servers_config`](crate::mcp::parse_servers_config)), with `${VAR}` and
    /// `${VAR:-default}` expanded from this process's environment.
    ///
    /// # Errors
    ///
    /// [`McpClientError::Config`] for a variable that is not set and has no default, a server
    /// with a `url` when the `mcp-http` feature is off, or one with neither `command` nor `url`.
    pub fn from_config(
        name: impl Into<String>,
        config: &ServerConfig,
    ) -> Result<Self, McpClientError> {
        let name = name.into();
        let config = expand_config(&name, config)?;
        let target = config.target(&name)?;
        let prefix = match config.prefix.as_deref() {
            None => Prefix::default(),
            Some(setting) => Prefix::from_setting(setting).ok_or_else(|| {
                McpClientError::Config(ConfigError::Prefix {
                    server: name.clone(),
                    given: setting.to_owned(),
                })
            })?,
        };
        let over_cap = match config.over_cap.as_deref() {
            None => OverCap::Cut,
            Some(setting) => OverCap::from_setting(setting).ok_or_else(|| {
                McpClientError::Config(ConfigError::OverCap {
                    server: name.clone(),
                    given: setting.to_owned(),
                })
            })?,
        };
        let send = match config.send.as_deref() {
            None => Copies::Auto,
            Some(setting) => Copies::from_setting(setting).ok_or_else(|| {
                McpClientError::Config(ConfigError::Send {
                    server: name.clone(),
                    given: setting.to_owned(),
                })
            })?,
        };
        for pattern in config.tools.allow.iter().chain(&config.tools.deny) {
            if let Err(why) = super::filter::glob(pattern) {
                return Err(McpClientError::Config(ConfigError::ToolPattern {
                    server: name,
                    pattern: pattern.clone(),
                    why,
                }));
            }
        }
        Ok(Upstream {
            name,
            target,
            prefix,
            allow: config.tools.allow,
            deny: config.tools.deny,
            over_cap,
            send,
        })
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Adds an argument to the server's command (ignored for a URL).
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        if let Target::Command { args, .. } = &mut self.target {
            args.push(arg.into());
        }
        self
    }

    /// Adds arguments to the server's command (ignored for a URL).
    pub fn args(mut self, more: impl IntoIterator<Item = impl Into<String>>) -> Self {
        if let Target::Command { args, .. } = &mut self.target {
            args.extend(more.into_iter().map(Into::into));
        }
        self
    }

    /// Sets a variable of the server's environment (ignored for a URL).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Command { env, .. } = &mut self.target {
            env.insert(key.into(), value.into());
        }
        self
    }

    /// Sends a header with every request to the server's URL (ignored for a command):
    /// `Authorization: Bearer …`.
    pub fn header(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Url { headers, .. } = &mut self.target {
            headers.insert(key.into(), value.into());
        }
        self
    }

    /// When the server's names get its name in front: on a collision (the default), always,
    /// or never (a collision is then an error).
    pub fn prefix(mut self, prefix: Prefix) -> Self {
        self.prefix = prefix;
        self
    }

    /// What a result of this server's over the proxy's cap becomes: cut (the default), or an
    /// error result naming its size, the cap and the artifact holding it whole, for a client
    /// that must never act on part of a result. An error the server answered is cut as ever.
    pub fn over_cap(mut self, over_cap: OverCap) -> Self {
        self.over_cap = over_cap;
        self
    }

    /// Which copy of a structured result is sent ([`Copies`]): both (the default), the text
    /// only, or the structure only, so the model does not read the same data twice.
    pub fn send(mut self, send: Copies) -> Self {
        self.send = send;
        self
    }

    /// Serves only the server's tools whose names match one of `patterns`: globs over the
    /// server's own names (`git_*`, `{read,list}_*`). Without it, every tool is served. A tool
    /// not served is not listed and cannot be called. A pattern that is not a glob is an error
    /// when the proxy starts ([`ConfigError::ToolPattern`](crate::mcp::ConfigError::ToolPattern) in
    /// [`ProxyError::Config`](super::ProxyError::Config)).
    ///
    /// ```
    /// use toolsmith::mcp::Upstream;
    ///
    /// let git = Upstream::command("git", "uvx")
    ///     .arg("mcp-server-git")
    ///     .allow_tools(["git_*"])
    ///     .deny_tools(["git_push", "git_reset*"]);
    /// ```
    pub fn allow_tools(mut self, patterns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allow.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Hides the server's tools whose names match one of `patterns` (globs, as
    /// [`allow_tools`](Self::allow_tools)), even those an allow pattern serves.
    pub fn deny_tools(mut self, patterns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.deny.extend(patterns.into_iter().map(Into::into));
        self
    }
}

/// A live session with a server: its peer, what it answered to `initialize`, and its process.
#[derive(Debug)]
pub(crate) struct Live {
    pub(crate) peer: Arc<Peer>,
    /// The server's `initialize` result, as it sent it.
    pub(crate) initialized: Value,
    _process: Option<Process>,
}

/// How a server is connected to: how long its start may take, the largest message it may send.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Connecting {
    pub(crate) init_timeout: Duration,
    pub(crate) max_message_bytes: usize,
}

/// Where a live server is kept: a session's own, or the one every session shares.
pub(crate) type LiveSlot = tokio::sync::Mutex<Option<Arc<Live>>>;

/// The server in `slot` when it is up; when it is not (never started, or it died), the one
/// `start` starts, kept there. Those asking at once wait for the one start.
pub(crate) async fn up_or_start<F>(
    slot: &LiveSlot,
    start: impl FnOnce() -> F,
) -> Result<Arc<Live>, String>
where
    F: std::future::Future<Output = Result<Live, String>>,
{
    let mut live = slot.lock().await;
    if let Some(up) = live.as_ref()
        && !up.peer.is_closed()
    {
        return Ok(Arc::clone(up));
    }
    *live = None;
    let started = Arc::new(start().await?);
    *live = Some(Arc::clone(&started));
    Ok(started)
}

/// A server process started, not yet spoken to: its process, its stdout and its stdin.
type Spawned = (
    Process,
    tokio::process::ChildStdout,
    tokio::process::ChildStdin,
);

/// Server processes started ahead of the sessions that will speak to them: a session takes a
/// waiting one (its runtime already loaded) and another is started in its place.
#[derive(Debug)]
pub(crate) struct Warm {
    size: usize,
    waiting:
        std::sync::Mutex<std::collections::HashMap<String, std::collections::VecDeque<Spawned>>>,
}

impl Warm {
    /// A pool keeping `size` processes of each command server waiting.
    pub(crate) fn new(size: usize) -> Warm {
        Warm {
            size,
            waiting: std::sync::Mutex::default(),
        }
    }

    /// Starts processes of `upstream` (a command) until `size` wait; a start that fails is
    /// logged, and the sessions start their own.
    pub(crate) fn fill(&self, upstream: &Upstream) {
        let Target::Command {
            program,
            args,
            env,
            cwd,
        } = &upstream.target
        else {
            return;
        };
        let mut waiting = crate::sync::lock(&self.waiting);
        let queue = waiting.entry(upstream.name.clone()).or_default();
        queue.retain_mut(|(process, _, _)| !process.has_exited());
        while queue.len() < self.size {
            match child::spawn(program, args, env, cwd.as_deref()) {
                Ok(spawned) => queue.push_back(spawned),
                Err(error) => {
                    tracing::warn!(server = %upstream.name, "cannot start `{program}` ahead of a session: {error}");
                    return;
                }
            }
        }
    }

    /// A waiting process of `upstream` that is still running, if there is one.
    fn take(&self, upstream: &Upstream) -> Option<Spawned> {
        let mut waiting = crate::sync::lock(&self.waiting);
        let queue = waiting.get_mut(&upstream.name)?;
        while let Some(mut spawned) = queue.pop_front() {
            if !spawned.0.has_exited() {
                return Some(spawned);
            }
        }
        None
    }
}

/// Starts `upstream` (a process from `warm` when one waits there) and initializes it with the
/// client's `initialize` params; what it sends (requests, notifications) goes to
/// `on_incoming`, in order.
pub(crate) async fn start(
    upstream: &Upstream,
    params: &Value,
    connecting: Connecting,
    warm: Option<&Warm>,
    on_incoming: impl Fn(Arc<Peer>, Incoming) -> BoxFuture<'static, ()> + Send + Sync + 'static,
) -> Result<Live, String> {
    let waiting = warm.and_then(|warm| warm.take(upstream));
    let started = start_with(upstream, params, connecting, waiting, on_incoming).await;
    // The pool is filled again once no server is starting: a refill during a burst of sessions
    // would take the cores the burst's own starts need (measured: 50 sessions at once on 2
    // cores opened slower with a pool refilled at each take than with none).
    if let Some(warm) = warm
        && starting().available_permits() == starting_permits()
    {
        warm.fill(upstream);
    }
    started
}

/// How long a server has to answer the `server/discover` probe before it is taken for a server
/// of the handshake era that leaves an unknown request unanswered (the init timeout, when
/// shorter): the official Rust SDK's wait.
const PROBE_WAIT: Duration = Duration::from_secs(10);

/// [`start`] with the waiting process taken, if any. The server is probed with
/// `server/discover` first, as the official clients do: one that answers speaks 2026-07-28 and
/// is spoken to without a handshake; one that refuses the probe, does not know it, or leaves it
/// unanswered is of the handshake era and is initialized with the client's `initialize` —
/// started again first, if the probe ended it.
async fn start_with(
    upstream: &Upstream,
    params: &Value,
    connecting: Connecting,
    waiting: Option<Spawned>,
    on_incoming: impl Fn(Arc<Peer>, Incoming) -> BoxFuture<'static, ()> + Send + Sync + 'static,
) -> Result<Live, String> {
    let name = &upstream.name;
    // Servers start a few at a time, however many sessions open at once: a start is a process
    // (often a runtime: Node, Python) loading, and 50 at once on 2 cores take longer each than
    // in turns. The wait is not counted against the server's time to answer.
    let _starting = match &upstream.target {
        Target::Command { .. } if waiting.is_none() => starting().acquire().await.ok(),
        _ => None,
    };
    let on_incoming = Arc::new(on_incoming);
    let (peer, mut process) = open(upstream, connecting, waiting, Arc::clone(&on_incoming))?;
    let envelope = envelope_of(params);
    match probe(&peer, &envelope, connecting).await {
        Probed::Modern(discovered) => {
            peer.speak_modern(envelope);
            return Ok(Live {
                peer,
                initialized: initialized_of(&discovered, params, name),
                _process: process,
            });
        }
        Probed::Refused(error) => {
            return Err(format!(
                "MCP server `{name}` refused `server/discover`: {}",
                error_text(&error)
            ));
        }
        Probed::Legacy => {}
    }
    // The probe ended the server (an SDK that exits on any request before `initialize`), or it
    // ends as it answers: one that was never spoken to is started, once.
    let mut unspoken = false;
    let mut peer = peer;
    if ended_with(&peer, process.as_mut()) {
        (peer, process) = open(upstream, connecting, None, Arc::clone(&on_incoming))?;
        unspoken = true;
    }
    loop {
        match initialize(&peer, params, connecting, name).await {
            Ok(initialized) => {
                return Ok(Live {
                    peer,
                    initialized,
                    _process: process,
                });
            }
            Err(Initialize::Ended) if !unspoken => {
                (peer, process) = open(upstream, connecting, None, Arc::clone(&on_incoming))?;
                unspoken = true;
            }
            Err(Initialize::Ended) => {
                let why = match process.as_mut() {
                    Some(process) => process.why_it_ended().await,
                    None => "the connection closed".to_owned(),
                };
                return Err(format!(
                    "MCP server `{name}` ended before it answered `initialize`: {why}"
                ));
            }
            Err(Initialize::Failed(why)) => return Err(why),
        }
    }
}

/// A connection with `upstream`: its process (`waiting`, or one started) and its peer.
fn open(
    upstream: &Upstream,
    connecting: Connecting,
    waiting: Option<Spawned>,
    on_incoming: Arc<
        impl Fn(Arc<Peer>, Incoming) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    >,
) -> Result<(Arc<Peer>, Option<Process>), String> {
    let name = &upstream.name;
    let label = format!("the MCP server `{name}`");
    let (link, process) = match &upstream.target {
        Target::Command {
            program,
            args,
            env,
            cwd,
        } => {
            let (process, stdout, stdin) = match waiting {
                Some(spawned) => spawned,
                None => child::spawn(program, args, env, cwd.as_deref()).map_err(|source| {
                    McpClientError::Spawn {
                        server: name.clone(),
                        command: program.clone(),
                        source,
                    }
                    .to_string()
                })?,
            };
            (
                link::lines(stdout, stdin, connecting.max_message_bytes),
                Some(process),
            )
        }
        #[cfg(feature = "mcp-http")]
        Target::Url { url, headers } => (
            crate::mcp::http::connect(url, headers, connecting.max_message_bytes)
                .map_err(|why| format!("MCP server `{name}` at {url}: {why}"))?,
            None,
        ),
        #[cfg(not(feature = "mcp-http"))]
        Target::Url { url, .. } => {
            return Err(format!(
                "MCP server `{name}` is at {url}, and this build has no HTTP client (feature `mcp-http`)"
            ));
        }
    };
    let link: Link = link;
    let peer = Peer::start(label, link, Side::Server, move |peer, incoming| {
        on_incoming(peer, incoming)
    });
    Ok((peer, process))
}

/// Whether the server of `peer` ended (its link closed, or its process exited).
fn ended_with(peer: &Peer, process: Option<&mut Process>) -> bool {
    peer.is_closed() || process.is_some_and(|process| process.has_exited())
}

/// What the `server/discover` probe found.
enum Probed {
    /// The server's answer to it.
    Modern(Value),
    /// A server of the handshake era (it refused the probe or left it unanswered).
    Legacy,
    /// The server's refusal, which no handshake would change.
    Refused(Value),
}

/// Sends `server/discover` with the client's `envelope` and reads the verdict
/// ([`wire::era::probe_verdict`]).
async fn probe(
    peer: &Arc<Peer>,
    envelope: &serde_json::Map<String, Value>,
    connecting: Connecting,
) -> Probed {
    let params = serde_json::json!({ "_meta": envelope });
    let pending = peer
        .request("server/discover", Some(wire::raw(&params)))
        .await;
    let id = pending.id.clone();
    match tokio::time::timeout(PROBE_WAIT.min(connecting.init_timeout), pending.answer()).await {
        Ok(Ok(result)) => {
            let result: Value = serde_json::from_str(result.get()).unwrap_or(Value::Null);
            if wire::era::discovered_modern(&result) {
                Probed::Modern(result)
            } else {
                Probed::Legacy
            }
        }
        Ok(Err(error)) => {
            let error: Value = serde_json::from_str(error.get()).unwrap_or(Value::Null);
            let code = error["code"].as_i64().unwrap_or_default();
            match wire::era::probe_verdict(code, error.get("data")) {
                wire::era::ProbeVerdict::Legacy => Probed::Legacy,
                wire::era::ProbeVerdict::Refused => Probed::Refused(error),
            }
        }
        Err(_) => {
            peer.forget(&id);
            Probed::Legacy
        }
    }
}

/// Why `initialize` did not make a connection.
enum Initialize {
    /// The server ended before it answered.
    Ended,
    /// It refused, or did not answer in time: the words the client gets.
    Failed(String),
}

/// Initializes a server of the handshake era with the client's `initialize` params: its answer.
async fn initialize(
    peer: &Arc<Peer>,
    params: &Value,
    connecting: Connecting,
    name: &str,
) -> Result<Value, Initialize> {
    let pending = peer.request("initialize", Some(wire::raw(params))).await;
    match tokio::time::timeout(connecting.init_timeout, pending.answer()).await {
        Ok(Ok(result)) => Ok(serde_json::from_str(result.get()).unwrap_or(Value::Null)),
        Ok(Err(_)) if peer.is_closed() => Err(Initialize::Ended),
        Ok(Err(error)) => {
            let error = serde_json::from_str(error.get()).unwrap_or(Value::Null);
            Err(Initialize::Failed(format!(
                "MCP server `{name}` refused `initialize`: {}",
                error_text(&error)
            )))
        }
        Err(_) => Err(Initialize::Failed(format!(
            "MCP server `{name}` did not answer `initialize` within {}",
            DisplayDuration(connecting.init_timeout)
        ))),
    }
}

/// What every request to a server of 2026-07-28 carries: the client's capabilities and name
/// (`params`, as the client's `initialize` says them, or its own envelope made into them).
fn envelope_of(params: &Value) -> serde_json::Map<String, Value> {
    let mut envelope = serde_json::Map::new();
    envelope.insert(
        wire::era::PROTOCOL_VERSION_KEY.to_owned(),
        Value::String(wire::era::MODERN.to_owned()),
    );
    envelope.insert(
        wire::era::CLIENT_CAPABILITIES_KEY.to_owned(),
        params["capabilities"].clone(),
    );
    if !params["clientInfo"].is_null() {
        envelope.insert(
            wire::era::CLIENT_INFO_KEY.to_owned(),
            params["clientInfo"].clone(),
        );
    }
    envelope
}

/// What `server/discover`'s answer stands for as `initialize`'s (its capabilities,
/// instructions and name, as the session merges answers).
fn initialized_of(discovered: &Value, params: &Value, name: &str) -> Value {
    let server_info = discovered["_meta"][wire::era::SERVER_INFO_KEY].clone();
    // What a client of the handshake era is answered: the version it asked for (the proxy
    // speaks both eras to it); the server's own era is the proxy's business.
    let asked = params["protocolVersion"]
        .as_str()
        .filter(|asked| wire::era::HANDSHAKE.contains(asked))
        .unwrap_or(wire::era::LATEST_HANDSHAKE);
    let mut initialized = serde_json::json!({
        "protocolVersion": asked,
        "capabilities": discovered["capabilities"],
        "serverInfo": if server_info.is_object() { server_info } else { serde_json::json!({ "name": name, "version": "" }) },
    });
    if let Some(instructions) = discovered["instructions"].as_str() {
        initialized["instructions"] = Value::String(instructions.to_owned());
    }
    initialized
}

/// The servers starting at once, at most: twice the cores (4 at least).
fn starting_permits() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    (2 * cores).max(4)
}

/// The permits of the servers starting at once ([`starting_permits`]).
fn starting() -> &'static tokio::sync::Semaphore {
    static STARTING: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    STARTING.get_or_init(|| tokio::sync::Semaphore::new(starting_permits()))
}

/// The message of a JSON-RPC error object, as the peer wrote it.
pub(crate) fn error_text(error: &Value) -> String {
    match error.get("message").and_then(Value::as_str) {
        Some(message) => message.to_owned(),
        None => error.to_string(),
    }
}
