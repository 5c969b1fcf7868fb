//! run_command through a registry: exit codes, merged streams, timeouts, no process outliving
//! its call, long outputs spooled, and the kernel's confinement of writes, reads and the network.

use crate::common;

use std::fs;

use serde_json::json;
use toolsmith::{Registry, ToolCall};
use toolsmith_std::Sandbox;

use common::*;

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
    assert_eq!(result.content, "out\nerr\n[exit code: 3]\n");
    let silent = w.call("run_command", json!({ "command": "true" })).await;
    assert_eq!(silent.content, "(no output)\n[exit code: 0]\n");
    let unended = w
        .call("run_command", json!({ "command": "printf 'no newline'" }))
        .await;
    assert_eq!(unended.content, "no newline\n[exit code: 0]\n");
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

/// A line a model reads numbered in the output is the line `read_artifact` gives it for that
/// number: nothing comes before the output in the result or its artifact (no command line
/// shifting every number by one), and `offset` counts from 0 as the tool says.
#[tokio::test]
async fn a_line_named_in_a_cut_output_is_the_line_read_artifact_pages_to() {
    let w = workspace();
    let result = w
        .call(
            "run_command",
            json!({ "command": "seq 1 20000 | awk '{ print \"row \" $1 \" sum \" ($1 * 7919) % 9973 }'" }),
        )
        .await;
    assert!(result.meta.trimmed(), "{}", result.content);
    let row = |n: usize| format!("row {n} sum {}", (n * 7919) % 9973);
    // The result's first lines are the output's first lines, numbered as the output numbers them.
    assert!(
        result
            .content
            .starts_with(&format!("{}\n{}\n", row(1), row(2))),
        "{}",
        result.content
    );
    let marker = result
        .content
        .lines()
        .find(|line| line.starts_with("[toolsmith: "))
        .expect("a marker");
    let parsed = toolsmith::trim::parse_marker(marker).expect("a marker that parses");
    assert_eq!(
        parsed.lines,
        Some(20_001),
        "the output's lines and the status: {marker}"
    );
    let toolsmith::trim::MarkedFull::Stored { id, .. } = parsed.full else {
        panic!("the marker names no artifact: {marker}")
    };
    // The marker says which lines were kept; the first one left out, and the last one kept,
    // read back by the numbers the marker gives.
    let first_kept = parsed.spans.first().expect("kept spans");
    let last_kept = parsed.spans.last().expect("kept spans");
    for line in [first_kept.last + 1, last_kept.first, 20_000] {
        let page = w
            .call(
                "read_artifact",
                json!({ "id": id, "offset": line - 1, "limit": 1 }),
            )
            .await;
        assert!(!page.is_error(), "{}", page.content);
        assert!(
            page.content.contains(&format!("\n{}\n", row(line)))
                || page.content.ends_with(&row(line)),
            "line {line} of the output is `{}`, the page read:\n{}",
            row(line),
            page.content
        );
    }
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
    // The numbers count up by one: a lossless fold stands for all of them but the first, so
    // nothing is left out and the cut says it condensed.
    assert!(
        result
            .content
            .starts_with("1\n[toolsmith: output condensed, "),
        "{}",
        result.content
    );
    assert!(
        result.content.ends_with(
            "\n[lines 2-200,000: 2 to 200000, one a line]\nerror: the end\n[exit code: 0]\n"
        ),
        "{}",
        result.content
    );
    let marker = result
        .content
        .lines()
        .find(|line| line.starts_with("[toolsmith: output condensed"))
        .expect("a marker");
    let parsed = toolsmith::trim::parse_marker(marker).expect("a marker that parses");
    assert_eq!(parsed.lines, Some(200_002));
    assert_eq!(parsed.spans.first().map(|s| s.first), Some(1), "{marker}");
    assert_eq!(
        parsed.spans.last().map(|s| s.last),
        Some(200_002),
        "{marker}"
    );
    assert_eq!(parsed.folded_lines, 199_999, "{marker}");
    assert!(parsed.condensed);
    let toolsmith::trim::MarkedFull::Stored { id, .. } = toolsmith::trim::parse_marker(marker)
        .expect("a marker that parses")
        .full
    else {
        panic!("the marker names no artifact: {marker}")
    };
    let id = toolsmith::artifacts::ArtifactId::parse(&id).unwrap();
    let full = w.store.get(&id).unwrap();
    // The artifact is the whole stream, and the figures are its figures.
    assert_eq!(full.lines().count(), 200_002);
    let numbers: String = (1..=200_000).map(|i| format!("{i}\n")).collect();
    assert!(
        full == format!("{numbers}error: the end\n[exit code: 0]\n"),
        "the artifact is the stream, byte for byte"
    );
    assert_eq!(result.meta.original_chars, full.chars().count());
    assert_eq!(result.meta.original_lines, 200_002);
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
