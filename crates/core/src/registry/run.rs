//! Run: the admitted calls, those of read-only tools concurrently and the others one at a time
//! in call order, each in a task of its own (a panic stays its call's), under its timeout, the
//! turn's cancellation and the approval policy; a streamed output is captured here, in bounded
//! memory, spooled to the artifact store once it outgrows what memory keeps.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::task::JoinSet;
use tracing::Instrument as _;

use super::Inner;
use super::record::{Body, CallRecord, Produced, Stage};
use super::refusal::{Failure, Refusal};
use crate::approval::{ApprovalPolicy, ApprovalRequest};
use crate::artifacts::spool_to;
use crate::budget::BudgetPolicy;
use crate::figures::DisplayDuration;
use crate::tool::{
    Body as OutputBody, CallArgs, DynTool, ErrorKind, Event, OutputParts, OutputStream,
    ToolContext, ToolError,
};
use crate::trim::{Capture, Captured, TrimStyle};

/// What became of one call that ran.
struct Outcome {
    result: Result<Produced, Failure>,
    duration: Duration,
}

/// Runs every admitted call of the batch and records what it produced.
pub(super) async fn run(
    records: &mut [CallRecord],
    inner: &Inner,
    budget: &BudgetPolicy,
    batch_budget: usize,
) {
    // Calls of read-only tools run concurrently, each in a task; calls of every other tool
    // run one at a time, in call order, in one runner task beside them.
    let mut tasks = Vec::new();
    let mut one_at_a_time = Vec::new();
    for (i, record) in records.iter_mut().enumerate() {
        if !record.is_admitted() {
            continue;
        }
        let Stage::Admitted { args, cx, shown } =
            std::mem::replace(&mut record.stage, Stage::Running)
        else {
            continue;
        };
        let Some(tool) = record.tool.clone() else {
            continue;
        };
        let spec = tool.spec();
        let timeout = spec.limits.timeout.or(inner.default_timeout);
        let read_only = spec.annotations.is_read_only();
        let most = budget.most_allowed(batch_budget, record.cap, record.planned);
        // Boxed: only a registry with an approval policy has one, and a call's task is moved.
        let approval = inner.approval.clone().zip(shown).map(Box::new);
        let call =
            run_call(tool, args, cx, timeout, most, approval).instrument(record.span.clone());
        if read_only {
            tasks.push((i, Some(tokio::spawn(call))));
        } else {
            one_at_a_time.push((i, call));
        }
    }
    // A JoinSet, so dropping this future (a cancelled request) aborts the runner, and the
    // runner's own JoinSet aborts the call it is running.
    let mut runner = JoinSet::new();
    if !one_at_a_time.is_empty() {
        runner.spawn(async move {
            let mut done = Vec::with_capacity(one_at_a_time.len());
            for (i, call) in one_at_a_time {
                // Each call in a task of its own: a panic stays that call's result.
                let mut task = JoinSet::new();
                task.spawn(call);
                let outcome = match task.join_next().await {
                    Some(joined) => outcome_of(joined.map_err(Some)),
                    None => outcome_of(Err(None)),
                };
                done.push((i, outcome));
            }
            done
        });
    }
    // Dropping this future (a cancelled request) aborts the calls still running.
    let mut running = AbortOnDrop(tasks);
    for (i, task) in &mut running.0 {
        if let Some(handle) = task {
            let joined = handle.await;
            *task = None;
            finish(&mut records[*i], outcome_of(joined.map_err(Some)));
        }
    }
    if let Some(Ok(done)) = runner.join_next().await {
        for (i, outcome) in done {
            finish(&mut records[i], outcome);
        }
    }
    // A runner that failed leaves its calls running: they are answered as cancelled.
    for record in records.iter_mut() {
        if matches!(record.stage, Stage::Running) {
            record.stage = Stage::Done(Err(ToolError::Cancelled.into()));
        }
    }
}

/// The concurrent calls' tasks, by record; those not yet awaited are aborted when it is
/// dropped (an awaited one is taken out).
struct AbortOnDrop(Vec<(usize, Option<tokio::task::JoinHandle<Outcome>>)>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for task in self.0.iter().filter_map(|(_, task)| task.as_ref()) {
            task.abort();
        }
    }
}

fn finish(record: &mut CallRecord, outcome: Outcome) {
    record.stage = Stage::Done(outcome.result);
    record.duration = outcome.duration;
}

/// Runs one admitted call under its timeout and the turn's cancellation; a streamed output is
/// consumed here, under the same timeout, in memory bounded by `most_allowed` chars.
///
/// A plain fn returning an `async move` block, not an `async fn`: an async fn's arguments are
/// moved into locals of its state, which then holds each of them twice, and every call's task
/// is moved a few times on its way to a worker.
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn would hold every argument twice in each call's task"
)]
fn run_call(
    tool: Arc<dyn DynTool>,
    args: CallArgs,
    cx: ToolContext,
    timeout: Option<Duration>,
    most_allowed: usize,
    approval: Option<Box<(Arc<ApprovalPolicy>, Value)>>,
) -> impl Future<Output = Outcome> + Send {
    async move {
        let started = Instant::now();
        if let Some(events) = cx
            .events_sender()
            .filter(|events| events.receiver_count() > 0)
        {
            let _ = events.send(Event::CallStarted {
                call_id: cx.call_id().into(),
                tool: cx.tool_name().into(),
                allowance: cx.allowance(),
            });
        }
        let call = async {
            if let Some((policy, shown)) = approval.as_deref() {
                // Boxed: a call without approval does not carry the approval's state in its task.
                Box::pin(approve(policy, &tool, shown, &cx, timeout)).await?;
            }
            tool.call(args, &cx).await.map_err(Failure::Tool)
        };
        // The call is polled once on its own: one that is ready at once (most calls of a fast tool)
        // never makes a cancellation waiter, and the task of every call carries only a pointer to
        // one (boxed when a call waits), not the waiter itself: a smaller task is moved faster.
        let returned = {
            let mut call = std::pin::pin!(with_timeout(timeout, call));
            let first =
                std::future::poll_fn(|waker| std::task::Poll::Ready(call.as_mut().poll(waker)));
            match first.await {
                std::task::Poll::Ready(returned) => returned,
                std::task::Poll::Pending => {
                    let cancelled = Box::pin(cx.cancelled());
                    tokio::select! {
                        biased;
                        returned = call => returned,
                        () = cancelled => Err(ToolError::Cancelled.into()),
                    }
                }
            }
        };
        let result = match returned {
            Ok(output) => {
                let OutputParts {
                    body,
                    media,
                    meta: tool_meta,
                    structure,
                } = output.into_parts();
                let (body, error_kind) = match body {
                    OutputBody::Empty => (Body::Text(String::new()), None),
                    OutputBody::Text(text) => (Body::Text(text), None),
                    OutputBody::Json(json) => (Body::Json(json), None),
                    OutputBody::Stream(stream) => {
                        let deadline = timeout.map(|limit| (started + limit, limit));
                        // The tool's style, looked up only for a stream (the task stays small).
                        let style = tool.spec().limits.trim;
                        // Boxed: a call that returns text never carries the capture's state.
                        Box::pin(consume(stream, &cx, deadline, most_allowed, style)).await
                    }
                };
                Ok(Produced {
                    body,
                    media,
                    tool_meta,
                    structure,
                    error_kind,
                })
            }
            Err(failure) => Err(failure),
        };
        let timed_out = match &result {
            Err(failure) => failure.kind() == ErrorKind::Timeout,
            Ok(produced) => produced.error_kind == Some(ErrorKind::Timeout),
        };
        if timed_out {
            // Whatever the tool spawned and handed the token to stops too.
            cx.cancellation_token().cancel();
        }
        Outcome {
            result,
            duration: started.elapsed(),
        }
    }
}

/// Consumes a streamed output into a capture, spooling it to the artifact store once it
/// outgrows memory, until it ends, fails, times out or is cancelled. The stream is dropped
/// before the capture finishes, so a producer stops as soon as its output is no longer read.
async fn consume(
    mut stream: OutputStream,
    cx: &ToolContext,
    deadline: Option<(Instant, Duration)>,
    most_allowed: usize,
    style: TrimStyle,
) -> (Body, Option<ErrorKind>) {
    // The stream's salient lines are gathered as it passes (a cut keeps them from the middle),
    // and a lossless run past its head is followed (a cut folds all of it).
    let mut capture = Capture::new(most_allowed).keeping(&style);
    let mut spool = None;
    if let Some(store) = cx.artifacts() {
        let (open, slot) = spool_to(store.clone());
        capture = capture.spool_on_overflow(open);
        spool = Some(slot);
    }
    let expired = async {
        match deadline {
            Some((deadline, _)) => tokio::time::sleep_until(deadline.into()).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(expired);
    let ended = loop {
        tokio::select! {
            biased;
            item = futures_util::StreamExt::next(&mut stream) => match item {
                Some(Ok(chunk)) => capture.push_owned(chunk),
                Some(Err(error)) => break Some(error),
                None => break None,
            },
            () = &mut expired => {
                break Some(ToolError::Timeout(deadline.map_or(Duration::ZERO, |(_, limit)| limit)));
            }
            () = cx.cancelled() => break Some(ToolError::Cancelled),
        }
    };
    drop(stream);
    let error_kind = ended.as_ref().map(ToolError::kind);
    if let Some(error) = ended {
        if capture.last_byte().is_some_and(|b| b != b'\n') {
            capture.push(b"\n");
        }
        capture.push(error.model_text().as_bytes());
    }
    let body = match capture.finish() {
        Captured::Whole(text) => Body::Text(text),
        Captured::Parts(parts) => Body::Parts(Box::new((parts, spool.unwrap_or_default()))),
    };
    (body, error_kind)
}

/// Asks the approval policy about a call, within the call's timeout: a denial, a failed
/// approver and no answer in time all deny.
async fn approve(
    policy: &ApprovalPolicy,
    tool: &Arc<dyn DynTool>,
    args: &Value,
    cx: &ToolContext,
    timeout: Option<Duration>,
) -> Result<(), Failure> {
    let request = ApprovalRequest {
        call_id: cx.call_id(),
        tool: cx.tool_name(),
        arguments: args,
        annotations: tool.spec().annotations,
    };
    let decided = match timeout {
        Some(limit) => tokio::time::timeout(limit, policy.decide(request))
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "no approval came within {}",
                    DisplayDuration(limit)
                ))
            }),
        None => policy.decide(request).await,
    };
    decided.map_err(|reason| Refusal::Denied { reason }.into())
}

/// `call`, failing with a timeout after `timeout`. One future of either kind, not an async fn
/// holding both: the call's state is held once.
fn with_timeout<T>(
    timeout: Option<Duration>,
    call: impl Future<Output = Result<T, Failure>>,
) -> impl Future<Output = Result<T, Failure>> {
    use futures_util::FutureExt as _;
    use futures_util::future::Either;
    match timeout {
        Some(limit) => Either::Left(
            tokio::time::timeout(limit, call)
                .map(move |timed| timed.unwrap_or(Err(ToolError::Timeout(limit).into()))),
        ),
        None => Either::Right(call),
    }
}

/// The outcome of a call's task: its own, or the panic (or abort) that ended it.
fn outcome_of(joined: Result<Outcome, Option<tokio::task::JoinError>>) -> Outcome {
    match joined {
        Ok(outcome) => outcome,
        Err(error) => {
            let message = match error {
                Some(error) if error.is_panic() => panic_message(error.into_panic()),
                _ => "its task was aborted".to_owned(),
            };
            Outcome {
                result: Err(Refusal::Panicked { message }.into()),
                duration: Duration::ZERO,
            }
        }
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        format!("it panicked: {message}")
    } else if let Some(message) = payload.downcast_ref::<String>() {
        format!("it panicked: {message}")
    } else {
        "it panicked".to_owned()
    }
}
