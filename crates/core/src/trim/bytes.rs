//! Lines and chars of UTF-8 bytes: where a line starts and ends, its text without its break,
//! byte offsets of char counts, and the counts of a whole text. The one owner of these
//! offsets: every cut, walk and scan of `trim` (and `lines`) finds them here.

/// The end of the line that starts at `start` (after its line break, or `limit`).
pub(crate) fn line_end(bytes: &[u8], start: usize, limit: usize) -> usize {
    memchr::memchr(b'\n', &bytes[start..limit]).map_or(limit, |i| start + i + 1)
}

/// Where a line starts after the last line break in `bytes[stop..at]`: `None` when that span
/// holds none. The one search back for a line's start; the functions below and every scan of
/// `trim` ask it.
pub(crate) fn after_last_break(bytes: &[u8], stop: usize, at: usize) -> Option<usize> {
    memchr::memrchr(b'\n', &bytes[stop..at]).map(|i| stop + i + 1)
}

/// The start of the line holding the position `at` (a position just after a line break starts
/// its line).
pub(crate) fn line_start_at(bytes: &[u8], at: usize) -> usize {
    after_last_break(bytes, 0, at).unwrap_or(0)
}

/// The start of the line that ends at `end` (at or after `stop`): `end` may be just after the
/// line's break or, for a last line without one, the end of the text.
pub(crate) fn line_start(bytes: &[u8], end: usize, stop: usize) -> usize {
    let body = match end.checked_sub(1) {
        Some(last) if last >= stop && bytes[last] == b'\n' => last,
        _ => end,
    };
    after_last_break(bytes, stop, body).unwrap_or(stop)
}

/// A line without its line break (`\n` or `\r\n`).
pub(crate) fn without_break(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Whether a line holds nothing but whitespace.
pub(crate) fn is_blank(line: &[u8]) -> bool {
    without_break(line).iter().all(u8::is_ascii_whitespace)
}

/// The byte just after the first `n` lines of `bytes[start..limit]` (`limit` if it has fewer;
/// `start` for `n == 0`).
pub(crate) fn nth_line_end(bytes: &[u8], start: usize, limit: usize, n: usize) -> usize {
    if n == 0 {
        return start;
    }
    match memchr::memchr_iter(b'\n', &bytes[start..limit]).nth(n - 1) {
        Some(at) => start + at + 1,
        None => limit,
    }
}

/// The byte where the last `n` lines of `bytes[stop..end]` start.
pub(crate) fn nth_line_start(bytes: &[u8], end: usize, stop: usize, n: usize) -> usize {
    let mut at = end;
    for _ in 0..n {
        if at <= stop {
            return stop;
        }
        at = line_start(bytes, at, stop);
    }
    at
}

/// The byte offset just after the first `n` lines of `bytes`.
pub(crate) fn end_of_first_lines(bytes: &[u8], n: usize) -> usize {
    nth_line_end(bytes, 0, bytes.len(), n)
}

/// The byte offset where the last `n` lines of `bytes` start.
pub(crate) fn start_of_last_lines(bytes: &[u8], n: usize) -> usize {
    if n == 0 {
        return bytes.len();
    }
    // A final newline ends the last line; it does not start another.
    let body = match bytes.last() {
        Some(b'\n') => &bytes[..bytes.len() - 1],
        _ => bytes,
    };
    match memchr::memrchr_iter(b'\n', body).nth(n - 1) {
        Some(at) => at + 1,
        None => 0,
    }
}

/// The chars of `text` after its last line break: its last line, cut or not.
pub(crate) fn last_line_chars(text: &str) -> usize {
    text[line_start_at(text.as_bytes(), text.len())..]
        .chars()
        .count()
}

/// The chars of `text` before its first line break (`\n` or `\r\n`).
pub(crate) fn first_line_chars(text: &str) -> usize {
    match memchr::memchr(b'\n', text.as_bytes()) {
        Some(end) => {
            let line = &text[..end];
            line.strip_suffix('\r').unwrap_or(line).chars().count()
        }
        None => text.chars().count(),
    }
}

/// The byte offset just after the first `n` chars of `text` (its length if it has fewer).
pub(crate) fn byte_offset_after_chars(text: &str, n: usize) -> usize {
    byte_offset_after_chars_from(text, 0, n)
}

/// The byte offset just after the first `n` chars of `text[from..]`.
pub(crate) fn byte_offset_after_chars_from(text: &str, from: usize, n: usize) -> usize {
    const LANES: usize = 32;
    let bytes = &text.as_bytes()[from..];
    if bytes.len() <= n {
        return text.len(); // no more chars than bytes
    }
    // Whole groups of bytes while they start no more chars than are left to pass (counted in
    // byte-wide lanes, which the compiler does 32 at once), then byte by byte.
    let is_start = |byte: u8| (byte as i8) >= -0x40;
    let mut left = n;
    let mut at = 0;
    for group in bytes.chunks_exact(LANES) {
        let starts = group.iter().map(|&b| u8::from(is_start(b))).sum::<u8>();
        if usize::from(starts) > left {
            break;
        }
        left -= usize::from(starts);
        at += LANES;
    }
    for (i, &byte) in bytes[at..].iter().enumerate() {
        if is_start(byte) {
            if left == 0 {
                return from + at + i;
            }
            left -= 1;
        }
    }
    text.len()
}

/// The byte offset `n` chars before `end` (0 if fewer chars precede it).
pub(crate) fn byte_offset_before_chars(text: &str, end: usize, n: usize) -> usize {
    if n == 0 {
        return end;
    }
    match text[..end].char_indices().nth_back(n - 1) {
        Some((at, _)) => at,
        None => 0,
    }
}

/// The number of lines of `bytes` holding `newlines` line breaks: one more when the last line
/// has none.
pub(crate) fn lines_from(bytes: &[u8], newlines: usize) -> usize {
    newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// The line breaks of `bytes`.
pub(crate) fn count_newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

/// Counts chars (bytes that do not continue a UTF-8 sequence) and newlines in one pass.
///
/// Written so the compiler vectorizes it: byte-wide counters per lane, widened every 255 rounds
/// before they could overflow. On a 100 MB input it runs at the speed of memchr's newline count
/// alone, where two separate passes take twice as long (BENCHMARKS.md).
pub(crate) fn count_chars_and_newlines(bytes: &[u8]) -> (usize, usize) {
    const LANES: usize = 32;
    let (mut chars, mut newlines) = (0usize, 0usize);
    for block in bytes.chunks(LANES * 255) {
        let mut lane_chars = [0u8; LANES];
        let mut lane_newlines = [0u8; LANES];
        let mut groups = block.chunks_exact(LANES);
        for group in &mut groups {
            for ((byte, c), n) in group.iter().zip(&mut lane_chars).zip(&mut lane_newlines) {
                // Continuation bytes are 0b10xx_xxxx, that is -64..-128 as i8.
                *c += u8::from((*byte as i8) >= -64);
                *n += u8::from(*byte == b'\n');
            }
        }
        chars += lane_chars.iter().map(|&c| usize::from(c)).sum::<usize>();
        newlines += lane_newlines.iter().map(|&n| usize::from(n)).sum::<usize>();
        for &byte in groups.remainder() {
            chars += usize::from((byte as i8) >= -64);
            newlines += usize::from(byte == b'\n');
        }
    }
    (chars, newlines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_lines_start_after_the_right_newline() {
        assert_eq!(start_of_last_lines(b"a\nb\nc\n", 1), 4);
        assert_eq!(start_of_last_lines(b"a\nb\nc", 2), 2);
        assert_eq!(start_of_last_lines(b"a\nb\nc", 5), 0);
        assert_eq!(end_of_first_lines(b"a\nb\nc", 1), 2);
        assert_eq!(end_of_first_lines(b"a\nb\nc", 9), 5);
        assert_eq!(end_of_first_lines(b"a\nb\nc", 0), 0);
    }

    #[test]
    fn lines_are_found_from_either_end() {
        let text = b"ab\ncd\nef";
        assert_eq!(line_end(text, 0, text.len()), 3);
        assert_eq!(line_end(text, 6, text.len()), 8);
        assert_eq!(line_start(text, 8, 0), 6);
        assert_eq!(line_start(text, 6, 0), 3);
        assert_eq!(line_start(text, 3, 0), 0);
        assert_eq!(nth_line_start(text, 8, 0, 2), 3);
        assert_eq!(nth_line_start(text, 8, 0, 9), 0);
        assert_eq!(without_break(b"a\r\n"), b"a");
        assert_eq!(without_break(b"a\n"), b"a");
        assert_eq!(without_break(b"a"), b"a");
        assert!(is_blank(b"  \t\r\n"));
    }

    #[test]
    fn char_offsets_never_split_a_char() {
        let text = "aé😀b";
        assert_eq!(byte_offset_after_chars(text, 2), 3);
        assert_eq!(byte_offset_after_chars(text, 9), text.len());
        assert_eq!(byte_offset_before_chars(text, text.len(), 2), 3);
        assert_eq!(byte_offset_before_chars(text, text.len(), 9), 0);
    }

    proptest::proptest! {
        #[test]
        fn the_fused_count_agrees_with_std(text in "\\PC{0,3000}|(\\PC|\n){0,9000}") {
            let expected = (text.chars().count(), text.matches('\n').count());
            proptest::prop_assert_eq!(count_chars_and_newlines(text.as_bytes()), expected);
        }

        #[test]
        fn the_offset_after_n_chars_agrees_with_std(
            text in "\\PC{0,300}|[a-z\u{e9}\u{65e5}\u{1f642}]{0,300}",
            from in 0usize..400,
            n in 0usize..400,
        ) {
            let from = (0..=from.min(text.len())).rev().find(|&at| text.is_char_boundary(at)).unwrap_or(0);
            let expected = text[from..].char_indices().nth(n).map_or(text.len(), |(at, _)| from + at);
            proptest::prop_assert_eq!(byte_offset_after_chars_from(&text, from, n), expected);
        }
    }
}
