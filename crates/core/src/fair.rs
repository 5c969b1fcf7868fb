//! Max-min fair sharing, the one algorithm behind every split of a budget: a batch's among its
//! calls ([`budget`](crate::budget)) and a JSON container's room among its members
//! ([`trim::fit_json`](crate::trim::fit_json)).

/// Gives each `shares[i]` up to `wants[i]` more out of `budget`, max-min fairly: the smallest
/// wants are met first, each want gets at most an equal part of what remains, and what a want
/// below its part leaves goes to the others. Returns what it gave in all (at most `budget`).
///
/// Allocates one index per nonzero want; `O(n log n)` in the number of wants.
pub(crate) fn fill(shares: &mut [usize], wants: &[usize], budget: usize) -> usize {
    let mut needy: Vec<(usize, usize)> = wants
        .iter()
        .enumerate()
        .filter(|&(_, &want)| want > 0)
        .map(|(i, &want)| (want, i))
        .collect();
    needy.sort_unstable();
    let count = needy.len();
    let mut left = budget;
    for (served, (want, i)) in needy.into_iter().enumerate() {
        let give = want.min(left / (count - served));
        shares[i] += give;
        left -= give;
    }
    budget - left
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_wants_are_met_and_the_rest_share_evenly() {
        let mut shares = [0; 3];
        assert_eq!(fill(&mut shares, &[10, 100, 100], 110), 110);
        assert_eq!(shares, [10, 50, 50]);
        // The remainder of a floor division goes to the last served, never lost or exceeded.
        let mut shares = [0; 3];
        assert_eq!(fill(&mut shares, &[100, 100, 100], 10), 10);
        assert_eq!(shares, [3, 3, 4]);
        let mut shares = [5, 0];
        assert_eq!(fill(&mut shares, &[0, 7], 100), 7);
        assert_eq!(shares, [5, 7]);
    }

    proptest::proptest! {
        #[test]
        fn never_gives_more_than_wanted_or_budgeted(
            wants in proptest::collection::vec(0usize..1_000, 0..20),
            budget in 0usize..10_000,
        ) {
            let mut shares = vec![0; wants.len()];
            let given = fill(&mut shares, &wants, budget);
            proptest::prop_assert!(given <= budget);
            proptest::prop_assert_eq!(given, shares.iter().sum::<usize>());
            let total: usize = wants.iter().sum();
            proptest::prop_assert_eq!(given, total.min(budget));
            for (&share, &want) in shares.iter().zip(&wants) {
                proptest::prop_assert!(share <= want);
            }
        }
    }
}
