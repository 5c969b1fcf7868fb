//! One read of a text too long for its allowance: its totals, and the lines that hold a salient
//! pattern, found block by block while the block is in the core's cache, on every core for a
//! large text.
//!
//! A cut must read every byte once (the marker states the exact totals), and the cut that keeps
//! what matters must search the middle for salient lines. Done as two passes, the search read
//! the text from memory a second time; here each block is counted as it is searched (by the
//! default patterns' kernel; counted and then searched while in cache by an automaton), and a
//! large text is split among the cores, each part read by one. What comes
//! back is the same whatever the split: the totals, and the salient lines in order, each with
//! its number.

use std::collections::VecDeque;
use std::ops::Range;

use super::Totals;
use super::bytes::{
    after_last_break, count_chars_and_newlines, count_newlines, line_start_at, lines_from,
};
use super::salience::{Searcher, Tier, tier_of};

/// Bytes counted and searched together: small enough to stay in a core's cache.
const BLOCK: usize = 128 * 1024;
/// The fewest bytes worth a thread of their own (a thread costs tens of microseconds).
const MIN_SHARE: usize = 4 << 20;
/// The most threads one survey uses.
const MAX_THREADS: usize = 8;
/// The most salient lines kept from each end of a text (16 bytes each): a cut gathers far fewer
/// from its middle, so within this a survey's lines are the ones a search of the middle finds.
pub(super) const KEPT: usize = 1 << 16;

/// A line holding a salient pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hit {
    /// The byte its line starts at.
    pub(crate) start: usize,
    /// Its number (1-based).
    pub(crate) line: usize,
    /// What its patterns say of it: an error's, or only a warning's.
    pub(crate) tier: Tier,
}

/// What one read of a text found.
#[derive(Debug, Clone, Default)]
pub(crate) struct Survey {
    /// The text's size.
    pub(crate) totals: Totals,
    /// Its salient lines in order: all of them, or the first and the last [`KEPT`] when it
    /// holds more. Empty when no salience was asked for.
    pub(crate) hits: Vec<Hit>,
}

/// Reads `text` once: its totals and, with a searcher, its salient lines.
pub(crate) fn survey(text: &str, searcher: Option<&Searcher>) -> Survey {
    let bytes = text.as_bytes();
    let parts = split(bytes.len(), threads_for(bytes.len()));
    let found: Vec<Part> = if parts.len() == 1 {
        vec![read(bytes, 0..bytes.len(), searcher)]
    } else {
        std::thread::scope(|scope| {
            let mut handles = Vec::with_capacity(parts.len() - 1);
            for range in &parts[1..] {
                let range = range.clone();
                let spawned = std::thread::Builder::new()
                    .name("toolsmith-survey".into())
                    .spawn_scoped(scope, {
                        let range = range.clone();
                        move || read(bytes, range, searcher)
                    });
                // A thread that cannot start: its part is read here, after the first.
                handles.push(spawned.map_err(|_| range));
            }
            let mut found = vec![read(bytes, parts[0].clone(), searcher)];
            for handle in handles {
                found.push(match handle {
                    Ok(handle) => handle
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                    Err(range) => read(bytes, range, searcher),
                });
            }
            found
        })
    };
    merge(bytes, found)
}

/// How many threads a text of `len` bytes is read with.
pub(super) fn threads_for(len: usize) -> usize {
    if len < 2 * MIN_SHARE {
        return 1;
    }
    // Asked once: the answer reads the process's CPU affinity and cgroup limits.
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let cores = *CORES
        .get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));
    cores.min(MAX_THREADS).min(len / MIN_SHARE).max(1)
}

/// `len` bytes in `n` parts of nearly equal size, each a whole number of blocks but the last.
fn split(len: usize, n: usize) -> Vec<Range<usize>> {
    let blocks = len.div_ceil(BLOCK).max(1);
    let n = n.clamp(1, blocks);
    (0..n)
        .map(|i| {
            let start = (blocks * i / n * BLOCK).min(len);
            let end = (blocks * (i + 1) / n * BLOCK).min(len);
            start..end
        })
        .collect()
}

/// What one part of a text holds; its hits' lines count the newlines before them in the part.
#[derive(Debug, Default)]
struct Part {
    chars: usize,
    newlines: usize,
    hits: Kept,
}

/// The first and the last [`KEPT`] hits pushed, in order.
#[derive(Debug, Default)]
struct Kept {
    first: Vec<Hit>,
    last: VecDeque<Hit>,
}

impl Kept {
    fn push(&mut self, hit: Hit) {
        if self.first.len() < KEPT {
            self.first.push(hit);
            return;
        }
        if self.last.len() == KEPT {
            self.last.pop_front();
        }
        self.last.push_back(hit);
    }

    fn last_mut(&mut self) -> Option<&mut Hit> {
        self.last.back_mut().or(self.first.last_mut())
    }

    fn into_iter(self) -> impl Iterator<Item = Hit> {
        self.first.into_iter().chain(self.last)
    }
}

/// Counts `bytes[range]` and, with a searcher, finds its salient lines, block by block.
fn read(bytes: &[u8], range: Range<usize>, searcher: Option<&Searcher>) -> Part {
    let mut part = Part::default();
    let mut lines = LineStarts::new(range.start);
    // The newlines of the part before `counted_at`.
    let (mut counted_at, mut counted) = (range.start, 0usize);
    let mut found = Vec::new();
    let mut block_start = range.start;
    while block_start < range.end {
        let block_end = (block_start + BLOCK).min(range.end);
        let block = block_start..block_end;
        let (chars, newlines) = match searcher {
            Some(searcher) => {
                found.clear();
                searcher.count_and_find(bytes, block, &mut found)
            }
            None => count_chars_and_newlines(&bytes[block]),
        };
        part.chars += chars;
        part.newlines += newlines;
        for occurrence in &found {
            let start = lines.start_of(bytes, occurrence.start);
            let tier = tier_of(bytes, occurrence.clone()).unwrap_or_default();
            // A line's hit is an error's if any of its patterns is.
            if let Some(hit) = part.hits.last_mut().filter(|hit| hit.start == start) {
                hit.tier = hit.tier.min(tier);
                continue;
            }
            if start > counted_at {
                counted += count_newlines(&bytes[counted_at..start]);
                counted_at = start;
            }
            part.hits.push(Hit {
                start,
                line: counted,
                tier,
            });
        }
        block_start = block_end;
    }
    part
}

/// The line starts of positions met in increasing order, each found by looking back only to the
/// position before it, so a long line is not read again for every match in it.
pub(crate) struct LineStarts {
    /// The last position met, and the start of its line (unknown until asked for).
    at: usize,
    start: Option<usize>,
}

impl LineStarts {
    /// Starts at `from`, whose line start is looked up only when asked for.
    pub(crate) fn new(from: usize) -> Self {
        LineStarts {
            at: from,
            start: None,
        }
    }

    /// Starts at `from`, which starts a line.
    pub(crate) fn at_line_start(from: usize) -> Self {
        LineStarts {
            at: from,
            start: Some(from),
        }
    }

    /// The start of the line a match at `at` belongs to (a match that starts with a line break
    /// belongs to the next line); `at` is at or after every position asked before.
    pub(crate) fn start_of(&mut self, bytes: &[u8], at: usize) -> usize {
        if bytes[at] == b'\n' {
            self.at = at + 1;
            self.start = Some(at + 1);
            return at + 1;
        }
        let from = self.at.min(at);
        let start = after_last_break(bytes, from, at)
            .or(self.start)
            .unwrap_or_else(|| line_start_at(bytes, from));
        self.at = at;
        self.start = Some(start);
        start
    }
}

/// The parts' figures added up, and their hits numbered and joined in order.
fn merge(bytes: &[u8], parts: Vec<Part>) -> Survey {
    let mut totals = Totals::default();
    let mut kept = Kept::default();
    for part in parts {
        let before = totals.newlines;
        totals.chars += part.chars;
        totals.newlines += part.newlines;
        for hit in part.hits.into_iter() {
            // A line that runs across parts is found in both.
            if let Some(last) = kept.last_mut().filter(|last| last.start == hit.start) {
                last.tier = last.tier.min(hit.tier);
                continue;
            }
            kept.push(Hit {
                line: before + hit.line + 1,
                ..hit
            });
        }
    }
    totals.lines = lines_from(bytes, totals.newlines);
    Survey {
        totals,
        hits: kept.into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trim::salience::default_automaton;

    /// The salient lines as one search of the whole text by the default automaton finds them,
    /// numbered by counting.
    fn searched(text: &str) -> Vec<Hit> {
        let bytes = text.as_bytes();
        let automaton = default_automaton();
        let mut hits: Vec<Hit> = Vec::new();
        for found in automaton.find_iter(bytes) {
            let at = found.start();
            let start = if bytes[at] == b'\n' {
                at + 1
            } else {
                bytes[..at]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1)
            };
            let tier = tier_of(bytes, found.range()).unwrap_or_default();
            if let Some(hit) = hits.last_mut().filter(|hit| hit.start == start) {
                hit.tier = hit.tier.min(tier);
                continue;
            }
            hits.push(Hit {
                start,
                line: count_newlines(&bytes[..start]) + 1,
                tier,
            });
        }
        hits
    }

    fn log(lines: usize) -> String {
        let mut out = String::new();
        for i in 0..lines {
            match i % 97 {
                0 => out.push_str(&format!("{i} error: the build failed here — ошибка\n")),
                13 => out.push_str(&format!("{i}\n\nE   assert {i} == 0\n")),
                // A pattern split across any block or part boundary somewhere in the text.
                50 => out.push_str(&format!(
                    "{i} {}Traceback (most recent call last):\n",
                    "x".repeat(i % 41)
                )),
                _ => out.push_str(&format!("{i} compiling crate_{} (naïve)\n", i % 13)),
            }
        }
        out
    }

    #[test]
    fn every_split_finds_what_one_search_finds() {
        let text = log(40_000);
        let searcher = Searcher::Default;
        let expected = searched(&text);
        assert!(expected.len() > 1_000);
        let totals = Totals::of(&text);
        for n in [1, 2, 3, 5, 8] {
            let parts = split(text.len(), n)
                .into_iter()
                .map(|range| read(text.as_bytes(), range, Some(&searcher)))
                .collect();
            let survey = merge(text.as_bytes(), parts);
            assert_eq!(survey.totals, totals, "{n} parts");
            assert_eq!(survey.hits, expected, "{n} parts");
        }
        let whole = survey(&text, Some(&searcher));
        assert_eq!((whole.totals, whole.hits), (totals, expected));
    }

    #[test]
    fn a_long_line_is_one_hit_whichever_part_finds_it() {
        let line = "error: ".repeat(200_000);
        let text = format!("first\n{line}\nlast error: done");
        let searcher = Searcher::Default;
        for n in [1, 2, 4] {
            let parts = split(text.len(), n)
                .into_iter()
                .map(|range| read(text.as_bytes(), range, Some(&searcher)))
                .collect();
            let survey = merge(text.as_bytes(), parts);
            assert_eq!(
                survey.hits,
                [
                    Hit {
                        start: 6,
                        line: 2,
                        tier: Tier::Error
                    },
                    Hit {
                        start: 6 + line.len() + 1,
                        line: 3,
                        tier: Tier::Error
                    }
                ],
                "{n} parts"
            );
            assert_eq!(survey.totals.lines, 3);
        }
    }

    #[test]
    fn without_salience_only_the_totals() {
        let text = log(2_000);
        let counted = survey(&text, None);
        assert_eq!(counted.totals, Totals::of(&text));
        assert!(counted.hits.is_empty());
        assert_eq!(survey("", None).totals, Totals::default());
    }

    #[test]
    fn the_parts_cover_the_text_once() {
        for (len, n) in [
            (0, 4),
            (1, 4),
            (BLOCK * 3 + 5, 2),
            (BLOCK * 10, 3),
            (100, 1),
        ] {
            let parts = split(len, n);
            assert_eq!(parts.first().map(|r| r.start), Some(0));
            assert_eq!(parts.last().map(|r| r.end), Some(len));
            assert!(
                parts.windows(2).all(|w| w[0].end == w[1].start),
                "{parts:?}"
            );
        }
    }
}
