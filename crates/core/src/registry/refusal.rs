//! The registry's own answers to a call: refusals before it runs (an unknown tool, a tripped
//! cap, a call cut off by the output limit, a denial) and the report of a panic. No tool can
//! return these; the result's [`ErrorKind`] says which it was.

use std::fmt;

use crate::tool::{ErrorKind, ToolError};

/// Why a call ended without its tool's own output or error.
#[derive(Debug)]
pub(super) enum Refusal {
    /// The model named a tool the registry does not have.
    UnknownTool {
        /// The name the model used.
        name: String,
        /// The names the registry knows, in registration order.
        known: Vec<String>,
    },
    /// The tool panicked (or its task was aborted).
    Panicked {
        /// What it said.
        message: String,
    },
    /// A per-turn call cap was reached.
    CapExceeded { cap: Cap, limit: usize },
    /// The response's last call, cut off by the output limit.
    CutOff,
    /// The approval policy denied the call.
    Denied {
        /// Why, as the model reads it.
        reason: String,
    },
}

/// The per-turn call caps a [`Turn`](super::Turn) enforces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Cap {
    /// `max_calls_per_turn`: calls of any tool in one turn.
    CallsPerTurn,
    /// `max_calls_per_tool`: calls of the one named tool in one turn.
    CallsPerTool(String),
}

impl fmt::Display for Cap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cap::CallsPerTurn => f.write_str("max_calls_per_turn"),
            Cap::CallsPerTool(tool) => write!(f, "max_calls_per_tool for `{tool}`"),
        }
    }
}

impl Refusal {
    fn kind(&self) -> ErrorKind {
        match self {
            Refusal::UnknownTool { .. } => ErrorKind::UnknownTool,
            Refusal::Panicked { .. } => ErrorKind::Panicked,
            Refusal::CapExceeded { .. } => ErrorKind::CapExceeded,
            Refusal::CutOff => ErrorKind::CutOff,
            Refusal::Denied { .. } => ErrorKind::Denied,
        }
    }

    fn model_text(&self) -> String {
        match self {
            Refusal::UnknownTool { name, known } => {
                if known.is_empty() {
                    format!("Error: unknown tool `{name}`; no tools are available.")
                } else {
                    format!(
                        "Error: unknown tool `{name}`. Available tools: {}.",
                        known.join(", ")
                    )
                }
            }
            Refusal::Panicked { message } => format!(
                "Error: the tool failed unexpectedly ({message}). The other calls were not \
                 affected; try a different request or another tool."
            ),
            Refusal::CapExceeded { cap, limit } => match cap {
                Cap::CallsPerTurn => format!(
                    "Error: this call was not run: {limit} tool calls were already made this \
                     turn (max_calls_per_turn). Work with the results you have, or answer the \
                     user."
                ),
                Cap::CallsPerTool(tool) => format!(
                    "Error: this call was not run: `{tool}` was already called {limit} times \
                     this turn (max_calls_per_tool). Use the results you have or another \
                     approach."
                ),
            },
            Refusal::CutOff => "Error: this call was not run: your response reached the \
                output token limit while writing it, so its arguments may be incomplete. Make \
                the call again with less in one call: split the work (for example, write a \
                large file in parts — a first write_file, then edit_file to add the rest)."
                .to_owned(),
            Refusal::Denied { reason } => format!(
                "Error: this call was not run: {reason}. Do not retry it as it is; ask the user, \
                 or do the task another way."
            ),
        }
    }
}

/// Why a call failed: its tool's error, or the registry's refusal.
#[derive(Debug)]
pub(super) enum Failure {
    Tool(ToolError),
    Registry(Refusal),
}

impl Failure {
    /// The kind the result states.
    pub(super) fn kind(&self) -> ErrorKind {
        match self {
            Failure::Tool(error) => error.kind(),
            Failure::Registry(refusal) => refusal.kind(),
        }
    }

    /// The text the model reads.
    pub(super) fn model_text(&self) -> String {
        match self {
            Failure::Tool(error) => error.model_text(),
            Failure::Registry(refusal) => refusal.model_text(),
        }
    }
}

impl From<ToolError> for Failure {
    fn from(error: ToolError) -> Self {
        Failure::Tool(error)
    }
}

impl From<Refusal> for Failure {
    fn from(refusal: Refusal) -> Self {
        Failure::Registry(refusal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_tool_lists_the_known_ones() {
        let refusal = Refusal::UnknownTool {
            name: "reed_file".into(),
            known: vec!["read_file".into(), "grep".into()],
        };
        assert_eq!(
            refusal.model_text(),
            "Error: unknown tool `reed_file`. Available tools: read_file, grep."
        );
        assert_eq!(refusal.kind(), ErrorKind::UnknownTool);
    }
}
