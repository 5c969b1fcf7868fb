//! What the tests of the standard tools share: a workspace with a registry of them, and helpers
//! for the attacks they try.

#![allow(dead_code)] // each test file uses some of the helpers

use std::fs;
use std::path::Path;

use serde_json::{Value, json};
use toolsmith::artifacts::MemoryStore;
use toolsmith::{Registry, ToolCall, ToolResult};
use toolsmith_std::Sandbox;

pub(crate) struct Workspace {
    _dir: tempfile::TempDir,
    pub(crate) root: std::path::PathBuf,
    pub(crate) outside: std::path::PathBuf,
    pub(crate) registry: Registry,
    pub(crate) store: MemoryStore,
}

pub(crate) fn workspace() -> Workspace {
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
    pub(crate) async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.registry
            .turn()
            .execute([ToolCall::new("call", tool, args)])
            .await
            .remove(0)
    }

    pub(crate) fn secret_untouched(&self) {
        let secret = fs::read_to_string(self.outside.join("secret.txt")).unwrap();
        assert_eq!(secret, "top secret\n");
        let names: Vec<_> = fs::read_dir(&self.outside).unwrap().collect();
        assert_eq!(names.len(), 1, "nothing was created outside the root");
    }
}

pub(crate) fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

pub(crate) fn assert_denied(result: &ToolResult, root: &Path) {
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

pub(crate) fn alive(pid: u32) -> bool {
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
pub(crate) fn printed_child(output: &str) -> u32 {
    output
        .lines()
        .find_map(|line| line.strip_prefix("child "))
        .and_then(|pid| pid.trim().parse().ok())
        .expect("the child's pid was printed")
}

/// Runs a call that must not hang: a regression fails the test instead of stalling it.
pub(crate) async fn bounded(w: &Workspace, tool: &str, args: Value) -> ToolResult {
    tokio::time::timeout(std::time::Duration::from_secs(20), w.call(tool, args))
        .await
        .unwrap_or_else(|_| panic!("{tool} hung"))
}

/// Runs `command` and returns the pid it printed as `child PID`, checking the call did not
/// wait for the detached process.
pub(crate) async fn detached_child(w: &Workspace, command: &str) -> u32 {
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
