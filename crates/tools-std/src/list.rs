//! `list_directory` and `glob`: what is in the workspace, honouring `.gitignore`.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, WalkBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith::{Tool, ToolContext, ToolError};

use crate::sandbox::Sandbox;
use crate::{blocking, grouped};

/// The most entries `list_directory` shows: its line limit.
const MAX_LISTED: usize = 100;
/// The deepest `list_directory` goes.
const MAX_DEPTH: usize = 8;

/// Lists a directory of the workspace.
///
/// Directories end with `/`. Entries ignored by `.gitignore` and hidden ones are left out unless
/// `all` is set. A listing of more than 100 entries is refused with the count; list a
/// subdirectory, lower `depth`, or use glob.
#[derive(Debug, Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(
    state = Sandbox,
    name = "list_directory",
    read_only,
    max_result_chars = 10_000,
    max_result_lines = 100,
    head_ratio = 1.0
)]
pub struct ListDirectory {
    /// The directory, relative to the workspace root. Defaults to the root.
    #[serde(default)]
    pub path: Option<String>,
    /// How many levels to descend: 1 (the default) lists the directory itself; at most 8.
    #[serde(default)]
    pub depth: Option<usize>,
    /// Include hidden and git-ignored entries. Defaults to false.
    #[serde(default)]
    pub all: bool,
}

impl ListDirectory {
    async fn run(self, cx: &ToolContext) -> Result<String, ToolError> {
        let sandbox = cx.state::<Sandbox>()?.clone();
        let given = self.path.clone().unwrap_or_else(|| ".".to_owned());
        let dir = sandbox.resolve_existing(&given)?;
        let depth = self.depth.unwrap_or(1);
        if !(1..=MAX_DEPTH).contains(&depth) {
            return Err(ToolError::invalid_arguments(format!(
                "depth: {depth} is out of range; use 1 to {MAX_DEPTH}"
            )));
        }
        let all = self.all;
        let cancelled = cx.cancellation_token().clone();
        blocking(move || {
            if !dir.is_dir() {
                return Err(ToolError::invalid_arguments(format!(
                    "path: `{given}` is a file, not a directory; use read_file to read it"
                )));
            }
            let mut entries = Vec::new();
            let mut count = 0usize;
            for entry in walker(sandbox.root(), &dir, all)
                .max_depth(Some(depth))
                .build()
            {
                if cancelled.is_cancelled() {
                    return Err(ToolError::Cancelled);
                }
                let Ok(entry) = entry else { continue };
                if entry.depth() == 0 {
                    continue;
                }
                count += 1;
                if count <= MAX_LISTED {
                    let relative = relative_to(&dir, entry.path());
                    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                    entries.push(if is_dir {
                        format!("{relative}/")
                    } else {
                        relative
                    });
                }
            }
            if count > MAX_LISTED {
                return Err(ToolError::failed(format!(
                    "`{}` holds {} entries at depth {depth}, more than the {MAX_LISTED} a listing \
                     shows. Narrow it: list a subdirectory, use a smaller depth, or use glob \
                     with a pattern.",
                    sandbox.display(&dir),
                    grouped(count)
                )));
            }
            entries.sort();
            if entries.is_empty() {
                return Ok(format!("`{}` is empty.", sandbox.display(&dir)));
            }
            Ok(entries.join("\n") + "\n")
        })
        .await
    }
}

/// Finds files of the workspace whose paths match a glob pattern.
///
/// Patterns follow `.gitignore` syntax as globset reads it: `*` stays within a directory, `**`
/// crosses them (`**/*.rs`, `src/**/mod.rs`, `*.{toml,md}`). Paths are relative to `path`.
/// Git-ignored files are skipped. More than `max_results` matches is refused with the count.
#[derive(Debug, Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(
    state = Sandbox,
    name = "glob",
    read_only,
    max_result_chars = 10_000,
    max_result_lines = 300,
    head_ratio = 1.0
)]
pub struct Glob {
    /// The pattern, such as `**/*.rs`.
    pub pattern: String,
    /// The directory to search, relative to the workspace root. Defaults to the root.
    #[serde(default)]
    pub path: Option<String>,
    /// The most matches to return. Defaults to 200.
    #[serde(default)]
    pub max_results: Option<usize>,
}

impl Glob {
    async fn run(self, cx: &ToolContext) -> Result<String, ToolError> {
        let sandbox = cx.state::<Sandbox>()?.clone();
        let dir = sandbox.resolve_existing(self.path.as_deref().unwrap_or("."))?;
        let matcher = GlobBuilder::new(&self.pattern)
            .literal_separator(true)
            .build()
            .map_err(|error| ToolError::invalid_arguments(format!("pattern: {error}")))?
            .compile_matcher();
        let max = self.max_results.unwrap_or(200).max(1);
        let cancelled = cx.cancellation_token().clone();
        blocking(move || {
            let mut found = Vec::new();
            let mut count = 0usize;
            for entry in walker(sandbox.root(), &dir, false).build() {
                if cancelled.is_cancelled() {
                    return Err(ToolError::Cancelled);
                }
                let Ok(entry) = entry else { continue };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let relative = relative_to(&dir, entry.path());
                if matcher.is_match(&relative) {
                    count += 1;
                    if count <= max {
                        found.push(relative);
                    }
                }
            }
            if count > max {
                return Err(ToolError::failed(format!(
                    "`{}` matches {} files under `{}`, more than max_results ({max}). Narrow it: \
                     a more specific pattern or directory, or raise max_results.",
                    self.pattern,
                    grouped(count),
                    sandbox.display(&dir)
                )));
            }
            found.sort();
            if found.is_empty() {
                return Ok(format!(
                    "No file under `{}` matches `{}`.",
                    sandbox.display(&dir),
                    self.pattern
                ));
            }
            Ok(found.join("\n") + "\n")
        })
        .await
    }
}

/// A walker over `dir` that honours `.gitignore` and `.ignore` files (also outside git
/// repositories) and skips hidden entries, unless `all`.
///
/// Only ignore files inside the workspace `root` apply: those of `dir` and below, which the
/// walker reads, and those of the directories between `root` and `dir`, added here. Ignore
/// files above the root and the user's global git excludes never hide workspace files.
pub(crate) fn walker(root: &Path, dir: &Path, all: bool) -> WalkBuilder {
    let mut builder = WalkBuilder::new(dir);
    builder
        .standard_filters(!all)
        .parents(false)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(std::cmp::Ord::cmp);
    let outer = if all {
        Vec::new()
    } else {
        ignores_between(root, dir)
    };
    if !outer.is_empty() {
        builder.filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            // The deepest ignore file that has a say decides, as git decides.
            for ignore in outer.iter().rev() {
                match ignore.matched_path_or_any_parents(entry.path(), is_dir) {
                    Match::Ignore(_) => return false,
                    Match::Whitelist(_) => return true,
                    Match::None => {}
                }
            }
            true
        });
    }
    builder
}

/// The ignore files of `root` and of each directory below it that contains `dir`, outermost
/// first; `dir`'s own, when it is a directory, is left to the walker.
fn ignores_between(root: &Path, dir: &Path) -> Vec<Gitignore> {
    let mut found = Vec::new();
    let Some(start) = dir.parent() else {
        return found;
    };
    if !dir.starts_with(root) || dir == root {
        return found;
    }
    for ancestor in start.ancestors() {
        if !ancestor.starts_with(root) {
            break;
        }
        let mut builder = GitignoreBuilder::new(ancestor);
        for name in [".gitignore", ".ignore"] {
            let file = ancestor.join(name);
            if file.is_file() {
                // An unreadable or malformed line is skipped, as git skips it.
                let _ = builder.add(file);
            }
        }
        if let Ok(ignore) = builder.build()
            && !ignore.is_empty()
        {
            found.push(ignore);
        }
    }
    found.reverse();
    found
}

pub(crate) fn relative_to(base: &Path, path: &Path) -> String {
    path.strip_prefix(base)
        .map(PathBuf::from)
        .unwrap_or_else(|_| path.to_path_buf())
        .to_string_lossy()
        .into_owned()
}
