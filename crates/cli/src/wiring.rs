//! What the commands run on: the budget policy, the artifact store, the registry of the
//! standard tools, progress on stderr.

use std::io::IsTerminal as _;
use std::path::PathBuf;

use toolsmith::approval::ApprovalPolicy;
use toolsmith::budget::SplitStrategy;
use toolsmith::tool::Event;
use toolsmith::{BudgetPolicy, DirStore, Registry};
use toolsmith_std::Sandbox;

use crate::args::{Split, Workspace};
use crate::{Failure, fail};

pub(crate) fn budget_policy(budget: Option<usize>, split: Split) -> Result<BudgetPolicy, Failure> {
    let split = match split {
        Split::Even => SplitStrategy::Even,
        Split::Fair => SplitStrategy::FairShare,
    };
    let policy = BudgetPolicy::default()
        .with_batch_budget_chars(budget.unwrap_or(BudgetPolicy::DEFAULT_BATCH_BUDGET_CHARS))
        .with_split(split);
    policy.validate()?;
    Ok(policy)
}

/// The artifact store: `--artifacts`, else `toolsmith/artifacts` in the user's cache
/// directory, else (no home directory) a private session directory removed on exit.
pub(crate) fn artifact_store(artifacts: Option<&PathBuf>) -> Result<DirStore, Failure> {
    let dir = match artifacts {
        Some(dir) => dir.clone(),
        None => match dirs::cache_dir() {
            Some(cache) => cache.join("toolsmith").join("artifacts"),
            None => return Ok(DirStore::new_session()?),
        },
    };
    DirStore::open(&dir).map_err(|error| fail(format!("--artifacts: {error}")))
}

/// The standard tools over `workspace.root`, with an artifact store that only read_artifact
/// reads: the file tools see the workspace and nothing else.
pub(crate) fn registry(
    workspace: &Workspace,
    budget: BudgetPolicy,
    approval: ApprovalPolicy,
) -> Result<(Registry, DirStore), Failure> {
    let root = &workspace.root;
    if !root.is_dir() {
        return Err(fail(format!("--root {}: not a directory", root.display())));
    }
    let store = artifact_store(workspace.artifacts.as_ref())?;
    let sandbox =
        Sandbox::new(root).map_err(|error| fail(format!("--root {}: {error}", root.display())))?;
    let registry = toolsmith_std::register(Registry::builder())
        .state(sandbox)
        .artifacts(store.clone())
        .budget(budget)
        .approval(approval)
        .build()?;
    Ok((registry, store))
}

/// Prints progress events on stderr while they last, when stderr is a terminal.
pub(crate) fn show_progress(registry: &Registry) -> Option<tokio::task::JoinHandle<()>> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let mut events = registry.subscribe();
    Some(tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            match event {
                Event::CallStarted {
                    tool,
                    call_id,
                    allowance,
                    ..
                } => {
                    eprintln!("· {call_id} {tool}: started, {allowance} chars allowed");
                }
                Event::Progress { tool, message, .. } => eprintln!("· {tool}: {message}"),
                Event::Warning { tool, message, .. } => eprintln!("! {tool}: {message}"),
                _ => {}
            }
        }
    }))
}
