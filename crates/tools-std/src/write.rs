//! `write_file` and `edit_file`: whole-file writes, made atomic.

use std::fs::{self, OpenOptions};
use std::io::{Read as _, Write as _};
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith::tokens::{CharsPerToken, TokenCounter as _};
use toolsmith::{Tool, ToolContext, ToolError};

use crate::sandbox::{Sandbox, not_a_regular_file, open_regular};
use crate::{blocking, grouped};

/// The largest file `edit_file` edits (it holds the file in memory).
const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// Writes a text file of the workspace, creating it or replacing all of it.
///
/// The parent directory must exist. The file is written to a temporary file and renamed into
/// place, so it is never left half-written.
#[derive(Debug, Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(
    state = Sandbox,
    name = "write_file",
    preserve,
    destructive,
    idempotent,
    max_result_chars = 1_000
)]
pub struct WriteFile {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The whole new content of the file.
    pub content: String,
}

impl WriteFile {
    async fn run(self, cx: &ToolContext) -> Result<String, ToolError> {
        let sandbox = cx.state::<Sandbox>()?;
        let path = sandbox.resolve_for_write(&self.path)?;
        let shown = sandbox.display(&path);
        blocking(move || {
            let existed = match fs::symlink_metadata(&path) {
                Ok(meta) if !meta.is_file() => return Err(not_a_regular_file(&shown, &meta)),
                Ok(_) => true,
                Err(_) => false,
            };
            write_atomically(&path, self.content.as_bytes())?;
            let verb = if existed { "Replaced" } else { "Created" };
            Ok(format!(
                "{verb} `{shown}`: {} bytes, {} lines.",
                grouped(self.content.len()),
                grouped(toolsmith::trim::line_count(&self.content))
            ))
        })
        .await
    }
}

/// Replaces an exact piece of text in a file of the workspace.
///
/// `old_string` must occur exactly once (whitespace and indentation included), unless
/// `replace_all` is set; otherwise nothing is changed and the error says where the matches are.
#[derive(Debug, Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(state = Sandbox, name = "edit_file", preserve, destructive, max_result_chars = 2_000)]
pub struct EditFile {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The exact text to replace.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one. Defaults to false.
    #[serde(default)]
    pub replace_all: bool,
}

impl EditFile {
    async fn run(self, cx: &ToolContext) -> Result<String, ToolError> {
        let sandbox = cx.state::<Sandbox>()?;
        let path = sandbox.resolve_for_write(&self.path)?;
        let shown = sandbox.display(&path);
        blocking(move || self.edit(&path, &shown)).await
    }

    fn edit(&self, path: &Path, shown: &str) -> Result<String, ToolError> {
        if self.old_string.is_empty() {
            return Err(ToolError::invalid_arguments(
                "old_string: is empty; give the exact text to replace (use write_file to create \
                 a file)",
            ));
        }
        if self.old_string == self.new_string {
            return Err(ToolError::invalid_arguments(
                "new_string: is the same as old_string, so nothing would change",
            ));
        }
        let (mut file, meta) = open_regular(path, shown).map_err(|error| match error {
            ToolError::NotFound { .. } => ToolError::not_found(format!(
                "`{shown}` (edit_file changes existing files; use write_file to create one)"
            )),
            other => other,
        })?;
        if meta.len() > MAX_EDIT_BYTES {
            let tokens = |bytes: u64| {
                CharsPerToken::default().count_chars(usize::try_from(bytes).unwrap_or(usize::MAX))
            };
            return Err(ToolError::too_large(
                "The file",
                tokens(meta.len()),
                tokens(MAX_EDIT_BYTES),
                "edit_file edits files of up to 16 MiB.",
            ));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        // A file that grew since its size was read is still read only to the limit.
        (&mut file)
            .take(MAX_EDIT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|error| ToolError::io(shown, error))?;
        let text = String::from_utf8(bytes).map_err(|_| {
            ToolError::invalid_arguments(format!(
                "path: `{shown}` is not valid UTF-8 text; edit_file edits text files"
            ))
        })?;
        // The first matches, for the message; the count of all of them.
        let finder = memchr::memmem::Finder::new(self.old_string.as_bytes());
        let mut starts = Vec::new();
        let mut count = 0usize;
        let mut from = 0;
        while let Some(at) = finder.find(&text.as_bytes()[from..]) {
            if starts.len() < 20 {
                starts.push(from + at);
            }
            count += 1;
            from += at + self.old_string.len();
        }
        let line_of = |at: usize| 1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..at]).count();
        match count {
            0 => {
                return Err(ToolError::failed(format!(
                    "old_string was not found in `{shown}`; nothing was changed. Read the file \
                     and copy the text exactly, whitespace and indentation included."
                )));
            }
            1 => {}
            n if !self.replace_all => {
                let lines: Vec<String> = starts.iter().map(|&at| line_of(at).to_string()).collect();
                let more = if n > starts.len() { ", …" } else { "" };
                return Err(ToolError::failed(format!(
                    "old_string occurs {n} times in `{shown}` (at lines {}{more}); nothing was \
                     changed. Include more of the surrounding text to pick one, or set \
                     replace_all to change them all.",
                    lines.join(", ")
                )));
            }
            _ => {}
        }
        // The size of the result before it is built: a small file times a long replacement
        // must not exhaust memory.
        let result_bytes = text.len() as u128 - (count as u128) * self.old_string.len() as u128
            + (count as u128) * self.new_string.len() as u128;
        if result_bytes > u128::from(MAX_EDIT_BYTES) {
            return Err(ToolError::failed(format!(
                "replacing {} occurrences would make `{shown}` {} bytes, over the {} bytes \
                 edit_file writes; nothing was changed. Replace fewer occurrences (a longer \
                 old_string, no replace_all), or write the file in parts with write_file.",
                grouped(count),
                grouped(usize::try_from(result_bytes).unwrap_or(usize::MAX)),
                grouped(usize::try_from(MAX_EDIT_BYTES).unwrap_or(usize::MAX)),
            )));
        }
        let first_line = line_of(starts[0]);
        let edited = text.replace(&self.old_string, &self.new_string);
        write_atomically(path, edited.as_bytes())?;
        let removed = toolsmith::trim::line_count(&self.old_string);
        let added = toolsmith::trim::line_count(&self.new_string);
        let occurrences = match count {
            1 => format!("1 occurrence at line {first_line}"),
            n => format!("{n} occurrences, the first at line {first_line}"),
        };
        Ok(format!(
            "Edited `{shown}`: replaced {occurrences} ({removed} lines out, {added} in)."
        ))
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename: the
/// file is either untouched or wholly new. An existing file keeps its permissions.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    let dir = path
        .parent()
        .ok_or_else(|| ToolError::failed("the file has no directory"))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let permissions = fs::metadata(path).ok().map(|meta| meta.permissions());
    let mut attempt = 0u32;
    let (temp, mut file) = loop {
        let temp = dir.join(format!(
            ".{name}.toolsmith-{}-{attempt}",
            std::process::id()
        ));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => break (temp, file),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(error) => return Err(error.into()),
        }
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| match permissions {
            Some(permissions) => fs::set_permissions(&temp, permissions),
            None => Ok(()),
        })
        .and_then(|()| fs::rename(&temp, path));
    if let Err(error) = written {
        let _ = fs::remove_file(&temp);
        return Err(ToolError::failed_with(
            format!("the file could not be written ({error}); it was left as it was"),
            error,
        ));
    }
    Ok(())
}
