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
/// The most a search holds of one file at a time: a file with a longer line is skipped, with a
/// note, instead of being loaded whole.
const HEAP_LIMIT: usize = 8 << 20;
/// The most chars of one line shown; a longer line is cut, with a note.
const MAX_LINE_CHARS: usize = 1_000;
/// The output is built up to this many bytes (or twice the call's allowance, if more); past it
/// matching lines are counted, not kept. The bound is what a search may hold whatever the
/// workspace holds, and leaves the artifact of a large result whole in all but extreme cases.
const MAX_OUTPUT_BYTES: usize = 8 << 20;

/// Searches the files of the workspace for lines matching a regular expression.
///
/// Rust regex syntax. Results read `path:line:text` for matches and `path-line-text` for
/// context, with `--` between separate groups. Git-ignored and binary files are skipped. More
/// than `max_results` matching lines is refused with the count, so narrow the search. Lines
/// over 1,000 chars are cut, and a file with a line over 8 MiB is skipped, each with a note.
#[derive(Debug, Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(
    name = "grep",
    read_only,
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
        let cancelled = cx.cancellation_token().clone();
        let output_cap = cx.budget().saturating_mul(2).max(MAX_OUTPUT_BYTES);
        blocking(move || {
            let mut searcher = SearcherBuilder::new()
                .line_number(true)
                .before_context(context)
                .after_context(context)
                .binary_detection(BinaryDetection::quit(0))
                .heap_limit(Some(HEAP_LIMIT))
                .build();
            let mut found = Found {
                out: String::new(),
                matches: 0,
                files: 0,
                max,
                output_cap,
                unshown: 0,
                cut_lines: 0,
                skipped: Vec::new(),
            };
            let single_file = base.is_file();
            for entry in walker(sandbox.root(), &base, false).build() {
                if cancelled.is_cancelled() {
                    // The call timed out or was cancelled: stop scanning, free the thread.
                    return Err(ToolError::Cancelled);
                }
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
                // A file that cannot be read (removed meanwhile, no permission) is skipped; one
                // with a line over the heap limit too, and the note says so.
                if let Err(error) = searcher.search_path(&matcher, entry.path(), &mut sink)
                    && is_heap_limit(&error)
                {
                    found.skipped.push(shown.clone());
                }
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
            let notes = found.notes();
            if found.matches == 0 {
                return Ok(format!(
                    "No line matches `{}` under `{}`.\n{notes}",
                    self.pattern,
                    sandbox.display(&base)
                ));
            }
            let mut out = found.out;
            out.push_str(&notes);
            Ok(out)
        })
        .await
    }
}

struct Found {
    out: String,
    matches: usize,
    files: usize,
    max: usize,
    /// Past this many bytes of output, lines are counted, not kept.
    output_cap: usize,
    /// Lines not kept because the output reached its cap.
    unshown: usize,
    /// Lines cut to `MAX_LINE_CHARS`.
    cut_lines: usize,
    /// Files skipped for a line over the heap limit.
    skipped: Vec<String>,
}

impl Found {
    /// What the model should know about what it does not see.
    fn notes(&self) -> String {
        let mut notes = String::new();
        if self.cut_lines > 0 {
            notes.push_str(&format!(
                "[grep: {} lines longer than {} chars were cut; read_file with offset and limit \
                 shows a whole line]\n",
                grouped(self.cut_lines),
                grouped(MAX_LINE_CHARS)
            ));
        }
        if self.unshown > 0 {
            notes.push_str(&format!(
                "[grep: {} more lines matched but are not shown: the output reached its \
                 allowance; narrow the search]\n",
                grouped(self.unshown)
            ));
        }
        if !self.skipped.is_empty() {
            let listed: Vec<&str> = self.skipped.iter().take(5).map(String::as_str).collect();
            let more = if self.skipped.len() > 5 { ", …" } else { "" };
            notes.push_str(&format!(
                "[grep: not searched, a line is longer than {} MiB: {}{more}; use run_command \
                 with `grep -o` for such files]\n",
                HEAP_LIMIT >> 20,
                listed.join(", ")
            ));
        }
        notes
    }
}

/// Whether a search failed because a line did not fit the heap limit.
fn is_heap_limit(error: &io::Error) -> bool {
    // grep-searcher reports it as "configured allocation limit (N) exceeded".
    error.kind() == io::ErrorKind::Other && error.to_string().contains("allocation limit")
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
        if self.found.out.len() >= self.found.output_cap {
            self.found.unshown += usize::from(separator == ':');
            return;
        }
        if self.first && self.separate && !self.found.out.is_empty() {
            self.found.out.push_str("--\n");
        }
        self.first = false;
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        // Chars take at most 4 bytes: decode no more than a shown line can hold.
        let (text, cut) = match bytes.get(..MAX_LINE_CHARS * 4) {
            Some(head) if bytes.len() > MAX_LINE_CHARS * 4 => (String::from_utf8_lossy(head), true),
            _ => (String::from_utf8_lossy(bytes), false),
        };
        let (text, cut) = match text.char_indices().nth(MAX_LINE_CHARS) {
            Some((end, _)) => (&text[..end], true),
            None => (&text[..], cut),
        };
        let line = line.map_or_else(String::new, |n| n.to_string());
        let ellipsis = if cut {
            self.found.cut_lines += 1;
            format!(" … [line cut: {} bytes]", grouped(bytes.len()))
        } else {
            String::new()
        };
        self.found.out.push_str(&format!(
            "{}{separator}{line}{separator}{text}{ellipsis}\n",
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
