//! The standard tools' sandbox and arguments: paths that climb out, symlinks, FIFOs, long
//! paths, I/O errors in words, schema mismatches, and a registry that lacks the sandbox.

use crate::common;

use std::fs;
use std::os::unix::fs::FileTypeExt as _;

use serde_json::json;
use toolsmith::{Registry, ToolCall};
use toolsmith_std::Sandbox;

use common::*;

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
