//! `toolsmith proxy`: MCP servers served again, transparently, with every result within a cap.

use std::time::Duration;

use toolsmith::mcp::{Prefix, Proxy, Upstream};

use crate::args::{Http, Proxy as ProxyArgs};
use crate::{Failure, fail};

/// Relays to the servers `options` names, on stdio or over HTTP, until the client (or the
/// process) ends.
pub(crate) async fn run(options: ProxyArgs) -> Result<(), Failure> {
    if options.max_result_chars < 1_000 {
        return Err(fail(format!(
            "--max-result-chars {}: too small to hold a marker and some content; use 1000 \
             or more",
            options.max_result_chars
        )));
    }
    // `--prefix-all` over what the configuration says; else each server's own mode.
    let prefix = |upstream: Upstream| {
        if options.prefix_all {
            upstream.prefix(Prefix::Always)
        } else {
            upstream
        }
    };
    let upstreams = match (&options.config, options.command.split_first()) {
        (Some(path), _) => {
            let servers = crate::wiring::servers_config(path)?;
            let mut upstreams = Vec::new();
            for (name, server) in &servers {
                // A server whose settings cannot be read is left out; the others are served.
                match Upstream::from_config(name, server) {
                    Ok(upstream) => upstreams.push(prefix(upstream)),
                    Err(error) => eprintln!(
                        "toolsmith proxy: --config {}: {error}; the other servers are served",
                        path.display()
                    ),
                }
            }
            if upstreams.is_empty() {
                return Err(fail(format!(
                    "--config {}: no server could be set up (see above)",
                    path.display()
                )));
            }
            upstreams
        }
        (None, Some((program, args))) => {
            vec![prefix(
                Upstream::command(server_name(program, args), program).args(args),
            )]
        }
        (None, None) => {
            return Err(fail(
                "name the server to proxy after `--` (toolsmith proxy -- npx -y @some/server) \
                 or give --config FILE",
            ));
        }
    };
    let store = crate::wiring::artifact_store(options.artifacts.as_deref())?;
    let mut proxy = Proxy::new(upstreams);
    if let Some(cap) = options.tokens.cap()? {
        proxy = proxy
            .max_result_tokens(Some(cap.max()))
            .token_counter(std::sync::Arc::clone(cap.counter()));
    }
    let proxy = proxy
        .max_result_chars(options.max_result_chars)
        .media_limits(options.media.limits())
        .shared_artifacts(store)
        .tool_search(options.tool_search)
        .share_upstreams(options.share_upstreams)
        .warm_upstreams(options.warm_upstreams)
        .timeout(Duration::from_secs(options.timeout.max(1)))
        .init_timeout(Duration::from_secs(options.init_timeout.max(1)));
    let listening = match &options.http.http {
        Some(_) => Some(http_options(&options.http)?),
        None => None,
    };
    match listening {
        None => proxy
            .serve_stdio()
            .await
            .map_err(|error| fail(error.to_string())),
        Some(listening) => {
            let server = proxy
                .serve_http(listening.options.clone())
                .await
                .map_err(|error| fail(error.to_string()))?;
            announce(server.local_addr(), &listening);
            stopped().await;
            Ok(())
        }
    }
}

/// The name a server started as `program args…` is known by: the program's, or, for a
/// launcher (`npx -y @scope/server-git`, `node server.mjs`, `uvx mcp-server-git`), the first
/// argument that is not an option, without its directory, scope and extension.
fn server_name(program: &str, args: &[String]) -> String {
    const LAUNCHERS: &[&str] = &[
        "node", "nodejs", "npx", "bun", "bunx", "deno", "python", "python3", "uv", "uvx", "pipx",
        "docker", "podman",
    ];
    let stem = |path: &str| {
        let name = std::path::Path::new(path).file_name().map_or_else(
            || path.to_owned(),
            |name| name.to_string_lossy().into_owned(),
        );
        match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() && ext.len() <= 4 => stem.to_owned(),
            _ => name,
        }
    };
    let program_name = stem(program);
    if !LAUNCHERS.contains(&program_name.as_str()) {
        return program_name;
    }
    args.iter()
        .filter(|arg| !arg.starts_with('-') && !matches!(arg.as_str(), "run" | "exec" | "x"))
        .map(|arg| stem(arg.rsplit('/').next().unwrap_or(arg)))
        .find(|name| !name.is_empty())
        .unwrap_or(program_name)
}

/// The listener's options from the command line: the address, the tokens (a variable's, a
/// file's, or one made now), the origins and hosts allowed, the session limits. The tokens are
/// withheld from every process started from now on.
pub(crate) fn http_options(http: &Http) -> Result<Listening, Failure> {
    let Some(addr) = &http.http else {
        return Err(fail("--http needs an address, like 127.0.0.1:8080"));
    };
    let addr: std::net::SocketAddr = addr.parse().map_err(|_| {
        fail(format!(
            "--http {addr}: not an address; write an IP and a port, like 127.0.0.1:8080"
        ))
    })?;
    let mut options = toolsmith::mcp::HttpOptions::new(addr)
        .with_max_sessions(http.max_sessions.max(1))
        .with_session_idle_timeout(std::time::Duration::from_secs(
            http.session_idle_timeout.max(1),
        ));
    let mut limits = toolsmith::mcp::Limits::new();
    if let Some(per_minute) = http.rate_limit.and_then(std::num::NonZeroU32::new) {
        limits = limits.with_requests_per_minute(per_minute);
    }
    let at_once = |calls: u64| usize::try_from(calls).unwrap_or(usize::MAX);
    if let Some(calls) = http.max_calls_per_principal {
        limits = limits.with_calls_per_principal(at_once(calls));
    }
    if let Some(calls) = http.max_calls {
        limits = limits.with_calls(at_once(calls));
    }
    let metrics = toolsmith::mcp::MetricsOptions::default()
        .with_by_principal(http.metrics_by_principal)
        .with_enabled(!http.no_metrics);
    options = options.with_limits(limits).with_metrics(metrics);
    let mut secrets = Vec::new();
    let mut made = None;
    if let Some(variable) = &http.token_env {
        let token = std::env::var(variable).map_err(|_| {
            fail(format!(
                "--token-env {variable}: the variable is not set; set it to the token clients \
                 must send"
            ))
        })?;
        check_token(&token, &format!("--token-env {variable}"))?;
        toolsmith::process::withhold_variable(variable);
        secrets.push(token.clone());
        options = options.with_bearer_token(token);
    }
    if let Some(file) = &http.tokens {
        for (token, principal) in read_tokens(file)? {
            secrets.push(token.clone());
            options = options.with_principal_token(token, principal);
        }
    }
    if http.allow_unauthenticated {
        if !addr.ip().is_loopback() {
            return Err(fail(format!(
                "--http {addr}: listening beyond this machine needs a token; drop \
                 --allow-unauthenticated and set one with --token-env or --tokens"
            )));
        }
    } else if secrets.is_empty() {
        let token = toolsmith::artifacts::ArtifactId::generate()
            .map_err(|error| fail(format!("no token could be made: {error}")))?
            .to_string();
        options = options.with_bearer_token(token.clone());
        made = Some(token.clone());
        secrets.push(token);
    }
    // A token that is also the value of another variable stays out of children too.
    for (name, value) in std::env::vars_os() {
        if secrets.iter().any(|secret| value == secret.as_str()) {
            toolsmith::process::withhold_variable(name);
        }
    }
    for origin in &http.allow_origin {
        options = options.with_allowed_origin(origin);
    }
    for host in &http.allow_host {
        options = options.with_allowed_host(host);
    }
    Ok(Listening {
        options,
        made,
        open: http.allow_unauthenticated,
    })
}

/// The listener's options, and the token made for it when none was given.
pub(crate) struct Listening {
    pub(crate) options: toolsmith::mcp::HttpOptions,
    made: Option<String>,
    /// Whether it takes requests without a token.
    open: bool,
}

fn check_token(token: &str, whence: &str) -> Result<(), Failure> {
    if token.chars().count() < 16 {
        return Err(fail(format!(
            "{whence}: the token is {} chars; use 16 or more",
            token.chars().count()
        )));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(fail(format!(
            "{whence}: a token is visible ASCII without spaces (it travels in an HTTP header)"
        )));
    }
    Ok(())
}

/// The tokens of a `--tokens` file, each with its principal: a JSON object, the file readable
/// by its owner alone.
fn read_tokens(file: &std::path::Path) -> Result<Vec<(String, String)>, Failure> {
    let shown = file.display();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let meta = std::fs::metadata(file)
            .map_err(|error| fail(format!("--tokens {shown}: cannot read it ({error})")))?;
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(fail(format!(
                "--tokens {shown}: other users can read it; run `chmod 600 {shown}`"
            )));
        }
    }
    let text = std::fs::read_to_string(file)
        .map_err(|error| fail(format!("--tokens {shown}: cannot read it ({error})")))?;
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&text).map_err(|error| {
            fail(format!(
                "--tokens {shown}: not a JSON object of tokens to principals, like \
                 {{\"TOKEN\": \"alice\"}} ({error})"
            ))
        })?;
    if map.is_empty() {
        return Err(fail(format!("--tokens {shown}: it holds no token")));
    }
    map.into_iter()
        .map(|(token, principal)| {
            let Some(principal) = principal.as_str() else {
                return Err(fail(format!(
                    "--tokens {shown}: a token's principal is a string, like \"alice\""
                )));
            };
            check_token(&token, &format!("--tokens {shown}"))?;
            toolsmith::artifacts::Owner::principal(principal)
                .map_err(|error| fail(format!("--tokens {shown}: {error}")))?;
            Ok((token, principal.to_owned()))
        })
        .collect()
}

/// Says where the endpoint is, on stderr (the first line a script can read), and the token
/// made for it, if one was.
pub(crate) fn announce(addr: std::net::SocketAddr, listening: &Listening) {
    eprintln!("toolsmith: listening on http://{addr}/mcp");
    if let Some(token) = &listening.made {
        eprintln!(
            "toolsmith: clients send `Authorization: Bearer {token}` (a token made for this run; \
             set your own with --token-env or --tokens)"
        );
    }
    if listening.open {
        eprintln!(
            "toolsmith: warning: --allow-unauthenticated: any program of any user of this \
             machine can run the servers' tools and read every session's artifacts through \
             http://{addr}/mcp"
        );
    }
}

/// Waits for Ctrl-C or SIGTERM.
pub(crate) async fn stopped() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::server_name;

    #[test]
    fn a_launched_server_is_named_by_what_it_launches() {
        let args = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            server_name("/usr/bin/github-mcp-server", &args(&["stdio"])),
            "github-mcp-server"
        );
        assert_eq!(
            server_name("npx", &args(&["-y", "@modelcontextprotocol/server-git"])),
            "server-git"
        );
        assert_eq!(
            server_name("node", &args(&["/srv/hostile-server.mjs", "names"])),
            "hostile-server"
        );
        assert_eq!(
            server_name("uvx", &args(&["mcp-server-git"])),
            "mcp-server-git"
        );
        assert_eq!(server_name("python3", &args(&["-m"])), "python3");
    }
}
