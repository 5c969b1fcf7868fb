//! What the commands run on: the budget policy, the artifact store, the registry of the
//! standard tools, progress on stderr.

use std::io::IsTerminal as _;
use std::path::Path;
use std::sync::Arc;

use toolsmith::approval::ApprovalPolicy;
use toolsmith::artifacts::{ArtifactStore, open_location};
use toolsmith::budget::SplitStrategy;
use toolsmith::mcp::{McpClient, ServerConfig, parse_servers_config};
use toolsmith::tool::{DynTool, Event, MediaLimits};
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

/// The artifact store: `--artifacts` (a directory or a bucket's URL), else `toolsmith/artifacts`
/// in the user's cache directory, else (no home directory) a private session directory removed
/// on exit.
pub(crate) fn artifact_store(artifacts: Option<&str>) -> Result<Arc<dyn ArtifactStore>, Failure> {
    let opened = match artifacts {
        Some(location) => open_location(location),
        None => match dirs::cache_dir() {
            Some(cache) => DirStore::open(cache.join("toolsmith").join("artifacts"))
                .map(|store| Arc::new(store) as Arc<dyn ArtifactStore>),
            None => return Ok(Arc::new(DirStore::new_session()?)),
        },
    };
    opened.map_err(|error| fail(format!("--artifacts: {error}")))
}

/// The standard tools over `workspace.root`, with an artifact store that only read_artifact
/// reads: the file tools see the workspace and nothing else.
pub(crate) fn registry(
    workspace: &Workspace,
    budget: BudgetPolicy,
    approval: ApprovalPolicy,
) -> Result<(Registry, Arc<dyn ArtifactStore>), Failure> {
    registry_with(
        workspace,
        budget,
        approval,
        MediaLimits::default(),
        None,
        std::iter::empty(),
    )
}

/// The registry of the standard tools and `more` (an MCP server's), as [`registry`] builds it,
/// showing media within `media`, every result within `tokens` (a cap and its counter), if
/// given.
pub(crate) fn registry_with(
    workspace: &Workspace,
    budget: BudgetPolicy,
    approval: ApprovalPolicy,
    media: MediaLimits,
    tokens: Option<toolsmith::tokens::TokenCap>,
    more: impl IntoIterator<Item = Arc<dyn DynTool>>,
) -> Result<(Registry, Arc<dyn ArtifactStore>), Failure> {
    let root = &workspace.root;
    if !root.is_dir() {
        return Err(fail(format!("--root {}: not a directory", root.display())));
    }
    let store = artifact_store(workspace.artifacts.as_deref())?;
    let sandbox =
        Sandbox::new(root).map_err(|error| fail(format!("--root {}: {error}", root.display())))?;
    let mut builder = Registry::builder();
    if let Some(cap) = tokens {
        builder = builder
            .max_result_tokens(Some(cap.max()))
            .token_counter(Arc::clone(cap.counter()));
    }
    let registry = toolsmith_std::register(builder)
        .tools(more)
        .media_limits(media)
        .state(sandbox)
        .shared_artifacts(Arc::clone(&store))
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

/// The servers of a `--config` file (as Claude Desktop, Claude Code and Cursor write it).
pub(crate) fn servers_config(path: &Path) -> Result<Vec<(String, ServerConfig)>, Failure> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        fail(format!(
            "--config {}: cannot read it ({error})",
            path.display()
        ))
    })?;
    parse_servers_config(&text)
        .map_err(|error| fail(format!("--config {}: {error}", path.display())))
}

/// The servers of a `--config` file, connected as MCP clients (`toolsmith serve`), all at once:
/// one that cannot be set up or started is named on stderr and left out; none at all is an
/// error.
pub(crate) async fn connect_servers(path: &Path) -> Result<Vec<McpClient>, Failure> {
    let connecting = servers_config(path)?
        .into_iter()
        .map(|(name, server)| async move {
            match McpClient::from_config(&name, &server) {
                Ok(builder) => builder.connect().await,
                Err(error) => Err(error),
            }
        });
    let mut clients = Vec::new();
    let mut failures = Vec::new();
    for connected in futures_util::future::join_all(connecting).await {
        match connected {
            Ok(client) => clients.push(client),
            Err(error) => {
                eprintln!(
                    "toolsmith serve: --config {}: {error}; the other servers are served",
                    path.display()
                );
                failures.push(error.to_string());
            }
        }
    }
    if clients.is_empty() {
        return Err(fail(format!(
            "--config {}: no server could be started: {}",
            path.display(),
            failures.join("; ")
        )));
    }
    Ok(clients)
}
