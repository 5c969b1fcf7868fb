//! The approval policy: allow, deny with a reason, ask an approver; an approver that fails or
//! hangs denies; a rule for an unknown tool fails the build.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use toolsmith::approval::{Approval, ApprovalPolicy, ApprovalRequest, Approver, Rule};
use toolsmith::registry::BuildError;
use toolsmith::tool::{ToolAnnotations, ToolLimits};
use toolsmith::{Registry, Tool, ToolCall, ToolContext, ToolError, ToolOutput, async_trait};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Args {}

/// Counts its runs; read-only or not as told.
#[derive(Debug, Clone)]
struct Counted {
    name: &'static str,
    read_only: bool,
    runs: Arc<AtomicUsize>,
}

impl Counted {
    fn new(name: &'static str, read_only: bool) -> Self {
        Counted {
            name,
            read_only,
            runs: Arc::default(),
        }
    }
}

#[async_trait]
impl Tool for Counted {
    type Args = Args;

    fn name(&self) -> std::borrow::Cow<'static, str> {
        self.name.into()
    }

    fn description(&self) -> std::borrow::Cow<'static, str> {
        "Counts its runs.".into()
    }

    fn limits(&self) -> ToolLimits {
        ToolLimits::default().with_timeout(Some(Duration::from_secs(30)))
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new().with_read_only(self.read_only)
    }

    async fn call(&self, _: Args, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok("ran".into())
    }
}

fn call(id: &str, tool: &str) -> ToolCall {
    ToolCall::new(id, tool, json!({}))
}

#[tokio::test]
async fn a_denied_call_returns_its_reason_and_runs_nothing() {
    let (read, write) = (Counted::new("read", true), Counted::new("write", false));
    let registry = Registry::builder()
        .tool(read.clone())
        .tool(write.clone())
        .approval(ApprovalPolicy::new().for_others(Rule::Deny))
        .build()
        .unwrap();
    let results = registry
        .turn()
        .execute([call("r", "read"), call("w", "write")])
        .await;
    assert_eq!(results[0].content, "ran");
    assert_eq!(
        results[1].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::Denied)
    );
    assert!(
        results[1]
            .content
            .contains("the user's approval policy does not allow `write` calls"),
        "{}",
        results[1].content
    );
    assert_eq!(write.runs.load(Ordering::SeqCst), 0, "a denied call ran");
    assert_eq!(read.runs.load(Ordering::SeqCst), 1);
}

/// Allows calls whose id starts with `ok`, denies the others with a reason.
#[derive(Debug)]
struct ById;

#[async_trait]
impl Approver for ById {
    async fn approve(
        &self,
        request: ApprovalRequest<'_>,
    ) -> Result<Approval, Box<dyn std::error::Error + Send + Sync>> {
        Ok(if request.call_id.starts_with("ok") {
            Approval::Allow
        } else {
            Approval::Deny(format!("the user declined `{}`", request.tool))
        })
    }
}

#[tokio::test]
async fn asking_runs_what_the_approver_allows() {
    let write = Counted::new("write", false);
    let registry = Registry::builder()
        .tool(write.clone())
        .approval(
            ApprovalPolicy::new()
                .for_tool("write", Rule::Ask)
                .with_approver(ById),
        )
        .build()
        .unwrap();
    let results = registry
        .turn()
        .execute([call("ok-1", "write"), call("no-1", "write")])
        .await;
    assert_eq!(results[0].content, "ran");
    assert!(
        results[1].content.contains("the user declined `write`"),
        "{}",
        results[1].content
    );
    assert_eq!(write.runs.load(Ordering::SeqCst), 1);

    // Asking with no approver denies.
    let registry = Registry::builder()
        .tool(Counted::new("write", false))
        .approval(ApprovalPolicy::new().for_others(Rule::Ask))
        .build()
        .unwrap();
    let result = registry
        .turn()
        .execute([call("w", "write")])
        .await
        .remove(0);
    assert!(
        result.content.contains("no one can be asked"),
        "{}",
        result.content
    );
}

/// Fails, or never answers.
#[derive(Debug)]
enum Broken {
    Fails,
    Hangs,
}

#[async_trait]
impl Approver for Broken {
    async fn approve(
        &self,
        _: ApprovalRequest<'_>,
    ) -> Result<Approval, Box<dyn std::error::Error + Send + Sync>> {
        match self {
            Broken::Fails => Err("no terminal to ask on".into()),
            Broken::Hangs => std::future::pending().await,
        }
    }
}

#[tokio::test(start_paused = true)]
async fn an_approver_that_fails_or_hangs_denies() {
    for (approver, expected) in [
        (
            Broken::Fails,
            "approval could not be asked (no terminal to ask on)",
        ),
        (Broken::Hangs, "no approval came within 30s"),
    ] {
        let write = Counted::new("write", false);
        let registry = Registry::builder()
            .tool(write.clone())
            .approval(
                ApprovalPolicy::new()
                    .for_others(Rule::Ask)
                    .with_approver(approver),
            )
            .build()
            .unwrap();
        let result = registry
            .turn()
            .execute([call("w", "write")])
            .await
            .remove(0);
        assert_eq!(
            result.meta.error_kind,
            Some(toolsmith::tool::ErrorKind::Denied),
            "{}",
            result.content
        );
        assert!(result.content.contains(expected), "{}", result.content);
        assert_eq!(write.runs.load(Ordering::SeqCst), 0);
    }
}

#[test]
fn a_rule_for_an_unknown_tool_fails_the_build_with_its_name() {
    let error = Registry::builder()
        .tool(Counted::new("write", false))
        .approval(ApprovalPolicy::new().for_tool("wirte", Rule::Deny))
        .build()
        .unwrap_err();
    assert!(matches!(error, BuildError::UnknownToolInPolicy { .. }));
    let message = error.to_string();
    assert!(message.contains("`wirte`"), "{message}");
    assert!(message.contains("write"), "{message}");
}
