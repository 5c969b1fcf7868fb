//! A link carries JSON-RPC messages as they are to and from one peer: over newline-delimited
//! JSON (stdio, a child process) or streamable HTTP. A message is read into its envelope — its
//! id, its method, and its `params`, `result` or `error` kept as the raw JSON they were — so
//! what the relay passes on is passed byte for byte, what it does not know is never lost, and
//! what it reads it reads once, bounded, only where it must.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::mpsc;

use crate::figures::grouped;
use crate::mcp::wire::{Lines, Next, Received, id_in_prefix, parse_owned};

/// How many messages wait in each direction before a sender waits.
#[cfg(feature = "mcp-http")]
pub(crate) const QUEUE: usize = 256;

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
                    code: crate::mcp::wire::INVALID_REQUEST,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
