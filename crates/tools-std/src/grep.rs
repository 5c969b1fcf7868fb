//! `grep`: ripgrep's searcher over the workspace.

use std::io;

use globset::GlobBuilder;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith::{Tool, ToolContext, ToolError};

use crate::list::{relative_to, walker};
use crate::sandbox::Sandbox;
use crate::{blocking, grouped};

/// The widest context `grep` gives around a match.
const MAX_CONTEXT: usize = 10;

/// Searches the files of the workspace for lines matching a regular expression.
///
/// Rust regex syntax. Results read `path:line:text` for matches and `path-line-text` for
/// context, with `--` between separate groups. Git-ignored and binary files are skipped. More
/// than `max_results` matching lines is refused with the count, so narrow the search.
#[derive(Debug, Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(
    name = "grep",
    max_result_chars = 30_000,
    max_result_lines = 300,
    head_ratio = 1.0
)]
pub struct Grep {
    /// The regular expression.
    pub pattern: String,
    /// A file or directory to search, relative to the workspace root. Defaults to the root.
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files whose path (relative to `path`) matches this glob, like `*.rs`.
    #[serde(default)]
    pub glob: Option<String>,
    /// Lines of context to show before and after each match, 0 to 10. Defaults to 0.
    #[serde(default)]
    pub context: Option<usize>,
    /// Match case-insensitively. Defaults to false.
    #[serde(default)]
    pub case_insensitive: bool,
    /// The most matching lines to return. Defaults to 100.
    #[serde(default)]
    pub max_results: Option<usize>,
}

impl Grep {
    async fn run(self, cx: &ToolContext) -> Result<String, ToolError> {
        let sandbox = cx.state::<Sandbox>()?.clone();
        let base = sandbox.resolve_existing(self.path.as_deref().unwrap_or("."))?;
        let context = self.context.unwrap_or(0);
        if context > MAX_CONTEXT {
            return Err(ToolError::invalid_arguments(format!(
                "context: {context} is too wide; use 0 to {MAX_CONTEXT}"
            )));
        }
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(self.case_insensitive)
            .line_terminator(Some(b'\n'))
            .build(&self.pattern)
            .map_err(|error| ToolError::invalid_arguments(format!("pattern: {error}")))?;
        let filter = match &self.glob {
            Some(glob) => Some(
                GlobBuilder::new(glob)
                    .build()
                    .map_err(|error| ToolError::invalid_arguments(format!("glob: {error}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let max = self.max_results.unwrap_or(100).max(1);
        blocking(move || {
            let mut searcher = SearcherBuilder::new()
                .line_number(true)
                .before_context(context)
                .after_context(context)
                .binary_detection(BinaryDetection::quit(0))
                .build();
            let mut found = Found {
                out: String::new(),
                matches: 0,
                files: 0,
                max,
            };
            let single_file = base.is_file();
            for entry in walker(sandbox.root(), &base, false).build() {
                let Ok(entry) = entry else { continue };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let relative = if single_file {
                    sandbox.display(entry.path())
                } else {
                    relative_to(&base, entry.path())
                };
                if filter
                    .as_ref()
                    .is_some_and(|glob| !glob.is_match(&relative))
                {
                    continue;
                }
                let shown = sandbox.display(entry.path());
                let before = found.matches;
                let mut sink = FileSink {
                    found: &mut found,
                    path: &shown,
                    first: true,
                    separate: context > 0,
                };
                // A file that cannot be read (removed meanwhile, no permission) is skipped.
                let _ = searcher.search_path(&matcher, entry.path(), &mut sink);
                if found.matches > before {
                    found.files += 1;
                }
            }
            if found.matches > max {
                return Err(ToolError::failed(format!(
                    "`{}` matched {} lines in {} files, more than max_results ({max}). Narrow \
                     it: a more specific pattern, a path or a glob filter; or raise max_results \
                     if you need them all.",
                    self.pattern,
                    grouped(found.matches),
                    grouped(found.files)
                )));
            }
            if found.matches == 0 {
                return Ok(format!(
                    "No line matches `{}` under `{}`.",
                    self.pattern,
                    sandbox.display(&base)
                ));
            }
            Ok(found.out)
        })
        .await
    }
}

struct Found {
    out: String,
    matches: usize,
    files: usize,
    max: usize,
}

struct FileSink<'a> {
    found: &'a mut Found,
    path: &'a str,
    first: bool,
    /// Whether groups are separated by `--` (with context, as ripgrep does).
    separate: bool,
}

impl FileSink<'_> {
    fn push(&mut self, separator: char, line: Option<u64>, bytes: &[u8]) {
        if self.found.matches > self.found.max {
            return; // counting only, past the cap
        }
        if self.first && self.separate && !self.found.out.is_empty() {
            self.found.out.push_str("--\n");
        }
        self.first = false;
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let line = line.map_or_else(String::new, |n| n.to_string());
        self.found.out.push_str(&format!(
            "{}{separator}{line}{separator}{text}\n",
            self.path
        ));
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.found.matches += 1;
        self.push(':', found.line_number(), found.bytes());
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        self.push('-', context.line_number(), context.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        if self.separate && self.found.matches <= self.found.max {
            self.found.out.push_str("--\n");
        }
        Ok(true)
    }
}
