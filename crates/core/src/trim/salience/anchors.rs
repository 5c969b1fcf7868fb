//! Where the default salient patterns occur, found at about the speed of reading memory.
//!
//! Each default pattern has an *anchor*: four of its bytes, chosen because they rarely occur in
//! real output, and one of eight buckets. For 32 positions at once, a vector kernel looks up the
//! two nibbles of each of the four bytes from a position in tables of the buckets whose anchors
//! have that nibble there (the packed "Teddy" search of Hyperscan and aho-corasick); a position
//! every lookup agrees on for some bucket is a *candidate*, and only candidates are compared with
//! their buckets' patterns. The same pass counts the chars and newlines of the bytes it reads, so
//! a survey of a long text reads it once.
//!
//! The anchors and buckets were chosen by a search over real outputs (build logs, test runs,
//! package logs, source code, changelogs) for the fewest candidates: the outputs of the test
//! corpus make at most one in every few thousand positions a candidate (a test holds them to
//! it). A hostile text can make most positions candidates: a block of more than
//! [`MAX_CANDIDATES`] is searched by the default automaton instead, whose time is linear whatever
//! the text, as is every block on a CPU without AVX2. Either way the same lines are found: every
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
/// holds the two lists together).
const ANCHORED: [Anchored; 31] = [
    anchored("undefined reference", 7, 0),
    anchored("FAILED", 0, 0),
    anchored("FAIL:", 0, 0),
    anchored("--- FAIL", 4, 0),
    anchored("FAIL ", 0, 0),
    anchored("panicked at", 2, 1),
    anchored("panic:", 2, 1),
    anchored("Segmentation fault", 0, 1),
    anchored("failed:", 3, 2),
    anchored("Traceback (most recent call last)", 8, 2),
    anchored("ERROR", 0, 3),
    anchored("FATAL", 0, 3),
    anchored("Fatal", 0, 3),
    anchored("npm ERR!", 4, 3),
    anchored("Unhandled exception", 0, 3),
    anchored("\nE   ", 0, 4),
    anchored("AssertionError", 0, 4),
    anchored("Assertion failed", 0, 4),
    anchored("Exception in thread", 0, 4),
    anchored("Exception:", 0, 4),
    anchored("not ok ", 3, 5),
    anchored("core dumped", 7, 5),
    anchored("error:", 2, 6),
    anchored("error[", 2, 6),
    anchored("Error:", 2, 6),
    anchored("CRITICAL", 0, 6),
    anchored("Caused by:", 6, 6),
    anchored("fatal:", 2, 7),
    anchored("critical:", 5, 7),
    anchored("make: ***", 4, 7),
    anchored(": *** [", 0, 7),
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
    let (mut chars, mut newlines) = (0, 0);
    for block in blocks(span) {
        let mark = found.len();
        let counted = match kernel::run::<true>(bytes, block.clone(), found, MAX_CANDIDATES) {
            Some(counted) => counted,
            None => {
                found.truncate(mark);
                find_by_automaton(default_automaton(), bytes, block.clone(), found);
                count_chars_and_newlines(&bytes[block])
            }
        };
        chars += counted.0;
        newlines += counted.1;
        in_order(&mut found[mark..]);
    }
    (chars, newlines)
}

/// Appends to `found` every occurrence of a default pattern that starts in `span` (it may run on
/// past it), in order of their starts.
pub(super) fn find(bytes: &[u8], span: Range<usize>, found: &mut Vec<Range<usize>>) {
    for block in blocks(span) {
        let mark = found.len();
        if kernel::run::<false>(bytes, block.clone(), found, MAX_CANDIDATES).is_none() {
            found.truncate(mark);
            find_by_automaton(default_automaton(), bytes, block, found);
        }
        in_order(&mut found[mark..]);
    }
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

/// The vector kernel where the CPU has one, and its absence elsewhere.
mod kernel {
    use std::ops::Range;

    /// Counts (with `COUNT`) and searches `span`; `None` where the CPU has no AVX2, or when more
    /// than `max_candidates` positions were candidates (what it found is then incomplete).
    pub(super) fn run<const COUNT: bool>(
        bytes: &[u8],
        span: Range<usize>,
        found: &mut Vec<Range<usize>>,
        max_candidates: usize,
    ) -> Option<(usize, usize)> {
        #[cfg(target_arch = "x86_64")]
        {
            super::avx2::run::<COUNT>(bytes, span, found, max_candidates)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (bytes, span, found, max_candidates);
            None
        }
    }
}

/// The kernel in AVX2: the one place in the crate with `unsafe` code — a call into a function
/// compiled for AVX2 once the CPU is known to have it, and unaligned vector loads and stores of
/// bytes in bounds. A benchmark showed the need (BENCHMARKS.md, "the salience search at memory
/// speed"): the automaton's general search ran at half the speed of this one.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi8, _mm256_and_si256, _mm256_andnot_si256, _mm256_cmpeq_epi8,
        _mm256_cmpgt_epi8, _mm256_extract_epi64, _mm256_loadu_si256, _mm256_movemask_epi8,
        _mm256_sad_epu8, _mm256_set1_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8,
        _mm256_srli_epi16, _mm256_storeu_si256, _mm256_sub_epi8, _mm256_testz_si256,
    };
    use std::ops::Range;

    use super::{ANCHOR_LEN, MAX_AT, NIBBLES, confirm};

    /// Positions a vector holds.
    const LANES: usize = 32;
    /// The bytes one step reads: a vector's positions and the anchor's bytes after the last.
    const WINDOW: usize = LANES + ANCHOR_LEN - 1;
    /// Steps a lane's nibble-wide counters take before they could overflow.
    const ROUNDS: usize = 15;

    pub(super) fn run<const COUNT: bool>(
        bytes: &[u8],
        span: Range<usize>,
        found: &mut Vec<Range<usize>>,
        max_candidates: usize,
    ) -> Option<(usize, usize)> {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return None;
        }
        // SAFETY: the CPU has AVX2 (checked just above), all that calling a function compiled
        // for it requires.
        unsafe { kernel::<COUNT>(bytes, span, found, max_candidates) }
    }

    /// The tables, each 16-byte table in both halves of a vector (a shuffle looks up within its
    /// half).
    struct Tables {
        low: [__m256i; ANCHOR_LEN],
        high: [__m256i; ANCHOR_LEN],
        nibble: __m256i,
    }

    impl Tables {
        #[target_feature(enable = "avx2")]
        fn new() -> Self {
            let both = |table: &[u8; 16]| {
                let mut doubled = [0u8; LANES];
                doubled[..16].copy_from_slice(table);
                doubled[16..].copy_from_slice(table);
                load(&doubled, 0)
            };
            Tables {
                low: std::array::from_fn(|j| both(&NIBBLES.low[j])),
                high: std::array::from_fn(|j| both(&NIBBLES.high[j])),
                nibble: _mm256_set1_epi8(0x0f),
            }
        }

        /// For each of the 32 positions a window starts, the buckets whose anchor its bytes
        /// may be.
        #[target_feature(enable = "avx2")]
        #[inline]
        fn buckets(&self, window: &[u8; WINDOW]) -> __m256i {
            let mut buckets = _mm256_set1_epi8(-1);
            for j in 0..ANCHOR_LEN {
                let v = load(window, j);
                // A shuffle looks up by an index's low nibble, and gives zero where its top bit
                // is set: where the byte is not ASCII, which no anchor's byte is.
                let low = _mm256_shuffle_epi8(self.low[j], v);
                let high = _mm256_shuffle_epi8(
                    self.high[j],
                    _mm256_and_si256(_mm256_srli_epi16::<4>(v), self.nibble),
                );
                buckets = _mm256_and_si256(buckets, _mm256_and_si256(low, high));
            }
            buckets
        }
    }

    /// The sum of a vector's 32 bytes.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn sum(v: __m256i) -> usize {
        let sums = _mm256_sad_epu8(v, _mm256_setzero_si256());
        let total = _mm256_extract_epi64::<0>(sums)
            + _mm256_extract_epi64::<1>(sums)
            + _mm256_extract_epi64::<2>(sums)
            + _mm256_extract_epi64::<3>(sums);
        usize::try_from(total).unwrap_or(0)
    }

    /// The 32 bytes of a window from `at` (at most its last 32).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn load<const N: usize>(bytes: &[u8; N], at: usize) -> __m256i {
        let chunk = &bytes[at..at + LANES];
        // SAFETY: `chunk` is 32 bytes of a live slice, what the load reads; it needs no
        // alignment.
        unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) }
    }

    /// The 32 bytes of a vector.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn bytes_of(v: __m256i) -> [u8; LANES] {
        let mut out = [0u8; LANES];
        // SAFETY: `out` is 32 writable bytes, what the store writes; it needs no alignment.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) };
        out
    }

    /// The positions of a vector of buckets that have any: one bit a position.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn candidates(buckets: __m256i) -> u32 {
        let none = _mm256_cmpeq_epi8(buckets, _mm256_setzero_si256());
        // The sign bits as an integer: a bit for each position with no bucket.
        !(_mm256_movemask_epi8(none).cast_unsigned())
    }

    #[target_feature(enable = "avx2")]
    fn kernel<const COUNT: bool>(
        bytes: &[u8],
        span: Range<usize>,
        found: &mut Vec<Range<usize>>,
        max_candidates: usize,
    ) -> Option<(usize, usize)> {
        let tables = Tables::new();
        let (mut chars, mut newlines) = (0usize, 0usize);
        let mut seen = 0usize;
        let mut at = span.start;
        // Whole steps: 32 positions in the span, each with its anchor's bytes in the text.
        loop {
            let stop = steps::<COUNT>(&tables, bytes, at, span.end);
            at = stop.at;
            chars += stop.chars;
            newlines += stop.newlines;
            let Some((step, positions, buckets)) = stop.candidate else {
                break;
            };
            seen += positions.count_ones() as usize;
            if seen > max_candidates {
                return None;
            }
            confirm_all(bytes, step, positions, &buckets, &span, found);
        }
        // The rest of the span, and the positions after it where an anchor of a pattern that
        // starts in it may lie: from a copy, zeros after the text's end.
        let stop = (span.end + MAX_AT).min(bytes.len());
        while at < stop {
            if COUNT && at < span.end {
                let (c, n) = super::count_chars_and_newlines(&bytes[at..span.end.min(at + LANES)]);
                chars += c;
                newlines += n;
            }
            let mut window = [0u8; WINDOW];
            let copied = WINDOW.min(bytes.len() - at);
            window[..copied].copy_from_slice(&bytes[at..at + copied]);
            let buckets = tables.buckets(&window);
            let within = match stop - at {
                left if left >= LANES => u32::MAX,
                left => (1u32 << left) - 1,
            };
            let positions = candidates(buckets) & within;
            if positions != 0 {
                seen += positions.count_ones() as usize;
                if seen > max_candidates {
                    return None;
                }
                confirm_all(bytes, at, positions, &bytes_of(buckets), &span, found);
            }
            at += LANES;
        }
        Some((chars, newlines))
    }

    /// Where [`steps`] stopped: before a step it could not take whole, or after a step with
    /// candidates; what it counted on the way.
    struct Stop {
        at: usize,
        chars: usize,
        newlines: usize,
        /// The step with candidates: its start, a bit for each candidate, their buckets.
        candidate: Option<(usize, u32, [u8; LANES])>,
    }

    /// Takes whole steps from `at` (32 positions before `end`, each with its anchor's bytes in
    /// the text), counting (with `COUNT`), until one has a candidate. It calls nothing, so its
    /// vectors stay in registers.
    #[target_feature(enable = "avx2")]
    fn steps<const COUNT: bool>(tables: &Tables, bytes: &[u8], mut at: usize, end: usize) -> Stop {
        let (mut chars, mut newlines) = (0, 0);
        loop {
            // Each lane counts chars in its low nibble and newlines in its high one, widened
            // before either could overflow.
            let mut lane_counts = _mm256_setzero_si256();
            let mut candidate = None;
            let mut whole = true;
            for _ in 0..ROUNDS {
                let window = match bytes.get(at..).and_then(<[u8]>::first_chunk::<WINDOW>) {
                    Some(window) if at + LANES <= end => window,
                    _ => {
                        whole = false;
                        break;
                    }
                };
                if COUNT {
                    let v = load(window, 0);
                    // A char starts at every byte but a continuation byte (0b10xx_xxxx: below
                    // -64 as i8). A true comparison is -1 (0xff): subtracting it adds one to
                    // the low nibble, subtracting its high nibble (0xf0, -16) one to the high.
                    let starts = _mm256_cmpgt_epi8(v, _mm256_set1_epi8(-65));
                    let breaks = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\n' as i8));
                    let breaks = _mm256_andnot_si256(tables.nibble, breaks);
                    lane_counts = _mm256_sub_epi8(lane_counts, _mm256_add_epi8(starts, breaks));
                }
                let buckets = tables.buckets(window);
                at += LANES;
                if _mm256_testz_si256(buckets, buckets) == 0 {
                    candidate = Some((at - LANES, candidates(buckets), bytes_of(buckets)));
                    break;
                }
            }
            if COUNT {
                chars += sum(_mm256_and_si256(lane_counts, tables.nibble));
                newlines += sum(_mm256_and_si256(
                    _mm256_srli_epi16::<4>(lane_counts),
                    tables.nibble,
                ));
            }
            if candidate.is_some() || !whole {
                return Stop {
                    at,
                    chars,
                    newlines,
                    candidate,
                };
            }
        }
    }

    /// Confirms each candidate of a step: `positions` has a bit for each, `buckets` a byte.
    fn confirm_all(
        bytes: &[u8],
        at: usize,
        mut positions: u32,
        buckets: &[u8; LANES],
        span: &Range<usize>,
        found: &mut Vec<Range<usize>>,
    ) {
        while positions != 0 {
            let lane = positions.trailing_zeros() as usize;
            positions &= positions - 1;
            confirm(bytes, at + lane, buckets[lane], span, found);
        }
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
                _ => memchr::memrchr(b'\n', &bytes[..occurrence.start]).map_or(0, |i| i + 1),
            })
            .collect();
        lines.dedup();
        lines
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
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            let mut partial = Vec::new();
            assert_eq!(
                kernel::run::<true>(bytes, 0..BLOCK, &mut partial, MAX_CANDIDATES),
                None,
                "the kernel gives up on a block of more than {MAX_CANDIDATES} candidates"
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
        let mut read = 0;
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
            // At most one position in 4,000 (250 a megabyte) is a candidate for nothing.
            assert!(
                false_candidates * 4_000 <= bytes.len(),
                "{}: {false_candidates} false candidates in {} bytes",
                path.display(),
                bytes.len()
            );
            read += 1;
        }
        assert!(read >= 8, "the corpus holds {read} outputs");
    }
}
