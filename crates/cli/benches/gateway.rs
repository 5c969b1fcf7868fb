//! `toolsmith proxy --http` under load, next to the official TypeScript SDK's own streamable
//! HTTP server serving the same tool on the same machine, in the same run.
//!
//! For each number of clients (50 and 200; `GATEWAY_CLIENTS=50,200,…` for others), the
//! official SDK's client (`interop/load-client.mjs`, one Node process) opens that many
//! sessions at once, then each calls `test_simple_text` 20 times in turn, all sessions
//! together. Served by:
//!
//! - **sdk**: the SDK's server (`interop/fixture-server.mjs --http`), the baseline;
//! - **shared**: `toolsmith proxy --http --share-upstreams` over that server on stdio;
//! - **per-session**: `toolsmith proxy --http` over it, one server process per session;
//! - **warm=N**: the same with `--warm-upstreams N`, N processes started ahead (the pool
//!   filled before the clients come), for each N of `GATEWAY_WARM` (4 and 16 by default).
//!
//! Reported: sessions served, the time to open a session (p50, p99, from the moment all
//! were asked for), resident memory per session (the server's process tree, after all opened,
//! less before any did), and calls per second.
//!
//! `bash interop/setup.sh && cargo bench -p toolsmith-cli --bench gateway`

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, Command};

const CALLS: usize = 20;
const TOKEN: &str = "gateway-bench-token-0123456789";

fn interop() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop");
    assert!(
        dir.join("node_modules/.bin/node").exists(),
        "run `bash interop/setup.sh` first"
    );
    dir
}

fn node() -> PathBuf {
    interop().join("node_modules/.bin/node")
}

/// The resident memory of `pid` and every process under it, in MiB.
fn tree_mib(pid: u32) -> f64 {
    let own = toolsmith_workspace::status_kib(Some(pid), "VmRSS:").unwrap_or(0) as f64 / 1024.0;
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
    own + children.into_iter().map(tree_mib).sum::<f64>()
}

/// Starts a server and reads its URL from the last word of its first line (on `stderr` or
/// stdout); the stream is drained afterwards.
async fn serve(mut command: Command, on_stderr: bool) -> (Child, String) {
    command.kill_on_drop(true).stdin(Stdio::null());
    if on_stderr {
        command.stderr(Stdio::piped()).stdout(Stdio::null());
    } else {
        command.stdout(Stdio::piped()).stderr(Stdio::null());
    }
    let mut child = command.spawn().expect("the server starts");
    let stream: Box<dyn tokio::io::AsyncRead + Unpin + Send> = if on_stderr {
        Box::new(child.stderr.take().unwrap())
    } else {
        Box::new(child.stdout.take().unwrap())
    };
    let mut lines = BufReader::new(stream).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("the server says where it listens")
        .unwrap()
        .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, line.rsplit(' ').next().unwrap().to_owned())
}

/// One row of the table.
struct Row {
    served: usize,
    failed: usize,
    p50: f64,
    p99: f64,
    mib_per_session: f64,
    calls_per_second: f64,
    errors: u64,
}

/// `clients` sessions of the server `command` starts.
async fn load(command: Command, on_stderr: bool, clients: usize, settle: Duration) -> Row {
    let (server, url) = serve(command, on_stderr).await;
    let pid = server.id().unwrap();
    // A shared server starts as the gateway does, a pool fills: let them settle first.
    tokio::time::sleep(settle).await;
    let before = tree_mib(pid);
    let mut driver = Command::new(node())
        .arg(interop().join("load-client.mjs"))
        .arg(&url)
        .arg(clients.to_string())
        .arg(CALLS.to_string())
        .env("PROXY_TOKEN", TOKEN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    let mut stdin = driver.stdin.take().unwrap();
    let mut lines = BufReader::new(driver.stdout.take().unwrap()).lines();
    let opened: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = tree_mib(pid);
    stdin.write_all(b"go\n").await.unwrap();
    let called: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    let _ = driver.wait().await;
    drop(server);
    let mut times: Vec<f64> = opened["opened"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    times.sort_by(f64::total_cmp);
    let at = |q: f64| {
        times
            .get(((times.len() as f64 * q).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(f64::NAN)
    };
    let failed = opened["failed"].as_u64().unwrap_or(0) as usize;
    if failed > 0 {
        eprintln!("  failures: {}", opened["why"]);
    }
    Row {
        served: times.len(),
        failed,
        p50: at(0.5),
        p99: at(0.99),
        mib_per_session: (after - before) / times.len().max(1) as f64,
        calls_per_second: called["calls"].as_f64().unwrap_or(0.0)
            / called["seconds"].as_f64().unwrap_or(f64::NAN),
        errors: called["errors"].as_u64().unwrap_or(0),
    }
}

fn sdk() -> Command {
    let mut command = Command::new(node());
    command
        .arg(interop().join("fixture-server.mjs"))
        .args(["--http", "0"]);
    command
}

fn gateway(dir: &Path, shared: bool, warm: usize) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    command
        .args(["proxy", "--artifacts"])
        .arg(dir.join("artifacts"))
        .args(["--http", "127.0.0.1:0", "--token-env", "PROXY_TOKEN"])
        .args(["--max-sessions", "1000"]);
    if shared {
        command.arg("--share-upstreams");
    }
    if warm > 0 {
        command.args(["--warm-upstreams", &warm.to_string()]);
    }
    command
        .arg("--")
        .arg(node())
        .arg(interop().join("fixture-server.mjs"))
        .env("PROXY_TOKEN", TOKEN);
    command
}

#[tokio::main]
async fn main() {
    let counts: Vec<usize> = std::env::var("GATEWAY_CLIENTS")
        .unwrap_or_else(|_| "50,200".to_owned())
        .split(',')
        .filter_map(|count| count.trim().parse().ok())
        .collect();
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!(
        "gateway load, {cores} cores, {CALLS} calls of test_simple_text per session after all opened"
    );
    println!(
        "{:<12} {:>7} {:>7} {:>7} {:>10} {:>10} {:>12} {:>10}",
        "server", "clients", "served", "failed", "open p50", "open p99", "MiB/session", "calls/s"
    );
    let warm: Vec<usize> = std::env::var("GATEWAY_WARM")
        .unwrap_or_else(|_| "4,16".to_owned())
        .split(',')
        .filter_map(|count| count.trim().parse().ok())
        .collect();
    let settle = Duration::from_secs(2);
    for clients in counts {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = vec![
            ("sdk".to_owned(), sdk(), false, settle),
            (
                "shared".to_owned(),
                gateway(dir.path(), true, 0),
                true,
                settle,
            ),
            (
                "per-session".to_owned(),
                gateway(dir.path(), false, 0),
                true,
                settle,
            ),
        ];
        for &n in &warm {
            // The pool fills at the gateway's start: a second, and a quarter of one each.
            let fill = settle + Duration::from_millis(250 * n as u64);
            rows.push((
                format!("warm={n}"),
                gateway(dir.path(), false, n),
                true,
                fill,
            ));
        }
        for (name, command, on_stderr, settle) in rows {
            let row = load(command, on_stderr, clients, settle).await;
            println!(
                "{name:<12} {clients:>7} {:>7} {:>7} {:>8.0}ms {:>8.0}ms {:>12.2} {:>10.0}{}",
                row.served,
                row.failed,
                row.p50,
                row.p99,
                row.mib_per_session,
                row.calls_per_second,
                if row.errors > 0 {
                    format!("  ({} calls failed)", row.errors)
                } else {
                    String::new()
                }
            );
        }
    }
}
