//! Where an MCP server is, for every side that reaches one (the MCP client's tools, the
//! proxy's upstreams): a command started as a child process, or a streamable HTTP endpoint.
//! One type and its defaults (and how long a server has to start, the longest message read
//! from it), written once (a configuration is read into one by the client's
//! `ServerConfig::target`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How long a server has to start and answer its first requests (`initialize` or
/// `server/discover`, and each page of a listing), unless the client or the proxy is told.
pub(crate) const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest message read from a server on stdio by default, in bytes: a result larger than
/// this could not be kept as an artifact whole anyway.
pub(crate) const DEFAULT_MAX_MESSAGE_BYTES: usize = 256 << 20;

/// Where a server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A command, spoken to on its stdin and stdout; its stderr is this process's.
    Command {
        program: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint, each request with `headers`.
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    Url {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl Target {
    /// `program`, with no arguments, no environment of its own, in this process's directory.
    pub(crate) fn command(program: impl Into<String>) -> Self {
        Target::Command {
            program: program.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
        }
    }

    /// The endpoint at `url`, with no headers of its own.
    #[cfg(feature = "mcp-http")]
    pub(crate) fn url(url: impl Into<String>) -> Self {
        Target::Url {
            url: url.into(),
            headers: BTreeMap::new(),
        }
    }
}
