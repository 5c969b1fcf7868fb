//! Terminal output as a terminal shows it: escape sequences (colours, cursor moves, titles)
//! removed, carriage-return redraws and backspaces resolved, so a progress bar redrawn a hundred
//! times is its last state and a coloured error is its words.
//!
//! The escape grammar is the `vte` crate's (Alacritty's parser): CSI, OSC, DCS and plain ESC
//! sequences are recognised by the grammar terminals use, never by a pattern.

use std::borrow::Cow;

/// Whether `bytes` hold anything a terminal would not print as it is: an escape, a carriage
/// return or a backspace. Text without any is shown as it is, at memchr speed.
pub(crate) fn needs_rendering(bytes: &[u8]) -> bool {
    memchr::memchr3(0x1B, b'\r', 0x08, bytes).is_some()
}

/// What rendering removed from a text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Removed {
    /// Escape sequences (CSI, OSC, DCS, ESC …).
    pub(crate) escapes: usize,
    /// Carriage returns and backspaces that moved the cursor back over text (redraws).
    pub(crate) redraws: usize,
}

impl Removed {
    pub(crate) fn add(&mut self, other: Removed) {
        self.escapes += other.escapes;
        self.redraws += other.redraws;
    }

    pub(crate) fn is_empty(self) -> bool {
        self.escapes == 0 && self.redraws == 0
    }
}

/// `text` as a terminal would show it, line by line; borrowed when nothing needed rendering.
/// Invalid UTF-8 is shown as U+FFFD.
pub(crate) fn render(text: &str) -> (Cow<'_, str>, Removed) {
    if !needs_rendering(text.as_bytes()) {
        return (Cow::Borrowed(text), Removed::default());
    }
    let mut screen = Screen::default();
    let mut parser = vte::Parser::new();
    parser.advance(&mut screen, text.as_bytes());
    screen.end_line(false);
    if screen.removed.is_empty() {
        // Only line feeds after carriage returns (CRLF): the text is what a terminal shows.
        return (Cow::Borrowed(text), Removed::default());
    }
    (Cow::Owned(screen.out), screen.removed)
}

/// The lines printed so far and the one being drawn.
#[derive(Default)]
struct Screen {
    out: String,
    /// The line being drawn, a char per column.
    line: Vec<char>,
    cursor: usize,
    removed: Removed,
    /// A carriage return not yet acted on: before a line feed it only ends the line (CRLF).
    pending_cr: bool,
}

impl Screen {
    /// Ends the line being drawn (`newline`: with a line feed).
    fn end_line(&mut self, newline: bool) {
        if !newline {
            self.settle_cr();
        }
        // Trailing blanks a redraw left behind are not part of what the line says.
        while self.line.last() == Some(&' ') && self.line.len() > self.cursor {
            self.line.pop();
        }
        self.out.extend(self.line.drain(..));
        if newline {
            self.out.push('\n');
        }
        self.cursor = 0;
    }

    /// Acts on a carriage return that was not part of a CRLF: the cursor goes back to column 0.
    fn settle_cr(&mut self) {
        if std::mem::take(&mut self.pending_cr) {
            if self.cursor > 0 {
                self.removed.redraws += 1;
            }
            self.cursor = 0;
        }
    }

    fn put(&mut self, c: char) {
        self.settle_cr();
        if self.cursor < self.line.len() {
            self.line[self.cursor] = c;
        } else {
            self.line.resize(self.cursor, ' ');
            self.line.push(c);
        }
        self.cursor += 1;
    }
}

impl vte::Perform for Screen {
    fn print(&mut self, c: char) {
        self.put(c);
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' => {
                // CRLF keeps its carriage return: the line is what it was.
                if std::mem::take(&mut self.pending_cr) {
                    self.line.push('\r');
                    self.cursor = self.line.len();
                }
                self.end_line(true);
            }
            b'\r' => {
                self.settle_cr();
                self.pending_cr = true;
            }
            0x08 => {
                self.settle_cr();
                if self.cursor > 0 {
                    self.removed.redraws += 1;
                    self.cursor -= 1;
                }
            }
            b'\t' => self.put('\t'),
            // Bells, shifts and the other controls print nothing: removed, and counted so.
            _ => self.removed.escapes += 1,
        }
    }

    fn csi_dispatch(
        &mut self,
        params: &vte::Params,
        _intermediates: &[u8],
        _ignore: bool,
        action: char,
    ) {
        self.settle_cr();
        self.removed.escapes += 1;
        let first = params
            .iter()
            .next()
            .and_then(|param| param.first().copied())
            .unwrap_or(0);
        let n = usize::from(first.max(1));
        match action {
            // Erase in line: from the cursor, to the cursor, or all of it.
            'K' => match first {
                0 => self.line.truncate(self.cursor),
                1 => {
                    let end = self.cursor.min(self.line.len());
                    self.line[..end].fill(' ');
                }
                _ => self.line.clear(),
            },
            // Cursor to a column (1-based), back, forward.
            'G' => self.cursor = n - 1,
            'D' => self.cursor = self.cursor.saturating_sub(n),
            'C' => self.cursor += n,
            // Colours, modes and moves to other lines change nothing the line says.
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, _intermediates: &[u8], _ignore: bool, _byte: u8) {
        self.removed.escapes += 1;
    }

    fn osc_dispatch(&mut self, _params: &[&[u8]], _bell_terminated: bool) {
        self.removed.escapes += 1;
    }

    fn hook(&mut self, _params: &vte::Params, _intermediates: &[u8], _ignore: bool, _a: char) {
        self.removed.escapes += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_removed_and_counted() {
        let (text, removed) =
            render("\x1b[1m\x1b[31merror[E0308]\x1b[0m\x1b[1m: mismatched types\x1b[0m\n");
        assert_eq!(text, "error[E0308]: mismatched types\n");
        assert_eq!(removed.escapes, 5);
    }

    #[test]
    fn a_redrawn_progress_line_is_its_last_state() {
        let (text, removed) = render(
            "Receiving objects:  10% (1/10)\rReceiving objects:  50% (5/10)\rReceiving objects: \
             100% (10/10), done.\nnext\n",
        );
        assert_eq!(text, "Receiving objects: 100% (10/10), done.\nnext\n");
        assert_eq!(removed.redraws, 2);
    }

    #[test]
    fn a_shorter_redraw_after_an_erase_leaves_nothing_behind() {
        let (text, _) = render("compiling 10 crates\r\x1b[Kdone\n");
        assert_eq!(text, "done\n");
        let (text, _) = render("abcdef\rxy\n");
        assert_eq!(
            text, "xycdef\n",
            "without an erase, a terminal keeps the rest"
        );
    }

    #[test]
    fn backspaces_overwrite_and_osc_titles_vanish() {
        let (text, removed) = render("\x1b]0;building\x07ab\x08c\n");
        assert_eq!(text, "ac\n");
        assert_eq!(removed.escapes, 1);
        assert_eq!(removed.redraws, 1);
    }

    #[test]
    fn crlf_lines_stay_as_they_were() {
        let (text, removed) = render("\x1b[32mok\x1b[0m\r\nnext\r\n");
        assert_eq!(text, "ok\r\nnext\r\n");
        assert_eq!(removed.redraws, 0);
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(render("plain\ntext"), (Cow::Borrowed(_), _)));
    }
}
