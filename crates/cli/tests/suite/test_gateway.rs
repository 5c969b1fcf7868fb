//! The HTTP gateway under pressure: what it holds is bounded across connections, a client that
//! sends its headers slowly is dropped, and running out of descriptors is survived, not spun on.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use toolsmith::mcp::{HttpOptions, Proxy, Upstream};

/// How long any step may take before the test fails rather than hangs.
const PATIENCE: Duration = Duration::from_secs(30);

/// A proxy over HTTP on loopback, no token, with `options` applied; its upstream never starts
/// (nothing here initializes).
async fn gateway(options: impl FnOnce(HttpOptions) -> HttpOptions) -> toolsmith::mcp::HttpServer {
    Proxy::new([Upstream::command("idle", "true")])
        .serve_http(options(HttpOptions::new("127.0.0.1:0".parse().unwrap())))
        .await
        .unwrap()
}

/// The head of a POST to `/mcp` of `length` bytes of JSON.
fn post_head(addr: std::net::SocketAddr, length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    )
}

/// The status line of the response on `stream`.
async fn status_of(stream: &mut TcpStream) -> String {
    let mut read = Vec::new();
    let mut buf = [0u8; 1024];
    while !read.windows(2).any(|w| w == b"\r\n") {
        let n = tokio::time::timeout(PATIENCE, stream.read(&mut buf))
            .await
            .expect("an answer in time")
            .unwrap();
        if n == 0 {
            break;
        }
        read.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&read).into_owned();
    text.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_are_bounded_together_not_only_one_by_one() {
    let server = gateway(|o| o.with_max_body_bytes_in_flight(1 << 20)).await;
    let addr = server.local_addr();
    // A client that declares 800 KB and sends a little of it holds its share.
    let mut slow = TcpStream::connect(addr).await.unwrap();
    slow.write_all(post_head(addr, 800_000).as_bytes())
        .await
        .unwrap();
    slow.write_all(&[b' '; 1000]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A second of the same size would pass the bound: refused with 503 and Retry-After.
    let mut second = TcpStream::connect(addr).await.unwrap();
    second
        .write_all(post_head(addr, 800_000).as_bytes())
        .await
        .unwrap();
    assert!(status_of(&mut second).await.contains(" 503 "));
    // One body over the limit of a message: 413 before it is read.
    let mut huge = TcpStream::connect(addr).await.unwrap();
    huge.write_all(post_head(addr, 17 << 20).as_bytes())
        .await
        .unwrap();
    assert!(status_of(&mut huge).await.contains(" 413 "));
    // The slow client goes: its share comes back, and a small body is read (and answered: no
    // session, so 400).
    drop(slow);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut third = TcpStream::connect(addr).await.unwrap();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    third
        .write_all(format!("{}{ping}", post_head(addr, ping.len())).as_bytes())
        .await
        .unwrap();
    assert!(status_of(&mut third).await.contains(" 400 "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_slow_to_send_its_headers_is_dropped() {
    let server = gateway(|o| o.with_header_read_timeout(Duration::from_millis(500))).await;
    let mut slow = TcpStream::connect(server.local_addr()).await.unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    // The connection is closed (after a 408, or without a word): the read ends.
    tokio::time::timeout(PATIENCE, slow.read_to_end(&mut buf))
        .await
        .expect("the gateway closed the connection")
        .ok();
    let answer = String::from_utf8_lossy(&buf);
    assert!(answer.is_empty() || answer.contains("408"), "{answer}");
}

/// CPU time the process `pid` used so far, in clock ticks (user and system).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command's `(name)`: state is the 3rd, utime the 14th, stime the 15th.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_descriptors_the_gateway_backs_off_and_recovers() {
    use tokio::io::AsyncBufReadExt as _;
    // The gateway with 64 descriptors at most.
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(r#"ulimit -n 64 && exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .args([
            "proxy",
            "--http",
            "127.0.0.1:0",
            "--allow-unauthenticated",
            "--",
            "true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let pid = child.id().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let first = tokio::time::timeout(PATIENCE, lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let url = first.rsplit(' ').next().unwrap().to_owned();
    let addr: std::net::SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let warned = tokio::spawn(async move {
        let mut all = String::new();
        while let Ok(Some(line)) = lines.next_line().await {
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    // 100 idle connections: more than the gateway has descriptors for.
    let mut held = Vec::new();
    for _ in 0..100 {
        if let Ok(stream) = TcpStream::connect(addr).await {
            held.push(stream);
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = cpu_ticks(pid);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let spent = cpu_ticks(pid) - before;
    // A listener that spins burns the 2 s of a core it is given (200 ticks); backing off, it
    // burns next to nothing.
    assert!(spent < 50, "{spent} ticks of CPU in 2 s");
    // It still serves: idle connections were shed, a new client is answered.
    drop(held);
    let mut fresh = TcpStream::connect(addr).await.unwrap();
    fresh
        .write_all(format!("GET /elsewhere HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    assert!(status_of(&mut fresh).await.contains(" 404 "));
    drop(fresh);
    child.kill().await.unwrap();
    let log = warned.await.unwrap();
    assert!(log.contains("cannot accept a connection"), "{log}");
}
