//! The stdio transport of [`serve_stdio`](super::serve_stdio) and of the client's child
//! servers: one JSON-RPC message a line, each line bounded, every bad message answered.
//!
//! rmcp's own stdio transport drops a line over its limit without a word (the client then waits
//! forever for an answer) and routes a request without its required `params` to "method not
//! found". As a server, this transport answers both with the JSON-RPC error they call for; on
//! stdio it answers every request read before it reports the end of input (unless the client
//! closed its end of stdout: then calls still running are cancelled at once). As a client, it turns an answer over the limit into an error answer to the request it belongs to
//! ([`ANSWER_TOO_LARGE`]), so the call fails at once instead of at its timeout.

use std::sync::Arc;

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleClient, RoleServer};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio_util::sync::CancellationToken;

use crate::figures::grouped;
use crate::mcp::wire::{
    self, ANSWER_TOO_LARGE, ID_PREFIX_BYTES, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST,
    Lines, MAX_MESSAGE_BYTES, Next, PARSE_ERROR, id_in_prefix, missing_params,
};

/// Newline-delimited JSON-RPC over a reader and a writer, each line at most `max_line` bytes.
pub(crate) struct LineTransport<R, W> {
    lines: Lines<R>,
    write: Arc<tokio::sync::Mutex<W>>,
    /// Cancelled when the input ends (when draining: once every request read is answered).
    closed: CancellationToken,
    /// As a server that drains: the requests read and not yet answered.
    answering: Option<Arc<Answering>>,
    /// As a server: the error answers `receive` gave, each written by a task of its own.
    replies: tokio::task::JoinSet<()>,
    /// As a server: whether the session began (`initialize` was read, or a request that
    /// carries its protocol version inline). Before that, a notification or an answer means
    /// nothing and is dropped: rmcp would end the session on it, leaving what follows unread.
    begun: bool,
}

/// The requests a server read and has not answered yet, and whether answers can still be
/// written.
#[derive(Default)]
pub(crate) struct Answering {
    ids: std::sync::Mutex<std::collections::HashSet<String>>,
    changed: tokio::sync::Notify,
    /// Nothing more can be written: the client is gone.
    gone: std::sync::atomic::AtomicBool,
}

impl Answering {
    fn ids(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<String>> {
        crate::sync::lock(&self.ids)
    }

    fn read(&self, id: &impl serde::Serialize) {
        if let Ok(key) = serde_json::to_string(id) {
            self.ids().insert(key);
        }
    }

    fn answered(&self, key: &str) {
        self.ids().remove(key);
        self.changed.notify_waiters();
    }

    fn client_gone(&self) {
        self.gone.store(true, std::sync::atomic::Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Returns once every request read is answered, or the client is gone.
    async fn settled(&self) {
        loop {
            let changed = self.changed.notified();
            if self.gone.load(std::sync::atomic::Ordering::SeqCst) || self.ids().is_empty() {
                return;
            }
            changed.await;
        }
    }
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + Sync,
    W: AsyncWrite + Unpin + Send + Sync + 'static,
{
    pub(crate) fn new(read: R, write: W, closed: CancellationToken) -> Self {
        LineTransport {
            lines: Lines::new(read, MAX_MESSAGE_BYTES),
            write: Arc::new(tokio::sync::Mutex::new(write)),
            closed,
            answering: None,
            replies: tokio::task::JoinSet::new(),
            begun: false,
        }
    }

    /// As a server: at the end of the input, every request read is answered before the session
    /// ends (and `closed` is cancelled), unless `gone` resolves first (the client went away).
    pub(crate) fn draining(mut self, gone: impl Future<Output = ()> + Send + 'static) -> Self {
        let answering = Arc::new(Answering::default());
        let watching = Arc::downgrade(&answering);
        tokio::spawn(async move {
            gone.await;
            if let Some(answering) = watching.upgrade() {
                answering.client_gone();
            }
        });
        self.answering = Some(answering);
        self
    }

    /// Sets the longest line read, in bytes.
    pub(crate) fn with_max_line(mut self, bytes: usize) -> Self {
        self.lines.set_max_line(bytes);
        self
    }

    /// The next line that holds something, or an oversized line's first bytes; `None` at the
    /// end of the input, which also cancels `closed`.
    async fn next_line(&mut self) -> Option<Next> {
        let next = self.lines.next().await;
        if next.is_none() {
            // The error answers still being written, then the requests still running.
            while self.replies.join_next().await.is_some() {}
            if let Some(answering) = &self.answering {
                answering.settled().await;
            }
            self.closed.cancel();
        }
        next
    }

    /// Answers with a JSON-RPC error, written by a task of its own that the end of the input
    /// waits for. rmcp polls `receive` in a `select!` and drops it whenever another event wins;
    /// an answer written in place (waiting for the writer while a long result goes out, say)
    /// would go with it, and its request would never be answered.
    fn reply_error(&mut self, id: Value, code: i64, message: String) {
        while self.replies.try_join_next().is_some() {}
        let response = wire::error_answer(&id, code, message).into_bytes();
        let write = Arc::clone(&self.write);
        self.replies.spawn(async move {
            // A client that went away cannot be answered; the next read ends the session.
            let _ = write_bytes(&write, response).await;
        });
    }
}

async fn write_line<W: AsyncWrite + Unpin>(
    write: &tokio::sync::Mutex<W>,
    message: &impl serde::Serialize,
) -> std::io::Result<()> {
    write_bytes(write, serde_json::to_vec(message)?).await
}

/// Writes one message's bytes as a line.
async fn write_bytes<W: AsyncWrite + Unpin>(
    write: &tokio::sync::Mutex<W>,
    mut bytes: Vec<u8>,
) -> std::io::Result<()> {
    bytes.push(b'\n');
    let mut write = write.lock().await;
    write.write_all(&bytes).await?;
    write.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + Sync,
    W: AsyncWrite + Unpin + Send + Sync + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        let answer = self.answering.clone().and_then(|answering| {
            let id = match &item {
                rmcp::model::JsonRpcMessage::Response(response) => Some(&response.id),
                rmcp::model::JsonRpcMessage::Error(error) => error.id.as_ref(),
                _ => None,
            }?;
            Some((answering, serde_json::to_string(id).ok()?))
        });
        async move {
            let written = write_line(&write, &item).await;
            if let Some((answering, key)) = answer {
                if written.is_err() {
                    answering.client_gone();
                }
                answering.answered(&key);
            }
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        while let Some(next) = self.next_line().await {
            match next {
                Next::Oversized(prefix) => {
                    let message = format!(
                        "the message is over the server's limit of {} bytes and was not read; \
                         send smaller messages (large inputs belong in files)",
                        grouped(self.lines.max_line())
                    );
                    self.reply_error(id_in_prefix(&prefix), INVALID_REQUEST, message);
                }
                Next::Text(text) => {
                    let value: Value = match serde_json::from_slice(&text) {
                        Ok(value) => value,
                        Err(error) => {
                            let message = format!("parse error: the message is not JSON ({error})");
                            self.reply_error(Value::Null, PARSE_ERROR, message);
                            continue;
                        }
                    };
                    if let Some((id, message)) = missing_params(&value) {
                        self.reply_error(id, INVALID_PARAMS, message);
                        continue;
                    }
                    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
                        Ok(message) => {
                            let request =
                                matches!(message, rmcp::model::JsonRpcMessage::Request(_));
                            if !request && !self.begun {
                                tracing::debug!("dropped before the session began: {value}");
                                continue;
                            }
                            self.begun |= value["method"] == "initialize"
                                || !value["params"]["_meta"]
                                    ["io.modelcontextprotocol/protocolVersion"]
                                    .is_null();
                            if let Some(answering) = &self.answering {
                                note_read(answering, &message, &value);
                            }
                            return Some(message);
                        }
                        Err(error) => {
                            // A notification gets no answer; a request does.
                            if let Some(id) =
                                value.get("id").filter(|_| value.get("method").is_some())
                            {
                                let message = format!("invalid request: {error}");
                                self.reply_error(id.clone(), INVALID_REQUEST, message);
                            }
                        }
                    }
                }
            }
        }
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.closed.cancel();
        Ok(())
    }
}

/// Notes a request read (it is owed an answer), or a cancellation (the request it names is
/// owed none: rmcp drops it without a word).
fn note_read(answering: &Answering, message: &RxJsonRpcMessage<RoleServer>, value: &Value) {
    match message {
        rmcp::model::JsonRpcMessage::Request(request) => answering.read(&request.id),
        rmcp::model::JsonRpcMessage::Notification(_)
            if value["method"] == "notifications/cancelled" =>
        {
            if let Ok(key) = serde_json::to_string(&value["params"]["requestId"]) {
                answering.answered(&key);
            }
        }
        _ => {}
    }
}

/// A client's side of a server it started: what the server sends, bounded.
impl<R, W> Transport<RoleClient> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + Sync,
    W: AsyncWrite + Unpin + Send + Sync + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move { write_line(&write, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        while let Some(next) = self.next_line().await {
            match next {
                Next::Oversized(prefix) => {
                    // An answer names its request first (`{"jsonrpc":"2.0","id":7,…`): fail
                    // that request now. A notification over the limit is dropped.
                    let id = id_in_prefix(&prefix);
                    if id.is_null() {
                        continue;
                    }
                    let why = format!(
                        "the answer is over the client's limit of {} bytes and was not read",
                        grouped(self.lines.max_line())
                    );
                    if let Some(message) = failed_answer(id, why) {
                        return Some(message);
                    }
                }
                Next::Text(text) => {
                    let text = bounded_answer(text);
                    match serde_json::from_slice(&text) {
                        Ok(message) => return Some(message),
                        Err(error) => {
                            // An answer that cannot be read fails its request at once, when its
                            // id can be read; other stray output is skipped.
                            let id = id_in_prefix(&text[..text.len().min(ID_PREFIX_BYTES)]);
                            if id.is_null() {
                                continue;
                            }
                            let why =
                                format!("the server sent an answer that cannot be read ({error})");
                            if let Some(message) = failed_answer(id, why) {
                                return Some(message);
                            }
                        }
                    }
                }
            }
        }
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.closed.cancel();
        Ok(())
    }
}

/// The answer that fails request `id` at once, saying `why`.
fn failed_answer(id: Value, why: String) -> Option<RxJsonRpcMessage<RoleClient>> {
    serde_json::from_str(&wire::error_answer(&id, ANSWER_TOO_LARGE.into(), why)).ok()
}

/// Lines longer than this are read with care: a listing or a result of many small items is
/// cut to its caps before it becomes typed values (which cost many times their text).
const CAREFUL_BYTES: usize = 1 << 20;

/// An answer as the client's typed layer may read it: a large one with more content blocks
/// than [`MAX_BLOCKS`](super::caps::MAX_BLOCKS) keeps those and gets the rest as one text of
/// their JSON (a block a line, so nothing is lost: the registry cuts and stores it like any
/// text); one listing more tools than [`MAX_TOOLS_PER_SERVER`](super::caps::MAX_TOOLS_PER_SERVER)
/// keeps those. Anything else comes back as it was.
fn bounded_answer(line: Vec<u8>) -> Vec<u8> {
    use crate::mcp::wire::{self, bounded};
    if line.len() <= CAREFUL_BYTES {
        return line;
    }
    let wire::Received::Message(mut message) = wire::parse(&line) else {
        return line;
    };
    let Some(result) = message.result.take() else {
        return line;
    };
    let rewritten = if let Ok(call) = bounded::call_result(result.get(), super::caps::MAX_BLOCKS)
        && call.has_content
    {
        (call.beyond.0 > 0).then(|| {
            let mut object = serde_json::Map::new();
            let mut content = call.content;
            content.push(json!({
                "type": "text",
                "text": format!(
                    "[toolsmith: {} more content blocks, past the {} a result may carry, one a line:]\n{}",
                    grouped(call.beyond.0),
                    grouped(super::caps::MAX_BLOCKS),
                    call.beyond.1
                ),
            }));
            // The last blocks after them, as the end of a long text is kept.
            content.extend(call.tail);
            object.insert("content".to_owned(), Value::Array(content));
            if call.is_error {
                object.insert("isError".to_owned(), Value::Bool(true));
            }
            if let Some(structured) = call.structured {
                object.insert(
                    "structuredContent".to_owned(),
                    serde_json::from_str(structured.get()).unwrap_or(Value::Null),
                );
            }
            for (key, raw) in call.rest {
                object.insert(key, serde_json::from_str(raw.get()).unwrap_or(Value::Null));
            }
            Value::Object(object)
        })
    } else if let Ok(page) = bounded::page(result.get(), "tools", super::caps::MAX_TOOLS_PER_SERVER)
        && page.listed > page.items.len()
    {
        let mut object = serde_json::Map::new();
        object.insert("tools".to_owned(), Value::Array(page.items));
        Some(Value::Object(object))
    } else {
        None
    };
    match rewritten {
        Some(result) => {
            message.result = Some(wire::raw(&result));
            message.line().into_bytes()
        }
        None => line,
    }
}

/// A reader of standard input, boxed.
pub(crate) type StdRead = Box<dyn tokio::io::AsyncRead + Unpin + Send + Sync>;
/// A writer of standard output, boxed.
pub(crate) type StdWrite = Box<dyn tokio::io::AsyncWrite + Unpin + Send + Sync>;

/// The process's standard input and output as async streams. Where they are pipes (as an MCP
/// client starts its server), they are read and written by the runtime's reactor, so a message
/// crosses no thread; otherwise (a terminal, a file) through tokio's standard streams, which
/// use the blocking pool. Either pipe is then in non-blocking mode, shared with whatever else
/// holds the same end of it.
pub(crate) fn stdio() -> (StdRead, StdWrite) {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd as _;
        let read: StdRead = match std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .and_then(tokio::net::unix::pipe::Receiver::from_owned_fd)
        {
            Ok(pipe) => Box::new(pipe),
            Err(_) => Box::new(tokio::io::stdin()),
        };
        let write: StdWrite = match std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .and_then(tokio::net::unix::pipe::Sender::from_owned_fd)
        {
            Ok(pipe) => Box::new(pipe),
            Err(_) => Box::new(tokio::io::stdout()),
        };
        (read, write)
    }
    #[cfg(not(unix))]
    {
        (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
    }
}

/// Answers every request read on this process's stdin with a JSON-RPC error saying `why`, until
/// stdin ends: what a stdio server that could not be set up (its upstreams did not start) does,
/// so the client that started it reads the reason instead of a closed pipe.
///
/// Each request gets exactly one answer (`initialize` among them); notifications get none.
///
/// # Errors
///
/// When stdout cannot be written (the client went away).
pub async fn refuse_stdio(why: &str) -> std::io::Result<()> {
    let (read, mut write) = stdio();
    let mut lines = Lines::new(read, MAX_MESSAGE_BYTES);
    while let Some(next) = lines.next().await {
        let id = match next {
            Next::Oversized(prefix) => id_in_prefix(&prefix),
            Next::Text(text) => match serde_json::from_slice::<Value>(&text) {
                Ok(message) if message.get("method").is_some() => {
                    match message.get("id") {
                        Some(id) if !id.is_null() => id.clone(),
                        _ => continue, // a notification
                    }
                }
                Ok(_) => continue, // an answer: nothing was asked of this server
                Err(_) => Value::Null,
            },
        };
        let mut bytes = wire::error_answer(&id, INTERNAL_ERROR, why).into_bytes();
        bytes.push(b'\n');
        write.write_all(&bytes).await?;
        write.flush().await?;
    }
    Ok(())
}

/// How often [`stdout_gone`] looks.
const GONE_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// Resolves once nothing written to stdout can be read any more: the pipe's reader closed it
/// (the client went away). Never, when stdout is not a pipe (a terminal, a file).
pub(crate) async fn stdout_gone() {
    #[cfg(unix)]
    {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        use std::os::fd::AsFd as _;
        use std::os::unix::fs::FileTypeExt as _;
        let stdout = std::io::stdout();
        let is_pipe = stdout
            .as_fd()
            .try_clone_to_owned()
            .map(std::fs::File::from)
            .and_then(|file| file.metadata())
            .is_ok_and(|metadata| metadata.file_type().is_fifo());
        if is_pipe {
            loop {
                let mut fds = [PollFd::new(stdout.as_fd(), PollFlags::empty())];
                // POLLERR (the reader closed its end) is reported without being asked for.
                if poll(&mut fds, PollTimeout::ZERO).is_ok()
                    && fds[0].revents().is_some_and(|events| {
                        events.intersects(PollFlags::POLLERR | PollFlags::POLLHUP)
                    })
                {
                    return;
                }
                tokio::time::sleep(GONE_EVERY).await;
            }
        }
    }
    std::future::pending::<()>().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncBufReadExt as _;

    /// rmcp polls `receive` in a `select!` and drops it whenever another event wins: an error
    /// answer `receive` was writing then (waiting for the writer while a long result goes out)
    /// is still written, and the end of the input waits for it.
    #[tokio::test]
    async fn an_error_answer_outlives_the_receive_that_wrote_it() {
        let input: &'static [u8] = b"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\"}\n";
        let (written, server_out) = tokio::io::duplex(1 << 16);
        let mut transport = LineTransport::new(input, server_out, CancellationToken::new())
            .draining(std::future::pending());
        // Another answer holds the writer.
        let busy = Arc::clone(&transport.write).lock_owned().await;
        tokio::select! {
            biased;
            message = Transport::<RoleServer>::receive(&mut transport) => {
                panic!("a request without params reached rmcp: {message:?}")
            }
            () = tokio::task::yield_now() => {}
        }
        drop(busy);
        let end = Transport::<RoleServer>::receive(&mut transport).await;
        assert!(end.is_none(), "the input held one line: {end:?}");
        drop(transport);
        let mut lines = tokio::io::BufReader::new(written).lines();
        let answer = lines
            .next_line()
            .await
            .unwrap()
            .expect("the request was answered");
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["id"], 11, "{answer}");
        assert_eq!(answer["error"]["code"], INVALID_PARAMS, "{answer}");
        assert!(
            lines.next_line().await.unwrap().is_none(),
            "one answer only"
        );
    }
}
