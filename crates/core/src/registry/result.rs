//! What the model sees of one call: [`ToolResult`], and the figures behind it, [`ResultMeta`].

use std::time::Duration;

use crate::artifacts::ArtifactId;
use crate::tool::ErrorKind;
use crate::trim::Cut;

/// One tool result: exactly what the model sees, plus the figures behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolResult {
    /// The id of the tool call this answers (`tool_use_id`).
    pub call_id: String,
    /// The name of the tool the model called (possibly unknown to the registry).
    pub tool: String,
    /// The text the model sees: the output, trimmed with a marker if it exceeded its allowance.
    pub content: String,
    /// How the content was budgeted.
    pub meta: ResultMeta,
}

impl ToolResult {
    /// Whether this is an error result: [`meta.error_kind`](ResultMeta::error_kind) says which.
    pub fn is_error(&self) -> bool {
        self.meta.error_kind.is_some()
    }

    /// The chars (Unicode scalar values) of the content.
    pub fn content_chars(&self) -> usize {
        self.content.chars().count()
    }

    /// The `tool_result` block that answers the call in the conversation.
    pub fn to_block(&self) -> crate::history::Block {
        crate::history::Block::tool_result(&self.call_id, &self.content, self.is_error())
    }
}

/// The figures behind one [`ToolResult`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ResultMeta {
    /// The call's final allowance in chars: the content never has more.
    pub allowance: usize,
    /// The allowance the tool saw while running (`ToolContext::allowance`).
    pub initial_allowance: usize,
    /// Chars of the full output before trimming.
    pub original_chars: usize,
    /// Lines of the full output before trimming.
    pub original_lines: usize,
    /// What the trim kept (line spans, byte lengths), when the output was trimmed.
    pub cut: Option<Cut>,
    /// The artifact holding the full output, when it was trimmed and stored.
    pub artifact: Option<ArtifactId>,
    /// Why the full output could not be stored, when storing failed.
    pub artifact_error: Option<String>,
    /// The error's kind when this is an error result; `None` for a success.
    pub error_kind: Option<ErrorKind>,
    /// How long the call ran (zero for calls refused before running).
    pub duration: Duration,
    /// What the tool stated about its call beside its content
    /// ([`ToolOutput::with_meta`](crate::ToolOutput::with_meta)): run_command's
    /// `toolsmith/confinement`, an MCP server's `_meta`. Empty when it stated nothing.
    pub tool_meta: serde_json::Map<String, serde_json::Value>,
}

impl ResultMeta {
    /// Whether the registry trimmed the output: [`cut`](Self::cut) says what it kept.
    pub fn trimmed(&self) -> bool {
        self.cut.is_some()
    }
}
