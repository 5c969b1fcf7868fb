//! The `mcpServers` configuration of Claude Desktop, Claude Code and Cursor.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::McpClientError;

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
