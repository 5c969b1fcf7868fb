//! Where full outputs go when the model sees a trimmed one.
//!
//! An [`ArtifactStore`] keeps the full text of every trimmed result under an unguessable
//! [`ArtifactId`]; the marker names the id, and the built-in `read_artifact` tool pages
//! through it. [`DirStore`] (a private directory on disk) is the default; [`MemoryStore`] is
//! for tests and short-lived agents.

use std::collections::HashMap;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// The id of a stored artifact: 32 lowercase hex digits (128 random bits).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArtifactId(String);

impl ArtifactId {
    const LEN: usize = 32;

    /// A new random id.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Io`] if the operating system's random source fails.
    pub fn generate() -> Result<Self, ArtifactError> {
        let mut bytes = [0u8; Self::LEN / 2];
        getrandom::fill(&mut bytes)
            .map_err(|error| ArtifactError::Io(io::Error::other(error.to_string())))?;
        let mut id = String::with_capacity(Self::LEN);
        for byte in bytes {
            use fmt::Write as _;
            let _ = write!(id, "{byte:02x}");
        }
        Ok(ArtifactId(id))
    }

    /// Parses an id as the model writes it, refusing anything that is not 32 hex digits (so an
    /// id can never name a path outside the store).
    ///
    /// # Errors
    ///
    /// [`ArtifactError::InvalidId`] naming what was given.
    pub fn parse(id: &str) -> Result<Self, ArtifactError> {
        let id = id.trim();
        if id.len() == Self::LEN && id.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(ArtifactId(id.to_ascii_lowercase()))
        } else {
            Err(ArtifactError::InvalidId(id.chars().take(80).collect()))
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ArtifactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An artifact store failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArtifactError {
    /// The id is not of the form the store issues.
    #[error("`{0}` is not an artifact id (expected 32 hex digits)")]
    InvalidId(String),
    /// No artifact has this id (it never existed, or retention removed it).
    #[error("no artifact `{0}` (it may have expired)")]
    NotFound(ArtifactId),
    /// The store's I/O failed: disk full, permissions, a missing directory.
    #[error("artifact store I/O failed: {0}")]
    Io(#[from] io::Error),
}

/// What part of an artifact to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    /// The first line to return, counting from 0.
    pub offset: usize,
    /// How many lines to return; `None` means as many as `max_bytes` allows.
    pub limit: Option<usize>,
    /// The most bytes of text to return; a page stops before the line that would exceed it
    /// (or inside it, on a char boundary, when it is the page's first line).
    pub max_bytes: usize,
}

/// One page of an artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArtifactPage {
    /// The text of the lines read, each with its line break.
    pub text: String,
    /// The 0-based index of the first line returned (the request's offset).
    pub offset: usize,
    /// How many lines (whole or cut) the page holds.
    pub lines: usize,
    /// Whether the page's last line was cut by `max_bytes`.
    pub cut_mid_line: bool,
    /// The artifact's lines in all.
    pub total_lines: usize,
    /// The artifact's size in bytes.
    pub total_bytes: u64,
}

impl ArtifactPage {
    /// The offset to read the next page from, or `None` at the end.
    /// A line cut by `max_bytes` is not read again: the next page starts after it.
    pub fn next_offset(&self) -> Option<usize> {
        let next = self.offset + self.lines;
        (self.lines > 0 && next < self.total_lines).then_some(next)
    }
}

/// A store for full outputs.
///
/// Implementations are called from blocking threads (the registry uses
/// `tokio::task::spawn_blocking`), so plain blocking I/O is right here.
pub trait ArtifactStore: Send + Sync + fmt::Debug + 'static {
    /// Starts a new artifact; write to it, then [`commit`](ArtifactWriter::commit). Nothing is
    /// visible under the id before the commit, and dropping the writer discards it.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Io`] when the artifact cannot be created.
    fn begin(&self) -> Result<Box<dyn ArtifactWriter>, ArtifactError>;

    /// Stores `content` whole.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Io`] when it cannot be written.
    fn put(&self, content: &str) -> Result<ArtifactId, ArtifactError> {
        let mut writer = self.begin()?;
        writer.write_all(content.as_bytes())?;
        writer.commit()
    }

    /// Reads a page of lines, in memory bounded by the page, not by the artifact.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::NotFound`] for an unknown id; [`ArtifactError::Io`] when reading fails.
    fn read_page(&self, id: &ArtifactId, page: PageRequest) -> Result<ArtifactPage, ArtifactError>;
}

/// An artifact being written.
pub trait ArtifactWriter: Write + Send {
    /// Makes the artifact visible and returns its id.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Io`] when the final write or the rename fails; nothing is left behind.
    fn commit(self: Box<Self>) -> Result<ArtifactId, ArtifactError>;
}

/// How long artifacts of a [`DirStore`] are kept.
///
/// By default: 24 hours, and 1 GiB in all (the oldest go first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retention {
    /// Artifacts older than this are removed. `None` means no age limit.
    pub max_age: Option<Duration>,
    /// When the artifacts' total size exceeds this, the oldest are removed until it does not
    /// (the newest artifact is always kept). `None` means no size limit.
    pub max_total_bytes: Option<u64>,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_age: Some(Duration::from_secs(24 * 60 * 60)),
            max_total_bytes: Some(1 << 30),
        }
    }
}

impl Retention {
    /// Keep everything.
    pub fn forever() -> Self {
        Retention {
            max_age: None,
            max_total_bytes: None,
        }
    }

    /// Sets [`max_age`](Self::max_age).
    #[must_use]
    pub fn with_max_age(mut self, max_age: Option<Duration>) -> Self {
        self.max_age = max_age;
        self
    }

    /// Sets [`max_total_bytes`](Self::max_total_bytes).
    #[must_use]
    pub fn with_max_total_bytes(mut self, max: Option<u64>) -> Self {
        self.max_total_bytes = max;
        self
    }
}

/// Artifacts as files in a private directory.
///
/// The directory is created with mode 0700 and each artifact with mode 0600 (on Unix). An
/// artifact is written to a temporary file and renamed into place on commit, so a reader never
/// sees part of one. After each commit, [`Retention`] removes what is too old or too much.
#[derive(Debug, Clone)]
pub struct DirStore {
    dir: Arc<PathBuf>,
    retention: Retention,
}

const ARTIFACT_EXT: &str = "txt";
const TEMP_PREFIX: &str = ".partial-";

impl DirStore {
    /// Opens a store in `dir`, creating it (and its missing parents) with mode 0700 if it does
    /// not exist. An existing directory is used as it is: its mode is not changed.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Io`] when the directory cannot be created or its mode set.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, ArtifactError> {
        let dir = dir.into();
        create_private_dir(&dir)?;
        Ok(DirStore {
            dir: Arc::new(dir),
            retention: Retention::default(),
        })
    }

    /// Opens a store in a new directory of its own under the system's temporary directory
    /// (`toolsmith-artifacts-<random>`), so concurrent agents never share one.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Io`] when the directory cannot be created.
    pub fn new_session() -> Result<Self, ArtifactError> {
        let name = format!("toolsmith-artifacts-{}", &ArtifactId::generate()?.0[..16]);
        Self::open(std::env::temp_dir().join(name))
    }

    /// Sets the retention policy.
    #[must_use]
    pub fn with_retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// The store's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The file an artifact lives in.
    pub fn file_of(&self, id: &ArtifactId) -> PathBuf {
        self.dir.join(format!("{}.{ARTIFACT_EXT}", id.as_str()))
    }

    /// Applies the retention policy now; returns how many artifacts were removed.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Io`] when the directory cannot be listed.
    pub fn prune(&self) -> Result<usize, ArtifactError> {
        let now = SystemTime::now();
        let mut kept = Vec::new();
        let mut removed = 0;
        for entry in fs::read_dir(&*self.dir)? {
            let entry = entry?;
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some(ARTIFACT_EXT) {
                continue;
            }
            // An artifact removed by a concurrent prune is simply gone.
            let Ok(meta) = entry.metadata() else { continue };
            let modified = meta.modified().unwrap_or(now);
            let age = now.duration_since(modified).unwrap_or_default();
            if self.retention.max_age.is_some_and(|max| age > max) {
                removed += usize::from(fs::remove_file(&path).is_ok());
            } else {
                kept.push((modified, meta.len(), path));
            }
        }
        if let Some(max_total) = self.retention.max_total_bytes {
            kept.sort_by_key(|(modified, _, _)| *modified);
            let mut total: u64 = kept.iter().map(|(_, len, _)| len).sum();
            let newest = kept.len().saturating_sub(1);
            for (_, len, path) in &kept[..newest] {
                if total <= max_total {
                    break;
                }
                if fs::remove_file(path).is_ok() {
                    total -= len;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }
}

impl ArtifactStore for DirStore {
    fn begin(&self) -> Result<Box<dyn ArtifactWriter>, ArtifactError> {
        let id = ArtifactId::generate()?;
        let temp = self.dir.join(format!("{TEMP_PREFIX}{}", id.as_str()));
        let file = create_private_file(&temp)?;
        Ok(Box::new(DirWriter {
            store: self.clone(),
            id: Some(id),
            temp,
            file: BufWriter::with_capacity(64 * 1024, file),
        }))
    }

    fn read_page(&self, id: &ArtifactId, page: PageRequest) -> Result<ArtifactPage, ArtifactError> {
        let file = match File::open(self.file_of(id)) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Err(ArtifactError::NotFound(id.clone()));
            }
            Err(error) => return Err(error.into()),
        };
        read_page_from(BufReader::with_capacity(64 * 1024, file), page)
    }
}

struct DirWriter {
    store: DirStore,
    id: Option<ArtifactId>,
    temp: PathBuf,
    file: BufWriter<File>,
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
        fs::rename(&self.temp, self.store.file_of(&id))?;
        // Retention is housekeeping: its failure must not fail the artifact just written.
        let _ = self.store.prune();
        Ok(id)
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

/// Creates `dir` (and missing parents) with mode 0700; an existing directory keeps its mode.
fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)?;
    if fs::metadata(dir)?.is_dir() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "{} is not a directory",
            dir.display()
        )))
    }
}

fn create_private_file(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Artifacts in memory, for tests and short-lived agents. Clones share the same artifacts.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    artifacts: Arc<Mutex<HashMap<ArtifactId, Arc<[u8]>>>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many artifacts it holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The full text of an artifact.
    pub fn get(&self, id: &ArtifactId) -> Option<String> {
        let bytes = self.lock().get(id).cloned()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ArtifactId, Arc<[u8]>>> {
        // The map stays consistent even if a holder panicked: every update is one insert.
        self.artifacts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl ArtifactStore for MemoryStore {
    fn begin(&self) -> Result<Box<dyn ArtifactWriter>, ArtifactError> {
        Ok(Box::new(MemoryWriter {
            store: self.clone(),
            buffer: Vec::new(),
        }))
    }

    fn read_page(&self, id: &ArtifactId, page: PageRequest) -> Result<ArtifactPage, ArtifactError> {
        let bytes = self
            .lock()
            .get(id)
            .cloned()
            .ok_or_else(|| ArtifactError::NotFound(id.clone()))?;
        read_page_from(&bytes[..], page)
    }
}

struct MemoryWriter {
    store: MemoryStore,
    buffer: Vec<u8>,
}

impl Write for MemoryWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl ArtifactWriter for MemoryWriter {
    fn commit(self: Box<Self>) -> Result<ArtifactId, ArtifactError> {
        let id = ArtifactId::generate()?;
        self.store.lock().insert(id.clone(), self.buffer.into());
        Ok(id)
    }
}

/// Reads one page of lines from `reader`, holding at most the page and one buffer in memory,
/// and counts the lines to the end.
fn read_page_from(
    mut reader: impl BufRead,
    page: PageRequest,
) -> Result<ArtifactPage, ArtifactError> {
    let mut line = 0usize; // the 0-based line the reader is in
    let mut total_bytes = 0u64;
    let mut last_byte = None;
    let mut text = Vec::new();
    let mut lines = 0usize;
    let mut cut_mid_line = false;
    let mut collecting = page.limit != Some(0);
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            break;
        }
        let len = buffer.len();
        total_bytes += len as u64;
        last_byte = buffer.last().copied();
        let mut at = 0;
        while at < len {
            let rest = &buffer[at..];
            if line < page.offset {
                // Skip to the start of line `offset` at memchr speed.
                let mut newlines = memchr::memchr_iter(b'\n', rest);
                let mut skipped_to = None;
                while line < page.offset {
                    let Some(i) = newlines.next() else { break };
                    line += 1;
                    skipped_to = Some(i + 1);
                }
                at = match skipped_to {
                    Some(end) if line == page.offset => at + end,
                    _ => len,
                };
                continue;
            }
            if !collecting {
                // Only the count remains.
                line += memchr::memchr_iter(b'\n', rest).count();
                break;
            }
            let newline = memchr::memchr(b'\n', rest);
            let segment = &rest[..newline.map_or(rest.len(), |i| i + 1)];
            let starts_line = text.is_empty() || text.last() == Some(&b'\n');
            if text.len() + segment.len() > page.max_bytes {
                // A line that does not fit ends the page; the first one is kept in part.
                if !starts_line || lines == 0 {
                    text.extend_from_slice(&segment[..page.max_bytes - text.len()]);
                    lines += usize::from(starts_line);
                    cut_mid_line = true;
                }
                collecting = false;
                continue;
            }
            text.extend_from_slice(segment);
            lines += usize::from(starts_line);
            at += segment.len();
            if newline.is_some() {
                line += 1;
                if page.limit.is_some_and(|limit| lines >= limit) {
                    collecting = false;
                }
            }
        }
        reader.consume(len);
    }
    let total_lines = line + usize::from(last_byte.is_some_and(|b| b != b'\n'));
    let text = match String::from_utf8(text) {
        Ok(text) => text,
        // A cut inside a char leaves an incomplete sequence at the end: drop it.
        Err(error) if error.utf8_error().error_len().is_none() => {
            let valid = error.utf8_error().valid_up_to();
            let mut bytes = error.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    };
    Ok(ArtifactPage {
        text,
        offset: page.offset,
        lines,
        cut_mid_line,
        total_lines,
        total_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(offset: usize, limit: Option<usize>, max_bytes: usize) -> PageRequest {
        PageRequest {
            offset,
            limit,
            max_bytes,
        }
    }

    #[test]
    fn pages_lines_and_counts_the_rest() {
        let text = b"zero\none\ntwo\nthree\nfour";
        let got = read_page_from(&text[..], page(1, Some(2), 1000)).unwrap();
        assert_eq!(got.text, "one\ntwo\n");
        assert_eq!((got.lines, got.total_lines), (2, 5));
        assert_eq!(got.next_offset(), Some(3));
        let last = read_page_from(&text[..], page(3, None, 1000)).unwrap();
        assert_eq!(last.text, "three\nfour");
        assert_eq!(last.next_offset(), None);
    }

    #[test]
    fn a_page_stops_before_a_line_that_does_not_fit() {
        let text = b"aaaa\nbbbb\ncccc\n";
        let got = read_page_from(&text[..], page(0, None, 12)).unwrap();
        assert_eq!(got.text, "aaaa\nbbbb\n");
        assert!(!got.cut_mid_line);
        assert_eq!(got.next_offset(), Some(2));
    }

    #[test]
    fn a_huge_first_line_is_cut_on_a_char_boundary() {
        let text = "ééééé\nnext\n";
        let got = read_page_from(text.as_bytes(), page(0, None, 5)).unwrap();
        assert_eq!(got.text, "éé");
        assert!(got.cut_mid_line);
        assert_eq!(got.lines, 1);
    }

    #[test]
    fn ids_are_hex_and_refuse_paths() {
        let id = ArtifactId::generate().unwrap();
        assert_eq!(ArtifactId::parse(id.as_str()).unwrap(), id);
        assert!(ArtifactId::parse("../../etc/passwd").is_err());
        assert!(ArtifactId::parse("").is_err());
        assert_ne!(ArtifactId::generate().unwrap(), id);
    }
}
