//! `DirStore` and `MemoryStore`: permissions, atomic commits, retention, failures, paging.

use std::fs::{self, File};
use std::io::Write as _;
use std::time::{Duration, SystemTime};

use serde_json::json;
use toolsmith::artifacts::{
    ArtifactError, ArtifactId, ArtifactStore, MemoryStore, PageRequest, Retention,
};
use toolsmith::{BudgetPolicy, DirStore, Registry, ToolCall};
use toolsmith_workspace::Emit;

/// The files in `dir`, but the store's own marker file.
fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != ".toolsmith-artifacts")
        .collect();
    names.sort();
    names
}

fn page(offset: usize, limit: Option<usize>) -> PageRequest {
    PageRequest {
        offset,
        limit,
        char_offset: 0,
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
fn a_directory_open_to_other_users_is_refused_and_left_as_it_was() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("shared");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    let error = DirStore::open(&dir).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, ArtifactError::UnsafeDirectory { .. }),
        "{error:?}"
    );
    assert!(message.contains(&dir.display().to_string()), "{message}");
    assert!(message.contains("mode 777"), "{message}");
    assert!(message.contains("chmod 700"), "{message}");
    let mode = fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(
        mode, 0o777,
        "the store must not chmod a directory it did not create"
    );
    assert!(names_in(&dir).is_empty(), "nothing was written to it");
    let file = root.path().join("a-file");
    fs::write(&file, "").unwrap();
    assert!(DirStore::open(&file).is_err());
}

#[test]
fn nothing_is_visible_before_commit_and_nothing_is_left_after_a_drop() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("artifacts");
    let store = DirStore::open(dir.as_path()).unwrap();
    let mut writer = store.begin().unwrap();
    writer.write_all(b"half of a").unwrap();
    let visible: Vec<String> = names_in(dir.as_path())
        .into_iter()
        .filter(|name| name.ends_with(".txt"))
        .collect();
    assert!(
        visible.is_empty(),
        "a partial artifact is visible: {visible:?}"
    );
    drop(writer);
    assert!(
        names_in(dir.as_path()).is_empty(),
        "the partial file was not removed"
    );

    let mut writer = store.begin().unwrap();
    writer.write_all(b"whole\n").unwrap();
    let id = writer.commit().unwrap();
    assert_eq!(names_in(dir.as_path()), [format!("{id}.txt")]);
}

fn age(store: &DirStore, id: &ArtifactId, by: Duration) {
    let file = File::options().write(true).open(store.file_of(id)).unwrap();
    file.set_modified(SystemTime::now() - by).unwrap();
}

#[test]
fn retention_removes_old_artifacts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("artifacts");
    let hour = Retention::forever().with_max_age(Some(Duration::from_secs(3600)));
    let store = DirStore::open(dir.as_path()).unwrap().with_retention(hour);
    let old = store.put("old\n").unwrap();
    age(&store, &old, Duration::from_secs(2 * 3600));
    // A later session's store finds the old artifact and lets it go.
    let store = DirStore::builder(dir.as_path())
        .retention(hour)
        .open()
        .unwrap();
    let new = store.put("new\n").unwrap();
    assert!(!store.file_of(&old).exists());
    assert!(store.file_of(&new).exists());
    assert!(matches!(
        store.read_page(&old, page(0, None)),
        Err(ArtifactError::NotFound(_))
    ));
}

#[test]
fn a_store_whose_directory_is_gone_fails_with_an_io_error() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("artifacts");
    let store = DirStore::open(&dir).unwrap();
    fs::remove_dir_all(&dir).unwrap();
    fs::write(&dir, "now a file").unwrap();
    let error = store.put("output").unwrap_err();
    assert!(matches!(error, ArtifactError::Io(_)), "{error:?}");
    assert!(error.to_string().starts_with("artifact store I/O failed"));
}

#[test]
fn pages_of_a_dir_store_artifact() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("artifacts");
    let store = DirStore::open(dir.as_path()).unwrap();
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
fn sessions_get_directories_of_their_own_removed_with_the_last_handle() {
    let a = DirStore::new_session().unwrap();
    let b = DirStore::new_session().unwrap();
    assert_ne!(a.path(), b.path());
    let id = a.put("kept while a handle lives\n").unwrap();
    let clone = a.clone();
    let (dir_a, dir_b) = (a.path().to_path_buf(), b.path().to_path_buf());
    drop(a);
    assert!(
        clone.file_of(&id).exists(),
        "a clone keeps the session alive"
    );
    drop(clone);
    drop(b);
    assert!(
        !dir_a.exists() && !dir_b.exists(),
        "nothing is left in the temp dir"
    );
}

#[tokio::test]
async fn read_artifact_pages_within_its_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("artifacts");
    let registry = Registry::builder()
        .tool(Emit::default())
        .artifacts(DirStore::open(dir.as_path()).unwrap())
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
    assert!(!first[0].is_error(), "{text}");
    assert!(text.chars().count() <= 3_000);
    assert!(
        !first[0].meta.trimmed(),
        "the reader pre-trims to its budget"
    );
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

/// A directory that is the user's own project: private, with a file older than any retention.
fn project_with_old_requirements(tmp: &tempfile::TempDir) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let proj = tmp.path().join("proj");
    fs::create_dir(&proj).unwrap();
    fs::set_permissions(&proj, fs::Permissions::from_mode(0o700)).unwrap();
    let file = proj.join("requirements.txt");
    fs::write(&file, "flask\n").unwrap();
    File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(30 * 24 * 3600))
        .unwrap();
    proj
}

#[cfg(unix)]
#[test]
fn a_directory_holding_other_files_is_refused_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = project_with_old_requirements(&tmp);
    let error = DirStore::open(&proj).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, ArtifactError::UnsafeDirectory { .. }),
        "{error:?}"
    );
    assert!(message.contains("requirements.txt"), "{message}");
    assert!(message.contains("empty or new directory"), "{message}");
    assert_eq!(names_in(&proj), ["requirements.txt"], "nothing was written");
}

#[cfg(unix)]
#[test]
fn retention_removes_only_the_artifacts_the_store_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = project_with_old_requirements(&tmp);
    // A user's file that merely looks like an artifact name is not in a store's directory, but
    // once the directory is shared, retention judges by age: the store's own artifacts only.
    let tight = Retention::forever()
        .with_max_age(Some(Duration::from_secs(3600)))
        .with_max_total_bytes(Some(300));
    let store = DirStore::builder(&proj)
        .allow_other_files(true)
        .retention(tight)
        .open()
        .unwrap();
    let old = store.put("old artifact\n").unwrap();
    age(&store, &old, Duration::from_secs(2 * 3600));
    assert_eq!(store.prune().unwrap(), 1, "the aged artifact goes");
    for _ in 0..20 {
        store.put(&"x".repeat(100)).unwrap();
    }
    store.prune().unwrap();
    assert_eq!(
        fs::read_to_string(proj.join("requirements.txt")).unwrap(),
        "flask\n",
        "retention deleted a file the store did not write"
    );
    let artifacts = names_in(&proj)
        .into_iter()
        .filter(|name| name != "requirements.txt")
        .count();
    assert_eq!(
        artifacts, 3,
        "300 bytes hold the newest three 100-byte artifacts"
    );
}

#[test]
fn retention_by_size_holds_across_many_commits_without_a_rescan() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("artifacts");
    let store = DirStore::builder(&dir)
        .retention(Retention::forever().with_max_total_bytes(Some(1_000)))
        .open()
        .unwrap();
    let ids: Vec<ArtifactId> = (0..200)
        .map(|i| store.put(&format!("{i:099}\n")).unwrap())
        .collect();
    let mut left = names_in(&dir);
    left.sort();
    let mut newest: Vec<String> = ids[190..].iter().map(|id| format!("{id}.txt")).collect();
    newest.sort();
    assert_eq!(
        left, newest,
        "the newest ten 100-byte artifacts fill 1,000 bytes"
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    DirStore::open(&real).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let message = DirStore::open(&link).unwrap_err().to_string();
    assert!(message.contains("is a symlink"), "{message}");
    assert!(message.contains(&link.display().to_string()), "{message}");
}

#[cfg(unix)]
#[test]
fn a_directory_of_another_user_is_refused() {
    use std::os::unix::fs::MetadataExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let me = fs::metadata(tmp.path()).unwrap().uid();
    // As root, hand a private directory to `nobody`; as anyone else, `/` is root's.
    let theirs = if me == 0 {
        let dir = tmp.path().join("theirs");
        DirStore::open(&dir).unwrap();
        std::os::unix::fs::chown(&dir, Some(65_534), None).unwrap();
        dir
    } else {
        std::path::PathBuf::from("/")
    };
    let message = DirStore::open(&theirs).unwrap_err().to_string();
    assert!(message.contains("not to you"), "{message}");
}

#[tokio::test]
async fn a_capped_artifact_is_named_in_the_marker_and_by_read_artifact() {
    let tmp = tempfile::tempdir().unwrap();
    let store = DirStore::builder(tmp.path().join("artifacts"))
        .max_artifact_bytes(4_096)
        .open()
        .unwrap();
    let registry = Registry::builder()
        .tool(Emit::default())
        .artifacts(store)
        .budget(BudgetPolicy::default().with_batch_budget_chars(2_000))
        .build()
        .unwrap();
    let mut turn = registry.turn();
    let result = turn
        .execute([ToolCall::new("big", "emit", json!({ "lines": 10_000 }))])
        .await
        .remove(0);
    assert!(
        result.content.contains("the artifact leaves out"),
        "{}",
        result.content
    );
    let id = result.meta.artifact.unwrap();
    let page = turn
        .execute([ToolCall::new(
            "read",
            "read_artifact",
            json!({ "id": id.as_str(), "limit": 2 }),
        )])
        .await
        .remove(0);
    assert!(
        page.content
            .starts_with(&format!("[artifact {id}: lines 1-2 of ")),
        "{}",
        page.content
    );
    assert!(
        page.content.contains("capped when stored"),
        "{}",
        page.content
    );
}

/// Reads `id` through `read_artifact` from `(offset, char_offset)` to its end, following the
/// `next:` each page header gives, a turn per page; returns the pages' text without their
/// headers, and how many pages it took.
async fn read_to_the_end(registry: &Registry, id: &str, mut at: (usize, usize)) -> (String, usize) {
    let mut text = String::new();
    let mut pages = 0;
    loop {
        let page = registry
            .turn()
            .execute([ToolCall::new(
                "read",
                "read_artifact",
                json!({ "id": id, "offset": at.0, "char_offset": at.1 }),
            )])
            .await
            .remove(0);
        assert!(!page.is_error(), "{}", page.content);
        pages += 1;
        let (header, body) = page.content.split_once('\n').unwrap();
        text.push_str(body);
        if header.contains("end of artifact") {
            return (text, pages);
        }
        let next = header.split("next: offset=").nth(1).expect(header);
        let next = next.trim_end_matches(']');
        at = match next.split_once(" char_offset=") {
            Some((line, char_offset)) => (line.parse().unwrap(), char_offset.parse().unwrap()),
            None => (next.parse().unwrap(), 0),
        };
    }
}

#[tokio::test]
async fn every_char_of_a_one_line_output_is_reachable_from_the_marker() {
    let tmp = tempfile::tempdir().unwrap();
    let registry = Registry::builder()
        .tool(Emit::default())
        .artifacts(DirStore::open(tmp.path().join("artifacts")).unwrap())
        .budget(BudgetPolicy::default().with_batch_budget_chars(4_000))
        .build()
        .unwrap();
    let mut turn = registry.turn();
    let text = "é".repeat(30_000) + &"x".repeat(30_010);
    let result = turn
        .execute([ToolCall::new(
            "one",
            "emit",
            json!({ "lines": 1, "text": text }),
        )])
        .await
        .remove(0);
    let full = format!("{text} 1\n");
    assert_eq!(full.chars().count(), 60_013);
    let marker = toolsmith::trim::find_marker(&result.content).expect("a marker");
    let (head, tail) = (
        marker.head_line_chars.unwrap(),
        marker.tail_line_chars.unwrap(),
    );
    assert!(
        result.content.contains(&format!(
            "(line 1 of 1, cut mid-line: first {} and last {} chars of line 1)",
            toolsmith::figures::grouped(head),
            toolsmith::figures::grouped(tail)
        )),
        "{}",
        result.content
    );
    let shown_head: String = full.chars().take(head).collect();
    assert!(result.content.starts_with(&shown_head));

    // The rest of the line, from where the head stops, page by page within the budget.
    let id = result.meta.artifact.unwrap();
    let first = registry
        .turn()
        .execute([ToolCall::new(
            "read",
            "read_artifact",
            json!({ "id": id.as_str(), "char_offset": head }),
        )])
        .await
        .remove(0);
    let header = first.content.lines().next().unwrap();
    let from = toolsmith::figures::grouped(head + 1);
    assert!(
        header.starts_with(&format!(
            "[artifact {id}: line 1 from char {from} of 1, line 1 cut after char "
        )),
        "{header}"
    );
    assert!(header.contains("; next: offset=0 char_offset="), "{header}");
    let (rest, pages) = read_to_the_end(&registry, id.as_str(), (0, head)).await;
    assert_eq!(shown_head + &rest, full);
    assert!(pages >= 15, "60,013 chars in pages of under 4,000: {pages}");
}

#[cfg(unix)]
#[test]
fn a_symlink_planted_in_the_store_is_not_read() {
    let root = tempfile::tempdir().unwrap();
    let secret = root.path().join("secret.txt");
    fs::write(&secret, "the user's secret\n").unwrap();
    let store = DirStore::open(root.path().join("artifacts")).unwrap();
    let planted = ArtifactId::parse("0123456789abcdef0123456789abcdef").unwrap();
    std::os::unix::fs::symlink(&secret, store.file_of(&planted)).unwrap();
    match store.read_page(&planted, page(0, None)) {
        Err(ArtifactError::NotFound(id)) => assert_eq!(id, planted),
        other => panic!("a planted symlink was read: {other:?}"),
    }
    // A real artifact still reads.
    let id = store.put("kept\n").unwrap();
    assert_eq!(store.read_page(&id, page(0, None)).unwrap().text, "kept\n");
}

#[test]
fn a_dir_store_keeps_owners_apart_and_removes_a_sessions_part_with_it() {
    let root = tempfile::tempdir().unwrap();
    let store = DirStore::open(root.path().join("artifacts")).unwrap();
    crate::test_store_contract::owners_are_kept_apart_in(&store);
    let owners = root.path().join("artifacts/owners");
    let mut parts = names_in(&owners);
    parts.retain(|name| !name.starts_with('.'));
    assert_eq!(parts, ["principal-alice", "principal-bob"]);
    // The root's retention never counts (or removes) an owner's part.
    assert_eq!(store.prune().unwrap(), 0);
}
