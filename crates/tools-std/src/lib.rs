//! Standard tools for toolsmith agents: `read_file`, `write_file`, `edit_file`,
//! `list_directory`, `glob`, `grep` and `run_command`.
//!
//! Each is written with `#[derive(Tool)]`, held to the budget contract, and reaches the
//! filesystem only through a [`Sandbox`], which the registry shares with them as state:
//!
//! ```
//! use toolsmith::{DirStore, Registry};
//! use toolsmith_std::Sandbox;
//!
//! let workspace = std::env::current_dir()?;
//! let artifacts = DirStore::new_session()?;
//! // The file tools see the workspace only; the model reads artifacts with read_artifact.
//! let sandbox = Sandbox::new(&workspace)?;
//! let registry = toolsmith_std::register(Registry::builder())
//!     .state(sandbox)
//!     .artifacts(artifacts)
//!     .build()?;
//! assert!(registry.get("run_command").is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Their limits follow the defaults of the design: read_file 50,000 chars / 500 lines (head
//! kept), run_command 20,000 / 200 (tail favoured), list_directory 10,000 / 100, grep 30,000 /
//! 300. Oversized work is refused with the count or the size and how to narrow it; write and exec
//! tools are `preserve`d from history compaction.

#![forbid(unsafe_code)]

mod command;
mod confine;
mod grep;
mod list;
mod read;
mod sandbox;
mod write;

use std::sync::Arc;

use toolsmith::figures::grouped;
use toolsmith::registry::RegistryBuilder;
use toolsmith::tool::{DynTool, StateNeed, ToolError, into_dyn, with_spec};
use toolsmith::trim::Salience;

pub use command::RunCommand;
pub use confine::{CommandPolicy, SYSTEM_READABLE};
pub use grep::Grep;
pub use list::{Glob, ListDirectory};
pub use read::ReadFile;
pub use sandbox::Sandbox;
pub use write::{EditFile, WriteFile};

/// The key under which run_command states, in its result's
/// [`tool_meta`](toolsmith::registry::ResultMeta::tool_meta), how far the kernel confined the
/// command: `"full"` (every rule enforced, by Landlock on Linux), `"partial"` (only part of them)
/// or `"none"`.
pub const CONFINEMENT_META_KEY: &str = "toolsmith/confinement";

/// The seven standard tools, ready to register. Each states in its spec that it needs a
/// [`Sandbox`] in the registry's state, so a registry without one is refused at `build()`.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![
        needs_sandbox(into_dyn(ReadFile::tool())),
        needs_sandbox(into_dyn(WriteFile::tool())),
        needs_sandbox(into_dyn(EditFile::tool())),
        needs_sandbox(into_dyn(ListDirectory::tool())),
        needs_sandbox(into_dyn(Glob::tool())),
        needs_sandbox(grep()),
        needs_sandbox(run_command()),
    ]
}

/// `tool`, its need of the [`Sandbox`] (which its `state = Sandbox` key states by the type's
/// name) said in words, with the call that adds one.
fn needs_sandbox(tool: Arc<dyn DynTool>) -> Arc<dyn DynTool> {
    with_spec(tool, |spec| {
        let need = StateNeed::of::<Sandbox>(
            "a sandbox (the workspace directory the standard tools work in)",
            "`.state(toolsmith_std::Sandbox::new(workspace)?)`",
        );
        spec.needs.retain(|stated| stated != &need);
        spec.needs.push(need);
    })
}

/// `grep`, whose every line is a match the model asked for: cut by position (and folds), with
/// no lines singled out as salient.
fn grep() -> Arc<dyn DynTool> {
    with_spec(into_dyn(Grep::tool()), |spec| {
        spec.limits = spec
            .limits
            .with_trim(spec.limits.trim.with_salience(Salience::Off));
    })
}

/// `run_command`, its description saying so when this system cannot confine commands.
fn run_command() -> Arc<dyn DynTool> {
    run_command_at(confine::available())
}

/// `run_command` as described on a system that confines commands to `level`.
fn run_command_at(level: &confine::Confinement) -> Arc<dyn DynTool> {
    let tool = into_dyn(RunCommand::tool());
    match level {
        confine::Confinement::Full => tool,
        level => with_spec(tool, |spec| {
            spec.description = format!(
                "{}\n\nOn this system commands are {}.",
                spec.description,
                level.describe(true)
            );
        }),
    }
}

/// Adds the seven standard tools to `builder`; add a [`Sandbox`] with `.state(…)` too.
pub fn register(builder: RegistryBuilder) -> RegistryBuilder {
    builder.tools(tools())
}

/// The most blocking jobs the standard tools run at once in a process. Each holds one of the
/// runtime's blocking threads; a job stuck on a filesystem that never answers keeps its thread,
/// so the tools may take only part of the pool, and the runtime's own blocking work (stdin,
/// DNS, other tools) always finds threads.
const MAX_BLOCKING_JOBS: usize = 64;

/// The receiving end of a tool's streamed output, as the stream [`ToolOutput::stream`] takes.
///
/// [`ToolOutput::stream`]: toolsmith::ToolOutput::stream
struct ChunkStream(tokio::sync::mpsc::Receiver<Result<Vec<u8>, ToolError>>);

impl futures_core::Stream for ChunkStream {
    type Item = Result<Vec<u8>, ToolError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

/// Waits for a turn among the [`MAX_BLOCKING_JOBS`]: the permit is held by the work it is moved
/// into, however long that runs.
async fn blocking_permit() -> Result<tokio::sync::OwnedSemaphorePermit, ToolError> {
    static JOBS: std::sync::OnceLock<Arc<tokio::sync::Semaphore>> = std::sync::OnceLock::new();
    JOBS.get_or_init(|| Arc::new(tokio::sync::Semaphore::new(MAX_BLOCKING_JOBS)))
        .clone()
        .acquire_owned()
        .await
        .map_err(|error| ToolError::failed_with("the tool's worker pool is closed", error))
}

/// Runs blocking filesystem work off the async runtime's threads, at most
/// [`MAX_BLOCKING_JOBS`] at a time; waiting for a turn ends with the call's timeout or
/// cancellation like any other wait.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let permit = blocking_permit().await?;
    tokio::task::spawn_blocking(move || {
        let _permit = permit; // released when the work ends, however long it takes
        work()
    })
    .await
    .map_err(|error| ToolError::failed_with("the tool's worker thread failed", error))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_command_says_in_its_spec_when_commands_are_not_confined() {
        let unconfined = run_command_at(&confine::Confinement::None(
            "this kernel has no Landlock".into(),
        ));
        let description = &unconfined.spec().description;
        assert!(
            description.ends_with(
                "On this system commands are not confined (this kernel has no Landlock): the \
                 command can write anywhere you can."
            ),
            "{description}"
        );
        let confined = run_command_at(&confine::Confinement::Full);
        assert!(!confined.spec().description.contains("confined"));
        assert_eq!(unconfined.spec().input_schema, confined.spec().input_schema);
    }
}
