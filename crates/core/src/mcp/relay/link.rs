//! A link carries JSON-RPC messages as they are, `serde_json::Value`s, to and from one peer:
//! over newline-delimited JSON (stdio, a child process) or streamable HTTP. Nothing is parsed
//! into protocol types, so nothing the relay does not know is lost.

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::mpsc;

use crate::mcp::transport::{ID_PREFIX_BYTES, Lines, Next, id_in_prefix};
use crate::trim::grouped;

/// How many messages wait in each direction before a sender waits.
pub(crate) const QUEUE: usize = 256;

/// What came from the peer: a message, or one that could not be read (over the size limit,
/// not JSON, not UTF-8, nested too deep), with the id it named if it could be found.
#[derive(Debug)]
pub(crate) enum Received {
    Message(Value),
    Unreadable {
        /// The id of the request or answer, when its first bytes name one; `null` otherwise.
        id: Value,
        /// The JSON-RPC error code it calls for (parse error, invalid request).
        code: i64,
        /// Why, in words.
        why: String,
    },
}

/// The two directions of a link.
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) incoming: mpsc::Receiver<Received>,
    pub(crate) outgoing: mpsc::Sender<Value>,
}

/// A link over newline-delimited JSON: one message a line, each at most `max_line` bytes.
/// The link ends when `read` ends or `write` fails.
pub(crate) fn lines<R, W>(read: R, write: W, max_line: usize) -> Link
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (incoming_tx, incoming) = mpsc::channel(QUEUE);
    let (outgoing, outgoing_rx) = mpsc::channel(QUEUE);
    tokio::spawn(read_lines(Lines::new(read, max_line), incoming_tx));
    tokio::spawn(write_lines(write, outgoing_rx));
    Link { incoming, outgoing }
}

async fn read_lines<R: AsyncRead + Unpin>(mut lines: Lines<R>, to: mpsc::Sender<Received>) {
    while let Some(next) = lines.next().await {
        let received = match next {
            Next::Text(line) => parse(&line),
            Next::Oversized(prefix) => Received::Unreadable {
                id: id_in_prefix(&prefix),
                code: crate::mcp::transport::INVALID_REQUEST,
                why: format!(
                    "the message is over the limit of {} bytes and was not read",
                    grouped(lines.max_line())
                ),
            },
        };
        if to.send(received).await.is_err() {
            return;
        }
    }
}

/// One line as a message, or why it is not one (with its id, when its first bytes name one).
pub(crate) fn parse(line: &[u8]) -> Received {
    match serde_json::from_slice::<Value>(line) {
        Ok(value) => Received::Message(value),
        Err(error) => Received::Unreadable {
            id: id_in_prefix(&line[..line.len().min(ID_PREFIX_BYTES)]),
            code: crate::mcp::transport::PARSE_ERROR,
            why: format!("the message is not JSON that can be read ({error})"),
        },
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut write: W, mut from: mpsc::Receiver<Value>) {
    while let Some(value) = from.recv().await {
        let Ok(mut bytes) = serde_json::to_vec(&value) else {
            continue;
        };
        bytes.push(b'\n');
        if write.write_all(&bytes).await.is_err() || write.flush().await.is_err() {
            return;
        }
    }
    // Nothing more will be sent: the peer reads the end of its input.
    let _ = write.shutdown().await;
}

/// A JSON-RPC request.
pub(crate) fn request(id: &Value, method: &str, params: Option<Value>) -> Value {
    let mut message = json!({ "jsonrpc": "2.0", "id": id, "method": method });
    if let Some(params) = params {
        message["params"] = params;
    }
    message
}

/// A JSON-RPC notification.
pub(crate) fn notification(method: &str, params: Option<Value>) -> Value {
    let mut message = json!({ "jsonrpc": "2.0", "method": method });
    if let Some(params) = params {
        message["params"] = params;
    }
    message
}

/// A JSON-RPC answer: its result, or its error object as the peer sent it.
pub(crate) fn answer(id: &Value, outcome: Result<Value, Value>) -> Value {
    match outcome {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
    }
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
        // Invalid UTF-8, a lone surrogate and a nesting deeper than the parser goes.
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":9,"result":{}1{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        for line in [
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"text\":\"\xff\"}}".to_vec(),
            br#"{"jsonrpc":"2.0","id":8,"result":{"text":"\ud800"}}"#.to_vec(),
            deep.into_bytes(),
        ] {
            match parse(&line) {
                Received::Unreadable { id, why, .. } => {
                    assert!(id.is_number(), "{why}");
                    assert!(why.starts_with("the message is not JSON"), "{why}");
                }
                Received::Message(message) => panic!("read {message}"),
            }
        }
    }
}
