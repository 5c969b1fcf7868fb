//! Shrinking old tool results as the conversation goes on, stably.
//!
//! A result from the current or the previous turn is kept whole. From `truncate_after_turns`
//! (2) turns on it is cut to a head and a tail (2,000 + 500 chars) with the standard marker; from
//! `summarize_after_turns` (4) on it becomes one line:
//! `[Old tool result cleared — 450 lines, 28K chars, Go source]`. Only results over `min_chars`
//! (3,000) are touched, and never those of preserved tools (write and exec tools).
//!
//! Every decision depends only on the result's text and its age, and the compacted forms are
//! fixed points (a truncated result is under `min_chars`; a summary is recognised), so running
//! it again changes nothing and a result's form changes only when it crosses a threshold: the
//! prompt cache's prefix survives from turn to turn.

use std::fmt;

use super::message::{Block, Content, Message, ResultContent, Role};
use crate::trim::{self, Totals};

/// The start of a summary line.
const SUMMARY_PREFIX: &str = "[Old tool result cleared — ";
/// Chars of a result's beginning used to detect its content type; always inside the kept head
/// of a truncated result, so the type never changes between the two forms.
const DETECT_CHARS: usize = 1_500;
/// Room for a marker: a text within head + tail + this is already compact and left alone, and a
/// truncation always lands within it (markers are a few hundred chars).
const MARKER_SLACK: usize = 600;

/// The thresholds of [`microcompact`]. By default: truncate from 2 turns old, summarize from 4,
/// only results over 3,000 chars, keep 2,000 chars of head and 500 of tail, preserve nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactPolicy {
    /// Results at least this many turns old are truncated.
    pub truncate_after_turns: usize,
    /// Results at least this many turns old are summarized in one line.
    pub summarize_after_turns: usize,
    /// Results of at most this many chars (originally) are never touched.
    pub min_chars: usize,
    /// Chars of head a truncated result keeps.
    pub head_chars: usize,
    /// Chars of tail a truncated result keeps.
    pub tail_chars: usize,
    /// Tools whose results are never compacted (write and exec tools: their errors matter).
    pub preserve: Vec<String>,
}

impl Default for CompactPolicy {
    fn default() -> Self {
        CompactPolicy {
            truncate_after_turns: 2,
            summarize_after_turns: 4,
            min_chars: 3_000,
            head_chars: 2_000,
            tail_chars: 500,
            preserve: Vec::new(),
        }
    }
}

impl CompactPolicy {
    /// Also preserves the results of these tools (see `ToolLimits::preserve`).
    #[must_use]
    pub fn preserving<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.preserve.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Sets when results are truncated and summarized (in turns of age).
    #[must_use]
    pub fn with_ages(mut self, truncate_after_turns: usize, summarize_after_turns: usize) -> Self {
        self.truncate_after_turns = truncate_after_turns;
        self.summarize_after_turns = summarize_after_turns;
        self
    }
}

/// What [`microcompact`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactReport {
    /// Ids of results cut to head and tail.
    pub truncated: Vec<String>,
    /// Ids of results replaced by a summary line.
    pub summarized: Vec<String>,
    /// Chars of the changed results before.
    pub chars_before: usize,
    /// Chars of the changed results after.
    pub chars_after: usize,
}

impl CompactReport {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.truncated.is_empty() && self.summarized.is_empty()
    }
}

impl fmt::Display for CompactReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} results truncated, {} summarized: {} chars down to {}",
            self.truncated.len(),
            self.summarized.len(),
            crate::figures::grouped(self.chars_before),
            crate::figures::grouped(self.chars_after)
        )
    }
}

/// The content type a summary names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentKind {
    /// Starts with `{` or `[`.
    Json,
    /// Go code.
    Go,
    /// Python code.
    Python,
    /// JavaScript code.
    JavaScript,
    /// TypeScript code.
    TypeScript,
    /// Rust code.
    Rust,
    /// A diff or patch.
    Diff,
    /// `git log` output.
    GitLog,
    /// The output of a build or test run (a compiler, `make`, `cargo`, a test runner).
    BuildLog,
    /// A log file.
    Log,
    /// Markdown.
    Markdown,
    /// Anything else.
    Text,
}

impl fmt::Display for ContentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ContentKind::Json => "JSON",
            ContentKind::Go => "Go source",
            ContentKind::Python => "Python source",
            ContentKind::JavaScript => "JavaScript source",
            ContentKind::TypeScript => "TypeScript source",
            ContentKind::Rust => "Rust source",
            ContentKind::Diff => "diff",
            ContentKind::GitLog => "git log",
            ContentKind::BuildLog => "build log",
            ContentKind::Log => "log",
            ContentKind::Markdown => "Markdown",
            ContentKind::Text => "text",
        })
    }
}

/// The content type of a result, from the call that made it when its input says (a file's
/// extension, a build or test command), else from its text ([`detect`]).
///
/// ```
/// use serde_json::json;
/// use toolsmith::history::{ContentKind, detect_for};
///
/// // A Go file of functions without a `package` line is still Go source.
/// let read = json!({ "path": "handlers/user.go" });
/// assert_eq!(detect_for("func Get() {}\n", Some(&read)), ContentKind::Go);
/// let build = json!({ "command": "cargo build --release" });
/// assert_eq!(detect_for("   Compiling …\n", Some(&build)), ContentKind::BuildLog);
/// ```
pub fn detect_for(text: &str, input: Option<&serde_json::Value>) -> ContentKind {
    input
        .and_then(kind_of_input)
        .unwrap_or_else(|| detect(text))
}

/// The content type a call's input names: a file's extension, or a build or test command.
fn kind_of_input(input: &serde_json::Value) -> Option<ContentKind> {
    let field = |key: &str| input.get(key).and_then(serde_json::Value::as_str);
    if let Some(path) = ["path", "file_path", "file", "filename"]
        .into_iter()
        .find_map(field)
    {
        let extension = path
            .rsplit_once('.')
            .map(|(_, ext)| ext.to_ascii_lowercase())?;
        return Some(match extension.as_str() {
            "go" => ContentKind::Go,
            "py" | "pyi" => ContentKind::Python,
            "rs" => ContentKind::Rust,
            "js" | "mjs" | "cjs" | "jsx" => ContentKind::JavaScript,
            "ts" | "tsx" | "mts" | "cts" => ContentKind::TypeScript,
            "json" => ContentKind::Json,
            "diff" | "patch" => ContentKind::Diff,
            "log" => ContentKind::Log,
            "md" | "markdown" => ContentKind::Markdown,
            _ => return None,
        });
    }
    let command = field("command")?;
    const BUILDERS: &[&str] = &[
        "cargo ",
        "make",
        "gcc ",
        "g++ ",
        "clang",
        "javac ",
        "mvn ",
        "gradle",
        "npm run",
        "npm test",
        "npx ",
        "tsc",
        "pytest",
        "go build",
        "go test",
        "node --test",
        "jest",
        "cmake",
        "ninja",
    ];
    BUILDERS
        .iter()
        .any(|builder| command.contains(builder))
        .then_some(ContentKind::BuildLog)
}

/// Detects the content type from the beginning of a text (line-number gutters, as `read_file`
/// writes them, are looked through).
pub fn detect(text: &str) -> ContentKind {
    let head = &text[..trim::byte_offset_after_chars(text, DETECT_CHARS)];
    let start = first_content(head);
    if start.starts_with("diff ") || start.starts_with("--- ") || start.starts_with("@@ ") {
        return ContentKind::Diff;
    }
    if start.starts_with("commit ") {
        return ContentKind::GitLog;
    }
    if start.starts_with('{') || start.starts_with('[') {
        return ContentKind::Json;
    }
    // No word looked for holds a line break, a tab or a digit, so a gutter neither hides nor
    // makes one: the head is searched as it is.
    let has = |needle: &str| head.contains(needle);
    if has("fn ") && (has("let ") || has("impl ") || has("pub ") || has("use ")) {
        ContentKind::Rust
    } else if has("package ") && has("func ") {
        ContentKind::Go
    } else if has("def ") && (has("import ") || has("self") || has("):")) {
        ContentKind::Python
    } else if (has("interface ") || has(": string") || has(": number"))
        && (has("function") || has("=>") || has("const ") || has("export "))
    {
        ContentKind::TypeScript
    } else if has("function") || (has("const ") && has("=>")) {
        ContentKind::JavaScript
    } else {
        ContentKind::Text
    }
}

/// The head's first line with content, from its first char that is not white space, past a
/// `     12\t` gutter when the first line has one (the rest of that line is enough: no prefix
/// looked for spans lines).
fn first_content(head: &str) -> &str {
    fn gutter(line: &str) -> Option<&str> {
        let trimmed = line.trim_start();
        let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0 && trimmed[digits..].starts_with('\t')).then(|| &trimmed[digits + 1..])
    }
    let gutters = head.lines().next().and_then(gutter).is_some();
    head.lines()
        .map(|line| {
            let content = if gutters {
                gutter(line).unwrap_or(line)
            } else {
                line
            };
            content.trim_start()
        })
        .find(|content| !content.is_empty())
        .unwrap_or_default()
}

/// Compacts old tool results in place; see the module docs.
pub fn microcompact(history: &mut [Message], policy: &CompactPolicy) -> CompactReport {
    let mut report = CompactReport::default();
    // Age of message i: the assistant messages after it.
    let mut later_assistants = 0usize;
    for i in (0..history.len()).rev() {
        let age = later_assistants;
        if history[i].role == Role::Assistant {
            later_assistants += 1;
            continue;
        }
        if age
            < policy
                .truncate_after_turns
                .min(policy.summarize_after_turns)
        {
            continue;
        }
        let (before, rest) = history.split_at_mut(i);
        let previous = before.last();
        let Content::Blocks(blocks) = &mut rest[0].content else {
            continue;
        };
        for block in blocks.iter_mut() {
            let Block::ToolResult(result) = block else {
                continue;
            };
            let call = super::pairing::answered_call(previous, &result.tool_use_id);
            let tool = call.map(|call| call.name.as_str());
            if tool.is_some_and(|name| policy.preserve.iter().any(|p| p == name))
                || !result.is_text_only()
            {
                continue;
            }
            let (new, before) = {
                let text = result.text();
                if text.starts_with(SUMMARY_PREFIX) {
                    continue;
                }
                // A summary states the salient parts too: counted in the same read.
                let summarize = age >= policy.summarize_after_turns;
                let (totals, salient) = if summarize {
                    trim::totals_and_salient_count(&text)
                } else {
                    (Totals::of(&text), 0)
                };
                let figures = Figures::of(&text, totals);
                if figures.chars <= policy.min_chars {
                    continue;
                }
                let new = if summarize {
                    report.summarized.push(result.tool_use_id.clone());
                    let kind = detect_for(&text, call.map(|call| &call.input));
                    summary(&figures, kind, salient)
                } else if age >= policy.truncate_after_turns {
                    match truncate(&text, policy) {
                        Some(cut) => {
                            report.truncated.push(result.tool_use_id.clone());
                            cut
                        }
                        None => continue,
                    }
                } else {
                    continue;
                };
                (new, figures.current_chars)
            };
            report.chars_before += before;
            report.chars_after += new.chars().count();
            result.content = Some(ResultContent::Text(new));
        }
    }
    report
}

/// The size of a result's original output: read from a toolsmith marker when the text was
/// already cut, else counted.
struct Figures {
    chars: usize,
    lines: usize,
    /// The chars of the text as it is now.
    current_chars: usize,
}

impl Figures {
    /// The figures of `text`, whose totals are `totals`.
    fn of(text: &str, totals: Totals) -> Figures {
        match parse_marker(text) {
            Some(mut figures) => {
                figures.current_chars = totals.chars;
                figures
            }
            None => Figures {
                chars: totals.chars,
                lines: totals.lines,
                current_chars: totals.chars,
            },
        }
    }
}

/// The figures of the first toolsmith marker in `text`, if any, read by the one parser.
fn parse_marker(text: &str) -> Option<Figures> {
    let marker = trim::find_marker(text)?;
    Some(Figures {
        chars: marker.total,
        lines: marker.lines.unwrap_or(0),
        current_chars: 0,
    })
}

fn summary(figures: &Figures, kind: ContentKind, errors: usize) -> String {
    let chars = if figures.chars >= 1_000 {
        format!("{}K", (figures.chars + 500) / 1_000)
    } else {
        figures.chars.to_string()
    };
    let errors = match errors {
        0 => String::new(),
        1 => ", 1 error".to_owned(),
        n => format!(", {} errors", crate::figures::grouped(n)),
    };
    format!(
        "{SUMMARY_PREFIX}{} lines, {chars} chars, {kind}{errors}]",
        crate::figures::grouped(figures.lines)
    )
}

/// Head and tail with the standard marker (naming the artifact if the text named one); `None`
/// if the text is already that short.
fn truncate(text: &str, policy: &CompactPolicy) -> Option<String> {
    let kept = policy.head_chars + policy.tail_chars;
    if text.chars().count() <= kept + MARKER_SLACK {
        return None;
    }
    let allowance = super::shrink::allowance_for(text, kept, MARKER_SLACK);
    let ratio = if kept == 0 {
        1.0
    } else {
        policy.head_chars as f64 / kept as f64
    };
    super::shrink::shrink(text, allowance, ratio)
}
