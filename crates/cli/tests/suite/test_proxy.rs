//! `toolsmith proxy` in front of an MCP server written with rmcp (the `mcp_fixture_server`
//! example) and in front of `toolsmith serve`, driven by rmcp's client: caps listed, oversized
//! results cut and read back, errors kept, a dying upstream, cancellation and progress passing
//! through, concurrent calls, streamable HTTP, and bad input.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest,
    ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt as _};
use serde_json::{Value, json};

use crate::common;
use crate::fixture;
use common::{alive, text};
use fixture::fixture;

/// Collects the progress messages the proxy forwards.
#[derive(Clone, Default)]
struct Watcher {
    progress: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Watcher {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(message) = params.message {
            self.progress.lock().unwrap().push(message);
        }
    }
}

type Client = RunningService<RoleClient, Watcher>;

struct Proxy {
    client: Client,
    watcher: Watcher,
    dir: tempfile::TempDir,
}

fn proxy_command(dir: &Path, options: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    command
        .arg("proxy")
        .arg("--artifacts")
        .arg(dir.join("artifacts"))
        .args(options);
    command
}

async fn start(options: &[&str], upstream: &[&str]) -> Proxy {
    let dir = tempfile::tempdir().unwrap();
    let mut command = proxy_command(dir.path(), options);
    command.arg("--").args(upstream);
    let watcher = Watcher::default();
    let transport = TokioChildProcess::new(command).expect("the proxy starts");
    let client = watcher
        .clone()
        .serve(transport)
        .await
        .expect("the proxy initializes");
    Proxy {
        client,
        watcher,
        dir,
    }
}

async fn start_fixture(options: &[&str]) -> Proxy {
    let fixture = fixture();
    start(options, &[fixture.to_str().unwrap()]).await
}

impl Proxy {
    async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        common::call(&self.client, tool, args).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_with_their_caps_and_annotations() {
    let proxy = start_fixture(&["--max-result-chars", "5000"]).await;
    let tools = proxy.client.list_tools(None).await.unwrap().tools;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in ["echo", "big", "fail", "slow", "die", "read_artifact"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    for tool in &tools {
        let cap = tool
            .meta
            .as_ref()
            .and_then(|meta| meta.0.get("anthropic/maxResultSizeChars"))
            .and_then(Value::as_u64);
        assert_eq!(cap, Some(5_000), "{}: {:?}", tool.name, tool.meta);
        if tool.name != "read_artifact" {
            let description = tool.description.as_deref().unwrap_or_default();
            assert!(
                description.contains("Results over 5,000 characters are cut"),
                "{description}"
            );
        }
    }
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(
        echo.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );
    let result = proxy.call("echo", json!({ "text": "hello" })).await;
    assert_eq!(text(&result), "hello");
    assert_ne!(result.is_error, Some(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_result_is_cut_and_read_back_whole() {
    let proxy = start_fixture(&["--max-result-chars", "5000"]).await;
    let result = proxy.call("big", json!({ "chars": 200_000 })).await;
    let shown = text(&result);
    assert!(shown.chars().count() <= 5_000, "{}", shown.len());
    assert!(shown.starts_with("line 00000001 "), "{}", &shown[..80]);
    let marker = toolsmith::trim::find_marker(&shown).expect("the cut result has a marker");
    let toolsmith::trim::MarkedFull::Stored { id, .. } = marker.full else {
        panic!("the marker names no artifact: {shown}");
    };
    // A line from the middle, cut from the result, is in the artifact.
    assert!(!shown.contains("line 00001500 "));
    let page = proxy
        .call(
            "read_artifact",
            json!({ "id": id, "offset": 1499, "limit": 1 }),
        )
        .await;
    assert!(text(&page).contains("line 00001500 "), "{}", text(&page));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_errors_stay_errors_and_content_is_carried() {
    let proxy = start_fixture(&[]).await;
    let failed = proxy.call("fail", json!({})).await;
    assert_eq!(failed.is_error, Some(true));
    assert!(
        text(&failed).contains("the upstream failed on purpose"),
        "{}",
        text(&failed)
    );

    // An image passes as the image it was, beside its caption, blocks in order.
    let image = proxy.call("image", json!({})).await;
    let blocks = serde_json::to_value(&image.content).unwrap();
    assert_eq!(
        blocks,
        json!([
            { "type": "text", "text": "a caption" },
            { "type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB", "mimeType": "image/png" },
        ])
    );

    // An image too large for one answer is left out, named; `read_artifact` of it refuses at
    // once and names the way on (its base64 in pages), and that way works.
    let big = proxy.call("image", json!({ "bytes": 9_000_000 })).await;
    let note = text(&big);
    let id = note
        .split("artifact ")
        .nth(1)
        .and_then(|rest| rest.get(..32))
        .unwrap_or_else(|| panic!("a note naming the artifact: {note}"));
    let refused = proxy.call("read_artifact", json!({ "id": id })).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("offset=1 and a limit"),
        "{}",
        text(&refused)
    );
    let page = proxy
        .call(
            "read_artifact",
            json!({ "id": id, "offset": 1, "limit": 1 }),
        )
        .await;
    assert_ne!(page.is_error, Some(true), "{}", text(&page));
    assert!(text(&page).contains("AAAA"), "{:.300}", text(&page));

    // Structured content over the cap (a tool without an output schema) is cut as JSON and
    // stays valid JSON, within the cap with its text; its text is cut as text.
    let structured = proxy.call("structured", json!({})).await;
    let value = structured
        .structured_content
        .clone()
        .expect("structured content is kept");
    assert!(value["issues"].is_array(), "{value:.200}");
    let written = value.to_string();
    assert!(
        written.chars().count() <= 20_000,
        "{}",
        written.chars().count()
    );
    assert!(
        toolsmith::trim::find_marker(&written).is_some(),
        "{written:.300}"
    );
    assert!(text(&structured).chars().count() <= 20_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dying_upstream_gives_an_error_naming_it_and_is_restarted() {
    let proxy = start_fixture(&[]).await;
    let first = text(&proxy.call("pid", json!({})).await);
    let died = proxy.call("die", json!({})).await;
    assert_eq!(died.is_error, Some(true));
    assert!(
        text(&died).contains("the MCP server `mcp_fixture_server` ended while running `die`"),
        "{}",
        text(&died)
    );
    let again = proxy.call("pid", json!({})).await;
    assert_ne!(again.is_error, Some(true), "{}", text(&again));
    assert_ne!(text(&again), first, "a new server process answers");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_reaches_the_upstream_and_progress_comes_back() {
    let proxy = start_fixture(&[]).await;
    let marker = proxy.dir.path().join("cancelled");
    let Value::Object(arguments) = json!({ "secs": 30, "marker": marker.to_str().unwrap() }) else {
        unreachable!()
    };
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("slow").with_arguments(arguments),
    ));
    let handle = proxy
        .client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    // Progress of the upstream reaches this client through the proxy.
    for _ in 0..200 {
        if !proxy.watcher.progress.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let progress = proxy.watcher.progress.lock().unwrap().clone();
    assert!(
        progress.iter().any(|message| message.starts_with("step ")),
        "{progress:?}"
    );
    handle
        .cancel(Some("the user stopped it".into()))
        .await
        .unwrap();
    for _ in 0..200 {
        if marker.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        std::fs::read_to_string(&marker).ok().as_deref(),
        Some("cancelled"),
        "the upstream never saw the cancellation"
    );
    // The session goes on.
    assert_eq!(
        text(&proxy.call("echo", json!({ "text": "on" })).await),
        "on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_in_flight_together_run_together() {
    let proxy = start_fixture(&[]).await;
    let calls = (0..3).map(|_| proxy.call("rendezvous", json!({ "n": 3 })));
    let results = futures_util::future::join_all(calls).await;
    for result in &results {
        assert_eq!(text(result), "met", "the calls were not concurrent");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_stdin_ends_the_proxy_and_its_upstream() {
    let proxy = start_fixture(&[]).await;
    let pid: u32 = text(&proxy.call("pid", json!({})).await).parse().unwrap();
    assert!(alive(pid));
    proxy.client.cancel().await.unwrap();
    for _ in 0..200 {
        if !alive(pid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(!alive(pid), "the upstream outlived the proxy");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_serves_several_servers_prefixed_with_toolsmith_serve_among_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("notes.md"), "alpha\nbeta\n").unwrap();
    let config = dir.path().join("servers.json");
    let servers = json!({ "mcpServers": {
        "fixture": { "command": fixture() },
        "std": {
            "command": env!("CARGO_BIN_EXE_toolsmith"),
            "args": ["serve", "--root", root, "--artifacts", dir.path().join("inner")],
        },
    }});
    std::fs::write(&config, servers.to_string()).unwrap();
    // Names are served as the servers list them, except where two collide (or a server's
    // `read_artifact` meets the proxy's own).
    let proxy = start(&["--config", config.to_str().unwrap()], &[]).await;
    let tools = proxy.client.list_tools(None).await.unwrap().tools;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in [
        "echo",
        "read_file",
        "run_command",
        "std__read_artifact",
        "read_artifact",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let read = proxy.call("read_file", json!({ "path": "notes.md" })).await;
    assert!(text(&read).contains("beta"), "{}", text(&read));
    let echo = proxy.call("echo", json!({ "text": "x" })).await;
    assert_eq!(text(&echo), "x");
    drop(proxy);

    // Asked to, every name gets its server's.
    let proxy = start(&["--prefix-all", "--config", config.to_str().unwrap()], &[]).await;
    let tools = proxy.client.list_tools(None).await.unwrap().tools;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in [
        "fixture__echo",
        "std__read_file",
        "std__read_artifact",
        "read_artifact",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let echo = proxy.call("fixture__echo", json!({ "text": "y" })).await;
    assert_eq!(text(&echo), "y");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_two_servers_share_get_their_servers_and_a_failing_server_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    let servers = json!({ "mcpServers": {
        "one": { "command": fixture() },
        "two": { "command": fixture() },
        "broken": { "command": "/nonexistent/mcp-server" },
    }});
    std::fs::write(&config, servers.to_string()).unwrap();
    let proxy = start(&["--config", config.to_str().unwrap()], &[]).await;
    let info = proxy.client.peer_info().expect("the proxy initialized");
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(
        instructions.contains("MCP server `broken`: cannot start `/nonexistent/mcp-server`"),
        "{instructions}"
    );
    let tools = proxy.client.list_tools(None).await.unwrap().tools;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"one__echo") && names.contains(&"two__echo"),
        "{names:?}"
    );
    assert!(!names.contains(&"echo"), "{names:?}");
    let one = text(&proxy.call("one__pid", json!({})).await);
    let two = text(&proxy.call("two__pid", json!({})).await);
    assert_ne!(one, two, "each name reaches its own server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_is_proxied() {
    let mut server = tokio::process::Command::new(fixture())
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines =
        tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(server.stdout.take().unwrap()));
    let url = lines
        .next_line()
        .await
        .unwrap()
        .expect("the server prints its address");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "remote": { "url": url } } }).to_string(),
    )
    .unwrap();
    let proxy = start(&["--config", config.to_str().unwrap()], &[]).await;
    let echo = proxy.call("echo", json!({ "text": "over http" })).await;
    assert_eq!(text(&echo), "over http");
    let big = text(&proxy.call("big", json!({ "chars": 100_000 })).await);
    assert!(big.chars().count() <= 20_000);
    assert!(toolsmith::trim::find_marker(&big).is_some());
    drop(proxy);
    server.kill().await.unwrap();
}

/// Runs `toolsmith proxy` with `args` to its end, within 20 s: its exit code and stderr.
async fn proxy_fails(args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut command = proxy_command(dir.path(), args);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command.spawn().unwrap();
    let output = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("the proxy gave up in time")
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Starts `toolsmith proxy` with `args`, sends a client's `initialize`, and returns the error
/// it answers with and what the proxy wrote on stderr once its input ended.
async fn initialize_fails(args: &[&str]) -> (String, String) {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let dir = tempfile::tempdir().unwrap();
    let mut command = proxy_command(dir.path(), args);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } },
    });
    stdin
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let answer = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("the proxy answers in time")
        .unwrap()
        .expect("an answer");
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("the proxy ends with its input")
        .unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    (
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_upstreams_and_configs_are_refused_with_what_to_do() {
    // A server is started when the client initializes: its failure is the answer, and the log.
    let (error, stderr) = initialize_fails(&["--", "/nonexistent/mcp-server"]).await;
    for text in [&error, &stderr] {
        assert!(
            text.contains("MCP server `mcp-server`: cannot start `/nonexistent/mcp-server`")
                && text.contains("check the command"),
            "{text}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let not_json = dir.path().join("bad.json");
    std::fs::write(&not_json, "mcpServers: {}").unwrap();
    let (code, stderr) = proxy_fails(&["--config", not_json.to_str().unwrap()]).await;
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("not valid JSON"), "{stderr}");

    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, r#"{"mcpServers": {}}"#).unwrap();
    let (code, stderr) = proxy_fails(&["--config", empty.to_str().unwrap()]).await;
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("names no servers"), "{stderr}");

    let fixture = fixture();
    let (error, _) = initialize_fails(&[
        "--init-timeout",
        "1",
        "--",
        fixture.to_str().unwrap(),
        "--hang",
    ])
    .await;
    assert!(
        error.contains("MCP server `mcp_fixture_server` did not answer `initialize` within 1s"),
        "{error}"
    );

    let (code, stderr) = proxy_fails(&[]).await;
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("after `--`"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_tools_run_in_a_registry_beside_local_ones_under_its_rules() {
    use toolsmith::mcp::McpClient;
    use toolsmith::schema::Dialect;
    use toolsmith::tool::ToolLimits;
    use toolsmith::{Registry, ToolCall};

    let dir = tempfile::tempdir().unwrap();
    let client = McpClient::stdio("fixture", fixture().to_str().unwrap())
        .prefixed(true)
        .limits(ToolLimits::default().with_timeout(Some(Duration::from_secs(1))))
        .connect()
        .await
        .unwrap();
    assert_eq!(client.name(), "fixture");
    let registry = toolsmith_std::register(Registry::builder())
        .state(toolsmith_std::Sandbox::new(dir.path()).unwrap())
        .tools(client.tools())
        .build()
        .unwrap();
    std::fs::write(dir.path().join("notes.md"), "alpha\n").unwrap();

    // A tool its server annotates as destructive is preserved from history compaction, as the
    // standard write and exec tools are; the others are not.
    let preserved: Vec<&str> = registry.preserved_tools().collect();
    assert_eq!(
        preserved,
        ["write_file", "edit_file", "run_command", "fixture__die"]
    );

    // A schema a dialect cannot express is named with its keyword.
    let error = registry.schemas(Dialect::Gemini).unwrap_err().to_string();
    assert!(
        error.contains("fixture__odd") && error.contains("patternProperties"),
        "{error}"
    );

    // One batch: a local read, a remote echo, and a remote call past its timeout.
    let marker = dir.path().join("cancelled");
    let results = registry
        .turn()
        .execute([
            ToolCall::new("a", "read_file", json!({ "path": "notes.md" })),
            ToolCall::new("b", "fixture__echo", json!({ "text": "remote" })),
            ToolCall::new(
                "c",
                "fixture__slow",
                json!({ "secs": 30, "marker": marker.to_str().unwrap() }),
            ),
        ])
        .await;
    assert!(
        results[0].content.contains("alpha"),
        "{}",
        results[0].content
    );
    assert_eq!(results[1].content, "remote");
    assert!(results[2].is_error(), "{}", results[2].content);
    assert_eq!(
        results[2].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::Timeout),
        "{}",
        results[2].content
    );
    for _ in 0..200 {
        if marker.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(
        marker.exists(),
        "the server was not told the call timed out"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_progress_is_bounded_and_the_call_still_answers() {
    use toolsmith::mcp::McpClient;
    use toolsmith::tool::Event;
    use toolsmith::{Registry, ToolCall};

    let client = McpClient::stdio("fixture", fixture().to_str().unwrap())
        .connect()
        .await
        .unwrap();
    let registry = Registry::builder().tools(client.tools()).build().unwrap();
    let mut events = registry.subscribe();
    // 3,000 notifications of 20,000 chars each (60 MB), sent as fast as the server can.
    let results = registry
        .turn()
        .execute([ToolCall::new(
            "a",
            "flood",
            json!({ "count": 3_000, "chars": 20_000 }),
        )])
        .await;
    assert_eq!(results[0].content, "flooded");
    let mut forwarded = 0;
    let mut last = -1.0;
    loop {
        match events.try_recv() {
            Ok(Event::Progress {
                message, progress, ..
            }) => {
                forwarded += 1;
                // Each message is cut to 1,000 chars and an ellipsis.
                assert!(message.chars().count() <= 1_001, "{}", message.len());
                assert!(message.ends_with('…'));
                // The server's own figures come with it, in order.
                let progress = progress.expect("the server's figure");
                assert!(progress > last, "{progress} after {last}");
                last = progress;
            }
            Ok(_) | Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => {}
            Err(_) => break,
        }
    }
    assert!(forwarded > 0, "some progress passes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_message_limit_fails_its_call_at_once_and_the_session_goes_on() {
    use toolsmith::mcp::McpClient;
    use toolsmith::tool::ToolLimits;
    use toolsmith::{Registry, ToolCall};

    let client = McpClient::stdio("fixture", fixture().to_str().unwrap())
        .max_message_bytes(1_000_000)
        // Long enough that a call waiting for a dropped answer would end as a timeout.
        .limits(ToolLimits::default().with_timeout(Some(Duration::from_secs(60))))
        .connect()
        .await
        .unwrap();
    let registry = Registry::builder().tools(client.tools()).build().unwrap();
    let results = registry
        .turn()
        .execute([ToolCall::new("a", "big", json!({ "chars": 3_000_000 }))])
        .await;
    assert_eq!(
        results[0].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::Failed),
        "{}",
        results[0].content
    );
    assert_eq!(
        results[0].content,
        "Error: the MCP server `fixture` answered `big` with a message over the client's limit \
         of 1,000,000 bytes, so it was not read. Ask for less in one call (a narrower query, a \
         smaller page)"
    );
    // The same session answers the next call.
    let results = registry
        .turn()
        .execute([ToolCall::new("b", "echo", json!({ "text": "still here" }))])
        .await;
    assert_eq!(results[0].content, "still here");
}
