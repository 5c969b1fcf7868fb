//! An MCP server run as a child process: started in a process tree of its own, its stdin and
//! stdout piped, its stderr forwarded with its tail kept to say why it ended; killed, with
//! everything it started, when dropped. The client and the proxy both start their servers here.

use std::sync::Arc;
use std::time::Duration;

/// A server's process and the tree of processes it started: killed, all of them, when dropped.
#[derive(Debug)]
pub(crate) struct Process {
    child: tokio::process::Child,
    /// The command, for messages.
    command: String,
    /// The last lines the server wrote on stderr, for the message that says why it ended.
    last_words: Arc<std::sync::Mutex<LastWords>>,
    #[cfg(unix)]
    _tree: crate::process::ProcessTree,
}

/// How many bytes of a server's stderr are kept to say why it ended.
const LAST_WORDS: usize = 2048;

/// The tail of a server's stderr: at most [`LAST_WORDS`] bytes.
#[derive(Debug, Default)]
struct LastWords(std::collections::VecDeque<u8>);

impl LastWords {
    fn push(&mut self, bytes: &[u8]) {
        self.0.extend(bytes);
        let over = self.0.len().saturating_sub(LAST_WORDS);
        self.0.drain(..over);
    }

    /// The last non-empty lines, joined, at most 300 chars.
    fn said(&self) -> Option<String> {
        let bytes: Vec<u8> = self.0.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect();
        let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
        if tail.is_empty() {
            return None;
        }
        let chars = tail.chars().count();
        Some(if chars > 300 {
            let skip = chars - 300;
            format!("…{}", tail.chars().skip(skip).collect::<String>())
        } else {
            tail
        })
    }
}

impl Process {
    /// Whether the process has exited (a server waiting in a warm pool that died there).
    pub(crate) fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Why the server stopped talking, in words: its exit status once it exited (waiting up to
    /// a second for it) and the last lines it wrote on stderr.
    pub(crate) async fn why_it_ended(&mut self) -> String {
        let status = tokio::time::timeout(Duration::from_secs(1), self.child.wait()).await;
        let mut why = match status {
            Ok(Ok(status)) => match status.code() {
                Some(code) => format!("`{}` exited with status {code}", self.command),
                None => format!("`{}` was killed ({status})", self.command),
            },
            _ => format!("`{}` closed its stdout", self.command),
        };
        // The stderr forwarder may still be reading what the server wrote last.
        tokio::task::yield_now().await;
        let said = crate::sync::lock(&self.last_words).said();
        if let Some(said) = said {
            why.push_str("; its stderr ended with: ");
            why.push_str(&said);
        }
        why
    }
}

/// Copies a server's stderr to this process's, keeping its tail; a write that fails (our
/// stderr closed) is dropped, so the server never dies of a broken pipe that is not its own.
fn forward_stderr(
    mut stderr: tokio::process::ChildStderr,
    last_words: Arc<std::sync::Mutex<LastWords>>,
) {
    use std::io::Write as _;
    use tokio::io::AsyncReadExt as _;
    tokio::spawn(async move {
        let mut buffer = vec![0u8; 8192];
        while let Ok(read) = stderr.read(&mut buffer).await {
            if read == 0 {
                break;
            }
            let chunk = &buffer[..read];
            crate::sync::lock(&last_words).push(chunk);
            let _ = std::io::stderr().write_all(chunk);
        }
    });
}

/// Starts a server's command in a process tree of its own, its stdin and stdout piped, its
/// stderr this process's.
pub(crate) fn spawn(
    command: &str,
    args: &[String],
    env: &std::collections::BTreeMap<String, String>,
    cwd: Option<&std::path::Path>,
) -> Result<
    (
        Process,
        tokio::process::ChildStdout,
        tokio::process::ChildStdin,
    ),
    std::io::Error,
> {
    let mut process = tokio::process::Command::new(command);
    process
        .args(args)
        .envs(env)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    let mut tree = crate::process::ProcessTree::new();
    #[cfg(unix)]
    tree.prepare(&mut process);
    if let Some(cwd) = cwd {
        process.current_dir(cwd);
    }
    let mut child = process.spawn()?;
    // From here, a failure drops the tree: the server and all it started are killed.
    #[cfg(unix)]
    tree.started(&child);
    let last_words = Arc::new(std::sync::Mutex::new(LastWords::default()));
    if let Some(stderr) = child.stderr.take() {
        forward_stderr(stderr, Arc::clone(&last_words));
    }
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(std::io::Error::other("it gave no pipes to talk on"));
    };
    Ok((
        Process {
            child,
            command: std::iter::once(command)
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            last_words,
            #[cfg(unix)]
            _tree: tree,
        },
        stdout,
        stdin,
    ))
}
