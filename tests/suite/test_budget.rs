//! The budget contract's worked examples and the fair-share invariants, for any batch.

use proptest::prelude::*;
use toolsmith::BudgetPolicy;
use toolsmith::budget::{Claim, Demand, SplitStrategy};

/// Calls with these caps and no estimates.
fn claims(caps: &[Option<usize>]) -> Vec<Claim> {
    caps.iter().map(|&cap| Claim::new().with_cap(cap)).collect()
}

/// The final allowances of calls with these caps that produced `demands`, planned evenly.
fn settled(
    policy: &BudgetPolicy,
    budget: usize,
    caps: &[Option<usize>],
    demands: &[usize],
) -> Vec<usize> {
    let planned = policy.plan(budget, &claims(caps));
    let calls: Vec<Demand> = planned
        .iter()
        .zip(caps)
        .zip(demands)
        .map(|((&planned, &cap), &chars)| Demand::new(planned, chars).with_cap(cap))
        .collect();
    policy.settle(budget, &calls)
}

#[test]
fn worked_examples() {
    let even = BudgetPolicy::default().with_split(SplitStrategy::Even);
    assert_eq!(even.allowances(80_000, &claims(&[None; 3])), [26_666; 3]);
    assert_eq!(even.allowances(80_000, &claims(&[None; 5])), [16_000; 5]);
    assert_eq!(even.allowances(80_000, &claims(&[Some(20_000)])), [20_000]);
    assert_eq!(even.allowances(80_000, &claims(&[None])), [80_000]);
}

#[test]
fn a_small_result_frees_room_for_a_large_one() {
    let fair = BudgetPolicy::default();
    // 3 calls, share 26,666: a 1,000-char result leaves 25,666 unused; with the 2 chars the
    // floor left over, the two big ones share 25,668.
    assert_eq!(
        settled(&fair, 80_000, &[None; 3], &[1_000, 60_000, 60_000]),
        [26_666, 39_500, 39_500]
    );
    // A big result whose tool caps it at 30,000 takes no more than that.
    assert_eq!(
        settled(
            &fair,
            80_000,
            &[None, Some(30_000), None],
            &[1_000, 60_000, 60_000]
        ),
        [26_666, 30_000, 49_000]
    );
    // When every result fits its share, nothing moves.
    assert_eq!(
        settled(&fair, 80_000, &[None; 2], &[10, 20]),
        [40_000, 40_000]
    );
}

#[test]
fn the_session_profile_caps_each_result_at_20000() {
    let profile = BudgetPolicy::session_profile();
    assert_eq!(profile.allowances(80_000, &claims(&[None])), [20_000]);
    // Fair share never lifts a result over the per-result cap.
    assert_eq!(
        settled(&profile, 80_000, &[None, None], &[10, 90_000]),
        [20_000, 20_000]
    );
    assert_eq!(profile.turn_budget_chars, Some(200_000));
}

fn cap() -> impl Strategy<Value = Option<usize>> {
    prop_oneof![2 => Just(None), 1 => (1usize..50_000).prop_map(Some)]
}

proptest! {
    #[test]
    fn fair_share_is_max_min_fair_and_never_overspends(
        budget in 1usize..200_000,
        calls in prop::collection::vec((cap(), 0usize..120_000), 0..12),
        per_result in prop_oneof![Just(None), (1usize..40_000).prop_map(Some)],
    ) {
        let policy = BudgetPolicy::default().with_per_result_max_chars(per_result);
        let caps: Vec<Option<usize>> = calls.iter().map(|c| c.0).collect();
        let demands: Vec<usize> = calls.iter().map(|c| c.1).collect();
        let initial = policy.allowances(budget, &claims(&caps));
        let last = settled(&policy, budget, &caps, &demands);
        let share = budget / calls.len().max(1);
        let limit = |i: usize| {
            caps[i].unwrap_or(usize::MAX).min(per_result.unwrap_or(usize::MAX))
        };
        for i in 0..calls.len() {
            prop_assert_eq!(initial[i], share.min(limit(i)));
            prop_assert!(last[i] >= initial[i], "never less than the even share");
            prop_assert!(last[i] <= limit(i).max(initial[i]), "never past the cap");
        }
        let delivered: usize = (0..calls.len()).map(|i| last[i].min(demands[i])).sum();
        prop_assert!(delivered <= budget, "{delivered} > {budget}");
        // Whoever is still cut below its cap got as much extra as any other such call, give or
        // take the 1 char of a remainder; and the slack is used up, give or take remainders.
        let starved: Vec<usize> = (0..calls.len())
            .filter(|&i| demands[i] > last[i] && last[i] < limit(i))
            .collect();
        if !starved.is_empty() {
            prop_assert!(budget - delivered < calls.len(), "slack left: {}", budget - delivered);
            let extras: Vec<usize> = starved.iter().map(|&i| last[i] - initial[i]).collect();
            let (min, max) = (extras.iter().min().unwrap(), extras.iter().max().unwrap());
            prop_assert!(max - min <= 1, "{extras:?}");
            for i in 0..calls.len() {
                let extra = last[i] - initial[i];
                prop_assert!(extra <= max + 1, "a satisfied call got more than a starved one");
            }
        }
    }

    #[test]
    fn even_split_is_exactly_the_share(
        budget in 1usize..200_000,
        calls in prop::collection::vec((cap(), 0usize..120_000), 1..12),
    ) {
        let policy = BudgetPolicy::default().with_split(SplitStrategy::Even);
        let caps: Vec<Option<usize>> = calls.iter().map(|c| c.0).collect();
        let demands: Vec<usize> = calls.iter().map(|c| c.1).collect();
        prop_assert_eq!(
            settled(&policy, budget, &caps, &demands),
            policy.allowances(budget, &claims(&caps))
        );
    }
}

#[test]
fn a_window_budget_follows_what_is_left_of_the_window() {
    use toolsmith::budget::WindowBudget;
    use toolsmith::tokens::CharsPerToken;
    let chars = CharsPerToken::default();
    let window = WindowBudget::new(200_000);
    // (tokens used, batch budget in chars): a quarter of what is left, 4 chars a token,
    // between 4,000 and 200,000.
    for (used, expected) in [
        (0, 200_000),
        (10_000, 190_000),
        (100_000, 100_000),
        (180_000, 20_000),
        (199_000, 4_000),
        (250_000, 4_000),
    ] {
        assert_eq!(
            window.batch_budget_chars(used, &chars),
            expected,
            "{used} used"
        );
    }
    let small = WindowBudget::new(32_000)
        .with_share(0.5)
        .with_ceiling_chars(50_000);
    assert_eq!(small.batch_budget_chars(8_000, &chars), 48_000);
    assert_eq!(small.batch_budget_chars(0, &chars), 50_000);
    // Recomputed each batch of a turn: the turn takes the new budget.
    let registry = toolsmith::Registry::builder().build().unwrap();
    let mut turn = registry.turn();
    let policy = window.apply(turn.budget().clone(), 180_000, &chars);
    turn.set_budget(policy).unwrap();
    assert_eq!(turn.budget().batch_budget_chars, 20_000);
    assert_eq!(
        turn.budget().split,
        toolsmith::budget::SplitStrategy::FairShare
    );
}
