//! Gateway replicas on one bucket: two `toolsmith proxy --http` processes with the same
//! `--artifacts s3://…` prefix, in front of the same tools, on a real S3-compatible server
//! (moto, on loopback). An artifact written for a principal through one replica is read by that
//! principal through the other after the first was killed; another principal cannot read it.

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};
use toolsmith::mcp::McpClient;
use toolsmith::{Registry, ToolCall, ToolResult};
use toolsmith_workspace::s3::S3Server;

/// How long any step may take before the test fails rather than hangs.
const PATIENCE: Duration = Duration::from_secs(60);

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdef01";

/// 1,000 lines none like the next: under the upstream's own cap, over the gateway's.
const RANDOM_LINES: &str =
    "awk 'BEGIN { srand(7); for (i = 1; i <= 1000; i++) print int(rand() * 1e9), \"line\", i }'";

/// A replica: `toolsmith proxy --http` over `toolsmith serve`, its artifacts in the bucket.
async fn replica(server: &S3Server, dir: &std::path::Path) -> (Child, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    command
        .args(["proxy", "--max-result-chars", "2000"])
        .args(["--artifacts", "s3://replicas/gateway"])
        .args(["--http", "127.0.0.1:0", "--tokens"])
        .arg(dir.join("tokens.json"))
        .args(["--", env!("CARGO_BIN_EXE_toolsmith"), "serve", "--root"])
        .arg(dir)
        .arg("--artifacts")
        .arg(dir.join("upstream-artifacts"))
        .envs(server.env())
        .kill_on_drop(true)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = tokio::time::timeout(PATIENCE, lines.next_line())
        .await
        .expect("the replica says where it listens")
        .unwrap()
        .unwrap();
    // Keep draining: a replica must never die writing to a closed pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let url = first.rsplit(' ').next().unwrap().to_owned();
    (child, url)
}

/// One call through the replica at `url`, as `token`'s principal.
async fn call(url: &str, token: &str, tool: &str, args: serde_json::Value) -> ToolResult {
    let client = McpClient::http("gateway", url)
        .header("Authorization", format!("Bearer {token}"))
        .connect()
        .await
        .expect("the replica answers initialize");
    let registry = Registry::builder()
        .tools(client.tools())
        .build()
        .expect("a registry over the replica's tools");
    let mut results = tokio::time::timeout(
        PATIENCE,
        registry.turn().execute([ToolCall::new("1", tool, args)]),
    )
    .await
    .expect("the call is answered");
    results.remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_principals_artifact_outlives_its_replica_and_stays_its_own() {
    use std::os::unix::fs::PermissionsExt as _;
    let server = S3Server::start();
    server.create_bucket("replicas");
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    std::fs::write(&tokens, json!({ ALICE: "alice", BOB: "bob" }).to_string()).unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();

    let (mut a, url_a) = replica(&server, dir.path()).await;
    let (_b, url_b) = replica(&server, dir.path()).await;
    let cut = call(
        &url_a,
        ALICE,
        "run_command",
        json!({ "command": RANDOM_LINES }),
    )
    .await;
    let marker = toolsmith::trim::find_marker(&cut.content).expect("the long result is cut");
    let toolsmith::trim::MarkedFull::Stored { id, .. } = marker.full else {
        panic!("kept as an artifact: {}", cut.content);
    };

    // Replica A is gone; its sessions with it. Alice's artifact is in the bucket.
    a.kill().await.unwrap();
    a.wait().await.unwrap();
    let read = call(
        &url_b,
        ALICE,
        "gateway__read_artifact",
        json!({ "id": id, "offset": 995 }),
    )
    .await;
    assert!(!read.is_error(), "{}", read.content);
    assert!(read.content.contains("line 1000\n"), "{}", read.content);

    // Bob, through the same replica, gets the answer for an id that never was.
    let other = call(
        &url_b,
        BOB,
        "gateway__read_artifact",
        json!({ "id": id, "offset": 995 }),
    )
    .await;
    assert!(other.is_error(), "{}", other.content);
    assert!(!other.content.contains("line 1000"), "{}", other.content);
    assert!(other.content.contains("not found"), "{}", other.content);
}

/// `toolsmith call` in a container that lives for one call: the artifact is read back by the
/// next process, from the bucket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calls_artifact_in_a_bucket_is_read_by_the_next_process() {
    let server = S3Server::start();
    server.create_bucket("calls");
    let dir = tempfile::tempdir().unwrap();
    let toolsmith = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        command
            .arg("call")
            .args(args)
            .args(["--artifacts", "s3://calls/agent-7"])
            .current_dir(dir.path())
            .envs(server.env())
            .kill_on_drop(true);
        command
    };
    let cut = toolsmith(&["run_command", r#"{"command":"seq 1 2000000"}"#])
        .output()
        .await
        .unwrap();
    assert!(cut.status.success(), "{cut:?}");
    let text = String::from_utf8(cut.stdout).unwrap();
    let marker = toolsmith::trim::find_marker(&text).expect("the long result is cut");
    let toolsmith::trim::MarkedFull::Stored { id, .. } = marker.full else {
        panic!("kept as an artifact: {text}");
    };
    let args = json!({ "id": id, "offset": 1_999_995 }).to_string();
    let read = toolsmith(&["read_artifact", &args]).output().await.unwrap();
    let page = String::from_utf8(read.stdout).unwrap();
    assert!(read.status.success(), "{page}");
    assert!(
        page.contains("\n1999996\n") && page.contains("\n2000000\n"),
        "{page}"
    );
    // Nothing was written where the command ran: the bucket holds it all.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_location_of_no_known_scheme_is_refused_naming_those_there_are() {
    let dir = tempfile::tempdir().unwrap();
    for location in [
        "ftp://host/artifacts",
        "s3:bucket/prefix",
        "gcs://bucket/prefix",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .args(["call", "run_command", r#"{"command":"seq 1 5"}"#])
            .args(["--artifacts", location])
            .current_dir(dir.path())
            .output()
            .await
            .unwrap();
        let said = String::from_utf8(out.stderr).unwrap();
        assert!(!out.status.success(), "{location}: {said}");
        assert!(
            said.contains(&format!("`{location}` is not an artifact store location")),
            "{said}"
        );
        assert!(
            said.contains("s3://") && said.contains("gs://") && said.contains("az://"),
            "{said}"
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no directory named after a scheme"
    );
}

/// One MCP 2026-07-28 request (no session: the envelope and the headers say everything) to the
/// replica at `url`, as `token`'s principal; the answer.
async fn modern(
    url: &str,
    token: &str,
    method: &str,
    mut params: serde_json::Value,
) -> serde_json::Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut request = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method);
    for key in ["name", "uri"] {
        if let Some(named) = params[key].as_str() {
            request = request.header("Mcp-Name", named);
        }
    }
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let answer = tokio::time::timeout(PATIENCE, request.json(&body).send())
        .await
        .expect("the replica answers in time")
        .unwrap();
    answer.json().await.unwrap()
}

/// With MCP 2026-07-28 there is no session to be affine to: requests of one principal alternate
/// between two replicas on one bucket, and each answers — a call cut on one, its artifact read
/// on the other (by `resources/read` and by `read_artifact`), and another principal refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_client_needs_no_affinity_between_replicas() {
    use std::os::unix::fs::PermissionsExt as _;
    let server = S3Server::start();
    server.create_bucket("replicas");
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    std::fs::write(&tokens, json!({ ALICE: "alice", BOB: "bob" }).to_string()).unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (_a, url_a) = replica(&server, dir.path()).await;
    let (_b, url_b) = replica(&server, dir.path()).await;

    let listed = modern(&url_a, ALICE, "tools/list", json!({})).await;
    assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    let cut = modern(
        &url_b,
        ALICE,
        "tools/call",
        json!({ "name": "run_command", "arguments": { "command": RANDOM_LINES } }),
    )
    .await;
    let text = cut["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let marker = toolsmith::trim::find_marker(text).unwrap_or_else(|| panic!("cut: {cut}"));
    let toolsmith::trim::MarkedFull::Stored { id, .. } = marker.full else {
        panic!("kept as an artifact: {text}");
    };
    let uri = format!("toolsmith://artifact/{id}?offset=995");
    let read = modern(&url_a, ALICE, "resources/read", json!({ "uri": uri })).await;
    let page = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(page.contains("line 1000\n"), "{read}");
    let again = modern(
        &url_b,
        ALICE,
        "tools/call",
        json!({ "name": "read_artifact", "arguments": { "id": id, "offset": 995 } }),
    )
    .await;
    let page = again["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(page.contains("line 1000\n"), "{again}");

    // Bob, on either replica: no such artifact.
    let other = modern(&url_a, BOB, "resources/read", json!({ "uri": uri })).await;
    assert!(other.get("result").is_none(), "{other}");
    assert!(!other.to_string().contains("line 1000"), "{other}");
    let other = modern(
        &url_b,
        BOB,
        "tools/call",
        json!({ "name": "read_artifact", "arguments": { "id": id, "offset": 995 } }),
    )
    .await;
    assert_eq!(other["result"]["isError"], true, "{other}");
    assert!(!other.to_string().contains("line 1000"), "{other}");
}

/// nginx as people run it in front of gateway replicas: Debian's package, one upstream of the
/// replicas, round-robin, no stickiness (docs/operating.md, "Replicas behind a load balancer").
/// Run in the foreground as one process, its files in `dir`, listening on `port`.
fn nginx(dir: &std::path::Path, port: u16, replicas: &[&str]) -> Child {
    let nginx = ["/usr/sbin/nginx", "/usr/local/sbin/nginx"]
        .into_iter()
        .map(std::path::PathBuf::from)
        .find(|path| path.exists())
        .expect("nginx is not installed: run `bash interop/setup.sh` (Debian's package nginx)");
    let servers: String = replicas
        .iter()
        .map(|url| {
            let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
            format!("        server {address};\n")
        })
        .collect();
    let config = include_str!("../../../../docs/nginx-replicas.conf")
        .replace(
            "        server 10.0.0.1:8080;\n        server 10.0.0.2:8080;\n",
            &servers,
        )
        .replace("listen 8080;", &format!("listen 127.0.0.1:{port};"));
    let config = format!(
        "daemon off;\nmaster_process off;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log;\n\
         {config}",
        dir = dir.display()
    )
    .replace(
        "http {\n",
        &format!(
            "http {{\n    access_log off;\n    client_body_temp_path {dir}/body;\n    \
             proxy_temp_path {dir}/proxy;\n    fastcgi_temp_path {dir}/fastcgi;\n    \
             uwsgi_temp_path {dir}/uwsgi;\n    scgi_temp_path {dir}/scgi;\n",
            dir = dir.display()
        ),
    );
    let path = dir.join("nginx.conf");
    std::fs::write(&path, config).unwrap();
    Command::new(nginx)
        .arg("-p")
        .arg(dir)
        .arg("-c")
        .arg(&path)
        .kill_on_drop(true)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nginx starts")
}

/// What a replica's `/metrics` counts of `series` (summed over its labels, of the lines that
/// hold `label`).
async fn counted(url: &str, series: &str, label: &str) -> f64 {
    let metrics = url.replace("/mcp", "/metrics");
    let text = reqwest::Client::new()
        .get(metrics)
        .bearer_auth(ALICE)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter(|line| line.starts_with(series) && line.contains(label))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Two replicas behind nginx, round-robin, no stickiness: a 2026-07-28 client's call cut on
/// one replica has its artifact read on the other, another principal is refused, and with one
/// replica killed mid-run the next requests are answered by the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_behind_nginx_need_no_affinity_and_outlive_each_other() {
    use std::os::unix::fs::PermissionsExt as _;
    let server = S3Server::start();
    server.create_bucket("replicas");
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    std::fs::write(&tokens, json!({ ALICE: "alice", BOB: "bob" }).to_string()).unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (mut a, url_a) = replica(&server, dir.path()).await;
    let (_b, url_b) = replica(&server, dir.path()).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let balancer = tempfile::tempdir().unwrap();
    let _nginx = nginx(balancer.path(), port, &[&url_a, &url_b]);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let waited = std::time::Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(waited.elapsed() < PATIENCE, "nginx never listened");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let listed = modern(&url, ALICE, "tools/list", json!({})).await;
    assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    let cut = modern(
        &url,
        ALICE,
        "tools/call",
        json!({ "name": "run_command", "arguments": { "command": RANDOM_LINES } }),
    )
    .await;
    let text = cut["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let marker = toolsmith::trim::find_marker(text).unwrap_or_else(|| panic!("cut: {cut}"));
    let toolsmith::trim::MarkedFull::Stored { id, .. } = marker.full else {
        panic!("kept as an artifact: {text}");
    };
    let read = modern(
        &url,
        ALICE,
        "tools/call",
        json!({ "name": "read_artifact", "arguments": { "id": id, "offset": 995 } }),
    )
    .await;
    let page = read["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(page.contains("line 1000\n"), "{read}");
    // Round-robin: the call went to one replica and the read to the other.
    let on = |url: String| async move {
        (
            counted(&url, "toolsmith_calls_total", "tool=\"run_command\"").await,
            counted(&url, "toolsmith_artifact_reads_total", "").await,
        )
    };
    let (on_a, on_b) = (on(url_a.clone()).await, on(url_b.clone()).await);
    assert!(
        (on_a == (1.0, 0.0) && on_b == (0.0, 1.0)) || (on_a == (0.0, 1.0) && on_b == (1.0, 0.0)),
        "(calls, reads) on A {on_a:?}, on B {on_b:?}: cut on one replica, read on the other"
    );
    // And as a resource, through whichever replica is next.
    let uri = format!("toolsmith://artifact/{id}?offset=995");
    let read = modern(&url, ALICE, "resources/read", json!({ "uri": uri })).await;
    let page = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(page.contains("line 1000\n"), "{read}");

    // Bob, through the balancer to either replica: no such artifact.
    for _ in 0..2 {
        let other = modern(&url, BOB, "resources/read", json!({ "uri": uri })).await;
        assert!(other.get("result").is_none(), "{other}");
        assert!(!other.to_string().contains("line 1000"), "{other}");
    }

    // Replica A dies mid-run: every next request is answered, by B.
    a.kill().await.unwrap();
    a.wait().await.unwrap();
    for _ in 0..4 {
        let again = modern(
            &url,
            ALICE,
            "tools/call",
            json!({ "name": "read_artifact", "arguments": { "id": id, "offset": 995 } }),
        )
        .await;
        let page = again["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(page.contains("line 1000\n"), "{again}");
    }
}
