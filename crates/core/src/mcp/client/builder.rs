//! How to connect to an MCP server and what its tools become: [`McpClientBuilder`].

use std::sync::Arc;
use std::time::Duration;

use super::connection::Inner;
use super::tool::RemoteTool;
use super::{McpClient, McpClientError};
use crate::mcp::caps;
use crate::mcp::target::Target;
use crate::mcp::target::{DEFAULT_INIT_TIMEOUT, DEFAULT_MAX_MESSAGE_BYTES};
use crate::tool::{DynTool, ToolLimits};

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
    pub(super) fn new(name: impl Into<String>, target: Target) -> Self {
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
    fn for_command(&mut self, call: &'static str) -> Option<&mut Target> {
        match &mut self.target {
            target @ Target::Command { .. } => Some(target),
            Target::Url { .. } => {
                self.misuse.get_or_insert(call);
                None
            }
        }
    }

    /// Adds an argument to the server's command. (A server reached over HTTP has no command:
    /// [`connect`](Self::connect) refuses the builder.)
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        if let Some(Target::Command { args, .. }) = self.for_command("arg") {
            args.push(arg.into());
        }
        self
    }

    /// Adds arguments to the server's command. (Not for a server reached over HTTP.)
    pub fn args(mut self, more: impl IntoIterator<Item = impl Into<String>>) -> Self {
        if let Some(Target::Command { args, .. }) = self.for_command("args") {
            args.extend(more.into_iter().map(Into::into));
        }
        self
    }

    /// Sends a header with every request to a server reached over HTTP
    /// (`Authorization: Bearer …`). (Not for a command.)
    pub fn header(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        match &mut self.target {
            Target::Url { headers, .. } => {
                headers.insert(key.into(), value.into());
            }
            Target::Command { .. } => {
                let _ = (key, value);
                self.misuse.get_or_insert("header");
            }
        }
        self
    }

    /// Sets a variable of the server's environment. (Not for a server reached over HTTP.)
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Some(Target::Command { env, .. }) = self.for_command("env") {
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

    /// Defers every tool of the server: a registry offers them only once its `search_tools`
    /// finds them (see [`RegistryBuilder::defer`](crate::registry::RegistryBuilder::defer)).
    pub fn deferred(mut self, deferred: bool) -> Self {
        self.limits = self.limits.with_defer(deferred);
        self
    }

    /// How long the server has to start and answer `initialize` and `tools/list`. 30 s by
    /// default.
    pub fn init_timeout(mut self, timeout: Duration) -> Self {
        self.init_timeout = timeout;
        self
    }

    /// The longest message read from a stdio server, in bytes (256 MiB by default). A longer
    /// answer is not read: its call fails at once, saying so, and the connection goes on.
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

    /// Starts the server, initializes the connection and lists the tools.
    ///
    /// # Errors
    ///
    /// [`McpClientError`] naming the server and what failed: the command could not start, the
    /// server did not answer `initialize` or `tools/list` within the init timeout, or ended; or
    /// the builder was given a command's `arg`, `args` or `env` for a server reached over HTTP.
    pub async fn connect(self) -> Result<McpClient, McpClientError> {
        if let Some(call) = self.misuse {
            return Err(McpClientError::Config(
                super::ConfigError::CommandSettingOverHttp {
                    server: self.name,
                    call,
                },
            ));
        }
        let inner = Arc::new(Inner {
            name: self.name,
            target: self.target,
            init_timeout: self.init_timeout,
            max_message_bytes: self.max_message_bytes,
            progress: Arc::default(),
            connection: tokio::sync::Mutex::new(None),
        });
        let connection = inner.start().await?;
        let listed = tokio::time::timeout(inner.init_timeout, list_tools(&inner, &connection))
            .await
            .map_err(|_| {
                inner.handshake(format!(
                    "did not list its tools within {}",
                    crate::figures::DisplayDuration(inner.init_timeout)
                ))
            })??;
        *inner.connection.lock().await = Some(Arc::new(connection));
        let mut names = std::collections::HashSet::new();
        let tools = listed
            .into_iter()
            .filter_map(|tool| {
                let schemas = serde_json::to_string(&tool.input_schema).map_or(0, |s| s.len())
                    + tool
                        .output_schema
                        .as_ref()
                        .and_then(|schema| serde_json::to_string(schema).ok())
                        .map_or(0, |s| s.len());
                if let Some(why) = caps::schema_refusal(&inner.name, &tool.name, schemas) {
                    tracing::warn!("{why}");
                    return None;
                }
                let remote = RemoteTool::new(&inner, tool, self.prefixed, self.limits);
                // Two tools of one server that come to one name (`read.artifact` and
                // `read artifact`, say): the first is served.
                if !names.insert(remote.spec().name.clone()) {
                    tracing::warn!(
                        "the MCP server `{}` lists two tools that are both served as `{}`; the \
                         second is not served",
                        inner.name,
                        remote.spec().name
                    );
                    return None;
                }
                Some(Arc::new(remote) as Arc<dyn DynTool>)
            })
            .collect();
        Ok(McpClient {
            inner,
            tools: Arc::new(tools),
        })
    }
}

/// The server's tools, page by page, within the caps: at most [`caps::MAX_TOOLS_PER_SERVER`]
/// tools from at most [`caps::MAX_LIST_PAGES`] pages; a cursor given twice ends the listing.
async fn list_tools(
    inner: &Inner,
    connection: &super::connection::Connection,
) -> Result<Vec<rmcp::model::Tool>, McpClientError> {
    let peer = connection.service.peer();
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = std::collections::HashSet::new();
    for _ in 0..caps::MAX_LIST_PAGES {
        let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor.take());
        let page = peer
            .list_tools(Some(params))
            .await
            .map_err(|error| inner.handshake(format!("could not list its tools ({error})")))?;
        let room = caps::MAX_TOOLS_PER_SERVER - tools.len();
        if page.tools.len() > room {
            tracing::warn!(
                "the MCP server `{}` lists more than {} tools; the rest are not served",
                inner.name,
                caps::MAX_TOOLS_PER_SERVER
            );
        }
        tools.extend(page.tools.into_iter().take(room));
        match page.next_cursor {
            Some(next) if tools.len() < caps::MAX_TOOLS_PER_SERVER => {
                if !seen.insert(next.clone()) {
                    tracing::warn!(
                        "the MCP server `{}` gave a cursor twice; its listing ends there",
                        inner.name
                    );
                    return Ok(tools);
                }
                cursor = Some(next);
            }
            _ => return Ok(tools),
        }
    }
    tracing::warn!(
        "the MCP server `{}` lists more than {} pages of tools; the rest are not served",
        inner.name,
        caps::MAX_LIST_PAGES
    );
    Ok(tools)
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
