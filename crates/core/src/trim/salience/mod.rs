//! The lines a developer looks for in a long output: errors, failures, panics, tracebacks and
//! exceptions through their final line, assertion messages, `not ok`, `FAILED`, compiler
//! diagnostics with their location, `make: ***`, fatal and critical log lines.
//!
//! A cut that must drop the middle of an output keeps these from it ([`Excerpt`]s: the line, a
//! line of context before it, and the block it opens), fairly across many: the first and the last
//! of a long run of the same error before the others.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::OnceLock;

mod anchors;
mod standout;

/// The largest text read whole for what stands out in it ([`standout`]).
pub(crate) const WHOLE_BYTES: usize = standout::MAX_BYTES;

/// Whether a cut reads `text` whole: for what stands out in it, each excerpt from its
/// paragraph's header.
pub(crate) fn reads_whole(text: &str) -> bool {
    text.len() <= WHOLE_BYTES
}

use aho_corasick::{AhoCorasick, MatchKind};

use super::bytes::{count_chars_and_newlines, count_newlines, is_blank, line_end, without_break};
use super::signature::signature;
use super::survey::{Hit, LineStarts};

/// Which lines of an output a cut keeps from the middle it drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Salience {
    /// None: the cut keeps the head and the tail only (a file's content, a search's matches).
    Off,
    /// The lines a developer looks for in the output of builds, tests and services (see the
    /// module docs). The default.
    #[default]
    Default,
    /// Those, and the lines that hold any of these strings (a tool's own markers of what matters).
    Also(&'static [&'static str]),
}

/// What the default salience recognises, each as it appears in real output.
const PATTERNS: &[&str] = &[
    // Compilers, linkers and tools: `error:`, `error[E0308]`, `fatal:`.
    "error:",
    "error[",
    "Error:",
    "ERROR",
    "fatal:",
    "FATAL",
    "Fatal",
    "CRITICAL",
    "critical:",
    "undefined reference",
    "make: ***",
    ": *** [",
    "npm ERR!",
    // Tests: Rust, Python, Go, Node (TAP), Jest, JUnit.
    "FAILED",
    "FAIL:",
    "--- FAIL",
    "FAIL ",
    "failed:",
    // systemd and many daemons: `Failed to start orders.service`.
    "Failed to ",
    // GNU tar, cp and their kin: `tar: data/x.csv: Cannot open: File exists`.
    ": Cannot ",
    // The sanitizers' reports and summaries: `SUMMARY: AddressSanitizer: heap-buffer-overflow`.
    "Sanitizer: ",
    // g++'s pointer from a template's error to the user's line that instantiated it.
    "required from here",
    // rustfmt's check: each place a file is not formatted.
    "Diff in ",
    // A Kubernetes event of type Warning (`kubectl get events`, its TYPE column): how a cluster
    // reports a failure (BackOff, FailedMount, FailedScheduling); the other type is Normal.
    " Warning  ",
    "not ok ",
    "panicked at",
    "panic:",
    "\nE   ",
    "AssertionError",
    "Assertion failed",
    // Jest's and Vitest's assertion, below the failing test after a blank line.
    "  Expected: ",
    "  Received: ",
    // Tracebacks and exceptions.
    "Traceback (most recent call last)",
    "Exception in thread",
    "Exception:",
    "Caused by:",
    "Unhandled exception",
    "Segmentation fault",
    "core dumped",
    // An access log's server errors (a 5xx status after the request line).
    "HTTP/1.1\" 5",
    "HTTP/1.0\" 5",
    "HTTP/2.0\" 5",
    "HTTP/2\" 5",
    // Warnings (`WARNINGS`): salient after everything above, kept while room remains.
    "WARN",
    "warning:",
    "Warning:",
    // The level of a structured log record (JSON lines, logfmt; `LEVEL_KEYS`, last): salient
    // when its value is an error's or a warning's ([`level_after`]).
    "\"level\":",
    "\"Level\":",
    "\"severity\":",
    "\"Severity\":",
    "\"lvl\":",
    "\"levelname\":",
    "\"log.level\":",
    "level=",
    "severity=",
    "lvl=",
];

/// How many of the default patterns, at the end of [`PATTERNS`], are the keys of a structured
/// log record's level; the [`WARNINGS`] of them come just before.
const LEVEL_KEY_COUNT: usize = 10;
/// How many of the default patterns, before the level keys, mark a warning.
const WARNING_COUNT: usize = 3;

/// The default patterns that are the key of a structured log record's level: an occurrence counts
/// only when the value after it says error or warning ([`level_after`]).
const LEVEL_KEYS: &[&str] = PATTERNS.split_at(PATTERNS.len() - LEVEL_KEY_COUNT).1;

/// The default patterns that mark a warning: a line that holds one of them and nothing an error's
/// is kept after the errors and failures, while room remains.
const WARNINGS: &[&str] = PATTERNS
    .split_at(PATTERNS.len() - LEVEL_KEY_COUNT - WARNING_COUNT)
    .1
    .split_at(WARNING_COUNT)
    .0;

/// What a salient line is: an error's (errors, failures, panics, tracebacks, a record whose
/// level is error, fatal, critical or panic), a warning's, kept after them, or a line of a shape
/// of its own in its output ([`standout`]), kept from what room is left after both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) enum Tier {
    #[default]
    Error,
    Warning,
    Rare,
}

/// What the level named at `at` (just after a level key) says: `Some(Tier::Error)` for error,
/// err, fatal, critical, crit, panic, dpanic, emerg(ency), alert and severe in any case, or a
/// number of 50 or more (pino's and bunyan's error and fatal, Python's critical);
/// `Some(Tier::Warning)` for warn and warning, or 40 to 49; `None` for any other level.
pub(crate) fn level_after(bytes: &[u8], at: usize) -> Option<Tier> {
    let rest = bytes.get(at..).unwrap_or_default();
    let rest = rest.trim_ascii_start();
    let rest = rest.strip_prefix(b"\"").unwrap_or(rest);
    let word_len = rest
        .iter()
        .take(12)
        .position(|b| !b.is_ascii_alphanumeric())
        .unwrap_or(rest.len().min(12));
    let word = &rest[..word_len];
    if word.first().is_some_and(u8::is_ascii_digit) {
        let level: u32 = std::str::from_utf8(word).ok()?.parse().ok()?;
        return match level {
            50.. if level < 1_000 => Some(Tier::Error),
            40..=49 => Some(Tier::Warning),
            _ => None,
        };
    }
    const ERRORS: &[&[u8]] = &[
        b"error",
        b"err",
        b"fatal",
        b"critical",
        b"crit",
        b"panic",
        b"dpanic",
        b"emerg",
        b"emergency",
        b"alert",
        b"severe",
    ];
    if ERRORS.iter().any(|level| word.eq_ignore_ascii_case(level)) {
        Some(Tier::Error)
    } else if word.eq_ignore_ascii_case(b"warn") || word.eq_ignore_ascii_case(b"warning") {
        Some(Tier::Warning)
    } else {
        None
    }
}

/// What an occurrence of a default pattern (`bytes[occurrence]`) says of its line: an error's, a
/// warning's, or nothing (a level key whose value is neither).
pub(crate) fn tier_of(bytes: &[u8], occurrence: Range<usize>) -> Option<Tier> {
    let pattern = &bytes[occurrence.clone()];
    if LEVEL_KEYS.iter().any(|key| key.as_bytes() == pattern) {
        level_after(bytes, occurrence.end)
    } else if WARNINGS.iter().any(|warning| warning.as_bytes() == pattern)
        || (pattern == b"failed:" && in_a_note(bytes, occurrence.start))
    {
        Some(Tier::Warning)
    } else {
        Some(Tier::Error)
    }
}

/// Whether the line holding `at` is a compiler's note before it (`path:line:col: note: …`):
/// context for an error, not one — g++ writes `note:   template argument
/// deduction/substitution failed:` under every candidate it tried, and those are a tier below.
fn in_a_note(bytes: &[u8], at: usize) -> bool {
    let from = at.saturating_sub(512);
    let line_start = memchr::memrchr(b'\n', &bytes[from..at]).map_or(from, |i| from + i + 1);
    memchr::memmem::find(&bytes[line_start..at], b": note: ").is_some()
}

/// Drops from `found[from..]` the level keys whose value is neither an error's nor a warning's.
fn drop_quiet_levels(bytes: &[u8], found: &mut Vec<Range<usize>>, from: usize) {
    let mut kept = from;
    for i in from..found.len() {
        let occurrence = found[i].clone();
        // Only a level key can be quiet: the others are kept without a look at the value.
        let quiet = matches!(bytes[occurrence.start], b'"' | b'l' | b's')
            && tier_of(bytes, occurrence).is_none();
        if !quiet {
            found.swap(kept, i);
            kept += 1;
        }
    }
    found.truncate(kept);
}

/// The tier of a salient line: a warning's when every default pattern it holds is a warning's
/// (a line that holds only a tool's own pattern is an error's).
pub(crate) fn tier_of_line(line: &[u8]) -> Tier {
    let mut tier = Tier::Error;
    // By the anchors, as every search of the default patterns: the automaton is built only
    // for what floods them.
    let mut found = Vec::new();
    anchors::find(line, 0..line.len(), &mut found);
    for occurrence in found {
        match tier_of(line, occurrence) {
            Some(Tier::Error) => return Tier::Error,
            Some(Tier::Warning | Tier::Rare) => tier = Tier::Warning,
            None => {}
        }
    }
    tier
}

/// Whether `text` holds what the default salience finds of an error (an error, a failure, a
/// panic, a traceback, a record at an error's level): what makes one element of a structure's
/// list worth keeping, as it makes a line.
pub(crate) fn holds_error(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    anchors::find(bytes, 0..bytes.len(), &mut found);
    found
        .into_iter()
        .any(|occurrence| tier_of(bytes, occurrence) == Some(Tier::Error))
}

/// Whether a status or level word says that something failed: an error's level
/// ([`level_after`]: error, fatal, critical, panic, …) or a failed run's status (failed,
/// failure, errored, crashed, timed out, …), in any case.
pub(crate) fn says_failed(word: &str) -> bool {
    const FAILED: &[&str] = &[
        "fail",
        "failed",
        "failure",
        "failing",
        "errored",
        "broken",
        "crashed",
        "aborted",
        "timeout",
        "timed_out",
        "timedout",
    ];
    FAILED
        .iter()
        .any(|failed| word.eq_ignore_ascii_case(failed))
        || (word.len() <= 12
            && word.bytes().all(|b| b.is_ascii_alphanumeric())
            && level_after(word.as_bytes(), 0) == Some(Tier::Error))
}

/// The default patterns' automaton, built once: what searches where the anchors cannot.
pub(in crate::trim) fn default_automaton() -> &'static AhoCorasick {
    static AUTOMATON: OnceLock<AhoCorasick> = OnceLock::new();
    AUTOMATON.get_or_init(|| build(PATTERNS.iter().copied()))
}

fn build<'a>(patterns: impl IntoIterator<Item = &'a str>) -> AhoCorasick {
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(patterns)
        .unwrap_or_else(|_| {
            // Fixed strings always build; an empty automaton finds nothing.
            AhoCorasick::new(std::iter::empty::<&str>()).expect("an empty automaton")
        })
}

/// How the salient patterns of a [`Salience`] are found: the one owner of that search, for
/// texts, surveys and streams.
#[derive(Debug, Clone)]
pub(crate) enum Searcher {
    /// The default patterns, by their anchors ([`anchors`]).
    Default,
    /// The default patterns and a tool's own, by an automaton of them all.
    Automaton(AhoCorasick),
}

/// The searcher of a salience, or `None` when it is off.
pub(crate) fn searcher(salience: Salience) -> Option<Searcher> {
    match salience {
        Salience::Off => None,
        Salience::Default => Some(Searcher::Default),
        Salience::Also(extra) => Some(Searcher::Automaton(build(
            PATTERNS.iter().copied().chain(extra.iter().copied()),
        ))),
    }
}

impl Searcher {
    /// Appends to `found` where the patterns occur that start in `bytes[span]` (they may run on
    /// past it), in order of their starts. Every line that holds a pattern holds the start of
    /// one found; a pattern that starts with a line break belongs to the line after it.
    pub(crate) fn find(&self, bytes: &[u8], span: Range<usize>, found: &mut Vec<Range<usize>>) {
        let from = found.len();
        match self {
            Searcher::Default => anchors::find(bytes, span, found),
            Searcher::Automaton(automaton) => find_by_automaton(automaton, bytes, span, found),
        }
        drop_quiet_levels(bytes, found, from);
    }

    /// Counts the chars and newlines of `bytes[span]` while it [finds](Self::find) the patterns
    /// that start in it: one read of the span.
    pub(crate) fn count_and_find(
        &self,
        bytes: &[u8],
        span: Range<usize>,
        found: &mut Vec<Range<usize>>,
    ) -> (usize, usize) {
        let from = found.len();
        let counted = match self {
            Searcher::Default => anchors::count_and_find(bytes, span, found),
            Searcher::Automaton(automaton) => {
                find_by_automaton(automaton, bytes, span.clone(), found);
                count_chars_and_newlines(&bytes[span])
            }
        };
        drop_quiet_levels(bytes, found, from);
        counted
    }

    /// Whether `bytes` holds a pattern.
    pub(crate) fn is_match(&self, bytes: &[u8]) -> bool {
        let mut found = Vec::new();
        self.find(bytes, 0..bytes.len(), &mut found);
        !found.is_empty()
    }
}

/// [`Searcher::find`] by an automaton: its leftmost matches that start in `span`.
fn find_by_automaton(
    automaton: &AhoCorasick,
    bytes: &[u8],
    span: Range<usize>,
    found: &mut Vec<Range<usize>>,
) {
    // A match that starts in the span may end past it, by less than the longest pattern.
    let end = span
        .end
        .saturating_add(automaton.max_pattern_len().saturating_sub(1))
        .min(bytes.len());
    for hit in automaton.find_iter(&bytes[span.start..end]) {
        let start = span.start + hit.start();
        if start >= span.end {
            break;
        }
        found.push(start..span.start + hit.end());
    }
}

/// The most lines an excerpt's block runs on after its line.
const MAX_BLOCK_LINES: usize = 64;

/// A part of an output worth keeping from the middle: a salient line, the line before it, and
/// the block it opens (a traceback through its final line, a diagnostic's location and snippet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Excerpt {
    /// Its bytes in the text, line breaks included.
    pub(crate) bytes: Range<usize>,
    /// The number of its first line (1-based).
    pub(crate) first_line: usize,
    /// How many lines it has.
    pub(crate) lines: usize,
    /// The signature of its salient line: excerpts of one group repeat one message.
    pub(crate) group: u64,
    /// Whether its salient line is an error's or only a warning's.
    pub(crate) tier: Tier,
}

impl Excerpt {
    /// The number of its last line.
    #[cfg(test)]
    pub(crate) fn last_line(&self) -> usize {
        self.first_line + self.lines - 1
    }
}

/// Where the salient lines of a text are found: by searching it, or in a survey of it that
/// read it already.
#[derive(Clone, Copy)]
pub(crate) enum Found<'a> {
    /// Searched for with this searcher.
    Search(&'a Searcher),
    /// The salient lines a [survey](super::survey) of the whole text found.
    Surveyed(&'a [Hit]),
}

/// [`scan_as`], the text read whole when it is up to [`WHOLE_BYTES`], as a cut reads it: what
/// the tests here read.
#[cfg(test)]
pub(crate) fn scan(
    text: &str,
    range: Range<usize>,
    first_line: usize,
    found: Found<'_>,
    limit: usize,
) -> Vec<Excerpt> {
    scan_as(text, range, first_line, found, limit, reads_whole(text))
}

/// The excerpts of `text[range]`, in order (one may end where the next starts: the layout joins
/// them); `first_line` is the number of the line `range` starts in (it starts a line). At most
/// `limit` are gathered: the first `limit / 2` and the last `limit / 2`.
///
/// A text read whole (`whole`: a cut's, up to [`WHOLE_BYTES`]) has what stands out in it
/// ([`standout`]) salient beside what the patterns find, and an excerpt begins at its
/// paragraph's header. A larger one, a stream's middle ([`Watch`](crate::trim::watch)), an
/// old result of a history, by the patterns alone.
pub(crate) fn scan_as(
    text: &str,
    range: Range<usize>,
    first_line: usize,
    found: Found<'_>,
    limit: usize,
    whole: bool,
) -> Vec<Excerpt> {
    let bytes = text.as_bytes();
    // The salient lines of the range: each line's start, its number when the survey knows it,
    // and what its patterns say of it.
    let lines: Box<dyn Iterator<Item = (usize, Option<usize>, Tier)> + '_> = match found {
        Found::Search(searcher) => {
            // Patterns wholly within the range, one item a line (an error's if any is).
            let mut occurrences = Vec::new();
            searcher.find(&bytes[..range.end], range.clone(), &mut occurrences);
            let mut starts = LineStarts::at_line_start(range.start);
            let mut lines: Vec<(usize, Option<usize>, Tier)> = Vec::new();
            for occurrence in occurrences {
                let start = starts.start_of(bytes, occurrence.start);
                let tier = tier_of(bytes, occurrence).unwrap_or_default();
                match lines.last_mut() {
                    Some(last) if last.0 == start => last.2 = last.2.min(tier),
                    _ => lines.push((start, None, tier)),
                }
            }
            Box::new(lines.into_iter())
        }
        Found::Surveyed(hits) => {
            let from = hits.partition_point(|hit| hit.start < range.start);
            Box::new(
                hits[from..]
                    .iter()
                    .take_while(|hit| hit.start < range.end)
                    .map(|hit| (hit.start, Some(hit.line), hit.tier)),
            )
        }
    };
    // What the patterns found, and what stands out in this output whatever its tool: one list
    // by line, the more severe tier of the two where both found a line.
    let standouts = if whole {
        standout::standouts(bytes, range.clone())
    } else {
        Vec::new()
    };
    let lines = with_standouts(lines.collect(), standouts);
    let half = (limit / 2).max(1);
    // Errors: the first `half`, then the latest `half` only. Warnings are placed after them
    // (where an error's excerpt holds one, it is the error's), at most `WARNINGS_KEPT` from each
    // end: a flood of them is not walked, and never pushes an error out.
    let (mut first, mut latest) = (Vec::new(), VecDeque::new());
    let (mut warnings_first, mut warnings_latest) = (Vec::new(), VecDeque::new());
    // The line counted to: its start byte and its number.
    let (mut counted_at, mut counted_line) = (range.start, first_line);
    // Where the last excerpt ended: a match before it is inside it already.
    let mut covered = range.start;
    for (line_start, number, tier) in lines {
        if line_start < covered || line_start >= range.end {
            continue;
        }
        counted_line = match number {
            Some(number) => number,
            None => counted_line + count_newlines(&bytes[counted_at..line_start]),
        };
        counted_at = line_start;
        let salient = (line_start, counted_line);
        if tier != Tier::Error {
            keep_ends(
                &mut warnings_first,
                &mut warnings_latest,
                half.min(WARNINGS_KEPT),
                (salient, tier),
            );
            continue;
        }
        let excerpt = excerpt_at(
            bytes,
            range.clone(),
            range.end,
            salient,
            covered,
            Tier::Error,
            whole,
        );
        covered = excerpt.bytes.end;
        keep_ends(&mut first, &mut latest, half, excerpt);
    }
    let mut all = first;
    all.extend(latest);
    if warnings_first.is_empty() {
        return all;
    }
    // Each warning within what the errors' excerpts (and the warning before it) leave.
    let errors = all;
    let mut all = Vec::with_capacity(errors.len() + 2 * WARNINGS_KEPT);
    let mut next_error = 0;
    let mut covered = range.start;
    for (salient, tier) in warnings_first.into_iter().chain(warnings_latest) {
        let line_start = salient.0;
        while next_error < errors.len() && errors[next_error].bytes.start <= line_start {
            covered = covered.max(errors[next_error].bytes.end);
            next_error += 1;
        }
        if line_start < covered {
            continue;
        }
        let limit = errors
            .get(next_error)
            .map_or(range.end, |error| error.bytes.start);
        let excerpt = excerpt_at(bytes, range.clone(), limit, salient, covered, tier, whole);
        covered = excerpt.bytes.end;
        all.push(excerpt);
    }
    all.extend(errors);
    all.sort_by_key(|excerpt| excerpt.bytes.start);
    all
}

/// `found` (each line's start, its number when known, its tier; in order) and `standouts` (each
/// line's start and tier; in order) as one list in order, a line found by both at the more
/// severe tier.
fn with_standouts(
    found: Vec<(usize, Option<usize>, Tier)>,
    standouts: Vec<(usize, Tier)>,
) -> Vec<(usize, Option<usize>, Tier)> {
    if standouts.is_empty() {
        return found;
    }
    let mut merged = Vec::with_capacity(found.len() + standouts.len());
    let mut found = found.into_iter().peekable();
    for (start, tier) in standouts {
        while let Some(next) = found.next_if(|next| next.0 < start) {
            merged.push(next);
        }
        match found.next_if(|next| next.0 == start) {
            Some((start, number, found_tier)) => merged.push((start, number, found_tier.min(tier))),
            None => merged.push((start, None, tier)),
        }
    }
    merged.extend(found);
    merged
}

/// How many warnings a scan keeps from each end of what it scans: a cut costs at most twice
/// its most parts of them ([`choose`]).
const WARNINGS_KEPT: usize = 32;

/// Keeps `item` among the first `half` or, once they are, the latest `half`.
fn keep_ends<T>(first: &mut Vec<T>, latest: &mut VecDeque<T>, half: usize, item: T) {
    if first.len() < half {
        first.push(item);
    } else {
        if latest.len() == half {
            latest.pop_front();
        }
        latest.push_back(item);
    }
}

/// The excerpt of the salient line (its start and its number) within `range`: the line before it
/// for context (unless it is blank or before `covered`), the line, and the block it opens, which
/// ends by `block_limit`.
fn excerpt_at(
    bytes: &[u8],
    range: Range<usize>,
    block_limit: usize,
    (line_start, line): (usize, usize),
    covered: usize,
    tier: Tier,
    headed: bool,
) -> Excerpt {
    let salient_end = line_end(bytes, line_start, range.end);
    let (start, first_line) = match line_start.checked_sub(1) {
        Some(newline) if newline > range.start => {
            let before =
                crate::trim::after_last_break(bytes, range.start, newline).unwrap_or(range.start);
            if before >= covered && !is_blank(&bytes[before..line_start]) {
                (before, line - 1)
            } else {
                (line_start, line)
            }
        }
        _ => (line_start, line),
    };
    let (start, first_line) = if headed {
        let under = continues(without_break(&bytes[line_start..salient_end]));
        with_header(bytes, range.start.max(covered), start, first_line, under)
    } else {
        (start, first_line)
    };
    let (end, block_lines) =
        block_end(bytes, line_start, salient_end, block_limit.max(salient_end));
    Excerpt {
        bytes: start..end,
        first_line,
        lines: (line - first_line) + 1 + block_lines,
        group: signature(without_break(&bytes[line_start..salient_end])),
        tier,
    }
}

/// How many lines above an excerpt its paragraph's first line may be for the excerpt to begin
/// there: the header of a block of findings (a file's name over its findings, `In x.sh line 2:`
/// over the source and the finding).
const HEADER_REACH: usize = 3;

/// Where an excerpt beginning at `start` (line `first_line`) begins once it holds its header:
/// the first line of its paragraph (the line after a blank one; the text's first where the
/// salient line is indented, `under` it) when that is at most [`HEADER_REACH`] lines above and
/// not before `stop`; else where it was.
fn with_header(
    bytes: &[u8],
    stop: usize,
    start: usize,
    first_line: usize,
    under: bool,
) -> (usize, usize) {
    let mut at = start;
    for above in 0..=HEADER_REACH {
        // `at` is `above` lines above `start`: the paragraph's first line when a blank line is
        // just above it (or the text begins there).
        let paragraph_starts = (at == 0 && under)
            || (at > stop && {
                let before = crate::trim::after_last_break(bytes, stop, at - 1).unwrap_or(stop);
                is_blank(&bytes[before..at])
            });
        if paragraph_starts {
            return (at, first_line - above);
        }
        if above == HEADER_REACH || at <= stop || first_line <= above + 1 {
            break;
        }
        at = crate::trim::after_last_break(bytes, stop, at - 1).unwrap_or(stop);
    }
    (start, first_line)
}

/// Whether a line continues the block above it: indented, or a diagnostic's numbered source
/// line (`41 | let count …`).
pub(crate) fn continues(line: &[u8]) -> bool {
    if matches!(line.first(), Some(b' ' | b'\t')) {
        return true;
    }
    let digits = line.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && line[digits..].trim_ascii_start().starts_with(b"|")
}

/// Where the block a salient line opens ends, and how many lines it has beyond that line: the
/// indented lines after it; when the line ends with `:` (a traceback, a panic), also the first
/// line that is not indented (the exception, the message) and the indented lines after that.
fn block_end(bytes: &[u8], line_start: usize, salient_end: usize, limit: usize) -> (usize, usize) {
    let opens = without_break(&bytes[line_start..salient_end]).ends_with(b":");
    let mut end = salient_end;
    let mut lines = 0;
    let mut closed = !opens;
    while end < limit && lines < MAX_BLOCK_LINES {
        let next = line_end(bytes, end, limit);
        let line = &bytes[end..next];
        if is_blank(line) {
            break;
        }
        if !continues(line) {
            if closed {
                break;
            }
            closed = true;
        }
        end = next;
        lines += 1;
    }
    (end, lines)
}

/// Picks, from `excerpts` (in order), those to keep within `budget` chars, where
/// `line_budget` lines, where `cost(index)` is what keeping one costs (chars, lines), and at
/// most `max` of them: the errors' first (the first occurrence of each message, then the last
/// of each, then the others alternately from both ends), then the warnings' the same way, within
/// half the budget (at most `2 * max` of them are costed). Returns their indices, in order.
pub(crate) fn choose(
    excerpts: &[Excerpt],
    budget: usize,
    line_budget: usize,
    max: usize,
    mut cost: impl FnMut(usize) -> (usize, usize),
) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::with_capacity(excerpts.len());
    for tier in [Tier::Error, Tier::Warning, Tier::Rare] {
        order_fairly(excerpts, tier, &mut order);
    }
    let (mut left, mut lines_left) = (budget, line_budget);
    // Warnings take at most half the budget, and only what the errors left of it.
    let mut warnings_left = budget / 2;
    let mut chosen: Vec<usize> = Vec::new();
    // Each excerpt is costed by walking it: a flood of warnings is looked at only so far (the
    // first and last of each message come first in the order).
    let mut warnings_looked_at = 0;
    for i in order {
        if chosen.len() == max {
            break;
        }
        let warning = excerpts[i].tier != Tier::Error;
        if warning && warnings_left == 0 {
            break;
        }
        if warning {
            if warnings_looked_at == 2 * max {
                break;
            }
            warnings_looked_at += 1;
        }
        let (chars, lines) = cost(i);
        if chars <= left && lines <= lines_left && (!warning || chars <= warnings_left) {
            left -= chars;
            lines_left -= lines;
            if warning {
                warnings_left -= chars;
            }
            chosen.push(i);
        }
    }
    chosen.sort_unstable();
    chosen
}

/// Appends to `order` the excerpts of `tier`: the first occurrence of each message, then the
/// last of each, then the others alternately from both ends.
fn order_fairly(excerpts: &[Excerpt], tier: Tier, order: &mut Vec<usize>) {
    let of_tier: Vec<usize> = (0..excerpts.len())
        .filter(|&i| excerpts[i].tier == tier)
        .collect();
    let mut taken = vec![false; excerpts.len()];
    let mut seen = std::collections::HashSet::new();
    for &i in &of_tier {
        if seen.insert(excerpts[i].group) {
            order.push(i);
            taken[i] = true;
        }
    }
    let mut seen = std::collections::HashSet::new();
    for &i in of_tier.iter().rev() {
        if seen.insert(excerpts[i].group) && !taken[i] {
            order.push(i);
            taken[i] = true;
        }
    }
    let rest: Vec<usize> = of_tier.into_iter().filter(|&i| !taken[i]).collect();
    let (mut front, mut back) = (0, rest.len());
    while front < back {
        order.push(rest[front]);
        front += 1;
        if front < back {
            back -= 1;
            order.push(rest[back]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excerpts_of(text: &str) -> Vec<(usize, String)> {
        scan(
            text,
            0..text.len(),
            1,
            Found::Search(&Searcher::Default),
            64,
        )
        .into_iter()
        .map(|e| (e.first_line, text[e.bytes].to_owned()))
        .collect()
    }

    #[test]
    fn a_traceback_is_kept_through_its_final_line() {
        let log = "10:00 INFO ok\n10:01 INFO ok\n10:02 ERROR [orders] batch 7 failed\nTraceback \
                   (most recent call last):\n  File \"s.py\", line 3, in parse\n    return \
                   int(x)\nValueError: invalid literal\n10:03 INFO ok\n";
        // Two excerpts that touch: the layout shows them as one.
        assert_eq!(
            excerpts_of(log),
            [
                (
                    2,
                    "10:01 INFO ok\n10:02 ERROR [orders] batch 7 failed\n".to_owned()
                ),
                (
                    4,
                    "Traceback (most recent call last):\n  File \"s.py\", line 3, in \
                     parse\n    return int(x)\nValueError: invalid literal\n"
                        .to_owned()
                )
            ]
        );
    }

    #[test]
    fn a_diagnostic_keeps_its_location_and_snippet() {
        let build = "   Compiling colour v0.1.0\nwarning: unused variable\nerror[E0308]: \
                     mismatched types\n  --> src/main.rs:41:30\n   |\n41 | let count: u32 = \
                     \"three\";\n   |            ^^^^^^^ expected `u32`\n\nerror: could not \
                     compile\n";
        let found = excerpts_of(build);
        // The warning just before the error is the error's line of context.
        assert_eq!(found[0].0, 2);
        assert!(
            found[0].1.starts_with("warning: unused variable\n"),
            "{found:?}"
        );
        assert!(
            found[0].1.contains("  --> src/main.rs:41:30\n"),
            "{found:?}"
        );
        assert!(found[0].1.ends_with("expected `u32`\n"), "{found:?}");
        assert_eq!(
            found[1].0, 9,
            "a blank line ends the block; the next error is its own"
        );
    }

    #[test]
    fn a_compiler_notes_failure_is_a_warning_and_an_errors_is_an_error() {
        let note = b"/usr/include/c++/12/bits/stl_map.h:846:9: note:   template argument deduction/substitution failed:";
        assert_eq!(tier_of_line(note), Tier::Warning);
        let error = b"src/ledger.rs:12: assertion failed: total == 4";
        assert_eq!(tier_of_line(error), Tier::Error);
        // The note is the line's, not the one before it.
        let after_a_note = b"x.cpp:1:1: note: candidate\nthe build failed: 3 errors";
        let at = after_a_note.len() - b"failed: 3 errors".len();
        assert_eq!(
            tier_of(after_a_note, at..at + b"failed:".len()),
            Some(Tier::Error)
        );
        // An error line that also holds a note's words stays an error by its own pattern.
        assert_eq!(
            tier_of_line(b"ledger.cpp:11:18: error: no match; note: substitution failed:"),
            Tier::Error
        );
    }

    #[test]
    fn the_warnings_and_level_keys_are_where_their_counts_say() {
        assert_eq!(WARNINGS, ["WARN", "warning:", "Warning:"]);
        assert!(
            LEVEL_KEYS
                .iter()
                .all(|key| key.ends_with("\":") || key.ends_with('=')),
            "{LEVEL_KEYS:?}"
        );
        assert_eq!(LEVEL_KEYS[0], "\"level\":");
    }

    fn tiers_of(text: &str) -> Vec<(usize, Tier)> {
        scan(
            text,
            0..text.len(),
            1,
            Found::Search(&Searcher::Default),
            64,
        )
        .into_iter()
        .map(|e| (e.first_line + e.lines - 1, e.tier))
        .collect()
    }

    #[test]
    fn a_structured_record_is_salient_by_its_level() {
        let json = "{\"level\":\"info\",\"msg\":\"ok\"}\n\
                    {\"level\": \"Error\", \"msg\": \"db down\"}\n\
                    {\"severity\":\"WARNING\",\"msg\":\"slow\"}\n\
                    {\"level\":30,\"msg\":\"ok\"}\n\
                    {\"level\":60,\"msg\":\"dead\"}\n\
                    {\"log.level\":\"critical\"}\n\
                    {\"lvl\":\"debug\",\"error\":null}\n\
                    {\"levelname\":\"FATAL\"}\n";
        assert_eq!(
            tiers_of(json),
            [
                (2, Tier::Error),
                (3, Tier::Warning),
                (5, Tier::Error),
                (6, Tier::Error),
                (8, Tier::Error)
            ]
        );
        let logfmt = "ts=1 level=info msg=ok\nts=2 level=error msg=\"db down\"\n\
                      ts=3 lvl=warn msg=slow\n\nts=5 severity=panic\nts=6 compression level=9\n";
        assert_eq!(
            tiers_of(logfmt),
            [(2, Tier::Error), (3, Tier::Warning), (5, Tier::Error)]
        );
    }

    #[test]
    fn a_flood_of_warnings_is_kept_from_its_ends_and_every_error_with_it() {
        let mut text = String::new();
        for i in 0..10_000 {
            text.push_str(&format!("warning: unused variable `v{i}`\n\n"));
            if i % 2_500 == 1_250 {
                text.push_str(&format!("error: batch {i} failed\n\n"));
            }
        }
        let found = scan(
            &text,
            0..text.len(),
            1,
            Found::Search(&Searcher::Default),
            64,
        );
        let warnings = found.iter().filter(|e| e.tier == Tier::Warning).count();
        assert_eq!(warnings, 2 * WARNINGS_KEPT);
        assert_eq!(
            found.len() - warnings,
            4,
            "every error, whatever the warnings"
        );
        assert!(found.is_sorted_by_key(|e| e.bytes.start));
        assert!(found.windows(2).all(|w| w[0].bytes.end <= w[1].bytes.start));
    }

    #[test]
    fn warnings_are_chosen_after_errors_within_half_the_budget() {
        let mut text = String::new();
        for i in 0..50 {
            text.push_str(&format!(
                "INFO step {i}\n\nWARNING retrying upstream {i}\n\n"
            ));
        }
        text.push_str("ERROR giving up\n");
        let found = scan(
            &text,
            0..text.len(),
            1,
            Found::Search(&Searcher::Default),
            1_000,
        );
        assert_eq!(found.len(), 51);
        let chosen = choose(&found, 6, 6, 12, |_| (1, 1));
        let tiers: Vec<Tier> = chosen.iter().map(|&i| found[i].tier).collect();
        assert_eq!(tiers.iter().filter(|&&t| t == Tier::Error).count(), 1);
        assert_eq!(tiers.iter().filter(|&&t| t == Tier::Warning).count(), 3);
    }

    #[test]
    fn a_rust_panic_keeps_its_message_and_values() {
        let out = "test tests::case_9 ... ok\n---- tests::broken stdout ----\nthread \
                   'tests::broken' panicked at alpha/src/lib.rs:405:54:\nassertion `left == \
                   right` failed: the total\n  left: 5\n right: 4\nnote: run with \
                   `RUST_BACKTRACE=1`\n";
        let found = excerpts_of(out);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].1.ends_with(" right: 4\n"), "{found:?}");
    }

    #[test]
    fn many_occurrences_keep_the_first_and_last_of_each_message_first() {
        let mut text = String::new();
        for i in 0..100 {
            text.push_str(&format!("INFO step {i}\n"));
            text.push_str(&format!("ERROR connection {i} refused\n"));
        }
        text.push_str("FATAL giving up\n");
        let found = scan(
            &text,
            0..text.len(),
            1,
            Found::Search(&Searcher::Default),
            1_000,
        );
        assert_eq!(found.len(), 101);
        let chosen = choose(&found, 3, 3, 10, |_| (1, 1));
        let lines: Vec<usize> = chosen.iter().map(|&i| found[i].last_line()).collect();
        assert_eq!(lines, [2, 200, 201], "first and last ERROR, and the FATAL");
    }
}
