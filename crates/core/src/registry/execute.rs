//! Running batches: admission, concurrent execution, budgeting and post-trim.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::{Arguments, Registry, StopReason, ToolCall};
use crate::approval::{ApprovalPolicy, ApprovalRequest};
use crate::artifacts::{ArtifactError, READ_ARTIFACT, SpoolSlot, spool_to, store_text};
use crate::budget::{BudgetError, BudgetPolicy};
use crate::context::{CallSummary, Event, Page, ToolContext};
use crate::output::{
    Body, Cap, Confinement, ErrorKind, OutputStream, ResultMeta, ToolError, ToolOutput, ToolResult,
};
use crate::tool::DynTool;
use crate::trim::{self, Capture, Captured, CapturedParts, Continuation, FullOutput, TrimStyle};

/// One user turn: the batches the model asks for until it answers, under shared caps.
///
/// A turn counts calls across its batches (`max_calls_per_turn`, `max_calls_per_tool`) and
/// the chars its results used (`turn_budget_chars`). Start a new turn for each user message.
#[derive(Debug)]
pub struct Turn {
    registry: Registry,
    budget: BudgetPolicy,
    calls_made: usize,
    calls_per_tool: HashMap<String, usize>,
    chars_used: usize,
    cancel: CancellationToken,
}

/// A call after admission: either it runs, or its error result is already known.
enum Admission {
    Run {
        tool: Arc<dyn DynTool>,
        args: Value,
        page: Option<Page>,
    },
    Refused(ToolError),
}

/// What became of one call, before budgeting.
struct Outcome {
    result: Result<Produced, ToolError>,
    duration: Duration,
}

/// What a call that returned produced.
struct Produced {
    body: ProducedBody,
    confinement: Option<Confinement>,
    /// Set when a stream ended with an error: the body is the output until then, followed by
    /// the error's text.
    error_kind: Option<ErrorKind>,
}

enum ProducedBody {
    Text(String),
    /// A stream too long to keep whole: its head and tail, and the artifact it was spooled to.
    Parts(CapturedParts, SpoolSlot),
}

impl Turn {
    pub(super) fn new(registry: Registry) -> Self {
        Turn {
            budget: registry.inner.budget.clone(),
            registry,
            calls_made: 0,
            calls_per_tool: HashMap::new(),
            chars_used: 0,
            cancel: CancellationToken::new(),
        }
    }

    /// The budget this turn's batches run under (the registry's, unless replaced).
    pub fn budget(&self) -> &BudgetPolicy {
        &self.budget
    }

    /// Replaces this turn's budget (the registry's is untouched): context-overflow recovery
    /// halves it with [`BudgetPolicy::halved`].
    ///
    /// # Errors
    ///
    /// [`BudgetError`] if the policy is invalid; the turn keeps its budget.
    pub fn set_budget(&mut self, budget: BudgetPolicy) -> Result<(), BudgetError> {
        budget.validate()?;
        self.budget = budget;
        Ok(())
    }

    /// Calls admitted so far in this turn (refused calls do not count).
    pub fn calls_made(&self) -> usize {
        self.calls_made
    }

    /// Chars of all results returned so far in this turn.
    pub fn chars_used(&self) -> usize {
        self.chars_used
    }

    /// What is left of the turn budget, when there is one.
    pub fn turn_budget_left(&self) -> Option<usize> {
        self.budget
            .turn_budget_chars
            .map(|total| total.saturating_sub(self.chars_used))
    }

    /// Cancels the turn: running calls stop and get a cancelled result; later batches are
    /// answered with cancelled results without running.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// A token that cancels this turn, to hand to another task (a Ctrl-C handler, say).
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Runs one batch (the tool calls of one assistant message) and returns exactly one result
    /// per call, in call order, each within its allowance.
    ///
    /// Calls of read-only tools ([`ToolAnnotations::read_only`](crate::ToolAnnotations)) run
    /// concurrently; calls of every other tool run one at a time, in call order, beside them, so
    /// two calls that change things never race.
    ///
    /// Failures never escape as errors: an unknown tool, arguments that are not JSON or do not
    /// fit the schema, a panic, a timeout, a cancellation, a tripped cap — each becomes an
    /// `is_error` result the model can act on, and the other calls run normally.
    ///
    /// # Panics
    ///
    /// When called outside a Tokio runtime (calls are spawned on it).
    pub async fn execute(&mut self, calls: impl IntoIterator<Item = ToolCall>) -> Vec<ToolResult> {
        self.run_batch(calls.into_iter().collect(), false).await
    }

    /// Runs the tool calls of one model response, knowing why the response stopped.
    ///
    /// As [`execute`](Self::execute), except that when the response stopped on its output
    /// limit ([`StopReason::OutputLimit`]: `max_tokens`, `length`), its last call may hold
    /// arguments cut short: it is not run (nor counted against the caps) and is answered with
    /// an error telling the model to split the work. Compose it with
    /// [`MaxTokensEscalation`](crate::history::MaxTokensEscalation): escalate for a cut-off
    /// text, answer a cut-off tool call.
    ///
    /// # Panics
    ///
    /// When called outside a Tokio runtime (calls are spawned on it).
    pub async fn execute_response(
        &mut self,
        calls: impl IntoIterator<Item = ToolCall>,
        stop: StopReason,
    ) -> Vec<ToolResult> {
        self.run_batch(calls.into_iter().collect(), stop == StopReason::OutputLimit)
            .await
    }

    async fn run_batch(&mut self, mut calls: Vec<ToolCall>, last_cut_off: bool) -> Vec<ToolResult> {
        let registry = self.registry.clone();
        let inner = &registry.inner;
        let batch_budget = match self.turn_budget_left() {
            Some(left) => self.budget.batch_budget_chars.min(left),
            None => self.budget.batch_budget_chars,
        };

        let last = calls.len().wrapping_sub(1);
        let admissions: Vec<Admission> = calls
            .iter_mut()
            .enumerate()
            .map(|(i, call)| {
                if last_cut_off && i == last {
                    Admission::Refused(ToolError::CutOff)
                } else {
                    self.admit(call)
                }
            })
            .collect();
        let mut admissions = admissions;
        let pages: Vec<Option<Page>> = admissions
            .iter()
            .map(|admission| match admission {
                Admission::Run { page, .. } => *page,
                Admission::Refused(_) => None,
            })
            .collect();
        let caps: Vec<Option<usize>> = admissions
            .iter()
            .map(|admission| match admission {
                Admission::Run { tool, .. } => tool.spec().limits.max_result_chars,
                Admission::Refused(_) => None,
            })
            .collect();
        let mut contexts: Vec<Option<ToolContext>> = admissions
            .iter()
            .zip(&calls)
            .zip(&pages)
            .map(|((admission, call), &page)| {
                matches!(admission, Admission::Run { .. }).then(|| {
                    ToolContext::new(call.id.as_str(), call.name.as_str(), 0)
                        .with_page(page)
                        .with_events(inner.events.clone())
                        .with_cancellation(self.cancel.child_token())
                        .with_state(inner.state.clone())
                        .with_artifacts(inner.artifacts.clone())
                })
            })
            .collect();

        // Plan before work: what each call estimates it will produce decides its allowance.
        let hints = collect_hints(&admissions, &contexts, inner.size_hint_timeout).await;
        let mut estimates: Vec<Option<usize>> = admissions
            .iter()
            .zip(&hints)
            .map(|(admission, hint)| match (admission, hint) {
                (Admission::Refused(error), _) => Some(error_chars(error)),
                (Admission::Run { .. }, Some(hint)) => Some(planned_for(hint)),
                (Admission::Run { .. }, None) => None,
            })
            .collect();
        let mut initial = self
            .budget
            .planned_allowances(batch_budget, &caps, &estimates);
        // A call that will not fit what it was planned is refused before it runs, and what it
        // was planned goes to the others. Refusing only lowers estimates, so no other call
        // can be refused by the second plan.
        let mut refused_any = false;
        for (i, hint) in hints.iter().enumerate() {
            let Some(hint) = hint else { continue };
            let Admission::Run { tool, .. } = &admissions[i] else {
                continue;
            };
            let asked_for_part = pages[i].is_some_and(|page| page.limit.is_some());
            if asked_for_part {
                continue;
            }
            if let Some(refusal) = hint.refusal(initial[i], tool.spec().limits.paginate) {
                estimates[i] = Some(error_chars(&refusal));
                admissions[i] = Admission::Refused(refusal);
                contexts[i] = None;
                refused_any = true;
            }
        }
        if refused_any {
            initial = self
                .budget
                .planned_allowances(batch_budget, &caps, &estimates);
        }

        let spans: Vec<tracing::Span> = calls
            .iter()
            .zip(&initial)
            .map(|(call, &allowance)| {
                tracing::info_span!(
                    "tool_call",
                    call_id = %call.id,
                    tool = %call.name,
                    allowance,
                    original_chars = tracing::field::Empty,
                    trimmed = tracing::field::Empty,
                    artifact = tracing::field::Empty,
                    is_error = tracing::field::Empty,
                )
            })
            .collect();

        let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(calls.len());
        // Calls of read-only tools run concurrently, each in a task; calls of every other tool
        // run one at a time, in call order, in one runner task beside them.
        let mut tasks = JoinSet::new();
        let mut index_of = HashMap::with_capacity(calls.len());
        let mut one_at_a_time = Vec::new();
        for (i, (admission, cx)) in admissions.into_iter().zip(contexts).enumerate() {
            match admission {
                Admission::Refused(error) => outcomes.push(Some(Outcome {
                    result: Err(error),
                    duration: Duration::ZERO,
                })),
                Admission::Run { tool, args, .. } => {
                    // Every call that runs has a context; a missing one is answered as cancelled.
                    outcomes.push(None);
                    let Some(mut cx) = cx else { continue };
                    let timeout = tool.spec().limits.timeout.or(inner.default_timeout);
                    let read_only = tool.spec().annotations.is_read_only();
                    cx.set_budget(initial[i]);
                    let most = self.budget.most_allowed(batch_budget, caps[i], initial[i]);
                    let run = run_call(tool, args, cx, timeout, most, inner.approval.clone())
                        .instrument(spans[i].clone());
                    if read_only {
                        let handle = tasks.spawn(run);
                        index_of.insert(handle.id(), i);
                    } else {
                        one_at_a_time.push((i, run));
                    }
                }
            }
        }
        // A JoinSet, so dropping this future (a cancelled request) aborts the runner, and the
        // runner's own JoinSet aborts the call it is running.
        let mut runner = JoinSet::new();
        if !one_at_a_time.is_empty() {
            runner.spawn(async move {
                let mut done = Vec::with_capacity(one_at_a_time.len());
                for (i, run) in one_at_a_time {
                    // Each call in a task of its own: a panic stays that call's result.
                    let mut call = JoinSet::new();
                    call.spawn(run);
                    let outcome = match call.join_next().await {
                        Some(joined) => outcome_of(joined.map_err(Some)),
                        None => outcome_of(Err::<Outcome, _>(None)),
                    };
                    done.push((i, outcome));
                }
                done
            });
        }
        while let Some(joined) = tasks.join_next_with_id().await {
            let i = match &joined {
                Ok((id, _)) => index_of[id],
                Err(error) => index_of[&error.id()],
            };
            outcomes[i] = Some(outcome_of(joined.map(|(_, outcome)| outcome).map_err(Some)));
        }
        // A runner that failed leaves its calls empty: they are answered as cancelled.
        if let Some(Ok(done)) = runner.join_next().await {
            for (i, outcome) in done {
                outcomes[i] = Some(outcome);
            }
        }

        let mut results = self
            .fit_results(calls, outcomes, &caps, &initial, &pages, batch_budget)
            .await;
        for (result, span) in results.iter_mut().zip(&spans) {
            span.record("original_chars", result.meta.original_chars);
            span.record("trimmed", result.meta.trimmed());
            span.record("is_error", result.is_error());
            if let Some(artifact) = &result.meta.artifact {
                span.record("artifact", artifact.as_str());
            }
            self.chars_used += result.content_chars();
            if inner.events.receiver_count() == 0 {
                continue; // nobody listens: build no event
            }
            let _ = inner.events.send(Event::CallFinished(CallSummary {
                call_id: result.call_id.as_str().into(),
                tool: result.tool.as_str().into(),
                duration: result.meta.duration,
                allowance: result.meta.allowance,
                original_chars: result.meta.original_chars,
                trimmed: result.meta.trimmed(),
                artifact: result.meta.artifact.clone(),
                is_error: result.is_error(),
            }));
        }
        results
    }

    /// Decides whether a call runs: the tool exists, the turn is live, no cap is tripped, the
    /// arguments are JSON.
    fn admit(&mut self, call: &mut ToolCall) -> Admission {
        let inner = &self.registry.inner;
        let Some(tool) = self.registry.get(&call.name).cloned() else {
            let known = inner.tools.iter().map(|t| t.spec().name.clone()).collect();
            return Admission::Refused(ToolError::UnknownTool {
                name: call.name.clone(),
                known,
            });
        };
        if self.cancel.is_cancelled() {
            return Admission::Refused(ToolError::Cancelled);
        }
        let tool_calls = self.calls_per_tool.get(&call.name).copied().unwrap_or(0);
        let tripped = if self.calls_made >= inner.max_calls_per_turn {
            Some((Cap::CallsPerTurn, inner.max_calls_per_turn))
        } else if tool_calls >= inner.max_calls_per_tool {
            Some((
                Cap::CallsPerTool(call.name.clone()),
                inner.max_calls_per_tool,
            ))
        } else {
            None
        };
        if let Some((cap, limit)) = tripped {
            let message = format!(
                "call `{}` of `{}` refused: {cap} ({limit}) reached",
                call.id, call.name
            );
            tracing::warn!(call_id = %call.id, tool = %call.name, "{message}");
            let _ = inner.events.send(Event::Warning {
                call_id: call.id.as_str().into(),
                tool: call.name.as_str().into(),
                message,
            });
            return Admission::Refused(ToolError::CapExceeded { cap, limit });
        }
        self.calls_made += 1;
        match self.calls_per_tool.get_mut(&call.name) {
            Some(count) => *count += 1,
            None => {
                self.calls_per_tool.insert(call.name.clone(), 1);
            }
        }

        // The arguments move into the call; the rest of the `ToolCall` is still needed.
        let arguments = std::mem::replace(&mut call.arguments, Arguments::Json(Value::Null));
        let args = match arguments {
            Arguments::Json(value) => value,
            Arguments::Raw(text) => match serde_json::from_str(&text) {
                Ok(value) => value,
                Err(error) => {
                    return Admission::Refused(ToolError::invalid_arguments(format!(
                        "the arguments are not valid JSON ({error})"
                    )));
                }
            },
        };
        if !args.is_object() {
            return Admission::Refused(ToolError::invalid_arguments(format!(
                "expected a JSON object of named arguments, got {}; {}",
                json_kind(&args),
                crate::tool::expected_fields(&tool.spec().input_schema)
            )));
        }
        let page = if tool.spec().limits.paginate {
            match page_of(&args) {
                Ok(page) => Some(page),
                Err(error) => return Admission::Refused(error),
            }
        } else {
            None
        };
        Admission::Run { tool, args, page }
    }

    /// Turns outcomes into results: final allowances, artifacts for what overflows, post-trim.
    async fn fit_results(
        &self,
        calls: Vec<ToolCall>,
        outcomes: Vec<Option<Outcome>>,
        caps: &[Option<usize>],
        initial: &[usize],
        pages: &[Option<Page>],
        batch_budget: usize,
    ) -> Vec<ToolResult> {
        let registry = &self.registry;
        let mut bodies = Vec::with_capacity(calls.len());
        let mut demands = Vec::with_capacity(calls.len());
        let mut lines = Vec::with_capacity(calls.len());
        let mut confinements = Vec::with_capacity(calls.len());
        for outcome in outcomes {
            // Every slot was filled: refused calls up front, the others by their task.
            let outcome = outcome.unwrap_or(Outcome {
                result: Err(ToolError::Cancelled),
                duration: Duration::ZERO,
            });
            let (body, error_kind, confinement) = match outcome.result {
                Ok(produced) => (produced.body, produced.error_kind, produced.confinement),
                Err(error) => (
                    ProducedBody::Text(error.model_text()),
                    Some(error.kind()),
                    None,
                ),
            };
            // One pass gives both figures of every text; a stream's were counted as it came.
            let totals = match &body {
                ProducedBody::Text(text) => trim::Totals::of(text),
                ProducedBody::Parts(parts, _) => parts.totals(),
            };
            demands.push(totals.chars);
            lines.push(totals.lines);
            confinements.push(confinement);
            bodies.push((body, error_kind, outcome.duration));
        }
        let allowances = self
            .budget
            .redistribute(batch_budget, caps, initial, &demands);

        // Store the full text of every result that will be trimmed, concurrently, off the
        // runtime's threads; each text comes back from its blocking task untouched. A stream
        // too long to keep was spooled as it came: its artifact is committed by now or soon.
        let mut pending = Vec::with_capacity(bodies.len());
        for (i, (body, error_kind, _)) in bodies.iter_mut().enumerate() {
            let style = style_of(registry, &calls[i].name, error_kind.is_some());
            let overflows =
                demands[i] > allowances[i] || style.max_lines().is_some_and(|max| lines[i] > max);
            let job = match body {
                ProducedBody::Text(text) => registry
                    .artifacts()
                    .filter(|_| overflows)
                    .cloned()
                    .map(|store| {
                        let text = std::mem::take(text);
                        Stored::Text(tokio::task::spawn_blocking(move || {
                            let stored = store_text(store.as_ref(), &text);
                            (text, stored)
                        }))
                    }),
                ProducedBody::Parts(_, spool) => Some(Stored::Spooled(spool.clone())),
            };
            pending.push((style, job));
        }

        let mut results = Vec::with_capacity(bodies.len());
        let work = calls.into_iter().zip(bodies.into_iter().zip(pending));
        for (i, (call, ((body, error_kind, duration), (style, job)))) in work.enumerate() {
            let (body, stored) = match (body, job) {
                (body, None) => (body, None),
                (_, Some(Stored::Text(job))) => match job.await {
                    Ok((text, stored)) => (ProducedBody::Text(text), Some(stored)),
                    Err(error) => (
                        // The store panicked and took the text with it; say so.
                        ProducedBody::Text(format!(
                            "Error: the output was lost: the artifact store failed ({error})."
                        )),
                        None,
                    ),
                },
                (body, Some(Stored::Spooled(spool))) => {
                    let stored = spool.committed().await;
                    (body, stored)
                }
            };
            let (artifact, omitted_bytes, mut artifact_error) = match stored {
                Some(Ok((id, omitted))) => (Some(id), omitted, None),
                Some(Err(error)) => (None, 0, Some(store_failure(&error))),
                None => (None, 0, None),
            };
            if let ProducedBody::Parts(parts, _) = &body
                && let Some(reason) = parts.spool_error()
            {
                artifact_error
                    .get_or_insert_with(|| format!("the artifact store failed ({reason})"));
            }
            let full = match (&artifact, &artifact_error) {
                (Some(id), _) if omitted_bytes > 0 => FullOutput::StoredCapped {
                    id: id.as_str(),
                    reader: READ_ARTIFACT,
                    omitted_bytes,
                },
                (Some(id), _) => FullOutput::Stored {
                    id: id.as_str(),
                    reader: READ_ARTIFACT,
                },
                (None, Some(reason)) => FullOutput::Failed { reason },
                (None, None) => FullOutput::NotKept,
            };
            let continuation = Continuation {
                full,
                // An error is not a page: there is nothing to read on from.
                page_offset: pages[i]
                    .filter(|_| error_kind.is_none())
                    .map(|page| page.offset),
            };
            let (content, cut) = match body {
                ProducedBody::Text(text)
                    if error_kind.is_none()
                        && demands[i] > allowances[i]
                        && looks_like_json(&text)
                        && let Some(fit) = trim::fit_json(
                            &text,
                            allowances[i],
                            style.head_ratio(),
                            &continuation.full,
                        ) =>
                {
                    // JSON over its allowance is cut as JSON: the model still reads valid JSON.
                    let cut = trim::Cut::of_json(demands[i], lines[i], &fit);
                    (fit.text, Some(cut))
                }
                ProducedBody::Text(text) => {
                    let (trimmed, cut) =
                        trim::fit_with(&text, allowances[i], &style, &continuation).into_parts();
                    let trimmed_text = match trimmed {
                        Cow::Owned(trimmed) => Some(trimmed),
                        Cow::Borrowed(_) => None,
                    };
                    (trimmed_text.unwrap_or(text), cut)
                }
                ProducedBody::Parts(parts, _) => {
                    let (trimmed, cut) =
                        parts.fit(allowances[i], &style, &continuation).into_parts();
                    (trimmed.into_owned(), cut)
                }
            };
            if let Some(reason) = &artifact_error {
                let _ = registry.inner.events.send(Event::Warning {
                    call_id: call.id.as_str().into(),
                    tool: call.name.as_str().into(),
                    message: format!("the full output could not be stored: {reason}"),
                });
            }
            results.push(ToolResult {
                call_id: call.id,
                tool: call.name,
                content,
                meta: ResultMeta {
                    allowance: allowances[i],
                    initial_allowance: initial[i],
                    original_chars: demands[i],
                    original_lines: lines[i],
                    artifact: artifact.filter(|_| cut.is_some()),
                    cut,
                    artifact_error,
                    error_kind,
                    duration,
                    confinement: confinements[i],
                },
            });
        }
        results
    }
}

/// A stored artifact and the bytes its cap left out, or why it could not be stored.
type Committed = Result<(crate::artifacts::ArtifactId, u64), ArtifactError>;

/// Where the full output of a result that will be trimmed is being stored.
enum Stored {
    /// A text, stored by a blocking task that hands it back.
    Text(tokio::task::JoinHandle<(String, Committed)>),
    /// A stream, spooled as it came.
    Spooled(SpoolSlot),
}

/// Asks every call that runs for its size hint, concurrently, waiting at most `timeout`; a
/// call without one, with an error, or too slow gets `None`. Costs nothing when no tool
/// estimates.
async fn collect_hints(
    admissions: &[Admission],
    contexts: &[Option<ToolContext>],
    timeout: Duration,
) -> Vec<Option<crate::SizeHint>> {
    let mut asks = Vec::new();
    for (i, (admission, cx)) in admissions.iter().zip(contexts).enumerate() {
        if let (Admission::Run { tool, args, .. }, Some(cx)) = (admission, cx)
            && let Some(estimate) = tool.estimate(args, cx)
        {
            asks.push(async move { (i, estimate.await) });
        }
    }
    let mut hints = vec![None; admissions.len()];
    if asks.is_empty() {
        return hints;
    }
    let mut asks: futures_util::stream::FuturesUnordered<_> = asks.into_iter().collect();
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            next = futures_util::StreamExt::next(&mut asks) => match next {
                Some((i, Ok(hint))) => hints[i] = hint,
                Some((_, Err(_))) => {} // the call reports its own error when it runs
                None => break,
            },
            () = &mut deadline => break,
        }
    }
    hints
}

/// What the plan sets aside for a call that estimated `hint`: a tenth more (and 64 chars), as
/// estimates are estimates and a tool that fits its output to its allowance would otherwise
/// cut what only just did not fit.
fn planned_for(hint: &crate::SizeHint) -> usize {
    let chars = usize::try_from(hint.chars).unwrap_or(usize::MAX);
    chars.saturating_add(chars / 10).saturating_add(64)
}

/// Whether a result's text is a JSON object or array (by its first char; the JSON fit checks
/// the rest).
fn looks_like_json(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

/// The chars of an error's text, as the model would see it.
fn error_chars(error: &ToolError) -> usize {
    error.model_text().chars().count()
}

/// Runs one admitted call under its timeout and the turn's cancellation; a streamed output is
/// consumed here, under the same timeout, in memory bounded by `most_allowed` chars.
async fn run_call(
    tool: Arc<dyn DynTool>,
    args: Value,
    cx: ToolContext,
    timeout: Option<Duration>,
    most_allowed: usize,
    approval: Option<Arc<ApprovalPolicy>>,
) -> Outcome {
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
        if let Some(policy) = &approval {
            approve(policy, &tool, &args, &cx, timeout).await?;
        }
        tool.call_json(args, &cx).await
    };
    let result = tokio::select! {
        // The call first: a call that is ready never registers a cancellation waiter.
        biased;
        result = with_timeout(timeout, call) => result,
        () = cx.cancelled() => Err(ToolError::Cancelled),
    };
    let result = match result {
        Ok(output) => {
            let confinement = output.confinement;
            Ok(match output.into_body() {
                Body::Empty => produced(String::new(), confinement),
                Body::Text(text) => produced(text, confinement),
                Body::Stream(stream) => {
                    let deadline = timeout.map(|limit| (started + limit, limit));
                    // Boxed: a call that returns text never carries the capture's state.
                    let mut done = Box::pin(consume(stream, &cx, deadline, most_allowed)).await;
                    done.confinement = confinement;
                    done
                }
            })
        }
        Err(error) => Err(error),
    };
    let timed_out = match &result {
        Err(ToolError::Timeout(_)) => true,
        Ok(produced) => produced.error_kind == Some(ErrorKind::Timeout),
        Err(_) => false,
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

fn produced(text: String, confinement: Option<Confinement>) -> Produced {
    Produced {
        body: ProducedBody::Text(text),
        confinement,
        error_kind: None,
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
) -> Produced {
    let mut capture = Capture::new(most_allowed);
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
                Some(Ok(chunk)) => capture.push(&chunk),
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
        Captured::Whole(text) => ProducedBody::Text(text),
        Captured::Parts(parts) => ProducedBody::Parts(parts, spool.unwrap_or_default()),
    };
    Produced {
        body,
        confinement: None,
        error_kind,
    }
}

/// Asks the approval policy about a call, within the call's timeout: a denial, a failed
/// approver and no answer in time all deny.
async fn approve(
    policy: &ApprovalPolicy,
    tool: &Arc<dyn DynTool>,
    args: &Value,
    cx: &ToolContext,
    timeout: Option<Duration>,
) -> Result<(), ToolError> {
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
                    crate::output::DisplayDuration(limit)
                ))
            }),
        None => policy.decide(request).await,
    };
    decided.map_err(|reason| ToolError::Denied { reason })
}

async fn with_timeout(
    timeout: Option<Duration>,
    call: impl Future<Output = Result<ToolOutput, ToolError>>,
) -> Result<ToolOutput, ToolError> {
    match timeout {
        Some(limit) => tokio::time::timeout(limit, call)
            .await
            .unwrap_or(Err(ToolError::Timeout(limit))),
        None => call.await,
    }
}

/// The trim style of a result: the tool's own for its output; the error style for errors, so
/// their first words survive any allowance.
fn style_of(registry: &Registry, tool: &str, is_error: bool) -> TrimStyle {
    match registry.get(tool) {
        Some(tool) if !is_error => tool.spec().limits.trim_style(),
        _ => TrimStyle::error(),
    }
}

/// `offset` and `limit` of a paginated tool's arguments.
fn page_of(args: &Value) -> Result<Page, ToolError> {
    let number = |key: &str| match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .map(|n| Some(usize::try_from(n).unwrap_or(usize::MAX)))
            .ok_or_else(|| {
                let shown: String = value.to_string().chars().take(40).collect();
                ToolError::invalid_arguments(format!(
                    "{key}: expected a non-negative integer, got {shown}"
                ))
            }),
    };
    let offset = number("offset")?.unwrap_or(0);
    let limit = number("limit")?;
    if limit == Some(0) {
        return Err(ToolError::invalid_arguments("limit: must be at least 1"));
    }
    Ok(Page { offset, limit })
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn store_failure(error: &ArtifactError) -> String {
    match error {
        ArtifactError::Io(io) => format!("the artifact store failed ({io})"),
        other => other.to_string(),
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
                result: Err(ToolError::Panicked { message }),
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
