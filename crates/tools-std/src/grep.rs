//! `grep`: ripgrep's searcher over the workspace.

use std::io;

use globset::GlobBuilder;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith::{Tool, ToolContext, ToolError, ToolOutput};

use crate::list::{relative_to, walker};
use crate::sandbox::Sandbox;
use crate::{ChunkStream, blocking_permit, grouped};

/// The widest context `grep` gives around a match.
const MAX_CONTEXT: usize = 10;
/// The most a search holds of one file at a time: a file with a longer line is skipped, with a
/// note, instead of being loaded whole.
const HEAP_LIMIT: usize = 8 << 20;
/// The most chars of one line shown; a longer line is cut, with a note.
const MAX_LINE_CHARS: usize = 1_000;

/// Searches the files of the workspace for lines matching a regular expression.
///
/// Rust regex syntax. Results read `path:line:text` for matches and `path-line-text` for
/// context, with `--` between separate groups. Git-ignored and binary files are skipped. More
/// than `max_results` matching lines is refused with the count after the first `max_results`,
/// so narrow the search. Lines over 1,000 chars are cut, and a file with a line over 8 MiB is
/// skipped, each with a note.
#[derive(Debug, Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(
    state = Sandbox,
    name = "grep",
    read_only,
    max_result_chars = 30_000,
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
    async fn run(self, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
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
        let permit = blocking_permit().await?;
        let (sender, receiver) = tokio::sync::mpsc::channel(CHUNKS_IN_FLIGHT);
        let pattern = self.pattern;
        tokio::task::spawn_blocking(move || {
            let _permit = permit; // released when the search ends
            let mut found = Found {
                out: Emitter {
                    sender,
                    buffer: String::new(),
                    written: false,
                    closed: false,
                },
                matches: 0,
                files: 0,
                max,
                cut_lines: 0,
                skipped: Vec::new(),
            };
            let mut searcher = SearcherBuilder::new()
                .line_number(true)
                .before_context(context)
                .after_context(context)
                .binary_detection(BinaryDetection::quit(0))
                .heap_limit(Some(HEAP_LIMIT))
                .build();
            let single_file = base.is_file();
            for entry in walker(sandbox.root(), &base, false).build() {
                if cancelled.is_cancelled() || found.out.closed {
                    // The call timed out, was cancelled, or nobody reads any more: stop
                    // scanning, free the thread.
                    return;
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
            let notes = found.notes();
            if found.matches == 0 {
                found.out.buffer.push_str(&format!(
                    "No line matches `{pattern}` under `{}`.\n",
                    sandbox.display(&base)
                ));
            }
            found.out.buffer.push_str(&notes);
            let refusal = (found.matches > max).then(|| {
                ToolError::failed(format!(
                    "`{pattern}` matched {} lines in {} files, more than max_results ({max}); \
                     the first {max} are above. Narrow it: a more specific pattern, a path or a \
                     glob filter; or raise max_results if you need them all.",
                    grouped(found.matches),
                    grouped(found.files)
                ))
            });
            found.out.finish(refusal);
        });
        Ok(ToolOutput::stream(ChunkStream(receiver)))
    }
}

/// Output chunks in flight between the search thread and the registry.
const CHUNKS_IN_FLIGHT: usize = 16;
/// The size of the chunks the search sends.
const CHUNK_BYTES: usize = 64 * 1024;

/// The search's end of the output stream: lines are gathered into chunks and sent as each fills.
struct Emitter {
    sender: tokio::sync::mpsc::Sender<Result<Vec<u8>, ToolError>>,
    buffer: String,
    /// Whether any line was pushed.
    written: bool,
    /// Nobody reads any more (the call ended): the search stops.
    closed: bool,
}

impl Emitter {
    fn push(&mut self, text: &str) {
        self.written = true;
        self.buffer.push_str(text);
        if self.buffer.len() >= CHUNK_BYTES {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.buffer.is_empty() || self.closed {
            return;
        }
        let chunk = std::mem::take(&mut self.buffer).into_bytes();
        self.closed = self.sender.blocking_send(Ok(chunk)).is_err();
    }

    /// Sends what is left, then the refusal if there is one.
    fn finish(mut self, refusal: Option<ToolError>) {
        self.flush();
        if let Some(refusal) = refusal
            && !self.closed
        {
            let _ = self.sender.blocking_send(Err(refusal));
        }
    }
}

struct Found {
    out: Emitter,
    matches: usize,
    files: usize,
    /// Past this many matching lines, lines are counted, not shown.
    max: usize,
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
        if self.first && self.separate && self.found.out.written {
            self.found.out.push("--\n");
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
        self.found.out.push(&format!(
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
        Ok(!self.found.out.closed)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        self.push('-', context.line_number(), context.bytes());
        Ok(!self.found.out.closed)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        if self.separate && self.found.matches <= self.found.max {
            self.found.out.push("--\n");
        }
        Ok(!self.found.out.closed)
    }
}
