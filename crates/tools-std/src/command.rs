//! `run_command`: a shell command, its output captured in bounded memory.

use std::io::{self, Read, Write as _};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith::trim::{Continuation, FullOutput, Totals, assemble, marker_reserve};
use toolsmith::{
    ArtifactWriter, Audience, READ_ARTIFACT, Tool, ToolContext, ToolError, ToolOutput,
};

use crate::confine::{CommandPolicy, Confinement, readable_around, restrict_this_thread};
use crate::grouped;
use crate::reaper::{CallTag, TAG_VARIABLE};
use crate::sandbox::Sandbox;

/// The timeout when the call gives none.
const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// The longest timeout a call may ask for.
const MAX_TIMEOUT_SECS: u64 = 900;
/// Chars kept free for the command line and status at the top of the result.
const HEADER_RESERVE: usize = 300;
/// The share of the kept output taken from the beginning: errors come last.
const HEAD_RATIO: f64 = 0.2;
/// The tool's line limit, split like the chars.
const MAX_LINES: usize = 200;
/// How long to wait for the output to close after the command's process group is killed.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// The pipe buffer asked for, and the size of each read from it.
const PIPE_BYTES: i32 = 256 * 1024;
/// How often a running command reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Runs a shell command in the workspace and returns its exit status and output.
///
/// The command runs with `sh -c` in the workspace root (or `cwd` inside it), with no input;
/// stdout and stderr are merged in the order they were written. A long output keeps its
/// beginning and, mostly, its end, where errors are; all of it stays readable with
/// read_artifact. At `timeout_secs` (default 120, at most 900) the command and everything it
/// started are killed; when it exits, whatever it left running in the background is killed too,
/// also processes that left its process group (`setsid`, `nohup … &`): nothing outlives the call.
#[derive(Debug, Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(
    name = "run_command",
    destructive,
    open_world,
    preserve,
    max_result_chars = 20_000,
    max_result_lines = 200,
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
        let run = run_captured(
            &self.command,
            &cwd,
            sandbox.root(),
            &policy,
            Duration::from_secs(secs),
            cx,
        )
        .await?;
        let status = match &run.end {
            End::Exited(code) => code.clone(),
            End::TimedOut => format!(
                "killed: the command did not finish within {secs}s; it and everything it started \
                 were stopped. Output until then:"
            ),
            End::Cancelled => "killed: the call was cancelled; output until then:".to_owned(),
        };
        let shown_command: String = self.command.chars().take(200).collect();
        let ellipsis = if self.command.chars().count() > 200 {
            "…"
        } else {
            ""
        };
        let mut out = format!("$ {shown_command}{ellipsis}\n{status}\n");
        if run.output.is_empty() {
            out.push_str("(no output)\n");
        } else {
            out.push_str(&run.output);
        }
        if let Some(note) = run.note {
            out.push_str(&note);
        }
        // Full confinement with the network on is the norm and goes unsaid.
        if run.confinement != Confinement::Full || !policy.network {
            out.push_str(&format!(
                "[run_command: {}]\n",
                run.confinement.describe(policy.network)
            ));
        }
        match run.end {
            End::Exited(_) => Ok(ToolOutput::text(out).with_confinement(run.confinement.level())),
            End::TimedOut => Err(ToolError::failed(out)),
            End::Cancelled => Err(ToolError::Cancelled),
        }
    }
}

/// How a command ended.
enum End {
    /// It exited; the status line (`exit code: 0`, `killed by signal 9`).
    Exited(String),
    /// Its timeout passed.
    TimedOut,
    /// The call was cancelled.
    Cancelled,
}

/// A finished run: how it ended and the output as the model will see it.
pub(crate) struct Run {
    end: End,
    output: String,
    note: Option<String>,
    confinement: Confinement,
}

/// Runs `command`, capturing its merged output in memory bounded by the call's budget and
/// spooling all of it to the registry's artifact store, if there is one.
async fn run_captured(
    command: &str,
    cwd: &Path,
    root: &Path,
    policy: &CommandPolicy,
    timeout: Duration,
    cx: &ToolContext,
) -> Result<Run, ToolError> {
    let (reader, writer) = io::pipe()?;
    let tag = CallTag::new();
    // A larger pipe means fewer context switches between the command and the reader; the
    // default (64 KiB) is kept if the system refuses.
    let _ = nix::fcntl::fcntl(&reader, nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_BYTES));
    let temp = PrivateTemp::create(tag.value())?;
    let mut shell = tokio::process::Command::new("sh");
    shell
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .env(TAG_VARIABLE, tag.value())
        .env("TMPDIR", &temp.0)
        .process_group(0)
        .kill_on_drop(true);
    let mut writable = vec![root.to_path_buf(), temp.0.clone()];
    writable.extend(policy.writable.iter().cloned());
    let readable = readable_around(cx.artifacts().and_then(|store| store.location()));
    let (spawned, confinement) = spawn_confined(shell, &writable, &readable, policy)?;
    let mut child = spawned.map_err(|error| {
        ToolError::failed_with(format!("`sh` could not be started: {error}"), error)
    })?;
    // The command above owned the write ends; they are closed now, so the reader sees the end
    // of the output when the command's processes are gone.
    let mut group = GroupKill {
        pgid: child.id().and_then(|id| i32::try_from(id).ok()),
        shell: child.id(),
        tag: Some(tag),
    };

    let capture = Arc::new(Mutex::new(Capture::new(cx.budget(), cx)));
    let lines = Arc::new(AtomicUsize::new(0));
    let reading = {
        let capture = capture.clone();
        let lines = lines.clone();
        tokio::task::spawn_blocking(move || read_all(reader, &capture, &lines))
    };

    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + timeout;
    let mut progress = tokio::time::interval(PROGRESS_EVERY);
    progress.tick().await;
    let end = loop {
        tokio::select! {
            status = child.wait() => break End::Exited(describe(status?)),
            () = tokio::time::sleep_until(deadline) => break End::TimedOut,
            () = cx.cancelled() => break End::Cancelled,
            _ = progress.tick() => cx.progress(
                Audience::User,
                format!(
                    "running for {}s, {} lines of output so far",
                    started.elapsed().as_secs(),
                    grouped(lines.load(Ordering::Relaxed))
                ),
            ),
        }
    };
    // Whatever is left of the command's process group goes: on a timeout all of it, after a
    // normal exit what it left running in the background.
    group.kill();
    if !matches!(end, End::Exited(_)) {
        let _ = child.wait().await;
    }
    group.disarm();

    let drained = tokio::time::timeout(DRAIN_GRACE, reading).await;
    let mut capture = std::mem::take(&mut *capture.lock().unwrap_or_else(PoisonError::into_inner));
    let note = match drained {
        Ok(Ok(Ok(()))) => None,
        Ok(Ok(Err(error))) => Some(format!(
            "[run_command: reading the output failed: {error}]\n"
        )),
        Ok(Err(error)) => Some(format!(
            "[run_command: reading the output failed: {error}]\n"
        )),
        Err(_) => {
            // A process left the group (setsid, a daemon) and holds the output open.
            capture.spool = None;
            Some(
                "[run_command: a process the command started left its process group and still \
                 holds the output open; output after that point is not shown]\n"
                    .to_owned(),
            )
        }
    };
    let output = tokio::task::spawn_blocking(move || capture.finish())
        .await
        .map_err(|error| ToolError::failed_with("the output could not be assembled", error))?;
    drop(temp);
    Ok(Run {
        end,
        output,
        note,
        confinement,
    })
}

/// Spawns `shell` from a thread of its own that first confines itself (see `confine`), so the
/// command and its descendants are confined and the host is not.
fn spawn_confined(
    mut shell: tokio::process::Command,
    writable: &[std::path::PathBuf],
    readable: &[std::path::PathBuf],
    policy: &CommandPolicy,
) -> Result<(io::Result<tokio::process::Child>, Confinement), ToolError> {
    let runtime = tokio::runtime::Handle::current();
    let network = policy.network;
    let required = policy.require_confinement;
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let confinement = restrict_this_thread(writable, readable, network);
                if required && confinement != Confinement::Full {
                    return Err(ToolError::failed(format!(
                        "the command was not run: the policy requires confinement, and it is {}",
                        confinement.describe(network)
                    )));
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

/// Kills a command's process group and every process carrying its call's tag (those that
/// left the group) when told to, or when dropped still armed (the call's future was dropped:
/// the registry's timeout, say), so no process outlives its call.
struct GroupKill {
    pgid: Option<i32>,
    /// The command's shell, reaped by its `Child`; never signalled by the tag sweep.
    shell: Option<u32>,
    tag: Option<CallTag>,
}

impl GroupKill {
    fn kill(&self) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is already empty) is the common, harmless case.
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        if let Some(tag) = &self.tag {
            tag.kill_all(self.shell);
        }
    }

    fn disarm(&mut self) {
        self.pgid = None;
        self.tag = None;
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Reads the merged output to its end into the capture, a chunk at a time.
fn read_all(
    mut reader: io::PipeReader,
    capture: &Mutex<Capture>,
    lines: &AtomicUsize,
) -> io::Result<()> {
    let mut buffer = vec![0u8; PIPE_BYTES as usize];
    loop {
        let read = match reader.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        let mut capture = capture.lock().unwrap_or_else(PoisonError::into_inner);
        capture.push(&buffer[..read]);
        lines.store(capture.totals.newlines, Ordering::Relaxed);
    }
}

/// The head and tail of a stream, its totals, and the spool of all of it.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    /// The last bytes after the head, up to `2 × tail_cap` before compaction.
    tail: Vec<u8>,
    tail_cap: usize,
    /// The byte just before `tail`'s first byte, once bytes have been dropped.
    before_tail: Option<u8>,
    dropped: u64,
    totals: Totals,
    last_byte: Option<u8>,
    spool: Option<Box<dyn ArtifactWriter>>,
    spool_error: Option<String>,
}

impl Capture {
    fn new(budget: usize, cx: &ToolContext) -> Self {
        let full = FullOutput::StoredCapped {
            id: "0123456789abcdef0123456789abcdef",
            reader: READ_ARTIFACT,
            omitted_bytes: 1 << 50,
        };
        let widest = Totals {
            chars: 1 << 50,
            lines: 1 << 50,
            newlines: 1 << 50,
        };
        let reserve = HEADER_RESERVE + marker_reserve(widest, &Continuation::from(full));
        let room = budget.saturating_sub(reserve);
        let head_cap = ((room as f64) * HEAD_RATIO) as usize;
        let (spool, spool_error) = match cx.artifacts().map(|store| store.begin()) {
            Some(Ok(writer)) => (Some(writer), None),
            Some(Err(error)) => (None, Some(error.to_string())),
            None => (None, None),
        };
        Capture {
            head_cap,
            tail_cap: room - head_cap,
            spool,
            spool_error,
            ..Capture::default()
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        self.totals.add_chunk(chunk);
        self.last_byte = chunk.last().copied().or(self.last_byte);
        if let Some(spool) = &mut self.spool
            && let Err(error) = spool.write_all(chunk)
        {
            self.spool_error = Some(error.to_string());
            self.spool = None;
        }
        let to_head = chunk.len().min(self.head_cap - self.head.len());
        self.head.extend_from_slice(&chunk[..to_head]);
        let rest = &chunk[to_head..];
        if rest.len() >= self.tail_cap {
            // The whole tail comes from this chunk: copy only what is kept.
            let keep_from = rest.len() - self.tail_cap;
            self.dropped += (self.tail.len() + keep_from) as u64;
            self.before_tail = match keep_from {
                0 => self.tail.last().copied().or(self.before_tail),
                _ => Some(rest[keep_from - 1]),
            };
            self.tail.clear();
            self.tail.extend_from_slice(&rest[keep_from..]);
        } else {
            self.tail.extend_from_slice(rest);
            if self.tail.len() > 2 * self.tail_cap.max(1024) {
                self.compact_tail();
            }
        }
    }

    fn compact_tail(&mut self) {
        if self.tail.len() > self.tail_cap {
            let excess = self.tail.len() - self.tail_cap;
            self.before_tail = Some(self.tail[excess - 1]);
            self.dropped += excess as u64;
            self.tail.drain(..excess);
        }
    }

    /// The output as the model sees it: all of it when nothing was dropped, else head, marker
    /// and tail. Commits the spool when it is needed, discards it when not.
    fn finish(mut self) -> String {
        self.compact_tail();
        self.totals.finish_lines(self.last_byte);
        if self.dropped == 0 {
            // Everything is here: the registry trims it if it must.
            drop(self.spool.take());
            let mut all = self.head;
            all.extend_from_slice(&self.tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        let omitted_bytes = self.spool.as_ref().map_or(0, |spool| spool.omitted_bytes());
        let stored = match self.spool.take().map(ArtifactWriter::commit) {
            Some(Ok(id)) => Ok(id),
            Some(Err(error)) => Err(error.to_string()),
            None => Err(self
                .spool_error
                .clone()
                .unwrap_or_else(|| "no artifact store is configured".to_owned())),
        };
        let full = match &stored {
            Ok(id) if omitted_bytes > 0 => FullOutput::StoredCapped {
                id: id.as_str(),
                reader: READ_ARTIFACT,
                omitted_bytes,
            },
            Ok(id) => FullOutput::Stored {
                id: id.as_str(),
                reader: READ_ARTIFACT,
            },
            Err(reason) if self.spool_error.is_some() => FullOutput::Failed { reason },
            Err(_) => FullOutput::NotKept,
        };
        let head_lines = ((MAX_LINES as f64) * HEAD_RATIO) as usize;
        let head = head_part(&self.head, head_lines);
        let (tail, tail_starts_line) =
            tail_part(&self.tail, self.before_tail, MAX_LINES - head_lines - 3);
        assemble(&head, &tail, tail_starts_line, self.totals, &full.into())
            .into_text()
            .into_owned()
    }
}

/// The head as text: whole chars, ending at a line break within its last quarter if there is
/// one, at most `max_lines` lines.
fn head_part(bytes: &[u8], max_lines: usize) -> String {
    let valid = match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(error) if error.error_len().is_none() => error.valid_up_to(),
        Err(_) => bytes.len(),
    };
    let mut end = valid;
    let window = valid / 4;
    if let Some(at) = memchr::memrchr(b'\n', &bytes[valid - window..valid]) {
        end = valid - window + at + 1;
    }
    if let Some(at) = memchr::memchr_iter(b'\n', &bytes[..end]).nth(max_lines.saturating_sub(1)) {
        end = end.min(at + 1);
    }
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// The tail as text: whole chars, starting after a line break within its first quarter if there
/// is one, at most `max_lines` lines; and whether it starts a line.
fn tail_part(bytes: &[u8], before: Option<u8>, max_lines: usize) -> (String, bool) {
    let mut start = bytes
        .iter()
        .position(|&b| (b & 0xC0) != 0x80)
        .unwrap_or(bytes.len());
    let mut starts_line = start == 0 && before.is_none_or(|b| b == b'\n');
    let window = (bytes.len() - start) / 4;
    if !starts_line && let Some(at) = memchr::memchr(b'\n', &bytes[start..start + window]) {
        start += at + 1;
        starts_line = true;
    }
    let body = &bytes[start..];
    let trimmed_end = body.strip_suffix(b"\n").unwrap_or(body);
    if let Some(at) = memchr::memrchr_iter(b'\n', trimmed_end).nth(max_lines.saturating_sub(1)) {
        start += at + 1;
        starts_line = true;
    }
    (
        String::from_utf8_lossy(&bytes[start..]).into_owned(),
        starts_line,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_ends_at_a_line_break_and_a_whole_char() {
        // 17 bytes: the last quarter (4 bytes) holds a line break, so the head ends after it.
        assert_eq!(head_part(b"one\ntwo\nthree\nfo", 10), "one\ntwo\nthree\n");
        // No line break in the last quarter: the cut stays, on a whole char.
        assert_eq!(head_part(b"one\ntwo\nthr", 10), "one\ntwo\nthr");
        let cut_char = "abcdefgh é".as_bytes();
        assert_eq!(head_part(&cut_char[..10], 10), "abcdefgh ");
        assert_eq!(head_part(b"a\nb\nc\nd\n", 2), "a\nb\n");
    }

    #[test]
    fn tail_starts_after_a_line_break_and_at_a_whole_char() {
        // The first quarter (4 bytes) holds a line break: the tail starts after it.
        let text = b"x\nlast line here\n";
        assert_eq!(
            tail_part(text, Some(b'y'), 10),
            ("last line here\n".to_owned(), true)
        );
        // A tail that starts inside a char skips to the next whole one.
        let text = "é tail without a break".as_bytes();
        assert_eq!(
            tail_part(&text[1..], Some(0xC3), 10),
            (" tail without a break".to_owned(), false)
        );
        assert_eq!(
            tail_part(b"a\nb\nc\n", Some(b'\n'), 2),
            ("b\nc\n".to_owned(), true)
        );
    }
}
