//! The README's tour as a program: a log-reading tool with tail-favouring limits, run through a
//! registry with an artifact store. It writes two logs to a temporary directory first.
//!
//! Run: `cargo run --example tour`

use std::borrow::Cow;

use toolsmith::{
    BudgetPolicy, DirStore, Registry, Tool, ToolCall, ToolContext, ToolError, ToolLimits,
    ToolOutput, async_trait,
};

/// Arguments of `tail_log`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct TailLogArgs {
    /// The log file, relative to the workspace.
    path: String,
}

struct TailLog;

#[async_trait]
impl Tool for TailLog {
    type Args = TailLogArgs;

    fn name(&self) -> Cow<'static, str> {
        "tail_log".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Reads a log file.".into()
    }

    fn limits(&self) -> ToolLimits {
        // Errors come last in a log: keep 90% of a trimmed result from the bottom.
        ToolLimits::default()
            .with_head_ratio(0.1)
            .with_max_result_lines(Some(200))
    }

    async fn call(&self, args: TailLogArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // cx.budget() is this call's allowance; a tool may pre-trim to it, or leave it to the registry.
        Ok(tokio::fs::read_to_string(&args.path).await?.into())
    }
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
        .tool(TailLog)
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
            result.is_error,
            result.meta.allowance,
            result.meta.original_chars,
            result.content_chars(),
            result.meta.trimmed,
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
