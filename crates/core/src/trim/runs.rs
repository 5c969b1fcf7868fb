//! Lossless runs: consecutive lines every one of which can be rebuilt from the first of them,
//! so that a cut may show the first and one fold line for the rest without losing a byte of
//! what the reader would have seen.
//!
//! Two kinds exist, and only these:
//!
//! - **the same lines**: a line, or a block of up to [`MAX_PERIOD`] lines, repeated exactly
//!   (`[lines 3-1,002: the line above, 1,000 more times]`);
//! - **a count**: lines identical but for one number, which goes up by one from each line to
//!   the next (`[lines 3-15,182: 2 to 15181, one a line]`), written in plain decimal (no sign,
//!   no leading zero, no digit group separators), so each line is the first with that number
//!   replaced.
//!
//! Lines similar in any other way (the same message with other ids, paths, amounts or timings)
//! are not a run: they are different content, shown or left out as such.

use std::collections::VecDeque;

use super::bytes::{line_end, line_start, without_break};
use std::borrow::Cow;

use super::terminal;

/// The longest block of lines a run of the same lines repeats (a recursion's stack frames).
pub(crate) const MAX_PERIOD: usize = 6;
/// The longest line a stream's run is followed through, in bytes (a longer line ends it).
const LINE_CAP: usize = 2_048;

/// How the lines of a run follow from its first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Every block of `period` lines is the first block again, byte for byte.
    Same { period: usize },
    /// Each line is the one before with its number `index` (0-based, of `numbers` runs of
    /// digits in the line) one more; `first` is that number in the run's first line.
    Count {
        index: usize,
        numbers: usize,
        first: u64,
    },
}

/// A run of lines: how they follow from the first, and how many there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) step: Step,
    /// Lines of the run, its first period included.
    pub(crate) lines: usize,
}

impl Run {
    /// The lines shown before the fold: the repeated block, or the first line of a count.
    pub(crate) fn period(&self) -> usize {
        match self.step {
            Step::Same { period } => period,
            Step::Count { .. } => 1,
        }
    }

    /// The lines the fold stands for.
    pub(crate) fn folded(&self) -> usize {
        self.lines - self.period()
    }
}

/// A line (without its break) as the reader sees it: rendered as a terminal shows it when
/// `render` and it needs it, so a run is lossless for what is shown, not for the raw bytes.
fn view(line: &[u8], render: bool) -> Cow<'_, [u8]> {
    if !render || !terminal::needs_rendering(line) {
        return Cow::Borrowed(line);
    }
    match std::str::from_utf8(line) {
        Ok(text) => match terminal::render(text).0 {
            Cow::Borrowed(text) => Cow::Borrowed(text.as_bytes()),
            Cow::Owned(text) => Cow::Owned(text.into_bytes()),
        },
        Err(_) => Cow::Borrowed(line),
    }
}

/// How one line follows another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    Same,
    /// The number `index` of the first line is `value`, and one more in the second.
    Count {
        index: usize,
        value: u64,
    },
}

/// How `next` follows `line` (both without their line breaks), if it does.
fn link(line: &[u8], next: &[u8]) -> Option<Link> {
    if line == next {
        return Some(Link::Same);
    }
    let differs = line.iter().zip(next).position(|(a, b)| a != b)?;
    // The digits the first difference falls in (or just after: `9` → `10`).
    let start = line[..differs]
        .iter()
        .rposition(|b| !b.is_ascii_digit())
        .map_or(0, |i| i + 1);
    let end = |text: &[u8]| {
        text[start..]
            .iter()
            .position(|b| !b.is_ascii_digit())
            .map_or(text.len(), |i| start + i)
    };
    let (line_end, next_end) = (end(line), end(next));
    if line[line_end..] != next[next_end..] {
        return None;
    }
    let value = plain_number(&line[start..line_end])?;
    let following = plain_number(&next[start..next_end])?;
    if value.checked_add(1) != Some(following) {
        return None;
    }
    Some(Link::Count {
        index: numbers(&line[..start]),
        value,
    })
}

/// The value of a run of digits written in plain decimal: no leading zero (but `0` itself),
/// at most 19 digits.
fn plain_number(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 19 || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// The runs of digits in `text`.
pub(crate) fn numbers(text: &[u8]) -> usize {
    let mut count = 0;
    let mut in_digits = false;
    for byte in text {
        let digit = byte.is_ascii_digit();
        if digit && !in_digits {
            count += 1;
        }
        in_digits = digit;
    }
    count
}

/// Whether `link` continues a run stepping by `step`.
fn continues(step: Step, link: Link) -> bool {
    match (step, link) {
        (Step::Same { period: 1 }, Link::Same) => true,
        (Step::Count { index, .. }, Link::Count { index: at, .. }) => index == at,
        _ => false,
    }
}

/// The step a run whose first two lines are `line` and one linked to it by `link` takes.
fn step_of(line: &[u8], link: Link) -> Step {
    match link {
        Link::Same => Step::Same { period: 1 },
        Link::Count { index, value } => Step::Count {
            index,
            numbers: numbers(line),
            first: value,
        },
    }
}

/// The lines of a region, one after another, as byte ranges.
struct Lines<'a> {
    bytes: &'a [u8],
    at: usize,
    stop: usize,
    forward: bool,
}

impl Iterator for Lines<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        if self.forward {
            if self.at >= self.stop {
                return None;
            }
            let end = line_end(self.bytes, self.at, self.stop);
            let line = (self.at, end);
            self.at = end;
            Some(line)
        } else {
            if self.at <= self.stop {
                return None;
            }
            let start = line_start(self.bytes, self.at, self.stop);
            let line = (start, self.at);
            self.at = start;
            Some(line)
        }
    }
}

/// The run that starts with the line at `at` in `bytes[..limit]`, if one worth a fold line
/// does (two or more lines folded), and the byte after its last line.
///
/// Reads the run once, and at most one line past it (and `2 × MAX_PERIOD` lines ahead to find
/// a block's period).
pub(crate) fn forward(bytes: &[u8], at: usize, limit: usize, render: bool) -> Option<(Run, usize)> {
    let lines = Lines {
        bytes,
        at,
        stop: limit,
        forward: true,
    };
    let (run, span) = find(bytes, lines, true, render)?;
    Some((run, span.1))
}

/// The run that ends with the line that ends at `end` in `bytes[stop..]`, and the byte its
/// first line starts at. The mirror of [`forward`].
pub(crate) fn backward(
    bytes: &[u8],
    end: usize,
    stop: usize,
    render: bool,
) -> Option<(Run, usize)> {
    let lines = Lines {
        bytes,
        at: end,
        stop,
        forward: false,
    };
    let (run, span) = find(bytes, lines, false, render)?;
    Some((run, span.0))
}

/// The run of `lines` (read in order when `forward`, from the end when not): its figures in
/// reading order and its byte span.
fn find(
    bytes: &[u8],
    mut lines: Lines<'_>,
    forward: bool,
    render: bool,
) -> Option<(Run, (usize, usize))> {
    let text = |(start, end): (usize, usize)| view(without_break(&bytes[start..end]), render);
    // In reading order, `earlier` comes before `later`.
    let linked = |a: (usize, usize), b: (usize, usize)| {
        if forward {
            link(&text(a), &text(b))
        } else {
            link(&text(b), &text(a))
        }
    };
    let first = lines.next()?;
    let second = lines.next()?;
    if let Some(link) = linked(first, second) {
        // One line after another: the same, or counting.
        let mut step = step_of(&text(if forward { first } else { second }), link);
        let mut count = 2;
        let mut span = if forward {
            (first.0, second.1)
        } else {
            (second.0, first.1)
        };
        let mut last = second;
        for line in lines.by_ref() {
            match linked(last, line) {
                Some(next) if continues(step, next) => {
                    if !forward
                        && let (Step::Count { first, .. }, Link::Count { value, .. }) =
                            (&mut step, next)
                    {
                        // Read from the end, the run's first number is the earliest seen.
                        *first = value;
                    }
                    count += 1;
                    last = line;
                    if forward {
                        span.1 = line.1;
                    } else {
                        span.0 = line.0;
                    }
                }
                _ => break,
            }
        }
        return (count >= 3).then_some((Run { step, lines: count }, span));
    }
    // A block of several lines repeated: looked for in the next lines, read once (in the text
    // one after another, so one look tells whether any needs rendering).
    let mut read = [first; 2 * MAX_PERIOD];
    read[1] = second;
    let mut filled = 2;
    for (slot, line) in read[2..].iter_mut().zip(lines.by_ref()) {
        *slot = line;
        filled += 1;
    }
    let window = &read[..filled];
    let (low, high) = window
        .iter()
        .fold((usize::MAX, 0), |(low, high), &(start, end)| {
            (low.min(start), high.max(end))
        });
    let plain = !render || !terminal::needs_rendering(&bytes[low..high]);
    let same_in_window = |a: (usize, usize), b: (usize, usize)| {
        if plain {
            without_break(&bytes[a.0..a.1]) == without_break(&bytes[b.0..b.1])
        } else {
            text(a) == text(b)
        }
    };
    let period = (2..=MAX_PERIOD).find(|&p| {
        2 * p <= window.len() && (0..p).all(|i| same_in_window(window[i], window[i + p]))
    })?;
    let same = |a: (usize, usize), b: (usize, usize)| text(a) == text(b);
    let mut count = 2 * period;
    // The last `period` lines read, to compare each next line with the one a period before.
    let mut recent: VecDeque<(usize, usize)> = window[period..2 * period].iter().copied().collect();
    let rest = window[2 * period..].to_vec();
    for line in rest.into_iter().chain(lines) {
        let Some(&before) = recent.front() else {
            break;
        };
        if !same(before, line) {
            break;
        }
        recent.pop_front();
        recent.push_back(line);
        count += 1;
    }
    let count = count - count % period;
    // The byte span of `count` lines from the first.
    let lines_read = Lines {
        bytes,
        at: if forward { first.0 } else { first.1 },
        stop: if forward { bytes.len() } else { 0 },
        forward,
    };
    let last = lines_read.take(count).last()?;
    let span = if forward {
        (first.0, last.1)
    } else {
        (last.0, first.1)
    };
    Some((
        Run {
            step: Step::Same { period },
            lines: count,
        },
        span,
    ))
}

/// A run that a stream's capture followed past the head it keeps: it starts at `first_line`
/// (a line the head holds) and goes on for `run.lines` lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeldRun {
    pub(crate) first_line: usize,
    pub(crate) run: Run,
}

/// Follows the run that the last complete line of a stream's head belongs to through the rest
/// of the stream, in bounded memory (a line and a half), until it ends.
#[derive(Debug)]
pub(crate) struct Follow {
    first_line: usize,
    /// Lines of the run so far, and its step once two lines are known.
    lines: usize,
    step: Option<Step>,
    /// The run's last line, without its break.
    last: Vec<u8>,
    /// The line being read.
    partial: Vec<u8>,
    /// Whether the run ended (or could not be followed).
    ended: bool,
    /// Whether lines are compared as a terminal shows them.
    render: bool,
}

impl Follow {
    /// Starts following from a stream's `head`: the run of its last complete line, with its
    /// start found in the head. `None` when the head has no complete line.
    pub(crate) fn from_head(head: &[u8], render: bool) -> Option<Follow> {
        let complete = super::bytes::after_last_break(head, 0, head.len())?;
        let last_start = line_start(head, complete, 0);
        let last = view(without_break(&head[last_start..complete]), render);
        // The number of the head's last complete line.
        let last_line = memchr::memchr_iter(b'\n', &head[..complete]).count();
        let (first_line, lines, step) = match backward(head, complete, 0, render) {
            // Only single-line steps are followed through a stream.
            Some((run, _)) if run.period() == 1 => {
                (last_line + 1 - run.lines, run.lines, Some(run.step))
            }
            _ => {
                // The line before may start a run the head shows two lines of.
                let before = (last_start > 0).then(|| {
                    let start = line_start(head, last_start, 0);
                    view(without_break(&head[start..last_start]), render)
                });
                match before.and_then(|before| Some(step_of(&before, link(&before, &last)?))) {
                    Some(step) => (last_line - 1, 2, Some(step)),
                    None => (last_line, 1, None),
                }
            }
        };
        Some(Follow {
            first_line,
            lines,
            step,
            last: last.to_vec(),
            partial: head[complete..].to_vec(),
            ended: last.len() > LINE_CAP,
            render,
        })
    }

    /// Whether the run ended: nothing more to read for it.
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// Reads the next bytes of the stream.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        let mut at = 0;
        while !self.ended && at < chunk.len() {
            let Some(i) = memchr::memchr(b'\n', &chunk[at..]) else {
                if self.partial.len() + (chunk.len() - at) > LINE_CAP + 2 {
                    self.ended = true;
                } else {
                    self.partial.extend_from_slice(&chunk[at..]);
                }
                return;
            };
            let end = at + i + 1;
            if self.partial.is_empty() {
                self.take(&chunk[at..end]);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&chunk[at..end]);
                self.take(&line);
            }
            at = end;
        }
    }

    /// Takes one whole line (its break included): the run goes on, or ends before it.
    fn take(&mut self, line: &[u8]) {
        let line = view(without_break(line), self.render);
        if line.len() > LINE_CAP {
            self.ended = true;
            return;
        }
        let Some(next) = link(&self.last, &line) else {
            self.ended = true;
            return;
        };
        match self.step {
            None => self.step = Some(step_of(&self.last, next)),
            Some(step) if continues(step, next) => {}
            Some(_) => {
                self.ended = true;
                return;
            }
        }
        self.lines += 1;
        self.last.clear();
        self.last.extend_from_slice(&line);
    }

    /// Ends the stream (its last line, without a break, taken as any other): the run, when
    /// it is worth a fold line.
    pub(crate) fn finish(mut self) -> Option<HeldRun> {
        if !self.ended && !self.partial.is_empty() {
            let last = std::mem::take(&mut self.partial);
            self.take(&last);
        }
        let step = self.step?;
        (self.lines >= 3).then_some(HeldRun {
            first_line: self.first_line,
            run: Run {
                step,
                lines: self.lines,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of(text: &str) -> Option<(Run, usize)> {
        forward(text.as_bytes(), 0, text.len(), false)
    }

    #[test]
    fn a_count_is_one_number_going_up_by_one() {
        let (run, end) = run_of("1\n2\n3\n4\nx\n").unwrap();
        assert_eq!(
            run,
            Run {
                step: Step::Count {
                    index: 0,
                    numbers: 1,
                    first: 1
                },
                lines: 4
            }
        );
        assert_eq!(end, 8);
        let (run, _) =
            run_of("test a::t9 ... ok 3ms\ntest a::t10 ... ok 3ms\ntest a::t11 ... ok 3ms\n")
                .unwrap();
        assert_eq!(
            run.step,
            Step::Count {
                index: 0,
                numbers: 2,
                first: 9
            }
        );
        // Two numbers changing, a step of two, a leading zero, other digits: not a count.
        assert_eq!(run_of("1 1\n2 2\n3 3\n"), None);
        assert_eq!(run_of("1\n3\n5\n"), None);
        assert_eq!(run_of("08\n09\n10\n"), None);
        assert_eq!(run_of("t1 ok 5ms\nt2 ok 9ms\nt3 ok 1ms\n"), None);
        assert_eq!(
            run_of("1\n2\n"),
            None,
            "one line folded is not worth a fold line"
        );
    }

    #[test]
    fn the_same_lines_repeat_alone_or_as_a_block() {
        let (run, _) = run_of("a\na\na\nb\n").unwrap();
        assert_eq!(run.step, Step::Same { period: 1 });
        assert_eq!(run.lines, 3);
        let (run, end) = run_of("f\ng\nf\ng\nf\ng\nf\nend\n").unwrap();
        assert_eq!(run.step, Step::Same { period: 2 });
        assert_eq!(run.lines, 6, "whole blocks only");
        assert_eq!(end, 12);
        assert_eq!(run_of("a\nb\nc\nd\n"), None);
    }

    #[test]
    fn a_block_repeats_as_the_reader_sees_it() {
        let rendered = |text: &str| forward(text.as_bytes(), 0, text.len(), true);
        // Colours in the first lines only: the blocks are the same on screen.
        let text = "\x1b[32mok\x1b[0m\nwait\nok\nwait\nok\nwait\nend\n";
        let (run, _) = rendered(text).unwrap();
        assert_eq!((run.step, run.lines), (Step::Same { period: 2 }, 6));
        assert_eq!(run_of(text), None, "raw, the first block differs");
        // Windows line breaks are not a rendering's business.
        let (run, _) = rendered("f\r\ng\r\nf\r\ng\r\nf\r\ng\r\nend\r\n").unwrap();
        assert_eq!((run.step, run.lines), (Step::Same { period: 2 }, 6));
        // Plain lines where the period is found, a coloured one after them still continues it.
        let mut text = "f\ng\n".repeat(6);
        text.push_str("\x1b[1mf\x1b[0m\ng\nend\n");
        let (run, _) = rendered(&text).unwrap();
        assert_eq!((run.step, run.lines), (Step::Same { period: 2 }, 14));
        let (run, _) = run_of(&text).unwrap();
        assert_eq!(run.lines, 12, "raw, the coloured line ends it");
    }

    #[test]
    fn read_from_the_end_a_run_is_the_same_run() {
        let text = "x\n5\n6\n7\n8\n";
        let (run, start) = backward(text.as_bytes(), text.len(), 0, false).unwrap();
        assert_eq!(start, 2);
        assert_eq!(
            run.step,
            Step::Count {
                index: 0,
                numbers: 1,
                first: 5
            }
        );
        assert_eq!(run.lines, 4);
        let text = "x\nf\ng\nf\ng\nf\ng\n";
        let (run, start) = backward(text.as_bytes(), text.len(), 0, false).unwrap();
        assert_eq!(
            (run.step, run.lines, start),
            (Step::Same { period: 2 }, 6, 2)
        );
    }

    #[test]
    fn a_stream_s_run_is_followed_past_its_head() {
        let mut follow = Follow::from_head(b"$ seq\n1\n2\n3\n4", false).unwrap();
        follow.push(b"\n5\n6\n");
        follow.push(b"7\n8");
        let held = follow.finish().unwrap();
        assert_eq!(held.first_line, 2);
        assert_eq!(held.run.lines, 8);
        // A line that breaks the count ends it; what follows does not matter.
        let mut follow = Follow::from_head(b"a\n1\n2\n", false).unwrap();
        follow.push(b"3\nb\n4\n");
        assert!(follow.ended());
        assert_eq!(follow.finish().unwrap().run.lines, 3);
        // A head whose last line starts a count that only the stream shows.
        let mut follow = Follow::from_head(b"a\n1\n", false).unwrap();
        follow.push(b"2\n3\n");
        let held = follow.finish().unwrap();
        assert_eq!((held.first_line, held.run.lines), (2, 3));
    }
}
