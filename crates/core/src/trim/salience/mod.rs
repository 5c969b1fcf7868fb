//! The lines a developer looks for in a long output: errors, failures, panics, tracebacks and
//! exceptions through their final line, assertion messages, `not ok`, `FAILED`, compiler
//! diagnostics with their location, `make: ***`, fatal and critical log lines.
//!
//! A cut that must drop the middle of an output keeps these from it ([`Excerpt`]s: the line, a
//! line of context before it, and the block it opens), fairly across many: the first and the last
//! of a long run of the same error before the others.

use std::ops::Range;
use std::sync::OnceLock;

mod anchors;

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
    "not ok ",
    "panicked at",
    "panic:",
    "\nE   ",
    "AssertionError",
    "Assertion failed",
    // Tracebacks and exceptions.
    "Traceback (most recent call last)",
    "Exception in thread",
    "Exception:",
    "Caused by:",
    "Unhandled exception",
    "Segmentation fault",
    "core dumped",
];

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
        match self {
            Searcher::Default => anchors::find(bytes, span, found),
            Searcher::Automaton(automaton) => find_by_automaton(automaton, bytes, span, found),
        }
    }

    /// Counts the chars and newlines of `bytes[span]` while it [finds](Self::find) the patterns
    /// that start in it: one read of the span.
    pub(crate) fn count_and_find(
        &self,
        bytes: &[u8],
        span: Range<usize>,
        found: &mut Vec<Range<usize>>,
    ) -> (usize, usize) {
        match self {
            Searcher::Default => anchors::count_and_find(bytes, span, found),
            Searcher::Automaton(automaton) => {
                find_by_automaton(automaton, bytes, span.clone(), found);
                count_chars_and_newlines(&bytes[span])
            }
        }
    }

    /// Whether `bytes` holds a pattern.
    pub(crate) fn is_match(&self, bytes: &[u8]) -> bool {
        match self {
            Searcher::Default => {
                let mut found = Vec::new();
                anchors::find(bytes, 0..bytes.len(), &mut found);
                !found.is_empty()
            }
            Searcher::Automaton(automaton) => automaton.is_match(bytes),
        }
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

/// The excerpts of `text[range]`, in order (one may end where the next starts: the layout joins
/// them); `first_line` is the number
/// of the line `range` starts in (it starts a line). At most `limit` are gathered: the first
/// `limit / 2` and the last `limit / 2`.
pub(crate) fn scan(
    text: &str,
    range: Range<usize>,
    first_line: usize,
    found: Found<'_>,
    limit: usize,
) -> Vec<Excerpt> {
    let bytes = text.as_bytes();
    // The salient lines of the range: each line's start and, when the survey knows it, number.
    let lines: Box<dyn Iterator<Item = (usize, Option<usize>)> + '_> = match found {
        Found::Search(searcher) => {
            // Patterns wholly within the range.
            let mut occurrences = Vec::new();
            searcher.find(&bytes[..range.end], range.clone(), &mut occurrences);
            let mut starts = LineStarts::at_line_start(range.start);
            Box::new(
                occurrences
                    .into_iter()
                    .map(move |occurrence| (starts.start_of(bytes, occurrence.start), None)),
            )
        }
        Found::Surveyed(hits) => {
            let from = hits.partition_point(|hit| hit.start < range.start);
            Box::new(
                hits[from..]
                    .iter()
                    .take_while(|hit| hit.start < range.end)
                    .map(|hit| (hit.start, Some(hit.line))),
            )
        }
    };
    let half = (limit / 2).max(1);
    let mut first: Vec<Excerpt> = Vec::new();
    // Once `half` are kept, the latest `half` only.
    let mut latest: std::collections::VecDeque<Excerpt> = std::collections::VecDeque::new();
    // The line counted to: its start byte and its number.
    let (mut counted_at, mut counted_line) = (range.start, first_line);
    // Where the last excerpt ended: a match before it is inside it already.
    let mut covered = range.start;
    for (line_start, number) in lines {
        if line_start < covered || line_start >= range.end {
            continue;
        }
        let salient_end = line_end(bytes, line_start, range.end);
        counted_line = match number {
            Some(number) => number,
            None => counted_line + count_newlines(&bytes[counted_at..line_start]),
        };
        counted_at = line_start;
        // A line of context before, unless the excerpt before holds it.
        let (start, first_of_excerpt) = match line_start.checked_sub(1) {
            Some(newline) if newline > range.start => {
                let before = memchr::memrchr(b'\n', &bytes[range.start..newline])
                    .map_or(range.start, |i| range.start + i + 1);
                if before >= covered && !is_blank(&bytes[before..line_start]) {
                    (before, counted_line - 1)
                } else {
                    (line_start, counted_line)
                }
            }
            _ => (line_start, counted_line),
        };
        let (end, block_lines) = block_end(bytes, line_start, salient_end, range.end);
        let excerpt = Excerpt {
            bytes: start..end,
            first_line: first_of_excerpt,
            lines: (counted_line - first_of_excerpt) + 1 + block_lines,
            group: signature(without_break(&bytes[line_start..salient_end])),
        };
        covered = end;
        if first.len() < half {
            first.push(excerpt);
        } else {
            if latest.len() == half {
                latest.pop_front();
            }
            latest.push_back(excerpt);
        }
    }
    first.extend(latest);
    first
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
/// `line_budget` lines, where `cost(excerpt)` is what keeping one costs (chars, lines), and at
/// most `max` of them: the first occurrence of
/// each message, then the last of each, then the others alternately from both ends. Returns
/// their indices, in order.
pub(crate) fn choose(
    excerpts: &[Excerpt],
    budget: usize,
    line_budget: usize,
    max: usize,
    mut cost: impl FnMut(&Excerpt) -> (usize, usize),
) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::with_capacity(excerpts.len());
    let mut taken = vec![false; excerpts.len()];
    let mut seen = std::collections::HashSet::new();
    for (i, excerpt) in excerpts.iter().enumerate() {
        if seen.insert(excerpt.group) {
            order.push(i);
            taken[i] = true;
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (i, excerpt) in excerpts.iter().enumerate().rev() {
        if seen.insert(excerpt.group) && !taken[i] {
            order.push(i);
            taken[i] = true;
        }
    }
    let rest: Vec<usize> = (0..excerpts.len()).filter(|&i| !taken[i]).collect();
    let (mut front, mut back) = (0, rest.len());
    while front < back {
        order.push(rest[front]);
        front += 1;
        if front < back {
            back -= 1;
            order.push(rest[back]);
        }
    }
    let (mut left, mut lines_left) = (budget, line_budget);
    let mut chosen: Vec<usize> = Vec::new();
    for i in order {
        if chosen.len() == max {
            break;
        }
        let (chars, lines) = cost(&excerpts[i]);
        if chars <= left && lines <= lines_left {
            left -= chars;
            lines_left -= lines;
            chosen.push(i);
        }
    }
    chosen.sort_unstable();
    chosen
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
        assert_eq!(found[0].0, 2);
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
