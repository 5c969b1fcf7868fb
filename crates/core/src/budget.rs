//! The budget contract: how much of a batch's budget each call may fill.
//!
//! For one batch of `n` calls:
//!
//! 1. The share is `batch_budget / n`, floored.
//! 2. Call `i`'s allowance before it runs is `min(share, cap_i)`, where `cap_i` is the smaller
//!    of the tool's `max_result_chars` and the policy's `per_result_max_chars`. The tool sees it
//!    as [`ToolContext::budget`](crate::ToolContext::budget).
//! 3. After all calls finish, [`SplitStrategy::FairShare`] hands the allowance the small
//!    results left unused to the calls that need more, max-min fairly, never past a call's cap;
//!    [`SplitStrategy::Even`] keeps the allowances of step 2.
//!
//! `docs/budget.md` works through examples.

use crate::tokens::TokenCounter;

/// A batch budget that follows the model's context window: a share of what is left of the
/// window, in chars, clamped between a floor and a ceiling. Recompute it before each batch, as
/// the history grows.
///
/// By default: a quarter of the remaining window, at least 4,000 chars, at most 200,000.
///
/// ```
/// use toolsmith::{BudgetPolicy, CharsPerToken, WindowBudget};
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

    /// The cap of one call: the smaller of the tool's own cap and the per-result cap.
    fn cap(&self, tool_cap: Option<usize>) -> usize {
        tool_cap
            .unwrap_or(usize::MAX)
            .min(self.per_result_max_chars.unwrap_or(usize::MAX))
    }

    /// The allowance of each call before it runs, for a batch whose budget is `batch_budget`
    /// and whose calls' tools have the caps `tool_caps` (`max_result_chars`).
    ///
    /// ```
    /// use toolsmith::BudgetPolicy;
    ///
    /// let policy = BudgetPolicy::default();
    /// assert_eq!(policy.allowances(80_000, &[None, None, None]), [26_666, 26_666, 26_666]);
    /// assert_eq!(policy.allowances(80_000, &[Some(20_000)]), [20_000]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn allowances(&self, batch_budget: usize, tool_caps: &[Option<usize>]) -> Vec<usize> {
        let share = batch_budget / tool_caps.len().max(1);
        tool_caps
            .iter()
            .map(|&cap| share.min(self.cap(cap)))
            .collect()
    }

    /// The final allowance of each call, once `demands` (the chars each call produced) are
    /// known. Under [`SplitStrategy::Even`] these are the [`allowances`](Self::allowances).
    ///
    /// Under [`SplitStrategy::FairShare`] the budget the calls within their allowance left
    /// unused is shared max-min fairly among the calls over theirs: each gets what it needs
    /// or an equal part of what remains, whichever is less, never past its cap.
    ///
    /// ```
    /// use toolsmith::BudgetPolicy;
    ///
    /// // A 2,000-char result leaves 38,000 of its share unused; the 90,000-char one takes it.
    /// let policy = BudgetPolicy::default();
    /// let caps = [None, None];
    /// assert_eq!(policy.final_allowances(80_000, &caps, &[2_000, 90_000]), [40_000, 78_000]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    ///
    /// If `demands` and `tool_caps` differ in length.
    pub fn final_allowances(
        &self,
        batch_budget: usize,
        tool_caps: &[Option<usize>],
        demands: &[usize],
    ) -> Vec<usize> {
        assert_eq!(
            tool_caps.len(),
            demands.len(),
            "one demand per call is required"
        );
        let mut allowances = self.allowances(batch_budget, tool_caps);
        if self.split == SplitStrategy::Even {
            return allowances;
        }
        let used: usize = allowances
            .iter()
            .zip(demands)
            .map(|(&allowance, &demand)| allowance.min(demand))
            .sum();
        let mut slack = batch_budget.saturating_sub(used);
        // The extra each call over its allowance could use, up to its cap.
        let mut needy: Vec<(usize, usize)> = allowances
            .iter()
            .zip(demands)
            .zip(tool_caps)
            .enumerate()
            .filter_map(|(i, ((&allowance, &demand), &cap))| {
                let extra = demand.min(self.cap(cap)).saturating_sub(allowance);
                (extra > 0).then_some((extra, i))
            })
            .collect();
        // Water-filling: serve the smallest needs first, each at most an equal part of the rest.
        needy.sort_unstable();
        let count = needy.len();
        for (served, (extra, i)) in needy.into_iter().enumerate() {
            let give = extra.min(slack / (count - served));
            allowances[i] += give;
            slack -= give;
        }
        allowances
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

    #[test]
    fn worked_examples_of_the_even_split() {
        let policy = BudgetPolicy::default().with_split(SplitStrategy::Even);
        assert_eq!(policy.allowances(80_000, &[None; 3]), [26_666; 3]);
        assert_eq!(policy.allowances(80_000, &[None; 5]), [16_000; 5]);
        assert_eq!(policy.allowances(80_000, &[None]), [80_000]);
        assert_eq!(policy.allowances(80_000, &[Some(20_000)]), [20_000]);
        assert!(policy.allowances(80_000, &[]).is_empty());
    }

    #[test]
    fn per_result_cap_applies_to_every_call() {
        let policy = BudgetPolicy::session_profile();
        assert_eq!(
            policy.allowances(80_000, &[None, Some(5_000)]),
            [20_000, 5_000]
        );
    }

    #[test]
    fn even_split_ignores_demands() {
        let policy = BudgetPolicy::default().with_split(SplitStrategy::Even);
        assert_eq!(
            policy.final_allowances(80_000, &[None, None], &[10, 100_000]),
            [40_000, 40_000]
        );
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
}
