//! Figures as people write them, for every message that states one: counts grouped by
//! thousands (`45,231`) and durations (`30s`, `1.5s`, `250ms`, `2m`).

use std::fmt;
use std::time::Duration;

/// Durations as people write them: `30s`, `1.5s`, `250ms`, `2m` — the one way every message
/// of toolsmith (and of a tool that wants to read like one) states a duration.
///
/// ```
/// use std::time::Duration;
/// use toolsmith::figures::DisplayDuration;
///
/// assert_eq!(DisplayDuration(Duration::from_millis(1500)).to_string(), "1.5s");
/// assert_eq!(format!("within {}", DisplayDuration(Duration::from_secs(120))), "within 2m");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisplayDuration(pub Duration);

impl fmt::Display for DisplayDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d.as_secs() >= 60 && d.as_secs().is_multiple_of(60) && d.subsec_nanos() == 0 {
            write!(f, "{}m", d.as_secs() / 60)
        } else if d.as_secs() >= 1 {
            write!(f, "{}s", d.as_secs_f64())
        } else {
            write!(f, "{}ms", d.as_millis())
        }
    }
}

/// `n` (a `usize`, a `u64`, …) with a comma between groups of three digits, as every marker
/// and message writes numbers: `45231` → `45,231`. For tools that write their own notes in the same voice.
pub fn grouped(n: impl TryInto<u64>) -> String {
    let mut out = String::new();
    push_grouped(&mut out, n);
    out
}

/// Writes `n` with a comma between groups of three digits: `45231` → `45,231`.
///
/// The length of the result never decreases as `n` grows, which the room reservation relies on.
pub(crate) fn push_grouped(out: &mut String, n: impl TryInto<u64>) {
    let digits = n.try_into().unwrap_or(u64::MAX).to_string();
    let lead = digits.len() % 3;
    for (i, digit) in digits.chars().enumerate() {
        if i != 0 && (i + 3 - lead).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(DisplayDuration(Duration::from_secs(30)).to_string(), "30s");
        assert_eq!(
            DisplayDuration(Duration::from_millis(1500)).to_string(),
            "1.5s"
        );
        assert_eq!(
            DisplayDuration(Duration::from_millis(250)).to_string(),
            "250ms"
        );
        assert_eq!(DisplayDuration(Duration::from_secs(120)).to_string(), "2m");
    }
}
