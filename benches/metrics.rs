//! What counting one call into the gateway's metrics costs: the series looked up (its labels
//! hashed, under a lock) and six atomic figures added, as the relay does after each call.
//!
//! `cargo bench --bench metrics`
//!
//! - `count_call/one_tool`: every call the same series.
//! - `count_call/1000_tools`: calls spread over 1,000 series (the default cap), in turn.
//! - `count_call/2_threads`: two threads counting into the same series at once.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use toolsmith::mcp::{Metrics, MetricsOptions};

fn count_call(c: &mut Criterion) {
    let mut group = c.benchmark_group("count_call");
    let metrics = Metrics::new(MetricsOptions::default());
    let elapsed = Duration::from_micros(850);
    group.bench_function("one_tool", |b| {
        b.iter(|| {
            metrics.__count_call(
                black_box("github"),
                black_box("search_issues"),
                elapsed,
                80_000,
                20_000,
            );
        });
    });
    let tools: Vec<String> = (0..1_000).map(|i| format!("tool_number_{i}")).collect();
    let mut next = 0;
    group.bench_function("1000_tools", |b| {
        b.iter(|| {
            next = (next + 1) % tools.len();
            metrics.__count_call(black_box("github"), &tools[next], elapsed, 80_000, 20_000);
        });
    });
    group.bench_function("2_threads", |b| {
        b.iter_custom(|iterations| {
            let started = std::time::Instant::now();
            std::thread::scope(|scope| {
                for _ in 0..2 {
                    scope.spawn(|| {
                        for _ in 0..iterations {
                            metrics.__count_call(
                                "github",
                                "search_issues",
                                elapsed,
                                80_000,
                                20_000,
                            );
                        }
                    });
                }
            });
            // Per call: two calls are counted per iteration, at once.
            started.elapsed() / 2
        });
    });
    group.finish();
}

criterion_group!(benches, count_call);
criterion_main!(benches);
