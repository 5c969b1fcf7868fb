//! Registry overhead: a batch of 100 no-op calls through `Turn::execute` against the same 100
//! calls spawned with bare `tokio::spawn` and joined, on one multi-threaded runtime.
//!
//! Run: `cargo bench --bench registry`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use toolsmith::{Registry, Tool, ToolCall, ToolContext};
use toolsmith_workspace::{Noop, NoopArgs};

const CALLS: usize = 100;

fn bench_overhead(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let registry = Registry::builder()
        .tool(Noop)
        .max_calls_per_turn(CALLS)
        .max_calls_per_tool(CALLS)
        .build()
        .expect("a valid registry");
    let calls: Vec<ToolCall> = (0..CALLS)
        .map(|i| ToolCall::new(format!("call_{i}"), "noop", json!({})))
        .collect();

    let mut group = c.benchmark_group("batch_of_100_noops");
    group.throughput(Throughput::Elements(CALLS as u64));
    group.bench_function("registry_turn_execute", |b| {
        b.to_async(&runtime).iter(|| async {
            let mut turn = registry.turn();
            let results = turn.execute(calls.clone()).await;
            black_box(results.len())
        })
    });
    group.bench_function("bare_spawn_join", |b| {
        b.to_async(&runtime).iter(|| async {
            let tasks: Vec<_> = (0..CALLS)
                .map(|i| {
                    tokio::spawn(async move {
                        let cx = ToolContext::new(format!("call_{i}"), "noop", 800);
                        Noop.call(NoopArgs {}, &cx).await
                    })
                })
                .collect();
            let mut done = 0;
            for task in tasks {
                done += usize::from(task.await.is_ok());
            }
            black_box(done)
        })
    });
    group.finish();
}

criterion_group!(benches, bench_overhead);
criterion_main!(benches);
