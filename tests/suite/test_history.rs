//! History: the message model against provider-shaped JSON, pairing validation and repair
//! (with property tests), microcompaction, overflow detection and recovery, escalation.

use proptest::prelude::*;
use serde_json::{Value, json};
use toolsmith::BudgetPolicy;
use toolsmith::history::{
    self, Block, CompactPolicy, Content, ContentKind, Escalation, MISSING_RESULT_TEXT,
    MaxTokensEscalation, Message, ProviderErrorKind, RecoveryLevel, RecoveryPolicy, ResultContent,
    Role, Violation,
};

/// A conversation in the Anthropic Messages API's shape: text, tool use, tool results with
/// string and block content, an error result, an image, cache control, a thinking block.
fn anthropic_fixture() -> Value {
    json!([
        { "role": "user", "content": "What's the weather in Paris, and show me the chart." },
        { "role": "assistant", "content": [
            { "type": "thinking", "thinking": "I should call both tools.", "signature": "EqQBCgIYAhIM" },
            { "type": "text", "text": "I'll look that up." },
            { "type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
              "input": { "location": "Paris, France", "unit": "celsius" } },
            { "type": "tool_use", "id": "toolu_01B", "name": "get_chart", "input": {} }
        ]},
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
              "content": "15 degrees, light rain", "cache_control": { "type": "ephemeral" } },
            { "type": "tool_result", "tool_use_id": "toolu_01B", "is_error": true,
              "content": [
                  { "type": "text", "text": "chart service unavailable" },
                  { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo=" } }
              ] },
            { "type": "text", "text": "Also, thanks!" }
        ]},
        { "role": "assistant", "content": [ { "type": "text", "text": "It's 15°C and raining." } ] }
    ])
}

#[test]
fn anthropic_json_round_trips_exactly() {
    let fixture = anthropic_fixture();
    let messages: Vec<Message> = serde_json::from_value(fixture.clone()).unwrap();
    assert_eq!(messages.len(), 4);
    assert!(matches!(messages[0].content, Content::Text(_)));
    assert!(matches!(&messages[1].blocks()[0], Block::Other(v) if v["type"] == "thinking"));
    assert_eq!(messages[1].tool_uses().count(), 2);
    let results: Vec<_> = messages[2].tool_results().collect();
    assert_eq!(results[0].text(), "15 degrees, light rain");
    assert_eq!(results[1].is_error, Some(true));
    assert!(!results[1].is_text_only());
    assert_eq!(serde_json::to_value(&messages).unwrap(), fixture);
    assert!(history::validate(&messages).is_empty());
}

/// A conversation in the OpenAI Chat Completions API's shape.
fn openai_fixture() -> Value {
    json!([
        { "role": "system", "content": "You are a helpful assistant." },
        { "role": "user", "content": "What's the weather in Boston and Tokyo?" },
        { "role": "assistant", "content": null, "tool_calls": [
            { "id": "call_abc", "type": "function",
              "function": { "name": "get_weather", "arguments": "{\"location\":\"Boston\"}" } },
            { "id": "call_def", "type": "function",
              "function": { "name": "get_weather", "arguments": "{\"location\":\"Tokyo\"}" } }
        ]},
        { "role": "tool", "tool_call_id": "call_abc", "content": "22 C, sunny" },
        { "role": "tool", "tool_call_id": "call_def", "content": "18 C, cloudy" },
        { "role": "assistant", "content": "Boston is sunny at 22 C; Tokyo is cloudy at 18 C." },
        { "role": "user", "content": "Thanks." }
    ])
}

#[test]
fn openai_messages_convert_both_ways() {
    let fixture = openai_fixture();
    let (system, messages) = history::from_openai(fixture.as_array().unwrap()).unwrap();
    assert_eq!(system.as_deref(), Some("You are a helpful assistant."));
    assert_eq!(messages.len(), 5);
    let calls: Vec<_> = messages[1].tool_uses().collect();
    assert_eq!(calls[1].id, "call_def");
    assert_eq!(calls[1].input, json!({ "location": "Tokyo" }));
    let results: Vec<_> = messages[2].tool_results().collect();
    assert_eq!(
        (results[0].tool_use_id.as_str(), results[0].text()),
        ("call_abc", "22 C, sunny".into())
    );
    assert!(history::validate(&messages).is_empty());
    assert_eq!(
        Value::Array(history::to_openai(system.as_deref(), &messages)),
        fixture
    );
}

#[test]
fn bad_openai_messages_are_errors_naming_the_message() {
    let error = history::from_openai(&[
        json!({ "role": "user", "content": "hi" }),
        json!({ "content": "x" }),
    ])
    .unwrap_err();
    assert_eq!(error.to_string(), "OpenAI message 1: no `role`");
    let error = history::from_openai(&[json!({ "role": "tool", "content": "x" })]).unwrap_err();
    assert!(error.to_string().contains("needs `tool_call_id`"));
}

fn assistant_calls(ids: &[&str]) -> Message {
    Message::from_blocks(
        Role::Assistant,
        ids.iter()
            .map(|id| Block::tool_use(*id, "read_file", json!({ "path": id })))
            .collect(),
    )
}

fn user_results(ids: &[&str]) -> Message {
    Message::from_blocks(
        Role::User,
        ids.iter()
            .map(|id| Block::tool_result(*id, format!("result of {id}"), false))
            .collect(),
    )
}

#[test]
fn validate_names_every_violation() {
    let messages = vec![
        Message::user("start"),
        assistant_calls(&["a", "b", "a"]),
        Message::from_blocks(
            Role::User,
            vec![
                Block::text("here you go"),
                Block::tool_result("a", "A", false),
                Block::tool_result("a", "A again", false),
                Block::tool_result("zzz", "orphan", false),
                Block::tool_use("u", "x", json!({})),
            ],
        ),
    ];
    let violations = history::validate(&messages);
    let expected = [
        Violation::DuplicateUse {
            message: 1,
            id: "a".into(),
        },
        Violation::MissingResult {
            message: 1,
            id: "b".into(),
        },
        Violation::DuplicateResult {
            message: 2,
            id: "a".into(),
        },
        Violation::OrphanResult {
            message: 2,
            id: "zzz".into(),
        },
        Violation::UseInUserMessage {
            message: 2,
            id: "u".into(),
        },
        Violation::ResultsNotFirst { message: 2 },
    ];
    for violation in &expected {
        assert!(
            violations.contains(violation),
            "missing {violation}: {violations:?}"
        );
    }
    assert_eq!(violations.len(), expected.len(), "{violations:?}");
}

#[test]
fn repair_fixes_each_kind_and_reports_it() {
    let mut messages = vec![
        user_results(&["before"]),
        Message::user("start"),
        assistant_calls(&["a", "b", "a"]),
        Message::from_blocks(
            Role::User,
            vec![
                Block::text("interjection"),
                Block::tool_result("a", "A", false),
            ],
        ),
        Message::user("and more"),
        assistant_calls(&["c"]),
        assistant_calls(&["d"]),
        user_results(&["d", "x"]),
    ];
    let report = history::repair(&mut messages);
    assert!(
        history::validate(&messages).is_empty(),
        "{:?}",
        history::validate(&messages)
    );
    assert_eq!(report.synthesized, ["b", "c"]);
    assert_eq!(report.orphans_removed, ["before", "x"]);
    assert_eq!(report.duplicate_uses_removed, ["a"]);
    assert_eq!(report.moved, ["a"]);
    assert_eq!(report.empty_messages_removed, 1);
    // The results come first, in call order, then the user's own words.
    let turn: Vec<String> = messages[2]
        .blocks()
        .iter()
        .map(|b| match b {
            Block::ToolResult(r) => format!("result {}", r.tool_use_id),
            Block::Text(t) => t.text.clone(),
            _ => "?".into(),
        })
        .collect();
    assert_eq!(turn, ["result a", "result b", "interjection"]);
    let synthetic = messages[2].tool_results().nth(1).unwrap();
    assert_eq!(synthetic.text(), MISSING_RESULT_TEXT);
    assert_eq!(synthetic.is_error, Some(true));
    // Between two assistant messages, a user message with the synthetic result was inserted.
    assert_eq!(messages[5].role, Role::User);
    assert_eq!(messages[5].tool_results().next().unwrap().tool_use_id, "c");
    assert!(
        history::repair(&mut messages).is_empty(),
        "repair is idempotent"
    );
}

/// The provider's rules for ids, written apart from the library: every `tool_use` id matches
/// `^[a-zA-Z0-9_-]+$` and none repeats anywhere in the conversation; every result names a call
/// of the assistant message right before its message.
fn provider_accepts_ids(messages: &[Message]) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for (i, message) in messages.iter().enumerate() {
        for tool_use in message.tool_uses() {
            let id = tool_use.id.as_str();
            if id.is_empty()
                || !id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(format!(
                    "messages.{i}: id `{id}` does not match the pattern"
                ));
            }
            if !seen.insert(id.to_owned()) {
                return Err(format!(
                    "messages.{i}: tool_use ids must be unique (`{id}`)"
                ));
            }
        }
        for result in message.tool_results() {
            let called = i > 0
                && messages[i - 1]
                    .tool_uses()
                    .any(|tool_use| tool_use.id == result.tool_use_id);
            if !called {
                return Err(format!(
                    "messages.{i}: result `{}` answers no call",
                    result.tool_use_id
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn ids_reused_across_the_conversation_are_renamed_with_their_results() {
    let mut messages = vec![
        Message::user("go"),
        assistant_calls(&["a"]),
        user_results(&["a"]),
        assistant_calls(&["a"]),
        user_results(&["a"]),
        Message::assistant("end"),
    ];
    assert!(provider_accepts_ids(&messages).is_err());
    let violations = history::validate(&messages);
    assert_eq!(
        violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [
            "message 3: tool_use id `a` was already used in message 1; ids must be unique across \
          the conversation"
        ]
    );
    let report = history::repair(&mut messages);
    assert_eq!(report.renamed, [("a".to_owned(), "a_2".to_owned())]);
    assert!(
        report.to_string().contains("ids renamed: `a` → `a_2`"),
        "{report}"
    );
    provider_accepts_ids(&messages).unwrap();
    assert_eq!(
        messages[4].tool_results().next().unwrap().tool_use_id,
        "a_2"
    );
    assert_eq!(
        result_text(&messages[4]),
        "result of a",
        "the renamed call keeps its own result"
    );
    assert!(history::validate(&messages).is_empty());
    assert!(
        history::repair(&mut messages).is_empty(),
        "a second repair changes nothing"
    );
}

#[test]
fn malformed_ids_are_renamed_to_valid_unique_ones() {
    let mut messages = vec![
        Message::user("go"),
        assistant_calls(&["call.1", "has space", ""]),
        user_results(&["call.1", "has space", ""]),
        // `call_1` is taken later in the conversation: the rename must not collide with it.
        assistant_calls(&["call_1", "call.1"]),
        user_results(&["call_1", "call.1"]),
    ];
    let violations = history::validate(&messages);
    assert!(
        violations
            .iter()
            .any(|v| matches!(v, history::Violation::InvalidId { id, .. } if id.is_empty())),
        "{violations:?}"
    );
    let report = history::repair(&mut messages);
    provider_accepts_ids(&messages).unwrap();
    assert_eq!(report.renamed.len(), 4, "{report}");
    for (old, new) in &report.renamed {
        assert!(history::is_valid_tool_use_id(new), "`{old}` → `{new}`");
    }
    let before = messages.clone();
    assert!(history::repair(&mut messages).is_empty());
    assert_eq!(messages, before);
}

#[test]
fn openai_histories_that_reuse_call_ids_come_out_unique() {
    let openai = json!([
        { "role": "user", "content": "go" },
        { "role": "assistant", "content": null, "tool_calls": [
            { "id": "call_0", "type": "function", "function": { "name": "read_file", "arguments": "{}" } }
        ] },
        { "role": "tool", "tool_call_id": "call_0", "content": "first" },
        { "role": "assistant", "content": null, "tool_calls": [
            { "id": "call_0", "type": "function", "function": { "name": "read_file", "arguments": "{}" } }
        ] },
        { "role": "tool", "tool_call_id": "call_0", "content": "second" },
    ]);
    let (_, messages) = history::from_openai(openai.as_array().unwrap()).unwrap();
    provider_accepts_ids(&messages).unwrap();
    assert_eq!(result_text(&messages[4]), "second");
}

/// A valid history: turns of an assistant message with some calls (and maybe text) and the
/// user message answering them (maybe with text after).
fn valid_history() -> impl Strategy<Value = Vec<Message>> {
    let turn = (0usize..4, any::<bool>(), any::<bool>(), "[a-z ]{0,20}");
    prop::collection::vec(turn, 0..8).prop_map(|turns| {
        let mut messages = vec![Message::user("start")];
        for (t, (calls, assistant_text, user_text, words)) in turns.into_iter().enumerate() {
            let ids: Vec<String> = (0..calls).map(|c| format!("call_{t}_{c}")).collect();
            let mut blocks = Vec::new();
            if assistant_text || calls == 0 {
                blocks.push(Block::text(format!("turn {t}: {words}")));
            }
            blocks.extend(
                ids.iter()
                    .map(|id| Block::tool_use(id, "tool", json!({ "t": t }))),
            );
            messages.push(Message::from_blocks(Role::Assistant, blocks));
            let mut results: Vec<Block> = ids
                .iter()
                .map(|id| Block::tool_result(id, format!("result {t} {id}"), false))
                .collect();
            if user_text || calls == 0 {
                results.push(Block::text(format!("user {t}")));
            }
            messages.push(Message::from_blocks(Role::User, results));
        }
        messages
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    DropMessage(usize),
    DuplicateBlock(usize, usize),
    MoveBlock(usize, usize, usize),
    SwapIds(usize, usize),
    DropBlock(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DropMessage),
        (any::<usize>(), any::<usize>()).prop_map(|(m, b)| Mutation::DuplicateBlock(m, b)),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(m, b, t)| Mutation::MoveBlock(m, b, t)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapIds(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(m, b)| Mutation::DropBlock(m, b)),
    ]
}

fn blocks_mut(message: &mut Message) -> &mut Vec<Block> {
    if let Content::Text(text) = &message.content {
        message.content = Content::Blocks(vec![Block::text(text.clone())]);
    }
    match &mut message.content {
        Content::Blocks(blocks) => blocks,
        Content::Text(_) => unreachable!("converted above"),
    }
}

fn apply(messages: &mut Vec<Message>, mutation: &Mutation) {
    let n = messages.len();
    if n == 0 {
        return;
    }
    match *mutation {
        Mutation::DropMessage(m) => {
            messages.remove(m % n);
        }
        Mutation::DuplicateBlock(m, b) => {
            let blocks = blocks_mut(&mut messages[m % n]);
            if !blocks.is_empty() {
                let block = blocks[b % blocks.len()].clone();
                blocks.push(block);
            }
        }
        Mutation::MoveBlock(m, b, t) => {
            let blocks = blocks_mut(&mut messages[m % n]);
            if !blocks.is_empty() {
                let block = blocks.remove(b % blocks.len());
                blocks_mut(&mut messages[t % n]).push(block);
            }
        }
        Mutation::SwapIds(a, b) => {
            let ids: Vec<(usize, usize)> = messages
                .iter()
                .enumerate()
                .flat_map(|(m, msg)| (0..msg.blocks().len()).map(move |k| (m, k)))
                .collect();
            if ids.len() >= 2 {
                let (ma, ka) = ids[a % ids.len()];
                let (mb, kb) = ids[b % ids.len()];
                let id_of = |block: &Block| match block {
                    Block::ToolUse(u) => Some(u.id.clone()),
                    Block::ToolResult(r) => Some(r.tool_use_id.clone()),
                    _ => None,
                };
                let (Some(ia), Some(ib)) = (
                    id_of(&messages[ma].blocks()[ka]),
                    id_of(&messages[mb].blocks()[kb]),
                ) else {
                    return;
                };
                let set = |block: &mut Block, id: String| match block {
                    Block::ToolUse(u) => u.id = id,
                    Block::ToolResult(r) => r.tool_use_id = id,
                    _ => {}
                };
                set(&mut blocks_mut(&mut messages[ma])[ka], ib);
                set(&mut blocks_mut(&mut messages[mb])[kb], ia);
            }
        }
        Mutation::DropBlock(m, b) => {
            let blocks = blocks_mut(&mut messages[m % n]);
            if !blocks.is_empty() {
                blocks.remove(b % blocks.len());
            }
        }
    }
}

/// The pairing rules of Anthropic's Messages API, checked here without the library: every
/// `tool_use` is answered once, by a `tool_result` in the message right after its own, which is
/// a user message whose results come before anything else; every result answers a call of the
/// message right before it.
fn independent_violations(messages: &[Message]) -> Vec<String> {
    let mut found = Vec::new();
    let calls = |m: &Message| -> Vec<String> {
        m.blocks()
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse(u) => Some(u.id.clone()),
                _ => None,
            })
            .collect()
    };
    let results = |m: &Message| -> Vec<String> {
        m.blocks()
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult(r) => Some(r.tool_use_id.clone()),
                _ => None,
            })
            .collect()
    };
    for (i, message) in messages.iter().enumerate() {
        let made = if message.role == Role::Assistant {
            calls(message)
        } else {
            Vec::new()
        };
        if !made.is_empty() {
            match messages.get(i + 1) {
                Some(next) if next.role == Role::User => {
                    let mut answered = results(next);
                    let mut wanted = made.clone();
                    answered.sort();
                    wanted.sort();
                    if answered != wanted {
                        found.push(format!(
                            "message {i}: calls {made:?} answered by {answered:?}"
                        ));
                    }
                    let first_other = next
                        .blocks()
                        .iter()
                        .position(|b| !matches!(b, Block::ToolResult(_)));
                    let last_result = next
                        .blocks()
                        .iter()
                        .rposition(|b| matches!(b, Block::ToolResult(_)));
                    if let (Some(other), Some(result)) = (first_other, last_result)
                        && other < result
                    {
                        found.push(format!("message {}: a result after other content", i + 1));
                    }
                }
                _ => found.push(format!(
                    "message {i}: calls {made:?} and no user message after"
                )),
            }
        }
        if message.role == Role::User && !results(message).is_empty() {
            let before = i.checked_sub(1).map(|p| &messages[p]);
            let asked = before
                .filter(|p| p.role == Role::Assistant)
                .map(calls)
                .unwrap_or_default();
            for id in results(message) {
                if !asked.contains(&id) {
                    found.push(format!(
                        "message {i}: result {id} answers no call right before"
                    ));
                }
            }
        }
    }
    found
}

/// The text of every text block, in order.
fn texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .flat_map(|m| match &m.content {
            toolsmith::history::Content::Text(text) => vec![text.clone()],
            toolsmith::history::Content::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    Block::Text(t) => Some(t.text.clone()),
                    _ => None,
                })
                .collect(),
        })
        .filter(|t| !t.is_empty())
        .collect()
}

#[test]
fn a_result_that_came_after_a_later_message_goes_back_to_its_call() {
    let result = |id: &str, text: &str| -> Block {
        serde_json::from_value(json!({ "type": "tool_result", "tool_use_id": id, "content": text }))
            .unwrap()
    };
    let mut messages = vec![
        Message::user("fix the build"),
        assistant_calls(&["a", "b"]),
        Message::from_blocks(Role::User, vec![result("a", "result of a")]),
        Message::assistant("thinking"),
        Message::from_blocks(
            Role::User,
            vec![result("b", "result of b"), Block::text("more")],
        ),
    ];
    let before_texts = texts(&messages);
    let report = history::repair(&mut messages);
    assert!(
        independent_violations(&messages).is_empty(),
        "{:?}",
        independent_violations(&messages)
    );
    assert_eq!(report.moved, ["b"], "{report}");
    assert!(
        report.synthesized.is_empty() && report.orphans_removed.is_empty(),
        "{report}"
    );
    let answers = serde_json::to_value(&messages[2]).unwrap();
    assert_eq!(answers["content"][1]["content"], "result of b", "{answers}");
    assert_eq!(texts(&messages), before_texts, "no text is lost");
    let again = messages.clone();
    assert!(history::repair(&mut messages).is_empty());
    assert_eq!(messages, again);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    #[test]
    fn a_valid_history_is_left_alone(messages in valid_history()) {
        prop_assert!(history::validate(&messages).is_empty());
        let mut repaired = messages.clone();
        prop_assert!(history::repair(&mut repaired).is_empty());
        prop_assert_eq!(repaired, messages);
    }

    #[test]
    fn any_mutation_is_repaired_and_repair_is_idempotent(
        messages in valid_history(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let mut messages = messages;
        for m in &mutations {
            apply(&mut messages, m);
        }
        let text_before = texts(&messages);
        history::repair(&mut messages);
        let violations = history::validate(&messages);
        prop_assert!(violations.is_empty(), "{:?}", violations);
        let independent = independent_violations(&messages);
        prop_assert!(independent.is_empty(), "{:?}", independent);
        // No text is dropped (results written for missing calls add none).
        let text_after = texts(&messages);
        for text in &text_before {
            prop_assert!(text_after.contains(text), "{text:?} was dropped");
        }
        prop_assert_eq!(provider_accepts_ids(&messages), Ok(()));
        prop_assert!(messages.iter().all(|m| !m.is_empty()), "no empty message is left");
        let again = messages.clone();
        prop_assert!(history::repair(&mut messages).is_empty());
        prop_assert_eq!(messages, again);
    }

    #[test]
    fn microcompaction_is_idempotent(
        sizes in prop::collection::vec(0usize..12_000, 1..10),
        extra_turns in 0usize..6,
    ) {
        let mut messages = conversation_with_results(&sizes);
        for t in 0..extra_turns {
            messages.push(Message::assistant(format!("thinking {t}")));
            messages.push(Message::user("go on"));
        }
        let policy = CompactPolicy::default();
        history::microcompact(&mut messages, &policy);
        let once = messages.clone();
        prop_assert!(history::microcompact(&mut messages, &policy).is_empty());
        prop_assert_eq!(messages, once);
    }
}

/// One turn per size: a read_file call and its result of that many chars (numbered lines).
fn conversation_with_results(sizes: &[usize]) -> Vec<Message> {
    let mut messages = vec![Message::user("start")];
    for (t, &size) in sizes.iter().enumerate() {
        let id = format!("toolu_{t}");
        messages.push(Message::from_blocks(
            Role::Assistant,
            vec![Block::tool_use(
                &id,
                "read_file",
                json!({ "path": format!("f{t}.go") }),
            )],
        ));
        let mut text = String::from("package main\n\nfunc main() {\n");
        let mut line = 0;
        while text.len() < size {
            text.push_str(&format!("\tfmt.Println(\"line {line}\")\n"));
            line += 1;
        }
        messages.push(user_results_with(&id, text));
    }
    messages
}

fn user_results_with(id: &str, text: String) -> Message {
    Message::from_blocks(Role::User, vec![Block::tool_result(id, text, false)])
}

fn result_text(message: &Message) -> String {
    message
        .tool_results()
        .next()
        .map(|r| r.text().into_owned())
        .unwrap_or_default()
}

#[test]
fn results_are_truncated_at_two_turns_and_summarized_at_four() {
    let mut messages = conversation_with_results(&[28_000, 28_000, 28_000, 28_000, 28_000, 500]);
    let original = result_text(&messages[2]);
    let recent = result_text(&messages[10]);
    let report = history::microcompact(&mut messages, &CompactPolicy::default());
    // Ages: the result in message 2 is 5 turns old, 4 → 4, 6 → 3, 8 → 2, 10 → 1, 12 → 0.
    assert_eq!(report.summarized, ["toolu_1", "toolu_0"]);
    assert_eq!(report.truncated, ["toolu_3", "toolu_2"]);
    assert_eq!(toolsmith::trim::line_count(&original), 1_122);
    assert_eq!(
        result_text(&messages[2]),
        "[Old tool result cleared — 1,122 lines, 28K chars, Go source]"
    );
    let truncated = result_text(&messages[6]);
    assert!(truncated.chars().count() < 3_000);
    assert!(truncated.starts_with("package main\n"));
    // Its lines alike fold: the marker says what was kept and how.
    assert!(truncated.contains("[toolsmith: output "), "{truncated}");
    assert_eq!(result_text(&messages[10]), recent, "one turn old: whole");
    assert!(
        result_text(&messages[12]).chars().count() < 600,
        "small results are kept"
    );
}

#[test]
fn compacted_forms_change_only_when_they_cross_a_threshold() {
    let policy = CompactPolicy::default();
    let mut messages = conversation_with_results(&[20_000]);
    let mut forms = Vec::new();
    for turn in 0..7 {
        history::microcompact(&mut messages, &policy);
        forms.push(result_text(&messages[2]));
        messages.push(Message::assistant(format!("turn {turn}")));
        messages.push(Message::user("continue"));
    }
    // forms[age]: 0 and 1 whole; 2 and 3 truncated, identical; 4, 5, 6 a summary, identical.
    let whole = &forms[0];
    assert!(whole.chars().count() > 20_000);
    assert_eq!(&forms[1], whole);
    assert!(forms[2] != *whole && forms[2].contains("[toolsmith: output "));
    assert_eq!(forms[3], forms[2]);
    assert!(forms[4].starts_with("[Old tool result cleared — "));
    assert_eq!(forms[5], forms[4]);
    assert_eq!(forms[6], forms[4]);
    // The summary made from the truncated form states the original size.
    assert!(
        forms[4].ends_with(", 20K chars, Go source]"),
        "{}",
        forms[4]
    );
}

#[test]
fn preserved_tools_keep_their_results() {
    let mut messages = vec![
        Message::user("go"),
        Message::from_blocks(
            Role::Assistant,
            vec![Block::tool_use("t", "run_command", json!({}))],
        ),
        user_results_with("t", "error: x\n".repeat(1_000)),
    ];
    for _ in 0..5 {
        messages.push(Message::assistant("next"));
        messages.push(Message::user("ok"));
    }
    let policy = CompactPolicy::default().preserving(["run_command"]);
    assert!(history::microcompact(&mut messages, &policy).is_empty());
    let report = history::microcompact(&mut messages, &CompactPolicy::default());
    assert_eq!(report.summarized, ["t"]);
    assert_eq!(
        result_text(&messages[2]),
        "[Old tool result cleared — 1,000 lines, 9K chars, text, 1,000 errors]"
    );
}

/// Deploys the site: a custom tool whose results matter long after the call.
#[toolsmith::tool(preserve)]
async fn deploy() -> Result<String, toolsmith::ToolError> {
    Ok("deployed".into())
}

#[test]
fn a_registry_hands_its_tools_preserve_flags_to_compaction_and_recovery() {
    let registry = toolsmith::Registry::builder()
        .tool(deploy())
        .build()
        .unwrap();
    let old_deploy = || {
        let mut messages = vec![
            Message::user("go"),
            Message::from_blocks(
                Role::Assistant,
                vec![Block::tool_use("t", "deploy", json!({}))],
            ),
            user_results_with("t", "step failed: x\n".repeat(1_000)),
        ];
        for _ in 0..5 {
            messages.push(Message::assistant("next"));
            messages.push(Message::user("ok"));
        }
        messages
    };
    // No name copied by hand: the registry's policy knows `deploy` is preserved.
    let mut messages = old_deploy();
    assert!(history::microcompact(&mut messages, &registry.compact_policy()).is_empty());
    let mut budget = BudgetPolicy::session_profile();
    let report = history::recover(
        RecoveryLevel::AggressiveBudget,
        &mut messages,
        &mut budget,
        &registry.recovery_policy(),
    );
    assert_eq!(report.texts_cut, 0, "a preserved result is left whole");
    // The plain default preserves nothing.
    let mut messages = old_deploy();
    let report = history::microcompact(&mut messages, &CompactPolicy::default());
    assert_eq!(report.summarized, ["t"]);
}

#[test]
fn recovery_cuts_an_old_result_naming_the_artifact_it_named() {
    let id = "0123456789abcdef0123456789abcdef";
    let cut_before = format!(
        "{}[toolsmith: output truncated, kept 1,000 of 90,000 chars (lines 1-10 and 990-1,000 \
         of 1,000); full output: artifact {id}, read it with read_artifact]\n{}",
        "head line\n".repeat(1_500),
        "tail line\n".repeat(1_500)
    );
    let mut messages = vec![
        Message::user("go"),
        Message::from_blocks(
            Role::Assistant,
            vec![Block::tool_use("t", "grep", json!({}))],
        ),
        user_results_with("t", cut_before),
    ];
    let mut budget = BudgetPolicy::session_profile();
    let report = history::recover(
        RecoveryLevel::AggressiveBudget,
        &mut messages,
        &mut budget,
        &RecoveryPolicy::default(),
    );
    assert_eq!(report.texts_cut, 1);
    let text = result_text(&messages[2]);
    assert!(text.chars().count() <= 10_000);
    let marker = toolsmith::trim::find_marker(&text).expect("a marker");
    assert!(
        matches!(&marker.full, toolsmith::trim::MarkedFull::Stored { id: named, .. } if named == id),
        "{marker:?}"
    );
}

#[test]
fn an_error_in_an_old_build_log_outlives_its_passing_lines() {
    // A real `cargo test` run (tests/corpus) whose failing test sits in the middle.
    let log = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/cargo-test.out"
    ))
    .unwrap();
    let mut messages = vec![
        Message::user("run the tests"),
        Message::from_blocks(
            Role::Assistant,
            vec![Block::tool_use(
                "t",
                "run_command",
                json!({ "command": "cargo test --no-fail-fast" }),
            )],
        ),
        user_results_with("t", log.clone()),
    ];
    let age = |messages: &mut Vec<Message>, turns: usize| {
        for _ in 0..turns {
            messages.push(Message::assistant("next"));
            messages.push(Message::user("ok"));
        }
    };
    age(&mut messages, 2);
    history::microcompact(&mut messages, &CompactPolicy::default());
    let truncated = result_text(&messages[2]);
    assert!(truncated.chars().count() < log.chars().count() / 5);
    for must in ["test tests::broken ... FAILED", "the total of the order"] {
        assert!(truncated.contains(must), "{must} is gone:\n{truncated}");
    }
    age(&mut messages, 2);
    history::microcompact(&mut messages, &CompactPolicy::default());
    let summary = result_text(&messages[2]);
    assert!(
        summary.starts_with("[Old tool result cleared — 1,258 lines, 35K chars, build log, "),
        "{summary}"
    );
    assert!(summary.ends_with(" errors]"), "{summary}");
}

#[test]
fn content_types_are_detected() {
    let cases = [
        ("{\"a\": 1}", ContentKind::Json),
        ("[1, 2]", ContentKind::Json),
        ("package main\n\nfunc main() {}", ContentKind::Go),
        ("import os\n\ndef main():\n    pass", ContentKind::Python),
        ("function f() { return 1; }", ContentKind::JavaScript),
        (
            "export const f = (x: number): string => `${x}`;\ninterface A {}",
            ContentKind::TypeScript,
        ),
        ("use std::io;\n\npub fn main() {}", ContentKind::Rust),
        ("diff --git a/x b/x\n--- a/x\n+++ b/x", ContentKind::Diff),
        ("commit 1a2b3c\nAuthor: A", ContentKind::GitLog),
        (
            "     1\tpackage main\n     2\tfunc main() {}",
            ContentKind::Go,
        ),
        // Through a file's gutters: the first line with content decides.
        (
            "     1\t{\n     2\t  \"a\": 1\n     3\t}",
            ContentKind::Json,
        ),
        (
            "     1\t\n     2\t   \n     3\tdiff --git a/x b/x",
            ContentKind::Diff,
        ),
        ("\n\n   commit 1a2b3c\nAuthor: A", ContentKind::GitLog),
        ("     1\tjust\n     2\tsome words", ContentKind::Text),
        ("just some words", ContentKind::Text),
    ];
    for (text, kind) in cases {
        assert_eq!(history::detect(text), kind, "{text:?}");
    }
}

#[test]
fn provider_overflow_errors_are_recognised() {
    let overflows = [
        (
            Some(400),
            "prompt is too long: 215563 tokens > 200000 maximum",
        ),
        (
            Some(400),
            "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again",
        ),
        (
            Some(400),
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
        ),
        (
            Some(400),
            "{\"error\": {\"code\": \"context_length_exceeded\"}}",
        ),
        (
            Some(400),
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        ),
        (
            Some(400),
            "ValidationException: Input is too long for requested model.",
        ),
        (
            Some(400),
            "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
        ),
        (Some(500), "the input length exceeds the context length"),
        (
            Some(400),
            "the request exceeds the available context size, try increasing it",
        ),
        (
            Some(400),
            "The decoder prompt (length 9000) is longer than the maximum model length of 8192.",
        ),
        (None, "context length exceeded"),
        // Wordings reported in public issues of agents and SDKs.
        (
            Some(400),
            "This model's maximum prompt length is 131072 but the request contains 136973 tokens.",
        ),
        (
            Some(400),
            "too many tokens: total number of tokens (prompt and prediction) cannot exceed 2048 - received 6354",
        ),
        (
            Some(422),
            "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 8000 `inputs` tokens and 1000 `max_new_tokens`",
        ),
        (Some(500), "Context size has been exceeded."),
        (
            Some(400),
            "Trying to keep the first 15028 tokens when context the overflows. However, the model is loaded with context length of only 7424 tokens, which is not enough. n_keep (15028) >= n_ctx (7424)",
        ),
        (
            Some(400),
            "prompt token count of 93854 exceeds the limit of 90000",
        ),
        (
            Some(400),
            "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 204800]",
        ),
        (
            Some(413),
            "{\"error\":{\"message\":\"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.\"}}",
        ),
        (
            Some(500),
            "prompt too long; exceeded max context length by 1337 tokens",
        ),
    ];
    for (status, message) in overflows {
        assert_eq!(
            history::classify_provider_error(status, message),
            ProviderErrorKind::ContextOverflow,
            "{message}"
        );
        assert!(history::is_context_overflow(status, message), "{message}");
    }
    let output_limits = [
        (
            Some(400),
            "max_tokens: 128000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-20250514",
            64_000,
        ),
        (
            Some(400),
            "max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000.",
            16_384,
        ),
    ];
    for (status, message, limit) in output_limits {
        assert_eq!(
            history::classify_provider_error(status, message),
            ProviderErrorKind::OutputLimit { limit: Some(limit) },
            "{message}"
        );
        assert!(!history::is_context_overflow(status, message), "{message}");
    }
    let others = [
        (
            Some(429),
            "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000",
        ),
        (
            Some(400),
            "rate_limit_error: This request would exceed your organization's rate limit of 40,000 input tokens per minute",
        ),
        (Some(500), "Internal server error"),
        (
            Some(400),
            "messages.1.content.0.tool_use.input: Field required",
        ),
        // A proxy's page, not the model's answer.
        (
            Some(413),
            "<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx</center></body></html>",
        ),
        // Groq answers a per-minute limit with 413.
        (
            Some(413),
            "Request too large for model `llama-3.3-70b-versatile` in organization `org_x` service tier `on_demand` on tokens per minute (TPM): Limit 12000, Requested 15000, please reduce your message size and try again.",
        ),
    ];
    for (status, message) in others {
        assert!(!history::is_context_overflow(status, message), "{message}");
    }
}

fn long_conversation() -> Vec<Message> {
    let mut messages = vec![Message::user("start")];
    for t in 0..12 {
        let id = format!("t{t}");
        messages.push(Message::from_blocks(
            Role::Assistant,
            vec![
                Block::text("a".repeat(7_000)),
                Block::tool_use(&id, "grep", json!({})),
            ],
        ));
        messages.push(user_results_with(&id, "r".repeat(30_000)));
    }
    messages
}

#[test]
fn recovery_level_1_halves_budgets_and_cuts_long_texts() {
    let mut messages = long_conversation();
    let mut budget = BudgetPolicy::session_profile();
    let report = history::recover(
        RecoveryLevel::AggressiveBudget,
        &mut messages,
        &mut budget,
        &RecoveryPolicy::default(),
    );
    assert_eq!(budget.per_result_max_chars, Some(10_000));
    assert_eq!(budget.turn_budget_chars, Some(100_000));
    assert_eq!(report.texts_cut, 24);
    assert_eq!(report.messages_dropped, 0);
    assert!(history::validate(&messages).is_empty());
    for message in &messages[1..] {
        for block in message.blocks() {
            match block {
                Block::Text(text) => assert!(text.text.chars().count() <= 5_000),
                Block::ToolResult(result) => assert!(result.chars() <= 10_000),
                _ => {}
            }
        }
    }
}

#[test]
fn recovery_levels_2_and_3_keep_the_last_messages_paired() {
    let mut messages = long_conversation();
    let mut budget = BudgetPolicy::default();
    let policy = RecoveryPolicy::default();
    let report = history::recover(
        RecoveryLevel::Emergency,
        &mut messages,
        &mut budget,
        &policy,
    );
    assert!(history::validate(&messages).is_empty());
    // The last 10 messages, opened by a note that earlier ones were dropped.
    assert_eq!(report.messages_dropped, 15);
    assert_eq!(messages.len(), 11);
    assert!(matches!(&messages[0].content, Content::Text(t) if t == history::DROPPED_NOTE));
    assert!(report.pairing.is_empty(), "no pair was split");

    let chars = |messages: &[Message]| messages.iter().map(Message::chars).sum::<usize>();
    let before = chars(&messages);
    let report = history::recover(RecoveryLevel::Nuclear, &mut messages, &mut budget, &policy);
    assert!(history::validate(&messages).is_empty());
    // What it cleared is stated, for an agent to log or show.
    assert!(report.chars_before >= before && report.chars_after < report.chars_before);
    assert!(
        report.to_string().contains(&format!(
            "chars down to {}",
            toolsmith::figures::grouped(report.chars_after)
        )),
        "{report}"
    );
    assert_eq!(messages.len(), 5);
    assert_eq!(messages[0].role, Role::User);
    assert!(report.texts_cut > 0);
    assert!(messages.iter().all(|m| m.chars() <= 2 * 4_000 + 200));
    assert_eq!(RecoveryLevel::Nuclear.next(), None);
    assert!(report.to_string().starts_with("recovery level 3:"));
}

#[test]
fn max_tokens_escalates_twice_then_keeps_the_partial_reply() {
    let mut escalation = MaxTokensEscalation::new(64_000);
    let Escalation::Retry {
        max_tokens,
        continuation,
    } = escalation.on_max_tokens(4_096)
    else {
        panic!("the first cut-off escalates");
    };
    assert_eq!(max_tokens, 8_192);
    assert_eq!(continuation.role, Role::User);
    assert!(
        matches!(&continuation.content, Content::Text(t) if t.contains("Continue exactly where it stopped"))
    );
    assert!(matches!(
        escalation.on_max_tokens(8_192),
        Escalation::Retry {
            max_tokens: 16_384,
            ..
        }
    ));
    assert_eq!(escalation.on_max_tokens(16_384), Escalation::KeepPartial);
    let mut capped = MaxTokensEscalation::new(10_000).with_max_escalations(5);
    assert!(matches!(
        capped.on_max_tokens(8_000),
        Escalation::Retry {
            max_tokens: 10_000,
            ..
        }
    ));
    assert_eq!(capped.on_max_tokens(10_000), Escalation::KeepPartial);
}

#[test]
fn usage_counts_a_quarter_of_the_chars() {
    let messages = conversation_with_results(&[4_000]);
    let usage = history::usage(&messages, &toolsmith::tokens::CharsPerToken::default());
    assert!(usage.tool_result_tokens >= 1_000 && usage.tool_result_tokens < 1_020);
    assert!(usage.tokens > usage.tool_result_tokens);
    assert!((usage.fraction_of(200_000) - usage.tokens as f64 / 200_000.0).abs() < f64::EPSILON);
    assert!(matches!(
        messages[2].tool_results().next().unwrap().content,
        Some(ResultContent::Text(_))
    ));
}

/// A conversation of `n` calls of `tool`, each result `chars` chars, the third one's naming an
/// artifact in its marker.
fn calls_with_results(n: usize, tool: &str, chars: usize) -> Vec<Message> {
    let mut messages = vec![Message::user("go")];
    for i in 0..n {
        let id = format!("{tool}_{i}");
        messages.push(Message::from_blocks(
            Role::Assistant,
            vec![serde_json::from_value(json!({ "type": "tool_use", "id": id, "name": tool, "input": { "path": format!("file{i}.rs") } })).unwrap()],
        ));
        let mut text = "x".repeat(chars);
        if i == 2 {
            text.push_str("\n[toolsmith: output truncated, kept 10 of 90,000 chars (lines 1-1 of 900); full output: artifact 0123456789abcdef0123456789abcdef, read it with read_artifact]");
        }
        messages.push(user_results_with(&id, text));
    }
    messages
}

#[test]
fn clearing_by_tokens_keeps_the_recent_calls_and_names_the_artifact() {
    use toolsmith::history::{CLEARED_PREFIX, ClearPolicy};
    use toolsmith::tokens::CharsPerToken;
    let counter = CharsPerToken::default();
    let mut messages = calls_with_results(8, "read_file", 20_000);
    messages.extend(
        calls_with_results(2, "run_command", 20_000)
            .into_iter()
            .skip(1),
    );
    let before = messages.clone();

    // Under the trigger: nothing.
    let quiet = ClearPolicy::default().with_trigger_tokens(1_000_000);
    let report = history::clear_tool_uses(&mut messages, &quiet, &counter);
    assert!(report.is_empty() && report.skipped.is_some(), "{report}");
    assert_eq!(messages, before);

    // Not worth it: nothing.
    let stingy = ClearPolicy::default()
        .with_trigger_tokens(10_000)
        .with_clear_at_least_tokens(1_000_000);
    assert!(history::clear_tool_uses(&mut messages, &stingy, &counter).is_empty());

    let policy = ClearPolicy::default()
        .with_trigger_tokens(10_000)
        .with_keep_tool_uses(3)
        .excluding(["run_command"])
        .with_clear_tool_inputs(true);
    let report = history::clear_tool_uses(&mut messages, &policy, &counter);
    // Ten calls, the last three kept, run_command's kept: read_file_0 … read_file_6 cleared.
    let want: Vec<String> = (0..7).map(|i| format!("read_file_{i}")).collect();
    assert_eq!(report.cleared, want, "{report}");
    assert_eq!(report.inputs_cleared, 7);
    assert!(report.tokens_after * 3 < report.tokens_before, "{report}");
    println!("{report}");
    assert!(history::validate(&messages).is_empty());
    assert!(independent_violations(&messages).is_empty());
    let third = result_text(&messages[6]);
    assert!(third.starts_with(CLEARED_PREFIX), "{third}");
    assert!(
        third.contains("artifact 0123456789abcdef0123456789abcdef, read it with read_artifact"),
        "{third}"
    );
    // The kept ones are whole.
    assert_eq!(result_text(&messages[16]).len(), 20_000);
    // Again: nothing more.
    let again = messages.clone();
    assert!(history::clear_tool_uses(&mut messages, &policy, &counter).is_empty());
    assert_eq!(messages, again);
}
