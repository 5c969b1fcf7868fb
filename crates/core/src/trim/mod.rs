//! Pure text algorithms: fitting a text into an allowance of chars, with a marker.
//!
//! Nothing here knows about tools or does I/O. The unit is the Unicode scalar value (`char`):
//! every cut lands on a char boundary and no input or allowance can make a trim panic.
//!
//! [`fit`] runs two stages, as the budget contract describes:
//!
//! 1. **Chars.** If the text has more chars than fit, keep `head_ratio` of the room from the top
//!    and the rest from the bottom. Each cut moves to the nearest line break within a quarter of
//!    its side's room (the head ends after the last break before its cut; the tail starts after
//!    the first break after its cut), and stays a char cut inside a line longer than that.
//! 2. **Lines.** If a line limit is set and the kept text has more lines, keep `head_ratio` of the
//!    lines from the top and the rest from the bottom (a side with fewer lines than its quota
//!    gives the difference to the other).
//!
//! One [marker](FullOutput) takes the place of what was dropped: between head and tail, at the
//! end when only a head is kept, at the start when only a tail is.

mod capture;
mod fold;
mod json;
mod keep;
mod marker;
mod salience;
mod terminal;
mod watch;

use std::borrow::Cow;

pub(crate) use capture::{Capture, Captured, CapturedParts, OpenSpool, Spool};
pub use json::{JsonFit, fit_json};
pub use marker::grouped;
pub use marker::{Continuation, Cut, FullOutput, LineSpan, MarkedFull, Marker};
pub use marker::{find as find_marker, parse as parse_marker};
pub use salience::Salience;

use marker::{Layout, MINIMAL, render};

/// The least room for content the full marker must leave; below it a shorter marker keeps more.
const MIN_ROOM: usize = 64;

/// How [`fit`] chooses what to keep.
///
/// By default, 30% of the room goes to the head and 70% to the tail (errors and summaries come
/// last), with no line limit, and the cut keeps what matters: terminal output rendered, repeats
/// folded, salient lines kept from the middle ([`keeping_what_matters`](Self::keeping_what_matters)).
/// [`head_tail`](Self::head_tail) alone is the positional cut: the head and the tail, as they are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrimStyle {
    head_ratio: f64,
    max_lines: Option<usize>,
    /// When the full marker does not fit: end the text's beginning with `…` (errors) instead
    /// of keeping head and tail around `[truncated]`.
    ellipsis_when_tiny: bool,
    /// Whether runs of similar lines are folded into their first and a count.
    fold: bool,
    /// Which lines of the middle a cut keeps.
    salience: Salience,
    /// When escapes and redraws are rendered away.
    render: Render,
}

/// When a text's escape sequences and redraws (carriage returns, backspaces) are rendered as a
/// terminal shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Render {
    /// Never: the text's bytes are what is shown (a file's content).
    Never,
    /// When the text is cut: what is shown of it is rendered. The default.
    #[default]
    OnCut,
    /// Always: a tool whose output is a terminal's (a command's) is shown rendered even when it
    /// fits, the change stated in a marker.
    Always,
}

impl TrimStyle {
    /// The default share of the room given to the head: 0.3.
    pub const DEFAULT_HEAD_RATIO: f64 = 0.3;

    /// Keep `head_ratio` of the room from the top and the rest from the bottom.
    ///
    /// `head_ratio` is clamped to `0.0..=1.0`; NaN means the default, 0.3. Validate user input
    /// before it gets here (the registry's builder does) if a bad ratio should be an error.
    pub fn head_tail(head_ratio: f64) -> Self {
        let head_ratio = if head_ratio.is_nan() {
            Self::DEFAULT_HEAD_RATIO
        } else {
            head_ratio.clamp(0.0, 1.0)
        };
        TrimStyle {
            head_ratio,
            max_lines: None,
            ellipsis_when_tiny: false,
            fold: false,
            salience: Salience::Off,
            render: Render::Never,
        }
    }

    /// This style, keeping what matters when it cuts: what is shown of terminal output is
    /// rendered (escapes removed, redraws resolved), runs of similar lines fold into their first
    /// and a count, and the salient lines of a middle that must be dropped are kept, with their
    /// line numbers, in the default salience. What the default style does.
    #[must_use]
    pub fn keeping_what_matters(mut self) -> Self {
        self.fold = true;
        self.salience = Salience::Default;
        self.render = Render::OnCut;
        self
    }

    /// Sets whether runs of similar lines are folded when the text is cut.
    #[must_use]
    pub fn with_folding(mut self, fold: bool) -> Self {
        self.fold = fold;
        self
    }

    /// Sets which lines of a dropped middle a cut keeps.
    #[must_use]
    pub fn with_salience(mut self, salience: Salience) -> Self {
        self.salience = salience;
        self
    }

    /// Sets when escape sequences and redraws are rendered away.
    #[must_use]
    pub fn with_render(mut self, render: Render) -> Self {
        self.render = render;
        self
    }

    /// Whether `text` is shown rendered even when it fits: the style renders always, and the
    /// text holds escapes or redraws.
    pub(crate) fn renders_whole(&self, text: &str) -> bool {
        self.render == Render::Always && terminal::needs_rendering(text.as_bytes())
    }

    /// Whether the style keeps what matters in any way (folds, salience or rendering).
    fn reduces(&self) -> bool {
        self.fold || self.salience != Salience::Off || self.render != Render::Never
    }

    /// The style of error results: half the room for the head (what went wrong) and half for
    /// the tail (a failed command's last output); when the allowance cannot hold the full
    /// marker, the text keeps its beginning, ended by `…`, so an error's first words survive
    /// any allowance of 20 chars or more.
    pub fn error() -> Self {
        TrimStyle {
            ellipsis_when_tiny: true,
            ..Self::head_tail(0.5).keeping_what_matters()
        }
    }

    /// Keep the beginning only (what `read_file` wants): a head ratio of 1.
    pub fn head_only() -> Self {
        Self::head_tail(1.0)
    }

    /// Keep the end only (the last lines of a log): a head ratio of 0.
    pub fn tail_only() -> Self {
        Self::head_tail(0.0)
    }

    /// Also limit the kept text to `max_lines` lines (`None`, the default, means no limit;
    /// `Some(0)` keeps no line at all, only the marker).
    #[must_use]
    pub fn with_max_lines(mut self, max_lines: Option<usize>) -> Self {
        self.max_lines = max_lines;
        self
    }

    /// The share of the room (and of the line limit) given to the head, in `0.0..=1.0`.
    pub fn head_ratio(&self) -> f64 {
        self.head_ratio
    }

    /// The line limit, if any.
    pub fn max_lines(&self) -> Option<usize> {
        self.max_lines
    }

    /// Splits `room` into (head, tail) by the head ratio.
    fn split(&self, room: usize) -> (usize, usize) {
        // The float product of a usize and a ratio in 0..=1 floors back into 0..=room.
        let head = ((room as f64 * self.head_ratio).floor() as usize).min(room);
        (head, room - head)
    }
}

impl Default for TrimStyle {
    fn default() -> Self {
        Self::head_tail(Self::DEFAULT_HEAD_RATIO).keeping_what_matters()
    }
}

/// The outcome of [`fit`]: the text to show and, when anything was cut, what was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trimmed<'a> {
    text: Cow<'a, str>,
    cut: Option<Cut>,
}

impl<'a> Trimmed<'a> {
    /// The text to show: the input itself when it fit, else the kept parts and the marker.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes the text out; borrowed when the input fit, so nothing was copied.
    pub fn into_text(self) -> Cow<'a, str> {
        self.text
    }

    /// Whether anything was cut.
    pub fn is_trimmed(&self) -> bool {
        self.cut.is_some()
    }

    /// The figures of the cut, when there was one.
    pub fn cut(&self) -> Option<&Cut> {
        self.cut.as_ref()
    }

    /// Splits into the text and the cut.
    pub fn into_parts(self) -> (Cow<'a, str>, Option<Cut>) {
        (self.text, self.cut)
    }
}

/// Fits `text` into `allowance` chars; the marker says the full output was not kept.
///
/// Same as [`fit_with`] with [`FullOutput::NotKept`].
///
/// ```
/// use toolsmith::trim::{fit, TrimStyle};
///
/// let log: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
/// // The positional cut: a head and a tail, as they are.
/// let trimmed = fit(&log, 400, &TrimStyle::head_tail(0.3));
/// assert!(trimmed.text().chars().count() <= 400);
/// assert!(trimmed.text().starts_with("line 1\n"));
/// assert!(trimmed.text().ends_with("line 1000\n"));
///
/// // The default keeps what matters: here, a thousand lines alike fold into three, the marker
/// // saying so where the fold starts.
/// let condensed = fit(&log, 400, &TrimStyle::default());
/// assert!(condensed.text().starts_with("line 1\n[toolsmith: output condensed"));
/// assert!(condensed
///     .text()
///     .ends_with("\n[… 998 more lines like this (lines 2-999)]\nline 1000\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit<'a>(text: &'a str, allowance: usize, style: &TrimStyle) -> Trimmed<'a> {
    fit_with(text, allowance, style, &FullOutput::NotKept.into())
}

/// Fits `text` into `allowance` chars; the marker says where the rest is and, for a paginated
/// call, which offset to read on from.
///
/// A text within the allowance (and within the style's line limit) comes back borrowed and
/// untouched. Otherwise the result, marker included, has at most `allowance` chars, and it keeps a
/// prefix (the head) and a suffix (the tail) of the input, never splitting a char.
///
/// When the allowance cannot hold the full marker and 64 chars of content, a shorter marker
/// keeps more: head and tail around `[truncated]` (allowances of 14 chars or more), then
/// `[truncated]` alone, then the empty string (allowances under 11 chars). With
/// [`TrimStyle::error`], the text's beginning ended by `…` instead.
///
/// Work is proportional to what is kept, plus one pass to count chars and one to count newlines
/// (skipped when the text's byte length is within the allowance and no line limit is set).
pub fn fit_with<'a>(
    text: &'a str,
    allowance: usize,
    style: &TrimStyle,
    continuation: &Continuation<'_>,
) -> Trimmed<'a> {
    let bytes = text.as_bytes();
    if style.renders_whole(text)
        && let Some(rendered) = rendered_whole(text, allowance, style, continuation)
    {
        return rendered;
    }
    // A text of at most `allowance` bytes has at most `allowance` chars: no count needed.
    let chars_fit = bytes.len() <= allowance;
    if chars_fit && style.max_lines.is_none() && !style.renders_whole(text) {
        return untouched(text);
    }
    // One pass over the input; everything after it is proportional to what is kept.
    let (original_chars, newlines) = if chars_fit {
        (None, count_newlines(bytes))
    } else {
        let (chars, newlines) = count_chars_and_newlines(bytes);
        (Some(chars), newlines)
    };
    let original_lines = lines_from(bytes, newlines);
    let chars_fit = original_chars.is_none_or(|chars| chars <= allowance);
    let lines_fit = style.max_lines.is_none_or(|max| original_lines <= max);
    if chars_fit && lines_fit && !style.renders_whole(text) {
        return untouched(text);
    }
    let original_chars = original_chars.unwrap_or_else(|| text.chars().count());

    let totals = Totals {
        chars: original_chars,
        lines: original_lines,
        newlines,
    };
    if style.reduces() {
        let source = keep::Source {
            head: text,
            tail: text,
            whole: true,
            tail_starts_line: true,
            held: &[],
            totals,
        };
        let automaton = salience::automaton(style.salience);
        if let Some(cut) = keep::cut(
            &source,
            allowance,
            style,
            continuation,
            automaton.as_deref(),
        ) {
            return cut;
        }
    }
    let cuts = positional_cuts(allowance, totals, continuation, |room| {
        let (head_end, tail_start) = choose_cuts(text, original_chars, original_lines, room, style);
        let tail_starts_line = tail_start == 0 || bytes[tail_start - 1] == b'\n';
        let head_mid_line = head_end > 0 && bytes[head_end - 1] != b'\n';
        let mid_line = head_mid_line || (tail_start < bytes.len() && !tail_starts_line);
        ((head_end, tail_start, tail_starts_line), mid_line)
    });
    let Some((head_end, tail_start, tail_starts_line)) = cuts else {
        return tiny(text, None, totals, allowance, style);
    };
    assemble(
        &text[..head_end],
        &text[tail_start..],
        tail_starts_line,
        totals,
        continuation,
    )
}

/// A terminal's output shown whole as the terminal shows it, with a marker that states what was
/// removed, when that fits `allowance` (and its line limit); `None` otherwise (it is cut, and
/// what is shown of it rendered), or when rendering changed nothing.
fn rendered_whole(
    text: &str,
    allowance: usize,
    style: &TrimStyle,
    continuation: &Continuation<'_>,
) -> Option<Trimmed<'static>> {
    let (rendered, removed) = terminal::render(text);
    if removed.is_empty() {
        return None;
    }
    let totals = Totals::of(text);
    if style.max_lines.is_some_and(|max| totals.lines + 1 > max) {
        return None;
    }
    let kept = rendered.chars().count();
    let cut = Cut {
        original_chars: totals.chars,
        original_lines: totals.lines,
        kept_chars: kept,
        head_bytes: 0,
        tail_bytes: 0,
        spans: (totals.lines > 0)
            .then_some(LineSpan {
                first: 1,
                last: totals.lines,
            })
            .into_iter()
            .collect(),
        folded_lines: 0,
        escapes_removed: removed.escapes,
        redraws_removed: removed.redraws,
        mid_line: false,
        head_line_chars: None,
        tail_line_chars: None,
        next_offset: None,
    };
    // The marker first: the output's own last line (a command's exit code) stays last.
    let marker = render(&cut, &continuation.full, Layout::Exact);
    let separator = usize::from(!rendered.is_empty());
    if kept + separator + marker.chars().count() > allowance {
        return None;
    }
    let mut out = String::with_capacity(marker.len() + 1 + rendered.len());
    out.push_str(&marker);
    if separator == 1 {
        out.push('\n');
    }
    out.push_str(&rendered);
    Some(Trimmed {
        text: Cow::Owned(out),
        cut: Some(cut),
    })
}

/// How many salient parts `text` holds (errors, failures, tracebacks …, each with the block it
/// opens): what a one-line summary of an old result states.
pub(crate) fn salient_count(text: &str) -> usize {
    salience::automaton(Salience::Default).map_or(0, |automaton| {
        salience::scan(text, 0..text.len(), 1, &automaton, usize::MAX).len()
    })
}

/// The size of a whole text, as a marker states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Totals {
    /// Chars (Unicode scalar values).
    pub(crate) chars: usize,
    /// Lines: newlines, plus one for a last line without one.
    pub(crate) lines: usize,
    /// Newlines (`\n`).
    pub(crate) newlines: usize,
}

impl Totals {
    /// The totals of `text`, in one pass.
    pub(crate) fn of(text: &str) -> Self {
        let bytes = text.as_bytes();
        let (chars, newlines) = count_chars_and_newlines(bytes);
        Totals {
            chars,
            lines: lines_from(bytes, newlines),
            newlines,
        }
    }

    /// Adds a chunk of a stream to the totals (chunks may split a char anywhere); call
    /// [`finish_lines`](Self::finish_lines) with the stream's last byte at the end.
    pub(crate) fn add_chunk(&mut self, chunk: &[u8]) {
        let (chars, newlines) = count_chars_and_newlines(chunk);
        self.chars += chars;
        self.newlines += newlines;
    }

    /// Sets `lines` from the newlines and the stream's last byte.
    pub(crate) fn finish_lines(&mut self, last_byte: Option<u8>) {
        self.lines = self.newlines + usize::from(last_byte.is_some_and(|b| b != b'\n'));
    }
}

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
        |cut| render(cut, &continuation.full, Layout::Exact),
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
    };
    render(&widest, &continuation.full, Layout::Widest)
        .chars()
        .count()
        + 2
}

/// Chooses `(head_end, tail_start)`, byte offsets: the head is `text[..head_end]`, the tail
/// `text[tail_start..]`, with `head_end <= tail_start` and at most `room` chars kept in all.
fn choose_cuts(
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
fn cut_points(head: &str, tail: &str, room: usize, style: &TrimStyle) -> (usize, usize) {
    let head_bytes = head.as_bytes();
    let tail_bytes = tail.as_bytes();
    // Stage 1: chars.
    let (head_room, tail_room) = style.split(room);
    let mut head_end = byte_offset_after_chars(head, head_room);
    if head_end > 0 && head_bytes[head_end - 1] != b'\n' {
        let window_start = byte_offset_before_chars(head, head_end, head_room / 4);
        if let Some(at) = memchr::memrchr(b'\n', &head_bytes[window_start..head_end]) {
            head_end = window_start + at + 1;
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
fn tiny(
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

/// The chars of `text` after its last line break: its last line, cut or not.
fn last_line_chars(text: &str) -> usize {
    let start = memchr::memrchr(b'\n', text.as_bytes()).map_or(0, |i| i + 1);
    text[start..].chars().count()
}

/// The chars of `text` before its first line break (`\n` or `\r\n`).
fn first_line_chars(text: &str) -> usize {
    match memchr::memchr(b'\n', text.as_bytes()) {
        Some(end) => {
            let line = &text[..end];
            line.strip_suffix('\r').unwrap_or(line).chars().count()
        }
        None => text.chars().count(),
    }
}

fn untouched(text: &str) -> Trimmed<'_> {
    Trimmed {
        text: Cow::Borrowed(text),
        cut: None,
    }
}

/// The number of lines in `text`: its newlines, plus one for a last line without one.
///
/// The empty string has no lines; `"a"` and `"a\n"` have one; `"a\nb"` has two.
pub fn line_count(text: &str) -> usize {
    let bytes = text.as_bytes();
    lines_from(bytes, count_newlines(bytes))
}

fn lines_from(bytes: &[u8], newlines: usize) -> usize {
    newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

fn count_newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

/// Counts chars (bytes that do not continue a UTF-8 sequence) and newlines in one pass.
///
/// Written so the compiler vectorizes it: byte-wide counters per lane, widened every 255 rounds
/// before they could overflow. On a 100 MB input it runs at the speed of memchr's newline count
/// alone, where two separate passes take twice as long (BENCHMARKS.md).
fn count_chars_and_newlines(bytes: &[u8]) -> (usize, usize) {
    const LANES: usize = 32;
    let (mut chars, mut newlines) = (0usize, 0usize);
    for block in bytes.chunks(LANES * 255) {
        let mut lane_chars = [0u8; LANES];
        let mut lane_newlines = [0u8; LANES];
        let mut groups = block.chunks_exact(LANES);
        for group in &mut groups {
            for ((byte, c), n) in group.iter().zip(&mut lane_chars).zip(&mut lane_newlines) {
                // Continuation bytes are 0b10xx_xxxx, that is -64..-128 as i8.
                *c += u8::from((*byte as i8) >= -64);
                *n += u8::from(*byte == b'\n');
            }
        }
        chars += lane_chars.iter().map(|&c| usize::from(c)).sum::<usize>();
        newlines += lane_newlines.iter().map(|&n| usize::from(n)).sum::<usize>();
        for &byte in groups.remainder() {
            chars += usize::from((byte as i8) >= -64);
            newlines += usize::from(byte == b'\n');
        }
    }
    (chars, newlines)
}

/// The byte offset just after the first `n` chars of `text` (its length if it has fewer).
fn byte_offset_after_chars(text: &str, n: usize) -> usize {
    byte_offset_after_chars_from(text, 0, n)
}

fn byte_offset_after_chars_from(text: &str, from: usize, n: usize) -> usize {
    match text[from..].char_indices().nth(n) {
        Some((at, _)) => from + at,
        None => text.len(),
    }
}

/// The byte offset `n` chars before `end` (0 if fewer chars precede it).
fn byte_offset_before_chars(text: &str, end: usize, n: usize) -> usize {
    if n == 0 {
        return end;
    }
    match text[..end].char_indices().nth_back(n - 1) {
        Some((at, _)) => at,
        None => 0,
    }
}

/// The byte offset just after the first `n` lines of `bytes`.
fn end_of_first_lines(bytes: &[u8], n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    match memchr::memchr_iter(b'\n', bytes).nth(n - 1) {
        Some(at) => at + 1,
        None => bytes.len(),
    }
}

/// The byte offset where the last `n` lines of `bytes` start.
fn start_of_last_lines(bytes: &[u8], n: usize) -> usize {
    if n == 0 {
        return bytes.len();
    }
    // A final newline ends the last line; it does not start another.
    let body = match bytes.last() {
        Some(b'\n') => &bytes[..bytes.len() - 1],
        _ => bytes,
    };
    match memchr::memrchr_iter(b'\n', body).nth(n - 1) {
        Some(at) => at + 1,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_within_allowance_is_borrowed() {
        let trimmed = fit("hello\nworld", 11, &TrimStyle::default());
        assert!(matches!(trimmed.text, Cow::Borrowed("hello\nworld")));
        assert!(!trimmed.is_trimmed());
    }

    #[test]
    fn counts_lines_like_an_editor() {
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("a"), 1);
        assert_eq!(line_count("a\n"), 1);
        assert_eq!(line_count("a\nb"), 2);
        assert_eq!(line_count("\n\n"), 2);
    }

    #[test]
    fn last_lines_start_after_the_right_newline() {
        assert_eq!(start_of_last_lines(b"a\nb\nc\n", 1), 4);
        assert_eq!(start_of_last_lines(b"a\nb\nc", 2), 2);
        assert_eq!(start_of_last_lines(b"a\nb\nc", 5), 0);
        assert_eq!(end_of_first_lines(b"a\nb\nc", 1), 2);
        assert_eq!(end_of_first_lines(b"a\nb\nc", 9), 5);
    }

    #[test]
    fn char_offsets_never_split_a_char() {
        let text = "aé😀b";
        assert_eq!(byte_offset_after_chars(text, 2), 3);
        assert_eq!(byte_offset_after_chars(text, 9), text.len());
        assert_eq!(byte_offset_before_chars(text, text.len(), 2), 3);
        assert_eq!(byte_offset_before_chars(text, text.len(), 9), 0);
    }

    proptest::proptest! {
        #[test]
        fn the_fused_count_agrees_with_std(text in "\\PC{0,3000}|(\\PC|\n){0,9000}") {
            let expected = (text.chars().count(), text.matches('\n').count());
            proptest::prop_assert_eq!(count_chars_and_newlines(text.as_bytes()), expected);
        }
    }

    #[test]
    fn tiny_allowances_keep_the_most_content_they_can() {
        let text: String = (0..200).map(|i| format!("{i:0>9}\n")).collect();
        let style = TrimStyle::default();
        assert_eq!(fit(&text, 0, &style).text(), "");
        assert_eq!(fit(&text, 10, &style).text(), "");
        assert_eq!(fit(&text, 11, &style).text(), "[truncated]");
        let kept = fit(&text, 60, &style);
        assert!(kept.text().chars().count() <= 60);
        assert!(kept.text().contains("\n[truncated]\n"), "{}", kept.text());
        assert!(kept.text().ends_with("000000199\n"), "{}", kept.text());
        assert_eq!(kept.cut().map(|cut| cut.original_lines), Some(200));
    }

    #[test]
    fn an_error_keeps_its_first_words_at_any_allowance_of_20() {
        let error = format!(
            "Error: unknown tool `frob`; the tools are {}",
            "x, ".repeat(400)
        );
        for allowance in [20, 40, 100, 150] {
            let kept = fit(&error, allowance, &TrimStyle::error());
            assert!(
                kept.text().starts_with("Error: unknown tool"),
                "{}",
                kept.text()
            );
            assert!(kept.text().chars().count() <= allowance);
        }
        assert_eq!(
            fit(&error, 20, &TrimStyle::error()).text(),
            "Error: unknown tool…"
        );
    }
}
