//! The registry at the edge of the Rust model clients: each client's tool calls read as
//! [`ToolCall`](crate::ToolCall)s, and [`ToolResult`](crate::ToolResult)s written back as its tool
//! messages, so that a loop written with the client runs every batch as one
//! [`Turn`](crate::Turn) — the turn's budget split, cuts, artifacts and `read_artifact`.
//!
//! - [`async_openai`] (feature `async-openai`): Chat Completions and the Responses API.
//! - [`genai`] (feature `genai`): `ToolCall`, `ToolResponse`, `ChatMessage`.
//!
//! rig has a crate of its own, `toolsmith-rig`, which drives rig's `AgentRun`.
//!
//! Arguments that are not valid JSON become an error result naming the problem (the registry
//! reads them; see [`ToolCall::from_raw`](crate::ToolCall::from_raw)). Neither OpenAI API nor
//! genai has an error flag on a tool's answer: an error result says so in its text
//! ([`ToolResult::flagless_content`](crate::ToolResult::flagless_content)).

#[cfg(feature = "async-openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "async-openai")))]
pub mod async_openai;

#[cfg(feature = "genai")]
#[cfg_attr(docsrs, doc(cfg(feature = "genai")))]
pub mod genai;
