//! The wire: JSON-RPC 2.0 as MCP carries it, below the client, the server and the relay. A
//! message's framing on a line-delimited stream ([`Lines`]), its envelope read with its parts
//! kept raw ([`Message`], [`parse`]), the bounded reading of a large answer's content and
//! listings ([`bounded`]), the JSON-RPC error codes, and the checks every server makes of a
//! request before it is routed ([`missing_params`]). Nothing here knows a session or a tool.

pub(crate) mod bounded;
pub(crate) mod era;
mod lines;
mod message;

use serde_json::Value;

pub(crate) use lines::{Lines, Next};
#[cfg(feature = "mcp-http")]
pub(crate) use message::Message;
pub(crate) use message::{
    Raw, Received, answer, error, error_answer, notification, parse, parse_owned, raw, request,
};

/// The longest message accepted, in bytes (rmcp's own default, 16 MiB).
pub(crate) const MAX_MESSAGE_BYTES: usize = 16 << 20;
/// How much of an oversized line is kept to find its request id.
pub(crate) const ID_PREFIX_BYTES: usize = 4096;

/// The error code of an answer the client did not read because it was over its limit (in the
/// range JSON-RPC leaves to implementations).
pub(crate) const ANSWER_TOO_LARGE: i32 = -32_099;

// JSON-RPC 2.0 error codes, each named once here.
/// The line is not JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// The JSON is not a request.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// No such method (here: the method is one no server behind the proxy serves).
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// The request's params are not what its method takes.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// MCP's code for a resource that does not exist (an artifact this session cannot read).
pub(crate) const RESOURCE_NOT_FOUND: i64 = -32002;
/// The request could not be served for a reason of the server's (a server that did not start,
/// an upstream that failed).
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// A 2026-07-28 request's HTTP headers do not say what its body says.
pub(crate) const HEADER_MISMATCH: i64 = -32_020;
/// A 2026-07-28 request needs a capability its client did not declare.
pub(crate) const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32_021;
/// The protocol version a request (or `initialize`) asks for is not one served.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32_022;
/// A request to an upstream over HTTP failed at the HTTP level (the first code of JSON-RPC's
/// "server error" range).
pub(crate) const HTTP_FAILED: i64 = -32_000;
/// The key of [`HTTP_FAILED`]'s data naming the HTTP status the server answered with (absent
/// when it could not be reached).
pub(crate) const HTTP_STATUS_KEY: &str = "httpStatus";
/// The key of [`HTTP_FAILED`]'s data saying the server could not be reached at all.
pub(crate) const UNREACHABLE_KEY: &str = "unreachable";

/// A request whose method needs `params` (with certain fields) but came without them: its id
/// and the error message.
pub(crate) fn missing_params(message: &Value) -> Option<(Value, String)> {
    let id = message.get("id")?;
    let method = message.get("method")?.as_str()?;
    let needed: &[&str] = match method {
        "tools/call" | "prompts/get" => &["name"],
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => &["uri"],
        "initialize" => &["protocolVersion", "clientInfo"],
        "logging/setLevel" => &["level"],
        "completion/complete" => &["ref", "argument"],
        _ => return None,
    };
    let params = message.get("params").and_then(Value::as_object);
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|key| params.is_none_or(|params| !params.contains_key(*key)))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let what = if params.is_none() {
        "no `params` object".to_owned()
    } else {
        format!("`params` without {}", quoted(&missing))
    };
    Some((
        id.clone(),
        format!(
            "invalid params: `{method}` came with {what}; it needs `params` with {}",
            quoted(needed)
        ),
    ))
}

fn quoted(keys: &[&str]) -> String {
    keys.iter()
        .map(|key| format!("`{key}`"))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// The request id in the first bytes of a message, when it is there: `null` otherwise, as
/// JSON-RPC answers a request whose id cannot be read.
pub(crate) fn id_in_prefix(prefix: &[u8]) -> Value {
    let finder = memchr::memmem::Finder::new(b"\"id\"");
    for at in finder.find_iter(prefix) {
        let rest = &prefix[at + 4..];
        let rest = rest.trim_ascii_start();
        let Some(rest) = rest.strip_prefix(b":") else {
            continue;
        };
        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
        if let Some(Ok(id @ (Value::Number(_) | Value::String(_)))) = values.next() {
            return id;
        }
    }
    Value::Null
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn finds_the_id_of_an_oversized_message() {
        assert_eq!(
            id_in_prefix(br#"{"jsonrpc":"2.0","id": 42,"method":"tools/call","params":{"#),
            json!(42)
        );
        assert_eq!(id_in_prefix(br#"{"id":"abc","params":{"x":"#), json!("abc"));
        assert_eq!(id_in_prefix(br#"{"params":{"x":"aaaa"#), Value::Null);
    }

    #[test]
    fn a_call_without_params_is_invalid_params() {
        let (id, message) =
            missing_params(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"})).unwrap();
        assert_eq!(id, json!(1));
        assert!(message.contains("no `params` object"), "{message}");
        assert!(
            missing_params(&json!({"id": 1, "method": "tools/call", "params": {"name": "x"}}))
                .is_none()
        );
        assert!(missing_params(&json!({"id": 1, "method": "tools/list"})).is_none());
    }
}
