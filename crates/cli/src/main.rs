//! The `toolsmith` command-line tool: the standard tools, the budget and the history tools of
//! toolsmith, from a shell.

mod approve;
mod demo;
mod proxy;

use std::io::{IsTerminal as _, Read as _};
use std::path::PathBuf;
use std::process::ExitCode;

use approve::Approve;
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};
use toolsmith::history::{self, Block, CompactPolicy, Message};
use toolsmith::schema::Dialect;
use toolsmith::{
    ApprovalPolicy, BudgetPolicy, DirStore, Event, Registry, SplitStrategy, ToolCall, ToolResult,
};
use toolsmith_std::Sandbox;

/// Budgeted tools for LLM agents: run the standard tools as a model would, see what it sees.
#[derive(Debug, Parser)]
#[command(name = "toolsmith", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Options every command that runs tools shares.
#[derive(Debug, clap::Args)]
struct Workspace {
    /// The workspace the file tools may touch.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Where full outputs of trimmed results are kept: a private directory (mode 0700, yours,
    /// not a symlink) that is new, empty or already a store's. Default: `toolsmith/artifacts`
    /// in your cache directory (`~/.cache` on Linux), so a later `call read_artifact` finds
    /// them.
    #[arg(long)]
    artifacts: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the standard tools' definitions as JSON, in a provider's dialect.
    Schema {
        /// The dialect.
        #[arg(long, value_enum, default_value_t = Format::Anthropic)]
        format: Format,
        #[command(flatten)]
        workspace: Workspace,
    },
    /// Run one tool call and print what the model would see.
    Call {
        /// The tool, e.g. read_file.
        tool: String,
        /// The arguments, as JSON.
        #[arg(default_value = "{}")]
        args: String,
        /// The call's budget in chars (the batch budget of a batch of one).
        #[arg(long)]
        budget: Option<usize>,
        /// Print the result with its figures, as JSON.
        #[arg(long)]
        json: bool,
        /// Calls of tools that change something: run, refuse, or ask on the terminal.
        #[arg(long, value_enum, default_value_t = Approve::Allow)]
        approve: Approve,
        #[command(flatten)]
        workspace: Workspace,
    },
    /// Run a batch of tool calls (an Anthropic assistant message, or a JSON array of tool_use
    /// blocks) and print the tool_result blocks as JSON; a table of the budget on stderr.
    Batch {
        /// The file to read, or - for standard input.
        input: String,
        /// The batch budget in chars.
        #[arg(long)]
        budget: Option<usize>,
        /// How the budget is split.
        #[arg(long, value_enum, default_value_t = Split::Fair)]
        split: Split,
        /// Calls of tools that change something: run, refuse, or ask on the terminal.
        #[arg(long, value_enum, default_value_t = Approve::Allow)]
        approve: Approve,
        #[command(flatten)]
        workspace: Workspace,
    },
    /// Serve the standard tools over MCP on stdio.
    Serve {
        /// Calls of tools that change something: run them, refuse them, or ask the client's
        /// user (by MCP elicitation; refused when the client cannot ask).
        #[arg(long, value_enum, default_value_t = Approve::Allow)]
        approve: Approve,
        #[command(flatten)]
        workspace: Workspace,
    },
    /// Serve another MCP server's tools on stdio with every result within a cap: oversized
    /// results are cut, kept whole as artifacts, and read back with read_artifact.
    Proxy(proxy::Proxy),
    /// Repair tool_use/tool_result pairing of a history (Anthropic messages JSON) and print it.
    Repair {
        /// The file to read, or - for standard input.
        input: String,
    },
    /// Microcompact old tool results of a history (Anthropic messages JSON) and print it.
    Compact {
        /// The file to read, or - for standard input.
        input: String,
        /// Tools whose results are never compacted.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "write_file,edit_file,run_command"
        )]
        preserve: Vec<String>,
    },
    /// Show the registry at work: a batch of parallel calls over the workspace that overflows
    /// its budget, with the split, the refusals, the trims, the markers and the artifacts.
    Demo {
        /// The batch budget in chars.
        #[arg(long, default_value_t = 24_000)]
        budget: usize,
        #[command(flatten)]
        workspace: Workspace,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Anthropic,
    Openai,
    Mcp,
    Gemini,
}

impl Format {
    fn dialect(self) -> Dialect {
        match self {
            Format::Anthropic => Dialect::Anthropic,
            Format::Openai => Dialect::OpenAiStrict,
            Format::Mcp => Dialect::Mcp,
            Format::Gemini => Dialect::Gemini,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Split {
    Even,
    Fair,
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
    match outcome {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("toolsmith: error: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

async fn run(command: Command) -> Result<ExitCode, Failure> {
    match command {
        Command::Schema { format, workspace } => {
            let (registry, _store) =
                registry(&workspace, BudgetPolicy::default(), ApprovalPolicy::new())?;
            let schemas = registry.schemas(format.dialect())?;
            println!("{}", serde_json::to_string_pretty(&schemas)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Call {
            tool,
            args,
            budget,
            json,
            approve,
            workspace,
        } => {
            let arguments: Value = serde_json::from_str(&args).map_err(|error| {
                fail(format!("the arguments are not valid JSON ({error}); pass an object such as '{{\"path\": \"README.md\"}}'"))
            })?;
            let policy = budget_policy(budget, Split::Fair)?;
            let (registry, _store) = registry(&workspace, policy, approve.policy())?;
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
                println!("{}", serde_json::to_string_pretty(&result_json(result))?);
            } else {
                print!("{}", result.content);
                if !result.content.ends_with('\n') {
                    println!();
                }
            }
            Ok(if result.is_error() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Batch {
            input,
            budget,
            split,
            approve,
            workspace,
        } => {
            let calls = read_calls(&input)?;
            let (registry, _store) =
                registry(&workspace, budget_policy(budget, split)?, approve.policy())?;
            let progress = show_progress(&registry);
            let results = registry.turn().execute(calls).await;
            drop(progress);
            let blocks: Vec<Value> = results
                .iter()
                .map(|r| {
                    let mut block = json!({
                        "type": "tool_result",
                        "tool_use_id": r.call_id,
                        "content": r.content,
                    });
                    if r.is_error() {
                        block["is_error"] = json!(true);
                    }
                    block
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&blocks)?);
            eprint!("{}", table(&results));
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve { approve, workspace } => {
            let (policy, asker) = match approve {
                Approve::Ask => {
                    let asker = toolsmith::mcp::ClientApprover::new(toolsmith::Rule::Deny);
                    let policy = ApprovalPolicy::new()
                        .for_others(toolsmith::Rule::Ask)
                        .with_approver(asker.clone());
                    (policy, Some(asker))
                }
                _ => (approve.policy(), None),
            };
            let (registry, _store) = registry(&workspace, BudgetPolicy::default(), policy)?;
            let mut server = toolsmith::mcp::McpServer::new(registry)?;
            if let Some(asker) = asker {
                server = server.with_client_approver(asker);
            }
            server.serve_stdio().await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Proxy(proxy) => {
            proxy.run().await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Repair { input } => {
            let (shape, mut messages) = read_history(&input)?;
            let report = history::repair(&mut messages);
            println!("{}", serde_json::to_string_pretty(&shape.write(messages)?)?);
            eprintln!("repair: {report}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Compact { input, preserve } => {
            let (shape, mut messages) = read_history(&input)?;
            let policy = CompactPolicy::default().preserving(preserve);
            let report = history::microcompact(&mut messages, &policy);
            println!("{}", serde_json::to_string_pretty(&shape.write(messages)?)?);
            eprintln!("compact: {report}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Demo { budget, workspace } => {
            let (registry, store) = registry(
                &workspace,
                budget_policy(Some(budget), Split::Fair)?,
                ApprovalPolicy::new(),
            )?;
            demo::run(&registry, &workspace.root, store.path(), budget).await?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn budget_policy(budget: Option<usize>, split: Split) -> Result<BudgetPolicy, Failure> {
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
fn artifact_store(artifacts: Option<&PathBuf>) -> Result<DirStore, Failure> {
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
fn registry(
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
fn show_progress(registry: &Registry) -> Option<tokio::task::JoinHandle<()>> {
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

/// A result with its figures.
fn result_json(result: &ToolResult) -> Value {
    let meta = &result.meta;
    let kept = meta.cut.as_ref().map(|cut| {
        let span = |s: Option<toolsmith::trim::LineSpan>| s.map(|s| json!([s.first, s.last]));
        json!({
            "chars": cut.kept_chars,
            "head_lines": span(cut.head_lines),
            "tail_lines": span(cut.tail_lines),
        })
    });
    json!({
        "call_id": result.call_id,
        "tool": result.tool,
        "is_error": result.is_error(),
        "content": result.content,
        "allowance": meta.allowance,
        "original_chars": meta.original_chars,
        "original_lines": meta.original_lines,
        "trimmed": meta.trimmed(),
        "kept": kept,
        "artifact": meta.artifact.as_ref().map(|id| id.as_str().to_owned()),
        "artifact_error": meta.artifact_error,
        "error_kind": meta.error_kind,
        "confinement": meta.confinement.map(toolsmith::Confinement::as_str),
    })
}

/// The per-call figures of a batch, one line each.
fn table(results: &[ToolResult]) -> String {
    let mut out = format!(
        "{:<14} {:<16} {:>9} {:>9} {:>9}  {}\n",
        "call", "tool", "allowance", "original", "kept", "artifact"
    );
    for r in results {
        out.push_str(&format!(
            "{:<14} {:<16} {:>9} {:>9} {:>9}  {}\n",
            r.call_id,
            r.tool,
            r.meta.allowance,
            r.meta.original_chars,
            r.content_chars(),
            match (&r.meta.artifact, r.is_error()) {
                (Some(id), _) => id.as_str().to_owned(),
                (None, true) => format!(
                    "(error: {})",
                    r.meta.error_kind.unwrap_or(toolsmith::ErrorKind::Failed)
                ),
                (None, false) => "-".to_owned(),
            }
        ));
    }
    out
}

fn read_input(input: &str) -> Result<String, Failure> {
    if input == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        return Ok(text);
    }
    std::fs::read_to_string(input).map_err(|error| fail(format!("{input}: {error}")))
}

/// Tool calls from an Anthropic assistant message or an array of `tool_use` blocks.
fn read_calls(input: &str) -> Result<Vec<ToolCall>, Failure> {
    let text = read_input(input)?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|error| fail(format!("{input}: not JSON ({error})")))?;
    let blocks: Vec<Block> = match value {
        Value::Array(_) => serde_json::from_value(value),
        Value::Object(ref map) if map.contains_key("content") => {
            serde_json::from_value::<Message>(value).map(|m| m.blocks().to_vec())
        }
        _ => {
            return Err(fail(format!(
                "{input}: expected an assistant message (an object with `content`) or an array of tool_use blocks"
            )));
        }
    }
    .map_err(|error| fail(format!("{input}: {error}")))?;
    let calls: Vec<ToolCall> = blocks
        .into_iter()
        .filter_map(|block| match block {
            Block::ToolUse(call) => Some(ToolCall::new(call.id, call.name, call.input)),
            _ => None,
        })
        .collect();
    if calls.is_empty() {
        return Err(fail(format!("{input}: no tool_use block found")));
    }
    Ok(calls)
}

/// How a history was given: a bare array of messages, or an object with `messages` (and maybe
/// `system`), which is written back the same way.
enum Shape {
    Array,
    Object(serde_json::Map<String, Value>),
}

impl Shape {
    fn write(self, messages: Vec<Message>) -> Result<Value, Failure> {
        let messages = serde_json::to_value(messages)?;
        Ok(match self {
            Shape::Array => messages,
            Shape::Object(mut map) => {
                map.insert("messages".to_owned(), messages);
                Value::Object(map)
            }
        })
    }
}

fn read_history(input: &str) -> Result<(Shape, Vec<Message>), Failure> {
    let text = read_input(input)?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|error| fail(format!("{input}: not JSON ({error})")))?;
    let (shape, messages) = match value {
        Value::Array(_) => (Shape::Array, value),
        Value::Object(mut map) => {
            let messages = map.remove("messages").ok_or_else(|| {
                fail(format!(
                    "{input}: expected an array of messages or an object with `messages`"
                ))
            })?;
            (Shape::Object(map), messages)
        }
        _ => return Err(fail(format!("{input}: expected an array of messages"))),
    };
    let messages: Vec<Message> = serde_json::from_value(messages)
        .map_err(|error| fail(format!("{input}: not Anthropic messages ({error})")))?;
    Ok((shape, messages))
}
