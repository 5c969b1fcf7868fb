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
    // 1 MiB of 64-byte lines, written 1,024 times with the line numbers of each copy.
    let at_start = peak_resident_bytes();
    let mut writer = store.begin().unwrap();
    let mut chunk = Vec::with_capacity(1 << 20);
    let mut line = 0u64;
    for _ in 0..1_024 {
        chunk.clear();
        while chunk.len() < 1 << 20 {
            writeln!(chunk, "line {line:>20} of a gigabyte of build output .....").unwrap();
            line += 1;
        }
        writer.write_all(&chunk).unwrap();
    }
    let omitted = writer.omitted_bytes();
    let id = writer.commit().unwrap();
    drop(chunk);
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
