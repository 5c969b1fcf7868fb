//! [`BucketStore`]: artifacts as objects in a bucket — Amazon S3 (and S3-compatible servers),
//! Google Cloud Storage, Azure Blob Storage — through the `object_store` crate, so they outlive
//! the machine that wrote them and every replica of a gateway reads them.
//!
//! Each artifact is two objects under the store's prefix: `<id>.txt`, the text, and
//! `<id>.index`, its [page index](super::page_index) (where every 64 KiB of the text is, in
//! lines and chars). The index is written last: an artifact exists once its index does, and a
//! page is read with one ranged GET of the text after one GET of the index (cached, so the next
//! page of the same artifact is one request).
//!
//! The store's calls block, as [`ArtifactStore`]'s do; the requests run on a small runtime of the
//! store's own (one thread), so they are made the same way from any thread — a blocking task of
//! another runtime, or none.

use std::collections::VecDeque;
use std::future::Future;
use std::io::{self, BufWriter, Write};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt as _, PutPayload, WriteMultipart};

use super::capped::{CappedFile, MIN_ARTIFACT_BYTES};
use super::page_index::{Indexer, PageIndex};
use super::retention::{Entry, Index};
use super::{
    ArtifactError, ArtifactId, ArtifactPage, ArtifactStore, ArtifactWriter, Owner, PageRequest,
    Retention,
};

/// The text of an artifact: `<id>.txt`.
const TEXT_SUFFIX: &str = ".txt";
/// Its page index: `<id>.index`.
const INDEX_SUFFIX: &str = ".index";
/// Owners' parts: `<prefix>/owners/<kind>-<name>/`.
const OWNERS_DIR: &str = "owners";
/// An artifact up to this size is one PUT; a larger one a multipart upload in parts of it.
const PART_BYTES: usize = 5 << 20;
/// Parts uploading at once, while the next is filled from the spool: at most 10 MiB of an
/// artifact in memory.
const PARTS_IN_FLIGHT: usize = 1;
/// Page indexes kept in memory, the most recently read.
const CACHED_INDEXES: usize = 64;
/// The largest page index read (an index of 64 MiB maps 170 GiB of text).
const MAX_INDEX_BYTES: u64 = 64 << 20;

/// How to open a [`BucketStore`]: its retention, the cap on each artifact, and how long one
/// request may take.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `open` is called"]
pub struct BucketStoreBuilder {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
    location: String,
    retention: Retention,
    max_artifact_bytes: u64,
    timeout: Duration,
}

impl BucketStoreBuilder {
    /// Sets the retention policy. By default, [`Retention::default`]: 24 hours, 1 GiB in all.
    /// See [`BucketStore`] for what the store removes itself and what a bucket's lifecycle
    /// rules are for.
    pub fn retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// Caps each artifact at `bytes`, as [`DirStoreBuilder::max_artifact_bytes`] does: an output
    /// over it keeps its first and last halves of the cap. By default 256 MiB.
    ///
    /// [`DirStoreBuilder::max_artifact_bytes`]: super::DirStoreBuilder::max_artifact_bytes
    pub fn max_artifact_bytes(mut self, bytes: u64) -> Self {
        self.max_artifact_bytes = bytes.max(MIN_ARTIFACT_BYTES);
        self
    }

    /// The longest one operation of the store may take — a read, a commit's upload of one part,
    /// a listing — retries included; past it the operation fails with
    /// [`ArtifactError::Remote`]. By default 30 seconds. (The client's own per-request timeout
    /// and retries are the `object_store` store's, set where it is built.)
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Opens the store. Nothing is requested from the bucket here, so a store whose endpoint is
    /// down opens, and each of its commits fails with why (a result's marker then says its full
    /// output could not be kept). What the prefix already holds is listed in the background,
    /// for the retention policy.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Remote`] when the store's I/O thread cannot be started.
    pub fn open(self) -> Result<BucketStore, ArtifactError> {
        runtime()?;
        let store = BucketStore {
            shared: Arc::new(Shared {
                store: self.store,
                prefix: self.prefix,
                location: self.location,
                timeout: self.timeout,
                index: Mutex::new(Index::default()),
                pages: Mutex::new(VecDeque::new()),
                remove_on_drop: false,
            }),
            retention: self.retention,
            max_artifact_bytes: self.max_artifact_bytes,
        };
        store.scan_in_background();
        Ok(store)
    }
}

/// Artifacts as objects in a bucket, through [`object_store`](::object_store).
///
/// Open one from a URL with [`from_url`](Self::from_url) (`s3://bucket/prefix`,
/// `gs://bucket/prefix`, `az://container/prefix`; credentials, region and endpoint from the
/// standard environment variables), or over any `object_store` store with
/// [`builder`](Self::builder).
///
/// The contract is [`DirStore`](super::DirStore)'s: ids are unguessable; an artifact is
/// written to a private spool file (unnamed, removed by the system when closed) and uploaded on
/// commit — in parts of 5 MiB, one uploading while the next is read from the spool, so a stream
/// of any size is stored in about 10 MiB of memory — and only a completed upload is named; artifacts over the cap keep their
/// head and tail; owners' parts are kept apart under `owners/`.
///
/// Retention: the store removes what it knows of — what it committed, and what the prefix held
/// when it opened (listed in the background) — past the policy's age or total size, at each
/// commit, as `DirStore` does; only objects named as it names artifacts, directly under its
/// prefix. Other processes' commits to the same prefix are not seen until
/// [`prune`](Self::prune). For replicas sharing a prefix, a lifecycle rule on the bucket
/// (expire objects under the prefix after a day; abort incomplete multipart uploads after a
/// day) is the backstop the store does not replace.
#[derive(Debug, Clone)]
pub struct BucketStore {
    shared: Arc<Shared>,
    retention: Retention,
    max_artifact_bytes: u64,
}

#[derive(Debug)]
struct Shared {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
    /// Where the store is, for messages: its URL, or what the caller named it.
    location: String,
    timeout: Duration,
    index: Mutex<Index>,
    /// Page indexes read lately, the most recent last.
    pages: Mutex<VecDeque<(ArtifactId, Arc<PageIndex>)>>,
    /// A session's part goes with its last handle.
    remove_on_drop: bool,
}

impl Drop for Shared {
    fn drop(&mut self) {
        if !self.remove_on_drop {
            return;
        }
        let names: Vec<String> = crate::sync::lock(&self.index)
            .names()
            .map(str::to_owned)
            .collect();
        let (store, prefix) = (Arc::clone(&self.store), self.prefix.clone());
        let Ok(runtime) = runtime() else { return };
        let removal = runtime.spawn(async move {
            for id in names {
                remove_artifact(store.as_ref(), &prefix, &id).await;
            }
        });
        // Off a runtime's threads, the drop waits (within the store's timeout), so the part is
        // gone once it returns; on one it never blocks, and the removal goes on in the
        // background. What a process that ends first leaves is the retention's (or the
        // bucket's lifecycle rules').
        if tokio::runtime::Handle::try_current().is_err() {
            let timeout = self.timeout;
            let (sender, receiver) = std::sync::mpsc::sync_channel(1);
            runtime.spawn(async move {
                let _ = sender.send(tokio::time::timeout(timeout, removal).await);
            });
            let _ = receiver.recv();
        }
    }
}

/// The process's runtime for stores' requests.
fn runtime() -> Result<&'static tokio::runtime::Runtime, ArtifactError> {
    static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("toolsmith-artifacts")
                .enable_all()
                .build()
                .ok()
        })
        .as_ref()
        .ok_or_else(|| ArtifactError::Remote {
            location: "object store".to_owned(),
            reason: "its I/O thread could not be started".to_owned(),
        })
}

async fn remove_artifact(store: &dyn ObjectStore, prefix: &Path, id: &str) {
    // The index first: without it the artifact is gone, even if removing the text fails.
    for suffix in [INDEX_SUFFIX, TEXT_SUFFIX] {
        let _ = store
            .delete(&prefix.clone().join(format!("{id}{suffix}")))
            .await;
    }
}

impl BucketStore {
    /// The per-artifact cap unless [`BucketStoreBuilder::max_artifact_bytes`] sets another:
    /// 256 MiB.
    pub const DEFAULT_MAX_ARTIFACT_BYTES: u64 = 256 << 20;
    /// How long one operation may take unless [`BucketStoreBuilder::timeout`] says otherwise.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

    /// A builder for a store in `store` under `prefix` (`""`: the bucket's top). `location`
    /// names it in messages (a URL, say).
    pub fn builder(
        store: Arc<dyn ObjectStore>,
        prefix: Path,
        location: impl Into<String>,
    ) -> BucketStoreBuilder {
        BucketStoreBuilder {
            store,
            prefix,
            location: location.into(),
            retention: Retention::default(),
            max_artifact_bytes: Self::DEFAULT_MAX_ARTIFACT_BYTES,
            timeout: Self::DEFAULT_TIMEOUT,
        }
    }

    /// A builder for the store at `url`: `s3://bucket/prefix` (also `s3a://`), `gs://bucket/prefix`,
    /// `az://container/prefix` (also `azure://`, `abfs://`, `abfss://`, `adl://`), or
    /// `memory://` (in this process, for tests). Credentials, region and endpoint come from the
    /// standard environment variables, as `object_store` reads them (for S3: `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP` for a
    /// plain-HTTP endpoint; `GOOGLE_*` and `AZURE_*` likewise). Requests time out after 30 s (5 s
    /// to connect) and are retried 3 times within 15 s, unless the environment sets the client's
    /// own options.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::UnsupportedLocation`] for a URL of another scheme, or one that cannot be
    /// read; [`ArtifactError::Remote`] when the store cannot be configured from it (a bucket
    /// missing from the URL, a malformed endpoint).
    pub fn from_url(url: &str) -> Result<BucketStoreBuilder, ArtifactError> {
        let unsupported = || ArtifactError::UnsupportedLocation(url.to_owned());
        let parsed = url::Url::parse(url).map_err(|_| unsupported())?;
        let (scheme, prefix) =
            object_store::ObjectStoreScheme::parse(&parsed).map_err(|_| unsupported())?;
        let remote = |error: object_store::Error| ArtifactError::Remote {
            location: url.to_owned(),
            reason: error.to_string(),
        };
        let retry = object_store::RetryConfig {
            max_retries: 3,
            retry_timeout: Duration::from_secs(15),
            ..object_store::RetryConfig::default()
        };
        use object_store::ClientConfigKey::{ConnectTimeout, Timeout};
        use object_store::ObjectStoreScheme as Scheme;
        // Each cloud's builder, from the environment and the URL, with the store's retries and
        // the client's timeouts unless the environment set its own.
        macro_rules! build {
            ($builder:ty, $key:ty) => {{
                let mut builder = <$builder>::from_env().with_url(url).with_retry(retry);
                for (key, value) in [(Timeout, "30s"), (ConnectTimeout, "5s")] {
                    if builder.get_config_value(&<$key>::Client(key)).is_none() {
                        builder = builder.with_config(<$key>::Client(key), value);
                    }
                }
                Arc::new(builder.build().map_err(remote)?) as Arc<dyn ObjectStore>
            }};
        }
        let store: Arc<dyn ObjectStore> = match scheme {
            Scheme::AmazonS3 => {
                build!(
                    object_store::aws::AmazonS3Builder,
                    object_store::aws::AmazonS3ConfigKey
                )
            }
            Scheme::GoogleCloudStorage => {
                build!(
                    object_store::gcp::GoogleCloudStorageBuilder,
                    object_store::gcp::GoogleConfigKey
                )
            }
            Scheme::MicrosoftAzure => {
                build!(
                    object_store::azure::MicrosoftAzureBuilder,
                    object_store::azure::AzureConfigKey
                )
            }
            Scheme::Memory => Arc::new(object_store::memory::InMemory::new()),
            _ => return Err(unsupported()),
        };
        Ok(Self::builder(store, prefix, url))
    }

    /// Where the store is: its URL, or what [`builder`](Self::builder) was told.
    pub fn location_name(&self) -> &str {
        &self.shared.location
    }

    /// Lists the prefix (picking up artifacts other processes wrote), then applies the
    /// retention policy; returns how many artifacts were removed. A commit applies the policy
    /// on its own without a listing.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Remote`] when the prefix cannot be listed.
    pub fn prune(&self) -> Result<usize, ArtifactError> {
        let (store, prefix) = (Arc::clone(&self.shared.store), self.shared.prefix.clone());
        let found = self.block(async move { scan(store.as_ref(), &prefix).await })?;
        let mut index = Index::default();
        for entry in found {
            index.push(entry);
        }
        let expired = index.expire(&self.retention, SystemTime::now());
        *crate::sync::lock(&self.shared.index) = index;
        let removed = expired.len();
        self.remove(expired);
        Ok(removed)
    }

    /// Lists the prefix in the background and adds what it holds to the index.
    fn scan_in_background(&self) {
        let Ok(runtime) = runtime() else { return };
        let store = self.clone();
        runtime.spawn(async move {
            let Ok(found) = scan(store.shared.store.as_ref(), &store.shared.prefix).await else {
                // Unreachable now: commits will say so, each in its marker.
                return;
            };
            let expired = {
                let mut index = crate::sync::lock(&store.shared.index);
                let known: std::collections::HashSet<String> =
                    index.names().map(str::to_owned).collect();
                for entry in found
                    .into_iter()
                    .filter(|entry| !known.contains(&entry.name))
                {
                    index.push(entry);
                }
                index.expire(&store.retention, SystemTime::now())
            };
            store.remove(expired);
        });
    }

    /// Removes the artifacts retention let go, in the background.
    fn remove(&self, expired: Vec<Entry>) {
        if expired.is_empty() {
            return;
        }
        let Ok(runtime) = runtime() else { return };
        let (store, prefix) = (Arc::clone(&self.shared.store), self.shared.prefix.clone());
        runtime.spawn(async move {
            for entry in expired {
                remove_artifact(store.as_ref(), &prefix, &entry.name).await;
            }
        });
    }

    fn key(&self, id: &str, suffix: &str) -> Path {
        self.shared.prefix.clone().join(format!("{id}{suffix}"))
    }

    fn remote(&self, reason: impl std::fmt::Display) -> ArtifactError {
        ArtifactError::Remote {
            location: self.shared.location.clone(),
            reason: reason.to_string(),
        }
    }

    /// The store's error, said briefly: what failed first (the bucket is missing, the
    /// connection was refused), then the client's whole account, which names the request's URL
    /// and its retries — a marker's room for a reason is short, and the cause comes first.
    fn failed(&self, error: &object_store::Error) -> ArtifactError {
        if let object_store::Error::NotFound { .. } = error {
            // Reads say an artifact is not found before this; a write or a listing answered
            // 404 means the bucket is not there.
            return self.remote("no such bucket (a write was answered 404 Not Found)");
        }
        let mut cause: &dyn std::error::Error = error;
        while let Some(deeper) = cause.source() {
            cause = deeper;
        }
        let cause = cause.to_string();
        let whole = error.to_string();
        let reason = if whole.ends_with(&cause) || cause.is_empty() {
            whole
        } else {
            format!("{cause} ({whole})")
        };
        self.remote(reason)
    }

    /// Runs `work` on the store's runtime within the store's timeout and waits for it.
    fn block<T: Send + 'static>(
        &self,
        work: impl Future<Output = object_store::Result<T>> + Send + 'static,
    ) -> Result<T, ArtifactError> {
        self.block_as(work, |error| self.failed(&error))
    }

    /// As [`block`](Self::block), with the store's errors mapped by `map`.
    fn block_as<T: Send + 'static>(
        &self,
        work: impl Future<Output = object_store::Result<T>> + Send + 'static,
        map: impl FnOnce(object_store::Error) -> ArtifactError,
    ) -> Result<T, ArtifactError> {
        self.block_until(work, Instant::now() + self.shared.timeout, map)
    }

    /// As [`block_as`](Self::block_as), within `deadline`: the requests of one read share the
    /// store's timeout (a page index and a range), never wait it each.
    fn block_until<T: Send + 'static>(
        &self,
        work: impl Future<Output = object_store::Result<T>> + Send + 'static,
        deadline: Instant,
        map: impl FnOnce(object_store::Error) -> ArtifactError,
    ) -> Result<T, ArtifactError> {
        let timeout = self.shared.timeout;
        let left = deadline.saturating_duration_since(Instant::now());
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        runtime()?.spawn(async move {
            let _ = sender.send(tokio::time::timeout(left, work).await);
        });
        match receiver.recv() {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(error))) => Err(map(error)),
            Ok(Err(_)) => Err(self.remote(format!(
                "no answer within {} (the store's timeout)",
                crate::figures::DisplayDuration(timeout)
            ))),
            Err(_) => Err(self.remote("its I/O thread stopped")),
        }
    }

    /// A read answered "not found": the artifact is not there (`id`), unless the answer says
    /// the bucket (or container) itself is missing, which is the store's failure, not the
    /// artifact's absence.
    fn not_found(&self, error: &object_store::Error, id: ArtifactId) -> ArtifactError {
        let mut said = error.to_string();
        let mut cause: &dyn std::error::Error = error;
        while let Some(deeper) = cause.source() {
            said.push_str(&deeper.to_string());
            cause = deeper;
        }
        const NO_BUCKET: [&str; 4] = [
            "NoSuchBucket",
            "ContainerNotFound",
            "bucket does not exist",
            "container does not exist",
        ];
        if NO_BUCKET.iter().any(|words| said.contains(words)) {
            return self.remote("no such bucket (a read was answered 404 Not Found)");
        }
        ArtifactError::NotFound(id)
    }

    /// The page index of `id`: remembered, or read (one GET, within `deadline`).
    fn page_index(
        &self,
        id: &ArtifactId,
        deadline: Instant,
    ) -> Result<Arc<PageIndex>, ArtifactError> {
        {
            let mut pages = crate::sync::lock(&self.shared.pages);
            if let Some(hit) = pages
                .iter()
                .position(|(known, _)| known == id)
                .and_then(|at| pages.remove(at))
            {
                let index = Arc::clone(&hit.1);
                pages.push_back(hit);
                return Ok(index);
            }
        }
        let (store, key) = (
            Arc::clone(&self.shared.store),
            self.key(id.as_str(), INDEX_SUFFIX),
        );
        let not_found = id.clone();
        let bytes = self.block_until(
            async move {
                let got = store.get(&key).await?;
                if got.meta.size > MAX_INDEX_BYTES {
                    return Err(object_store::Error::Generic {
                        store: "toolsmith",
                        source: "the artifact's page index is larger than any it writes".into(),
                    });
                }
                got.bytes().await
            },
            deadline,
            |error| match error {
                object_store::Error::NotFound { .. } => self.not_found(&error, not_found),
                other => self.failed(&other),
            },
        )?;
        let index = Arc::new(PageIndex::decode(&bytes).map_err(|error| {
            ArtifactError::Io(io::Error::new(
                error.kind(),
                format!("artifact {id}: {error}"),
            ))
        })?);
        let mut pages = crate::sync::lock(&self.shared.pages);
        if pages.len() >= CACHED_INDEXES {
            pages.pop_front();
        }
        pages.push_back((id.clone(), Arc::clone(&index)));
        Ok(index)
    }

    fn forget(&self, id: &ArtifactId) {
        crate::sync::lock(&self.shared.pages).retain(|(known, _)| known != id);
    }
}

/// What `prefix` holds directly (not its owners' parts): the artifacts named as a store names
/// them, each with its text's and index's bytes and the time of the later.
async fn scan(store: &dyn ObjectStore, prefix: &Path) -> object_store::Result<Vec<Entry>> {
    let listed = store.list_with_delimiter(Some(prefix)).await?;
    let mut found: std::collections::HashMap<String, Entry> = std::collections::HashMap::new();
    for object in listed.objects {
        let Some(name) = object.location.filename() else {
            continue;
        };
        let Some(id) = name
            .strip_suffix(TEXT_SUFFIX)
            .or_else(|| name.strip_suffix(INDEX_SUFFIX))
            .filter(|id| ArtifactId::parse(id).is_ok())
        else {
            continue;
        };
        let modified: SystemTime = object.last_modified.into();
        let entry = found.entry(id.to_owned()).or_insert(Entry {
            modified,
            name: id.to_owned(),
            bytes: 0,
        });
        entry.bytes += object.size;
        entry.modified = entry.modified.max(modified);
    }
    let mut found: Vec<Entry> = found.into_values().collect();
    found.sort_by_key(|entry| entry.modified);
    Ok(found)
}

impl ArtifactStore for BucketStore {
    fn begin(&self) -> Result<Box<dyn ArtifactWriter>, ArtifactError> {
        let id = ArtifactId::generate()?;
        // Unnamed: nobody else can open it, and the system removes it when it is closed.
        let spool = tempfile::tempfile()?;
        Ok(Box::new(BucketWriter {
            store: self.clone(),
            id: Some(id),
            file: CappedFile::new(spool, self.max_artifact_bytes),
        }))
    }

    fn read_page(&self, id: &ArtifactId, page: PageRequest) -> Result<ArtifactPage, ArtifactError> {
        // One deadline for the whole read: the index's GET and the range's share the timeout.
        let deadline = Instant::now() + self.shared.timeout;
        let index = self.page_index(id, deadline)?;
        let Some((mark, range)) = index.window(page) else {
            return Ok(index.past_end(page));
        };
        let (store, key) = (
            Arc::clone(&self.shared.store),
            self.key(id.as_str(), TEXT_SUFFIX),
        );
        let gone = id.clone();
        let bytes = self.block_until(
            async move { store.get_range(&key, range).await },
            deadline,
            |error| match error {
                object_store::Error::NotFound { .. } => self.not_found(&error, gone),
                other => self.failed(&other),
            },
        );
        let bytes = bytes.inspect_err(|_| self.forget(id))?;
        index.page(mark, &bytes, page)
    }

    /// A part of the prefix of the owner's (`owners/<kind>-<name>/`), with this store's
    /// retention and cap applied to it alone. A session's part is removed with the last handle
    /// of the store returned.
    fn scoped(&self, owner: &Owner) -> Result<Arc<dyn ArtifactStore>, ArtifactError> {
        let prefix = self
            .shared
            .prefix
            .clone()
            .join(OWNERS_DIR)
            .join(owner.segment());
        let part = BucketStore {
            shared: Arc::new(Shared {
                store: Arc::clone(&self.shared.store),
                prefix,
                location: self.shared.location.clone(),
                timeout: self.shared.timeout,
                index: Mutex::new(Index::default()),
                pages: Mutex::new(VecDeque::new()),
                remove_on_drop: !owner.is_kept(),
            }),
            retention: self.retention,
            max_artifact_bytes: self.max_artifact_bytes,
        };
        if owner.is_kept() {
            // A principal's part holds its earlier sessions' artifacts.
            part.scan_in_background();
        }
        Ok(Arc::new(part))
    }
}

/// An artifact being written: to its spool, capped; uploaded on commit.
struct BucketWriter {
    store: BucketStore,
    id: Option<ArtifactId>,
    file: CappedFile,
}

impl Write for BucketWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl ArtifactWriter for BucketWriter {
    fn commit(mut self: Box<Self>) -> Result<ArtifactId, ArtifactError> {
        let Some(id) = self.id.take() else {
            return Err(ArtifactError::Io(io::Error::other(
                "artifact committed twice",
            )));
        };
        let store = self.store.clone();
        let mut upload = BufWriter::with_capacity(
            256 << 10,
            Upload {
                store: &store,
                key: store.key(id.as_str(), TEXT_SUFFIX),
                indexer: Indexer::default(),
                pending: Vec::new(),
                multipart: None,
                since_wait: 0,
                failed: None,
            },
        );
        let written = self
            .file
            .write_ordered(&mut upload)
            .and_then(|_| upload.flush());
        // Not `into_inner`: after a failed upload, flushing again would only hide its reason.
        let (mut upload, _) = upload.into_parts();
        if let Some(failed) = upload.failed.take() {
            return Err(failed);
        }
        written?;
        let index = upload.finish(self.file.is_capped())?;
        let encoded = index.encode();
        let bytes = index.total_bytes + encoded.len() as u64;
        let (objects, key) = (
            Arc::clone(&store.shared.store),
            store.key(id.as_str(), INDEX_SUFFIX),
        );
        store.block(async move { objects.put(&key, PutPayload::from(encoded)).await })?;
        let expired = {
            let now = SystemTime::now();
            let mut index = crate::sync::lock(&store.shared.index);
            index.push(Entry {
                modified: now,
                name: id.as_str().to_owned(),
                bytes,
            });
            index.expire(&store.retention, now)
        };
        store.remove(expired);
        Ok(id)
    }

    fn omitted_bytes(&self) -> u64 {
        self.file.omitted_bytes()
    }
}

/// The text of an artifact on its way up, indexed as it goes: held until it is larger than one
/// part (then one PUT), else a multipart upload.
struct Upload<'a> {
    store: &'a BucketStore,
    key: Path,
    indexer: Indexer,
    /// What was written before the upload knew it needs parts.
    pending: Vec<u8>,
    multipart: Option<WriteMultipart>,
    /// Bytes handed to the multipart upload since it last had room.
    since_wait: usize,
    /// Why the upload failed, as the store said it.
    failed: Option<ArtifactError>,
}

impl Upload<'_> {
    fn send(&mut self, buf: &[u8]) -> Result<(), ArtifactError> {
        if self.multipart.is_none() {
            if self.pending.capacity() == 0 {
                // Room for a part and one more write: never grown, never copied.
                self.pending
                    .reserve_exact(PART_BYTES + buf.len().max(256 << 10));
            }
            self.pending.extend_from_slice(buf);
            if self.pending.len() <= PART_BYTES {
                return Ok(());
            }
            let (store, key) = (Arc::clone(&self.store.shared.store), self.key.clone());
            let upload = self
                .store
                .block(async move { store.put_multipart(&key).await })?;
            let mut multipart = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
            let pending = bytes::Bytes::from(std::mem::take(&mut self.pending));
            {
                let _entered = runtime()?.enter();
                multipart.put(pending);
            }
            self.multipart = Some(multipart);
            self.since_wait = PART_BYTES;
            return self.wait_for_room();
        }
        self.hand_over(buf)
    }

    /// Gives bytes to the multipart upload, waiting when as many parts as allowed are on their
    /// way.
    fn hand_over(&mut self, buf: &[u8]) -> Result<(), ArtifactError> {
        let Some(multipart) = self.multipart.as_mut() else {
            return Ok(());
        };
        {
            // A full part is spawned as an upload on the store's runtime.
            let _entered = runtime()?.enter();
            multipart.write(buf);
        }
        self.since_wait += buf.len();
        self.wait_for_room()
    }

    /// Once a part's worth was handed over since the last wait, waits until at most
    /// `PARTS_IN_FLIGHT` parts are uploading.
    fn wait_for_room(&mut self) -> Result<(), ArtifactError> {
        if self.since_wait < PART_BYTES {
            return Ok(());
        }
        self.since_wait = 0;
        let Some(mut multipart) = self.multipart.take() else {
            return Ok(());
        };
        let multipart = self.store.block(async move {
            match multipart.wait_for_capacity(PARTS_IN_FLIGHT).await {
                Ok(()) => Ok(multipart),
                Err(error) => {
                    let _ = multipart.abort().await;
                    Err(error)
                }
            }
        })?;
        self.multipart = Some(multipart);
        Ok(())
    }

    /// Completes the upload and returns the text's page index.
    fn finish(mut self, capped: bool) -> Result<PageIndex, ArtifactError> {
        let (store, key) = (Arc::clone(&self.store.shared.store), self.key.clone());
        match self.multipart.take() {
            None => {
                let payload = PutPayload::from(std::mem::take(&mut self.pending));
                self.store
                    .block(async move { store.put(&key, payload).await })?;
            }
            Some(multipart) => {
                self.store.block(async move {
                    // `finish` uploads the last part, waits for every part and completes.
                    multipart.finish().await
                })?;
            }
        }
        Ok(self.indexer.finish(capped))
    }
}

impl Write for Upload<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.failed.is_some() {
            return Err(io::Error::other("the upload failed"));
        }
        self.indexer.feed(buf);
        if let Err(error) = self.send(buf) {
            let message = error.to_string();
            self.failed = Some(error);
            return Err(io::Error::other(message));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
