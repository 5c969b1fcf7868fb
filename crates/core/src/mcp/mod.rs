//! MCP on both sides, with the official Rust SDK (`rmcp`). Behind the `mcp` feature.
//!
//! - [`McpServer`] serves any [`Registry`](crate::Registry) to MCP clients: every result gets
//!   the budget, the post-trim and the artifacts of any other call. [`serve_stdio`] serves one
//!   on stdio.
//! - [`McpClient`] connects to an MCP server (a child process on stdio, or streamable HTTP) and
//!   turns each of its tools into a [`DynTool`](crate::tool::DynTool) a registry runs like its own:
//!   budgeted, trimmed, kept whole as artifacts.
//! - [`ClientApprover`] asks the user of the client that called, by elicitation, whether a call
//!   may run.
//!
//! - [`Proxy`] relays MCP servers to clients (`toolsmith proxy`): every message passes as it
//!   came, but a tool result is cut to the cap and its whole kept as an artifact. It speaks to
//!   each side in its own era of the protocol (the handshake's, or 2026-07-28's).
//!
//! The proxy's relayed answers are fitted by `outgoing`: the structure cut by its schema, the
//! texts that repeat it written again from the cut, media, the link to the artifact, a cap in
//! tokens. `McpServer` sends what the registry's own fit made of a result
//! (`registry/fit.rs`), with `outgoing`'s link to the artifact only: two owners of fitting a
//! result, not yet one.

mod approve;
mod caps;
mod child;
mod client;
#[cfg(feature = "mcp-http")]
mod http;
mod link;
mod logging;
mod metrics;
pub(crate) mod outgoing;
pub(crate) mod relay;
mod server;
mod target;
mod transport;
mod wire;

pub use approve::ClientApprover;
pub use caps::{
    MAX_BLOCKS, MAX_DESCRIPTION_CHARS, MAX_LIST_PAGES, MAX_RELAYED_PAGES, MAX_RELAYED_TOOLS,
    MAX_RESULT_META_KEY, MAX_SCHEMA_CHARS, MAX_TOOLS_PER_SERVER, RELAY_PAGE_TOOLS,
};
pub use client::{
    ConfigError, McpClient, McpClientBuilder, McpClientError, PREFIX_SEPARATOR, ServerConfig,
    ToolsConfig, Unexpanded, expand_config, parse_servers_config,
};
#[cfg(feature = "mcp-http")]
pub use http::{HttpError, HttpOptions, HttpServer, Limits, METRICS_PATH};
pub use metrics::{Metrics, MetricsOptions, OTHER_TOOL};
pub use relay::{Copies, Prefix, Proxy, ProxyError, Upstream};
pub use server::{McpServer, ServeError, serve_stdio};
pub use transport::refuse_stdio;

#[doc(hidden)]
pub use relay::relay_tool_answer as __relay_tool_answer;
