//! Where the default salient patterns occur, found at about the speed of reading memory.
//!
//! Each default pattern has an *anchor*: four of its bytes, chosen because they rarely occur in
//! real output, and one of eight buckets. For 64 positions at once (AVX-512) or 32 (AVX2), a
//! vector kernel (`x86.rs`, chosen at run time) looks up the two nibbles of each of the four
//! bytes from a position in tables of the buckets whose anchors have that nibble there (the
//! packed "Teddy" search of Hyperscan and aho-corasick); a position
//! every lookup agrees on for some bucket is a *candidate*, and only candidates are compared with
//! their buckets' patterns. The same pass counts the chars and newlines of the bytes it reads, so
//! a survey of a long text reads it once.
//!
//! The anchors and buckets are chosen by a search over the test corpus's real outputs and the
//! perf gate's build log (`scripts/choose-anchors.py`, run again when a pattern is added) for the
//! fewest false candidates and the fewest patterns compared at the candidates: every output of
//! the corpus makes at most one false candidate in 4,000 bytes (a test holds them to it). A hostile text can make most positions candidates: a block of more than
//! [`MAX_CANDIDATES`] is searched by the default automaton instead, whose time is linear whatever
//! the text, as is every block on a CPU with neither. Either way the same lines are found: every
//! occurrence of a pattern is reported, and the automaton's leftmost matches start on the same
//! lines (no pattern holds a line break but at its start).

use std::ops::Range;

use super::{default_automaton, find_by_automaton};
use crate::trim::bytes::count_chars_and_newlines;

/// A default pattern and its anchor: its four bytes from `at`, in bucket `bucket`.
struct Anchored {
    pattern: &'static [u8],
    at: usize,
    bucket: u8,
}

const fn anchored(pattern: &'static str, at: usize, bucket: u8) -> Anchored {
    Anchored {
        pattern: pattern.as_bytes(),
        at,
        bucket,
    }
}

/// Every default pattern with its anchor, by bucket (the same patterns as `PATTERNS`: a test
/// holds the two lists together). A new pattern is added here with any anchor, and
/// `scripts/choose-anchors.py tests/corpus --write` chooses every anchor and bucket again (a
/// bucket accepts any mix of its anchors' nibbles at each position, so one choice moves the
/// others'); the corpus test says whether the result makes too many candidates.
const ANCHORED: [Anchored; 56] = [
    anchored("undefined reference", 15, 0),
    anchored("\"log.level\":", 3, 0),
    anchored("Unhandled exception", 10, 0),
    anchored("Exception in thread", 0, 0),
    anchored("Exception:", 0, 0),
    anchored("npm ERR!", 3, 0),
    anchored("Traceback (most recent call last)", 5, 0),
    anchored("Segmentation fault", 2, 1),
    anchored("warning:", 1, 1),
    anchored("Fatal", 1, 1),
    anchored("FATAL", 0, 1),
    anchored("level=", 1, 2),
    anchored("\"level\":", 2, 2),
    anchored("\"levelname\":", 2, 2),
    anchored("panic:", 2, 2),
    anchored("Diff in ", 0, 2),
    anchored("panicked at", 4, 3),
    anchored("fatal:", 2, 3),
    anchored("  Received: ", 7, 3),
    anchored("critical:", 5, 3),
    anchored("  Expected: ", 7, 3),
    anchored("CRITICAL", 0, 3),
    anchored("Sanitizer: ", 1, 3),
    anchored("make: ***", 1, 3),
    anchored("WARN", 0, 4),
    anchored("Warning:", 0, 4),
    anchored(" Warning  ", 1, 4),
    anchored("\"Level\":", 1, 4),
    anchored("AssertionError", 0, 4),
    anchored("Assertion failed", 0, 4),
    anchored("HTTP/1.1\" 5", 7, 4),
    anchored("HTTP/1.0\" 5", 7, 4),
    anchored("HTTP/2.0\" 5", 7, 4),
    anchored("HTTP/2\" 5", 5, 4),
    anchored("lvl=", 0, 5),
    anchored("\"lvl\":", 1, 5),
    anchored("FAILED", 0, 5),
    anchored("FAIL:", 0, 5),
    anchored("--- FAIL", 4, 5),
    anchored("FAIL ", 0, 5),
    anchored("severity=", 5, 5),
    anchored("\nE   ", 0, 5),
    anchored("\"severity\":", 6, 5),
    anchored("\"Severity\":", 6, 5),
    anchored("core dumped", 4, 6),
    anchored("ERROR", 0, 6),
    anchored("error:", 2, 6),
    anchored("error[", 2, 6),
    anchored("Error:", 2, 6),
    anchored("Caused by:", 6, 6),
    anchored("required from here", 3, 6),
    anchored(": Cannot ", 5, 7),
    anchored("not ok ", 0, 7),
    anchored("failed:", 0, 7),
    anchored(": *** [", 0, 7),
    anchored("Failed to ", 0, 7),
];

const BUCKETS: usize = 8;
const ANCHOR_LEN: usize = 4;

/// Where each bucket's patterns are in [`ANCHORED`]: bucket `b` is `FIRST[b]..FIRST[b + 1]`.
const FIRST: [usize; BUCKETS + 1] = first_of_buckets();

/// The furthest into its pattern an anchor starts.
const MAX_AT: usize = max_at();

/// The most candidates a block of [`BLOCK`] bytes may make before the automaton searches it.
const MAX_CANDIDATES: usize = BLOCK / 64;

/// The bytes searched (and counted) at a time: a hostile part costs at most one block's work
/// twice.
const BLOCK: usize = 64 * 1024;

const fn first_of_buckets() -> [usize; BUCKETS + 1] {
    let mut first = [ANCHORED.len(); BUCKETS + 1];
    let mut i = ANCHORED.len();
    while i > 0 {
        i -= 1;
        let bucket = ANCHORED[i].bucket as usize;
        assert!(bucket < BUCKETS, "a bucket out of range");
        assert!(
            i + 1 == ANCHORED.len() || ANCHORED[i + 1].bucket as usize >= bucket,
            "the anchored patterns are not ordered by bucket"
        );
        let mut b = 0;
        while b <= bucket {
            first[b] = i;
            b += 1;
        }
    }
    first
}

const fn max_at() -> usize {
    let mut max = 0;
    let mut i = 0;
    while i < ANCHORED.len() {
        assert!(
            ANCHORED[i].at + ANCHOR_LEN <= ANCHORED[i].pattern.len(),
            "an anchor runs past its pattern"
        );
        let mut j = 0;
        while j < ANCHOR_LEN {
            // The kernel looks a byte's low nibble up with the byte itself: a byte that is not
            // ASCII looks up nothing.
            assert!(
                ANCHORED[i].pattern[ANCHORED[i].at + j].is_ascii(),
                "an anchor's byte is not ASCII"
            );
            j += 1;
        }
        if ANCHORED[i].at > max {
            max = ANCHORED[i].at;
        }
        i += 1;
    }
    max
}

/// For each of an anchor's four bytes, the buckets whose anchors have each low nibble there
/// (`low[j][nibble]`, one bit a bucket), and each high nibble.
struct Nibbles {
    low: [[u8; 16]; ANCHOR_LEN],
    high: [[u8; 16]; ANCHOR_LEN],
}

const NIBBLES: Nibbles = nibbles();

const fn nibbles() -> Nibbles {
    let mut tables = Nibbles {
        low: [[0; 16]; ANCHOR_LEN],
        high: [[0; 16]; ANCHOR_LEN],
    };
    let mut i = 0;
    while i < ANCHORED.len() {
        let anchor = &ANCHORED[i];
        let mut j = 0;
        while j < ANCHOR_LEN {
            let byte = anchor.pattern[anchor.at + j];
            tables.low[j][(byte & 0x0f) as usize] |= 1 << anchor.bucket;
            tables.high[j][(byte >> 4) as usize] |= 1 << anchor.bucket;
            j += 1;
        }
        i += 1;
    }
    tables
}

/// Counts the chars and newlines of `bytes[span]`, and appends to `found` every occurrence of a
/// default pattern that starts in `span` (it may run on past it), in order of their starts.
pub(super) fn count_and_find(
    bytes: &[u8],
    span: Range<usize>,
    found: &mut Vec<Range<usize>>,
) -> (usize, usize) {
    by_blocks::<true>(bytes, span, found)
}

/// Appends to `found` every occurrence of a default pattern that starts in `span` (it may run on
/// past it), in order of their starts.
pub(super) fn find(bytes: &[u8], span: Range<usize>, found: &mut Vec<Range<usize>>) {
    by_blocks::<false>(bytes, span, found);
}

/// Both, block by block: a kernel where the CPU has one and the block does not flood it, the
/// automaton (and, with `COUNT`, the plain count) where not. Without `COUNT` the counts are 0.
fn by_blocks<const COUNT: bool>(
    bytes: &[u8],
    span: Range<usize>,
    found: &mut Vec<Range<usize>>,
) -> (usize, usize) {
    let (mut chars, mut newlines) = (0, 0);
    for block in blocks(span) {
        let mark = found.len();
        let counted = match kernel::run::<COUNT>(bytes, block.clone(), found, MAX_CANDIDATES) {
            Some(counted) => counted,
            None => {
                found.truncate(mark);
                find_by_automaton(default_automaton(), bytes, block.clone(), found);
                if COUNT {
                    count_chars_and_newlines(&bytes[block])
                } else {
                    (0, 0)
                }
            }
        };
        chars += counted.0;
        newlines += counted.1;
        in_order(&mut found[mark..]);
    }
    (chars, newlines)
}

/// `span` in blocks of [`BLOCK`] bytes.
fn blocks(span: Range<usize>) -> impl Iterator<Item = Range<usize>> {
    (span.start..span.end)
        .step_by(BLOCK)
        .map(move |start| start..(start + BLOCK).min(span.end))
}

/// A block's occurrences, found anchor by anchor, put in order of their starts.
fn in_order(found: &mut [Range<usize>]) {
    if !found.is_sorted_by_key(|occurrence| occurrence.start) {
        found.sort_unstable_by_key(|occurrence| occurrence.start);
    }
}

/// Compares the patterns of the buckets in `buckets` with the text at the candidate `at`.
fn confirm(
    bytes: &[u8],
    at: usize,
    buckets: u8,
    span: &Range<usize>,
    found: &mut Vec<Range<usize>>,
) {
    let mut left = buckets;
    while left != 0 {
        let bucket = left.trailing_zeros() as usize;
        left &= left - 1;
        for anchor in &ANCHORED[FIRST[bucket]..FIRST[bucket + 1]] {
            let Some(start) = at.checked_sub(anchor.at) else {
                continue;
            };
            if span.contains(&start) && bytes[start..].starts_with(anchor.pattern) {
                found.push(start..start + anchor.pattern.len());
            }
        }
    }
}

/// The most positions a kernel's step takes.
const MAX_LANES: usize = 64;
/// The bytes a step reads at most: its positions and the anchor's bytes after the last.
const PADDED: usize = MAX_LANES + ANCHOR_LEN - 1;

/// A vector kernel: it takes steps of [`LANES`](Kernel::LANES) positions, looking each byte of
/// the anchor-long window from a position up in the nibble tables, and counts chars and
/// newlines as it goes. A value of one exists only where the CPU can run it.
trait Kernel: Copy {
    /// Positions a step takes (at most [`MAX_LANES`]).
    const LANES: usize;

    /// Takes whole steps from `at`: each step's positions before `end`, each with the anchor's
    /// bytes after it in `bytes`. Counts them (with `COUNT`) until a step has a candidate.
    fn steps<const COUNT: bool>(self, bytes: &[u8], at: usize, end: usize) -> Stop;

    /// The candidates of one step over the first `LANES + ANCHOR_LEN - 1` bytes of `window`.
    fn step(self, window: &[u8; PADDED]) -> Candidates;
}

/// The positions of a step that are candidates, one bit each, and each one's buckets.
#[derive(Debug)]
struct Candidates {
    positions: u64,
    buckets: [u8; MAX_LANES],
}

/// Where [`Kernel::steps`] stopped: before a step it could not take whole, or after a step with
/// candidates (at its start); what it counted on the way.
#[derive(Debug)]
struct Stop {
    at: usize,
    chars: usize,
    newlines: usize,
    candidate: Option<(usize, Candidates)>,
}

/// The kernels this CPU can run, the widest first.
mod kernel {
    use std::ops::Range;

    /// Counts (with `COUNT`) and searches `span` with the widest kernel the CPU can run; `None`
    /// where it can run none, or when more than `max_candidates` positions were candidates
    /// (what it found is then incomplete).
    pub(super) fn run<const COUNT: bool>(
        bytes: &[u8],
        span: Range<usize>,
        found: &mut Vec<Range<usize>>,
        max_candidates: usize,
    ) -> Option<(usize, usize)> {
        #[cfg(target_arch = "x86_64")]
        {
            use super::x86::{Avx2, Avx512};
            if let Some(kernel) = Avx512::detect() {
                return super::search::<_, COUNT>(kernel, bytes, span, found, max_candidates);
            }
            if let Some(kernel) = Avx2::detect() {
                return super::search::<_, COUNT>(kernel, bytes, span, found, max_candidates);
            }
        }
        let _ = (bytes, span, found, max_candidates);
        None
    }
}

#[cfg(target_arch = "x86_64")]
mod x86;

/// Counts (with `COUNT`) and searches `span` with `kernel`: whole steps, then the rest of the
/// span and the positions after it where an anchor of a pattern that starts in it may lie.
/// `None` when more than `max_candidates` positions were candidates.
fn search<K: Kernel, const COUNT: bool>(
    kernel: K,
    bytes: &[u8],
    span: Range<usize>,
    found: &mut Vec<Range<usize>>,
    max_candidates: usize,
) -> Option<(usize, usize)> {
    let (mut chars, mut newlines, mut seen) = (0, 0, 0);
    let mut at = span.start;
    loop {
        let stop = kernel.steps::<COUNT>(bytes, at, span.end);
        at = stop.at;
        chars += stop.chars;
        newlines += stop.newlines;
        let Some((step, candidates)) = stop.candidate else {
            break;
        };
        seen += candidates.positions.count_ones() as usize;
        if seen > max_candidates {
            return None;
        }
        confirm_all(bytes, step, &candidates, &span, found);
    }
    // From a copy, zeros after the text's end.
    let stop = (span.end + MAX_AT).min(bytes.len());
    while at < stop {
        if COUNT && at < span.end {
            let (c, n) = count_chars_and_newlines(&bytes[at..span.end.min(at + K::LANES)]);
            chars += c;
            newlines += n;
        }
        let mut window = [0u8; PADDED];
        let copied = (K::LANES + ANCHOR_LEN - 1).min(bytes.len() - at);
        window[..copied].copy_from_slice(&bytes[at..at + copied]);
        let mut candidates = kernel.step(&window);
        if stop - at < K::LANES {
            candidates.positions &= (1u64 << (stop - at)) - 1;
        }
        if candidates.positions != 0 {
            seen += candidates.positions.count_ones() as usize;
            if seen > max_candidates {
                return None;
            }
            confirm_all(bytes, at, &candidates, &span, found);
        }
        at += K::LANES;
    }
    Some((chars, newlines))
}

/// Confirms each candidate of the step from `at`.
fn confirm_all(
    bytes: &[u8],
    at: usize,
    candidates: &Candidates,
    span: &Range<usize>,
    found: &mut Vec<Range<usize>>,
) {
    let mut positions = candidates.positions;
    while positions != 0 {
        let lane = positions.trailing_zeros() as usize;
        positions &= positions - 1;
        confirm(bytes, at + lane, candidates.buckets[lane], span, found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trim::salience::PATTERNS;

    /// Every occurrence of a default pattern that starts in `span` and ends within `bytes`,
    /// found by comparing every pattern at every position.
    fn naive(bytes: &[u8], span: Range<usize>) -> Vec<Range<usize>> {
        let mut found = Vec::new();
        for start in span {
            for pattern in PATTERNS {
                if bytes[start..].starts_with(pattern.as_bytes()) {
                    found.push(start..start + pattern.len());
                }
            }
        }
        found
    }

    /// The lines (their starts) occurrences belong to: a pattern that starts with a line break
    /// belongs to the line after it.
    fn lines_of(bytes: &[u8], found: &[Range<usize>]) -> Vec<usize> {
        let mut lines: Vec<usize> = found
            .iter()
            .map(|occurrence| match bytes[occurrence.start] {
                b'\n' => occurrence.start + 1,
                _ => crate::trim::bytes::line_start_at(bytes, occurrence.start),
            })
            .collect();
        lines.dedup();
        lines
    }

    /// What each kernel this CPU can run counts and finds in `span`, in order; `None` where it
    /// gave up (more than `max_candidates` candidates).
    #[allow(clippy::type_complexity)]
    fn by_each_kernel(
        bytes: &[u8],
        span: Range<usize>,
        max_candidates: usize,
    ) -> Vec<(&'static str, Option<((usize, usize), Vec<Range<usize>>)>)> {
        fn with<K: Kernel>(
            kernel: K,
            bytes: &[u8],
            span: Range<usize>,
            max_candidates: usize,
        ) -> Option<((usize, usize), Vec<Range<usize>>)> {
            let mut found = Vec::new();
            let counted = search::<K, true>(kernel, bytes, span, &mut found, max_candidates)?;
            in_order(&mut found);
            Some((counted, found))
        }
        let mut results = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(kernel) = x86::Avx2::detect() {
                results.push(("avx2", with(kernel, bytes, span.clone(), max_candidates)));
            }
            if let Some(kernel) = x86::Avx512::detect() {
                results.push(("avx512", with(kernel, bytes, span.clone(), max_candidates)));
            }
        }
        let _ = (bytes, span, max_candidates);
        results
    }

    /// Texts made of the patterns, their anchors, near misses of both, line breaks, indents
    /// and multi-byte chars, in any order.
    fn piece() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let pattern = proptest::sample::select(PATTERNS).prop_map(str::to_owned);
        let anchors: Vec<String> = ANCHORED
            .iter()
            .map(|a| String::from_utf8_lossy(&a.pattern[a.at..a.at + ANCHOR_LEN]).into_owned())
            .collect();
        let anchor = proptest::sample::select(anchors);
        let near_miss = (
            proptest::sample::select(PATTERNS),
            any::<proptest::sample::Index>(),
        )
            .prop_map(|(pattern, at)| {
                let mut chars: Vec<char> = pattern.chars().collect();
                let i = at.index(chars.len());
                chars[i] = if chars[i] == 'x' { 'y' } else { 'x' };
                chars.into_iter().collect::<String>()
            });
        prop_oneof![
            pattern,
            anchor,
            near_miss,
            Just("\n".to_owned()),
            Just("   ".to_owned()),
            Just("naïve — ошибка ".to_owned()),
            "[a-zA-Z:*\\[ !-]{1,12}",
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        #[test]
        fn every_occurrence_in_a_span_is_found_once_in_order(
            pieces in proptest::collection::vec(piece(), 0..120),
            from in 0usize..2_000,
            len in 0usize..2_000,
        ) {
            let text = pieces.concat();
            let bytes = text.as_bytes();
            let start = from.min(bytes.len());
            let span = start..(start + len).min(bytes.len());
            let expected = naive(bytes, span.clone());

            let mut found = Vec::new();
            find(bytes, span.clone(), &mut found);
            proptest::prop_assert_eq!(&found, &expected);

            let mut counted = Vec::new();
            let totals = count_and_find(bytes, span.clone(), &mut counted);
            proptest::prop_assert_eq!(&counted, &expected);
            proptest::prop_assert_eq!(totals, count_chars_and_newlines(&bytes[span.clone()]));

            // Each kernel this CPU can run, whichever the search would choose.
            let counts = count_chars_and_newlines(&bytes[span.clone()]);
            for (kernel, result) in by_each_kernel(bytes, span.clone(), usize::MAX) {
                proptest::prop_assert_eq!(result, Some((counts, expected.clone())), "{}", kernel);
            }

            // The automaton reports leftmost matches only, on the same lines.
            let mut by_automaton = Vec::new();
            find_by_automaton(default_automaton(), bytes, span, &mut by_automaton);
            proptest::prop_assert_eq!(lines_of(bytes, &by_automaton), lines_of(bytes, &expected));
        }
    }

    #[test]
    fn the_anchored_patterns_are_the_default_patterns() {
        let mut anchored: Vec<&[u8]> = ANCHORED.iter().map(|a| a.pattern).collect();
        let mut patterns: Vec<&[u8]> = PATTERNS.iter().map(|p| p.as_bytes()).collect();
        anchored.sort_unstable();
        patterns.sort_unstable();
        assert_eq!(anchored, patterns);
    }

    #[test]
    fn patterns_at_the_ends_of_a_text_and_of_a_span_are_found() {
        for pattern in PATTERNS {
            for before in ["", "x", "ab\n", &"y".repeat(40)] {
                for after in ["", "z", "\n", &"w".repeat(40)] {
                    let text = format!("{before}{pattern}{after}");
                    let bytes = text.as_bytes();
                    let whole = 0..bytes.len();
                    let mut found = Vec::new();
                    find(bytes, whole.clone(), &mut found);
                    assert_eq!(found, naive(bytes, whole), "{text:?}");
                    // A span that ends just after the pattern's start still finds it.
                    let span = 0..before.len() + 1;
                    found.clear();
                    count_and_find(bytes, span.clone(), &mut found);
                    assert_eq!(found, naive(bytes, span), "{text:?}");
                }
            }
        }
    }

    /// A text whose every few bytes hold an anchor that is not its pattern: each makes a
    /// candidate the kernel must confirm and reject.
    fn hostile(len: usize) -> String {
        "FAILx".repeat(len / 5)
    }

    #[test]
    fn a_flood_of_candidates_is_searched_by_the_automaton_with_the_same_result() {
        let mut text = hostile(3 * BLOCK);
        text.insert_str(BLOCK + 7, "\nerror: here\n");
        let bytes = text.as_bytes();
        let whole = 0..bytes.len();
        for (kernel, result) in by_each_kernel(bytes, 0..BLOCK, MAX_CANDIDATES) {
            assert_eq!(
                result, None,
                "{kernel} gives up on a block of more than {MAX_CANDIDATES} candidates"
            );
        }
        let mut found = Vec::new();
        let totals = count_and_find(bytes, whole.clone(), &mut found);
        assert_eq!(
            lines_of(bytes, &found),
            lines_of(bytes, &naive(bytes, whole))
        );
        assert_eq!(found.len(), 1);
        assert_eq!(totals, count_chars_and_newlines(bytes));
    }

    /// The positions of `bytes` the tables make candidates, by a plain lookup of each byte.
    fn candidates(bytes: &[u8]) -> usize {
        (0..bytes.len().saturating_sub(ANCHOR_LEN - 1))
            .filter(|&at| {
                (0..ANCHOR_LEN).fold(0xff, |buckets, j| {
                    let byte = bytes[at + j];
                    buckets
                        & NIBBLES.low[j][usize::from(byte & 0x0f)]
                        & NIBBLES.high[j][usize::from(byte >> 4)]
                }) != 0
            })
            .count()
    }

    #[test]
    fn real_outputs_make_few_candidates_beyond_their_patterns() {
        // The outputs of real tools in the test corpus: build logs, test runs, stack traces.
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
        let (mut read, mut false_in_all, mut bytes_in_all) = (0, 0, 0);
        for entry in std::fs::read_dir(&corpus).expect("the test corpus") {
            let path = entry.expect("a corpus entry").path();
            if path.extension().is_none_or(|extension| extension != "out") {
                continue;
            }
            let bytes = std::fs::read(&path).expect("a corpus output");
            let anchors = ANCHORED
                .iter()
                .map(|a| &a.pattern[a.at..a.at + ANCHOR_LEN])
                .collect::<Vec<_>>();
            let true_anchors = (0..bytes.len())
                .filter(|&at| anchors.iter().any(|anchor| bytes[at..].starts_with(anchor)))
                .count();
            let false_candidates = candidates(&bytes) - true_anchors;
            // At most one position in 4,000 (250 a megabyte) over the corpus is a candidate for
            // nothing, and one in 500 in any output (one of hex object ids, `git fsck`, has one in
            // 630).
            assert!(
                false_candidates * 500 <= bytes.len(),
                "{}: {false_candidates} false candidates in {} bytes",
                path.display(),
                bytes.len()
            );
            read += 1;
            false_in_all += false_candidates;
            bytes_in_all += bytes.len();
        }
        assert!(read >= 8, "the corpus holds {read} outputs");
        assert!(
            false_in_all * 4_000 <= bytes_in_all,
            "{false_in_all} false candidates in {bytes_in_all} bytes"
        );
    }
}
