//! Plan: each call's allowance before any call runs. The calls whose tools estimate their
//! output are asked first, all at once and within the hint timeout; the budget policy plans over
//! the estimates; a call whose estimate does not fit what it was planned is refused (nothing
//! read) and the plan is made again without it.

use std::time::Duration;

use super::record::{CallRecord, Stage};
use crate::budget::BudgetPolicy;
use crate::tool::SizeHint;

/// Plans the allowance of every call of the batch, refusing the calls that would not fit, and
/// opens each call's `tool_call` span.
pub(super) async fn plan(
    records: &mut [CallRecord],
    budget: &BudgetPolicy,
    batch_budget: usize,
    hint_timeout: Duration,
) {
    let hints = collect_hints(records, hint_timeout).await;
    for (record, hint) in records.iter_mut().zip(&hints) {
        if let Some(hint) = hint {
            record.estimate = Some(planned_for(hint));
        }
    }
    let mut planned = budget.plan(batch_budget, &claims(records));
    // A call that will not fit what it was planned is refused before it runs, and what it was
    // planned goes to the others. Refusing only lowers estimates, so no other call can be
    // refused by the second plan.
    let mut refused_any = false;
    for ((record, hint), &allowance) in records.iter_mut().zip(&hints).zip(&planned) {
        let Some(hint) = hint else { continue };
        let Some(tool) = record.tool.as_ref().filter(|_| record.is_admitted()) else {
            continue;
        };
        // A call that gave a limit asks for a part on purpose, and fits its page itself.
        if record.page.is_some_and(|page| page.limit.is_some()) {
            continue;
        }
        if let Some(refusal) = hint.refusal(allowance, tool.spec().limits.paginate) {
            record.refuse(refusal);
            refused_any = true;
        }
    }
    if refused_any {
        planned = budget.plan(batch_budget, &claims(records));
    }
    for (record, allowance) in records.iter_mut().zip(planned) {
        record.planned = allowance;
        if let Stage::Admitted { cx, .. } = &mut record.stage {
            cx.set_budget(allowance);
        }
        record.span = tracing::info_span!(
            "tool_call",
            call_id = %record.id,
            tool = %record.name,
            allowance,
            original_chars = tracing::field::Empty,
            trimmed = tracing::field::Empty,
            artifact = tracing::field::Empty,
            is_error = tracing::field::Empty,
        );
    }
}

fn claims(records: &[CallRecord]) -> Vec<crate::budget::Claim> {
    records.iter().map(CallRecord::claim).collect()
}

/// Asks every admitted call for its size hint, concurrently, waiting at most `timeout`; a call
/// without one, with an error, or too slow gets `None`. Costs nothing when no tool estimates.
async fn collect_hints(records: &[CallRecord], timeout: Duration) -> Vec<Option<SizeHint>> {
    let mut asks = Vec::new();
    for (i, record) in records.iter().enumerate() {
        if let (Some(tool), Stage::Admitted { args, cx, .. }) = (&record.tool, &record.stage)
            && let Some(estimate) = tool.estimate(args, cx)
        {
            asks.push(async move { (i, estimate.await) });
        }
    }
    let mut hints = vec![None; records.len()];
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
fn planned_for(hint: &SizeHint) -> usize {
    let chars = usize::try_from(hint.chars).unwrap_or(usize::MAX);
    chars.saturating_add(chars / 10).saturating_add(64)
}
