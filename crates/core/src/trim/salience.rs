//! The lines a developer looks for in a long output: errors, failures, panics, tracebacks and
//! exceptions through their final line, assertion messages, `not ok`, `FAILED`, compiler
//! diagnostics with their location, `make: ***`, fatal and critical log lines.
//!
//! A cut that must drop the middle of an output keeps these from it ([`Excerpt`]s: the line, a
//! line of context before it, and the block it opens), fairly across many: the first and the last
//! of a long run of the same error before the others.

use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};

use super::bytes::{count_newlines, is_blank, line_end, without_break};
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

/// The default patterns' automaton, built once.
fn default_automaton() -> &'static AhoCorasick {
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

/// The automaton of a salience, or `None` when it is off.
pub(crate) fn automaton(salience: Salience) -> Option<std::borrow::Cow<'static, AhoCorasick>> {
    match salience {
        Salience::Off => None,
        Salience::Default => Some(std::borrow::Cow::Borrowed(default_automaton())),
        Salience::Also(extra) => Some(std::borrow::Cow::Owned(build(
            PATTERNS.iter().copied().chain(extra.iter().copied()),
        ))),
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
    /// Searched for with this automaton.
    Search(&'a AhoCorasick),
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
    let region = &bytes[range.clone()];
    // The salient lines of the range: each line's start and, when the survey knows it, number.
    let lines: Box<dyn Iterator<Item = (usize, Option<usize>)> + '_> = match found {
        Found::Search(automaton) => {
            let mut starts = LineStarts::at_line_start(range.start);
            Box::new(
                automaton
                    .find_iter(region)
                    .map(move |hit| (starts.start_of(bytes, range.start + hit.start()), None)),
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
            Found::Search(default_automaton()),
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
            Found::Search(default_automaton()),
            1_000,
        );
        assert_eq!(found.len(), 101);
        let chosen = choose(&found, 3, 3, 10, |_| (1, 1));
        let lines: Vec<usize> = chosen.iter().map(|&i| found[i].last_line()).collect();
        assert_eq!(lines, [2, 200, 201], "first and last ERROR, and the FATAL");
    }
}
