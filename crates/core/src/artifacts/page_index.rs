//! An artifact's page index: where its text is, every 64 KiB, in lines and chars, so that a page
//! anywhere in it is read from one range of bytes (a ranged GET of an object), never from the
//! top. A store that cannot seek cheaply keeps one beside each artifact.
//!
//! A mark is a byte offset on a char boundary with the line it falls in and the chars of that
//! line before it: marks are at most [`SPACING`] + 3 bytes apart, and a page starting anywhere
//! (line, char offset) starts within that of the last mark before it, inside lines too (a
//! one-line output of a gigabyte is paged as cheaply as a log).

use std::io::{self, BufReader};

use super::page::read_lines;
use super::{ArtifactError, ArtifactPage, PageRequest};
use crate::lines::LineReader;

/// Bytes between marks (at least; a mark moves on to the next char boundary).
pub(super) const SPACING: u64 = 64 * 1024;
/// The index's first line, naming its format.
const MAGIC: &[u8] = b"toolsmith page index 1\n";
/// Bytes of one mark, as stored: byte, line, char, each a little-endian u64.
const MARK_BYTES: usize = 24;

/// A place in the text: its byte offset, the line it is in (0-based), and the chars of that
/// line before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Mark {
    pub(super) byte: u64,
    pub(super) line: u64,
    pub(super) char: u64,
}

/// What a store keeps beside an artifact to page it from a range of its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PageIndex {
    pub(super) total_bytes: u64,
    pub(super) total_lines: u64,
    /// Whether the artifact was capped when stored.
    pub(super) capped: bool,
    marks: Vec<Mark>,
}

/// Builds a [`PageIndex`] from the text as it is written, chunk by chunk, at memchr speed.
#[derive(Debug)]
pub(super) struct Indexer {
    marks: Vec<Mark>,
    /// Bytes fed so far.
    byte: u64,
    /// Newlines fed so far: the line being fed.
    line: u64,
    /// Chars of the line being fed, up to the end of what was fed.
    line_chars: u64,
    /// Where the next mark goes (at the first char boundary from here).
    next_mark: u64,
    last_byte: Option<u8>,
}

impl Default for Indexer {
    fn default() -> Self {
        Self {
            marks: vec![Mark {
                byte: 0,
                line: 0,
                char: 0,
            }],
            byte: 0,
            line: 0,
            line_chars: 0,
            next_mark: SPACING,
            last_byte: None,
        }
    }
}

fn chars_in(bytes: &[u8]) -> u64 {
    // A char starts at every byte that is not a UTF-8 continuation byte (0b10xx_xxxx).
    bytes.iter().filter(|&&b| (b as i8) >= -64).count() as u64
}

impl Indexer {
    /// Takes in the next bytes of the text.
    pub(super) fn feed(&mut self, chunk: &[u8]) {
        let start = self.byte;
        let end = start + chunk.len() as u64;
        // The part of the chunk whose chars `line_chars` counts already.
        let mut counted = 0usize;
        let mut newlines = memchr::memchr_iter(b'\n', chunk).peekable();
        loop {
            let mark = (self.next_mark < end)
                .then(|| usize::try_from(self.next_mark.saturating_sub(start)).unwrap_or(0));
            match (mark, newlines.peek().copied()) {
                (Some(at), newline) if newline.is_none_or(|newline| at <= newline) => {
                    let at = at.max(counted);
                    let boundary = chunk[at..]
                        .iter()
                        .position(|&b| (b as i8) >= -64)
                        .map(|skip| at + skip);
                    let Some(boundary) = boundary else {
                        // Only continuation bytes to the chunk's end: mark in the next one.
                        self.next_mark = end;
                        break;
                    };
                    self.line_chars += chars_in(&chunk[counted..boundary]);
                    counted = boundary;
                    let byte = start + boundary as u64;
                    self.marks.push(Mark {
                        byte,
                        line: self.line,
                        char: self.line_chars,
                    });
                    self.next_mark = byte + SPACING;
                }
                (_, Some(newline)) => {
                    newlines.next();
                    self.line += 1;
                    self.line_chars = 0;
                    counted = newline + 1;
                }
                (_, None) => break,
            }
        }
        self.line_chars += chars_in(&chunk[counted..]);
        self.byte = end;
        if let Some(&last) = chunk.last() {
            self.last_byte = Some(last);
        }
    }

    /// The index of the text fed.
    pub(super) fn finish(self, capped: bool) -> PageIndex {
        let unterminated = self.last_byte.is_some_and(|byte| byte != b'\n');
        PageIndex {
            total_bytes: self.byte,
            total_lines: self.line + u64::from(unterminated),
            capped,
            marks: self.marks,
        }
    }
}

impl PageIndex {
    /// The index as a store keeps it.
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(MAGIC.len() + 32 + self.marks.len() * MARK_BYTES);
        out.extend_from_slice(MAGIC);
        for value in [
            self.total_bytes,
            self.total_lines,
            u64::from(self.capped),
            self.marks.len() as u64,
        ] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        for mark in &self.marks {
            for value in [mark.byte, mark.line, mark.char] {
                out.extend_from_slice(&value.to_le_bytes());
            }
        }
        out
    }

    /// Reads an index a store kept; one that is not whole, or not in order, is refused.
    pub(super) fn decode(bytes: &[u8]) -> io::Result<Self> {
        let damaged = || io::Error::new(io::ErrorKind::InvalidData, "its page index is damaged");
        let rest = bytes.strip_prefix(MAGIC).ok_or_else(damaged)?;
        let mut values = rest
            .chunks_exact(8)
            .map(|word| u64::from_le_bytes(word.try_into().unwrap_or_default()));
        let mut next = || values.next().ok_or_else(damaged);
        let (total_bytes, total_lines, capped, count) = (next()?, next()?, next()?, next()?);
        let count = usize::try_from(count).map_err(|_| damaged())?;
        if rest.len() != 32 + count.checked_mul(MARK_BYTES).ok_or_else(damaged)? || count == 0 {
            return Err(damaged());
        }
        let mut marks = Vec::with_capacity(count);
        for _ in 0..count {
            marks.push(Mark {
                byte: next()?,
                line: next()?,
                char: next()?,
            });
        }
        let ordered = marks.windows(2).all(|pair| {
            pair[0].byte < pair[1].byte
                && (pair[0].line, pair[0].char) < (pair[1].line, pair[1].char)
        });
        if !ordered || marks[0].byte != 0 || marks.last().is_some_and(|m| m.byte > total_bytes) {
            return Err(damaged());
        }
        Ok(Self {
            total_bytes,
            total_lines,
            capped: capped != 0,
            marks,
        })
    }

    /// The bytes a page starts within, as `start..end`, or `None` when the page is past the end
    /// (nothing to read). Reading them and [`page`](Self::page) gives the page.
    pub(super) fn window(&self, page: PageRequest) -> Option<(Mark, std::ops::Range<u64>)> {
        let offset = page.offset as u64;
        if offset >= self.total_lines {
            return None;
        }
        let target = (offset, page.char_offset as u64);
        let after = self
            .marks
            .partition_point(|mark| (mark.line, mark.char) <= target);
        let mark = self.marks[after.saturating_sub(1)];
        // The page starts less than a mark's spacing (and a char) after the mark, and holds at
        // most `max_bytes`; a few bytes more tell whether its last line ends there.
        let span = (SPACING + 8)
            .saturating_add(page.max_bytes as u64)
            .saturating_add(8);
        let end = mark.byte.saturating_add(span).min(self.total_bytes);
        Some((mark, mark.byte..end))
    }

    /// The page, from `bytes`: the [`window`](Self::window) read from the artifact.
    pub(super) fn page(
        &self,
        mark: Mark,
        bytes: &[u8],
        page: PageRequest,
    ) -> Result<ArtifactPage, ArtifactError> {
        let mut reader = LineReader::new(BufReader::with_capacity(64 * 1024, bytes));
        let offset = page.offset as u64;
        let first_char = if offset == mark.line {
            let from = usize::try_from(mark.char).unwrap_or(usize::MAX);
            from + reader.skip_chars(page.char_offset.saturating_sub(from))?
        } else {
            reader.skip(usize::try_from(offset - mark.line).unwrap_or(usize::MAX))?;
            if page.char_offset > 0 {
                reader.skip_chars(page.char_offset)?
            } else {
                0
            }
        };
        let lines = read_lines(&mut reader, page)?;
        Ok(lines.into_page(
            page,
            first_char,
            usize::try_from(self.total_lines).unwrap_or(usize::MAX),
            self.total_bytes,
            self.capped,
        ))
    }

    /// An empty page past the end.
    pub(super) fn past_end(&self, page: PageRequest) -> ArtifactPage {
        super::page::Lines::default().into_page(
            page,
            0,
            usize::try_from(self.total_lines).unwrap_or(usize::MAX),
            self.total_bytes,
            self.capped,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::page::read_page_from;
    use super::*;

    fn index_of(text: &[u8], chunk: usize) -> PageIndex {
        let mut indexer = Indexer::default();
        for piece in text.chunks(chunk.max(1)) {
            indexer.feed(piece);
        }
        indexer.finish(false)
    }

    fn through_index(text: &[u8], index: &PageIndex, page: PageRequest) -> ArtifactPage {
        match index.window(page) {
            None => index.past_end(page),
            Some((mark, range)) => {
                let bytes = &text[range.start as usize..range.end as usize];
                index.page(mark, bytes, page).unwrap()
            }
        }
    }

    /// Text of long and short lines, multi-byte chars across chunk and mark boundaries.
    fn sample() -> Vec<u8> {
        let mut text = String::new();
        for i in 0..4_000 {
            match i % 7 {
                0 => text.push_str(&"é".repeat(i % 1_500)),
                1 => text.push_str(&"日本".repeat(i % 500)),
                _ => text.push_str(&format!("line {i} of the log")),
            }
            text.push('\n');
        }
        text.push_str(&"x".repeat(150_000));
        text.into_bytes()
    }

    #[test]
    fn every_page_read_through_the_index_is_the_page_read_from_the_top() {
        let text = sample();
        for chunk in [1_000, 65_536, 70_001] {
            let index = index_of(&text, chunk);
            let whole = read_page_from(&text[..], page(0, 0, None, 10), false).unwrap();
            assert_eq!(index.total_lines as usize, whole.total_lines);
            assert_eq!(index.total_bytes, whole.total_bytes);
            let mut seed = 7u64;
            for _ in 0..120 {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let offset = (seed >> 33) as usize % (whole.total_lines + 2);
                let char_offset = [0, 1, 700, 5_000, 140_000][(seed >> 20) as usize % 5];
                let limit = [None, Some(1), Some(3)][(seed >> 10) as usize % 3];
                let max_bytes = [5, 100, 70_000][(seed >> 5) as usize % 3];
                let request = page(offset, char_offset, limit, max_bytes);
                let want = read_page_from(&text[..], request, false).unwrap();
                assert_eq!(through_index(&text, &index, request), want, "{request:?}");
            }
        }
    }

    #[test]
    fn an_index_survives_being_stored_and_a_damaged_one_is_refused() {
        let index = index_of(&sample(), 4_096);
        let stored = index.encode();
        assert_eq!(PageIndex::decode(&stored).unwrap(), index);
        assert!(PageIndex::decode(&stored[..stored.len() - 1]).is_err());
        assert!(PageIndex::decode(b"not an index").is_err());
        let mut swapped = stored.clone();
        let at = MAGIC.len() + 32 + MARK_BYTES;
        swapped[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
        assert!(PageIndex::decode(&swapped).is_err(), "marks out of order");
    }

    #[test]
    fn a_deep_page_needs_only_its_window() {
        let text = sample();
        let index = index_of(&text, 65_536);
        let (_, range) = index.window(page(3_990, 0, Some(5), 4_096)).unwrap();
        assert!(range.end - range.start <= SPACING + 4_096 + 16);
    }

    fn page(
        offset: usize,
        char_offset: usize,
        limit: Option<usize>,
        max_bytes: usize,
    ) -> PageRequest {
        PageRequest {
            offset,
            char_offset,
            limit,
            max_bytes,
        }
    }
}
