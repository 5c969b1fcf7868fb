//! The salient lines of a stream's middle, kept as the stream passes: a capture holds a stream's
//! head and tail in memory and nothing of its middle, so what a cut would keep from the middle
//! ([`Excerpt`](super::salience::Excerpt)s) is gathered on the way, in bounded memory.
//!
//! Each chunk is searched for the salient patterns as a whole (a line at a time only for the
//! lines of an excerpt being gathered); the line a chunk ends inside, and the one before it, are
//! carried to the next chunk, each cut to [`LINE_CAP`] bytes.

use std::collections::VecDeque;

use super::bytes::{after_last_break, is_blank, without_break};
use super::keep::HeldExcerpt;
use super::salience::{self, Searcher, continues};
use super::signature::signature;

/// The most bytes of one line an excerpt keeps; the rest of a longer line is dropped from the
/// excerpt (the artifact has it).
const LINE_CAP: usize = 2_048;
/// The most lines an excerpt's block runs on after its line (as for a text).
const MAX_BLOCK_LINES: usize = 64;
/// The longest pattern a match can straddle two chunks with, in bytes.
const SEAM: usize = 64;

/// Gathers the excerpts of the bytes it is shown, keeping the first `half` and the latest
/// `half`, in at most `max_bytes` of text each side.
pub(crate) struct Watch {
    searcher: Searcher,
    /// The number of the line `partial` belongs to.
    line: usize,
    /// The line being read, up to the chunk's end (at most `LINE_CAP` bytes of it).
    partial: Vec<u8>,
    /// The last complete line (at most `LINE_CAP` bytes), for context; empty at the start.
    previous: Vec<u8>,
    /// Whether the previous line is part of an excerpt already.
    previous_kept: bool,
    /// The excerpt being gathered, line by line.
    open: Option<Open>,
    /// The end of the last chunk, for a match that straddles two.
    seam: Vec<u8>,
    /// The excerpts of errors kept; a flood of warnings never pushes one out.
    errors: Kept,
    /// The excerpts of warnings kept, at most half as many as of errors.
    warnings: Kept,
    half: usize,
    held_bytes: usize,
    max_bytes: usize,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("line", &self.line)
            .field("excerpts", &(self.errors.len() + self.warnings.len()))
            .finish_non_exhaustive()
    }
}

/// The first excerpts of a tier and the latest.
#[derive(Default)]
struct Kept {
    first: Vec<HeldExcerpt>,
    latest: VecDeque<HeldExcerpt>,
}

impl Kept {
    fn len(&self) -> usize {
        self.first.len() + self.latest.len()
    }
}

/// An excerpt still taking lines.
struct Open {
    excerpt: HeldExcerpt,
    /// Whether the salient line ends with `:`: the block then takes one unindented line too.
    opens: bool,
    closed: bool,
    /// The block's lines so far; `None` until the salient line itself is taken.
    block_lines: Option<usize>,
}

impl Watch {
    /// Watches with `searcher`, keeping at most `max_excerpts` excerpts of at most `max_bytes`
    /// bytes of text in all.
    pub(crate) fn new(searcher: Searcher, max_excerpts: usize, max_bytes: usize) -> Self {
        Watch {
            searcher,
            line: 1,
            partial: Vec::new(),
            previous: Vec::new(),
            previous_kept: false,
            open: None,
            seam: Vec::new(),
            errors: Kept::default(),
            warnings: Kept::default(),
            half: (max_excerpts / 2).max(1),
            held_bytes: 0,
            max_bytes,
        }
    }

    /// Watches the next bytes of the stream (which continue the ones before).
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        let mut hits = self.hits(chunk).into_iter().peekable();
        let mut at = 0;
        while at < chunk.len() {
            if self.open.is_some() {
                match self.take_line(chunk, at) {
                    Some(next) => at = next,
                    // The line goes on in the next chunk.
                    None => break,
                }
                continue;
            }
            // The next match at or after `at` opens an excerpt at its line.
            let Some(hit) = hits.next() else { break };
            if hit < at {
                continue;
            }
            if let Some(line_start) = after_last_break(chunk, at, hit) {
                // The lines up to the matched one are passed over; the last becomes `previous`.
                self.pass_lines(chunk, at, line_start);
                at = line_start;
            }
            self.open();
        }
        if self.open.is_none() && at < chunk.len() {
            // Carry the line in progress (and the one before it) to the next chunk.
            match after_last_break(chunk, at, chunk.len()) {
                Some(line_start) => {
                    self.pass_lines(chunk, at, line_start);
                    self.extend_partial(&chunk[line_start..]);
                }
                None => self.extend_partial(&chunk[at..]),
            }
        } else if at < chunk.len() {
            // An open excerpt waits for the end of its line.
            self.extend_partial(&chunk[at..]);
        }
        // The stream's last bytes, whichever chunks they came in.
        self.seam
            .extend_from_slice(&chunk[chunk.len().saturating_sub(SEAM - 1)..]);
        let excess = self.seam.len().saturating_sub(SEAM - 1);
        self.seam.drain(..excess);
    }

    /// Where the matches in `chunk` are (and one that straddles the seam with the chunk before).
    fn hits(&mut self, chunk: &[u8]) -> Vec<usize> {
        let mut hits = Vec::new();
        let mut found = Vec::new();
        if !self.seam.is_empty() {
            let mut seam = self.seam.clone();
            let seam_len = seam.len();
            seam.extend_from_slice(&chunk[..chunk.len().min(SEAM)]);
            self.searcher.find(&seam, 0..seam_len, &mut found);
            if let Some(hit) = found.iter().find(|hit| hit.end > seam_len) {
                // The match's line in the chunk (or the one it started on, carried).
                hits.push(hit.end.saturating_sub(seam_len + 1));
            }
            found.clear();
        }
        self.searcher.find(chunk, 0..chunk.len(), &mut found);
        hits.extend(found.into_iter().map(|hit| {
            // A pattern that starts with its line break matches the next line.
            if chunk[hit.start] == b'\n' {
                hit.start + 1
            } else {
                hit.start
            }
        }));
        hits
    }

    /// Passes over the complete lines of `chunk[at..line_start]` (the first perhaps begun in
    /// `partial`), keeping the last as `previous`.
    fn pass_lines(&mut self, chunk: &[u8], at: usize, line_start: usize) {
        self.line += memchr::memchr_iter(b'\n', &chunk[at..line_start]).count();
        let before_start = after_last_break(chunk, at, line_start - 1);
        match before_start {
            Some(start) => {
                self.previous.clear();
                self.previous
                    .extend_from_slice(cap(&chunk[start..line_start], &[]));
                self.partial.clear();
            }
            None => {
                // The line before is the one in progress: it ends here.
                let rest = cap(&chunk[at..line_start], &self.partial).to_vec();
                self.partial.extend_from_slice(&rest);
                self.previous = std::mem::take(&mut self.partial);
            }
        }
        self.previous_kept = false;
    }

    fn extend_partial(&mut self, more: &[u8]) {
        let kept = cap(more, &self.partial).to_vec();
        self.partial.extend_from_slice(&kept);
    }

    /// Opens an excerpt at the line in progress (its salient line): the line before it first,
    /// for context, unless it is blank or already kept.
    fn open(&mut self) {
        let mut excerpt = HeldExcerpt {
            first_line: self.line,
            lines: 0,
            text: String::new(),
            group: 0,
            tier: salience::Tier::Error,
        };
        if !self.previous.is_empty() && !self.previous_kept && !is_blank(&self.previous) {
            excerpt.text = String::from_utf8_lossy(&self.previous).into_owned();
            excerpt.first_line -= 1;
            excerpt.lines = 1;
        }
        self.open = Some(Open {
            excerpt,
            opens: false,
            closed: true,
            block_lines: None,
        });
    }

    /// Takes the line that starts at `at` (its beginning perhaps in `partial`) into the open
    /// excerpt, or closes the excerpt before it; returns where the next line to look at starts,
    /// `None` when the line goes on past the chunk.
    fn take_line(&mut self, chunk: &[u8], at: usize) -> Option<usize> {
        let end = at + memchr::memchr(b'\n', &chunk[at..])? + 1;
        let mut line = std::mem::take(&mut self.partial);
        line.extend_from_slice(cap(&chunk[at..end], &line));
        self.take(line);
        Some(end)
    }

    /// Takes a whole line into the open excerpt: its salient line, a line of its block, or the
    /// line after the block, which closes it (and opens an excerpt of its own when salient).
    fn take(&mut self, line: Vec<u8>) {
        let Some(mut open) = self.open.take() else {
            return;
        };
        if let Some(block) = open.block_lines {
            let ends =
                is_blank(&line) || block >= MAX_BLOCK_LINES || (!continues(&line) && open.closed);
            if ends {
                self.close(open);
                if self.is_salient(&line) {
                    self.open();
                    self.take(line);
                } else {
                    self.previous = line;
                    self.previous_kept = false;
                    self.line += 1;
                }
                return;
            }
            if !continues(&line) {
                open.closed = true;
            }
            open.block_lines = Some(block + 1);
        } else {
            // The salient line.
            let content = without_break(&line);
            open.opens = content.ends_with(b":");
            open.closed = !open.opens;
            open.block_lines = Some(0);
            open.excerpt.group = signature(content);
            open.excerpt.tier = salience::tier_of_line(content);
        }
        open.excerpt.text.push_str(&String::from_utf8_lossy(&line));
        open.excerpt.lines += 1;
        self.open = Some(open);
        self.previous = line;
        self.previous_kept = true;
        self.line += 1;
    }

    /// Whether a whole line holds a salient pattern (one that starts with a line break matches
    /// at its beginning).
    fn is_salient(&self, line: &[u8]) -> bool {
        let mut probe = Vec::with_capacity(line.len() + 1);
        probe.push(b'\n');
        probe.extend_from_slice(line);
        self.searcher.is_match(&probe[..])
    }

    /// Keeps a gathered excerpt, within the bounds.
    fn close(&mut self, open: Open) {
        let excerpt = open.excerpt;
        if excerpt.lines == 0 {
            return;
        }
        let (kept, half) = match excerpt.tier {
            salience::Tier::Error => (&mut self.errors, self.half),
            salience::Tier::Warning | salience::Tier::Rare => {
                (&mut self.warnings, (self.half / 2).max(1))
            }
        };
        if kept.first.len() < half && self.held_bytes + excerpt.text.len() <= self.max_bytes {
            self.held_bytes += excerpt.text.len();
            kept.first.push(excerpt);
            return;
        }
        self.held_bytes += excerpt.text.len();
        kept.latest.push_back(excerpt);
        while kept.latest.len() > half {
            if let Some(dropped) = kept.latest.pop_front() {
                self.held_bytes -= dropped.text.len();
            }
        }
        // Over the bytes, the warnings go first.
        while self.held_bytes > 2 * self.max_bytes {
            let Some(dropped) =
                (self.warnings.latest.pop_front()).or_else(|| self.errors.latest.pop_front())
            else {
                break;
            };
            self.held_bytes -= dropped.text.len();
        }
    }

    /// Ends the stream: the excerpts gathered, in order.
    pub(crate) fn finish(mut self) -> Vec<HeldExcerpt> {
        // The stream's last line, without a line break, is taken as any other.
        let last = std::mem::take(&mut self.partial);
        if self.open.is_some() && !last.is_empty() {
            self.take(last);
        }
        if let Some(open) = self.open.take()
            && open.block_lines.is_some()
        {
            self.close(open);
        }
        let mut all = self.errors.first;
        all.extend(self.errors.latest);
        all.extend(self.warnings.first);
        all.extend(self.warnings.latest);
        all.sort_by_key(|excerpt| excerpt.first_line);
        all
    }
}

/// What of `more` a line that already has `so_far` bytes may still take.
fn cap<'a>(more: &'a [u8], so_far: &[u8]) -> &'a [u8] {
    &more[..more.len().min(LINE_CAP.saturating_sub(so_far.len()))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trim::salience;

    /// What a scan of the text by its patterns finds (as of a text too long to be read whole,
    /// the only kind whose middle is watched), as the watch holds it.
    fn scanned(text: &str) -> Vec<(usize, usize, String)> {
        salience::scan_as(
            text,
            0..text.len(),
            1,
            salience::Found::Search(&Searcher::Default),
            usize::MAX,
            false,
        )
        .into_iter()
        .map(|e| (e.first_line, e.lines, text[e.bytes].to_owned()))
        .collect()
    }

    fn watched(text: &str, chunk: usize) -> Vec<(usize, usize, String)> {
        let mut watch = Watch::new(Searcher::Default, usize::MAX, usize::MAX);
        for piece in text.as_bytes().chunks(chunk.max(1)) {
            watch.push(piece);
        }
        watch
            .finish()
            .into_iter()
            .map(|e| (e.first_line, e.lines, e.text))
            .collect()
    }

    #[test]
    fn a_stream_watched_in_chunks_finds_what_a_scan_of_it_finds() {
        let text = "test tests::case_9 ... ok\n\nfailures:\n\n---- tests::broken stdout \
                    ----\nthread 'tests::broken' panicked at alpha/src/lib.rs:405:54:\n\
                    assertion `left == right` failed: the total\n  left: 5\n right: 4\n\n\
                    test result: FAILED. 400 passed; 1 failed\n\nerror: test failed, to rerun\n     \
                    Running unittests src/lib.rs\n\nrunning 400 tests\ntest tests::case_1 ... ok\n";
        let expected = scanned(text);
        assert_eq!(expected.len(), 3, "{expected:#?}");
        for chunk in [1, 2, 3, 7, 16, 64, 1_000] {
            assert_eq!(watched(text, chunk), expected, "chunks of {chunk}");
        }
    }

    proptest::proptest! {
        #[test]
        fn watching_agrees_with_scanning(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => "[a-z ]{0,20}",
                    1 => proptest::strategy::Just("error: it broke".to_owned()),
                    1 => proptest::strategy::Just("Traceback (most recent call last):".to_owned()),
                    1 => proptest::strategy::Just("  File \"x.py\", line 2".to_owned()),
                    1 => proptest::strategy::Just("ValueError: bad".to_owned()),
                    1 => proptest::strategy::Just("test x ... FAILED".to_owned()),
                    1 => proptest::strategy::Just("E   assert 1 == 2".to_owned()),
                    1 => proptest::strategy::Just(String::new()),
                ],
                0..60,
            ),
            end_with_newline in proptest::bool::ANY,
            chunk in 1usize..50,
        ) {
            let mut text = lines.join("\n");
            if end_with_newline {
                text.push('\n');
            }
            proptest::prop_assert_eq!(watched(&text, chunk), scanned(&text));
        }
    }
}
