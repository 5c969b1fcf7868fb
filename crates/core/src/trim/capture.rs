//! Capturing a stream of output in bounded memory: a head, a tail, and exact totals.

use std::fmt;
use std::io::{self, Write};

use super::keep::{HeldExcerpt, Source};
use super::positional::{cut_points, tiny};
use super::runs::{Follow, HeldRun};
use super::watch::Watch;
use super::{Continuation, Totals, TrimStyle, Trimmed};

/// The most salient parts of a stream a capture holds: the first and the latest half.
const MAX_HELD: usize = 64;

/// Opens the sink the full stream is spooled to, called the first time the stream outgrows
/// what the capture keeps in memory.
pub(crate) type OpenSpool = Box<dyn FnOnce() -> io::Result<Box<dyn Spool>> + Send>;

/// Where a capture spools a stream that outgrew it: bytes written, or a chunk handed over
/// whole (no copy) where the spool can take it.
pub(crate) trait Spool: Write + Send {
    /// Writes `chunk`, taking it.
    fn write_owned(&mut self, chunk: Vec<u8>) -> io::Result<()> {
        self.write_all(&chunk)
    }
}

/// A stream's output, captured in memory bounded by the largest allowance it could be shown in.
///
/// The capture keeps the first bytes (the head) and the last (the tail) of a stream, each up to
/// four bytes per char of `max_chars` (enough for any cut into `max_chars` chars), and counts
/// the chars and lines of all of it exactly. As long as the whole stream fits the head, nothing
/// is dropped and [`finish`](Self::finish) gives it back whole. The first time it does not, the
/// capture opens its spool (when it was given one, see [`spool_on_overflow`](Self::spool_on_overflow)),
/// writes everything it holds to it, and from then on writes every chunk to it as it arrives:
/// the spool receives the full stream, byte for byte, while memory stays bounded.
///
/// The capture does no I/O of its own: it writes to whatever sink it is handed (the registry
/// hands it an artifact writer), and chunks may split a char anywhere.
pub(crate) struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    tail: Vec<u8>,
    tail_cap: usize,
    /// The byte just before the kept tail, once bytes were dropped.
    before_tail: Option<u8>,
    dropped: u64,
    totals: Totals,
    last_byte: Option<u8>,
    open_spool: Option<OpenSpool>,
    spool: Option<Box<dyn Spool>>,
    spool_error: Option<String>,
    /// Gathers the salient lines of the stream, which a cut keeps from the middle it drops.
    watch: Option<Watch>,
    /// Follows the lossless run the head's last line belongs to past the head, once the
    /// stream outgrows it, so a cut can fold all of it.
    follow: Option<Follow>,
    /// The run followed, once it ended.
    held_run: Option<HeldRun>,
    /// Whether the stream outgrew the head (and following began).
    followed: bool,
    /// Whether lossless runs are followed, and whether their lines are compared rendered.
    follow_runs: Option<bool>,
}

impl fmt::Debug for Capture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capture")
            .field("head_bytes", &self.head.len())
            .field("tail_bytes", &self.tail.len())
            .field("dropped", &self.dropped)
            .field("totals", &self.totals)
            .field("spooling", &self.spool.is_some())
            .finish_non_exhaustive()
    }
}

impl Capture {
    /// A capture for a stream that will be shown in at most `max_chars` chars.
    pub(crate) fn new(max_chars: usize) -> Self {
        // Four bytes per char is the most UTF-8 takes; a char more for a cut mid-char.
        let cap = max_chars.saturating_add(1).saturating_mul(4);
        Capture {
            head: Vec::new(),
            // A stream up to what the salience reads whole is kept whole: its cut reads what
            // stands out in it as a text's does.
            head_cap: cap.max(super::salience::WHOLE_BYTES),
            tail: Vec::new(),
            tail_cap: cap,
            before_tail: None,
            dropped: 0,
            totals: Totals::default(),
            last_byte: None,
            open_spool: None,
            spool: None,
            spool_error: None,
            watch: None,
            follow: None,
            held_run: None,
            followed: false,
            follow_runs: None,
        }
    }

    /// Gathers what a cut in `style` keeps from a middle it does not hold: the stream's salient
    /// lines as it passes (see [`Salience`](super::Salience); at most 64 parts, in about as much
    /// memory as the tail: what a cut of the allowance can show, however large the head kept
    /// to read a short stream whole), and, when the style folds, the lossless run of the head's
    /// last line followed past the head (a line and a half of memory).
    #[must_use]
    pub(crate) fn keeping(mut self, style: &TrimStyle) -> Self {
        self.watch = super::salience::searcher(style.salience)
            .map(|searcher| Watch::new(searcher, MAX_HELD, self.tail_cap));
        self.follow_runs = style.fold.then_some(style.render != super::Render::Never);
        self
    }

    /// Spools the full stream to the sink `open` returns, opened the first time the stream
    /// outgrows the head. A failure to open or write is recorded (see
    /// [`CapturedParts::spool_error`]) and the capture goes on without a spool.
    #[must_use]
    pub(crate) fn spool_on_overflow(mut self, open: OpenSpool) -> Self {
        self.open_spool = Some(open);
        self
    }

    /// Takes the next chunk of the stream.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        if let Some(watch) = &mut self.watch {
            watch.push(chunk);
        }
        self.totals.add_chunk(chunk);
        self.last_byte = chunk.last().copied();
        let to_head = chunk.len().min(self.head_cap - self.head.len());
        let rest = &chunk[to_head..];
        if self.spool.is_none()
            && !rest.is_empty()
            && let Some(open) = self.open_spool.take()
        {
            // The stream no longer fits: from here on, the spool gets all of it.
            match open() {
                Ok(mut spool) => match spool.write_all(&self.head).and_then(|()| {
                    spool.write_all(&self.tail) // empty: the tail only starts now
                }) {
                    Ok(()) => self.spool = Some(spool),
                    Err(error) => self.spool_error = Some(error.to_string()),
                },
                Err(error) => self.spool_error = Some(error.to_string()),
            }
            if let Some(spool) = &mut self.spool
                && let Err(error) = spool.write_all(&chunk[..to_head])
            {
                self.spool_error = Some(error.to_string());
                self.spool = None;
            }
        } else if let Some(spool) = &mut self.spool
            && let Err(error) = spool.write_all(&chunk[..to_head])
        {
            self.spool_error = Some(error.to_string());
            self.spool = None;
        }
        self.head.extend_from_slice(&chunk[..to_head]);
        if rest.is_empty() {
            return;
        }
        self.follow_run(rest);
        if let Some(spool) = &mut self.spool
            && let Err(error) = spool.write_all(rest)
        {
            self.spool_error = Some(error.to_string());
            self.spool = None;
        }
        self.keep_tail(rest);
    }

    /// Takes the next chunk of the stream, as [`push`](Self::push) does; once the head is full
    /// and the stream spools, the chunk itself goes to the spool, not a copy of it.
    pub(crate) fn push_owned(&mut self, chunk: Vec<u8>) {
        if chunk.is_empty() || self.head.len() < self.head_cap || self.spool.is_none() {
            self.push(&chunk);
            return;
        }
        if let Some(watch) = &mut self.watch {
            watch.push(&chunk);
        }
        self.totals.add_chunk(&chunk);
        self.last_byte = chunk.last().copied();
        self.follow_run(&chunk);
        self.keep_tail(&chunk);
        if let Some(spool) = &mut self.spool
            && let Err(error) = spool.write_owned(chunk)
        {
            self.spool_error = Some(error.to_string());
            self.spool = None;
        }
    }

    /// Follows the head's last run through `rest`, bytes past the head: started the first time
    /// the stream outgrows the head, dropped (its run held) once the run ends.
    fn follow_run(&mut self, rest: &[u8]) {
        if !self.followed {
            self.followed = true;
            self.follow = self
                .follow_runs
                .and_then(|render| Follow::from_head(&self.head, render));
        }
        if let Some(follow) = &mut self.follow {
            follow.push(rest);
            if follow.ended() {
                self.end_follow();
            }
        }
    }

    /// Ends following: the run, when it is worth folding, is held for the cut.
    fn end_follow(&mut self) {
        if let Some(follow) = self.follow.take() {
            self.held_run = follow.finish();
        }
    }

    /// Keeps the end of `rest`, what came after the head, as the tail.
    fn keep_tail(&mut self, rest: &[u8]) {
        if rest.len() >= self.tail_cap {
            // The whole tail comes from this chunk: copy only what is kept.
            let keep_from = rest.len() - self.tail_cap;
            self.dropped += (self.tail.len() + keep_from) as u64;
            self.before_tail = match keep_from {
                0 => self.tail.last().copied().or(self.before_tail),
                _ => Some(rest[keep_from - 1]),
            };
            self.tail.clear();
            self.tail.extend_from_slice(&rest[keep_from..]);
        } else {
            self.tail.extend_from_slice(rest);
            if self.tail.len() >= 2 * self.tail_cap {
                self.compact_tail();
            }
        }
    }

    /// The last byte pushed, if any.
    pub(crate) fn last_byte(&self) -> Option<u8> {
        self.last_byte
    }

    /// Whether the stream outgrew the head, so that only its head and tail are kept.
    pub(crate) fn overflowed(&self) -> bool {
        !self.tail.is_empty() || self.dropped > 0
    }

    fn compact_tail(&mut self) {
        if self.tail.len() > self.tail_cap {
            let excess = self.tail.len() - self.tail_cap;
            self.before_tail = Some(self.tail[excess - 1]);
            self.dropped += excess as u64;
            self.tail.drain(..excess);
        }
    }

    /// Ends the stream: the whole text when it fit the head, else its parts. The spool, if
    /// one was opened, is flushed and dropped (which is how its owner learns the stream ended).
    pub(crate) fn finish(mut self) -> Captured {
        self.compact_tail();
        self.end_follow();
        self.totals.finish_lines(self.last_byte);
        if let Some(mut spool) = self.spool.take()
            && let Err(error) = spool.flush()
        {
            self.spool_error = Some(error.to_string());
        }
        if !self.overflowed() {
            return Captured::Whole(match String::from_utf8(self.head) {
                Ok(text) => text,
                Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
            });
        }
        // The head ends on a whole char; the tail starts on one.
        let head_end = match std::str::from_utf8(&self.head) {
            Ok(_) => self.head.len(),
            Err(error) if error.error_len().is_none() => error.valid_up_to(),
            Err(_) => self.head.len(),
        };
        let tail_start = self
            .tail
            .iter()
            .position(|&b| (b & 0xC0) != 0x80)
            .unwrap_or(self.tail.len());
        let before = if self.dropped == 0 {
            self.head.last().copied()
        } else {
            self.before_tail
        };
        let tail_starts_line = tail_start == 0 && before.is_none_or(|b| b == b'\n');
        let held = self.watch.take().map(Watch::finish).unwrap_or_default();
        Captured::Parts(CapturedParts {
            head: String::from_utf8_lossy(&self.head[..head_end]).into_owned(),
            tail: String::from_utf8_lossy(&self.tail[tail_start..]).into_owned(),
            tail_starts_line,
            totals: self.totals,
            spool_error: self.spool_error,
            held,
            held_run: self.held_run,
        })
    }
}

/// What a [`Capture`] kept of a stream.
#[derive(Debug)]
pub(crate) enum Captured {
    /// The stream fit: all of it (invalid UTF-8 replaced by U+FFFD).
    Whole(String),
    /// The stream did not fit: its head, its tail and its totals.
    Parts(CapturedParts),
}

/// The head and tail of a stream too long to keep whole, with its exact totals.
#[derive(Debug, Clone)]
pub(crate) struct CapturedParts {
    head: String,
    tail: String,
    tail_starts_line: bool,
    totals: Totals,
    spool_error: Option<String>,
    /// The salient parts of the stream the watch gathered.
    held: Vec<HeldExcerpt>,
    /// The lossless run of the head's last line, followed past the head.
    held_run: Option<HeldRun>,
}

impl CapturedParts {
    /// The chars and lines of the whole stream.
    pub(crate) fn totals(&self) -> Totals {
        self.totals
    }

    /// Why the spool failed, if it did: the full stream was not kept.
    pub(crate) fn spool_error(&self) -> Option<&str> {
        self.spool_error.as_deref()
    }

    /// Cuts the stream into `allowance` chars as [`fit_with`] cuts a text, from the head and
    /// tail kept: the same cuts, the same marker, the figures of the whole stream.
    pub(crate) fn fit(
        &self,
        allowance: usize,
        style: &TrimStyle,
        continuation: &Continuation<'_>,
    ) -> Trimmed<'static> {
        let totals = self.totals;
        if style.reduces() {
            let source = Source {
                head: &self.head,
                tail: &self.tail,
                whole: false,
                tail_starts_line: self.tail_starts_line,
                held: &self.held,
                held_run: self.held_run,
                surveyed: None,
                totals,
            };
            let searcher = super::salience::searcher(style.salience);
            if let Some(cut) =
                super::keep::cut(&source, allowance, style, continuation, searcher.as_ref())
            {
                return cut;
            }
        }
        let captured = self.head.chars().count() + self.tail.chars().count();
        let cuts = super::positional_cuts(allowance, totals, continuation, |room| {
            let (head_end, tail_start) = if captured <= room && style.max_lines().is_none() {
                // Keep everything captured (the middle is gone anyway).
                (self.head.len(), 0)
            } else {
                cut_points(&self.head, &self.tail, room, style)
            };
            let starts_line = if tail_start == 0 {
                self.tail_starts_line
            } else {
                self.tail.as_bytes()[tail_start - 1] == b'\n'
            };
            let head_mid_line = head_end > 0 && self.head.as_bytes()[head_end - 1] != b'\n';
            let mid_line = head_mid_line || (tail_start < self.tail.len() && !starts_line);
            ((head_end, tail_start, starts_line), mid_line)
        });
        let Some((head_end, tail_start, starts_line)) = cuts else {
            return tiny(
                &self.head,
                Some((&self.tail, self.tail_starts_line)),
                totals,
                allowance,
                style,
            );
        };
        let tail = &self.tail[tail_start..];
        super::assemble(
            &self.head[..head_end],
            tail,
            starts_line,
            totals,
            continuation,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trim::FullOutput;

    #[test]
    fn a_long_stream_keeps_its_ends_and_exact_totals() {
        // Past what a capture keeps whole (a stream up to it is read whole: `WHOLE_BYTES`).
        let mut capture = Capture::new(400);
        for i in 0..100_000 {
            capture.push(format!("line {i}\n").as_bytes());
        }
        let Captured::Parts(parts) = capture.finish() else {
            panic!("100,000 lines do not fit")
        };
        assert_eq!(parts.totals().lines, 100_000);
        let shown = parts.fit(400, &TrimStyle::head_tail(0.3), &FullOutput::NotKept.into());
        assert!(shown.text().chars().count() <= 400);
        assert!(shown.text().ends_with("line 99999\n"));
    }
}
