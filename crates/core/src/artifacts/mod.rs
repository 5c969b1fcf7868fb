//! Where full outputs go when the model sees a trimmed one.
//!
//! An [`ArtifactStore`] keeps the full text of every trimmed result under an unguessable
//! [`ArtifactId`]; the marker names the id, and the built-in `read_artifact` tool pages
//! through it. [`DirStore`] (a private directory on disk) is the default; `BucketStore` (with
//! the `object-store` feature) keeps artifacts in an S3, GCS or Azure bucket, so they outlive
//! the machine and every gateway replica reads them; [`MemoryStore`] is for tests and
//! short-lived agents. [`open_location`] opens the store a path or URL names.

#[cfg(feature = "object-store")]
mod bucket;
mod capped;
mod dir;
mod id;
mod media;
mod memory;
mod owner;
mod page;
#[cfg(feature = "object-store")]
mod page_index;
mod retention;
mod spool;

use std::fmt;
use std::io::{self, Write};
use std::path::PathBuf;

/// The `object_store` crate `BucketStore` is built on, for [`BucketStore::builder`] over a
/// store configured by hand.
#[cfg(feature = "object-store")]
#[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
pub use ::object_store;
#[cfg(feature = "object-store")]
#[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
pub use bucket::{BucketStore, BucketStoreBuilder};
pub use dir::{DirStore, DirStoreBuilder};
pub use id::ArtifactId;
pub use memory::MemoryStore;
pub use owner::Owner;
pub use retention::Retention;

/// The name of the built-in artifact reader, as markers and compacted history cite it (the
/// registry registers the tool itself, `ReadArtifact`, with an artifact store).
pub const READ_ARTIFACT: &str = "read_artifact";
pub(crate) use media::StoredMedia;
pub(crate) use media::{MediaRead, is_mime_type, store_media, too_large_to_read, try_read_media};
pub(crate) use spool::{SpoolSlot, spool_to};

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
    /// The directory cannot be trusted with artifacts: a symlink, another user's, readable by
    /// others, or holding files the store did not write. Nothing was written to it.
    #[error("artifact directory `{}` {problem}; {fix}", dir.display())]
    UnsafeDirectory {
        /// The directory.
        dir: PathBuf,
        /// What is wrong with it, e.g. `is a symlink`.
        problem: String,
        /// What to do about it, e.g. ``run `chmod 700 <dir>` ``.
        fix: String,
    },
    /// A name that cannot name an owner of artifacts.
    #[error(
        "`{0}` cannot name an owner of artifacts: use 1 to 64 of A-Z a-z 0-9 _ . - (not starting with a dot)"
    )]
    InvalidOwner(String),
    /// A remote store failed: its endpoint did not answer in time, refused the credentials, or
    /// has no such bucket. Nothing was kept (a commit) or read.
    #[error("artifact store {location} failed: {reason}")]
    Remote {
        /// The store, as its URL names it.
        location: String,
        /// What went wrong, as the store's client said it.
        reason: String,
    },
    /// A location [`open_location`] cannot open: a URL of a scheme no store serves.
    #[error(
        "`{0}` is not an artifact store location: give a directory, or a URL of one of the schemes \
         s3:// (s3a://), gs://, az:// (azure://, abfs://, abfss://, adl://) or file://"
    )]
    UnsupportedLocation(String),
    /// The store cannot keep owners' artifacts apart ([`ArtifactStore::scoped`]).
    #[error(
        "this artifact store cannot keep each client's artifacts apart; use a DirStore or a MemoryStore"
    )]
    Unscoped,
}

/// What part of an artifact to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    /// The first line to return, counting from 0.
    pub offset: usize,
    /// Where in line `offset` the page starts, in chars from its beginning (0: the whole line):
    /// how a line longer than a page is read, page by page.
    pub char_offset: usize,
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
    /// The chars of the first line the page skipped (the request's char offset, or fewer when
    /// the line is shorter).
    pub first_char: usize,
    /// How many lines (whole or cut) the page holds.
    pub lines: usize,
    /// Whether the page's last line was cut by `max_bytes`: it goes on at
    /// [`next`](Self::next)'s char offset.
    pub cut_mid_line: bool,
    /// The chars of the page's last line the page holds, counted from where the line (or, for
    /// the first line, the page) starts.
    pub last_line_chars: usize,
    /// The artifact's lines in all.
    pub total_lines: usize,
    /// The artifact's size in bytes.
    pub total_bytes: u64,
    /// Whether the artifact was capped when it was stored: it keeps the head and the tail of
    /// the output, and a `[toolsmith: …]` line where the middle was left out.
    pub capped: bool,
}

impl ArtifactPage {
    /// Where the next page starts, `(line offset, char offset)`, or `None` at the end: after the
    /// page's last line, or inside it when `max_bytes` cut it.
    pub fn next(&self) -> Option<(usize, usize)> {
        if self.lines == 0 {
            return None;
        }
        let last = self.offset + self.lines - 1;
        if self.cut_mid_line {
            let start = if self.lines == 1 { self.first_char } else { 0 };
            return Some((last, start + self.last_line_chars));
        }
        (last + 1 < self.total_lines).then_some((last + 1, 0))
    }

    /// The line offset of the next page, or `None` at the end (see [`next`](Self::next), which
    /// also says where inside a cut line it goes on).
    pub fn next_offset(&self) -> Option<usize> {
        self.next().map(|(line, _)| line)
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

    /// The directory the artifacts are files in, if they are: what a sandbox keeps commands
    /// from reading. By default `None` (the store keeps them elsewhere).
    fn location(&self) -> Option<&std::path::Path> {
        None
    }

    /// The part of this store that belongs to `owner`: what it keeps there, only it reads — an
    /// id kept by another owner, or by the store itself, is not found there. A session's part
    /// is removed once the last handle of the store returned is dropped; a principal's stays,
    /// under the store's retention, for its next session (in this process or another on the
    /// same store). A gateway serves each client from its owner's part.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Unscoped`] from a store that cannot keep owners apart (the default);
    /// [`ArtifactError::Io`] when the owner's part cannot be made.
    fn scoped(&self, owner: &Owner) -> Result<std::sync::Arc<dyn ArtifactStore>, ArtifactError> {
        let _ = owner;
        Err(ArtifactError::Unscoped)
    }
}

/// An artifact being written.
pub trait ArtifactWriter: Write + Send {
    /// Makes the artifact visible and returns its id.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Io`] when the final write or the rename fails; nothing is left behind.
    fn commit(self: Box<Self>) -> Result<ArtifactId, ArtifactError>;

    /// Bytes written so far that the artifact will not keep because it is over its store's
    /// size cap (the middle of the output is left out). 0 for stores without a cap.
    fn omitted_bytes(&self) -> u64 {
        0
    }
}

/// Opens the artifact store `location` names: a directory (a [`DirStore`], opened as
/// [`DirStore::open`] does), a `file://` URL of one, or — with the `object-store` feature — a
/// bucket: `s3://bucket/prefix`, `gs://bucket/prefix`, `az://container/prefix` (a `BucketStore`
/// with its default settings; see `BucketStore::from_url` for the environment it reads).
///
/// Anything that looks like a URL (`scheme:` before any `/`) is read as one: a scheme no store
/// serves is refused, never taken for a directory named after it.
///
/// # Errors
///
/// [`ArtifactError::UnsupportedLocation`] naming the schemes there are; the store's own errors
/// opening it.
pub fn open_location(location: &str) -> Result<std::sync::Arc<dyn ArtifactStore>, ArtifactError> {
    let Some((scheme, rest)) = location.split_once(':').filter(|(scheme, _)| {
        // One letter is a Windows drive (`C:\…`), not a scheme.
        scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    }) else {
        return Ok(std::sync::Arc::new(DirStore::open(location)?));
    };
    let unsupported = || ArtifactError::UnsupportedLocation(location.to_owned());
    match scheme.to_ascii_lowercase().as_str() {
        "file" => {
            let path = rest
                .strip_prefix("//")
                .filter(|path| path.starts_with('/') && !path.contains(['%', '?', '#']))
                .ok_or_else(unsupported)?;
            Ok(std::sync::Arc::new(DirStore::open(path)?))
        }
        #[cfg(feature = "object-store")]
        "s3" | "s3a" | "gs" | "az" | "azure" | "abfs" | "abfss" | "adl"
            if rest.starts_with("//") =>
        {
            Ok(std::sync::Arc::new(
                BucketStore::from_url(location)?.open()?,
            ))
        }
        #[cfg(not(feature = "object-store"))]
        "s3" | "s3a" | "gs" | "az" | "azure" | "abfs" | "abfss" | "adl" => {
            Err(ArtifactError::Remote {
                location: location.to_owned(),
                reason: "this build of toolsmith has no bucket stores (its `object-store` feature \
                         is off)"
                    .to_owned(),
            })
        }
        _ => Err(unsupported()),
    }
}

/// Stores `text` whole (or, over the store's cap, its head and tail) and returns its id with
/// the bytes the store left out.
///
/// # Errors
///
/// As [`ArtifactStore::begin`], [`Write::write_all`] and [`ArtifactWriter::commit`].
/// The resource template every artifact is read by, as MCP lists one
/// (`resources/templates/list`): the proxy's and `serve`'s own, beside the servers'.
#[cfg(feature = "mcp")]
pub(crate) fn artifact_template() -> serde_json::Value {
    serde_json::json!({
        "uriTemplate": format!("{}{{id}}{{?offset,limit,char_offset}}", ArtifactId::URI_PREFIX),
        "name": "artifact",
        "title": "A tool result's full output",
        "description": "The full output of a tool result that was cut to fit, kept by toolsmith \
            and named in the result's marker and in its _meta (toolsmith/cut). Read in pages: \
            offset is the first line (0-based), limit the lines; a read without them gives \
            the first page and says where the next starts.",
        "mimeType": "text/plain",
    })
}

pub(crate) fn store_text(
    store: &dyn ArtifactStore,
    text: &str,
) -> Result<(ArtifactId, u64), ArtifactError> {
    let mut writer = store.begin()?;
    writer.write_all(text.as_bytes())?;
    let omitted = writer.omitted_bytes();
    Ok((writer.commit()?, omitted))
}
