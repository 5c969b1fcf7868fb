//! Who may speak to the endpoint, and how: the `Host` and `Origin` a request comes with, the
//! bearer token it carries (and so its principal), and the media types it sends and accepts.

use http::{HeaderMap, Method, StatusCode, header};

use super::table::Credential;
use super::{Body, HttpOptions, full};

/// The endpoint's tokens, each with the principal it names (if it names one).
pub(super) struct Credentials {
    tokens: Vec<(Vec<u8>, Option<String>)>,
}

impl Credentials {
    pub(super) fn new(options: &HttpOptions) -> Self {
        let tokens = options
            .bearer_token
            .iter()
            .map(|token| (token.as_bytes().to_vec(), None))
            .chain(
                options
                    .principal_tokens
                    .iter()
                    .map(|(token, principal)| (token.as_bytes().to_vec(), Some(principal.clone()))),
            )
            .collect();
        Credentials { tokens }
    }

    /// The principal a credential names, if it names one.
    pub(super) fn principal(&self, credential: Credential) -> Option<&str> {
        self.tokens.get(credential?)?.1.as_deref()
    }

    /// Which credential the request carries: `Ok(None)` when the endpoint takes requests
    /// without one; the 401 otherwise. The scheme is matched without regard to case (RFC 9110);
    /// the token against every token, each in time that depends on the lengths only.
    fn check(&self, headers: &HeaderMap) -> Result<Credential, Box<http::Response<Body>>> {
        if self.tokens.is_empty() {
            return Ok(None);
        }
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .unwrap_or_default();
        let mut found = None;
        for (index, (token, _)) in self.tokens.iter().enumerate() {
            // Every token is compared, whichever matches.
            if constant_time_eq(given.as_bytes(), token) {
                found = Some(index);
            }
        }
        match found {
            Some(index) if !given.is_empty() => Ok(Some(index)),
            _ => {
                let mut response = full(
                    StatusCode::UNAUTHORIZED,
                    "a bearer token is required: send `Authorization: Bearer TOKEN`",
                );
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer"),
                );
                Err(Box::new(response))
            }
        }
    }
}

/// Whether the request's `Host` and `Origin` are allowed and its token right: the credential
/// it carries, or the response refusing it.
pub(super) fn admit(
    options: &HttpOptions,
    addr: std::net::SocketAddr,
    credentials: &Credentials,
    headers: &HeaderMap,
) -> Result<Credential, Box<http::Response<Body>>> {
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let host_allowed = is_loopback_host(host)
        || host_name(host) == host_name(&addr.to_string())
        || options
            .allowed_hosts
            .iter()
            .any(|allowed| allowed == host || allowed == host_name(host));
    if !host_allowed {
        return Err(Box::new(full(
            StatusCode::FORBIDDEN,
            format!("the Host `{host}` is not allowed; allow it with an allowed host"),
        )));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let origin_host = origin.split_once("://").map_or(origin, |(_, rest)| {
            rest.split('/').next().unwrap_or_default()
        });
        let allowed = is_loopback_host(origin_host)
            || options
                .allowed_origins
                .iter()
                .any(|allowed| allowed == origin);
        if !allowed {
            return Err(Box::new(full(
                StatusCode::FORBIDDEN,
                format!("the Origin `{origin}` is not allowed; allow it with an allowed origin"),
            )));
        }
    }
    credentials.check(headers)
}

/// Whether a POST sends JSON and accepts both ways an answer comes (JSON and an event
/// stream), and a GET accepts an event stream, as the official SDKs' servers require: the 415
/// or 406 otherwise.
pub(super) fn media_types(
    method: &Method,
    headers: &HeaderMap,
) -> Result<(), Box<http::Response<Body>>> {
    let accepted = |wanted: &str| {
        let (kind, _) = wanted.split_once('/').unwrap_or((wanted, ""));
        headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .map(|item| item.split(';').next().unwrap_or_default().trim())
            .any(|range| {
                range.eq_ignore_ascii_case(wanted)
                    || range == "*/*"
                    || range
                        .strip_suffix("/*")
                        .is_some_and(|k| k.eq_ignore_ascii_case(kind))
            })
    };
    let not_acceptable = |what: &str| {
        Err(Box::new(full(
            StatusCode::NOT_ACCEPTABLE,
            format!("not acceptable: send `Accept: {what}`"),
        )))
    };
    if *method == Method::POST {
        let json = headers
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"));
        if !json {
            return Err(Box::new(full(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the body must be a JSON-RPC message: send `Content-Type: application/json`",
            )));
        }
        if !(accepted("application/json") && accepted("text/event-stream")) {
            return not_acceptable("application/json, text/event-stream");
        }
    } else if *method == Method::GET && !accepted("text/event-stream") {
        return not_acceptable("text/event-stream");
    }
    Ok(())
}

fn is_loopback_host(host: &str) -> bool {
    let name = host_name(host);
    name == "localhost"
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `host` without its port, and without the brackets of an IPv6 address.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    host.rsplit_once(':').map_or(host, |(name, port)| {
        if port.bytes().all(|b| b.is_ascii_digit()) {
            name
        } else {
            host
        }
    })
}

/// Compares two byte strings in time that depends on their lengths only.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_read_without_their_ports() {
        assert_eq!(host_name("localhost:8080"), "localhost");
        assert_eq!(host_name("[::1]:3000"), "::1");
        assert_eq!(host_name("example.com"), "example.com");
        assert!(is_loopback_host("127.0.0.1:9"));
        assert!(is_loopback_host("[::1]:9"));
        assert!(!is_loopback_host("evil.example:80"));
        assert!(constant_time_eq(b"token", b"token"));
        assert!(!constant_time_eq(b"token", b"tokex"));
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        map
    }

    #[test]
    fn the_scheme_is_read_in_any_case_and_each_token_names_its_principal() {
        let options = HttpOptions::new("127.0.0.1:0".parse().unwrap())
            .with_principal_token("token-of-alice-0001", "alice")
            .with_principal_token("token-of-bob-000002", "bob");
        let credentials = Credentials::new(&options);
        for scheme in ["Bearer", "bearer", "BEARER"] {
            let given = headers(&[("authorization", &format!("{scheme} token-of-bob-000002"))]);
            let credential = credentials
                .check(&given)
                .unwrap_or_else(|_| panic!("{scheme}"));
            assert_eq!(credentials.principal(credential), Some("bob"));
        }
        for refused in [
            "Basic token-of-bob-000002",
            "Bearer",
            "Bearer ",
            "token-of-bob-000002",
        ] {
            let given = headers(&[("authorization", refused)]);
            assert!(credentials.check(&given).is_err(), "{refused}");
        }
        assert!(credentials.check(&HeaderMap::new()).is_err());
    }

    #[test]
    fn media_types_are_checked_as_the_sdk_servers_check_them() {
        let json = ("content-type", "application/json");
        let both = ("accept", "application/json, text/event-stream");
        assert!(media_types(&Method::POST, &headers(&[json, both])).is_ok());
        assert!(
            media_types(
                &Method::POST,
                &headers(&[
                    ("content-type", "Application/JSON; charset=utf-8"),
                    ("accept", "*/*")
                ])
            )
            .is_ok()
        );
        let status = |method: Method, pairs: &[(&str, &str)]| {
            media_types(&method, &headers(pairs))
                .err()
                .map(|response| response.status().as_u16())
        };
        assert_eq!(
            status(Method::POST, &[json, ("accept", "application/json")]),
            Some(406)
        );
        assert_eq!(status(Method::POST, &[json]), Some(406));
        assert_eq!(
            status(Method::POST, &[("content-type", "text/plain"), both]),
            Some(415)
        );
        assert_eq!(status(Method::POST, &[both]), Some(415));
        assert_eq!(
            status(Method::GET, &[("accept", "application/json")]),
            Some(406)
        );
        assert_eq!(
            status(Method::GET, &[("accept", "text/event-stream")]),
            None
        );
        assert_eq!(status(Method::DELETE, &[]), None);
    }
}
