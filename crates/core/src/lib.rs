//! Budgeted tools for LLM agents.
//!
//! Every tool call an agent makes returns a string that lands in the model's next prompt.
//! toolsmith makes every such string fit: a [`Registry`] runs a batch of tool calls
//! concurrently, splits the batch's budget among them ([`BudgetPolicy`]), and post-trims any
//! result that still overflows with [`trim::fit`] — keeping the full output as an artifact the
//! model can page through with the built-in `read_artifact` tool — so the model gets exactly
//! one result per call, in call order, each within its allowance.
//!
//! ```
//! use std::borrow::Cow;
//!
//! use toolsmith::{Registry, Tool, ToolCall, ToolContext, ToolError, ToolOutput};
//!
//! /// Arguments of `repeat`.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct RepeatArgs {
//!     /// The text to repeat.
//!     text: String,
//!     /// How many times.
//!     times: usize,
//! }
//!
//! struct Repeat;
//!
//! #[async_trait::async_trait]
//! impl Tool for Repeat {
//!     type Args = RepeatArgs;
//!     fn name(&self) -> Cow<'static, str> {
//!         "repeat".into()
//!     }
//!     fn description(&self) -> Cow<'static, str> {
//!         "Repeats a text.".into()
//!     }
//!     async fn call(&self, args: RepeatArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
//!         Ok(format!("{}\n", args.text).repeat(args.times).into())
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = Registry::builder().tool(Repeat).build()?;
//! let mut turn = registry.turn();
//! let calls = (0..4).map(|i| {
//!     let args = serde_json::json!({ "text": "all work and no play", "times": 10_000 });
//!     ToolCall::new(format!("call_{i}"), "repeat", args)
//! });
//! for result in turn.execute(calls).await {
//!     // Four calls share 80,000 chars: each result is trimmed to its 20,000.
//!     assert!(result.content.chars().count() <= 20_000);
//!     assert!(result.meta.trimmed);
//!     assert!(result.content.contains("[toolsmith: output truncated"));
//! }
//! # Ok(())
//! # }
//! ```
//!
//! The budget contract, the marker grammar and the defaults are in the project's
//! `docs/design.md` and `docs/budget.md`.

#![forbid(unsafe_code)]
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    rust_2018_idioms
)]

mod artifacts;
mod budget;
mod context;
mod output;
mod registry;
mod tokens;
mod tool;
pub mod trim;

pub use artifacts::{
    ArtifactError, ArtifactId, ArtifactPage, ArtifactStore, ArtifactWriter, DirStore, MemoryStore,
    PageRequest, Retention,
};
pub use budget::{BudgetError, BudgetPolicy, SplitStrategy};
pub use context::{Audience, CallSummary, Event, Page, ToolContext};
pub use output::{Cap, ResultMeta, ToolError, ToolOutput, ToolResult};
pub use registry::{
    Arguments, BuildError, READ_ARTIFACT, ReadArtifact, Registry, RegistryBuilder, ToolCall, Turn,
    is_valid_tool_name,
};
pub use tokens::{CharsPerToken, TokenCounter};
pub use tool::{
    BoxFuture, Derived, DynTool, SizeHint, Tool, ToolArgs, ToolLimits, ToolSpec, deserialize_args,
    into_dyn, schema_of,
};

#[cfg(feature = "macros")]
pub use toolsmith_macros::{Tool, tool};

/// The attribute tool authors put on `impl Tool` (re-exported from the `async-trait` crate).
pub use async_trait::async_trait;

/// What the macros' generated code names. Not public API: it may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use std::borrow::Cow;
    pub use std::boxed::Box;
    pub use std::option::Option;
    pub use std::result::Result;
    pub use std::string::String;
    pub use std::sync::OnceLock;
    pub use std::time::Duration;

    use crate::{ToolError, ToolOutput};

    /// What a tool function or `run` method may return.
    #[diagnostic::on_unimplemented(
        message = "a tool must return `Result<T, E>` where `T: Into<ToolOutput>` (a `String`, \
                   `&str` or `ToolOutput`) and `E: Into<ToolError>`; `{Self}` is not",
        label = "the tool's result"
    )]
    pub trait IntoToolResult {
        /// Converts into what the registry expects.
        fn into_tool_result(self) -> Result<ToolOutput, ToolError>;
    }

    impl<T, E> IntoToolResult for Result<T, E>
    where
        T: Into<ToolOutput>,
        E: Into<ToolError>,
    {
        fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
            self.map(Into::into).map_err(Into::into)
        }
    }
}

/// The version of this crate.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
