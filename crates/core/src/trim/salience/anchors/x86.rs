//! The kernels in AVX-512 (64 positions a step) and AVX2 (32): the crate's one module with
//! `unsafe` code. A benchmark showed the need (BENCHMARKS.md, "the salience search at the speed
//! of memory"): the automaton's search of the default patterns ran at half the AVX2 kernel's
//! speed, and no safe API reaches these instructions chosen at run time.
//!
//! What is unsafe here, and only this: a call into a function compiled for an instruction set,
//! made through a value that exists only once the CPU is known to have it; unaligned vector
//! loads and stores of byte arrays in bounds.

#![allow(unsafe_code)]

use super::{ANCHOR_LEN, Candidates, Kernel, MAX_LANES, NIBBLES, PADDED, Stop};

/// The AVX2 kernel, where the CPU has AVX2.
#[derive(Debug, Clone, Copy)]
pub(super) struct Avx2(());

impl Avx2 {
    /// The kernel, when the CPU can run it.
    pub(super) fn detect() -> Option<Self> {
        std::arch::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

impl Kernel for Avx2 {
    const LANES: usize = 32;

    fn steps<const COUNT: bool>(self, bytes: &[u8], at: usize, end: usize) -> Stop {
        // SAFETY: an `Avx2` is made only where the CPU has AVX2 (`detect`), all that calling a
        // function compiled for it requires.
        unsafe { avx2::steps::<COUNT>(bytes, at, end) }
    }

    fn step(self, window: &[u8; PADDED]) -> Candidates {
        // SAFETY: as in `steps`.
        unsafe { avx2::step(window) }
    }
}

/// The AVX-512 kernel, where the CPU has AVX-512BW and runs it at full speed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Avx512(());

impl Avx512 {
    /// The kernel, when the CPU can run it. VBMI2 is asked for too, though the kernel uses none
    /// of it: the CPUs that have it (Ice Lake and later, Zen 4 and later) do not slow their
    /// clock for 512-bit vectors as the first AVX-512 CPUs did.
    pub(super) fn detect() -> Option<Self> {
        (std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vbmi2")
            && std::arch::is_x86_feature_detected!("popcnt"))
        .then_some(Avx512(()))
    }
}

impl Kernel for Avx512 {
    const LANES: usize = 64;

    fn steps<const COUNT: bool>(self, bytes: &[u8], at: usize, end: usize) -> Stop {
        // SAFETY: an `Avx512` is made only where the CPU has AVX-512F, AVX-512BW and POPCNT
        // (`detect`), all that calling a function compiled for them requires.
        unsafe { avx512::steps::<COUNT>(bytes, at, end) }
    }

    fn step(self, window: &[u8; PADDED]) -> Candidates {
        // SAFETY: as in `steps`.
        unsafe { avx512::step(window) }
    }
}

/// The nibble tables, each repeated to fill the widest vector: a shuffle looks up within each
/// 16 bytes.
const LOW: [[u8; MAX_LANES]; ANCHOR_LEN] = repeated(&NIBBLES.low);
const HIGH: [[u8; MAX_LANES]; ANCHOR_LEN] = repeated(&NIBBLES.high);

const fn repeated(tables: &[[u8; 16]; ANCHOR_LEN]) -> [[u8; MAX_LANES]; ANCHOR_LEN] {
    let mut out = [[0; MAX_LANES]; ANCHOR_LEN];
    let mut j = 0;
    while j < ANCHOR_LEN {
        let mut i = 0;
        while i < MAX_LANES {
            out[j][i] = tables[j][i % 16];
            i += 1;
        }
        j += 1;
    }
    out
}

mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi8, _mm256_and_si256, _mm256_andnot_si256, _mm256_cmpeq_epi8,
        _mm256_cmpgt_epi8, _mm256_extract_epi64, _mm256_loadu_si256, _mm256_movemask_epi8,
        _mm256_sad_epu8, _mm256_set1_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8,
        _mm256_srli_epi16, _mm256_storeu_si256, _mm256_sub_epi8, _mm256_testz_si256,
    };

    use super::{ANCHOR_LEN, Candidates, HIGH, LOW, MAX_LANES, PADDED, Stop};

    const LANES: usize = 32;
    /// The bytes one step reads.
    const WINDOW: usize = LANES + ANCHOR_LEN - 1;
    /// Steps a lane's nibble-wide counters take before they could overflow.
    const ROUNDS: usize = 15;

    /// The nibble tables, each in both halves of a vector.
    struct Tables {
        low: [__m256i; ANCHOR_LEN],
        high: [__m256i; ANCHOR_LEN],
        nibble: __m256i,
    }

    impl Tables {
        #[target_feature(enable = "avx2")]
        fn new() -> Self {
            Tables {
                low: std::array::from_fn(|j| load(&LOW[j], 0)),
                high: std::array::from_fn(|j| load(&HIGH[j], 0)),
                nibble: _mm256_set1_epi8(0x0f),
            }
        }

        /// For each of the 32 positions `window` starts, the buckets whose anchor its bytes
        /// may be.
        #[target_feature(enable = "avx2")]
        #[inline]
        fn buckets<const N: usize>(&self, window: &[u8; N]) -> __m256i {
            let mut buckets = _mm256_set1_epi8(-1);
            for j in 0..ANCHOR_LEN {
                let v = load(window, j);
                // A shuffle looks up by an index's low nibble, and gives zero where its top
                // bit is set: where the byte is not ASCII, which no anchor's byte is.
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

    /// The 32 bytes of `bytes` from `at`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn load<const N: usize>(bytes: &[u8; N], at: usize) -> __m256i {
        let chunk = &bytes[at..at + LANES];
        // SAFETY: `chunk` is 32 bytes of a live array, what the load reads; it needs no
        // alignment.
        unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) }
    }

    /// The candidates among a step's buckets.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn candidates(buckets: __m256i) -> Candidates {
        let none = _mm256_cmpeq_epi8(buckets, _mm256_setzero_si256());
        // The sign bits as an integer: a bit for each position with no bucket.
        let positions = !(_mm256_movemask_epi8(none).cast_unsigned());
        let mut all = [0u8; MAX_LANES];
        let lanes = &mut all[..LANES];
        // SAFETY: `lanes` is 32 writable bytes, what the store writes; it needs no alignment.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), buckets) };
        Candidates {
            positions: u64::from(positions),
            buckets: all,
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

    /// See [`Kernel::steps`](super::Kernel::steps). It calls nothing, so its vectors stay in
    /// registers.
    #[target_feature(enable = "avx2")]
    pub(super) fn steps<const COUNT: bool>(bytes: &[u8], mut at: usize, end: usize) -> Stop {
        let tables = Tables::new();
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
                    candidate = Some((at - LANES, candidates(buckets)));
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

    /// See [`Kernel::step`](super::Kernel::step).
    #[target_feature(enable = "avx2")]
    pub(super) fn step(window: &[u8; PADDED]) -> Candidates {
        candidates(Tables::new().buckets(window))
    }
}

mod avx512 {
    use std::arch::x86_64::{
        __m512i, _mm512_and_si512, _mm512_cmpeq_epi8_mask, _mm512_cmpgt_epi8_mask,
        _mm512_loadu_si512, _mm512_set1_epi8, _mm512_shuffle_epi8, _mm512_srli_epi16,
        _mm512_storeu_si512, _mm512_test_epi8_mask,
    };

    use super::{ANCHOR_LEN, Candidates, HIGH, LOW, MAX_LANES, PADDED, Stop};

    const LANES: usize = 64;
    /// The bytes one step reads.
    const WINDOW: usize = LANES + ANCHOR_LEN - 1;

    /// The nibble tables, each in the four quarters of a vector.
    struct Tables {
        low: [__m512i; ANCHOR_LEN],
        high: [__m512i; ANCHOR_LEN],
        nibble: __m512i,
    }

    impl Tables {
        #[target_feature(enable = "avx512f,avx512bw")]
        fn new() -> Self {
            Tables {
                low: std::array::from_fn(|j| load(&LOW[j], 0)),
                high: std::array::from_fn(|j| load(&HIGH[j], 0)),
                nibble: _mm512_set1_epi8(0x0f),
            }
        }

        /// For each of the 64 positions `window` starts, the buckets whose anchor its bytes
        /// may be.
        #[target_feature(enable = "avx512f,avx512bw")]
        #[inline]
        fn buckets<const N: usize>(&self, window: &[u8; N]) -> __m512i {
            let mut buckets = _mm512_set1_epi8(-1);
            for j in 0..ANCHOR_LEN {
                let v = load(window, j);
                // As in the AVX2 kernel: a byte that is not ASCII looks up nothing.
                let low = _mm512_shuffle_epi8(self.low[j], v);
                let high = _mm512_shuffle_epi8(
                    self.high[j],
                    _mm512_and_si512(_mm512_srli_epi16::<4>(v), self.nibble),
                );
                buckets = _mm512_and_si512(buckets, _mm512_and_si512(low, high));
            }
            buckets
        }
    }

    /// The 64 bytes of `bytes` from `at`.
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    fn load<const N: usize>(bytes: &[u8; N], at: usize) -> __m512i {
        let chunk = &bytes[at..at + LANES];
        // SAFETY: `chunk` is 64 bytes of a live array, what the load reads; it needs no
        // alignment.
        unsafe { _mm512_loadu_si512(chunk.as_ptr().cast()) }
    }

    /// The candidates among a step's buckets.
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    fn candidates(buckets: __m512i) -> Candidates {
        let mut all = [0u8; MAX_LANES];
        // SAFETY: `all` is 64 writable bytes, what the store writes; it needs no alignment.
        unsafe { _mm512_storeu_si512(all.as_mut_ptr().cast(), buckets) };
        Candidates {
            positions: _mm512_test_epi8_mask(buckets, buckets),
            buckets: all,
        }
    }

    /// See [`Kernel::steps`](super::Kernel::steps).
    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    pub(super) fn steps<const COUNT: bool>(bytes: &[u8], mut at: usize, end: usize) -> Stop {
        let tables = Tables::new();
        let (mut chars, mut newlines) = (0, 0);
        loop {
            let window = match bytes.get(at..).and_then(<[u8]>::first_chunk::<WINDOW>) {
                Some(window) if at + LANES <= end => window,
                _ => {
                    return Stop {
                        at,
                        chars,
                        newlines,
                        candidate: None,
                    };
                }
            };
            if COUNT {
                let v = load(window, 0);
                // A char starts at every byte but a continuation byte (0b10xx_xxxx: below -64
                // as i8); a comparison gives a bit a byte.
                let starts = _mm512_cmpgt_epi8_mask(v, _mm512_set1_epi8(-65));
                let breaks = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\n' as i8));
                chars += starts.count_ones() as usize;
                newlines += breaks.count_ones() as usize;
            }
            let buckets = tables.buckets(window);
            at += LANES;
            if _mm512_test_epi8_mask(buckets, buckets) != 0 {
                return Stop {
                    at,
                    chars,
                    newlines,
                    candidate: Some((at - LANES, candidates(buckets))),
                };
            }
        }
    }

    /// See [`Kernel::step`](super::Kernel::step).
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) fn step(window: &[u8; PADDED]) -> Candidates {
        candidates(Tables::new().buckets(window))
    }
}
