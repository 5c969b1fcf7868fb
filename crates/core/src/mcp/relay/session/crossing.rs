//! A server's question to a client that cannot be asked: a server of the handshake era sends
//! its client a request (elicitation, sampling, roots) while it works on a call, and a
//! 2026-07-28 client has no requests from its server. The proxy answers the client's call with
//! an `InputRequiredResult` carrying the server's request, parks the call (the server still
//! working on it, waiting for its answer), and seals the park's key into the `requestState` the
//! client echoes with its answer; the retry's answer goes to the server, and the call goes on.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::super::peer::Outcome;
use super::super::upstream::Live;
use crate::mcp::wire::{self, Raw};

/// How long a parked call waits for its client's answer.
pub(super) const PARKED_FOR: Duration = Duration::from_secs(600);

/// The key of a server's first request among an `InputRequiredResult`'s input requests (a
/// server of the handshake era names none): `server_request`, then `server_request_2`, …
pub(super) const INPUT_KEY: &str = "server_request";

/// The key of the server's request `i` (from 0) among those it asked at once.
pub(super) fn input_key(i: usize) -> String {
    match i {
        0 => INPUT_KEY.to_owned(),
        i => format!("{INPUT_KEY}_{}", i + 1),
    }
}

/// How long after a server's request its further requests are taken as asked at once (a
/// server asks its client several things concurrently: they go to the client in one
/// `InputRequiredResult`).
pub(super) const ASKED_AT_ONCE: Duration = Duration::from_millis(25);

/// A request a server sent while a call of the client's was waiting for it.
#[derive(Debug)]
pub(super) struct Ask {
    pub(super) id: Value,
    pub(super) method: String,
    pub(super) params: Option<Raw>,
}

/// The answer a call is waiting for.
pub(super) type Answer = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// How many times over a call is made again with its client's answers.
pub(super) const ROUNDS: usize = 8;

/// What the proxy's sealed states start with: a state without it is a server's own.
const OURS: &str = "toolsmith.";

/// Whether a client's `requestState` is one the proxy sealed (a server's own passes on).
pub(super) fn is_ours(state: &str) -> bool {
    state.starts_with(OURS)
}

/// Whether a result asks its client for input (`InputRequiredResult`).
pub(super) fn asks(result: &Value) -> bool {
    result["resultType"] == "input_required"
}

/// Why a retry's state resumes no call.
pub(super) fn not_verified(tool: &str) -> String {
    format!(
        "the requestState of this `{tool}` call could not be verified (it was made for another \
         call or principal, by another proxy process, or altered, or it expired); call the tool \
         again without it"
    )
}

/// How many of a server's requests wait for a call to read them.
pub(super) const ASKS_QUEUED: usize = 8;

/// A call sent to a server and waiting for its answer; the server's requests meanwhile arrive
/// in `asks` (for a 2026-07-28 client, whose server cannot ask it directly).
pub(super) struct Waiting {
    /// The server.
    pub(super) live: Arc<Live>,
    /// The server's place among the session's.
    pub(super) index: usize,
    /// The id the call went to the server with.
    pub(super) upstream_id: Value,
    /// The server's answer to the call, still to come.
    pub(super) answer: Answer,
    /// Where the server's requests for this call arrive.
    pub(super) asks: mpsc::Receiver<Ask>,
    /// The sending end of `asks`, as the session lists it while the call waits.
    pub(super) asking: mpsc::Sender<Ask>,
}

impl std::fmt::Debug for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiting")
            .field("index", &self.index)
            .field("upstream_id", &self.upstream_id)
            .finish_non_exhaustive()
    }
}

/// A call parked until its client answers the server's questions.
#[derive(Debug)]
pub(super) struct Parked {
    /// The call, still waiting for its server.
    pub(super) waiting: Waiting,
    /// The server's requests the client is to answer, by their place ([`input_key`]).
    pub(super) asked: Vec<Ask>,
    /// When the call gives up waiting for the client.
    pub(super) until: Instant,
}

/// What a 2026-07-28 client's call carries for the proxy alone, taken out of its `params`:
/// the capabilities its envelope declares, and a retry's state and answers. The rest of the
/// envelope goes too (a server of the handshake era holds it from the session's start).
pub(super) fn envelope_of_call(params: &mut Value) -> (Declared, Option<Retry>) {
    let mut taken = |key: &str| {
        params
            .get_mut("_meta")
            .and_then(|meta| meta.get_mut(key))
            .map(Value::take)
            .unwrap_or(Value::Null)
    };
    let capabilities = taken(wire::era::CLIENT_CAPABILITIES_KEY);
    let log_level = match taken(wire::era::LOG_LEVEL_KEY) {
        Value::String(level) => Some(level),
        _ => None,
    };
    wire::era::without_envelope(params);
    let declared = Declared {
        capabilities,
        log_level,
    };
    (declared, Retry::take(params))
}

/// What a 2026-07-28 client's request declares in its envelope for its server: what the
/// client can be asked, and the least severe log level it wants sent.
#[derive(Debug, Default)]
pub(super) struct Declared {
    pub(super) capabilities: Value,
    pub(super) log_level: Option<String>,
}

/// A client's retry of a call it was asked about: the state it echoes (a server may ask
/// without one) and its answers.
#[derive(Debug)]
pub(super) struct Retry {
    pub(super) state: Option<String>,
    pub(super) answers: Value,
}

impl Retry {
    /// The retry `params` carry, taken out of them (a server of the handshake era is not sent
    /// them); `None` for a first call (no state, no answers).
    pub(super) fn take(params: &mut Value) -> Option<Self> {
        let params = params.as_object_mut()?;
        let answers = params.remove("inputResponses").unwrap_or(Value::Null);
        let state = params.remove("requestState");
        if state.is_none() && answers.is_null() {
            return None;
        }
        Some(Self {
            state: state.map(|state| state.as_str().unwrap_or_default().to_owned()),
            answers,
        })
    }

    /// Whether the proxy sealed the state the retry echoes.
    pub(super) fn is_ours(&self) -> bool {
        self.state.as_deref().is_some_and(is_ours)
    }

    /// `params` with the retry's state and answers as the client sent them, for a server
    /// whose state it is (a 2026-07-28 server's).
    pub(super) fn put_back(self, params: &mut Value) {
        if let Some(state) = self.state {
            params["requestState"] = Value::String(state);
        }
        if !self.answers.is_null() {
            params["inputResponses"] = self.answers;
        }
    }

    /// The client's answer to the server's request `key`: its result, or an error for the
    /// server when the client gave none.
    pub(super) fn answer(&self, key: &str) -> Outcome {
        match self.answers.get(key) {
            Some(answer) => Ok(wire::raw(answer)),
            None => Err(wire::raw(&wire::error(
                wire::INVALID_PARAMS,
                "the client retried the call without an answer to this request",
            ))),
        }
    }
}

/// The process's key for sealing parks: a state sealed here is opened here.
fn codec() -> Option<&'static rmcp::model::RequestStateCodec> {
    static CODEC: OnceLock<Option<rmcp::model::RequestStateCodec>> = OnceLock::new();
    CODEC
        .get_or_init(|| {
            let mut key = [0u8; 32];
            getrandom::fill(&mut key).ok()?;
            rmcp::model::RequestStateCodec::try_new(key.to_vec()).ok()
        })
        .as_ref()
}

/// What a park is bound to: the principal, the tool and the call's arguments.
pub(super) fn binding(principal: Option<&str>, tool: &str, arguments: &Value) -> Vec<u8> {
    format!(
        "toolsmith park\n{}\n{tool}\n{arguments}",
        principal.unwrap_or_default()
    )
    .into_bytes()
}

/// `nonce` sealed for the call `bound` names, expiring with the park.
pub(super) fn seal(nonce: &str, bound: &[u8]) -> Option<String> {
    let options = rmcp::model::SealOptions::new()
        .associated_data(bound)
        .ttl(PARKED_FOR);
    Some(format!(
        "{OURS}{}",
        codec()?.seal_with(nonce.as_bytes(), &options)
    ))
}

/// The nonce a state sealed for the call `bound` names, if it is one this process sealed for
/// this call, unexpired.
pub(super) fn open(state: &str, bound: &[u8]) -> Option<String> {
    let nonce = codec()?.open_with(state.strip_prefix(OURS)?, bound).ok()?;
    String::from_utf8(nonce).ok()
}

/// The capability a client declares to be asked `method`.
pub(super) fn capability_of(method: &str) -> Option<&'static str> {
    match method {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// The `InputRequiredResult` that asks the client the server's `asks`, its state `sealed`.
pub(super) fn input_required(asks: &[Ask], sealed: String) -> Value {
    let requests: serde_json::Map<String, Value> = asks
        .iter()
        .enumerate()
        .map(|(i, ask)| {
            let params = ask
                .params
                .as_ref()
                .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
                .unwrap_or_else(|| json!({}));
            (
                input_key(i),
                json!({ "method": ask.method, "params": params }),
            )
        })
        .collect();
    json!({
        "resultType": "input_required",
        "inputRequests": requests,
        "requestState": sealed,
    })
}

/// The error a call gets when its server asks what its client did not declare it can answer
/// (-32021, the capability named).
pub(super) fn missing_capability(method: &str, capability: &str) -> Raw {
    let mut error = wire::error(
        wire::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "the server asks the client `{method}`, which needs the `{capability}` capability \
             the client did not declare"
        ),
    );
    error["data"] = json!({ "requiredCapabilities": { capability: {} } });
    wire::raw(&error)
}
