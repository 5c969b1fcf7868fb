//! The allowance is spent on the output, on every cutting path of the registry: a cut of
//! outputs of distinct lines (shuffled numbers, a request log, a CSV, a listing, a test run,
//! redrawn progress) is at least 85% verbatim lines of the output, the must-see lines kept; a
//! count folds losslessly, every line rebuilt from the fold. The same outputs go through the
//! registry's cut of a text, of a stream, through run_command (`cat`) and grep, and the same
//! lines come out of the text and the stream.

use serde_json::json;
use toolsmith::artifacts::MemoryStore;
use toolsmith::tool::{Tool, ToolAnnotations, ToolContext, ToolError, ToolOutput};
use toolsmith::trim::{Render, Salience};
use toolsmith::{BudgetPolicy, Registry, ToolCall, ToolResult, async_trait};

use crate::shapes;
use shapes::{Shape, lines_in, missing, rebuild, shapes, verbatim_share};

/// The least share of the allowance that is the output's own lines.
const VERBATIM: f64 = 0.85;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ShowArgs {
    /// The shape's index.
    index: usize,
}

/// Returns a shape's text as a text, or (`stream`) in chunks of 4 KiB, shown as a terminal
/// shows it (as run_command's output is).
struct Show {
    stream: bool,
}

#[async_trait]
impl Tool for Show {
    type Args = ShowArgs;

    fn name(&self) -> std::borrow::Cow<'static, str> {
        if self.stream { "stream" } else { "text" }.into()
    }

    fn description(&self) -> std::borrow::Cow<'static, str> {
        "Shows an output.".into()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new().with_read_only(true)
    }

    fn limits(&self) -> toolsmith::tool::ToolLimits {
        toolsmith::tool::ToolLimits::default()
            .with_trim(toolsmith::trim::TrimStyle::default().with_render(Render::OnCut))
    }

    async fn call(&self, args: ShowArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let text = shapes().swap_remove(args.index).text;
        if !self.stream {
            return Ok(ToolOutput::text(text));
        }
        let chunks: Vec<Result<Vec<u8>, ToolError>> = text
            .as_bytes()
            .chunks(4_096)
            .map(|chunk| Ok(chunk.to_vec()))
            .collect();
        Ok(ToolOutput::stream(futures_util::stream::iter(chunks)))
    }
}

fn registry(dir: &std::path::Path, store: &MemoryStore, budget: usize) -> Registry {
    toolsmith_std::register(Registry::builder())
        .tool(Show { stream: false })
        .tool(Show { stream: true })
        .state(toolsmith_std::Sandbox::new(dir).unwrap())
        .artifacts(store.clone())
        .budget(BudgetPolicy::default().with_batch_budget_chars(budget))
        .build()
        .unwrap()
}

async fn one(registry: &Registry, tool: &str, args: serde_json::Value) -> ToolResult {
    registry
        .turn()
        .execute([ToolCall::new("c", tool, args)])
        .await
        .remove(0)
}

/// Every path's cut of `shape`: the registry's of a text and of a stream, run_command's, and
/// grep's (every line matches), with the full output each stored.
async fn every_path(
    registry: &Registry,
    store: &MemoryStore,
    index: usize,
) -> Vec<(&'static str, ToolResult, String)> {
    let mut cuts = Vec::new();
    for (path, tool, args) in [
        (
            "the registry's cut of a text",
            "text",
            json!({ "index": index }),
        ),
        (
            "the registry's cut of a stream",
            "stream",
            json!({ "index": index }),
        ),
        (
            "run_command",
            "run_command",
            json!({ "command": "cat out.txt" }),
        ),
        (
            "grep",
            "grep",
            json!({ "pattern": "^", "path": "out.txt", "max_results": 1_000_000 }),
        ),
    ] {
        let result = one(registry, tool, args).await;
        assert!(!result.is_error(), "{path}: {}", result.content);
        let id = result.meta.artifact.as_ref().expect("cut and stored");
        let full = store.get(id).unwrap();
        cuts.push((path, result, full));
    }
    cuts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outputs_of_distinct_lines_are_cut_to_verbatim_lines_on_every_path() {
    let dir = tempfile::tempdir().unwrap();
    for budget in [4_000, 20_000] {
        let store = MemoryStore::new();
        let registry = registry(dir.path(), &store, budget);
        for (
            index,
            Shape {
                name,
                text,
                must,
                distinct,
            },
        ) in shapes().into_iter().enumerate()
        {
            if !distinct {
                continue;
            }
            std::fs::write(dir.path().join("out.txt"), &text).unwrap();
            for (path, result, full) in every_path(&registry, &store, index).await {
                let shown = &result.content;
                assert!(result.content_chars() <= budget, "{name} via {path}");
                let share = verbatim_share(shown, &full, budget);
                assert!(
                    share >= VERBATIM,
                    "{name} via {path} at {budget}: {:.1}% verbatim\n{shown}",
                    share * 100.0
                );
                // Lines alike are not folded: every line the cut says it shows is there.
                let cut = result.meta.cut.as_ref().unwrap();
                assert_eq!(cut.folded_lines, 0, "{name} via {path}");
                assert_eq!(
                    rebuild(shown),
                    lines_in(&full, &cut.spans),
                    "{name} via {path}"
                );
                if path != "grep" {
                    let missing = missing(shown, &must);
                    assert!(missing.is_empty(), "{name} via {path}: missing {missing:?}");
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_and_a_stream_of_it_keep_the_same_lines() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::new();
    let registry = registry(dir.path(), &store, 10_000);
    for (index, shape) in shapes().into_iter().enumerate() {
        let text = one(&registry, "text", json!({ "index": index })).await;
        let stream = one(&registry, "stream", json!({ "index": index })).await;
        let kept = |result: &ToolResult| -> Vec<String> {
            result
                .content
                .lines()
                .filter(|line| !line.starts_with("[… "))
                .map(str::to_owned)
                .collect()
        };
        let (from_text, from_stream) = (kept(&text), kept(&stream));
        // The marker names each's own artifact; every other line is the same.
        let differ: Vec<(&String, &String)> = from_text
            .iter()
            .zip(&from_stream)
            .filter(|(a, b)| a != b && !a.starts_with("[toolsmith:"))
            .collect();
        assert!(differ.is_empty(), "{}: {differ:?}", shape.name);
        assert_eq!(from_text.len(), from_stream.len(), "{}", shape.name);
        assert_eq!(text.meta.cut, stream.meta.cut, "{}", shape.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_folds_losslessly_on_every_path_and_every_line_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::new();
    let registry = registry(dir.path(), &store, 4_000);
    let shape = shapes().swap_remove(0);
    assert_eq!(shape.name, "counting numbers");
    std::fs::write(dir.path().join("out.txt"), &shape.text).unwrap();
    for (path, result, full) in every_path(&registry, &store, 0).await {
        if path == "grep" {
            // grep numbers its lines: two numbers count up, which is no lossless run.
            continue;
        }
        let marker = toolsmith::trim::find_marker(&result.content).expect("a marker");
        assert!(
            marker.condensed,
            "{path}: nothing is left out\n{}",
            result.content
        );
        let rebuilt = rebuild(&result.content);
        let whole: Vec<&str> = full.lines().collect();
        assert_eq!(
            rebuilt, whole,
            "{path}: every line rebuilt from\n{}",
            result.content
        );
        assert!(result.content_chars() < 300, "{path}: {}", result.content);
    }
}

#[tokio::test]
async fn folds_are_lossless_in_both_directions_and_for_blocks() {
    // Runs at the tail (walked backward), a repeated block, and a count in one of several
    // numbers, each rebuilt exactly.
    let mut text = String::new();
    for i in 0..3_000 {
        text.push_str(&format!("row {i}: {}\n", i * 7_919 % 10_007));
    }
    for _ in 0..500 {
        text.push_str("  File \"walk.py\", line 9, in walk\n    return walk(node.next)\n");
    }
    text.push_str("RecursionError: maximum recursion depth exceeded\n");
    for i in 1..=2_000 {
        text.push_str(&format!("retry 3 of 5: job {i} queued at 12:00\n"));
    }
    let style = toolsmith::trim::TrimStyle::default().with_salience(Salience::Off);
    let cut = toolsmith::trim::fit(&text, 6_000, &style);
    let shown = cut.text();
    assert!(
        shown.contains("\n[lines 3,003-4,000: the 2 lines above, 499 more times]\n"),
        "{shown}"
    );
    assert!(
        shown.ends_with("\n[lines 4,003-6,001: 2 to 2000 in its 3rd number, one a line]"),
        "{shown}"
    );
    // What the tail shows rebuilds to the output's last lines.
    let rebuilt = rebuild(shown);
    let tail_start = rebuilt
        .iter()
        .position(|line| line.starts_with("  File"))
        .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        rebuilt[tail_start..],
        lines[lines.len() - (rebuilt.len() - tail_start)..]
    );
}
