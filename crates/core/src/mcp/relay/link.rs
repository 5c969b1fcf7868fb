//! A link carries JSON-RPC messages as they are to and from one peer: over newline-delimited
//! JSON (stdio, a child process) or streamable HTTP. A message is read into its envelope — its
//! id, its method, and its `params`, `result` or `error` kept as the raw JSON they were — so
//! what the relay passes on is passed byte for byte, what it does not know is never lost, and
//! what it reads it reads once, bounded, only where it must.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::mpsc;

use crate::mcp::transport::{ID_PREFIX_BYTES, Lines, Next, id_in_prefix};
use crate::trim::grouped;

/// How many messages wait in each direction before a sender waits.
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
    pub(crate) incoming: mpsc::Receiver<Received>,
    pub(crate) outgoing: mpsc::Sender<String>,
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
    match serde_json::from_slice::<Message>(line) {
        Ok(message) => Received::Message(message),
        Err(error) => Received::Unreadable {
            id: id_in_prefix(&line[..line.len().min(ID_PREFIX_BYTES)]),
            code: crate::mcp::transport::PARSE_ERROR,
            why: format!("the message is not JSON-RPC that can be read ({error})"),
        },
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut write: W, mut from: mpsc::Receiver<String>) {
    while let Some(line) = from.recv().await {
        let written = async {
            write.write_all(line.as_bytes()).await?;
            write.write_all(b"\n").await?;
            write.flush().await
        };
        if written.await.is_err() {
            return;
        }
    }
    // Nothing more will be sent: the peer reads the end of its input.
    let _ = write.shutdown().await;
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
}
