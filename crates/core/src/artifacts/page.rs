//! Paging through an artifact's lines in bounded memory.

use std::io::BufRead;

use super::{ArtifactError, ArtifactPage, PageRequest};

/// Reads one page of lines from `reader`, holding at most the page and one buffer in memory,
/// and counts the lines to the end.
pub(super) fn read_page_from(
    mut reader: impl BufRead,
    page: PageRequest,
    capped: bool,
) -> Result<ArtifactPage, ArtifactError> {
    let mut line = 0usize; // the 0-based line the reader is in
    let mut total_bytes = 0u64;
    let mut last_byte = None;
    let mut text = Vec::new();
    let mut lines = 0usize;
    let mut cut_mid_line = false;
    let mut collecting = page.limit != Some(0);
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            break;
        }
        let len = buffer.len();
        total_bytes += len as u64;
        last_byte = buffer.last().copied();
        let mut at = 0;
        while at < len {
            let rest = &buffer[at..];
            if line < page.offset {
                // Skip to the start of line `offset` at memchr speed.
                let mut newlines = memchr::memchr_iter(b'\n', rest);
                let mut skipped_to = None;
                while line < page.offset {
                    let Some(i) = newlines.next() else { break };
                    line += 1;
                    skipped_to = Some(i + 1);
                }
                at = match skipped_to {
                    Some(end) if line == page.offset => at + end,
                    _ => len,
                };
                continue;
            }
            if !collecting {
                // Only the count remains.
                line += memchr::memchr_iter(b'\n', rest).count();
                break;
            }
            let newline = memchr::memchr(b'\n', rest);
            let segment = &rest[..newline.map_or(rest.len(), |i| i + 1)];
            let starts_line = text.is_empty() || text.last() == Some(&b'\n');
            if text.len() + segment.len() > page.max_bytes {
                // A line that does not fit ends the page; the first one is kept in part.
                if !starts_line || lines == 0 {
                    text.extend_from_slice(&segment[..page.max_bytes - text.len()]);
                    lines += usize::from(starts_line);
                    cut_mid_line = true;
                }
                collecting = false;
                continue;
            }
            text.extend_from_slice(segment);
            lines += usize::from(starts_line);
            at += segment.len();
            if newline.is_some() {
                line += 1;
                if page.limit.is_some_and(|limit| lines >= limit) {
                    collecting = false;
                }
            }
        }
        reader.consume(len);
    }
    let total_lines = line + usize::from(last_byte.is_some_and(|b| b != b'\n'));
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
    Ok(ArtifactPage {
        text,
        offset: page.offset,
        lines,
        cut_mid_line,
        total_lines,
        total_bytes,
        capped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(offset: usize, limit: Option<usize>, max_bytes: usize) -> PageRequest {
        PageRequest {
            offset,
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
    }
}
