//! A custom registry served over MCP on stdio: one tool written here beside the standard tools,
//! all of them budgeted. Point an MCP client (Claude Desktop, an IDE, `rmcp`'s client) at
//! `cargo run --example mcp_server`; it serves until the client disconnects.

use toolsmith::{Registry, ToolError, tool};
use toolsmith_std::Sandbox;

/// Counts the lines, words and chars of a text.
#[tool(max_result_chars = 200)]
async fn word_count(
    /// The text to count.
    text: String,
) -> Result<String, ToolError> {
    Ok(format!(
        "{} lines, {} words, {} chars",
        toolsmith::trim::line_count(&text),
        text.split_whitespace().count(),
        text.chars().count()
    ))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let artifacts = toolsmith::DirStore::new_session()?;
    let sandbox = Sandbox::new(std::env::current_dir()?)?;
    let registry = toolsmith_std::register(Registry::builder())
        .tool(word_count())
        .state(sandbox)
        .artifacts(artifacts)
        .build()?;
    // Logs go to stderr: stdout is the protocol.
    eprintln!(
        "serving {} tools over MCP on stdio",
        registry.tools().count()
    );
    toolsmith::mcp::serve_stdio(registry).await?;
    Ok(())
}
