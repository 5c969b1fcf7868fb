//! Small calls through `toolsmith proxy --http`, beside the gateways a team would put in front of
//! the same server, in one run on one machine: the official Python SDK's server
//! (`interop/sdk_server.py`, its `hello` tool) served
//!
//! - **sdk**: by the SDK itself over streamable HTTP (`sdk_server.py --http`), the baseline;
//! - **toolsmith**: by `toolsmith proxy --http --share-upstreams` over it on stdio;
//! - **supergateway**: by supergateway 4.0.0 (`--stdio … --outputTransport streamableHttp
//!   --stateful`);
//! - **mcp-proxy**: by mcp-proxy 6.7.19 (`--server stream -- …`).
//!
//! The client is raw streamable HTTP at protocol 2025-11-25 (reqwest: `initialize`, then POSTs
//! with the session's id), so what is measured is each gateway, not an SDK client. Per front:
//!
//! - **sequential**: one session, 500 calls of `hello` in turn (after 20 to warm up): p50 and
//!   p99 of a call;
//! - **concurrent**: 20 sessions, 50 calls each, all at once: calls per second;
//! - **200 KB**: one session, 20 calls whose result is about 200 KB (`hello` 11,000 times):
//!   p50 (toolsmith cuts it to its cap, 20,000 chars, and keeps the whole as an artifact: what
//!   a client gets of it; the others pass it whole);
//! - **peak memory**: the peak resident memory (VmHWM) of the front's process tree;
//! - **2026-07-28**: the SDK serving HTTP itself and toolsmith (`--share-upstreams`), 50 and
//!   200 clients at once (each its own connection), 20 calls each, every request on its own (no
//!   session: the envelope and the headers): calls per second, p50 and p99.
//!
//! Before TCP_NODELAY was set on every accepted socket, toolsmith's p50 was 44 ms here: an
//! answer's two small writes waited for the client's delayed acknowledgement.
//!
//! `bash interop/setup.sh && cargo bench -p toolsmith-cli --bench small_calls`

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::process::{Child, Command};

const TOKEN: &str = "small-calls-bench-token-0123456789";
const SEQUENTIAL: usize = 500;
const SESSIONS: usize = 20;
const CALLS_EACH: usize = 50;
const BIG_CALLS: usize = 20;

fn interop() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop");
    assert!(
        dir.join("node_modules/.bin/node").exists() && dir.join(".venv/bin/python").exists(),
        "run `bash interop/setup.sh` first"
    );
    dir
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The peak resident memory of `pid` and every process under it, in MiB.
fn peak_mib(pid: u32) -> f64 {
    let own = toolsmith_workspace::status_kib(Some(pid), "VmHWM:").unwrap_or(0) as f64 / 1024.0;
    let children: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|children| {
            children
                .split_whitespace()
                .filter_map(|pid| pid.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect();
    own + children.into_iter().map(peak_mib).sum::<f64>()
}

/// Starts front `name` and waits until it answers on its port.
async fn start(name: &str) -> (Child, String) {
    let python = interop().join(".venv/bin/python");
    let server = interop().join("sdk_server.py");
    let node = interop().join("node_modules/.bin/node");
    let port = free_port();
    let mut command = match name {
        "sdk" => {
            let mut command = Command::new(&python);
            command.arg(&server).args(["--http", &port.to_string()]);
            command
        }
        "toolsmith" => {
            let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
            command
                .args(["proxy", "--http", &format!("127.0.0.1:{port}")])
                .args(["--token-env", "PROXY_TOKEN", "--share-upstreams", "--"])
                .arg(&python)
                .arg(&server)
                .env("PROXY_TOKEN", TOKEN);
            command
        }
        "supergateway" => {
            let mut command = Command::new(&node);
            command
                .arg(interop().join("node_modules/supergateway/dist/index.js"))
                .arg("--stdio")
                .arg(format!("{} {}", python.display(), server.display()))
                .args(["--outputTransport", "streamableHttp", "--stateful"])
                .args(["--port", &port.to_string(), "--logLevel", "none"]);
            command
        }
        "mcp-proxy" => {
            let mut command = Command::new(&node);
            command
                .arg(interop().join("node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs"))
                .args(["--port", &port.to_string(), "--host", "127.0.0.1"])
                .args(["--server", "stream", "--"])
                .arg(&python)
                .arg(&server);
            command
        }
        other => panic!("no front {other}"),
    };
    command
        .kill_on_drop(true)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = command.spawn().expect("the front starts");
    let started = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{name} never listened"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

/// One client session of streamable HTTP at protocol 2025-11-25.
struct Session {
    http: reqwest::Client,
    url: String,
    id: Option<String>,
    next: u64,
}

impl Session {
    async fn open(url: &str) -> Session {
        let mut session = Session {
            http: reqwest::Client::builder()
                .tcp_nodelay(true)
                .build()
                .unwrap(),
            url: url.to_owned(),
            id: None,
            next: 1,
        };
        let params = json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": { "name": "small-calls", "version": "1" } });
        session.request("initialize", params).await;
        session
            .post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        session
    }

    async fn post(&mut self, body: Value) -> (Option<String>, String) {
        let mut request = self
            .http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("Authorization", format!("Bearer {TOKEN}"))
            .body(body.to_string());
        if let Some(id) = &self.id {
            request = request
                .header("Mcp-Session-Id", id)
                .header("MCP-Protocol-Version", "2025-11-25");
        }
        let response = request.send().await.expect("the front answers");
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|id| id.to_str().ok())
            .map(str::to_owned);
        (session, response.text().await.expect("a body"))
    }

    /// The result of `method`, read from a JSON body or from the stream's events.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let (session, body) = self
            .post(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        if self.id.is_none() {
            self.id = session;
        }
        let answer = body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .chain(std::iter::once(body.trim()))
            .filter_map(|text| serde_json::from_str::<Value>(text).ok())
            .find(|message| message["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {method} in {body:.300}"));
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    async fn hello(&mut self, times: u64) -> Value {
        let params = json!({ "name": "hello", "arguments": { "name": "ada", "times": times } });
        self.request("tools/call", params).await
    }
}

/// One MCP 2026-07-28 call of `hello` (no session: the envelope and the headers), its answer's
/// time in ms.
async fn modern_call(http: &reqwest::Client, url: &str, id: u64) -> f64 {
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "hello", "arguments": { "name": "ada", "times": 1 },
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": {} } } });
    let started = Instant::now();
    let response = http
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("Authorization", format!("Bearer {TOKEN}"))
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "hello")
        .body(body.to_string())
        .send()
        .await
        .expect("the front answers");
    let text = response.text().await.expect("a body");
    assert!(text.contains("hello, ada"), "{text:.300}");
    started.elapsed().as_secs_f64() * 1_000.0
}

/// `clients` 2026-07-28 clients at once (each its own connection), `MODERN_CALLS` calls each:
/// calls per second, p50 and p99 of a call.
async fn modern_load(url: &str, clients: usize) -> (f64, f64, f64) {
    const MODERN_CALLS: usize = 20;
    let started = Instant::now();
    let runs = (0..clients).map(|client| {
        let url = url.to_owned();
        async move {
            let http = reqwest::Client::builder()
                .tcp_nodelay(true)
                .build()
                .unwrap();
            let mut times = Vec::with_capacity(MODERN_CALLS);
            for call in 0..MODERN_CALLS {
                times.push(modern_call(&http, &url, (client * MODERN_CALLS + call) as u64).await);
            }
            times
        }
    });
    let mut times: Vec<f64> = futures_util::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect();
    let per_second = times.len() as f64 / started.elapsed().as_secs_f64();
    (
        per_second,
        quantile(&mut times, 0.5),
        quantile(&mut times, 0.99),
    )
}

fn quantile(times: &mut [f64], q: f64) -> f64 {
    times.sort_by(f64::total_cmp);
    times[((times.len() as f64 * q).ceil() as usize).saturating_sub(1)]
}

struct Row {
    p50: f64,
    p99: f64,
    calls_per_second: f64,
    big_p50: f64,
    peak_mib: f64,
}

async fn measure(name: &str) -> Row {
    let (front, url) = start(name).await;
    let pid = front.id().unwrap();
    let mut session = Session::open(&url).await;
    for _ in 0..20 {
        session.hello(1).await;
    }
    let mut times = Vec::with_capacity(SEQUENTIAL);
    for _ in 0..SEQUENTIAL {
        let started = Instant::now();
        session.hello(1).await;
        times.push(started.elapsed().as_secs_f64() * 1_000.0);
    }
    let (p50, p99) = (quantile(&mut times, 0.5), quantile(&mut times, 0.99));
    let mut sessions = Vec::with_capacity(SESSIONS);
    for _ in 0..SESSIONS {
        sessions.push(Session::open(&url).await);
    }
    let started = Instant::now();
    let runs = sessions.into_iter().map(|mut session| async move {
        for _ in 0..CALLS_EACH {
            session.hello(1).await;
        }
    });
    futures_util::future::join_all(runs).await;
    let calls_per_second = (SESSIONS * CALLS_EACH) as f64 / started.elapsed().as_secs_f64();
    let mut big = Vec::with_capacity(BIG_CALLS);
    for _ in 0..BIG_CALLS {
        let started = Instant::now();
        let result = session.hello(11_000).await;
        big.push(started.elapsed().as_secs_f64() * 1_000.0);
        assert!(result["content"][0]["text"].is_string());
    }
    let peak_mib = peak_mib(pid);
    drop(front);
    Row {
        p50,
        p99,
        calls_per_second,
        big_p50: quantile(&mut big, 0.5),
        peak_mib,
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let fronts = ["sdk", "toolsmith", "supergateway", "mcp-proxy"];
    let mut rows = Vec::new();
    for name in fronts {
        let row = measure(name).await;
        eprintln!("{name}: p50 {:.2} ms", row.p50);
        rows.push((name, row));
    }
    // MCP 2026-07-28: no session, each request on its own.
    let mut modern_rows = Vec::new();
    for name in ["sdk", "toolsmith"] {
        let (front, url) = start(name).await;
        // Warm: the gateway's principal session and its server start on the first request.
        let http = reqwest::Client::new();
        for id in 0..5 {
            modern_call(&http, &url, id).await;
        }
        for clients in [50, 200] {
            let (per_second, p50, p99) = modern_load(&url, clients).await;
            eprintln!("{name} 2026-07-28, {clients} clients: {per_second:.0}/s");
            modern_rows.push((name, clients, per_second, p50, p99));
        }
        drop(front);
    }
    let sdk_p50 = rows[0].1.p50;
    println!(
        "| front | small call p50 | p99 | × the SDK's p50 | {SESSIONS} sessions, calls/s | 200 KB p50 | peak memory |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, row) in &rows {
        println!(
            "| {name} | {:.2} ms | {:.2} ms | {:.2}× | {:.0} | {:.1} ms | {:.1} MiB |",
            row.p50,
            row.p99,
            row.p50 / sdk_p50,
            row.calls_per_second,
            row.big_p50,
            row.peak_mib
        );
    }
    println!();
    println!("| front, MCP 2026-07-28 | clients | calls/s | p50 | p99 |");
    println!("|---|---|---|---|---|");
    for (name, clients, per_second, p50, p99) in modern_rows {
        println!("| {name} | {clients} | {per_second:.0} | {p50:.2} ms | {p99:.2} ms |");
    }
}
