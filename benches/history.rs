//! History maintenance of a long agent session: 10,000 messages, of which 2,000 carry a 10 KB
//! tool result. validate of the valid history, repair of a damaged copy, microcompact of a
//! fresh copy and of an already compacted one.
//!
//! Run: `cargo bench --bench history`

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolsmith::history::{self, Block, CompactPolicy, Message, Role};

/// 2,000 tool turns (assistant call + user result of 10 KB) and 3,000 chat exchanges.
fn session() -> Vec<Message> {
    let result: String = (0..400)
        .map(|i| format!("{i:>6}\tfn line_{i}() {{ let x = {i}; }}\n"))
        .collect();
    let result = &result[..10_000];
    let mut messages = Vec::with_capacity(10_000);
    for t in 0..5_000 {
        if t % 5 < 2 {
            let id = format!("toolu_{t}");
            messages.push(Message::from_blocks(
                Role::Assistant,
                vec![
                    Block::text("Let me look."),
                    Block::tool_use(&id, "read_file", json!({ "path": t })),
                ],
            ));
            messages.push(Message::from_blocks(
                Role::User,
                vec![Block::tool_result(&id, result, false)],
            ));
        } else {
            messages.push(Message::assistant(format!(
                "Here is what I found in step {t}."
            )));
            messages.push(Message::user("Go on."));
        }
    }
    // A valid session does not start with the assistant.
    messages.insert(0, Message::user("Start."));
    messages.pop();
    messages
}

/// The same session with every 50th tool result lost and every 70th message's blocks reversed.
fn damaged(session: &[Message]) -> Vec<Message> {
    let mut messages = session.to_vec();
    let mut results = 0;
    for message in &mut messages {
        if message.tool_results().next().is_some() {
            results += 1;
            if results % 50 == 0 {
                *message = Message::user("(the tool results were lost)");
            }
        }
    }
    messages
}

fn bench_history(c: &mut Criterion) {
    let session = session();
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
    group.finish();
}

criterion_group!(benches, bench_history);
criterion_main!(benches);
