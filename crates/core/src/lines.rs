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
    /// Where lines start, noted while skipping (for a [`LineIndex`]), when asked for.
    checkpoints: Option<Vec<Checkpoint>>,
}

/// A line's number (0-based: the lines before it) and the byte it starts at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoint {
    /// The lines before it.
    pub line: usize,
    /// The offset of its first byte.
    pub byte: u64,
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
            checkpoints: None,
        }
    }

    /// Goes on from `at`, the start of a line the reader is positioned at (a file sought to a
    /// [`LineIndex`] checkpoint): lines and bytes are counted from there.
    pub fn resume(reader: R, at: Checkpoint) -> Self {
        Self {
            reader,
            newlines: at.line,
            bytes: at.byte,
            last_byte: (at.byte > 0).then_some(b'\n'),
            checkpoints: None,
        }
    }

    /// Notes where lines start while skipping, about once a buffer, for
    /// [`checkpoints`](Self::checkpoints).
    #[must_use]
    pub fn noting_checkpoints(mut self) -> Self {
        self.checkpoints = Some(Vec::new());
        self
    }

    /// The line starts noted while skipping, in order.
    pub fn checkpoints(&self) -> &[Checkpoint] {
        self.checkpoints.as_deref().unwrap_or_default()
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
            // A buffer wholly before the target is counted at SIMD speed; the one that holds
            // it is walked to its newline.
            let mut found = bytecount::count(buffer, b'\n');
            if self.newlines + found >= target {
                found = 0;
                for at in memchr::memchr_iter(b'\n', buffer) {
                    found += 1;
                    if self.newlines + found == target {
                        consumed = at + 1;
                        break;
                    }
                }
            } else if let Some(checkpoints) = &mut self.checkpoints
                && let Some(after) = crate::trim::after_last_break(buffer, 0, buffer.len())
            {
                // The line after the buffer's last newline starts a checkpoint.
                checkpoints.push(Checkpoint {
                    line: self.newlines + found,
                    byte: self.bytes + after as u64,
                });
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
            self.newlines += bytecount::count(buffer, b'\n');
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

/// Where lines start in files paged before, so that a later page deep in the same unchanged
/// file starts at the nearest line start before it instead of at the top.
///
/// A file is known by its device, inode, size, modification and change times ([`FileKey`]): a
/// change to any of them and what was noted is not used (the change time is the system's own,
/// set on every write: a file rewritten and given its old modification time back is still seen
/// as changed). The index is bounded: [`LineIndex::MAX_FILES`]
/// files (the least recently used goes), [`LineIndex::MAX_CHECKPOINTS`] line starts a file.
///
/// ```
/// use toolsmith::lines::{Checkpoint, FileKey, LineIndex};
///
/// # let dir = tempfile::tempdir()?;
/// let path = dir.path().join("log.txt");
/// std::fs::write(&path, "a\nb\nc\n")?;
/// let key = FileKey::of(&std::fs::metadata(&path)?);
/// let index = LineIndex::default();
/// index.note(&key, &[Checkpoint { line: 2, byte: 4 }]);
/// assert_eq!(index.nearest(&key, 3), Some(Checkpoint { line: 2, byte: 4 }));
/// assert_eq!(index.nearest(&key, 1), None, "nothing before line 2 was noted");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct LineIndex {
    files: std::sync::Mutex<Vec<Indexed>>,
}

#[derive(Debug)]
struct Indexed {
    key: FileKey,
    checkpoints: Vec<Checkpoint>,
    used: u64,
}

/// What a file is known by in a [`LineIndex`]: where it is and what it was when indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileKey {
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
    /// The inode's change time: set by the system on every write, never by a user.
    changed: (i64, i64),
}

impl FileKey {
    /// The key of the file `meta` describes.
    pub fn of(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        let (device, inode, changed) = {
            use std::os::unix::fs::MetadataExt as _;
            (meta.dev(), meta.ino(), (meta.ctime(), meta.ctime_nsec()))
        };
        #[cfg(not(unix))]
        let (device, inode, changed) = (0, 0, (0, 0));
        Self {
            device,
            inode,
            len: meta.len(),
            modified: meta.modified().ok(),
            changed,
        }
    }
}

impl LineIndex {
    /// The most files an index holds.
    pub const MAX_FILES: usize = 64;
    /// The most line starts it holds for one file.
    pub const MAX_CHECKPOINTS: usize = 1 << 16;

    /// The index the process's tools share.
    pub fn shared() -> &'static LineIndex {
        static SHARED: std::sync::OnceLock<LineIndex> = std::sync::OnceLock::new();
        SHARED.get_or_init(LineIndex::default)
    }

    /// The nearest line start noted at or before line `line` (0-based) of the file, if any.
    pub fn nearest(&self, key: &FileKey, line: usize) -> Option<Checkpoint> {
        let mut files = self.lock();
        let clock = files.iter().map(|file| file.used).max().unwrap_or(0) + 1;
        let file = files.iter_mut().find(|file| file.key == *key)?;
        file.used = clock;
        let before = file.checkpoints.partition_point(|at| at.line <= line);
        before.checked_sub(1).map(|at| file.checkpoints[at])
    }

    /// Notes line starts of the file (from [`LineReader::checkpoints`]).
    pub fn note(&self, key: &FileKey, checkpoints: &[Checkpoint]) {
        if checkpoints.is_empty() {
            return;
        }
        let mut files = self.lock();
        let clock = files.iter().map(|file| file.used).max().unwrap_or(0) + 1;
        // What was noted of the same path before it changed is of no use.
        files.retain(|file| {
            file.key == *key || (file.key.device, file.key.inode) != (key.device, key.inode)
        });
        let at = match files.iter().position(|file| file.key == *key) {
            Some(at) => at,
            None => {
                if files.len() >= Self::MAX_FILES
                    && let Some(oldest) = (0..files.len()).min_by_key(|&i| files[i].used)
                {
                    files.swap_remove(oldest);
                }
                files.push(Indexed {
                    key: key.clone(),
                    checkpoints: Vec::new(),
                    used: clock,
                });
                files.len() - 1
            }
        };
        let file = &mut files[at];
        file.used = clock;
        file.checkpoints.extend_from_slice(checkpoints);
        file.checkpoints.sort_unstable_by_key(|at| at.line);
        file.checkpoints.dedup_by_key(|at| at.line);
        while file.checkpoints.len() > Self::MAX_CHECKPOINTS {
            // Every other one: the nearest stays at most twice as far.
            let mut keep = false;
            file.checkpoints.retain(|_| {
                keep = !keep;
                keep
            });
        }
    }

    /// Forgets the file (a checkpoint did not hold: it changed without its key changing).
    pub fn forget(&self, key: &FileKey) {
        self.lock().retain(|file| file.key != *key);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Indexed>> {
        crate::sync::lock(&self.files)
    }
}

/// `line` without its line ending (`\n` or `\r\n`).
pub fn without_newline(line: &[u8]) -> &[u8] {
    crate::trim::without_break(line)
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

    #[test]
    fn a_reader_resumed_at_a_checkpoint_reads_the_same_lines() {
        let text: String = (0..5_000)
            .map(|i| format!("{i}:{}\n", "ab".repeat(i % 9)))
            .collect();
        let mut lines =
            LineReader::new(BufReader::with_capacity(512, text.as_bytes())).noting_checkpoints();
        assert_eq!(lines.skip(4_000).unwrap(), 4_000);
        let noted = lines.checkpoints().to_vec();
        assert!(noted.len() > 10, "{}", noted.len());
        let index = LineIndex::default();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t"), &text).unwrap();
        let key = FileKey::of(&std::fs::metadata(dir.path().join("t")).unwrap());
        index.note(&key, &noted);
        for target in [4_500, 3_999, 100] {
            let Some(at) = index.nearest(&key, target) else {
                assert!(target < noted[0].line, "{target}");
                continue;
            };
            assert!(at.line <= target);
            assert_eq!(
                text.as_bytes()[usize::try_from(at.byte).unwrap() - 1],
                b'\n'
            );
            let rest = &text.as_bytes()[usize::try_from(at.byte).unwrap()..];
            let mut resumed = LineReader::resume(BufReader::with_capacity(512, rest), at);
            resumed.skip(target - at.line).unwrap();
            assert_eq!(resumed.lines_read(), target);
            let mut line = Vec::new();
            resumed.read_line(&mut line, 100).unwrap();
            assert_eq!(
                line,
                text.lines()
                    .nth(target)
                    .unwrap()
                    .as_bytes()
                    .iter()
                    .chain(b"\n")
                    .copied()
                    .collect::<Vec<u8>>()
            );
        }
    }
}
