//! A link carries JSON-RPC messages as they are to and from one peer: over newline-delimited
//! JSON (stdio, a child process) or streamable HTTP. A message is read into its envelope — its
//! id, its method, and its `params`, `result` or `error` kept as the raw JSON they were — so
//! what the relay passes on is passed byte for byte, what it does not know is never lost, and
//! what it reads it reads once, bounded, only where it must.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::mpsc;

use crate::mcp::transport::{ID_PREFIX_BYTES, Lines, Next, id_in_prefix};
use crate::trim::grouped;

/// How many messages wait in each direction before a sender waits.
#[cfg(feature = "mcp-http")]
pub(crate) const QUEUE: usize = 256;

/// A piece of JSON as it was written.
pub(crate) type Raw = Box<RawValue>;

/// A JSON-RPC message: a request (`id` and `method`), a notification (`method`), or an answer
/// (`id` and `result` or `error`), its parts kept raw.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Message {
    #[serde(default = "version")]
    pub(crate) jsonrpc: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) id: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) params: Option<Raw>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<Raw>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<Raw>,
}

fn version() -> String {
    "2.0".to_owned()
}

impl Message {
    /// The message as one line of JSON.
    pub(crate) fn line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Its `params`, read as a value (`null` when there are none).
    #[cfg(feature = "mcp-http")]
    pub(crate) fn params_value(&self) -> Value {
        self.params
            .as_deref()
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or(Value::Null)
    }
}

/// `value` as raw JSON.
pub(crate) fn raw(value: &Value) -> Raw {
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| null())
}

/// Raw `null`.
pub(crate) fn null() -> Raw {
    RawValue::from_string("null".to_owned()).expect("null is JSON")
}

/// What came from the peer: a message, or one that could not be read (over the size limit,
/// not JSON, not UTF-8, nested too deep), with the id it named if it could be found.
#[derive(Debug)]
pub(crate) enum Received {
    Message(Message),
    Unreadable {
        /// The id of the request or answer, when its first bytes name one; `null` otherwise.
        id: Value,
        /// The JSON-RPC error code it calls for (parse error, invalid request).
        code: i64,
        /// Why, in words.
        why: String,
    },
}

/// The two directions of a link; what goes out is one message a string, one line of JSON.
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) incoming: Source,
    pub(crate) outgoing: Sink,
}

impl Link {
    /// The link's peer is known to be gone once `gone` resolves (a stdio client that closed its
    /// end of stdout), before any write fails: [`Sink::closed`] resolves then.
    pub(crate) fn gone_when(self, gone: impl Future<Output = ()> + Send + 'static) -> Self {
        if let Sink::Writer(writer) = &self.outgoing {
            let seen = writer.gone.clone();
            tokio::spawn(async move {
                tokio::select! {
                    () = gone => seen.cancel(),
                    // The link ended first: nothing to watch.
                    () = seen.cancelled() => {}
                }
            });
        }
        self
    }
}

/// Where a link's messages come from: lines read by whoever asks for the next message (no task
/// between the bytes and the reader), or a channel another task fills (an HTTP transport).
pub(crate) enum Source {
    Lines(Lines<Box<dyn AsyncRead + Unpin + Send>>),
    Channel(mpsc::Receiver<Received>),
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Source::Lines(_) => "Source::Lines",
            Source::Channel(_) => "Source::Channel",
        })
    }
}

impl From<mpsc::Receiver<Received>> for Source {
    fn from(channel: mpsc::Receiver<Received>) -> Self {
        Source::Channel(channel)
    }
}

impl Source {
    /// The next message, or `None` once the peer ended.
    pub(crate) async fn recv(&mut self) -> Option<Received> {
        match self {
            Source::Channel(channel) => channel.recv().await,
            Source::Lines(lines) => Some(match lines.next().await? {
                Next::Text(line) => parse_owned(line),
                Next::Oversized(prefix) => Received::Unreadable {
                    id: id_in_prefix(&prefix),
                    code: crate::mcp::transport::INVALID_REQUEST,
                    why: format!(
                        "the message is over the limit of {} bytes and was not read",
                        grouped(lines.max_line())
                    ),
                },
            }),
        }
    }
}

/// Where a link's messages go: written by the sender itself, one at a time (no task between
/// the sender and the bytes), or into a channel another task drains (an HTTP transport).
#[derive(Debug, Clone)]
pub(crate) enum Sink {
    Writer(Arc<Writer>),
    Channel(mpsc::Sender<String>),
}

impl From<mpsc::Sender<String>> for Sink {
    fn from(channel: mpsc::Sender<String>) -> Self {
        Sink::Channel(channel)
    }
}

/// The peer is gone: nothing more can be sent to it.
#[derive(Debug)]
pub(crate) struct Closed;

impl Sink {
    /// Sends one message (one line of JSON, without its newline).
    pub(crate) async fn send(&self, line: String) -> Result<(), Closed> {
        match self {
            Sink::Channel(channel) => channel.send(line).await.map_err(|_| Closed),
            Sink::Writer(writer) => writer.write(line).await,
        }
    }

    /// Whether the peer is gone.
    pub(crate) fn is_closed(&self) -> bool {
        match self {
            Sink::Channel(channel) => channel.is_closed(),
            Sink::Writer(writer) => {
                writer.closed.load(Ordering::Acquire) || writer.gone.is_cancelled()
            }
        }
    }

    /// Resolves when the peer is known to be gone: a channel's receiver dropped; for a byte
    /// stream, what [`Link::gone_when`] watches (else never: a stream tells only when a write
    /// fails).
    pub(crate) async fn closed(&self) {
        match self {
            Sink::Channel(channel) => channel.closed().await,
            Sink::Writer(writer) => writer.gone.cancelled().await,
        }
    }
}

/// A byte stream messages are written to, a whole line at a time. A line is never left half
/// written: if its sender stops waiting (its task is aborted, say) while the stream is full, the
/// rest of the line is written before anything else, by a task of its own.
pub(crate) struct Writer {
    state: tokio::sync::Mutex<Option<Stream>>,
    closed: AtomicBool,
    /// Cancelled when the reader is known to be gone without a write having failed.
    gone: tokio_util::sync::CancellationToken,
}

struct Stream {
    write: Box<dyn AsyncWrite + Unpin + Send>,
    /// The line being written, and how much of it is written.
    line: Vec<u8>,
    written: usize,
}

impl Stream {
    /// Writes what is left of the current line and flushes.
    async fn finish(&mut self) -> std::io::Result<()> {
        while self.written < self.line.len() {
            let n = self.write.write(&self.line[self.written..]).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            self.written += n;
        }
        // A long line's memory goes with it.
        self.line = Vec::new();
        self.written = 0;
        self.write.flush().await
    }
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

impl Writer {
    async fn write(self: &Arc<Self>, line: String) -> Result<(), Closed> {
        let mut guard = self.state.lock().await;
        let Some(stream) = guard.as_mut() else {
            return Err(Closed);
        };
        // Stopped mid-line, this finishes the line elsewhere.
        struct Unfinished(Option<Arc<Writer>>);
        impl Drop for Unfinished {
            fn drop(&mut self) {
                if let Some(writer) = self.0.take()
                    && let Ok(runtime) = tokio::runtime::Handle::try_current()
                {
                    runtime.spawn(async move {
                        let mut guard = writer.state.lock().await;
                        if let Some(stream) = guard.as_mut()
                            && stream.finish().await.is_err()
                        {
                            guard.take();
                            writer.closed.store(true, Ordering::Release);
                        }
                    });
                }
            }
        }
        let mut unfinished = Unfinished(Some(Arc::clone(self)));
        let mut written = stream.finish().await; // a line a stopped sender left
        if written.is_ok() {
            // The line and its newline in one write: the reader wakes once.
            let mut line = line.into_bytes();
            line.push(b'\n');
            stream.line = line;
            written = stream.finish().await;
        }
        unfinished.0 = None;
        if written.is_err() {
            guard.take();
            self.closed.store(true, Ordering::Release);
            return Err(Closed);
        }
        Ok(())
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // What `Link::gone_when` watches is no longer needed.
        self.gone.cancel();
        // Nothing more will be sent: the peer reads the end of its input (a pipe's end closes
        // when dropped; a stream shared with its reading half needs its shutdown).
        if let Some(mut stream) = self.state.get_mut().take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = stream.finish().await;
                let _ = stream.write.shutdown().await;
            });
        }
    }
}

/// A link over newline-delimited JSON: one message a line, each at most `max_line` bytes.
/// The link ends when `read` ends or `write` fails. Its messages are read by the task that asks
/// for them and written by the task that sends them: a message crosses no task of its own.
pub(crate) fn lines<R, W>(read: R, write: W, max_line: usize) -> Link
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let read: Box<dyn AsyncRead + Unpin + Send> = Box::new(read);
    let write: Box<dyn AsyncWrite + Unpin + Send> = Box::new(write);
    Link {
        incoming: Source::Lines(Lines::new(read, max_line)),
        outgoing: Sink::Writer(Arc::new(Writer {
            state: tokio::sync::Mutex::new(Some(Stream {
                write,
                line: Vec::new(),
                written: 0,
            })),
            closed: AtomicBool::new(false),
            gone: tokio_util::sync::CancellationToken::new(),
        })),
    }
}

/// A line this long or longer is read without copying its largest part (a large result).
const LARGE_LINE: usize = 1 << 20;

/// A message's envelope, its parts borrowed from the line.
#[derive(Deserialize)]
struct Borrowed<'a> {
    #[serde(default = "version")]
    jsonrpc: String,
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

/// One line as a message, as [`parse`] reads it; a large line's largest part (a 200 MB result)
/// is the line's own buffer, cut to it, not a copy: the line and its copy are never held at once.
pub(crate) fn parse_owned(line: Vec<u8>) -> Received {
    if line.len() < LARGE_LINE {
        return parse(&line);
    }
    // Which part is the largest, where it sits, and the rest of the message copied.
    let (mut message, which, start, end) = {
        let Ok(borrowed) = serde_json::from_slice::<Borrowed<'_>>(&line) else {
            return parse(&line);
        };
        let base = line.as_ptr() as usize;
        let parts = [borrowed.params, borrowed.result, borrowed.error];
        let Some((which, raw)) = parts
            .iter()
            .enumerate()
            .filter_map(|(which, raw)| Some((which, (*raw)?)))
            .max_by_key(|(_, raw)| raw.get().len())
        else {
            return parse(&line);
        };
        let start = raw.get().as_ptr() as usize - base;
        let owned = |at: usize| {
            if at == which {
                None
            } else {
                parts[at].map(RawValue::to_owned)
            }
        };
        let message = Message {
            jsonrpc: borrowed.jsonrpc,
            id: borrowed.id,
            method: borrowed.method,
            params: owned(0),
            result: owned(1),
            error: owned(2),
        };
        (message, which, start, start + raw.get().len())
    };
    let mut text = match String::from_utf8(line) {
        Ok(text) => text,
        Err(error) => return parse(error.as_bytes()),
    };
    text.truncate(end);
    text.drain(..start);
    let Ok(raw) = RawValue::from_string(text) else {
        return Received::Unreadable {
            id: message.id.unwrap_or(Value::Null),
            code: crate::mcp::transport::PARSE_ERROR,
            why: "the message is not JSON-RPC that can be read".to_owned(),
        };
    };
    match which {
        0 => message.params = Some(raw),
        1 => message.result = Some(raw),
        _ => message.error = Some(raw),
    }
    Received::Message(message)
}

/// One line as a message, or why it is not one (with its id, when its first bytes name one).
pub(crate) fn parse(line: &[u8]) -> Received {
    match serde_json::from_slice::<Message>(line) {
        Ok(message) => Received::Message(message),
        Err(error) => Received::Unreadable {
            id: id_in_prefix(&line[..line.len().min(ID_PREFIX_BYTES)]),
            code: crate::mcp::transport::PARSE_ERROR,
            why: format!("the message is not JSON-RPC that can be read ({error})"),
        },
    }
}

/// A JSON-RPC request.
pub(crate) fn request(id: &Value, method: &str, params: Option<Raw>) -> String {
    Message {
        jsonrpc: version(),
        id: Some(id.clone()),
        method: Some(method.to_owned()),
        params,
        ..Message::default()
    }
    .line()
}

/// A JSON-RPC notification.
pub(crate) fn notification(method: &str, params: Option<Raw>) -> String {
    Message {
        jsonrpc: version(),
        method: Some(method.to_owned()),
        params,
        ..Message::default()
    }
    .line()
}

/// A JSON-RPC answer: its result, or its error object as the peer sent it.
pub(crate) fn answer(id: &Value, outcome: Result<Raw, Raw>) -> String {
    let (result, error) = match outcome {
        Ok(result) => (Some(result), None),
        Err(error) => (None, Some(error)),
    };
    Message {
        jsonrpc: version(),
        id: Some(id.clone()),
        result,
        error,
        ..Message::default()
    }
    .line()
}

/// A JSON-RPC error object.
pub(crate) fn error(code: i64, message: impl Into<String>) -> Value {
    json!({ "code": code, "message": message.into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_cannot_be_read_names_its_id() {
        // Invalid UTF-8 is not JSON. (A lone surrogate and a deep nesting are JSON as written:
        // they pass as they came, and a result that holds one fails when it is read to be
        // fitted.)
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"text\":\"\xff\"}}";
        match parse(line) {
            Received::Unreadable { id, why, .. } => {
                assert_eq!(id, json!(7), "{why}");
                assert!(why.starts_with("the message is not JSON"), "{why}");
            }
            Received::Message(message) => panic!("read {message:?}"),
        }
    }

    #[test]
    fn a_message_passes_byte_for_byte() {
        let line = r#"{"jsonrpc":"2.0","id":3,"result":{"z":1,"a":[1.50,"\u00e9"]}}"#;
        let Received::Message(message) = parse(line.as_bytes()) else {
            panic!("read")
        };
        assert_eq!(
            message.result.as_deref().map(RawValue::get),
            Some(r#"{"z":1,"a":[1.50,"\u00e9"]}"#)
        );
        assert_eq!(message.line(), line);
    }

    #[tokio::test]
    async fn a_sender_stopped_mid_line_leaves_no_half_line() {
        use tokio::io::AsyncBufReadExt as _;
        // A pipe of 16 bytes: a long line fills it, and its sender is stopped mid-line.
        let (ours, theirs) = tokio::io::duplex(16);
        let (_, write) = tokio::io::split(ours);
        let link = lines(tokio::io::empty(), write, 1 << 20);
        let long = format!("{{\"text\":\"{}\"}}", "x".repeat(10_000));
        let sender = {
            let out = link.outgoing.clone();
            let long = long.clone();
            tokio::spawn(async move { out.send(long).await })
        };
        tokio::task::yield_now().await;
        sender.abort();
        let _ = sender.await;
        let after = tokio::spawn({
            let out = link.outgoing.clone();
            async move { out.send("{\"next\":1}".to_owned()).await }
        });
        let mut read = tokio::io::BufReader::new(theirs).lines();
        assert_eq!(
            read.next_line().await.unwrap().as_deref(),
            Some(long.as_str())
        );
        assert_eq!(
            read.next_line().await.unwrap().as_deref(),
            Some("{\"next\":1}")
        );
        after.await.unwrap().unwrap();
    }

    #[test]
    fn a_large_line_reads_as_a_small_one_does() {
        let text = "é\\n\\\"".repeat(400_000);
        for line in [
            format!(
                r#"{{"jsonrpc":"2.0","id":"a-1","result":{{"content":[{{"type":"text","text":"{text}"}}]}},"extra":1}}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{text}"}}}}"#
            ),
            format!(r#"{{"jsonrpc":"2.0","id":9,"error":{{"code":-1,"message":"{text}"}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":9,"result":{{"text":"{text}"}},"oops"#),
        ] {
            assert!(line.len() >= LARGE_LINE);
            match (
                parse(line.as_bytes()),
                parse_owned(line.clone().into_bytes()),
            ) {
                (Received::Message(small), Received::Message(large)) => {
                    assert_eq!(small.line(), large.line());
                }
                (
                    Received::Unreadable { id: a, code: x, .. },
                    Received::Unreadable { id: b, code: y, .. },
                ) => assert_eq!((a, x), (b, y)),
                (small, large) => panic!("{small:?} against {large:?}"),
            }
        }
    }
}
