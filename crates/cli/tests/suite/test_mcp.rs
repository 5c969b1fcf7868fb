//! `toolsmith serve` driven by the official MCP client (rmcp) over stdio: initialize, list,
//! call every tool, an oversized result within its allowance, a cancelled call.

use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::common;
use common::{alive, call, text};

type Client = RunningService<RoleClient, ()>;

async fn connect(root: &std::path::Path) -> Client {
    connect_with(root, &[]).await
}

async fn connect_with(root: &std::path::Path, options: &[&str]) -> Client {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    command
        .arg("serve")
        .arg("--root")
        .arg(root)
        .arg("--artifacts")
        .arg(root.join(".artifacts"))
        .args(options);
    let transport = TokioChildProcess::new(command).expect("the server starts");
    ().serve(transport)
        .await
        .expect("the MCP session initializes")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_mcp_client_sees_well_formed_results_for_every_tool() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "alpha\nbeta\n").unwrap();
    let client = connect(dir.path()).await;
    let info = client.peer_info().expect("the server introduced itself");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("toolsmith")
    );

    let tools = client.list_tools(None).await.unwrap().tools;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "read_file",
            "write_file",
            "edit_file",
            "list_directory",
            "glob",
            "grep",
            "run_command",
            "read_artifact"
        ]
    );
    // The tools' annotations reach the client: reads are read-only, the shell is not.
    let hints = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let annotations = tool.annotations.clone().unwrap_or_default();
        (
            annotations.read_only_hint,
            annotations.destructive_hint,
            annotations.open_world_hint,
        )
    };
    assert_eq!(hints("read_file"), (Some(true), None, None));
    assert_eq!(hints("read_artifact"), (Some(true), None, None));
    assert_eq!(hints("run_command"), (None, Some(true), Some(true)));
    assert_eq!(hints("edit_file"), (None, Some(true), None));
    assert!(
        tools
            .iter()
            .all(|t| t.input_schema.get("type") == Some(&json!("object")))
    );

    let read = call(&client, "read_file", json!({ "path": "notes.md" })).await;
    assert_eq!(read.is_error, Some(false));
    assert_eq!(text(&read), "     1\talpha\n     2\tbeta\n");
    let write = call(
        &client,
        "write_file",
        json!({ "path": "new.txt", "content": "one\n" }),
    )
    .await;
    assert_eq!(text(&write), "Created `new.txt`: 4 bytes, 1 lines.");
    let edit = call(
        &client,
        "edit_file",
        json!({ "path": "new.txt", "old_string": "one", "new_string": "two" }),
    )
    .await;
    assert!(
        text(&edit).starts_with("Edited `new.txt`"),
        "{}",
        text(&edit)
    );
    let list = call(&client, "list_directory", json!({})).await;
    assert_eq!(text(&list), "new.txt\nnotes.md\n");
    let glob = call(&client, "glob", json!({ "pattern": "*.md" })).await;
    assert_eq!(text(&glob), "notes.md\n");
    let grep = call(&client, "grep", json!({ "pattern": "beta" })).await;
    assert_eq!(text(&grep), "notes.md:2:beta\n");
    let run = call(&client, "run_command", json!({ "command": "cat new.txt" })).await;
    assert_eq!(text(&run), "two\n[exit code: 0]\n");
    // What the tool stated beside its content is the result's `_meta`.
    let confinement = run
        .meta
        .as_ref()
        .and_then(|meta| meta.0.get("toolsmith/confinement"));
    assert!(
        matches!(
            confinement.and_then(Value::as_str),
            Some("full" | "partial" | "none")
        ),
        "{:?}",
        run.meta
    );

    // An oversized result arrives within its allowance, its full output kept as an artifact.
    let big = call(&client, "run_command", json!({ "command": "seq 1 100000" })).await;
    let big_text = text(&big);
    assert!(
        big_text.chars().count() <= 20_000,
        "{}",
        big_text.chars().count()
    );
    // The numbers count up by one: one lossless fold stands for all but the first.
    assert!(
        big_text.ends_with("\n[lines 2-100,000: 2 to 100000, one a line]\n[exit code: 0]\n"),
        "{big_text}"
    );
    let Some(toolsmith::trim::MarkedFull::Stored { id, .. }) =
        toolsmith::trim::find_marker(&big_text).map(|marker| marker.full)
    else {
        panic!("the marker names the artifact: {big_text}")
    };
    let page = call(
        &client,
        "read_artifact",
        json!({ "id": id, "offset": 49_999, "limit": 2 }),
    )
    .await;
    // The artifact is the whole output, numbered as the output is: offset 49,999 (from 0) is
    // line 50,000.
    assert!(text(&page).ends_with("50000\n50001\n"), "{}", text(&page));

    // Errors are results with isError, never protocol failures.
    let missing = call(&client, "read_file", json!({ "path": "nope" })).await;
    assert_eq!(missing.is_error, Some(true));
    assert_eq!(text(&missing), "Error: `nope` was not found.");
    let unknown = call(&client, "no_such_tool", json!({})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(text(&unknown).starts_with("Error: unknown tool `no_such_tool`"));

    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_stops_its_command() {
    let dir = tempfile::tempdir().unwrap();
    let client = connect(dir.path()).await;
    let pid_file = dir.path().join("pid");
    let script = format!("echo $$ > {}; sleep 300", pid_file.display());
    let Value::Object(arguments) = json!({ "command": script, "timeout_secs": 600 }) else {
        unreachable!()
    };
    let params = CallToolRequestParams::new("run_command").with_arguments(arguments);
    let mut call = Box::pin(client.call_tool_once(params));
    // Wait (bounded) until the command runs and has written its pid, then cancel the call.
    let mut pid = None;
    for _ in 0..400 {
        tokio::select! {
            outcome = &mut call => panic!("the call finished before it was cancelled: {outcome:?}"),
            () = tokio::time::sleep(Duration::from_millis(25)) => {}
        }
        if let Some(found) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|text| text.trim().parse::<u32>().ok())
        {
            pid = Some(found);
            break;
        }
    }
    let pid = pid.expect("the command started within 10 s");
    // Dropping the request's future sends notifications/cancelled.
    drop(call);
    // The server kills the command's process group when it sees the cancellation; give it a
    // bounded while to do so (the test fails rather than hangs).
    let mut gone = false;
    for _ in 0..100 {
        if !alive(pid) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the cancelled command {pid} is still running");
    // The session goes on.
    assert_eq!(client.list_tools(None).await.unwrap().tools.len(), 8);
    client.cancel().await.unwrap();
}

/// A client that hands every progress notification to a channel.
#[derive(Clone)]
struct ProgressClient(tokio::sync::mpsc::UnboundedSender<String>);

impl rmcp::ClientHandler for ProgressClient {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params.message.unwrap_or_default());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_of_a_long_command_reaches_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let (sender, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    command
        .arg("serve")
        .arg("--root")
        .arg(dir.path())
        .arg("--artifacts")
        .arg(dir.path().join(".a"));
    let client = ProgressClient(sender)
        .serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap();
    let Value::Object(arguments) = json!({ "command": "echo started; sleep 3; echo done" }) else {
        unreachable!()
    };
    let mut params = CallToolRequestParams::new("run_command").with_arguments(arguments);
    let mut meta = rmcp::model::RequestMetaObject::default();
    meta.set_progress_token(rmcp::model::ProgressToken(
        rmcp::model::NumberOrString::Number(7),
    ));
    params.meta = Some(meta);
    let CallToolResponse::Complete(result) = client.call_tool_once(params).await.unwrap() else {
        panic!("a complete result");
    };
    assert!(
        text(&result).ends_with("started\ndone\n[exit code: 0]\n"),
        "{}",
        text(&result)
    );
    // run_command reports every 2 s: a 3 s command reports at least once, and progress never
    // lands in the result.
    let first = tokio::time::timeout(Duration::from_secs(10), progress.recv())
        .await
        .expect("a progress notification arrived")
        .unwrap_or_default();
    assert!(first.starts_with("running for "), "{first}");
    assert!(!text(&result).contains("running for"));
    client.cancel().await.unwrap();
}

/// `toolsmith serve` spoken to line by line, as a bare client would.
struct RawServer {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl RawServer {
    fn start(root: &std::path::Path) -> Self {
        Self::start_with(root, &[])
    }

    fn start_with(root: &std::path::Path, options: &[&str]) -> Self {
        use std::io::BufRead as _;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("serve")
            .args(options)
            .arg("--root")
            .arg(root)
            .arg("--artifacts")
            .arg(root.join(".a"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = RawServer {
            stdin: child.stdin.take(),
            child,
            lines,
        };
        server.send(
            &json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "1" }
                }
            })
            .to_string(),
        );
        server.reply(0);
        server
            .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string());
        server
    }

    fn send(&mut self, line: &str) {
        use std::io::Write as _;
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The response to request `id`, within 20 s.
    fn reply(&mut self, id: i64) -> Value {
        self.reply_matching(|message| message["id"] == json!(id))
    }

    /// The first message that `wanted` accepts, within 20 s.
    fn reply_matching(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no awaited reply within 20 s"));
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if wanted(&message) {
                return message;
            }
        }
    }

    /// Closes stdin and waits (bounded) for the server to exit.
    fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "serve did not exit after stdin closed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client that goes away closes both ends: serve sees its stdout closed while a call runs,
/// cancels the call (killing what it started, detached or not) and exits.
#[test]
fn a_client_that_goes_away_ends_serve_and_what_its_calls_started() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("serve")
        .arg("--root")
        .arg(dir.path())
        .arg("--artifacts")
        .arg(dir.path().join(".a"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The detached process writes its pid once it is in its own session.
    let script = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 1000' & sleep 1000",
        pid_file.display()
    );
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "raw", "version": "1" }
            }
        }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "run_command", "arguments": { "command": script } }
        }),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let mut pid = None;
    for _ in 0..1_000 {
        if let Some(found) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|text| text.trim().parse::<u32>().ok())
        {
            pid = Some(found);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = pid.expect("the command started within 20 s");
    // The client goes: both of its ends close.
    drop(stdin);
    drop(child.stdout.take());
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "serve did not exit after its client went away"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "exit {status}");
    let gone = (0..250).any(|_| {
        let dead = !alive(pid);
        if !dead {
            std::thread::sleep(Duration::from_millis(20));
        }
        dead
    });
    assert!(gone, "a process the call started ({pid}) outlived serve");
}

#[test]
fn bad_frames_get_json_rpc_errors_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = RawServer::start(dir.path());

    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#);
    let reply = server.reply(1);
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`name`"),
        "{reply}"
    );

    // One byte over the 16 MiB limit.
    let padding = "x".repeat(16 << 20);
    server.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"run_command","arguments":{{"command":"{padding}"}}}}}}"#
    ));
    let reply = server.reply(2);
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("16,777,216 bytes"),
        "{reply}"
    );

    server.send("this is not json");
    let reply = server.reply_matching(|message| message["error"]["code"] == -32700);
    assert!(reply["id"].is_null(), "{reply}");

    server.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    let tools = server.reply(3);
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 8);
    server.close();
}

#[test]
fn serve_with_approve_deny_refuses_calls_that_change_things() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = RawServer::start_with(dir.path(), &["--approve", "deny"]);
    let call = |id: i64, name: &str, arguments: Value| {
        json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": name, "arguments": arguments }
        })
        .to_string()
    };
    server.send(&call(
        1,
        "write_file",
        json!({ "path": "a.txt", "content": "x" }),
    ));
    let reply = server.reply(1);
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("does not allow `write_file` calls"), "{text}");
    assert!(!dir.path().join("a.txt").exists());
    server.send(&call(2, "list_directory", json!({})));
    let reply = server.reply(2);
    assert_ne!(reply["result"]["isError"], true, "{reply}");
    server.close();
}

/// A client whose user answers every elicitation with `answer`, and what it was asked.
#[derive(Clone)]
struct Asked {
    answer: Option<rmcp::model::ElicitationAction>,
    questions: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl rmcp::ClientHandler for Asked {
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        if let rmcp::model::ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.questions.lock().unwrap().push(message);
        }
        let action = self
            .answer
            .clone()
            .unwrap_or(rmcp::model::ElicitationAction::Decline);
        Ok(rmcp::model::ElicitResult::new(action))
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        if self.answer.is_some() {
            capabilities.elicitation = Some(
                rmcp::model::ElicitationCapability::new()
                    .with_form(rmcp::model::FormElicitationCapability::new()),
            );
        }
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("asked", "1.0"),
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_approve_ask_asks_the_client_by_elicitation() {
    use rmcp::model::ElicitationAction;
    let dir = tempfile::tempdir().unwrap();
    for (answer, written) in [
        (Some(ElicitationAction::Accept), true),
        (Some(ElicitationAction::Decline), false),
        (None, false), // a client without elicitation is not asked: denied
    ] {
        let asked = Asked {
            answer: answer.clone(),
            questions: std::sync::Arc::default(),
        };
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        command
            .args(["serve", "--approve", "ask", "--root"])
            .arg(dir.path())
            .arg("--artifacts")
            .arg(dir.path().join(".artifacts"));
        let client = asked
            .clone()
            .serve(TokioChildProcess::new(command).unwrap())
            .await
            .expect("the session initializes");
        let Value::Object(arguments) = json!({ "path": "a.txt", "content": "x" }) else {
            unreachable!()
        };
        let result = match client
            .call_tool_once(CallToolRequestParams::new("write_file").with_arguments(arguments))
            .await
            .unwrap()
        {
            CallToolResponse::Complete(result) => result,
            other => panic!("{other:?}"),
        };
        let shown = text(&result);
        assert_eq!(
            dir.path().join("a.txt").exists(),
            written,
            "{answer:?}: {shown}"
        );
        match answer {
            Some(ElicitationAction::Accept) => {
                assert_ne!(result.is_error, Some(true), "{shown}");
                let questions = asked.questions.lock().unwrap().clone();
                assert_eq!(questions.len(), 1, "{questions:?}");
                assert!(
                    questions[0].contains("`write_file`") && questions[0].contains("a.txt"),
                    "{questions:?}"
                );
            }
            Some(_) => {
                assert!(
                    shown.contains("the user declined this `write_file` call"),
                    "{shown}"
                );
            }
            None => {
                assert!(shown.contains("this MCP client cannot ask"), "{shown}");
                assert!(asked.questions.lock().unwrap().is_empty());
            }
        }
        // Read-only tools are never asked about.
        let Value::Object(arguments) = json!({}) else {
            unreachable!()
        };
        let listed = client
            .call_tool_once(CallToolRequestParams::new("list_directory").with_arguments(arguments))
            .await
            .unwrap();
        assert!(matches!(listed, CallToolResponse::Complete(ref r) if r.is_error != Some(true)));
        let _ = std::fs::remove_file(dir.path().join("a.txt"));
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn serve_shows_an_image_as_an_image_block_within_its_media_limits() {
    let dir = tempfile::tempdir().unwrap();
    let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;";
    std::fs::write(dir.path().join("dot.gif"), gif).unwrap();
    let client = connect(dir.path()).await;
    let shown = call(&client, "read_file", json!({ "path": "dot.gif" })).await;
    let blocks = serde_json::to_value(&shown.content).unwrap();
    assert_eq!(blocks[1]["type"], "image");
    assert_eq!(blocks[1]["mimeType"], "image/gif");
    assert_eq!(blocks[1]["data"], "R0lGODlhAQABAAAAADs=");
    client.cancel().await.unwrap();

    // Over --max-media-bytes: a note naming the artifact, read back as the same image.
    let client = connect_with(dir.path(), &["--max-media-bytes", "10"]).await;
    let noted = call(&client, "read_file", json!({ "path": "dot.gif" })).await;
    let blocks = serde_json::to_value(&noted.content).unwrap();
    assert_eq!(blocks.as_array().unwrap().len(), 1, "{blocks}");
    let note = text(&noted);
    assert!(
        note.contains("left out, over the 10-byte limit for one"),
        "{note}"
    );
    let id = note.split("it is artifact ").nth(1).unwrap()[..32].to_owned();
    let back = call(&client, "read_artifact", json!({ "id": id })).await;
    let blocks = serde_json::to_value(&back.content).unwrap();
    assert_eq!(blocks[1]["type"], "image");
    assert_eq!(blocks[1]["data"], "R0lGODlhAQABAAAAADs=");
    client.cancel().await.unwrap();
}
