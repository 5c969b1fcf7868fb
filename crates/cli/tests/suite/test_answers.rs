//! Every request read is answered: `toolsmith proxy` and `toolsmith serve` on stdio, given a
//! client's whole input at once and then the end of it, answer each request they read exactly
//! once (a result, or a JSON-RPC error saying why not) before they exit — whatever the requests
//! are, whether the session was initialized, and whether the servers behind them started.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::common;
use crate::fixture;
use common::alive;
use fixture::fixture;

fn initialize(id: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "answers", "version": "1" }
        }
    })
}

/// One line of a client's input.
#[derive(Debug, Clone)]
enum Line {
    Initialize,
    Initialized,
    Ping,
    ListTools,
    Call(&'static str, Value),
    /// A method nobody serves.
    Unknown,
    /// `tools/call` without its `params`.
    NoParams,
    /// A notification of a method nobody serves.
    StrayNotification,
    /// Not JSON at all.
    Garbage,
}

fn line() -> impl Strategy<Value = Line> {
    prop_oneof![
        3 => Just(Line::Initialize),
        1 => Just(Line::Initialized),
        2 => Just(Line::Ping),
        2 => Just(Line::ListTools),
        3 => Just(Line::Call("echo", json!({ "text": "hello" }))),
        1 => Just(Line::Call("slow", json!({ "secs": 1 }))),
        1 => Just(Line::Call("big", json!({ "chars": 50_000 }))),
        1 => Just(Line::Call("fail", json!({}))),
        1 => Just(Line::Call("die", json!({}))),
        1 => Just(Line::Call("read_file", json!({ "path": "notes.md" }))),
        1 => Just(Line::Call("no_such_tool", json!({}))),
        1 => Just(Line::Unknown),
        1 => Just(Line::NoParams),
        1 => Just(Line::StrayNotification),
        1 => Just(Line::Garbage),
    ]
}

/// The input: a session that usually starts with `initialize`, then the lines; each request
/// gets an id of its own (numbers and strings both).
fn input() -> impl Strategy<Value = (bool, Vec<Line>)> {
    (
        prop::bool::weighted(0.85),
        prop::collection::vec(line(), 0..12),
    )
}

/// The lines written, and the ids of the requests among them.
fn written(starts: bool, lines: &[Line]) -> (String, Vec<Value>) {
    let mut text = String::new();
    let mut ids = Vec::new();
    let mut next = 0u32;
    let mut id = || {
        next += 1;
        if next.is_multiple_of(3) {
            json!(format!("r{next}"))
        } else {
            json!(next)
        }
    };
    let push = |message: Value, text: &mut String, ids: &mut Vec<Value>| {
        if let Some(id) = message.get("id") {
            ids.push(id.clone());
        }
        text.push_str(&message.to_string());
        text.push('\n');
    };
    if starts {
        push(initialize(id()), &mut text, &mut ids);
    }
    for line in lines {
        let message = match line {
            Line::Initialize => initialize(id()),
            Line::Initialized => json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
            Line::Ping => json!({ "jsonrpc": "2.0", "id": id(), "method": "ping" }),
            Line::ListTools => json!({ "jsonrpc": "2.0", "id": id(), "method": "tools/list" }),
            Line::Call(name, arguments) => json!({
                "jsonrpc": "2.0", "id": id(), "method": "tools/call",
                "params": { "name": name, "arguments": arguments }
            }),
            Line::Unknown => json!({ "jsonrpc": "2.0", "id": id(), "method": "no/such/method" }),
            Line::NoParams => json!({ "jsonrpc": "2.0", "id": id(), "method": "tools/call" }),
            Line::StrayNotification => {
                json!({ "jsonrpc": "2.0", "method": "notifications/no_such_thing" })
            }
            Line::Garbage => {
                text.push_str("this is not json\n");
                continue;
            }
        };
        push(message, &mut text, &mut ids);
    }
    (text, ids)
}

/// Runs `command` with `input` on its stdin (closed at its end), and returns its exit status
/// and the messages it wrote, within 60 s.
fn run(mut command: Command, input: &str) -> (std::process::ExitStatus, Vec<Value>) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || {
        // The server may refuse to read on (a closed pipe is its answer to that, checked below).
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut out);
        out
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("no exit within 60 s of the end of input");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    writer.join().unwrap();
    let out = reader.join().unwrap();
    let messages = out
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect();
    (status, messages)
}

/// How many answers each id got.
fn answers(messages: &[Value]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for message in messages {
        let is_answer = message.get("result").is_some() || message.get("error").is_some();
        if is_answer && message.get("method").is_none() {
            *counts.entry(message["id"].to_string()).or_default() += 1;
        }
    }
    counts
}

/// Each request read got exactly one answer, and nothing else was answered.
fn each_answered_once(ids: &[Value], messages: &[Value], input: &str) {
    let counts = answers(messages);
    for id in ids {
        assert_eq!(
            counts.get(&id.to_string()).copied().unwrap_or(0),
            1,
            "request {id} was not answered exactly once\ninput:\n{input}\noutput:\n{messages:#?}"
        );
    }
    let asked: Vec<String> = ids.iter().map(Value::to_string).collect();
    for id in counts.keys() {
        assert!(
            id == "null" || asked.contains(id),
            "an answer to {id}, which was never asked"
        );
    }
}

/// A workspace with a file, and a config naming servers, for one run.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("root")).unwrap();
        std::fs::write(dir.path().join("root").join("notes.md"), "alpha\nbeta\n").unwrap();
        Setup { dir }
    }

    fn config(&self, servers: &Value) -> PathBuf {
        let path = self.dir.path().join("servers.json");
        std::fs::write(&path, json!({ "mcpServers": servers }).to_string()).unwrap();
        path
    }

    fn toolsmith(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        command.args(args).current_dir(self.dir.path());
        command
    }

    fn proxy(&self, servers: &Value) -> Command {
        let config = self.config(servers);
        let mut command = self.toolsmith(&["proxy", "--config"]);
        command
            .arg(config)
            .args(["--artifacts"])
            .arg(self.dir.path().join("a"));
        command
    }

    fn serve(&self, servers: Option<&Value>) -> Command {
        let mut command = self.toolsmith(&["serve", "--root"]);
        command
            .arg(self.dir.path().join("root"))
            .arg("--artifacts")
            .arg(self.dir.path().join("a"));
        if let Some(servers) = servers {
            command.arg("--config").arg(self.config(servers));
        }
        command
    }
}

fn working() -> Value {
    json!({ "fixture": { "command": fixture() } })
}

fn one_working_one_not() -> Value {
    json!({
        "fixture": { "command": fixture() },
        "missing": { "command": "/nonexistent/mcp-server" },
    })
}

fn none_working() -> Value {
    json!({ "quits": { "command": "sh", "args": ["-c", "echo 'no config here' >&2; exit 3"] } })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_proxy_answers_every_request_read_before_it_exits((starts, lines) in input()) {
        let setup = Setup::new();
        let (text, ids) = written(starts, &lines);
        let (status, messages) = run(setup.proxy(&working()), &text);
        each_answered_once(&ids, &messages, &text);
        prop_assert!(status.success(), "exit {status}");
    }

    #[test]
    fn the_proxy_answers_every_request_read_when_one_server_does_not_start((starts, lines) in input()) {
        let setup = Setup::new();
        let (text, ids) = written(starts, &lines);
        let (status, messages) = run(setup.proxy(&one_working_one_not()), &text);
        each_answered_once(&ids, &messages, &text);
        prop_assert!(status.success(), "exit {status}");
    }

    #[test]
    fn serve_answers_every_request_read_before_it_exits((starts, lines) in input()) {
        let setup = Setup::new();
        let (text, ids) = written(starts, &lines);
        let (status, messages) = run(setup.serve(None), &text);
        each_answered_once(&ids, &messages, &text);
        prop_assert!(status.success(), "exit {status}");
    }

    #[test]
    fn serve_with_servers_answers_every_request_read((starts, lines) in input()) {
        let setup = Setup::new();
        let (text, ids) = written(starts, &lines);
        let (status, messages) = run(setup.serve(Some(&one_working_one_not())), &text);
        each_answered_once(&ids, &messages, &text);
        prop_assert!(status.success(), "exit {status}");
    }
}

/// The `initialize` answer's error message, after checking every request got one answer.
fn refused(command: Command) -> (std::process::ExitStatus, String) {
    let (text, ids) = written(
        true,
        &[
            Line::Initialized,
            Line::ListTools,
            Line::Ping,
            Line::Call("echo", json!({})),
        ],
    );
    let (status, messages) = run(command, &text);
    each_answered_once(&ids, &messages, &text);
    let first = messages
        .iter()
        .find(|message| message["id"] == json!(1))
        .expect("initialize was answered");
    let message = first["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("initialize was answered with an error: {first}"))
        .to_owned();
    (status, message)
}

#[test]
fn a_proxy_whose_only_server_exits_at_once_says_so_and_exits_non_zero() {
    let setup = Setup::new();
    let (status, message) = refused(setup.proxy(&none_working()));
    assert!(!status.success(), "exit {status}");
    for words in ["`quits`", "exited with status 3", "no config here"] {
        assert!(message.contains(words), "{words} missing from: {message}");
    }
}

#[test]
fn a_proxy_whose_only_server_does_not_exist_names_the_command_and_exits_non_zero() {
    let setup = Setup::new();
    let servers = json!({ "missing": { "command": "/nonexistent/mcp-server" } });
    let (status, message) = refused(setup.proxy(&servers));
    assert!(!status.success(), "exit {status}");
    for words in ["`missing`", "/nonexistent/mcp-server", "No such file"] {
        assert!(message.contains(words), "{words} missing from: {message}");
    }
}

#[test]
fn serve_whose_only_server_cannot_start_answers_why_and_exits_non_zero() {
    let setup = Setup::new();
    let (status, message) = refused(setup.serve(Some(&none_working())));
    assert!(!status.success(), "exit {status}");
    for words in ["`quits`", "exited with status 3", "no config here"] {
        assert!(message.contains(words), "{words} missing from: {message}");
    }
}

#[test]
fn a_call_still_running_at_the_end_of_input_is_finished_and_answered() {
    let setup = Setup::new();
    let input = [
        initialize(json!(1)),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": "run_command", "arguments": { "command": "sleep 1; echo finished" } }
        }),
    ]
    .iter()
    .map(|message| format!("{message}\n"))
    .collect::<String>();
    let (status, messages) = run(setup.serve(None), &input);
    assert!(status.success(), "exit {status}");
    let call = messages
        .iter()
        .find(|message| message["id"] == json!(2))
        .expect("the call was answered");
    assert_eq!(call["result"]["isError"], json!(false), "{call}");
    assert!(call.to_string().contains("finished"), "{call}");

    let slow = [
        initialize(json!(1)),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": "slow", "arguments": { "secs": 1 } }
        }),
    ]
    .iter()
    .map(|message| format!("{message}\n"))
    .collect::<String>();
    let (status, messages) = run(setup.proxy(&working()), &slow);
    assert!(status.success(), "exit {status}");
    let call = messages
        .iter()
        .find(|message| message["id"] == json!(2))
        .expect("the call was answered");
    assert!(call.to_string().contains("done"), "{call}");
}

/// A client that goes away closes both of its ends: the proxy sees its stdout closed while a
/// call runs, stops waiting for it and exits, and its server goes with it.
#[test]
fn a_client_that_goes_away_ends_the_proxy_and_its_server_at_once() {
    use std::io::BufRead as _;
    let setup = Setup::new();
    let mut proxy = setup
        .proxy(&working())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(proxy.stdout.take().unwrap());
    let call = |id: u32, name: &str, arguments: Value| {
        json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": name, "arguments": arguments }
        })
    };
    for message in [
        initialize(json!(1)),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        call(2, "pid", json!({})),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let pid: u32 = loop {
        let mut line = String::new();
        assert_ne!(stdout.read_line(&mut line).unwrap(), 0, "the proxy ended");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == json!(2) {
            break message["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
        }
    };
    writeln!(stdin, "{}", call(3, "slow", json!({ "secs": 60 }))).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    drop(stdin);
    drop(stdout);
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = proxy.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the proxy waited on a call for a client that went away"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "exit {status}");
    // The server is killed with the proxy (a zombie until it is reaped counts as ended).
    let gone = (0..250).any(|_| {
        let dead = !alive(pid);
        if !dead {
            std::thread::sleep(Duration::from_millis(20));
        }
        dead
    });
    assert!(gone, "the server ({pid}) outlived the proxy");
}
