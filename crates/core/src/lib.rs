//! Budgeted tools for LLM agents.
//!
//! Every tool call an agent makes returns a string that lands in the model's next prompt.
//! toolsmith makes every such string fit: a [`Registry`] runs a batch of tool calls (those of
//! read-only tools concurrently, the others one at a time in call order), splits the batch's
//! budget among them ([`BudgetPolicy`]), and post-trims any result that still overflows with
//! [`trim::fit`] — keeping the full output as an artifact the model can page through with the
//! built-in `read_artifact` tool — so the model gets exactly one result per call, in call order,
//! each within its allowance.
//!
//! # The modules
//!
//! The common path is at the root: [`Tool`], [`ToolContext`], [`ToolOutput`], [`ToolError`],
//! [`Json`] and the [`tool`](macro@tool) attribute to write tools; [`Registry`], [`Turn`],
//! [`ToolCall`], [`ToolResult`], [`BudgetPolicy`] and [`DirStore`] to run them. Everything else
//! lives in the module of its concept, listed here from the bottom up (each uses only those
//! above it):
//!
//! | module | what it holds |
//! |---|---|
//! | [`trim`] | pure text: fitting a text or a JSON value into an allowance of chars, the one marker grammar and its parser |
//! | [`lines`] | paging text by lines in bounded memory |
//! | [`process`] | the processes a command or an MCP server starts, and stopping all of them (Unix) |
//! | [`tokens`] | estimating tokens from text |
//! | [`artifacts`] | where full outputs go: the store traits, [`DirStore`], the memory store |
//! | [`budget`] | the budget contract: planning allowances before work, settling them after |
//! | [`history`] | conversations: the message model, pairing repair, microcompaction, overflow recovery |
//! | [`tool`](mod@tool) | writing tools: the traits, the context a call sees, what it returns, its spec |
//! | [`approval`] | who may run what: rules per tool, and who is asked |
//! | [`schema`] | a tool's definition in each provider's dialect |
//! | [`search`] | finding tools by what they do: a BM25 index over their definitions |
//! | [`registry`] | running tools: the registry, turns, batches in phases, results |
//! | [`mcp`] | MCP on both sides: a server over any registry, a client of any server (feature `mcp`) |
//!
//! # Writing tools
//!
//! The quickest way is an async function. Its parameters become the arguments (their doc
//! comments the descriptions, `Option<T>` ones optional); a `&ToolContext` parameter gives the
//! call's allowance, page, progress and cancellation; it returns `Result<T, E>` where `T`
//! converts into a [`ToolOutput`] (`String`, `&str`, [`Json`] of any `Serialize` value, or an
//! image or audio clip, [`tool::Media`], which `ToolOutput::with_media` also adds after a text) and
//! `E` into a [`ToolError`] (`?` converts any standard error; a message of your own is
//! [`ToolError::failed`]). The macro leaves a function of the same name that returns the tool.
//!
//! ```
//! use toolsmith::{ToolContext, ToolError, tool};
//!
//! /// Adds two numbers.
//! #[tool(max_result_chars = 100)]
//! async fn add(
//!     /// The first number.
//!     a: i64,
//!     /// The second number; 0 if left out.
//!     b: Option<i64>,
//! ) -> Result<String, ToolError> {
//!     Ok((a + b.unwrap_or(0)).to_string())
//! }
//!
//! /// Lists the numbers from 0, a page at a time.
//! #[tool(paginate)]
//! async fn count(
//!     /// How many numbers there are.
//!     up_to: usize,
//!     cx: &ToolContext,
//! ) -> Result<String, ToolError> {
//!     let page = cx.page().unwrap_or_default();
//!     let numbers = (0..up_to).skip(page.offset).take(page.limit.unwrap_or(usize::MAX));
//!     Ok(numbers.map(|n| format!("{n}\n")).collect())
//! }
//!
//! let registry = toolsmith::Registry::builder().tool(add()).tool(count()).build()?;
//! let schema = &registry.get("count").unwrap().spec().input_schema;
//! assert!(schema["properties"]["offset"].is_object(), "paginate adds offset and limit");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A struct with `#[derive(Tool)]` is the other form: the struct is the arguments (derive
//! `serde::Deserialize` and `schemars::JsonSchema` too), its doc comment the description, and an
//! inherent `async fn run(self, cx: &ToolContext) -> Result<T, E>` the work. A size hint lets the
//! tool refuse oversized work before doing it, with the error the model needs to ask again:
//!
//! ```
//! use toolsmith::{Tool, ToolContext, ToolError};
//! use toolsmith::tool::SizeHint;
//!
//! /// Reads a text file.
//! #[derive(serde::Deserialize, schemars::JsonSchema, Tool)]
//! #[tool(paginate, head_ratio = 1.0, timeout = "10s", size_hint = Self::estimate)]
//! struct ReadText {
//!     /// The file's path.
//!     path: std::path::PathBuf,
//! }
//!
//! impl ReadText {
//!     /// The file's length, from its metadata: nothing is read.
//!     async fn estimate(&self, _cx: &ToolContext) -> Result<Option<SizeHint>, ToolError> {
//!         let meta = std::fs::metadata(&self.path);
//!         let bytes = meta.map_err(|error| ToolError::io(self.path.display(), error))?.len();
//!         Ok(Some(SizeHint::new("File content", bytes).with_alternative("search it instead")))
//!     }
//!
//!     async fn run(self, cx: &ToolContext) -> Result<String, ToolError> {
//!         let page = cx.page().unwrap_or_default();
//!         let read = std::fs::read_to_string(&self.path);
//!         let text = read.map_err(|error| ToolError::io(self.path.display(), error))?;
//!         let lines = text.lines().skip(page.offset).take(page.limit.unwrap_or(usize::MAX));
//!         Ok(lines.map(|line| format!("{line}\n")).collect())
//!     }
//! }
//!
//! let registry = toolsmith::Registry::builder().tool(ReadText::tool()).build()?;
//! assert_eq!(registry.get("read_text").unwrap().spec().description, "Reads a text file.");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The keys of `#[tool(...)]`, in both forms:
//!
//! | key | meaning |
//! |---|---|
//! | `name = "…"` | the name the model calls (default: the fn's name, or the struct's in snake_case) |
//! | `description = "…"` | what the tool does (default: the doc comment; one of the two is required) |
//! | `max_result_chars = N` | the tool's own cap on a result, in chars |
//! | `max_result_tokens = N` | the tool's own cap on a result, in tokens, counted by the registry's counter ([`registry::RegistryBuilder::token_counter`]) |
//! | `max_result_lines = N` | a line limit for trimmed results |
//! | `paginate` | adds `offset` and `limit`; the tool reads them as [`ToolContext::page`] |
//! | `head_ratio = 0.3` | the share of a trimmed result kept from the top |
//! | `timeout = "30s"` | how long one call may run (`ms`, `s`, `m`, `h`) |
//! | `preserve` | keep this tool's results out of history compaction (write and exec tools) |
//! | `defer` | offer the definition only once a tool search finds it ([`registry::RegistryBuilder::defer`]) |
//! | `over_cap = "error"` | a result over its cap is an error naming its size and its artifact, never a cut ([`tool::OverCap`]) |
//! | `terminal_output` | the output is a terminal's: escapes and redraws are rendered as a terminal shows them ([`trim::Render::Always`] in the tool's [`trim::TrimStyle`]) |
//! | `read_only` | the tool changes nothing: its calls may run concurrently (others run one at a time) |
//! | `destructive` | a change it makes may destroy or overwrite data |
//! | `idempotent` | calling it again with the same arguments changes nothing more |
//! | `open_world` | it reaches outside a closed domain, such as the network |
//! | `allow_unknown_fields` | accept argument fields the schema does not list (by default a call naming one is refused as invalid arguments, so a model's typo is caught) |
//! | `state = Type` | the tool reads a `Type` with [`ToolContext::state`]: `build()` refuses a registry without one (repeat the key for several types) |
//! | `size_hint = path` | `async fn(&Args, &ToolContext) -> Result<Option<SizeHint>, ToolError>` |
//! | `crate = "path"` | where `toolsmith` is, if it was renamed |
//!
//! Mistakes are compile errors at the offending tokens, all reported in one build. A tool with
//! state (a connection, a root directory) implements [`Tool`] by hand on a struct that holds it.
//!
//! # Running them
//!
//! ```
//! use toolsmith::{Registry, ToolCall, ToolError, tool};
//!
//! /// Repeats a text.
//! #[tool]
//! async fn repeat(
//!     /// The text.
//!     text: String,
//!     /// How many times.
//!     times: usize,
//! ) -> Result<String, ToolError> {
//!     Ok(format!("{text}\n").repeat(times))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = Registry::builder().tool(repeat()).build()?;
//! let mut turn = registry.turn();
//! let calls = (0..4).map(|i| {
//!     let args = serde_json::json!({ "text": "all work and no play", "times": 10_000 });
//!     ToolCall::new(format!("call_{i}"), "repeat", args)
//! });
//! for result in turn.execute(calls).await {
//!     // Four calls share 80,000 chars: each result of 210,000 is over its 20,000, and its
//!     // ten thousand identical lines fold losslessly into two, nothing left out.
//!     assert!(result.content.chars().count() <= 20_000);
//!     assert!(result.meta.trimmed());
//!     assert!(result.content.starts_with("all work and no play\n[toolsmith: output condensed"));
//!     assert!(result.content.ends_with("\n[lines 2-10,000: the line above, 9,999 more times]"));
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Defaults, and how to change them
//!
//! | what | default | change it with |
//! |---|---|---|
//! | budget of one batch | 80,000 chars, split by fair share | [`RegistryBuilder::budget`](registry::RegistryBuilder::budget) with a [`BudgetPolicy`] |
//! | calls in one turn | 20 (more are answered "not run") | [`RegistryBuilder::max_calls_per_turn`](registry::RegistryBuilder::max_calls_per_turn) |
//! | calls of one tool in one turn | 5 | [`RegistryBuilder::max_calls_per_tool`](registry::RegistryBuilder::max_calls_per_tool) |
//! | time one call may run | 2 minutes | [`RegistryBuilder::default_timeout`](registry::RegistryBuilder::default_timeout), or a tool's `timeout` key |
//! | unknown argument fields | refused | a tool's `allow_unknown_fields` key |
//!
//! ```
//! use std::time::Duration;
//! use toolsmith::{BudgetPolicy, Registry};
//!
//! let registry = Registry::builder()
//!     .budget(BudgetPolicy::default().with_batch_budget_chars(120_000))
//!     .max_calls_per_turn(50)
//!     .max_calls_per_tool(20)
//!     .default_timeout(Some(Duration::from_secs(300)))
//!     .build()?;
//! # Ok::<(), toolsmith::registry::BuildError>(())
//! ```
//!
//! The budget contract, the marker grammar and the design behind them are in the project's
//! `docs/design.md` and `docs/budget.md`.

// One module allows `unsafe`: the vector kernel of the salience search (`trim::salience::anchors`),
// where a benchmark showed the need; every block there says why it is sound.
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    rust_2018_idioms
)]

/// The crate's own code, for the tests that hold every path to its owner: each source file
/// but `except`, with what comes before its tests.
#[cfg(test)]
pub(crate) fn own_code(except: &str) -> Vec<(std::path::PathBuf, String)> {
    let mut stack = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    let mut files = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") && !path.ends_with(except) {
                let source = std::fs::read_to_string(&path).unwrap();
                let code = source.split("#[cfg(test)]").next().unwrap_or_default();
                files.push((path, code.to_owned()));
            }
        }
    }
    files
}

mod copies;
mod fair;
mod names;
#[cfg(any(feature = "mcp-http", feature = "testing"))]
mod net;
mod sync;

pub mod trim;

mod structure;

pub mod figures;
pub mod lines;
#[cfg(unix)]
#[cfg_attr(docsrs, doc(cfg(unix)))]
pub mod process;
pub mod tokens;

pub mod artifacts;
pub mod budget;
pub mod history;
pub mod tool;

pub mod approval;
pub mod schema;
pub mod search;

pub mod registry;

#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;

#[cfg(any(feature = "async-openai", feature = "genai"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "async-openai", feature = "genai"))))]
pub mod adapters;

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

pub use artifacts::DirStore;
pub use budget::BudgetPolicy;
pub use registry::{Registry, ToolCall, ToolResult, Turn};
pub use tool::{Json, Tool, ToolContext, ToolError, ToolOutput};

#[cfg(feature = "macros")]
pub use toolsmith_macros::tool;

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

    pub use crate::names::is_valid_tool_name;
    use crate::{ToolError, ToolOutput};

    /// The shape `T` of a tool function's `Json<T>` result, for its output schema: `T`'s
    /// schema when `T: JsonSchema`, else none. Picked by autoref: `(&OutputShape::<T>::new())
    /// .output_schema()` takes [`SchemaOfShape`] when it applies, [`NoSchemaOfShape`] otherwise,
    /// so a `T` that is only `Serialize` still compiles.
    pub struct OutputShape<T>(std::marker::PhantomData<T>);

    impl<T> OutputShape<T> {
        /// The shape of `T`.
        pub fn new() -> Self {
            OutputShape(std::marker::PhantomData)
        }
    }

    impl<T> std::fmt::Debug for OutputShape<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("OutputShape")
        }
    }

    impl<T> Default for OutputShape<T> {
        fn default() -> Self {
            Self::new()
        }
    }

    /// The output schema of a shape that has a schema.
    pub trait SchemaOfShape {
        /// `T`'s schema.
        fn output_schema(&self) -> Option<serde_json::Value>;
    }

    impl<T: schemars::JsonSchema> SchemaOfShape for OutputShape<T> {
        fn output_schema(&self) -> Option<serde_json::Value> {
            Some(crate::tool::schema_of::<T>())
        }
    }

    /// The output schema of a shape that has none.
    pub trait NoSchemaOfShape {
        /// None.
        fn output_schema(&self) -> Option<serde_json::Value>;
    }

    impl<T> NoSchemaOfShape for &OutputShape<T> {
        fn output_schema(&self) -> Option<serde_json::Value> {
            None
        }
    }

    /// What a tool function or `run` method may return.
    #[diagnostic::on_unimplemented(
        message = "a tool must return `Result<T, E>` where `T: Into<ToolOutput>` (a `String`, \
                   `&str`, `ToolOutput`, `Json<_>` or `Media`) and `E: Into<ToolError>` (a `ToolError`, \
                   or any `std::error::Error + Send + Sync + 'static`; a message is \
                   `ToolError::failed(\"…\")`); `{Self}` is not",
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

    impl<T, E> IntoToolResult for Result<crate::Json<T>, E>
    where
        T: serde::Serialize,
        E: Into<ToolError>,
    {
        fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
            ToolOutput::json(&self.map_err(Into::into)?.0)
        }
    }
}

/// The version of this crate.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
