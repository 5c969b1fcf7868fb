//! Budget before work: allowances planned from size hints, refusals judged against them.

use std::borrow::Cow;
use std::fs;
use std::time::Duration;

use serde_json::json;
use toolsmith::tool::{SizeHint, ToolAnnotations};
use toolsmith::{
    BudgetPolicy, Registry, Tool, ToolCall, ToolContext, ToolError, ToolOutput, ToolResult,
    async_trait,
};
use toolsmith_std::Sandbox;
use toolsmith_workspace::Emit;

fn std_registry(root: &std::path::Path) -> Registry {
    toolsmith_std::register(Registry::builder())
        .state(Sandbox::new(root).unwrap())
        .tool(Emit::default())
        .budget(BudgetPolicy::default())
        .build()
        .unwrap()
}

fn text_of_lines(lines: usize, width: usize) -> String {
    (0..lines)
        .map(|i| format!("{i:0>width$}\n", width = width - 1))
        .collect()
}

async fn run(registry: &Registry, calls: Vec<ToolCall>) -> Vec<ToolResult> {
    registry.turn().execute(calls).await
}

#[tokio::test]
async fn a_big_read_beside_a_small_one_gets_what_the_small_one_leaves() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("small.txt"), text_of_lines(40, 45)).unwrap();
    fs::write(dir.path().join("big.txt"), text_of_lines(3_000, 95)).unwrap();
    let registry = std_registry(dir.path());
    let results = run(
        &registry,
        vec![
            ToolCall::new("a", "read_file", json!({ "path": "small.txt" })),
            ToolCall::new(
                "b",
                "read_file",
                json!({ "path": "big.txt", "limit": 2_000 }),
            ),
        ],
    )
    .await;
    assert!(!results[0].is_error() && !results[0].meta.trimmed());
    let big = &results[1];
    assert!(!big.is_error(), "{}", big.content);
    // Before the plan, the big read saw its even share (40,000) and stopped there.
    assert!(big.meta.initial_allowance >= 75_000, "{:?}", big.meta);
    assert!(big.content_chars() >= 75_000, "{}", big.content_chars());
    assert!(big.content_chars() <= big.meta.allowance);
}

#[tokio::test]
async fn a_30_kb_read_beside_tiny_calls_is_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = text_of_lines(600, 50);
    fs::write(dir.path().join("log.txt"), &file).unwrap();
    let registry = std_registry(dir.path());
    let mut calls = vec![ToolCall::new(
        "read",
        "read_file",
        json!({ "path": "log.txt" }),
    )];
    calls.extend((0..5).map(|i| ToolCall::new(format!("tiny{i}"), "emit", json!({ "lines": 3 }))));
    let results = run(&registry, calls).await;
    let read = &results[0];
    assert!(!read.is_error(), "{}", read.content);
    assert!(!read.meta.trimmed(), "{:?}", read.meta);
    assert!(read.content.contains("   600\t"), "the last line is shown");
    assert!(
        results[1..]
            .iter()
            .all(|r| r.content == "line 1\nline 2\nline 3\n")
    );
}

#[tokio::test]
async fn a_refused_read_leaves_its_allowance_to_the_others() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("huge.txt"), text_of_lines(20_000, 50)).unwrap();
    let registry = std_registry(dir.path());
    let results = run(
        &registry,
        vec![
            ToolCall::new("huge", "read_file", json!({ "path": "huge.txt" })),
            ToolCall::new("emit", "emit", json!({ "lines": 10_000 })),
        ],
    )
    .await;
    let refused = &results[0];
    assert!(refused.is_error());
    assert_eq!(
        refused.meta.error_kind,
        Some(toolsmith::tool::ErrorKind::TooLarge)
    );
    // The refusal is judged against what the plan gave the read: the whole batch, less the
    // half share set aside for the call without an estimate (80,000 - 20,000 chars).
    assert!(
        refused
            .content
            .contains("exceeds maximum allowed tokens (15,000)"),
        "{}",
        refused.content
    );
    let emitted = &results[1];
    assert!(
        emitted.meta.initial_allowance > 70_000,
        "the refused call's allowance went to the other: {:?}",
        emitted.meta
    );
    assert!(emitted.content_chars() > 70_000);
}

/// A tool whose estimate never comes.
struct SlowHint;

#[async_trait]
impl Tool for SlowHint {
    type Args = serde_json::Map<String, serde_json::Value>;

    fn name(&self) -> Cow<'static, str> {
        "slow_hint".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Estimates forever, then answers at once.".into()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new().with_read_only(true)
    }

    fn size_hint<'a>(
        &'a self,
        _args: &'a Self::Args,
        _cx: &'a ToolContext,
    ) -> Option<toolsmith::tool::BoxFuture<'a, Result<Option<SizeHint>, ToolError>>> {
        Some(Box::pin(std::future::pending()))
    }

    async fn call(&self, _args: Self::Args, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(format!("ran with {}", cx.allowance()).into())
    }
}

#[tokio::test]
async fn a_hint_that_does_not_come_in_time_counts_as_none() {
    let registry = Registry::builder()
        .tool(SlowHint)
        .tool(Emit::default())
        .size_hint_timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let results = run(
        &registry,
        vec![
            ToolCall::new("a", "slow_hint", json!({})),
            ToolCall::new("b", "emit", json!({ "lines": 1 })),
        ],
    )
    .await;
    assert_eq!(results[0].content, "ran with 40000");
    assert_eq!(results[1].content, "line 1\n");
}

#[tokio::test]
async fn a_small_file_is_read_whole_at_a_small_allowance() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tiny.txt"), "fifteen chars!\n").unwrap();
    let registry = toolsmith_std::register(Registry::builder())
        .state(Sandbox::new(dir.path()).unwrap())
        .budget(BudgetPolicy::default().with_batch_budget_chars(200))
        .build()
        .unwrap();
    let result = run(
        &registry,
        vec![ToolCall::new(
            "a",
            "read_file",
            json!({ "path": "tiny.txt" }),
        )],
    )
    .await;
    assert_eq!(result[0].content, "     1\tfifteen chars!\n");

    // A page asked for with a limit and cut short by a small allowance still says where to
    // go on, within the allowance.
    let lines: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    fs::write(dir.path().join("lines.txt"), lines).unwrap();
    let result = run(
        &registry,
        vec![ToolCall::new(
            "a",
            "read_file",
            json!({ "path": "lines.txt", "limit": 100 }),
        )],
    )
    .await;
    let page = &result[0];
    assert!(
        !page.meta.trimmed(),
        "read_file fit its page itself: {}",
        page.content
    );
    assert!(
        page.content.starts_with("     1\tline 1\n"),
        "{}",
        page.content
    );
    assert!(
        page.content.contains("Next page: offset="),
        "{}",
        page.content
    );
    assert!(page.content_chars() <= 200);
}

/// Returns `lines` numbered lines, paginated, with no head ratio of its own.
#[derive(serde::Deserialize, schemars::JsonSchema, toolsmith::Tool)]
#[tool(name = "pages", paginate, read_only)]
struct Pages {
    lines: usize,
}

impl Pages {
    async fn run(self, _cx: &ToolContext) -> Result<String, ToolError> {
        Ok((1..=self.lines).map(|i| format!("row {i}\n")).collect())
    }
}

#[tokio::test]
async fn a_paginated_result_is_cut_keeping_its_head() {
    let registry = Registry::builder()
        .tool(Pages::tool())
        .budget(BudgetPolicy::default().with_batch_budget_chars(1_000))
        .build()
        .unwrap();
    let result = run(
        &registry,
        vec![ToolCall::new("a", "pages", json!({ "lines": 10_000 }))],
    )
    .await;
    let page = &result[0];
    assert!(page.content.starts_with("row 1\nrow 2\n"));
    assert!(
        !page.content.contains("row 10000"),
        "no tail: {}",
        page.content
    );
    assert!(
        page.content.contains("next page: offset="),
        "{}",
        page.content
    );
}

#[tokio::test]
async fn refusals_in_a_huge_batch_still_say_why() {
    let registry = Registry::builder().tool(Emit::default()).build().unwrap();
    let calls = (0..1_000).map(|i| ToolCall::new(format!("c{i}"), "emit", json!({ "lines": 1 })));
    let results = registry.turn().execute(calls).await;
    assert_eq!(results.len(), 1_000);
    // 80 chars each: the calls past the caps are refused, and each refusal still says so.
    let refused: Vec<&ToolResult> = results.iter().filter(|r| r.is_error()).collect();
    assert_eq!(refused.len(), 995);
    for result in refused {
        assert!(result.content.chars().count() <= result.meta.allowance);
        assert!(result.meta.allowance < 100, "{:?}", result.meta);
        assert!(
            result
                .content
                .starts_with("Error: this call was not run: `emit` was already called 5 times"),
            "{}",
            result.content
        );
    }
}
