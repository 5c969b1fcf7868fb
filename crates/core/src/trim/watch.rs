//! The salient lines of a stream's middle, kept as the stream passes: a capture holds a stream's
//! head and tail in memory and nothing of its middle, so what a cut would keep from the middle
//! ([`Excerpt`](super::salience::Excerpt)s) is gathered on the way, in bounded memory.
//!
//! Each chunk is searched for the salient patterns as a whole (a line at a time only for the
//! lines of an excerpt being gathered); the line a chunk ends inside, and the one before it, are
//! carried to the next chunk, each cut to [`LINE_CAP`] bytes.

use std::borrow::Cow;
use std::collections::VecDeque;

use aho_corasick::AhoCorasick;

use super::fold;
use super::keep::HeldExcerpt;

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
    automaton: Cow<'static, AhoCorasick>,
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
    first: Vec<HeldExcerpt>,
    latest: VecDeque<HeldExcerpt>,
    half: usize,
    held_bytes: usize,
    max_bytes: usize,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("line", &self.line)
            .field("excerpts", &(self.first.len() + self.latest.len()))
            .finish_non_exhaustive()
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
    /// Watches with `automaton`, keeping at most `max_excerpts` excerpts of at most `max_bytes`
    /// bytes of text in all.
    pub(crate) fn new(
        automaton: Cow<'static, AhoCorasick>,
        max_excerpts: usize,
        max_bytes: usize,
    ) -> Self {
        Watch {
            automaton,
            line: 1,
            partial: Vec::new(),
            previous: Vec::new(),
            previous_kept: false,
            open: None,
            seam: Vec::new(),
            first: Vec::new(),
            latest: VecDeque::new(),
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
            if let Some(i) = memchr::memrchr(b'\n', &chunk[at..hit]) {
                // The lines up to the matched one are passed over; the last becomes `previous`.
                let line_start = at + i + 1;
                self.pass_lines(chunk, at, line_start);
                at = line_start;
            }
            self.open();
        }
        if self.open.is_none() && at < chunk.len() {
            // Carry the line in progress (and the one before it) to the next chunk.
            match memchr::memrchr(b'\n', &chunk[at..]) {
                Some(i) => {
                    let line_start = at + i + 1;
                    self.pass_lines(chunk, at, line_start);
                    self.extend_partial(&chunk[line_start..]);
                }
                None => self.extend_partial(&chunk[at..]),
            }
        } else if at < chunk.len() {
            // An open excerpt waits for the end of its line.
            self.extend_partial(&chunk[at..]);
        }
        self.seam.clear();
        self.seam
            .extend_from_slice(&chunk[chunk.len().saturating_sub(SEAM - 1)..]);
    }

    /// Where the matches in `chunk` are (and one that straddles the seam with the chunk before).
    fn hits(&mut self, chunk: &[u8]) -> Vec<usize> {
        let mut hits = Vec::new();
        if !self.seam.is_empty() {
            let mut seam = std::mem::take(&mut self.seam);
            let seam_len = seam.len();
            seam.extend_from_slice(&chunk[..chunk.len().min(SEAM)]);
            if let Some(hit) = self
                .automaton
                .find_iter(&seam[..])
                .find(|hit| hit.start() < seam_len && hit.end() > seam_len)
            {
                // The match's line in the chunk (or the one it started on, carried).
                hits.push(hit.end().saturating_sub(seam_len + 1));
            }
        }
        hits.extend(self.automaton.find_iter(chunk).map(|hit| {
            // A pattern that starts with its line break matches the next line.
            if chunk[hit.start()] == b'\n' {
                hit.start() + 1
            } else {
                hit.start()
            }
        }));
        hits
    }

    /// Passes over the complete lines of `chunk[at..line_start]` (the first perhaps begun in
    /// `partial`), keeping the last as `previous`.
    fn pass_lines(&mut self, chunk: &[u8], at: usize, line_start: usize) {
        self.line += memchr::memchr_iter(b'\n', &chunk[at..line_start]).count();
        let before_start = memchr::memrchr(b'\n', &chunk[at..line_start - 1]).map(|i| at + i + 1);
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
        let mut line = self.partial.clone();
        line.extend_from_slice(cap(&chunk[at..end], &line));
        let mut open = self.open.take()?;
        match open.block_lines {
            None => {
                // The salient line.
                let content = trim_break(&line);
                open.opens = content.ends_with(b":");
                open.closed = !open.opens;
                open.block_lines = Some(0);
                open.excerpt.group = fold::signature(content);
            }
            Some(block) => {
                let ends = is_blank(&line)
                    || block >= MAX_BLOCK_LINES
                    || (!continues(&line) && open.closed);
                if ends {
                    // This line is not the block's: it may open an excerpt of its own, so it is
                    // looked at again, its beginning still in `partial`.
                    self.close(open);
                    return Some(at);
                }
                if !continues(&line) {
                    open.closed = true;
                }
                open.block_lines = Some(block + 1);
            }
        }
        open.excerpt.text.push_str(&String::from_utf8_lossy(&line));
        open.excerpt.lines += 1;
        self.open = Some(open);
        self.partial.clear();
        self.previous = line;
        self.previous_kept = true;
        self.line += 1;
        Some(end)
    }

    /// Keeps a gathered excerpt, within the bounds.
    fn close(&mut self, open: Open) {
        let excerpt = open.excerpt;
        if excerpt.lines == 0 {
            return;
        }
        if self.first.len() < self.half && self.held_bytes + excerpt.text.len() <= self.max_bytes {
            self.held_bytes += excerpt.text.len();
            self.first.push(excerpt);
            return;
        }
        self.held_bytes += excerpt.text.len();
        self.latest.push_back(excerpt);
        while self.latest.len() > self.half
            || (self.held_bytes > 2 * self.max_bytes && !self.latest.is_empty())
        {
            if let Some(dropped) = self.latest.pop_front() {
                self.held_bytes -= dropped.text.len();
            }
        }
    }

    /// Ends the stream: the excerpts gathered, in order.
    pub(crate) fn finish(mut self) -> Vec<HeldExcerpt> {
        if let Some(mut open) = self.open.take() {
            // The stream's last line, without a line break, belongs to the excerpt it ends.
            let line = std::mem::take(&mut self.partial);
            let takes = match open.block_lines {
                None => true,
                Some(_) => !line.is_empty() && continues(&line),
            };
            if takes && !line.is_empty() {
                if open.block_lines.is_none() {
                    open.excerpt.group = fold::signature(trim_break(&line));
                }
                open.excerpt.text.push_str(&String::from_utf8_lossy(&line));
                open.excerpt.lines += 1;
            }
            if open.block_lines.is_some() || takes {
                self.close(open);
            }
        }
        let mut all = self.first;
        all.extend(self.latest);
        all
    }
}

/// What of `more` a line that already has `so_far` bytes may still take.
fn cap<'a>(more: &'a [u8], so_far: &[u8]) -> &'a [u8] {
    &more[..more.len().min(LINE_CAP.saturating_sub(so_far.len()))]
}

fn trim_break(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn is_blank(line: &[u8]) -> bool {
    trim_break(line).iter().all(u8::is_ascii_whitespace)
}

/// Whether a line continues the block above it (as for a text).
fn continues(line: &[u8]) -> bool {
    if matches!(line.first(), Some(b' ' | b'\t')) {
        return true;
    }
    let digits = line.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && line[digits..].trim_ascii_start().starts_with(b"|")
}
