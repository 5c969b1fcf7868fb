//! What stands out in *this* output, whatever tool wrote it: the lines a developer's eye goes to
//! in an output no pattern was written for.
//!
//! Each line is reduced to its template ([`template`]: every word holding a digit masked),
//! and the templates are counted over the whole output. A line stands out by what it says and by
//! how rare its shape is here:
//!
//! - **severity wherever it stands**: a word of failure (`error`, `failed`, `fatal`, `denied`,
//!   `cannot`, `not found`, `unexpected`, …) or of warning (`warning`, `deprecated`) anywhere on
//!   the line, a level column (`error`, `E`), or a code whose letter says it (`E0602`, `F821`;
//!   `W291`) — not in a path or an identifier, and not negated (`0 errors`, `no failures`);
//! - **rarity**: an error's line stands out unless its template is most of the output (a
//!   column of one value); a warning's only when its template is rare here (one of a thousand
//!   findings of one shape does not, the one of another shape does);
//! - **a shape of its own**: a line whose template occurs once in a long output and differs from
//!   its neighbours' is kept after the errors and warnings, from what room is left.
//!
//! The vocabulary is of failure in general, not of any tool's format: the patterns of
//! [`super::PATTERNS`] stay as priors, and this is the method for the rest. It reads a whole text
//! once more (a word scan and a template a line), so it runs on texts up to [`MAX_BYTES`], where
//! that costs a few milliseconds at most; a larger one is cut by the patterns alone, at the
//! speed of one read.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use super::Tier;
use crate::trim::bytes::{is_blank, without_break};

/// The largest text whose lines are read for what stands out (a stream up to it is kept whole
/// to be read so: [`Capture`](crate::trim::Capture)).
pub(crate) const MAX_BYTES: usize = 512 << 10;

/// The fewest lines an output has for a shape of its own to mean anything.
const MIN_LINES_FOR_RARITY: usize = 30;

/// How rare a warning's template must be to stand out: at most this many lines of it.
const RARE_WARNING: usize = 3;

/// The lines of `text[range]` that stand out, in order, each its start and its tier
/// ([`Tier::Rare`] for a shape of its own); none when `text` is over [`MAX_BYTES`].
pub(crate) fn standouts(text: &[u8], range: Range<usize>) -> Vec<(usize, Tier)> {
    if text.len() > MAX_BYTES || range.is_empty() {
        return Vec::new();
    }
    let lines = line_spans(text);
    if lines.len() < 3 {
        return Vec::new();
    }
    let templates: Vec<u64> = lines
        .iter()
        .map(|line| template(without_break(&text[line.clone()])))
        .collect();
    let mut counts: HashMap<u64, usize, BuildHasherDefault<Identity>> =
        HashMap::with_capacity_and_hasher(lines.len().min(1 << 16), BuildHasherDefault::default());
    for &template in &templates {
        *counts.entry(template).or_default() += 1;
    }
    let total = lines.len();
    let mut out = Vec::new();
    let first = lines.partition_point(|line| line.start < range.start);
    let last = lines.partition_point(|line| line.start < range.end);
    // The lines that may say a severity: a word of one somewhere on them (one search of the
    // range), or a letter for a level at their start. The others are read for their shape only.
    let mut worded = vec![false; last - first];
    let mut position = lines.get(first).map_or(range.end, |line| line.start);
    let mut at_line = first;
    while position < range.end {
        let input = aho_corasick::Input::new(&text[..range.end]).range(position..);
        let Some(found) = vocabulary().find(input) else {
            break;
        };
        while lines[at_line].end <= found.start() {
            at_line += 1;
        }
        worded[at_line - first] = true;
        // The rest of a line marked is not searched.
        position = lines[at_line].end;
        at_line += 1;
        if at_line >= last {
            break;
        }
    }
    for i in first..last {
        let line = &lines[i];
        let bytes = without_break(&text[line.clone()]);
        if is_blank(bytes) {
            continue;
        }
        let says = if worded[i - first] || starts_with_a_level_letter(bytes) {
            severity(bytes)
        } else {
            None
        };
        let seen = counts[&templates[i]];
        let tier = match says {
            // A column of one value over most of the output is not news.
            Some(Tier::Error) if seen * 2 <= total || seen <= 8 => Some(Tier::Error),
            Some(Tier::Warning) if seen <= RARE_WARNING => Some(Tier::Warning),
            _ if total >= MIN_LINES_FOR_RARITY
                && seen == 1
                && bytes.len() >= 8
                && differs_from_neighbours(&templates, &lines, text, i) =>
            {
                Some(Tier::Rare)
            }
            _ => None,
        };
        if let Some(tier) = tier {
            out.push((line.start, tier));
        }
    }
    out
}

/// Every word [`severity`] reads as one (its stems, words, pairs and codes' letters), for one
/// search of a text: a line without any is read for its shape only.
fn vocabulary() -> &'static AhoCorasick {
    static VOCABULARY: OnceLock<AhoCorasick> = OnceLock::new();
    VOCABULARY.get_or_init(|| {
        let pairs = FAILURE_PAIRS.iter().map(|(a, b)| format!("{a} {b}"));
        let codes = ["e", "f", "w"]
            .into_iter()
            .flat_map(|letter| (0..10).map(move |digit| format!("{letter}{digit}")));
        let words: Vec<String> = FAILURE_STEMS
            .iter()
            .chain(TROUBLE_STEMS)
            .chain(FAILURE_WORDS)
            .chain(WARNING_STEMS)
            .map(|word| (*word).to_owned())
            .chain(pairs)
            .chain(["can't".to_owned(), "can’t".to_owned()])
            .chain(codes)
            .collect();
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(words)
            .expect("the vocabulary is a few hundred short words")
    })
}

/// Whether a line starts (after its indent) with a letter that is a level as a column of its
/// own (`E   assert 1 == 2`, `W  unused`).
fn starts_with_a_level_letter(line: &[u8]) -> bool {
    let line = line.trim_ascii_start();
    matches!(line.first(), Some(b'E' | b'W' | b'e' | b'w'))
        && line.get(1).is_none_or(u8::is_ascii_whitespace)
}

/// A line's template, as a hash: every word holding a digit (a number, an id, an address, a
/// numbered name) one mark, the rest as it is — two lines of one shape that differ in their
/// numbers share it. Cheaper than a repeat's [`signature`](crate::trim::signature::signature),
/// which also reads durations and quoting: this runs on every line of a text.
fn template(line: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let (mut hash, mut word, mut digits) = (0u64, 0u64, false);
    let mut in_word = false;
    for &byte in line {
        match CLASS[usize::from(byte)] {
            WORD => {
                word = word.wrapping_mul(31).wrapping_add(u64::from(byte));
                in_word = true;
            }
            DIGIT => {
                digits = true;
                in_word = true;
            }
            _ => {
                if in_word {
                    hash = (hash.rotate_left(5) ^ if digits { 0x23 } else { word }).wrapping_mul(K);
                    (word, digits, in_word) = (0, false, false);
                }
                hash = (hash.rotate_left(5) ^ (u64::from(byte) | 0x100)).wrapping_mul(K);
            }
        }
    }
    if in_word {
        hash = (hash.rotate_left(5) ^ if digits { 0x23 } else { word }).wrapping_mul(K);
    }
    hash
}

/// A byte's part in a [`template`]: of a word, a digit (of a word masked), or neither.
const OTHER: u8 = 0;
const WORD: u8 = 1;
const DIGIT: u8 = 2;
static CLASS: [u8; 256] = {
    let mut class = [OTHER; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        class[byte] = if b.is_ascii_digit() {
            DIGIT
        } else if b.is_ascii_alphabetic() {
            WORD
        } else {
            OTHER
        };
        byte += 1;
    }
    class
};

/// The hasher of templates' counts: a template is a hash already.
#[derive(Default)]
struct Identity(u64);

impl std::hash::Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 << 8) | u64::from(byte);
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// Each line's bytes, its line break included.
fn line_spans(text: &[u8]) -> Vec<Range<usize>> {
    let mut spans = Vec::with_capacity(bytecount::count(text, b'\n') + 1);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', text) {
        spans.push(start..end + 1);
        start = end + 1;
    }
    if start < text.len() {
        spans.push(start..text.len());
    }
    spans
}

/// Whether line `i`'s template is neither of the non-blank lines beside it.
fn differs_from_neighbours(
    templates: &[u64],
    lines: &[Range<usize>],
    text: &[u8],
    i: usize,
) -> bool {
    let neighbour =
        |j: usize| (!is_blank(without_break(&text[lines[j].clone()]))).then_some(templates[j]);
    let before = (0..i).rev().find_map(neighbour);
    let after = (i + 1..templates.len()).find_map(neighbour);
    before != Some(templates[i]) && after != Some(templates[i])
}

/// Words that say a thing failed, whatever else the line says (a word of the line that starts
/// with one, in any case).
const FAILURE_STEMS: &[&str] = &[
    "error",
    "fail",
    "fatal",
    "panic",
    "exception",
    "traceback",
    "abort",
    "crash",
    "segfault",
    "segmentation",
];

/// Words of what went wrong that a line's own level may call a warning (`warning  Unexpected
/// whitespace`): an error's where the line names no level.
const TROUBLE_STEMS: &[&str] = &[
    "denied",
    "refused",
    "invalid",
    "cannot",
    "unable",
    "corrupt",
    "undefined",
    "undeclared",
    "unexpected",
    "unsatisfiable",
    "incompatible",
    "conflict",
    "violat",
    "mismatch",
    "timeout",
    "killed",
    "overflow",
    "forbidden",
    "unauthorized",
    "rejected",
    "unrecognized",
    "illegal",
    "deadlock",
    "unresolved",
];

/// Words that are a failure as they stand, not as a stem.
const FAILURE_WORDS: &[&str] = &["err", "bad", "emerg", "crit", "severe"];

/// Two words in a row that say something failed.
const FAILURE_PAIRS: &[(&str, &str)] = &[
    ("not", "found"),
    ("no", "such"),
    ("could", "not"),
    ("does", "not"),
    ("not", "defined"),
    ("not", "recognized"),
    ("not", "allowed"),
    ("not", "valid"),
    ("of", "memory"),
    ("no", "solution"),
    ("timed", "out"),
    ("can", "t"),
];

/// Words that warn.
const WARNING_STEMS: &[&str] = &["warn", "deprecat", "caution"];

/// Levels that say a line is context, not news: a line labelled so (`note:`, `[INFO]`, a level
/// column) before any word of failure says what its tool thinks of it (`note: template argument
/// deduction failed` explains an error; it is not one).
const QUIET_LEVELS: &[&str] = &[
    "note", "info", "debug", "trace", "hint", "help", "notice", "verbose",
];

/// The keys of a record's level (`"level": "info"`, `lvl=debug`).
const LEVEL_KEYS: &[&str] = &["level", "lvl", "severity", "levelname", "loglevel"];

/// Words before one of failure that deny it: `0 errors`, `no failures`, `without error`.
const NEGATIONS: &[&str] = &[
    "0", "no", "zero", "without", "ignore", "ignored", "ignoring",
];

/// What a line says of its severity, wherever on it: an error's, a warning's, or nothing.
pub(crate) fn severity(line: &[u8]) -> Option<Tier> {
    let words = words(line);
    let (mut warns, mut trouble) = (false, false);
    for (k, word) in words.iter().enumerate() {
        let denied = k.checked_sub(1).is_some_and(|j| {
            NEGATIONS
                .iter()
                .any(|n| words[j].text.eq_ignore_ascii_case(n.as_bytes()))
        });
        if denied || word.in_a_name {
            continue;
        }
        let text = word.text;
        let level_value = k.checked_sub(1).is_some_and(|j| {
            LEVEL_KEYS
                .iter()
                .any(|key| words[j].text.eq_ignore_ascii_case(key.as_bytes()))
        });
        if !warns
            && !trouble
            && (is_label(line, word) || level_value)
            && QUIET_LEVELS
                .iter()
                .any(|q| text.eq_ignore_ascii_case(q.as_bytes()))
        {
            return None;
        }
        let is = |list: &[&str]| list.iter().any(|stem| starts_with_ignore_case(text, stem));
        // A letter is a level only as a column of its own (pytest's `E   assert`, a `W` column).
        let letter_level =
            |letter: &[u8]| text.eq_ignore_ascii_case(letter) && is_label(line, word);
        if is(FAILURE_STEMS)
            || FAILURE_WORDS
                .iter()
                .any(|w| text.eq_ignore_ascii_case(w.as_bytes()))
            || letter_level(b"e")
            || code_of(text) == Some(Tier::Error)
        {
            return Some(Tier::Error);
        }
        let pair = words.get(k + 1).is_some_and(|next| {
            FAILURE_PAIRS.iter().any(|(a, b)| {
                text.eq_ignore_ascii_case(a.as_bytes())
                    && next.text.eq_ignore_ascii_case(b.as_bytes())
            })
        });
        trouble |= pair || is(TROUBLE_STEMS);
        warns |= is(WARNING_STEMS) || code_of(text) == Some(Tier::Warning) || letter_level(b"w");
    }
    match (warns, trouble) {
        (true, _) => Some(Tier::Warning),
        (false, true) => Some(Tier::Error),
        (false, false) => None,
    }
}

/// A word of a line: its letters and digits, and whether it is part of a path, a file's name or
/// a dotted name (`src/errors.rs`, `errors.py`, `app.errors`), where it says nothing of the line.
struct Word<'a> {
    text: &'a [u8],
    at: usize,
    in_a_name: bool,
}

/// Whether `word` is a label of `line`: followed by `:` or `]`, after `[`, or a column of its
/// own (at the line's start or after two spaces, and two spaces or the end after it).
fn is_label(line: &[u8], word: &Word<'_>) -> bool {
    let end = word.at + word.text.len();
    let after = line.get(end).copied();
    let before = word.at.checked_sub(1).map(|i| line[i]);
    let column_before =
        word.at == 0 || line[..word.at].ends_with(b"  ") || line[..word.at].trim_ascii().is_empty();
    let column_after = end == line.len() || line[end..].starts_with(b"  ");
    matches!(after, Some(b':' | b']')) || before == Some(b'[') || (column_before && column_after)
}

fn words(line: &[u8]) -> Vec<Word<'_>> {
    let mut words = Vec::new();
    let mut at = 0;
    while at < line.len() {
        if !line[at].is_ascii_alphanumeric() {
            at += 1;
            continue;
        }
        let start = at;
        while at < line.len() && (line[at].is_ascii_alphanumeric() || line[at] == b'_') {
            at += 1;
        }
        let before = start.checked_sub(1).map(|i| line[i]);
        let after = line.get(at).copied();
        let after_next = line.get(at + 1).copied();
        // A record's key (`"error": null`) names a field, not a failure.
        let a_key =
            before == Some(b'"') && after == Some(b'"') && line.get(at + 1).copied() == Some(b':');
        let in_a_name = a_key
            || matches!(
                before,
                Some(b'/' | b'\\' | b'.' | b'-' | b'_' | b'$' | b'@')
            )
            || after == Some(b'/')
            || (matches!(after, Some(b'.' | b'-' | b'_'))
                && after_next.is_some_and(|b| b.is_ascii_alphanumeric()))
            || line[start..at].contains(&b'_');
        words.push(Word {
            text: &line[start..at],
            at: start,
            in_a_name,
        });
    }
    words
}

/// What a code's letter says: `E0602`, `F821` an error's; `W291` a warning's (one letter, then
/// three to five digits).
fn code_of(word: &[u8]) -> Option<Tier> {
    let (&letter, digits) = word.split_first()?;
    if !(3..=5).contains(&digits.len()) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    match letter {
        b'E' | b'F' => Some(Tier::Error),
        b'W' => Some(Tier::Warning),
        _ => None,
    }
}

fn starts_with_ignore_case(word: &[u8], stem: &str) -> bool {
    word.len() >= stem.len() && word[..stem.len()].eq_ignore_ascii_case(stem.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_is_read_wherever_it_stands_and_not_in_names_or_denials() {
        let error = Some(Tier::Error);
        let warning = Some(Tier::Warning);
        assert_eq!(
            severity(b"  3:21  error    'rowz' is not defined  no-undef"),
            error
        );
        assert_eq!(
            severity(b"app/m47.py:9:11: E0602: Undefined variable 'w'"),
            error
        );
        assert_eq!(
            severity(b"src/m88.py:2:34: F821 undefined name 'rowz'"),
            error
        );
        assert_eq!(
            severity(b"src/m1.py:1:10: W291 trailing whitespace"),
            warning
        );
        assert_eq!(
            severity(b"ssh: connect to host 10.0.0.1 port 22: Connection refused"),
            error
        );
        assert_eq!(severity(b"ERROR 404: File not found."), error);
        // The line's own level says a warning of what would be an error's word.
        assert_eq!(severity(b"  1:10  warning  Unexpected whitespace"), warning);
        assert_eq!(severity(b"  1:10  error  Unexpected duplicate"), error);
        assert_eq!(severity(b"DeprecationWarning: the API is old"), warning);
        // The line's own level says it is context.
        assert_eq!(
            severity(b"map.h:846:9: note:   template argument deduction/substitution failed:"),
            None
        );
        assert_eq!(
            severity(b"2026-11-24 10:00:01 [INFO] retry after failed attempt 1"),
            None
        );
        assert_eq!(severity(b"the build failed: see help"), error);
        // Denied, or in a name: nothing.
        assert_eq!(severity(b"Found 0 errors in 120 files"), None);
        assert_eq!(severity(b"no failures"), None);
        assert_eq!(severity(b"compiling src/errors.rs"), None);
        assert_eq!(severity(b"import app.errors as e"), None);
        assert_eq!(severity(b"def handle_error(request):"), None);
        assert_eq!(severity(br#"{"lvl":"debug","error":null}"#), None);
        assert_eq!(
            severity(br#"{"level":"info","msg":"payment failed, retrying"}"#),
            None
        );
        assert_eq!(
            severity(b"processed record 12: 12 fields, checksum ok"),
            None
        );
    }

    #[test]
    fn the_few_among_the_many_stand_out_and_the_many_do_not() {
        let mut text = String::new();
        for i in 0..300 {
            text.push_str(&format!(
                "src/h{i}.js\n  2:7  warning  'value' is never reassigned  prefer-const\n"
            ));
        }
        text.push_str("src/h61.js\n  3:21  error  'rowz' is not defined  no-undef\n");
        for i in 300..400 {
            text.push_str(&format!(
                "src/h{i}.js\n  2:7  warning  'value' is never reassigned  prefer-const\n"
            ));
        }
        let found = standouts(text.as_bytes(), 0..text.len());
        let errors: Vec<&str> = found
            .iter()
            .filter(|(_, tier)| *tier == Tier::Error)
            .map(|&(start, _)| text[start..].lines().next().unwrap())
            .collect();
        assert_eq!(errors, ["  3:21  error  'rowz' is not defined  no-undef"]);
        assert!(
            found.iter().all(|(_, tier)| *tier != Tier::Warning),
            "a thousand of one shape"
        );
    }

    #[test]
    fn a_line_of_a_shape_of_its_own_stands_out_last() {
        let mut text = String::new();
        for i in 0..100 {
            text.push_str(&format!("imported row {i}: ITEM {i}\n"));
        }
        text.push_str("the importer stopped: the disk quota was reached\n");
        for i in 100..150 {
            text.push_str(&format!("imported row {i}: ITEM {i}\n"));
        }
        let found = standouts(text.as_bytes(), 0..text.len());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].1, Tier::Rare);
        assert!(text[found[0].0..].starts_with("the importer stopped"));
    }
}
