//! `toolsmith proxy`'s cost: per-call latency through the proxy against calling the upstream
//! directly, in the same run, and the proxy's peak memory while it passes a 100 MB result; and
//! `toolsmith serve --config`'s: the same call through a registry and its MCP client.
//!
//! `cargo bench -p toolsmith-cli --bench proxy` (it builds the `mcp_fixture_server` example in
//! release first). The upstream is that example; the client is rmcp's.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

const CALLS: usize = 2_000;
const BIG_CHARS: u64 = 100_000_000;

fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the bench knows its path");
    exe.parent()
        .and_then(Path::parent)
        .expect("benches run from target/<profile>/deps")
        .to_path_buf()
}

fn fixture() -> PathBuf {
    let status = std::process::Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "-q",
            "-p",
            "toolsmith-cli",
            "--example",
        ])
        .arg("mcp_fixture_server")
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the fixture server builds");
    target_dir().join("examples").join("mcp_fixture_server")
}

/// A memory figure of process `pid` in MiB (`VmHWM:` the peak, `VmRSS:` the current).
fn resident_mib(pid: &str, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|line| line.starts_with(field))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|kib| kib.parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

async fn call(client: &Client, tool: &str, args: Value) -> usize {
    let Value::Object(arguments) = args else {
        unreachable!()
    };
    match client
        .call_tool_once(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .expect("the call is answered")
    {
        CallToolResponse::Complete(result) => result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|text| text.text.len()))
            .sum(),
        other => panic!("{other:?}"),
    }
}

/// The mean time of a small call, in µs, over `CALLS` sequential calls after a warm-up.
async fn latency(client: &Client) -> f64 {
    for _ in 0..100 {
        call(client, "echo", json!({ "text": "ping" })).await;
    }
    let start = Instant::now();
    for _ in 0..CALLS {
        call(client, "echo", json!({ "text": "ping" })).await;
    }
    start.elapsed().as_secs_f64() * 1e6 / CALLS as f64
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let fixture = fixture();
    let artifacts = tempfile::tempdir().unwrap();

    // rmcp's child-process transport drops a line over 16 MiB; the direct client reads through
    // the same transport with the limit the proxy's client uses (256 MiB).
    let mut upstream = tokio::process::Command::new(&fixture)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let transport = rmcp::transport::async_rw::AsyncRwTransport::<RoleClient, _, _>::new(
        upstream.stdout.take().unwrap(),
        upstream.stdin.take().unwrap(),
    )
    .with_max_line_length(256 << 20);
    let direct: Client = ().serve(transport).await.unwrap();
    let mut proxy_command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    proxy_command
        .arg("proxy")
        .arg("--artifacts")
        .arg(artifacts.path().join("store"))
        .arg("--")
        .arg(&fixture);
    let transport = TokioChildProcess::new(proxy_command).unwrap();
    let proxy_pid = transport.id().expect("the proxy runs").to_string();
    let proxied: Client = ().serve(transport).await.unwrap();

    // `serve` with the fixture's tools beside the standard ones: the call crosses the registry
    // and its MCP client.
    let root = artifacts.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let config = artifacts.path().join("servers.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "fixture": { "command": fixture } } }).to_string(),
    )
    .unwrap();
    let mut serve_command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    serve_command
        .arg("serve")
        .arg("--root")
        .arg(&root)
        .arg("--artifacts")
        .arg(artifacts.path().join("serve-store"))
        .arg("--config")
        .arg(&config);
    let served: Client = ().serve(TokioChildProcess::new(serve_command).unwrap()).await.unwrap();

    // Alternate the three, twice, so drift in the machine falls on all.
    let mut rounds = Vec::new();
    for _ in 0..2 {
        rounds.push((
            latency(&direct).await,
            latency(&proxied).await,
            latency(&served).await,
        ));
    }
    for (round, (direct_us, proxied_us, served_us)) in rounds.iter().enumerate() {
        println!(
            "round {}: echo direct {direct_us:.1} µs/call, through the proxy {proxied_us:.1} µs/call \
             (added {:.1} µs), through serve --config {served_us:.1} µs/call (added {:.1} µs)",
            round + 1,
            proxied_us - direct_us,
            served_us - direct_us
        );
    }
    served.cancel().await.unwrap();

    // 100 MB through the proxy: its peak memory, against what a client decoding the same
    // result directly holds.
    let before = resident_mib("self", "VmHWM:");
    let start = Instant::now();
    let direct_chars = call(&direct, "big", json!({ "chars": BIG_CHARS })).await;
    let direct_time = start.elapsed();
    let decoding = resident_mib("self", "VmHWM:") - before;
    let proxy_idle = resident_mib(&proxy_pid, "VmRSS:");
    let start = Instant::now();
    let proxied_chars = call(&proxied, "big", json!({ "chars": BIG_CHARS })).await;
    let proxied_time = start.elapsed();
    let proxy_peak = resident_mib(&proxy_pid, "VmHWM:");
    println!(
        "100 MB result: direct {direct_chars} chars in {direct_time:.2?}, the client's peak grew \
         {decoding:.0} MiB decoding it; through the proxy {proxied_chars} chars in \
         {proxied_time:.2?}, the proxy's peak {proxy_peak:.0} MiB (idle {proxy_idle:.0} MiB): \
         {:.0} MiB beyond the direct client's decoding",
        proxy_peak - proxy_idle - decoding
    );
    direct.cancel().await.unwrap();
    proxied.cancel().await.unwrap();
}
