//! A 1,000-call batch whose every result is trimmed and kept as an artifact, into an empty
//! `DirStore` and into one that already holds 100,000 artifacts, in one run: what retention
//! costs a commit as the store grows.
//!
//! Run: `cargo bench --bench artifacts` (makes its stores under the system temp dir and removes
//! them after).

use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith::artifacts::ArtifactId;
use toolsmith::{BudgetPolicy, DirStore, Registry, ToolCall};
use toolsmith_workspace::Emit;

const CALLS: usize = 1_000;

fn batch(
    existing: usize,
    runtime: &tokio::runtime::Runtime,
) -> Result<Duration, Box<dyn std::error::Error>> {
    let tmp = tempfile::tempdir()?;
    let dir = tmp.path().join("store");
    drop(DirStore::open(&dir)?);
    for _ in 0..existing {
        std::fs::write(dir.join(format!("{}.txt", ArtifactId::generate()?)), "x\n")?;
    }
    let registry = Registry::builder()
        .tool(Emit::default())
        .artifacts(DirStore::open(&dir)?)
        .budget(BudgetPolicy::default().with_batch_budget_chars(CALLS * 1_000))
        .max_calls_per_turn(CALLS)
        .max_calls_per_tool(CALLS)
        .build()?;
    let calls: Vec<ToolCall> = (0..CALLS)
        .map(|i| ToolCall::new(format!("c{i}"), "emit", json!({ "lines": 200 })))
        .collect();
    let started = Instant::now();
    let results = runtime.block_on(registry.turn().execute(calls));
    let elapsed = started.elapsed();
    let stored = results.iter().filter(|r| r.meta.artifact.is_some()).count();
    assert_eq!(stored, CALLS, "every result was kept as an artifact");
    Ok(elapsed)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|arg| arg == "--list") {
        return Ok(()); // `cargo bench -- --list` asks what benches exist
    }
    let runtime = tokio::runtime::Runtime::new()?;
    for existing in [0, 100_000] {
        let elapsed = batch(existing, &runtime)?;
        println!(
            "artifacts/batch of {CALLS} into a store of {existing} artifacts: {:.3} s",
            elapsed.as_secs_f64()
        );
    }
    Ok(())
}
