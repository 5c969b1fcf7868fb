//! The registry on real files: one batch of parallel calls of the standard tools over this
//! repository that overflows its budget, printed so you can see the split, a refusal before any
//! work, the trims, the markers and the artifacts.
//!
//! Run: `cargo run --example demo`

use std::path::PathBuf;

use serde_json::json;
use toolsmith::{BudgetPolicy, DirStore, Registry, ToolCall, ToolResult};
use toolsmith_std::Sandbox;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let artifacts = DirStore::new_session()?;
    let artifact_dir = artifacts.path().to_path_buf();
    let budget = 24_000;
    let registry = toolsmith_std::register(Registry::builder())
        .state(Sandbox::new(&root)?.allow_reading(&artifact_dir)?)
        .artifacts(artifacts)
        .budget(BudgetPolicy::default().with_batch_budget_chars(budget))
        .build()?;

    let calls = vec![
        ToolCall::new(
            "toolu_01",
            "read_file",
            json!({ "path": "Cargo.toml", "limit": 12 }),
        ),
        ToolCall::new(
            "toolu_02",
            "read_file",
            json!({ "path": "crates/core/src/registry/execute.rs" }),
        ),
        ToolCall::new(
            "toolu_03",
            "grep",
            json!({ "pattern": "fn ", "path": "crates", "max_results": 2000 }),
        ),
        ToolCall::new(
            "toolu_04",
            "list_directory",
            json!({ "path": "crates", "depth": 2 }),
        ),
        ToolCall::new(
            "toolu_05",
            "run_command",
            json!({ "command": "grep -rn 'impl ' crates | sort; echo 'error: the last line survives'" }),
        ),
        ToolCall::new(
            "toolu_06",
            "read_file",
            json!({ "path": "../../etc/passwd" }),
        ),
    ];
    println!(
        "toolsmith demo: {} parallel calls of the standard tools over {}, batch budget {budget} \
         chars (fair share)\n",
        calls.len(),
        root.display()
    );
    let mut turn = registry.turn();
    let results = turn.execute(calls).await;

    print_table(&results);
    for result in &results {
        print_result(result);
    }

    // The model recovers what was cut, without any filesystem access: the first lines after
    // the kept head.
    let trimmed = results.iter().find(|r| r.meta.artifact.is_some());
    if let Some((id, cut)) =
        trimmed.and_then(|r| Some((r.meta.artifact.clone()?, r.meta.cut.clone()?)))
    {
        let offset = cut.head_lines.map_or(0, |span| span.last);
        let page = turn
            .execute([ToolCall::new(
                "toolu_07",
                "read_artifact",
                json!({ "id": id.as_str(), "offset": offset, "limit": 5 }),
            )])
            .await;
        println!(
            "── read_artifact id={id} offset={offset} limit=5: lines the model did not see ──"
        );
        println!("{}", page[0].content);
    }
    println!(
        "total shown to the model: {} chars of {budget}; full outputs kept in {}",
        results.iter().map(ToolResult::content_chars).sum::<usize>(),
        artifact_dir.display()
    );
    Ok(())
}

fn print_table(results: &[ToolResult]) {
    println!(
        "{:<9} {:<16} {:>9} {:>9} {:>9} {:>7} {:>8}  artifact",
        "call", "tool", "share", "allowance", "original", "lines", "shown"
    );
    for r in results {
        println!(
            "{:<9} {:<16} {:>9} {:>9} {:>9} {:>7} {:>8}  {}",
            r.call_id,
            r.tool,
            r.meta.initial_allowance,
            r.meta.allowance,
            r.meta.original_chars,
            r.meta.original_lines,
            r.content_chars(),
            match (&r.meta.artifact, r.is_error) {
                (Some(id), _) => id.as_str().to_owned(),
                (None, true) => "(error)".to_owned(),
                // A tool that trimmed its own output (run_command) names its artifact in its
                // marker.
                (None, false) => r
                    .content
                    .split("full output: artifact ")
                    .nth(1)
                    .and_then(|rest| rest.split(',').next())
                    .map_or_else(|| "-".to_owned(), |id| format!("{id} (by the tool)")),
            }
        );
    }
    println!();
}

/// The first lines, the marker and the last lines of what the model sees.
fn print_result(result: &ToolResult) {
    println!("── {} ({}) ──", result.call_id, result.tool);
    let lines: Vec<&str> = result.content.lines().collect();
    let marker = lines.iter().position(|l| l.starts_with("[toolsmith:"));
    let show = |range: std::ops::Range<usize>| {
        for line in &lines[range] {
            // Markers in full; content lines shortened to keep the page readable.
            let short: String = if line.starts_with("[toolsmith:") {
                (*line).to_owned()
            } else {
                line.chars().take(100).collect()
            };
            println!("  {short}");
        }
    };
    match marker {
        Some(at) => {
            show(at.saturating_sub(2)..at + 1);
            show((at + 1).min(lines.len())..(at + 3).min(lines.len()));
        }
        None => show(0..lines.len().min(3)),
    }
    if marker.is_none() && lines.len() > 3 {
        println!("  … ({} lines in all, untouched)", lines.len());
    }
    println!();
}
