//! list_directory, glob and grep through a registry: ignore files, refusals over the caps, and
//! search output streamed whole into its artifact in bounded memory.

use crate::common;

use std::fs;

use serde_json::json;

use common::*;

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
