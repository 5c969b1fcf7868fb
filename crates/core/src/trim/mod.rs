//! Pure text algorithms: fitting a text into an allowance of chars, with a marker.
//!
//! Nothing here knows about tools or does I/O. The unit is the Unicode scalar value (`char`):
//! every cut lands on a char boundary and no input or allowance can make a trim panic.
//!
//! The default cut keeps what matters, in this order: the salient lines of the middle
//! (errors, failures, tracebacks), then as many lines of the head and the tail, verbatim, as
//! the allowance holds; only the middle that cannot be shown is summarised, by its count, its
//! span and its first line. A fold stands for lines that would fit only where it is lossless
//! (the same lines repeated, or one number counting up by one): every line can be rebuilt.
//!
//! A text that is one JSON document (an object or an array, compact or pretty) is cut as JSON
//! by every style ([`fit_json`]: valid JSON, the marker inside, the first and last elements
//! kept), unless the style turns it off ([`TrimStyle::with_json`]) or the text is a page of a
//! paginated call. Telling costs two bytes (the first and last that are not whitespace); a text
//! that only looks like JSON, and JSON lines (a record a line), are cut by their lines. A stream
//! past its capture is never whole in memory, so it is cut by its lines too.
//!
//! The positional cut ([`TrimStyle::head_tail`]) runs two stages, as the budget contract
//! describes:
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
//!
//! What the module publishes, and for whom:
//!
//! - **Fitting**, for anyone with a text and an allowance: [`fit`], [`fit_with`] (with a
//!   [`Continuation`]: where the full output is, or the next page), [`Trimmed`]; [`TrimStyle`],
//!   [`Render`], [`Salience`]; [`fit_json`] and [`JsonFit`] for JSON cut to JSON.
//! - **The marker**, for a reader of a cut result (an agent, a test, the CLI): [`find_marker`],
//!   [`parse_marker`], [`Marker`], [`Cut`], [`LineSpan`], [`MarkedFull`], [`FullOutput`].
//! - **Numbers as markers write them**, so a tool's own words count the same way: [`grouped`](crate::figures::grouped)
//!   (`12,345`) and [`line_count`] (the lines a marker counts).
//!
//! A stream's capture, its spool and the positional cut's parts are the crate's own.

pub(crate) mod bytes;
mod capture;
mod json;
mod keep;
mod marker;
mod positional;
mod runs;
mod salience;
mod signature;
mod style;
mod survey;
mod terminal;
mod watch;

use std::borrow::Cow;

pub(crate) use bytes::{after_last_break, byte_offset_after_chars, without_break};
pub(crate) use capture::{Capture, Captured, CapturedParts, OpenSpool, Spool};
pub use json::{JsonFit, fit_json, fit_json_with};
pub(crate) use marker::render_structure_note;
pub use marker::{Continuation, Cut, FullOutput, LineSpan, MarkedFull, Marker};
pub use marker::{find as find_marker, parse as parse_marker};
pub(crate) use positional::{assemble, marker_reserve, positional_cuts};
pub use salience::Salience;
pub(crate) use salience::{holds_error, says_failed};
pub use style::{Render, TrimStyle};

use bytes::{count_chars_and_newlines, count_newlines, lines_from};
use marker::{Layout, render};
use positional::{choose_cuts, tiny};

/// The least room for content the full marker must leave; below it a shorter marker keeps more.
const MIN_ROOM: usize = 64;

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
/// let log: String = (1..=1000).map(|i| format!("request {} served\n", i * 7919 % 1000)).collect();
/// // The positional cut: a head and a tail, as they are.
/// let trimmed = fit(&log, 400, &TrimStyle::head_tail(0.3));
/// assert!(trimmed.text().chars().count() <= 400);
/// assert!(trimmed.text().starts_with("request 919 served\n"));
/// assert!(trimmed.text().ends_with("request 0 served\n"));
///
/// // The default keeps what matters and spends the rest on the head and the tail, verbatim;
/// // the lines it cannot show are summarised after the marker.
/// let kept = fit(&log, 2_000, &TrimStyle::default());
/// assert!(kept.text().starts_with("request 919 served\n"));
/// assert!(kept.text().contains(" lines left out (lines "));
/// assert!(kept.text().ends_with("request 0 served\n"));
///
/// // Lines that count up by one fold losslessly: every line can be rebuilt from the fold.
/// let count: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
/// let folded = fit(&count, 400, &TrimStyle::default());
/// assert!(folded.text().starts_with("line 1\n[toolsmith: output condensed"));
/// assert!(folded.text().ends_with("\n[lines 2-1,000: 2 to 1000, one a line]"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit<'a>(text: &'a str, allowance: usize, style: &TrimStyle) -> Trimmed<'a> {
    fit_with(text, allowance, style, &FullOutput::NotKept.into())
}

/// Whether `text` fits `allowance` once written compactly: a JSON document that `style` cuts as
/// JSON (as [`fit_with`] does, for a text that is not a page) whose compact form is within
/// `allowance` chars. Fitting it then leaves nothing out (its cut is
/// [`compacted`](Cut::compacted)), so nothing needs keeping as an artifact: the one rule of
/// every path that stores a full output before it cuts (the registry, the proxy and `serve`).
///
/// ```
/// use toolsmith::trim::{TrimStyle, fit, fits_compacted};
///
/// let pretty = serde_json::to_string_pretty(&serde_json::json!({ "rows": [1, 2, 3] }))?;
/// assert!(pretty.len() > 20 && fits_compacted(&pretty, 20, &TrimStyle::default()));
/// let fitted = fit(&pretty, 20, &TrimStyle::default());
/// assert_eq!(fitted.text(), r#"{"rows":[1,2,3]}"#);
/// assert!(fitted.cut().is_some_and(|cut| cut.compacted));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fits_compacted(text: &str, allowance: usize, style: &TrimStyle) -> bool {
    style.json && !style.renders_whole(text) && compacts_within(text, allowance)
}

/// Whether `text` is one JSON document whose compact form is within `allowance` chars.
pub(crate) fn compacts_within(text: &str, allowance: usize) -> bool {
    json::compact_document_chars(text).is_some_and(|chars| chars <= allowance)
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
    // A JSON document is cut as JSON: valid, its first and last elements kept, the marker
    // inside. Not a page of a paginated call (its marker says where to read on, by lines).
    if style.json
        && continuation.page_offset.is_none()
        && (bytes.len() > allowance || style.max_lines.is_some())
        && json::may_be_document(bytes)
        && let Some(fitted) = json::fit_document(
            text,
            allowance,
            style.max_lines,
            style.head_ratio,
            continuation,
        )
    {
        return fitted;
    }
    // A text of at most `allowance` bytes has at most `allowance` chars: no count needed.
    let chars_fit = bytes.len() <= allowance;
    if chars_fit && style.max_lines.is_none() && !style.renders_whole(text) {
        return untouched(text);
    }
    // One read of the input (its salient lines found as it is counted, on every core when it
    // is large); everything after it is proportional to what is kept.
    let searcher = if style.reduces() {
        salience::searcher(style.salience)
    } else {
        None
    };
    let (original_chars, newlines, hits) = if chars_fit {
        (None, count_newlines(bytes), None)
    } else {
        let survey = survey::survey(text, searcher.as_ref());
        let hits = searcher.is_some().then_some(survey.hits);
        (Some(survey.totals.chars), survey.totals.newlines, hits)
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
            held_run: None,
            surveyed: hits.as_deref(),
            totals,
        };
        if let Some(cut) = keep::cut(&source, allowance, style, continuation, searcher.as_ref()) {
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
        compacted: false,
    };
    // The marker first: the output's own last line (a command's exit code) stays last.
    let marker = render(&cut, continuation, Layout::Exact);
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

/// The totals of `text` and how many salient parts of errors it holds (errors, failures, tracebacks …,
/// each with the block it opens), from one read of it: what a one-line summary of an old result
/// states.
pub(crate) fn totals_and_salient_count(text: &str) -> (Totals, usize) {
    let searcher = salience::Searcher::Default;
    let survey = survey::survey(text, Some(&searcher));
    // A survey keeps the first and the last of a great many salient lines: then all are
    // searched for again, to count them all.
    let found = if survey.hits.len() < 2 * survey::KEPT {
        salience::Found::Surveyed(&survey.hits)
    } else {
        salience::Found::Search(&searcher)
    };
    // Warnings are salient too, but a summary counts the errors (the patterns' own: a summary
    // of an old result is made for every one of a long history, so its shapes are not read).
    let parts = salience::scan_as(text, 0..text.len(), 1, found, usize::MAX, false)
        .iter()
        .filter(|excerpt| excerpt.tier == salience::Tier::Error)
        .count();
    (survey.totals, parts)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_counts_every_salient_part_however_many() {
        let searched = |text: &str| {
            let found = salience::Found::Search(&salience::Searcher::Default);
            salience::scan_as(text, 0..text.len(), 1, found, usize::MAX, false)
                .iter()
                .filter(|excerpt| excerpt.tier == salience::Tier::Error)
                .count()
        };
        let few = "ok\nerror: one\n\nok\nTraceback (most recent call last):\n  x\nE: y\n";
        // More salient lines than a survey keeps (the first and the last 65,536).
        let many: String = (0..140_000).map(|i| format!("error: {i}\n\n")).collect();
        for text in [few, many.as_str()] {
            let (totals, parts) = totals_and_salient_count(text);
            assert_eq!(totals, Totals::of(text));
            assert_eq!(parts, searched(text));
        }
        assert_eq!(totals_and_salient_count(&many).1, 140_000);
    }

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
