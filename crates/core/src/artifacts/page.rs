//! Paging through an artifact's lines in bounded memory.

use std::io::BufRead;

use super::{ArtifactError, ArtifactPage, PageRequest};
use crate::lines::LineReader;

/// Reads one page of lines from `reader`, holding at most the page and one buffer in memory,
/// and counts the lines to the end.
pub(super) fn read_page_from(
    reader: impl BufRead,
    page: PageRequest,
    capped: bool,
) -> Result<ArtifactPage, ArtifactError> {
    let mut reader = LineReader::new(reader);
    reader.skip(page.offset)?;
    let first_char = if page.char_offset > 0 {
        reader.skip_chars(page.char_offset)?
    } else {
        0
    };
    let lines = read_lines(&mut reader, page)?;
    reader.count_rest()?;
    Ok(lines.into_page(
        page,
        first_char,
        reader.lines_read(),
        reader.bytes_read(),
        capped,
    ))
}

/// The lines of a page, read from where the page starts.
#[derive(Debug, Default)]
pub(super) struct Lines {
    text: String,
    lines: usize,
    cut_mid_line: bool,
    last_line_chars: usize,
}

impl Lines {
    pub(super) fn into_page(
        self,
        page: PageRequest,
        first_char: usize,
        total_lines: usize,
        total_bytes: u64,
        capped: bool,
    ) -> ArtifactPage {
        ArtifactPage {
            text: self.text,
            offset: page.offset,
            first_char,
            lines: self.lines,
            cut_mid_line: self.cut_mid_line,
            last_line_chars: self.last_line_chars,
            total_lines,
            total_bytes,
            capped,
        }
    }
}

/// Reads the page's lines from `reader`, positioned where the page starts: as many as its limit
/// and `max_bytes` allow, a first line longer than `max_bytes` cut on a char boundary.
pub(super) fn read_lines(
    reader: &mut LineReader<impl BufRead>,
    page: PageRequest,
) -> Result<Lines, ArtifactError> {
    let mut text = Vec::new();
    let mut lines = 0usize;
    let mut cut_mid_line = false;
    let mut last_start = 0;
    while page.limit.is_none_or(|limit| lines < limit) {
        let start = text.len();
        let room = page.max_bytes.saturating_sub(start);
        match reader.read_line(&mut text, room)? {
            None => break,
            Some(true) => {
                lines += 1;
                last_start = start;
            }
            Some(false) => {
                // A line that does not fit ends the page; the first one is kept in part, and
                // the next page goes on inside it.
                if lines == 0 {
                    lines = 1;
                    cut_mid_line = true;
                    last_start = start;
                } else {
                    text.truncate(start);
                }
                break;
            }
        }
    }
    let text = match String::from_utf8(text) {
        Ok(text) => text,
        // A cut inside a char leaves an incomplete sequence at the end: drop it.
        Err(error) if error.utf8_error().error_len().is_none() => {
            let valid = error.utf8_error().valid_up_to();
            let mut bytes = error.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    };
    let last_line_chars = text[last_start.min(text.len())..].chars().count();
    Ok(Lines {
        text,
        lines,
        cut_mid_line,
        last_line_chars,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(offset: usize, limit: Option<usize>, max_bytes: usize) -> PageRequest {
        PageRequest {
            offset,
            char_offset: 0,
            limit,
            max_bytes,
        }
    }

    #[test]
    fn pages_lines_and_counts_the_rest() {
        let text = b"zero\none\ntwo\nthree\nfour";
        let got = read_page_from(&text[..], page(1, Some(2), 1000), false).unwrap();
        assert_eq!(got.text, "one\ntwo\n");
        assert_eq!((got.lines, got.total_lines), (2, 5));
        assert_eq!(got.next_offset(), Some(3));
        let last = read_page_from(&text[..], page(3, None, 1000), false).unwrap();
        assert_eq!(last.text, "three\nfour");
        assert_eq!(last.next_offset(), None);
    }

    #[test]
    fn a_page_stops_before_a_line_that_does_not_fit() {
        let text = b"aaaa\nbbbb\ncccc\n";
        let got = read_page_from(&text[..], page(0, None, 12), false).unwrap();
        assert_eq!(got.text, "aaaa\nbbbb\n");
        assert!(!got.cut_mid_line);
        assert_eq!(got.next_offset(), Some(2));
    }

    #[test]
    fn a_huge_first_line_is_cut_on_a_char_boundary() {
        let text = "ééééé\nnext\n";
        let got = read_page_from(text.as_bytes(), page(0, None, 5), false).unwrap();
        assert_eq!(got.text, "éé");
        assert!(got.cut_mid_line);
        assert_eq!(got.lines, 1);
        assert_eq!(
            got.next(),
            Some((0, 2)),
            "the line goes on at its third char"
        );
    }

    #[test]
    fn every_char_of_a_long_line_is_reached_page_by_page() {
        let line: String = (0..1_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let text = format!("{line}é\nlast\n");
        let mut read = String::new();
        let mut at = Some((0, 0));
        while let Some((offset, char_offset)) = at {
            let request = PageRequest {
                offset,
                char_offset,
                limit: None,
                max_bytes: 97,
            };
            let got = read_page_from(text.as_bytes(), request, false).unwrap();
            read.push_str(&got.text);
            at = got.next();
        }
        assert_eq!(read, text);
    }
}
