//! `DirStore` and `MemoryStore`: permissions, atomic commits, retention, failures, paging.

use std::fs::{self, File};
use std::io::Write as _;
use std::time::{Duration, SystemTime};

use serde_json::json;
use toolsmith::{
    ArtifactError, ArtifactId, ArtifactStore, BudgetPolicy, DirStore, MemoryStore, PageRequest,
    Registry, Retention, ToolCall,
};
use toolsmith_workspace::Emit;

fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn page(offset: usize, limit: Option<usize>) -> PageRequest {
    PageRequest {
        offset,
        limit,
        max_bytes: 1 << 20,
    }
}

#[cfg(unix)]
#[test]
fn the_directory_is_private_and_so_is_every_artifact() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("nested/artifacts");
    let store = DirStore::open(&dir).unwrap();
    let mode = |path: &std::path::Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    let id = store.put("secret output\n").unwrap();
    assert_eq!(mode(&store.file_of(&id)), 0o600);
    assert_eq!(
        fs::read_to_string(store.file_of(&id)).unwrap(),
        "secret output\n"
    );
    assert_eq!(names_in(&dir), [format!("{id}.txt")]);
}

#[cfg(unix)]
#[test]
fn an_existing_directory_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    fs::set_permissions(root.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let store = DirStore::open(root.path()).unwrap();
    let mode = fs::metadata(store.path()).unwrap().permissions().mode() & 0o777;
    assert_eq!(
        mode, 0o755,
        "the store must not chmod a directory it did not create"
    );
    let file = root.path().join("a-file");
    fs::write(&file, "").unwrap();
    assert!(DirStore::open(&file).is_err());
}

#[test]
fn nothing_is_visible_before_commit_and_nothing_is_left_after_a_drop() {
    let dir = tempfile::tempdir().unwrap();
    let store = DirStore::open(dir.path()).unwrap();
    let mut writer = store.begin().unwrap();
    writer.write_all(b"half of a").unwrap();
    let visible: Vec<String> = names_in(dir.path())
        .into_iter()
        .filter(|name| name.ends_with(".txt"))
        .collect();
    assert!(
        visible.is_empty(),
        "a partial artifact is visible: {visible:?}"
    );
    drop(writer);
    assert!(
        names_in(dir.path()).is_empty(),
        "the partial file was not removed"
    );

    let mut writer = store.begin().unwrap();
    writer.write_all(b"whole\n").unwrap();
    let id = writer.commit().unwrap();
    assert_eq!(names_in(dir.path()), [format!("{id}.txt")]);
}

fn age(store: &DirStore, id: &ArtifactId, by: Duration) {
    let file = File::options().write(true).open(store.file_of(id)).unwrap();
    file.set_modified(SystemTime::now() - by).unwrap();
}

#[test]
fn retention_removes_old_artifacts() {
    let dir = tempfile::tempdir().unwrap();
    let store = DirStore::open(dir.path())
        .unwrap()
        .with_retention(Retention::forever().with_max_age(Some(Duration::from_secs(3600))));
    let old = store.put("old\n").unwrap();
    age(&store, &old, Duration::from_secs(2 * 3600));
    let new = store.put("new\n").unwrap();
    assert!(!store.file_of(&old).exists());
    assert!(store.file_of(&new).exists());
    assert!(matches!(
        store.read_page(&old, page(0, None)),
        Err(ArtifactError::NotFound(_))
    ));
}

#[test]
fn retention_removes_the_oldest_past_the_byte_limit_but_never_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let store = DirStore::open(dir.path())
        .unwrap()
        .with_retention(Retention::forever().with_max_total_bytes(Some(2_500)));
    let kb = "x".repeat(999) + "\n";
    let first = store.put(&kb).unwrap();
    age(&store, &first, Duration::from_secs(30));
    let second = store.put(&kb).unwrap();
    age(&store, &second, Duration::from_secs(20));
    let third = store.put(&kb).unwrap();
    assert!(!store.file_of(&first).exists(), "the oldest goes first");
    assert!(store.file_of(&second).exists() && store.file_of(&third).exists());

    let huge = store.put(&"y".repeat(10_000)).unwrap();
    assert!(
        store.file_of(&huge).exists(),
        "the newest stays even alone over the limit"
    );
    assert!(!store.file_of(&second).exists() && !store.file_of(&third).exists());
}

#[test]
fn a_store_whose_directory_is_gone_fails_with_an_io_error() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("artifacts");
    let store = DirStore::open(&dir).unwrap();
    fs::remove_dir(&dir).unwrap();
    fs::write(&dir, "now a file").unwrap();
    let error = store.put("output").unwrap_err();
    assert!(matches!(error, ArtifactError::Io(_)), "{error:?}");
    assert!(error.to_string().starts_with("artifact store I/O failed"));
}

#[test]
fn pages_of_a_dir_store_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let store = DirStore::open(dir.path()).unwrap();
    let text: String = (0..100).map(|i| format!("row {i}\n")).collect();
    let id = store.put(&text).unwrap();
    let got = store.read_page(&id, page(95, Some(10))).unwrap();
    assert_eq!(got.text, "row 95\nrow 96\nrow 97\nrow 98\nrow 99\n");
    assert_eq!(
        (got.lines, got.total_lines, got.next_offset()),
        (5, 100, None)
    );
    assert_eq!(got.total_bytes, text.len() as u64);
    let missing = ArtifactId::generate().unwrap();
    assert!(matches!(
        store.read_page(&missing, page(0, None)),
        Err(ArtifactError::NotFound(_))
    ));
}

#[test]
fn memory_store_pages_the_same_way() {
    let store = MemoryStore::new();
    let id = store.put("a\nb\nc").unwrap();
    let got = store.read_page(&id, page(1, None)).unwrap();
    assert_eq!(got.text, "b\nc");
    assert_eq!(got.total_lines, 3);
    assert_eq!(store.len(), 1);
}

#[test]
fn sessions_get_directories_of_their_own() {
    let a = DirStore::new_session().unwrap();
    let b = DirStore::new_session().unwrap();
    assert_ne!(a.path(), b.path());
    fs::remove_dir(a.path()).unwrap();
    fs::remove_dir(b.path()).unwrap();
}

#[tokio::test]
async fn read_artifact_pages_within_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::builder()
        .tool(Emit::default())
        .artifacts(DirStore::open(dir.path()).unwrap())
        .budget(BudgetPolicy::default().with_batch_budget_chars(3_000))
        .max_calls_per_tool(10)
        .build()
        .unwrap();
    let mut turn = registry.turn();
    let results = turn
        .execute([ToolCall::new("big", "emit", json!({ "lines": 5_000 }))])
        .await;
    let id = results[0].meta.artifact.clone().unwrap();

    // No limit: as many lines as fit the 3,000-char budget, and where to go next.
    let first = turn
        .execute([ToolCall::new(
            "r1",
            "read_artifact",
            json!({ "id": id.as_str() }),
        )])
        .await;
    let text = &first[0].content;
    assert!(!first[0].is_error, "{text}");
    assert!(text.chars().count() <= 3_000);
    assert!(!first[0].meta.trimmed, "the reader pre-trims to its budget");
    let header = text.lines().next().unwrap();
    assert!(
        header.starts_with(&format!("[artifact {id}: lines 1-")),
        "{header}"
    );
    let next: usize = header
        .rsplit("offset=")
        .next()
        .and_then(|rest| rest.trim_end_matches(']').parse().ok())
        .unwrap();
    assert_eq!(text.lines().nth(next).unwrap(), format!("line {next}"));

    let errors = turn
        .execute([
            ToolCall::new("r2", "read_artifact", json!({ "id": "../../etc/passwd" })),
            ToolCall::new(
                "r3",
                "read_artifact",
                json!({ "id": id.as_str(), "offset": 9_999 }),
            ),
            ToolCall::new(
                "r4",
                "read_artifact",
                json!({ "id": ArtifactId::generate().unwrap().as_str() }),
            ),
        ])
        .await;
    assert!(
        errors[0].content.contains("is not an artifact id"),
        "{}",
        errors[0].content
    );
    assert!(
        errors[1].content.contains("past the end"),
        "{}",
        errors[1].content
    );
    assert!(
        errors[1].content.contains("5,000 lines"),
        "{}",
        errors[1].content
    );
    assert!(
        errors[2].content.contains("was not found"),
        "{}",
        errors[2].content
    );
}
