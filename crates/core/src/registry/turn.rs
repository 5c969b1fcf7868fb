//! A turn: the batches the model asks for until it answers, under shared caps. A batch runs
//! its phases in order over one record per call: [admit](super::admit),
//! [plan](super::plan), [run](super::run), [fit](super::fit), [report](super::report).

use tokio_util::sync::CancellationToken;

use super::call::{StopReason, ToolCall};
use super::result::ToolResult;
use super::{Registry, fit, plan, report, run};
use crate::budget::{BudgetError, BudgetPolicy};

/// One user turn: the batches the model asks for until it answers, under shared caps.
///
/// A turn counts calls across its batches (`max_calls_per_turn`, `max_calls_per_tool`) and
/// the chars its results used (`turn_budget_chars`). Start a new turn for each user message.
#[derive(Debug)]
pub struct Turn {
    pub(super) registry: Registry,
    budget: BudgetPolicy,
    pub(super) calls_made: usize,
    /// The calls admitted of each tool, by its index in the registry.
    pub(super) calls_per_tool: Vec<usize>,
    chars_used: usize,
    pub(super) cancel: CancellationToken,
}

impl Turn {
    pub(super) fn new(registry: Registry) -> Self {
        Turn {
            budget: registry.inner.budget.clone(),
            calls_per_tool: vec![0; registry.inner.tools.len()],
            registry,
            calls_made: 0,
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
    /// Calls of read-only tools ([`ToolAnnotations::read_only`](crate::tool::ToolAnnotations)) run
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

    /// Runs one batch through its phases.
    async fn run_batch(&mut self, calls: Vec<ToolCall>, last_cut_off: bool) -> Vec<ToolResult> {
        let registry = self.registry.clone();
        let inner = &registry.inner;
        let batch_budget = match self.turn_budget_left() {
            Some(left) => self.budget.batch_budget_chars.min(left),
            None => self.budget.batch_budget_chars,
        };
        let mut records = self.admit(calls, last_cut_off);
        plan::plan(
            &mut records,
            &self.budget,
            batch_budget,
            inner.size_hint_timeout,
        )
        .await;
        run::run(&mut records, inner, &self.budget, batch_budget).await;
        let spans: Vec<tracing::Span> = records.iter().map(|r| r.span.clone()).collect();
        let results = fit::fit(records, &registry, &self.budget, batch_budget).await;
        self.chars_used += report::report(&results, &spans, &inner.events);
        results
    }
}
