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
    /// Headers sent with every request to `url` (`"Authorization": "Bearer ${TOKEN}"`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// `config` with `${VAR}` and `${VAR:-default}` expanded from this process's environment in
/// its `command`, `args`, `env` values, `cwd`, `url` and `headers` values, as Claude Code
/// expands them. `$$` is not special; a `$` not followed by `{` stays as it is.
///
/// # Errors
///
/// [`McpClientError::Config`] naming the server and the variable, for a variable that is not
/// set and has no default, or a `${` without its `}`.
pub fn expand_config(server: &str, config: &ServerConfig) -> Result<ServerConfig, McpClientError> {
    let expand = |text: &str| {
        expand_vars(text, &|name| std::env::var(name).ok())
            .map_err(|why| McpClientError::Config(format!("server `{server}`: {why}")))
    };
    let expand_map = |map: &BTreeMap<String, String>| {
        map.iter()
            .map(|(key, value)| Ok((key.clone(), expand(value)?)))
            .collect::<Result<BTreeMap<_, _>, McpClientError>>()
    };
    Ok(ServerConfig {
        command: config.command.as_deref().map(expand).transpose()?,
        args: config
            .args
            .iter()
            .map(|arg| expand(arg))
            .collect::<Result<_, _>>()?,
        env: expand_map(&config.env)?,
        cwd: config
            .cwd
            .as_ref()
            .map(|cwd| expand(&cwd.to_string_lossy()).map(PathBuf::from))
            .transpose()?,
        url: config.url.as_deref().map(expand).transpose()?,
        headers: expand_map(&config.headers)?,
    })
}

/// Expands `${VAR}` and `${VAR:-default}` in `text` with `lookup`.
fn expand_vars(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!(
                "`{text}` has a `${{` without its `}}`; write `${{NAME}}` or `${{NAME:-default}}`"
            ));
        };
        let inside = &after[..end];
        let (name, default) = match inside.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inside, None),
        };
        match (lookup(name), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "the variable `{name}` is not set; set it, or give a default: \
                     `${{{name}:-value}}`"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_expand_with_defaults_and_an_unset_one_is_named() {
        let lookup = |name: &str| (name == "HOME").then(|| "/home/me".to_owned());
        assert_eq!(expand_vars("${HOME}/x", &lookup).unwrap(), "/home/me/x");
        assert_eq!(expand_vars("a ${NOPE:-b} c", &lookup).unwrap(), "a b c");
        assert_eq!(expand_vars("${HOME:-x}", &lookup).unwrap(), "/home/me");
        assert_eq!(expand_vars("$HOME ${NOPE:-}", &lookup).unwrap(), "$HOME ");
        let error = expand_vars("Bearer ${TOKEN}", &lookup).unwrap_err();
        assert!(error.contains("`TOKEN` is not set"), "{error}");
        assert!(
            expand_vars("${OPEN", &lookup)
                .unwrap_err()
                .contains("without its")
        );
    }
}
