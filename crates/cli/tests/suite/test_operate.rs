//! A gateway a team operates: its figures scraped from `/metrics` and parsed after real calls,
//! through the proxy and through `serve`; its limits per principal answered 429 with
//! `Retry-After` under a burst and under calls at once.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::mcp::{HttpOptions, HttpServer, Limits, McpClient, McpServer, Proxy, Upstream};
use toolsmith::{Registry, ToolCall};

/// How long any step may take before the test fails rather than hangs.
const PATIENCE: Duration = Duration::from_secs(60);

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdef01";

/// 1,000 lines of about 20 chars, none like the next: under run_command's own cap, over the
/// gateway's, and nothing to fold.
const RANDOM_LINES: &str =
    "awk 'BEGIN { srand(7); for (i = 1; i <= 1000; i++) print int(rand() * 1e9), \"line\", i }'";

fn options() -> HttpOptions {
    HttpOptions::new("127.0.0.1:0".parse().unwrap())
        .with_principal_token(ALICE, "alice")
        .with_principal_token(BOB, "bob")
}

/// `toolsmith serve` on stdio, its workspace and artifacts in `dir`.
fn standard_tools(dir: &std::path::Path) -> Upstream {
    let artifacts = dir.join("artifacts");
    Upstream::command("std", env!("CARGO_BIN_EXE_toolsmith")).args([
        "serve".to_owned(),
        "--root".to_owned(),
        dir.display().to_string(),
        "--artifacts".to_owned(),
        artifacts.display().to_string(),
    ])
}

/// A registry over the gateway's tools, as `token`'s principal, with a budget large enough
/// that what the gateway sent is what comes back.
async fn client_of(server: &HttpServer, token: &str) -> (McpClient, Registry) {
    let client = McpClient::http("gateway", format!("http://{}/mcp", server.local_addr()))
        .header("Authorization", format!("Bearer {token}"))
        .connect()
        .await
        .expect("the gateway answers initialize");
    let registry = Registry::builder()
        .tools(client.tools())
        .build()
        .expect("a registry over the gateway's tools");
    (client, registry)
}

/// A scrape of `/metrics`, parsed as Prometheus parses it: each sample by its name and labels.
struct Scrape {
    samples: Vec<prometheus_parse::Sample>,
}

impl Scrape {
    async fn of(server: &HttpServer, token: Option<&str>) -> Result<Scrape, reqwest::StatusCode> {
        let mut request =
            reqwest::Client::new().get(format!("http://{}/metrics", server.local_addr()));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = tokio::time::timeout(PATIENCE, request.send())
            .await
            .expect("/metrics in time")
            .unwrap();
        if !response.status().is_success() {
            return Err(response.status());
        }
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            content_type.starts_with("text/plain; version=0.0.4"),
            "{content_type}"
        );
        let text = response.text().await.unwrap();
        let lines = text.lines().map(|line| Ok(line.to_owned()));
        let parsed = prometheus_parse::Scrape::parse(lines).expect("Prometheus text");
        Ok(Scrape {
            samples: parsed.samples,
        })
    }

    /// The value of the sample `name` whose labels include `labels` (0 when there is none).
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.samples
            .iter()
            .filter(|sample| sample.metric == name)
            .filter(|sample| {
                labels
                    .iter()
                    .all(|(key, value)| sample.labels.get(key) == Some(*value))
            })
            .map(|sample| match sample.value {
                prometheus_parse::Value::Counter(value)
                | prometheus_parse::Value::Gauge(value)
                | prometheus_parse::Value::Untyped(value) => value,
                prometheus_parse::Value::Histogram(ref buckets) => {
                    buckets.last().map_or(0.0, |bucket| bucket.count)
                }
                _ => 0.0,
            })
            .sum()
    }
}

async fn run(registry: &Registry, calls: Vec<ToolCall>) -> Vec<toolsmith::ToolResult> {
    tokio::time::timeout(PATIENCE, registry.turn().execute(calls))
        .await
        .expect("the calls answer in time")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxys_metrics_count_real_calls_chars_kept_out_cuts_artifacts_and_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let server = Proxy::new([standard_tools(dir.path())])
        .max_result_chars(2_000)
        .serve_http(
            options()
                .with_metrics(toolsmith::mcp::MetricsOptions::default().with_by_principal(true)),
        )
        .await
        .unwrap();
    // Behind the endpoint's token.
    assert_eq!(
        Scrape::of(&server, None).await.err(),
        Some(reqwest::StatusCode::UNAUTHORIZED)
    );
    let (client, registry) = client_of(&server, ALICE).await;
    let results = run(
        &registry,
        vec![
            // Under the upstream's own budget (80,000 chars), over the gateway's.
            // Lines that do not fold (random numbers).
            ToolCall::new("1", "run_command", json!({ "command": RANDOM_LINES })),
            ToolCall::new("2", "run_command", json!({ "command": "echo small" })),
            // A command that fails is a result that says so, not an error result.
            ToolCall::new("3", "run_command", json!({ "command": "exit 3" })),
            ToolCall::new("5", "read_file", json!({ "path": "no-such-file" })),
        ],
    )
    .await;
    let marker = toolsmith::trim::find_marker(&results[0].content).expect("the long one is cut");
    let toolsmith::trim::MarkedFull::Stored { id, .. } = marker.full else {
        panic!("kept as an artifact: {}", results[0].content);
    };
    let read = run(
        &registry,
        vec![ToolCall::new(
            "4",
            // The client's registry has a read_artifact of its own: the gateway's is prefixed.
            "gateway__read_artifact",
            json!({ "id": id, "offset": 995 }),
        )],
    )
    .await;
    assert!(!read[0].is_error(), "{}", read[0].content);
    assert!(
        read[0].content.contains("line 1000\n"),
        "{}",
        read[0].content
    );

    let scrape = Scrape::of(&server, Some(ALICE)).await.unwrap();
    let of_run = [
        ("server", "std"),
        ("tool", "run_command"),
        ("principal", "alice"),
    ];
    let calls = |outcome: &str| {
        let mut labels = of_run.to_vec();
        labels.push(("outcome", outcome));
        scrape.value("toolsmith_calls_total", &labels)
    };
    assert_eq!(calls("ok"), 3.0);
    assert_eq!(calls("error"), 0.0);
    assert!(results[3].is_error(), "{}", results[3].content);
    assert_eq!(
        scrape.value(
            "toolsmith_calls_total",
            &[("tool", "read_file"), ("outcome", "error")]
        ),
        1.0
    );
    let received = scrape.value("toolsmith_result_chars_received_total", &of_run);
    let sent = scrape.value("toolsmith_result_chars_sent_total", &of_run);
    let kept_out = scrape.value("toolsmith_result_chars_kept_out_total", &of_run);
    // What the clients saw is what was sent: the three results' texts, and the link to the
    // cut one's artifact, which the proxy counts as its JSON and the client reads as a line.
    let seen: usize = results[..3]
        .iter()
        .map(|result| as_the_proxy_counts(&result.content))
        .sum();
    assert_eq!(sent as usize, seen);
    assert!(received > 15_000.0, "{received}");
    assert_eq!(kept_out, received - sent);
    assert_eq!(scrape.value("toolsmith_results_cut_total", &of_run), 1.0);
    assert_eq!(
        scrape.value("toolsmith_call_duration_seconds_count", &of_run),
        3.0
    );
    assert!(scrape.value("toolsmith_artifacts_written_total", &[]) >= 1.0);
    assert_eq!(scrape.value("toolsmith_artifact_reads_total", &[]), 1.0);
    assert_eq!(
        scrape.value(
            "toolsmith_calls_total",
            &[("tool", "read_artifact"), ("outcome", "ok")]
        ),
        1.0
    );
    assert_eq!(scrape.value("toolsmith_sessions_opened_total", &[]), 1.0);
    assert_eq!(scrape.value("toolsmith_sessions_open", &[]), 1.0);
    client.shutdown().await;
    server.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_counts_the_same_figures_from_its_results() {
    let dir = tempfile::tempdir().unwrap();
    let store = toolsmith::artifacts::DirStore::open(dir.path().join("artifacts")).unwrap();
    let registry = toolsmith_std::register(Registry::builder())
        .state(toolsmith_std::Sandbox::new(dir.path()).unwrap())
        .artifacts(store)
        .budget(toolsmith::BudgetPolicy::default().with_batch_budget_chars(3_000))
        .build()
        .unwrap();
    let server = McpServer::new(registry)
        .unwrap()
        .serve_http(options())
        .await
        .unwrap();
    let (client, registry) = client_of(&server, BOB).await;
    let results = run(
        &registry,
        vec![ToolCall::new(
            "1",
            "run_command",
            json!({ "command": "seq 1 5000" }),
        )],
    )
    .await;
    assert!(
        results[0].content.contains("[toolsmith:"),
        "{}",
        results[0].content
    );
    let scrape = Scrape::of(&server, Some(BOB)).await.unwrap();
    let of_run = [("tool", "run_command")];
    assert_eq!(
        scrape.value(
            "toolsmith_calls_total",
            &[("tool", "run_command"), ("outcome", "ok")]
        ),
        1.0
    );
    let received = scrape.value("toolsmith_result_chars_received_total", &of_run);
    let sent = scrape.value("toolsmith_result_chars_sent_total", &of_run);
    assert_eq!(sent as usize, results[0].content.chars().count());
    // `seq 1 5000` prints 23,893 chars; run_command adds a line of its own.
    assert!((23_893.0..24_000.0).contains(&received), "{received}");
    assert_eq!(scrape.value("toolsmith_results_cut_total", &of_run), 1.0);
    assert_eq!(scrape.value("toolsmith_artifacts_written_total", &[]), 1.0);
    // Names a client makes up are one series, not one each.
    let raw = session(&server, BOB).await;
    let made_up = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": { "name": "no_such_tool", "arguments": {} } });
    assert_eq!(post(&server, BOB, Some(&raw), &made_up).await.0, 200);
    let scrape = Scrape::of(&server, Some(BOB)).await.unwrap();
    let unknown = scrape.value(
        "toolsmith_calls_total",
        &[("tool", "_unknown"), ("outcome", "error")],
    );
    let made_up = scrape.value("toolsmith_calls_total", &[("tool", "no_such_tool")]);
    assert_eq!((unknown, made_up), (1.0, 0.0));
    client.shutdown().await;
    server.shutdown();
}

/// A raw JSON-RPC POST to the gateway: its status, `Retry-After`, and session id.
async fn post(
    server: &HttpServer,
    token: &str,
    session: Option<&str>,
    body: &Value,
) -> (u16, Option<String>, Option<String>) {
    let mut request = reqwest::Client::new()
        .post(format!("http://{}/mcp", server.local_addr()))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = tokio::time::timeout(PATIENCE, request.send())
        .await
        .expect("an answer in time")
        .unwrap();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
    };
    let (retry, session) = (header("retry-after"), header("mcp-session-id"));
    let status = response.status().as_u16();
    // The answer's stream read to its end: the call is over.
    let _ = tokio::time::timeout(PATIENCE, response.bytes()).await;
    (status, retry, session)
}

/// A session of `token`'s principal, initialized.
async fn session(server: &HttpServer, token: &str) -> String {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "burst", "version": "1" } },
    });
    let (status, _, session) = post(server, token, None, &initialize).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    assert_eq!(
        post(server, token, Some(&session), &initialized).await.0,
        202
    );
    session
}

fn ping(id: u64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "ping" })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_past_a_principals_rate_is_answered_429_with_retry_after_and_others_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits::new().with_requests_per_minute(NonZeroU32::new(5).unwrap());
    let server = Proxy::new([standard_tools(dir.path())])
        .serve_http(options().with_limits(limits))
        .await
        .unwrap();
    // initialize is the first of alice's five.
    let alice = session(&server, ALICE).await;
    let mut statuses = HashMap::<u16, usize>::new();
    let mut retry_after = Vec::new();
    for id in 1..=10 {
        let (status, retry, _) = post(&server, ALICE, Some(&alice), &ping(id)).await;
        *statuses.entry(status).or_default() += 1;
        retry_after.extend(retry.filter(|_| status == 429));
    }
    assert_eq!(statuses.get(&200), Some(&4), "{statuses:?}");
    assert_eq!(statuses.get(&429), Some(&6), "{statuses:?}");
    // One request comes back every 12 s: each 429 says when, in whole seconds.
    for seconds in &retry_after {
        let seconds: u64 = seconds.parse().expect("Retry-After in seconds");
        assert!((1..=12).contains(&seconds), "{seconds}");
    }
    assert_eq!(retry_after.len(), 6);
    // Notifications are not limited: a client can still cancel what it started.
    let cancelled = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": { "requestId": 1 } });
    assert_eq!(post(&server, ALICE, Some(&alice), &cancelled).await.0, 202);
    // Bob has a rate of his own.
    let bob = session(&server, BOB).await;
    assert_eq!(post(&server, BOB, Some(&bob), &ping(1)).await.0, 200);
    let scrape = Scrape::of(&server, Some(BOB)).await.unwrap();
    assert_eq!(
        scrape.value("toolsmith_requests_limited_total", &[("reason", "rate")]),
        6.0
    );
    server.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_at_once_past_a_principals_bound_are_answered_429_until_one_ends() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits::new().with_calls_per_principal(1).with_calls(2);
    let server = Proxy::new([standard_tools(dir.path())])
        .serve_http(options().with_limits(limits))
        .await
        .unwrap();
    let alice = session(&server, ALICE).await;
    let bob = session(&server, BOB).await;
    let call = |id: u64, seconds: u32| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "run_command",
                            "arguments": { "command": format!("sleep {seconds}") } } })
    };
    // Alice's first call runs for 3 s; her second, meanwhile, is refused; Bob's runs.
    let first_call = call(1, 3);
    let slow = post(&server, ALICE, Some(&alice), &first_call);
    let meanwhile = async {
        tokio::time::sleep(Duration::from_millis(800)).await;
        let second = post(&server, ALICE, Some(&alice), &call(2, 0)).await;
        let bobs = post(&server, BOB, Some(&bob), &call(1, 0)).await;
        (second, bobs)
    };
    let (first, (second, bobs)) = tokio::join!(slow, meanwhile);
    assert_eq!(first.0, 200);
    assert_eq!(second.0, 429);
    assert_eq!(second.1.as_deref(), Some("1"));
    assert_eq!(bobs.0, 200);
    // Her first call over, she calls again.
    assert_eq!(post(&server, ALICE, Some(&alice), &call(3, 0)).await.0, 200);
    let scrape = Scrape::of(&server, Some(ALICE)).await.unwrap();
    assert_eq!(
        scrape.value(
            "toolsmith_requests_limited_total",
            &[("reason", "concurrency")]
        ),
        1.0
    );
    server.shutdown();
}

/// An OTLP/HTTP receiver on loopback, as a collector would be: every body POSTed to
/// `/v1/traces`, read as JSON (the exporter sends `http/json` when told).
async fn otlp_receiver() -> (
    std::net::SocketAddr,
    tokio::sync::mpsc::UnboundedReceiver<Value>,
) {
    use http_body_util::BodyExt as _;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (received, bodies) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let received = received.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: hyper::Request<_>| {
                    let received = received.clone();
                    async move {
                        let path = request.uri().path().to_owned();
                        let body: hyper::body::Incoming = request.into_body();
                        let bytes = body.collect().await?.to_bytes();
                        if path == "/v1/traces"
                            && let Ok(json) = serde_json::from_slice::<Value>(&bytes)
                        {
                            let _ = received.send(json);
                        }
                        Ok::<_, hyper::Error>(hyper::Response::new(http_body_util::Full::new(
                            hyper::body::Bytes::from_static(b"{}"),
                        )))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (addr, bodies)
}

/// An attribute of an OTLP span in JSON, as text: `{"key": …, "value": {"stringValue": …}}`.
fn attribute(span: &Value, key: &str) -> Option<String> {
    let value = &span["attributes"]
        .as_array()?
        .iter()
        .find(|attribute| attribute["key"] == key)?["value"];
    let inner = value.as_object()?.values().next()?;
    Some(match inner {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_relayed_call_is_a_span_exported_over_otlp_with_its_sizes_and_artifact() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let dir = tempfile::tempdir().unwrap();
    let (addr, mut bodies) = otlp_receiver().await;
    let upstream = dir.path().join("upstream");
    let mut proxy = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["proxy", "--max-result-chars", "2000", "--artifacts"])
        .arg(dir.path().join("artifacts"))
        .args(["--", env!("CARGO_BIN_EXE_toolsmith"), "serve", "--root"])
        .arg(dir.path())
        .arg("--artifacts")
        .arg(&upstream)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}"))
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("OTEL_SERVICE_NAME", "gateway-under-test")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(proxy.stdout.take().unwrap()).lines();
    let messages = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": { "name": "traced", "version": "1" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": { "name": "run_command", "arguments": { "command": RANDOM_LINES } } }),
    ];
    for message in &messages {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    let answer = tokio::time::timeout(PATIENCE, async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the proxy answers");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == 2 {
                return message;
            }
        }
    })
    .await
    .expect("the call answers in time");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    let marker = toolsmith::trim::find_marker(text).expect("the result is cut");
    let toolsmith::trim::MarkedFull::Stored { id, .. } = marker.full else {
        panic!("kept as an artifact: {text}");
    };
    // The client goes: the proxy exports what is left, then ends.
    drop(stdin);
    let status = tokio::time::timeout(PATIENCE, proxy.wait())
        .await
        .expect("the proxy ends")
        .unwrap();
    assert!(status.success(), "{status}");

    let mut spans = Vec::new();
    while let Ok(body) = bodies.try_recv() {
        for resource in body["resourceSpans"].as_array().unwrap() {
            let service = resource["resource"]["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|attribute| attribute["key"] == "service.name")
                .map(|attribute| attribute["value"]["stringValue"].clone());
            assert_eq!(service, Some(json!("gateway-under-test")));
            for scope in resource["scopeSpans"].as_array().unwrap() {
                spans.extend(scope["spans"].as_array().unwrap().iter().cloned());
            }
        }
    }
    let call = spans
        .iter()
        .find(|span| {
            span["name"] == "tools/call"
                && attribute(span, "tool").as_deref() == Some("run_command")
        })
        .unwrap_or_else(|| panic!("no span of the call in {spans:#?}"));
    assert_eq!(attribute(call, "server").as_deref(), Some("toolsmith"));
    assert_eq!(attribute(call, "tool").as_deref(), Some("run_command"));
    assert_eq!(attribute(call, "outcome").as_deref(), Some("ok"));
    assert_eq!(attribute(call, "cut").as_deref(), Some("true"));
    let chars = |key: &str| -> u64 {
        attribute(call, key)
            .and_then(|value| value.trim_matches('"').parse().ok())
            .unwrap_or_else(|| panic!("{key} in {call:#}"))
    };
    assert!(chars("chars.received") > 15_000, "{call:#}");
    // What a reader sees: the cut text, and the link to its artifact after it (its JSON)
    // where the cap left room for one.
    let link = answer["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|block| block["type"] == "resource_link")
        .map(|link| link.to_string().chars().count())
        .sum::<usize>();
    assert_eq!(chars("chars.sent"), (text.chars().count() + link) as u64);
    assert_eq!(attribute(call, "artifact.id"), Some(id));
}

/// The chars of a result's text as the proxy counted what it sent: a `resource_link` block to
/// an artifact, which the MCP client reads as a line of its own, counts as the block's JSON.
fn as_the_proxy_counts(content: &str) -> usize {
    let mut chars = content.chars().count();
    for line in content.lines() {
        if let Some(uri) = line
            .strip_prefix("[resource link: full output (text/plain): ")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            let block = json!({
                "type": "resource_link", "uri": uri, "name": "full output", "mimeType": "text/plain"
            });
            // The line and the line break before it, for the block's JSON.
            chars = chars - line.chars().count() - 1 + block.to_string().chars().count();
        }
    }
    chars
}
