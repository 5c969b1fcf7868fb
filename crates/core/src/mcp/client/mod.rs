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

mod builder;
mod config;
mod connection;
mod content;
mod progress;
mod tool;

use std::fmt;
use std::sync::Arc;

pub use builder::McpClientBuilder;
pub use config::{
    ConfigError, ServerConfig, ToolsConfig, Unexpanded, expand_config, parse_servers_config,
};

use crate::mcp::target::Target;
use crate::tool::DynTool;
use connection::Inner;

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
        /// What went wrong, in words (`did not answer initialize within 30s`).
        what: String,
    },
    /// The configuration is wrong: which server, what, and what to write instead.
    #[error(transparent)]
    Config(#[from] ConfigError),
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
        McpClientBuilder::new(name, Target::command(command))
    }

    /// A server at a streamable HTTP endpoint (`http://127.0.0.1:8000/mcp`). For `https`,
    /// enable rmcp's `reqwest` feature too (it brings TLS).
    #[cfg(feature = "mcp-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> McpClientBuilder {
        McpClientBuilder::new(name, Target::url(url))
    }

    /// A server as a configuration file describes it ([`parse_servers_config`]), with
    /// `${VAR}` and `${VAR:-default}` expanded ([`expand_config`]).
    ///
    /// # Errors
    ///
    /// [`McpClientError::Config`] for a variable that is not set and has no default, a server
    /// with a `url` when the `mcp-http` feature is off, or with neither a `command` nor a `url`.
    pub fn from_config(
        name: impl Into<String>,
        config: &ServerConfig,
    ) -> Result<McpClientBuilder, McpClientError> {
        let name = name.into();
        let config = &expand_config(&name, config)?;
        let target = config.target(&name)?;
        Ok(McpClientBuilder::new(name, target))
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The server's tools, to register (`RegistryBuilder::tools`).
    pub fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.tools.as_ref().clone()
    }

    /// Ends the connection and stops the server (its whole process group, for a command). Calls
    /// made afterwards start it again. Dropping the last clone of the client does the same.
    pub async fn shutdown(&self) {
        let connection = self.inner.connection.lock().await.take();
        drop(connection);
    }
}
