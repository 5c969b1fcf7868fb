//! The workspace root every file tool resolves paths through.

use std::fs::{self, File};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use toolsmith::ToolError;

/// The directory the file tools may touch, and nothing outside it.
///
/// Paths are resolved lexically first (`..` can never climb out), then through the filesystem
/// (a symlink that leads outside is refused, whichever component it is). Writes additionally
/// need an existing parent inside the root and never follow a final symlink out. Directories
/// added with [`allow_reading`](Self::allow_reading) may be read, never written. The artifact
/// store needs no such grant: the model reads artifacts through `read_artifact`, so keep the
/// store's directory out of the sandbox.
///
/// This keeps a model's tool calls inside the workspace. It is not a defence against another
/// process racing to swap directories for symlinks between the check and the use; run agents
/// under OS-level isolation for that.
#[derive(Debug, Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    root: PathBuf,
    readable: Vec<PathBuf>,
}

/// The longest path accepted, in bytes (Linux's `PATH_MAX`).
const MAX_PATH_BYTES: usize = 4096;

impl Sandbox {
    /// A sandbox rooted at `root` (resolved to its canonical path).
    ///
    /// # Errors
    ///
    /// When `root` does not exist or is not a directory.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = fs::canonicalize(root.as_ref())?;
        if !root.is_dir() {
            return Err(io::Error::other(format!(
                "{} is not a directory",
                root.display()
            )));
        }
        Ok(Sandbox {
            inner: Arc::new(Inner {
                root,
                readable: Vec::new(),
            }),
        })
    }

    /// Also allows reading (never writing) under `dir`.
    ///
    /// # Errors
    ///
    /// When `dir` does not exist.
    pub fn allow_reading(self, dir: impl AsRef<Path>) -> io::Result<Self> {
        let dir = fs::canonicalize(dir.as_ref())?;
        let mut readable = self.inner.readable.clone();
        readable.push(dir);
        Ok(Sandbox {
            inner: Arc::new(Inner {
                root: self.inner.root.clone(),
                readable,
            }),
        })
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// `path` as the model should see it: relative to the root when inside it.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.inner.root) {
            Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
            Ok(relative) => relative.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    /// Resolves an existing file or directory the model wants to read.
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidArguments`] for an empty path, a NUL byte or an over-long path;
    /// [`ToolError::PermissionDenied`] naming the root when the path (or a symlink on it) leads
    /// outside; [`ToolError::NotFound`] when it does not exist.
    pub fn resolve_existing(&self, path: &str) -> Result<PathBuf, ToolError> {
        let lexical = self.lexical(path, Access::Read)?;
        let canonical = fs::canonicalize(&lexical).map_err(|error| self.io_error(path, error))?;
        if !self.may_read(&canonical) {
            return Err(self.escapes_through_symlink(path, &canonical));
        }
        Ok(canonical)
    }

    /// Resolves a file the model wants to create or overwrite: its parent must exist inside the
    /// root, and if the file is a symlink, what it points to must be inside the root too.
    ///
    /// # Errors
    ///
    /// As [`resolve_existing`](Self::resolve_existing), plus [`ToolError::NotFound`] for a
    /// missing parent directory and [`ToolError::InvalidArguments`] for a directory.
    pub fn resolve_for_write(&self, path: &str) -> Result<PathBuf, ToolError> {
        let lexical = self.lexical(path, Access::Write)?;
        if lexical == self.inner.root {
            return Err(is_a_directory(path));
        }
        let (Some(parent), Some(name)) = (lexical.parent(), lexical.file_name()) else {
            return Err(ToolError::invalid_arguments(format!(
                "path: `{path}` names no file; give a file path such as `src/notes.md`"
            )));
        };
        let parent = fs::canonicalize(parent).map_err(|error| match error.kind() {
            io::ErrorKind::NotFound => ToolError::not_found(format!(
                "the directory `{}` (create it first, or write somewhere that exists)",
                self.display(parent)
            )),
            _ => self.io_error(path, error),
        })?;
        if !parent.starts_with(&self.inner.root) {
            return Err(self.escapes_through_symlink(path, &parent));
        }
        let target = parent.join(name);
        match fs::symlink_metadata(&target) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let resolved =
                    fs::canonicalize(&target).map_err(|error| self.io_error(path, error))?;
                if !resolved.starts_with(&self.inner.root) {
                    return Err(self.escapes_through_symlink(path, &resolved));
                }
                if resolved.is_dir() {
                    return Err(is_a_directory(path));
                }
                Ok(resolved)
            }
            Ok(meta) if meta.is_dir() => Err(is_a_directory(path)),
            _ => Ok(target),
        }
    }

    /// Joins and normalises `path` without touching the filesystem, refusing what leaves the
    /// root (or, for reads, the readable directories).
    fn lexical(&self, path: &str, access: Access) -> Result<PathBuf, ToolError> {
        if path.is_empty() {
            return Err(ToolError::invalid_arguments(
                "path: is empty; give a path relative to the workspace root",
            ));
        }
        if path.contains('\0') {
            return Err(ToolError::invalid_arguments("path: contains a NUL byte"));
        }
        if path.len() > MAX_PATH_BYTES {
            return Err(ToolError::invalid_arguments(format!(
                "path: is {} bytes long; paths are limited to {MAX_PATH_BYTES} bytes",
                path.len()
            )));
        }
        let given = Path::new(path);
        let joined = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.inner.root.join(given)
        };
        let mut normal = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::ParentDir => {
                    normal.pop();
                }
                Component::CurDir => {}
                other => normal.push(other),
            }
        }
        let allowed = match access {
            Access::Read => self.may_read(&normal),
            Access::Write => normal.starts_with(&self.inner.root),
        };
        if !allowed {
            return Err(ToolError::permission_denied(format!(
                "`{path}` is outside the workspace root `{}`; use a path inside it",
                self.inner.root.display()
            )));
        }
        Ok(normal)
    }

    fn may_read(&self, path: &Path) -> bool {
        path.starts_with(&self.inner.root)
            || self.inner.readable.iter().any(|dir| path.starts_with(dir))
    }

    fn escapes_through_symlink(&self, path: &str, resolved: &Path) -> ToolError {
        ToolError::permission_denied(format!(
            "`{path}` leads through a symlink to `{}`, outside the workspace root `{}`",
            resolved.display(),
            self.inner.root.display()
        ))
    }

    fn io_error(&self, path: &str, error: io::Error) -> ToolError {
        match error.kind() {
            io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied => ToolError::io(path, error),
            // ELOOP: too many levels of symbolic links.
            _ if error.raw_os_error() == Some(nix::libc::ELOOP) => ToolError::permission_denied(
                format!("`{path}` is a symlink loop (too many levels of symbolic links)"),
            ),
            _ if error.raw_os_error() == Some(nix::libc::ENAMETOOLONG) => {
                ToolError::invalid_arguments(format!("path: a component of `{path}` is too long"))
            }
            _ => ToolError::failed_with(format!("`{path}` could not be resolved: {error}"), error),
        }
    }
}

#[derive(Clone, Copy)]
enum Access {
    Read,
    Write,
}

/// Opens a file the model named for reading, refusing anything but a regular file (a FIFO,
/// socket or device could block the reader forever or never end) before a byte is read.
///
/// The open itself never blocks: it is non-blocking, and a FIFO is refused on its type.
pub(crate) fn open_regular(path: &Path, shown: &str) -> Result<(File, fs::Metadata), ToolError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
        .map_err(|error| ToolError::io(shown, error))?;
    let meta = file
        .metadata()
        .map_err(|error| ToolError::io(shown, error))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_arguments(format!(
            "path: `{shown}` is a directory; use list_directory to see what it holds"
        )));
    }
    if !meta.is_file() {
        return Err(not_a_regular_file(shown, &meta));
    }
    Ok((file, meta))
}

/// The refusal of a FIFO, socket or device.
pub(crate) fn not_a_regular_file(shown: &str, meta: &fs::Metadata) -> ToolError {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = meta.file_type();
    let what = if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    };
    ToolError::invalid_arguments(format!(
        "path: `{shown}` is {what}; the file tools read and write regular files only"
    ))
}

fn is_a_directory(path: &str) -> ToolError {
    ToolError::invalid_arguments(format!("path: `{path}` is a directory, not a file"))
}
