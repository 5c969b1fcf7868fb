//! The `mcpServers` configuration of Claude Desktop, Claude Code and Cursor.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::McpClientError;
use crate::mcp::target::Target;

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
    /// Which of its tools the proxy serves (`"tools": {"allow": ["git_*"], "deny":
    /// ["git_push"]}`); every one when absent.
    #[serde(default)]
    pub tools: ToolsConfig,
    /// When the proxy puts the server's name in front of its tools' names: `"always"`,
    /// `"on-collision"` (when absent) or `"never"`.
    #[serde(default)]
    pub prefix: Option<String>,
    /// What a result over the proxy's cap becomes: `"cut"` (when absent) or `"error"` — an
    /// error result naming its size, the cap and the artifact holding it, none of it sent.
    #[serde(default)]
    pub over_cap: Option<String>,
    /// Which copy of a result with a structure the proxy sends: `"auto"` (when absent: both,
    /// but the text alone for a tool whose structure only wraps it), `"both"`, `"text-only"`
    /// or `"structured-only"`.
    #[serde(default)]
    pub send: Option<String>,
}

/// Which of a server's tools the proxy serves: globs over the server's own names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ToolsConfig {
    /// Only these (every tool when empty).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Never these, even when allowed.
    #[serde(default)]
    pub deny: Vec<String>,
}

/// The shape a configuration file is written in, as errors show it.
const SHAPE: &str =
    r#"{"mcpServers": {"name": {"command": "program", "args": ["…"], "env": {"K": "V"}}}}"#;

/// What is wrong with a server's configuration: each says where, and what to write instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The configuration is not JSON of the `mcpServers` shape.
    #[error("the configuration is not valid JSON of the expected shape ({source}); write {SHAPE}")]
    NotJson {
        /// Where the JSON went wrong.
        source: serde_json::Error,
    },
    /// The configuration names no servers.
    #[error("the configuration names no servers; write {SHAPE}")]
    NoServers,
    /// A server has both a `command` and a `url`, or neither.
    #[error(
        "server `{server}` needs either a `command` or a `url`, not {}",
        if *both { "both" } else { "neither" }
    )]
    Target {
        /// The server's name.
        server: String,
        /// Whether it has both (else neither).
        both: bool,
    },
    /// A server is at a URL, and this build has no HTTP client.
    #[error(
        "server `{server}` is at a URL, and this build has no HTTP client (feature `mcp-http`)"
    )]
    NoHttp {
        /// The server's name.
        server: String,
    },
    /// A `${VAR}` in a server's settings could not be expanded.
    #[error("server `{server}`: {problem}")]
    Variable {
        /// The server's name.
        server: String,
        /// Which variable, and why.
        problem: Unexpanded,
    },
    /// A server's `prefix` is not one of the modes.
    #[error(
        "server `{server}`: `\"prefix\": \"{given}\"` is not a mode; write \"always\", \
         \"on-collision\" or \"never\""
    )]
    Prefix {
        /// The server's name.
        server: String,
        /// What the configuration says.
        given: String,
    },
    /// A server's `over_cap` is not one of the settings.
    #[error(
        "server `{server}`: `\"over_cap\": \"{given}\"` is not a setting; write \"cut\" (the \
         default) or \"error\""
    )]
    OverCap {
        /// The server's name.
        server: String,
        /// What the configuration says.
        given: String,
    },
    /// A server's `send` is not one of the settings.
    #[error(
        "server `{server}`: `\"send\": \"{given}\"` is not a setting; write \"auto\" (the \
         default), \"both\", \"text-only\" or \"structured-only\""
    )]
    Send {
        /// The server's name.
        server: String,
        /// What the configuration says.
        given: String,
    },
    /// A pattern of a server's `tools` is not a glob.
    #[error("server `{server}`: the tool pattern `{pattern}` is not a glob ({why})")]
    ToolPattern {
        /// The server's name.
        server: String,
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        why: String,
    },
    /// A server reached over HTTP was given a command's settings (`arg`, `args`, `env`).
    #[error(
        "MCP server `{server}` is reached over HTTP, so `{call}` (for a command the client \
         starts) does not apply; give the server its settings where it runs"
    )]
    CommandSettingOverHttp {
        /// The server's name.
        server: String,
        /// The builder's method that was called (`arg`, `args`, `env`).
        call: &'static str,
    },
}

/// Why a `${VAR}` could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unexpanded {
    /// The variable is not set and has no default.
    #[error("the variable `{name}` is not set; set it, or give a default: `${{{name}:-value}}`")]
    Unset {
        /// The variable.
        name: String,
    },
    /// A `${` without its `}`.
    #[error("`{text}` has a `${{` without its `}}`; write `${{NAME}}` or `${{NAME:-default}}`")]
    Unclosed {
        /// The text it is in.
        text: String,
    },
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
        expand_vars(text, &|name| std::env::var(name).ok()).map_err(|problem| {
            McpClientError::Config(ConfigError::Variable {
                server: server.to_owned(),
                problem,
            })
        })
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
        tools: config.tools.clone(),
        prefix: config.prefix.clone(),
        over_cap: config.over_cap.clone(),
        send: config.send.clone(),
    })
}

/// Expands `${VAR}` and `${VAR:-default}` in `text` with `lookup`.
fn expand_vars(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, Unexpanded> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(Unexpanded::Unclosed {
                text: text.to_owned(),
            });
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
                return Err(Unexpanded::Unset {
                    name: name.to_owned(),
                });
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
    let file: File = serde_json::from_str(text)
        .map_err(|error| McpClientError::Config(ConfigError::NotJson { source: error }))?;
    let servers = file.servers.unwrap_or_default();
    if servers.is_empty() {
        return Err(McpClientError::Config(ConfigError::NoServers));
    }
    for (name, server) in &servers {
        match (&server.command, &server.url) {
            (Some(_), None) | (None, Some(_)) => {}
            _ => {
                return Err(McpClientError::Config(ConfigError::Target {
                    server: name.clone(),
                    both: server.command.is_some(),
                }));
            }
        }
    }
    Ok(servers.into_iter().collect())
}

impl ServerConfig {
    /// Where this configuration (expanded) says the server is: a `command` or a `url`, not both
    /// and not neither; a `url` needs the `mcp-http` feature.
    pub(crate) fn target(&self, server: &str) -> Result<Target, McpClientError> {
        match (&self.command, &self.url) {
            (Some(program), None) => Ok(Target::Command {
                program: program.clone(),
                args: self.args.clone(),
                env: self.env.clone(),
                cwd: self.cwd.clone(),
            }),
            #[cfg(feature = "mcp-http")]
            (None, Some(url)) => Ok(Target::Url {
                url: url.clone(),
                headers: self.headers.clone(),
            }),
            #[cfg(not(feature = "mcp-http"))]
            (None, Some(_)) => Err(McpClientError::Config(ConfigError::NoHttp {
                server: server.to_owned(),
            })),
            (command, _) => Err(McpClientError::Config(ConfigError::Target {
                server: server.to_owned(),
                both: command.is_some(),
            })),
        }
    }
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
        assert_eq!(
            error,
            Unexpanded::Unset {
                name: "TOKEN".to_owned()
            }
        );
        assert!(error.to_string().contains("`TOKEN` is not set"), "{error}");
        let error = expand_vars("${OPEN", &lookup).unwrap_err();
        assert!(matches!(error, Unexpanded::Unclosed { .. }), "{error:?}");
        assert!(error.to_string().contains("without its"), "{error}");
    }

    #[test]
    fn a_bad_configuration_is_a_variant_to_match() {
        let config = |text: &str| match parse_servers_config(text) {
            Err(McpClientError::Config(error)) => error,
            other => panic!("{other:?}"),
        };
        assert!(matches!(config("{"), ConfigError::NotJson { .. }));
        assert!(matches!(
            config(r#"{"mcpServers": {}}"#),
            ConfigError::NoServers
        ));
        let both = config(r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#);
        assert!(matches!(&both, ConfigError::Target { server, both: true } if server == "a"));
        assert!(both.to_string().contains("not both"), "{both}");
        let neither = config(r#"{"mcpServers": {"a": {}}}"#);
        assert!(matches!(neither, ConfigError::Target { both: false, .. }));
    }
}
