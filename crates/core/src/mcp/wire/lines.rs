//! Framing: one JSON-RPC message a line, each line bounded, an oversized line skipped with only
//! its first bytes kept (to answer it by its id).

use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};

use super::ID_PREFIX_BYTES;

/// The lines of a reader, each at most `max_line` bytes: a longer one is skipped, and only its
/// first bytes kept (to find its id).
pub(crate) struct Lines<R> {
    read: BufReader<R>,
    max_line: usize,
    line: Vec<u8>,
    /// While an oversized line is skipped: its first bytes, to answer it by id.
    discarding: Option<Vec<u8>>,
}

/// The next message's line, as [`Lines::next`] gives it.
pub(crate) enum Next {
    /// A line with something on it, without its `\r`.
    Text(Vec<u8>),
    /// A line over the limit was skipped; its first bytes.
    Oversized(Vec<u8>),
}

/// What one bounded read of a line found.
enum Line {
    /// A whole line is in `line`.
    Complete,
    /// A line over the limit was skipped; its first bytes.
    Oversized(Vec<u8>),
    /// The input ended (or failed).
    End,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    pub(crate) fn new(read: R, max_line: usize) -> Self {
        Lines {
            read: BufReader::with_capacity(64 * 1024, read),
            max_line,
            line: Vec::new(),
            discarding: None,
        }
    }

    /// The longest line read, in bytes.
    pub(crate) fn max_line(&self) -> usize {
        self.max_line
    }

    /// Sets the longest line read, in bytes.
    pub(crate) fn set_max_line(&mut self, bytes: usize) {
        self.max_line = bytes;
    }

    /// Reads one line into `self.line` without letting it grow past the limit. Cancel-safe:
    /// only `fill_buf` awaits, and the state lives in `self`.
    async fn read_line(&mut self) -> Line {
        loop {
            let buffer = match self.read.fill_buf().await {
                Ok(buffer) => buffer,
                Err(_) => return Line::End,
            };
            if buffer.is_empty() {
                return match self.discarding.take() {
                    Some(prefix) => Line::Oversized(prefix),
                    None if self.line.is_empty() => Line::End,
                    None => Line::Complete,
                };
            }
            let newline = memchr::memchr(b'\n', buffer);
            let segment = &buffer[..newline.unwrap_or(buffer.len())];
            let used = newline.map_or(buffer.len(), |at| at + 1);
            if let Some(prefix) = &mut self.discarding {
                let room = ID_PREFIX_BYTES.saturating_sub(prefix.len());
                prefix.extend_from_slice(&segment[..segment.len().min(room)]);
            } else if self.line.len() + segment.len() > self.max_line {
                let mut prefix = std::mem::take(&mut self.line);
                prefix.truncate(ID_PREFIX_BYTES);
                let room = ID_PREFIX_BYTES.saturating_sub(prefix.len());
                prefix.extend_from_slice(&segment[..segment.len().min(room)]);
                self.discarding = Some(prefix);
            } else {
                self.line.extend_from_slice(segment);
            }
            self.read.consume(used);
            if newline.is_some() {
                return match self.discarding.take() {
                    Some(prefix) => Line::Oversized(prefix),
                    None => Line::Complete,
                };
            }
        }
    }

    /// The next line that holds something, or an oversized line's first bytes; `None` at the
    /// end of the input. Cancel-safe.
    pub(crate) async fn next(&mut self) -> Option<Next> {
        loop {
            match self.read_line().await {
                Line::End => return None,
                Line::Oversized(prefix) => return Some(Next::Oversized(prefix)),
                Line::Complete => {
                    let mut line = std::mem::take(&mut self.line);
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    if !line.iter().all(u8::is_ascii_whitespace) {
                        return Some(Next::Text(line));
                    }
                }
            }
        }
    }
}
