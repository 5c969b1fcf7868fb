//! [`DirStore`]: artifacts as files in a private directory the store verified, each capped in
//! size, the total kept within its [`Retention`] incrementally.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use super::capped::{CappedFile, MIN_ARTIFACT_BYTES};
use super::page::read_page_from;
use super::retention::{Entry, Index};
use super::{
    ArtifactError, ArtifactId, ArtifactPage, ArtifactStore, ArtifactWriter, Owner, PageRequest,
    Retention,
};

/// The file that marks a directory as a store's; a store only ever removes files in a directory
/// that holds it, and only files named as it names artifacts.
const MARKER_FILE: &str = ".toolsmith-artifacts";
const MARKER_TEXT: &str = "toolsmith artifact store (format 1). Files named <32 hex digits>.txt \
                           or <32 hex digits>.capped.txt are its artifacts; its retention \
                           removes them and nothing else.\n";
/// A whole artifact: `<id>.txt`.
const WHOLE_SUFFIX: &str = ".txt";
/// An artifact over the size cap, kept as head, a notice line and tail: `<id>.capped.txt`.
const CAPPED_SUFFIX: &str = ".capped.txt";
/// An artifact being written: `.partial-<id>`.
const TEMP_PREFIX: &str = ".partial-";
/// Partial files older than this were left by a writer that died; a rescan removes them.
const STALE_PARTIAL: Duration = Duration::from_secs(60 * 60);
/// The directory under a store's that holds its owners' parts: `owners/<kind>-<name>/`.
const OWNERS_DIR: &str = "owners";

/// How to open a [`DirStore`]: its retention, the cap on each artifact, and whether a
/// directory that already holds other files may be used.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `open` is called"]
pub struct DirStoreBuilder {
    dir: PathBuf,
    retention: Retention,
    max_artifact_bytes: u64,
    allow_other_files: bool,
}

impl DirStoreBuilder {
    /// Sets the retention policy. By default, [`Retention::default`]: 24 hours, 1 GiB in all.
    pub fn retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// Caps each artifact at `bytes`: an output over it keeps its first and last halves of the
    /// cap, with a `[toolsmith: …]` line where the middle was left out. By default 256 MiB
    /// ([`DirStore::DEFAULT_MAX_ARTIFACT_BYTES`]); values under 1 KiB are raised to 1 KiB.
    pub fn max_artifact_bytes(mut self, bytes: u64) -> Self {
        self.max_artifact_bytes = bytes.max(MIN_ARTIFACT_BYTES);
        self
    }

    /// Whether a directory that already holds files the store did not write may be used. By
    /// default `false`: opening such a directory fails, so a store is never pointed at a
    /// project by mistake. Either way the store removes only its own artifacts.
    pub fn allow_other_files(mut self, allow: bool) -> Self {
        self.allow_other_files = allow;
        self
    }

    /// Opens the store, creating the directory (mode 0700, and its missing parents) when it
    /// does not exist, and applies the retention policy to what it finds.
    ///
    /// An existing directory is used only if it is a real directory (not a symlink), owned by
    /// the current user, not accessible to other users (mode 0700 or stricter), and either
    /// marked as a store's, empty, or allowed by [`allow_other_files`](Self::allow_other_files).
    ///
    /// # Errors
    ///
    /// [`ArtifactError::UnsafeDirectory`] naming the directory, the problem and the fix;
    /// [`ArtifactError::Io`] when it cannot be created or listed.
    pub fn open(self) -> Result<DirStore, ArtifactError> {
        prepare_dir(&self.dir, self.allow_other_files)?;
        let store = DirStore {
            shared: Arc::new(Shared {
                dir: self.dir,
                index: Mutex::new(Index::default()),
                remove_on_drop: false,
            }),
            retention: self.retention,
            max_artifact_bytes: self.max_artifact_bytes,
        };
        store.prune()?;
        Ok(store)
    }
}

/// Artifacts as files in a private directory.
///
/// The directory is verified (or created) when the store opens — see [`DirStoreBuilder::open`]
/// — and marked with a `.toolsmith-artifacts` file. Each artifact is a file of mode 0600 named
/// by its id, written to a temporary file and renamed into place on commit, so a reader never
/// sees part of one. An artifact is capped (256 MiB by default: head and tail kept), and the
/// store's [`Retention`] is applied at each commit from an index of what the store holds, so a
/// commit never rescans the directory. Retention removes only files named as artifacts, in a
/// directory marked as a store's: never anything else.
///
/// Artifacts written by other processes into the same directory join the index when a store
/// opens or [`prune`](Self::prune)s.
#[derive(Debug, Clone)]
pub struct DirStore {
    shared: Arc<Shared>,
    retention: Retention,
    max_artifact_bytes: u64,
}

#[derive(Debug)]
struct Shared {
    dir: PathBuf,
    index: Mutex<Index>,
    /// A session store's directory goes with its last handle.
    remove_on_drop: bool,
}

impl Drop for Shared {
    fn drop(&mut self) {
        if self.remove_on_drop {
            // The directory is the store's own (a fresh random name it created).
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

impl DirStore {
    /// The per-artifact cap unless [`DirStoreBuilder::max_artifact_bytes`] sets another:
    /// 256 MiB.
    pub const DEFAULT_MAX_ARTIFACT_BYTES: u64 = 256 << 20;

    /// A builder for a store in `dir`.
    pub fn builder(dir: impl Into<PathBuf>) -> DirStoreBuilder {
        DirStoreBuilder {
            dir: dir.into(),
            retention: Retention::default(),
            max_artifact_bytes: Self::DEFAULT_MAX_ARTIFACT_BYTES,
            allow_other_files: false,
        }
    }

    /// Opens a store in `dir` with the default settings: `DirStore::builder(dir).open()`.
    ///
    /// # Errors
    ///
    /// As [`DirStoreBuilder::open`]: a directory that is a symlink, another user's, open to
    /// other users, or holding other files is refused with what to do.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, ArtifactError> {
        Self::builder(dir).open()
    }

    /// Opens a store in a new directory of its own under the system's temporary directory
    /// (`toolsmith-artifacts-<random>`), so concurrent agents never share one. The directory
    /// and its artifacts are removed when the last clone of the store is dropped.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Io`] when the directory cannot be created.
    pub fn new_session() -> Result<Self, ArtifactError> {
        let temp = std::env::temp_dir();
        let dir = loop {
            let name = format!(
                "toolsmith-artifacts-{}",
                &ArtifactId::generate()?.as_str()[..16]
            );
            let dir = temp.join(name);
            // A fresh name, never an existing directory: nobody else can have prepared it.
            match private_dir_builder().create(&dir) {
                Ok(()) => break dir,
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(error.into()),
            }
        };
        write_marker(&dir)?;
        Ok(DirStore {
            shared: Arc::new(Shared {
                dir,
                index: Mutex::new(Index::default()),
                remove_on_drop: true,
            }),
            retention: Retention::default(),
            max_artifact_bytes: Self::DEFAULT_MAX_ARTIFACT_BYTES,
        })
    }

    /// Sets the retention policy of this handle (clones made before keep theirs).
    #[must_use]
    pub fn with_retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// The store's directory.
    pub fn path(&self) -> &Path {
        &self.shared.dir
    }

    /// The file an artifact lives in (`<id>.txt`, or `<id>.capped.txt` for one that was
    /// capped).
    pub fn file_of(&self, id: &ArtifactId) -> PathBuf {
        let capped = self.shared.dir.join(format!("{id}{CAPPED_SUFFIX}"));
        if capped.exists() {
            capped
        } else {
            self.shared.dir.join(format!("{id}{WHOLE_SUFFIX}"))
        }
    }

    /// Rescans the directory (picking up artifacts other processes wrote, dropping partial
    /// files a dead writer left), then applies the retention policy; returns how many
    /// artifacts were removed. A commit applies the policy on its own without a rescan.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Io`] when the directory cannot be listed.
    pub fn prune(&self) -> Result<usize, ArtifactError> {
        let now = SystemTime::now();
        let mut index = Index::default();
        let mut found = Vec::new();
        for entry in fs::read_dir(&self.shared.dir)? {
            let entry = entry?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            // Only regular files count: never a symlink, never a directory.
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.file_type().is_file() {
                continue;
            }
            let modified = meta.modified().unwrap_or(now);
            if is_artifact_name(&name) {
                found.push(Entry {
                    modified,
                    name,
                    bytes: meta.len(),
                });
            } else if is_partial_name(&name)
                && now.duration_since(modified).unwrap_or_default() > STALE_PARTIAL
            {
                let _ = fs::remove_file(entry.path());
            }
        }
        found.sort_by_key(|entry| entry.modified);
        for entry in found {
            index.push(entry);
        }
        let removed = remove(&self.shared.dir, index.expire(&self.retention, now));
        *self.index() = index;
        Ok(removed)
    }

    fn index(&self) -> MutexGuard<'_, Index> {
        // Every update leaves the index consistent, even one a panicking holder interrupted.
        crate::sync::lock(&self.shared.index)
    }

    fn record(&self, name: String, bytes: u64) {
        let now = SystemTime::now();
        let mut index = self.index();
        index.push(Entry {
            modified: now,
            name,
            bytes,
        });
        let expired = index.expire(&self.retention, now);
        drop(index);
        remove(&self.shared.dir, expired);
    }
}

impl ArtifactStore for DirStore {
    fn begin(&self) -> Result<Box<dyn ArtifactWriter>, ArtifactError> {
        let id = ArtifactId::generate()?;
        let temp = self.shared.dir.join(format!("{TEMP_PREFIX}{id}"));
        let file = create_private_file(&temp, true)?;
        Ok(Box::new(DirWriter {
            store: self.clone(),
            id: Some(id),
            temp,
            file: CappedFile::new(file, self.max_artifact_bytes),
        }))
    }

    fn read_page(&self, id: &ArtifactId, page: PageRequest) -> Result<ArtifactPage, ArtifactError> {
        // Never through a symlink: one planted in the store (to a file of the user's, or of
        // another artifact's store) is not an artifact, and reads as none.
        let open = |suffix: &str| open_no_follow(&self.shared.dir.join(format!("{id}{suffix}")));
        let (file, capped) = match open(WHOLE_SUFFIX) {
            Ok(file) => (file, false),
            Err(error) if error.kind() == io::ErrorKind::NotFound => match open(CAPPED_SUFFIX) {
                Ok(file) => (file, true),
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    return Err(ArtifactError::NotFound(id.clone()));
                }
                Err(error) => return Err(error.into()),
            },
            Err(error) => return Err(error.into()),
        };
        read_page_from(BufReader::with_capacity(64 * 1024, file), page, capped)
    }

    fn location(&self) -> Option<&Path> {
        Some(self.path())
    }

    /// A directory of the owner's under this store's (`owners/<kind>-<name>/`, verified as
    /// this store's own is), with this store's retention and cap applied to it alone. A
    /// session's directory is removed with the last handle of the store returned.
    fn scoped(&self, owner: &Owner) -> Result<Arc<dyn ArtifactStore>, ArtifactError> {
        let dir = self.shared.dir.join(OWNERS_DIR).join(owner.segment());
        prepare_dir(&self.shared.dir.join(OWNERS_DIR), true)?;
        let mut part = DirStore::builder(dir)
            .retention(self.retention)
            .max_artifact_bytes(self.max_artifact_bytes)
            .open()?;
        if !owner.is_kept()
            && let Some(shared) = Arc::get_mut(&mut part.shared)
        {
            shared.remove_on_drop = true;
        }
        Ok(Arc::new(part))
    }
}

/// An artifact being written to its temporary file, capped.
struct DirWriter {
    store: DirStore,
    id: Option<ArtifactId>,
    temp: PathBuf,
    file: CappedFile,
}

impl Write for DirWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl ArtifactWriter for DirWriter {
    fn commit(mut self: Box<Self>) -> Result<ArtifactId, ArtifactError> {
        self.file.flush()?;
        let Some(id) = self.id.take() else {
            return Err(ArtifactError::Io(io::Error::other(
                "artifact committed twice",
            )));
        };
        let dir = self.store.shared.dir.clone();
        let (name, bytes) = if self.file.is_capped() {
            let ordered = dir.join(format!("{TEMP_PREFIX}{id}.capped"));
            let written = create_private_file(&ordered, false).and_then(|file| {
                let mut out = BufWriter::with_capacity(256 * 1024, file);
                let bytes = self.file.write_ordered(&mut out)?;
                out.flush()?;
                Ok(bytes)
            });
            let _ = fs::remove_file(&self.temp);
            let name = format!("{id}{CAPPED_SUFFIX}");
            match written.and_then(|bytes| fs::rename(&ordered, dir.join(&name)).map(|()| bytes)) {
                Ok(bytes) => (name, bytes),
                Err(error) => {
                    let _ = fs::remove_file(&ordered);
                    return Err(error.into());
                }
            }
        } else {
            let name = format!("{id}{WHOLE_SUFFIX}");
            if let Err(error) = fs::rename(&self.temp, dir.join(&name)) {
                let _ = fs::remove_file(&self.temp);
                return Err(error.into());
            }
            (name, self.file.written())
        };
        self.store.record(name, bytes);
        Ok(id)
    }

    fn omitted_bytes(&self) -> u64 {
        self.file.omitted_bytes()
    }
}

impl Drop for DirWriter {
    fn drop(&mut self) {
        if self.id.is_some() {
            // Not committed: discard the partial file.
            let _ = fs::remove_file(&self.temp);
        }
    }
}

/// Removes the artifacts retention let go; returns how many were there to remove.
fn remove(dir: &Path, expired: Vec<Entry>) -> usize {
    // Gone already (another process pruned it) is as good as removed.
    expired
        .into_iter()
        .filter(|entry| fs::remove_file(dir.join(&entry.name)).is_ok())
        .count()
}

/// `<32 lowercase hex>.txt` or `<32 lowercase hex>.capped.txt`: the names the store gives.
fn is_artifact_name(name: &str) -> bool {
    let id = name
        .strip_suffix(CAPPED_SUFFIX)
        .or_else(|| name.strip_suffix(WHOLE_SUFFIX));
    id.is_some_and(is_id)
}

fn is_partial_name(name: &str) -> bool {
    name.strip_prefix(TEMP_PREFIX)
        .map(|rest| rest.strip_suffix(".capped").unwrap_or(rest))
        .is_some_and(is_id)
}

fn is_id(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn private_dir_builder() -> fs::DirBuilder {
    #[allow(unused_mut)] // the mode is set on Unix only
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder
}

fn unsafe_dir(dir: &Path, problem: impl Into<String>, fix: impl Into<String>) -> ArtifactError {
    ArtifactError::UnsafeDirectory {
        dir: dir.to_path_buf(),
        problem: problem.into(),
        fix: fix.into(),
    }
}

/// Creates `dir` private, or checks that the existing one may hold artifacts; marks it.
fn prepare_dir(dir: &Path, allow_other_files: bool) -> Result<(), ArtifactError> {
    match fs::symlink_metadata(dir) {
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                private_dir_builder().recursive(true).create(parent)?;
            }
            match private_dir_builder().create(dir) {
                // Created by someone else meanwhile: the checks below judge it.
                Err(error) if error.kind() != io::ErrorKind::AlreadyExists => {
                    return Err(error.into());
                }
                _ => {}
            }
        }
        Err(error) => return Err(error.into()),
    }
    let meta = fs::symlink_metadata(dir)?;
    let pick_another = "choose another directory, or leave it out to use the default";
    if meta.file_type().is_symlink() {
        return Err(unsafe_dir(
            dir,
            "is a symlink (it could lead anywhere)",
            format!("remove the link or {pick_another}"),
        ));
    }
    if !meta.is_dir() {
        return Err(unsafe_dir(dir, "is not a directory", pick_another));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let me = nix::unistd::geteuid().as_raw();
        if meta.uid() != me {
            return Err(unsafe_dir(
                dir,
                format!(
                    "belongs to user id {}, not to you (user id {me})",
                    meta.uid()
                ),
                pick_another,
            ));
        }
        let mode = meta.mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(unsafe_dir(
                dir,
                format!("is open to other users (mode {mode:o})"),
                format!("run `chmod 700 {}`, or {pick_another}", dir.display()),
            ));
        }
    }
    let marker = dir.join(MARKER_FILE);
    match fs::symlink_metadata(&marker) {
        Ok(meta) if meta.file_type().is_file() => return Ok(()),
        Ok(_) => {
            return Err(unsafe_dir(
                dir,
                format!("holds a `{MARKER_FILE}` that is not a regular file"),
                pick_another,
            ));
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(error.into()),
    }
    if !allow_other_files && let Some(entry) = fs::read_dir(dir)?.next() {
        let name = entry?.file_name();
        return Err(unsafe_dir(
            dir,
            format!(
                "already holds files the store did not write (`{}`, …)",
                name.to_string_lossy()
            ),
            "use an empty or new directory for artifacts (from Rust, \
             `DirStore::builder(dir).allow_other_files(true)` shares it; the store then removes \
             only its own artifacts)",
        ));
    }
    write_marker(dir)
}

fn write_marker(dir: &Path) -> Result<(), ArtifactError> {
    match create_private_file(&dir.join(MARKER_FILE), false) {
        Ok(mut file) => file.write_all(MARKER_TEXT.as_bytes())?,
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(error.into()),
    }
    Ok(())
}

fn create_private_file(path: &Path, readable: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).read(readable).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options.open(path)
}

/// Opens `path` for reading, refusing a symlink (`ELOOP`, read as not found) and anything but
/// a regular file.
fn open_no_follow(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|error| {
        #[cfg(unix)]
        if error.raw_os_error() == Some(nix::libc::ELOOP) {
            return io::Error::new(io::ErrorKind::NotFound, "a symlink, not an artifact");
        }
        error
    })?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "not a regular file",
        ));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_store_names_are_artifacts() {
        let id = "0123456789abcdef0123456789abcdef";
        assert!(is_artifact_name(&format!("{id}.txt")));
        assert!(is_artifact_name(&format!("{id}.capped.txt")));
        for other in [
            "requirements.txt",
            "notes.txt",
            "0123456789ABCDEF0123456789ABCDEF.txt",
            "0123456789abcdef0123456789abcde.txt",
            "0123456789abcdef0123456789abcdef.md",
            ".toolsmith-artifacts",
        ] {
            assert!(!is_artifact_name(other), "{other}");
        }
        assert!(is_partial_name(&format!(".partial-{id}")));
        assert!(is_partial_name(&format!(".partial-{id}.capped")));
        assert!(!is_partial_name(".partial-notes"));
    }
}
