//! The one marker grammar every toolsmith truncation uses.
//!
//! ```text
//! [toolsmith: output truncated, kept 19,812 of 45,231 chars (lines 1-30 and 431-500 of 500); full output: artifact 7f3a…, read it with read_artifact]
//! ```
//!
//! The marker states who cut (toolsmith), the original size in chars and lines, what was kept and
//! where the rest is. Its figures are also carried as data in [`Cut`].

use std::fmt::Write as _;

use super::runs::{Run, Step};
use crate::figures::{grouped, push_grouped};

/// Where the full, untrimmed output can be found; named by the marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FullOutput<'a> {
    /// The full output was not kept anywhere (no artifact store is configured).
    NotKept,
    /// The full output is stored as an artifact.
    Stored {
        /// The artifact id the model passes to `reader`.
        id: &'a str,
        /// The tool the model calls to read it, e.g. `read_artifact`.
        reader: &'a str,
    },
    /// The output is stored as an artifact its store capped: the artifact keeps the head and
    /// the tail of the output, and leaves out `omitted_bytes` of its middle.
    StoredCapped {
        /// The artifact id the model passes to `reader`.
        id: &'a str,
        /// The tool the model calls to read it, e.g. `read_artifact`.
        reader: &'a str,
        /// Bytes of the middle of the output the artifact does not keep.
        omitted_bytes: u64,
    },
    /// Storing the full output was attempted and failed; `reason` says why.
    Failed {
        /// A short, model-readable reason (long reasons are shortened in the marker).
        reason: &'a str,
    },
}

/// How the model goes on after a cut: where the full output is and, for a paginated call, the
/// offset (0-based line) its page started at, so the marker can name the next page's offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Continuation<'a> {
    /// Where the full output is.
    pub full: FullOutput<'a>,
    /// The offset the call's page started at, for paginated calls.
    pub page_offset: Option<usize>,
    /// The cap in tokens the cut was made to, when one made it: the marker names it
    /// (`cut to a 2,000-token cap`).
    pub token_cap: Option<usize>,
}

impl<'a> From<FullOutput<'a>> for Continuation<'a> {
    fn from(full: FullOutput<'a>) -> Self {
        Continuation {
            full,
            page_offset: None,
            token_cap: None,
        }
    }
}

impl Continuation<'_> {
    /// The same, for a page of a paginated call that started at `page_offset` (0-based line):
    /// the marker names the offset the next page starts at.
    #[must_use]
    pub fn with_page_offset(&self, page_offset: Option<usize>) -> Self {
        Continuation {
            page_offset,
            ..*self
        }
    }

    /// The same, with the cap in tokens the marker names.
    #[must_use]
    pub fn with_token_cap(&self, token_cap: Option<usize>) -> Self {
        Continuation { token_cap, ..*self }
    }
}

/// A 1-based, inclusive range of lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSpan {
    /// The first line, counting from 1.
    pub first: usize,
    /// The last line, inclusive.
    pub last: usize,
}

/// What a truncation kept and dropped, as data. The marker states the same figures.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Cut {
    /// Chars (Unicode scalar values) in the input.
    pub original_chars: usize,
    /// Lines in the input: newlines, plus one if the input does not end with a newline.
    pub original_lines: usize,
    /// Chars of content shown (the marker, fold and gap lines not counted): the input's lines
    /// as they were, or as a terminal shows them when they held escapes or redraws.
    pub kept_chars: usize,
    /// Byte length of the input's prefix the result starts with unchanged: the result begins
    /// with `input[..head_bytes]`.
    pub head_bytes: usize,
    /// Byte length of the input's suffix the result ends with unchanged: the result ends with
    /// `input[input.len() - tail_bytes..]`.
    pub tail_bytes: usize,
    /// The lines shown, in order, as spans: the head, the excerpts kept from the middle, the
    /// tail. A folded run is inside the span of its first line.
    pub spans: Vec<LineSpan>,
    /// Lines shown as a lossless fold (`[lines 3-1,002: the line above, 1,000 more times]`)
    /// rather than one by one: each can be rebuilt from the fold and the lines above it.
    pub folded_lines: usize,
    /// Escape sequences removed from the lines shown (terminal output rendered).
    pub escapes_removed: usize,
    /// Carriage-return and backspace redraws resolved in the lines shown.
    pub redraws_removed: usize,
    /// Whether a cut fell inside a line (a line was kept only in part): the head ended, or
    /// the tail started, inside one.
    pub mid_line: bool,
    /// When the head ends inside a line (the last line of the first span): the chars of that
    /// line shown, from its start, which is also the char offset its rest is read from.
    pub head_line_chars: Option<usize>,
    /// When the tail starts inside a line (the first line of the last span): the chars of that
    /// line shown, up to its end.
    pub tail_line_chars: Option<usize>,
    /// For a paginated call: the offset of the first line not wholly kept in the head, which
    /// the next page should start at.
    pub next_offset: Option<usize>,
    /// Whether the text was only re-written compactly (a JSON document, the whitespace between
    /// its tokens removed): every value is there, nothing left out, nothing to keep.
    pub compacted: bool,
}

impl Cut {
    /// The cut of a JSON text of `original_chars` chars and `original_lines` lines fitted by
    /// [`fit_json`](super::fit_json): no lines of the text as such (the cut is inside the
    /// structure, stated by its markers), the kept chars those of the fitted text outside its
    /// markers.
    pub fn of_json(original_chars: usize, original_lines: usize, fit: &super::JsonFit) -> Self {
        Cut {
            compacted: !fit.is_cut(),
            ..Cut::without_spans(original_chars, original_lines, fit.kept_chars)
        }
    }

    /// A cut that keeps no line of the text as such: `kept_chars` of it survive some other way
    /// (inside a JSON structure, or not at all).
    pub(crate) fn without_spans(
        original_chars: usize,
        original_lines: usize,
        kept_chars: usize,
    ) -> Self {
        Cut {
            original_chars,
            original_lines,
            kept_chars,
            head_bytes: 0,
            tail_bytes: 0,
            spans: Vec::new(),
            folded_lines: 0,
            escapes_removed: 0,
            redraws_removed: 0,
            mid_line: false,
            head_line_chars: None,
            tail_line_chars: None,
            next_offset: None,
            compacted: false,
        }
    }

    /// The first span, when it starts at line 1: the head kept.
    pub fn head_lines(&self) -> Option<LineSpan> {
        self.spans.first().copied().filter(|span| span.first == 1)
    }

    /// The last span, when it ends at the last line: the tail kept.
    pub fn tail_lines(&self) -> Option<LineSpan> {
        self.spans
            .last()
            .copied()
            .filter(|span| span.last == self.original_lines && span.first > 1)
    }

    /// Lines of the input neither shown nor folded.
    pub fn left_out_lines(&self) -> usize {
        let shown: usize = self.spans.iter().map(|s| s.last + 1 - s.first).sum();
        self.original_lines.saturating_sub(shown)
    }
}

/// The longest reason a marker quotes, in chars.
const MAX_REASON_CHARS: usize = 120;

/// How numbers in a rendered marker are laid out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// The marker the model sees.
    Exact,
    /// A marker at least as long as any exact marker with figures no larger than these:
    /// used to reserve room before the figures are known.
    Widest,
}

/// Renders the full marker for `cut`.
pub(crate) fn render(cut: &Cut, continuation: &Continuation<'_>, layout: Layout) -> String {
    let mut out = String::with_capacity(160);
    // Nothing left out (only folded or rendered): condensed, not truncated.
    let condensed = cut.left_out_lines() == 0 && !cut.mid_line && !cut.spans.is_empty();
    out.push_str(if condensed && layout == Layout::Exact {
        OPENING_CONDENSED
    } else {
        OPENING
    });
    push_grouped(&mut out, cut.kept_chars);
    out.push_str(" of ");
    push_grouped(&mut out, cut.original_chars);
    out.push_str(" chars (");
    match cut.spans.as_slice() {
        [] => out.push_str("no lines of "),
        [span] if span.first == span.last && layout == Layout::Exact => {
            out.push_str("line ");
            push_grouped(&mut out, span.first);
            out.push_str(" of ");
        }
        spans => {
            out.push_str("lines ");
            push_spans(&mut out, spans, layout);
            out.push_str(" of ");
        }
    }
    push_grouped(&mut out, cut.original_lines);
    if cut.mid_line {
        out.push_str(", cut mid-line");
        push_line_cuts(&mut out, cut, layout);
    }
    out.push_str("); ");
    if cut.folded_lines > 0 {
        push_grouped(&mut out, cut.folded_lines);
        out.push_str(" lines folded; ");
    }
    if cut.escapes_removed > 0 || cut.redraws_removed > 0 {
        push_grouped(&mut out, cut.escapes_removed);
        out.push_str(" escape sequences and ");
        push_grouped(&mut out, cut.redraws_removed);
        out.push_str(" redraws removed; ");
    }
    if let Some(next) = cut.next_offset {
        let _ = write!(out, "next page: offset={next}; ");
    }
    push_end(&mut out, continuation);
    out
}

/// Writes which lines were cut inside and how many of their chars are shown:
/// `: first 1,163 chars of line 30, last 2,716 chars of line 431`, or
/// `: first 1,163 and last 2,716 chars of line 1` when both cuts fell in one line.
fn push_line_cuts(out: &mut String, cut: &Cut, layout: Layout) {
    let head = cut
        .head_line_chars
        .zip(cut.spans.first().map(|span| span.last));
    // One span with both cuts: they fell in one line, the last the head reached.
    let both_in_one = cut.spans.len() == 1 && cut.head_line_chars.is_some();
    let tail = cut.tail_line_chars.zip(
        cut.spans
            .last()
            .map(|span| if both_in_one { span.last } else { span.first }),
    );
    let line = |out: &mut String, line: usize| {
        out.push_str(" chars of line ");
        push_grouped(out, line);
    };
    match (head, tail) {
        (None, None) => {}
        (Some((first, head_line)), Some((last, tail_line)))
            if head_line == tail_line && layout == Layout::Exact =>
        {
            out.push_str(": first ");
            push_grouped(out, first);
            out.push_str(" and last ");
            push_grouped(out, last);
            line(out, head_line);
        }
        _ => {
            out.push_str(": ");
            if let Some((first, head_line)) = head {
                out.push_str("first ");
                push_grouped(out, first);
                line(out, head_line);
                if tail.is_some() {
                    out.push_str(", ");
                }
            }
            if let Some((last, tail_line)) = tail {
                out.push_str("last ");
                push_grouped(out, last);
                line(out, tail_line);
            }
        }
    }
}

/// The most chars naming one cut line adds to a marker of a text of `chars` chars and `lines`
/// lines, beyond `, cut mid-line`: the head and the tail each leave this free when they cut a
/// line, and the two together cover either form [`push_line_cuts`] writes.
pub(crate) fn line_cut_reserve(chars: usize, lines: usize) -> usize {
    ": first ".len()
        + grouped(chars).len()
        + " chars of line ".len()
        + grouped(lines).len()
        + ", ".len()
}

/// Reads back what [`push_line_cuts`] wrote (without its `: `): the head's and the tail's
/// chars shown of the lines they cut.
fn parse_line_cuts(text: &str) -> Option<(Option<usize>, Option<usize>)> {
    if let Some(both) = text.strip_prefix("first ")
        && let Some((first, rest)) = both.split_once(" and last ")
    {
        let (last, line) = rest.split_once(" chars of line ")?;
        parse_grouped(line)?;
        return Some((Some(parse_grouped(first)?), Some(parse_grouped(last)?)));
    }
    let (mut head, mut tail) = (None, None);
    for part in text.split(", ") {
        let (count, line) = part.split_once(" chars of line ")?;
        parse_grouped(line)?;
        if let Some(first) = count.strip_prefix("first ") {
            head = Some(parse_grouped(first)?);
        } else {
            tail = Some(parse_grouped(count.strip_prefix("last ")?)?);
        }
    }
    Some((head, tail))
}

/// Writes spans as a list: `1-30`, `1-30 and 431-500`, `1-30, 212, 400-402 and 431-500`.
fn push_spans(out: &mut String, spans: &[LineSpan], layout: Layout) {
    for (i, span) in spans.iter().enumerate() {
        if i > 0 {
            out.push_str(if i + 1 == spans.len() { " and " } else { ", " });
        }
        push_span(out, *span, layout);
    }
}

/// The line that stands for the lines of a lossless run after its first period, which is
/// shown above it: every line can be rebuilt from it and the lines above.
///
/// - `[lines 3-1,002: the line above, 1,000 more times]`
/// - `[lines 5-24: the 2 lines above, 10 more times]`
/// - `[lines 3-15,182: 2 to 15181, one a line]`: the line above with its number replaced, the
///   numbers written as the lines write them
/// - `[lines 3-3,001: 2 to 3000 in its 2nd number, one a line]`: the line has several numbers
///
/// `first_line` is the number of the run's first line.
pub(crate) fn fold_line(run: &Run, first_line: usize) -> String {
    let period = run.period();
    let mut out = String::with_capacity(64);
    out.push_str("[lines ");
    push_span(
        &mut out,
        LineSpan {
            first: first_line + period,
            last: first_line + run.lines - 1,
        },
        Layout::Exact,
    );
    out.push_str(": ");
    match run.step {
        Step::Same { period } => {
            if period == 1 {
                out.push_str("the line above, ");
            } else {
                out.push_str("the ");
                push_grouped(&mut out, period);
                out.push_str(" lines above, ");
            }
            push_grouped(&mut out, run.folded() / period);
            out.push_str(" more times]");
        }
        Step::Count {
            index,
            numbers,
            first,
        } => {
            // The numbers as the lines write them (no group separators): each line is the
            // one above with the number replaced.
            let _ = write!(
                out,
                "{} to {}",
                first.saturating_add(1),
                first.saturating_add(run.folded() as u64)
            );
            if numbers > 1 {
                let _ = write!(out, " in its {}", ordinal(index + 1));
                out.push_str(" number");
            }
            out.push_str(", one a line]");
        }
    }
    out
}

/// `1st`, `2nd`, `3rd`, `4th`, `11th`, `21st` …
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The most chars of a line a summary quotes as its sample.
pub(crate) const SAMPLE_CHARS: usize = 100;

/// The line that summarises lines left out that could not be shown: how many, which, and the
/// first of them as a sample when it is at hand (at most [`SAMPLE_CHARS`] chars of it, `…`
/// where it is cut): `[… 400 lines left out (lines 31-430), the first: GET /api/orders 200]`.
pub(crate) fn summary_line(first: usize, last: usize, sample: Option<&str>) -> String {
    let sample_len = sample.map_or(0, |sample| sample.len().min(4 * SAMPLE_CHARS));
    let mut out = String::with_capacity(64 + sample_len);
    out.push_str("[… ");
    push_grouped(&mut out, last + 1 - first);
    out.push_str(if first == last {
        " line left out (line "
    } else {
        " lines left out (lines "
    });
    push_span(&mut out, LineSpan { first, last }, Layout::Exact);
    out.push(')');
    if let Some(sample) = sample {
        out.push_str(", the first: ");
        match sample.char_indices().nth(SAMPLE_CHARS) {
            Some((end, _)) => {
                out.extend(sample[..end].chars().map(one_line));
                out.push('…');
            }
            None => out.extend(sample.chars().map(one_line)),
        }
    }
    out.push(']');
    out
}

/// A char as a one-line text shows it: a control char as a space.
fn one_line(c: char) -> char {
    if c.is_control() { ' ' } else { c }
}

/// The most chars a summary line of a text of `lines` lines takes, its line break included.
pub(crate) fn summary_reserve(lines: usize) -> usize {
    // Every figure at its widest, the sample at its longest with its ellipsis.
    let figure = grouped(lines).len();
    "[… ".chars().count()
        + figure
        + " lines left out (lines ".len()
        + 2 * figure
        + 1
        + "), the first: ".len()
        + SAMPLE_CHARS
        + "…]".chars().count()
        + 1
}

/// The line that stands for lines left out between two kept parts: `[… lines 31-430 left out]`,
/// `[… line 31 left out]`.
pub(crate) fn gap_line(first: usize, last: usize) -> String {
    let mut out = String::with_capacity(40);
    out.push_str(if first == last {
        "[… line "
    } else {
        "[… lines "
    });
    push_span(&mut out, LineSpan { first, last }, Layout::Exact);
    out.push_str(" left out]");
    out
}

/// Renders the marker of a cut inside a structure (a JSON array, object or string), counting
/// `unit`s instead of chars and lines:
/// `[toolsmith: output truncated, kept 15 of 2,000 items (items 1-8 and 1,994-2,000 of 2,000); …]`.
/// Spans are always written `first-last`, so a marker never grows as its figures shrink.
pub(crate) fn render_counted(
    kept: usize,
    total: usize,
    unit: &str,
    spans: (Option<super::json::Span>, Option<super::json::Span>),
    compacted: bool,
    continuation: &Continuation<'_>,
) -> String {
    let span = |(first, last)| LineSpan { first, last };
    let mut out = String::with_capacity(160);
    out.push_str(OPENING);
    push_grouped(&mut out, kept);
    out.push_str(" of ");
    push_grouped(&mut out, total);
    out.push(' ');
    out.push_str(unit);
    out.push_str(" (");
    match spans {
        (None, None) => out.push_str("none"),
        (Some(one), None) | (None, Some(one)) => {
            out.push_str(unit);
            out.push(' ');
            push_span(&mut out, span(one), Layout::Widest);
        }
        (Some(head), Some(tail)) => {
            out.push_str(unit);
            out.push(' ');
            push_span(&mut out, span(head), Layout::Widest);
            out.push_str(" and ");
            push_span(&mut out, span(tail), Layout::Widest);
        }
    }
    out.push_str(" of ");
    push_grouped(&mut out, total);
    out.push(')');
    if compacted {
        out.push_str(", JSON compacted");
    }
    out.push_str("; ");
    push_end(&mut out, continuation);
    out
}

/// Writes how every marker ends: the cap in tokens that made the cut, if one did, and where the
/// full output is.
/// The note a cut structure's texts end with: the chars of the structure kept, the places cut
/// (the first few), and where the whole is —
/// `[toolsmith: structured result cut, kept 3,912 of 45,119 chars (/entities 12 of 400 items,
/// /relations 30 of 800 items); full output: artifact …, read it with read_artifact]`.
pub(crate) fn render_structure_note(
    kept: usize,
    total: usize,
    places: &[String],
    continuation: &Continuation<'_>,
) -> String {
    const SHOWN: usize = 4;
    let mut out = String::with_capacity(160);
    out.push_str("[toolsmith: structured result cut, kept ");
    push_grouped(&mut out, kept);
    out.push_str(" of ");
    push_grouped(&mut out, total);
    out.push_str(" chars");
    if !places.is_empty() {
        out.push_str(" (");
        out.push_str(&places[..places.len().min(SHOWN)].join(", "));
        if places.len() > SHOWN {
            out.push_str(", and ");
            push_grouped(&mut out, places.len() - SHOWN);
            out.push_str(" more");
        }
        out.push(')');
    }
    out.push_str("; ");
    push_end(&mut out, continuation);
    out
}

fn push_end(out: &mut String, continuation: &Continuation<'_>) {
    if let Some(cap) = continuation.token_cap {
        out.push_str(TOKEN_CAP_OPENING);
        push_grouped(out, cap);
        out.push_str(TOKEN_CAP_CLOSING);
    }
    push_full(out, &continuation.full);
    out.push(']');
}

const TOKEN_CAP_OPENING: &str = "cut to a ";
const TOKEN_CAP_CLOSING: &str = "-token cap; ";

/// Writes where the full output is, as every marker ends.
fn push_full(out: &mut String, full: &FullOutput<'_>) {
    match full {
        FullOutput::NotKept => out.push_str("full output not kept"),
        FullOutput::Stored { id, reader } => {
            let _ = write!(out, "full output: artifact {id}, read it with {reader}");
        }
        FullOutput::StoredCapped {
            id,
            reader,
            omitted_bytes,
        } => {
            let _ = write!(out, "full output: artifact {id}, read it with {reader}");
            out.push_str("; the artifact leaves out ");
            push_grouped(out, *omitted_bytes);
            out.push_str(" bytes of its middle");
        }
        FullOutput::Failed { reason } => {
            out.push_str("full output could not be kept: ");
            push_shortened(out, reason);
        }
    }
}

/// The shortest marker there is; below its length a trim returns the empty string.
pub(crate) const MINIMAL: &str = "[truncated]";

fn push_span(out: &mut String, span: LineSpan, layout: Layout) {
    push_grouped(out, span.first);
    if span.first != span.last || layout == Layout::Widest {
        out.push('-');
        push_grouped(out, span.last);
    }
}

/// Writes `reason`, at most [`MAX_REASON_CHARS`] of it, on one line: a marker is one line.
fn push_shortened(out: &mut String, reason: &str) {
    let (shown, cut) = match reason.char_indices().nth(MAX_REASON_CHARS) {
        None => (reason, false),
        Some((end, _)) => (&reason[..end], true),
    };
    out.extend(
        shown
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c }),
    );
    if cut {
        out.push('…');
    }
}

/// A marker read back from a text: the figures it states and where it says the full output is.
///
/// What [`find`] and [`parse`] return, for the markers of a text cut ([`fit`](super::fit)) and of
/// a JSON cut ([`fit_json`](super::fit_json)) alike; every marker toolsmith renders parses back
/// to the figures it was rendered from (a property test holds this).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Marker {
    /// What was kept, in `unit`s: chars of a text; items, keys or chars of a JSON value.
    pub kept: usize,
    /// The whole, in `unit`s.
    pub total: usize,
    /// `chars` (a text, or a JSON string), `items` (a JSON array) or `keys` (a JSON object).
    pub unit: String,
    /// The lines of a text; `None` for a JSON marker.
    pub lines: Option<usize>,
    /// What was shown, in order: line spans of a text; item, key or char spans of a JSON value.
    pub spans: Vec<LineSpan>,
    /// Whether a cut fell inside a line.
    pub mid_line: bool,
    /// The chars shown of the line the head ends inside, from its start (see
    /// [`Cut::head_line_chars`]).
    pub head_line_chars: Option<usize>,
    /// The chars shown of the line the tail starts inside, up to its end.
    pub tail_line_chars: Option<usize>,
    /// Whether nothing was left out: every line is shown or folded (`output condensed`).
    pub condensed: bool,
    /// Lines shown as folds.
    pub folded_lines: usize,
    /// Escape sequences removed from what is shown.
    pub escapes_removed: usize,
    /// Redraws resolved in what is shown.
    pub redraws_removed: usize,
    /// Whether a JSON value was re-serialized compactly before it was cut.
    pub json_compacted: bool,
    /// The offset the next page starts at, for a paginated call.
    pub next_offset: Option<usize>,
    /// The cap in tokens the cut was made to, when one made it.
    pub token_cap: Option<usize>,
    /// Where the full output is.
    pub full: MarkedFull,
}

impl Marker {
    /// The first span, when it starts at 1: the head kept (lines of a text, items of a JSON
    /// array).
    pub fn head(&self) -> Option<LineSpan> {
        self.spans.first().copied().filter(|span| span.first == 1)
    }

    /// The last span, when it ends at the end: the tail kept.
    pub fn tail(&self) -> Option<LineSpan> {
        let end = self.lines.unwrap_or(self.total);
        self.spans
            .last()
            .copied()
            .filter(|span| span.last == end && span.first > 1)
    }
}

/// Where a parsed [`Marker`] says the full output is: [`FullOutput`], owned.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MarkedFull {
    /// Not kept anywhere.
    NotKept,
    /// Stored as an artifact.
    Stored {
        /// The artifact id.
        id: String,
        /// The tool that reads it.
        reader: String,
        /// Bytes of the middle the artifact leaves out (a capped artifact), if any.
        omitted_bytes: Option<u64>,
    },
    /// Storing failed, for this reason (as the marker quotes it).
    Failed {
        /// The reason, shortened as the marker shortens it.
        reason: String,
    },
}

const OPENING: &str = "[toolsmith: output truncated, kept ";
/// The opening of a marker that left nothing out: every line is shown or folded.
const OPENING_CONDENSED: &str = "[toolsmith: output condensed, kept ";
/// What both openings start with.
const OPENING_PREFIX: &str = "[toolsmith: output ";

/// The first full marker in `text`, read back; `None` if there is none (or it is malformed).
///
/// ```
/// use toolsmith::trim::{self, TrimStyle};
///
/// let log: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
/// let trimmed = trim::fit(&log, 400, &TrimStyle::default());
/// let marker = trim::find_marker(trimmed.text()).expect("a marker");
/// assert_eq!(marker.lines, Some(1_000));
/// assert_eq!(Some(marker.kept), trimmed.cut().map(|cut| cut.kept_chars));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn find(text: &str) -> Option<Marker> {
    let finder = memchr::memmem::Finder::new(OPENING_PREFIX.as_bytes());
    finder.find_iter(text.as_bytes()).find_map(|start| {
        let rest = &text[start..];
        // A marker is one line; inside a JSON string it ends at its closing quote.
        let line = rest.split('\n').next().unwrap_or(rest);
        parse(line).or_else(|| {
            line.match_indices("]\"")
                .find_map(|(end, _)| parse(&line[..=end]))
        })
    })
}

/// Reads back one marker, exactly as a cut renders it; `None` if `marker` is not one.
pub fn parse(marker: &str) -> Option<Marker> {
    let (condensed, body) = match marker.strip_prefix(OPENING) {
        Some(body) => (false, body),
        None => (true, marker.strip_prefix(OPENING_CONDENSED)?),
    };
    let body = body.strip_suffix(']')?;
    let (kept, rest) = body.split_once(" of ")?;
    let kept = parse_grouped(kept)?;
    let (total, rest) = rest.split_once(' ')?;
    let total = parse_grouped(total)?;
    let (unit, rest) = rest.split_once(" (")?;
    let (spans_text, rest) = rest.split_once(')')?;
    let (spans_text, mid_line, (head_line_chars, tail_line_chars)) =
        match spans_text.split_once(", cut mid-line") {
            Some((spans, "")) => (spans, true, (None, None)),
            Some((spans, cuts)) => (spans, true, parse_line_cuts(cuts.strip_prefix(": ")?)?),
            None => (spans_text, false, (None, None)),
        };
    let (lines, spans) = if let Some(lines) = spans_text.strip_prefix("no lines of ") {
        (Some(parse_grouped(lines)?), Vec::new())
    } else if let Some(one) = spans_text.strip_prefix("line ") {
        let (line, lines) = one.split_once(" of ")?;
        let line = parse_grouped(line)?;
        (
            Some(parse_grouped(lines)?),
            vec![LineSpan {
                first: line,
                last: line,
            }],
        )
    } else if let Some(list) = spans_text.strip_prefix("lines ") {
        let (list, lines) = list.rsplit_once(" of ")?;
        (Some(parse_grouped(lines)?), parse_spans(list)?)
    } else if spans_text.starts_with("none of ") {
        (None, Vec::new())
    } else {
        // A JSON value: `items A-B and C-D of N`.
        let list = spans_text.strip_prefix(unit)?.strip_prefix(' ')?;
        let (list, _) = list.rsplit_once(" of ")?;
        (None, parse_spans(list)?)
    };
    let (json_compacted, rest) = match rest.strip_prefix(", JSON compacted") {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let mut rest = rest.strip_prefix("; ")?;
    let mut folded_lines = 0;
    let (mut escapes_removed, mut redraws_removed) = (0, 0);
    let mut next_offset = None;
    if let Some((folded, after)) = rest.split_once(" lines folded; ")
        && let Some(folded) = parse_grouped(folded)
    {
        folded_lines = folded;
        rest = after;
    }
    if let Some((escapes, after)) = rest.split_once(" escape sequences and ")
        && let Some(escapes) = parse_grouped(escapes)
    {
        let (redraws, after) = after.split_once(" redraws removed; ")?;
        escapes_removed = escapes;
        redraws_removed = parse_grouped(redraws)?;
        rest = after;
    }
    if let Some(after) = rest.strip_prefix("next page: offset=") {
        let (offset, after) = after.split_once("; ")?;
        next_offset = Some(offset.parse().ok()?);
        rest = after;
    }
    let mut token_cap = None;
    if let Some(after) = rest.strip_prefix(TOKEN_CAP_OPENING) {
        let (cap, after) = after.split_once(TOKEN_CAP_CLOSING)?;
        token_cap = Some(parse_grouped(cap)?);
        rest = after;
    }
    let full = if rest == "full output not kept" {
        MarkedFull::NotKept
    } else if let Some(reason) = rest.strip_prefix("full output could not be kept: ") {
        MarkedFull::Failed {
            reason: reason.to_owned(),
        }
    } else {
        let stored = rest.strip_prefix("full output: artifact ")?;
        let (id, rest) = stored.split_once(", read it with ")?;
        let (reader, omitted_bytes) = match rest.split_once("; the artifact leaves out ") {
            Some((reader, omitted)) => {
                let omitted = omitted.strip_suffix(" bytes of its middle")?;
                (reader, Some(parse_grouped(omitted)? as u64))
            }
            None => (rest, None),
        };
        MarkedFull::Stored {
            id: id.to_owned(),
            reader: reader.to_owned(),
            omitted_bytes,
        }
    };
    Some(Marker {
        kept,
        total,
        unit: unit.to_owned(),
        lines,
        spans,
        mid_line,
        head_line_chars,
        tail_line_chars,
        condensed,
        folded_lines,
        escapes_removed,
        redraws_removed,
        json_compacted,
        next_offset,
        token_cap,
        full,
    })
}

/// Reads `A-B, C and D-E`.
fn parse_spans(list: &str) -> Option<Vec<LineSpan>> {
    let (front, last) = match list.rsplit_once(" and ") {
        Some((front, last)) => (Some(front), last),
        None => (None, list),
    };
    let mut spans = Vec::new();
    if let Some(front) = front {
        for span in front.split(", ") {
            spans.push(parse_span(span)?);
        }
    }
    spans.push(parse_span(last)?);
    Some(spans)
}

fn parse_span(span: &str) -> Option<LineSpan> {
    match span.split_once('-') {
        Some((first, last)) => Some(LineSpan {
            first: parse_grouped(first)?,
            last: parse_grouped(last)?,
        }),
        None => {
            let line = parse_grouped(span)?;
            Some(LineSpan {
                first: line,
                last: line,
            })
        }
    }
}

/// Reads a number written by [`push_grouped`]: digits, with a comma between groups of three.
fn parse_grouped(number: &str) -> Option<usize> {
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit() || b == b',') {
        return None;
    }
    let digits: String = number.chars().filter(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        for (n, want) in [
            (0, "0"),
            (7, "7"),
            (999, "999"),
            (1_000, "1,000"),
            (45_231, "45,231"),
            (200_000, "200,000"),
            (1_234_567, "1,234,567"),
        ] {
            assert_eq!(grouped(n), want);
        }
    }

    #[test]
    fn marker_states_every_figure() {
        let cut = Cut {
            original_chars: 45_231,
            original_lines: 500,
            kept_chars: 19_812,
            head_bytes: 0,
            tail_bytes: 0,
            spans: vec![
                LineSpan { first: 1, last: 30 },
                LineSpan {
                    first: 431,
                    last: 500,
                },
            ],
            folded_lines: 0,
            escapes_removed: 0,
            redraws_removed: 0,
            mid_line: false,
            head_line_chars: None,
            tail_line_chars: None,
            next_offset: None,
            compacted: false,
        };
        let full = FullOutput::Stored {
            id: "7f3a",
            reader: "read_artifact",
        };
        assert_eq!(
            render(&cut, &full.into(), Layout::Exact),
            "[toolsmith: output truncated, kept 19,812 of 45,231 chars (lines 1-30 and 431-500 \
             of 500); full output: artifact 7f3a, read it with read_artifact]"
        );
        // A cut a cap in tokens made names the cap, and reads back with it.
        let capped = Continuation::from(full).with_token_cap(Some(5_000));
        let marker = render(&cut, &capped, Layout::Exact);
        assert_eq!(
            marker,
            "[toolsmith: output truncated, kept 19,812 of 45,231 chars (lines 1-30 and 431-500 \
             of 500); cut to a 5,000-token cap; full output: artifact 7f3a, read it with \
             read_artifact]"
        );
        let parsed = parse(&marker).expect("a marker");
        assert_eq!(parsed.token_cap, Some(5_000));
        assert_eq!(parsed.kept, 19_812);
        assert!(matches!(parsed.full, MarkedFull::Stored { .. }));
        assert_eq!(
            parse(&render(&cut, &full.into(), Layout::Exact))
                .unwrap()
                .token_cap,
            None
        );
        // The widest marker reserves the clause too.
        assert!(render(&cut, &capped, Layout::Widest).len() >= marker.len());
    }

    #[test]
    fn a_cut_inside_a_line_names_the_line_and_the_chars_shown() {
        let mut one_line = Cut::without_spans(60_012, 1, 3_820);
        one_line.spans = vec![LineSpan { first: 1, last: 1 }];
        one_line.mid_line = true;
        one_line.head_line_chars = Some(1_146);
        one_line.tail_line_chars = Some(2_674);
        let mut two_lines = one_line.clone();
        two_lines.original_lines = 500;
        two_lines.spans = vec![
            LineSpan { first: 1, last: 30 },
            LineSpan {
                first: 431,
                last: 500,
            },
        ];
        two_lines.tail_line_chars = None;
        for (cut, spans) in [
            (
                &one_line,
                "(line 1 of 1, cut mid-line: first 1,146 and last 2,674 chars of line 1)",
            ),
            (
                &two_lines,
                "(lines 1-30 and 431-500 of 500, cut mid-line: first 1,146 chars of line 30)",
            ),
        ] {
            let marker = render(cut, &FullOutput::NotKept.into(), Layout::Exact);
            assert!(marker.contains(spans), "{marker}");
            let read = parse(&marker).expect("the marker reads back");
            assert_eq!(read.spans, cut.spans);
            assert_eq!(read.head_line_chars, cut.head_line_chars);
            assert_eq!(read.tail_line_chars, cut.tail_line_chars);
            let widest = render(cut, &FullOutput::NotKept.into(), Layout::Widest);
            assert!(widest.len() >= marker.len(), "{widest}");
        }
    }

    #[test]
    fn long_reasons_are_shortened_on_a_char_boundary() {
        let reason = "é".repeat(500);
        let cut = Cut::without_spans(1, 1, 0);
        let failed = FullOutput::Failed { reason: &reason };
        let marker = render(&cut, &failed.into(), Layout::Exact);
        assert!(marker.ends_with("…]"));
        assert_eq!(marker.matches('é').count(), MAX_REASON_CHARS);
    }
}
