//! The `toolsmith` command-line tool: the standard tools, the budget and the history tools of
//! toolsmith, from a shell.

#![forbid(unsafe_code)]

/// Prints to stdout like `print!`; when the reader went away (`toolsmith call … | head -c 10`)
/// the process ends quietly, with success, instead of panicking as `print!` does.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::write_out(format_args!($($arg)*))
    };
}

/// Prints a line to stdout; see [`out!`].
macro_rules! outln {
    () => { out!("\n") };
    ($($arg:tt)*) => {{
        out!($($arg)*);
        out!("\n");
    }};
}

mod approve;
mod args;
mod demo;
mod input;
mod proxy;
mod render;
mod traces;
mod wiring;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser as _;
use serde_json::Value;
use toolsmith::approval::ApprovalPolicy;
use toolsmith::history::{self, CompactPolicy};
use toolsmith::{BudgetPolicy, ToolCall, ToolResult};

use approve::Approve;
use args::{Cli, Command, Format, HistoryFormat, Http, Media, Split, Tokens, Workspace};
use input::{read_calls, read_history};
use render::{result_json, table};
use wiring::{budget_policy, registry, show_progress};

/// Writes to stdout, ending the process when it cannot: quietly and with success when the
/// reader closed the pipe, with the error otherwise.
fn write_out(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout.write_fmt(args) {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("toolsmith: error: could not write the output ({error})");
        std::process::exit(1);
    }
}

/// A failure to report: the message for the user, and the exit code.
struct Failure {
    message: String,
    code: u8,
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(error: E) -> Self {
        Failure {
            message: error.to_string(),
            code: 1,
        }
    }
}

fn fail(message: impl Into<String>) -> Failure {
    Failure {
        message: message.into(),
        code: 1,
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let traces = traces::start();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("toolsmith: error: could not start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(run(cli.command));
    // A call's blocking work still under way (a read the command's leftovers held open) must
    // not hold the exit: tasks are dropped, which kills what the calls started.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    // The spans not yet exported go before the process does.
    traces::stop(traces);
    match outcome {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("toolsmith: error: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

/// Runs one command: each is a function of its own.
async fn run(command: Command) -> Result<ExitCode, Failure> {
    match command {
        Command::Schema { format, workspace } => schema(format, workspace),
        Command::Call {
            tool,
            args,
            budget,
            json,
            tokens,
            approve,
            workspace,
        } => call(tool, args, budget, json, tokens, approve, workspace).await,
        Command::Batch {
            input,
            budget,
            split,
            approve,
            workspace,
        } => batch(input, budget, split, approve, workspace).await,
        Command::Serve {
            budget,
            approve,
            workspace,
            http,
            tokens,
            config,
            media,
        } => serve(budget, approve, workspace, http, tokens, config, media).await,
        Command::Proxy(options) => {
            proxy::run(options).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Repair { input, format } => repair(&input, format),
        Command::Compact {
            input,
            format,
            preserve,
        } => compact(&input, format, preserve),
        Command::Demo { budget, workspace } => demo(budget, workspace).await,
    }
}

/// `toolsmith schema`: the tools' schemas in a provider's dialect.
fn schema(format: Format, workspace: Workspace) -> Result<ExitCode, Failure> {
    let (registry, _store) = registry(&workspace, BudgetPolicy::default(), ApprovalPolicy::new())?;
    let schemas = registry.schemas(format.dialect())?;
    outln!("{}", serde_json::to_string_pretty(&schemas)?);
    Ok(ExitCode::SUCCESS)
}

/// `toolsmith call`: one call of one tool, its result printed (or its JSON).
async fn call(
    tool: String,
    args: String,
    budget: Option<usize>,
    json: bool,
    tokens: Tokens,
    approve: Approve,
    workspace: Workspace,
) -> Result<ExitCode, Failure> {
    let arguments: Value = serde_json::from_str(&args).map_err(|error| {
        fail(format!("the arguments are not valid JSON ({error}); pass an object such as '{{\"path\": \"README.md\"}}'"))
    })?;
    let policy = budget_policy(budget, Split::Fair)?;
    let (registry, _store) = wiring::registry_with(
        &workspace,
        policy,
        approve.policy(),
        toolsmith::tool::MediaLimits::default(),
        tokens.cap()?,
        std::iter::empty(),
    )?;
    if registry.get(&tool).is_none() {
        let known: Vec<&str> = registry.tools().map(|t| t.spec().name.as_str()).collect();
        return Err(fail(format!(
            "unknown tool `{tool}`; the tools are {}",
            known.join(", ")
        )));
    }
    let progress = show_progress(&registry);
    let results = registry
        .turn()
        .execute([ToolCall::new("cli", tool, arguments)])
        .await;
    drop(progress);
    let result = &results[0];
    if json {
        outln!("{}", serde_json::to_string_pretty(&result_json(result))?);
    } else {
        out!("{}", result.content);
        if !result.content.ends_with('\n') {
            outln!();
        }
        for line in render::media_lines(result) {
            outln!("{line}");
        }
    }
    Ok(if result.is_error() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `toolsmith batch`: a batch of calls as one turn, its results as blocks and a table.
async fn batch(
    input: String,
    budget: Option<usize>,
    split: Split,
    approve: Approve,
    workspace: Workspace,
) -> Result<ExitCode, Failure> {
    let calls = read_calls(&input)?;
    let (registry, _store) = registry(&workspace, budget_policy(budget, split)?, approve.policy())?;
    let progress = show_progress(&registry);
    let results = registry.turn().execute(calls).await;
    drop(progress);
    let blocks: Vec<history::Block> = results.iter().map(ToolResult::to_block).collect();
    outln!("{}", serde_json::to_string_pretty(&blocks)?);
    eprint!("{}", table(&results));
    Ok(ExitCode::SUCCESS)
}

/// `toolsmith serve`: the standard tools (and a config's servers') over MCP, on stdio or HTTP.
async fn serve(
    budget: Option<usize>,
    approve: Approve,
    workspace: Workspace,
    http: Http,
    tokens: Tokens,
    config: Option<PathBuf>,
    media: Media,
) -> Result<ExitCode, Failure> {
    let (policy, asker) = match approve {
        Approve::Ask => {
            let asker = toolsmith::mcp::ClientApprover::new(toolsmith::approval::Rule::Deny);
            let policy = ApprovalPolicy::new()
                .for_others(toolsmith::approval::Rule::Ask)
                .with_approver(asker.clone());
            (policy, Some(asker))
        }
        _ => (approve.policy(), None),
    };
    let cap = tokens.cap()?;
    // Before any server starts: the token is withheld from every child.
    let listening = match &http.http {
        Some(_) => Some(proxy::http_options(&http)?),
        None => None,
    };
    let servers = match &config {
        Some(path) => match wiring::connect_servers(path).await {
            Ok(servers) => servers,
            // On stdio, the client that started this server reads why in the answer
            // to its `initialize` (and to every request) before the exit.
            Err(failure) if http.http.is_none() => {
                let why = format!("toolsmith serve: {}", failure.message);
                let _ = toolsmith::mcp::refuse_stdio(&why).await;
                return Err(failure);
            }
            Err(failure) => return Err(failure),
        },
        None => Vec::new(),
    };
    let tools = servers.iter().flat_map(toolsmith::mcp::McpClient::tools);
    let mut limits = BudgetPolicy::default();
    if let Some(budget) = budget {
        limits = limits.with_batch_budget_chars(budget);
    }
    let (registry, _store) =
        wiring::registry_with(&workspace, limits, policy, media.limits(), cap, tools)?;
    let mut server = toolsmith::mcp::McpServer::new(registry)?;
    if let Some(asker) = asker {
        server = server.with_client_approver(asker);
    }
    if let Some(listening) = listening {
        let server = server
            .serve_http(listening.options.clone())
            .await
            .map_err(|error| fail(error.to_string()))?;
        proxy::announce(server.local_addr(), &listening);
        proxy::stopped().await;
    } else {
        server.serve_stdio().await?;
    }
    for server in &servers {
        server.shutdown().await;
    }
    Ok(ExitCode::SUCCESS)
}

/// `toolsmith repair`: a history's pairing repaired.
fn repair(input: &str, format: HistoryFormat) -> Result<ExitCode, Failure> {
    let (shape, mut messages) = read_history(input, format)?;
    let report = history::repair(&mut messages);
    outln!("{}", serde_json::to_string_pretty(&shape.write(messages)?)?);
    eprintln!("repair: {report}");
    Ok(ExitCode::SUCCESS)
}

/// `toolsmith compact`: a history microcompacted.
fn compact(input: &str, format: HistoryFormat, preserve: Vec<String>) -> Result<ExitCode, Failure> {
    let (shape, mut messages) = read_history(input, format)?;
    // The standard tools say which of them to preserve; `--preserve` names more.
    let standard = toolsmith_std::tools();
    let policy = CompactPolicy::default()
        .preserving(
            standard
                .iter()
                .filter(|tool| tool.spec().limits.preserve)
                .map(|tool| tool.spec().name.clone()),
        )
        .preserving(preserve);
    let report = history::microcompact(&mut messages, &policy);
    outln!("{}", serde_json::to_string_pretty(&shape.write(messages)?)?);
    eprintln!("compact: {report}");
    Ok(ExitCode::SUCCESS)
}

/// `toolsmith demo`: the demo, in a workspace.
async fn demo(budget: usize, workspace: Workspace) -> Result<ExitCode, Failure> {
    let (registry, store) = registry(
        &workspace,
        budget_policy(Some(budget), Split::Fair)?,
        ApprovalPolicy::new(),
    )?;
    let kept_in = store.location().map_or_else(
        || workspace.artifacts.clone().unwrap_or_default(),
        |dir| dir.display().to_string(),
    );
    demo::run(&registry, &workspace.root, &kept_in, budget).await?;
    Ok(ExitCode::SUCCESS)
}
