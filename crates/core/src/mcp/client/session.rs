//! One session with a server: starting it (a child process, or an HTTP endpoint), initializing
//! it within the init timeout, and starting it again after it died.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::service::{RoleClient, RunningService};
use tokio_util::sync::CancellationToken;

use super::McpClientError;
use super::builder::Target;
use super::progress::{Handler, Progress, Routed};
use crate::mcp::transport::LineTransport;
use crate::tool::ToolError;

/// The shared state of a client and its tools.
pub(super) struct Inner {
    pub(super) name: String,
    pub(super) target: Target,
    pub(super) init_timeout: Duration,
    pub(super) max_message_bytes: usize,
    /// Where each running call's progress goes, by the progress token of its request.
    pub(super) progress: Progress,
    /// The live session, if any: `None` before the first connect after the server died.
    pub(super) session: tokio::sync::Mutex<Option<Arc<Session>>>,
}

/// One session with the server: the service and, for a command, its process.
pub(super) struct Session {
    pub(super) service: RunningService<RoleClient, Handler>,
    /// The server's process (killed on drop) and, on Unix, everything it started (`npx` starts
    /// node, which starts the server; a server may `setsid` a helper): killed when the session
    /// ends.
    pub(super) _process: Option<Process>,
}

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

impl Inner {
    pub(super) fn handshake(&self, what: String) -> McpClientError {
        McpClientError::Handshake {
            server: self.name.clone(),
            what,
        }
    }

    /// Starts the server and initializes a session, within the init timeout.
    pub(super) async fn start(&self) -> Result<Session, McpClientError> {
        let handler = Handler {
            progress: Arc::clone(&self.progress),
        };
        let timeout = self.init_timeout;
        let late = || {
            self.handshake(format!(
                "did not answer `initialize` within {}",
                seconds(timeout)
            ))
        };
        match &self.target {
            Target::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let (mut process, stdout, stdin) =
                    spawn_server(&self.name, command, args, env, cwd.as_deref())?;
                let transport = Routed {
                    inner: LineTransport::new(stdout, stdin, CancellationToken::new())
                        .with_max_line(self.max_message_bytes),
                    progress: Arc::clone(&handler.progress),
                };
                let service = match tokio::time::timeout(timeout, handler.serve(transport)).await {
                    Ok(Ok(service)) => service,
                    Ok(Err(error)) => {
                        // rmcp's error names its transport's types; the process says why.
                        tracing::debug!(server = %self.name, "initialize failed: {error}");
                        let why = process.why_it_ended().await;
                        return Err(
                            self.handshake(format!("ended before it was initialized: {why}"))
                        );
                    }
                    Err(_) => return Err(late()),
                };
                Ok(Session {
                    service,
                    _process: Some(process),
                })
            }
            #[cfg(feature = "mcp-http")]
            Target::Http { url, headers } => {
                let mut custom = std::collections::HashMap::new();
                for (key, value) in headers {
                    let name = http::HeaderName::try_from(key.as_str()).map_err(|error| {
                        self.handshake(format!(
                            "has a header name `{key}` that is not valid ({error})"
                        ))
                    })?;
                    let value = http::HeaderValue::try_from(value.as_str()).map_err(|error| {
                        self.handshake(format!(
                            "has a value of header `{key}` that is not valid ({error})"
                        ))
                    })?;
                    custom.insert(name, value);
                }
                let config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom);
                let transport = Routed {
                    inner: rmcp::transport::StreamableHttpClientTransport::from_config(config),
                    progress: Arc::clone(&handler.progress),
                };
                match tokio::time::timeout(timeout, handler.serve(transport)).await {
                    Ok(Ok(service)) => Ok(Session {
                        service,
                        _process: None,
                    }),
                    Ok(Err(error)) => {
                        Err(self.handshake(format!("ended before it was initialized ({error})")))
                    }
                    Err(_) => Err(late()),
                }
            }
        }
    }

    /// The live session, started anew if the server died.
    pub(super) async fn session(&self) -> Result<Arc<Session>, ToolError> {
        let mut slot = self.session.lock().await;
        if let Some(session) = slot.as_ref()
            && !session.service.is_closed()
            && !session.service.peer().is_transport_closed()
        {
            return Ok(Arc::clone(session));
        }
        *slot = None;
        let session = Arc::new(self.start().await.map_err(|error| {
            ToolError::failed(format!("{error}; the next call tries to start it again"))
        })?);
        *slot = Some(Arc::clone(&session));
        Ok(session)
    }

    /// Forgets `session` (if it is still the live one) after it failed mid-call, and the error
    /// the call gets.
    pub(super) async fn ended(&self, session: &Arc<Session>, tool: &str, why: &str) -> ToolError {
        let mut slot = self.session.lock().await;
        if slot.as_ref().is_some_and(|live| Arc::ptr_eq(live, session)) {
            *slot = None;
        }
        ToolError::failed(format!(
            "the MCP server `{}` ended while running `{tool}` ({why}); the next call starts it again",
            self.name
        ))
    }
}

/// Starts a server's command in a process tree of its own, its stdin and stdout piped, its
/// stderr this process's.
pub(crate) fn spawn_server(
    server: &str,
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
    McpClientError,
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
    let mut child = process.spawn().map_err(|source| McpClientError::Spawn {
        server: server.to_owned(),
        command: command.to_owned(),
        source,
    })?;
    // From here, a failure drops the tree: the server and all it started are killed.
    #[cfg(unix)]
    tree.started(&child);
    let last_words = Arc::new(std::sync::Mutex::new(LastWords::default()));
    if let Some(stderr) = child.stderr.take() {
        forward_stderr(stderr, Arc::clone(&last_words));
    }
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(McpClientError::Handshake {
            server: server.to_owned(),
            what: "gave no pipes to talk on".to_owned(),
        });
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

pub(crate) fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}
