//! The README's tour as a program: a log-reading tool with tail-favouring limits, run through a
//! registry with an artifact store. It writes two logs to a temporary directory first.
//!
//! Run: `cargo run --example tour`

use toolsmith::tool::Audience;
use toolsmith::{BudgetPolicy, DirStore, Registry, ToolCall, ToolContext, ToolError, tool};

/// Reads a log file.
#[tool(head_ratio = 0.1, max_result_lines = 200)] // errors come last in a log: keep the tail
async fn tail_log(
    /// The log file, relative to the workspace.
    path: String,
    cx: &ToolContext,
) -> Result<String, ToolError> {
    // Progress goes to whoever subscribed, never into the result or the budget.
    cx.progress(
        Audience::Log,
        format!("reading {path} with {} chars allowed", cx.allowance()),
    );
    // ToolError::io names the path: "Error: `build.log` was not found."
    let log = tokio::fs::read_to_string(&path).await;
    log.map_err(|error| ToolError::io(&path, error))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("toolsmith-tour-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let build_log = dir.join("build.log");
    let test_log = dir.join("test.log");
    let mut build = String::new();
    for i in 1..=3_000 {
        build.push_str(&format!("   Compiling crate_{i} v0.1.0\n"));
    }
    build.push_str("error[E0382]: borrow of moved value: `error`\n");
    std::fs::write(&build_log, build)?;
    std::fs::write(&test_log, "test result: ok. 52 passed; 0 failed\n")?;

    let registry = Registry::builder()
        .tool(tail_log())
        .artifacts(DirStore::new_session()?) // full outputs kept; read_artifact registered
        .budget(BudgetPolicy::default()) // 80,000 chars per batch, fair share
        .build()?;

    let mut turn = registry.turn(); // caps: 20 calls per turn, 5 per tool
    let results = turn
        .execute(vec![
            ToolCall::new(
                "toolu_01",
                "tail_log",
                serde_json::json!({ "path": build_log }),
            ),
            ToolCall::new(
                "toolu_02",
                "tail_log",
                serde_json::json!({ "path": test_log }),
            ),
        ])
        .await;

    for result in &results {
        // One result per call, in order; content is within result.meta.allowance chars.
        let last = result.content.lines().last().unwrap_or_default();
        println!(
            "{} error={} allowance={} original={} shown={} trimmed={} last line: {last}",
            result.call_id,
            result.is_error(),
            result.meta.allowance,
            result.meta.original_chars,
            result.content_chars(),
            result.meta.trimmed(),
        );
        if let Some(marker) = result
            .content
            .lines()
            .find(|l| l.starts_with("[toolsmith:"))
        {
            println!("  {marker}");
        }
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
