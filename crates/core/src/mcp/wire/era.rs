//! The two eras of MCP a message may belong to, and what 2026-07-28 asks of one.
//!
//! Before 2026-07-28 a client opens a session with `initialize` and the session holds the
//! protocol version and the client's capabilities. From 2026-07-28 there is no handshake and no
//! session: every request carries its version and the client's capabilities in `params._meta`
//! (the envelope), a server answers `server/discover`, results carry `resultType`, and over HTTP
//! every request carries `MCP-Protocol-Version`, `Mcp-Method` and (for a call, a prompt, a read)
//! `Mcp-Name`. A server serves both: the first message decides which era a peer speaks.
//!
//! This is the one owner of the envelope's keys, of the checks a 2026-07-28 request passes (in
//! the order the specification's reference SDKs run them), and of how a result is stamped for
//! a 2026-07-28 client.

use serde_json::{Map, Value, json};

use super::{
    HEADER_MISMATCH, HTTP_FAILED, HTTP_STATUS_KEY, INVALID_PARAMS, METHOD_NOT_FOUND,
    UNREACHABLE_KEY, UNSUPPORTED_PROTOCOL_VERSION,
};

/// The protocol version without a handshake.
pub(crate) const MODERN: &str = "2026-07-28";
/// The versions of the handshake era the proxy and `serve` speak.
pub(crate) const HANDSHAKE: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The version the proxy asks of a server of the handshake era.
pub(crate) const LATEST_HANDSHAKE: &str = "2025-11-25";

/// The envelope's key of the request's protocol version.
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key a `subscriptions/listen` stream's frames carry the listen request's id under.
pub(crate) const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// The envelope's key of the client's capabilities.
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// The envelope's key of the client's name and version (optional).
pub(crate) const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// The envelope's key of the least severe log level the request wants sent (absent: none).
pub(crate) const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// A result's `_meta` key naming the server.
pub(crate) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The HTTP header of the protocol version.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
pub(crate) const VERSION_HEADER: &str = "mcp-protocol-version";
/// The HTTP header of the request's method.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
pub(crate) const METHOD_HEADER: &str = "mcp-method";
/// The HTTP header of the tool, prompt or resource a request names.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
pub(crate) const NAME_HEADER: &str = "mcp-name";

/// What a request's envelope says, once checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Envelope {
    pub(crate) version: String,
    pub(crate) capabilities: Value,
    pub(crate) client_info: Option<Value>,
    /// The log level the request opted in to, if any.
    pub(crate) log_level: Option<String>,
}

/// Why a 2026-07-28 request is refused before it is served: its JSON-RPC error code, words and
/// data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) data: Option<Value>,
}

impl Refusal {
    /// The JSON-RPC error object.
    pub(crate) fn error(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }
}

/// The HTTP headers of a 2026-07-28 request, as they came (lowercase names; `None` when absent).
#[derive(Debug, Clone, Default)]
pub(crate) struct Headers {
    pub(crate) version: Option<String>,
    pub(crate) method: Option<String>,
    pub(crate) name: Option<String>,
}

/// Whether an answer to the `server/discover` probe is one of a server that speaks 2026-07-28:
/// its `supportedVersions` name it. Anything else (an empty object, a list of other versions) is
/// a server of the handshake era answering what it does not know, as the official clients read
/// it.
pub(crate) fn discovered_modern(result: &Value) -> bool {
    result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|versions| versions.iter().any(|version| version == MODERN))
}

/// What a refusal of the `server/discover` probe a client opens with says of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProbeVerdict {
    /// A server of the handshake era (it does not know the method, refuses it before a
    /// handshake, or names only versions of that era): `initialize` follows.
    Legacy,
    /// The server speaks a later version only, or refused the client itself (its credentials,
    /// or a failure of its own): the connection fails, in the server's words.
    Refused,
}

/// The verdict on a refused probe (its error's `code` and `data`), as the official clients
/// reach it: -32022 naming a 2026-07-28-or-later version is a server of another modern version
/// (refused, since this client speaks 2026-07-28 only and the server did not take it); over
/// HTTP (the status in the data of the link's own error, [`HTTP_STATUS_KEY`]), 401 and 403 are
/// the client's credentials, 5xx the server's failure, and a server that could not be reached
/// is not there (each refused). Anything else — the method unknown, the request refused before
/// a handshake, an error code that is not era evidence — is a server of the handshake era.
pub(crate) fn probe_verdict(code: i64, data: Option<&Value>) -> ProbeVerdict {
    let http = data.filter(|_| code == HTTP_FAILED);
    if http.is_some_and(|data| data.get(UNREACHABLE_KEY) == Some(&Value::Bool(true))) {
        return ProbeVerdict::Refused;
    }
    let status = http
        .and_then(|data| data.get(HTTP_STATUS_KEY))
        .and_then(Value::as_u64);
    if status.is_some_and(|status| status == 401 || status == 403 || status >= 500) {
        return ProbeVerdict::Refused;
    }
    let names_modern = data
        .and_then(|data| data.get("supported"))
        .and_then(Value::as_array)
        .is_some_and(|supported| {
            supported
                .iter()
                .filter_map(Value::as_str)
                .any(|version| !HANDSHAKE.contains(&version) && version >= MODERN)
        });
    if code == UNSUPPORTED_PROTOCOL_VERSION && names_modern {
        ProbeVerdict::Refused
    } else {
        ProbeVerdict::Legacy
    }
}

/// Whether `params` carry a 2026-07-28 envelope (its protocol version, whatever it says).
pub(crate) fn has_envelope(params: Option<&Value>) -> bool {
    params
        .and_then(|params| params.get("_meta"))
        .is_some_and(|meta| meta.get(PROTOCOL_VERSION_KEY).is_some())
}

/// The param that names what a request is for (mirrored by `Mcp-Name`), by its method.
fn named_param(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

/// Checks a 2026-07-28 request: its envelope (the version and the client's capabilities, in
/// `params._meta`); over HTTP (`headers`), that `MCP-Protocol-Version`, `Mcp-Method` and
/// `Mcp-Name` say what the body says; then that its version is one served. The first failure
/// is the refusal.
pub(crate) fn check(
    method: &str,
    params: Option<&Value>,
    headers: Option<&Headers>,
) -> Result<Envelope, Refusal> {
    let refuse = |code, message: String| Refusal {
        code,
        message,
        data: None,
    };
    let Some(meta) = params
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object)
    else {
        return Err(refuse(
            INVALID_PARAMS,
            format!(
                "params._meta must be an object carrying `{PROTOCOL_VERSION_KEY}` and \
                 `{CLIENT_CAPABILITIES_KEY}` (protocol {MODERN} has no handshake: every request \
                 says them)"
            ),
        ));
    };
    let missing: Vec<&str> = [PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY]
        .into_iter()
        .filter(|key| !meta.contains_key(*key))
        .collect();
    if !missing.is_empty() {
        return Err(refuse(
            INVALID_PARAMS,
            format!("params._meta is missing `{}`", missing.join("` and `")),
        ));
    }
    let version = &meta[PROTOCOL_VERSION_KEY];
    if let Some(headers) = headers {
        if headers.version.as_deref() != version.as_str() || headers.version.is_none() {
            return Err(refuse(
                HEADER_MISMATCH,
                format!(
                    "the MCP-Protocol-Version header ({}) does not say the version of the \
                     request's params._meta ({version})",
                    headers.version.as_deref().unwrap_or("absent")
                ),
            ));
        }
        if headers.method.as_deref() != Some(method) {
            return Err(refuse(
                HEADER_MISMATCH,
                format!(
                    "the Mcp-Method header ({}) does not say the request's method (`{method}`)",
                    headers.method.as_deref().unwrap_or("absent")
                ),
            ));
        }
        if let Some(key) = named_param(method)
            && let Some(named) = params
                .and_then(|params| params.get(key))
                .and_then(Value::as_str)
            && headers.name.as_deref().map(decode_header) != Some(Some(named.to_owned()))
        {
            return Err(refuse(
                HEADER_MISMATCH,
                format!(
                    "the Mcp-Name header ({}) does not say the request's `{key}` ({named})",
                    headers.name.as_deref().unwrap_or("absent")
                ),
            ));
        }
    }
    let Some(version) = version.as_str() else {
        return Err(refuse(
            INVALID_PARAMS,
            "the protocol version in params._meta must be a string".to_owned(),
        ));
    };
    if version != MODERN {
        return Err(unsupported(version));
    }
    Ok(Envelope {
        version: version.to_owned(),
        capabilities: meta[CLIENT_CAPABILITIES_KEY].clone(),
        client_info: meta.get(CLIENT_INFO_KEY).cloned(),
        log_level: meta
            .get(LOG_LEVEL_KEY)
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// The methods 2026-07-28 removed (the handshake, `ping`, the log level a session held, the
/// subscriptions a session held): a 2026-07-28 request of one is answered as a method not found.
pub(crate) fn removed(method: &str) -> Option<Refusal> {
    const REMOVED: &[&str] = &[
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ];
    REMOVED.contains(&method).then(|| Refusal {
        code: METHOD_NOT_FOUND,
        message: format!("method not found: `{method}` does not exist in MCP {MODERN}"),
        data: None,
    })
}

/// The refusal of a version not served, naming those that are.
pub(crate) fn unsupported(requested: &str) -> Refusal {
    let mut supported = vec![MODERN];
    supported.extend(HANDSHAKE);
    Refusal {
        code: UNSUPPORTED_PROTOCOL_VERSION,
        message: format!(
            "unsupported protocol version `{requested}`; supported: {}",
            supported.join(", ")
        ),
        data: Some(json!({ "supported": supported, "requested": requested })),
    }
}

/// A name as `Mcp-Name` carries it: as it is when a header can carry it (printable ASCII, no
/// space at either end), else `=?base64?…?=`.
#[cfg(feature = "mcp-http")]
pub(crate) fn encode_header(value: &str) -> String {
    use base64::Engine as _;
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        return value.to_owned();
    }
    format!(
        "=?base64?{}?=",
        base64::engine::general_purpose::STANDARD.encode(value)
    )
}

/// `Mcp-Name`'s value as the body writes it: verbatim, or decoded from `=?base64?…?=` (a name
/// a header cannot carry as it is). `None` for a malformed one.
fn decode_header(value: &str) -> Option<String> {
    use base64::Engine as _;
    let Some(payload) = value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Some(value.to_owned());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// The HTTP status of an answer to a 2026-07-28 request carrying error `code` (200 for a
/// result, and for codes the specification gives no status).
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
pub(crate) fn http_status(code: Option<i64>) -> u16 {
    match code {
        Some(super::PARSE_ERROR | super::INVALID_REQUEST | INVALID_PARAMS) => 400,
        Some(HEADER_MISMATCH | UNSUPPORTED_PROTOCOL_VERSION) => 400,
        Some(super::MISSING_REQUIRED_CLIENT_CAPABILITY) => 400,
        Some(METHOD_NOT_FOUND) => 404,
        _ => 200,
    }
}

/// `params` without the envelope's keys: what a server of the handshake era is sent (its
/// session holds what they said).
pub(crate) fn without_envelope(params: &mut Value) {
    let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) else {
        return;
    };
    for key in [
        PROTOCOL_VERSION_KEY,
        CLIENT_CAPABILITIES_KEY,
        CLIENT_INFO_KEY,
        LOG_LEVEL_KEY,
    ] {
        meta.remove(key);
    }
    if meta.is_empty()
        && let Some(params) = params.as_object_mut()
    {
        params.remove("_meta");
    }
}

/// The methods whose results a client may cache (the listings, a resource's read, discovery):
/// they carry `ttlMs` and `cacheScope`.
fn is_cacheable(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "server/discover"
    )
}

/// A result of `method` stamped for a 2026-07-28 client: `resultType` (`complete` unless it
/// says otherwise), a cacheable result's caching (`ttlMs` 0 and `cacheScope` `private` unless
/// it says otherwise: what one client is served is not another's), and the server's name in
/// `_meta`.
pub(crate) fn stamp(method: &str, result: &mut Value, server_info: &Value) {
    let Some(result) = result.as_object_mut() else {
        return;
    };
    result
        .entry("resultType")
        .or_insert_with(|| Value::String("complete".to_owned()));
    if is_cacheable(method) {
        result.entry("ttlMs").or_insert_with(|| json!(0));
        result
            .entry("cacheScope")
            .or_insert_with(|| Value::String("private".to_owned()));
    }
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.entry(SERVER_INFO_KEY)
            .or_insert_with(|| server_info.clone());
    }
}

/// The answer to `server/discover`: the versions served, the capabilities, the instructions.
pub(crate) fn discover(capabilities: &Value, instructions: Option<&str>) -> Value {
    let mut supported = vec![MODERN];
    supported.extend(HANDSHAKE);
    let mut result = json!({ "supportedVersions": supported, "capabilities": capabilities });
    if let Some(instructions) = instructions {
        result["instructions"] = Value::String(instructions.to_owned());
    }
    result
}

/// Whether a log message at `level` goes to a request that opted in at `wanted` (none: not
/// sent). Levels as syslog orders them.
pub(crate) fn log_wanted(level: &str, wanted: Option<&str>) -> bool {
    const LEVELS: &[&str] = &[
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ];
    let rank = |level: &str| LEVELS.iter().position(|known| *known == level);
    match (wanted.and_then(rank), rank(level)) {
        (Some(wanted), Some(level)) => level >= wanted,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Value) -> Value {
        json!({ "name": "echo", "_meta": meta })
    }

    #[test]
    fn only_an_answer_naming_2026_07_28_is_a_modern_server() {
        assert!(discovered_modern(
            &json!({ "supportedVersions": ["2026-07-28"], "capabilities": {} })
        ));
        // A server of the handshake era that answers what it does not know with `{}`.
        assert!(!discovered_modern(&json!({})));
        assert!(!discovered_modern(
            &json!({ "supportedVersions": ["2027-01-01"] })
        ));
        assert!(!discovered_modern(
            &json!({ "supportedVersions": "2026-07-28" })
        ));
    }

    #[test]
    fn a_refused_probe_is_a_server_of_the_handshake_era_unless_it_names_a_later_version() {
        use crate::mcp::wire::INVALID_REQUEST;
        let names = |supported: Value| Some(json!({ "supported": supported }));
        let verdict = |code: i64, data: Option<Value>| probe_verdict(code, data.as_ref());
        let http = |status: u16| Some(json!({ HTTP_STATUS_KEY: status }));
        // The method unknown, refused before a handshake, or only handshake versions named:
        // the handshake follows.
        assert_eq!(verdict(METHOD_NOT_FOUND, None), ProbeVerdict::Legacy);
        assert_eq!(verdict(HTTP_FAILED, http(400)), ProbeVerdict::Legacy);
        assert_eq!(verdict(HTTP_FAILED, None), ProbeVerdict::Legacy);
        assert_eq!(verdict(HEADER_MISMATCH, None), ProbeVerdict::Legacy);
        assert_eq!(
            verdict(UNSUPPORTED_PROTOCOL_VERSION, names(json!(["2025-06-18"]))),
            ProbeVerdict::Legacy
        );
        assert_eq!(
            verdict(UNSUPPORTED_PROTOCOL_VERSION, names(json!("2026-07-28"))),
            ProbeVerdict::Legacy
        );
        // A status is the link's own word: a server's error of another code is its own.
        assert_eq!(verdict(INVALID_REQUEST, http(401)), ProbeVerdict::Legacy);
        // A later version only, the client's credentials, the server's own failure, a server
        // not reached: refused.
        assert_eq!(
            verdict(UNSUPPORTED_PROTOCOL_VERSION, names(json!(["2027-03-01"]))),
            ProbeVerdict::Refused
        );
        assert_eq!(verdict(HTTP_FAILED, http(401)), ProbeVerdict::Refused);
        assert_eq!(verdict(HTTP_FAILED, http(403)), ProbeVerdict::Refused);
        assert_eq!(verdict(HTTP_FAILED, http(502)), ProbeVerdict::Refused);
        assert_eq!(
            verdict(HTTP_FAILED, Some(json!({ UNREACHABLE_KEY: true }))),
            ProbeVerdict::Refused
        );
    }

    #[test]
    fn the_checks_run_in_order_and_name_what_is_wrong() {
        let good = params(json!({ PROTOCOL_VERSION_KEY: MODERN, CLIENT_CAPABILITIES_KEY: {} }));
        let headers = Headers {
            version: Some(MODERN.into()),
            method: Some("tools/call".into()),
            name: Some("echo".into()),
        };
        let envelope = check("tools/call", Some(&good), Some(&headers)).unwrap();
        assert_eq!(envelope.version, MODERN);
        // No envelope.
        let refused = check("tools/call", Some(&json!({ "name": "echo" })), None).unwrap_err();
        assert_eq!(refused.code, INVALID_PARAMS);
        // A header that disagrees, before the version is looked at.
        let mut other = headers.clone();
        other.name = Some("other".into());
        let refused = check("tools/call", Some(&good), Some(&other)).unwrap_err();
        assert_eq!(refused.code, HEADER_MISMATCH);
        assert!(refused.message.contains("Mcp-Name"), "{}", refused.message);
        let mut absent = headers.clone();
        absent.version = None;
        assert_eq!(
            check("tools/call", Some(&good), Some(&absent))
                .unwrap_err()
                .code,
            HEADER_MISMATCH
        );
        // A version not served: its data lists those that are.
        let old =
            params(json!({ PROTOCOL_VERSION_KEY: "2030-01-01", CLIENT_CAPABILITIES_KEY: {} }));
        let refused = check("tools/call", Some(&old), None).unwrap_err();
        assert_eq!(refused.code, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(refused.data.unwrap()["supported"][0], MODERN);
        // A name no header can carry as it is comes base64'd.
        let unicode = json!({ "name": "écho", "_meta": { PROTOCOL_VERSION_KEY: MODERN, CLIENT_CAPABILITIES_KEY: {} } });
        let encoded = Headers {
            name: Some("=?base64?w6ljaG8=?=".into()),
            ..headers
        };
        assert!(check("tools/call", Some(&unicode), Some(&encoded)).is_ok());
    }

    #[test]
    fn results_are_stamped_and_envelopes_stripped() {
        let mut listed = json!({ "tools": [] });
        stamp("tools/list", &mut listed, &json!({ "name": "toolsmith" }));
        assert_eq!(listed["resultType"], "complete");
        assert_eq!(listed["ttlMs"], 0);
        assert_eq!(listed["cacheScope"], "private");
        assert_eq!(listed["_meta"][SERVER_INFO_KEY]["name"], "toolsmith");
        let mut asked = json!({ "resultType": "input_required" });
        stamp("tools/call", &mut asked, &json!({}));
        assert_eq!(asked["resultType"], "input_required");
        assert!(asked.get("ttlMs").is_none());
        let mut params =
            json!({ "name": "x", "_meta": { PROTOCOL_VERSION_KEY: MODERN, "progressToken": 1 } });
        without_envelope(&mut params);
        assert_eq!(
            params,
            json!({ "name": "x", "_meta": { "progressToken": 1 } })
        );
        let mut bare = json!({ "_meta": { PROTOCOL_VERSION_KEY: MODERN } });
        without_envelope(&mut bare);
        assert_eq!(bare, json!({}));
        assert!(log_wanted("error", Some("warning")));
        assert!(!log_wanted("info", Some("warning")));
        assert!(!log_wanted("error", None));
        assert_eq!(http_status(Some(METHOD_NOT_FOUND)), 404);
        assert_eq!(http_status(None), 200);
    }
}
