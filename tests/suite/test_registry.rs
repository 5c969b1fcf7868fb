//! The registry: one result per call in call order, the budget split, post-trim, failures as
//! results, caps, timeouts, cancellation and events.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolsmith::artifacts::{
    ArtifactError, ArtifactId, ArtifactPage, ArtifactStore, ArtifactWriter, MemoryStore,
    PageRequest,
};
use toolsmith::budget::SplitStrategy;
use toolsmith::registry::BuildError;
use toolsmith::tool::{Audience, Event, ToolLimits};
use toolsmith::{
    BudgetPolicy, Registry, Tool, ToolCall, ToolContext, ToolError, ToolOutput, async_trait,
};
use toolsmith_workspace::{Emit, Noop, Panic, Sleep};

fn emit(id: &str, lines: usize) -> ToolCall {
    ToolCall::new(id, "emit", json!({ "lines": lines }))
}

/// `n` lines of `line i\n` are this many chars.
fn emitted_chars(lines: usize) -> usize {
    (1..=lines).map(|i| format!("line {i}\n").len()).sum()
}

fn even() -> BudgetPolicy {
    BudgetPolicy::default().with_split(SplitStrategy::Even)
}

#[tokio::test]
async fn three_calls_share_the_batch_budget_evenly() {
    let registry = Registry::builder()
        .tool(Emit::default())
        .budget(even())
        .build()
        .unwrap();
    let results = registry
        .turn()
        .execute([emit("a", 5_000), emit("b", 5_000), emit("c", 5_000)])
        .await;
    assert_eq!(results.len(), 3);
    for (result, id) in results.iter().zip(["a", "b", "c"]) {
        assert_eq!(result.call_id, id);
        assert_eq!(result.meta.allowance, 26_666);
        assert_eq!(result.meta.original_chars, emitted_chars(5_000));
        assert!(result.meta.trimmed());
        assert!(result.content_chars() <= 26_666);
        assert!(result.content.starts_with("line 1\n"));
        assert!(result.content.ends_with("line 5000\n"));
    }
}

#[tokio::test]
async fn five_calls_get_16000_each() {
    let registry = Registry::builder()
        .tool(Emit::default())
        .budget(even())
        .build()
        .unwrap();
    let calls = (0..5).map(|i| emit(&format!("c{i}"), 3_000));
    for result in registry.turn().execute(calls).await {
        assert_eq!(result.meta.allowance, 16_000);
        assert!(result.content_chars() <= 16_000);
    }
}

#[tokio::test]
async fn a_tools_own_cap_bounds_even_a_lone_call() {
    let tool = Emit {
        max_result_chars: Some(20_000),
        ..Emit::default()
    };
    let registry = Registry::builder().tool(tool).build().unwrap();
    let results = registry.turn().execute([emit("only", 10_000)]).await;
    assert_eq!(results[0].meta.allowance, 20_000);
    assert!(results[0].content_chars() <= 20_000);
}

#[tokio::test]
async fn a_result_within_its_allowance_is_untouched() {
    let registry = Registry::builder().tool(Emit::default()).build().unwrap();
    let results = registry.turn().execute([emit("a", 100)]).await;
    let expected: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    assert_eq!(results[0].content, expected);
    assert!(!results[0].meta.trimmed());
}

#[tokio::test]
async fn fair_share_gives_a_small_results_slack_to_a_large_one() {
    let big = 8_000; // about 77,000 chars: over an even 40,000, under 80,000 minus the small one
    let calls = || [emit("small", 10), emit("big", big)];
    let fair = Registry::builder().tool(Emit::default()).build().unwrap();
    let results = fair.turn().execute(calls()).await;
    assert!(
        !results[1].meta.trimmed(),
        "the big result fits in the slack"
    );
    assert_eq!(results[1].meta.initial_allowance, 40_000);
    assert_eq!(results[1].content_chars(), emitted_chars(big));
    assert!(results[0].content_chars() + results[1].content_chars() <= 80_000);

    let evenly = Registry::builder()
        .tool(Emit::default())
        .budget(even())
        .build()
        .unwrap();
    let results = evenly.turn().execute(calls()).await;
    assert!(results[1].meta.trimmed(), "an even split wastes the slack");
    assert!(results[1].content_chars() <= 40_000);
}

#[tokio::test]
async fn fair_share_splits_slack_among_several_needy_calls_within_caps() {
    let capped = Emit {
        max_result_chars: Some(22_000),
        name: Some("capped"),
        ..Emit::default()
    };
    let registry = Registry::builder()
        .tool(Emit::default())
        .tool(capped)
        .build()
        .unwrap();
    let results = registry
        .turn()
        .execute([
            emit("tiny", 1),
            ToolCall::new("capped", "capped", json!({ "lines": 10_000 })),
            emit("huge", 20_000),
            emit("huge2", 20_000),
        ])
        .await;
    // Share 20,000: tiny uses 7, leaving 19,993 of slack. Capped needs only 2,000 more (its cap
    // is 22,000), less than an equal third, so it gets them; the two huge ones split the rest.
    let allowances: Vec<usize> = results.iter().map(|r| r.meta.allowance).collect();
    assert_eq!(allowances, [20_000, 22_000, 28_996, 28_997]);
    let total: usize = results.iter().map(|r| r.content_chars()).sum();
    assert!(total <= 80_000, "{total}");
    assert!(total > 79_000, "the slack was used: {total}");
}

#[tokio::test]
async fn the_turn_budget_caps_later_batches() {
    let registry = Registry::builder()
        .tool(Emit::default())
        .budget(BudgetPolicy::default().with_turn_budget_chars(Some(100_000)))
        .max_calls_per_tool(10)
        .build()
        .unwrap();
    let mut turn = registry.turn();
    let first = turn.execute([emit("a", 20_000)]).await;
    assert_eq!(first[0].meta.allowance, 80_000);
    let used = turn.chars_used();
    assert!(used <= 80_000);
    let second = turn.execute([emit("b", 20_000)]).await;
    assert_eq!(second[0].meta.allowance, 100_000 - used);
    assert_eq!(
        turn.turn_budget_left(),
        Some(100_000 - used - second[0].content_chars())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_come_back_in_call_order() {
    let registry = Registry::builder()
        .tool(Sleep::default())
        .max_calls_per_turn(1_000)
        .max_calls_per_tool(1_000)
        .build()
        .unwrap();
    // Later calls sleep less, so they finish first.
    let calls = (0..1_000).map(|i| {
        ToolCall::new(
            format!("call_{i}"),
            "sleep",
            json!({ "ms": (1_000 - i) / 50 }),
        )
    });
    let results = registry.turn().execute(calls).await;
    assert_eq!(results.len(), 1_000);
    for (i, result) in results.iter().enumerate() {
        assert_eq!(result.call_id, format!("call_{i}"));
        assert!(!result.is_error(), "{}", result.content);
        assert_eq!(result.content, format!("slept {} ms", (1_000 - i) / 50));
        assert!(result.content_chars() <= result.meta.allowance);
    }
}

#[tokio::test]
async fn a_panicking_tool_does_not_disturb_its_neighbours() {
    let registry = Registry::builder()
        .tool(Emit::default())
        .tool(Panic)
        .build()
        .unwrap();
    let results = registry
        .turn()
        .execute([
            emit("before", 3),
            ToolCall::new("boom", "panic", json!({ "message": "index out of bounds" })),
            emit("after", 2),
        ])
        .await;
    assert_eq!(results[0].content, "line 1\nline 2\nline 3\n");
    assert!(results[1].is_error());
    assert!(
        results[1].content.contains("index out of bounds"),
        "{}",
        results[1].content
    );
    assert_eq!(
        results[1].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::Panicked)
    );
    assert_eq!(results[2].content, "line 1\nline 2\n");
}

#[tokio::test(start_paused = true)]
async fn a_tool_timeout_stops_the_call() {
    let sleep = Sleep {
        timeout: Some(Duration::from_secs(1)),
    };
    let registry = Registry::builder().tool(sleep).build().unwrap();
    let results = registry
        .turn()
        .execute([
            ToolCall::new("slow", "sleep", json!({ "ms": 5_000 })),
            ToolCall::new("fast", "sleep", json!({ "ms": 10 })),
        ])
        .await;
    assert!(results[0].is_error());
    assert_eq!(
        results[0].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::Timeout)
    );
    assert!(
        results[0].content.contains("did not finish within 1s"),
        "{}",
        results[0].content
    );
    assert_eq!(results[1].content, "slept 10 ms");
}

#[tokio::test(start_paused = true)]
async fn the_registry_default_timeout_applies_to_tools_without_one() {
    let registry = Registry::builder()
        .tool(Sleep::default())
        .default_timeout(Some(Duration::from_secs(2)))
        .build()
        .unwrap();
    let results = registry
        .turn()
        .execute([ToolCall::new("slow", "sleep", json!({ "ms": 3_000 }))])
        .await;
    assert_eq!(
        results[0].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::Timeout)
    );
    assert!(results[0].content.contains("within 2s"));
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_turn_answers_running_and_later_calls() {
    let registry = Registry::builder().tool(Sleep::default()).build().unwrap();
    let mut turn = registry.turn();
    let token = turn.cancellation_token();
    let (results, ()) = tokio::join!(
        turn.execute([ToolCall::new("long", "sleep", json!({ "ms": 60_000 }))]),
        async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            token.cancel();
        }
    );
    assert!(results[0].is_error());
    assert_eq!(
        results[0].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::Cancelled)
    );
    let later = turn
        .execute([ToolCall::new("next", "sleep", json!({ "ms": 1 }))])
        .await;
    assert_eq!(
        later[0].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::Cancelled)
    );
}

#[tokio::test]
async fn the_21st_call_of_a_turn_is_refused_with_a_result() {
    let mut builder = Registry::builder();
    for name in ["a", "b", "c", "d", "e"] {
        builder = builder.tool(Emit {
            name: Some(name),
            ..Emit::default()
        });
    }
    let registry = builder.build().unwrap();
    let mut events = registry.subscribe();
    let mut turn = registry.turn();
    let calls = |names: &[&str], batch: usize| -> Vec<ToolCall> {
        names
            .iter()
            .enumerate()
            .map(|(i, name)| ToolCall::new(format!("{batch}-{i}"), *name, json!({ "lines": 1 })))
            .collect()
    };
    let first = turn
        .execute(calls(
            &["a", "b", "c", "d", "a", "b", "c", "d", "a", "b"],
            1,
        ))
        .await;
    assert!(first.iter().all(|r| !r.is_error()));
    let second = turn
        .execute(calls(
            &["c", "d", "a", "b", "c", "d", "e", "e", "e", "e", "e"],
            2,
        ))
        .await;
    assert_eq!(
        second.len(),
        11,
        "a refused call is answered, never dropped"
    );
    assert!(second[..10].iter().all(|r| !r.is_error()));
    assert!(second[10].is_error());
    assert_eq!(
        second[10].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::CapExceeded)
    );
    assert!(
        second[10].content.contains("max_calls_per_turn"),
        "{}",
        second[10].content
    );
    assert_eq!(turn.calls_made(), 20);
    let warned = std::iter::from_fn(|| events.try_recv().ok())
        .any(|event| matches!(event, Event::Warning { call_id, .. } if &*call_id == "2-10"));
    assert!(warned, "a tripped cap sends a warning event");
}

#[tokio::test]
async fn the_6th_call_of_one_tool_across_batches_is_refused() {
    let registry = Registry::builder().tool(Emit::default()).build().unwrap();
    let mut turn = registry.turn();
    let first = turn
        .execute((0..3).map(|i| emit(&format!("a{i}"), 1)))
        .await;
    assert!(first.iter().all(|r| !r.is_error()));
    let second = turn
        .execute((0..3).map(|i| emit(&format!("b{i}"), 1)))
        .await;
    assert!(!second[0].is_error() && !second[1].is_error());
    assert!(second[2].is_error());
    assert!(
        second[2]
            .content
            .contains("`emit` was already called 5 times"),
        "{}",
        second[2].content
    );
    // A new turn starts counting afresh.
    assert!(!registry.turn().execute([emit("c", 1)]).await[0].is_error());
}

#[tokio::test]
async fn an_unknown_tool_lists_the_known_ones() {
    let registry = Registry::builder()
        .tool(Emit::default())
        .tool(Noop)
        .build()
        .unwrap();
    let results = registry
        .turn()
        .execute([ToolCall::new("x", "reed_file", json!({}))])
        .await;
    assert!(results[0].is_error());
    assert_eq!(
        results[0].content,
        "Error: unknown tool `reed_file`. Available tools: emit, noop."
    );
}

#[tokio::test]
async fn arguments_that_are_not_json_or_miss_the_schema_are_errors_with_the_path() {
    let registry = Registry::builder().tool(Emit::default()).build().unwrap();
    let results = registry
        .turn()
        .execute([
            ToolCall::from_raw("raw", "emit", "{\"lines\": 3"),
            ToolCall::new("typed", "emit", json!({ "lines": "ten" })),
            ToolCall::new("missing", "emit", json!({})),
            ToolCall::from_raw("ok", "emit", "{\"lines\": 1}"),
        ])
        .await;
    assert!(
        results[0].content.contains("not valid JSON"),
        "{}",
        results[0].content
    );
    assert!(
        results[1]
            .content
            .contains("lines: invalid type: string \"ten\""),
        "{}",
        results[1].content
    );
    assert!(
        results[2].content.contains("missing field `lines`"),
        "{}",
        results[2].content
    );
    assert!(
        results[..3]
            .iter()
            .all(|r| r.meta.error_kind == Some(toolsmith::tool::ErrorKind::InvalidArguments))
    );
    assert_eq!(results[3].content, "line 1\n");
}

#[tokio::test]
async fn trimmed_output_is_kept_as_an_artifact_and_readable() {
    let store = MemoryStore::new();
    let registry = Registry::builder()
        .tool(Emit::default())
        .artifacts(store.clone())
        .budget(BudgetPolicy::default().with_batch_budget_chars(2_000))
        .build()
        .unwrap();
    let mut turn = registry.turn();
    let results = turn.execute([emit("big", 1_000)]).await;
    let result = &results[0];
    assert!(result.meta.trimmed());
    assert!(result.content_chars() <= 2_000);
    let id = result.meta.artifact.clone().expect("stored");
    assert!(
        result
            .content
            .contains(&format!("artifact {id}, read it with read_artifact"))
    );
    let full: String = (1..=1_000).map(|i| format!("line {i}\n")).collect();
    assert_eq!(store.get(&id).as_deref(), Some(full.as_str()));

    let page = turn
        .execute([ToolCall::new(
            "read",
            "read_artifact",
            json!({ "id": id.as_str(), "offset": 500, "limit": 3 }),
        )])
        .await;
    assert!(!page[0].is_error(), "{}", page[0].content);
    assert_eq!(
        page[0].content,
        format!(
            "[artifact {id}: lines 501-503 of 1,000; next: offset=503]\nline 501\nline 502\nline 503\n"
        )
    );
}

#[derive(Debug)]
struct BrokenStore;

impl ArtifactStore for BrokenStore {
    fn begin(&self) -> Result<Box<dyn ArtifactWriter>, ArtifactError> {
        Err(ArtifactError::Io(std::io::Error::other(
            "No space left on device",
        )))
    }

    fn read_page(&self, id: &ArtifactId, _: PageRequest) -> Result<ArtifactPage, ArtifactError> {
        Err(ArtifactError::NotFound(id.clone()))
    }
}

#[tokio::test]
async fn a_failing_store_never_fails_the_call() {
    let registry = Registry::builder()
        .tool(Emit::default())
        .artifacts(BrokenStore)
        .budget(BudgetPolicy::default().with_batch_budget_chars(1_000))
        .build()
        .unwrap();
    let mut events = registry.subscribe();
    let results = registry.turn().execute([emit("big", 1_000)]).await;
    let result = &results[0];
    assert!(!result.is_error());
    assert!(result.meta.trimmed());
    assert!(result.content_chars() <= 1_000);
    assert!(result.meta.artifact.is_none());
    assert!(
        result
            .content
            .contains("full output could not be kept: the artifact store failed (No space left"),
        "{}",
        result.content
    );
    let warned = std::iter::from_fn(|| events.try_recv().ok()).any(
        |event| matches!(event, Event::Warning { message, .. } if message.contains("No space")),
    );
    assert!(warned);
}

/// Reports progress twice, then returns its page request.
struct Pager;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PagerArgs {
    #[serde(default)]
    #[allow(dead_code)]
    offset: Option<usize>,
    #[serde(default)]
    #[allow(dead_code)]
    limit: Option<usize>,
}

#[async_trait]
impl Tool for Pager {
    type Args = PagerArgs;

    fn name(&self) -> Cow<'static, str> {
        "pager".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Echoes its page.".into()
    }

    fn limits(&self) -> ToolLimits {
        ToolLimits::default().with_paginate(true)
    }

    async fn call(&self, _: PagerArgs, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        cx.progress(Audience::User, "halfway");
        cx.progress(Audience::Log, "done");
        Ok(format!("{:?} budget={}", cx.page(), cx.allowance()).into())
    }
}

#[tokio::test]
async fn events_report_each_call_and_progress_stays_out_of_the_result() {
    let registry = Registry::builder().tool(Pager).build().unwrap();
    let mut events = registry.subscribe();
    let results = registry
        .turn()
        .execute([ToolCall::new(
            "p",
            "pager",
            json!({ "offset": 10, "limit": 5 }),
        )])
        .await;
    assert_eq!(
        results[0].content,
        "Some(Page { offset: 10, limit: Some(5) }) budget=80000"
    );
    let received: Vec<Event> = std::iter::from_fn(|| events.try_recv().ok()).collect();
    assert!(matches!(
        &received[0],
        Event::CallStarted {
            allowance: 80_000,
            ..
        }
    ));
    assert!(
        matches!(&received[1], Event::Progress { audience: Audience::User, message, .. } if message == "halfway")
    );
    assert!(matches!(
        &received[2],
        Event::Progress {
            audience: Audience::Log,
            ..
        }
    ));
    let Event::CallFinished(summary) = &received[3] else {
        panic!("expected CallFinished, got {:?}", received[3]);
    };
    assert_eq!(&*summary.tool, "pager");
    assert_eq!(summary.original_chars, results[0].content_chars());
    assert!(!summary.trimmed && !summary.is_error);
}

#[test]
fn duplicate_names_are_a_build_error_naming_both() {
    let error = Registry::builder()
        .tool(Emit::default())
        .tool(Emit {
            max_result_chars: Some(5),
            ..Emit::default()
        })
        .build()
        .unwrap_err();
    assert!(matches!(error, BuildError::DuplicateName { .. }));
    assert_eq!(
        error.to_string(),
        "two tools are named `emit`: `toolsmith_workspace::Emit` and \
         `toolsmith_workspace::Emit`; rename one"
    );
}

#[test]
fn invalid_limits_are_build_errors_that_say_what_to_do() {
    let zero_cap = Emit {
        max_result_chars: Some(0),
        ..Emit::default()
    };
    let cases: Vec<(Result<Registry, BuildError>, &str)> = vec![
        (
            Registry::builder().tool(zero_cap).build(),
            "`emit`: max_result_chars is 0",
        ),
        (
            Registry::builder()
                .budget(BudgetPolicy::default().with_batch_budget_chars(0))
                .build(),
            "`batch_budget_chars` is 0",
        ),
        (
            Registry::builder().max_calls_per_turn(0).build(),
            "max_calls_per_turn is 0",
        ),
        (
            Registry::builder().max_calls_per_tool(0).build(),
            "max_calls_per_tool is 0",
        ),
        (
            Registry::builder()
                .default_timeout(Some(Duration::ZERO))
                .build(),
            "default_timeout is zero",
        ),
        (
            Registry::builder()
                .tool(Emit {
                    name: Some("read file"),
                    ..Emit::default()
                })
                .build(),
            "invalid tool name `read file`",
        ),
    ];
    for (result, expected) in cases {
        let error = result.unwrap_err().to_string();
        assert!(error.contains(expected), "{error:?} lacks {expected:?}");
    }
}

struct Unit;

#[async_trait]
impl Tool for Unit {
    type Args = ();

    fn name(&self) -> Cow<'static, str> {
        "unit".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Takes no object.".into()
    }

    fn limits(&self) -> ToolLimits {
        ToolLimits::default().with_trim(toolsmith::trim::TrimStyle::default().with_head_ratio(0.5))
    }

    async fn call(&self, _: (), _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::default())
    }
}

#[test]
fn arguments_must_be_an_object() {
    let error = Registry::builder().tool(Unit).build().unwrap_err();
    assert!(matches!(error, BuildError::SchemaNotObject { .. }));
    assert!(error.to_string().contains("must be a JSON object"));
}

#[test]
fn the_artifact_reader_is_registered_with_a_store() {
    let plain = Registry::builder().tool(Noop).build().unwrap();
    assert!(plain.get("read_artifact").is_none());
    let with_store = Registry::builder()
        .tool(Noop)
        .shared_artifacts(Arc::new(MemoryStore::new()))
        .build()
        .unwrap();
    let reader = with_store.get("read_artifact").expect("registered");
    assert!(reader.spec().limits.paginate);
    let names: Vec<&str> = with_store.tools().map(|t| t.spec().name.as_str()).collect();
    assert_eq!(names, ["noop", "read_artifact"]);
}

#[test]
fn a_turn_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let registry = Registry::builder().tool(Noop).build().unwrap();
    let mut turn = registry.turn();
    let future = turn.execute(Vec::new());
    assert_send(&future);
}

/// Arguments of [`Overlap`].
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct OverlapArgs {
    id: String,
}

/// A tool that detects its calls overlapping: how many run at once, at most, and in what order
/// they started.
#[derive(Debug, Clone, Default)]
struct Overlap {
    name: &'static str,
    read_only: bool,
    running: Arc<std::sync::atomic::AtomicUsize>,
    most: Arc<std::sync::atomic::AtomicUsize>,
    started: Arc<std::sync::Mutex<Vec<String>>>,
}

#[toolsmith::async_trait]
impl toolsmith::Tool for Overlap {
    type Args = OverlapArgs;

    fn name(&self) -> std::borrow::Cow<'static, str> {
        self.name.into()
    }

    fn description(&self) -> std::borrow::Cow<'static, str> {
        "Detects overlapping calls.".into()
    }

    fn annotations(&self) -> toolsmith::tool::ToolAnnotations {
        toolsmith::tool::ToolAnnotations::new().with_read_only(self.read_only)
    }

    async fn call(
        &self,
        args: OverlapArgs,
        _cx: &toolsmith::ToolContext,
    ) -> Result<toolsmith::ToolOutput, toolsmith::ToolError> {
        use std::sync::atomic::Ordering::SeqCst;
        let now = self.running.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(now, SeqCst);
        self.started.lock().unwrap().push(args.id.clone());
        tokio::time::sleep(Duration::from_millis(10)).await;
        self.running.fetch_sub(1, SeqCst);
        Ok(args.id.into())
    }
}

#[tokio::test(start_paused = true)]
async fn mutating_calls_run_one_at_a_time_in_call_order_and_reads_run_together() {
    use std::sync::atomic::Ordering::SeqCst;
    let write = Overlap {
        name: "write",
        ..Overlap::default()
    };
    let read = Overlap {
        name: "read",
        read_only: true,
        ..Overlap::default()
    };
    let registry = Registry::builder()
        .tool(write.clone())
        .tool(read.clone())
        .max_calls_per_tool(10)
        .build()
        .unwrap();
    let calls: Vec<ToolCall> = (0..10)
        .map(|i| {
            let tool = if i % 2 == 0 { "write" } else { "read" };
            ToolCall::new(format!("c{i}"), tool, json!({ "id": format!("c{i}") }))
        })
        .collect();
    let results = registry.turn().execute(calls).await;
    let ids: Vec<&str> = results.iter().map(|r| r.content.as_str()).collect();
    assert_eq!(
        ids,
        ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"]
    );
    assert_eq!(write.most.load(SeqCst), 1, "two mutating calls overlapped");
    assert_eq!(
        *write.started.lock().unwrap(),
        ["c0", "c2", "c4", "c6", "c8"],
        "mutating calls ran out of call order"
    );
    assert_eq!(
        read.most.load(SeqCst),
        5,
        "read-only calls ran one at a time"
    );
}

/// A read-only tool that notes when its call is dropped and when it finishes.
#[derive(Clone, Default)]
struct Watched {
    dropped: Arc<std::sync::atomic::AtomicBool>,
    finished: Arc<std::sync::atomic::AtomicBool>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct WatchedArgs {}

#[async_trait]
impl Tool for Watched {
    type Args = WatchedArgs;

    fn name(&self) -> Cow<'static, str> {
        "watched".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Waits a second, noting what became of it.".into()
    }

    fn annotations(&self) -> toolsmith::tool::ToolAnnotations {
        toolsmith::tool::ToolAnnotations::new().with_read_only(true)
    }

    async fn call(&self, _: WatchedArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        struct NoteDrop(Arc<std::sync::atomic::AtomicBool>);
        impl Drop for NoteDrop {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let _noted = NoteDrop(self.dropped.clone());
        tokio::time::sleep(Duration::from_secs(1)).await;
        self.finished
            .store(true, std::sync::atomic::Ordering::SeqCst);
        Ok("done".into())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_turn_mid_batch_stops_its_calls() {
    let watched = Watched::default();
    let registry = Registry::builder().tool(watched.clone()).build().unwrap();
    let calls = (0..3).map(|i| ToolCall::new(format!("c{i}"), "watched", json!({})));
    let mut turn = registry.turn();
    // The request is cancelled by dropping its future while the calls run.
    let outcome = tokio::time::timeout(Duration::from_millis(100), turn.execute(calls)).await;
    assert!(outcome.is_err(), "the calls were still running");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        watched.dropped.load(std::sync::atomic::Ordering::SeqCst),
        "the calls' tasks were aborted"
    );
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    assert!(
        !watched.finished.load(std::sync::atomic::Ordering::SeqCst),
        "no call ran on after its turn was dropped"
    );
}

/// Reads a configuration a program parses: never in part.
#[toolsmith::tool(over_cap = "error", max_result_chars = 300)]
async fn read_config(
    /// How many lines the configuration has.
    lines: usize,
) -> Result<String, ToolError> {
    Ok((1..=lines).map(|i| format!("key_{i} = {i}\n")).collect())
}

#[tokio::test]
async fn a_tool_that_answers_an_error_over_its_cap_sends_none_of_its_output() {
    let store = MemoryStore::new();
    let registry = Registry::builder()
        .tool(read_config())
        .artifacts(store.clone())
        .build()
        .unwrap();
    let spec = &registry.get("read_config").unwrap().spec().limits;
    assert_eq!(spec.over_cap, toolsmith::tool::OverCap::Error);

    let results = registry
        .turn()
        .execute([
            ToolCall::new("small", "read_config", json!({ "lines": 3 })),
            ToolCall::new("large", "read_config", json!({ "lines": 2_000 })),
        ])
        .await;
    // Within the cap: the output, whole.
    assert!(!results[0].is_error());
    assert_eq!(results[0].content, "key_1 = 1\nkey_2 = 2\nkey_3 = 3\n");

    // Over it: an error, none of the output, its size, the cap and the artifact holding it.
    let large = &results[1];
    assert!(large.is_error(), "{}", large.content);
    assert_eq!(
        large.meta.error_kind,
        Some(toolsmith::tool::ErrorKind::TooLarge)
    );
    assert!(!large.content.contains("key_"), "{}", large.content);
    assert!(large.content_chars() <= 300, "{}", large.content);
    let whole: String = (1..=2_000).map(|i| format!("key_{i} = {i}\n")).collect();
    let size = toolsmith::figures::grouped(whole.chars().count());
    assert!(
        large
            .content
            .contains(&format!("is {size} chars, over the cap of")),
        "{}",
        large.content
    );
    assert!(
        large.meta.cut.is_none(),
        "nothing was cut: nothing was sent"
    );
    let id = large.meta.artifact.clone().expect("kept whole");
    assert!(large.content.contains(id.as_str()), "{}", large.content);
    assert_eq!(store.get(&id).as_deref(), Some(whole.as_str()));
}

/// Reads a log, whose results are capped in tokens by the tool itself.
#[toolsmith::tool(max_result_tokens = 300)]
async fn read_log(
    /// How many lines the log has.
    lines: usize,
) -> Result<String, ToolError> {
    Ok((1..=lines)
        .map(|i| {
            format!(
                "{i:05} worker-{} served /api/orders/{}\n",
                i % 7,
                i * 7_919 % 100_003
            )
        })
        .collect())
}

/// A tool's own cap in tokens applies where it is smaller than the registry's, and the
/// registry's to every other tool: each result counts at most its cap, the marker names the cap
/// that made the cut, the figures and the cut facts state the tokens sent, and the artifact
/// keeps every line.
#[tokio::test]
async fn caps_in_tokens_hold_for_the_registry_and_for_a_tool_of_its_own() {
    let store = MemoryStore::new();
    let counter = std::sync::Arc::new(toolsmith::tokens::CharsPerToken(3));
    let registry = Registry::builder()
        .tool(read_log())
        .tool(read_config())
        .max_result_tokens(Some(1_000))
        .token_counter(counter.clone())
        .artifacts(store.clone())
        .build()
        .unwrap();
    assert_eq!(
        registry
            .get("read_log")
            .unwrap()
            .spec()
            .limits
            .max_result_tokens,
        Some(300)
    );
    let results = registry
        .turn()
        .execute([
            ToolCall::new("own", "read_log", json!({ "lines": 2_000 })),
            ToolCall::new("small", "read_log", json!({ "lines": 3 })),
        ])
        .await;
    let own = &results[0];
    let tokens = own.meta.tokens.expect("a cap in tokens applied");
    assert_eq!(tokens.cap, 300);
    assert!(tokens.cut_by_tokens);
    assert_eq!(
        tokens.sent,
        toolsmith::tokens::TokenCounter::count(counter.as_ref(), &own.content)
    );
    assert!(tokens.sent <= 300 && tokens.sent > 200, "{}", tokens.sent);
    let marker = toolsmith::trim::find_marker(&own.content).expect("a marker");
    assert_eq!(marker.token_cap, Some(300));
    let facts = own.cut_facts().expect("cut facts");
    assert_eq!(facts["tokens"], json!({ "cap": 300, "sent": tokens.sent }));
    let whole = store.get(own.meta.artifact.as_ref().unwrap()).unwrap();
    assert_eq!(whole.lines().count(), 2_000);
    // Within the cap: whole, its tokens stated, no cut.
    let small = &results[1];
    assert!(small.meta.cut.is_none());
    assert_eq!(
        small.meta.tokens.unwrap().sent,
        small.content.chars().count().div_ceil(3)
    );
    assert!(small.cut_facts().is_none());
}
