//! What a hostile upstream costs `toolsmith proxy` in memory: the proxy's peak resident memory
//! while it serves each attack of `interop/hostile-server.mjs`, against its own resident memory
//! once initialized (the baseline, in the same run) and against the message limit (256 MiB).
//!
//! `bash interop/setup.sh && cargo bench -p toolsmith-cli --bench hostile`

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

fn interop() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop");
    assert!(
        dir.join("node_modules/.bin/node").exists(),
        "run `bash interop/setup.sh` first"
    );
    dir
}

/// A memory figure of process `pid` in MiB (`VmHWM:` the peak, `VmRSS:` the current).
fn resident_mib(pid: u32, field: &str) -> f64 {
    toolsmith_workspace::status_kib(Some(pid), field).map_or(f64::NAN, |kib| kib as f64 / 1024.0)
}

/// Runs `attack` through a proxy: the baseline and the peak of the proxy's memory, the time the
/// request took, and a word of what came back.
async fn attack(attack: &str, method: &str, params: Value) -> (f64, f64, f64, String) {
    let dir = tempfile::tempdir().unwrap();
    let interop = interop();
    let mut proxy = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("proxy")
        .arg("--artifacts")
        .arg(dir.path().join("artifacts"))
        .arg("--")
        .arg(interop.join("node_modules/.bin/node"))
        .arg(interop.join("hostile-server.mjs"))
        .arg(attack)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = proxy.id().unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let mut lines = BufReader::new(proxy.stdout.take().unwrap()).lines();
    let mut send = async |message: Value| {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    send(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": { "name": "bench", "version": "1" } } }),
    )
    .await;
    lines.next_line().await.unwrap().unwrap();
    send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
    let baseline = resident_mib(pid, "VmRSS:");
    let start = Instant::now();
    send(json!({ "jsonrpc": "2.0", "id": 2, "method": method, "params": params })).await;
    let answer: Value = loop {
        let line = lines.next_line().await.unwrap().unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            break message;
        }
    };
    let took = start.elapsed().as_secs_f64();
    let peak = resident_mib(pid, "VmHWM:");
    let word = match (&answer["result"]["tools"], &answer["result"]["content"]) {
        (Value::Array(tools), _) => format!("{} tools served", tools.len()),
        (_, Value::Array(content)) => format!(
            "{} blocks, {} chars",
            content.len(),
            content
                .iter()
                .map(|b| b["text"].as_str().map_or(0, |t| t.chars().count()))
                .sum::<usize>()
        ),
        _ => answer.to_string().chars().take(80).collect(),
    };
    (baseline, peak, took, word)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!(
        "| attack | what the proxy did | proxy baseline | proxy peak | peak / 256 MiB limit | time |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, what, method, params) in [
        (
            "metadata",
            "a 10 MB description and 50,000 tools",
            "tools/list",
            json!({}),
        ),
        (
            "cursor",
            "a listing that never ends",
            "tools/list",
            json!({}),
        ),
        (
            "blocks",
            "1,000,000 one-char blocks (27 MB)",
            "tools/call",
            json!({ "name": "many", "arguments": {} }),
        ),
        (
            "big",
            "one 200 MB text",
            "tools/call",
            json!({ "name": "big", "arguments": {} }),
        ),
        (
            "unreadable",
            "an answer of invalid UTF-8",
            "tools/call",
            json!({ "name": "bad_utf8", "arguments": {} }),
        ),
    ] {
        let (baseline, peak, took, word) = attack(name, method, params).await;
        println!(
            "| {what} | {word} | {baseline:.0} MiB | {peak:.0} MiB | {:.2} | {took:.1} s |",
            peak / 256.0
        );
    }
}
