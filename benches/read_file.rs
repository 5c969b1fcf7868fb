//! `read_file` of the last page of a 1 GB file against `wc -l` of the same file (the floor of
//! a pass over it) and reading the whole file into memory, as a naive tool would: the page of a
//! file just changed (streamed from the top: its line index is not valid any more), and another
//! deep page of the unchanged file (from the nearest line start its index noted).
//!
//! Run: `cargo bench --bench read_file` (writes a 1 GiB file under the system temp dir, and
//! removes it after).

use std::hint::black_box;
use std::io::Write as _;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolsmith::{Registry, ToolCall};
use toolsmith_std::Sandbox;

const FILE_BYTES: usize = 1 << 30;

fn bench_last_page(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("big.log");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("the file"));
    let mut written = 0;
    let mut lines = 0usize;
    while written < FILE_BYTES {
        let line = format!("{lines:>12} INFO request handled in 3 ms, status 200, bytes 5120\n");
        file.write_all(line.as_bytes()).expect("a write");
        written += line.len();
        lines += 1;
    }
    drop(file);

    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let registry = toolsmith_std::register(Registry::builder())
        .state(Sandbox::new(dir.path()).expect("a sandbox"))
        .build()
        .expect("a registry");
    let args = json!({ "path": "big.log", "offset": lines - 50, "limit": 50 });

    let page = |args: serde_json::Value| {
        let registry = &registry;
        async move {
            let mut turn = registry.turn();
            let result = turn
                .execute([ToolCall::new("bench", "read_file", args)])
                .await;
            assert!(!result[0].is_error(), "{}", result[0].content);
            black_box(result[0].content.len())
        }
    };
    let mut group = c.benchmark_group("read_file_1GiB");
    group.sample_size(10);
    group.bench_function("wc_l", |b| {
        b.iter(|| {
            let out = std::process::Command::new("wc")
                .arg("-l")
                .arg(&path)
                .output()
                .expect("wc runs");
            assert!(out.status.success());
            black_box(out.stdout.len())
        })
    });
    group.bench_function("last_page_of_50_lines_of_a_changed_file", |b| {
        let file = std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("the file");
        b.to_async(&runtime).iter(|| {
            // Touched: a new modification time, so no line start noted before is used.
            file.set_modified(std::time::SystemTime::now())
                .expect("a new mtime");
            page(args.clone())
        })
    });
    let mut offset = 0;
    group.bench_function("another_deep_page_of_the_unchanged_file", |b| {
        b.to_async(&runtime).iter(|| {
            offset = (offset + 7_919) % 1_000;
            page(json!({ "path": "big.log", "offset": lines - 1_100 + offset, "limit": 50 }))
        })
    });
    group.bench_function("whole_file_read_to_string", |b| {
        b.iter(|| {
            let text = std::fs::read_to_string(&path).expect("the file");
            black_box(text.len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench_last_page);
criterion_main!(benches);
