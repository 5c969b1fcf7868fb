//! A JSON-RPC message read into its envelope — its id, its method, and its `params`, `result`
//! or `error` kept as the raw JSON they were — so what is passed on is passed byte for byte,
//! what is not known is never lost, and a large part is read without a copy.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::{ID_PREFIX_BYTES, PARSE_ERROR, id_in_prefix};

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
            code: PARSE_ERROR,
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
            code: PARSE_ERROR,
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

/// A JSON-RPC answer failing request `id` with `code`, saying `message`, as one line.
pub(crate) fn error_answer(id: &Value, code: i64, message: impl Into<String>) -> String {
    answer(id, Err(raw(&error(code, message))))
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
