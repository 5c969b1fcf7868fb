//! The cut that keeps what matters: terminal output rendered, repeats folded, salient lines kept
//! from the middle, every figure stated.
//!
//! The output is read in three walks, each proportional to what it keeps (plus a run it folds):
//! forward from the top for the head, backward from the bottom for the tail, and a scan of the
//! middle for [salient](super::salience) lines. Walking, a line that starts a repeat (the same
//! message, up to numbers, ids and durations, one to four lines long) is shown once and the rest
//! of the repeat as one fold line; a line with escapes or redraws is shown as a terminal shows
//! it. The parts are joined with the standard marker at the first gap, `[… lines A-B left out]`
//! at the others, and nothing but the marker when every line is shown or folded.

use std::borrow::Cow;
use std::ops::Range;

use aho_corasick::AhoCorasick;

use super::marker::{Layout, fold_line, gap_line, render};
use super::salience::{self, Excerpt};
use super::terminal::{self, Removed};
use super::{Continuation, Cut, LineSpan, MIN_ROOM, Render, Totals, TrimStyle, Trimmed, fold};

/// The share of the room the salient lines of the middle may take, at most.
const EXCERPT_SHARE: f64 = 0.4;
/// The most separate parts kept from the middle (each costs a gap line and a span).
const MAX_BLOCKS: usize = 12;
/// The most candidates gathered from a middle: the first and the last half of them.
const MAX_CANDIDATES: usize = 4_096;

/// One part of a cut's layout.
#[derive(Debug)]
enum Piece<'a> {
    /// Lines of the output, as they were (borrowed) or as a terminal shows them; each ends with
    /// its line break but perhaps the output's last.
    Lines(Cow<'a, str>),
    /// `[… N more lines like this (lines A-B)]`.
    Fold {
        folded: usize,
        period: usize,
        first: usize,
        last: usize,
    },
    /// `[… lines A-B left out]`.
    Gap { first: usize, last: usize },
    /// The marker.
    Marker,
}

/// The room a walk may fill: chars and layout lines.
#[derive(Debug, Clone, Copy)]
struct Room {
    chars: usize,
    lines: usize,
}

impl Room {
    const UNLIMITED: Room = Room {
        chars: usize::MAX,
        lines: usize::MAX,
    };
}

/// What a walk kept.
#[derive(Debug, Default)]
struct Walk<'a> {
    pieces: Vec<Piece<'a>>,
    /// Chars of the layout the pieces take, line breaks included.
    chars: usize,
    /// Lines of the layout (content lines and fold lines).
    lines: usize,
    /// Chars of content shown.
    kept: usize,
    folded: usize,
    removed: Removed,
    /// Lines of the output the walk covered (shown or folded).
    covered: usize,
    /// Bytes of the region the walk covered, from where it started.
    bytes: usize,
    /// When the walk cut a line inside: the chars of it shown.
    partial: Option<usize>,
}

/// How a walk shows lines.
#[derive(Clone, Copy)]
struct Shown {
    fold: bool,
    render: bool,
    /// Chars the marker grows by when a walk cuts a line inside (naming the line and the
    /// chars shown): the walk that cuts counts them as its own.
    line_cut: usize,
}

impl Shown {
    fn of(style: &TrimStyle) -> Self {
        Shown {
            fold: style.fold,
            render: style.render != Render::Never,
            line_cut: 0,
        }
    }

    /// A line (or lines) as shown, with what rendering removed.
    fn lines<'a>(&self, text: &'a str) -> (Cow<'a, str>, Removed) {
        if self.render {
            terminal::render(text)
        } else {
            (Cow::Borrowed(text), Removed::default())
        }
    }
}

/// The end of the line that starts at `start` (after its line break, or `limit`).
fn line_end(bytes: &[u8], start: usize, limit: usize) -> usize {
    memchr::memchr(b'\n', &bytes[start..limit]).map_or(limit, |i| start + i + 1)
}

/// The start of the line that ends at `end` (at or after `stop`).
fn line_start(bytes: &[u8], end: usize, stop: usize) -> usize {
    let body = match end.checked_sub(1) {
        Some(last) if last >= stop && bytes[last] == b'\n' => last,
        _ => end,
    };
    memchr::memrchr(b'\n', &bytes[stop..body]).map_or(stop, |i| stop + i + 1)
}

fn without_break(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Walks `text[start..limit]` forward from line `first_line`, keeping what fits `budget` chars
/// and `max_lines` layout lines; a first line longer than the budget is cut inside when
/// `cut_inside`.
fn walk_forward<'a>(
    text: &'a str,
    region: Range<usize>,
    first_line: usize,
    room: Room,
    shown: Shown,
    cut_inside: bool,
) -> Walk<'a> {
    let (start, limit) = (region.start, region.end);
    let (budget, max_lines) = (room.chars, room.lines);
    let bytes = text.as_bytes();
    let mut walk = Walk::default();
    let mut at = start;
    let mut line = first_line;
    while at < limit && walk.chars < budget && walk.lines < max_lines {
        let left = budget - walk.chars;
        if shown.fold {
            let mut next = at;
            let signatures = std::iter::from_fn(|| {
                (next < limit).then(|| {
                    let end = line_end(bytes, next, limit);
                    let signature = fold::signature(without_break(&bytes[next..end]));
                    next = end;
                    signature
                })
            });
            if let Some((period, lines)) = fold::repeat(signatures) {
                let run_end = nth_line_end(bytes, at, limit, lines);
                let run = Run {
                    text: &text[at..run_end],
                    first_line: line,
                    period,
                    lines,
                };
                if let Some(pieces) = run.shown(shown, left, max_lines - walk.lines) {
                    walk.take_run(pieces, &run);
                    walk.bytes = run_end - start;
                    at = run_end;
                    line += lines;
                    continue;
                }
            }
        }
        let end = line_end(bytes, at, limit);
        let (shown_line, removed) = shown.lines(&text[at..end]);
        let chars = shown_line.chars().count();
        if chars <= left {
            walk.kept += chars;
            walk.chars += chars;
            walk.lines += 1;
            walk.removed.add(removed);
            walk.pieces.push(Piece::Lines(shown_line));
            walk.covered += 1;
            walk.bytes = end - start;
            at = end;
            line += 1;
            continue;
        }
        if cut_inside && walk.pieces.is_empty() && left > 1 + shown.line_cut {
            // One line longer than the room: its beginning, cut on a char boundary.
            let room = left.saturating_sub(1 + shown.line_cut);
            let kept: String = shown_line.chars().take(room).collect();
            let count = kept.chars().count();
            walk.kept += count;
            walk.chars += count + 1 + shown.line_cut;
            walk.lines += 1;
            walk.removed.add(removed);
            walk.pieces.push(Piece::Lines(Cow::Owned(kept)));
            walk.covered += 1;
            walk.partial = Some(count);
        }
        break;
    }
    walk
}

/// Walks `text[stop..end]` backward from its last line, numbered `last_line`, keeping what fits;
/// the pieces come out in reading order. A last line longer than the budget is cut inside (its
/// end kept).
fn walk_backward<'a>(
    text: &'a str,
    region: Range<usize>,
    last_line: usize,
    room: Room,
    shown: Shown,
) -> Walk<'a> {
    let (stop, end) = (region.start, region.end);
    let (budget, max_lines) = (room.chars, room.lines);
    let bytes = text.as_bytes();
    let mut walk = Walk::default();
    // Built bottom-up, reversed at the end.
    let mut at = end;
    let mut line = last_line;
    while at > stop && walk.chars < budget && walk.lines < max_lines {
        let left = budget - walk.chars;
        if shown.fold {
            let mut next = at;
            let signatures = std::iter::from_fn(|| {
                (next > stop).then(|| {
                    let start = line_start(bytes, next, stop);
                    let signature = fold::signature(without_break(&bytes[start..next]));
                    next = start;
                    signature
                })
            });
            if let Some((period, lines)) = fold::repeat(signatures) {
                let run_start = nth_line_start(bytes, at, stop, lines);
                let run = Run {
                    text: &text[run_start..at],
                    first_line: line + 1 - lines,
                    period,
                    lines,
                };
                if let Some(mut pieces) = run.shown(shown, left, max_lines - walk.lines) {
                    // The walk builds bottom-up: the run's pieces go in reversed.
                    pieces.pieces.reverse();
                    walk.take_run(pieces, &run);
                    walk.bytes = end - run_start;
                    at = run_start;
                    line -= lines;
                    continue;
                }
            }
        }
        let start = line_start(bytes, at, stop);
        let (shown_line, removed) = shown.lines(&text[start..at]);
        let chars = shown_line.chars().count();
        if chars <= left {
            walk.kept += chars;
            walk.chars += chars;
            walk.lines += 1;
            walk.removed.add(removed);
            walk.pieces.push(Piece::Lines(shown_line));
            walk.covered += 1;
            walk.bytes = end - start;
            at = start;
            line -= 1;
            continue;
        }
        if walk.pieces.is_empty() && left > 1 + shown.line_cut {
            // One line longer than the room: its end, cut on a char boundary.
            let count = shown_line.chars().count();
            let keep = left.saturating_sub(1 + shown.line_cut);
            let kept: String = shown_line.chars().skip(count - keep.min(count)).collect();
            let count = kept.chars().count();
            walk.kept += count;
            walk.chars += count + 1 + shown.line_cut;
            walk.lines += 1;
            walk.removed.add(removed);
            // The line's chars shown, its line break not counted.
            walk.partial = Some(count - (kept.len() - without_break(kept.as_bytes()).len()));
            walk.pieces.push(Piece::Lines(Cow::Owned(kept)));
            walk.covered += 1;
        }
        break;
    }
    walk.pieces.reverse();
    walk
}

/// A run of repeated lines a walk found: `lines` lines of `text`, the first `period` of which
/// repeat through it.
struct Run<'a> {
    text: &'a str,
    first_line: usize,
    period: usize,
    lines: usize,
}

/// A run as shown: its pieces in reading order and what they cost.
struct RunShown<'a> {
    pieces: Vec<Piece<'a>>,
    chars: usize,
    layout_lines: usize,
    kept: usize,
    folded: usize,
    removed: Removed,
}

impl<'a> Run<'a> {
    /// The run shown within `left` chars and `lines_left` lines, or `None` when it does not
    /// fit: its first period, a fold line for the rest, and (a repeated line) its last line, so
    /// a count's or a progress line's final state is seen.
    fn shown(&self, shown: Shown, left: usize, lines_left: usize) -> Option<RunShown<'a>> {
        let bytes = self.text.as_bytes();
        let period_end = nth_line_end(bytes, 0, bytes.len(), self.period);
        let (first, removed) = shown.lines(&self.text[..period_end]);
        let mut pieces = vec![Piece::Lines(first)];
        let mut removed = removed;
        let last_shown = self.period == 1 && self.lines >= 4;
        let folded = self.lines - self.period - usize::from(last_shown);
        let fold_first = self.first_line + self.period;
        let fold = fold_line(folded, self.period, fold_first, fold_first + folded - 1);
        let mut chars = fold.chars().count() + 1;
        pieces.push(Piece::Fold {
            folded,
            period: self.period,
            first: fold_first,
            last: fold_first + folded - 1,
        });
        if last_shown {
            let last_start = line_start(bytes, bytes.len(), 0);
            let (last, last_removed) = shown.lines(&self.text[last_start..]);
            removed.add(last_removed);
            pieces.push(Piece::Lines(last));
        }
        let kept: usize = pieces
            .iter()
            .map(|piece| match piece {
                Piece::Lines(lines) => lines.chars().count(),
                _ => 0,
            })
            .sum();
        chars += kept;
        let layout_lines = self.period + 1 + usize::from(last_shown);
        (chars <= left && layout_lines <= lines_left).then_some(RunShown {
            pieces,
            chars,
            layout_lines,
            kept,
            folded,
            removed,
        })
    }
}

impl<'a> Walk<'a> {
    fn take_run(&mut self, run: RunShown<'a>, whole: &Run<'_>) {
        self.kept += run.kept;
        self.chars += run.chars;
        self.lines += run.layout_lines;
        self.folded += run.folded;
        self.removed.add(run.removed);
        self.pieces.extend(run.pieces);
        self.covered += whole.lines;
    }
}

/// The byte just after the first `n` lines of `bytes[start..limit]`.
fn nth_line_end(bytes: &[u8], start: usize, limit: usize, n: usize) -> usize {
    match memchr::memchr_iter(b'\n', &bytes[start..limit]).nth(n - 1) {
        Some(at) => start + at + 1,
        None => limit,
    }
}

/// The byte where the last `n` lines of `bytes[stop..end]` start.
fn nth_line_start(bytes: &[u8], end: usize, stop: usize, n: usize) -> usize {
    let mut at = end;
    for _ in 0..n {
        at = line_start(bytes, at, stop);
    }
    at
}

/// An excerpt of the part of a stream that was not kept in memory, with its text.
#[derive(Debug, Clone)]
pub(crate) struct HeldExcerpt {
    pub(crate) first_line: usize,
    pub(crate) lines: usize,
    pub(crate) text: String,
    pub(crate) group: u64,
}

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
    /// The whole output's size.
    pub(super) totals: Totals,
}

/// A part of the middle worth keeping, with its text.
struct Candidate<'a> {
    first_line: usize,
    lines: usize,
    text: &'a str,
    group: u64,
}

/// Cuts `source` into `allowance` chars keeping what matters; `None` when the allowance is too
/// small for it (the positional cut's tiers then keep what they can) or the output is one line.
pub(super) fn cut(
    source: &Source<'_>,
    allowance: usize,
    style: &TrimStyle,
    continuation: &Continuation<'_>,
    automaton: Option<&AhoCorasick>,
) -> Option<Trimmed<'static>> {
    if source.totals.lines < 2 {
        return None;
    }
    let shown = Shown {
        line_cut: super::marker::line_cut_reserve(source.totals.chars, source.totals.lines),
        ..Shown::of(style)
    };
    // Room for saying escapes were removed is kept only once a cut shows that it needs it:
    // looking for escapes in all of a large output would cost a pass over it.
    let plain = Shown {
        render: false,
        ..shown
    };
    let first = cut_with(
        source,
        allowance,
        style,
        continuation,
        automaton,
        shown,
        plain,
    )?;
    let fits = first.text().chars().count() <= allowance;
    if fits || !shown.render {
        return Some(first);
    }
    cut_with(
        source,
        allowance,
        style,
        continuation,
        automaton,
        shown,
        shown,
    )
}

/// [`cut`], showing lines as `shown` says, with room for the marker `reserved` says.
fn cut_with(
    source: &Source<'_>,
    allowance: usize,
    style: &TrimStyle,
    continuation: &Continuation<'_>,
    automaton: Option<&AhoCorasick>,
    shown: Shown,
    reserved: Shown,
) -> Option<Trimmed<'static>> {
    let totals = source.totals;
    let max_lines = style.max_lines.unwrap_or(usize::MAX);
    let room = allowance.checked_sub(reserve(totals, reserved, continuation, 0))?;
    if room < MIN_ROOM {
        return None;
    }
    // The region of the tail a walk may cover: a captured tail that starts inside a line starts
    // at its next line.
    let tail_bytes = source.tail.as_bytes();
    let tail_region = if source.tail_starts_line || source.whole {
        0
    } else {
        memchr::memchr(b'\n', tail_bytes).map_or(tail_bytes.len(), |i| i + 1)
    };
    // A captured head may end inside a line: the walk stops at its last complete line (unless it
    // has none, and is cut inside).
    let head_limit = if source.whole {
        source.head.len()
    } else {
        memchr::memrchr(b'\n', source.head.as_bytes()).map_or(source.head.len(), |i| i + 1)
    };
    let walks = |room: usize, lines: usize| {
        let (head_room, tail_room) = style.split(room);
        let (head_lines, tail_lines) = style.split(lines);
        let head = walk_forward(
            source.head,
            0..head_limit,
            1,
            Room {
                chars: head_room,
                lines: head_lines.max(usize::from(head_room > 0)),
            },
            shown,
            true,
        );
        // For a whole text the tail stops where the head stopped.
        let stop = if source.whole {
            head.bytes
        } else {
            tail_region
        };
        let tail = walk_backward(
            source.tail,
            stop..source.tail.len(),
            totals.lines,
            Room {
                chars: tail_room
                    + (head_room - head.chars.min(head_room)) * usize::from(source.whole),
                lines: tail_lines.max(usize::from(tail_room > 0)),
            },
            shown,
        );
        (head, tail)
    };
    let budget = (room as f64 * EXCERPT_SHARE) as usize;
    let line_budget = if max_lines == usize::MAX {
        usize::MAX
    } else {
        (max_lines as f64 * EXCERPT_SHARE) as usize
    };
    // With salience, the head and the tail are first walked as they would be beside excerpts
    // that take their whole share, and the middle they leave is searched once: the walks that
    // follow only grow from these, so no excerpt loses a line to a walk that shrank.
    let (mut head, mut tail) = match automaton {
        Some(_) => walks(room - budget, max_lines.saturating_sub(line_budget)),
        None => walks(room, max_lines),
    };
    let middle_first = head.covered + 1;
    let middle_last = totals.lines - tail.covered;
    let mut chosen: Vec<Candidate<'_>> = Vec::new();
    if let Some(automaton) = automaton {
        let candidates = if middle_first <= middle_last {
            candidates(source, &head, &tail, automaton)
        } else {
            Vec::new()
        };
        let in_middle: Vec<Candidate<'_>> = candidates
            .iter()
            .filter_map(|c| within(c, middle_first, middle_last))
            .collect();
        if in_middle.is_empty() {
            // Nothing salient in the middle: the head and the tail take all the room.
            (head, tail) = walks(room, max_lines);
        } else {
            let per_block = block_overhead(totals);
            let excerpts: Vec<Excerpt> = in_middle
                .iter()
                .map(|c| Excerpt {
                    bytes: 0..0,
                    first_line: c.first_line,
                    lines: c.lines,
                    group: c.group,
                })
                .collect();
            let picked = salience::choose(&excerpts, budget, line_budget, MAX_BLOCKS, |excerpt| {
                let i = excerpts
                    .iter()
                    .position(|e| e.first_line == excerpt.first_line)
                    .unwrap_or(0);
                let text = in_middle[i].text;
                let walk = walk_forward(text, 0..text.len(), 1, Room::UNLIMITED, shown, false);
                (walk.chars + per_block, walk.lines)
            });
            chosen = picked
                .into_iter()
                .map(|i| Candidate {
                    first_line: in_middle[i].first_line,
                    lines: in_middle[i].lines,
                    text: in_middle[i].text,
                    group: in_middle[i].group,
                })
                .collect();
            if chosen.is_empty() {
                // No excerpt fits beside the marker: the head and the tail take all the room.
                (head, tail) = walks(room, max_lines);
            }
        }
    }
    fn walk_block<'t>(candidate: &Candidate<'t>, shown: Shown) -> Walk<'t> {
        walk_forward(
            candidate.text,
            0..candidate.text.len(),
            candidate.first_line,
            Room::UNLIMITED,
            shown,
            false,
        )
    }
    let mut blocks: Vec<Walk<'_>> = Vec::new();
    let mut block_spans: Vec<LineSpan> = Vec::new();
    if !chosen.is_empty() {
        let walked: Vec<Walk<'_>> = chosen.iter().map(|c| walk_block(c, shown)).collect();
        let used: usize =
            walked.iter().map(|b| b.chars).sum::<usize>() + walked.len() * block_overhead(totals);
        let used_lines: usize = walked.iter().map(|b| b.lines).sum();
        let room = allowance
            .checked_sub(reserve(totals, reserved, continuation, walked.len()))?
            .checked_sub(used)?;
        (head, tail) = walks(room, max_lines.saturating_sub(used_lines));
        // The walks moved: each excerpt keeps what they do not cover (no more than it had).
        let head_last = head.covered;
        let tail_first = totals.lines + 1 - tail.covered;
        for candidate in &chosen {
            if let Some(part) = within(candidate, head_last + 1, tail_first.saturating_sub(1)) {
                block_spans.push(LineSpan {
                    first: part.first_line,
                    last: part.first_line + part.lines - 1,
                });
                blocks.push(walk_block(&part, shown));
            }
        }
    }
    Some(assemble(
        source,
        head,
        blocks,
        &block_spans,
        tail,
        continuation,
    ))
}

/// What one part kept from the middle costs beyond its lines: its gap line and its span in the
/// marker, at their widest.
fn block_overhead(totals: Totals) -> usize {
    gap_line(totals.lines, totals.lines).chars().count() + 1 + 2 * (digits(totals.lines) + 1) + 3
}

/// The chars of `n` as a marker writes it, commas included.
fn digits(n: usize) -> usize {
    super::grouped(n).len()
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
    render(&cut, &continuation.full, Layout::Widest)
        .chars()
        .count()
        + 2
}

/// The salient parts of the output, in order: a text's found in what the walks did not cover;
/// a stream's gathered as it passed (the watch saw all of it, head and tail included).
fn candidates<'a>(
    source: &Source<'a>,
    head: &Walk<'_>,
    tail: &Walk<'_>,
    automaton: &AhoCorasick,
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
            })
            .collect();
    }
    let text = source.head;
    let end = text.len() - tail.bytes;
    salience::scan(
        text,
        head.bytes..end.max(head.bytes),
        head.covered + 1,
        automaton,
        MAX_CANDIDATES,
    )
    .into_iter()
    .map(|e| Candidate {
        first_line: e.first_line,
        lines: e.lines,
        text: &text[e.bytes],
        group: e.group,
    })
    .collect()
}

/// The part of `candidate` within lines `first..=last`, when any: a salient block a walk began
/// (a panic whose first line the head kept) keeps the rest of it.
fn within<'a>(candidate: &Candidate<'a>, first: usize, last: usize) -> Option<Candidate<'a>> {
    let end_line = candidate.first_line + candidate.lines - 1;
    if end_line < first || candidate.first_line > last {
        return None;
    }
    let skip = first.saturating_sub(candidate.first_line);
    let drop = end_line.saturating_sub(last);
    let bytes = candidate.text.as_bytes();
    let start = if skip == 0 {
        0
    } else {
        nth_line_end(bytes, 0, bytes.len(), skip)
    };
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
    })
}

/// Joins the parts with the marker at the first gap and a gap line at the others, and states
/// the figures.
fn assemble(
    source: &Source<'_>,
    head: Walk<'_>,
    blocks: Vec<Walk<'_>>,
    block_spans: &[LineSpan],
    tail: Walk<'_>,
    continuation: &Continuation<'_>,
) -> Trimmed<'static> {
    let totals = source.totals;
    let mut spans: Vec<LineSpan> = Vec::with_capacity(block_spans.len() + 2);
    if head.covered > 0 {
        spans.push(LineSpan {
            first: 1,
            last: head.covered,
        });
    }
    spans.extend_from_slice(block_spans);
    if tail.covered > 0 {
        spans.push(LineSpan {
            first: totals.lines + 1 - tail.covered,
            last: totals.lines,
        });
    }
    // Spans that touch or overlap are one, except where a line cut inside ends the head or
    // starts the tail: the marker names that line as a span's edge (a text of one line cut
    // at both ends is one span).
    let head_partial = head.partial.filter(|_| head.covered > 0);
    let tail_partial = tail.partial.filter(|_| tail.covered > 0);
    let tail_first = totals.lines + 1 - tail.covered;
    let mut merged: Vec<LineSpan> = Vec::with_capacity(spans.len());
    for span in spans {
        let apart = |last: &LineSpan| {
            *last != span
                && ((head_partial.is_some() && last.first == 1 && last.last == head.covered)
                    || (tail_partial.is_some() && span.first == tail_first))
        };
        match merged.last_mut() {
            Some(last) if span.first <= last.last + 1 && !apart(last) => {
                last.last = last.last.max(span.last)
            }
            _ => merged.push(span),
        }
    }
    let spans = merged;

    let mut parts: Vec<Walk<'_>> = Vec::with_capacity(blocks.len() + 2);
    parts.push(head);
    parts.extend(blocks);
    parts.push(tail);
    let (mut kept, mut folded, mut removed) = (0, 0, Removed::default());
    for part in &parts {
        kept += part.kept;
        folded += part.folded;
        removed.add(part.removed);
    }
    // The pieces, with the gaps between the parts: the first gap is the marker.
    let mut pieces: Vec<Piece<'_>> = Vec::new();
    let mut next_line = 1;
    let mut marked = false;
    let part_starts: Vec<Option<usize>> = {
        let mut starts = Vec::with_capacity(parts.len());
        starts.push((parts[0].covered > 0).then_some(1));
        for span in block_spans {
            starts.push(Some(span.first));
        }
        let tail = &parts[parts.len() - 1];
        starts.push((tail.covered > 0).then(|| totals.lines + 1 - tail.covered));
        starts
    };
    for (index, (part, start)) in parts.into_iter().zip(part_starts).enumerate() {
        let Some(start) = start else { continue };
        // A head cut inside its last line leaves the rest of that line out: the marker follows.
        let after_cut_line = index > 0 && head_partial.is_some() && !marked;
        if start > next_line || after_cut_line {
            if marked {
                pieces.push(Piece::Gap {
                    first: next_line,
                    last: start - 1,
                });
            } else {
                pieces.push(Piece::Marker);
                marked = true;
            }
        }
        next_line = next_line.max(start + part.covered);
        pieces.extend(part.pieces);
    }
    if next_line <= totals.lines {
        if marked {
            pieces.push(Piece::Gap {
                first: next_line,
                last: totals.lines,
            });
        } else {
            pieces.push(Piece::Marker);
            marked = true;
        }
    }
    if !marked {
        // Nothing left out: the marker goes where the first fold is (the output's own last
        // line, a command's exit code, stays last), else at the end.
        match pieces
            .iter()
            .position(|piece| matches!(piece, Piece::Fold { .. }))
        {
            Some(first_fold) => pieces.insert(first_fold, Piece::Marker),
            None => pieces.push(Piece::Marker),
        }
    }
    // The result starts and ends with the output unchanged for as long as it does.
    let head_bytes = match pieces.first() {
        Some(Piece::Lines(Cow::Borrowed(first))) if source.head.starts_with(*first) => {
            verbatim_prefix(source.head, &pieces)
        }
        _ => 0,
    };
    let tail_bytes = verbatim_suffix(source.tail, &pieces);
    let whole_head_lines = spans
        .first()
        .filter(|span| span.first == 1)
        .map_or(0, |span| span.last - usize::from(head_partial.is_some()));
    let cut = Cut {
        original_chars: totals.chars,
        original_lines: totals.lines,
        kept_chars: kept,
        head_bytes,
        tail_bytes,
        spans,
        folded_lines: folded,
        escapes_removed: removed.escapes,
        redraws_removed: removed.redraws,
        mid_line: head_partial.is_some() || tail_partial.is_some(),
        head_line_chars: head_partial,
        tail_line_chars: tail_partial,
        next_offset: continuation
            .page_offset
            .map(|offset| offset.saturating_add(whole_head_lines)),
    };
    let marker = render(&cut, &continuation.full, Layout::Exact);
    let mut out = String::new();
    let last = pieces.len() - 1;
    for (i, piece) in pieces.into_iter().enumerate() {
        let line = match piece {
            Piece::Lines(lines) => {
                out.push_str(&lines);
                continue;
            }
            Piece::Fold {
                folded,
                period,
                first,
                last,
            } => fold_line(folded, period, first, last),
            Piece::Gap { first, last } => gap_line(first, last),
            Piece::Marker => marker.clone(),
        };
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&line);
        if i != last {
            out.push('\n');
        }
    }
    Trimmed {
        text: Cow::Owned(out),
        cut: Some(cut),
    }
}

/// The bytes of `text`'s beginning the pieces show unchanged, up to the first piece that is not
/// the next borrowed part of it.
fn verbatim_prefix(text: &str, pieces: &[Piece<'_>]) -> usize {
    let mut at = 0;
    for piece in pieces {
        match piece {
            Piece::Lines(Cow::Borrowed(lines)) if text[at..].starts_with(*lines) => {
                at += lines.len()
            }
            _ => break,
        }
    }
    at
}

/// The bytes of `text`'s end the pieces show unchanged.
fn verbatim_suffix(text: &str, pieces: &[Piece<'_>]) -> usize {
    let mut end = text.len();
    for piece in pieces.iter().rev() {
        match piece {
            Piece::Lines(Cow::Borrowed(lines)) if text[..end].ends_with(*lines) => {
                end -= lines.len();
            }
            _ => break,
        }
    }
    text.len() - end
}
