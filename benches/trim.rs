//! `trim::fit` (keeping what matters: folds, salient lines, rendering) and the positional cut it
//! grew from, against a naive trim (collect the lines, pick head and tail lines, join) on
//! log-like inputs of 1 MB and 100 MB (and 1 GB with `TOOLSMITH_BENCH_1GB=1`), and against one
//! memchr newline count over the same input, the least an exact line total can cost.
//!
//! Run: `cargo bench --bench trim`

mod inputs;

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use inputs::log_of;
use toolsmith::trim::{TrimStyle, fit};

/// What a framework without a trim engine does: every line collected, every char counted.
fn naive_fit(text: &str, allowance: usize, head_ratio: f64) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let total: usize = text.chars().count();
    if total <= allowance {
        return text.to_owned();
    }
    let head_room = (allowance as f64 * head_ratio) as usize;
    let tail_room = allowance - head_room;
    let mut head = Vec::new();
    let mut used = 0;
    for line in &lines {
        let chars = line.chars().count() + 1;
        if used + chars > head_room {
            break;
        }
        used += chars;
        head.push(*line);
    }
    let mut tail = Vec::new();
    used = 0;
    for line in lines.iter().rev() {
        let chars = line.chars().count() + 1;
        if used + chars > tail_room {
            break;
        }
        used += chars;
        tail.push(*line);
    }
    tail.reverse();
    format!(
        "{}\n[truncated — {total} chars total]\n{}",
        head.join("\n"),
        tail.join("\n")
    )
}

fn bench_fit(c: &mut Criterion) {
    let mut sizes = vec![("1MB", 1 << 20), ("100MB", 100 << 20)];
    if std::env::var_os("TOOLSMITH_BENCH_1GB").is_some() {
        sizes.push(("1GB", 1 << 30));
    }
    let style = TrimStyle::default();
    // What `fit` was before it kept what matters: a head and a tail, by position.
    let positional = TrimStyle::head_tail(TrimStyle::DEFAULT_HEAD_RATIO);
    let allowance = 20_000;
    let mut group = c.benchmark_group("trim_20k");
    group.sample_size(10);
    for (label, bytes) in sizes {
        let text = log_of(bytes);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new("fit", label), &text, |b, text| {
            b.iter(|| fit(black_box(text), allowance, &style).text().len())
        });
        group.bench_with_input(
            BenchmarkId::new("fit_positional", label),
            &text,
            |b, text| b.iter(|| fit(black_box(text), allowance, &positional).text().len()),
        );
        // The floor: one memchr newline count over the input, what any exact line total costs.
        group.bench_with_input(BenchmarkId::new("memchr_count", label), &text, |b, text| {
            b.iter(|| memchr::memchr_iter(b'\n', black_box(text).as_bytes()).count())
        });
        group.bench_with_input(BenchmarkId::new("naive", label), &text, |b, text| {
            b.iter(|| naive_fit(black_box(text), allowance, 0.3).len())
        });
    }
    group.finish();
}

criterion_group!(benches, bench_fit);
criterion_main!(benches);
