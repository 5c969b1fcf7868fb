//! A scripted model for agent loops that must run without a network or a key: an
//! OpenAI-compatible chat completions endpoint on loopback ([`ScriptedModel`]) that answers each
//! request with what a script decides and records every request it receives.
//!
//! Point any OpenAI-compatible client at [`ScriptedModel::base_url`] (rig's OpenAI provider,
//! async-openai, genai): it answers `POST …/chat/completions` with the script's reply (an
//! assistant message with tool calls, or a text). Streaming is not scripted: a request asking for
//! it is answered with an error saying so. The script sees every request before it answers, so it
//! can check what came back (the tool results, in call order) and decide the next call from it
//! (the artifact a marker named).
//!
//! ```
//! use serde_json::json;
//! use toolsmith::testing::{ScriptedModel, Reply};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let model = ScriptedModel::start(|request: &serde_json::Value, turn: usize| match turn {
//!     0 => Reply::tool_calls([("call_1", "read_file", json!({ "path": "README.md" }))]),
//!     _ => Reply::text("done"),
//! })
//! .await?;
//! assert!(model.base_url().starts_with("http://127.0.0.1:"));
//! assert!(model.requests().is_empty());
//! # Ok(())
//! # }
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};

use crate::sync::lock;

/// The largest request body the scripted model reads (a long conversation with cut results).
const MAX_REQUEST_BYTES: usize = 64 << 20;

/// What the scripted model answers one request with.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    status: StatusCode,
    body: Value,
}

impl Reply {
    /// An assistant message asking for `calls` (id, tool name, arguments), in that order, with
    /// `finish_reason` `tool_calls`.
    pub fn tool_calls<'a>(calls: impl IntoIterator<Item = (&'a str, &'a str, Value)>) -> Self {
        let calls: Vec<Value> = calls
            .into_iter()
            .map(|(id, name, arguments)| {
                let arguments = match arguments {
                    // Arguments given as text go as they are (a model can send invalid JSON).
                    Value::String(raw) => raw,
                    arguments => arguments.to_string(),
                };
                json!({
                    "id": id,
                    "type": "function",
                    "function": { "name": name, "arguments": arguments },
                })
            })
            .collect();
        Self::completion(
            json!({ "role": "assistant", "content": null, "tool_calls": calls }),
            "tool_calls",
        )
    }

    /// An assistant message of `text`, with `finish_reason` `stop`.
    pub fn text(text: impl Into<String>) -> Self {
        Self::completion(
            json!({ "role": "assistant", "content": text.into() }),
            "stop",
        )
    }

    /// A provider's error: `status` and an OpenAI-shaped error body with `message`.
    pub fn error(status: u16, message: impl Into<String>) -> Self {
        Reply {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            body: json!({
                "error": { "message": message.into(), "type": "scripted_error", "code": null },
            }),
        }
    }

    /// Any response body, answered with 200.
    pub fn raw(body: Value) -> Self {
        Reply {
            status: StatusCode::OK,
            body,
        }
    }

    fn completion(message: Value, finish_reason: &str) -> Self {
        Reply::raw(json!({
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [{ "index": 0, "message": message, "finish_reason": finish_reason, "logprobs": null }],
            "usage": { "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0 },
        }))
    }
}

/// The script: given the request (its JSON body) and its index (0 for the first request), the
/// reply.
type Script = Box<dyn FnMut(&Value, usize) -> Reply + Send>;

/// What the server shares with its handle.
struct Shared {
    script: Mutex<Script>,
    requests: Mutex<Vec<Value>>,
}

/// An OpenAI-compatible chat completions endpoint on loopback that answers as a script says.
/// Stopped when dropped.
pub struct ScriptedModel {
    address: SocketAddr,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("address", &self.address)
            .field("requests", &self.requests().len())
            .finish_non_exhaustive()
    }
}

impl ScriptedModel {
    /// Starts the model on a free loopback port: `script` answers each request, given its JSON
    /// body and its index. Must be called within a Tokio runtime.
    ///
    /// # Errors
    ///
    /// The I/O error when no loopback port can be bound.
    pub async fn start(
        script: impl FnMut(&Value, usize) -> Reply + Send + 'static,
    ) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let address = listener.local_addr()?;
        let shared = Arc::new(Shared {
            script: Mutex::new(Box::new(script)),
            requests: Mutex::new(Vec::new()),
        });
        let serving = Arc::clone(&shared);
        let server = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    // Out of descriptors, say: wait rather than spin.
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                };
                let stream = crate::net::accepted(stream);
                let shared = Arc::clone(&serving);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let shared = Arc::clone(&shared);
                        async move { Ok::<_, Infallible>(answer(&shared, request).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(ScriptedModel {
            address,
            shared,
            server,
        })
    }

    /// The base URL an OpenAI-compatible client is given: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// Every request received so far (its JSON body), in order.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared.requests).clone()
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn answer(shared: &Shared, request: Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_owned();
    if request.method() != hyper::Method::POST || !path.ends_with("/chat/completions") {
        return respond(&Reply::error(
            404,
            format!("the scripted model answers POST …/chat/completions, not `{path}`"),
        ));
    }
    let body = match Limited::new(request.into_body(), MAX_REQUEST_BYTES)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(error) => {
            return respond(&Reply::error(
                413,
                format!("the request body could not be read: {error}"),
            ));
        }
    };
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return respond(&Reply::error(400, "the request body is not JSON"));
    };
    if body.get("stream") == Some(&Value::Bool(true)) {
        return respond(&Reply::error(
            400,
            "the scripted model does not stream: ask without `stream: true`",
        ));
    }
    let index = {
        let mut requests = lock(&shared.requests);
        requests.push(body.clone());
        requests.len() - 1
    };
    let reply = {
        let mut script = lock(&shared.script);
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (*script)(&body, index)))
    };
    match reply {
        Ok(reply) => respond(&reply),
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            respond(&Reply::error(
                500,
                format!("the script failed on request {index}: {why}"),
            ))
        }
    }
}

fn respond(reply: &Reply) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(reply.body.to_string())));
    *response.status_mut() = reply.status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// The tool messages of a chat completions request, in order: each `(tool_call_id, content)`,
/// the content's text parts joined when it is an array.
pub fn tool_messages(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|message| message["role"] == "tool")
        .map(|message| {
            let content = match &message["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|part| part["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                _ => String::new(),
            };
            let id = message["tool_call_id"].as_str().unwrap_or_default();
            (id.to_owned(), content)
        })
        .collect()
}

/// The agent loop every adapter is proved with, and every adapter's example runs without a key:
/// the model asks for three calls in one message — `run_command` printing 30,000 lines of a test
/// run (about a megabyte, [`tool_loop_line`]), `read_file` of a file that does not exist,
/// `read_file` of `notes.txt` — then asks `read_artifact` for five lines from the middle of the
/// cut output, then answers.
///
/// The tools are the standard ones (`toolsmith-std`); the registry behind the loop needs an
/// artifact store for the cut output to be read back. [`check_tool_loop`] checks, from the
/// requests the model received, that every step came back as it must.
pub fn tool_loop_script() -> impl FnMut(&Value, usize) -> Reply + Send + 'static {
    |request, turn| match turn {
        0 => Reply::tool_calls([
            (
                "call_big",
                "run_command",
                json!({ "command": LOOP_COMMAND }),
            ),
            ("call_fails", "read_file", json!({ "path": "missing.txt" })),
            ("call_read", "read_file", json!({ "path": "notes.txt" })),
        ]),
        1 => {
            let messages = tool_messages(request);
            let marked = messages
                .iter()
                .find(|(id, _)| id == "call_big")
                .and_then(|(_, text)| crate::trim::find_marker(text));
            match marked.map(|marker| marker.full) {
                Some(crate::trim::MarkedFull::Stored { id, .. }) => Reply::tool_calls([(
                    "call_page",
                    crate::artifacts::READ_ARTIFACT,
                    json!({ "id": id, "offset": PAGE_OFFSET, "limit": 5 }),
                )]),
                _ => Reply::error(
                    500,
                    "the scripted model found no marker naming an artifact in the result of \
                     `call_big`",
                ),
            }
        }
        _ => Reply::text(format!(
            "The run printed 30,000 lines; line {} reads `{}`.",
            PAGE_OFFSET,
            tool_loop_line(PAGE_OFFSET)
        )),
    }
}

/// What the scripted model runs: 30,000 lines of a test run, about a megabyte.
const LOOP_COMMAND: &str = "awk 'BEGIN{for(i=1;i<=30000;i++) printf \"test suite::case_%d ... ok (%d ms)\\n\", (i*7919)%100003, i%97}'";

/// Line `n` (from 1) of the output of the command the [`tool_loop_script`] model runs.
pub fn tool_loop_line(n: usize) -> String {
    format!(
        "test suite::case_{} ... ok ({} ms)",
        n * 7919 % 100_003,
        n % 97
    )
}

/// The line (0-based) the scripted model asks `read_artifact` to start at.
const PAGE_OFFSET: usize = 15_000;

/// Checks the requests a [`tool_loop_script`] model received: three, the second answering the
/// three calls with three tool messages, the same ids in call order, their text within
/// `batch_budget` chars, the cut one's marker naming an artifact, the failed one an error
/// saying so, the read one holding `notes`; the third answering `read_artifact` with the five
/// lines it asked for.
///
/// # Errors
///
/// What is wrong, first thing first.
pub fn check_tool_loop(requests: &[Value], batch_budget: usize, notes: &str) -> Result<(), String> {
    if requests.len() != 3 {
        return Err(format!(
            "the model received {} requests, not 3",
            requests.len()
        ));
    }
    let answered = tool_messages(&requests[1]);
    let ids: Vec<&str> = answered.iter().map(|(id, _)| id.as_str()).collect();
    if ids != ["call_big", "call_fails", "call_read"] {
        return Err(format!(
            "the second request answers {ids:?}, not the three calls in order"
        ));
    }
    let chars: usize = answered.iter().map(|(_, text)| text.chars().count()).sum();
    if chars > batch_budget {
        return Err(format!(
            "the three results hold {chars} chars, over the turn's {batch_budget}"
        ));
    }
    let big = &answered[0].1;
    match crate::trim::find_marker(big).map(|marker| marker.full) {
        Some(crate::trim::MarkedFull::Stored { .. }) => {}
        _ => return Err(format!("the cut result names no artifact: {big:.300}")),
    }
    if !big.contains(&format!("{}\n{}\n", tool_loop_line(1), tool_loop_line(2))) {
        return Err(format!("the cut result lost its head: {big:.200}"));
    }
    let failed = &answered[1].1;
    if !failed.starts_with("Error") || !failed.contains("missing.txt") {
        return Err(format!("the failed call does not say so: {failed:.300}"));
    }
    if !answered[2].1.contains(notes) {
        return Err(format!(
            "the read file is not in its result: {:.300}",
            answered[2].1
        ));
    }
    let paged = tool_messages(&requests[2]);
    let Some((id, page)) = paged.last() else {
        return Err("the third request answers no call".to_owned());
    };
    // The artifact holds `run_command`'s output as the model read it, numbered as the output
    // is: its line `PAGE_OFFSET` from 0 is the output's line `PAGE_OFFSET + 1`.
    let shown: Vec<&str> = page.lines().skip(1).collect();
    let asked: Vec<String> = (PAGE_OFFSET + 1..=PAGE_OFFSET + 5)
        .map(tool_loop_line)
        .collect();
    if id != "call_page" || shown != asked {
        return Err(format!(
            "read_artifact did not answer the five lines asked for: {id} {page:.400}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_is_recorded_and_answered_by_the_script() {
        let model = ScriptedModel::start(|request, turn| {
            assert_eq!(request["model"], "m");
            match turn {
                0 => Reply::tool_calls([("c1", "echo", json!({ "x": 1 }))]),
                _ => panic!("only one turn is scripted"),
            }
        })
        .await
        .unwrap();
        let address = model.address;
        let ask = |body: Value| async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
            let body = body.to_string();
            let head = format!(
                "POST /v1/chat/completions HTTP/1.1\r\nhost: {address}\r\n\
                 content-type: application/json\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await.unwrap();
            stream.write_all(body.as_bytes()).await.unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).await.unwrap();
            let (head, body) = answer.split_once("\r\n\r\n").unwrap();
            let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
            (
                StatusCode::from_u16(status).unwrap(),
                serde_json::from_str::<Value>(body).unwrap(),
            )
        };
        let (status, first) = ask(json!({ "model": "m", "messages": [] })).await;
        assert_eq!(status, StatusCode::OK);
        let call = &first["choices"][0]["message"]["tool_calls"][0];
        assert_eq!(call["function"]["arguments"], r#"{"x":1}"#);
        // A script that fails answers an error naming the request, and the model goes on.
        let (status, second) = ask(json!({ "model": "m", "messages": [] })).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        let message = second["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("request 1") && message.contains("only one turn"),
            "{message}"
        );
        let (status, _) = ask(json!({ "model": "m", "stream": true })).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(model.requests().len(), 2);
    }

    #[test]
    fn tool_messages_are_read_in_order() {
        let request = json!({ "messages": [
            { "role": "user", "content": "hi" },
            { "role": "tool", "tool_call_id": "a", "content": "one" },
            { "role": "tool", "tool_call_id": "b", "content": [{ "type": "text", "text": "two" }] },
        ] });
        assert_eq!(
            tool_messages(&request),
            [
                ("a".to_owned(), "one".to_owned()),
                ("b".to_owned(), "two".to_owned())
            ]
        );
    }
}
