//! `toolsmith proxy`: any MCP server's tools, served again through a budgeting registry.

use std::path::PathBuf;
use std::time::Duration;

use toolsmith::mcp::{McpClient, McpServer, parse_servers_config};
use toolsmith::tool::ToolLimits;
use toolsmith::{BudgetPolicy, Registry};

use crate::{Failure, fail};

/// What `proxy` was asked to serve.
#[derive(Debug, clap::Args)]
pub(crate) struct Proxy {
    /// The most characters a result may have; longer ones are cut (head and tail kept) and
    /// kept whole as artifacts read with read_artifact.
    #[arg(long, default_value_t = 20_000)]
    max_result_chars: usize,
    /// Where full outputs of cut results are kept (as for the other commands). Default:
    /// `toolsmith/artifacts` in your cache directory.
    #[arg(long)]
    artifacts: Option<PathBuf>,
    /// A configuration file of servers, `{"mcpServers": {"name": {"command": …, "args": […],
    /// "env": {…}}}}` (as Claude Desktop, Claude Code and Cursor write it): their tools are
    /// served together, named `<server>__<tool>`.
    #[arg(long, conflicts_with = "command")]
    config: Option<PathBuf>,
    /// Seconds a server has to start and answer `initialize`.
    #[arg(long, default_value_t = 30)]
    init_timeout: u64,
    /// Seconds a call may run before it is cancelled.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// The server to start, after `--`: `toolsmith proxy -- npx -y @some/server`.
    #[arg(last = true, value_name = "CMD")]
    command: Vec<String>,
}

impl Proxy {
    pub(crate) async fn run(self) -> Result<(), Failure> {
        if self.max_result_chars < 1_000 {
            return Err(fail(format!(
                "--max-result-chars {}: too small to hold a marker and some content; use 1000 \
                 or more",
                self.max_result_chars
            )));
        }
        let init_timeout = Duration::from_secs(self.init_timeout.max(1));
        let timeout = Duration::from_secs(self.timeout.max(1));
        let limits = ToolLimits::default()
            .with_max_result_chars(Some(self.max_result_chars))
            .with_timeout(Some(timeout));
        let builders = match (&self.config, self.command.split_first()) {
            (Some(path), _) => {
                let text = std::fs::read_to_string(path).map_err(|error| {
                    fail(format!(
                        "--config {}: cannot read it ({error})",
                        path.display()
                    ))
                })?;
                let servers = parse_servers_config(&text)
                    .map_err(|error| fail(format!("--config {}: {error}", path.display())))?;
                servers
                    .iter()
                    .map(|(name, server)| Ok(McpClient::from_config(name, server)?.prefixed(true)))
                    .collect::<Result<Vec<_>, Failure>>()?
            }
            (None, Some((program, args))) => {
                let name = std::path::Path::new(program).file_name().map_or_else(
                    || program.clone(),
                    |name| name.to_string_lossy().into_owned(),
                );
                vec![McpClient::stdio(name, program).args(args)]
            }
            (None, None) => {
                return Err(fail(
                    "name the server to proxy after `--` (toolsmith proxy -- npx -y @some/server) \
                     or give --config FILE",
                ));
            }
        };
        let connecting = builders
            .into_iter()
            .map(|builder| builder.init_timeout(init_timeout).limits(limits).connect());
        let clients = futures_util::future::join_all(connecting)
            .await
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;

        let store = crate::wiring::artifact_store(self.artifacts.as_ref())?;
        let budget = BudgetPolicy::default()
            .with_batch_budget_chars(self.max_result_chars)
            .with_per_result_max_chars(Some(self.max_result_chars));
        let mut builder = Registry::builder()
            .budget(budget)
            .artifacts(store)
            .default_timeout(Some(timeout));
        for client in &clients {
            for tool in client.tools() {
                builder = builder.dyn_tool(described(tool, self.max_result_chars));
            }
        }
        let registry = builder.build()?;
        let served = McpServer::new(registry)?.serve_stdio().await;
        // The upstreams stop with their clients (their process groups are killed).
        for client in &clients {
            client.shutdown().await;
        }
        served?;
        Ok(())
    }
}

/// `tool` with its cap stated in its description.
fn described(
    tool: std::sync::Arc<dyn toolsmith::tool::DynTool>,
    cap: usize,
) -> std::sync::Arc<dyn toolsmith::tool::DynTool> {
    let note = format!(
        "\n\nResults over {} characters are cut to that size (their beginning and end kept); \
         the whole result stays readable with read_artifact.",
        toolsmith::trim::grouped(cap)
    );
    toolsmith::tool::with_spec(tool, |spec| spec.description.push_str(&note))
}
