//! The `toolsmith` binary end to end: every command, good input and bad.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn toolsmith(args: &[&str], root: &Path, stdin: Option<&str>) -> Run {
    let artifacts = root.join(".artifacts");
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    command.args(args);
    if !matches!(args.first(), Some(&"repair" | &"compact")) && !args.contains(&"--root") {
        command
            .arg("--root")
            .arg(root)
            .arg("--artifacts")
            .arg(&artifacts);
    }
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the binary starts");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap().into()
}

impl From<Output> for Run {
    fn from(output: Output) -> Self {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }
}

/// Line `i` of the big log: every line differs from the next in more than a count.
fn log_line(i: usize) -> String {
    format!(
        "line {i} of the log: request {} took {}ms\n",
        i * 7_919 % 10_007,
        i * 37 % 113
    )
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (1..=3_000).map(log_line).collect();
    std::fs::write(dir.path().join("big.log"), lines).unwrap();
    std::fs::write(dir.path().join("notes.md"), "# Notes\nalpha\nbeta\n").unwrap();
    dir
}

#[test]
fn schema_prints_every_dialect() {
    let dir = workspace();
    for format in ["anthropic", "openai", "mcp", "gemini"] {
        let run = toolsmith(&["schema", "--format", format], dir.path(), None);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let tools: Vec<Value> = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(tools.len(), 8, "seven standard tools and read_artifact");
    }
    let openai: Value = serde_json::from_str(
        &toolsmith(&["schema", "--format", "openai"], dir.path(), None).stdout,
    )
    .unwrap();
    assert_eq!(openai[0]["function"]["strict"], true);
    let bad = toolsmith(&["schema", "--format", "cobol"], dir.path(), None);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("invalid value 'cobol'"),
        "{}",
        bad.stderr
    );
}

#[test]
fn call_prints_what_the_model_sees() {
    let dir = workspace();
    let run = toolsmith(
        &["call", "read_file", r#"{"path": "notes.md"}"#],
        dir.path(),
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "     1\t# Notes\n     2\talpha\n     3\tbeta\n");
}

#[test]
fn call_json_reports_the_figures_of_a_trimmed_result() {
    let dir = workspace();
    let run = toolsmith(
        &[
            "call",
            "run_command",
            r#"{"command": "cat big.log"}"#,
            "--budget",
            "2000",
            "--json",
        ],
        dir.path(),
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let result: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(result["allowance"], 2000);
    assert_eq!(result["confinement"], "full", "{result}");
    assert!(result["content"].as_str().unwrap().chars().count() <= 2000);
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("full output: artifact ")
    );
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{}[exit code: 0]\n", log_line(3_000)))
    );
    // The figures are the whole output's: the log and the status.
    let log = std::fs::read_to_string(dir.path().join("big.log")).unwrap();
    let whole = log.chars().count() + "[exit code: 0]\n".chars().count();
    assert_eq!(result["original_chars"], whole, "{result}");
    assert_eq!(result["trimmed"], true);

    let grep = toolsmith(
        &[
            "call",
            "grep",
            r#"{"pattern": "of the log", "max_results": 5000}"#,
            "--budget",
            "3000",
            "--json",
        ],
        dir.path(),
        None,
    );
    let result: Value = serde_json::from_str(&grep.stdout).unwrap();
    assert_eq!(result["trimmed"], true);
    assert_eq!(result["original_lines"], 3000);
    assert_eq!(result["kept"]["head_lines"][0], 1);
    let id = result["artifact"].as_str().expect("an artifact id");
    // The artifact outlives the process: a later call reads it.
    let page = toolsmith(
        &[
            "call",
            "read_artifact",
            &format!(r#"{{"id": "{id}", "offset": 2998}}"#),
        ],
        dir.path(),
        None,
    );
    assert_eq!(page.code, 0, "{}", page.stderr);
    assert!(
        page.stdout
            .contains("lines 2,999-3,000 of 3,000; end of artifact"),
        "{}",
        page.stdout
    );
}

#[test]
fn bad_input_is_a_readable_error_and_a_nonzero_exit() {
    let dir = workspace();
    let bad_json = toolsmith(&["call", "read_file", "{path"], dir.path(), None);
    assert_eq!(bad_json.code, 1);
    assert!(
        bad_json.stderr.contains("the arguments are not valid JSON"),
        "{}",
        bad_json.stderr
    );
    let unknown = toolsmith(&["call", "reed_file", "{}"], dir.path(), None);
    assert_eq!(unknown.code, 1);
    assert!(
        unknown
            .stderr
            .contains("unknown tool `reed_file`; the tools are read_file")
    );
    let missing = toolsmith(
        &["call", "read_file", r#"{"path": "nope.txt"}"#],
        dir.path(),
        None,
    );
    assert_eq!(missing.code, 1, "an error result exits non-zero");
    assert_eq!(missing.stdout, "Error: `nope.txt` was not found.\n");
    let no_file = toolsmith(&["batch", "does-not-exist.json"], dir.path(), None);
    assert_eq!(no_file.code, 1);
    assert!(
        no_file.stderr.contains("does-not-exist.json: No such file"),
        "{}",
        no_file.stderr
    );
    let root = toolsmith(
        &["call", "read_file", "{}", "--root", "/no/such/dir"],
        dir.path(),
        None,
    );
    assert_eq!(root.code, 1);
    assert!(
        root.stderr.contains("--root /no/such/dir: not a directory"),
        "{}",
        root.stderr
    );
}

#[test]
fn batch_answers_an_assistant_message_with_tool_results() {
    let dir = workspace();
    let message = json!({ "role": "assistant", "content": [
        { "type": "text", "text": "Reading both." },
        { "type": "tool_use", "id": "toolu_1", "name": "read_file", "input": { "path": "notes.md" } },
        { "type": "tool_use", "id": "toolu_2", "name": "read_file", "input": { "path": "big.log" } },
        { "type": "tool_use", "id": "toolu_3", "name": "nope", "input": {} }
    ]});
    let run = toolsmith(
        &["batch", "-", "--budget", "30000", "--split", "even"],
        dir.path(),
        Some(&message.to_string()),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let blocks: Vec<Value> = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[0]["tool_use_id"], "toolu_1");
    assert_eq!(blocks[0]["type"], "tool_result");
    assert!(
        blocks[1]["content"]
            .as_str()
            .unwrap()
            .contains("exceeds maximum allowed tokens")
    );
    assert_eq!(blocks[2]["is_error"], true);
    assert!(
        run.stderr.contains("allowance") && run.stderr.contains("toolu_2"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("10000"),
        "an even split of 30,000: {}",
        run.stderr
    );
}

#[test]
fn repair_and_compact_rewrite_a_history() {
    let dir = workspace();
    let history = json!({ "system": "Be brief.", "messages": [
        { "role": "user", "content": "hi" },
        { "role": "assistant", "content": [ { "type": "tool_use", "id": "t1", "name": "grep", "input": {} } ] },
        { "role": "user", "content": "anything?" }
    ]});
    let run = toolsmith(&["repair", "-"], dir.path(), Some(&history.to_string()));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let repaired: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(repaired["system"], "Be brief.");
    assert_eq!(repaired["messages"][2]["content"][0]["tool_use_id"], "t1");
    assert_eq!(repaired["messages"][2]["content"][0]["is_error"], true);
    assert!(
        run.stderr.contains("synthetic results for: t1"),
        "{}",
        run.stderr
    );

    let mut messages = vec![json!({ "role": "user", "content": "go" })];
    messages.push(json!({ "role": "assistant", "content": [ { "type": "tool_use", "id": "r", "name": "read_file", "input": {} } ] }));
    messages.push(json!({ "role": "user", "content": [ { "type": "tool_result", "tool_use_id": "r", "content": "x".repeat(9_000) } ] }));
    for _ in 0..4 {
        messages.push(json!({ "role": "assistant", "content": "next" }));
        messages.push(json!({ "role": "user", "content": "ok" }));
    }
    let path = dir.path().join("history.json");
    std::fs::write(&path, Value::Array(messages).to_string()).unwrap();
    let run = toolsmith(&["compact", path.to_str().unwrap()], dir.path(), None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let compacted: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        compacted[2]["content"][0]["content"],
        "[Old tool result cleared — 1 lines, 9K chars, text]"
    );
    assert!(run.stderr.contains("1 summarized"), "{}", run.stderr);
    // `--preserve` names more tools to keep whole ...
    let path = path.to_str().unwrap();
    let run = toolsmith(
        &["compact", "--preserve", "read_file", path],
        dir.path(),
        None,
    );
    assert!(run.stderr.contains("0 summarized"), "{}", run.stderr);
    // ... beside those the standard tools mark `preserve`, which need no naming.
    let history = std::fs::read_to_string(path)
        .unwrap()
        .replace("\"read_file\"", "\"run_command\"");
    let run = toolsmith(&["compact", "-"], dir.path(), Some(&history));
    assert!(run.stderr.contains("0 summarized"), "{}", run.stderr);
    let broken = toolsmith(&["repair", "-"], dir.path(), Some("{\"nope\": 1}"));
    assert_eq!(broken.code, 1);
    assert!(
        broken
            .stderr
            .contains("expected an array of messages or an object with `messages`")
    );
}

#[test]
fn demo_shows_the_budget_at_work() {
    let dir = workspace();
    let code: String = (0..1_500)
        .map(|i| format!("pub fn step_{i}() -> u32 {{ {i} }}\n"))
        .collect();
    std::fs::write(dir.path().join("steps.rs"), code).unwrap();
    let run = toolsmith(&["demo"], dir.path(), None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("toolsmith demo: 6 calls of the standard tools in one batch"),
        "{}",
        run.stdout
    );
    // Each call's arguments are shown, so the escape attempt reads as one.
    assert!(
        run.stdout.contains(
            "  toolu_06 read_file {\"path\":\"../../etc/passwd\"}\n      an escape attempt"
        ),
        "{}",
        run.stdout
    );
    // The columns say their unit.
    assert!(
        run.stdout
            .contains("call      tool                chars     chars     chars   lines"),
        "{}",
        run.stdout
    );
    // An error is shown whole (wrapped): its last words are there, not cut mid-sentence.
    let words = run.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("or use grep to search it.") && words.contains("use a path inside it"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("exceeds maximum allowed tokens"),
        "the big log is refused"
    );
    assert!(
        run.stdout.contains("[toolsmith: output "),
        "something is cut or folded"
    );
    // The test run keeps its failure from the middle, folds the passing lines (they count up
    // by one: the fold is lossless), drops colours.
    for shown in [
        "  test suite::totals ... FAILED\n",
        "   right: 4\n",
        "  [lines 2-1,500: 2 to 1500, one a line]\n",
        "escape sequences and 0 redraws removed",
    ] {
        assert!(run.stdout.contains(shown), "{shown}:\n{}", run.stdout);
    }
    assert!(!run.stdout.contains("\x1b[32m"), "{}", run.stdout);
    assert!(run.stdout.contains("is outside the workspace root"));
}

/// Runs the binary with `args` only, with `HOME` and the cache directory inside `home`.
fn toolsmith_at_home(args: &[&str], home: &Path) -> Run {
    Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(args)
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .into()
}

#[test]
fn artifacts_pointed_at_a_project_refuse_and_delete_nothing() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir(&proj).unwrap();
    std::fs::set_permissions(&proj, std::fs::Permissions::from_mode(0o700)).unwrap();
    let requirements = proj.join("requirements.txt");
    std::fs::write(&requirements, "flask\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&requirements)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(30 * 86_400))
        .unwrap();
    let proj_arg = proj.to_str().unwrap();
    let run = toolsmith_at_home(
        &[
            "call",
            "run_command",
            r#"{"command":"seq 1 5000"}"#,
            "--root",
            proj_arg,
            "--artifacts",
            proj_arg,
            "--budget",
            "2000",
        ],
        dir.path(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("requirements.txt"), "{}", run.stderr);
    assert!(run.stderr.contains("--artifacts"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&requirements).unwrap(), "flask\n");
}

#[test]
fn the_default_artifact_directory_is_private_and_out_of_the_file_tools_reach() {
    use std::os::unix::fs::PermissionsExt as _;
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("work");
    std::fs::create_dir(&root).unwrap();
    let root_arg = root.to_str().unwrap();
    let run = toolsmith_at_home(
        &[
            "call",
            "run_command",
            r#"{"command":"seq 1 5000"}"#,
            "--root",
            root_arg,
            "--budget",
            "2000",
            "--json",
        ],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let result: Value = serde_json::from_str(&run.stdout).unwrap();
    let id = match result["content"]
        .as_str()
        .and_then(toolsmith::trim::find_marker)
        .map(|marker| marker.full)
    {
        Some(toolsmith::trim::MarkedFull::Stored { id, .. }) => id,
        _ => panic!("no artifact named: {}", run.stdout),
    };
    let store = home.path().join(".cache/toolsmith/artifacts");
    let file = store.join(format!("{id}.txt"));
    assert!(file.is_file(), "{} is missing", file.display());
    let mode = std::fs::metadata(&store).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);

    let args = json!({ "path": file.to_str().unwrap() }).to_string();
    let read = toolsmith_at_home(
        &["call", "read_file", &args, "--root", root_arg],
        home.path(),
    );
    assert_eq!(
        read.code, 1,
        "read_file reached the artifact store: {}",
        read.stdout
    );
    assert!(
        read.stdout.contains("outside the workspace root"),
        "{}",
        read.stdout
    );
    let args = json!({ "id": id }).to_string();
    let read = toolsmith_at_home(
        &["call", "read_artifact", &args, "--root", root_arg],
        home.path(),
    );
    assert_eq!(read.code, 0, "{}", read.stdout);
    assert!(read.stdout.contains("\n1\n2\n3\n"), "{}", read.stdout);
}

#[test]
fn an_artifact_directory_that_is_a_symlink_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let link = home.path().join("artifacts");
    std::os::unix::fs::symlink("/etc", &link).unwrap();
    let run = toolsmith_at_home(
        &[
            "call",
            "read_file",
            r#"{"path":"/etc/passwd"}"#,
            "--root",
            home.path().to_str().unwrap(),
            "--artifacts",
            link.to_str().unwrap(),
        ],
        home.path(),
    );
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("is a symlink"), "{}", run.stderr);
    assert!(!run.stdout.contains("root:"), "{}", run.stdout);
}

#[test]
fn repair_and_compact_refuse_bad_histories_in_one_line() {
    let dir = workspace();
    for (input, expected) in [
        ("[{\"role\": ", "not JSON"),
        ("42", "expected an array of messages"),
        (
            r#"[{"role": "robot", "content": "hi"}]"#,
            "unknown variant `robot`",
        ),
    ] {
        for command in ["repair", "compact"] {
            let run = toolsmith(&[command, "-"], dir.path(), Some(input));
            assert_eq!(run.code, 1, "{command} {input}");
            assert!(
                run.stderr.contains(expected),
                "{command} {input}: {}",
                run.stderr
            );
            assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
            assert!(run.stdout.is_empty());
        }
    }
    // Reused ids are renamed, and what changed is on stderr; no text block is lost.
    let history = json!([
        { "role": "user", "content": "go" },
        { "role": "assistant", "content": [
            { "type": "text", "text": "first" },
            { "type": "tool_use", "id": "a", "name": "read_file", "input": {} } ] },
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "a", "content": "one" },
            { "type": "text", "text": "keep me" } ] },
        { "role": "assistant", "content": [
            { "type": "tool_use", "id": "a", "name": "read_file", "input": {} } ] },
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "a", "content": "two" } ] },
        { "role": "assistant", "content": "end" }
    ]);
    let run = toolsmith(&["repair", "-"], dir.path(), Some(&history.to_string()));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("ids renamed: `a` → `a_2`"),
        "{}",
        run.stderr
    );
    for text in ["first", "keep me", "end"] {
        assert!(
            run.stdout.contains(text),
            "{text} was dropped: {}",
            run.stdout
        );
    }
}

#[test]
fn approve_deny_refuses_what_changes_things_and_runs_reads() {
    let dir = workspace();
    let write = toolsmith(
        &[
            "call",
            "write_file",
            r#"{"path": "new.txt", "content": "x"}"#,
            "--approve",
            "deny",
        ],
        dir.path(),
        None,
    );
    assert_eq!(write.code, 1);
    assert!(
        write
            .stdout
            .contains("the user's approval policy does not allow `write_file` calls"),
        "{}",
        write.stdout
    );
    assert!(!dir.path().join("new.txt").exists());
    let read = toolsmith(
        &[
            "call",
            "read_file",
            r#"{"path": "big.log", "limit": 1}"#,
            "--approve",
            "deny",
        ],
        dir.path(),
        None,
    );
    assert_eq!(read.code, 0, "{}", read.stdout);
    let batch = json!([
        { "type": "tool_use", "id": "w", "name": "run_command", "input": { "command": "touch made" } },
        { "type": "tool_use", "id": "r", "name": "glob", "input": { "pattern": "*.log" } }
    ]);
    let run = toolsmith(
        &["batch", "-", "--approve", "deny"],
        dir.path(),
        Some(&batch.to_string()),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let blocks: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(blocks[0]["is_error"], true);
    assert_eq!(blocks[1]["content"], "big.log\n");
    assert!(!dir.path().join("made").exists());
}

#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    use std::io::Read as _;
    let dir = workspace();
    let artifacts = dir.path().join(".artifacts");
    // Five pages of the big log: far more output than a pipe buffers.
    let calls: Vec<Value> = (1..=5)
        .map(|i| {
            json!({ "type": "tool_use", "id": format!("t{i}"), "name": "read_file",
                    "input": { "path": "big.log", "limit": 3000 } })
        })
        .collect();
    let input = dir.path().join("calls.json");
    std::fs::write(&input, Value::Array(calls).to_string()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["batch", input.to_str().unwrap(), "--budget", "400000"])
        .arg("--root")
        .arg(dir.path())
        .arg("--artifacts")
        .arg(&artifacts)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read ten bytes, as `| head -c 10` does, and hang up.
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(&first, b"[\n  {\n    ");
}

#[test]
fn repair_reads_and_writes_responses_and_gemini_histories() {
    let dir = workspace();
    let items = json!({ "model": "gpt-5", "input": [
        { "role": "user", "content": "list src" },
        { "type": "function_call", "call_id": "call_1", "name": "list", "arguments": "{\"path\":\"src\"}" },
        { "role": "user", "content": "and?" }
    ]});
    let run = toolsmith(
        &["repair", "--format", "responses", "-"],
        dir.path(),
        Some(&items.to_string()),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let repaired: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(repaired["model"], "gpt-5");
    assert_eq!(repaired["input"][2]["type"], "function_call_output");
    assert_eq!(repaired["input"][2]["call_id"], "call_1");
    assert_eq!(repaired["input"][3]["content"], "and?");

    let contents = json!({ "contents": [
        { "role": "user", "parts": [{ "text": "hi" }] },
        { "role": "model", "parts": [{ "functionCall": { "name": "f", "args": {} } }] }
    ]});
    let run = toolsmith(
        &["repair", "--format", "gemini", "-"],
        dir.path(),
        Some(&contents.to_string()),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let repaired: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        repaired["contents"][2]["parts"][0]["functionResponse"]["name"],
        "f"
    );

    let run = toolsmith(
        &["repair", "--format", "gemini", "-"],
        dir.path(),
        Some("{\"messages\": []}"),
    );
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("`contents`"), "{}", run.stderr);
}

#[test]
fn call_names_an_image_on_the_terminal_and_gives_its_data_with_json() {
    let dir = tempfile::tempdir().unwrap();
    // A GIF of 14 bytes: read_file shows it as an image.
    let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;";
    std::fs::write(dir.path().join("dot.gif"), gif).unwrap();
    let plain = toolsmith(
        &["call", "read_file", r#"{"path": "dot.gif"}"#],
        dir.path(),
        None,
    );
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert_eq!(
        plain.stdout,
        "[read_file: `dot.gif` is an image (image/gif, 14 bytes), shown below]\n\
         [image (image/gif, 14 bytes): not shown here; --json gives its base64 data]\n"
    );
    let json = toolsmith(
        &["call", "read_file", r#"{"path": "dot.gif"}"#, "--json"],
        dir.path(),
        None,
    );
    let result: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(result["media"][0]["kind"], "image");
    assert_eq!(result["media"][0]["mime_type"], "image/gif");
    assert_eq!(result["media"][0]["bytes"], 14);
    assert_eq!(result["media"][0]["data"], "R0lGODlhAQABAAAAADs=");
    assert_eq!(result["media_left_out"], json!([]));
}

#[test]
fn serve_config_names_a_server_that_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"gone": {"command": "/nonexistent/mcp-server"}}}"#,
    )
    .unwrap();
    let run = toolsmith(
        &["serve", "--config", config.to_str().unwrap()],
        dir.path(),
        None,
    );
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("`gone`"), "{}", run.stderr);
    assert!(
        run.stderr.contains("the other servers are served")
            && run
                .stderr
                .contains("no server could be started: MCP server `gone`: cannot start"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_readme_lists_every_subcommand_the_binary_has() {
    let help = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let commands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .and_then(|rest| rest.split("Options:").next())
        .unwrap()
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    assert!(commands.len() >= 8, "{commands:?}");
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let row = readme
        .lines()
        .find(|line| line.starts_with("| `toolsmith-cli`"))
        .expect("the README's row of toolsmith-cli");
    let listed: Vec<&str> = row
        .split("the `toolsmith` binary:")
        .nth(1)
        .unwrap()
        .split('|')
        .next()
        .unwrap()
        .split(',')
        .map(|name| name.trim().trim_matches('`'))
        .collect();
    assert_eq!(
        listed, commands,
        "the README's subcommands are not the binary's"
    );
}
