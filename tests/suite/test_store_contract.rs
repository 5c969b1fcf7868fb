//! One suite, every store: the contract of an artifact store, run unchanged against a `DirStore`
//! (a private directory) and a `BucketStore` on a real S3-compatible server (moto, on loopback),
//! with a `MemoryStore`'s pages as the reference. Then what only a bucket store has to show:
//! how few requests a deep page takes, and a store that is down or has no bucket.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith::artifacts::object_store::path::Path;
use toolsmith::artifacts::{
    ArtifactError, ArtifactId, ArtifactStore, BucketStore, MemoryStore, Owner, PageRequest,
    Retention, open_location,
};
use toolsmith::{BudgetPolicy, DirStore, Registry, ToolCall};
use toolsmith_workspace::Emit;
use toolsmith_workspace::s3::S3Server;

/// A kind of store the suite runs on.
trait Backend {
    fn name(&self) -> &'static str;
    /// A new, empty store with this cap on each artifact and this retention.
    fn open(&self, max_artifact_bytes: u64, retention: Retention) -> Arc<dyn ArtifactStore>;
}

struct Dir(tempfile::TempDir);

impl Backend for Dir {
    fn name(&self) -> &'static str {
        "DirStore"
    }
    fn open(&self, max_artifact_bytes: u64, retention: Retention) -> Arc<dyn ArtifactStore> {
        let dir = self.0.path().join(ArtifactId::generate().unwrap().as_str());
        Arc::new(
            DirStore::builder(dir)
                .max_artifact_bytes(max_artifact_bytes)
                .retention(retention)
                .open()
                .unwrap(),
        )
    }
}

struct Bucket(&'static S3Server);

impl Backend for Bucket {
    fn name(&self) -> &'static str {
        "BucketStore on S3 (moto)"
    }
    fn open(&self, max_artifact_bytes: u64, retention: Retention) -> Arc<dyn ArtifactStore> {
        let prefix = format!("suite/{}", ArtifactId::generate().unwrap());
        Arc::new(
            BucketStore::builder(
                self.0.store("contract"),
                Path::from(prefix),
                "s3://contract",
            )
            .max_artifact_bytes(max_artifact_bytes)
            .retention(retention)
            .open()
            .unwrap(),
        )
    }
}

fn backends() -> Vec<Box<dyn Backend>> {
    vec![
        Box::new(Dir(tempfile::tempdir().unwrap())),
        Box::new(Bucket(S3Server::shared())),
    ]
}

/// Runs `case` on every store, naming the store a failure came from.
fn on_every_store(case: impl Fn(&dyn Backend)) {
    for backend in backends() {
        let name = backend.name();
        if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            case(backend.as_ref());
        })) {
            eprintln!("the case failed on {name}");
            std::panic::resume_unwind(panic);
        }
    }
}

const CAP: u64 = DirStore::DEFAULT_MAX_ARTIFACT_BYTES;

fn page(offset: usize, char_offset: usize, limit: Option<usize>, max_bytes: usize) -> PageRequest {
    PageRequest {
        offset,
        char_offset,
        limit,
        max_bytes,
    }
}

/// Writes `text` to a new artifact in pieces of varying size.
fn write_in_pieces(store: &dyn ArtifactStore, text: &[u8]) -> (ArtifactId, u64) {
    let mut writer = store.begin().unwrap();
    let mut at = 0;
    for size in [1usize, 7, 300, 4_096, 17, 65_536, 1 << 20].iter().cycle() {
        if at == text.len() {
            break;
        }
        let end = (at + size).min(text.len());
        writer.write_all(&text[at..end]).unwrap();
        at = end;
    }
    let omitted = writer.omitted_bytes();
    (writer.commit().unwrap(), omitted)
}

/// Reads an artifact page by page from its start, as a model would.
fn read_whole(store: &dyn ArtifactStore, id: &ArtifactId, max_bytes: usize) -> String {
    let mut text = String::new();
    let mut at = Some((0, 0));
    while let Some((offset, char_offset)) = at {
        let got = store
            .read_page(id, page(offset, char_offset, None, max_bytes))
            .unwrap();
        text.push_str(&got.text);
        at = got.next();
    }
    text
}

#[test]
fn pages_and_totals_are_those_of_the_text() {
    on_every_store(|backend| {
        let store = backend.open(CAP, Retention::default());
        let id = store.put("zero\none\ntwo\nthree\nfour").unwrap();
        let got = store.read_page(&id, page(1, 0, Some(2), 1_000)).unwrap();
        assert_eq!(got.text, "one\ntwo\n");
        assert_eq!((got.lines, got.total_lines, got.total_bytes), (2, 5, 23));
        assert_eq!(got.next_offset(), Some(3));
        assert!(!got.capped);
        let last = store.read_page(&id, page(3, 0, None, 1_000)).unwrap();
        assert_eq!(last.text, "three\nfour");
        assert_eq!(last.next_offset(), None);
        let past = store.read_page(&id, page(9, 0, None, 1_000)).unwrap();
        assert_eq!(
            (past.lines, past.text.as_str(), past.total_lines),
            (0, "", 5)
        );
        // A page stops before a line that does not fit; a first line longer than the page is
        // cut on a char boundary and goes on at the next page.
        let fit = store.read_page(&id, page(0, 0, None, 9)).unwrap();
        assert_eq!(fit.text, "zero\none\n");
        let empty = store.put("").unwrap();
        assert_eq!(
            store
                .read_page(&empty, page(0, 0, None, 10))
                .unwrap()
                .total_lines,
            0
        );
    });
}

#[test]
fn every_char_of_a_long_line_and_of_a_large_artifact_is_reached() {
    on_every_store(|backend| {
        let store = backend.open(CAP, Retention::default());
        // One line of 300,000 chars, multi-byte ones among them, across page index marks.
        let line: String = (0..300_000)
            .map(|i| {
                if i % 97 == 0 {
                    'é'
                } else {
                    char::from(b'a' + (i % 26) as u8)
                }
            })
            .collect();
        let text = format!("{line}\nlast\n");
        let (id, _) = write_in_pieces(store.as_ref(), text.as_bytes());
        assert_eq!(read_whole(store.as_ref(), &id, 40_001), text);

        // 12 MB of log lines (a multipart upload in a bucket): pages anywhere are the
        // reference's.
        let mut log = String::new();
        for i in 0..300_000 {
            log.push_str(&format!(
                "{i:>8} level=info handled request {}\n",
                "x".repeat(i % 23)
            ));
        }
        let (id, omitted) = write_in_pieces(store.as_ref(), log.as_bytes());
        assert_eq!(omitted, 0);
        let reference = MemoryStore::new();
        let want_id = reference.put(&log).unwrap();
        for request in [
            page(0, 0, Some(3), 4_096),
            page(150_000, 0, Some(10), 4_096),
            page(299_998, 0, None, 4_096),
            page(299_999, 5, None, 4_096),
            page(123_456, 0, None, 100_000),
            page(300_000, 0, None, 4_096),
        ] {
            let got = store.read_page(&id, request).unwrap();
            let want = reference.read_page(&want_id, request).unwrap();
            assert_eq!(got, want, "{request:?}");
        }
    });
}

#[test]
fn an_artifact_over_its_cap_keeps_its_head_and_tail_and_says_so() {
    on_every_store(|backend| {
        let store = backend.open(1_024, Retention::default());
        let text: String = (0..20_000).map(|i| format!("line {i:05}\n")).collect();
        let bytes = text.as_bytes();
        let (id, omitted) = write_in_pieces(store.as_ref(), bytes);
        assert_eq!(omitted, bytes.len() as u64 - 1_024);
        let stored = read_whole(store.as_ref(), &id, 300);
        let (head, tail) = (&text[..512], &text[text.len() - 512..]);
        assert!(
            stored.starts_with(head),
            "the head is the output's first 512 bytes"
        );
        assert!(
            stored.ends_with(tail),
            "the tail is the output's last 512 bytes"
        );
        let notice = &stored[head.len()..stored.len() - tail.len()];
        assert!(
            notice.contains(&format!(
                "{} bytes of output left out here",
                toolsmith::figures::grouped(bytes.len() - 1_024)
            )),
            "{notice}"
        );
        assert!(
            store
                .read_page(&id, page(0, 0, Some(3), 100))
                .unwrap()
                .capped
        );

        // At the cap exactly, nothing is left out.
        let (whole, omitted) = write_in_pieces(store.as_ref(), &bytes[..1_024]);
        assert_eq!(omitted, 0);
        assert_eq!(read_whole(store.as_ref(), &whole, 100), text[..1_024]);
        assert!(
            !store
                .read_page(&whole, page(0, 0, None, 100))
                .unwrap()
                .capped
        );
    });
}

#[test]
fn ids_are_unguessable_and_an_unknown_or_dropped_one_is_not_found() {
    on_every_store(|backend| {
        let store = backend.open(CAP, Retention::default());
        let a = store.put("a\n").unwrap();
        let b = store.put("a\n").unwrap();
        assert_ne!(a, b, "the same text twice is two artifacts");
        assert_eq!(a.as_str().len(), 32);
        let never = ArtifactId::generate().unwrap();
        assert!(matches!(
            store.read_page(&never, page(0, 0, None, 10)),
            Err(ArtifactError::NotFound(_))
        ));
        // A writer dropped before its commit leaves nothing anyone can name.
        let mut writer = store.begin().unwrap();
        writer.write_all(b"never committed\n").unwrap();
        drop(writer);
    });
}

#[test]
fn retention_by_size_removes_the_oldest_but_never_the_newest() {
    on_every_store(|backend| {
        let store = backend.open(CAP, Retention::forever().with_max_total_bytes(Some(2_500)));
        let text = "x".repeat(999) + "\n";
        let ids: Vec<ArtifactId> = (0..5).map(|_| store.put(&text).unwrap()).collect();
        // Removal may go on in the background: wait for it (bounded).
        let deadline = Instant::now() + Duration::from_secs(10);
        let found = |id: &ArtifactId| store.read_page(id, page(0, 0, None, 10)).is_ok();
        while ids[..3].iter().any(found) {
            assert!(
                Instant::now() < deadline,
                "the oldest three were not removed"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(ids[3..].iter().all(found), "the newest two stay");
        let huge = store.put(&"y".repeat(10_000)).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(found(&huge), "the newest is kept even over the limit alone");
    });
}

/// An owner's part reads only what it kept; a session's part goes with it, a principal's stays
/// for its next session. On every store, and on the memory store (which has no cap or
/// retention to run the rest of the suite on).
#[test]
fn owners_are_kept_apart() {
    on_every_store(|backend| {
        owners_are_kept_apart_in(backend.open(CAP, Retention::default()).as_ref());
    });
    owners_are_kept_apart_in(&toolsmith::artifacts::MemoryStore::new());
}

/// The owners' case on `store`; the directory store's test of its layout runs it too.
pub(crate) fn owners_are_kept_apart_in(store: &dyn ArtifactStore) {
    let own = store.put("the store's own\n").unwrap();
    let alice = Owner::principal("alice").unwrap();
    let bob = Owner::principal("bob").unwrap();
    let session = Owner::session("0123456789abcdef0123456789abcdef").unwrap();
    let first = |s: &dyn ArtifactStore, id: &ArtifactId| {
        s.read_page(id, page(0, 0, None, 100)).map(|page| page.text)
    };

    let alices = store.scoped(&alice).unwrap();
    let kept = alices.put("alice's\n").unwrap();
    assert_eq!(first(alices.as_ref(), &kept).unwrap(), "alice's\n");
    let in_session = {
        let sessions = store.scoped(&session).unwrap();
        let id = sessions.put("the session's\n").unwrap();
        assert_eq!(first(sessions.as_ref(), &id).unwrap(), "the session's\n");
        for other in [store.scoped(&bob).unwrap(), alices.clone()] {
            assert!(matches!(
                first(other.as_ref(), &id),
                Err(ArtifactError::NotFound(_))
            ));
        }
        assert!(matches!(first(store, &id), Err(ArtifactError::NotFound(_))));
        assert!(matches!(
            first(sessions.as_ref(), &own),
            Err(ArtifactError::NotFound(_))
        ));
        id
    };
    // The session ended: its part is gone, even to a new handle of the same session.
    let again = store.scoped(&session).unwrap();
    assert!(matches!(
        first(again.as_ref(), &in_session),
        Err(ArtifactError::NotFound(_))
    ));
    // The principal's part outlives its handle.
    drop(alices);
    let later = store.scoped(&alice).unwrap();
    assert_eq!(first(later.as_ref(), &kept).unwrap(), "alice's\n");
    assert!(matches!(
        first(store.scoped(&bob).unwrap().as_ref(), &kept),
        Err(ArtifactError::NotFound(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trimmed_result_is_kept_and_read_back_through_the_registry() {
    for backend in backends() {
        let registry = Registry::builder()
            .tool(Emit::default())
            .shared_artifacts(backend.open(CAP, Retention::default()))
            .budget(BudgetPolicy::default().with_batch_budget_chars(3_000))
            .build()
            .unwrap();
        let mut turn = registry.turn();
        let results = turn
            .execute([ToolCall::new("big", "emit", json!({ "lines": 50_000 }))])
            .await;
        let id =
            results[0].meta.artifact.clone().unwrap_or_else(|| {
                panic!("{}: no artifact: {}", backend.name(), results[0].content)
            });
        let read = turn
            .execute([ToolCall::new(
                "r",
                "read_artifact",
                json!({ "id": id.as_str(), "offset": 49_990 }),
            )])
            .await;
        let text = &read[0].content;
        assert!(!read[0].is_error(), "{}: {text}", backend.name());
        assert!(text.contains("line 49995"), "{}: {text}", backend.name());
    }
}

// What only a bucket store has to show.

/// An object store that counts the requests made of it.
#[derive(Debug)]
struct Counting {
    inner: Arc<dyn toolsmith::artifacts::object_store::ObjectStore>,
    requests: AtomicUsize,
}

impl std::fmt::Display for Counting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Counting({})", self.inner)
    }
}

mod counting {
    use super::Counting;
    use futures_util::stream::BoxStream;
    use std::sync::atomic::Ordering;
    use toolsmith::artifacts::object_store::path::Path;
    use toolsmith::artifacts::object_store::{
        CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
        PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
    };

    #[async_trait::async_trait]
    impl ObjectStore for Counting {
        async fn put_opts(
            &self,
            at: &Path,
            payload: PutPayload,
            opts: PutOptions,
        ) -> Result<PutResult> {
            self.requests.fetch_add(1, Ordering::SeqCst);
            self.inner.put_opts(at, payload, opts).await
        }
        async fn put_multipart_opts(
            &self,
            at: &Path,
            opts: PutMultipartOptions,
        ) -> Result<Box<dyn MultipartUpload>> {
            self.requests.fetch_add(1, Ordering::SeqCst);
            self.inner.put_multipart_opts(at, opts).await
        }
        async fn get_opts(&self, at: &Path, options: GetOptions) -> Result<GetResult> {
            self.requests.fetch_add(1, Ordering::SeqCst);
            self.inner.get_opts(at, options).await
        }
        fn delete_stream(
            &self,
            locations: BoxStream<'static, Result<Path>>,
        ) -> BoxStream<'static, Result<Path>> {
            self.inner.delete_stream(locations)
        }
        fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
            self.requests.fetch_add(1, Ordering::SeqCst);
            self.inner.list(prefix)
        }
        async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
            self.requests.fetch_add(1, Ordering::SeqCst);
            self.inner.list_with_delimiter(prefix).await
        }
        async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
            self.requests.fetch_add(1, Ordering::SeqCst);
            self.inner.copy_opts(from, to, options).await
        }
    }
}

#[test]
fn a_deep_page_of_a_large_artifact_takes_two_requests_and_the_next_one() {
    let server = S3Server::shared();
    let counting = Arc::new(Counting {
        inner: server.store("deep"),
        requests: AtomicUsize::new(0),
    });
    let prefix = Path::from(format!("deep/{}", ArtifactId::generate().unwrap()));
    let writer_store = BucketStore::builder(counting.clone(), prefix.clone(), "s3://deep")
        .open()
        .unwrap();
    let mut writer = writer_store.begin().unwrap();
    let mut lines = 0usize;
    let mut chunk = String::new();
    while lines < 400_000 {
        chunk.clear();
        for _ in 0..10_000 {
            chunk.push_str(&format!("log line {lines:>12} of a long run\n"));
            lines += 1;
        }
        writer.write_all(chunk.as_bytes()).unwrap();
    }
    let id = writer.commit().unwrap();

    // Another process (a replica) reading it: nothing cached.
    let reader = BucketStore::builder(counting.clone(), prefix, "s3://deep")
        .open()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300)); // its opening listing, in the background
    let before = counting.requests.load(Ordering::SeqCst);
    let last = reader
        .read_page(&id, page(lines - 3, 0, None, 4_096))
        .unwrap();
    let first_page = counting.requests.load(Ordering::SeqCst) - before;
    assert_eq!(last.total_lines, lines);
    assert!(
        last.text
            .starts_with(&format!("log line {:>12}", lines - 3))
    );
    assert!(first_page <= 3, "{first_page} requests for a deep page");
    assert_eq!(first_page, 2, "the index, then the page's range");
    let before = counting.requests.load(Ordering::SeqCst);
    reader
        .read_page(&id, page(lines / 2, 0, Some(10), 4_096))
        .unwrap();
    assert_eq!(
        counting.requests.load(Ordering::SeqCst) - before,
        1,
        "the index is remembered: one ranged GET"
    );
}

/// A registry whose store is `store`, and a call whose result must be cut.
async fn cut_with(store: Arc<dyn ArtifactStore>) -> (String, Duration) {
    let registry = Registry::builder()
        .tool(Emit::default())
        .shared_artifacts(store)
        .budget(BudgetPolicy::default().with_batch_budget_chars(2_000))
        .build()
        .unwrap();
    let started = Instant::now();
    let results = registry
        .turn()
        .execute([ToolCall::new("big", "emit", json!({ "lines": 20_000 }))])
        .await;
    assert!(
        !results[0].is_error(),
        "a store's failure is not the tool's"
    );
    assert!(results[0].meta.artifact.is_none());
    (results[0].content.clone(), started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_is_down_or_has_no_bucket_says_so_in_the_marker_in_time() {
    // Nothing listens on this port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down = toolsmith::artifacts::object_store::aws::AmazonS3Builder::new()
        .with_endpoint(format!("http://127.0.0.1:{port}"))
        .with_allow_http(true)
        .with_bucket_name("gone")
        .with_access_key_id("a")
        .with_secret_access_key("b")
        .with_region("us-east-1")
        .with_retry(toolsmith::artifacts::object_store::RetryConfig {
            max_retries: 2,
            retry_timeout: Duration::from_secs(5),
            ..Default::default()
        })
        .build()
        .unwrap();
    let store = BucketStore::builder(Arc::new(down), Path::from("p"), "s3://gone/p")
        .open()
        .unwrap();
    // An artifact past one part (a multipart upload) fails with the same cause.
    let big = tokio::task::spawn_blocking({
        let store = store.clone();
        move || {
            let mut writer = store.begin().unwrap();
            writer.write_all(&vec![b'x'; 6 << 20]).unwrap();
            writer.commit()
        }
    })
    .await
    .unwrap();
    let Err(ArtifactError::Remote { reason, .. }) = big else {
        panic!("{big:?}");
    };
    assert!(reason.starts_with("Connection refused"), "{reason}");
    let (text, took) = cut_with(Arc::new(store)).await;
    assert!(
        text.contains(
            "full output could not be kept: artifact store s3://gone/p failed: Connection refused"
        ),
        "{text}"
    );
    assert!(
        text.contains("line 20000"),
        "the result itself still comes back: {text}"
    );
    assert!(took < Duration::from_secs(30), "{took:?}");

    // A bucket that does not exist on a server that does.
    let server = S3Server::shared();
    let missing = toolsmith::artifacts::object_store::aws::AmazonS3Builder::new()
        .with_endpoint(server.endpoint())
        .with_allow_http(true)
        .with_bucket_name("no-such-bucket")
        .with_access_key_id("a")
        .with_secret_access_key("b")
        .with_region("us-east-1")
        .build()
        .unwrap();
    let store = BucketStore::builder(Arc::new(missing), Path::from("p"), "s3://no-such-bucket/p")
        .open()
        .unwrap();
    let (text, _) = cut_with(Arc::new(store)).await;
    assert!(
        text.contains("could not be kept: artifact store s3://no-such-bucket/p failed"),
        "{text}"
    );
    assert!(text.contains("failed: no such bucket"), "{text}");
}

#[test]
fn a_location_is_a_directory_a_file_url_or_a_bucket_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let here = std::env::current_dir().unwrap();
    for location in [
        "ftp://host/x",
        "s3:bucket/prefix",
        "http://example.com/a",
        "file:relative",
    ] {
        let error = open_location(location).unwrap_err();
        assert!(
            matches!(error, ArtifactError::UnsupportedLocation(_)),
            "{location}: {error}"
        );
        let message = error.to_string();
        assert!(
            message.contains("s3://") && message.contains("gs://"),
            "{message}"
        );
    }
    assert!(!here.join("s3:bucket").exists() && !here.join("ftp:").exists());
    let dir = tmp.path().join("by-url");
    let store = open_location(&format!("file://{}", dir.display())).unwrap();
    assert_eq!(store.location(), Some(dir.as_path()));
    let store = open_location(tmp.path().join("by-path").to_str().unwrap()).unwrap();
    assert!(store.location().is_some());
}

/// A bucket store over `bucket` at `endpoint`, failing after `timeout`.
fn bucket_at(endpoint: &str, bucket: &str, timeout: Duration) -> BucketStore {
    let client = toolsmith::artifacts::object_store::aws::AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_allow_http(true)
        .with_bucket_name(bucket)
        .with_access_key_id("a")
        .with_secret_access_key("b")
        .with_region("us-east-1")
        .with_retry(toolsmith::artifacts::object_store::RetryConfig {
            max_retries: 1,
            retry_timeout: Duration::from_secs(2),
            ..Default::default()
        })
        .build()
        .unwrap();
    BucketStore::builder(
        Arc::new(client),
        Path::from("p"),
        format!("s3://{bucket}/p"),
    )
    .timeout(timeout)
    .open()
    .unwrap()
}

/// What `read_artifact` answers for `id` from `store`, and how long it took.
async fn read_back(store: BucketStore, id: &ArtifactId) -> (String, Duration) {
    let registry = Registry::builder()
        .shared_artifacts(Arc::new(store))
        .build()
        .unwrap();
    let started = Instant::now();
    let results = registry
        .turn()
        .execute([ToolCall::new(
            "read",
            "read_artifact",
            json!({ "id": id.as_str() }),
        )])
        .await;
    assert!(results[0].is_error(), "{}", results[0].content);
    (results[0].content.clone(), started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_from_a_store_that_fails_says_why_within_its_timeout() {
    let timeout = Duration::from_secs(2);
    let id = ArtifactId::generate().unwrap();

    // A bucket that does not exist: the store's failure, not an artifact that expired.
    let server = S3Server::shared();
    let (text, _) = read_back(
        bucket_at(&server.endpoint(), "no-such-bucket", timeout),
        &id,
    )
    .await;
    assert!(
        text.contains(
            "could not be read: artifact store s3://no-such-bucket/p failed: no such bucket"
        ),
        "{text}"
    );
    assert!(!text.contains("may have expired"), "{text}");

    // An id the bucket really does not hold is still not found.
    server.create_bucket("reads-of-unknown-ids");
    let (text, _) = read_back(
        bucket_at(&server.endpoint(), "reads-of-unknown-ids", timeout),
        &id,
    )
    .await;
    assert!(
        text.contains("was not found") && text.contains("may have expired"),
        "{text}"
    );

    // A store that is down: the connection's refusal, named.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (text, _) = read_back(bucket_at(&format!("http://{closed}"), "gone", timeout), &id).await;
    assert!(
        text.contains("could not be read: artifact store s3://gone/p failed: Connection refused"),
        "{text}"
    );

    // A store that takes the connection and never answers: one deadline for the whole read
    // (the media probe, the page index and the page share it), and the cause said.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = silent.local_addr().unwrap();
    let (text, took) = read_back(
        bucket_at(&format!("http://{address}"), "mute", timeout),
        &id,
    )
    .await;
    assert!(
        text.contains("failed: no answer within 2s (the store's timeout)"),
        "{text}"
    );
    assert!(
        took < timeout + timeout / 2,
        "the read waited {took:?}, more than its one {timeout:?} deadline"
    );
    drop(silent);
}
