//! `toolsmith proxy`: any MCP server's tools, served again through a budgeting registry.

use std::time::Duration;

use toolsmith::mcp::{McpClient, McpServer, parse_servers_config};
use toolsmith::tool::ToolLimits;
use toolsmith::{BudgetPolicy, Registry};

use crate::args::Proxy;
use crate::{Failure, fail};

/// Serves the upstream servers `options` names through a budgeting registry, on stdio.
pub(crate) async fn run(options: Proxy) -> Result<(), Failure> {
    if options.max_result_chars < 1_000 {
        return Err(fail(format!(
            "--max-result-chars {}: too small to hold a marker and some content; use 1000 \
             or more",
            options.max_result_chars
        )));
    }
    let init_timeout = Duration::from_secs(options.init_timeout.max(1));
    let timeout = Duration::from_secs(options.timeout.max(1));
    let limits = ToolLimits::default()
        .with_max_result_chars(Some(options.max_result_chars))
        .with_timeout(Some(timeout));
    let builders = match (&options.config, options.command.split_first()) {
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

    let store = crate::wiring::artifact_store(options.artifacts.as_ref())?;
    let budget = BudgetPolicy::default()
        .with_batch_budget_chars(options.max_result_chars)
        .with_per_result_max_chars(Some(options.max_result_chars));
    let mut builder = Registry::builder()
        .budget(budget)
        .artifacts(store)
        .default_timeout(Some(timeout));
    for client in &clients {
        for tool in client.tools() {
            builder = builder.dyn_tool(described(tool, options.max_result_chars));
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
