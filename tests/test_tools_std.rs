//! The standard tools through a registry: the sandbox, size-hint pre-validation and pagination,
//! writes that never leave a file half-done, listings, search, and commands.

use std::fs;
use std::os::unix::fs::FileTypeExt as _;
use std::path::Path;

use serde_json::{Value, json};
use toolsmith::artifacts::MemoryStore;
use toolsmith::{Registry, ToolCall, ToolResult};
use toolsmith_std::Sandbox;

struct Workspace {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
    registry: Registry,
    store: MemoryStore,
}

fn workspace() -> Workspace {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let outside = dir.path().join("outside");
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "top secret\n").unwrap();
    let store = MemoryStore::new();
    let registry = toolsmith_std::register(Registry::builder())
        .state(Sandbox::new(&root).unwrap())
        .artifacts(store.clone())
        .max_calls_per_turn(100)
        .max_calls_per_tool(100)
        .build()
        .unwrap();
    Workspace {
        root,
        outside,
        registry,
        store,
        _dir: dir,
    }
}

impl Workspace {
    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.registry
            .turn()
            .execute([ToolCall::new("call", tool, args)])
            .await
            .remove(0)
    }

    fn secret_untouched(&self) {
        let secret = fs::read_to_string(self.outside.join("secret.txt")).unwrap();
        assert_eq!(secret, "top secret\n");
        let names: Vec<_> = fs::read_dir(&self.outside).unwrap().collect();
        assert_eq!(names.len(), 1, "nothing was created outside the root");
    }
}

fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

fn assert_denied(result: &ToolResult, root: &Path) {
    assert!(result.is_error(), "{}", result.content);
    assert_eq!(
        result.meta.error_kind,
        Some(toolsmith::tool::ErrorKind::PermissionDenied),
        "{}",
        result.content
    );
    assert!(
        result.content.contains(&root.display().to_string()),
        "{}",
        result.content
    );
}

#[tokio::test]
async fn dot_dot_cannot_climb_out() {
    let w = workspace();
    assert_denied(
        &w.call("read_file", json!({ "path": "../outside/secret.txt" }))
            .await,
        &w.root,
    );
    assert_denied(
        &w.call(
            "write_file",
            json!({ "path": "../escape.txt", "content": "x" }),
        )
        .await,
        &w.root,
    );
    assert!(!w.root.parent().unwrap().join("escape.txt").exists());
    w.secret_untouched();
}

#[tokio::test]
async fn absolute_paths_outside_are_refused() {
    let w = workspace();
    let secret = w.outside.join("secret.txt");
    assert_denied(
        &w.call("read_file", json!({ "path": secret })).await,
        &w.root,
    );
    assert_denied(
        &w.call("write_file", json!({ "path": secret, "content": "pwned" }))
            .await,
        &w.root,
    );
    // An absolute path inside the root is fine.
    fs::write(w.root.join("inside.txt"), "ok\n").unwrap();
    let inside = w
        .call("read_file", json!({ "path": w.root.join("inside.txt") }))
        .await;
    assert_eq!(inside.content, "     1\tok\n");
    w.secret_untouched();
}

#[tokio::test]
async fn a_symlink_to_outside_is_refused() {
    let w = workspace();
    symlink(&w.outside.join("secret.txt"), &w.root.join("link.txt"));
    let read = w.call("read_file", json!({ "path": "link.txt" })).await;
    assert_denied(&read, &w.root);
    assert!(read.content.contains("symlink"), "{}", read.content);
    let write = w
        .call(
            "write_file",
            json!({ "path": "link.txt", "content": "pwned" }),
        )
        .await;
    assert_denied(&write, &w.root);
    let edit = w
        .call(
            "edit_file",
            json!({ "path": "link.txt", "old_string": "top", "new_string": "no" }),
        )
        .await;
    assert_denied(&edit, &w.root);
    w.secret_untouched();
}

#[tokio::test]
async fn a_symlink_loop_is_an_error() {
    let w = workspace();
    symlink(&w.root.join("b"), &w.root.join("a"));
    symlink(&w.root.join("a"), &w.root.join("b"));
    let result = w.call("read_file", json!({ "path": "a" })).await;
    assert!(result.is_error());
    assert!(
        result.content.contains("symlink loop"),
        "{}",
        result.content
    );
}

#[tokio::test]
async fn a_path_through_a_symlinked_directory_is_refused() {
    let w = workspace();
    symlink(&w.outside, &w.root.join("elsewhere"));
    assert_denied(
        &w.call("read_file", json!({ "path": "elsewhere/secret.txt" }))
            .await,
        &w.root,
    );
    let write = json!({ "path": "elsewhere/new.txt", "content": "x" });
    assert_denied(&w.call("write_file", write).await, &w.root);
    assert_denied(
        &w.call("list_directory", json!({ "path": "elsewhere" }))
            .await,
        &w.root,
    );
    assert_denied(
        &w.call("grep", json!({ "pattern": "secret", "path": "elsewhere" }))
            .await,
        &w.root,
    );
    assert_denied(
        &w.call(
            "run_command",
            json!({ "command": "ls", "cwd": "elsewhere" }),
        )
        .await,
        &w.root,
    );
    w.secret_untouched();
}

#[tokio::test]
async fn a_very_long_path_and_a_nul_byte_are_invalid_arguments() {
    let w = workspace();
    let long = "a/".repeat(3_000);
    let result = w.call("read_file", json!({ "path": long })).await;
    assert_eq!(
        result.meta.error_kind,
        Some(toolsmith::tool::ErrorKind::InvalidArguments)
    );
    assert!(
        result.content.contains("limited to 4096 bytes"),
        "{}",
        result.content
    );
    let component = "x".repeat(300);
    let result = w
        .call("write_file", json!({ "path": component, "content": "x" }))
        .await;
    assert!(result.is_error(), "{}", result.content);
    let result = w
        .call("write_file", json!({ "path": "a\u{0}b", "content": "x" }))
        .await;
    assert_eq!(
        result.meta.error_kind,
        Some(toolsmith::tool::ErrorKind::InvalidArguments)
    );
    assert!(result.content.contains("NUL byte"));
    assert_eq!(
        fs::read_dir(&w.root).unwrap().count(),
        0,
        "no file was created"
    );
}

#[tokio::test]
async fn a_missing_parent_directory_is_not_created() {
    let w = workspace();
    let result = w
        .call(
            "write_file",
            json!({ "path": "no/such/dir/file.txt", "content": "x" }),
        )
        .await;
    assert_eq!(
        result.meta.error_kind,
        Some(toolsmith::tool::ErrorKind::NotFound),
        "{}",
        result.content
    );
    assert!(
        result.content.contains("the directory `no/such/dir`"),
        "{}",
        result.content
    );
    assert!(!w.root.join("no").exists());
}

#[tokio::test]
async fn read_file_rejects_a_200_kb_file_with_its_estimate() {
    let w = workspace();
    fs::write(w.root.join("large.txt"), "x".repeat(200_000)).unwrap();
    let result = w.call("read_file", json!({ "path": "large.txt" })).await;
    assert!(result.is_error());
    assert!(result.content.contains("Error:") && result.content.contains("exceeds maximum"));
    // 200,000 bytes in one line, plus 7 chars of line number: ~50,002 tokens, over 20,000
    // (the batch budget of 80,000 chars).
    assert!(
        result.content.starts_with(
            "Error: File content (~50,002 tokens) exceeds maximum allowed tokens (20,000). Use \
             offset and limit to read part of it: offset=0 limit=1 reads about the first 20,000 \
             tokens; or use grep to search it."
        ),
        "{}",
        result.content
    );
}

#[tokio::test]
async fn read_file_pagination_returns_lines_10_to_14() {
    let w = workspace();
    let text: String = (0..1_000).map(|i| format!("Line {i}\n")).collect();
    fs::write(w.root.join("lines.txt"), text).unwrap();
    let result = w
        .call(
            "read_file",
            json!({ "path": "lines.txt", "offset": 10, "limit": 5 }),
        )
        .await;
    assert!(result.content.contains("Line 10"));
    assert!(result.content.contains("Line 14"));
    assert!(!result.content.contains("Line 15"));
    assert!(
        result.content.starts_with("    11\tLine 10\n"),
        "{}",
        result.content
    );
    assert!(
        result
            .content
            .ends_with("the file goes on. Next page: offset=15]\n")
    );
}

#[tokio::test]
async fn read_file_refuses_binary_and_reports_invalid_utf8() {
    let w = workspace();
    fs::write(w.root.join("blob.bin"), [0x7f, b'E', b'L', b'F', 0, 0, 1]).unwrap();
    let binary = w.call("read_file", json!({ "path": "blob.bin" })).await;
    assert!(
        binary.content.contains("is a binary file"),
        "{}",
        binary.content
    );
    fs::write(w.root.join("latin1.txt"), b"caf\xe9\nok\n").unwrap();
    let latin = w.call("read_file", json!({ "path": "latin1.txt" })).await;
    assert!(!latin.is_error());
    assert!(
        latin
            .content
            .starts_with("     1\tcaf\u{fffd}\n     2\tok\n"),
        "{}",
        latin.content
    );
    assert!(
        latin.content.contains("line 1 is not valid UTF-8"),
        "{}",
        latin.content
    );
    let past = w
        .call(
            "read_file",
            json!({ "path": "latin1.txt", "offset": 5, "limit": 1 }),
        )
        .await;
    assert!(
        past.content.contains("offset: 5 is past the end"),
        "{}",
        past.content
    );
}

#[tokio::test]
async fn write_then_edit_and_failed_edits_leave_the_file_as_it_was() {
    let w = workspace();
    let wrote = w
        .call(
            "write_file",
            json!({ "path": "notes.md", "content": "alpha\nbeta\nalpha\n" }),
        )
        .await;
    assert_eq!(wrote.content, "Created `notes.md`: 17 bytes, 3 lines.");
    let original = fs::read_to_string(w.root.join("notes.md")).unwrap();

    let none = json!({ "path": "notes.md", "old_string": "gamma", "new_string": "delta" });
    let none = w.call("edit_file", none).await;
    assert!(
        none.content.contains("old_string was not found"),
        "{}",
        none.content
    );
    let twice = json!({ "path": "notes.md", "old_string": "alpha", "new_string": "omega" });
    let twice = w.call("edit_file", twice).await;
    assert!(
        twice
            .content
            .contains("occurs 2 times in `notes.md` (at lines 1, 3)"),
        "{}",
        twice.content
    );
    assert_eq!(
        fs::read_to_string(w.root.join("notes.md")).unwrap(),
        original
    );

    let once = json!({ "path": "notes.md", "old_string": "beta", "new_string": "b\nb" });
    let once = w.call("edit_file", once).await;
    assert_eq!(
        once.content,
        "Edited `notes.md`: replaced 1 occurrence at line 2 (1 lines out, 2 in)."
    );
    let all = json!({ "path": "notes.md", "old_string": "alpha", "new_string": "A", "replace_all": true });
    assert!(!w.call("edit_file", all).await.is_error());
    assert_eq!(
        fs::read_to_string(w.root.join("notes.md")).unwrap(),
        "A\nb\nb\nA\n"
    );
    let leftovers: Vec<String> = fs::read_dir(&w.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(leftovers, ["notes.md"], "no temporary file is left behind");
    assert!(w.registry.get("edit_file").unwrap().spec().limits.preserve);
}

#[tokio::test]
async fn listing_honours_gitignore_and_refuses_huge_listings() {
    let w = workspace();
    fs::create_dir(w.root.join("src")).unwrap();
    fs::write(w.root.join("src/lib.rs"), "").unwrap();
    fs::write(w.root.join("Cargo.toml"), "").unwrap();
    fs::write(w.root.join(".gitignore"), "target/\n").unwrap();
    fs::create_dir(w.root.join("target")).unwrap();
    let listing = w.call("list_directory", json!({})).await;
    assert_eq!(listing.content, "Cargo.toml\nsrc/\n");
    let deep = w.call("list_directory", json!({ "depth": 2 })).await;
    assert_eq!(deep.content, "Cargo.toml\nsrc/\nsrc/lib.rs\n");

    fs::create_dir(w.root.join("many")).unwrap();
    for i in 0..150 {
        fs::write(w.root.join(format!("many/f{i:03}.txt")), "").unwrap();
    }
    let many = w.call("list_directory", json!({ "path": "many" })).await;
    assert!(
        many.content
            .contains("`many` holds 150 entries at depth 1, more than the 100"),
        "{}",
        many.content
    );
    let globbed = w.call("glob", json!({ "pattern": "many/f00*.txt" })).await;
    assert_eq!(globbed.content.lines().count(), 10);
    let too_many = w
        .call("glob", json!({ "pattern": "**/*.txt", "max_results": 20 }))
        .await;
    assert!(
        too_many.content.contains("matches 150 files"),
        "{}",
        too_many.content
    );
}

#[tokio::test]
async fn grep_finds_lines_with_context_and_refuses_too_many() {
    let w = workspace();
    fs::create_dir(w.root.join("src")).unwrap();
    fs::write(
        w.root.join("src/a.rs"),
        "fn main() {\n    let x = 1;\n    panic!(\"boom\");\n}\n",
    )
    .unwrap();
    fs::write(w.root.join("notes.txt"), "panic! in notes\n").unwrap();
    let found = w
        .call("grep", json!({ "pattern": "panic!", "glob": "*.rs" }))
        .await;
    assert_eq!(found.content, "src/a.rs:3:    panic!(\"boom\");\n");
    let context = w
        .call(
            "grep",
            json!({ "pattern": "PANIC", "case_insensitive": true, "context": 1 }),
        )
        .await;
    assert_eq!(
        context.content,
        "notes.txt:1:panic! in notes\n--\nsrc/a.rs-2-    let x = 1;\nsrc/a.rs:3:    panic!(\"boom\");\nsrc/a.rs-4-}\n"
    );
    let bad = w.call("grep", json!({ "pattern": "(" })).await;
    assert_eq!(
        bad.meta.error_kind,
        Some(toolsmith::tool::ErrorKind::InvalidArguments)
    );
    let lines: String = (0..500).map(|i| format!("match {i}\n")).collect();
    fs::write(w.root.join("big.txt"), lines).unwrap();
    let many = w.call("grep", json!({ "pattern": "match" })).await;
    assert!(many.is_error(), "{}", many.content);
    assert!(
        many.content.contains("matched 500 lines in 1 files"),
        "{}",
        many.content
    );
    // The refusal follows the first max_results lines, and nothing past them.
    assert!(
        many.content.starts_with("big.txt:1:match 0\n"),
        "{}",
        many.content
    );
    assert!(many.content.contains("big.txt:100:match 99\n"));
    assert!(!many.content.contains("match 100\n"));
}

#[tokio::test]
async fn grep_streams_a_large_result_whole_into_its_artifact() {
    let w = workspace();
    let lines: String = (0..60_000).map(|i| format!("match {i}\n")).collect();
    fs::write(w.root.join("big.txt"), &lines).unwrap();
    let found = w
        .call(
            "grep",
            json!({ "pattern": "match", "max_results": 100_000 }),
        )
        .await;
    assert!(!found.is_error(), "{}", found.content);
    let expected: String = (0..60_000)
        .map(|i| format!("big.txt:{}:match {i}\n", i + 1))
        .collect();
    // Exact figures for the whole output, which far outgrows grep's 30,000-char cap.
    assert_eq!(found.meta.original_chars, expected.chars().count());
    assert_eq!(found.meta.original_lines, 60_000);
    assert!(found.meta.trimmed());
    assert!(found.content_chars() <= 30_000);
    // Grep keeps its head: the first matches come first.
    assert!(found.content.starts_with("big.txt:1:match 0\n"));
    let id = found
        .meta
        .artifact
        .clone()
        .expect("the full output is kept");
    assert_eq!(w.store.get(&id).unwrap(), expected);
}

#[tokio::test]
async fn run_command_reports_exit_codes_and_merges_streams() {
    let w = workspace();
    let result = w
        .call(
            "run_command",
            json!({ "command": "echo out; echo err >&2; exit 3" }),
        )
        .await;
    assert!(
        !result.is_error(),
        "a failing command is a result, not a tool error"
    );
    assert_eq!(
        result.content,
        "$ echo out; echo err >&2; exit 3\nout\nerr\n[exit code: 3]\n"
    );
    let silent = w.call("run_command", json!({ "command": "true" })).await;
    assert_eq!(silent.content, "$ true\n(no output)\n[exit code: 0]\n");
    let unended = w
        .call("run_command", json!({ "command": "printf 'no newline'" }))
        .await;
    assert_eq!(
        unended.content,
        "$ printf 'no newline'\nno newline\n[exit code: 0]\n"
    );
}

fn alive(pid: u32) -> bool {
    // A zombie is dead for our purposes: its state is Z in /proc/PID/stat.
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// The pid a test command printed as `child PID`.
fn printed_child(output: &str) -> u32 {
    output
        .lines()
        .find_map(|line| line.strip_prefix("child "))
        .and_then(|pid| pid.trim().parse().ok())
        .expect("the child's pid was printed")
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_its_children() {
    let w = workspace();
    let script = "sleep 300 & echo child $!; sleep 300";
    let result = w
        .call(
            "run_command",
            json!({ "command": script, "timeout_secs": 2 }),
        )
        .await;
    assert!(result.is_error());
    assert!(
        result.content.contains("did not finish within 2s"),
        "{}",
        result.content
    );
    let child = printed_child(&result.content);
    assert!(
        !alive(child),
        "the background child {child} survived the timeout"
    );
}

#[tokio::test]
async fn background_processes_do_not_outlive_the_command() {
    let w = workspace();
    let result = w
        .call(
            "run_command",
            json!({ "command": "sleep 300 & echo child $!" }),
        )
        .await;
    assert!(
        result.content.contains("exit code: 0"),
        "{}",
        result.content
    );
    let child = printed_child(&result.content);
    assert!(
        !alive(child),
        "the background child {child} was left running"
    );
}

#[tokio::test]
async fn a_long_output_keeps_head_and_tail_and_spools_the_rest() {
    let w = workspace();
    let result = w
        .call(
            "run_command",
            json!({ "command": "seq 1 200000; echo 'error: the end' >&2" }),
        )
        .await;
    assert!(
        result.content_chars() <= 20_000,
        "{}",
        result.content_chars()
    );
    // 200 lines kept, and the marker's.
    assert!(
        result.content.lines().count() <= 201,
        "{}",
        result.content.lines().count()
    );
    assert!(result.content.starts_with("$ seq 1 200000"));
    assert!(result.content.contains("\n1\n2\n3\n"));
    assert!(
        result
            .content
            .ends_with("199999\n200000\nerror: the end\n[exit code: 0]\n"),
        "{}",
        &result.content[result.content.len() - 100..]
    );
    let marker = result
        .content
        .lines()
        .find(|line| line.starts_with("[toolsmith: output truncated"))
        .expect("a marker");
    assert!(
        marker.contains("lines 1-40 and 199,844-200,003 of 200,003)"),
        "{marker}"
    );
    let toolsmith::trim::MarkedFull::Stored { id, .. } = toolsmith::trim::parse_marker(marker)
        .expect("a marker that parses")
        .full
    else {
        panic!("the marker names no artifact: {marker}")
    };
    let id = toolsmith::artifacts::ArtifactId::parse(&id).unwrap();
    let full = w.store.get(&id).unwrap();
    // The artifact is the whole stream, and the figures are its figures.
    assert_eq!(full.lines().count(), 200_003);
    assert!(full.ends_with("200000\nerror: the end\n[exit code: 0]\n"));
    assert_eq!(result.meta.original_chars, full.chars().count());
    assert_eq!(result.meta.original_lines, 200_003);
    assert!(result.meta.trimmed());
    assert_eq!(result.meta.artifact, Some(id));
}

#[tokio::test]
async fn run_command_refuses_bad_arguments() {
    let w = workspace();
    let zero = w
        .call(
            "run_command",
            json!({ "command": "true", "timeout_secs": 0 }),
        )
        .await;
    assert!(
        zero.content.contains("timeout_secs: 0 is out of range"),
        "{}",
        zero.content
    );
    let empty = w.call("run_command", json!({ "command": "  " })).await;
    assert!(empty.content.contains("command: is empty"));
}

#[test]
fn a_tool_registered_alone_states_its_sandbox_too() {
    // Registered one by one (not through `tools()`), the tool still states its need (the
    // `state = Sandbox` key), by the type's name.
    let error = Registry::builder()
        .tool(toolsmith_std::ReadFile::tool())
        .build()
        .expect_err("read_file needs a sandbox");
    assert_eq!(
        error.to_string(),
        "the tool `read_file` needs a `Sandbox`, and the registry has none: add it with \
         `Registry::builder().state(…)` and a `Sandbox`"
    );
    let workspace = tempfile::tempdir().unwrap();
    let built = Registry::builder()
        .tool(toolsmith_std::ReadFile::tool())
        .state(Sandbox::new(workspace.path()).unwrap())
        .build();
    assert!(built.is_ok(), "with the sandbox it builds");
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_refused_with_the_fields() {
    let w = workspace();
    let result = w.call("write_file", json!(["a.txt", "x"])).await;
    assert!(result.is_error(), "{}", result.content);
    assert_eq!(
        result.meta.error_kind,
        Some(toolsmith::tool::ErrorKind::InvalidArguments)
    );
    assert!(
        result.content.contains("got an array"),
        "{}",
        result.content
    );
    assert!(
        result
            .content
            .contains("path (string, required), content (string, required)"),
        "{}",
        result.content
    );
    assert!(!w.root.join("a.txt").exists(), "the call created a file");
    for args in [json!("a.txt"), json!(null), json!(7)] {
        let result = w.call("read_file", args.clone()).await;
        assert_eq!(
            result.meta.error_kind,
            Some(toolsmith::tool::ErrorKind::InvalidArguments),
            "{args}: {}",
            result.content
        );
    }
}

#[tokio::test]
async fn ignore_files_above_the_root_hide_nothing() {
    let w = workspace();
    // The workspace's parent ignores everything; it is not part of the workspace.
    let parent = w.root.parent().unwrap();
    fs::write(parent.join(".gitignore"), "*\n").unwrap();
    fs::write(parent.join(".ignore"), "*.rs\n").unwrap();
    fs::create_dir(w.root.join("src")).unwrap();
    fs::write(w.root.join("src/lib.rs"), "fn needle() {}\n").unwrap();
    fs::write(w.root.join("src/gen.rs"), "fn needle() {}\n").unwrap();
    // An ignore file inside the root still applies, also to a search of a subdirectory.
    fs::write(w.root.join(".gitignore"), "gen.rs\n").unwrap();

    let listing = w.call("list_directory", json!({ "depth": 2 })).await;
    assert_eq!(listing.content, "src/\nsrc/lib.rs\n");
    let globbed = w.call("glob", json!({ "pattern": "**/*.rs" })).await;
    assert_eq!(globbed.content, "src/lib.rs\n");
    for path in [".", "src"] {
        let found = w
            .call("grep", json!({ "pattern": "needle", "path": path }))
            .await;
        assert_eq!(
            found.content, "src/lib.rs:1:fn needle() {}\n",
            "grep in {path}"
        );
    }
}

#[tokio::test]
async fn io_errors_name_the_path_and_what_to_do() {
    use std::os::unix::fs::PermissionsExt as _;
    let w = workspace();
    let write_dot = w
        .call("write_file", json!({ "path": ".", "content": "x" }))
        .await;
    assert!(write_dot.is_error());
    assert!(
        write_dot.content.contains("`.` is a directory"),
        "{}",
        write_dot.content
    );
    assert!(
        !write_dot.content.contains("symlink"),
        "{}",
        write_dot.content
    );

    let locked = w.root.join("locked.txt");
    fs::write(&locked, "secret\n").unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&locked).is_ok() {
        // Root reads anything: make the file a directory-less dead end instead.
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o644)).unwrap();
        fs::remove_file(&locked).unwrap();
        let missing = w.call("read_file", json!({ "path": "locked.txt" })).await;
        assert!(
            missing.content.contains("`locked.txt`"),
            "{}",
            missing.content
        );
        assert!(!missing.content.contains("os error"), "{}", missing.content);
        return;
    }
    let read = w.call("read_file", json!({ "path": "locked.txt" })).await;
    assert_eq!(
        read.meta.error_kind,
        Some(toolsmith::tool::ErrorKind::PermissionDenied)
    );
    assert!(read.content.contains("`locked.txt`"), "{}", read.content);
    assert!(!read.content.contains("os error"), "{}", read.content);
}

/// Runs a call that must not hang: a regression fails the test instead of stalling it.
async fn bounded(w: &Workspace, tool: &str, args: Value) -> ToolResult {
    tokio::time::timeout(std::time::Duration::from_secs(20), w.call(tool, args))
        .await
        .unwrap_or_else(|_| panic!("{tool} hung"))
}

#[tokio::test]
async fn a_fifo_is_refused_by_every_file_tool_without_blocking() {
    let w = workspace();
    let status = std::process::Command::new("mkfifo")
        .arg(w.root.join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let read = bounded(&w, "read_file", json!({ "path": "pipe" })).await;
    assert!(
        read.content.contains("`pipe` is a named pipe (FIFO)"),
        "{}",
        read.content
    );
    let paged = bounded(&w, "read_file", json!({ "path": "pipe", "limit": 5 })).await;
    assert!(paged.content.contains("named pipe"), "{}", paged.content);
    let edit = bounded(
        &w,
        "edit_file",
        json!({ "path": "pipe", "old_string": "a", "new_string": "b" }),
    )
    .await;
    assert!(edit.content.contains("named pipe"), "{}", edit.content);
    let write = bounded(&w, "write_file", json!({ "path": "pipe", "content": "x" })).await;
    assert!(write.content.contains("named pipe"), "{}", write.content);
    let grep = bounded(&w, "grep", json!({ "pattern": "x" })).await;
    assert!(!grep.is_error(), "{}", grep.content);
    // Many at once: none holds a thread for long.
    let calls: Vec<ToolCall> = (0..64)
        .map(|i| ToolCall::new(format!("c{i}"), "read_file", json!({ "path": "pipe" })))
        .collect();
    let results = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        w.registry.turn().execute(calls),
    )
    .await
    .expect("a batch of FIFO reads hung");
    assert!(results.iter().all(|r| r.content.contains("named pipe")));
    assert!(
        std::fs::symlink_metadata(w.root.join("pipe"))
            .unwrap()
            .file_type()
            .is_fifo(),
        "the FIFO was replaced"
    );
}

#[tokio::test]
async fn replace_all_refuses_a_result_over_the_limit_before_building_it() {
    let w = workspace();
    let text = "a".repeat(1_000_000);
    fs::write(w.root.join("a.txt"), &text).unwrap();
    let result = w
        .call(
            "edit_file",
            json!({
                "path": "a.txt",
                "old_string": "a",
                "new_string": "b".repeat(4_000),
                "replace_all": true,
            }),
        )
        .await;
    assert!(result.is_error(), "{}", result.content);
    assert!(
        result
            .content
            .contains("replacing 1,000,000 occurrences would make `a.txt` 4,000,000,000 bytes"),
        "{}",
        result.content
    );
    assert_eq!(fs::read_to_string(w.root.join("a.txt")).unwrap(), text);
}

#[tokio::test]
async fn grep_holds_a_bounded_part_of_huge_lines() {
    let w = workspace();
    // A line longer than the search may hold: the file is skipped and the note says so.
    let mut huge = "x".repeat(12 << 20);
    huge.push_str(" needle\n");
    fs::write(w.root.join("huge.min.js"), &huge).unwrap();
    // A long line that fits: shown cut to 1,000 chars, with its length.
    let long = format!("needle {}\n", "y".repeat(100_000));
    fs::write(w.root.join("long.txt"), &long).unwrap();
    fs::write(w.root.join("short.txt"), "a needle\n").unwrap();
    let found = w.call("grep", json!({ "pattern": "needle" })).await;
    assert!(!found.is_error(), "{}", found.content);
    assert!(
        found.content.contains("short.txt:1:a needle\n"),
        "{}",
        found.content
    );
    let long_line = found
        .content
        .lines()
        .find(|line| line.starts_with("long.txt:1:"))
        .unwrap();
    assert!(
        long_line.ends_with(" … [line cut: 100,007 bytes]"),
        "{long_line}"
    );
    assert!(long_line.chars().count() < 1_100, "{long_line}");
    assert!(
        found
            .content
            .contains("[grep: not searched, a line is longer than 8 MiB: huge.min.js;"),
        "{}",
        found.content
    );
    assert!(
        found
            .content
            .contains("1 lines longer than 1,000 chars were cut"),
        "{}",
        found.content
    );
}

/// Runs `command` and returns the pid it printed as `child PID`, checking the call did not
/// wait for the detached process.
async fn detached_child(w: &Workspace, command: &str) -> u32 {
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        w.call("run_command", json!({ "command": command })),
    )
    .await
    .expect("the call waited for a detached process");
    assert!(
        result.content.contains("exit code: 0"),
        "{command}: {}",
        result.content
    );
    assert!(
        !result.content.contains("holds the output open"),
        "{command}: {}",
        result.content
    );
    printed_child(&result.content)
}

#[tokio::test]
async fn processes_that_leave_the_process_group_do_not_outlive_the_call() {
    let w = workspace();
    let escapes = [
        // A new session, holding the output pipe open; it prints its pid once it is in it.
        "setsid sh -c 'echo child $$; touch ready; exec sleep 1000' & \
         while [ ! -e ready ]; do sleep 0.01; done",
        // Job control puts the job in a process group of its own.
        "bash -c 'set -m; sleep 1000 & echo child $!'",
        // A double fork whose grandchild makes its own group, then its parent exits.
        "python3 -c 'import os, sys, time\nif os.fork() == 0:\n    os.setpgid(0, 0)\n    if os.fork() == 0:\n        print(\"child\", os.getpid(), flush=True)\n        time.sleep(1000)\n    os._exit(0)\nos.wait()'",
    ];
    for command in escapes {
        let child = detached_child(&w, command).await;
        // SIGKILL is delivered before the call returns; the process may take a moment to go.
        let gone = (0..200).any(|_| {
            let dead = !alive(child);
            if !dead {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            dead
        });
        assert!(gone, "{command}: process {child} outlived its call");
    }
}

#[tokio::test]
async fn a_schema_mismatch_names_the_field_and_lists_the_fields_expected() {
    let w = workspace();
    let result = w
        .call("write_file", json!({ "path": "a.txt", "contnet": "x" }))
        .await;
    assert_eq!(
        result.meta.error_kind,
        Some(toolsmith::tool::ErrorKind::InvalidArguments)
    );
    assert!(result.content.contains("contnet"), "{}", result.content);
    assert!(
        result
            .content
            .contains("the fields are path (string, required), content (string, required)"),
        "{}",
        result.content
    );
    let result = w.call("read_file", json!({ "path": 7 })).await;
    assert!(
        result.content.contains("path: invalid type"),
        "{}",
        result.content
    );
    assert!(
        result.content.contains("offset (integer)"),
        "{}",
        result.content
    );

    // The same bad call again and again counts toward the per-tool cap like any call.
    let registry = toolsmith_std::register(Registry::builder())
        .state(Sandbox::new(&w.root).unwrap())
        .build()
        .unwrap();
    let bad = || ToolCall::new("bad", "write_file", json!({ "path": "a.txt" }));
    let results = registry.turn().execute((0..6).map(|_| bad())).await;
    assert!(
        results[..5]
            .iter()
            .all(|r| r.meta.error_kind == Some(toolsmith::tool::ErrorKind::InvalidArguments))
    );
    assert_eq!(
        results[5].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::CapExceeded),
        "{}",
        results[5].content
    );
}

#[tokio::test]
async fn a_call_cut_off_by_the_output_limit_is_answered_without_running() {
    let w = workspace();
    let calls = [
        ToolCall::new(
            "c1",
            "write_file",
            json!({ "path": "a.txt", "content": "whole\n" }),
        ),
        ToolCall::new(
            "c2",
            "write_file",
            json!({ "path": "b.txt", "content": "the first half of a file that went on" }),
        ),
    ];
    let mut turn = w.registry.turn();
    let results = turn
        .execute_response(
            calls,
            toolsmith::registry::StopReason::from_provider("max_tokens"),
        )
        .await;
    assert_eq!(results.len(), 2);
    assert!(!results[0].is_error(), "{}", results[0].content);
    assert!(w.root.join("a.txt").exists());
    assert_eq!(results[1].call_id, "c2");
    assert_eq!(
        results[1].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::CutOff)
    );
    assert!(
        results[1].content.contains("output token limit")
            && results[1].content.contains("split the work"),
        "{}",
        results[1].content
    );
    assert!(!w.root.join("b.txt").exists(), "the cut-off call ran");
    assert_eq!(
        turn.calls_made(),
        1,
        "a call that was not run is not counted"
    );

    // The same calls after a normal stop both run.
    let calls = [ToolCall::new(
        "c3",
        "write_file",
        json!({ "path": "b.txt", "content": "x" }),
    )];
    let results = turn
        .execute_response(
            calls,
            toolsmith::registry::StopReason::from_provider("tool_use"),
        )
        .await;
    assert!(!results[0].is_error(), "{}", results[0].content);
}

#[tokio::test]
async fn commands_write_only_inside_the_workspace() {
    let w = workspace();
    let outside = w.outside.join("escaped.txt");
    let command = format!(
        "echo in > inside.txt; echo out > {}; echo status=$?; touch \"$TMPDIR/scratch\" && echo temp-ok",
        outside.display()
    );
    let result = w.call("run_command", json!({ "command": command })).await;
    assert!(
        result.content.contains("Permission denied"),
        "{}",
        result.content
    );
    assert!(result.content.contains("status=2"), "{}", result.content);
    assert!(result.content.contains("temp-ok"), "{}", result.content);
    assert!(
        !outside.exists(),
        "the kernel let the command write outside the root"
    );
    assert_eq!(
        fs::read_to_string(w.root.join("inside.txt")).unwrap(),
        "in\n"
    );
    w.secret_untouched();
    // The host process is not confined: it still writes where the command could not.
    fs::write(&outside, "host\n").unwrap();
    fs::remove_file(&outside).unwrap();
}

#[tokio::test]
async fn a_command_reads_only_what_its_policy_lists() {
    let w = workspace();
    fs::write(w.root.join("inside.txt"), "inside\n").unwrap();
    let listed = w.outside.join("listed");
    fs::create_dir(&listed).unwrap();
    fs::write(listed.join("ok.txt"), "listed\n").unwrap();
    let registry = toolsmith_std::register(Registry::builder())
        .state(Sandbox::new(&w.root).unwrap())
        .state(toolsmith_std::CommandPolicy::new().with_readable(&listed))
        .build()
        .unwrap();
    let command = format!(
        "cat inside.txt; cat {}; cat {}; echo status=$?",
        listed.join("ok.txt").display(),
        w.outside.join("secret.txt").display()
    );
    let result = registry
        .turn()
        .execute([ToolCall::new(
            "r",
            "run_command",
            json!({ "command": command }),
        )])
        .await
        .remove(0);
    assert!(!result.is_error(), "{}", result.content);
    assert!(result.content.contains("inside\n"), "{}", result.content);
    assert!(result.content.contains("listed\n"), "{}", result.content);
    assert!(
        result.content.contains("Permission denied") && result.content.contains("status=1"),
        "{}",
        result.content
    );
    assert!(!result.content.contains("top secret"), "{}", result.content);
    // Without a read set, the same file is readable (only writes are confined).
    let result = w.call("run_command", json!({ "command": command })).await;
    assert!(result.content.contains("status=0"), "{}", result.content);
}

#[tokio::test]
async fn with_the_network_off_a_command_cannot_connect() {
    let w = workspace();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let registry = toolsmith_std::register(Registry::builder())
        .state(Sandbox::new(&w.root).unwrap())
        .state(toolsmith_std::CommandPolicy::new().with_network(false))
        .build()
        .unwrap();
    let connect = format!(
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 5); print(\"connected\")'"
    );
    let result = registry
        .turn()
        .execute([ToolCall::new(
            "net",
            "run_command",
            json!({ "command": connect }),
        )])
        .await
        .remove(0);
    assert!(
        !result.content.contains("connected\n"),
        "{}",
        result.content
    );
    assert!(result.content.contains("Permission"), "{}", result.content);
    assert!(
        result
            .content
            .contains("[run_command: confined: writes to the workspace only; network off]"),
        "{}",
        result.content
    );
    // With the network on, the same command connects.
    let result = w.call("run_command", json!({ "command": connect })).await;
    assert!(result.content.contains("connected\n"), "{}", result.content);
}

#[tokio::test]
async fn commands_cannot_read_the_artifact_store() {
    let w = workspace();
    let store = toolsmith::DirStore::open(w.outside.join("artifacts")).unwrap();
    let registry = toolsmith_std::register(Registry::builder())
        .state(Sandbox::new(&w.root).unwrap())
        .artifacts(store.clone())
        .build()
        .unwrap();
    let id = toolsmith::artifacts::ArtifactStore::put(&store, "a secret kept for read_artifact\n")
        .unwrap();
    let command = format!(
        "cat {}; cat {}",
        store.file_of(&id).display(),
        w.outside.join("secret.txt").display()
    );
    let result = registry
        .turn()
        .execute([ToolCall::new(
            "c",
            "run_command",
            json!({ "command": command }),
        )])
        .await
        .remove(0);
    assert!(
        result.content.contains("Permission denied"),
        "{}",
        result.content
    );
    assert!(
        !result.content.contains("a secret kept"),
        "{}",
        result.content
    );
    // Files beside the store are readable: only the store is left out.
    assert!(result.content.contains("top secret"), "{}", result.content);
}

#[test]
fn a_registry_without_the_sandbox_is_refused_at_build_naming_it_in_words() {
    let error = toolsmith_std::register(Registry::builder())
        .build()
        .expect_err("the standard tools need a sandbox");
    let text = error.to_string();
    assert!(
        matches!(&error, toolsmith::registry::BuildError::MissingState { tool, .. } if tool == "read_file"),
        "{text}"
    );
    assert_eq!(
        text,
        "the tool `read_file` needs a sandbox (the workspace directory the standard tools work \
         in), and the registry has none: add it with \
         `.state(toolsmith_std::Sandbox::new(workspace)?)`"
    );
    assert!(
        !text.contains("toolsmith_std::sandbox::"),
        "no private path"
    );
}
