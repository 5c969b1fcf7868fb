//! Validating an already valid history allocates nothing. Alone in its binary: dhat is the
//! global allocator here, counting every allocation.

use serde_json::json;
use toolsmith::history::{self, Block, Message, Role};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[test]
fn validating_a_valid_history_allocates_nothing() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let mut messages = vec![Message::user("start")];
    for t in 0..500 {
        let id = format!("toolu_{t}");
        messages.push(Message::from_blocks(
            Role::Assistant,
            vec![
                Block::text("let me look"),
                Block::tool_use(&id, "read_file", json!({ "t": t })),
            ],
        ));
        messages.push(Message::from_blocks(
            Role::User,
            vec![
                Block::tool_result(&id, "x".repeat(1_000), false),
                Block::text("ok"),
            ],
        ));
    }
    let before = dhat::HeapStats::get();
    let violations = history::validate(&messages);
    let valid = history::is_valid(&messages);
    let report = history::repair(&mut messages);
    let after = dhat::HeapStats::get();
    assert!(violations.is_empty() && valid && report.is_empty());
    dhat::assert_eq!(after.total_blocks, before.total_blocks);
}
