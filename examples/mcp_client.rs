//! An agent's registry with the standard tools and a remote MCP server's tools, in one batch.
//!
//! The remote server here is this same program started again with `--serve` (an issue tracker
//! whose `list_issues` returns far more than a model should read), so the example needs no
//! network and nothing installed; point `McpClient::stdio` at any MCP server instead
//! (`npx -y @modelcontextprotocol/server-github`, say). Run it with
//! `cargo run --example mcp_client`.

use serde_json::json;
use toolsmith::mcp::McpClient;
use toolsmith::{BudgetPolicy, Registry, ToolCall, ToolError, tool};
use toolsmith_std::Sandbox;

/// Lists the issues of the tracker, one per line.
#[tool(read_only)]
async fn list_issues() -> Result<String, ToolError> {
    Ok((1..=5_000)
        .map(|n| format!("#{n}: the widget breaks when the gadget is {n} cm wide\n"))
        .collect())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    if std::env::args().nth(1).as_deref() == Some("--serve") {
        // The "remote" server: a registry of its own, served on stdio. Its own cap is generous;
        // the agent's registry below decides what the model sees.
        let registry = Registry::builder()
            .tool(list_issues())
            .budget(BudgetPolicy::default().with_batch_budget_chars(1_000_000))
            .build()?;
        toolsmith::mcp::McpServer::new(registry)?
            .serve_stdio()
            .await?;
        return Ok(());
    }

    let tracker = McpClient::stdio("tracker", std::env::current_exe()?.to_string_lossy())
        .arg("--serve")
        .prefixed(true)
        .connect()
        .await?;
    let workspace = std::env::current_dir()?;
    let registry = toolsmith_std::register(Registry::builder())
        .tools(tracker.tools())
        .state(Sandbox::new(&workspace)?)
        .artifacts(toolsmith::DirStore::new_session()?)
        .budget(BudgetPolicy::default().with_batch_budget_chars(12_000))
        .build()?;

    let results = registry
        .turn()
        .execute([
            ToolCall::new("toolu_01", "list_directory", json!({})),
            ToolCall::new("toolu_02", "tracker__list_issues", json!({})),
        ])
        .await;
    for result in &results {
        println!(
            "── {} {} ({} of {} chars{})",
            result.call_id,
            result.tool,
            result.content.chars().count(),
            result.meta.original_chars,
            if result.meta.cut.is_some() {
                ", cut"
            } else {
                ""
            }
        );
        let shown: Vec<&str> = result.content.lines().take(4).collect();
        println!("{}", shown.join("\n"));
        if let Some(marker) = toolsmith::trim::find_marker(&result.content) {
            println!(
                "   … {} of {} chars kept; the rest is an artifact",
                marker.kept, marker.total
            );
        }
    }
    tracker.shutdown().await;
    Ok(())
}
