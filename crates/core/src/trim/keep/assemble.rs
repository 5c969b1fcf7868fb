//! Laying a cut out: the head, the parts kept from the middle and the tail, joined with the
//! marker at the first gap (and the summary of what it leaves out), a gap line at the others;
//! and the figures of the cut.

use std::borrow::Cow;

use super::super::marker::{Layout, fold_line, gap_line, render, summary_line};
use super::super::terminal::Removed;
use super::super::{Continuation, Cut, LineSpan, Trimmed};
use super::Source;
use super::walk::{Piece, Walk};

/// A line of the output a summary may quote: its number and its text as shown.
#[derive(Debug)]
pub(super) struct Sample<'a> {
    pub(super) line: usize,
    pub(super) text: Cow<'a, str>,
}

/// The summary of the lines the marker's gap leaves out, on the line after it: quoting
/// `sample` when it is their first line.
pub(super) struct Summary<'a> {
    pub(super) sample: Option<Sample<'a>>,
}

/// Joins the parts with the marker at the first gap and a gap line at the others, and states
/// the figures, with the `summary` of what the marker's gap leaves out when there is one.
pub(super) fn assemble(
    source: &Source<'_>,
    head: Walk<'_>,
    blocks: Vec<Walk<'_>>,
    block_spans: &[LineSpan],
    tail: Walk<'_>,
    continuation: &Continuation<'_>,
    summary: Option<Summary<'_>>,
) -> Trimmed<'static> {
    let (summary, sample) = match summary {
        Some(Summary { sample }) => (true, sample),
        None => (false, None),
    };
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
    let part_starts: Vec<Option<usize>> = {
        let mut starts = Vec::with_capacity(blocks.len() + 2);
        starts.push((head.covered > 0).then_some(1));
        starts.extend(block_spans.iter().map(|span| Some(span.first)));
        starts.push((tail.covered > 0).then(|| totals.lines + 1 - tail.covered));
        starts
    };
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
    let mark = |pieces: &mut Vec<Piece<'_>>, first: usize, last: usize, marked: &mut bool| {
        if *marked {
            pieces.push(Piece::Gap { first, last });
        } else {
            pieces.push(Piece::Marker);
            if summary && first <= last {
                pieces.push(Piece::Summary { first, last });
            }
            *marked = true;
        }
    };
    for (index, (part, start)) in parts.into_iter().zip(part_starts).enumerate() {
        let Some(start) = start else { continue };
        // A head cut inside its last line leaves the rest of that line out: the marker follows.
        let after_cut_line = index > 0 && head_partial.is_some() && !marked;
        if start > next_line || after_cut_line {
            mark(&mut pieces, next_line, start - 1, &mut marked);
        }
        next_line = next_line.max(start + part.covered);
        pieces.extend(part.pieces);
    }
    if next_line <= totals.lines {
        mark(&mut pieces, next_line, totals.lines, &mut marked);
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
        compacted: false,
    };
    let marker = render(&cut, continuation, Layout::Exact);
    let mut out = String::new();
    let last = pieces.len() - 1;
    for (i, piece) in pieces.into_iter().enumerate() {
        let line = match piece {
            Piece::Lines(lines) => {
                out.push_str(&lines);
                continue;
            }
            Piece::Fold { run, first_line } => fold_line(&run, first_line),
            Piece::Gap { first, last } => gap_line(first, last),
            Piece::Summary { first, last } => {
                let quoted = sample
                    .as_ref()
                    .filter(|sample| sample.line == first)
                    .map(|sample| sample.text.as_ref());
                summary_line(first, last, quoted)
            }
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
