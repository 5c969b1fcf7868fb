//! Paging a 100 MB artifact holds only a page in memory. Alone in its binary, so the process's
//! peak resident size (`VmHWM`) belongs to this test.

#![cfg(target_os = "linux")]

use std::io::Write as _;

use toolsmith::DirStore;
use toolsmith::artifacts::{ArtifactStore, PageRequest};
use toolsmith_workspace::peak_resident_bytes;

#[test]
fn reading_the_last_page_of_100_mb_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let store = DirStore::open(dir.path().join("artifacts")).unwrap();
    let mut writer = store.begin().unwrap();
    let mut chunk = String::new();
    let mut line = 0usize;
    let mut written = 0usize;
    while written < 100 << 20 {
        chunk.clear();
        for _ in 0..10_000 {
            chunk.push_str(&format!("log line {line:>12} of the artifact\n"));
            line += 1;
        }
        writer.write_all(chunk.as_bytes()).unwrap();
        written += chunk.len();
    }
    let id = writer.commit().unwrap();
    drop(chunk);

    let page = store
        .read_page(
            &id,
            PageRequest {
                offset: line - 3,
                char_offset: 0,
                limit: Some(10),
                max_bytes: 1 << 20,
            },
        )
        .unwrap();
    assert_eq!(page.total_lines, line);
    assert_eq!(page.lines, 3);
    assert!(page.text.starts_with(&format!("log line {:>12}", line - 3)));
    assert_eq!(page.total_bytes, written as u64);

    let peak = peak_resident_bytes();
    assert!(
        peak < 48 << 20,
        "peak resident size {} MiB while paging a 100 MiB artifact",
        peak >> 20
    );
}
