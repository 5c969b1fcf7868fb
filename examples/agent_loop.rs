//! An agent loop with toolsmith: a registry of the standard tools, one turn after another, and
//! the history kept valid and small as it grows.
//!
//! SCRIPTED: no model is called. `ScriptedModel` below replays a fixed list of replies — tool
//! calls, an interrupted turn, a context-overflow error, a tool call and a reply cut off at
//! `max_tokens` — so that every part of the loop runs, deterministically and offline. Replace it
//! with a real client.
//!
//! Run: `cargo run --example agent_loop`

use serde_json::json;
use toolsmith::history::{
    self, Block, CompactPolicy, Escalation, MaxTokensEscalation, Message, RecoveryLevel,
    RecoveryPolicy, Role,
};
use toolsmith::registry::StopReason;
use toolsmith::{DirStore, Registry, ToolCall};
use toolsmith_std::Sandbox;

/// What a provider answers.
enum Reply {
    /// An assistant message (tool calls, or the final answer).
    Message(Message),
    /// A provider error.
    Error { status: u16, message: String },
    /// A reply cut off by `max_tokens`.
    CutOff(Message),
}

/// SCRIPTED: a fixed sequence of replies standing in for a model.
struct ScriptedModel {
    step: usize,
}

fn calls(calls: &[(&str, &str, serde_json::Value)]) -> Message {
    Message::from_blocks(
        Role::Assistant,
        calls
            .iter()
            .map(|(id, name, input)| Block::tool_use(*id, *name, input.clone()))
            .collect(),
    )
}

impl ScriptedModel {
    fn reply(&mut self, max_tokens: u32) -> Reply {
        self.step += 1;
        match self.step {
            1 => Reply::Message(calls(&[
                (
                    "toolu_01",
                    "read_file",
                    json!({ "path": "Cargo.toml", "limit": 20 }),
                ),
                (
                    "toolu_02",
                    "grep",
                    json!({ "pattern": "pub fn ", "path": "crates", "max_results": 600 }),
                ),
                (
                    "toolu_03",
                    "list_directory",
                    json!({ "path": "crates", "depth": 2 }),
                ),
            ])),
            2 => Reply::Message(calls(&[
                (
                    "toolu_04",
                    "run_command",
                    json!({ "command": "find crates -name '*.rs' | xargs wc -l | sort -n" }),
                ),
                ("toolu_05", "glob", json!({ "pattern": "**/*.md" })),
            ])),
            // The agent will crash before running this one: its result never arrives.
            3 => Reply::Message(calls(&[(
                "toolu_06",
                "run_command",
                json!({ "command": "sleep 1" }),
            )])),
            4 => Reply::Message(calls(&[(
                "toolu_07",
                "read_file",
                json!({ "path": "README.md", "limit": 60 }),
            )])),
            5 => Reply::Message(calls(&[(
                "toolu_08",
                "grep",
                json!({ "pattern": "fn ", "path": "crates/core", "max_results": 2000 }),
            )])),
            6 => Reply::Error {
                status: 400,
                message: "prompt is too long: 215000 tokens > 200000 maximum".to_owned(),
            },
            7 => Reply::Message(calls(&[(
                "toolu_09",
                "read_file",
                json!({ "path": "docs/budget.md", "limit": 30 }),
            )])),
            // A reply cut off while writing a tool call: its arguments may be incomplete.
            8 => Reply::CutOff(Message::from_blocks(
                Role::Assistant,
                vec![
                    Block::text("I'll write the summary to a file."),
                    Block::tool_use(
                        "toolu_10",
                        "write_file",
                        json!({ "path": "SUMMARY.md", "content": "toolsmith keeps every tool" }),
                    ),
                ],
            )),
            9 => Reply::Message(calls(&[(
                "toolu_11",
                "read_file",
                json!({ "path": "README.md", "limit": 5 }),
            )])),
            10 if max_tokens < 8_192 => Reply::CutOff(Message::assistant(
                "toolsmith keeps every tool result within",
            )),
            _ => Reply::Message(Message::assistant(
                "toolsmith keeps every tool result within its allowance and the history paired.",
            )),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let artifacts = DirStore::new_session()?;
    let sandbox = Sandbox::new(env!("CARGO_MANIFEST_DIR"))?;
    let registry = toolsmith_std::register(Registry::builder())
        .state(sandbox)
        .artifacts(artifacts)
        .build()?;
    // Results of write and exec tools are never compacted: their errors matter.
    let preserved = registry
        .tools()
        .filter(|tool| tool.spec().limits.preserve)
        .map(|tool| tool.spec().name.clone());
    let compact = CompactPolicy::default().preserving(preserved);

    let mut model = ScriptedModel { step: 0 };
    let mut messages = vec![Message::user(
        "What does toolsmith do? Look around the repository.",
    )];
    let mut turn = registry.turn();
    let mut escalation = MaxTokensEscalation::new(32_000);
    let mut max_tokens = 4_096;
    let mut crashed_once = false;

    for _ in 0..20 {
        // Before every request: a valid pairing, and old results compacted.
        let repaired = history::repair(&mut messages);
        if !repaired.is_empty() {
            println!("  repair: {repaired}");
        }
        let compacted = history::microcompact(&mut messages, &compact);
        if !compacted.is_empty() {
            println!("  microcompact: {compacted}");
        }
        let usage = history::usage(&messages, &toolsmith::tokens::CharsPerToken::default());
        println!(
            "request {}: {} messages, ~{} tokens ({:.1}% of a 200k window)",
            model.step + 1,
            messages.len(),
            usage.tokens,
            100.0 * usage.fraction_of(200_000)
        );

        match model.reply(max_tokens) {
            Reply::Error { status, message } => {
                match history::classify_provider_error(Some(status), &message) {
                    // The context overflowed: compact, and retry.
                    history::ProviderErrorKind::ContextOverflow => {
                        let mut budget = turn.budget().clone();
                        let report = history::recover(
                            RecoveryLevel::AggressiveBudget,
                            &mut messages,
                            &mut budget,
                            &RecoveryPolicy::default(),
                        );
                        turn.set_budget(budget)?;
                        println!("  provider: {message}\n  {report}");
                        continue;
                    }
                    // The output asked for is over a limit: lower it once, the history as it
                    // was; anything else is not ours to fix.
                    verdict => match verdict.retry_max_tokens(u64::from(max_tokens), None) {
                        Some(lower) => {
                            max_tokens = u32::try_from(lower).unwrap_or(max_tokens);
                            println!("  provider: {message}\n  max_tokens lowered to {lower}");
                            continue;
                        }
                        None => return Err(message.into()),
                    },
                }
            }
            Reply::CutOff(partial) if partial.tool_uses().next().is_some() => {
                // A tool call cut off mid-arguments is never run: it is answered with an error
                // asking the model to split the work, and the loop goes on.
                let calls: Vec<ToolCall> = partial.tool_uses().map(ToolCall::from).collect();
                messages.push(partial);
                let results = turn
                    .execute_response(calls, StopReason::from_provider("max_tokens"))
                    .await;
                for result in &results {
                    println!(
                        "  {} {}: cut off by max_tokens, not run ({})",
                        result.call_id,
                        result.tool,
                        result
                            .meta
                            .error_kind
                            .map_or("ran", toolsmith::tool::ErrorKind::as_str)
                    );
                }
                messages.push(Message::from_blocks(
                    Role::User,
                    results.iter().map(|r| r.to_block()).collect(),
                ));
            }
            Reply::CutOff(partial) => match escalation.on_max_tokens(max_tokens) {
                Escalation::Retry {
                    max_tokens: more,
                    continuation,
                } => {
                    println!("  cut off at max_tokens {max_tokens}; asking again with {more}");
                    messages.push(partial);
                    messages.push(continuation);
                    max_tokens = more;
                }
                _ => {
                    println!("  cut off again; keeping the partial reply");
                    messages.push(partial);
                    break;
                }
            },
            Reply::Message(message) => {
                let calls: Vec<ToolCall> = message.tool_uses().map(ToolCall::from).collect();
                messages.push(message);
                if calls.is_empty() {
                    println!("  answer: {}", text_of(messages.last()));
                    break;
                }
                if calls.iter().any(|c| c.id == "toolu_06") && !crashed_once {
                    // SCRIPTED: the agent dies here; on restart the call has no result.
                    crashed_once = true;
                    println!("  (the agent crashed before running {} call)", calls.len());
                    messages.push(Message::user("Are you still there?"));
                    continue;
                }
                let results = turn.execute(calls).await;
                for result in &results {
                    println!(
                        "  {} {}: {} of {} chars{}",
                        result.call_id,
                        result.tool,
                        result.content_chars(),
                        result.meta.original_chars,
                        if result.meta.trimmed() {
                            " (trimmed, artifact kept)"
                        } else {
                            ""
                        }
                    );
                }
                messages.push(Message::from_blocks(
                    Role::User,
                    results.iter().map(|r| r.to_block()).collect(),
                ));
            }
        }
    }
    assert!(
        history::validate(&messages).is_empty(),
        "the history is valid at the end"
    );
    println!("done: {} messages, all tool calls answered", messages.len());
    Ok(())
}

fn text_of(message: Option<&Message>) -> String {
    match message.map(|m| &m.content) {
        Some(toolsmith::history::Content::Text(text)) => text.clone(),
        _ => String::new(),
    }
}
