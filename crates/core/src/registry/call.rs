//! A call as the model made it ([`ToolCall`], its [`Arguments`]) and why the model's response
//! stopped ([`StopReason`]).

use serde_json::Value;

/// One tool call, as the model made it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The call's id (`tool_use` id); the result carries it back.
    pub id: String,
    /// The tool the model named.
    pub name: String,
    /// The arguments.
    pub arguments: Arguments,
}

/// The arguments of a [`ToolCall`]: parsed JSON, or raw text still to parse (OpenAI sends a
/// string; a model can get it wrong, and that must become an error result, not a panic).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Arguments {
    /// Parsed JSON.
    Json(Value),
    /// Text that should hold JSON.
    Raw(String),
}

impl ToolCall {
    /// A call with JSON arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: Arguments::Json(arguments),
        }
    }

    /// A call whose arguments are JSON text, parsed when the call runs.
    pub fn from_raw(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: Arguments::Raw(arguments.into()),
        }
    }
}

/// Why a model's response ended, as far as its tool calls are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The model stopped to have its tool calls run (`tool_use`, `tool_calls`).
    ToolUse,
    /// The model finished (`end_turn`, `stop`).
    EndTurn,
    /// The response hit its output limit (`max_tokens`, `length`): its last tool call may hold
    /// arguments cut short.
    OutputLimit,
    /// Any other reason (`stop_sequence`, `pause_turn`, `content_filter`, …).
    Other,
}

impl StopReason {
    /// Reads a provider's stop reason: Anthropic's `stop_reason`, OpenAI's `finish_reason`,
    /// Gemini's `finishReason`.
    ///
    /// ```
    /// use toolsmith::registry::StopReason;
    ///
    /// assert_eq!(StopReason::from_provider("max_tokens"), StopReason::OutputLimit);
    /// assert_eq!(StopReason::from_provider("length"), StopReason::OutputLimit);
    /// assert_eq!(StopReason::from_provider("tool_calls"), StopReason::ToolUse);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_provider(reason: &str) -> Self {
        match reason {
            "max_tokens" | "length" | "MAX_TOKENS" | "model_context_window_exceeded" => {
                StopReason::OutputLimit
            }
            "tool_use" | "tool_calls" | "function_call" => StopReason::ToolUse,
            "end_turn" | "stop" | "STOP" => StopReason::EndTurn,
            _ => StopReason::Other,
        }
    }
}

impl From<&crate::history::ToolUseBlock> for ToolCall {
    /// The call a model's `tool_use` block asks for.
    fn from(block: &crate::history::ToolUseBlock) -> Self {
        ToolCall::new(block.id.clone(), block.name.clone(), block.input.clone())
    }
}
