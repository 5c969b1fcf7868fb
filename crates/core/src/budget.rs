//! The budget contract: how much of a batch's budget each call may fill.
//!
//! For one batch of `n` calls:
//!
//! 1. The share is `batch_budget / n`, floored.
//! 2. Call `i`'s allowance before it runs is `min(share, cap_i)`, where `cap_i` is the smaller
//!    of the tool's `max_result_chars` and the policy's `per_result_max_chars`. When calls
//!    estimated their output before running ([`SizeHint`](crate::tool::SizeHint)), the
//!    allowances are planned over those estimates instead ([`BudgetPolicy::plan`]). The tool
//!    sees its allowance as [`ToolContext::allowance`](crate::ToolContext::allowance).
//! 3. After all calls finish, [`SplitStrategy::FairShare`] hands the allowance the small
//!    results left unused to the calls that need more, max-min fairly, never past a call's cap;
//!    [`SplitStrategy::Even`] keeps the allowances of step 2.
//!
//! `docs/budget.md` works through examples.

use crate::fair;
use crate::tokens::TokenCounter;

/// A batch budget that follows the model's context window: a share of what is left of the
/// window, in chars, clamped between a floor and a ceiling. Recompute it before each batch, as
/// the history grows.
///
/// By default: a quarter of the remaining window, at least 4,000 chars, at most 200,000.
///
/// ```
/// use toolsmith::BudgetPolicy;
/// use toolsmith::budget::WindowBudget;
/// use toolsmith::tokens::CharsPerToken;
///
/// let window = WindowBudget::new(200_000);
/// let chars = CharsPerToken::default(); // 4 chars a token
/// // 100,000 tokens used: a quarter of the other 100,000 is 25,000 tokens, 100,000 chars.
/// assert_eq!(window.batch_budget_chars(100_000, &chars), 100_000);
/// // Nearly full: the floor.
/// assert_eq!(window.batch_budget_chars(199_000, &chars), 4_000);
/// let policy = window.apply(BudgetPolicy::default(), 180_000, &chars);
/// assert_eq!(policy.batch_budget_chars, 20_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct WindowBudget {
    /// The model's context window, in tokens.
    pub context_window_tokens: usize,
    /// The share of the remaining window one batch of tool results may fill, 0 to 1.
    pub share: f64,
    /// The least batch budget, in chars, however full the window.
    pub floor_chars: usize,
    /// The most batch budget, in chars, however empty the window.
    pub ceiling_chars: usize,
}

impl WindowBudget {
    /// The default share of the remaining window: a quarter.
    pub const DEFAULT_SHARE: f64 = 0.25;
    /// The default floor: 4,000 chars (about 1,000 tokens).
    pub const DEFAULT_FLOOR_CHARS: usize = 4_000;
    /// The default ceiling: 200,000 chars (about 50,000 tokens).
    pub const DEFAULT_CEILING_CHARS: usize = 200_000;

    /// A window budget for a model whose context window holds `context_window_tokens`.
    pub fn new(context_window_tokens: usize) -> Self {
        WindowBudget {
            context_window_tokens,
            share: Self::DEFAULT_SHARE,
            floor_chars: Self::DEFAULT_FLOOR_CHARS,
            ceiling_chars: Self::DEFAULT_CEILING_CHARS,
        }
    }

    /// Sets [`share`](Self::share) (clamped to 0..=1; NaN means the default).
    #[must_use]
    pub fn with_share(mut self, share: f64) -> Self {
        self.share = if share.is_nan() {
            Self::DEFAULT_SHARE
        } else {
            share.clamp(0.0, 1.0)
        };
        self
    }

    /// Sets [`floor_chars`](Self::floor_chars).
    #[must_use]
    pub fn with_floor_chars(mut self, chars: usize) -> Self {
        self.floor_chars = chars;
        self
    }

    /// Sets [`ceiling_chars`](Self::ceiling_chars).
    #[must_use]
    pub fn with_ceiling_chars(mut self, chars: usize) -> Self {
        self.ceiling_chars = chars;
        self
    }

    /// The batch budget, in chars, when `used_tokens` of the window are taken (by the history
    /// and the request's `max_tokens`, as the caller counts them): the share of the remaining
    /// tokens, converted by `counter`, clamped to the floor and the ceiling (the floor wins if
    /// the two cross). Never 0.
    pub fn batch_budget_chars(&self, used_tokens: usize, counter: &dyn TokenCounter) -> usize {
        let remaining = self.context_window_tokens.saturating_sub(used_tokens);
        let tokens = (remaining as f64 * self.share) as usize;
        let chars = counter.chars_for(tokens);
        chars.min(self.ceiling_chars).max(self.floor_chars).max(1)
    }

    /// `policy` with its batch budget set from the window (everything else kept).
    pub fn apply(
        &self,
        policy: BudgetPolicy,
        used_tokens: usize,
        counter: &dyn TokenCounter,
    ) -> BudgetPolicy {
        policy.with_batch_budget_chars(self.batch_budget_chars(used_tokens, counter))
    }
}

/// How a batch's budget is split among its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SplitStrategy {
    /// Every call gets the even share (or less, under its cap), and nothing else.
    Even,
    /// The even share first; after the results are in, what small results left unused goes to
    /// the calls that need more, max-min fairly. The default.
    #[default]
    FairShare,
}

/// The budgets that bound tool results, in chars. A value: halve it, copy it, never a global.
///
/// By default: a batch budget of 80,000 chars, no per-result cap, no turn aggregate, and the
/// fair-share split.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BudgetPolicy {
    /// The chars all results of one batch may fill together. Must be at least 1.
    pub batch_budget_chars: usize,
    /// A cap on any one result, whatever its share. `None` means no such cap.
    pub per_result_max_chars: Option<usize>,
    /// A cap on the sum over all batches of one turn; a later batch gets what is left.
    /// `None` means no aggregate cap.
    pub turn_budget_chars: Option<usize>,
    /// How the batch budget is split.
    pub split: SplitStrategy,
}

impl Default for BudgetPolicy {
    fn default() -> Self {
        BudgetPolicy {
            batch_budget_chars: Self::DEFAULT_BATCH_BUDGET_CHARS,
            per_result_max_chars: None,
            turn_budget_chars: None,
            split: SplitStrategy::FairShare,
        }
    }
}

impl BudgetPolicy {
    /// The default batch budget: 80,000 chars, about 20,000 tokens.
    pub const DEFAULT_BATCH_BUDGET_CHARS: usize = 80_000;

    /// The default policy (see the type's docs).
    pub fn new() -> Self {
        Self::default()
    }

    /// The stricter profile of long interactive sessions: the default batch budget, plus at most
    /// 20,000 chars per result and 200,000 chars per turn.
    pub fn session_profile() -> Self {
        BudgetPolicy {
            per_result_max_chars: Some(20_000),
            turn_budget_chars: Some(200_000),
            ..Self::default()
        }
    }

    /// Sets [`batch_budget_chars`](Self::batch_budget_chars).
    #[must_use]
    pub fn with_batch_budget_chars(mut self, chars: usize) -> Self {
        self.batch_budget_chars = chars;
        self
    }

    /// Sets [`per_result_max_chars`](Self::per_result_max_chars).
    #[must_use]
    pub fn with_per_result_max_chars(mut self, chars: Option<usize>) -> Self {
        self.per_result_max_chars = chars;
        self
    }

    /// Sets [`turn_budget_chars`](Self::turn_budget_chars).
    #[must_use]
    pub fn with_turn_budget_chars(mut self, chars: Option<usize>) -> Self {
        self.turn_budget_chars = chars;
        self
    }

    /// Sets [`split`](Self::split).
    #[must_use]
    pub fn with_split(mut self, split: SplitStrategy) -> Self {
        self.split = split;
        self
    }

    /// This policy with every budget halved (rounding down, never below 1): the first level of
    /// context-overflow recovery.
    #[must_use]
    pub fn halved(&self) -> Self {
        let half = |chars: usize| (chars / 2).max(1);
        BudgetPolicy {
            batch_budget_chars: half(self.batch_budget_chars),
            per_result_max_chars: self.per_result_max_chars.map(half),
            turn_budget_chars: self.turn_budget_chars.map(half),
            split: self.split,
        }
    }

    /// Checks the policy.
    ///
    /// # Errors
    ///
    /// [`BudgetError`] naming the first setting that is 0.
    pub fn validate(&self) -> Result<(), BudgetError> {
        if self.batch_budget_chars == 0 {
            return Err(BudgetError::Zero("batch_budget_chars"));
        }
        if self.per_result_max_chars == Some(0) {
            return Err(BudgetError::Zero("per_result_max_chars"));
        }
        if self.turn_budget_chars == Some(0) {
            return Err(BudgetError::Zero("turn_budget_chars"));
        }
        Ok(())
    }

    /// The most a call planned `planned` chars could end up with, once the batch is settled:
    /// what bounds the memory a streamed output is captured in.
    pub(crate) fn most_allowed(
        &self,
        batch_budget: usize,
        tool_cap: Option<usize>,
        planned: usize,
    ) -> usize {
        match self.split {
            SplitStrategy::Even => planned,
            SplitStrategy::FairShare => self.cap(tool_cap).min(batch_budget).max(planned),
        }
    }

    /// The cap of one call: the smaller of the tool's own cap and the per-result cap.
    fn cap(&self, tool_cap: Option<usize>) -> usize {
        tool_cap
            .unwrap_or(usize::MAX)
            .min(self.per_result_max_chars.unwrap_or(usize::MAX))
    }

    /// The even split: each call's allowance is the batch's share, `batch_budget / n`, or its
    /// cap if that is less. Estimates are not read.
    ///
    /// ```
    /// use toolsmith::budget::{BudgetPolicy, Claim};
    ///
    /// let policy = BudgetPolicy::default();
    /// let three = [Claim::new(); 3];
    /// assert_eq!(policy.allowances(80_000, &three), [26_666, 26_666, 26_666]);
    /// assert_eq!(policy.allowances(80_000, &[Claim::new().with_cap(Some(20_000))]), [20_000]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn allowances(&self, batch_budget: usize, calls: &[Claim]) -> Vec<usize> {
        let share = batch_budget / calls.len().max(1);
        calls
            .iter()
            .map(|call| share.min(self.cap(call.cap)))
            .collect()
    }

    /// The allowance of each call before it runs, knowing what some calls estimated they will
    /// produce ([`Claim::estimate`]).
    ///
    /// Under [`SplitStrategy::Even`] the estimates change nothing: these are the
    /// [`allowances`](Self::allowances). Under [`SplitStrategy::FairShare`]:
    ///
    /// 1. each call without an estimate is set aside half the even share (never past its cap);
    /// 2. the rest of the budget is shared max-min fairly over the estimates, each capped by its
    ///    call's cap: a call that needs less than an equal part gets what it needs, the others
    ///    an equal part of what remains;
    /// 3. what is still left is shared equally among the calls without an estimate or, when
    ///    every call has one, among all calls (room for estimates that fell short), never past
    ///    a call's cap.
    ///
    /// A call with an estimate gets at least the smaller of its estimate and the even share; a
    /// batch without estimates gets the [`allowances`](Self::allowances).
    ///
    /// ```
    /// use toolsmith::budget::{BudgetPolicy, Claim};
    ///
    /// // A 2,000-char read beside a 200,000-char one: the big one gets the rest of the batch.
    /// let policy = BudgetPolicy::default();
    /// let calls = [Claim::new().with_estimate(Some(2_000)), Claim::new().with_estimate(Some(200_000))];
    /// assert_eq!(policy.plan(80_000, &calls), [2_000, 78_000]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn plan(&self, batch_budget: usize, calls: &[Claim]) -> Vec<usize> {
        if self.split == SplitStrategy::Even || calls.iter().all(|call| call.estimate.is_none()) {
            return self.allowances(batch_budget, calls);
        }
        let share = batch_budget / calls.len().max(1);
        let caps: Vec<usize> = calls.iter().map(|call| self.cap(call.cap)).collect();
        let mut allowances: Vec<usize> = calls
            .iter()
            .zip(&caps)
            .map(|(call, &cap)| match call.estimate {
                None => (share / 2).min(cap),
                Some(_) => 0,
            })
            .collect();
        let mut left = batch_budget.saturating_sub(allowances.iter().sum());
        let wants: Vec<usize> = calls
            .iter()
            .zip(&caps)
            .map(|(call, &cap)| call.estimate.map_or(0, |chars| chars.min(cap)))
            .collect();
        left -= fair::fill(&mut allowances, &wants, left);
        // What is left goes to the calls whose needs are unknown; when every need is known,
        // to every call, as room for estimates that fell short.
        let any_unknown = calls.iter().any(|call| call.estimate.is_none());
        let room: Vec<usize> = allowances
            .iter()
            .zip(&caps)
            .zip(calls)
            .map(|((&allowance, &cap), call)| {
                if any_unknown && call.estimate.is_some() {
                    0
                } else {
                    cap - allowance
                }
            })
            .collect();
        fair::fill(&mut allowances, &room, left);
        allowances
    }

    /// The final allowance of each call, from the allowance it ran with and the chars it
    /// produced ([`Demand`]). Under [`SplitStrategy::Even`] these are the planned allowances.
    ///
    /// Under [`SplitStrategy::FairShare`] the budget the calls within their allowance left
    /// unused is shared max-min fairly among the calls over theirs, never past a call's cap;
    /// no call gets less than it was planned.
    ///
    /// ```
    /// use toolsmith::budget::{BudgetPolicy, Demand};
    ///
    /// // A 2,000-char result leaves 38,000 of its share unused; the 90,000-char one takes it.
    /// let policy = BudgetPolicy::default();
    /// let calls = [Demand::new(40_000, 2_000), Demand::new(40_000, 90_000)];
    /// assert_eq!(policy.settle(80_000, &calls), [40_000, 78_000]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn settle(&self, batch_budget: usize, calls: &[Demand]) -> Vec<usize> {
        let mut allowances: Vec<usize> = calls.iter().map(|call| call.planned).collect();
        if self.split == SplitStrategy::Even {
            return allowances;
        }
        let used: usize = calls.iter().map(|call| call.planned.min(call.chars)).sum();
        let slack = batch_budget.saturating_sub(used);
        // The extra each call over its allowance could use, up to its cap.
        let extra: Vec<usize> = calls
            .iter()
            .map(|call| {
                call.chars
                    .min(self.cap(call.cap))
                    .saturating_sub(call.planned)
            })
            .collect();
        fair::fill(&mut allowances, &extra, slack);
        allowances
    }
}

/// One call as the budget plans it, before it runs: its tool's cap and, when it gave one, the
/// estimate of what it will produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Claim {
    /// The tool's own cap on a result (`max_result_chars`); `None` when it has none. The
    /// policy's `per_result_max_chars` applies on top.
    pub cap: Option<usize>,
    /// The chars the call estimated it will produce ([`SizeHint`](crate::tool::SizeHint));
    /// `None` when it gave no estimate.
    pub estimate: Option<usize>,
}

impl Claim {
    /// A call without a cap of its own or an estimate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`cap`](Self::cap).
    #[must_use]
    pub fn with_cap(mut self, cap: Option<usize>) -> Self {
        self.cap = cap;
        self
    }

    /// Sets [`estimate`](Self::estimate).
    #[must_use]
    pub fn with_estimate(mut self, estimate: Option<usize>) -> Self {
        self.estimate = estimate;
        self
    }
}

/// One call as the budget settles it, after it ran: the allowance it ran with and the chars it
/// produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Demand {
    /// The tool's own cap on a result; `None` when it has none.
    pub cap: Option<usize>,
    /// The allowance the call ran with (what [`BudgetPolicy::plan`] gave it).
    pub planned: usize,
    /// The chars it produced.
    pub chars: usize,
}

impl Demand {
    /// A call planned `planned` chars that produced `chars`, without a cap of its own.
    pub fn new(planned: usize, chars: usize) -> Self {
        Demand {
            cap: None,
            planned,
            chars,
        }
    }

    /// Sets [`cap`](Self::cap).
    #[must_use]
    pub fn with_cap(mut self, cap: Option<usize>) -> Self {
        self.cap = cap;
        self
    }
}

/// An invalid [`BudgetPolicy`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BudgetError {
    /// A budget was set to 0, which would leave no room for any result.
    #[error("`{0}` is 0: a budget must be at least 1 char (use None to mean no cap)")]
    Zero(&'static str),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(caps: &[Option<usize>]) -> Vec<Claim> {
        caps.iter().map(|&cap| Claim::new().with_cap(cap)).collect()
    }

    fn planned(caps: &[Option<usize>], estimates: &[Option<usize>]) -> Vec<Claim> {
        caps.iter()
            .zip(estimates)
            .map(|(&cap, &estimate)| Claim::new().with_cap(cap).with_estimate(estimate))
            .collect()
    }

    #[test]
    fn worked_examples_of_the_even_split() {
        let policy = BudgetPolicy::default().with_split(SplitStrategy::Even);
        assert_eq!(policy.allowances(80_000, &claims(&[None; 3])), [26_666; 3]);
        assert_eq!(policy.allowances(80_000, &claims(&[None; 5])), [16_000; 5]);
        assert_eq!(policy.allowances(80_000, &claims(&[None])), [80_000]);
        assert_eq!(
            policy.allowances(80_000, &claims(&[Some(20_000)])),
            [20_000]
        );
        assert!(policy.allowances(80_000, &[]).is_empty());
    }

    #[test]
    fn per_result_cap_applies_to_every_call() {
        let policy = BudgetPolicy::session_profile();
        assert_eq!(
            policy.allowances(80_000, &claims(&[None, Some(5_000)])),
            [20_000, 5_000]
        );
    }

    #[test]
    fn even_split_ignores_demands() {
        let policy = BudgetPolicy::default().with_split(SplitStrategy::Even);
        let calls = [Demand::new(40_000, 10), Demand::new(40_000, 100_000)];
        assert_eq!(policy.settle(80_000, &calls), [40_000, 40_000]);
    }

    #[test]
    fn halving_never_reaches_zero() {
        let policy = BudgetPolicy::default()
            .with_batch_budget_chars(1)
            .with_per_result_max_chars(Some(20_000));
        let halved = policy.halved();
        assert_eq!(halved.batch_budget_chars, 1);
        assert_eq!(halved.per_result_max_chars, Some(10_000));
        assert!(halved.validate().is_ok());
    }

    #[test]
    fn planning_gives_estimated_calls_what_they_need() {
        let fair = BudgetPolicy::default();
        // Nothing estimated: the even split.
        assert_eq!(fair.plan(80_000, &claims(&[None; 3])), [26_666; 3]);
        // A 30,000-char estimate beside five calls without one is planned in full.
        let mut estimates = vec![None; 6];
        estimates[0] = Some(33_000);
        let planned_six = fair.plan(80_000, &planned(&[None; 6], &estimates));
        assert!(planned_six[0] >= 33_000, "{planned_six:?}");
        assert!(
            planned_six[1..].iter().all(|&a| a >= 13_333 / 2),
            "{planned_six:?}"
        );
        assert!(planned_six.iter().sum::<usize>() <= 80_000);
        // Caps hold, and what one call cannot take goes to the others.
        let calls = planned(&[Some(10_000), None], &[Some(50_000), Some(90_000)]);
        assert_eq!(fair.plan(80_000, &calls), [10_000, 70_000]);
        // Two calls that both want more than half split evenly.
        let calls = planned(&[None; 2], &[Some(60_000), Some(70_000)]);
        assert_eq!(fair.plan(80_000, &calls), [40_000, 40_000]);
        // Even ignores estimates.
        let even = BudgetPolicy::default().with_split(SplitStrategy::Even);
        let calls = planned(&[None; 2], &[Some(10), None]);
        assert_eq!(even.plan(80_000, &calls), [40_000; 2]);
    }

    proptest::proptest! {
        #[test]
        fn a_call_with_an_estimate_never_gets_less_than_its_even_share_or_its_need(
            budget in 1usize..200_000,
            calls in proptest::collection::vec(
                (proptest::option::of(1usize..100_000), proptest::option::of(1usize..200_000)),
                1..12,
            ),
        ) {
            let policy = BudgetPolicy::default();
            let claims: Vec<Claim> = calls
                .iter()
                .map(|&(estimate, cap)| Claim::new().with_cap(cap).with_estimate(estimate))
                .collect();
            let planned = policy.plan(budget, &claims);
            proptest::prop_assert!(planned.iter().sum::<usize>() <= budget);
            let share = budget / calls.len();
            for (&allowance, claim) in planned.iter().zip(&claims) {
                let cap = claim.cap.unwrap_or(usize::MAX);
                proptest::prop_assert!(allowance <= cap);
                if let Some(estimate) = claim.estimate {
                    proptest::prop_assert!(allowance >= estimate.min(share).min(cap));
                } else {
                    proptest::prop_assert!(allowance >= (share / 2).min(cap));
                }
            }
        }
    }
}
