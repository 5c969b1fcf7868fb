//! The cut that keeps what matters, and spends the allowance on the output.
//!
//! In order: the salient lines of the middle (errors, failures, tracebacks, each with its
//! block), up to [`EXCERPT_SHARE`] of the room (more of a small room: [`excerpt_share`]); then as many lines of the head and the tail as
//! the room holds, verbatim (or as a terminal shows them); and only the middle that cannot be
//! shown is summarised, on the line after the marker, by its count, its span and its first
//! line. A lossless run (the same lines repeated, or one number counting up by one) is shown as
//! its first lines and one fold line wherever that is shorter: every line can be rebuilt from
//! it. Lines merely alike are never folded.
//!
//! The output is read in three walks ([`walk`]), each proportional to what it keeps (plus a run
//! it folds): forward from the top, backward from the bottom, and a scan of the middle for
//! [salient](super::salience) lines ([`excerpts`]), once. The parts are joined with the
//! standard marker at the first gap, `[… lines A-B left out]` at the others ([`assemble`]).
//! When the layout leaves chars of the allowance unused (the marker's room is reserved at its
//! widest), the walks are run again with them.

mod assemble;
mod excerpts;
mod walk;

use super::salience::Searcher;

use super::bytes::{after_last_break, line_end, nth_line_end, without_break};
use super::marker::{Layout, line_cut_reserve, render, summary_reserve};
use super::runs::HeldRun;
use super::{Continuation, Cut, LineSpan, MIN_ROOM, Totals, TrimStyle, Trimmed, salience};
use assemble::{Sample, Summary, assemble};
pub(crate) use excerpts::HeldExcerpt;
use excerpts::{Candidate, block_overhead, candidates, within};
use walk::{Room, Shown, Walk};

/// The share of the room the salient lines of the middle may take, at most, from a room of
/// [`FULL_ROOM`] chars up.
const EXCERPT_SHARE: f64 = 0.4;
/// The share they may take of a room of [`SMALL_ROOM`] chars or less: where a head and a tail
/// of routine lines would crowd out the second error, the tail shrinks first.
const SMALL_ROOM_SHARE: f64 = 0.75;
/// The rooms between which the share moves from [`SMALL_ROOM_SHARE`] to [`EXCERPT_SHARE`].
const SMALL_ROOM: usize = 800;
const FULL_ROOM: usize = 3_200;

/// The share of `room` the salient lines of the middle may take.
fn excerpt_share(room: usize) -> f64 {
    if room >= FULL_ROOM {
        return EXCERPT_SHARE;
    }
    let small = room.saturating_sub(SMALL_ROOM) as f64 / (FULL_ROOM - SMALL_ROOM) as f64;
    SMALL_ROOM_SHARE + (EXCERPT_SHARE - SMALL_ROOM_SHARE) * small.min(1.0)
}
/// The most separate parts kept from the middle (each costs a gap line and a span).
const MAX_BLOCKS: usize = 12;

/// What a cut that keeps what matters works from.
pub(super) struct Source<'a> {
    /// The output's beginning: the whole output, for a text.
    pub(super) head: &'a str,
    /// The output's end: the whole output, for a text.
    pub(super) tail: &'a str,
    /// Whether `head` and `tail` are one whole text.
    pub(super) whole: bool,
    /// Whether `tail` starts a line (a stream's captured tail may start inside one).
    pub(super) tail_starts_line: bool,
    /// Excerpts of a stream's middle, which neither `head` nor `tail` holds.
    pub(super) held: &'a [HeldExcerpt],
    /// A lossless run of a stream followed past its head.
    pub(super) held_run: Option<HeldRun>,
    /// The salient lines of a whole text, when a survey found them as it counted the text.
    pub(super) surveyed: Option<&'a [super::survey::Hit]>,
    /// The whole output's size.
    pub(super) totals: Totals,
}

/// Cuts `source` into `allowance` chars keeping what matters; `None` when the allowance is too
/// small for it (the positional cut's tiers then keep what they can) or the output is one line.
pub(super) fn cut(
    source: &Source<'_>,
    allowance: usize,
    style: &TrimStyle,
    continuation: &Continuation<'_>,
    searcher: Option<&Searcher>,
) -> Option<Trimmed<'static>> {
    if source.totals.lines < 2 {
        return None;
    }
    let shown = Shown {
        line_cut: line_cut_reserve(source.totals.chars, source.totals.lines),
        ..Shown::of(style)
    };
    let plan = Plan::new(source, allowance, style, continuation, shown)?;
    // Room for saying escapes were removed is kept only once a cut shows that it needs it:
    // looking for escapes in all of a large output would cost a pass over it.
    let plain = Shown {
        render: false,
        ..shown
    };
    let chosen = plan.excerpts(searcher, plain);
    let mut best = plan.lay_out(&chosen, plain, 0)?;
    let mut reserved = plain;
    if best.text().chars().count() > allowance {
        best = plan.lay_out(&chosen, shown, 0)?;
        reserved = shown;
    }
    // The marker's room was reserved at its widest: what it did not take goes to the walks.
    let used = best.text().chars().count();
    if used < allowance {
        let slack = allowance - used;
        for extra in [slack, slack / 2] {
            if let Some(more) = plan.lay_out(&chosen, reserved, extra)
                && more.text().chars().count() <= allowance
            {
                best = more;
                break;
            }
        }
    }
    Some(best)
}

/// A cut's fixed terms: the source, the allowance, how lines are shown, and where a stream's
/// walks may go.
struct Plan<'s, 'a> {
    source: &'s Source<'a>,
    allowance: usize,
    style: &'s TrimStyle,
    continuation: &'s Continuation<'s>,
    shown: Shown,
    max_lines: usize,
    /// Whether the lines the marker leaves out are summarised (when the room allows it).
    summary: bool,
    /// Where the head walk stops: a captured head's last complete line.
    head_limit: usize,
    /// Where the tail walk may start covering a captured tail: its first whole line.
    tail_region: usize,
}

impl<'s, 'a> Plan<'s, 'a> {
    fn new(
        source: &'s Source<'a>,
        allowance: usize,
        style: &'s TrimStyle,
        continuation: &'s Continuation<'s>,
        shown: Shown,
    ) -> Option<Self> {
        let plain = Shown {
            render: false,
            ..shown
        };
        let room = allowance.checked_sub(reserve(source.totals, plain, continuation, 0))?;
        if room < MIN_ROOM {
            return None;
        }
        // The summary takes at most a third of the room; below that, the marker alone says
        // what was left out.
        let summary = room >= 3 * summary_reserve(source.totals.lines);
        // A captured tail that starts inside a line is covered from its next line.
        let tail_bytes = source.tail.as_bytes();
        let tail_region = if source.tail_starts_line || source.whole {
            0
        } else {
            memchr::memchr(b'\n', tail_bytes).map_or(tail_bytes.len(), |i| i + 1)
        };
        // A captured head may end inside a line: the walk stops at its last complete line
        // (unless it has none, and is cut inside).
        let head_limit = if source.whole {
            source.head.len()
        } else {
            let head = source.head.as_bytes();
            after_last_break(head, 0, head.len()).unwrap_or(head.len())
        };
        Some(Plan {
            source,
            allowance,
            style,
            continuation,
            shown,
            max_lines: style.max_lines.unwrap_or(usize::MAX),
            summary,
            head_limit,
            tail_region,
        })
    }

    /// The room the marker (with `blocks` parts from the middle) and the summary leave.
    fn room(&self, reserved: Shown, blocks: usize) -> Option<usize> {
        let summary = if self.summary {
            summary_reserve(self.source.totals.lines)
        } else {
            0
        };
        self.allowance
            .checked_sub(reserve(
                self.source.totals,
                reserved,
                self.continuation,
                blocks,
            ))?
            .checked_sub(summary)
    }

    /// The head and the tail walked within `room` chars and `lines` layout lines.
    fn walks(&self, room: usize, lines: usize) -> (Walk<'a>, Walk<'a>) {
        let source = self.source;
        let totals = source.totals;
        let (head_room, tail_room) = self.style.split(room);
        let (head_lines, tail_lines) = self.style.split(lines);
        let head = walk::forward(
            source.head,
            0..self.head_limit,
            1,
            Room {
                chars: head_room,
                lines: head_lines.max(usize::from(head_room > 0 && lines > 0)),
            },
            self.shown,
            true,
            source.held_run.filter(|_| !source.whole),
        );
        // For a whole text the tail stops where the head stopped; for a stream, at the first
        // whole line of its tail the head did not cover.
        let stop = if source.whole {
            head.bytes
        } else {
            self.tail_stop(head.covered)
        };
        let tail = walk::backward(
            source.tail,
            stop..source.tail.len(),
            totals.lines,
            Room {
                chars: tail_room + (head_room - head.chars.min(head_room)),
                lines: tail_lines.max(usize::from(tail_room > 0 && lines > 0)),
            },
            self.shown,
        );
        (head, tail)
    }

    /// Where the tail walk of a stream stops: the start of the first line after `covered`
    /// within the captured tail, or the tail's first whole line.
    fn tail_stop(&self, covered: usize) -> usize {
        let tail = self.source.tail.as_bytes();
        let region = &tail[self.tail_region..];
        let lines_in_tail = super::bytes::lines_from(region, super::bytes::count_newlines(region));
        let first_in_tail =
            self.source.totals.lines + 1 - lines_in_tail.min(self.source.totals.lines);
        if covered < first_in_tail {
            return self.tail_region;
        }
        nth_line_end(
            tail,
            self.tail_region,
            tail.len(),
            covered + 1 - first_in_tail,
        )
    }

    /// The salient parts of the middle to keep: the head and the tail are walked as they would
    /// be beside excerpts that take their whole share, the middle they leave is searched once,
    /// and the excerpts are chosen fairly within the share.
    fn excerpts(&self, searcher: Option<&Searcher>, reserved: Shown) -> Vec<Candidate<'a>> {
        let Some(searcher) = searcher else {
            return Vec::new();
        };
        let Some(room) = self.room(reserved, 0) else {
            return Vec::new();
        };
        let totals = self.source.totals;
        let share = excerpt_share(room);
        let budget = (room as f64 * share) as usize;
        // Without a line limit, lines are not what the share is counted in.
        let (line_budget, walk_lines) = if self.max_lines == usize::MAX {
            (usize::MAX, usize::MAX)
        } else {
            let share = (self.max_lines as f64 * share) as usize;
            (share, self.max_lines - share)
        };
        let (head, tail) = self.walks(room - budget, walk_lines);
        let (middle_first, middle_last) = (head.covered + 1, totals.lines - tail.covered);
        if middle_first > middle_last {
            return Vec::new();
        }
        let in_middle: Vec<Candidate<'a>> =
            candidates(self.source, &head, &tail, searcher, self.style.standouts)
                .iter()
                .filter_map(|c| within(c, middle_first, middle_last))
                .collect();
        if in_middle.is_empty() {
            return Vec::new();
        }
        let per_block = block_overhead(totals);
        let excerpts: Vec<salience::Excerpt> = in_middle.iter().map(Candidate::excerpt).collect();
        let shown = self.shown;
        let cost = |candidate: &Candidate<'_>| {
            // A warning is costed at its bytes, no fewer than its chars as shown (a walk only
            // renders or folds lines away): warnings can be many, and a walk is not cheap.
            if candidate.tier != salience::Tier::Error {
                return (candidate.text.len() + per_block, candidate.lines);
            }
            let walk = walk_block(candidate, shown);
            (walk.chars + per_block, walk.lines)
        };
        let picked = salience::choose(&excerpts, budget, line_budget, MAX_BLOCKS, |i| {
            cost(&in_middle[i])
        });
        let mut chosen: Vec<Candidate<'a>> = picked.iter().map(|&i| in_middle[i].clone()).collect();
        if room < FULL_ROOM {
            let (used, used_lines) = chosen
                .iter()
                .map(&cost)
                .fold((0, 0), |(c, l), (cc, ll)| (c + cc, l + ll));
            chosen.extend(ends_of_the_rest(
                &in_middle,
                &picked,
                budget.saturating_sub(used),
                line_budget.saturating_sub(used_lines),
                MAX_BLOCKS - chosen.len(),
                cost,
            ));
            chosen.sort_by_key(|c| c.first_line);
        }
        chosen
    }

    /// The cut laid out with `chosen` parts from the middle, the marker's room reserved as
    /// `reserved` shows lines, and `extra` chars more for the walks; `None` when the parts do
    /// not fit.
    fn lay_out(
        &self,
        chosen: &[Candidate<'a>],
        reserved: Shown,
        extra: usize,
    ) -> Option<Trimmed<'static>> {
        let totals = self.source.totals;
        let walked: Vec<Walk<'_>> = chosen.iter().map(|c| walk_block(c, self.shown)).collect();
        let used: usize =
            walked.iter().map(|b| b.chars).sum::<usize>() + walked.len() * block_overhead(totals);
        let used_lines: usize = walked.iter().map(|b| b.lines).sum();
        let room = self
            .room(reserved, walked.len())?
            .checked_sub(used)?
            .saturating_add(extra);
        if chosen.is_empty() && room < MIN_ROOM {
            return None;
        }
        let (head, tail) = self.walks(room, self.max_lines.saturating_sub(used_lines));
        // The walks moved: each excerpt keeps what they do not cover (no more than it had).
        let head_last = head.covered;
        let tail_first = totals.lines + 1 - tail.covered;
        let mut blocks: Vec<Walk<'_>> = Vec::new();
        let mut block_spans: Vec<LineSpan> = Vec::new();
        for candidate in chosen {
            if let Some(part) = within(candidate, head_last + 1, tail_first.saturating_sub(1)) {
                block_spans.push(LineSpan {
                    first: part.first_line,
                    last: part.first_line + part.lines - 1,
                });
                blocks.push(walk_block(&part, self.shown));
            }
        }
        let sample = self.sample(&head);
        Some(assemble(
            self.source,
            head,
            blocks,
            &block_spans,
            tail,
            self.continuation,
            self.summary.then_some(Summary { sample }),
        ))
    }

    /// The first line the head did not cover, when the source holds it whole: the sample a
    /// summary quotes.
    fn sample(&self, head: &Walk<'a>) -> Option<Sample<'a>> {
        if !self.summary || head.partial.is_some() {
            return None;
        }
        let bytes = self.source.head.as_bytes();
        let start = head.bytes;
        if start >= self.head_limit {
            return None;
        }
        let end = line_end(bytes, start, self.head_limit);
        // A captured head's line is whole only when its break is there.
        if !self.source.whole && bytes[end - 1] != b'\n' {
            return None;
        }
        let line = &self.source.head[start..start + without_break(&bytes[start..end]).len()];
        Some(Sample {
            line: head.covered + 1,
            text: self.shown.lines(line).0,
        })
    }
}

/// At a small room, the errors that did not fit whole, each by its ends: its first two lines
/// (the line before it and the error's own, or a traceback's head) and its last (a traceback's
/// exception): every distinct error before routine lines, chosen fairly within `budget` as the
/// whole ones were.
fn ends_of_the_rest<'a>(
    candidates: &[Candidate<'a>],
    picked: &[usize],
    budget: usize,
    line_budget: usize,
    max: usize,
    cost: impl Fn(&Candidate<'_>) -> (usize, usize),
) -> Vec<Candidate<'a>> {
    let mut ends: Vec<Candidate<'a>> = Vec::new();
    for (i, candidate) in candidates.iter().enumerate() {
        if picked.contains(&i) || candidate.tier != salience::Tier::Error || candidate.lines < 2 {
            continue;
        }
        let first = candidate.first_line;
        let last = first + candidate.lines - 1;
        if candidate.lines > 3 {
            ends.extend(within(candidate, first, first + 1));
            ends.extend(within(candidate, last, last));
        } else {
            ends.extend(within(candidate, first, last.min(first + 1)));
        }
    }
    if ends.is_empty() || max == 0 {
        return Vec::new();
    }
    let excerpts: Vec<salience::Excerpt> = ends.iter().map(Candidate::excerpt).collect();
    salience::choose(&excerpts, budget, line_budget, max, |i| cost(&ends[i]))
        .into_iter()
        .map(|i| ends[i].clone())
        .collect()
}

/// A part of the middle walked whole.
fn walk_block<'t>(candidate: &Candidate<'t>, shown: Shown) -> Walk<'t> {
    walk::forward(
        candidate.text,
        0..candidate.text.len(),
        candidate.first_line,
        Room::UNLIMITED,
        shown,
        false,
        None,
    )
}

/// The room to leave for the marker of a cut with `blocks` parts from the middle: the widest
/// marker such a cut can have, with its line breaks.
fn reserve(totals: Totals, shown: Shown, continuation: &Continuation<'_>, blocks: usize) -> usize {
    let widest = LineSpan {
        first: totals.lines,
        last: totals.lines,
    };
    let mut cut = Cut::without_spans(totals.chars, totals.lines, totals.chars);
    cut.spans = vec![widest; blocks + 2];
    // A line cut inside is named by the walk that cut it (`Shown::line_cut`).
    cut.mid_line = true;
    if shown.fold {
        cut.folded_lines = totals.lines;
    }
    if shown.render {
        cut.escapes_removed = totals.chars;
        cut.redraws_removed = totals.chars;
    }
    cut.next_offset = continuation
        .page_offset
        .map(|offset| offset.saturating_add(totals.lines));
    render(&cut, continuation, Layout::Widest).chars().count() + 2
}
