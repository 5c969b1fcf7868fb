//! `toolsmith proxy` against what others wrote: the official `server-everything` and
//! `server-filesystem`, a server written with the official TypeScript SDK (`interop/
//! fixture-server.mjs`), and the SDK's own client over HTTP — each call made through the proxy
//! compared with the same call made directly, message for message.
//!
//! The servers, the SDK and a Node to run them are pinned in `interop/package-lock.json` and
//! installed by `interop/setup.sh` (the README's test command runs it).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How long any one answer may take.
const PATIENCE: Duration = Duration::from_secs(30);

fn interop() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop");
    assert!(
        dir.join("node_modules/.bin/node").exists(),
        "the interop packages are not installed: run `bash interop/setup.sh` (the README's test \
         command, `bash scripts/test.sh`, runs it)"
    );
    dir
}

fn node() -> PathBuf {
    interop().join("node_modules/.bin/node")
}

fn everything() -> Vec<String> {
    let script =
        interop().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    vec![
        node().display().to_string(),
        script.display().to_string(),
        "stdio".to_owned(),
    ]
}

fn filesystem(dirs: &[&Path]) -> Vec<String> {
    let script =
        interop().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let mut command = vec![node().display().to_string(), script.display().to_string()];
    command.extend(dirs.iter().map(|dir| dir.display().to_string()));
    command
}

/// `serve` over the workspace `files`, with the TypeScript fixture server's tools beside the
/// standard ones (a configuration file in `dir`), a call's budget of `budget` chars and its
/// artifacts in `dir`.
fn serve_with_fixture(dir: &Path, files: &Path, budget: usize) -> Command {
    let config = dir.join("servers.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "fixture": { "command": fixture()[0], "args": [fixture()[1]] } } })
            .to_string(),
    )
    .unwrap();
    let mut serve = gateway("serve", TOKEN);
    serve
        .args(["--budget", &budget.to_string(), "--config"])
        .arg(&config)
        .arg("--root")
        .arg(files)
        .arg("--artifacts")
        .arg(dir.join("artifacts"));
    serve
}

fn fixture() -> Vec<String> {
    vec![
        node().display().to_string(),
        interop().join("fixture-server.mjs").display().to_string(),
    ]
}

/// What a client answers to the server's requests: sampling, elicitation, roots.
type Answers = Box<dyn Fn(&str, &Value) -> Value + Send>;

/// A client that speaks JSON-RPC lines to a server's stdin and stdout, keeping every message.
struct Raw {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next: u64,
    /// Notifications and answered server requests, in the order they came.
    seen: Vec<Value>,
    /// Messages read while waiting for something else.
    backlog: VecDeque<Value>,
    answers: Answers,
    _dir: tempfile::TempDir,
}

impl Raw {
    /// Starts `command` (a server, or a proxy of one) and initializes it with `capabilities`.
    async fn start(command: Vec<String>, capabilities: Value, answers: Answers) -> (Raw, Value) {
        let dir = tempfile::tempdir().unwrap();
        let mut process = Command::new(&command[0]);
        process
            .args(&command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = process.spawn().expect("the server starts");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut raw = Raw {
            child,
            stdin,
            lines,
            next: 0,
            seen: Vec::new(),
            backlog: VecDeque::new(),
            answers,
            _dir: dir,
        };
        let init = raw
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": capabilities,
                    "clientInfo": { "name": "toolsmith-interop", "version": "1.0.0" },
                }),
            )
            .await;
        raw.notify("notifications/initialized", None).await;
        (raw, init)
    }

    /// The same server behind `toolsmith proxy` (with its artifacts in a directory of the
    /// client's), with `options`.
    fn proxied(command: &[String], options: &[&str], dir: &Path) -> Vec<String> {
        let mut proxied = vec![
            env!("CARGO_BIN_EXE_toolsmith").to_owned(),
            "proxy".to_owned(),
            "--artifacts".to_owned(),
            dir.join("artifacts").display().to_string(),
        ];
        proxied.extend(options.iter().map(|option| (*option).to_owned()));
        proxied.push("--".to_owned());
        proxied.extend(command.iter().cloned());
        proxied
    }

    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn notify(&mut self, method: &str, params: Option<Value>) {
        let mut message = json!({ "jsonrpc": "2.0", "method": method });
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(message).await;
    }

    /// The next message from the server, answering its requests on the way.
    async fn read(&mut self) -> Value {
        if let Some(message) = self.backlog.pop_front() {
            return message;
        }
        let line = tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .expect("the server answers in time")
            .unwrap()
            .expect("the server is still there");
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("not JSON ({error}): {line}"))
    }

    /// Sends a request and returns the whole answer message (`result` or `error`).
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        loop {
            let message = self.read().await;
            match (
                message.get("method").and_then(Value::as_str),
                message.get("id"),
            ) {
                (None, Some(answered)) if *answered == json!(id) => return message,
                (Some(method), Some(request)) => {
                    let result = (self.answers)(method, &message["params"]);
                    let request = request.clone();
                    self.seen.push(message.clone());
                    self.send(json!({ "jsonrpc": "2.0", "id": request, "result": result }))
                        .await;
                }
                _ => self.seen.push(message),
            }
        }
    }

    /// A request's result, which must not be an error.
    async fn result(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request(method, params).await;
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
        .await
    }

    fn notifications(&self, method: &str) -> Vec<&Value> {
        self.seen.iter().filter(|m| m["method"] == method).collect()
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// A client that declares sampling, elicitation and roots, and answers them: the model says
/// `a sampled answer`, the user declines, the root is `root`.
fn full_client(root: &Path) -> (Value, Answers) {
    let root = format!("file://{}", root.display());
    let answers = Box::new(move |method: &str, _params: &Value| match method {
        "sampling/createMessage" => json!({
            "role": "assistant",
            "content": { "type": "text", "text": "a sampled answer" },
            "model": "test-model",
            "stopReason": "endTurn",
        }),
        "elicitation/create" => json!({ "action": "decline" }),
        "roots/list" => json!({ "roots": [{ "uri": root, "name": "the client's root" }] }),
        _ => json!({}),
    });
    let capabilities =
        json!({ "sampling": {}, "elicitation": {}, "roots": { "listChanged": true } });
    (capabilities, answers)
}

/// A listed tool with what the proxy adds taken away: the cap note of its description and
/// the cap in its `_meta`.
fn without_cap(mut tool: Value) -> Value {
    if let Some(description) = tool["description"].as_str() {
        let original = description
            .split("\n\nResults over ")
            .next()
            .unwrap_or_default();
        tool["description"] = Value::String(original.to_owned());
    }
    if let Some(meta) = tool.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.remove("anthropic/maxResultSizeChars");
        if meta.is_empty() {
            tool.as_object_mut().unwrap().remove("_meta");
        }
    }
    tool
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_through_the_proxy_is_what_it_is_directly() {
    let dir = tempfile::tempdir().unwrap();
    let (capabilities, _) = full_client(dir.path());
    let (mut direct, direct_init) = Raw::start(
        everything(),
        capabilities.clone(),
        full_client(dir.path()).1,
    )
    .await;
    let (mut proxied, proxied_init) = Raw::start(
        Raw::proxied(&everything(), &[], dir.path()),
        capabilities,
        full_client(dir.path()).1,
    )
    .await;

    // The server's own words: its instructions, name and capabilities.
    assert_eq!(
        proxied_init["result"]["instructions"],
        direct_init["result"]["instructions"]
    );
    assert_eq!(
        proxied_init["result"]["serverInfo"],
        direct_init["result"]["serverInfo"]
    );
    assert_eq!(
        proxied_init["result"]["capabilities"],
        direct_init["result"]["capabilities"]
    );

    // Every tool as listed, titles, execution and schemas ($schema included); only the cap is
    // added, and to an object output schema the optional member a cut structure names its cut
    // in; then the proxy's read_artifact.
    let direct_tools = direct.result("tools/list", json!({})).await["tools"].clone();
    let proxied_tools = proxied.result("tools/list", json!({})).await["tools"].clone();
    let proxied_tools = proxied_tools.as_array().unwrap();
    assert_eq!(proxied_tools.last().unwrap()["name"], "read_artifact");
    let structured = proxied_tools
        .iter()
        .find(|tool| tool["name"] == "get-structured-content")
        .unwrap();
    assert_eq!(
        structured["outputSchema"]["properties"]["toolsmith/cut"]["type"],
        "string"
    );
    let unchanged: Vec<Value> = proxied_tools[..proxied_tools.len() - 1]
        .iter()
        .cloned()
        .map(without_cap)
        .map(|mut tool| {
            if let Some(Value::Object(properties)) = tool.pointer_mut("/outputSchema/properties") {
                properties.remove("toolsmith/cut");
            }
            tool
        })
        .collect();
    assert_eq!(Value::Array(unchanged), direct_tools);
    let echo = &proxied_tools[0];
    assert!(
        echo["description"]
            .as_str()
            .unwrap()
            .contains("Results over 20,000 characters")
    );
    assert_eq!(echo["_meta"]["anthropic/maxResultSizeChars"], 20_000);
    assert!(
        direct_tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["execution"].is_object() && t["title"].is_string())
    );

    // Resources, templates and prompts: all of them, as listed.
    for (method, params) in [
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("prompts/list", json!({})),
        ("prompts/get", json!({ "name": "simple-prompt" })),
        (
            "prompts/get",
            json!({ "name": "args-prompt", "arguments": { "city": "Paris" } }),
        ),
        (
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "completable-prompt" }, "argument": { "name": "department", "value": "E" } }),
        ),
        ("logging/setLevel", json!({ "level": "debug" })),
        ("ping", json!({})),
    ] {
        let want = direct.request(method, params.clone()).await;
        let mut got = proxied.request(method, params).await;
        if method == "resources/templates/list" {
            // The server's templates as it listed them, then the proxy's own: its artifacts.
            let templates = got["result"]["resourceTemplates"].as_array_mut().unwrap();
            let own = templates.pop().unwrap();
            assert_eq!(
                own["uriTemplate"],
                "toolsmith://artifact/{id}{?offset,limit,char_offset}"
            );
        }
        assert_eq!(got.get("result"), want.get("result"), "{method}");
        assert_eq!(got.get("error"), want.get("error"), "{method}");
    }
    let resources = direct.result("resources/list", json!({})).await;
    let first = resources["resources"][0]["uri"].clone();
    let want = direct
        .result("resources/read", json!({ "uri": first }))
        .await;
    let got = proxied
        .result("resources/read", json!({ "uri": first }))
        .await;
    assert_eq!(got, want, "a resource within the cap reads as it is");

    // Content that is not one text: images, annotations, resource links, embedded resources,
    // structured content — block for block; and errors in the server's own words.
    for (tool, arguments) in [
        ("get-tiny-image", json!({})),
        (
            "get-annotated-message",
            json!({ "messageType": "error", "includeImage": true }),
        ),
        (
            "get-annotated-message",
            json!({ "messageType": "success", "includeImage": false }),
        ),
        ("get-resource-links", json!({ "count": 3 })),
        (
            "get-resource-reference",
            json!({ "resourceType": "Text", "resourceId": 1 }),
        ),
        ("get-structured-content", json!({ "location": "New York" })),
        ("get-sum", json!({ "a": "not a number", "b": 2 })),
        ("no-such-tool", json!({})),
    ] {
        let params = json!({ "name": tool, "arguments": arguments });
        let want = direct.request("tools/call", params.clone()).await;
        let got = proxied.request("tools/call", params).await;
        // A dynamic resource says when it was made (`created at 1:29:18 AM`): the two calls may
        // fall on either side of a second.
        let timeless = |answer: &Value| {
            let text = answer
                .get("result")
                .map(Value::to_string)
                .unwrap_or_default();
            match text.find(" created at ") {
                Some(at) => {
                    let end = text[at..].find(" AM").or_else(|| text[at..].find(" PM"));
                    let end = end.map_or(text.len(), |end| at + end);
                    format!("{}{}", &text[..at], &text[end..])
                }
                None => text,
            }
        };
        assert_eq!(timeless(&got), timeless(&want), "{tool}");
        assert_eq!(got.get("error"), want.get("error"), "{tool}");
    }
    let image = proxied.call("get-tiny-image", json!({})).await;
    assert!(
        image["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "image")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_sampling_elicitation_and_roots_reach_the_server_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let (capabilities, answers) = full_client(dir.path());
    let (mut proxied, _) = Raw::start(
        Raw::proxied(&everything(), &[], dir.path()),
        capabilities,
        answers,
    )
    .await;
    // The server offers what the client can do: these tools exist only for such a client.
    let tools = proxied.result("tools/list", json!({})).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for name in [
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "get-roots-list",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }

    let sampled = proxied
        .call(
            "trigger-sampling-request",
            json!({ "prompt": "Say hi", "maxTokens": 20 }),
        )
        .await;
    assert!(
        sampled.to_string().contains("a sampled answer"),
        "{sampled}"
    );
    assert_eq!(proxied.notifications("sampling/createMessage").len(), 1);

    // The user declines; the proxy never answers in the user's name.
    let elicited = proxied.call("trigger-elicitation-request", json!({})).await;
    assert_eq!(proxied.notifications("elicitation/create").len(), 1);
    assert!(
        elicited.to_string().to_lowercase().contains("decline"),
        "{elicited}"
    );

    let roots = proxied.call("get-roots-list", json!({})).await;
    assert!(
        roots
            .to_string()
            .contains(&dir.path().display().to_string()),
        "{roots}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_filesystem_started_without_directories_uses_the_clients_roots() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("notes.md"), "alpha\nbeta\n").unwrap();
    let root = root.canonicalize().unwrap();
    let (capabilities, answers) = full_client(&root);
    let (mut proxied, _) = Raw::start(
        Raw::proxied(&filesystem(&[]), &[], dir.path()),
        capabilities,
        answers,
    )
    .await;
    // The server asks for the roots once initialized; give it a moment to have them.
    let mut allowed = Value::Null;
    for _ in 0..50 {
        allowed = proxied.call("list_allowed_directories", json!({})).await;
        if allowed.to_string().contains(&root.display().to_string()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        allowed.to_string().contains(&root.display().to_string()),
        "{allowed}"
    );
    let read = proxied
        .call("read_text_file", json!({ "path": root.join("notes.md") }))
        .await;
    assert!(read.to_string().contains("beta"), "{read}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_arrives_as_the_server_sent_it_and_before_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let (capabilities, _) = full_client(dir.path());
    let params = json!({
        "name": "trigger-long-running-operation",
        "arguments": { "duration": 0.4, "steps": 4 },
        "_meta": { "progressToken": "p-1" },
    });
    let mut seen = Vec::new();
    for proxy in [false, true] {
        let command = if proxy {
            Raw::proxied(&everything(), &[], dir.path())
        } else {
            everything()
        };
        let (mut client, _) =
            Raw::start(command, capabilities.clone(), full_client(dir.path()).1).await;
        for _ in 0..5 {
            client.seen.clear();
            let answer = client.request("tools/call", params.clone()).await;
            assert!(answer.get("result").is_some(), "{answer}");
            let progress: Vec<Value> = client
                .notifications("notifications/progress")
                .into_iter()
                .map(|n| n["params"].clone())
                .collect();
            // Every notification sent before the result came before it, as it was sent.
            assert_eq!(progress.len(), 4, "{progress:?}");
            seen.push(progress);
        }
    }
    let (direct, proxied) = seen.split_at(5);
    assert_eq!(direct, proxied);
    assert_eq!(
        direct[0][0],
        json!({ "progress": 1, "total": 4, "progressToken": "p-1" })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_is_over_the_cap_is_cut_and_every_byte_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let (capabilities, answers) = full_client(dir.path());
    let (mut proxied, _) = Raw::start(
        Raw::proxied(
            &fixture(),
            &["--max-result-chars", "4000", "--max-media-bytes", "100000"],
            dir.path(),
        ),
        capabilities,
        answers,
    )
    .await;
    // A long text keeps its failing line; its marker names the artifact.
    let result = proxied.call("big_text", json!({ "lines": 5000 })).await;
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.chars().count() <= 4_000);
    assert!(
        text.contains("ERROR: step 2500 failed: disk full"),
        "{text}"
    );
    let marker = toolsmith::trim::find_marker(text).expect("a marker");
    let toolsmith::trim::MarkedFull::Stored { id, .. } = marker.full else {
        panic!("the full text is stored: {text}");
    };
    let page = proxied
        .call(
            "read_artifact",
            json!({ "id": id, "offset": 2499, "limit": 1 }),
        )
        .await;
    assert!(
        page["content"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with("ERROR: step 2500 failed: disk full\n")
    );

    // Annotations and links pass; a structure with an output schema is sent cut only when the
    // cut still matches the schema, else whole: a success stays a success.
    let annotated = proxied.call("annotated", json!({})).await;
    assert_eq!(
        annotated["content"][1]["annotations"],
        json!({ "audience": ["user"] })
    );
    assert_eq!(annotated["content"][2]["type"], "resource_link");
    assert_eq!(annotated["_meta"], json!({ "fixture/said": "kept" }));
    let small = proxied.call("issues", json!({ "count": 3 })).await;
    assert_eq!(
        small["structuredContent"]["issues"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let big = proxied.call("issues", json!({ "count": 2000 })).await;
    assert!(big.get("isError").is_none(), "{big:.300}");
    // Cut by its schema (whole issues, no marker inside), within the cap with its text, the
    // facts of the cut in `_meta` naming the artifact that holds it whole.
    let issues = big["structuredContent"]["issues"].as_array().unwrap();
    assert!(issues.len() > 3 && issues.len() < 2000, "{}", issues.len());
    assert!(
        issues.iter().all(|issue| issue["number"].is_u64()),
        "{big:.300}"
    );
    let text: String = big["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect();
    let structure = big["structuredContent"].to_string().chars().count();
    assert!(text.chars().count() + structure <= 4_000, "{text:.300}");
    assert!(text.contains("read_artifact"), "{text:.300}");
    let facts = &big["_meta"]["toolsmith/cut"]["structure"];
    assert_eq!(facts["cuts"][0]["pointer"], "/issues", "{facts}");

    // An image over the size limit is kept as an artifact read_artifact returns as an image.
    let image = proxied.call("big_image", json!({ "bytes": 200_000 })).await;
    let note = image["content"][0]["text"].as_str().unwrap();
    assert!(
        note.starts_with("[toolsmith: image (image/png, 200,000 bytes of base64) left out"),
        "{note}"
    );
    let id = note
        .split("it is artifact ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    let back = proxied.call("read_artifact", json!({ "id": id })).await;
    assert_eq!(back["content"][0]["type"], "image");
    assert_eq!(back["content"][0]["mimeType"], "image/png");
    assert_eq!(back["content"][0]["data"].as_str().unwrap().len(), 200_000);

    // A resource over the cap is cut like a result.
    let read = proxied
        .result("resources/read", json!({ "uri": "test://big-text" }))
        .await;
    let text = read["contents"][0]["text"].as_str().unwrap();
    assert!(
        text.chars().count() <= 4_000 && text.contains("[toolsmith: output"),
        "{text:.200}"
    );
}

/// The token the SDK clients of these tests send, and the gateways under test take.
const TOKEN: &str = "a-token-of-24-characters";

/// Starts `command` (printing its URL on stdout, or `toolsmith … --http`, printing it on
/// stderr) and returns it with the URL.
async fn listening(mut command: Command, on_stderr: bool) -> (Child, String) {
    command.kill_on_drop(true).stdin(Stdio::null());
    if on_stderr {
        command.stderr(Stdio::piped()).stdout(Stdio::null());
    } else {
        command.stdout(Stdio::piped()).stderr(Stdio::null());
    }
    let mut child = command.spawn().unwrap();
    // The pipe stays drained after the first line: a child (or a server it
    // started, which inherits the stream) must never die writing to a closed pipe.
    let line = if on_stderr {
        url_line_then_drain(child.stderr.take().unwrap()).await
    } else {
        url_line_then_drain(child.stdout.take().unwrap()).await
    };
    let url = line.rsplit(' ').next().unwrap().to_owned();
    (child, url)
}

/// The first line of `stream` that names a URL (a server the gateway started may write to the
/// same stream before it); the stream stays drained after it, so that a child (or a server it
/// started, which inherits the stream) never dies writing to a closed pipe.
async fn url_line_then_drain<R: tokio::io::AsyncRead + Unpin + Send + 'static>(
    stream: R,
) -> String {
    let mut lines = BufReader::new(stream).lines();
    let line = tokio::time::timeout(PATIENCE, async {
        loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("a line naming the URL");
            if line.contains("http://") {
                return line;
            }
        }
    })
    .await
    .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    line
}

/// `toolsmith <command> --http 127.0.0.1:0 --token-env PROXY_TOKEN`, the variable set to
/// `token`: the gateway every HTTP test starts, before the test adds its own arguments
/// (`--artifacts`, `--`, the server) and environment; [`listening`] starts it.
fn gateway(command: &str, token: &str) -> Command {
    let mut gateway = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    gateway
        .args([
            command,
            "--http",
            "127.0.0.1:0",
            "--token-env",
            "PROXY_TOKEN",
        ])
        .env("PROXY_TOKEN", token);
    gateway
}

/// The Node script `script` of `interop/` (an official TypeScript SDK client) against `url`.
fn node_client(script: &str, url: &str) -> Command {
    let mut client = Command::new(node());
    client.arg(interop().join(script)).arg(url);
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_gets_its_headers_with_variables_expanded_and_one_failing_server_is_named() {
    let mut server = Command::new(node());
    server
        .arg(interop().join("fixture-server.mjs"))
        .args(["--http", "0"])
        .env("FIXTURE_TOKEN", "s3cret-token");
    let (_server, url) = listening(server, false).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": {
            "remote": { "url": url, "headers": { "Authorization": "Bearer ${FIXTURE_TOKEN}" } },
            "nobody": { "url": url },
            "missing": { "command": "/nonexistent/server" },
        }})
        .to_string(),
    )
    .unwrap();
    // The proxy expands `${FIXTURE_TOKEN}` from its own environment.
    let mut command = vec!["env".to_owned(), "FIXTURE_TOKEN=s3cret-token".to_owned()];
    command.extend(Raw::proxied(
        &[],
        &["--config", config.to_str().unwrap()],
        dir.path(),
    ));
    command.pop(); // a configuration, not a command after `--`
    let (capabilities, answers) = full_client(dir.path());
    let (mut proxied, init) = Raw::start(command, capabilities, answers).await;
    let instructions = init["result"]["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains("MCP server `missing`: cannot start"),
        "{instructions}"
    );
    assert!(
        instructions.contains("MCP server `nobody`") && instructions.contains("401"),
        "{instructions}"
    );
    assert!(
        !instructions.contains("reqwest") && !instructions.contains("hyper"),
        "{instructions}"
    );
    let answer = proxied.call("test_simple_text", json!({})).await;
    assert_eq!(
        answer["content"][0]["text"],
        "This is a simple text response for testing."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_client_uses_the_proxy_over_http_with_a_token_and_a_web_page_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let mut proxy = gateway("proxy", "a-token-of-24-characters");
    proxy
        .arg("--artifacts")
        .arg(dir.path().join("artifacts"))
        .arg("--")
        .args(fixture());
    let (_proxy, url) = listening(proxy, true).await;
    let mut client = node_client("sdk-client.mjs", &url);
    client.env("PROXY_TOKEN", "a-token-of-24-characters");
    let report = report_of(client).await;
    assert_eq!(
        report["text"],
        "This is a simple text response for testing."
    );
    assert_eq!(report["progress"], json!([0, 50, 100]));
    assert_eq!(report["withoutToken"], 401);
    assert_eq!(report["evilOrigin"], 403);
    assert_eq!(report["evilHost"], 403);
    assert!(
        report["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "read_artifact")
    );
}

fn hostile(attack: &str) -> Vec<String> {
    vec![
        node().display().to_string(),
        interop().join("hostile-server.mjs").display().to_string(),
        attack.to_owned(),
    ]
}

/// The hostile server, as a library client's registry sees it.
async fn hostile_client(attack: &str) -> toolsmith::mcp::McpClient {
    toolsmith::mcp::McpClient::stdio("hostile", node().display().to_string())
        .arg(interop().join("hostile-server.mjs").display().to_string())
        .arg(attack)
        .connect()
        .await
        .expect("the hostile server starts")
}

fn names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_cannot_take_read_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let (capabilities, answers) = full_client(dir.path());
    let (mut proxied, _) = Raw::start(
        Raw::proxied(&hostile("names"), &[], dir.path()),
        capabilities,
        answers,
    )
    .await;
    let listed = names(&proxied.result("tools/list", json!({})).await);
    assert_eq!(
        listed.iter().filter(|n| *n == "read_artifact").count(),
        1,
        "{listed:?}"
    );
    assert!(
        listed.contains(&"hostile-server.mjs__read_artifact".to_owned())
            || listed.iter().any(|n| n.ends_with("__read_artifact")),
        "{listed:?}"
    );
    // read_artifact is the proxy's: the server never sees the id asked for.
    let read = proxied
        .call(
            "read_artifact",
            json!({ "id": "0123456789abcdef0123456789abcdef" }),
        )
        .await;
    let text = read["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains("hostile server"), "{text}");
    assert!(text.contains("0123456789abcdef0123456789abcdef"), "{text}");

    // A library client: the server's tools that would be `read_artifact` once sanitized get
    // the server's name, the first of them served; the registry keeps its own reader.
    let client = hostile_client("names").await;
    let registry = toolsmith::Registry::builder()
        .tools(client.tools())
        .artifacts(toolsmith::DirStore::open(dir.path().join("store")).unwrap())
        .build()
        .expect("the registry builds with its own read_artifact");
    let mut served: Vec<&str> = registry.tools().map(|t| t.spec().name.as_str()).collect();
    served.sort_unstable();
    assert_eq!(served, ["echo", "hostile__read_artifact", "read_artifact"]);
    let reader = registry.get("read_artifact").unwrap();
    assert!(reader.spec().origin.is_none(), "the registry's own");

    // A tool that takes the name on purpose is refused, naming where it comes from.
    let error = toolsmith::Registry::builder()
        .tools(client.tools())
        .dyn_tool(toolsmith::tool::with_spec(
            client.tools()[0].clone(),
            |spec| {
                spec.name = "read_artifact".to_owned();
            },
        ))
        .artifacts(toolsmith::artifacts::MemoryStore::new())
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`read_artifact` is the registry's own tool")
            && error.contains("the MCP server `hostile`"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_thousand_tools_are_all_served_in_pages_and_descriptions_are_capped() {
    use toolsmith::mcp::{MAX_DESCRIPTION_CHARS, MAX_TOOLS_PER_SERVER, RELAY_PAGE_TOOLS};
    let dir = tempfile::tempdir().unwrap();
    let (capabilities, answers) = full_client(dir.path());
    let (mut proxied, _) = Raw::start(
        Raw::proxied(&hostile("metadata"), &[], dir.path()),
        capabilities,
        answers,
    )
    .await;
    let (tools, pages) = every_tool(&mut proxied).await;
    // Every tool the server lists, and read_artifact: none dropped, none twice.
    assert_eq!(tools.len(), 50_002);
    assert_eq!(pages, 50_002_usize.div_ceil(RELAY_PAGE_TOOLS));
    let names: std::collections::HashSet<&str> = tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 50_002);
    assert!(names.contains("t49999") && names.contains("read_artifact"));
    let huge = tools[0]["description"].as_str().unwrap();
    assert!(
        huge.chars().count() < MAX_DESCRIPTION_CHARS + 400,
        "{}",
        huge.len()
    );
    assert!(
        huge.contains("[toolsmith: the server's description of 10,000,000 chars is cut to 4,000]")
    );
    // The last one is reachable.
    let called = proxied.call("t49999", json!({})).await;
    assert_eq!(called["content"][0]["text"], "ok", "{called}");
    // A cursor this proxy did not give is refused, saying what to do.
    let refused = proxied
        .request("tools/list", json!({ "cursor": "toolsmith-tools:0:5" }))
        .await;
    let why = refused["error"]["message"].as_str().unwrap();
    assert!(
        why.contains("list the tools again without a cursor"),
        "{refused}"
    );
    // In bounded memory: the proxy's peak resident set.
    let peak = peak_rss_kib(proxied.child.id().unwrap());
    eprintln!("the proxy peaked at {peak} KiB");
    assert!(peak < 512 * 1024, "the proxy peaked at {peak} KiB");

    // A library client, for one model to choose among, keeps its cap.
    let client = hostile_client("metadata").await;
    let tools = client.tools();
    assert_eq!(tools.len(), MAX_TOOLS_PER_SERVER);
    assert!(tools[0].spec().description.contains("is cut to 4,000]"));
}

/// Every tool a proxy lists, page by page as a client reads them, and how many pages.
async fn every_tool(raw: &mut Raw) -> (Vec<Value>, usize) {
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    let mut pages = 0;
    loop {
        let params = cursor
            .take()
            .map_or_else(|| json!({}), |c| json!({ "cursor": c }));
        let page = raw.result("tools/list", params).await;
        pages += 1;
        tools.extend(page["tools"].as_array().unwrap().iter().cloned());
        match page.get("nextCursor") {
            Some(next) if !next.is_null() => cursor = Some(next.clone()),
            _ => return (tools, pages),
        }
        assert!(pages < 10_000, "a listing without end");
    }
}

/// The peak resident set of process `pid`, in KiB (Linux: `VmHWM`).
fn peak_rss_kib(pid: u32) -> u64 {
    toolsmith_workspace::status_kib(Some(pid), "VmHWM:").expect("VmHWM in /proc/PID/status")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_that_never_ends_is_read_so_deep_and_no_deeper() {
    use toolsmith::mcp::{MAX_LIST_PAGES, MAX_RELAYED_PAGES};
    let dir = tempfile::tempdir().unwrap();
    let (capabilities, answers) = full_client(dir.path());
    let (mut proxied, _) = Raw::start(
        Raw::proxied(&hostile("cursor"), &[], dir.path()),
        capabilities,
        answers,
    )
    .await;
    let (listed, _) = every_tool(&mut proxied).await;
    assert_eq!(listed.len(), MAX_RELAYED_PAGES + 1, "{}", listed.len());
    let client = hostile_client("cursor").await;
    assert_eq!(client.tools().len(), MAX_LIST_PAGES);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_million_blocks_are_kept_as_an_artifact_and_the_result_fits() {
    use toolsmith::mcp::MAX_BLOCKS;
    let dir = tempfile::tempdir().unwrap();
    let (capabilities, answers) = full_client(dir.path());
    let (mut proxied, _) = Raw::start(
        Raw::proxied(
            &hostile("blocks"),
            &["--max-result-chars", "4000"],
            dir.path(),
        ),
        capabilities,
        answers,
    )
    .await;
    let result = proxied.call("many", json!({})).await;
    let content = result["content"].as_array().unwrap();
    let chars: usize = content
        .iter()
        .map(|b| b["text"].as_str().unwrap_or_default().chars().count())
        .sum();
    assert!(chars <= 4_000, "{chars}");
    // The end of the list is kept, as the end of a long text is: the last block is the
    // server's last.
    assert_eq!(
        content.last().unwrap()["text"],
        "END",
        "{:?}",
        &content[content.len().saturating_sub(3)..]
    );
    let note = content
        .iter()
        .filter_map(|b| b["text"].as_str())
        .find(|t| t.starts_with("[toolsmith: 999,000 more content blocks"))
        .expect("a note of the blocks left out");
    let id = note
        .split("it is artifact ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    let page = proxied
        .call("read_artifact", json!({ "id": id, "offset": 998_999 }))
        .await;
    let text = page["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("of 999,000") && text.ends_with("{\"type\":\"text\",\"text\":\"x\"}\n"),
        "{text}"
    );

    // A library client keeps MAX_BLOCKS blocks and the rest as one text, cut by the registry.
    let client = hostile_client("blocks").await;
    let registry = toolsmith::Registry::builder()
        .tools(client.tools())
        .artifacts(toolsmith::DirStore::open(dir.path().join("store")).unwrap())
        .budget(toolsmith::BudgetPolicy::default().with_batch_budget_chars(4_000))
        .build()
        .unwrap();
    let result = registry
        .turn()
        .execute([toolsmith::ToolCall::new("c", "many", json!({}))])
        .await
        .remove(0);
    assert!(!result.is_error(), "{}", result.content);
    assert!(result.content.chars().count() <= 4_000);
    assert!(
        result.content.trim_end().ends_with("END"),
        "the last block is kept: {}",
        &result.content[result.content.len().saturating_sub(300)..]
    );
    assert!(
        result.content.contains(&format!(
            "past the {} a result may carry",
            toolsmith::figures::grouped(MAX_BLOCKS)
        )) || result.meta.artifact.is_some(),
        "{}",
        result.content
    );
    assert!(result.meta.artifact.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_that_cannot_be_read_fail_their_call_at_once_naming_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (capabilities, answers) = full_client(dir.path());
    let (mut proxied, _) = Raw::start(
        Raw::proxied(&hostile("unreadable"), &["--timeout", "600"], dir.path()),
        capabilities,
        answers,
    )
    .await;
    let client = hostile_client("unreadable").await;
    let registry = toolsmith::Registry::builder()
        .tools(client.tools())
        .build()
        .unwrap();
    for tool in ["bad_utf8", "lone_surrogate", "deep"] {
        let started = std::time::Instant::now();
        let answer = proxied
            .request("tools/call", json!({ "name": tool, "arguments": {} }))
            .await;
        let said = answer.to_string();
        assert!(started.elapsed() < Duration::from_secs(20), "{tool} waited");
        assert!(said.contains("cannot be read"), "{tool}: {said}");
        assert!(said.contains("hostile"), "{tool} names the server: {said}");

        let started = std::time::Instant::now();
        let result = registry
            .turn()
            .execute([toolsmith::ToolCall::new("c", tool, json!({}))])
            .await
            .remove(0);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{tool} waited in the client"
        );
        assert!(result.is_error(), "{tool}: {}", result.content);
        assert!(
            result.content.contains("cannot be read") || result.content.contains("not read"),
            "{tool}: {}",
            result.content
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_with_one_tool_name_are_named_in_the_error() {
    let mut clients = Vec::new();
    for name in ["alpha", "beta"] {
        clients.push(
            toolsmith::mcp::McpClient::stdio(name, node().display().to_string())
                .arg(interop().join("hostile-server.mjs").display().to_string())
                .arg("names")
                .connect()
                .await
                .unwrap(),
        );
    }
    let error = toolsmith::Registry::builder()
        .tools(clients[0].tools())
        .tools(clients[1].tools())
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("the tool of the MCP server `alpha`")
            && error.contains("the tool of the MCP server `beta`"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_tool_search_the_proxy_lists_what_a_search_found() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    let command = everything();
    std::fs::write(
        &config,
        json!({ "mcpServers": {
            "everything": { "command": command[0], "args": command[1..] },
            "files": { "command": filesystem(&[dir.path()])[0], "args": filesystem(&[dir.path()])[1..] },
        }})
        .to_string(),
    )
    .unwrap();
    let mut command = Raw::proxied(
        &[],
        &["--tool-search", "--config", config.to_str().unwrap()],
        dir.path(),
    );
    command.pop();
    let (capabilities, answers) = full_client(dir.path());
    let (mut proxied, _) = Raw::start(command, capabilities, answers).await;
    let listed = names(&proxied.result("tools/list", json!({})).await);
    assert_eq!(listed, ["search_tools", "call_tool", "read_artifact"]);

    // (server-everything says its list changed as it starts: those are passed on too.)
    let before = proxied
        .notifications("notifications/tools/list_changed")
        .len();
    let found = proxied
        .call("search_tools", json!({ "query": "add two numbers" }))
        .await;
    let text = found["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(r#""name":"get-sum""#), "{text}");
    let after = proxied
        .notifications("notifications/tools/list_changed")
        .len();
    assert_eq!(after, before + 1, "the client is told its list grew");
    let listed = names(&proxied.result("tools/list", json!({})).await);
    assert_eq!(&listed[..3], ["search_tools", "call_tool", "read_artifact"]);
    assert!(listed.contains(&"get-sum".to_owned()), "{listed:?}");

    // Found tools answer by name, and through call_tool for a client that keeps its list.
    let sum = proxied.call("get-sum", json!({ "a": 2, "b": 3 })).await;
    assert!(sum.to_string().contains('5'), "{sum}");
    let sum = proxied
        .call(
            "call_tool",
            json!({ "name": "get-sum", "arguments": { "a": 4, "b": 5 } }),
        )
        .await;
    assert!(sum.to_string().contains('9'), "{sum}");

    // A search for what nothing does says so.
    let none = proxied
        .call("search_tools", json!({ "query": "zzqx" }))
        .await;
    assert!(none.to_string().contains("No tool matches"), "{none}");
}

/// The JSON report a Node script prints, once it ended well.
async fn report_of(mut script: Command) -> Value {
    let output = tokio::time::timeout(PATIENCE, script.output())
        .await
        .expect("the script finishes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

/// Runs an SDK's client `script` with `program` against `url`, calling `calls` (name,
/// arguments); returns the tools it listed and the results it got, as it reports them.
async fn client_calls(
    program: PathBuf,
    script: &str,
    url: &str,
    calls: &[(&str, Value)],
) -> (Vec<Value>, Vec<Value>) {
    let mut report = client_report(program, script, url, calls).await;
    let mut listed = |key: &str| report[key].as_array_mut().map(std::mem::take).unwrap();
    (listed("tools"), listed("results"))
}

/// The report a client script prints of `calls`.
async fn client_report(
    program: PathBuf,
    script: &str,
    url: &str,
    calls: &[(&str, Value)],
) -> Value {
    report_of(client_command(program, script, url, calls)).await
}

/// The command that runs client `script` with `program` against `url`, making `calls`.
fn client_command(program: PathBuf, script: &str, url: &str, calls: &[(&str, Value)]) -> Command {
    let mut command = Command::new(program);
    command
        .arg(interop().join(script))
        .arg(url)
        .env("PROXY_TOKEN", TOKEN);
    for (name, arguments) in calls {
        command.arg(name).arg(arguments.to_string());
    }
    command
}

/// The results of `calls` made by the official TypeScript SDK's client and, for each, the
/// o200k tokens a reader sees of it, counted by js-tiktoken (OpenAI's encoder for JavaScript,
/// not toolsmith's counter).
async fn sdk_calls_counted(url: &str, calls: &[(&str, Value)]) -> (Vec<Value>, Vec<u64>) {
    let mut command = client_command(node(), "sdk-call.mjs", url, calls);
    command.env("COUNT_TOKENS", "1");
    let mut report = report_of(command).await;
    let results = report["results"]
        .as_array_mut()
        .map(std::mem::take)
        .unwrap();
    let tokens = report["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    (results, tokens)
}

/// A client of a toolsmith registry, made by the official TypeScript SDK: lists the tools at
/// `url` and calls `calls` (name, arguments); returns the tools and the results, each checked by
/// the SDK against the protocol.
async fn sdk_calls(url: &str, calls: &[(&str, Value)]) -> (Vec<Value>, Vec<Value>) {
    client_calls(node(), "sdk-call.mjs", url, calls).await
}

/// The same calls made by the official Python SDK's `ClientSession`, which checks a result
/// against the tool's output schema: a call it raised on reports `raised` and what.
async fn python_sdk_calls(url: &str, calls: &[(&str, Value)]) -> (Vec<Value>, Vec<Value>) {
    let python = interop().join(".venv/bin/python");
    assert!(
        python.exists(),
        "the Python SDK is not installed: run `bash interop/setup.sh`"
    );
    client_calls(python, "sdk_call.py", url, calls).await
}

/// The chars a reader sees of a result's content: its texts (and embedded texts), and the JSON
/// of any block that is neither text nor media.
fn visible_chars(result: &Value) -> usize {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| match block["type"].as_str() {
            Some("text") => block["text"].as_str().unwrap().chars().count(),
            Some("image" | "audio") => 0,
            Some("resource") if block["resource"]["text"].is_string() => {
                block["resource"]["text"].as_str().unwrap().chars().count()
            }
            _ => block.to_string().chars().count(),
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_success_stays_a_success_for_both_official_sdk_clients() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    // A 2 MB log, and a small file.
    let log: String = (0..30_000u64)
        .map(|i| {
            format!(
                "10:{:02}:{:02} GET /api/orders/{} 200 {}ms\n",
                i / 60 % 60,
                i % 60,
                i * 7_919 % 100_003,
                i % 97
            )
        })
        .collect::<String>()
        .repeat(2);
    std::fs::write(files.join("big.log"), &log).unwrap();
    std::fs::write(files.join("small.txt"), "one\ntwo\n").unwrap();
    let big = files.join("big.log").display().to_string();
    let small = files.join("small.txt").display().to_string();

    // The proxy in front of server-filesystem, whose tools state output schemas.
    let mut proxy = gateway("proxy", TOKEN);
    proxy
        .args(["--max-result-chars", "8000", "--artifacts"])
        .arg(dir.path().join("artifacts"))
        .arg("--")
        .args(filesystem(&[&files]));
    let (_proxy, url) = listening(proxy, true).await;
    let calls = [
        ("read_text_file", json!({ "path": big })),
        ("read_multiple_files", json!({ "paths": [big, big] })),
        ("read_text_file", json!({ "path": small })),
        ("read_text_file", json!({ "path": "/nonexistent" })),
    ];
    let (ts_tools, ts) = sdk_calls(&url, &calls).await;
    let (_, py) = python_sdk_calls(&url, &calls).await;
    // Its structures only wrap the text (`{"content": "…"}`): by default the text alone goes,
    // and the tools are listed without that schema.
    let read = ts_tools
        .iter()
        .find(|tool| tool["name"] == "read_text_file")
        .unwrap();
    assert!(read.get("outputSchema").is_none(), "{read}");
    for (sdk, results) in [("TypeScript", &ts), ("Python", &py)] {
        for (i, result) in results.iter().enumerate() {
            assert!(
                result.get("raised").is_none(),
                "{sdk} SDK, call {i}: {result:.400}"
            );
            assert!(
                visible_chars(result) <= 8_000,
                "{sdk} SDK, call {i}: {result:.300}"
            );
        }
        // Reads that succeeded are successes, cut to the cap, the text alone.
        for result in &results[..3] {
            assert_ne!(
                result.get("isError"),
                Some(&json!(true)),
                "{sdk}: {result:.400}"
            );
            assert!(
                result.get("structuredContent").is_none(),
                "{sdk}: {result:.400}"
            );
        }
        let text = results[0]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("10:00:00 GET /api/orders/0 200 0ms\n"),
            "{sdk}: {text:.200}"
        );
        assert!(text.contains("[toolsmith: output truncated"), "{sdk}");
        cut_facts_hold(sdk, &results[0]);
        cut_facts_hold(sdk, &results[1]);
        assert!(
            results[2].get("_meta").is_none(),
            "{sdk}: {:.300}",
            results[2]
        );
        assert_eq!(results[2]["content"][0]["text"], "one\ntwo\n", "{sdk}");
        // A read that failed stays the error it was.
        assert_eq!(results[3]["isError"], true, "{sdk}: {:.300}", results[3]);
    }

    // serve, over a registry with the fixture's `issues` (an output schema of an array of
    // objects, which a cut cannot keep): under and over the cap, and a tool without a schema.
    let (_serve, url) = listening(serve_with_fixture(dir.path(), &files, 4_000), true).await;
    let calls = [
        ("issues", json!({ "count": 3 })),
        ("issues", json!({ "count": 3_000 })),
        ("read_file", json!({ "path": "small.txt" })),
    ];
    let (_, ts) = sdk_calls(&url, &calls).await;
    let (_, py) = python_sdk_calls(&url, &calls).await;
    for (sdk, results) in [("TypeScript", &ts), ("Python", &py)] {
        for (i, result) in results.iter().enumerate() {
            assert!(
                result.get("raised").is_none(),
                "{sdk} SDK, call {i}: {result:.400}"
            );
            assert_ne!(
                result.get("isError"),
                Some(&json!(true)),
                "{sdk} SDK, call {i}: {result:.400}"
            );
            assert!(
                visible_chars(result) <= 4_000,
                "{sdk} SDK, call {i}: {result:.300}"
            );
        }
        assert_eq!(
            results[0]["structuredContent"]["issues"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        // Over the cap, cut by its schema (the client checked it), text and structure within
        // the cap together.
        let issues = results[1]["structuredContent"]["issues"]
            .as_array()
            .unwrap();
        assert!(
            issues.len() > 3 && issues.len() < 3_000,
            "{sdk}: {}",
            issues.len()
        );
        let structure = results[1]["structuredContent"].to_string().chars().count();
        assert!(visible_chars(&results[1]) + structure <= 4_000, "{sdk}");
        assert!(
            results[2].get("structuredContent").is_none(),
            "{sdk}: {:.300}",
            results[2]
        );
        // serve states its cut as the proxy does; an uncut result states none.
        cut_facts_hold(sdk, &results[1]);
        assert!(
            results[0]["_meta"].get("toolsmith/cut").is_none(),
            "{sdk}: {:.300}",
            results[0]
        );
    }
}

/// A cap in tokens (`--max-result-tokens`) holds for both official SDK clients, through the
/// proxy (server-filesystem, whose results carry the same data as text and as a structure) and
/// `serve`, counted by the o200k encoder and by the estimate: what a client reads of a result
/// counts at most the cap — for the encoder, as js-tiktoken counts it — the marker names the
/// cap, the cut facts state the tokens sent, and the artifact holds every line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caps_in_tokens_hold_for_both_official_sdk_clients() {
    const CAP: u64 = 1_500;
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = settings_files(dir.path());
    let big = files.join("big.conf").display().to_string();
    for count in ["o200k", "estimate"] {
        let mut proxy = gateway("proxy", TOKEN);
        proxy
            .args([
                "--max-result-tokens",
                &CAP.to_string(),
                "--token-count",
                count,
            ])
            .arg("--artifacts")
            .arg(dir.path().join(format!("proxy-{count}")))
            .arg("--")
            .args(filesystem(&[&files]));
        let mut serve = gateway("serve", TOKEN);
        serve
            .args([
                "--max-result-tokens",
                &CAP.to_string(),
                "--token-count",
                count,
            ])
            .arg("--root")
            .arg(&files)
            .arg("--artifacts")
            .arg(dir.path().join(format!("serve-{count}")));
        let gateways = [
            ("proxy", proxy, ("read_text_file", json!({ "path": big }))),
            (
                "serve",
                serve,
                ("run_command", json!({ "command": "cat big.conf" })),
            ),
        ];
        for (what, command, call) in gateways {
            let (_gateway, url) = listening(command, true).await;
            let calls = [
                call.clone(),
                (
                    "read_artifact",
                    json!({ "id": "{{artifact}}", "offset": 2_990, "limit": 20 }),
                ),
            ];
            let (ts, ts_tokens) = sdk_calls_counted(&url, &calls).await;
            let (_, py) = python_sdk_calls(&url, &calls[..1]).await;
            for (sdk, result) in [("TypeScript", &ts[0]), ("Python", &py[0])] {
                let about = format!("{what}, {count}, {sdk}");
                assert!(result.get("raised").is_none(), "{about}: {result:.400}");
                assert_ne!(result.get("isError"), Some(&json!(true)), "{about}");
                let text = result["content"][0]["text"].as_str().unwrap();
                let marker = toolsmith::trim::find_marker(text).expect("a marker");
                assert_eq!(marker.token_cap, Some(CAP as usize), "{about}: {text:.600}");
                let facts = &result["_meta"]["toolsmith/cut"];
                let sent = facts["tokens"]["sent"].as_u64().unwrap();
                assert_eq!(facts["tokens"]["cap"], CAP, "{about}: {facts}");
                assert!(sent <= CAP && sent > CAP / 2, "{about}: {facts}");
                if count == "estimate" {
                    // Four chars a token: what the reader sees is within four times the cap.
                    let seen = visible_chars(result) as u64
                        + result
                            .get("structuredContent")
                            .map_or(0, |s| s.to_string().chars().count() as u64);
                    assert!(seen <= 4 * CAP, "{about}: {seen} chars");
                }
            }
            if count == "o200k" {
                // Counted by OpenAI's own encoder, not by toolsmith.
                assert!(
                    ts_tokens[0] <= CAP,
                    "{what}: {} tokens by js-tiktoken",
                    ts_tokens[0]
                );
                assert!(ts_tokens[0] > CAP / 2, "{what}: {}", ts_tokens[0]);
                // And the facts state what that encoder counts: the text alone here, the text
                // and the structure's JSON through the proxy.
                assert_eq!(
                    ts[0]["_meta"]["toolsmith/cut"]["tokens"]["sent"], ts_tokens[0],
                    "{what}"
                );
            }
            // Every line is still there, for the client that asks.
            let page = ts[1]["content"][0]["text"].as_str().unwrap();
            assert!(
                page.contains("setting_2999 = 2999"),
                "{what}, {count}: {page:.300}"
            );
        }
    }
}

/// `files/` under `dir` with `big.conf` (3,000 lines of settings, returned) and `small.conf`
/// (`a = 1`): what the tests of one copy, of errors over the cap and of resources read.
fn settings_files(dir: &Path) -> (PathBuf, String) {
    let files = dir.join("files");
    std::fs::create_dir(&files).unwrap();
    let big: String = (0..3_000).map(|i| format!("setting_{i} = {i}\n")).collect();
    std::fs::write(files.join("big.conf"), &big).unwrap();
    std::fs::write(files.join("small.conf"), "a = 1\n").unwrap();
    (files, big)
}

/// A server set to `"over_cap": "error"` in the proxy's configuration: a result over the cap
/// reaches both official SDK clients as an error naming its size, the cap and the artifact
/// that holds it whole — none of the result, no structure — and the artifact reads back; a
/// result within the cap is the success it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_set_to_answer_an_error_over_the_cap_sends_no_part_of_a_result() {
    let dir = tempfile::tempdir().unwrap();
    let (files, big) = settings_files(dir.path());
    let command = filesystem(&[&files]);
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "files": {
            "command": command[0], "args": command[1..], "over_cap": "error"
        } } })
        .to_string(),
    )
    .unwrap();
    let mut proxy = gateway("proxy", TOKEN);
    proxy
        .args(["--max-result-chars", "4000", "--artifacts"])
        .arg(dir.path().join("artifacts"))
        .arg("--config")
        .arg(&config);
    let (_proxy, url) = listening(proxy, true).await;
    let path = |name: &str| files.join(name).display().to_string();
    let calls = [
        ("read_text_file", json!({ "path": path("big.conf") })),
        ("read_text_file", json!({ "path": path("small.conf") })),
    ];
    let (_, py) = python_sdk_calls(&url, &calls).await;
    let mut ts_calls = calls.to_vec();
    ts_calls.push((
        "read_artifact",
        json!({ "id": "{{artifact}}", "offset": 2_990, "limit": 10 }),
    ));
    let (_, ts) = sdk_calls(&url, &ts_calls).await;
    for (sdk, results) in [("TypeScript", &ts), ("Python", &py)] {
        let over = &results[0];
        assert!(over.get("raised").is_none(), "{sdk}: {over:.400}");
        assert_eq!(over["isError"], true, "{sdk}: {over:.400}");
        assert!(
            over.get("structuredContent").is_none(),
            "{sdk}: {over:.400}"
        );
        let text = over["content"][0]["text"].as_str().unwrap();
        assert!(
            !text.contains("setting_"),
            "{sdk}: part of the result was sent: {text}"
        );
        // Its size as a reader would see it: the text and, beside it, the same data as
        // `structuredContent`.
        let facts = &over["_meta"]["toolsmith/cut"];
        let received = facts["receivedChars"].as_u64().unwrap() as usize;
        assert!(received > big.chars().count(), "{sdk}: {facts}");
        let size = toolsmith::figures::grouped(received);
        assert!(
            text.contains(&format!("is {size} chars, over the cap of 4,000:")),
            "{sdk}: {text}"
        );
        // Each artifact that holds it (the text, the structure) is named.
        for artifact in facts["artifacts"].as_array().unwrap() {
            let id = artifact["id"].as_str().unwrap();
            assert!(text.contains(&format!("artifact {id}")), "{sdk}: {text}");
        }
        // Within the cap: the success it was.
        assert_ne!(results[1].get("isError"), Some(&json!(true)), "{sdk}");
        assert_eq!(results[1]["content"][0]["text"], "a = 1\n", "{sdk}");
    }
    // The whole is there, every line of it, for the client that asks.
    let page = ts[2]["content"][0]["text"].as_str().unwrap();
    assert!(page.contains("setting_2999 = 2999"), "{page}");
    assert!(page.contains("setting_2990 = 2990"), "{page}");
}

/// `"send": "text-only"` and `"send": "structured-only"` per server: the model reads one copy
/// of a structured result, not the same data twice, and both official SDK clients accept what
/// each sends (the text-only server's tools are listed without their output schema).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_can_send_one_copy_of_a_structured_result() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = settings_files(dir.path());
    let command = filesystem(&[&files]);
    let server = |send: &str| json!({ "command": command[0], "args": command[1..], "send": send });
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": {
            "text": server("text-only"), "structured": server("structured-only")
        } })
        .to_string(),
    )
    .unwrap();
    let mut proxy = gateway("proxy", TOKEN);
    proxy
        .args(["--max-result-chars", "4000", "--artifacts"])
        .arg(dir.path().join("artifacts"))
        .arg("--config")
        .arg(&config);
    let (_proxy, url) = listening(proxy, true).await;
    let path = |name: &str| files.join(name).display().to_string();
    let calls = [
        (
            "text__read_text_file",
            json!({ "path": path("small.conf") }),
        ),
        (
            "structured__read_text_file",
            json!({ "path": path("small.conf") }),
        ),
        (
            "structured__read_text_file",
            json!({ "path": path("big.conf") }),
        ),
    ];
    let (ts_tools, ts) = sdk_calls(&url, &calls).await;
    let (_, py) = python_sdk_calls(&url, &calls).await;
    let listed = |name: &str| ts_tools.iter().find(|tool| tool["name"] == name).unwrap();
    assert!(listed("text__read_text_file").get("outputSchema").is_none());
    assert!(listed("structured__read_text_file")["outputSchema"].is_object());
    for (sdk, results) in [("TypeScript", &ts), ("Python", &py)] {
        for (i, result) in results.iter().enumerate() {
            assert!(
                result.get("raised").is_none(),
                "{sdk}, call {i}: {result:.400}"
            );
            assert_ne!(result.get("isError"), Some(&json!(true)), "{sdk}, call {i}");
        }
        // Text only: the text, no structure.
        assert_eq!(results[0]["content"][0]["text"], "a = 1\n", "{sdk}");
        assert!(
            results[0].get("structuredContent").is_none(),
            "{sdk}: {:.300}",
            results[0]
        );
        // Structure only: no text block, the structure whole.
        for result in &results[1..] {
            let texts = result["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|block| block["type"] == "text")
                .count();
            assert_eq!(texts, 0, "{sdk}: {result:.300}");
        }
        assert_eq!(
            results[1]["structuredContent"]["content"], "a = 1\n",
            "{sdk}"
        );
        // A large one: the structure alone has the cap, cut within it.
        let structure = results[2]["structuredContent"].to_string();
        assert!(
            structure.chars().count() <= 4_000,
            "{sdk}: {structure:.200}"
        );
        assert!(
            structure.contains("setting_0 = 0"),
            "{sdk}: {structure:.200}"
        );
    }
}

/// Artifacts are MCP resources: a cut result links its artifact (`resource_link`, where the cap
/// leaves room: at most 1/50 of the text's share), the proxy
/// lists the artifact template, and both official SDK clients read the artifact with
/// `resources/read` — a page by the URI's query, the first page unranged (saying where the next
/// starts) — while an id of another session is not found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn artifacts_are_resources_both_sdk_clients_read() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = settings_files(dir.path());
    let mut proxy = gateway("proxy", TOKEN);
    proxy
        .args(["--max-result-chars", "20000", "--artifacts"])
        .arg(dir.path().join("artifacts"))
        .arg("--")
        .args(filesystem(&[&files]));
    let (_proxy, url) = listening(proxy, true).await;
    let path = files.join("big.conf").display().to_string();
    let uri = "toolsmith://artifact/{{artifact}}";
    let calls = [
        ("read_text_file", json!({ "path": path })),
        (
            "@read",
            json!({ "uri": format!("{uri}?offset=2990&limit=10") }),
        ),
        ("@read", json!({ "uri": uri })),
        (
            "@read",
            json!({ "uri": "toolsmith://artifact/0123456789abcdef0123456789abcdef" }),
        ),
    ];
    let (_, py) = python_sdk_calls(&url, &calls).await;
    let mut ts_calls = calls.to_vec();
    ts_calls.push(("@templates", json!({})));
    let (_, ts) = sdk_calls(&url, &ts_calls).await;
    for (sdk, results) in [("TypeScript", &ts), ("Python", &py)] {
        let cut = &results[0];
        assert!(cut.get("raised").is_none(), "{sdk}: {cut:.400}");
        assert!(visible_chars(cut) <= 20_000, "{sdk}: {cut:.300}");
        let id = cut["_meta"]["toolsmith/cut"]["cuts"][0]["artifact"]
            .as_str()
            .unwrap();
        let link = cut["content"]
            .as_array()
            .unwrap()
            .iter()
            .find(|block| block["type"] == "resource_link")
            .unwrap_or_else(|| panic!("{sdk}: no resource_link in {cut:.600}"));
        assert_eq!(link["uri"], format!("toolsmith://artifact/{id}"), "{sdk}");
        // A page, by the URI's query.
        let page = results[1]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{sdk}: {:.600}", results[1]));
        assert!(page.contains("setting_2990 = 2990"), "{sdk}: {page}");
        assert!(page.contains("setting_2999 = 2999"), "{sdk}: {page}");
        // Unranged: the first page, within the cap, saying where the next starts.
        let first = results[2]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{sdk}: {:.600}", results[2]));
        assert!(first.contains("setting_0 = 0"), "{sdk}: {first:.300}");
        assert!(first.chars().count() <= 20_000, "{sdk}");
        assert!(first.contains("next: offset="), "{sdk}: {first:.300}");
        // Another id: not this session's, not found.
        let refused = results[3]["raised"].as_str().unwrap_or_default();
        assert!(refused.contains("not found"), "{sdk}: {:.300}", results[3]);
    }
    let templates = ts[4]["resourceTemplates"].as_array().unwrap();
    assert!(
        templates.iter().any(|template| template["uriTemplate"]
            .as_str()
            .is_some_and(|t| t.starts_with("toolsmith://artifact/{id}"))),
        "{templates:?}"
    );

    // serve: the registry's artifacts, read the same way.
    let mut serve = gateway("serve", TOKEN);
    serve
        .args(["--budget", "4000", "--root"])
        .arg(&files)
        .arg("--artifacts")
        .arg(dir.path().join("serve-artifacts"));
    let (_serve, url) = listening(serve, true).await;
    let calls = [
        ("run_command", json!({ "command": "seq 1 20000" })),
        (
            "@read",
            json!({ "uri": format!("{uri}?offset=19990&limit=10") }),
        ),
        (
            "@read",
            json!({ "uri": "toolsmith://artifact/0123456789abcdef0123456789abcdef" }),
        ),
    ];
    let (_, py) = python_sdk_calls(&url, &calls).await;
    let mut ts_calls = calls.to_vec();
    ts_calls.push(("@templates", json!({})));
    let (_, ts) = sdk_calls(&url, &ts_calls).await;
    for (sdk, results) in [("TypeScript", &ts), ("Python", &py)] {
        let cut = &results[0];
        assert!(
            cut["_meta"]["toolsmith/cut"].is_object(),
            "{sdk}: {cut:.400}"
        );
        let page = results[1]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("serve, {sdk}: {:.600}", results[1]));
        assert!(
            page.contains("19991\n") && page.contains("20000\n"),
            "{sdk}: {page}"
        );
        let refused = results[2]["raised"].as_str().unwrap_or_default();
        assert!(
            refused.contains("not found"),
            "serve, {sdk}: {:.300}",
            results[2]
        );
    }
    assert!(
        ts[3]["resourceTemplates"][0]["uriTemplate"]
            .as_str()
            .is_some_and(|t| t.starts_with("toolsmith://artifact/{id}")),
        "{:?}",
        ts[3]
    );
}

/// `serve` sends a result as the proxy does: a structure that repeats its text (an MCP server's
/// tool, served beside the standard tools) shares the cap with the text, so what a host may
/// show the model of both is within it; a cut text is followed by a `resource_link` to its
/// artifact where the link costs at most 1/50 of the allowance, and both official SDK clients
/// accept the link and read the resource it names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_shares_its_cap_with_a_repeating_structure_and_links_a_cut_text() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = settings_files(dir.path());
    let (_serve, url) = listening(serve_with_fixture(dir.path(), &files, 8_000), true).await;
    // `greet`'s text is the string its structure holds: `{ "result": <the text> }`.
    let calls = [
        ("greet", json!({ "name": "ada", "times": 3_000 })),
        // Lines that do not count up (those would fold, every line shown).
        (
            "run_command",
            json!({ "command": "awk 'BEGIN { for (i = 1; i <= 20000; i++) print i * 7919 % 100003 }'" }),
        ),
        (
            "@read",
            json!({ "uri": "toolsmith://artifact/{{artifact}}?offset=19990&limit=10" }),
        ),
    ];
    let (_, ts) = sdk_calls(&url, &calls).await;
    let (_, py) = python_sdk_calls(&url, &calls[..2]).await;
    for (sdk, results) in [("TypeScript", &ts), ("Python", &py)] {
        for result in &results[..2] {
            assert!(result.get("raised").is_none(), "{sdk}: {result:.400}");
            assert_ne!(result.get("isError"), Some(&json!(true)), "{sdk}");
        }
        // A structure that only wraps its text is not sent: the text alone, within the cap
        // (the greetings count up: the text's lines are folded, each rebuilt from the fold).
        let structured = &results[0];
        assert!(structured.get("structuredContent").is_none(), "{sdk}");
        let seen = visible_chars(structured);
        let facts = &structured["_meta"]["toolsmith/cut"];
        assert_eq!(facts["sentChars"], seen as u64, "{sdk}: {structured}");
        assert!(seen <= 8_000, "{sdk}: {seen} chars seen");
        // A plain text cut: its link after it, within the cap.
        let plain = &results[1];
        cut_facts_hold(sdk, plain);
        let link = plain["content"]
            .as_array()
            .unwrap()
            .iter()
            .find(|block| block["type"] == "resource_link")
            .unwrap_or_else(|| panic!("{sdk}: no resource_link in {plain:.600}"));
        assert_eq!(
            plain["content"][1], *link,
            "{sdk}: the link follows its text"
        );
        let id = plain["_meta"]["toolsmith/cut"]["cuts"][0]["artifact"]
            .as_str()
            .unwrap();
        assert_eq!(link["uri"], format!("toolsmith://artifact/{id}"), "{sdk}");
        assert!(
            visible_chars(plain) <= 8_000,
            "{sdk}: {}",
            visible_chars(plain)
        );
    }
    let page = ts[2]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{:.600}", ts[2]));
    // Lines 19,991 to 20,000: i = 19,991 to 20,000, the output's own numbers.
    for i in [19_991u64, 20_000] {
        assert!(
            page.contains(&format!("\n{}", i * 7_919 % 100_003)),
            "{page}"
        );
    }
}

/// A cut result's `_meta` says, under `toolsmith/cut`, what its marker says in words: the chars
/// received and sent, each cut text's artifact (the one its marker names) and URI, and where to
/// read on — and the SDK client passed it through unchanged.
fn cut_facts_hold(sdk: &str, result: &Value) {
    let facts = &result["_meta"]["toolsmith/cut"];
    assert!(facts.is_object(), "{sdk}: no cut facts in {result:.400}");
    let received = facts["receivedChars"].as_u64().unwrap();
    let sent = facts["sentChars"].as_u64().unwrap();
    assert!(received > sent, "{sdk}: {facts}");
    // What is sent is what a reader sees: the content, and the structure as compact JSON.
    let structure = result
        .get("structuredContent")
        .map_or(0, |structure| structure.to_string().chars().count());
    assert_eq!(
        sent as usize,
        visible_chars(result) + structure,
        "{sdk}: {facts}"
    );
    let cuts = facts["cuts"].as_array().unwrap();
    assert!(!cuts.is_empty(), "{sdk}: {facts}");
    for cut in cuts {
        let block = cut["block"].as_u64().unwrap() as usize;
        let text = result["content"][block]["text"].as_str().unwrap();
        let id = cut["artifact"].as_str().unwrap();
        assert!(
            text.contains(&format!("artifact {id}")),
            "{sdk}: {cut} / {text:.300}"
        );
        assert_eq!(cut["uri"], format!("toolsmith://artifact/{id}"), "{sdk}");
        assert!(cut["nextOffset"].is_u64(), "{sdk}: {cut}");
        assert!(
            cut["keptChars"].as_u64().unwrap() < cut["originalChars"].as_u64().unwrap(),
            "{sdk}: {cut}"
        );
    }
    for artifact in facts["artifacts"].as_array().unwrap() {
        assert_eq!(
            artifact["uri"],
            format!("toolsmith://artifact/{}", artifact["id"].as_str().unwrap()),
            "{sdk}"
        );
    }
}

/// Checks one SDK's results of the typed tools' calls through `serve`: the greeting and the
/// long greeting, the refusal, and the TypeScript fixture's greeting, small and long.
fn typed_results_hold(sdk: &str, results: &[Value], cap: usize) {
    for (i, result) in results.iter().enumerate() {
        // The SDK client checked each success against its tool's output schema.
        assert!(
            result.get("raised").is_none(),
            "{sdk} SDK, call {i}: {result:.400}"
        );
        assert!(
            visible_chars(result) <= cap,
            "{sdk} SDK, call {i}: {result:.300}"
        );
    }
    // A structure that only wraps the text (`{"result": "…"}`) is not sent: the text alone,
    // whole within the cap.
    for i in [0, 3] {
        assert_eq!(results[i]["content"][0]["text"], "hello, ada", "{sdk}");
        assert!(
            results[i].get("structuredContent").is_none(),
            "{sdk}: {:.300}",
            results[i]
        );
    }
    for i in [1, 4] {
        let result = &results[i];
        assert_ne!(
            result.get("isError"),
            Some(&json!(true)),
            "{sdk}: {result:.300}"
        );
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("hello, ada (1)\n"), "{sdk}: {text:.200}");
        // Cut, or folded losslessly (the greetings are numbered): either way the marker says so.
        assert!(text.contains("[toolsmith: output"), "{sdk}: {text:.400}");
        assert!(result.get("structuredContent").is_none(), "{sdk}");
    }
    assert_eq!(results[2]["isError"], true, "{sdk}: {:.300}", results[2]);
    assert!(
        results[2]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("eve is not allowed here"),
        "{sdk}: {:.300}",
        results[2]
    );
    assert!(results[2].get("structuredContent").is_none(), "{sdk}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_tool_stays_typed_through_serve_for_both_official_sdk_clients() {
    // Tools whose text is not their structure: `hello` of a server written with the Python
    // SDK (`def hello(name: str) -> str`), `greet` of one written with the TypeScript SDK.
    let python = interop().join(".venv/bin/python");
    assert!(
        python.exists(),
        "the Python SDK is not installed: run `bash interop/setup.sh`"
    );
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": {
            "typed": { "command": python, "args": [interop().join("sdk_server.py")] },
            "fixture": { "command": fixture()[0], "args": [fixture()[1]] },
        } })
        .to_string(),
    )
    .unwrap();
    let mut serve = gateway("serve", TOKEN);
    serve
        .args(["--budget", "4000", "--config"])
        .arg(&config)
        .arg("--root")
        .arg(dir.path())
        .arg("--artifacts")
        .arg(dir.path().join("artifacts"));
    let (_serve, url) = listening(serve, true).await;
    let calls = [
        ("hello", json!({ "name": "ada" })),
        ("hello", json!({ "name": "ada", "times": 3_000 })),
        ("refuse", json!({ "name": "eve" })),
        ("greet", json!({ "name": "ada" })),
        ("greet", json!({ "name": "ada", "times": 3_000 })),
    ];
    let (tools, ts) = sdk_calls(&url, &calls).await;
    let (_, py) = python_sdk_calls(&url, &calls).await;
    // Listed without the schema that only wraps their text: their results go as the text.
    for name in ["hello", "greet"] {
        let tool = tools.iter().find(|tool| tool["name"] == name).unwrap();
        assert!(tool.get("outputSchema").is_none(), "{tool}");
    }
    typed_results_hold("TypeScript", &ts, 4_000);
    typed_results_hold("Python", &py, 4_000);
}

/// The media blocks of a result as the server wrote them: type, MIME type, data, annotations.
fn media_of(result: &Value) -> Vec<Value> {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|block| block["type"] == "image" || block["type"] == "audio")
        .cloned()
        .collect()
}

#[tokio::test]
async fn images_and_audio_pass_through_the_mcp_client_and_serve_as_they_came() {
    use std::sync::Arc;
    use toolsmith::artifacts::MemoryStore;
    use toolsmith::mcp::{HttpOptions, McpClient, McpServer};
    use toolsmith::tool::{MediaKind, MediaLimits};
    use toolsmith::{Registry, ToolCall};

    let annotated = json!({ "messageType": "success", "includeImage": true });
    // What the servers send, directly.
    let dir = tempfile::tempdir().unwrap();
    let (capabilities, answers) = full_client(dir.path());
    let (mut everything_direct, _) = Raw::start(everything(), capabilities.clone(), answers).await;
    let tiny = everything_direct.call("get-tiny-image", json!({})).await;
    let with_annotations = everything_direct
        .call("get-annotated-message", annotated.clone())
        .await;
    let (mut fixture_direct, _) =
        Raw::start(fixture(), capabilities, full_client(dir.path()).1).await;
    let audio = fixture_direct.call("test_audio_content", json!({})).await;
    let expected = [&tiny, &with_annotations, &audio].map(media_of);
    assert!(
        expected.iter().all(|media| media.len() == 1),
        "{expected:?}"
    );
    assert_eq!(expected[1][0]["annotations"]["audience"], json!(["user"]));

    // Through the registry's MCP client, the model is shown them as media.
    let client = |name: &str, command: Vec<String>| {
        McpClient::stdio(name, command[0].clone())
            .args(command[1..].to_vec())
            .connect()
    };
    let servers = [
        client("everything", everything()).await.unwrap(),
        client("fixture", fixture()).await.unwrap(),
    ];
    let registry = Registry::builder()
        .tools(servers.iter().flat_map(McpClient::tools))
        .shared_artifacts(Arc::new(MemoryStore::new()))
        .media_limits(MediaLimits::default().with_max_bytes(100_000))
        .build()
        .unwrap();
    let results = registry
        .turn()
        .execute([
            ToolCall::new("1", "get-tiny-image", json!({})),
            ToolCall::new("2", "get-annotated-message", annotated.clone()),
            ToolCall::new("3", "test_audio_content", json!({})),
            ToolCall::new("4", "big_image", json!({ "bytes": 200_000 })),
            ToolCall::new("5", "annotated", json!({})),
        ])
        .await;
    // A resource link is a line saying what the server said of it.
    assert!(
        results[4].content.ends_with(
            "[resource link: static-text (text/plain): test://static-text — A linked resource]"
        ),
        "{}",
        results[4].content
    );
    for (result, expected) in results.iter().zip(&expected) {
        assert_eq!(result.media.len(), 1, "{}: {}", result.tool, result.content);
        let media = &result.media[0];
        assert_eq!(media.kind().as_str(), expected[0]["type"]);
        assert_eq!(media.mime_type(), expected[0]["mimeType"]);
        assert_eq!(media.base64(), expected[0]["data"]);
        assert_eq!(
            media.annotations().map(|a| Value::Object(a.clone())),
            expected[0].get("annotations").cloned()
        );
        assert!(!result.content.contains("[image"), "{}", result.content);
    }
    assert_eq!(results[2].media[0].kind(), MediaKind::Audio);
    // The image over 100,000 bytes of base64 is an artifact, read back as the same image.
    assert!(results[3].media.is_empty());
    let left = &results[3].meta.media_left_out[0];
    assert_eq!(left.base64_bytes, 200_000);
    // What the server stated beside its content is kept too.
    assert_eq!(results[3].meta.tool_meta["fixture/bytes"], 200_000);
    let id = left.artifact.as_ref().unwrap().as_str().to_owned();
    let back = registry
        .turn()
        .execute([ToolCall::new("5", "read_artifact", json!({ "id": id }))])
        .await;
    assert_eq!(back[0].media.len(), 1, "{}", back[0].content);
    assert_eq!(back[0].media[0].base64(), "A".repeat(200_000));

    // Served again, an MCP client gets them as the blocks the servers sent.
    let server = McpServer::new(registry)
        .unwrap()
        .serve_http(HttpOptions::new("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", server.local_addr());
    let (tools, served) = sdk_calls(
        &url,
        &[
            ("get-tiny-image", json!({})),
            ("get-annotated-message", annotated),
            ("test_audio_content", json!({})),
            ("big_image", json!({ "bytes": 200_000 })),
            ("read_artifact", json!({ "id": "{{artifact}}" })),
            ("issues", json!({ "count": 3 })),
            ("issues", json!({ "count": 5_000 })),
            // An artifact made outside the session is not the session's to read.
            ("read_artifact", json!({ "id": id })),
        ],
    )
    .await;
    // The server's title and output schema are listed as it stated them.
    let issues = tools.iter().find(|tool| tool["name"] == "issues").unwrap();
    assert_eq!(issues["title"], "Open Issues");
    assert_eq!(issues["outputSchema"]["required"], json!(["issues"]));
    // A structured result whole is sent as the structure too (the SDK checked it against the
    // output schema); one over the cap is cut by its schema, text and structure the same
    // issues, and stays a success.
    assert_eq!(served[5]["structuredContent"]["issues"][2]["number"], 3);
    assert_eq!(served[5].get("isError"), Some(&json!(false)));
    assert_eq!(served[6].get("isError"), Some(&json!(false)));
    let issues = served[6]["structuredContent"]["issues"].as_array().unwrap();
    assert!(issues.len() > 3 && issues.len() < 5_000, "{}", issues.len());
    let text = served[6]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("[toolsmith: structured result cut"),
        "{text:.300}"
    );
    // Over the limit again: a note in the text, and the server's `_meta` as it stated it.
    let note = served[3]["content"][0]["text"].as_str().unwrap();
    assert!(
        note.starts_with("[toolsmith: image (image/png, 200,000 bytes of base64) left out"),
        "{note}"
    );
    // The server's `_meta` as it stated it, beside the facts of what was left out.
    assert_eq!(served[3]["_meta"]["fixture/bytes"], 200_000);
    let facts = &served[3]["_meta"]["toolsmith/cut"];
    assert_eq!(
        facts["artifacts"].as_array().map(Vec::len),
        Some(1),
        "{facts}"
    );
    for (result, expected) in served.iter().zip(&expected) {
        assert_eq!(&media_of(result), expected, "{result}");
    }
    // The session reads back what it left out as the same image.
    assert_eq!(media_of(&served[4])[0]["data"], "A".repeat(200_000));
    assert_eq!(media_of(&served[4])[0]["type"], "image");
    assert_eq!(served[7]["isError"], true, "{}", served[7]);
    let unknown = served[7]["content"][0]["text"].as_str().unwrap();
    assert!(unknown.contains("was not found"), "{unknown}");
    server.shutdown();
    for server in &servers {
        server.shutdown().await;
    }
}

/// A server of 2026-07-28 only (the Python SDK's modern serving loop), started by command,
/// answers the client's handshake with a refusal: the client discovers that same process, not
/// a second one, and calls its tools.
#[tokio::test]
async fn a_2026_07_28_only_server_started_by_command_is_started_once() {
    use toolsmith::mcp::McpClient;
    use toolsmith::{Registry, ToolCall};

    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let python = interop().join(".venv/bin/python").display().to_string();
    let server = McpClient::stdio("modern", python)
        .arg(interop().join("modern_server.py").display().to_string())
        .env("MODERN_SERVER_STARTS", starts.display().to_string())
        .connect()
        .await
        .unwrap();
    let registry = Registry::builder().tools(server.tools()).build().unwrap();
    let results = registry
        .turn()
        .execute([ToolCall::new(
            "call_1",
            "echo",
            json!({ "text": "spoken to once" }),
        )])
        .await;
    assert_eq!(results[0].content, "spoken to once", "{:?}", results[0]);
    let started = std::fs::read_to_string(&starts).unwrap();
    assert_eq!(
        started.lines().count(),
        1,
        "started more than once:\n{started}"
    );
    server.shutdown().await;
}

/// The client discovers first, as the official clients do. A server of 2026-07-28 only written
/// with the SDK's public API (its ordinary loop, `initialize` refused by middleware) is reached
/// — a client that opened with `initialize` would be held in the handshake era and refused —
/// started once; a server of the handshake era that exits on any request before `initialize`
/// is started again and initialized. Through the library's client and through the proxy.
#[tokio::test]
async fn the_client_and_the_proxy_discover_first_and_start_again_a_server_the_probe_ended() {
    use toolsmith::mcp::McpClient;
    use toolsmith::{Registry, ToolCall};

    let dir = tempfile::tempdir().unwrap();
    let python = interop().join(".venv/bin/python").display().to_string();
    let toolsmith = env!("CARGO_BIN_EXE_toolsmith").to_owned();
    let public = interop().join("modern_server.py").display().to_string();
    let strict = interop()
        .join("strict_legacy_server.py")
        .display()
        .to_string();
    // (what, the server's command, the file its starts are counted in, the starts it takes)
    let cases = [
        (
            "the public API's 2026-07-28-only server",
            vec![public.clone(), "--public".to_owned()],
            "MODERN_SERVER_STARTS",
            1,
        ),
        (
            "a server that exits on the probe",
            vec![strict.clone()],
            "STRICT_SERVER_STARTS",
            2,
        ),
    ];
    for (what, args, counter, starts) in cases {
        for through_proxy in [false, true] {
            let counted = dir.path().join(format!("{counter}-{through_proxy}"));
            let client = if through_proxy {
                McpClient::stdio("front", toolsmith.clone())
                    .args(["proxy", "--", python.as_str()])
                    .args(args.clone())
            } else {
                McpClient::stdio("server", python.clone()).args(args.clone())
            };
            let server = client
                .env(counter, counted.display().to_string())
                .connect()
                .await
                .unwrap_or_else(|error| panic!("{what} (proxy: {through_proxy}): {error}"));
            let registry = Registry::builder().tools(server.tools()).build().unwrap();
            let results = registry
                .turn()
                .execute([ToolCall::new(
                    "call_1",
                    "echo",
                    json!({ "text": "reached" }),
                )])
                .await;
            assert_eq!(
                results[0].content, "reached",
                "{what} (proxy: {through_proxy}): {:?}",
                results[0]
            );
            let started = std::fs::read_to_string(&counted).unwrap();
            assert_eq!(
                started.lines().count(),
                starts,
                "{what} (proxy: {through_proxy}) started:\n{started}"
            );
            server.shutdown().await;
        }
    }
}

#[tokio::test]
async fn a_servers_log_messages_reach_the_registrys_subscribers_in_order_before_the_result() {
    use toolsmith::mcp::McpClient;
    use toolsmith::tool::{Event, LogLevel};
    use toolsmith::{Registry, ToolCall};

    let command = fixture();
    let server = McpClient::stdio("fixture", command[0].clone())
        .args(command[1..].to_vec())
        .connect()
        .await
        .unwrap();
    let registry = Registry::builder().tools(server.tools()).build().unwrap();
    // Twenty calls in a row: a log message sent just before a result is never lost.
    for round in 0..20 {
        let mut events = registry.subscribe();
        let results = registry
            .turn()
            .execute([ToolCall::new(
                format!("call_{round}"),
                "test_tool_with_logging",
                json!({}),
            )])
            .await;
        assert_eq!(
            results[0].content,
            "Tool with logging executed successfully"
        );
        let mut logs = Vec::new();
        while let Ok(event) = events.try_recv() {
            match event {
                Event::Log { level, data, .. } => logs.push((level, data)),
                Event::CallFinished(_) => break,
                _ => {}
            }
        }
        assert_eq!(
            logs,
            [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed"
            ]
            .map(|text| (LogLevel::Info, json!(text))),
            "round {round}"
        );
    }
    server.shutdown().await;
}

/// The gateway's two clients (`gateway-client.mjs`, the official TypeScript SDK's client),
/// through `toolsmith proxy --http` with `auth` (its arguments and environment).
async fn two_clients(dir: &std::path::Path, auth: &[&str], tokens: (&str, &str)) -> Value {
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    proxy
        .args(["proxy", "--max-result-chars", "2000", "--artifacts"])
        .arg(dir.join("artifacts"))
        .args(["--http", "127.0.0.1:0"])
        .args(auth)
        .arg("--")
        .args(fixture())
        .env("PROXY_TOKEN", TOKEN);
    let (_proxy, url) = listening(proxy, true).await;
    let mut client = node_client("gateway-client.mjs", &url);
    client.env("TOKEN_A", tokens.0).env("TOKEN_B", tokens.1);
    report_of(client).await
}

/// What every gateway answers, whoever its clients are: the SDK servers' statuses for what
/// they refuse, and ids matched exactly.
fn answers_as_the_sdk_servers_do(report: &Value) {
    let status = &report["status"];
    assert_eq!(status["ownSession"], 200, "{report}");
    assert_eq!(status["lowercaseScheme"], 200, "{report}");
    assert_eq!(status["upperCasedId"], 404, "{report}");
    assert_eq!(status["longerId"], 404, "{report}");
    assert_eq!(status["noAccept"], 406, "{report}");
    assert_eq!(status["jsonOnlyAccept"], 406, "{report}");
    assert_eq!(status["textBody"], 415, "{report}");
    assert_eq!(status["getWithoutEventStream"], 406, "{report}");
    assert_eq!(status["afterDelete"], 404, "{report}");
    let session = report["session"].as_str().unwrap();
    assert!(
        session.len() >= 32 && session.bytes().all(|b| b.is_ascii_graphic()),
        "{session}"
    );
    assert_eq!(report["ownRead"]["isError"], false, "{report}");
    assert!(
        report["cut"].as_str().unwrap().contains("[toolsmith:"),
        "{report}"
    );
}

/// An id from elsewhere, answered as an id that never was.
fn answered_as_unknown(read: &Value, report: &Value) {
    let id = report["id"].as_str().unwrap();
    let unknown = &report["unknownRead"];
    assert_eq!(read["isError"], unknown["isError"], "{report}");
    assert_eq!(
        read["text"].as_str().unwrap().replace(id, "ID"),
        unknown["text"]
            .as_str()
            .unwrap()
            .replace("0123456789abcdef0123456789abcdef", "ID"),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_principals_sessions_and_artifacts_are_its_own() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    let (alice, bob) = ("alice-token-0000000001", "bob-token-000000000002");
    std::fs::write(&tokens, json!({ alice: "alice", bob: "bob" }).to_string()).unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let report = two_clients(
        dir.path(),
        &["--tokens", tokens.to_str().unwrap()],
        (alice, bob),
    )
    .await;
    answers_as_the_sdk_servers_do(&report);
    // Bob reaches neither Alice's session nor her artifacts.
    assert_eq!(report["status"]["otherTokensSession"], 404, "{report}");
    assert_eq!(report["status"]["otherTokensDelete"], 404, "{report}");
    answered_as_unknown(&report["otherRead"], &report);
    // Alice's artifacts outlive her session: her next session reads them.
    assert_eq!(report["laterRead"], report["ownRead"], "{report}");
    assert!(dir.path().join("artifacts/owners/principal-alice").is_dir());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_artifacts_are_its_own_and_go_with_it() {
    let dir = tempfile::tempdir().unwrap();
    // Both clients hold the one token: sessions, not principals, keep them apart.
    let report = two_clients(dir.path(), &["--token-env", "PROXY_TOKEN"], (TOKEN, TOKEN)).await;
    answers_as_the_sdk_servers_do(&report);
    answered_as_unknown(&report["otherRead"], &report);
    // Ended with DELETE: its artifacts went with it.
    answered_as_unknown(&report["laterRead"], &report);
    let session = report["session"].as_str().unwrap();
    let owners = dir.path().join("artifacts/owners");
    assert!(owners.is_dir());
    assert!(!owners.join(format!("session-{session}")).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_stays_with_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    // serve without a token: one is made and printed after the address.
    let mut serve = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    serve
        .args(["serve", "--root"])
        .arg(dir.path())
        .args(["--http", "127.0.0.1:0"])
        .kill_on_drop(true)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("ALSO_THE_TOKEN", "never-set-yet");
    let mut child = serve.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut next = async || {
        tokio::time::timeout(PATIENCE, lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
    };
    let url = next().await.rsplit(' ').next().unwrap().to_owned();
    let told = next().await;
    let made = told
        .split("Bearer ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_else(|| panic!("{told}"))
        .to_owned();
    assert_eq!(made.len(), 32, "{told}");
    // Without it, refused; with it (as the SDK sends it), served — and the commands the
    // standard tools run do not see it.
    let mut client = node_client("sdk-call.mjs", &url);
    client.args(["run_command", r#"{"command": "env"}"#]);
    let refused = client.output().await.unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("401"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    client.env("PROXY_TOKEN", &made);
    let report = report_of(client).await;
    let env = report["results"][0]["content"][0]["text"].as_str().unwrap();
    assert!(env.contains("ALSO_THE_TOKEN=never-set-yet"), "{env:.2000}");
    assert!(!env.contains(&made), "{env:.2000}");
    drop(child);

    // proxy with --token-env: neither the variable nor another holding the same token reaches
    // the server it starts.
    let seen = dir.path().join("env.txt");
    let mut proxy = gateway("proxy", TOKEN);
    proxy
        .arg("--")
        .args(["sh", "-c", r#"env > "$0"; exec "$1" "$2""#])
        .arg(&seen)
        .args(fixture())
        .env("A_COPY_OF_IT", TOKEN)
        .env("SOMETHING_ELSE", "kept");
    let (_proxy, url) = listening(proxy, true).await;
    let (_, results) = sdk_calls(&url, &[("test_simple_text", json!({}))]).await;
    assert_eq!(
        results[0]["content"][0]["text"],
        "This is a simple text response for testing."
    );
    let env = std::fs::read_to_string(&seen).unwrap();
    assert!(env.contains("SOMETHING_ELSE=kept"), "{env}");
    assert!(!env.contains(TOKEN), "{env}");
    assert!(!env.contains("PROXY_TOKEN"), "{env}");
}

/// `toolsmith proxy --http` over the fixture server with `flags`, its artifacts under `dir`,
/// clients needing [`TOKEN`]: the process and its URL.
async fn fixture_gateway(dir: &Path, flags: &[&str]) -> (Child, String) {
    let mut proxy = gateway("proxy", TOKEN);
    proxy
        .arg("--artifacts")
        .arg(dir.join("artifacts"))
        .args(flags)
        .arg("--")
        .args(fixture());
    listening(proxy, true).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_servers_serve_every_session_and_keep_each_ones_progress_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let (_proxy, url) = fixture_gateway(dir.path(), &["--share-upstreams"]).await;
    let mut client = node_client("shared-client.mjs", &url);
    client.env("PROXY_TOKEN", TOKEN);
    let report = report_of(client).await;
    // One process served all three sessions.
    let pids: Vec<u64> = report["pids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|said| {
            serde_json::from_str::<Value>(said.as_str().unwrap()).unwrap()["pid"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(pids.len(), 3, "{report}");
    assert!(pids.iter().all(|pid| *pid == pids[0]), "{report}");
    // Each session saw its own progress, though their SDKs picked the same tokens.
    for progress in report["progress"].as_array().unwrap() {
        assert_eq!(progress["seen"], json!([0, 50, 100]), "{report}");
        assert_eq!(
            progress["text"], "Tool with progress executed successfully",
            "{report}"
        );
    }
    // A server's request of a client is refused, saying why, and the session goes on.
    let sampling = report["sampling"].to_string();
    assert!(sampling.contains("shares the server"), "{report}");
    assert_eq!(report["setLevel"], "answered", "{report}");
    // Subscriptions, refused, are not offered.
    assert_eq!(report["subscribe"], false, "{report}");
}

/// One JSON-RPC message to a gateway over HTTP, as a raw client sends it: the answer (read
/// from JSON or from the event stream), and the session id the gateway gave, if any.
async fn rpc(url: &str, session: Option<&str>, body: Value) -> (Value, Option<String>) {
    let mut request = reqwest::Client::new()
        .post(url)
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = tokio::time::timeout(PATIENCE, request.send())
        .await
        .expect("an answer in time")
        .unwrap();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|value| value.to_str().unwrap().to_owned());
    let text = tokio::time::timeout(PATIENCE, response.text())
        .await
        .expect("the body in time")
        .unwrap();
    let answer = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .chain(std::iter::once(text.as_str()))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message.get("id").is_some())
        .unwrap_or(Value::Null);
    (answer, session)
}

/// A session of a gateway, initialized asking for protocol version `version`: its id and the
/// answer to `initialize`.
async fn raw_session(url: &str, version: &str) -> (Option<String>, Value) {
    let (answer, session) = rpc(
        url,
        None,
        json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": { "name": "raw", "version": "1" } } }),
    )
    .await;
    if let Some(session) = &session {
        rpc(
            url,
            Some(session),
            json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        )
        .await;
    }
    (session, answer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_servers_keep_each_sessions_tasks_and_protocol_version_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let mut proxy = gateway("proxy", TOKEN);
    proxy
        .arg("--artifacts")
        .arg(dir.path().join("artifacts"))
        .arg("--share-upstreams")
        .arg("--")
        .args(fixture())
        .env("FIXTURE_TASKS", "1");
    let (_proxy, url) = listening(proxy, true).await;

    // Each client is answered with the version it asked for, where the server speaks it.
    let (a, answer) = raw_session(&url, "2025-06-18").await;
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-06-18",
        "{answer}"
    );
    let (b, answer) = raw_session(&url, "2025-03-26").await;
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-03-26",
        "{answer}"
    );
    let (_, answer) = raw_session(&url, "2099-01-01").await;
    let newest = answer["result"]["protocolVersion"]
        .as_str()
        .unwrap_or_default();
    assert!(("2025-06-18".."2099-01-01").contains(&newest), "{answer}");
    let (_, answer) = raw_session(&url, "2023-01-01").await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unsupported protocol version `2023-01-01`"),
        "{answer}"
    );
    let (a, b) = (a.unwrap(), b.unwrap());

    // A task one session made is its own.
    let call = |id: u64, method: &str, params: Value| json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
    let (made, _) = rpc(
        &url,
        Some(&a),
        call(
            1,
            "tools/call",
            json!({ "name": "make_task", "arguments": {}, "task": { "ttl": 60000 } }),
        ),
    )
    .await;
    let task = made["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {made}"))
        .to_owned();
    for (n, method) in ["tasks/get", "tasks/result", "tasks/cancel"]
        .iter()
        .enumerate()
    {
        let (answer, _) = rpc(
            &url,
            Some(&b),
            call(2 + n as u64, method, json!({ "taskId": task })),
        )
        .await;
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("Task not found"),
            "{method}: {answer}"
        );
    }
    let (listed, _) = rpc(&url, Some(&b), call(5, "tasks/list", json!({}))).await;
    assert!(!listed.to_string().contains(&task), "{listed}");
    // Its own session reads it, lists it and gets its result.
    let (got, _) = rpc(
        &url,
        Some(&a),
        call(6, "tasks/get", json!({ "taskId": task })),
    )
    .await;
    assert_eq!(got["result"]["taskId"], task.as_str(), "{got}");
    let (listed, _) = rpc(&url, Some(&a), call(7, "tasks/list", json!({}))).await;
    assert!(listed.to_string().contains(&task), "{listed}");
    let (result, _) = rpc(
        &url,
        Some(&a),
        call(8, "tasks/result", json!({ "taskId": task })),
    )
    .await;
    assert_eq!(
        result["result"]["content"][0]["text"], "the task's result",
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_takes_a_server_started_ahead_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_proxy, url) = fixture_gateway(dir.path(), &["--warm-upstreams", "1"]).await;
    // The waiting server has run a while before any client came.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let whoami = async || {
        let mut client = node_client("sdk-call.mjs", &url);
        client.args(["whoami", "{}"]).env("PROXY_TOKEN", TOKEN);
        let report = report_of(client).await;
        let said = report["results"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        serde_json::from_str::<Value>(&said).unwrap()
    };
    let first = whoami().await;
    assert!(first["uptime"].as_f64().unwrap() >= 2.5, "{first}");
    // Each session has a server of its own: the next took the one started in its place.
    let second = whoami().await;
    assert_ne!(first["pid"], second["pid"], "{first} {second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_sessions_keep_their_artifacts_apart_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut serve = gateway("serve", TOKEN);
    serve
        .args(["--budget", "2000", "--root"])
        .arg(dir.path())
        .arg("--artifacts")
        .arg(dir.path().join("artifacts"));
    let (_serve, url) = listening(serve, true).await;
    let mut client = node_client("gateway-client.mjs", &url);
    client
        .env("TOKEN_A", TOKEN)
        .env("TOKEN_B", TOKEN)
        .env("CUT_TOOL", "run_command")
        .env("CUT_ARGUMENTS", r#"{"command": "seq 1 20000"}"#);
    let report = report_of(client).await;
    answers_as_the_sdk_servers_do(&report);
    answered_as_unknown(&report["otherRead"], &report);
    answered_as_unknown(&report["laterRead"], &report);
    let session = report["session"].as_str().unwrap();
    assert!(dir.path().join("artifacts/owners").is_dir());
    assert!(
        !dir.path()
            .join(format!("artifacts/owners/session-{session}"))
            .exists()
    );
}

/// `toolsmith proxy --config` over `servers` (name → the command that starts it, with the
/// server's own settings beside), with `options`, started and initialized by a raw client.
async fn configured(servers: Value, options: &[&str], dir: &Path) -> (Raw, Value) {
    let config = dir.join("servers.json");
    std::fs::write(&config, json!({ "mcpServers": servers }).to_string()).unwrap();
    let mut with_config = vec!["--config", config.to_str().unwrap()];
    with_config.extend_from_slice(options);
    let mut command = Raw::proxied(&[], &with_config, dir);
    command.pop(); // a configuration, not a command after `--`
    let (capabilities, answers) = full_client(dir);
    Raw::start(command, capabilities, answers).await
}

/// A server entry of a configuration: the hostile server's `attack`, with `settings` added.
fn hostile_entry(attack: &str, settings: Value) -> Value {
    let command = hostile(attack);
    let mut entry = json!({ "command": command[0], "args": command[1..] });
    if let (Value::Object(entry), Value::Object(settings)) = (&mut entry, settings) {
        entry.extend(settings);
    }
    entry
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_is_reachable_under_a_valid_name_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    // Server `a` offers `b__c` and server `a__b` offers `c`: both would be `a__b__c`.
    let (mut proxied, _) = configured(
        json!({ "a": hostile_entry("tricky", json!({})), "a__b": hostile_entry("c", json!({})) }),
        &["--prefix-all"],
        dir.path(),
    )
    .await;
    let listed = names(&proxied.result("tools/list", json!({})).await);
    assert_eq!(
        listed.len(),
        10 + 1 + 1,
        "every tool, and read_artifact: {listed:?}"
    );
    let unique: std::collections::HashSet<&String> = listed.iter().collect();
    assert_eq!(unique.len(), listed.len(), "{listed:?}");
    for name in &listed {
        assert!(
            !name.is_empty()
                && name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "a name some provider refuses: {name:?}"
        );
    }
    assert!(listed.contains(&"a__b__c".to_owned()), "{listed:?}");
    // Each name calls the tool it stands for, by the server's own name for it.
    let mut reached = Vec::new();
    for name in listed.iter().filter(|name| *name != "read_artifact") {
        let answer = proxied.call(name, json!({})).await;
        let text = answer["content"][0]["text"].as_str().unwrap().to_owned();
        let called: String = serde_json::from_str(text.trim_start_matches("called as ")).unwrap();
        reached.push(called);
    }
    let long = |last: &str| format!("{}{last}{}", "y".repeat(64), "z".repeat(9_936));
    let mut expected = vec![
        "b__c".to_owned(),
        "a/b".to_owned(),
        "..".to_owned(),
        "nul\0byte".to_owned(),
        "new\nline".to_owned(),
        "x".repeat(10_000),
        long("1"),
        long("2"),
        "git_push".to_owned(),
        "echo".to_owned(),
        "c".to_owned(),
    ];
    expected.sort();
    reached.sort();
    assert_eq!(reached, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hidden_tool_is_not_listed_and_cannot_be_called() {
    let dir = tempfile::tempdir().unwrap();
    let (mut proxied, _) = configured(
        json!({ "git": hostile_entry("tricky", json!({
            "tools": { "allow": ["git_*", "echo", "b__?"], "deny": ["git_push"] },
        })) }),
        &[],
        dir.path(),
    )
    .await;
    let listed = names(&proxied.result("tools/list", json!({})).await);
    assert_eq!(listed, ["b__c", "echo", "read_artifact"]);
    // One server: a name it did not list would be its own to answer, unless it is hidden.
    let answer = proxied
        .request("tools/call", json!({ "name": "git_push", "arguments": {} }))
        .await;
    let said = answer.to_string();
    assert!(said.contains("Unknown tool: `git_push`"), "{said}");
    assert!(
        !said.contains("called as"),
        "the server was not asked: {said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_set_never_to_prefix_refuses_a_shared_name_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let (_proxied, init) = configured(
        json!({
            "one": hostile_entry("c", json!({ "prefix": "never" })),
            "two": hostile_entry("c", json!({})),
        }),
        &[],
        dir.path(),
    )
    .await;
    let said = init["error"]["message"].as_str().unwrap_or_default();
    assert!(
        said.contains("`c` of the server `one` is also the server `two`'s")
            && said.contains("\"prefix\": \"never\""),
        "{init}"
    );
    // A mode that is not one leaves its server out (the log names the modes); the other is
    // served.
    let (_proxied, init) = configured(
        json!({
            "one": hostile_entry("c", json!({ "prefix": "sometimes" })),
            "two": hostile_entry("c", json!({})),
        }),
        &[],
        dir.path(),
    )
    .await;
    assert!(
        init.get("result").is_some(),
        "the other server is served: {init}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_cannot_send_progress_for_another_servers_calls() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = interop().join("fixture-server.mjs");
    let (mut proxied, _) = configured(
        json!({
            "fixture": { "command": node(), "args": [fixture] },
            "hostile": hostile_entry("progress", json!({})),
        }),
        &[],
        dir.path(),
    )
    .await;
    let with_token = |name: &str, token: &str| json!({ "name": name, "arguments": {}, "_meta": { "progressToken": token } });
    proxied
        .result(
            "tools/call",
            with_token("test_tool_with_progress", "victim"),
        )
        .await;
    let answer = proxied
        .result("tools/call", with_token("spy", "spy-token"))
        .await;
    assert_eq!(answer["content"][0]["text"], "spied");
    let progress: Vec<(String, f64)> = proxied
        .notifications("notifications/progress")
        .iter()
        .map(|m| {
            (
                m["params"]["progressToken"].to_string(),
                m["params"]["progress"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        [
            ("\"victim\"".to_owned(), 0.0),
            ("\"victim\"".to_owned(), 50.0),
            ("\"victim\"".to_owned(), 100.0),
            ("\"spy-token\"".to_owned(), 1.0),
        ],
        "each call's own progress, and nothing else"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_with_a_schema_nested_too_deep_is_served_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (capabilities, answers) = full_client(dir.path());
    let (mut proxied, _) = Raw::start(
        Raw::proxied(&hostile("deep"), &[], dir.path()),
        capabilities,
        answers,
    )
    .await;
    let listed = proxied.result("tools/list", json!({})).await;
    let tools = listed["tools"].as_array().unwrap();
    let served: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(served, ["deep130", "deep10000", "fine", "read_artifact"]);
    for tool in &tools[..2] {
        let description = tool["description"].as_str().unwrap();
        assert!(
            description.contains("nests too deep to relay"),
            "{description}"
        );
        let schema = tool["inputSchema"].to_string();
        assert!(
            schema.contains("any value is accepted here"),
            "{}",
            &schema[..200]
        );
    }
    assert!(
        !tools[2]["description"]
            .as_str()
            .unwrap()
            .contains("too deep")
    );
    let answer = proxied.call("deep10000", json!({})).await;
    assert_eq!(answer["content"][0]["text"], "called as deep10000");
}

/// The typed tools of servers no one here wrote: the official memory server's `read_graph`,
/// `search_nodes` and `open_nodes` over 400 entities; the Python SDK's tools returning a list of
/// models, a `TypedDict`, a dataclass, a model with a nested list and optional fields, a
/// `dict[str, Model]`; a TypeScript SDK tool with a zod output schema.
fn typed_servers(dir: &Path) -> PathBuf {
    let python = interop().join(".venv/bin/python");
    assert!(
        python.exists(),
        "the Python SDK is not installed: run `bash interop/setup.sh`"
    );
    let memory = dir.join("memory.jsonl");
    let mut graph = String::new();
    for i in 0..400 {
        graph.push_str(
            &json!({ "type": "entity", "name": format!("entity {i}"), "entityType": "person",
                     "observations": [format!("observation {i} of the graph"), "works on the build"] })
            .to_string(),
        );
        graph.push('\n');
    }
    for i in 1..400 {
        graph.push_str(
            &json!({ "type": "relation", "from": format!("entity {}", i - 1),
                     "to": format!("entity {i}"), "relationType": "knows" })
            .to_string(),
        );
        graph.push('\n');
    }
    std::fs::write(&memory, graph).unwrap();
    let config = dir.join("servers.json");
    let script = |name: &str| interop().join(name).display().to_string();
    std::fs::write(
        &config,
        json!({ "mcpServers": {
            "memory": {
                "command": node(),
                "args": [script("node_modules/@modelcontextprotocol/server-memory/dist/index.js")],
                "env": { "MEMORY_FILE_PATH": memory },
            },
            "pytyped": { "command": python, "args": [script("typed_server.py")] },
            "tstyped": { "command": node(), "args": [script("typed-server.mjs")] },
        } })
        .to_string(),
    )
    .unwrap();
    config
}

/// The calls of the typed tools, each over any cap the tests use.
fn typed_calls() -> Vec<(&'static str, Value)> {
    let names: Vec<String> = (0..200).map(|i| format!("entity {}", i * 2)).collect();
    vec![
        ("read_graph", json!({})),
        ("search_nodes", json!({ "query": "entity" })),
        ("open_nodes", json!({ "names": names })),
        ("list_rows", json!({})),
        ("listing", json!({})),
        ("track", json!({})),
        ("report", json!({})),
        ("by_name", json!({})),
        ("list_issues", json!({})),
        ("hello", json!({ "name": "ada", "times": 3_000 })),
    ]
}

/// Checks what one SDK client got of [`typed_calls`] within `cap` chars (or, with `tokens`, the
/// tokens js-tiktoken counted within the cap): each within the cap, structure and text
/// together; each typed one a success whose structure the client checked against its schema
/// (a client that raised is reported), cut by the schema with its facts in `_meta`.
fn typed_caps_hold(sdk: &str, results: &[Value], cap: usize, tokens: Option<&[u64]>) {
    let calls = typed_calls();
    for (i, result) in results.iter().enumerate() {
        let tool = calls[i].0;
        assert!(
            result.get("raised").is_none(),
            "{sdk}, {tool}: {result:.400}"
        );
        assert_ne!(
            result.get("isError"),
            Some(&json!(true)),
            "{sdk}, {tool}: {result:.600}"
        );
        let structure = result
            .get("structuredContent")
            .map_or(0, |structure| structure.to_string().chars().count());
        match tokens {
            Some(tokens) => assert!(
                tokens[i] as usize <= cap,
                "{sdk}, {tool}: {} tokens",
                tokens[i]
            ),
            None => assert!(
                visible_chars(result) + structure <= cap,
                "{sdk}, {tool}: {} + {structure} chars",
                visible_chars(result)
            ),
        }
        // No empty block, whatever was cut.
        for block in result["content"].as_array().unwrap() {
            assert!(
                block["type"] != "text" || !block["text"].as_str().unwrap().is_empty(),
                "{sdk}, {tool}: an empty block in {result:.400}"
            );
        }
        if tool == "hello" {
            assert!(
                result.get("structuredContent").is_none(),
                "{sdk}: {result:.300}"
            );
            continue;
        }
        assert!(
            structure > 0,
            "{sdk}, {tool}: no structure in {result:.300}"
        );
        let facts = &result["_meta"]["toolsmith/cut"];
        assert!(
            facts["structure"]["cuts"].is_array(),
            "{sdk}, {tool}: {facts}"
        );
        // Where the listed schema admits it, the cut structure says so itself (a host may show
        // only the structure), naming the artifact that keeps it whole — and the client
        // checked it against that schema.
        if let Some(note) = result["structuredContent"].get("toolsmith/cut") {
            let note = note.as_str().unwrap();
            assert!(
                note.starts_with("[toolsmith: structured result cut"),
                "{sdk}, {tool}: {note}"
            );
            let artifact = facts["structure"]["artifact"]
                .as_str()
                .or_else(|| facts["artifacts"][0]["id"].as_str())
                .unwrap_or_else(|| panic!("{sdk}, {tool}: no artifact in {facts}"));
            assert!(note.contains(artifact), "{sdk}, {tool}: {note}");
        } else {
            assert!(
                !["read_graph", "list_issues"].contains(&tool),
                "{sdk}, {tool}: its object schema admits the note: {result:.400}"
            );
        }
    }
    // What a developer looks for is kept: the failing row, the first and the last.
    let rows = results[3]["structuredContent"]["result"]
        .as_array()
        .unwrap();
    assert_eq!(rows[0]["id"], 0, "{sdk}");
    assert_eq!(rows.last().unwrap()["id"], 1_999, "{sdk}");
    assert!(rows.iter().any(|row| row["status"] == "failed"), "{sdk}");
    let issues = results[8]["structuredContent"]["issues"]
        .as_array()
        .unwrap();
    assert!(
        issues.iter().any(|issue| issue["state"] == "failed"),
        "{sdk}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_results_hold_the_cap_through_proxy_and_serve_for_both_official_sdk_clients() {
    let dir = tempfile::tempdir().unwrap();
    let config = typed_servers(dir.path());
    let calls = typed_calls();
    for front in ["proxy", "serve"] {
        let mut gateway = gateway(front, TOKEN);
        match front {
            "proxy" => gateway.args(["--max-result-chars", "4000"]),
            _ => gateway.args(["--budget", "4000", "--root"]).arg(dir.path()),
        };
        gateway
            .arg("--artifacts")
            .arg(dir.path().join(format!("artifacts-{front}")))
            .arg("--config")
            .arg(&config);
        let (_gateway, url) = listening(gateway, true).await;
        let (tools, ts) = sdk_calls(&url, &calls).await;
        let hello = tools.iter().find(|tool| tool["name"] == "hello").unwrap();
        assert!(hello.get("outputSchema").is_none(), "{front}: {hello}");
        typed_caps_hold(&format!("TypeScript through {front}"), &ts, 4_000, None);
        let (_, py) = python_sdk_calls(&url, &calls).await;
        typed_caps_hold(&format!("Python through {front}"), &py, 4_000, None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_results_hold_a_cap_in_tokens_by_an_independent_count() {
    const CAP: usize = 1_000;
    let dir = tempfile::tempdir().unwrap();
    let config = typed_servers(dir.path());
    let calls = typed_calls();
    for front in ["proxy", "serve"] {
        let mut gateway = gateway(front, TOKEN);
        gateway.args([
            "--max-result-tokens",
            &CAP.to_string(),
            "--token-count",
            "o200k",
        ]);
        if front == "serve" {
            gateway.arg("--root").arg(dir.path());
        }
        gateway
            .arg("--artifacts")
            .arg(dir.path().join(format!("artifacts-{front}")))
            .arg("--config")
            .arg(&config);
        let (_gateway, url) = listening(gateway, true).await;
        let (results, tokens) = sdk_calls_counted(&url, &calls).await;
        typed_caps_hold(
            &format!("TypeScript through {front}"),
            &results,
            CAP,
            Some(&tokens),
        );
    }
}

/// What one official SDK client in `mode` got of `calls` against `target` (a URL, or `--stdio`
/// and a command line): the version it settled on, the tools, the results.
/// Every run of `runs` (each the arguments of one: mode, target, then tool and arguments in
/// turn) made by one process of `sdk`'s client script, two at a time: the SDK's start (its
/// import, for Python about a second of processor time) is paid once, not once a run. Their
/// reports, in order; a run that raised reports `raised`.
async fn era_runs(sdk: &str, runs: &[Vec<String>]) -> Vec<Value> {
    use tokio::io::AsyncWriteExt;
    let (program, script) = match sdk {
        "Python" => (interop().join(".venv/bin/python"), "modern_call.py"),
        _ => (node(), "modern-call.mjs"),
    };
    let mut child = Command::new(program)
        .arg(interop().join(script))
        .args(["--runs", "2"])
        .env("PROXY_TOKEN", TOKEN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(&serde_json::to_vec(runs).unwrap())
        .await
        .unwrap();
    drop(stdin);
    // As long as each run may take, one after another in twos.
    let output = tokio::time::timeout(
        PATIENCE * u32::try_from(runs.len().div_ceil(2)).unwrap(),
        child.wait_with_output(),
    )
    .await
    .unwrap_or_else(|_| panic!("{sdk}'s runs did not finish"))
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{sdk}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let reports: Vec<Value> = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(reports.len(), runs.len(), "{sdk}: {stdout:.400}");
    reports
}

/// Both official clients, in each of their modes — `legacy` (the handshake), `auto` (discover,
/// else the handshake), `2026-07-28` (no handshake) — against `serve` and `proxy`, over stdio
/// and HTTP, and the proxy in front of a server of 2026-07-28 only: each lists, calls (a result
/// over the cap, cut, its artifact named) and reads the artifact back as a resource; the
/// version each settled on is the one its mode asks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_official_clients_in_every_mode_on_every_front() {
    let dir = tempfile::tempdir().unwrap();
    let python = interop().join(".venv/bin/python").display().to_string();
    let server = interop().join("sdk_server.py").display().to_string();
    let toolsmith = env!("CARGO_BIN_EXE_toolsmith");
    std::fs::write(
        dir.path().join("big.txt"),
        "a line of the file\n".repeat(3_000),
    )
    .unwrap();
    let root = dir.path().display().to_string();
    let (_proxy, proxy_url) = {
        let mut proxy = gateway("proxy", TOKEN);
        proxy.arg("--").arg(&python).arg(&server);
        listening(proxy, true).await
    };
    let (_serve, serve_url) = {
        let mut serve = gateway("serve", TOKEN);
        serve.args(["--root", &root]);
        listening(serve, true).await
    };
    let proxy_stdio = format!("{toolsmith} proxy -- {python} {server}");
    let serve_stdio = format!("{toolsmith} serve --root {root}");
    // A server of 2026-07-28 only (the Python SDK's own modern serving loop): it refuses the
    // handshake, so the proxy speaks to it without one, whatever its client speaks.
    let modern_only = interop().join("modern_server.py").display().to_string();
    let (_modern, modern_url) = {
        let mut proxy = gateway("proxy", TOKEN);
        proxy.arg("--").arg(&python).arg(&modern_only);
        listening(proxy, true).await
    };
    let modern_stdio = format!("{toolsmith} proxy -- {python} {modern_only}");
    // The same tools as a user of the SDK's public API writes such a server: `MCPServer.run`
    // (the SDK's ordinary loop, which decides a connection's era by its first request, once),
    // a middleware refusing `initialize`. Only a client that discovers first reaches it.
    let (_public, public_url) = {
        let mut proxy = gateway("proxy", TOKEN);
        proxy
            .arg("--")
            .arg(&python)
            .args([&modern_only, "--public"]);
        listening(proxy, true).await
    };
    let public_stdio = format!("{toolsmith} proxy -- {python} {modern_only} --public");
    let public_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _public_http = Command::new(&python)
        .args([&modern_only, "--public", "--http", &public_port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // And one over HTTP (its every request served by the SDK's single-exchange modern entry),
    // reached by its URL.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _modern_http = Command::new(&python)
        .arg(&modern_only)
        .args(["--http", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            waited.elapsed() < PATIENCE,
            "the modern server never listened"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let waited = std::time::Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", public_port))
        .await
        .is_err()
    {
        assert!(
            waited.elapsed() < PATIENCE,
            "the public-API modern server never listened"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let public_config = dir.path().join("public.json");
    std::fs::write(
        &public_config,
        json!({ "mcpServers": { "modern": { "url": format!("http://127.0.0.1:{public_port}/mcp") } } })
            .to_string(),
    )
    .unwrap();
    let public_by_url = format!("{toolsmith} proxy --config {}", public_config.display());
    let config = dir.path().join("modern.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "modern": { "url": format!("http://127.0.0.1:{port}/mcp") } } })
            .to_string(),
    )
    .unwrap();
    let modern_by_url = format!("{toolsmith} proxy --config {}", config.display());
    // `serve --config` fronts both too (its MCP client: the handshake refused, then discover).
    let by_command = dir.path().join("modern-command.json");
    std::fs::write(
        &by_command,
        json!({ "mcpServers": { "modern": { "command": python, "args": [modern_only] } } })
            .to_string(),
    )
    .unwrap();
    let serve_modern = format!(
        "{toolsmith} serve --root {root} --config {}",
        by_command.display()
    );
    let serve_modern_url = format!(
        "{toolsmith} serve --root {root} --config {}",
        config.display()
    );
    let echoed = (
        "echo",
        json!({ "text": "a line of the echo\n".repeat(6_000) }),
    );
    let big = ("big", json!({ "lines": 3_000 }));
    let greet = ("hello", json!({ "name": "ada", "times": 3_000 }));
    let read_file = ("read_file", json!({ "path": "big.txt", "limit": 3_000 }));
    let page = (
        "@read",
        json!({ "uri": "toolsmith://artifact/{{artifact}}?offset=10&limit=3" }),
    );
    let fronts: [(&str, Vec<&str>, (&str, Value)); 12] = [
        (
            "proxy over stdio before the public API's 2026-07-28-only server",
            vec!["--stdio", &public_stdio],
            big.clone(),
        ),
        (
            "proxy over HTTP before the public API's 2026-07-28-only server",
            vec![&public_url],
            big.clone(),
        ),
        (
            "proxy over stdio before the public API's 2026-07-28-only server reached by its URL",
            vec!["--stdio", &public_by_url],
            big.clone(),
        ),
        (
            "serve over stdio before a 2026-07-28-only server",
            vec!["--stdio", &serve_modern],
            echoed.clone(),
        ),
        (
            "serve over stdio before a 2026-07-28-only server reached by its URL",
            vec!["--stdio", &serve_modern_url],
            echoed,
        ),
        (
            "proxy over stdio before a 2026-07-28-only server reached by its URL",
            vec!["--stdio", &modern_by_url],
            big.clone(),
        ),
        (
            "proxy over stdio before a 2026-07-28-only server",
            vec!["--stdio", &modern_stdio],
            big.clone(),
        ),
        (
            "proxy over HTTP before a 2026-07-28-only server",
            vec![&modern_url],
            big,
        ),
        (
            "proxy over stdio",
            vec!["--stdio", &proxy_stdio],
            greet.clone(),
        ),
        ("proxy over HTTP", vec![&proxy_url], greet),
        (
            "serve over stdio",
            vec!["--stdio", &serve_stdio],
            read_file.clone(),
        ),
        ("serve over HTTP", vec![&serve_url], read_file),
    ];
    // The 72 runs: each SDK's 36 made by one process of its client, two at a time (each run a
    // chain of processes started one after another — a client, toolsmith, a server — mostly
    // waiting on each other's start), both SDKs at once.
    let mut said = Vec::new();
    let mut runs = Vec::new();
    for (front, target, (tool, arguments)) in &fronts {
        for mode in ["legacy", "auto", "2026-07-28"] {
            said.push((mode, format!("in {mode} against {front}")));
            let mut run: Vec<String> = std::iter::once(mode)
                .chain(target.iter().copied())
                .map(str::to_string)
                .collect();
            for (tool, arguments) in [(*tool, arguments), (page.0, &page.1)] {
                run.extend([tool.to_string(), arguments.to_string()]);
            }
            runs.push(run);
        }
    }
    let (typescript, python) =
        tokio::join!(era_runs("TypeScript", &runs), era_runs("Python", &runs));
    let reports: Vec<_> = [("TypeScript", typescript), ("Python", python)]
        .into_iter()
        .flat_map(|(sdk, reports)| {
            said.iter()
                .zip(reports)
                .map(move |((mode, said), report)| (*mode, format!("{sdk} {said}"), report))
        })
        .collect();
    assert_eq!(reports.len(), fronts.len() * 6);
    for (mode, said, report) in reports {
        assert!(report.get("raised").is_none(), "{said}: {report:.400}");
        let want = if mode == "legacy" {
            "2025-11-25"
        } else {
            "2026-07-28"
        };
        assert_eq!(report["version"], want, "{said}");
        assert!(!report["tools"].as_array().unwrap().is_empty(), "{said}");
        let results = report["results"].as_array().unwrap();
        for result in results {
            assert!(result.get("raised").is_none(), "{said}: {result:.400}");
        }
        let text = results[0]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("[toolsmith: output"), "{said}: {text:.300}");
        assert!(text.contains("artifact "), "{said}: {text:.300}");
        let read = results[1]["contents"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(!read.is_empty(), "{said}: {:.300}", results[1]);
    }
}

/// Over HTTP, a 2026-07-28 request gets the statuses the version writes: a GET 405 with
/// `Allow: POST`, a notification 202, a missing `MCP-Protocol-Version` 400 (-32020), a version
/// not served 400 (-32022, naming those that are), an unknown method 404 (-32601), an `Mcp-Name`
/// that disagrees with the body 400 (-32020) — from `proxy` and `serve` alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_request_over_http_gets_the_statuses_the_version_writes() {
    let dir = tempfile::tempdir().unwrap();
    let python = interop().join(".venv/bin/python");
    let (_proxy, proxy_url) = {
        let mut proxy = gateway("proxy", TOKEN);
        proxy
            .arg("--")
            .arg(&python)
            .arg(interop().join("sdk_server.py"));
        listening(proxy, true).await
    };
    let (_serve, serve_url) = {
        let mut serve = gateway("serve", TOKEN);
        serve.arg("--root").arg(dir.path());
        listening(serve, true).await
    };
    let http = reqwest::Client::new();
    let envelope = |version: &str| {
        json!({ "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientCapabilities": {} })
    };
    for url in [&proxy_url, &serve_url] {
        let get = http
            .get(url.as_str())
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(get.status(), 405, "{url}");
        assert_eq!(get.headers()["allow"], "POST", "{url}");
        let post = |headers: Vec<(&'static str, String)>, body: Value| {
            let mut request = http
                .post(url.as_str())
                .bearer_auth(TOKEN)
                .header("Accept", "application/json, text/event-stream")
                .header("Content-Type", "application/json")
                .body(body.to_string());
            for (name, value) in headers {
                request = request.header(name, value);
            }
            async move {
                let response = request.send().await.unwrap();
                let status = response.status().as_u16();
                let body: Value = response.json().await.unwrap_or(Value::Null);
                (status, body)
            }
        };
        let modern = |method: &str| {
            vec![
                ("MCP-Protocol-Version", "2026-07-28".to_owned()),
                ("Mcp-Method", method.to_owned()),
            ]
        };
        let (status, _) = post(
            modern("notifications/cancelled"),
            json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": { "_meta": envelope("2026-07-28") } }),
        )
        .await;
        assert_eq!(status, 202, "{url}");
        let request = |method: &str, params: Value| json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params });
        let listing = request("tools/list", json!({ "_meta": envelope("2026-07-28") }));
        let (status, body) = post(vec![("Mcp-Method", "tools/list".into())], listing.clone()).await;
        assert_eq!(
            (status, body["error"]["code"].as_i64()),
            (400, Some(-32_020)),
            "{url}: {body}"
        );
        let (status, body) = post(modern("tools/list"), listing).await;
        assert_eq!(status, 200, "{url}: {body}");
        assert_eq!(body["id"], 7, "{url}");
        assert_eq!(body["result"]["resultType"], "complete", "{url}: {body}");
        let mut later = modern("tools/list");
        later[0].1 = "2030-01-01".into();
        let (status, body) = post(
            later,
            request("tools/list", json!({ "_meta": envelope("2030-01-01") })),
        )
        .await;
        assert_eq!(
            (status, body["error"]["code"].as_i64()),
            (400, Some(-32_022)),
            "{url}: {body}"
        );
        assert!(
            body["error"]["data"]["supported"]
                .to_string()
                .contains("2026-07-28"),
            "{body}"
        );
        let (status, body) = post(
            modern("no/such"),
            request("no/such", json!({ "_meta": envelope("2026-07-28") })),
        )
        .await;
        assert_eq!(
            (status, body["error"]["code"].as_i64()),
            (404, Some(-32_601)),
            "{url}: {body}"
        );
        let mut named = modern("tools/call");
        named.push(("Mcp-Name", "other".into()));
        let (status, body) = post(
            named,
            request(
                "tools/call",
                json!({ "name": "hello", "_meta": envelope("2026-07-28") }),
            ),
        )
        .await;
        assert_eq!(
            (status, body["error"]["code"].as_i64()),
            (400, Some(-32_020)),
            "{url}: {body}"
        );
    }
}

/// `serve --approve ask` asks a 2026-07-28 client without a request to it: the call answers the
/// question (`InputRequiredResult`), its `requestState` sealed — authenticated, bound to the
/// principal and the call, expiring, redeemed once. Both official clients' retries carrying an
/// answer run the call or decline it; a state another principal echoes, one altered, one for
/// other arguments, and one echoed twice are each refused, and nothing runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_of_a_modern_client_cannot_be_forged_or_replayed() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let tokens = dir.path().join("tokens.json");
    let (alice, bob) = ("alice-token-0000000001", "bob-token-000000000002");
    std::fs::write(&tokens, json!({ alice: "alice", bob: "bob" }).to_string()).unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    serve
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--approve",
            "ask",
            "--tokens",
        ])
        .arg(&tokens)
        .arg("--root")
        .arg(&root);
    let (_serve, url) = listening(serve, true).await;
    let http = reqwest::Client::new();
    let envelope = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { "elicitation": { "form": {} } },
    });
    let call = |token: &'static str, path: &str, extra: Value| {
        let mut params = json!({ "name": "write_file", "_meta": envelope.clone(),
                                 "arguments": { "path": path, "content": "hello" } });
        for (key, value) in extra.as_object().unwrap() {
            params[key] = value.clone();
        }
        let request = http
            .post(url.as_str())
            .bearer_auth(token)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "write_file")
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params }));
        async move { request.send().await.unwrap().json::<Value>().await.unwrap()["result"].clone() }
    };
    let accepted = json!({ "approve": { "action": "accept", "content": { "approve": true } } });
    let asked = call(alice, "a.txt", json!({})).await;
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    assert_eq!(
        asked["inputRequests"]["approve"]["method"], "elicitation/create",
        "{asked}"
    );
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let retry = |state: &str| json!({ "requestState": state, "inputResponses": accepted });
    let refused = |result: &Value, why: &str| {
        assert_eq!(result["isError"], true, "{result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(why), "{why}: {text}");
    };
    // Another principal, an altered state, other arguments: not verified, nothing written.
    refused(
        &call(bob, "a.txt", retry(&state)).await,
        "could not be verified",
    );
    let mut altered = state.clone().into_bytes();
    let last = altered.len() - 2;
    altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    refused(
        &call(alice, "a.txt", retry(&altered)).await,
        "could not be verified",
    );
    refused(
        &call(alice, "b.txt", retry(&state)).await,
        "could not be verified",
    );
    assert!(!root.join("a.txt").exists() && !root.join("b.txt").exists());
    // Alice's own answer runs her call, once.
    let done = call(alice, "a.txt", retry(&state)).await;
    assert_ne!(done["isError"], true, "{done}");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "hello"
    );
    refused(&call(alice, "a.txt", retry(&state)).await, "used already");
    // A declined question runs nothing.
    let asked = call(alice, "c.txt", json!({})).await;
    let declined = json!({ "requestState": asked["requestState"],
                           "inputResponses": { "approve": { "action": "decline" } } });
    refused(&call(alice, "c.txt", declined).await, "declined");
    assert!(!root.join("c.txt").exists());

    // Both official clients, answering through their own elicitation handling, in each era.
    for sdk in ["Python", "TypeScript"] {
        for mode in ["legacy", "2026-07-28"] {
            for (answer, written) in [("accept", true), ("decline", false)] {
                let file = format!("{sdk}-{mode}-{answer}.txt");
                let report = approving_client(sdk, mode, &url, alice, answer, &file).await;
                let said = format!("{sdk} in {mode}, {answer}");
                assert!(report.get("raised").is_none(), "{said}: {report}");
                assert_eq!(root.join(&file).exists(), written, "{said}: {report}");
            }
        }
    }
}

/// One official client in `mode` calling `write_file` of `file` at `url` as the holder of
/// `token`, answering the approval's question with `answer` (`accept` or `decline`).
async fn approving_client(
    sdk: &str,
    mode: &str,
    url: &str,
    token: &str,
    answer: &str,
    file: &str,
) -> Value {
    let (program, script) = match sdk {
        "Python" => (interop().join(".venv/bin/python"), "approve_call.py"),
        _ => (node(), "approve-call.mjs"),
    };
    let mut command = Command::new(program);
    command
        .arg(interop().join(script))
        .args([mode, url, answer, file])
        .env("PROXY_TOKEN", token);
    report_of(command).await
}

/// A 2026-07-28 client gets a server's log messages only for a request that opted in
/// (`io.modelcontextprotocol/logLevel`), at or above its level, through the proxy (the
/// server's messages relayed). (`serve` follows the same rule for its tools' own messages.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_messages_reach_a_modern_client_only_where_a_request_opted_in() {
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    proxy.arg("proxy").arg("--").args(fixture());
    proxy
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let mut child = proxy.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut logs_of = async |id: u64, level: Option<&str>| -> usize {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        if let Some(level) = level {
            meta["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "test_tool_with_logging", "arguments": {}, "_meta": meta } });
        stdin
            .write_all(format!("{request}\n").as_bytes())
            .await
            .unwrap();
        let mut logs = 0;
        loop {
            let line = tokio::time::timeout(PATIENCE, lines.next_line())
                .await
                .expect("the proxy answers in time")
                .unwrap()
                .expect("the proxy is still there");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["method"] == "notifications/message" {
                logs += 1;
            } else if message["id"] == id {
                assert_eq!(message["result"]["resultType"], "complete", "{message}");
                return logs;
            }
        }
    };
    assert_eq!(logs_of(1, None).await, 0, "no opt-in, no log message");
    assert_eq!(logs_of(2, Some("error")).await, 0, "info is below error");
    assert_eq!(logs_of(3, Some("info")).await, 3, "opted in at info");
}

/// With tool search, a 2026-07-28 client's `tools/list` is the same whatever it searched (a list
/// must not vary per connection): search_tools, call_tool and read_artifact; what a search finds
/// it calls with call_tool, and no `list_changed` is sent. A client of the handshake era still
/// gets the tools it found listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_clients_tool_list_does_not_vary_with_its_searches() {
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    proxy.args(["proxy", "--tool-search", "--"]).args(fixture());
    proxy
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let mut child = proxy.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut notified = Vec::new();
    let mut ask = async |id: u64, method: &str, mut params: Value| -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        stdin
            .write_all(format!("{request}\n").as_bytes())
            .await
            .unwrap();
        loop {
            let line = tokio::time::timeout(PATIENCE, lines.next_line())
                .await
                .expect("the proxy answers in time")
                .unwrap()
                .expect("the proxy is still there");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message["result"].clone();
            }
            notified.push(message["method"].clone());
        }
    };
    let names = |listed: &Value| -> Vec<String> {
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let before = names(&ask(1, "tools/list", json!({})).await);
    assert_eq!(before, ["search_tools", "call_tool", "read_artifact"]);
    let found = ask(
        2,
        "tools/call",
        json!({ "name": "search_tools", "arguments": { "query": "a simple text" } }),
    )
    .await;
    let text = found["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("test_simple_text") && text.contains("call them with call_tool"),
        "{text}"
    );
    assert_eq!(names(&ask(3, "tools/list", json!({})).await), before);
    let called = ask(
        4,
        "tools/call",
        json!({ "name": "call_tool",
        "arguments": { "name": "test_simple_text", "arguments": {} } }),
    )
    .await;
    assert_ne!(called["isError"], true, "{called}");
    assert!(
        called["content"][0]["text"]
            .as_str()
            .is_some_and(|text| !text.is_empty()),
        "{called}"
    );
    assert!(
        !notified
            .iter()
            .any(|method| method == "notifications/tools/list_changed"),
        "{notified:?}"
    );
}

/// A server of the handshake era asks its client while it works on a call (elicitation,
/// sampling); through the proxy a 2026-07-28 client, which has no requests from its server,
/// gets the question as an `InputRequiredResult` whose sealed state parks the call, and its
/// retry's answer goes to the server, which finishes the call. Both official clients, in each
/// era; a forged or replayed state resumes nothing; a question the client cannot answer gets
/// the server an error, and the server's own result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_servers_questions_reach_a_modern_client_in_its_calls_answer() {
    let mut proxy = gateway("proxy", TOKEN);
    proxy.arg("--").args(fixture());
    let (_proxy, url) = listening(proxy, true).await;
    let calls = [
        (
            "test_elicitation",
            json!({ "message": "who are you?" }),
            "elicitation/create",
            "\"username\":\"ada\"",
        ),
        (
            "test_sampling",
            json!({ "prompt": "hello" }),
            "sampling/createMessage",
            "LLM response: sampled",
        ),
    ];
    answered_in_every_era(&url, &calls).await;

    // The state as a raw client sees it: bound to the call, once.
    let http = reqwest::Client::new();
    let call = |capabilities: Value, message: &str, extra: Value| {
        let mut params = json!({
            "name": "test_elicitation",
            "arguments": { "message": message },
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": capabilities,
            },
        });
        for (key, value) in extra.as_object().unwrap() {
            params[key] = value.clone();
        }
        let request = http
            .post(url.as_str())
            .bearer_auth(TOKEN)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "test_elicitation")
            .json(&json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params }));
        async move { request.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let can_elicit = json!({ "elicitation": { "form": {} } });
    let asked = call(can_elicit.clone(), "who?", json!({})).await["result"].clone();
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let question = &asked["inputRequests"]["server_request"];
    assert_eq!(question["method"], "elicitation/create", "{asked}");
    assert_eq!(question["params"]["message"], "who?", "{asked}");
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let answers = json!({ "server_request": { "action": "accept",
        "content": { "username": "bob", "email": "bob@example.org" } } });
    let retry = |state: &str| json!({ "requestState": state, "inputResponses": answers });
    // A state that resumes nothing is the request's fault: -32602, saying why.
    let refused = |answer: &Value, why: &str| {
        assert!(answer.get("result").is_none(), "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        let text = answer["error"]["message"].as_str().unwrap();
        assert!(text.contains(why), "{why}: {text}");
    };
    // Other arguments: not this call's state; the call stays parked for its own retry.
    refused(
        &call(can_elicit.clone(), "someone else?", retry(&state)).await,
        "could not be verified",
    );
    let done = call(can_elicit.clone(), "who?", retry(&state)).await["result"].clone();
    assert_eq!(done["resultType"], "complete", "{done}");
    let text = done["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("action=accept") && text.contains("bob"),
        "{done}"
    );
    // Replayed: the call it named is over.
    refused(
        &call(can_elicit, "who?", retry(&state)).await,
        "no `test_elicitation` call waits",
    );
    // A client that declared no elicitation is not asked: the server is told why (the
    // capability it needs, as 2026-07-28 names it), and its answer — here, that error, passed on
    // as it said it — is the client's.
    let unasked = call(json!({}), "who?", json!({})).await;
    assert!(unasked.get("result").is_none(), "{unasked}");
    assert!(
        unasked["error"]["data"]["requiredCapabilities"]
            .get("elicitation")
            .is_some(),
        "{unasked}"
    );
}

/// Both official clients, in each era, calling `calls` (tool, arguments, the method the server
/// asks, what the result says once answered) at `url`, answering what they are asked.
async fn answered_in_every_era(url: &str, calls: &[(&str, Value, &str, &str)]) {
    for sdk in ["Python", "TypeScript"] {
        for mode in ["legacy", "2026-07-28"] {
            for (tool, arguments, method, answered) in calls {
                let (program, script) = match sdk {
                    "Python" => (interop().join(".venv/bin/python"), "cross_call.py"),
                    _ => (node(), "cross-call.mjs"),
                };
                let mut command = Command::new(program);
                command
                    .arg(interop().join(script))
                    .args([mode, url, tool, &arguments.to_string()])
                    .env("PROXY_TOKEN", TOKEN);
                let report = report_of(command).await;
                let said = format!("{sdk} in {mode}, {tool}");
                assert_eq!(report["asked"], json!([method]), "{said}: {report}");
                let result = &report["result"];
                assert_ne!(result["isError"], true, "{said}: {report}");
                let text = result["content"][0]["text"].as_str().unwrap_or_default();
                assert!(text.contains(answered), "{said}: {report}");
            }
        }
    }
}

/// A server of 2026-07-28 asks in its call's answer (`InputRequiredResult`, here the Python
/// SDK's own multi-round flow); through the proxy a client of the handshake era is asked by
/// request and the call is made again with its answer, and a 2026-07-28 client gets the
/// question as it came and retries with the server's own state. Both official clients.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_servers_questions_reach_a_legacy_client_as_requests() {
    let mut proxy = gateway("proxy", TOKEN);
    proxy
        .arg("--")
        .arg(interop().join(".venv/bin/python"))
        .arg(interop().join("modern_server.py"));
    let (_proxy, url) = listening(proxy, true).await;
    let calls = [("greet", json!({}), "elicitation/create", "hello, ada")];
    answered_in_every_era(&url, &calls).await;
}

/// A 2026-07-28 client gets a server's change notifications only on a `subscriptions/listen`
/// of its own: acknowledged first, each frame tagged with the listen's id, only the kinds it
/// asked for, and none once it is cancelled. Over stdio raw, and over HTTP with the Python SDK's
/// own `Client.listen` (a tool list change and a subscribed resource's update, in front of a
/// server of the handshake era).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_client_hears_of_changes_only_on_its_listen() {
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    proxy.arg("proxy").arg("--").args(fixture());
    proxy
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let mut child = proxy.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let envelope = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut send = async |message: Value| {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    let mut read_until = async |done: &dyn Fn(&Value) -> bool| -> Vec<Value> {
        let mut read = Vec::new();
        loop {
            let line = tokio::time::timeout(PATIENCE, lines.next_line())
                .await
                .expect("the proxy answers in time")
                .unwrap()
                .expect("the proxy is still there");
            let message: Value = serde_json::from_str(&line).unwrap();
            let finished = done(&message);
            read.push(message);
            if finished {
                return read;
            }
        }
    };
    let change = |id: u64| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "test_change", "arguments": {}, "_meta": envelope } })
    };
    let changes = |read: &[Value]| -> Vec<Value> {
        read.iter()
            .filter(|message| {
                message["method"].as_str().is_some_and(|method| {
                    method.ends_with("list_changed") || method.ends_with("updated")
                })
            })
            .cloned()
            .collect()
    };
    // No listen: the change is not announced.
    send(change(1)).await;
    let read = read_until(&|message| message["id"] == 1).await;
    assert_eq!(changes(&read), Vec::<Value>::new(), "{read:?}");

    // A listen for tool list changes: acknowledged first, with what it will get.
    send(
        json!({ "jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
                 "params": { "notifications": { "toolsListChanged": true }, "_meta": envelope } }),
    )
    .await;
    let read =
        read_until(&|message| message["method"] == "notifications/subscriptions/acknowledged")
            .await;
    let ack = read.last().unwrap();
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "toolsListChanged": true }),
        "{ack}"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );
    send(change(2)).await;
    let read = read_until(&|message| message["id"] == 2).await;
    let heard = changes(&read);
    assert_eq!(
        heard.len(),
        1,
        "the tool list change, no resource update: {read:?}"
    );
    assert_eq!(heard[0]["method"], "notifications/tools/list_changed");
    assert_eq!(
        heard[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );

    // Cancelled: nothing more.
    send(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": { "requestId": "listen-1" } }),
    )
    .await;
    send(change(3)).await;
    let read = read_until(&|message| message["id"] == 3).await;
    assert_eq!(changes(&read), Vec::<Value>::new(), "{read:?}");

    // Over HTTP, with the SDK's own listening client.
    let mut gateway = gateway("proxy", TOKEN);
    gateway.arg("--").args(fixture());
    let (_gateway, url) = listening(gateway, true).await;
    let mut script = Command::new(interop().join(".venv/bin/python"));
    script
        .arg(interop().join("listen_call.py"))
        .args([url.as_str(), "test://watched-resource", "test_change"])
        .env("PROXY_TOKEN", TOKEN);
    let report = report_of(script).await;
    assert_eq!(
        report["honored"],
        json!({ "toolsListChanged": true, "resourceSubscriptions": ["test://watched-resource"] }),
        "{report}"
    );
    assert_eq!(
        report["events"],
        json!([{ "kind": "ToolsListChanged" },
               { "kind": "ResourceUpdated", "uri": "test://watched-resource" }]),
        "{report}"
    );
}

/// server-filesystem's `directory_tree` of a deep tree is pretty JSON; through
/// `proxy --max-result-chars 8000` it fits once written compactly: the same value, nothing
/// stored, and `_meta["toolsmith/cut"]` says it was compacted. Under a cap the compact form is
/// over, it is cut as JSON and the text names the artifact that keeps it whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_result_that_fits_once_compacted_says_so_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("tree");
    // Fourteen levels, each with two files beside the next level.
    let mut level = files.clone();
    for depth in 0..14 {
        level = level.join(format!("level-{depth:02}"));
        std::fs::create_dir_all(&level).unwrap();
        for file in ["notes.md", "data.json"] {
            std::fs::write(level.join(file), "x").unwrap();
        }
    }
    let tree =
        json!({ "name": "directory_tree", "arguments": { "path": files.display().to_string() } });
    let answers = || -> Answers { Box::new(|_, _| json!({})) };
    let (mut direct, _) = Raw::start(filesystem(&[&files]), json!({}), answers()).await;
    let whole = direct.result("tools/call", tree.clone()).await;
    let pretty = whole["content"][0]["text"].as_str().unwrap().to_owned();
    let value: Value = serde_json::from_str(&pretty).unwrap();
    let compact = value.to_string();
    assert!(
        pretty.chars().count() > 8_000 && compact.chars().count() < 8_000,
        "the tree is {} chars pretty and {} compact",
        pretty.chars().count(),
        compact.chars().count()
    );
    for (cap, compacts) in [("8000", true), ("1500", false)] {
        let artifacts = dir.path().join(format!("artifacts-{cap}"));
        let proxy = vec![
            env!("CARGO_BIN_EXE_toolsmith").to_owned(),
            "proxy".to_owned(),
            "--max-result-chars".to_owned(),
            cap.to_owned(),
            "--artifacts".to_owned(),
            artifacts.display().to_string(),
            "--".to_owned(),
        ]
        .into_iter()
        .chain(filesystem(&[&files]))
        .collect();
        let (mut proxied, _) = Raw::start(proxy, json!({}), answers()).await;
        let result = proxied.result("tools/call", tree.clone()).await;
        let text = result["content"][0]["text"].as_str().unwrap();
        let facts = &result["_meta"]["toolsmith/cut"];
        // The store's own marker file aside.
        let stored = std::fs::read_dir(&artifacts)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
            .count();
        if compacts {
            assert_eq!(text, compact, "the same value, written compactly");
            assert_eq!(facts["cuts"][0]["compacted"], true, "{facts}");
            assert_eq!(facts["artifacts"], json!([]), "{facts}");
            assert!(facts["cuts"][0].get("artifact").is_none(), "{facts}");
            assert_eq!(stored, 0, "nothing was lost, so nothing is stored");
        } else {
            assert!(text.chars().count() <= 1_500, "{}", text.len());
            let cut: Value = serde_json::from_str(text).expect("cut as JSON");
            assert!(cut.is_object() || cut.is_array());
            let id = facts["artifacts"][0]["id"].as_str().expect("an artifact");
            assert!(
                text.contains(id),
                "the text names the artifact: {text:.400}"
            );
            assert!(facts["cuts"][0].get("compacted").is_none(), "{facts}");
            assert!(stored > 0);
        }
    }
}
