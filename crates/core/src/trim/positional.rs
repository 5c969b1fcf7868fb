//! The positional cut: a head and a tail of a text (or of a stream's captured parts) joined
//! around the marker, with the cut points chosen by chars, then lines; and the tiers that keep
//! the most when the allowance cannot hold the full marker.

use std::borrow::Cow;

use super::bytes::{
    byte_offset_after_chars, byte_offset_after_chars_from, byte_offset_before_chars,
    count_newlines, end_of_first_lines, first_line_chars, last_line_chars, lines_from,
    start_of_last_lines,
};
use super::marker::{self, Layout, MINIMAL, render};
use super::{Continuation, Cut, LineSpan, MIN_ROOM, Totals, TrimStyle, Trimmed};

/// Joins a kept `head` (a prefix of a text) and `tail` (a suffix) with the marker, laid out as
/// [`fit_with`] lays them out, and computes the figures of the cut from `totals`.
///
/// For tools that keep a head and a tail of a stream themselves (a command's output) and must
/// mark the cut the way every other truncation is marked. `tail_starts_line` says whether the
/// byte before the tail was a newline. The caller sizes the parts: the result is as long as
/// they are plus the marker.
pub(crate) fn assemble(
    head: &str,
    tail: &str,
    tail_starts_line: bool,
    totals: Totals,
    continuation: &Continuation<'_>,
) -> Trimmed<'static> {
    join(
        head,
        tail,
        tail_starts_line,
        totals,
        continuation.page_offset,
        |cut| render(cut, continuation, Layout::Exact),
    )
}

/// Joins `head` and `tail` around the marker `marker` renders from the cut's figures.
fn join(
    head: &str,
    tail: &str,
    tail_starts_line: bool,
    totals: Totals,
    page_offset: Option<usize>,
    marker: impl FnOnce(&Cut) -> String,
) -> Trimmed<'static> {
    let head_lines = (!head.is_empty()).then(|| LineSpan {
        first: 1,
        last: 1 + count_newlines(&head.as_bytes()[..head.len() - 1]),
    });
    let tail_span = |tail: &str| {
        (!tail.is_empty()).then(|| LineSpan {
            first: 1 + totals.newlines - count_newlines(tail.as_bytes()),
            last: totals.lines,
        })
    };
    let (tail, tail_starts_line) = match (head_lines, tail_span(tail)) {
        // The tail starts inside the line the head ends in, and goes on past it: it keeps its
        // whole lines only, so each line is shown in one place and the marker names each cut.
        (Some(head_span), Some(tail_span)) if tail_span.first <= head_span.last => {
            match tail.find('\n') {
                Some(end) if tail_span.last > head_span.last => (&tail[end + 1..], true),
                _ => (tail, tail_starts_line),
            }
        }
        _ => (tail, tail_starts_line),
    };
    let tail_lines = tail_span(tail);
    let head_mid_line = !head.is_empty() && !head.ends_with('\n');
    let tail_mid_line = !tail.is_empty() && !tail_starts_line;
    // Head and tail cut inside one line (a text of one line, or the last line of a longer
    // one): one span, the line's two cuts named by the marker.
    let tail_lines = tail_lines.filter(|tail| head_lines.is_none_or(|head| tail.first > head.last));
    // The next page starts at the first line the head did not keep whole.
    let whole_head_lines = head_lines.map_or(0, |span| span.last - usize::from(head_mid_line));
    let cut = Cut {
        next_offset: page_offset.map(|offset| offset.saturating_add(whole_head_lines)),
        compacted: false,
        original_chars: totals.chars,
        original_lines: totals.lines,
        kept_chars: head.chars().count() + tail.chars().count(),
        head_bytes: head.len(),
        tail_bytes: tail.len(),
        spans: head_lines.into_iter().chain(tail_lines).collect(),
        folded_lines: 0,
        escapes_removed: 0,
        redraws_removed: 0,
        mid_line: head_mid_line || tail_mid_line,
        head_line_chars: head_mid_line.then(|| last_line_chars(head)),
        tail_line_chars: tail_mid_line.then(|| first_line_chars(tail)),
    };
    let marker = marker(&cut);

    let mut out = String::with_capacity(head.len() + marker.len() + tail.len() + 2);
    out.push_str(head);
    if head_mid_line {
        out.push('\n');
    }
    out.push_str(&marker);
    if !tail.is_empty() {
        out.push('\n');
        out.push_str(tail);
    }
    Trimmed {
        text: Cow::Owned(out),
        cut: Some(cut),
    }
}

/// A positional cut's points, chosen by `choose` for the room the allowance leaves beside the
/// marker; `choose` also says whether they fall inside a line, and then they are chosen again
/// with room for the marker to name the line and the chars it shows. `None` when the allowance
/// leaves less than [`MIN_ROOM`].
pub(crate) fn positional_cuts<T>(
    allowance: usize,
    totals: Totals,
    continuation: &Continuation<'_>,
    choose: impl Fn(usize) -> (T, bool),
) -> Option<T> {
    let room_for = |reserve: usize| {
        allowance
            .checked_sub(reserve)
            .filter(|&room| room >= MIN_ROOM)
    };
    let reserve = marker_reserve(totals, continuation);
    let (cuts, mid_line) = choose(room_for(reserve)?);
    if !mid_line {
        return Some(cuts);
    }
    let named = 2 * marker::line_cut_reserve(totals.chars, totals.lines);
    Some(choose(room_for(reserve + named)?).0)
}

/// The length in chars of the longest marker a cut of a text with these totals can produce
/// (without naming a line cut inside, which [`positional_cuts`] adds when a cut needs it),
/// plus the two line breaks around it: what to leave free when sizing a head and a tail for
/// [`assemble`].
pub(crate) fn marker_reserve(totals: Totals, continuation: &Continuation<'_>) -> usize {
    let widest = Cut {
        original_chars: totals.chars,
        original_lines: totals.lines,
        kept_chars: totals.chars,
        head_bytes: 0,
        tail_bytes: 0,
        spans: vec![
            LineSpan {
                first: totals.lines,
                last: totals.lines,
            };
            2
        ],
        folded_lines: 0,
        escapes_removed: 0,
        redraws_removed: 0,
        mid_line: true,
        head_line_chars: None,
        tail_line_chars: None,
        next_offset: continuation
            .page_offset
            .map(|offset| offset.saturating_add(totals.lines)),
        compacted: false,
    };
    render(&widest, continuation, Layout::Widest)
        .chars()
        .count()
        + 2
}

/// Chooses `(head_end, tail_start)`, byte offsets: the head is `text[..head_end]`, the tail
/// `text[tail_start..]`, with `head_end <= tail_start` and at most `room` chars kept in all.
pub(super) fn choose_cuts(
    text: &str,
    original_chars: usize,
    original_lines: usize,
    room: usize,
    style: &TrimStyle,
) -> (usize, usize) {
    if original_chars <= room {
        let bytes = text.as_bytes();
        // The chars fit: only the line limit can have been exceeded.
        let max = style.max_lines.unwrap_or(original_lines);
        let (head_quota, tail_quota) = style.split(max);
        return (
            end_of_first_lines(bytes, head_quota),
            start_of_last_lines(bytes, tail_quota),
        );
    }

    cut_points(text, text, room, style)
}

/// Chooses where to cut a text of which `head` is a prefix and `tail` a suffix, with more chars
/// in all than `room`: the head is `head[..head_end]`, the tail `tail[tail_start..]`, and at
/// most `room` chars are kept. For a whole text, `head` and `tail` are the text itself.
pub(super) fn cut_points(head: &str, tail: &str, room: usize, style: &TrimStyle) -> (usize, usize) {
    let head_bytes = head.as_bytes();
    let tail_bytes = tail.as_bytes();
    // Stage 1: chars.
    let (head_room, tail_room) = style.split(room);
    let mut head_end = byte_offset_after_chars(head, head_room);
    if head_end > 0 && head_bytes[head_end - 1] != b'\n' {
        let window_start = byte_offset_before_chars(head, head_end, head_room / 4);
        if let Some(at) = super::bytes::after_last_break(head_bytes, window_start, head_end) {
            head_end = at;
        }
    }
    let mut tail_start = byte_offset_before_chars(tail, tail_bytes.len(), tail_room);
    if tail_start < tail_bytes.len() && tail_start > 0 && tail_bytes[tail_start - 1] != b'\n' {
        let window_end = byte_offset_after_chars_from(tail, tail_start, tail_room / 4);
        if let Some(at) = memchr::memchr(b'\n', &tail_bytes[tail_start..window_end]) {
            tail_start += at + 1;
        }
    }

    // Stage 2: lines.
    if let Some(max) = style.max_lines {
        let kept_head = &head_bytes[..head_end];
        let kept_tail = &tail_bytes[tail_start..];
        let head_lines = lines_from(kept_head, count_newlines(kept_head));
        let tail_lines = lines_from(kept_tail, count_newlines(kept_tail));
        if head_lines + tail_lines > max {
            let (mut head_quota, mut tail_quota) = style.split(max);
            if head_lines < head_quota {
                tail_quota += head_quota - head_lines;
                head_quota = head_lines;
            } else if tail_lines < tail_quota {
                head_quota += tail_quota - tail_lines;
                tail_quota = tail_lines;
            }
            head_end = end_of_first_lines(kept_head, head_quota);
            tail_start += start_of_last_lines(kept_tail, tail_quota);
        }
    }
    (head_end, tail_start)
}

/// The result when not even the full marker fits: the tier that keeps the most content. `head`
/// is the whole text, or a prefix of it when `parts` gives a suffix (a stream's captured tail)
/// and whether that suffix starts a line.
pub(super) fn tiny(
    head: &str,
    parts: Option<(&str, bool)>,
    totals: Totals,
    allowance: usize,
    style: &TrimStyle,
) -> Trimmed<'static> {
    let nothing = |text: &str| Trimmed {
        text: Cow::Owned(text.to_owned()),
        cut: Some(Cut::without_spans(totals.chars, totals.lines, 0)),
    };
    if style.ellipsis_when_tiny {
        if allowance < 2 {
            return nothing("");
        }
        let end = byte_offset_after_chars(head, allowance - 1);
        let kept = &head[..end];
        let mut text = String::with_capacity(end + 3);
        text.push_str(kept);
        text.push('…');
        return Trimmed {
            text: Cow::Owned(text),
            cut: Some(Cut {
                original_chars: totals.chars,
                original_lines: totals.lines,
                kept_chars: allowance - 1,
                head_bytes: end,
                tail_bytes: 0,
                spans: (!kept.is_empty())
                    .then(|| LineSpan {
                        first: 1,
                        last: 1 + count_newlines(&kept.as_bytes()[..kept.len() - 1]),
                    })
                    .into_iter()
                    .collect(),
                folded_lines: 0,
                escapes_removed: 0,
                redraws_removed: 0,
                mid_line: !kept.ends_with('\n'),
                head_line_chars: (!kept.is_empty() && !kept.ends_with('\n'))
                    .then(|| last_line_chars(kept)),
                tail_line_chars: None,
                next_offset: None,
                compacted: false,
            }),
        };
    }
    // `[truncated]` and a line break on each side.
    let reserve = MINIMAL.len() + 2;
    match allowance.checked_sub(reserve) {
        Some(room) if room > 0 => {
            let (tail, tail_starts_line) = parts.unwrap_or((head, true));
            let (head_end, tail_start) = match parts {
                None => choose_cuts(head, totals.chars, totals.lines, room, style),
                Some(_) => cut_points(head, tail, room, style),
            };
            let starts_line = if tail_start == 0 {
                tail_starts_line
            } else {
                tail.as_bytes()[tail_start - 1] == b'\n'
            };
            join(
                &head[..head_end],
                &tail[tail_start..],
                starts_line,
                totals,
                None,
                |_| MINIMAL.to_owned(),
            )
        }
        _ if MINIMAL.len() <= allowance => nothing(MINIMAL),
        _ => nothing(""),
    }
}
