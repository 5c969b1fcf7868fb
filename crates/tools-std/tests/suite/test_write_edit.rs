//! write_file and edit_file through a registry: writes that never leave a file half-done, edits
//! refused before they are built.

use crate::common;

use std::fs;

use serde_json::json;

use common::*;

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
