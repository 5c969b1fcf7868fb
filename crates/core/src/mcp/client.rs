//! An MCP client whose server's tools run in a [`Registry`](crate::Registry) like its own.
//!
//! [`McpClient`] connects to one server — a child process spoken to on stdio, or a streamable
//! HTTP endpoint (feature `mcp-http`) — and lists its tools. Each becomes a [`DynTool`]: its
//! schema, description and annotations are the server's; a call forwards the arguments, turns
//! the server's progress notifications into toolsmith progress, sends `notifications/cancelled`
//! when the registry cancels it or its timeout passes, and returns the result's text (images and
//! other binary content kept as artifacts behind a one-line placeholder, `structuredContent` as
//! JSON when there is no text). An `isError` result stays an error. When the server dies, its
//! calls become error results that name it, and the next call starts it again.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientCapabilities, ClientRequest, ContentBlock, Implementation, InitializeRequestParams,
    ProgressNotificationParam, ProgressToken, RequestId, ResourceContents, ServerResult,
};
use rmcp::service::{
    NotificationContext, Peer, PeerRequestOptions, RoleClient, RunningService, ServiceError,
};
use rmcp::{ClientHandler, ServiceExt as _};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::transport::{ANSWER_TOO_LARGE, LineTransport};
use crate::tool::{Audience, ToolContext};
use crate::tool::{CallArgs, DynTool, ToolAnnotations, ToolLimits, ToolSpec};
use crate::tool::{ToolError, ToolOutput};
use crate::trim::grouped;

/// How long a server has to answer `initialize` (and `tools/list`) by default.
const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest message read from a server on stdio by default, in bytes: a result larger than
/// this could not be kept as an artifact whole anyway.
const DEFAULT_MAX_MESSAGE_BYTES: usize = 256 << 20;
/// The separator between a server's name and its tool's, in prefixed names.
pub const PREFIX_SEPARATOR: &str = "__";

/// Why an MCP server could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpClientError {
    /// The server's command could not be started.
    #[error(
        "MCP server `{server}`: cannot start `{command}` ({source}); check the command and PATH"
    )]
    Spawn {
        /// The server's name.
        server: String,
        /// The command.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The server did not complete `initialize` or `tools/list`.
    #[error("MCP server `{server}` {what}")]
    Handshake {
        /// The server's name.
        server: String,
        /// What went wrong, in words (`did not answer initialize within 30 s`).
        what: String,
    },
    /// The configuration is wrong; the message says where and what to write instead.
    #[error("{0}")]
    Config(String),
}

/// One server of an `mcpServers` configuration, as Claude Desktop, Claude Code and Cursor
/// write it: a command to start (`command`, `args`, `env`, `cwd`), or a streamable HTTP
/// endpoint (`url`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The program to start.
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables added to its environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The directory it runs in.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// A streamable HTTP endpoint, instead of a command.
    #[serde(default)]
    pub url: Option<String>,
}

/// Reads an `{"mcpServers": {"name": {"command": …, "args": […], "env": {…}}}}` configuration:
/// the servers in name order.
///
/// # Errors
///
/// [`McpClientError::Config`] when the text is not JSON, names no servers, or a server has
/// neither `command` nor `url`; the message says which and what to write.
pub fn parse_servers_config(text: &str) -> Result<Vec<(String, ServerConfig)>, McpClientError> {
    #[derive(Deserialize)]
    struct File {
        #[serde(rename = "mcpServers", default)]
        servers: Option<BTreeMap<String, ServerConfig>>,
    }
    const SHAPE: &str =
        r#"{"mcpServers": {"name": {"command": "program", "args": ["…"], "env": {"K": "V"}}}}"#;
    let file: File = serde_json::from_str(text).map_err(|error| {
        McpClientError::Config(format!(
            "the configuration is not valid JSON of the expected shape ({error}); write {SHAPE}"
        ))
    })?;
    let servers = file.servers.unwrap_or_default();
    if servers.is_empty() {
        return Err(McpClientError::Config(format!(
            "the configuration names no servers; write {SHAPE}"
        )));
    }
    for (name, server) in &servers {
        match (&server.command, &server.url) {
            (Some(_), None) | (None, Some(_)) => {}
            _ => {
                return Err(McpClientError::Config(format!(
                    "server `{name}` needs either a `command` or a `url`, not {}",
                    if server.command.is_some() {
                        "both"
                    } else {
                        "neither"
                    }
                )));
            }
        }
    }
    Ok(servers.into_iter().collect())
}

/// Where a server is.
#[derive(Debug, Clone)]
enum Target {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    #[cfg(feature = "mcp-http")]
    Http { url: String },
}

/// How to connect to an MCP server and what its tools become. Made by [`McpClient::stdio`],
/// [`McpClient::http`] or [`McpClient::from_config`]; [`connect`](Self::connect) finishes it.
#[derive(Debug, Clone)]
#[must_use]
pub struct McpClientBuilder {
    name: String,
    target: Target,
    prefixed: bool,
    init_timeout: Duration,
    max_message_bytes: usize,
    limits: ToolLimits,
    /// A builder call that does not apply to the target (`arg` on an HTTP server), refused at
    /// `connect` rather than silently ignored.
    misuse: Option<&'static str>,
}

impl McpClientBuilder {
    fn new(name: impl Into<String>, target: Target) -> Self {
        McpClientBuilder {
            name: name.into(),
            target,
            prefixed: false,
            init_timeout: DEFAULT_INIT_TIMEOUT,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            limits: ToolLimits::default(),
            misuse: None,
        }
    }

    /// The command's target, or `None` (the call recorded as a misuse) for an HTTP server.
    #[cfg_attr(not(feature = "mcp-http"), allow(unused_variables))]
    fn for_command(&mut self, call: &'static str) -> Option<&mut Target> {
        match &mut self.target {
            target @ Target::Stdio { .. } => Some(target),
            #[cfg(feature = "mcp-http")]
            Target::Http { .. } => {
                self.misuse.get_or_insert(call);
                None
            }
        }
    }

    /// Adds an argument to the server's command. (A server reached over HTTP has no command:
    /// [`connect`](Self::connect) refuses the builder.)
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        if let Some(Target::Stdio { args, .. }) = self.for_command("arg") {
            args.push(arg.into());
        }
        self
    }

    /// Adds arguments to the server's command. (Not for a server reached over HTTP.)
    pub fn args(mut self, more: impl IntoIterator<Item = impl Into<String>>) -> Self {
        if let Some(Target::Stdio { args, .. }) = self.for_command("args") {
            args.extend(more.into_iter().map(Into::into));
        }
        self
    }

    /// Sets a variable of the server's environment. (Not for a server reached over HTTP.)
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Some(Target::Stdio { env, .. }) = self.for_command("env") {
            env.insert(key.into(), value.into());
        }
        self
    }

    /// Names the tools `<server>__<tool>` (`github__list_issues`), so servers with tools of
    /// the same name can share a registry. Off by default.
    pub fn prefixed(mut self, prefixed: bool) -> Self {
        self.prefixed = prefixed;
        self
    }

    /// How long the server has to start and answer `initialize` and `tools/list`. 30 s by
    /// default.
    pub fn init_timeout(mut self, timeout: Duration) -> Self {
        self.init_timeout = timeout;
        self
    }

    /// The longest message read from a stdio server, in bytes (256 MiB by default). A longer
    /// answer is not read: its call fails at once, saying so, and the session goes on.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// The limits every tool of the server gets: its result cap, its timeout (the registry's
    /// default when `None`), how it is trimmed.
    pub fn limits(mut self, limits: ToolLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Starts the server, initializes the session and lists the tools.
    ///
    /// # Errors
    ///
    /// [`McpClientError`] naming the server and what failed: the command could not start, the
    /// server did not answer `initialize` or `tools/list` within the init timeout, or ended; or
    /// the builder was given a command's `arg`, `args` or `env` for a server reached over HTTP.
    pub async fn connect(self) -> Result<McpClient, McpClientError> {
        if let Some(call) = self.misuse {
            return Err(McpClientError::Config(format!(
                "MCP server `{}` is reached over HTTP, so `{call}` (for a command the client \
                 starts) does not apply; give the server its settings where it runs",
                self.name
            )));
        }
        let inner = Arc::new(Inner {
            name: self.name,
            target: self.target,
            init_timeout: self.init_timeout,
            max_message_bytes: self.max_message_bytes,
            progress: Arc::default(),
            session: tokio::sync::Mutex::new(None),
        });
        let session = inner.start().await?;
        let listed =
            tokio::time::timeout(inner.init_timeout, session.service.peer().list_all_tools())
                .await
                .map_err(|_| {
                    inner.handshake(format!(
                        "did not list its tools within {}",
                        seconds(inner.init_timeout)
                    ))
                })?
                .map_err(|error| inner.handshake(format!("could not list its tools ({error})")))?;
        *inner.session.lock().await = Some(Arc::new(session));
        let tools = listed
            .into_iter()
            .map(|tool| {
                Arc::new(RemoteTool::new(&inner, tool, self.prefixed, self.limits))
                    as Arc<dyn DynTool>
            })
            .collect();
        Ok(McpClient {
            inner,
            tools: Arc::new(tools),
        })
    }
}

/// A connection to one MCP server, and its tools as [`DynTool`]s.
///
/// ```no_run
/// use toolsmith::Registry;
/// use toolsmith::mcp::McpClient;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let github = McpClient::stdio("github", "github-mcp-server")
///     .arg("stdio")
///     .prefixed(true) // github__list_issues, …
///     .connect()
///     .await?;
/// let registry = Registry::builder().tools(github.tools()).build()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpClient {
    inner: Arc<Inner>,
    tools: Arc<Vec<Arc<dyn DynTool>>>,
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.inner.name)
            .field("target", &self.inner.target)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// A server started as `command` and spoken to on its stdin and stdout; add arguments and
    /// environment on the builder. Its stderr is this process's.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> McpClientBuilder {
        McpClientBuilder::new(
            name,
            Target::Stdio {
                command: command.into(),
                args: Vec::new(),
                env: BTreeMap::new(),
                cwd: None,
            },
        )
    }

    /// A server at a streamable HTTP endpoint (`http://127.0.0.1:8000/mcp`). For `https`,
    /// enable rmcp's `reqwest` feature too (it brings TLS).
    #[cfg(feature = "mcp-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> McpClientBuilder {
        McpClientBuilder::new(name, Target::Http { url: url.into() })
    }

    /// A server as a configuration file describes it ([`parse_servers_config`]).
    ///
    /// # Errors
    ///
    /// [`McpClientError::Config`] for a server with a `url` when the `mcp-http` feature is off,
    /// or with neither a `command` nor a `url`.
    pub fn from_config(
        name: impl Into<String>,
        config: &ServerConfig,
    ) -> Result<McpClientBuilder, McpClientError> {
        let name = name.into();
        match (&config.command, &config.url) {
            (Some(command), None) => Ok(McpClientBuilder::new(
                name,
                Target::Stdio {
                    command: command.clone(),
                    args: config.args.clone(),
                    env: config.env.clone(),
                    cwd: config.cwd.clone(),
                },
            )),
            #[cfg(feature = "mcp-http")]
            (None, Some(url)) => Ok(McpClientBuilder::new(
                name,
                Target::Http { url: url.clone() },
            )),
            #[cfg(not(feature = "mcp-http"))]
            (None, Some(_)) => Err(McpClientError::Config(format!(
                "server `{name}` is at a URL, and this build has no HTTP client (feature `mcp-http`)"
            ))),
            _ => Err(McpClientError::Config(format!(
                "server `{name}` needs either a `command` or a `url`"
            ))),
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The server's tools, to register (`RegistryBuilder::tools`).
    pub fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.tools.as_ref().clone()
    }

    /// Ends the session and stops the server (its whole process group, for a command). Calls
    /// made afterwards start it again. Dropping the last clone of the client does the same.
    pub async fn shutdown(&self) {
        let session = self.inner.session.lock().await.take();
        drop(session);
    }
}

/// The shared state of a client and its tools.
struct Inner {
    name: String,
    target: Target,
    init_timeout: Duration,
    max_message_bytes: usize,
    /// Where each running call's progress goes, by the progress token of its request.
    progress: Progress,
    /// The live session, if any: `None` before the first connect after the server died.
    session: tokio::sync::Mutex<Option<Arc<Session>>>,
}

type Progress = Arc<Mutex<HashMap<ProgressToken, mpsc::Sender<String>>>>;

/// Progress messages waiting for their call, at most: a server that floods notifications loses
/// the excess (progress is best-effort), it does not grow the client's memory.
const PROGRESS_BACKLOG: usize = 64;
/// The longest progress message passed on, in chars; a longer one is cut with `…`.
const MAX_PROGRESS_CHARS: usize = 1_000;

/// One session with the server: the service and, for a command, its process.
struct Session {
    service: RunningService<RoleClient, Handler>,
    /// The server's process (killed on drop) and, on Unix, everything it started (`npx` starts
    /// node, which starts the server; a server may `setsid` a helper): killed when the session
    /// ends.
    _process: Option<Process>,
}

/// A server's process and the tree of processes it started.
struct Process {
    _child: tokio::process::Child,
    #[cfg(unix)]
    _tree: crate::process::ProcessTree,
}

impl Inner {
    fn handshake(&self, what: String) -> McpClientError {
        McpClientError::Handshake {
            server: self.name.clone(),
            what,
        }
    }

    /// Starts the server and initializes a session, within the init timeout.
    async fn start(&self) -> Result<Session, McpClientError> {
        let handler = Handler {
            progress: Arc::clone(&self.progress),
        };
        let timeout = self.init_timeout;
        let late = || {
            self.handshake(format!(
                "did not answer `initialize` within {}",
                seconds(timeout)
            ))
        };
        let failed = |error: rmcp::service::ClientInitializeError| {
            self.handshake(format!("ended before it was initialized ({error})"))
        };
        match &self.target {
            Target::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut process = tokio::process::Command::new(command);
                process
                    .args(args)
                    .envs(env)
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::inherit())
                    .kill_on_drop(true);
                #[cfg(unix)]
                let mut tree = crate::process::ProcessTree::new();
                #[cfg(unix)]
                tree.prepare(&mut process);
                if let Some(cwd) = cwd {
                    process.current_dir(cwd);
                }
                let mut child = process.spawn().map_err(|source| McpClientError::Spawn {
                    server: self.name.clone(),
                    command: command.clone(),
                    source,
                })?;
                // From here, a failure drops the tree: the server and all it started are killed.
                #[cfg(unix)]
                tree.started(&child);
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err(self.handshake("gave no pipes to talk on".to_owned()));
                };
                let transport = LineTransport::new(stdout, stdin, CancellationToken::new())
                    .with_max_line(self.max_message_bytes);
                let service = match tokio::time::timeout(timeout, handler.serve(transport)).await {
                    Ok(Ok(service)) => service,
                    Ok(Err(error)) => return Err(failed(error)),
                    Err(_) => return Err(late()),
                };
                Ok(Session {
                    service,
                    _process: Some(Process {
                        _child: child,
                        #[cfg(unix)]
                        _tree: tree,
                    }),
                })
            }
            #[cfg(feature = "mcp-http")]
            Target::Http { url } => {
                let transport =
                    rmcp::transport::StreamableHttpClientTransport::from_uri(url.as_str());
                match tokio::time::timeout(timeout, handler.serve(transport)).await {
                    Ok(Ok(service)) => Ok(Session {
                        service,
                        _process: None,
                    }),
                    Ok(Err(error)) => Err(failed(error)),
                    Err(_) => Err(late()),
                }
            }
        }
    }

    /// The live session, started anew if the server died.
    async fn session(&self) -> Result<Arc<Session>, ToolError> {
        let mut slot = self.session.lock().await;
        if let Some(session) = slot.as_ref()
            && !session.service.is_closed()
            && !session.service.peer().is_transport_closed()
        {
            return Ok(Arc::clone(session));
        }
        *slot = None;
        let session = Arc::new(self.start().await.map_err(|error| {
            ToolError::failed(format!("{error}; the next call tries to start it again"))
        })?);
        *slot = Some(Arc::clone(&session));
        Ok(session)
    }

    /// Forgets `session` (if it is still the live one) after it failed mid-call, and the error
    /// the call gets.
    async fn ended(&self, session: &Arc<Session>, tool: &str, why: &str) -> ToolError {
        let mut slot = self.session.lock().await;
        if slot.as_ref().is_some_and(|live| Arc::ptr_eq(live, session)) {
            *slot = None;
        }
        ToolError::failed(format!(
            "the MCP server `{}` ended while running `{tool}` ({why}); the next call starts it again",
            self.name
        ))
    }
}

fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

/// The client side of a session: forwards progress to the calls waiting for it.
#[derive(Clone)]
struct Handler {
    progress: Progress,
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let sender = self
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&params.progress_token)
            .cloned();
        if let Some(sender) = sender {
            let mut message = match (params.message, params.total) {
                (Some(message), _) => message,
                (None, Some(total)) => format!("{} of {total}", params.progress),
                (None, None) => format!("{}", params.progress),
            };
            if let Some((cut, _)) = message.char_indices().nth(MAX_PROGRESS_CHARS) {
                message.truncate(cut);
                message.push('…');
            }
            // Full: the call is behind on its progress, and this message is dropped.
            let _ = sender.try_send(message);
        }
    }

    fn get_info(&self) -> InitializeRequestParams {
        InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("toolsmith", crate::VERSION),
        )
    }
}

/// One tool of a server.
struct RemoteTool {
    inner: Arc<Inner>,
    /// Its name on the server.
    remote: String,
    spec: ToolSpec,
}

impl RemoteTool {
    fn new(
        inner: &Arc<Inner>,
        tool: rmcp::model::Tool,
        prefixed: bool,
        limits: ToolLimits,
    ) -> Self {
        let remote = tool.name.to_string();
        let local = if prefixed {
            format!("{}{PREFIX_SEPARATOR}{remote}", inner.name)
        } else {
            remote.clone()
        };
        let description = match tool.description.as_deref() {
            Some(description) if !description.trim().is_empty() => description.to_owned(),
            _ => format!("The `{remote}` tool of the MCP server `{}`.", inner.name),
        };
        let annotations =
            tool.annotations
                .as_ref()
                .map_or_else(ToolAnnotations::default, |hints| ToolAnnotations {
                    read_only: hints.read_only_hint,
                    destructive: hints.destructive_hint,
                    idempotent: hints.idempotent_hint,
                    open_world: hints.open_world_hint,
                });
        let spec = ToolSpec::new(
            crate::names::sanitize_tool_name(&local),
            description,
            Value::Object(tool.input_schema.as_ref().clone()),
        )
        // A tool its server says may destroy data is a write tool: its results are kept out of
        // history compaction, as the standard write and exec tools' are.
        .with_limits(limits.with_preserve(limits.preserve || annotations.destructive == Some(true)))
        .with_annotations(annotations);
        RemoteTool {
            inner: Arc::clone(inner),
            remote,
            spec,
        }
    }

    /// The text the model reads for a result's content.
    async fn output(
        &self,
        result: CallToolResult,
        cx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let mut parts = Vec::with_capacity(result.content.len());
        for block in result.content {
            parts.push(match block {
                ContentBlock::Text(text) => text.text,
                ContentBlock::Image(image) => {
                    binary("image", &image.mime_type, image.data, cx).await
                }
                ContentBlock::Audio(audio) => {
                    binary("audio", &audio.mime_type, audio.data, cx).await
                }
                ContentBlock::Resource(embedded) => match embedded.resource {
                    ResourceContents::TextResourceContents { text, .. } => text,
                    ResourceContents::BlobResourceContents {
                        uri,
                        mime_type,
                        blob,
                        ..
                    } => {
                        binary(
                            &format!("resource {uri}"),
                            mime_type.as_deref().unwrap_or("application/octet-stream"),
                            blob,
                            cx,
                        )
                        .await
                    }
                    _ => "[a resource of a kind this client does not know]".to_owned(),
                },
                ContentBlock::ResourceLink(link) => format!("[resource: {}]", link.uri),
                _ => "[content of a kind this client does not know]".to_owned(),
            });
        }
        if result.is_error == Some(true) {
            let text = parts.join("\n");
            return Err(ToolError::failed(if text.is_empty() {
                format!("`{}` failed without saying why", self.remote)
            } else {
                text
            }));
        }
        let text = parts.join("\n");
        match result.structured_content {
            // The server states the result is this structure (its text, if any, is the same
            // value serialized, as the protocol recommends): it is cut as JSON.
            Some(structured)
                if parts.is_empty()
                    || serde_json::from_str::<Value>(&text).is_ok_and(|v| v == structured) =>
            {
                ToolOutput::json(&structured)
            }
            _ => Ok(ToolOutput::text(text)),
        }
    }
}

/// A placeholder line for binary content, the content kept as an artifact when there is a
/// store: the model cannot read it, a person or a later tool may.
async fn binary(what: &str, mime_type: &str, base64: String, cx: &ToolContext) -> String {
    let bytes = base64.len() / 4 * 3;
    // The store writes a file: off the async threads, as the registry stores its artifacts.
    let stored = match cx.artifacts() {
        Some(store) => {
            let store = Arc::clone(store);
            tokio::task::spawn_blocking(move || store.put(&base64))
                .await
                .ok()
                .and_then(Result::ok)
        }
        None => None,
    };
    let kept = stored.map_or_else(
        || "not shown".to_owned(),
        |id| format!("kept, base64-encoded, as artifact {id}"),
    );
    format!(
        "[{what}: {mime_type}, about {} bytes, {kept}]",
        crate::trim::grouped(bytes)
    )
}

/// Sends `notifications/cancelled` for a request still running when its call ends early (the
/// registry cancelled it, or its timeout passed and the call was dropped).
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    request: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(request) = self.request.take() else {
            return;
        };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let cancelled = CancelledNotificationParam::new(
                    Some(request),
                    Some("the call was cancelled".to_owned()),
                );
                let _ = peer.notify_cancelled(cancelled).await;
            });
        }
    }
}

/// Removes a call's progress route when the call ends.
struct ProgressRoute {
    progress: Progress,
    token: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.token);
    }
}

#[async_trait]
impl DynTool for RemoteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: CallArgs, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Value::Object(arguments) = args.into_json()? else {
            return Err(ToolError::invalid_arguments(
                "the arguments must be a JSON object",
            ));
        };
        let session = self.inner.session().await?;
        let peer = session.service.peer().clone();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(self.remote.clone()).with_arguments(arguments),
        ));
        let handle = match peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(error) => {
                return Err(self
                    .inner
                    .ended(&session, &self.remote, &error.to_string())
                    .await);
            }
        };
        let (sender, mut progress) = mpsc::channel(PROGRESS_BACKLOG);
        self.inner
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(handle.progress_token.clone(), sender);
        let _route = ProgressRoute {
            progress: Arc::clone(&self.inner.progress),
            token: handle.progress_token.clone(),
        };
        let mut cancel = CancelOnDrop {
            peer,
            request: Some(handle.id.clone()),
        };
        let mut response = handle.rx;
        let answer = loop {
            tokio::select! {
                answer = &mut response => break answer,
                Some(message) = progress.recv() => cx.progress(Audience::User, message),
                () = cx.cancelled() => {
                    return Err(ToolError::failed("the call was cancelled"));
                }
            }
        };
        cancel.request = None;
        match answer {
            Ok(Ok(ServerResult::CallToolResult(result))) => self.output(result, cx).await,
            Ok(Ok(_)) => Err(ToolError::failed(format!(
                "the MCP server `{}` answered `{}` with something other than a tool result",
                self.inner.name, self.remote
            ))),
            Ok(Err(ServiceError::McpError(error))) if error.code.0 == ANSWER_TOO_LARGE => {
                Err(ToolError::failed(format!(
                    "the MCP server `{}` answered `{}` with a message over the client's limit of \
                     {} bytes, so it was not read. Ask for less in one call (a narrower query, \
                     a smaller page)",
                    self.inner.name,
                    self.remote,
                    grouped(self.inner.max_message_bytes)
                )))
            }
            Ok(Err(ServiceError::McpError(error))) => Err(ToolError::failed(format!(
                "the MCP server `{}` refused the call: {}",
                self.inner.name, error.message
            ))),
            Ok(Err(error)) => Err(self
                .inner
                .ended(&session, &self.remote, &error.to_string())
                .await),
            Err(_) => Err(self
                .inner
                .ended(&session, &self.remote, "its connection closed")
                .await),
        }
    }
}

#[cfg(all(test, feature = "mcp-http"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_command_setting_on_an_http_server_is_refused_not_ignored() {
        // Refused before any connection is tried: the address is never reached.
        let error = McpClient::http("remote", "http://127.0.0.1:9/mcp")
            .env("TOKEN", "secret")
            .arg("--verbose")
            .connect()
            .await
            .expect_err("refused");
        assert_eq!(
            error.to_string(),
            "MCP server `remote` is reached over HTTP, so `env` (for a command the client \
             starts) does not apply; give the server its settings where it runs"
        );
    }
}
