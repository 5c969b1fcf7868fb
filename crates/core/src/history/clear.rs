//! Context editing by tokens: clearing old tool results once the context passes a trigger.
//!
//! The semantics of Anthropic's server-side `clear_tool_uses` edit and LangChain's
//! `ClearToolUsesEdit`, on the client, for any provider: when the history's input tokens pass
//! `trigger_tokens`, every tool result but those of the last `keep_tool_uses` calls is replaced
//! by a placeholder — one that names the artifact the result's marker named, so the whole
//! output stays reachable — unless that would free fewer than `clear_at_least_tokens` (so the
//! provider's prompt cache is broken rarely, and on purpose). Results of excluded tools are
//! kept; the calls' inputs can be cleared too. A cleared result is recognised, so clearing again
//! changes nothing.

use std::fmt;

use serde_json::Value;

use super::message::{Block, Content, Message, ResultContent, Role};
use super::shrink::earlier_artifact;
use crate::artifacts::READ_ARTIFACT;
use crate::figures::grouped;
use crate::tokens::TokenCounter;

/// The start of a cleared result's placeholder.
pub const CLEARED_PREFIX: &str = "[Tool result cleared to save context";

/// When and what [`clear_tool_uses`] clears. By default: from 100,000 input tokens on, every
/// result but the last 3 calls', whatever it frees, no tool excluded, inputs kept.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClearPolicy {
    /// Clear only when the history's tokens (by the counter given) exceed this.
    pub trigger_tokens: usize,
    /// The results of this many most recent tool calls are kept.
    pub keep_tool_uses: usize,
    /// Once triggered, clear only if that frees at least this many tokens.
    pub clear_at_least_tokens: usize,
    /// Tools whose results are never cleared.
    pub exclude_tools: Vec<String>,
    /// Whether the inputs of the calls whose results are cleared are cleared too.
    pub clear_tool_inputs: bool,
}

impl Default for ClearPolicy {
    fn default() -> Self {
        ClearPolicy {
            trigger_tokens: 100_000,
            keep_tool_uses: 3,
            clear_at_least_tokens: 0,
            exclude_tools: Vec::new(),
            clear_tool_inputs: false,
        }
    }
}

impl ClearPolicy {
    /// Clears from `tokens` on.
    #[must_use]
    pub fn with_trigger_tokens(mut self, tokens: usize) -> Self {
        self.trigger_tokens = tokens;
        self
    }

    /// Keeps the results of the last `calls` tool calls.
    #[must_use]
    pub fn with_keep_tool_uses(mut self, calls: usize) -> Self {
        self.keep_tool_uses = calls;
        self
    }

    /// Clears only when it frees at least `tokens`.
    #[must_use]
    pub fn with_clear_at_least_tokens(mut self, tokens: usize) -> Self {
        self.clear_at_least_tokens = tokens;
        self
    }

    /// Never clears these tools' results.
    #[must_use]
    pub fn excluding<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.exclude_tools.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Also clears the inputs of the calls whose results are cleared.
    #[must_use]
    pub fn with_clear_tool_inputs(mut self, clear: bool) -> Self {
        self.clear_tool_inputs = clear;
        self
    }
}

/// What [`clear_tool_uses`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClearReport {
    /// The ids of the calls whose results were cleared, oldest first.
    pub cleared: Vec<String>,
    /// How many calls' inputs were cleared.
    pub inputs_cleared: usize,
    /// The history's tokens before.
    pub tokens_before: usize,
    /// The history's tokens after.
    pub tokens_after: usize,
    /// Why nothing was cleared, when nothing was.
    pub skipped: Option<String>,
}

impl ClearReport {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.cleared.is_empty() && self.inputs_cleared == 0
    }
}

impl fmt::Display for ClearReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.skipped {
            Some(why) => write!(f, "nothing cleared: {why}"),
            None => write!(
                f,
                "{} results cleared ({} inputs): {} tokens down to {}",
                self.cleared.len(),
                self.inputs_cleared,
                grouped(self.tokens_before),
                grouped(self.tokens_after)
            ),
        }
    }
}

/// Clears old tool results of `history` as `policy` says, counting tokens with `counter`.
///
/// ```
/// use toolsmith::history::{self, ClearPolicy, Message, Role, Block};
/// use toolsmith::tokens::CharsPerToken;
///
/// let mut history = Vec::new();
/// for i in 0..5 {
///     history.push(Message::from_blocks(Role::Assistant, vec![serde_json::from_value::<Block>(
///         serde_json::json!({ "type": "tool_use", "id": format!("t{i}"), "name": "read_file", "input": {} }),
///     )?]));
///     history.push(Message::from_blocks(Role::User, vec![serde_json::from_value::<Block>(
///         serde_json::json!({ "type": "tool_result", "tool_use_id": format!("t{i}"), "content": "x".repeat(40_000) }),
///     )?]));
/// }
/// let policy = ClearPolicy::default().with_trigger_tokens(30_000).with_keep_tool_uses(2);
/// let report = history::clear_tool_uses(&mut history, &policy, &CharsPerToken::default());
/// assert_eq!(report.cleared, ["t0", "t1", "t2"]);
/// assert!(report.tokens_after < 30_000);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn clear_tool_uses(
    history: &mut [Message],
    policy: &ClearPolicy,
    counter: &dyn TokenCounter,
) -> ClearReport {
    let tokens_before = super::usage(history, counter).tokens;
    let mut report = ClearReport {
        tokens_before,
        tokens_after: tokens_before,
        ..ClearReport::default()
    };
    if tokens_before <= policy.trigger_tokens {
        report.skipped = Some(format!(
            "{} tokens, under the trigger of {}",
            grouped(tokens_before),
            grouped(policy.trigger_tokens)
        ));
        return report;
    }
    // Every call, oldest first, with its tool.
    let calls: Vec<(String, String)> = history
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(Message::tool_uses)
        .map(|call| (call.id.clone(), call.name.clone()))
        .collect();
    let kept_from = calls.len().saturating_sub(policy.keep_tool_uses);
    let candidates: Vec<&(String, String)> = calls[..kept_from]
        .iter()
        .filter(|(_, tool)| !policy.exclude_tools.contains(tool))
        .collect();
    // What clearing them frees: their results' tokens (and inputs'), less the placeholders'.
    let mut freed = 0usize;
    for message in history.iter() {
        for block in message.blocks() {
            match block {
                Block::ToolResult(result)
                    if candidates.iter().any(|(id, _)| *id == result.tool_use_id) =>
                {
                    let text = result.text();
                    if !text.starts_with(CLEARED_PREFIX) {
                        let placeholder = placeholder(&text, counter.count(&text));
                        freed += counter
                            .count(&text)
                            .saturating_sub(counter.count(&placeholder));
                    }
                }
                Block::ToolUse(call)
                    if policy.clear_tool_inputs
                        && candidates.iter().any(|(id, _)| *id == call.id)
                        && !is_empty_input(&call.input) =>
                {
                    freed += counter.count(&call.input.to_string()).saturating_sub(1);
                }
                _ => {}
            }
        }
    }
    if freed == 0 || freed < policy.clear_at_least_tokens {
        report.skipped = Some(format!(
            "clearing would free {} tokens, under the {} asked",
            grouped(freed),
            grouped(policy.clear_at_least_tokens.max(1))
        ));
        return report;
    }
    for message in history.iter_mut() {
        let Content::Blocks(blocks) = &mut message.content else {
            continue;
        };
        for block in blocks.iter_mut() {
            match block {
                Block::ToolResult(result)
                    if candidates.iter().any(|(id, _)| *id == result.tool_use_id) =>
                {
                    let text = result.text().into_owned();
                    if text.starts_with(CLEARED_PREFIX) {
                        continue;
                    }
                    let tokens = counter.count(&text);
                    result.content = Some(ResultContent::Text(placeholder(&text, tokens)));
                    report.cleared.push(result.tool_use_id.clone());
                }
                Block::ToolUse(call)
                    if policy.clear_tool_inputs
                        && candidates.iter().any(|(id, _)| *id == call.id)
                        && !is_empty_input(&call.input) =>
                {
                    call.input = Value::Object(serde_json::Map::new());
                    report.inputs_cleared += 1;
                }
                _ => {}
            }
        }
    }
    // Oldest first, as the calls were made.
    report
        .cleared
        .sort_by_key(|id| calls.iter().position(|(call, _)| call == id));
    report.tokens_after = super::usage(history, counter).tokens;
    report
}

fn is_empty_input(input: &Value) -> bool {
    input.as_object().is_some_and(serde_json::Map::is_empty)
}

/// The text a cleared result becomes: its size, and the artifact its marker named.
fn placeholder(text: &str, tokens: usize) -> String {
    match earlier_artifact(text) {
        Some(id) => format!(
            "{CLEARED_PREFIX}: {} tokens; the whole output is artifact {id}, read it with \
             {READ_ARTIFACT}]",
            grouped(tokens)
        ),
        None => format!("{CLEARED_PREFIX}: {} tokens]", grouped(tokens)),
    }
}
