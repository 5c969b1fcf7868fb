//! Output as streams: consumed by the registry in bounded memory, spooled to the artifact
//! store, cut once; figures exact whichever tool produced the output.

use std::borrow::Cow;
use std::fs;

use serde_json::json;
use toolsmith::artifacts::MemoryStore;
use toolsmith::tool::ToolAnnotations;
use toolsmith::{
    BudgetPolicy, Registry, Tool, ToolCall, ToolContext, ToolError, ToolOutput, ToolResult,
    async_trait,
};
use toolsmith_std::Sandbox;

/// Streams `lines` lines of `text`, in chunks of `chunk` bytes that split chars anywhere, then
/// ends with an error if `fail` is set.
struct Streamer;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct StreamArgs {
    lines: usize,
    text: String,
    chunk: usize,
    #[serde(default)]
    fail: bool,
}

fn streamed_text(args: &StreamArgs) -> String {
    (1..=args.lines)
        .map(|i| format!("{} {i}\n", args.text))
        .collect()
}

#[async_trait]
impl Tool for Streamer {
    type Args = StreamArgs;

    fn name(&self) -> Cow<'static, str> {
        "stream".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Streams numbered lines.".into()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new().with_read_only(true)
    }

    async fn call(&self, args: StreamArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let bytes = streamed_text(&args).into_bytes();
        let mut chunks: Vec<Result<Vec<u8>, ToolError>> = bytes
            .chunks(args.chunk.max(1))
            .map(|chunk| Ok(chunk.to_vec()))
            .collect();
        if args.fail {
            chunks.push(Err(ToolError::failed("the source went away")));
        }
        Ok(ToolOutput::stream(futures_util::stream::iter(chunks)))
    }
}

fn registry(store: &MemoryStore, budget: usize) -> Registry {
    Registry::builder()
        .tool(Streamer)
        .artifacts(store.clone())
        .budget(BudgetPolicy::default().with_batch_budget_chars(budget))
        .build()
        .unwrap()
}

async fn call(registry: &Registry, args: serde_json::Value) -> ToolResult {
    registry
        .turn()
        .execute([ToolCall::new("s", "stream", args)])
        .await
        .remove(0)
}

#[tokio::test]
async fn a_stream_that_fits_comes_back_byte_for_byte() {
    let store = MemoryStore::new();
    let registry = registry(&store, 5_000);
    // Chunks of 3 bytes split every "é" and "😀" somewhere.
    let args = json!({ "lines": 40, "text": "é😀 ok", "chunk": 3 });
    let result = call(&registry, args).await;
    let expected: String = (1..=40).map(|i| format!("é😀 ok {i}\n")).collect();
    assert_eq!(result.content, expected);
    assert!(!result.meta.trimmed() && result.meta.artifact.is_none());
    assert_eq!(result.meta.original_chars, expected.chars().count());
    assert_eq!(result.meta.original_lines, 40);
}

#[tokio::test]
async fn a_long_stream_is_cut_once_with_exact_figures_and_kept_whole() {
    let store = MemoryStore::new();
    let registry = registry(&store, 4_000);
    let args = json!({ "lines": 200_000, "text": "row é", "chunk": 65_536 });
    let result = call(&registry, args).await;
    let expected: String = (1..=200_000).map(|i| format!("row é {i}\n")).collect();
    assert!(
        result.content_chars() <= 4_000,
        "{}",
        result.content_chars()
    );
    // The rows count up by one: the capture followed the run past the head it keeps, so one
    // lossless fold stands for all of them but the first.
    assert_eq!(
        result.content.lines().next(),
        Some("row é 1"),
        "{}",
        result.content
    );
    assert!(
        result
            .content
            .ends_with("\n[lines 2-200,000: 2 to 200000, one a line]"),
        "{}",
        result.content
    );
    assert_eq!(result.meta.original_chars, expected.chars().count());
    assert_eq!(result.meta.original_lines, 200_000);
    assert!(result.meta.trimmed());
    let id = result
        .meta
        .artifact
        .clone()
        .expect("the stream was spooled");
    assert_eq!(
        store.get(&id).unwrap(),
        expected,
        "the artifact is the whole stream"
    );
    let marker = result
        .content
        .lines()
        .find(|line| line.starts_with("[toolsmith: output condensed"))
        .unwrap();
    assert!(
        marker.contains(&format!("artifact {}", id.as_str())),
        "{marker}"
    );
    assert!(marker.contains("of 200,000)"), "{marker}");
}

#[tokio::test]
async fn a_stream_that_fails_keeps_its_output_and_says_why() {
    let store = MemoryStore::new();
    let registry = registry(&store, 5_000);
    let args = json!({ "lines": 3, "text": "partial", "chunk": 4, "fail": true });
    let result = call(&registry, args).await;
    assert!(result.is_error());
    assert_eq!(
        result.meta.error_kind,
        Some(toolsmith::tool::ErrorKind::Failed)
    );
    assert_eq!(
        result.content,
        "partial 1\npartial 2\npartial 3\nError: the source went away"
    );
}

#[tokio::test]
async fn a_stream_is_read_by_the_registry_even_without_an_artifact_store() {
    // Called directly, the tool hands back its stream unread: only a registry consumes it.
    let args = StreamArgs {
        lines: 10_000,
        text: "x".into(),
        chunk: 100,
        fail: false,
    };
    let output = Streamer
        .call(args, &ToolContext::new("c", "stream", 500))
        .await
        .unwrap();
    assert!(output.is_stream());
    let registry = Registry::builder()
        .tool(Streamer)
        .budget(BudgetPolicy::default().with_batch_budget_chars(500))
        .build()
        .unwrap();
    let args = json!({ "lines": 10_000, "text": "x", "chunk": 100, "fail": false });
    let result = call(&registry, args).await;
    assert!(result.content_chars() <= 500);
    assert!(
        result
            .content
            .ends_with("\n[lines 2-10,000: 2 to 10000, one a line]"),
        "{}",
        result.content
    );
    assert!(result.content.contains("full output not kept"));
}

fn std_registry(root: &std::path::Path, store: &MemoryStore, budget: usize) -> Registry {
    toolsmith_std::register(Registry::builder())
        .state(Sandbox::new(root).unwrap())
        .artifacts(store.clone())
        .budget(BudgetPolicy::default().with_batch_budget_chars(budget))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_short_command_output_is_never_cut_to_make_room_for_a_marker() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::new();
    let registry = std_registry(dir.path(), &store, 100);
    let result = registry
        .turn()
        .execute([ToolCall::new(
            "c",
            "run_command",
            json!({ "command": "echo hi" }),
        )])
        .await
        .remove(0);
    assert_eq!(result.content, "hi\n[exit code: 0]\n");
    assert!(!result.meta.trimmed());

    // An output just under its allowance keeps every line.
    let registry = std_registry(dir.path(), &store, 4_000);
    let lines: String = (0..170).map(|i| format!("{i:0>19}\n")).collect();
    fs::write(dir.path().join("out.txt"), &lines).unwrap();
    let result = registry
        .turn()
        .execute([ToolCall::new(
            "c",
            "run_command",
            json!({ "command": "cat out.txt" }),
        )])
        .await
        .remove(0);
    assert!(!result.meta.trimmed(), "{}", result.content);
    assert_eq!(result.content, format!("{lines}[exit code: 0]\n"));
}

#[tokio::test]
async fn a_huge_command_output_has_exact_figures() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::new();
    let registry = std_registry(dir.path(), &store, 20_000);
    // 300 lines of 1 MiB of 'a' (the last without a newline): past the store's 256 MiB cap
    // per artifact.
    let command = "head -c 314572800 /dev/zero | tr '\\0' 'a' | fold -w 1048576";
    let result = registry
        .turn()
        .execute([ToolCall::new(
            "c",
            "run_command",
            json!({ "command": command }),
        )])
        .await
        .remove(0);
    let footer = "[exit code: 0]\n";
    assert_eq!(
        result.meta.original_chars,
        // 299 newlines from fold, one run_command adds before the status line.
        314_572_800 + 299 + 1 + footer.len()
    );
    assert_eq!(result.meta.original_lines, 300 + 1);
    assert!(result.meta.trimmed());
    assert!(result.meta.artifact.is_some(), "{:?}", result.meta);
    assert!(result.content_chars() <= 20_000);
    assert!(result.content.ends_with(footer));
}
