//! History maintenance of a long agent session: 10,000 messages, of which 2,000 carry a 10 KB
//! tool result. validate of the valid history, repair of a damaged copy, microcompact of a
//! fresh copy and of an already compacted one.
//!
//! Run: `cargo bench --bench history`

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

// The inputs the benches measure, made in one place.
#[path = "inputs/mod.rs"]
mod inputs;
use inputs::{damaged, session};
use toolsmith::history::{self, CompactPolicy};

fn bench_history(c: &mut Criterion) {
    let session = session(10_000);
    assert_eq!(session.len(), 10_000);
    assert_eq!(
        session
            .iter()
            .filter(|m| m.tool_results().next().is_some())
            .count(),
        2_000
    );
    let damaged = damaged(&session);
    let mut compacted = session.clone();
    history::microcompact(&mut compacted, &CompactPolicy::default());
    let policy = CompactPolicy::default();

    let mut group = c.benchmark_group("history_10k_messages");
    group.sample_size(20);
    group.bench_function("validate_valid", |b| {
        b.iter(|| black_box(history::validate(&session)).len())
    });
    group.bench_function("repair_damaged", |b| {
        b.iter_batched(
            || damaged.clone(),
            |mut messages| black_box(history::repair(&mut messages)),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("microcompact_first", |b| {
        b.iter_batched(
            || session.clone(),
            |mut messages| black_box(history::microcompact(&mut messages, &policy)),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("microcompact_again", |b| {
        b.iter_batched(
            || compacted.clone(),
            |mut messages| black_box(history::microcompact(&mut messages, &policy)),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("all_three_on_a_damaged_session", |b| {
        b.iter_batched(
            || damaged.clone(),
            |mut messages| {
                let violations = history::validate(&messages).len();
                let repaired = history::repair(&mut messages);
                let compacted = history::microcompact(&mut messages, &policy);
                black_box((violations, repaired, compacted))
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();

    // The same session in the Responses API's items and Gemini's contents, damaged the same
    // way: read, validated, repaired, compacted and written back.
    let items = history::to_responses(&damaged);
    let contents = history::to_gemini(&damaged);
    let mut group = c.benchmark_group("history_10k_messages_other_formats");
    group.sample_size(20);
    group.bench_function("responses_all_three_and_back", |b| {
        b.iter(|| {
            let mut messages = history::from_responses(&items).unwrap();
            let violations = history::validate(&messages).len();
            let repaired = history::repair(&mut messages);
            let compacted = history::microcompact(&mut messages, &policy);
            black_box((
                violations,
                repaired,
                compacted,
                history::to_responses(&messages),
            ))
        })
    });
    group.bench_function("gemini_all_three_and_back", |b| {
        b.iter(|| {
            let mut messages = history::from_gemini(&contents).unwrap();
            let violations = history::validate(&messages).len();
            let repaired = history::repair(&mut messages);
            let compacted = history::microcompact(&mut messages, &policy);
            black_box((
                violations,
                repaired,
                compacted,
                history::to_gemini(&messages),
            ))
        })
    });
    // As an agent holding the items it parsed does it: the items move in and the strings move
    // back out, nothing large is copied. (The copy of the input is made outside the timing;
    // everything dropped is dropped inside it, as in the borrowed runs above.)
    group.bench_function("responses_owned_all_three_and_back", |b| {
        b.iter_batched(
            || items.clone(),
            |items| {
                let mut messages = history::from_responses_owned(items).unwrap();
                let violations = history::validate(&messages).len();
                let repaired = history::repair(&mut messages);
                let compacted = history::microcompact(&mut messages, &policy);
                let back = history::into_responses(messages);
                black_box((violations, repaired, compacted, &back));
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("gemini_owned_all_three_and_back", |b| {
        b.iter_batched(
            || contents.clone(),
            |contents| {
                let mut messages = history::from_gemini_owned(contents).unwrap();
                let violations = history::validate(&messages).len();
                let repaired = history::repair(&mut messages);
                let compacted = history::microcompact(&mut messages, &policy);
                let back = history::into_gemini(messages);
                black_box((violations, repaired, compacted, &back));
            },
            BatchSize::LargeInput,
        )
    });
    // The conversions alone, both ways, to tell their share from the work on the history.
    group.bench_function("responses_read_and_write_only", |b| {
        b.iter(|| {
            let messages = history::from_responses(&items).unwrap();
            black_box(history::to_responses(&messages))
        })
    });
    group.bench_function("gemini_read_and_write_only", |b| {
        b.iter(|| {
            let messages = history::from_gemini(&contents).unwrap();
            black_box(history::to_gemini(&messages))
        })
    });
    group.bench_function("responses_owned_read_and_write_only", |b| {
        b.iter_batched(
            || items.clone(),
            |items| {
                let back = history::into_responses(history::from_responses_owned(items).unwrap());
                black_box(&back);
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("gemini_owned_read_and_write_only", |b| {
        b.iter_batched(
            || contents.clone(),
            |contents| {
                let back = history::into_gemini(history::from_gemini_owned(contents).unwrap());
                black_box(&back);
            },
            BatchSize::LargeInput,
        )
    });
    // The floor of "read and write back" into owned JSON values: one deep copy of the same
    // values, nothing converted.
    group.bench_function("responses_copy_only", |b| {
        b.iter(|| black_box(items.clone()))
    });
    group.bench_function("gemini_copy_only", |b| {
        b.iter(|| black_box(contents.clone()))
    });
    // What the owned runs cannot avoid: the values written back are dropped inside the
    // timing, and freeing a tree of values costs about what allocating it did.
    group.bench_function("responses_drop_only", |b| {
        b.iter_batched(|| items.clone(), drop, BatchSize::LargeInput)
    });
    group.bench_function("gemini_drop_only", |b| {
        b.iter_batched(|| contents.clone(), drop, BatchSize::LargeInput)
    });
    group.finish();
}

criterion_group!(benches, bench_history);
criterion_main!(benches);
