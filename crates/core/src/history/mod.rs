//! Conversation history: the message model, pairing repair, microcompaction, context-overflow
//! recovery and `max_tokens` escalation.
//!
//! Provider-neutral, in the Anthropic Messages shape (serde round-trips Anthropic JSON exactly),
//! with conversion to and from OpenAI chat messages. Nothing here knows about the registry.
//!
//! ```
//! use serde_json::json;
//! use toolsmith::history::{self, Block, Message, Role};
//!
//! // An interrupted turn: the call never got its result.
//! let mut messages = vec![
//!     Message::user("What is in Cargo.toml?"),
//!     Message::from_blocks(Role::Assistant, vec![
//!         Block::tool_use("toolu_1", "read_file", json!({ "path": "Cargo.toml" })),
//!     ]),
//!     Message::user("Never mind."),
//! ];
//! assert_eq!(history::validate(&messages).len(), 1);
//! let report = history::repair(&mut messages);
//! assert_eq!(report.synthesized, ["toolu_1"]);
//! assert!(history::validate(&messages).is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod clear;
mod escalation;
mod extra;
mod gemini;
mod message;
mod microcompact;
mod openai;
mod overflow;
mod pairing;
mod responses;
mod shrink;

pub use clear::{CLEARED_PREFIX, ClearPolicy, ClearReport, clear_tool_uses};
pub use escalation::{CONTINUATION_TEXT, Escalation, MaxTokensEscalation};
pub use gemini::{from_gemini, from_gemini_owned, into_gemini, to_gemini};
pub use message::{
    Block, Content, Extra, Message, ResultContent, Role, TextBlock, ToolResultBlock, ToolUseBlock,
};
pub use microcompact::{
    CompactPolicy, CompactReport, ContentKind, detect, detect_for, microcompact,
};
pub use openai::{ConversionError, from_openai, to_openai};
pub use overflow::{
    DROPPED_NOTE, ProviderErrorKind, RecoveryLevel, RecoveryPolicy, RecoveryReport,
    classify_provider_error, is_context_overflow, recover,
};
pub use pairing::{
    MISSING_RESULT_TEXT, RepairReport, Violation, is_valid, is_valid_tool_use_id, repair, validate,
};
pub use responses::{from_responses, from_responses_owned, into_responses, to_responses};

use crate::tokens::TokenCounter;

/// How much of the context window a history takes, by a [`TokenCounter`]'s estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Usage {
    /// Estimated tokens of all messages.
    pub tokens: usize,
    /// Of which, tool results.
    pub tool_result_tokens: usize,
}

impl Usage {
    /// The share of a context window of `window` tokens in use (0 for a window of 0).
    pub fn fraction_of(&self, window: usize) -> f64 {
        if window == 0 {
            0.0
        } else {
            self.tokens as f64 / window as f64
        }
    }
}

/// Estimates the tokens of `history` (text, tool inputs and results; images and other blocks are
/// not counted). With the fraction of the window it gives, an embedder can run
/// [`microcompact`] when the context fills, not only as turns pass.
pub fn usage(history: &[Message], counter: &dyn TokenCounter) -> Usage {
    let mut usage = Usage::default();
    for message in history {
        match &message.content {
            Content::Text(text) => usage.tokens += counter.count(text),
            Content::Blocks(blocks) => {
                for block in blocks {
                    match block {
                        Block::Text(text) => usage.tokens += counter.count(&text.text),
                        Block::ToolUse(call) => {
                            usage.tokens +=
                                counter.count(&call.name) + counter.count(&call.input.to_string());
                        }
                        Block::ToolResult(result) => {
                            let tokens = counter.count(&result.text());
                            usage.tokens += tokens;
                            usage.tool_result_tokens += tokens;
                        }
                        Block::Other(_) => {}
                    }
                }
            }
        }
    }
    usage
}
