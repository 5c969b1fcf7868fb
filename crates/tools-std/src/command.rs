//! `run_command`: a shell command, its output streamed to the registry as it is written.

use std::io::{self, Read};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith::figures::DisplayDuration;
use toolsmith::process::ProcessTree;
use toolsmith::tool::{Audience, Tool, ToolContext, ToolError, ToolOutput};

use crate::confine::{CommandPolicy, Confinement, refusal, restrict_this_thread};
use crate::sandbox::Sandbox;
use crate::{ChunkStream, grouped};

/// The timeout when the call gives none.
const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// The longest timeout a call may ask for.
const MAX_TIMEOUT_SECS: u64 = 900;
/// How long to wait for the output to close after the command's process group is killed.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// The pipe buffer asked for, and the size of each read from it.
const PIPE_BYTES: i32 = 256 * 1024;
/// Chunks of output in flight between the pipe and the registry.
const CHUNKS_IN_FLIGHT: usize = 16;
/// How often a running command reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Runs a shell command in the workspace and returns its output and exit status.
///
/// The command runs with `sh -c` in the workspace root (or `cwd` inside it), with no input;
/// stdout and stderr are merged in the order they were written. The result is the output and
/// `[exit code: N]` on the last line; its line numbers are the output's own. A long output keeps its
/// beginning and, mostly, its end, where errors are; all of it stays readable with
/// read_artifact. At `timeout_secs` (default 120, at most 900) the command and everything it
/// started are killed; when it exits, whatever it left running in the background is killed too,
/// also processes that left its process group (`setsid`, `nohup … &`): nothing outlives the call.
#[derive(Debug, Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(
    state = Sandbox,
    name = "run_command",
    destructive,
    open_world,
    preserve,
    terminal_output,
    max_result_chars = 20_000,
    head_ratio = 0.2,
    timeout = "16m"
)]
pub struct RunCommand {
    /// The command line, as you would type it in a shell.
    pub command: String,
    /// Seconds before the command is killed. Defaults to 120; at most 900.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// The directory to run in, relative to the workspace root. Defaults to the root.
    #[serde(default)]
    pub cwd: Option<String>,
}

impl RunCommand {
    async fn run(self, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let sandbox = cx.state::<Sandbox>()?;
        let cwd = sandbox.resolve_existing(self.cwd.as_deref().unwrap_or("."))?;
        if !cwd.is_dir() {
            return Err(ToolError::invalid_arguments(format!(
                "cwd: `{}` is not a directory",
                sandbox.display(&cwd)
            )));
        }
        let secs = self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        if !(1..=MAX_TIMEOUT_SECS).contains(&secs) {
            return Err(ToolError::invalid_arguments(format!(
                "timeout_secs: {secs} is out of range; use 1 to {MAX_TIMEOUT_SECS}"
            )));
        }
        if self.command.trim().is_empty() {
            return Err(ToolError::invalid_arguments("command: is empty"));
        }
        let policy = cx.state::<CommandPolicy>().cloned().unwrap_or_default();
        run_streamed(
            &self.command,
            &cwd,
            sandbox.root(),
            &policy,
            Duration::from_secs(secs),
            cx,
        )
    }
}

/// How a command ended.
enum End {
    Exited(String),
    TimedOut(Duration),
    Cancelled,
    /// The registry stopped reading the output (its own timeout, a cancelled batch).
    Abandoned,
}

/// One item of the output stream.
type Item = Result<Vec<u8>, ToolError>;

/// Starts the command and returns its output as a stream: every chunk as the command writes
/// it, then the status. Nothing comes before the output: its line N is the result's and the
/// artifact's line N, the number a model reads in a marker and asks `read_artifact` for. A driver task waits for the command; when the stream
/// is dropped (nobody reads any more), the driver kills the command and all it started.
fn run_streamed(
    command: &str,
    cwd: &Path,
    root: &Path,
    policy: &CommandPolicy,
    timeout: Duration,
    cx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let (reader, writer) = io::pipe()?;
    let mut tree = ProcessTree::new();
    // A larger pipe means fewer wake-ups for a chatty command; the default (64 KiB) is kept
    // if the system refuses.
    let _ = nix::fcntl::fcntl(&reader, nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_BYTES));
    let temp = PrivateTemp::create(tree.tag())?;
    let mut shell = tokio::process::Command::new("sh");
    shell
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .env("TMPDIR", &temp.0)
        .kill_on_drop(true);
    tree.prepare(&mut shell);
    let mut writable = vec![root.to_path_buf(), temp.0.clone()];
    writable.extend(policy.writable.iter().cloned());
    let readable = policy
        .readable_paths(
            &[root.to_path_buf(), temp.0.clone()],
            cx.artifacts().and_then(|store| store.location()),
        )
        .map_err(ToolError::failed)?;
    let (spawned, confinement) = spawn_confined(shell, &writable, &readable, policy)?;
    let child = spawned.map_err(|error| {
        ToolError::failed_with(format!("`sh` could not be started: {error}"), error)
    })?;
    tree.started(&child);

    let (sender, receiver) = tokio::sync::mpsc::channel::<Item>(CHUNKS_IN_FLIGHT);
    let lines = Arc::new(AtomicUsize::new(0));
    let reading = {
        let sender = sender.clone();
        let lines = lines.clone();
        tokio::task::spawn_blocking(move || read_all(reader, &sender, &lines))
    };
    let footer = (confinement != Confinement::Full || !policy.network)
        .then(|| format!("[run_command: {}]\n", confinement.describe(policy.network)));
    tokio::spawn(drive(
        Driver {
            child,
            tree,
            temp,
            reading,
            lines,
            footer,
        },
        sender,
        timeout,
        cx.clone(),
    ));
    Ok(ToolOutput::stream(ChunkStream(receiver))
        .with_meta(crate::CONFINEMENT_META_KEY, confinement.level()))
}

/// What the driver owns while the command runs.
struct Driver {
    child: tokio::process::Child,
    /// The command's group and every process that left it: killed when the command ends, or
    /// when the driver is dropped.
    tree: ProcessTree,
    temp: PrivateTemp,
    reading: tokio::task::JoinHandle<io::Result<Option<u8>>>,
    lines: Arc<AtomicUsize>,
    footer: Option<String>,
}

/// Waits for the command, its timeout, the call's cancellation or the reader's departure;
/// kills what is left; drains the output; sends the status last.
async fn drive(
    mut run: Driver,
    sender: tokio::sync::mpsc::Sender<Item>,
    timeout: Duration,
    cx: ToolContext,
) {
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + timeout;
    let mut progress = tokio::time::interval(PROGRESS_EVERY);
    progress.tick().await;
    let end = loop {
        tokio::select! {
            status = run.child.wait() => break match status {
                Ok(status) => End::Exited(describe(status)),
                Err(error) => End::Exited(format!("the exit status could not be read ({error})")),
            },
            () = tokio::time::sleep_until(deadline) => break End::TimedOut(timeout),
            () = cx.cancelled() => break End::Cancelled,
            () = sender.closed() => break End::Abandoned,
            _ = progress.tick() => cx.progress(
                Audience::User,
                format!(
                    "running for {}, {} lines of output so far",
                    DisplayDuration(Duration::from_secs(started.elapsed().as_secs())),
                    grouped(run.lines.load(Ordering::Relaxed))
                ),
            ),
        }
    };
    run.tree.kill();
    if !matches!(end, End::Exited(_)) {
        let _ = run.child.wait().await;
    }
    run.tree.disarm();
    if matches!(end, End::Abandoned) {
        run.reading.abort();
        return;
    }

    let drained = tokio::time::timeout(DRAIN_GRACE, &mut run.reading).await;
    let (note, last_byte) = match drained {
        Ok(Ok(Ok(last_byte))) => (None, last_byte),
        Ok(Ok(Err(error))) => (
            Some(format!(
                "[run_command: reading the output failed: {error}]\n"
            )),
            None,
        ),
        Ok(Err(error)) => (
            Some(format!(
                "[run_command: reading the output failed: {error}]\n"
            )),
            None,
        ),
        Err(_) => {
            run.reading.abort();
            (
                Some(
                    "[run_command: a process the command started left its process group and \
                     still holds the output open; output after that point is not shown]\n"
                        .to_owned(),
                ),
                None,
            )
        }
    };
    let mut tail = String::new();
    if last_byte.is_some_and(|b| b != b'\n') {
        tail.push('\n');
    }
    if run.lines.load(Ordering::Relaxed) == 0 && last_byte.is_none() && note.is_none() {
        tail.push_str("(no output)\n");
    }
    tail.extend(note);
    tail.extend(run.footer.take());
    let last = match end {
        End::Exited(status) => {
            tail.push_str(&format!("[{status}]\n"));
            Ok(tail.into_bytes())
        }
        End::TimedOut(limit) => {
            let _ = sender.send(Ok(tail.into_bytes())).await;
            Err(ToolError::failed(format!(
                "killed: the command did not finish within {}; it and everything it started \
                 were stopped. The output until then is above.",
                DisplayDuration(limit)
            )))
        }
        End::Cancelled | End::Abandoned => {
            let _ = sender.send(Ok(tail.into_bytes())).await;
            Err(ToolError::Cancelled)
        }
    };
    let _ = sender.send(last).await;
    drop(run.temp);
}

fn spawn_confined(
    mut shell: tokio::process::Command,
    writable: &[std::path::PathBuf],
    readable: &[std::path::PathBuf],
    policy: &CommandPolicy,
) -> Result<(io::Result<tokio::process::Child>, Confinement), ToolError> {
    let runtime = tokio::runtime::Handle::current();
    let network = policy.network;
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let confinement = restrict_this_thread(writable, readable, network);
                if let Some(refusal) = refusal(policy, &confinement) {
                    return Err(ToolError::failed(refusal));
                }
                let _runtime = runtime.enter();
                Ok((shell.spawn(), confinement))
            })
            .join()
            .unwrap_or_else(|_| Err(ToolError::failed("the command's spawning thread failed")))
    })
}

/// The call's own temporary directory (`TMPDIR` of the command, writable under confinement),
/// removed with everything in it when the call ends.
struct PrivateTemp(std::path::PathBuf);

impl PrivateTemp {
    fn create(tag: &str) -> Result<Self, ToolError> {
        use std::os::unix::fs::DirBuilderExt as _;
        let dir = std::env::temp_dir().join(format!("toolsmith-cmd-{tag}"));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|error| {
                ToolError::failed_with(
                    format!(
                        "the command's temporary directory `{}` could not be created ({error})",
                        dir.display()
                    ),
                    error,
                )
            })?;
        Ok(PrivateTemp(dir))
    }
}

impl Drop for PrivateTemp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code: {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "exited".to_owned(),
    }
}

/// Reads the merged output to its end, sending each chunk as it is read; returns the last
/// byte read. Stops early, without error, when nobody receives any more.
fn read_all(
    mut reader: io::PipeReader,
    sender: &tokio::sync::mpsc::Sender<Item>,
    lines: &AtomicUsize,
) -> io::Result<Option<u8>> {
    let mut last_byte = None;
    loop {
        let mut buffer = vec![0u8; PIPE_BYTES as usize];
        let read = match reader.read(&mut buffer) {
            Ok(0) => return Ok(last_byte),
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        buffer.truncate(read);
        last_byte = buffer.last().copied();
        lines.fetch_add(
            memchr::memchr_iter(b'\n', &buffer).count(),
            Ordering::Relaxed,
        );
        if sender.blocking_send(Ok(buffer)).is_err() {
            return Ok(last_byte);
        }
    }
}
