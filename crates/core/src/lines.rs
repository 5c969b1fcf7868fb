//! Reading text a line at a time in bounded memory: the one place toolsmith pages lines.
//!
//! `read_file` pages files with it and `read_artifact` pages artifacts, so both count lines the
//! same way: a line ends at `\n` (a `\r` before it belongs to the line), and a last line without
//! a newline is still a line.
//!
//! ```
//! use toolsmith::lines::LineReader;
//!
//! let mut lines = LineReader::new("zero\none\ntwo\nthree".as_bytes());
//! assert_eq!(lines.skip(1)?, 1);
//! let mut page = Vec::new();
//! // At most 6 bytes of the next line are kept; the rest of it is read and dropped.
//! assert_eq!(lines.read_line(&mut page, 6)?, Some(true));
//! assert_eq!(page, b"one\n");
//! lines.count_rest()?;
//! assert_eq!(lines.lines_read(), 4);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{self, BufRead};

/// A reader that pages lines: skips them at memchr speed, reads one with a cap on what it keeps,
/// and counts what it has gone through (lines and bytes), holding no more than its buffer and
/// the caller's line.
#[derive(Debug)]
pub struct LineReader<R> {
    reader: R,
    newlines: usize,
    bytes: u64,
    last_byte: Option<u8>,
}

impl<R: BufRead> LineReader<R> {
    /// Starts at the beginning of `reader`, which should be buffered generously (64 KiB reads
    /// keep skipping at memchr speed).
    pub fn new(reader: R) -> Self {
        Self {
            reader,
            newlines: 0,
            bytes: 0,
            last_byte: None,
        }
    }

    /// Skips `count` lines; returns how many were skipped, fewer at the end of the text (a last
    /// line without a newline counts).
    pub fn skip(&mut self, count: usize) -> io::Result<usize> {
        let start = self.lines_read();
        let target = self.newlines.saturating_add(count);
        while self.newlines < target {
            let buffer = self.reader.fill_buf()?;
            if buffer.is_empty() {
                break;
            }
            let mut consumed = buffer.len();
            let mut found = 0;
            for at in memchr::memchr_iter(b'\n', buffer) {
                found += 1;
                if self.newlines + found == target {
                    consumed = at + 1;
                    break;
                }
            }
            self.newlines += found;
            let last = buffer[..consumed].last().copied();
            self.note(consumed, last);
            self.reader.consume(consumed);
        }
        Ok(self.lines_read() - start)
    }

    /// Reads the next line (with its newline) onto the end of `line`, keeping at most `cap`
    /// bytes of it and reading the rest of the line without keeping it.
    ///
    /// Returns `None` at the end of the text, else whether the whole line was kept. A cut may
    /// fall inside a UTF-8 sequence; the caller decides what to do with it.
    pub fn read_line(&mut self, line: &mut Vec<u8>, cap: usize) -> io::Result<Option<bool>> {
        let mut kept = 0usize;
        let mut read_any = false;
        let mut complete = true;
        loop {
            let buffer = self.reader.fill_buf()?;
            if buffer.is_empty() {
                return Ok(read_any.then_some(complete));
            }
            let (end, found) = match memchr::memchr(b'\n', buffer) {
                Some(at) => (at + 1, true),
                None => (buffer.len(), false),
            };
            let room = cap.saturating_sub(kept);
            if end > room {
                complete = false;
            }
            let keep = end.min(room);
            line.extend_from_slice(&buffer[..keep]);
            kept += keep;
            read_any = true;
            self.newlines += usize::from(found);
            let last = buffer[..end].last().copied();
            self.note(end, last);
            self.reader.consume(end);
            if found {
                return Ok(Some(complete));
            }
        }
    }

    /// Skips up to `count` chars of the line being read (never its line break); returns how many
    /// were skipped, fewer when the line ends first. Chars are UTF-8 scalar values; a skip
    /// never stops inside one.
    pub fn skip_chars(&mut self, count: usize) -> io::Result<usize> {
        let mut skipped = 0usize;
        loop {
            let buffer = self.reader.fill_buf()?;
            if buffer.is_empty() {
                return Ok(skipped);
            }
            let mut consumed = 0;
            let mut done = false;
            for &byte in buffer {
                let starts_char = (byte as i8) >= -64;
                if byte == b'\n' || (starts_char && skipped == count) {
                    done = true;
                    break;
                }
                skipped += usize::from(starts_char);
                consumed += 1;
            }
            let last = buffer[..consumed].last().copied();
            self.note(consumed, last);
            self.reader.consume(consumed);
            if done {
                return Ok(skipped);
            }
        }
    }

    /// Whether the text has nothing more to read.
    pub fn is_at_end(&mut self) -> io::Result<bool> {
        Ok(self.reader.fill_buf()?.is_empty())
    }

    /// Reads to the end of the text, counting lines and bytes, keeping nothing.
    pub fn count_rest(&mut self) -> io::Result<()> {
        loop {
            let buffer = self.reader.fill_buf()?;
            if buffer.is_empty() {
                return Ok(());
            }
            let len = buffer.len();
            self.newlines += memchr::memchr_iter(b'\n', buffer).count();
            let last = buffer[..len].last().copied();
            self.note(len, last);
            self.reader.consume(len);
        }
    }

    /// The lines begun so far: every newline read, plus the line being read if it has started.
    /// After [`count_rest`](Self::count_rest), the text's number of lines.
    pub fn lines_read(&self) -> usize {
        self.newlines + usize::from(self.last_byte.is_some_and(|byte| byte != b'\n'))
    }

    /// The bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// The reader, wherever it stopped.
    pub fn into_inner(self) -> R {
        self.reader
    }

    fn note(&mut self, consumed: usize, last: Option<u8>) {
        self.bytes += consumed as u64;
        if last.is_some() {
            self.last_byte = last;
        }
    }
}

/// `line` without its line ending (`\n` or `\r\n`).
pub fn without_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use std::io::BufReader;

    use super::*;

    #[test]
    fn skips_lines_across_buffers() {
        let text = "a\nb\nc\nd";
        let mut lines = LineReader::new(BufReader::with_capacity(2, text.as_bytes()));
        assert_eq!(lines.skip(2).unwrap(), 2);
        let mut line = Vec::new();
        assert_eq!(lines.read_line(&mut line, 100).unwrap(), Some(true));
        assert_eq!(line, b"c\n");
        let mut lines = LineReader::new(BufReader::with_capacity(2, text.as_bytes()));
        assert_eq!(lines.skip(9).unwrap(), 4, "the last line has no newline");
        let mut lines = LineReader::new(BufReader::with_capacity(2, "a\nb\n".as_bytes()));
        assert_eq!(lines.skip(9).unwrap(), 2);
        assert_eq!(lines.bytes_read(), 4);
    }

    #[test]
    fn caps_a_long_line_and_reads_past_it() {
        let text = "0123456789\nnext\n";
        let mut lines = LineReader::new(BufReader::with_capacity(4, text.as_bytes()));
        let mut line = Vec::new();
        assert_eq!(lines.read_line(&mut line, 4).unwrap(), Some(false));
        assert_eq!(line, b"0123");
        line.clear();
        assert_eq!(lines.read_line(&mut line, 4).unwrap(), Some(false));
        assert_eq!(line, b"next", "the newline did not fit");
        assert_eq!(lines.read_line(&mut line, 4).unwrap(), None);
        assert_eq!((lines.lines_read(), lines.bytes_read()), (2, 16));
    }

    #[test]
    fn counts_the_rest_and_a_last_line_without_newline() {
        let mut lines = LineReader::new("one\ntwo\nthree".as_bytes());
        lines.count_rest().unwrap();
        assert_eq!(lines.lines_read(), 3);
        let mut empty = LineReader::new(&b""[..]);
        empty.count_rest().unwrap();
        assert_eq!(empty.lines_read(), 0);
        assert!(empty.is_at_end().unwrap());
    }

    #[test]
    fn skips_chars_within_a_line_on_char_boundaries() {
        let text = "aé😀bc\nnext";
        let mut lines = LineReader::new(BufReader::with_capacity(3, text.as_bytes()));
        assert_eq!(lines.skip_chars(3).unwrap(), 3);
        let mut rest = Vec::new();
        assert_eq!(lines.read_line(&mut rest, 100).unwrap(), Some(true));
        assert_eq!(rest, b"bc\n");
        let mut lines = LineReader::new("ab\ncd".as_bytes());
        assert_eq!(lines.skip_chars(10).unwrap(), 2, "the line ends first");
        rest.clear();
        assert_eq!(lines.read_line(&mut rest, 100).unwrap(), Some(true));
        assert_eq!(rest, b"\n");
    }

    #[test]
    fn strips_line_endings() {
        assert_eq!(without_newline(b"a\r\n"), b"a");
        assert_eq!(without_newline(b"a\n"), b"a");
        assert_eq!(without_newline(b"a"), b"a");
    }
}
