//! A bucket store keeps a streamed output of 1 GiB in bounded memory: spooled (capped) to an
//! unnamed file and uploaded in parts, never held whole. Alone in its binary, so the process's
//! peak resident size (`VmHWM`) belongs to this test.

#![cfg(target_os = "linux")]

use std::io::Write as _;

use toolsmith::artifacts::object_store::path::Path;
use toolsmith::artifacts::{ArtifactStore, BucketStore, PageRequest};
use toolsmith_workspace::peak_resident_bytes;
use toolsmith_workspace::s3::S3Server;

#[test]
fn a_gigabyte_streamed_to_a_bucket_stays_under_32_mib() {
    let server = S3Server::start();
    let store = BucketStore::builder(server.store("memory"), Path::from("big"), "s3://memory/big")
        .open()
        .unwrap();
    // 1 MiB of 62-byte lines, written 1,024 times with the line numbers of each copy.
    let at_start = peak_resident_bytes();
    let mut writer = store.begin().unwrap();
    let mut lines = Lines::new();
    for _ in 0..1_024 {
        writer.write_all(lines.next_chunk()).unwrap();
    }
    let line = lines.next;
    let omitted = writer.omitted_bytes();
    let id = writer.commit().unwrap();
    drop(lines);
    assert!(
        omitted > 0,
        "1 GiB is over the 256 MiB cap: its middle is left out"
    );

    let last = store
        .read_page(
            &id,
            PageRequest {
                offset: usize::MAX / 2,
                char_offset: 0,
                limit: None,
                max_bytes: 4_096,
            },
        )
        .unwrap();
    assert!(last.capped);
    let end = store
        .read_page(
            &id,
            PageRequest {
                offset: last.total_lines - 1,
                char_offset: 0,
                limit: None,
                max_bytes: 4_096,
            },
        )
        .unwrap();
    assert_eq!(
        end.text,
        format!(
            "line {:>20} of a gigabyte of build output .....\n",
            line - 1
        ),
        "the last line written is the artifact's last"
    );
    let peak = peak_resident_bytes();
    eprintln!(
        "peak resident size storing 1 GiB: {} KiB ({} KiB before the first write)",
        peak >> 10,
        at_start >> 10
    );
    assert!(
        peak < 32 << 20,
        "peak resident size {} MiB while storing 1 GiB",
        peak >> 20
    );
}

/// The lines of the gigabyte, `line {n:>20} of a gigabyte of build output .....`, a chunk of
/// just over 1 MiB at a time: the chunk's text is laid out once and each copy writes only its
/// numbers' digits. Formatting each of the 17 million lines took most of this test's time in a
/// debug build (the test 20.5 → 5.7 s of processor time); these are the same bytes (the test
/// checks the last line against the formatter's).
struct Lines {
    chunk: Vec<u8>,
    /// The length of each line, its newline included.
    line_len: usize,
    /// The number of the chunk's next line.
    next: u64,
}

impl Lines {
    /// Where each line's number ends (it is right-aligned in 20 columns after `line `).
    const DIGITS_END: usize = "line ".len() + 20;

    fn new() -> Self {
        let blank = format!("line {:>20} of a gigabyte of build output .....\n", "");
        let mut chunk = Vec::with_capacity((1 << 20) + blank.len());
        while chunk.len() < 1 << 20 {
            chunk.extend_from_slice(blank.as_bytes());
        }
        Lines {
            chunk,
            line_len: blank.len(),
            next: 0,
        }
    }

    /// The next chunk, its lines numbered on from the last.
    fn next_chunk(&mut self) -> &[u8] {
        for line in self.chunk.chunks_exact_mut(self.line_len) {
            let digits = &mut line["line ".len()..Self::DIGITS_END];
            digits.fill(b' ');
            let mut n = self.next;
            for digit in digits.iter_mut().rev() {
                *digit = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            self.next += 1;
        }
        &self.chunk
    }
}
