//! The salient parts of a middle a cut cannot show whole: found in a text's middle, or gathered
//! from a stream as it passed; trimmed to what the walks do not cover.

use super::super::Totals;
use super::super::bytes::{nth_line_end, nth_line_start};
use super::super::marker::gap_line;
use super::super::salience::{self, Searcher};
use super::Source;
use super::walk::Walk;
use crate::figures::grouped;

/// The most candidates gathered from a middle: the first and the last half of them.
const MAX_CANDIDATES: usize = 4_096;

/// An excerpt of the part of a stream that was not kept in memory, with its text.
#[derive(Debug, Clone)]
pub(crate) struct HeldExcerpt {
    pub(crate) first_line: usize,
    pub(crate) lines: usize,
    pub(crate) text: String,
    pub(crate) group: u64,
    pub(crate) tier: salience::Tier,
}

/// A part of the middle worth keeping, with its text.
#[derive(Debug, Clone)]
pub(super) struct Candidate<'a> {
    pub(super) first_line: usize,
    pub(super) lines: usize,
    pub(super) text: &'a str,
    pub(super) group: u64,
    pub(super) tier: salience::Tier,
}

impl Candidate<'_> {
    /// The candidate as [`salience::choose`] weighs it: its lines, its group and its tier.
    pub(super) fn excerpt(&self) -> salience::Excerpt {
        salience::Excerpt {
            bytes: 0..0,
            first_line: self.first_line,
            lines: self.lines,
            group: self.group,
            tier: self.tier,
        }
    }
}

/// What one part kept from the middle costs beyond its lines: its gap line and its span in the
/// marker, at their widest.
pub(super) fn block_overhead(totals: Totals) -> usize {
    gap_line(totals.lines, totals.lines).chars().count() + 1 + 2 * (digits(totals.lines) + 1) + 3
}

/// The chars of `n` as a marker writes it, commas included.
fn digits(n: usize) -> usize {
    grouped(n).len()
}

/// The salient parts of the output, in order: a text's found in what the walks did not cover;
/// a stream's gathered as it passed (the watch saw all of it, head and tail included).
pub(super) fn candidates<'a>(
    source: &Source<'a>,
    head: &Walk<'_>,
    tail: &Walk<'_>,
    searcher: &Searcher,
    standouts: bool,
) -> Vec<Candidate<'a>> {
    if !source.whole {
        return source
            .held
            .iter()
            .map(|held| Candidate {
                first_line: held.first_line,
                lines: held.lines,
                text: &held.text,
                group: held.group,
                tier: held.tier,
            })
            .collect();
    }
    let text = source.head;
    let end = text.len() - tail.bytes;
    let found = match source.surveyed {
        Some(hits) => salience::Found::Surveyed(hits),
        None => salience::Found::Search(searcher),
    };
    salience::scan_as(
        text,
        head.bytes..end.max(head.bytes),
        head.covered + 1,
        found,
        MAX_CANDIDATES,
        standouts && salience::reads_whole(text),
    )
    .into_iter()
    .map(|e| Candidate {
        first_line: e.first_line,
        lines: e.lines,
        text: &text[e.bytes],
        group: e.group,
        tier: e.tier,
    })
    .collect()
}

/// The part of `candidate` within lines `first..=last`, when any: a salient block a walk began
/// (a panic whose first line the head kept) keeps the rest of it.
pub(super) fn within<'a>(
    candidate: &Candidate<'a>,
    first: usize,
    last: usize,
) -> Option<Candidate<'a>> {
    let end_line = candidate.first_line + candidate.lines - 1;
    if end_line < first || candidate.first_line > last {
        return None;
    }
    let skip = first.saturating_sub(candidate.first_line);
    let drop = end_line.saturating_sub(last);
    let bytes = candidate.text.as_bytes();
    let start = nth_line_end(bytes, 0, bytes.len(), skip);
    let end = if drop == 0 {
        bytes.len()
    } else {
        nth_line_start(bytes, bytes.len(), 0, drop)
    };
    (start < end).then(|| Candidate {
        first_line: candidate.first_line + skip,
        lines: candidate.lines - skip - drop,
        text: &candidate.text[start..end],
        group: candidate.group,
        tier: candidate.tier,
    })
}
