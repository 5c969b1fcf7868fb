//! The walks of a cut: forward from the top for the head, backward from the bottom for the
//! tail, each keeping whole lines while they fit its room, as they were or as a terminal shows
//! them, and a lossless run as its first lines and one fold line wherever the fold is shorter
//! than the lines it stands for.

use std::borrow::Cow;
use std::ops::Range;

use super::super::bytes::{line_end, line_start, nth_line_end, without_break};
use super::super::marker::fold_line;
use super::super::runs::{self, HeldRun, Run};
use super::super::terminal::{self, Removed};
use super::super::{Render, TrimStyle};

/// One part of a cut's layout.
#[derive(Debug)]
pub(super) enum Piece<'a> {
    /// Lines of the output, as they were (borrowed) or as a terminal shows them; each ends with
    /// its line break but perhaps the output's last.
    Lines(Cow<'a, str>),
    /// The fold line of a lossless run whose first period is the piece before it.
    Fold { run: Run, first_line: usize },
    /// `[… lines A-B left out]`.
    Gap { first: usize, last: usize },
    /// The lines left out at the marker, with a sample of them.
    Summary { first: usize, last: usize },
    /// The marker.
    Marker,
}

/// The room a walk may fill: chars and layout lines.
#[derive(Debug, Clone, Copy)]
pub(super) struct Room {
    pub(super) chars: usize,
    pub(super) lines: usize,
}

impl Room {
    pub(super) const UNLIMITED: Room = Room {
        chars: usize::MAX,
        lines: usize::MAX,
    };
}

/// What a walk kept.
#[derive(Debug, Default)]
pub(super) struct Walk<'a> {
    pub(super) pieces: Vec<Piece<'a>>,
    /// Chars of the layout the pieces take, line breaks included.
    pub(super) chars: usize,
    /// Lines of the layout (content lines and fold lines).
    pub(super) lines: usize,
    /// Chars of content shown.
    pub(super) kept: usize,
    pub(super) folded: usize,
    pub(super) removed: Removed,
    /// Lines of the output the walk covered (shown or folded).
    pub(super) covered: usize,
    /// Bytes of the region the walk covered, from where it started.
    pub(super) bytes: usize,
    /// When the walk cut a line inside: the chars of it shown.
    pub(super) partial: Option<usize>,
}

/// How a walk shows lines.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shown {
    pub(super) fold: bool,
    pub(super) render: bool,
    /// Chars the marker grows by when a walk cuts a line inside (naming the line and the
    /// chars shown): the walk that cuts counts them as its own.
    pub(super) line_cut: usize,
}

impl Shown {
    pub(super) fn of(style: &TrimStyle) -> Self {
        Shown {
            fold: style.fold,
            render: style.render != Render::Never,
            line_cut: 0,
        }
    }

    /// A line (or lines) as shown, with what rendering removed.
    pub(super) fn lines<'a>(&self, text: &'a str) -> (Cow<'a, str>, Removed) {
        if self.render {
            terminal::render(text)
        } else {
            (Cow::Borrowed(text), Removed::default())
        }
    }
}

/// A lossless run as a walk shows it: its first period's lines and its fold line.
struct RunShown<'a> {
    first: Cow<'a, str>,
    removed: Removed,
    kept: usize,
    fold: Piece<'a>,
    /// Layout chars: the first period, the fold line and its line break.
    chars: usize,
    layout_lines: usize,
}

/// A lossless run where a walk found it: its first period is `text[start..period_end]`.
struct RunAt {
    run: Run,
    start: usize,
    period_end: usize,
    first_line: usize,
}

impl RunAt {
    /// Whether the fold line is shorter than the `folded_bytes` it stands for: a short run is
    /// shown as it is.
    fn worth_folding(&self, folded_bytes: usize) -> bool {
        fold_line(&self.run, self.first_line).chars().count() + 1 < folded_bytes
    }

    /// The run shown, when it fits `left` chars and `lines_left` lines.
    fn shown<'a>(
        &self,
        text: &'a str,
        shown: Shown,
        (left, lines_left): (usize, usize),
    ) -> Option<RunShown<'a>> {
        let fold = fold_line(&self.run, self.first_line).chars().count() + 1;
        let (first, removed) = shown.lines(&text[self.start..self.period_end]);
        let kept = first.chars().count();
        let layout_lines = self.run.period() + 1;
        (kept + fold <= left && layout_lines <= lines_left).then_some(RunShown {
            first,
            removed,
            kept,
            fold: Piece::Fold {
                run: self.run,
                first_line: self.first_line,
            },
            chars: kept + fold,
            layout_lines,
        })
    }
}

impl<'a> Walk<'a> {
    /// Takes a run shown, the pieces in the order the walk builds them.
    fn take_run(&mut self, shown: RunShown<'a>, run: Run, reversed: bool) {
        self.kept += shown.kept;
        self.chars += shown.chars;
        self.lines += shown.layout_lines;
        self.folded += run.folded();
        self.removed.add(shown.removed);
        self.covered += run.lines;
        if reversed {
            self.pieces.push(shown.fold);
            self.pieces.push(Piece::Lines(shown.first));
        } else {
            self.pieces.push(Piece::Lines(shown.first));
            self.pieces.push(shown.fold);
        }
    }

    /// Takes one line shown whole.
    fn take_line(&mut self, line: Cow<'a, str>, chars: usize, removed: Removed) {
        self.kept += chars;
        self.chars += chars;
        self.lines += 1;
        self.removed.add(removed);
        self.pieces.push(Piece::Lines(line));
        self.covered += 1;
    }
}

/// Walks `text[region]` forward from line `first_line`, keeping what fits `room`; a first line
/// longer than the room is cut inside when `cut_inside`. `held` is a run the stream's capture
/// followed past the region's end: when the walk reaches its first line, it shows it folded
/// and stops (what follows the run is not in the region).
pub(super) fn forward<'a>(
    text: &'a str,
    region: Range<usize>,
    first_line: usize,
    room: Room,
    shown: Shown,
    cut_inside: bool,
    held: Option<HeldRun>,
) -> Walk<'a> {
    let (start, limit) = (region.start, region.end);
    let bytes = text.as_bytes();
    let mut walk = Walk::default();
    let mut at = start;
    let mut line = first_line;
    while at < limit && walk.chars < room.chars && walk.lines < room.lines {
        let left = (room.chars - walk.chars, room.lines - walk.lines);
        if shown.fold {
            // A run the capture followed past the region is folded whatever its length: the
            // lines after its first are not here to be shown.
            if let Some(held) = held.filter(|held| held.first_line == line) {
                let found = RunAt {
                    run: held.run,
                    start: at,
                    period_end: line_end(bytes, at, limit),
                    first_line: line,
                };
                if let Some(run) = found.shown(text, shown, left) {
                    walk.take_run(run, held.run, false);
                    walk.bytes = limit - start;
                    break;
                }
            }
            if let Some((run, run_end)) = runs::forward(bytes, at, limit, shown.render) {
                let found = RunAt {
                    run,
                    start: at,
                    period_end: nth_line_end(bytes, at, limit, run.period()),
                    first_line: line,
                };
                if found.worth_folding(run_end - found.period_end)
                    && let Some(shown_run) = found.shown(text, shown, left)
                {
                    walk.take_run(shown_run, run, false);
                    walk.bytes = run_end - start;
                    at = run_end;
                    line += run.lines;
                    continue;
                }
            }
        }
        let end = line_end(bytes, at, limit);
        let (shown_line, removed) = shown.lines(&text[at..end]);
        let chars = shown_line.chars().count();
        if chars <= left.0 {
            walk.take_line(shown_line, chars, removed);
            walk.bytes = end - start;
            at = end;
            line += 1;
            continue;
        }
        if cut_inside && walk.pieces.is_empty() && left.0 > 1 + shown.line_cut {
            // One line longer than the room: its beginning, cut on a char boundary.
            let room = left.0.saturating_sub(1 + shown.line_cut);
            let kept: String = shown_line.chars().take(room).collect();
            let count = kept.chars().count();
            walk.take_line(Cow::Owned(kept), count, removed);
            walk.chars += 1 + shown.line_cut;
            walk.partial = Some(count);
        }
        break;
    }
    walk
}

/// Walks `text[region]` backward from its last line, numbered `last_line`, keeping what fits;
/// the pieces come out in reading order. A last line longer than the room is cut inside (its
/// end kept).
pub(super) fn backward<'a>(
    text: &'a str,
    region: Range<usize>,
    last_line: usize,
    room: Room,
    shown: Shown,
) -> Walk<'a> {
    let (stop, end) = (region.start, region.end);
    let bytes = text.as_bytes();
    let mut walk = Walk::default();
    // Built bottom-up, reversed at the end.
    let mut at = end;
    let mut line = last_line;
    while at > stop && walk.chars < room.chars && walk.lines < room.lines {
        let left = (room.chars - walk.chars, room.lines - walk.lines);
        if shown.fold
            && let Some((run, run_start)) = runs::backward(bytes, at, stop, shown.render)
        {
            let found = RunAt {
                run,
                start: run_start,
                period_end: nth_line_end(bytes, run_start, at, run.period()),
                first_line: line + 1 - run.lines,
            };
            if found.worth_folding(at - found.period_end)
                && let Some(shown_run) = found.shown(text, shown, left)
            {
                walk.take_run(shown_run, run, true);
                walk.bytes = end - run_start;
                at = run_start;
                line -= run.lines;
                continue;
            }
        }
        let start = line_start(bytes, at, stop);
        let (shown_line, removed) = shown.lines(&text[start..at]);
        let chars = shown_line.chars().count();
        if chars <= left.0 {
            walk.take_line(shown_line, chars, removed);
            walk.bytes = end - start;
            at = start;
            line -= 1;
            continue;
        }
        if walk.pieces.is_empty() && left.0 > 1 + shown.line_cut {
            // One line longer than the room: its end, cut on a char boundary.
            let count = shown_line.chars().count();
            let keep = left.0.saturating_sub(1 + shown.line_cut);
            let kept: String = shown_line.chars().skip(count - keep.min(count)).collect();
            let count = kept.chars().count();
            // The line's chars shown, its line break not counted.
            let partial = count - (kept.len() - without_break(kept.as_bytes()).len());
            walk.take_line(Cow::Owned(kept), count, removed);
            walk.chars += 1 + shown.line_cut;
            walk.partial = Some(partial);
        }
        break;
    }
    walk.pieces.reverse();
    walk
}
